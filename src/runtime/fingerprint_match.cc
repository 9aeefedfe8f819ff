#include "runtime/fingerprint_match.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace gg::runtime {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kFloorFraction = 1e-4;  // of the mean slice's squared norm

std::string Sci(double x) {
  if (std::isinf(x)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", x);
  return buf;
}

double MeanSliceSquares(const SliceProjections& p) {
  if (p.count == 0) return 0.0;
  double total = 0.0;
  for (double v : p.sum_squares) total += v;
  return total / static_cast<double>(p.count);
}

// The error of S's slice j against projections `other` (K values) with squared norm
// `other_squares` (negative: unknown, only S's scale counts).
double SliceError(const SliceProjections& s, int64_t j, const double* other, double other_squares,
                  int k_count, double floor) {
  double worst = 0.0;
  for (int k = 0; k < k_count; ++k) {
    double a = s.values[static_cast<size_t>(j * k_count + k)];
    double diff = std::fabs(a - other[k]);
    if (std::isnan(diff)) return kInf;
    worst = std::max(worst, diff);
  }
  if (worst == 0.0) return 0.0;
  double scale = std::max({s.sum_squares[static_cast<size_t>(j)], other_squares, floor});
  // No scale (zero), or one that overflowed (a sum of squares past 1e308, or an infinite
  // element): no evidence of equality. (Judged against an infinite scale, every difference was 0.)
  if (!(scale > 0.0) || !std::isfinite(scale)) return kInf;
  return worst / std::sqrt(scale);
}

// Error of S's slices [0, count) against `d`'s slices [first, first + count).
double RangeError(const SliceProjections& s, int64_t s_first, const SliceProjections& d,
                  int64_t d_first, int64_t count, int k_count, double floor, double stop_above) {
  double worst = 0.0;
  for (int64_t j = 0; j < count; ++j) {
    const double* other = &d.values[static_cast<size_t>((d_first + j) * k_count)];
    worst = std::max(worst, SliceError(s, s_first + j, other,
                                       d.sum_squares[static_cast<size_t>(d_first + j)], k_count,
                                       floor));
    if (worst > stop_above) break;
  }
  return worst;
}

// Error of S's slices [s_first, s_first + count) against the elementwise sum of several tensors'
// slices [0, count) (count < 0: all of S's slices).
double SumError(const SliceProjections& s, const std::vector<const SliceProjections*>& parts,
                int k_count, double floor, int64_t s_first = 0, int64_t count = -1) {
  double worst = 0.0;
  std::vector<double> summed(static_cast<size_t>(k_count));
  if (count < 0) count = s.count;
  for (int64_t j = 0; j < count; ++j) {
    std::fill(summed.begin(), summed.end(), 0.0);
    for (const SliceProjections* p : parts) {
      for (int k = 0; k < k_count; ++k) {
        summed[static_cast<size_t>(k)] += p->values[static_cast<size_t>(j * k_count + k)];
      }
    }
    worst = std::max(worst, SliceError(s, s_first + j, summed.data(), -1.0, k_count, floor));
  }
  return worst;
}

// The key of by_open_dim_: `shape` with dimension `dim` replaced by -1, and `dim` appended.
std::vector<int64_t> OpenDimKey(const std::vector<int64_t>& shape, size_t dim) {
  std::vector<int64_t> key = shape;
  key[dim] = -1;
  key.push_back(static_cast<int64_t>(dim));
  return key;
}

// Whether a name's rank slots hold a tensor on every rank.
template <class T>
bool EveryRank(const std::vector<const T*>& slots) {
  return std::all_of(slots.begin(), slots.end(), [](const T* e) { return e != nullptr; });
}

// The rank groups of a concat of sums: `chunks` chunks over `world` ranks, chunk c summing
// ranks c*G .. c*G+G-1 (contiguous) or c, c+chunks, c+2*chunks, ... (strided), G = world/chunks.
struct RankGroups {
  int32_t chunks;
  bool strided;
  int32_t Rank(int32_t chunk, int32_t member, int32_t world) const {
    return strided ? chunk + member * chunks : chunk * (world / chunks) + member;
  }
};

// Every layout tried: 1 < chunks < world, chunks dividing world, contiguous then strided.
std::vector<RankGroups> GroupLayouts(int32_t world) {
  std::vector<RankGroups> layouts;
  for (int32_t c = 2; c < world; ++c) {
    if (world % c != 0) continue;
    layouts.push_back(RankGroups{c, false});
    layouts.push_back(RankGroups{c, true});
  }
  return layouts;
}

// Same-shape error over the whole tensor and the slices along every dimension.
double FullError(const TensorFingerprint& s, const TensorFingerprint& d) {
  int k = s.projections;
  double worst = RangeError(s.whole, 0, d.whole, 0, 1, k, 0.0, kInf);
  for (size_t dim = 0; dim < s.shape.size(); ++dim) {
    if (s.shape[dim] == 1) continue;
    const SliceProjections& a = s.dims[dim];
    worst = std::max(worst, RangeError(a, 0, d.dims[dim], 0, a.count, k,
                                       kFloorFraction * MeanSliceSquares(a), kInf));
  }
  return worst;
}

double FullSumError(const TensorFingerprint& s, const std::vector<const TensorFingerprint*>& parts) {
  int k = s.projections;
  std::vector<const SliceProjections*> wholes;
  for (const TensorFingerprint* p : parts) wholes.push_back(&p->whole);
  double worst = SumError(s.whole, wholes, k, 0.0);
  for (size_t dim = 0; dim < s.shape.size(); ++dim) {
    if (s.shape[dim] == 1) continue;
    std::vector<const SliceProjections*> slices;
    for (const TensorFingerprint* p : parts) slices.push_back(&p->dims[dim]);
    worst = std::max(worst, SumError(s.dims[dim], slices, k,
                                     kFloorFraction * MeanSliceSquares(s.dims[dim])));
  }
  return worst;
}

int KindOrder(Candidate::Kind kind) { return static_cast<int>(kind); }

// Unit roundoff (the same values as tolerance.h's model; 0 for integers and booleans).
double Roundoff(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kBFloat16:
      return 0x1p-8;
    case ir::DType::kFloat16:
      return 0x1p-11;
    case ir::DType::kFloat32:
    case ir::DType::kComplex64:
      return 0x1p-24;
    case ir::DType::kFloat64:
    case ir::DType::kComplex128:
      return 0x1p-53;
    default:
      return 0.0;
  }
}

// Whether two of the slices are within tolerance of each other (neighbours by first projection
// compared).
bool SlicesRepeat(const SliceProjections& sp, int k, double floor, double tol) {
  std::vector<int64_t> order(static_cast<size_t>(sp.count));
  for (int64_t j = 0; j < sp.count; ++j) order[static_cast<size_t>(j)] = j;
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return sp.values[static_cast<size_t>(a * k)] < sp.values[static_cast<size_t>(b * k)];
  });
  for (size_t i = 1; i < order.size(); ++i) {
    if (RangeError(sp, order[i - 1], sp, order[i], 1, k, floor, kInf) <= tol) return true;
  }
  return false;
}

}  // namespace

double Tolerance(const MatchOptions& options, double u) {
  double tol = std::max(options.exact_tolerance,
                        std::min(options.max_tolerance, options.tolerance_factor * u));
  return u > 0.0 ? std::max(tol, options.float_floor) : tol;
}

const char* KindName(Candidate::Kind kind) {
  switch (kind) {
    case Candidate::Kind::kReplicated:
      return "replicated";
    case Candidate::Kind::kConcat:
      return "concat";
    case Candidate::Kind::kSum:
      return "sum";
    case Candidate::Kind::kIdentical:
      return "identical";
    case Candidate::Kind::kSlices:
      return "slices";
    case Candidate::Kind::kReshape:
      return "reshape";
    case Candidate::Kind::kConcatOfSums:
      return "concat-of-sums";
  }
  return "?";
}

std::string Candidate::ToString() const {
  std::string out = std::string(KindName(kind)) + ": ";
  for (size_t i = 0; i < exprs.size(); ++i) out += (i ? ", " : "") + exprs[i].ToString();
  return out + " (error " + Sci(error) + ", tolerance " + Sci(tolerance) + ")";
}

// Which names each section of Collect may consider (null filter: all of them).
struct FingerprintMatcher::NameFilter {
  std::set<std::string> same_shape;                  // identical, replicated, sum
  std::map<size_t, std::set<std::string>> open_dim;  // by S's dimension: concat, slices
  std::set<std::string> numel;                       // reshapes
};

namespace {

// D's first projections sorted by value, for a conservative neighbour search: Near(a, scale, tol)
// reports every item whose projections v_k all have |a_k - v_k| <= tol * max(scale, norm) (and
// possibly more), where norm is the item's own scale (the square root of its sum of squares): the
// bound every holding comparison satisfies on each projection (SliceError). The window is searched
// on the first projection and the others are checked per item (with loose tolerances a window of
// a deep model's slices holds many unrelated ones). Items are grouped by the binary exponent of
// their norm so that each group is probed with a window of its largest norm.
class ProjectionIndex {
 public:
  // `values`: the item's k projections (they outlive the index), or its first one only.
  void Add(const double* values, int k, double norm, uint32_t id) {
    // An infinite or NaN projection, or an overflowing scale, never holds (SliceError).
    if (!std::isfinite(values[0]) || !std::isfinite(norm)) return;
    int exponent = kZero;
    if (norm > 0.0) std::frexp(norm, &exponent);  // norm < 2^exponent
    groups_[exponent].push_back(Item{values[0], id, k > 1 ? values : nullptr});
  }
  void Sort() {
    for (auto& [exponent, items] : groups_) {
      std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
        return a.value != b.value ? a.value < b.value : a.id < b.id;
      });
    }
  }
  // `a`: S's k projections.
  template <class F>
  void Near(const double* a, int k, double scale, double tol, F&& report) const {
    if (!std::isfinite(a[0])) return;
    for (const auto& [exponent, items] : groups_) {
      double bound = exponent == kZero ? 0.0 : std::ldexp(1.0, exponent);
      // A little wider than the bound: the exact comparison rounds differently.
      double window = tol * std::max(scale, bound) * (1.0 + 1e-6);
      auto it = std::lower_bound(items.begin(), items.end(), a[0] - window,
                                 [](const Item& item, double v) { return item.value < v; });
      for (; it != items.end() && it->value <= a[0] + window; ++it) {
        bool near = true;
        for (int j = 1; near && it->values != nullptr && j < k; ++j) {
          near = !(std::fabs(a[j] - it->values[j]) > window);  // NaN: left to the comparison
        }
        if (near) report(it->id);
      }
    }
  }

 private:
  static constexpr int kZero = std::numeric_limits<int>::min();
  struct Item {
    double value;
    uint32_t id;
    const double* values;  // all k projections, or null: the first one only
  };
  std::map<int, std::vector<Item>> groups_;
};

}  // namespace

// The indexes HoldingCandidatesFor probes: whole tensors by element count (identical,
// replicated, reshape), the rank sums of each complete name by shape (sum), and every slice
// along every dimension by shape with that dimension open (concat, slices).
class FingerprintMatcher::ValueIndex {
 public:
  std::map<int64_t, ProjectionIndex> whole;              // id: entry
  std::map<std::vector<int64_t>, ProjectionIndex> sums;  // id: into sum_names
  std::vector<const std::string*> sum_names;
  std::map<std::vector<int64_t>, ProjectionIndex> slices;  // id: entry
  double max_roundoff = 0.0;                               // over D's dtypes
};

FingerprintMatcher::FingerprintMatcher(const FingerprintTable& d, MatchOptions options)
    : d_(d), options_(options), world_(static_cast<int32_t>(d.ranks.size())) {
  uniform_projections_ = d.projections;
  for (int32_t r = 0; r < world_; ++r) {
    for (const auto& [ref, fp] : d.ranks[static_cast<size_t>(r)]) {
      entries_.push_back(Entry{r, ref, &fp});
      if (fp.projections != d.projections) uniform_projections_ = -1;
    }
  }
  auto add = [&](Names& names, const Entry& e) {
    Slots& slots = names[e.fp->name];
    slots.resize(static_cast<size_t>(world_), nullptr);
    if (!slots[static_cast<size_t>(e.rank)]) slots[static_cast<size_t>(e.rank)] = &e;
  };
  for (const Entry& e : entries_) {
    add(by_shape_[e.fp->shape], e);
    add(by_numel_[e.fp->numel()], e);
    for (size_t dim = 0; dim < e.fp->shape.size(); ++dim) {
      add(by_open_dim_[OpenDimKey(e.fp->shape, dim)], e);
    }
  }
}

FingerprintMatcher::~FingerprintMatcher() = default;

std::vector<Candidate> FingerprintMatcher::CandidatesFor(const TensorFingerprint& s) const {
  return Collect(s, nullptr);
}

FingerprintMatcher::NameFilter FingerprintMatcher::NamesNear(const TensorFingerprint& s) const {
  const int k = d_.projections;
  if (!index_) {
    index_ = std::make_unique<ValueIndex>();
    ValueIndex& index = *index_;
    for (size_t i = 0; i < entries_.size(); ++i) {
      const TensorFingerprint& fp = *entries_[i].fp;
      index.max_roundoff = std::max(index.max_roundoff, Roundoff(fp.dtype));
      auto id = static_cast<uint32_t>(i);
      index.whole[fp.numel()].Add(fp.whole.values.data(), k, std::sqrt(fp.sum_squares()), id);
      for (size_t dim = 0; dim < fp.shape.size(); ++dim) {
        ProjectionIndex& slices = index.slices[OpenDimKey(fp.shape, dim)];
        const SliceProjections& along = fp.along(static_cast<int64_t>(dim));
        for (int64_t j = 0; j < along.count; ++j) {
          slices.Add(&along.values[static_cast<size_t>(j * k)], k,
                     std::sqrt(along.sum_squares[static_cast<size_t>(j)]), id);
        }
      }
    }
    // A concat of sums begins with the sum of its first group's slices 0 (no norm of its own:
    // SumError judges against S's scale).
    const std::vector<RankGroups> layouts = GroupLayouts(world_);
    for (const auto& [key, names] : by_open_dim_) {
      if (layouts.empty()) break;
      const int64_t dim = key.back();
      for (const auto& [name, slots] : names) {
        if (!EveryRank(slots) || !std::all_of(slots.begin(), slots.end(), [&](const Entry* e) {
              return e->fp->along(dim).count > 0;
            })) {
          continue;
        }
        auto id = static_cast<uint32_t>(slots[0] - entries_.data());
        for (const RankGroups& layout : layouts) {
          double first = 0.0;
          for (int32_t m = 0; m < world_ / layout.chunks; ++m) {
            first +=
                slots[static_cast<size_t>(layout.Rank(0, m, world_))]->fp->along(dim).values[0];
          }
          index.slices[key].Add(&first, 1, 0.0, id);
        }
      }
    }
    for (const auto& [shape, names] : by_shape_) {
      for (const auto& [name, slots] : names) {
        if (world_ < 2 || !EveryRank(slots)) continue;
        double total = 0.0;
        for (const Entry* e : slots) total += e->fp->whole.values[0];
        // SumError judges against S's scale alone: no norm of its own.
        index.sums[shape].Add(&total, 1, 0.0, static_cast<uint32_t>(index.sum_names.size()));
        index.sum_names.push_back(&name);
      }
    }
    for (auto& [numel, idx] : index.whole) idx.Sort();
    for (auto& [shape, idx] : index.sums) idx.Sort();
    for (auto& [key, idx] : index.slices) idx.Sort();
  }
  const ValueIndex& index = *index_;
  // The largest tolerance any D tensor can have against s.
  const double tol = Tolerance(options_, std::max(Roundoff(s.dtype), index.max_roundoff));
  NameFilter filter;
  const double* a = s.whole.values.data();
  const double scale = std::sqrt(s.sum_squares());
  if (auto it = index.whole.find(s.numel()); it != index.whole.end()) {
    it->second.Near(a, k, scale, tol, [&](uint32_t id) {
      const TensorFingerprint& fp = *entries_[id].fp;
      (fp.shape == s.shape ? filter.same_shape : filter.numel).insert(fp.name);
    });
  }
  if (auto it = index.sums.find(s.shape); it != index.sums.end()) {
    it->second.Near(a, 1, scale, tol,
                    [&](uint32_t id) { filter.same_shape.insert(*index.sum_names[id]); });
  }
  for (size_t dim = 0; dim < s.shape.size(); ++dim) {
    if (s.shape[dim] <= 1) continue;
    auto it = index.slices.find(OpenDimKey(s.shape, dim));
    if (it == index.slices.end()) continue;
    // Every candidate along dim (concat in rank order, runs of slices) begins with S's slice 0.
    const SliceProjections& sp = s.dims[dim];
    double floor = kFloorFraction * MeanSliceSquares(sp);
    double slice_scale = std::sqrt(std::max(sp.sum_squares[0], floor));
    std::set<std::string>& names = filter.open_dim[dim];
    it->second.Near(sp.values.data(), k, slice_scale, tol,
                    [&](uint32_t id) { names.insert(entries_[id].fp->name); });
  }
  return filter;
}

std::vector<Candidate> FingerprintMatcher::HoldingCandidatesFor(const TensorFingerprint& s) const {
  std::vector<Candidate> found;
  if (s.projections < 1 || s.projections != uniform_projections_) {
    found = Collect(s, nullptr);  // nothing to index by: compare with everything
  } else {
    NameFilter filter = NamesNear(s);
    found = Collect(s, &filter);
  }
  found.erase(
      std::find_if(found.begin(), found.end(), [](const Candidate& c) { return !c.holds(); }),
      found.end());
  return found;
}

std::vector<Candidate> FingerprintMatcher::Collect(const TensorFingerprint& s,
                                                   const NameFilter* filter) const {
  const int k = s.projections;
  auto tolerance = [&](const TensorFingerprint& d) {
    return Tolerance(options_, std::max(Roundoff(s.dtype), Roundoff(d.dtype)));
  };
  auto leaf = [](const Entry& e) { return symbolic::RelExpr::Tensor(e.rank, e.ref, e.fp->name); };
  auto admits = [](const std::set<std::string>* names, const std::string& name) {
    return names == nullptr || names->count(name) > 0;
  };
  const std::vector<RankGroups> layouts = GroupLayouts(world_);  // concat-of-sums layouts

  std::vector<Candidate> found;
  auto add = [&](Candidate::Kind kind, std::vector<symbolic::RelExpr> exprs, double error,
                 double tol) {
    found.push_back(Candidate{kind, std::move(exprs), error, tol});
  };

  // Same shape: identical on a rank, replicated, sum over ranks.
  if (auto it = by_shape_.find(s.shape); it != by_shape_.end()) {
    std::vector<const Candidate*> best_per_rank(static_cast<size_t>(world_), nullptr);
    std::vector<Candidate> identical;
    for (const auto& [name, slots] : it->second) {
      if (!admits(filter ? &filter->same_shape : nullptr, name)) continue;
      std::vector<symbolic::RelExpr> rank_exprs;
      double rep_error = 0.0, rep_tol = kInf;
      bool all_hold = EveryRank(slots);
      for (const Entry* e : slots) {
        if (!e) continue;
        double tol = tolerance(*e->fp);
        double error = RangeError(s.whole, 0, e->fp->whole, 0, 1, k, 0.0, kInf);
        if (error <= tol) error = std::max(error, FullError(s, *e->fp));
        identical.push_back(Candidate{Candidate::Kind::kIdentical, {leaf(*e)}, error, tol});
        all_hold = all_hold && error <= tol;
        rank_exprs.push_back(leaf(*e));
        rep_error = std::max(rep_error, error);
        rep_tol = std::min(rep_tol, tol);
      }
      if (all_hold && world_ > 1) {
        add(Candidate::Kind::kReplicated, rank_exprs, rep_error, rep_tol);
        // The identical candidates of this name are part of the replicated one.
        identical.erase(std::remove_if(identical.begin(), identical.end(),
                                       [&](const Candidate& c) {
                                         return c.holds() &&
                                                std::get<symbolic::DTensor>(c.exprs[0].node().kind)
                                                        .name == name;
                                       }),
                        identical.end());
      }
      if (EveryRank(slots) && world_ > 1) {
        std::vector<const TensorFingerprint*> parts;
        std::vector<symbolic::RelExpr> leaves;
        double tol = 0.0;
        for (const Entry* e : slots) {
          parts.push_back(e->fp);
          leaves.push_back(leaf(*e));
          tol = std::max(tol, tolerance(*e->fp));
        }
        std::vector<const SliceProjections*> wholes;
        for (const TensorFingerprint* p : parts) wholes.push_back(&p->whole);
        double error = SumError(s.whole, wholes, k, 0.0);
        if (error <= tol) error = std::max(error, FullSumError(s, parts));
        add(Candidate::Kind::kSum, {symbolic::RelExpr::Sum(leaves)}, error, tol);
      }
    }
    // Replicated across differently named tensors: every rank holds an identical one.
    bool replicated_found = std::any_of(found.begin(), found.end(), [](const Candidate& c) {
      return c.kind == Candidate::Kind::kReplicated && c.holds();
    });
    if (!replicated_found && world_ > 1) {
      for (const Candidate& c : identical) {
        if (!c.holds()) continue;
        int32_t r = std::get<symbolic::DTensor>(c.exprs[0].node().kind).rank;
        auto& best = best_per_rank[static_cast<size_t>(r)];
        if (!best || c.error < best->error) best = &c;
      }
      if (std::all_of(best_per_rank.begin(), best_per_rank.end(),
                      [](const Candidate* c) { return c != nullptr; })) {
        std::vector<symbolic::RelExpr> exprs;
        double error = 0.0, tol = kInf;
        for (const Candidate* c : best_per_rank) {
          exprs.push_back(c->exprs[0]);
          error = std::max(error, c->error);
          tol = std::min(tol, c->tolerance);
        }
        add(Candidate::Kind::kReplicated, exprs, error, tol);
      }
    }
    for (Candidate& c : identical) found.push_back(std::move(c));
  }

  // One dimension differs: concat over ranks, or runs of slices of the ranks' tensors.
  for (size_t dim = 0; dim < s.shape.size(); ++dim) {
    if (s.shape[dim] <= 1) continue;
    auto it = by_open_dim_.find(OpenDimKey(s.shape, dim));
    if (it == by_open_dim_.end()) continue;
    const SliceProjections& sp = s.dims[dim];
    const double floor = kFloorFraction * MeanSliceSquares(sp);
    const auto d64 = static_cast<int64_t>(dim);
    std::optional<bool> slices_repeat;  // decided when a cover is first searched for
    const std::set<std::string>* dim_names = nullptr;
    if (filter) {
      auto names = filter->open_dim.find(dim);
      if (names == filter->open_dim.end()) continue;
      dim_names = &names->second;
    }
    for (const auto& [name, slots] : it->second) {
      if (!admits(dim_names, name)) continue;
      double tol = 0.0;
      for (const Entry* e : slots) {
        if (e) tol = std::max(tol, tolerance(*e->fp));
      }
      // Concat in rank order.
      bool concat_holds = false;
      if (EveryRank(slots) && world_ > 1) {
        int64_t total = 0;
        for (const Entry* e : slots) total += e->fp->shape[dim];
        bool same_as_identity = false;
        for (const Entry* e : slots) same_as_identity |= e->fp->shape[dim] == s.shape[dim];
        if (total == s.shape[dim] && !same_as_identity) {
          double error = 0.0;
          int64_t offset = 0;
          std::vector<symbolic::RelExpr> leaves;
          for (const Entry* e : slots) {
            const SliceProjections& part = e->fp->along(d64);
            error = std::max(error, RangeError(sp, offset, part, 0, part.count, k, floor, kInf));
            offset += part.count;
            leaves.push_back(leaf(*e));
          }
          add(Candidate::Kind::kConcat, {symbolic::RelExpr::Concat(d64, leaves)}, error, tol);
          concat_holds = error <= tol;
        }
      }
      if (concat_holds) continue;
      // Concat of sums over rank groups (every rank the same extent along dim).
      if (EveryRank(slots) && world_ > 2) {
        const int64_t extent = slots[0]->fp->shape[dim];
        bool uniform = std::all_of(slots.begin(), slots.end(),
                                   [&](const Entry* e) { return e->fp->shape[dim] == extent; });
        for (const RankGroups& layout : layouts) {
          if (!uniform || extent * layout.chunks != s.shape[dim]) continue;
          const int32_t members = world_ / layout.chunks;
          double error = 0.0;
          std::vector<symbolic::RelExpr> chunks;
          for (int32_t c = 0; c < layout.chunks; ++c) {
            std::vector<const SliceProjections*> parts;
            std::vector<symbolic::RelExpr> leaves;
            for (int32_t m = 0; m < members; ++m) {
              const Entry* e = slots[static_cast<size_t>(layout.Rank(c, m, world_))];
              parts.push_back(&e->fp->along(d64));
              leaves.push_back(leaf(*e));
            }
            error = std::max(error, SumError(sp, parts, k, floor, c * extent, extent));
            chunks.push_back(symbolic::RelExpr::Sum(leaves));
          }
          add(Candidate::Kind::kConcatOfSums, {symbolic::RelExpr::Concat(d64, chunks)}, error, tol);
        }
      }
      // Runs of consecutive slices: continue the current run when the next slice matches, else
      // look for S's slice among every slice of every rank (rank order, then index). With
      // distinct_slices, not when two of S's slices are alike (a mask's or an id tensor's few
      // values): then many covers hold, and the one found is as likely a coincidence of the
      // values as the layout.
      if (options_.distinct_slices) {
        if (!slices_repeat) {
          slices_repeat = SlicesRepeat(sp, k, floor, Tolerance(options_, Roundoff(s.dtype)));
        }
        if (*slices_repeat) continue;
      }
      struct Run {
        const Entry* entry;
        int64_t start, end;
      };
      std::vector<Run> runs;
      double error = 0.0;
      bool covered = true;
      for (int64_t j = 0; j < sp.count && covered; ++j) {
        if (!runs.empty()) {
          Run& run = runs.back();
          const SliceProjections& part = run.entry->fp->along(d64);
          if (run.end < part.count) {
            double e = RangeError(sp, j, part, run.end, 1, k, floor, kInf);
            if (e <= tol) {
              error = std::max(error, e);
              ++run.end;
              continue;
            }
          }
        }
        bool hit = false;
        for (const Entry* e : slots) {
          if (!e || hit) continue;
          const SliceProjections& part = e->fp->along(d64);
          for (int64_t i = 0; i < part.count; ++i) {
            double err = RangeError(sp, j, part, i, 1, k, floor, kInf);
            if (err <= tol) {
              error = std::max(error, err);
              runs.push_back(Run{e, i, i + 1});
              hit = true;
              break;
            }
          }
        }
        covered = hit;
      }
      if (!covered || runs.empty()) continue;
      auto add_runs = [&](const std::vector<Run>& cover, double cover_error) {
        std::vector<symbolic::RelExpr> pieces;
        for (const Run& run : cover) {
          symbolic::RelExpr t = leaf(*run.entry);
          pieces.push_back(run.start == 0 && run.end == run.entry->fp->shape[dim]
                               ? t
                               : symbolic::RelExpr::Slice(t, d64, run.start, run.end));
        }
        if (pieces.size() == 1 &&
            std::holds_alternative<symbolic::DTensor>(pieces[0].node().kind)) {
          return;  // the identical candidate
        }
        add(Candidate::Kind::kSlices,
            {pieces.size() == 1 ? pieces[0] : symbolic::RelExpr::Concat(d64, pieces)}, cover_error,
            tol);
      };
      add_runs(runs, error);
      // The same runs on ranks the covers so far do not read (the replicas of a 2-D mesh's other
      // groups: a TP x CP rank's zig-zag pieces are on the CP ranks of its own TP rank), each run
      // taken from the first such rank whose slices match it: one cover per group, so a search
      // guided by them draws every group's paths, not the first one's.
      std::set<int32_t> used;
      for (const Run& run : runs) used.insert(run.entry->rank);
      for (;;) {
        std::vector<Run> other = runs;
        double other_error = 0.0;
        int64_t j = 0;
        bool all = true;
        for (Run& run : other) {
          const Entry* match = nullptr;
          for (const Entry* e : slots) {
            if (!e || used.count(e->rank) || e->fp->shape[dim] != run.entry->fp->shape[dim]) {
              continue;
            }
            double err = RangeError(sp, j, e->fp->along(d64), run.start, run.end - run.start, k,
                                    floor, kInf);
            if (err <= tol) {
              other_error = std::max(other_error, err);
              match = e;
              break;
            }
          }
          j += run.end - run.start;
          if (match == nullptr) {
            all = false;
            break;
          }
          run.entry = match;
        }
        if (!all) break;
        size_t before = used.size();
        for (const Run& run : other) used.insert(run.entry->rank);
        if (used.size() == before) break;
        add_runs(other, other_error);
      }
    }
  }

  // Reshapes (same elements in the same order): only when nothing of S's shape holds.
  bool any_holds = std::any_of(found.begin(), found.end(), [](const Candidate& c) {
    return c.holds();
  });
  if (!any_holds) {
    if (auto it = by_numel_.find(s.numel()); it != by_numel_.end()) {
      for (const auto& [name, slots] : it->second) {
        if (!admits(filter ? &filter->numel : nullptr, name)) continue;
        std::vector<symbolic::RelExpr> exprs;
        double worst = 0.0, tol_all = kInf;
        bool all_hold = EveryRank(slots);
        for (const Entry* e : slots) {
          if (!e || e->fp->shape == s.shape) {
            all_hold = false;
            continue;
          }
          double tol = tolerance(*e->fp);
          double error = RangeError(s.whole, 0, e->fp->whole, 0, 1, k, 0.0, kInf);
          symbolic::RelExpr expr = symbolic::RelExpr::Reshape(leaf(*e), s.shape);
          if (error <= tol) exprs.push_back(expr);
          all_hold = all_hold && error <= tol;
          worst = std::max(worst, error);
          tol_all = std::min(tol_all, tol);
          if (!(all_hold && world_ > 1)) add(Candidate::Kind::kReshape, {expr}, error, tol);
        }
        if (all_hold && world_ > 1) add(Candidate::Kind::kReplicated, exprs, worst, tol_all);
      }
    }
  }

  // Holding candidates by kind then error; then the failing ones by error.
  std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    if (a.holds() != b.holds()) return a.holds();
    if (a.holds() && a.kind != b.kind) return KindOrder(a.kind) < KindOrder(b.kind);
    return a.error < b.error;
  });
  std::vector<Candidate> result;
  size_t holding = 0, failing = 0;
  for (Candidate& c : found) {
    size_t& n = c.holds() ? holding : failing;
    if (n++ < options_.max_candidates) result.push_back(std::move(c));
  }
  return result;
}

std::vector<Candidate> CandidatesFor(const FingerprintTable& s, const FingerprintTable& d,
                                     ir::TensorRef s_tensor, const MatchOptions& options) {
  const TensorFingerprint* fp = s.Find(0, s_tensor);
  if (!fp) return {};
  return FingerprintMatcher(d, options).CandidatesFor(*fp);
}

std::string NumericClassification::ToString() const {
  switch (kind) {
    case Kind::kMissingLemma:
      return "numerically equal to " + closest->ToString() +
             ": a missing lemma (the relation holds on these inputs but was not proved)";
    case Kind::kNumericallyDifferent:
      return closest ? "numerically different: the closest candidate, " + closest->ToString() +
                           ", does not hold (a real difference, or a relation outside the "
                           "candidate forms)"
                     : "numerically different: no D tensor of a compatible shape";
    case Kind::kNotObserved:
      return "not observed: no fingerprint of this tensor";
  }
  return "";
}

NumericClassification ClassifyNumerically(const FingerprintTable& s, const FingerprintTable& d,
                                          ir::TensorRef s_tensor, const MatchOptions& options) {
  return ClassifyNumerically(s, FingerprintMatcher(d, options), s_tensor);
}

NumericClassification ClassifyNumerically(const FingerprintTable& s,
                                          const FingerprintMatcher& matcher,
                                          ir::TensorRef s_tensor) {
  NumericClassification result;
  const TensorFingerprint* fp = s.Find(0, s_tensor);
  if (!fp) return result;
  std::vector<Candidate> candidates = matcher.CandidatesFor(*fp);
  result.kind = !candidates.empty() && candidates.front().holds()
                    ? NumericClassification::Kind::kMissingLemma
                    : NumericClassification::Kind::kNumericallyDifferent;
  if (!candidates.empty()) result.closest = candidates.front();
  return result;
}

}  // namespace gg::runtime
