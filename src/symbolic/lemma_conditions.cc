// The side conditions and appliers of the lemma catalogue. Every entry says which pattern
// variables it reads; a rule whose pattern lacks them is a catalogue bug that the self-tests hit.
// Dims are compared after wrapping negative values by the rank of the tensor they index.
#include "symbolic/lemma_conditions.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <tuple>

namespace gg::symbolic {
namespace {

using Shape64 = std::vector<int64_t>;

const TensorLanguage& Lang() { return TensorLanguage::Get(); }

std::optional<int64_t> IntOf(const EGraph& g, ClassId id) { return FactsOf(g, id).constant; }

const std::optional<ir::TensorType>& TypeOf(const EGraph& g, ClassId id) {
  return FactsOf(g, id).type;
}

// The static shape of a class, or nullopt (no tensor type, or a symbolic dimension).
std::optional<Shape64> ShapeOf(const EGraph& g, ClassId id) {
  const auto& type = TypeOf(g, id);
  if (!type) return std::nullopt;
  Shape64 out;
  for (const ir::Dim& d : type->shape) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

std::optional<int64_t> Norm(std::optional<int64_t> dim, size_t rank) {
  if (!dim) return std::nullopt;
  int64_t r = static_cast<int64_t>(rank);
  int64_t d = *dim < 0 ? *dim + r : *dim;
  if (d < 0 || d >= r) return std::nullopt;
  return d;
}

// Optional variables: a condition may serve patterns with either ?x or ?xs.
std::optional<ClassId> MaybeVar(const Bindings& b, const char* name) {
  try {
    return b.Var(name);
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
}
const std::vector<ClassId>* MaybeList(const Bindings& b, const char* name) {
  try {
    return &b.List(name);
  } catch (const std::out_of_range&) {
    return nullptr;
  }
}

std::optional<Shape64> RootShape(const EGraph& g, const Bindings& b) {
  return ShapeOf(g, b.match().eclass);
}

ClassId AddNum(EGraph& g, int64_t v) { return g.Add(Lang().Num(v)); }
ClassId AddOp(EGraph& g, OpId op, std::vector<ClassId> children) {
  return g.Add(ENode{op, 0, std::move(children)});
}

// ---- conditions ------------------------------------------------------------------------------

// ?y is a scalar, or broadcasts along dim ?d of the (matched) result: right-aligned, its dim at
// ?d is absent or 1; and the main operand (?x, or the first of ?xs) has the result's rank, so
// ?d means the same dim in operand and result.
bool BroadcastsAlongD(const EGraph& g, const Bindings& b) {
  auto out = RootShape(g, b);
  if (!out) return false;
  size_t r = out->size();
  auto d = Norm(IntOf(g, b.Var("d")), r);
  if (!d) return false;
  std::optional<ClassId> main = MaybeVar(b, "x");
  if (!main) {
    const auto* xs = MaybeList(b, "xs");
    if (xs == nullptr || xs->empty()) return false;
    main = xs->front();
  }
  auto main_shape = ShapeOf(g, *main);
  if (!main_shape || main_shape->size() != r) return false;
  ClassId y = b.Var("y");
  if (!TypeOf(g, y)) return FactsOf(g, y).fconstant.has_value();
  auto ys = ShapeOf(g, y);
  if (!ys || ys->size() > r) return false;
  int64_t at = *d - static_cast<int64_t>(r - ys->size());
  return at < 0 || (*ys)[at] == 1;
}

// ?xs and ?ys have equal length and rank, and pairwise equal sizes along ?d.
bool EqualSplits(const EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  const auto& ys = b.List("ys");
  if (xs.size() != ys.size() || xs.empty()) return false;
  for (size_t i = 0; i < xs.size(); ++i) {
    auto sx = ShapeOf(g, xs[i]), sy = ShapeOf(g, ys[i]);
    if (!sx || !sy || sx->size() != sy->size()) return false;
    auto d = Norm(IntOf(g, b.Var("d")), sx->size());
    if (!d || (*sx)[*d] != (*sy)[*d]) return false;
  }
  return true;
}

// ?xs (rank R) and ?ys (rank Q <= R) are concats along ?d and ?e that are the same dim once
// right-aligned for broadcasting (d - R = e - Q), with pairwise equal sizes there, and each y
// piece broadcasts against its x piece (every other dim 1 or equal). Bias adds: [s, b, n] + [n].
bool AlignedSplits(const EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  const auto& ys = b.List("ys");
  if (xs.size() != ys.size() || xs.empty()) return false;
  for (size_t i = 0; i < xs.size(); ++i) {
    auto sx = ShapeOf(g, xs[i]), sy = ShapeOf(g, ys[i]);
    if (!sx || !sy || sy->size() > sx->size()) return false;
    auto d = Norm(IntOf(g, b.Var("d")), sx->size());
    auto e = Norm(IntOf(g, b.Var("e")), sy->size());
    const int64_t shift = static_cast<int64_t>(sx->size() - sy->size());
    if (!d || !e || *d != *e + shift || (*sx)[*d] != (*sy)[*e]) return false;
    for (size_t k = 0; k < sy->size(); ++k) {
      if ((*sy)[k] != 1 && (*sy)[k] != (*sx)[k + shift]) return false;
    }
  }
  return true;
}

// ?xs and ?ys have equal length and pairwise equal sizes along `dim_x` / `dim_y` (wrapped).
bool PairwiseDims(const EGraph& g, const Bindings& b, int64_t dim_x, int64_t dim_y) {
  const auto& xs = b.List("xs");
  const auto& ys = b.List("ys");
  if (xs.size() != ys.size() || xs.empty()) return false;
  for (size_t i = 0; i < xs.size(); ++i) {
    auto sx = ShapeOf(g, xs[i]), sy = ShapeOf(g, ys[i]);
    if (!sx || !sy) return false;
    auto dx = Norm(dim_x, sx->size()), dy = Norm(dim_y, sy->size());
    if (!dx || !dy || (*sx)[*dx] != (*sy)[*dy]) return false;
  }
  return true;
}

// ?x and ?y have one shape.
bool SameShape(const EGraph& g, const Bindings& b) {
  auto sx = ShapeOf(g, b.Var("x")), sy = ShapeOf(g, b.Var("y"));
  return sx && sy && *sx == *sy;
}

// The matched reshape produces ?x's own shape.
bool ReshapeIsIdentity(const EGraph& g, const Bindings& b) {
  auto out = RootShape(g, b);
  auto in = ShapeOf(g, b.Var("x"));
  return out && in && *out == *in;
}

// (slice ?x ?d ?s ?e) takes all of ?x.
bool SliceIsFull(const EGraph& g, const Bindings& b) {
  auto in = ShapeOf(g, b.Var("x"));
  if (!in) return false;
  auto d = Norm(IntOf(g, b.Var("d")), in->size());
  auto s = IntOf(g, b.Var("s")), e = IntOf(g, b.Var("e"));
  return d && s && e && *s == 0 && *e == (*in)[*d];
}

// ?x, or the first of ?xs.
std::optional<ClassId> XOrFirstOfXs(const Bindings& b) {
  if (std::optional<ClassId> x = MaybeVar(b, "x")) return x;
  const auto* xs = MaybeList(b, "xs");
  if (xs == nullptr || xs->empty()) return std::nullopt;
  return xs->front();
}

// ?d and ?e name different dims of the first of ?xs (or of ?x).
bool DimsDiffer(const EGraph& g, const Bindings& b) {
  std::optional<ClassId> x = XOrFirstOfXs(b);
  if (!x) return false;
  auto shape = ShapeOf(g, *x);
  if (!shape) return false;
  auto d = Norm(IntOf(g, b.Var("d")), shape->size());
  auto e = Norm(IntOf(g, b.Var("e")), shape->size());
  return d && e && *d != *e;
}

// ?xs and ?ys are concats along ?d with pairwise equal sizes there (equal-splits), inside a
// concat along another dim ?e (dims-differ): the two concats may be interchanged.
// Reducing dim ?e (keepdim ?k) of the pieces ?xs leaves the concat dim ?d, as written, naming
// the same dim of the result: ?e differs from ?d, and without keepdim the removed dim must not
// shift ?d (it lies after a non-negative ?d, or before a negative one).
bool ReduceKeepsConcatDim(const EGraph& g, const Bindings& b) {
  if (!DimsDiffer(g, b)) return false;
  auto shape = ShapeOf(g, b.List("xs").front());
  auto raw_d = IntOf(g, b.Var("d"));
  auto d = Norm(raw_d, shape->size());
  auto e = Norm(IntOf(g, b.Var("e")), shape->size());
  auto keep = IntOf(g, b.Var("k"));
  if (!keep) return false;
  if (*keep != 0) return true;
  return *raw_d >= 0 ? *e > *d : *e < *d;
}

// (R (concat ?d ?xs...) ?e ?k) for a reduction R over one dim (sum_dim, max_dim, mean_dim) with
// ?k = 0 and ?e before ?d: the reduced dim disappears, so the concat dim of the result is d - 1,
// (concat d-1 (R ?xs ?e 0)...). (reduce-keeps-concat-dim covers a dim after ?d, and keepdim.)
std::function<std::optional<ClassId>(EGraph&, const Bindings&)> ReduceOfConcatBefore(
    const char* reduction) {
  return [reduction](EGraph& g, const Bindings& b) -> std::optional<ClassId> {
    const auto& xs = b.List("xs");
    auto shape = ShapeOf(g, xs.front());
    if (!shape) return std::nullopt;
    auto d = Norm(IntOf(g, b.Var("d")), shape->size());
    auto e = Norm(IntOf(g, b.Var("e")), shape->size());
    auto keep = IntOf(g, b.Var("k"));
    if (!d || !e || !keep || *keep != 0 || *e >= *d) return std::nullopt;
    const OpId op = *Lang().ops().Find(reduction);
    std::vector<ClassId> parts{AddNum(g, *d - 1)};
    for (ClassId x : xs) parts.push_back(AddOp(g, op, {x, b.Var("e"), b.Var("k")}));
    return AddOp(g, Lang().concat, std::move(parts));
  };
}

// The concat dim ?d of ?xs lies before the ?n normalized (trailing) dims of a layer norm.
bool NormExcludesD(const EGraph& g, const Bindings& b) {
  auto shape = ShapeOf(g, b.List("xs").front());
  if (!shape) return false;
  auto d = Norm(IntOf(g, b.Var("d")), shape->size());
  auto n = IntOf(g, b.Var("n"));
  return d && n && *n >= 1 && *d < static_cast<int64_t>(shape->size()) - *n;
}

// The concat dim ?d of ?xs is not the last dim.
bool NotLastDim(const EGraph& g, const Bindings& b) {
  auto shape = ShapeOf(g, b.List("xs").front());
  if (!shape) return false;
  auto d = Norm(IntOf(g, b.Var("d")), shape->size());
  return d && *d + 1 < static_cast<int64_t>(shape->size());
}

// (pick (concat ?d ?xs...) (concat ?d ?ys...)): ?d is a leading dim (non-negative, not x's
// last), written the same for x and the ids, and the pieces have equal sizes there.
bool PickRowsSplit(const EGraph& g, const Bindings& b) {
  auto d = IntOf(g, b.Var("d"));
  auto shape = ShapeOf(g, b.List("xs").front());
  if (!d || !shape || *d < 0 || *d + 1 >= static_cast<int64_t>(shape->size())) return false;
  const auto& xs = b.List("xs");
  const auto& ys = b.List("ys");
  if (xs.size() != ys.size()) return false;
  for (size_t i = 0; i < xs.size(); ++i) {
    auto sx = ShapeOf(g, xs[i]), sy = ShapeOf(g, ys[i]);
    if (!sx || !sy || sy->size() + 1 != sx->size() || (*sx)[*d] != (*sy)[*d]) return false;
  }
  return true;
}

// The concat dim ?d of ?xs is neither of the transposed dims ?a ?b.
bool TransposeOtherDim(const EGraph& g, const Bindings& b) {
  auto shape = ShapeOf(g, b.List("xs").front());
  if (!shape) return false;
  size_t r = shape->size();
  auto d = Norm(IntOf(g, b.Var("d")), r);
  auto a = Norm(IntOf(g, b.Var("a")), r), c = Norm(IntOf(g, b.Var("b")), r);
  return d && a && c && *d != *a && *d != *c;
}

// ?d, the concat dim of the first of ?xs, equals ?a (both wrapped) — for the dim-mapping
// transpose rules, which must also fire when one side is written negative.
bool DEqualsA(const EGraph& g, const Bindings& b) {
  auto shape = ShapeOf(g, b.List("xs").front());
  if (!shape) return false;
  auto d = Norm(IntOf(g, b.Var("d")), shape->size());
  auto a = Norm(IntOf(g, b.Var("a")), shape->size());
  return d && a && *d == *a;
}

// ?d is written non-negative (its meaning survives adding a trailing dim).
bool DimNonNegative(const EGraph& g, const Bindings& b) {
  auto d = IntOf(g, b.Var("d"));
  return d && *d >= 0;
}

// ?d names a dim of ?x of size 1.
bool DimIsOne(const EGraph& g, const Bindings& b) {
  auto shape = ShapeOf(g, b.Var("x"));
  if (!shape) return false;
  auto d = Norm(IntOf(g, b.Var("d")), shape->size());
  return d && (*shape)[static_cast<size_t>(*d)] == 1;
}

// ?d (written non-negative) is a dim of view_as_complex(?x) (or of its list's first piece):
// before x's last dim, the (real, imag) pair view_as_complex folds away. Non-negative because
// the complex tensor has one dim fewer: -1 of x is not -1 of view_as_complex(x).
bool ComplexDimKept(const EGraph& g, const Bindings& b) {
  std::optional<ClassId> x = XOrFirstOfXs(b);
  if (!x) return false;
  auto shape = ShapeOf(g, *x);
  auto d = IntOf(g, b.Var("d"));
  return shape && d && *d >= 0 && *d + 1 < static_cast<int64_t>(shape->size());
}

// ---- appliers --------------------------------------------------------------------------------

// Two splits of one extent, piece sizes `a` and `b` in order, grouped at their common
// boundaries: each group is the shortest run of consecutive pieces of a and of b covering the
// same range (one piece each where the splits agree). nullopt when the totals differ or a size
// is not positive.
struct PieceGroup {
  size_t a_begin, a_end, b_begin, b_end;
};
std::optional<std::vector<PieceGroup>> CommonBoundaryGroups(const std::vector<int64_t>& a,
                                                            const std::vector<int64_t>& b) {
  std::vector<PieceGroup> groups;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    PieceGroup group{i, i, j, j};
    int64_t sa = 0, sb = 0;
    do {
      if (sa <= sb) {
        if (i == a.size() || a[i] <= 0) return std::nullopt;
        sa += a[i++];
      } else {
        if (j == b.size() || b[j] <= 0) return std::nullopt;
        sb += b[j++];
      }
    } while (sa != sb || i == group.a_begin || j == group.b_begin);
    group.a_end = i;
    group.b_end = j;
    groups.push_back(group);
  }
  return groups;
}

// Each piece's size along `dim` (wrapped per piece); nullopt when a shape is unknown.
std::optional<std::vector<int64_t>> SizesAlong(const EGraph& g, const std::vector<ClassId>& pieces,
                                               int64_t dim) {
  std::vector<int64_t> sizes;
  for (ClassId c : pieces) {
    auto shape = ShapeOf(g, c);
    auto d = shape ? Norm(dim, shape->size()) : std::nullopt;
    if (!d) return std::nullopt;
    sizes.push_back((*shape)[static_cast<size_t>(*d)]);
  }
  return sizes;
}

// pieces[begin, end) concatenated along `dim`; the piece itself when there is one.
ClassId JoinPieces(EGraph& g, const std::vector<ClassId>& pieces, size_t begin, size_t end,
                   int64_t dim) {
  if (end - begin == 1) return pieces[begin];
  std::vector<ClassId> children{AddNum(g, dim)};
  children.insert(children.end(), pieces.begin() + static_cast<std::ptrdiff_t>(begin),
                  pieces.begin() + static_cast<std::ptrdiff_t>(end));
  return AddOp(g, Lang().concat, std::move(children));
}

// (slice (concat ?d ?xs...) ?e ?s ?t) with ?d = ?e: the pieces the range touches, each cut to
// the part inside the range (a piece fully inside is used as is); one piece is returned alone.
std::optional<ClassId> SliceOfConcat(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  auto first = ShapeOf(g, xs.front());
  if (!first) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), first->size());
  auto e = Norm(IntOf(g, b.Var("e")), first->size());
  auto s = IntOf(g, b.Var("s")), t = IntOf(g, b.Var("t"));
  if (!d || !e || *d != *e || !s || !t || *s >= *t) return std::nullopt;
  std::vector<ClassId> parts;
  int64_t offset = 0;
  for (ClassId x : xs) {
    auto shape = ShapeOf(g, x);
    if (!shape) return std::nullopt;
    int64_t size = (*shape)[*d];
    int64_t lo = std::max(*s, offset), hi = std::min(*t, offset + size);
    if (lo < hi) {
      if (lo == offset && hi == offset + size) {
        parts.push_back(x);
      } else {
        parts.push_back(AddOp(g, Lang().slice, {x, AddNum(g, *d), AddNum(g, lo - offset),
                                                AddNum(g, hi - offset)}));
      }
    }
    offset += size;
  }
  if (parts.empty() || *t > offset) return std::nullopt;
  if (parts.size() == 1) return parts.front();
  parts.insert(parts.begin(), b.Var("d"));
  return AddOp(g, Lang().concat, std::move(parts));
}

// (slice (slice ?x ?d ?a ?b) ?e ?c ?f) with ?d = ?e: one slice [a+c, a+f).
std::optional<ClassId> SliceOfSlice(EGraph& g, const Bindings& b) {
  auto shape = ShapeOf(g, b.Var("x"));
  if (!shape) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), shape->size());
  auto e = Norm(IntOf(g, b.Var("e")), shape->size());
  auto a = IntOf(g, b.Var("a")), c = IntOf(g, b.Var("c")), f = IntOf(g, b.Var("f"));
  if (!d || !e || *d != *e || !a || !c || !f) return std::nullopt;
  return AddOp(g, Lang().slice,
               {b.Var("x"), b.Var("d"), AddNum(g, *a + *c), AddNum(g, *a + *f)});
}

// Tiling, triggered by (slice ?x ?d ?s ?e) with ?s = 0: when slices of ?x along ?d present in the
// e-graph cover [0, size) end to end, ?x = (concat ?d those slices). The union is made here (its
// reason is "slice-tiling"); the match itself is left alone. Among several coverings the one
// with the finest pieces (smallest next end first) is taken, deterministically.
std::optional<ClassId> SliceTiling(EGraph& g, const Bindings& b) {
  ClassId x = g.Find(b.Var("x"));
  auto shape = ShapeOf(g, x);
  if (!shape) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), shape->size());
  auto s = IntOf(g, b.Var("s"));
  if (!d || !s || *s != 0) return std::nullopt;
  const int64_t size = (*shape)[*d];
  struct Piece {
    int64_t start, end;
    ClassId cls;
    bool operator<(const Piece& o) const {
      return std::tie(start, end, cls) < std::tie(o.start, o.end, o.cls);
    }
  };
  std::vector<Piece> pieces;
  const OpId slice = Lang().slice;
  for (ClassId cls : g.ClassIds()) {
    for (const ENode& node : g.Nodes(cls)) {
      if (node.op != slice || g.Find(node.children[0]) != x) continue;
      auto nd = Norm(IntOf(g, node.children[1]), shape->size());
      auto lo = IntOf(g, node.children[2]), hi = IntOf(g, node.children[3]);
      if (nd && *nd == *d && lo && hi && *lo < *hi) pieces.push_back({*lo, *hi, g.Find(cls)});
    }
  }
  std::sort(pieces.begin(), pieces.end());
  pieces.erase(std::unique(pieces.begin(), pieces.end(),
                           [](const Piece& p, const Piece& q) {
                             return p.start == q.start && p.end == q.end;
                           }),
               pieces.end());
  // Depth-first search for a chain 0 -> size (pieces sorted by start, then end).
  std::vector<ClassId> chain;
  std::function<bool(int64_t)> extend = [&](int64_t pos) {
    if (pos == size) return true;
    for (const Piece& p : pieces) {
      if (p.start != pos) continue;
      chain.push_back(p.cls);
      if (extend(p.end)) return true;
      chain.pop_back();
    }
    return false;
  };
  if (!extend(0) || chain.size() < 2) return std::nullopt;
  chain.insert(chain.begin(), AddNum(g, *d));
  ClassId cat = AddOp(g, Lang().concat, std::move(chain));
  g.Union(x, cat, g.InternReason("slice-tiling"));
  return std::nullopt;
}

// (concat ?d ?xs...): pieces whose class holds a concat on the same dim are spliced in.
std::optional<ClassId> ConcatFlatten(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  auto first = ShapeOf(g, xs.front());
  if (!first) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), first->size());
  if (!d) return std::nullopt;
  std::vector<ClassId> children{b.Var("d")};
  bool flattened = false;
  for (ClassId x : xs) {
    const ENode* inner = nullptr;
    for (const ENode& node : g.Nodes(x)) {
      if (node.op == Lang().concat && node.children.size() >= 2 &&
          Norm(IntOf(g, node.children[0]), first->size()) == d) {
        inner = &node;
        break;
      }
    }
    if (inner == nullptr) {
      children.push_back(x);
      continue;
    }
    flattened = true;
    std::vector<ClassId> grand(inner->children.begin() + 1, inner->children.end());
    children.insert(children.end(), grand.begin(), grand.end());
  }
  if (!flattened) return std::nullopt;
  return AddOp(g, Lang().concat, std::move(children));
}

// (op (concat ?d ?xs...) (concat ?d ?ys...)) for a binary pointwise op whose operands are split
// along d differently, at boundaries they partly share (the same extent, the same rank): one
// piece per group of consecutive pieces ending at a common boundary (CommonBoundaryGroups),
// op(cat(d, xs of the group), cat(d, ys of the group)), a piece alone unwrapped. Only where some
// group joins several pieces and there are two groups or more (equal splits: op-of-concats).
Applier BinaryOfConcatsRegrouped(const char* op_name) {
  return [op_name](EGraph& g, const Bindings& b) -> std::optional<ClassId> {
    const auto& xs = b.List("xs");
    const auto& ys = b.List("ys");
    if (xs.empty() || ys.empty()) return std::nullopt;
    auto fx = ShapeOf(g, xs.front()), fy = ShapeOf(g, ys.front());
    if (!fx || !fy || fx->size() != fy->size()) return std::nullopt;
    auto d = Norm(IntOf(g, b.Var("d")), fx->size());
    if (!d) return std::nullopt;
    auto x_sizes = SizesAlong(g, xs, *d), y_sizes = SizesAlong(g, ys, *d);
    if (!x_sizes || !y_sizes) return std::nullopt;
    auto groups = CommonBoundaryGroups(*x_sizes, *y_sizes);
    if (!groups || groups->size() < 2 || groups->size() == std::max(xs.size(), ys.size())) {
      return std::nullopt;  // one group, or one piece per group on both sides (equal splits)
    }
    const OpId op = *Lang().ops().Find(op_name);
    std::vector<ClassId> parts{b.Var("d")};
    for (const PieceGroup& grp : *groups) {
      parts.push_back(AddOp(g, op,
                            {JoinPieces(g, xs, grp.a_begin, grp.a_end, *d),
                             JoinPieces(g, ys, grp.b_begin, grp.b_end, *d)}));
    }
    return AddOp(g, Lang().concat, std::move(parts));
  };
}

// The pieces of a concat along d (sizes along d `sizes`) cut at every offset of `cuts` that falls
// strictly inside a piece; such a piece must be a constant (its class holds (full v t sizes...)
// with one size per dim), cut into constants of the same value. nullopt when another piece would
// have to be cut.
std::optional<std::vector<ClassId>> CutConstantPieces(EGraph& g, const std::vector<ClassId>& xs,
                                                      const std::vector<int64_t>& sizes, int64_t d,
                                                      const std::vector<int64_t>& cuts) {
  const OpId full = *Lang().ops().Find("full");
  std::vector<ClassId> out;
  int64_t offset = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t lo = offset, hi = offset + sizes[i];
    offset = hi;
    std::vector<int64_t> ends;
    for (int64_t c : cuts) {
      if (c > lo && c < hi) ends.push_back(c);
    }
    if (ends.empty()) {
      out.push_back(xs[i]);
      continue;
    }
    auto shape = ShapeOf(g, xs[i]);
    const ENode* constant = nullptr;
    for (const ENode& node : g.NodesWithOp(xs[i], full)) {
      if (shape && node.children.size() == 2 + shape->size()) constant = &node;
    }
    if (constant == nullptr) return std::nullopt;
    ends.push_back(hi);
    int64_t at = lo;
    for (int64_t end : ends) {
      std::vector<ClassId> children(constant->children.begin(), constant->children.end());
      children[2 + static_cast<size_t>(d)] = AddNum(g, end - at);
      out.push_back(AddOp(g, full, std::move(children)));
      at = end;
    }
  }
  return out;
}

// (add (concat ?d ?xs...) (concat ?d ?ys...)) of two tensors of one shape split along d at
// different offsets, where every piece an offset of the other side falls inside is a constant:
// those constants cut there, cat(d, x_k + y_k ...) over the pieces of both splits' union. The
// gradient of pieces taken from a tensor (slices, a narrow) is each piece written into zeros
// (slice_scatter) and the results added: each sum of a zero-padded piece and a partial result,
// split at different offsets, becomes one concat.
std::optional<ClassId> AddOfConcatsCutConstants(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  const auto& ys = b.List("ys");
  if (xs.empty() || ys.empty()) return std::nullopt;
  auto out = ShapeOf(g, b.match().eclass);
  if (!out) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), out->size());
  if (!d) return std::nullopt;
  // every piece has the result's sizes off d (no broadcasting along or across the pieces)
  for (const auto* list : {&xs, &ys}) {
    for (ClassId c : *list) {
      auto shape = ShapeOf(g, c);
      if (!shape || shape->size() != out->size()) return std::nullopt;
      for (size_t k = 0; k < shape->size(); ++k) {
        if (k != static_cast<size_t>(*d) && (*shape)[k] != (*out)[k]) return std::nullopt;
      }
    }
  }
  auto x_sizes = SizesAlong(g, xs, *d), y_sizes = SizesAlong(g, ys, *d);
  if (!x_sizes || !y_sizes) return std::nullopt;
  auto offsets = [](const std::vector<int64_t>& sizes) {
    std::vector<int64_t> ends;
    int64_t at = 0;
    for (int64_t n : sizes) ends.push_back(at += n);
    return ends;
  };
  const std::vector<int64_t> x_ends = offsets(*x_sizes), y_ends = offsets(*y_sizes);
  const int64_t whole = (*out)[static_cast<size_t>(*d)];
  if (x_ends == y_ends || x_ends.back() != whole || y_ends.back() != whole) return std::nullopt;
  auto xc = CutConstantPieces(g, xs, *x_sizes, *d, y_ends);
  if (!xc) return std::nullopt;
  auto yc = CutConstantPieces(g, ys, *y_sizes, *d, x_ends);
  if (!yc || xc->size() != yc->size()) return std::nullopt;
  const OpId add = *Lang().ops().Find("add");
  std::vector<ClassId> parts{b.Var("d")};
  for (size_t k = 0; k < xc->size(); ++k) parts.push_back(AddOp(g, add, {(*xc)[k], (*yc)[k]}));
  return AddOp(g, Lang().concat, std::move(parts));
}

// (mm (concat 1 ?xs...) (concat 0 ?ys...)): the sum over groups of consecutive pieces whose
// inner sizes agree, mm(cat(1, xs of group i), cat(0, ys of group i)), a piece alone unwrapped.
// Equal splits give one group per piece (the row-parallel linear); a finer side is grouped to the
// coarser one's splits (a batch-split gradient against an expand written as a concat of copies).
std::optional<ClassId> MmConcatInner(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  const auto& ys = b.List("ys");
  if (xs.empty() || ys.empty()) return std::nullopt;
  auto x_sizes = SizesAlong(g, xs, 1), y_sizes = SizesAlong(g, ys, 0);
  if (!x_sizes || !y_sizes) return std::nullopt;
  auto groups = CommonBoundaryGroups(*x_sizes, *y_sizes);
  // One group of several pieces is the term itself (single pieces: a sum of one, as for W = 1).
  if (!groups || (groups->size() < 2 && (xs.size() > 1 || ys.size() > 1))) return std::nullopt;
  const OpId mm = *Lang().ops().Find("mm");
  std::vector<ClassId> terms;
  for (const PieceGroup& grp : *groups) {
    terms.push_back(AddOp(g, mm, {JoinPieces(g, xs, grp.a_begin, grp.a_end, 1),
                                  JoinPieces(g, ys, grp.b_begin, grp.b_end, 0)}));
  }
  return AddOp(g, Lang().sumr, std::move(terms));
}

// (concat ?e ?xs...) whose every piece holds a concat along one dim d != e with the same piece
// sizes along d: the grid of pieces transposed, (concat d (concat e x_0j x_1j ...) ...). The first
// such concat (in piece order) fixes d; every other piece must have one on d with its sizes, or be
// a constant (full v t ...), which along d is the concat of the same constant at those sizes (the
// fills of a pad of a tensor sharded on another dim).
std::optional<ClassId> ConcatInterchange(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  if (xs.size() < 2) return std::nullopt;
  auto first = ShapeOf(g, xs.front());
  if (!first) return std::nullopt;
  const size_t rank = first->size();
  auto e = Norm(IntOf(g, b.Var("e")), rank);
  if (!e) return std::nullopt;
  auto sizes_along = [&](const ENode& node, int64_t d) -> std::optional<Shape64> {
    Shape64 sizes;
    for (size_t i = 1; i < node.children.size(); ++i) {
      auto shape = ShapeOf(g, node.children[i]);
      if (!shape || shape->size() != rank) return std::nullopt;
      sizes.push_back((*shape)[static_cast<size_t>(d)]);
    }
    return sizes;
  };
  std::optional<int64_t> d;
  Shape64 split;
  // A piece's concat along d with the split (the first found fixes d and the split): two pieces
  // at least, since a class holds (concat d x) of itself for any d (concat-one), and
  // interchanging those would only grow the e-graph.
  auto split_concat = [&](ClassId x) -> const ENode* {
    for (const ENode& node : g.Nodes(x)) {
      if (node.op != Lang().concat || node.children.size() < 3) continue;
      auto nd = Norm(IntOf(g, node.children[0]), rank);
      if (!nd || *nd == *e || (d && *nd != *d)) continue;
      auto sizes = sizes_along(node, *nd);
      if (!sizes || (d && *sizes != split)) continue;
      if (!d) {
        d = nd;
        split = *sizes;
      }
      return &node;
    }
    return nullptr;
  };
  for (ClassId x : xs) {
    if (d) break;
    split_concat(x);
  }
  if (!d) return std::nullopt;
  const OpId full = *Lang().ops().Find("full");
  std::vector<std::vector<ClassId>> inner;  // each piece's pieces along d (copied: adding nodes
                                            // below may move the class's node storage)
  for (ClassId x : xs) {
    if (const ENode* found = split_concat(x)) {
      inner.emplace_back(found->children.begin() + 1, found->children.end());
      continue;
    }
    std::optional<std::vector<ClassId>> fill;
    for (const ENode& node : g.Nodes(x)) {
      if (node.op == full && node.children.size() == rank + 2) {
        fill.emplace(node.children.begin(), node.children.end());
        break;
      }
    }
    auto shape = ShapeOf(g, x);
    if (!fill || !shape || shape->size() != rank) return std::nullopt;
    int64_t total = 0;
    for (int64_t size : split) total += size;
    if ((*shape)[static_cast<size_t>(*d)] != total) return std::nullopt;
    std::vector<ClassId> pieces;
    for (int64_t size : split) {
      std::vector<ClassId> sizes = *fill;
      sizes[2 + static_cast<size_t>(*d)] = AddNum(g, size);
      pieces.push_back(AddOp(g, full, std::move(sizes)));
    }
    inner.push_back(std::move(pieces));
  }
  std::vector<ClassId> outer{AddNum(g, *d)};
  for (size_t j = 0; j < split.size(); ++j) {
    std::vector<ClassId> column{b.Var("e")};
    for (const auto& pieces : inner) column.push_back(pieces[j]);
    outer.push_back(AddOp(g, Lang().concat, std::move(column)));
  }
  return AddOp(g, Lang().concat, std::move(outer));
}

// (reshape (concat ?d ?xs...) ?ss...) when the concat dim's pieces survive the reshape: with
// A = prod(in[:d]), find the first out dim d' with prod(out[:d']) = A such that every piece's
// block p_i * prod(in[d+1:]) is a whole number q_i of out[d'+1:] blocks. Then (row-major) the
// result is (concat d' (reshape x_i out[:d'] q_i out[d'+1:])...). Covers head splits
// [s, b, H*96] <-> [s, b, H, 96]. Where no d' takes every piece whole, runs of consecutive
// pieces that are (the first d' where every run closes on a block boundary, more than one run)
// are reshaped together: (concat d' (reshape (concat d run_j) out[:d'] q_j out[d'+1:])...), and
// the run's reshape splits further on a later d' (heads of one per rank regrouped as [kv heads,
// group] by repeat_kv's backward).
std::optional<ClassId> ReshapeOfConcat(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  auto out = RootShape(g, b);
  auto in = ShapeOf(g, xs.front());
  if (!out || !in) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), in->size());
  if (!d) return std::nullopt;
  auto piece_sizes = SizesAlong(g, xs, *d);
  if (!piece_sizes) return std::nullopt;
  (*in)[*d] = 0;
  for (int64_t p : *piece_sizes) (*in)[*d] += p;
  auto prod = [](const Shape64& s, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; ++i) p *= s[i];
    return p;
  };
  const int64_t outer = prod(*in, 0, *d);
  const int64_t inner_in = prod(*in, *d + 1, in->size());
  // The runs of pieces at out dim dp (as [begin, end) pairs), each closing on an out[dp+1:]
  // block boundary; nullopt when dp is not a split point of the concat dim.
  auto runs_at = [&](size_t dp) -> std::optional<std::vector<std::pair<size_t, size_t>>> {
    if (prod(*out, 0, dp) != outer) return std::nullopt;
    const int64_t inner_out = prod(*out, dp + 1, out->size());
    if (inner_out == 0) return std::nullopt;
    std::vector<std::pair<size_t, size_t>> runs;
    int64_t acc = 0;
    size_t begin = 0;
    for (size_t i = 0; i < piece_sizes->size(); ++i) {
      acc += (*piece_sizes)[i] * inner_in;
      if (acc % inner_out == 0) {
        runs.emplace_back(begin, i + 1);
        begin = i + 1;
        acc = 0;
      }
    }
    if (begin != piece_sizes->size()) return std::nullopt;
    return runs;
  };
  auto build = [&](size_t dp, const std::vector<std::pair<size_t, size_t>>& runs) {
    const int64_t inner_out = prod(*out, dp + 1, out->size());
    std::vector<ClassId> children{AddNum(g, static_cast<int64_t>(dp))};
    for (auto [begin, end] : runs) {
      int64_t elements = 0;
      for (size_t i = begin; i < end; ++i) elements += (*piece_sizes)[i] * inner_in;
      std::vector<ClassId> args{JoinPieces(g, xs, begin, end, *d)};
      for (size_t k = 0; k < out->size(); ++k) {
        args.push_back(AddNum(g, k == dp ? elements / inner_out : (*out)[k]));
      }
      children.push_back(AddOp(g, Lang().reshape, std::move(args)));
    }
    return AddOp(g, Lang().concat, std::move(children));
  };
  for (size_t dp = 0; dp < out->size(); ++dp) {  // every piece whole
    auto runs = runs_at(dp);
    if (runs && runs->size() == xs.size()) return build(dp, *runs);
  }
  for (size_t dp = 0; dp < out->size(); ++dp) {  // runs of pieces
    auto runs = runs_at(dp);
    if (runs && runs->size() > 1) return build(dp, *runs);
  }
  return std::nullopt;
}

// (permute (concat ?d ?xs...) ?ps...): the concat moves to the position of ?d in ?ps.
std::optional<ClassId> PermuteOfConcat(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  const auto& ps = b.List("ps");
  auto shape = ShapeOf(g, xs.front());
  if (!shape) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), shape->size());
  if (!d) return std::nullopt;
  std::optional<int64_t> at;
  for (size_t j = 0; j < ps.size(); ++j) {
    if (Norm(IntOf(g, ps[j]), shape->size()) == d) at = static_cast<int64_t>(j);
  }
  if (!at) return std::nullopt;
  std::vector<ClassId> children{AddNum(g, *at)};
  for (ClassId x : xs) {
    std::vector<ClassId> args{x};
    args.insert(args.end(), ps.begin(), ps.end());
    children.push_back(AddOp(g, Lang().permute, std::move(args)));
  }
  return AddOp(g, Lang().concat, std::move(children));
}

// (permute (slice ?x ?d ?s ?e) ?ps...): the slice moves to dim j of the permuted x, ps[j] = d.
std::optional<ClassId> PermuteOfSlice(EGraph& g, const Bindings& b) {
  auto shape = ShapeOf(g, b.Var("x"));
  const auto& ps = b.List("ps");
  if (!shape || ps.size() != shape->size()) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), shape->size());
  if (!d) return std::nullopt;
  std::optional<int64_t> at;
  for (size_t j = 0; j < ps.size(); ++j) {
    if (Norm(IntOf(g, ps[j]), shape->size()) == d) at = static_cast<int64_t>(j);
  }
  if (!at) return std::nullopt;
  std::vector<ClassId> args{b.Var("x")};
  args.insert(args.end(), ps.begin(), ps.end());
  return AddOp(g, Lang().slice,
               {AddOp(g, Lang().permute, std::move(args)), AddNum(g, *at), b.Var("s"), b.Var("e")});
}

// The dims of a permute (?ps), normalized against the rank of its input ?x; nullopt unless they are
// a permutation of [0, rank).
std::optional<std::vector<int64_t>> PermuteDims(const EGraph& g, ClassId x,
                                                const std::vector<ClassId>& ps) {
  auto shape = ShapeOf(g, x);
  if (!shape || ps.size() != shape->size()) return std::nullopt;
  std::vector<int64_t> dims;
  std::vector<bool> seen(ps.size(), false);
  for (ClassId p : ps) {
    auto d = Norm(IntOf(g, p), shape->size());
    if (!d || seen[static_cast<size_t>(*d)]) return std::nullopt;
    seen[static_cast<size_t>(*d)] = true;
    dims.push_back(*d);
  }
  return dims;
}

// (permute ?x ?ps...) with ?ps the identity [0, 1, ..., n-1].
bool PermuteIsIdentity(const EGraph& g, const Bindings& b) {
  auto dims = PermuteDims(g, b.Var("x"), b.List("ps"));
  if (!dims) return false;
  for (size_t i = 0; i < dims->size(); ++i) {
    if ((*dims)[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// (permute (permute ?x ?ps...) ?qs...): permute(x, p) has dim i = x's dim p[i], so permuting it by
// q gives dim i = x's dim p[q[i]]: (permute ?x r...), r[i] = p[q[i]].
std::optional<ClassId> PermuteOfPermute(EGraph& g, const Bindings& b) {
  auto p = PermuteDims(g, b.Var("x"), b.List("ps"));
  if (!p) return std::nullopt;
  auto inner = ShapeOf(g, b.Var("x"));
  const auto& qs = b.List("qs");
  if (qs.size() != p->size()) return std::nullopt;
  std::vector<ClassId> children{b.Var("x")};
  for (ClassId q : qs) {
    auto d = Norm(IntOf(g, q), inner->size());
    if (!d) return std::nullopt;
    children.push_back(AddNum(g, (*p)[static_cast<size_t>(*d)]));
  }
  return AddOp(g, Lang().permute, std::move(children));
}

// (reshape ?x ?ss...) where the reshape's class or ?x's holds a tensor D computes (a leaf):
// ?x = reshape(the reshape's class, shape of ?x), written into ?x's class (a reshape is undone by
// reshaping back). Where D computes a value only inside a reshape (a bmm over heads merged with the
// batch, [b * h_r, s, d], whose [b, h_r, s, d] matmul the lemmas lift), this names the lifted value
// through the D tensor, the form a relation needs; where D's tensor is reshaped ([b * h_r, s, d]
// read as [b, h_r, s, d]), D's tensor becomes a merging reshape that transposes and permutes move
// through. Classes without a D tensor get nothing: doubling every reshape would buy nothing
// extraction can use.
std::optional<ClassId> ReshapeInverseOfLeaf(EGraph& g, const Bindings& b) {
  const TensorAnalysis* analysis = g.FindAnalysis<TensorAnalysis>();
  const ClassId root = g.Find(b.match().eclass);
  if (analysis == nullptr) return std::nullopt;
  auto holds_d = [&](ClassId c) {
    for (const ENode& node : g.Nodes(c)) {
      if (node.op == Lang().tensor &&
          analysis->leaves().at(node.payload).side == TensorLeaf::Side::kDist) {
        return true;
      }
    }
    return false;
  };
  auto shape = ShapeOf(g, b.Var("x"));
  if (!shape || (!holds_d(root) && !holds_d(b.Var("x")))) return std::nullopt;
  std::vector<ClassId> back{root};
  for (int64_t n : *shape) back.push_back(AddNum(g, n));
  g.Union(b.Var("x"), AddOp(g, Lang().reshape, std::move(back)),
          g.InternReason("reshape-inverse-of-leaf"));
  return std::nullopt;
}

// (permute ?x ?ps...) that keeps the dims of size other than 1 in their order (it only moves
// size-1 dims): the same elements in the same order, so a reshape to the permuted shape. XLA's
// all-to-all on a non-leading dim writes one (the members' blocks brought forward past a dim of
// one row), and it meets the reshapes around it.
std::optional<ClassId> PermuteAsReshape(EGraph& g, const Bindings& b) {
  auto shape = ShapeOf(g, b.Var("x"));
  auto dims = PermuteDims(g, b.Var("x"), b.List("ps"));
  if (!dims) return std::nullopt;
  std::vector<ClassId> children{b.Var("x")};
  int64_t last = -1;
  for (int64_t d : *dims) {
    const int64_t size = (*shape)[static_cast<size_t>(d)];
    if (size != 1) {
      if (d < last) return std::nullopt;
      last = d;
    }
    children.push_back(AddNum(g, size));
  }
  return AddOp(g, Lang().reshape, std::move(children));
}

// (transpose (slice ?x ?d ?s ?e) ?a ?b): the transpose's slice along d's new place (a and b
// swapped). XLA's all-to-all on dim d is read as a transpose of d and 0 around the exchange of
// rows, and each rank's received block is a slice of a member's transposed input.
std::optional<ClassId> TransposeOfSlice(EGraph& g, const Bindings& b) {
  auto shape = ShapeOf(g, b.Var("x"));
  if (!shape) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), shape->size());
  auto a = Norm(IntOf(g, b.Var("a")), shape->size());
  auto c = Norm(IntOf(g, b.Var("b")), shape->size());
  if (!d || !a || !c) return std::nullopt;
  const int64_t moved = *d == *a ? *c : *d == *c ? *a : *d;
  const ClassId t = AddOp(g, Lang().transpose, {b.Var("x"), b.Var("a"), b.Var("b")});
  return AddOp(g, Lang().slice, {t, AddNum(g, moved), b.Var("s"), b.Var("e")});
}

// (sumr ?xs...) (or maxr / minr) where every element's class holds a concat on one dim with the
// same piece sizes: (concat d (sumr piece_0j ... piece_(W-1)j)...).
std::optional<ClassId> ReduceOfConcats(EGraph& g, const Bindings& b) {
  const OpId op = g.NodeAt(b.match().node_id).op;
  const auto& xs = b.List("xs");
  std::vector<const ENode*> cats;
  std::optional<int64_t> dim;
  std::vector<int64_t> sizes;
  for (ClassId x : xs) {
    auto shape = ShapeOf(g, x);
    if (!shape) return std::nullopt;
    const ENode* found = nullptr;
    for (const ENode& node : g.Nodes(x)) {
      if (node.op != Lang().concat || node.children.size() < 2) continue;
      auto d = Norm(IntOf(g, node.children[0]), shape->size());
      if (!d || (dim && *d != *dim)) continue;
      std::vector<int64_t> piece_sizes;
      for (size_t i = 1; i < node.children.size(); ++i) {
        auto ps = ShapeOf(g, node.children[i]);
        if (!ps) break;
        piece_sizes.push_back((*ps)[*d]);
      }
      if (piece_sizes.size() != node.children.size() - 1) continue;
      if (!sizes.empty() && piece_sizes != sizes) continue;
      dim = d;
      sizes = piece_sizes;
      found = &node;
      break;
    }
    if (found == nullptr) return std::nullopt;
    cats.push_back(found);
  }
  std::vector<ClassId> children{AddNum(g, *dim)};
  for (size_t j = 0; j < sizes.size(); ++j) {
    std::vector<ClassId> column;
    for (const ENode* cat : cats) column.push_back(cat->children[j + 1]);
    children.push_back(AddOp(g, op, std::move(column)));
  }
  return AddOp(g, Lang().concat, std::move(children));
}

// (concat ?d ?xs...) where every piece's class holds a sum over the same number k >= 2 of terms:
// (sumr (concat ?d x_0j x_1j ...) ...) over j (elementwise the same additions in the same order).
std::optional<ClassId> ConcatOfSumrs(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  if (xs.size() < 2) return std::nullopt;
  std::vector<std::vector<ClassId>> terms;  // copied: adding nodes may move the class's storage
  for (ClassId x : xs) {
    const ENode* sum = nullptr;
    for (const ENode& node : g.Nodes(x)) {
      if (node.op == Lang().sumr && node.children.size() >= 2 &&
          (terms.empty() || node.children.size() == terms.front().size())) {
        sum = &node;
        break;
      }
    }
    if (sum == nullptr) return std::nullopt;
    terms.emplace_back(sum->children.begin(), sum->children.end());
  }
  std::vector<ClassId> sums;
  for (size_t j = 0; j < terms.front().size(); ++j) {
    std::vector<ClassId> children{b.Var("d")};
    for (const auto& piece : terms) children.push_back(piece[j]);
    sums.push_back(AddOp(g, Lang().concat, std::move(children)));
  }
  return AddOp(g, Lang().sumr, std::move(sums));
}

// (sumr ?xs...) where some element's class holds a sum: its terms spliced in place (sums over
// ranks of partial sums over sections, compared with one flat sum over every piece).
std::optional<ClassId> SumrFlatten(EGraph& g, const Bindings& b) {
  std::vector<ClassId> children;
  bool flattened = false;
  for (ClassId x : b.List("xs")) {
    const ENode* inner = nullptr;
    for (const ENode& node : g.Nodes(x)) {
      if (node.op == Lang().sumr && node.children.size() >= 2) {
        inner = &node;
        break;
      }
    }
    if (inner == nullptr) {
      children.push_back(x);
      continue;
    }
    flattened = true;
    children.insert(children.end(), inner->children.begin(), inner->children.end());
  }
  if (!flattened) return std::nullopt;
  return AddOp(g, Lang().sumr, std::move(children));
}

bool IsZeroTensorClass(const EGraph& g, ClassId id);  // defined with the constant appliers

// (sumr ?xs...) where some elements are zeros of the sum's own type: the sum of the others (the
// one other element alone; one zero when all are). A gradient that only its rank's piece of a
// replicated tensor receives is written into zeros elsewhere (cat with zeros, the backward of
// split) and all-reduced: the zero pieces add nothing.
std::optional<ClassId> SumrDropZeros(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  const auto& root = TypeOf(g, b.match().eclass);
  if (xs.size() < 2 || !root) return std::nullopt;
  std::vector<ClassId> kept;
  for (ClassId x : xs) {
    const auto& type = TypeOf(g, x);
    if (!(type && *type == *root && IsZeroTensorClass(g, x))) kept.push_back(x);
  }
  if (kept.size() == xs.size()) return std::nullopt;
  if (kept.empty()) return xs.front();
  if (kept.size() == 1) return kept.front();
  return AddOp(g, Lang().sumr, std::move(kept));
}

// (sumr ?xs...) where every element's class holds a sum of the same number m >= 2 of terms:
// sum_i sum_j x_ij = sum_j sum_i x_ij, (sumr (sumr x_0j x_1j ...)...) (sum interchange: the
// per-section partial sums of a fused column-parallel weight regrouped per rank).
std::optional<ClassId> SumrInterchange(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  if (xs.size() < 2) return std::nullopt;
  std::vector<const ENode*> sums;
  for (ClassId x : xs) {
    const ENode* found = nullptr;
    for (const ENode& node : g.Nodes(x)) {
      if (node.op != Lang().sumr || node.children.size() < 2) continue;
      if (!sums.empty() && node.children.size() != sums.front()->children.size()) continue;
      found = &node;
      break;
    }
    if (found == nullptr) return std::nullopt;
    sums.push_back(found);
  }
  std::vector<ClassId> children;
  for (size_t j = 0; j < sums.front()->children.size(); ++j) {
    std::vector<ClassId> column;
    for (const ENode* sum : sums) column.push_back(sum->children[j]);
    children.push_back(AddOp(g, Lang().sumr, std::move(column)));
  }
  return AddOp(g, Lang().sumr, std::move(children));
}

// (sumr ?xs...) of n >= 3 terms, regrouped into sums the e-graph already holds over some of its
// terms: sum_i x_i = sum_g (sum_{i in g} x_i) (commutativity and associativity). A group is a
// sumr node with 2..n-1 children, all among the terms not yet grouped (as a multiset), whose
// class has a clean expression over D (a rank's own partial sum: under a zig-zag sequence split
// rank r sums the loss of chunks r and 2W-1-r, which S's sum lists in sequence order). Groups are
// taken greedily in term order; terms in no group stay as they are.
std::optional<ClassId> SumrRegroupBySums(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  if (xs.size() < 3) return std::nullopt;
  std::vector<ClassId> left;  // the terms not yet in a group (canonical; a multiset)
  for (ClassId x : xs) left.push_back(g.Find(x));
  // `children` (canonical) taken out of `left` when they all are in it; false (left unchanged)
  // otherwise
  auto take = [&left](std::vector<ClassId> children) {
    std::vector<ClassId> rest = left;
    for (ClassId c : children) {
      auto it = std::find(rest.begin(), rest.end(), c);
      if (it == rest.end()) return false;
      rest.erase(it);
    }
    left = std::move(rest);
    return true;
  };
  std::vector<ClassId> children;
  bool grouped = false;
  for (ClassId x : xs) {
    const ClassId cx = g.Find(x);
    auto at = std::find(left.begin(), left.end(), cx);
    if (at == left.end()) continue;  // in an earlier group
    std::optional<ClassId> group;
    for (ClassId id : g.ParentNodeIds(cx)) {
      const ENode& node = g.NodeAt(id);
      if (node.op != Lang().sumr || node.children.size() < 2 || node.children.size() >= xs.size() ||
          !FactsOf(g, id).clean) {
        continue;
      }
      std::vector<ClassId> terms;
      for (ClassId c : node.children) terms.push_back(g.Find(c));
      if (take(std::move(terms))) {
        group = g.Find(id);
        break;
      }
    }
    if (group) {
      children.push_back(*group);
      grouped = true;
    } else {
      left.erase(std::find(left.begin(), left.end(), cx));
      children.push_back(cx);
    }
  }
  if (!grouped) return std::nullopt;
  return children.size() == 1 ? children.front() : AddOp(g, Lang().sumr, std::move(children));
}

// (concat ?d ?xs...): every piece is the slice of the concat at its offsets, x_i =
// cat(d, xs)[o_i : o_i + n_i] along d. The union is made here (reason "concat-piece-slice"); the
// match itself is left alone. It names a piece of a D tensor that D computes whole (a rank's
// [gate | up] gradient) by a slice of it, which a relation can use; so it is made only for the
// pieces with no clean expression yet of a concat that is such a tensor (its class holds a leaf
// and is clean; elsewhere it adds nothing a relation needs, only nodes).
std::optional<ClassId> ConcatPieceSlices(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  if (xs.size() < 2 || !FactsOf(g, b.match().eclass).clean) return std::nullopt;
  const auto& nodes = g.Nodes(b.match().eclass);
  if (std::none_of(nodes.begin(), nodes.end(),
                   [](const ENode& n) { return n.op == Lang().tensor; })) {
    return std::nullopt;
  }
  auto first = ShapeOf(g, xs.front());
  if (!first) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), first->size());
  if (!d) return std::nullopt;
  const ClassId whole = b.match().eclass;
  int64_t offset = 0;
  std::vector<std::pair<ClassId, ClassId>> unions;
  for (ClassId x : xs) {
    auto shape = ShapeOf(g, x);
    if (!shape) return std::nullopt;
    const int64_t size = (*shape)[*d];
    if (!FactsOf(g, x).clean) {
      unions.emplace_back(
          x, AddOp(g, Lang().slice,
                   {whole, AddNum(g, *d), AddNum(g, offset), AddNum(g, offset + size)}));
    }
    offset += size;
  }
  for (const auto& [piece, slice] : unions) {
    g.Union(piece, slice, g.InternReason("concat-piece-slice"));
  }
  return std::nullopt;
}

// (sumr ?xs...) of k * W terms, k >= 2, W the world size: the flat sum of a fused weight's k
// sections' per-rank partial sums, section-major (x_{s*W + r}, as the spec lists such a weight's
// pieces), regrouped per rank: sum_r sum_s x_{s*W + r} (each rank's own partial sum, which an
// all_reduce over the ranks then adds). Sums of W terms (plain all_reduces) are left alone.
std::optional<ClassId> SumrRegroupPerRank(EGraph& g, const Bindings& b) {
  const TensorAnalysis* analysis = g.FindAnalysis<TensorAnalysis>();
  const auto& xs = b.List("xs");
  if (analysis == nullptr) return std::nullopt;
  const auto world = static_cast<size_t>(analysis->world_size());
  if (world < 2 || xs.size() < 2 * world || xs.size() % world != 0) return std::nullopt;
  std::vector<ClassId> per_rank;
  for (size_t r = 0; r < world; ++r) {
    std::vector<ClassId> terms;
    for (size_t i = r; i < xs.size(); i += world) terms.push_back(xs[i]);
    per_rank.push_back(AddOp(g, Lang().sumr, std::move(terms)));
  }
  return AddOp(g, Lang().sumr, std::move(per_rank));
}

// (embedding (concat 0 ?ws...) ?i), the vocabulary-parallel lookup (Megatron): rank r holds rows
// [o_r, o_r + n_r) of the table; it masks ids outside them (m_r = i < o_r | i >= o_r + n_r),
// looks up where(m_r, 0, i - o_r) in its shard, zeroes the masked rows, and the ranks' results
// are summed. For ids in [0, rows) exactly one rank keeps each row, so the sum is the lookup.
// Reads ?ws (the shards, 2-d) and ?i (the ids, static shape).
// The shard of vocabulary rows [offset, offset + rows) as a Megatron-style vocabulary-parallel
// embedding addresses it: the mask of ids outside (m = i < o | i >= o + n) and the local ids
// where(m, 0, i - o) (a masked_fill of i - o).
struct VocabShardIds {
  ClassId mask, local;
};
// `fill` is the local id masked ids read (0 unless a program writes another).
VocabShardIds VocabShard(EGraph& g, ClassId ids, double offset, int64_t rows, ClassId fill) {
  auto op = [](const char* name) { return *Lang().ops().Find(name); };
  auto flt = [&](double v) { return g.Add(Lang().Flt(v)); };
  ClassId mask = AddOp(g, op("or"),
                       {AddOp(g, op("lt"), {ids, flt(offset)}),
                        AddOp(g, op("ge"), {ids, flt(offset + static_cast<double>(rows))})});
  ClassId local =
      AddOp(g, op("masked_fill"), {AddOp(g, op("sub"), {ids, flt(offset)}), mask, fill});
  return {mask, local};
}

// How torch.chunk splits n rows over `world` ranks: ceil(n / world) each, the last ones fewer;
// (offset, size) per piece.
std::vector<std::pair<int64_t, int64_t>> ChunkSplit(int64_t n, int64_t world) {
  const int64_t chunk = (n + world - 1) / world;
  std::vector<std::pair<int64_t, int64_t>> pieces;
  for (int64_t offset = 0; offset < n; offset += chunk) {
    pieces.emplace_back(offset, std::min(chunk, n - offset));
  }
  return pieces;
}

// Whether ids are already a shard's local ids, masked_fill(i - o, m, 0) as VocabShard writes them:
// the vocabulary-parallel splits leave those alone (splitting them again would recurse).
std::optional<double> NumberOf(const EGraph& g, ClassId id);
bool IsZeroNumber(const EGraph& g, ClassId id);

bool IsShardLocalIds(const EGraph& g, ClassId ids) {
  const OpId masked_fill = *Lang().ops().Find("masked_fill");
  const OpId sub = *Lang().ops().Find("sub");
  for (const ENode& node : g.Nodes(ids)) {
    if (node.op != masked_fill) continue;
    for (const ENode& inner : g.Nodes(node.children[0])) {
      if (inner.op == sub && NumberOf(g, inner.children[1]) && !TypeOf(g, inner.children[1])) {
        return true;
      }
    }
  }
  return false;
}

// The id mask extended by a trailing 1 (it then masks whole rows of a lookup [ids..., m]).
ClassId RowMask(EGraph& g, ClassId mask, const Shape64& id_shape) {
  std::vector<ClassId> row_mask{mask};
  for (int64_t d : id_shape) row_mask.push_back(AddNum(g, d));
  row_mask.push_back(AddNum(g, 1));
  return AddOp(g, Lang().reshape, std::move(row_mask));
}

std::optional<ClassId> VocabParallelEmbedding(EGraph& g, const Bindings& b) {
  const auto& ws = b.List("ws");
  ClassId ids = b.Var("i");
  auto id_shape = ShapeOf(g, ids);
  if (!id_shape || ws.empty()) return std::nullopt;
  auto op = [](const char* name) { return *Lang().ops().Find(name); };
  std::vector<ClassId> parts;
  int64_t offset = 0;
  for (ClassId w : ws) {
    auto shape = ShapeOf(g, w);
    if (!shape || shape->size() != 2) return std::nullopt;
    int64_t rows = (*shape)[0];
    VocabShardIds shard =
        VocabShard(g, ids, static_cast<double>(offset), rows, g.Add(Lang().Flt(0.0)));
    ClassId looked_up = AddOp(g, op("embedding"), {w, shard.local});
    parts.push_back(AddOp(g, op("masked_fill"),
                          {looked_up, RowMask(g, shard.mask, *id_shape), g.Add(Lang().Flt(0.0))}));
    offset += rows;
  }
  if (parts.size() == 1) return parts.front();
  return AddOp(g, Lang().sumr, std::move(parts));
}

// (embedding_bwd ?g ?i ?n), the gradient of a vocabulary-parallel embedding's table: rank r's
// rows [o_r, o_r + n_r) sum g over the positions whose id falls in them, at the local id, i.e.
// embedding_bwd(masked_fill(g, m_r, 0), where(m_r, 0, i - o_r), n_r), and the table's gradient
// is their concat. True for any split of the rows; the one taken is torch.chunk's over the
// world's ranks (ceil(n / W) rows each, the last fewer), the split sharded tables use. Ids that
// are already a shard's local ids are not split again (the rewrite would recurse).
std::optional<ClassId> VocabParallelEmbeddingBwd(EGraph& g, const Bindings& b) {
  const TensorAnalysis* analysis = g.FindAnalysis<TensorAnalysis>();
  ClassId ids = b.Var("i");
  auto id_shape = ShapeOf(g, ids);
  auto n = IntOf(g, b.Var("n"));
  if (analysis == nullptr || !id_shape || !n || *n < 2) return std::nullopt;
  // the row mask [ids..., 1] broadcasts over g [ids..., m] only (not an n-d weight's gradient)
  const auto& g_type = TypeOf(g, b.Var("g"));
  if (!g_type || g_type->shape.size() != id_shape->size() + 1) return std::nullopt;
  const int64_t world = analysis->world_size();
  if (world < 2) return std::nullopt;
  if (IsShardLocalIds(g, ids)) return std::nullopt;
  const OpId masked_fill = *Lang().ops().Find("masked_fill");
  const ClassId zero = g.Add(Lang().Flt(0.0));
  std::vector<ClassId> parts{AddNum(g, 0)};
  for (const auto& [offset, rows] : ChunkSplit(*n, world)) {
    VocabShardIds shard = VocabShard(g, ids, static_cast<double>(offset), rows, zero);
    ClassId grad = AddOp(g, masked_fill, {b.Var("g"), RowMask(g, shard.mask, *id_shape), zero});
    parts.push_back(
        AddOp(g, *Lang().ops().Find("embedding_bwd"), {grad, shard.local, AddNum(g, rows)}));
  }
  return AddOp(g, Lang().concat, std::move(parts));
}

// ---- zeroing by multiplication; lookups at clamped ids (masking.rules) -------------------------

// (mul ?x (div ?m ?one)): ?m a bool mask cast to a float dtype (a bool cast to f32 is written
// m / 1), broadcasting into a floating ?x (the product has x's type): masked_fill(x, not m, 0).
std::optional<ClassId> MaskMultiply(EGraph& g, const Bindings& b) {
  const auto& x = TypeOf(g, b.Var("x"));
  const auto& m = TypeOf(g, b.Var("m"));
  const auto& root = TypeOf(g, b.match().eclass);
  auto one = NumberOf(g, b.Var("one"));
  if (!x || !m || !root || m->dtype != ir::DType::kBool || !ir::IsFloatingPoint(x->dtype) ||
      *root != *x || !one || *one != 1.0 || TypeOf(g, b.Var("one"))) {
    return std::nullopt;
  }
  ClassId kept = AddOp(g, *Lang().ops().Find("not"), {b.Var("m")});
  return AddOp(g, *Lang().ops().Find("masked_fill"), {b.Var("x"), kept, g.Add(Lang().Flt(0.0))});
}

// embedding(-of|-bwd-of)-clamped-shard-ids: the ids i - o are clamped into [lo, hi] = [0, b - o -
// 1] (o, b integral numbers, i integer), hi is a row of the table (?w's rows, or ?n), and the row
// mask reshapes (i < o) | (i >= b) to i's shape + [1]; the gradient form also needs the zero fill
// (?z = 0: a masked row adds nothing wherever it lands).
bool ClampSpansKeptIds(const EGraph& g, const Bindings& b) {
  auto o = NumberOf(g, b.Var("o")), end = NumberOf(g, b.Var("b"));
  auto lo = NumberOf(g, b.Var("lo")), hi = NumberOf(g, b.Var("hi"));
  const auto& ids = TypeOf(g, b.Var("i"));
  if (!o || !end || !lo || !hi || !ids || ir::IsFloatingPoint(ids->dtype) || *lo != 0.0 ||
      *o != std::floor(*o) || *end != std::floor(*end) || *hi != *end - *o - 1.0 || *hi < 0.0) {
    return false;
  }
  std::optional<int64_t> rows;
  if (auto w = MaybeVar(b, "w")) {
    auto shape = ShapeOf(g, *w);
    if (shape && !shape->empty()) rows = (*shape)[0];
  } else {
    if (!IsZeroNumber(g, b.Var("z"))) return false;
    rows = IntOf(g, b.Var("n"));
  }
  if (!rows || *hi >= static_cast<double>(*rows)) return false;
  auto id_shape = ShapeOf(g, b.Var("i"));
  const auto& ss = b.List("ss");
  if (!id_shape || ss.size() != id_shape->size() + 1 || IntOf(g, ss.back()) != 1) return false;
  for (size_t k = 0; k < id_shape->size(); ++k) {
    if (IntOf(g, ss[k]) != (*id_shape)[k]) return false;
  }
  return true;
}

// (masked_fill ?x (concat ?d ?ys...) ?v): the mask split along its dim ?d, ?x whole there (the
// mask broadcasts into ?x, right-aligned, and spans ?x's dim along ?d): the pieces masked one by
// one, cat(d', masked_fill(x[o_i : o_i + n_i], y_i, v) ...) along ?x's own copy d' of the dim
// (a loss gradient broadcast over the tokens, masked with the token shards' ignore masks).
std::optional<ClassId> MaskedFillConcatMask(EGraph& g, const Bindings& b) {
  ClassId x = b.Var("x");
  const auto& ys = b.List("ys");
  auto sx = ShapeOf(g, x);
  auto first = ys.empty() ? std::nullopt : ShapeOf(g, ys.front());
  if (!sx || !first || ys.size() < 2 || first->size() > sx->size()) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), first->size());
  if (!d) return std::nullopt;
  const size_t shift = sx->size() - first->size();
  const size_t dx = static_cast<size_t>(*d) + shift;
  const OpId masked_fill = *Lang().ops().Find("masked_fill");
  std::vector<ClassId> pieces{AddNum(g, static_cast<int64_t>(dx))};
  int64_t offset = 0;
  for (ClassId y : ys) {
    auto sy = ShapeOf(g, y);
    if (!sy || sy->size() != first->size()) return std::nullopt;
    for (size_t k = 0; k < sy->size(); ++k) {  // y broadcasts into its slice of x
      if (k != static_cast<size_t>(*d) && (*sy)[k] != 1 && (*sy)[k] != (*sx)[k + shift]) {
        return std::nullopt;
      }
    }
    const int64_t n = (*sy)[*d];
    ClassId piece =
        AddOp(g, Lang().slice,
              {x, AddNum(g, static_cast<int64_t>(dx)), AddNum(g, offset), AddNum(g, offset + n)});
    pieces.push_back(AddOp(g, masked_fill, {piece, y, b.Var("v")}));
    offset += n;
  }
  if (offset != (*sx)[dx]) return std::nullopt;  // the mask broadcasts along d: not split there
  return AddOp(g, Lang().concat, std::move(pieces));
}

// ---- lookups of split weights (embedding on a dim other than the rows) ------------------------

// The dim of a lookup's result [ids..., w[1:]...] that dim ?d of the weight w becomes:
// d + rank(ids) - 1, non-negative as lowering writes dims. Nullopt for d = 0 (the rows the ids
// pick: a split there is the vocabulary-parallel lemma's) or an unknown rank.
std::optional<int64_t> LookupDim(const EGraph& g, ClassId w, ClassId ids, ClassId dim) {
  const auto& wt = TypeOf(g, w);
  const auto& it = TypeOf(g, ids);
  if (!wt || !it) return std::nullopt;
  auto d = Norm(IntOf(g, dim), wt->shape.size());
  if (!d || *d == 0) return std::nullopt;
  return *d + static_cast<int64_t>(it->shape.size()) - 1;
}

// (embedding (concat ?d ?ws...) ?i), d >= 1: a table split by columns, or per-expert weights
// [E, n, k] split inside each expert (Mixtral's experts sharded like the dense MLP): every piece
// keeps all rows, so each is looked up alone and the lookups are concatenated on the result's dim.
std::optional<ClassId> EmbeddingOfConcat(EGraph& g, const Bindings& b) {
  const auto& ws = b.List("ws");
  ClassId ids = b.Var("i");
  if (ws.empty()) return std::nullopt;
  auto out = LookupDim(g, ws.front(), ids, b.Var("d"));
  if (!out) return std::nullopt;
  const OpId embedding = *Lang().ops().Find("embedding");
  std::vector<ClassId> parts{AddNum(g, *out)};
  for (ClassId w : ws) parts.push_back(AddOp(g, embedding, {w, ids}));
  return AddOp(g, Lang().concat, std::move(parts));
}

// (embedding_bwd (concat ?d ?gs...) ?i ?n) with d past the ids' dims (the gradient of a lookup of
// a weight split on a dim other than its rows): each piece's rows are summed alone, and the
// results concatenated on the weight's dim d - rank(i) + 1.
std::optional<ClassId> EmbeddingBwdOfConcat(EGraph& g, const Bindings& b) {
  const auto& gs = b.List("gs");
  ClassId ids = b.Var("i");
  if (gs.empty()) return std::nullopt;
  const auto& gt = TypeOf(g, gs.front());
  const auto& it = TypeOf(g, ids);
  if (!gt || !it) return std::nullopt;
  const auto id_rank = static_cast<int64_t>(it->shape.size());
  auto d = Norm(IntOf(g, b.Var("d")), gt->shape.size());
  if (!d || *d < id_rank) return std::nullopt;
  const OpId embedding_bwd = *Lang().ops().Find("embedding_bwd");
  std::vector<ClassId> parts{AddNum(g, *d - id_rank + 1)};
  for (ClassId piece : gs) parts.push_back(AddOp(g, embedding_bwd, {piece, ids, b.Var("n")}));
  return AddOp(g, Lang().concat, std::move(parts));
}

// ---- cross-entropy target logit (pick) -------------------------------------------------------

// A number operand: (num k) or (flt v).
std::optional<double> NumberOf(const EGraph& g, ClassId id) {
  if (auto k = IntOf(g, id)) return static_cast<double>(*k);
  return FactsOf(g, id).fconstant;
}

// (scale (div ?x ?c) ?f) with numbers c and f: x / (c / f). A mean of micro-batch means (each
// x_k / (n / m), scaled by 1 / m) meets the batch mean x / n here. When c is an integer, c / f is
// taken as the integer it lies within 1e-12 (relative) of: the factor is the rounded 1 / m that
// a spec's mean or a schedule's scaling means exactly.
std::optional<ClassId> ScaleOfDivNumber(EGraph& g, const Bindings& b) {
  const ClassId c = b.Var("c"), f = b.Var("f");
  const std::optional<double> cv = NumberOf(g, c), fv = NumberOf(g, f);
  if (!cv || !fv || TypeOf(g, c) || TypeOf(g, f) || *fv == 0.0) return std::nullopt;
  double q = *cv / *fv;
  if (!std::isfinite(q) || q == 0.0) return std::nullopt;
  const double nearest = std::nearbyint(q);
  if (*cv == std::nearbyint(*cv) && std::abs(q - nearest) <= 1e-12 * std::abs(q)) q = nearest;
  return AddOp(g, *Lang().ops().Find("div"), {b.Var("x"), g.Add(Lang().Flt(q))});
}

// ---- scales (scaling.rules) ----------------------------------------------------------------

// a * b, or 1 / k when 1 / (a * b) lies within 1e-12 (relative) of the integer k: the factors
// 1 / m that schedules and specs write stand for exact reciprocals.
double SnappedProduct(double a, double b) {
  const double p = a * b;
  if (p == 0.0 || !std::isfinite(p)) return p;
  const double inverse = 1.0 / p;
  const double nearest = std::nearbyint(inverse);
  if (nearest != 0.0 && std::abs(inverse - nearest) <= 1e-12 * std::abs(inverse)) {
    return 1.0 / nearest;
  }
  return p;
}

// (scale (scale ?x ?a) ?b): x scaled by a * b (SnappedProduct).
std::optional<ClassId> ScaleOfScale(EGraph& g, const Bindings& b) {
  const std::optional<double> av = NumberOf(g, b.Var("a")), bv = NumberOf(g, b.Var("b"));
  if (!av || !bv || TypeOf(g, b.Var("a")) || TypeOf(g, b.Var("b"))) return std::nullopt;
  const double f = SnappedProduct(*av, *bv);
  if (!std::isfinite(f)) return std::nullopt;
  return AddOp(g, Lang().scale, {b.Var("x"), g.Add(Lang().Flt(f))});
}

// (scale ?x ?f) when the e-graph also holds scale(x, g) for another number g: f x = (f / g) (g x),
// unioned here. A micro-batch's gradient scaled by the schedule (1 / (n / m)) and S's piece of
// the batch's (1 / n) are then one scale apart, and S's piece is expressed over the D tensor.
std::optional<ClassId> ScaleRatio(EGraph& g, const Bindings& b) {
  const ClassId x = g.Find(b.Var("x")), f = b.Var("f");
  const std::optional<double> fv = NumberOf(g, f);
  if (!fv || TypeOf(g, f)) return std::nullopt;
  const ClassId self = g.Find(b.match().eclass);
  std::vector<std::pair<ClassId, double>> others;  // classes holding scale(x, g), and g
  for (ClassId id : g.ParentNodeIds(x)) {
    const ENode& node = g.NodeAt(id);
    if (node.op != Lang().scale || node.children.size() != 2 || g.Find(node.children[0]) != x) {
      continue;
    }
    const std::optional<double> gv = NumberOf(g, node.children[1]);
    const ClassId other = g.Find(id);
    if (!gv || *gv == 0.0 || other == self || TypeOf(g, node.children[1])) continue;
    others.emplace_back(other, *gv);
  }
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());
  for (const auto& [other, gv] : others) {
    const double ratio = SnappedProduct(*fv, 1.0 / gv);
    if (!std::isfinite(ratio)) continue;
    g.Union(self, AddOp(g, Lang().scale, {other, g.Add(Lang().Flt(ratio))}),
            g.InternReason("scale-ratio"));
  }
  return std::nullopt;
}

// (div ?x ?c) of a floating tensor x by a number c: x scaled by 1 / c (SnappedProduct).
std::optional<ClassId> DivNumberAsScale(EGraph& g, const Bindings& b) {
  const ClassId x = b.Var("x"), c = b.Var("c");
  const std::optional<double> cv = NumberOf(g, c);
  const auto& xt = TypeOf(g, x);
  const auto& root = TypeOf(g, b.match().eclass);
  if (!cv || TypeOf(g, c) || *cv == 0.0 || !std::isfinite(*cv) || !xt || !root || *xt != *root ||
      !ir::IsFloatingPoint(xt->dtype)) {
    return std::nullopt;
  }
  return AddOp(g, Lang().scale, {x, g.Add(Lang().Flt(SnappedProduct(1.0 / *cv, 1.0)))});
}

// (sumr ?xs...) whose every element holds scale(x_i, f) with one factor f: scale(sumr(x_i...), f).
std::optional<ClassId> SumrOfScales(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  if (xs.size() < 2) return std::nullopt;
  std::optional<ClassId> factor;
  std::vector<ClassId> inner;
  for (ClassId x : xs) {
    std::optional<ClassId> found;
    for (const ENode& node : g.Nodes(x)) {
      if (node.op != Lang().scale || node.children.size() != 2) continue;
      if (factor && g.Find(node.children[1]) != *factor) continue;
      found = node.children[0];
      factor = g.Find(node.children[1]);
      break;
    }
    if (!found) return std::nullopt;
    inner.push_back(*found);
  }
  return AddOp(g, Lang().scale, {AddOp(g, Lang().sumr, std::move(inner)), *factor});
}

// (add ?x (sumr ?ys...)) (x_first) or (add (sumr ?ys...) ?x), n = |ys| >= 2, x floating: the sum
// over ranks of (x / n + y_i) (x / n + y_i in the operands' order), a replicated term split into
// equal shares of a partial sum. Made only where the e-graph already holds x / n (a scale of x's
// class by 1 / n: the distributed program computes the share), so it adds nothing elsewhere.
std::optional<ClassId> AddShareOverSumr(EGraph& g, const Bindings& b, bool x_first) {
  const ClassId x = g.Find(b.Var("x"));
  const auto& ys = b.List("ys");
  const auto& xt = TypeOf(g, x);
  if (ys.size() < 2 || !xt || !ir::IsFloatingPoint(xt->dtype)) return std::nullopt;
  const double share = SnappedProduct(1.0 / static_cast<double>(ys.size()), 1.0);
  const std::optional<ClassId> factor = g.Lookup(Lang().Flt(share));
  if (!factor) return std::nullopt;
  const std::optional<ClassId> part = g.Lookup(ENode{Lang().scale, 0, {x, *factor}});
  if (!part) return std::nullopt;
  const OpId add = *Lang().ops().Find("add");
  std::vector<ClassId> terms;
  for (ClassId y : ys) {
    terms.push_back(x_first ? AddOp(g, add, {*part, y}) : AddOp(g, add, {y, *part}));
  }
  return AddOp(g, Lang().sumr, std::move(terms));
}

// (sumr ?xs...) with two or more elements: x_0 + (x_1 + (... + x_n)), the right-leaning chain
// add-assoc makes of an accumulation (a gradient summed over micro-batches one by one).
std::optional<ClassId> SumrAsAdds(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  if (xs.size() < 2) return std::nullopt;
  const OpId add = *Lang().ops().Find("add");
  ClassId chain = xs.back();
  for (size_t i = xs.size() - 1; i-- > 0;) chain = AddOp(g, add, {xs[i], chain});
  return chain;
}

// (expand (full ?v ?t ?ss...) ?ts...): the constant of the expanded sizes.
std::optional<ClassId> ExpandOfFull(EGraph& g, const Bindings& b) {
  const auto& root = TypeOf(g, b.match().eclass);
  if (!root) return std::nullopt;
  std::vector<ClassId> children{b.Var("v"), b.Var("t")};
  for (const ir::Dim& d : root->shape) {
    if (!d.is_static()) return std::nullopt;
    children.push_back(AddNum(g, d.value()));
  }
  return AddOp(g, *Lang().ops().Find("full"), std::move(children));
}

// (div (full ?v ?t ?ss...) ?c) with a number c: the constant v / c of the result's type.
std::optional<ClassId> DivOfFullNumber(EGraph& g, const Bindings& b) {
  const std::optional<double> v = NumberOf(g, b.Var("v")), c = NumberOf(g, b.Var("c"));
  const auto& root = TypeOf(g, b.match().eclass);
  if (!v || !c || TypeOf(g, b.Var("c")) || *c == 0.0 || !root ||
      !ir::IsFloatingPoint(root->dtype)) {
    return std::nullopt;
  }
  std::vector<ClassId> children{g.Add(Lang().Flt(*v / *c)),
                                AddNum(g, static_cast<int64_t>(root->dtype))};
  for (const ir::Dim& d : root->shape) {
    if (!d.is_static()) return std::nullopt;
    children.push_back(AddNum(g, d.value()));
  }
  return AddOp(g, *Lang().ops().Find("full"), std::move(children));
}

// (mul (full ?v ?t ?ss...) ?x): the product has exactly x's type (the constant broadcasts into
// x and does not promote it) and the constant is of x's dtype (v is not rounded to another
// one first), so it is x scaled by the number v.
bool FullScalesX(const EGraph& g, const Bindings& b) {
  const auto& root = TypeOf(g, b.match().eclass);
  const auto& x = TypeOf(g, b.Var("x"));
  const std::optional<double> dtype = NumberOf(g, b.Var("t"));
  return root && x && *root == *x && NumberOf(g, b.Var("v")).has_value() && dtype &&
         *dtype == static_cast<double>(static_cast<int64_t>(x->dtype));
}

// The number 0 (not a tensor).
bool IsZeroNumber(const EGraph& g, ClassId id) {
  auto v = NumberOf(g, id);
  return v && *v == 0.0 && !TypeOf(g, id);
}

// ?c is a number (not a tensor): an elementwise op with it commutes with any reshape of the other
// operand.
bool CIsNumber(const EGraph& g, const Bindings& b) {
  ClassId c = b.Var("c");
  return NumberOf(g, c).has_value() && !TypeOf(g, c);
}

// ?m has ?x's shape (no broadcast), so a reshape of masked_fill(x, m, v) reshapes m alike.
bool MaskSameShape(const EGraph& g, const Bindings& b) {
  auto sx = ShapeOf(g, b.Var("x")), sm = ShapeOf(g, b.Var("m"));
  return sx && sm && *sx == *sm;
}

// ?x is an integer tensor and ?n a nonzero integral number: x = floor_div(x, n) * n +
// remainder(x, n) holds exactly there (in floating point the product and sum round).
bool IntegerDivision(const EGraph& g, const Bindings& b) {
  const auto& x = TypeOf(g, b.Var("x"));
  const ClassId n = b.Var("n");
  const std::optional<double> v = NumberOf(g, n);
  return x && !ir::IsFloatingPoint(x->dtype) && !ir::IsComplex(x->dtype) &&
         x->dtype != ir::DType::kBool && v && !TypeOf(g, n) && *v != 0.0 && *v == std::floor(*v);
}

// A floating dtype code that is not complex (f16, bf16, f32, f64): a cast to it rounds.
bool IsRealFloatCode(std::optional<int64_t> code) {
  if (!code || *code < 0 || *code > static_cast<int64_t>(ir::DType::kComplex128)) return false;
  const auto dtype = static_cast<ir::DType>(*code);
  return ir::IsFloatingPoint(dtype) && !ir::IsComplex(dtype);
}

// rounding.rules: every tensor operand (?x, ?y, each of ?xs) is a real floating tensor and the
// cast targets ?t (and ?u, when bound) are real floating dtypes, so each cast is a rounding — never
// a float <-> integer/bool conversion (a truncation) nor a complex one.
bool FloatCast(const EGraph& g, const Bindings& b) {
  auto real_float = [&](ClassId id) {
    const auto& type = TypeOf(g, id);
    return type && ir::IsFloatingPoint(type->dtype) && !ir::IsComplex(type->dtype);
  };
  for (const char* name : {"x", "y"}) {
    if (auto v = MaybeVar(b, name); v && !real_float(*v)) return false;
  }
  if (const std::vector<ClassId>* xs = MaybeList(b, "xs")) {
    for (ClassId x : *xs) {
      if (!real_float(x)) return false;
    }
  }
  if (auto u = MaybeVar(b, "u"); u && !IsRealFloatCode(IntOf(g, *u))) return false;
  return IsRealFloatCode(IntOf(g, b.Var("t")));
}

// (cast ?x ?t) with ?t the dtype ?x already has: the cast changes nothing.
bool CastToOwnDtype(const EGraph& g, const Bindings& b) {
  const auto& x = TypeOf(g, b.Var("x"));
  const std::optional<int64_t> t = IntOf(g, b.Var("t"));
  return x && t && *t == static_cast<int64_t>(x->dtype);
}

// ?z is the number 0 (so -z is z: negation commutes with a zero fill).
bool ZeroFill(const EGraph& g, const Bindings& b) { return IsZeroNumber(g, b.Var("z")); }

// (pick (reshape ?x ?ss...) (reshape ?c ?ms...)): the reshapes only regroup leading dims — ?x's
// last dim is the reshape's last size and ?c has ?x's leading shape — so row k of the reshaped x
// is the row of x at the position of c's element k.
bool PickReshapeKeepsLast(const EGraph& g, const Bindings& b) {
  auto x = ShapeOf(g, b.Var("x"));
  auto c = ShapeOf(g, b.Var("c"));
  const auto& ss = b.List("ss");
  if (!x || !c || x->empty() || ss.empty()) return false;
  if (IntOf(g, ss.back()) != x->back()) return false;
  return Shape64(x->begin(), x->end() - 1) == *c;
}

// sum_r masked_fill(pick(x_r, masked_fill(t - o_r, m_r, z)), m_r, z2), m_r = (t < o_r) |
// (t >= o_r + n_r), o_r = a + the widths before r: each rank's pick of the targets in its columns.
ClassId SumOfShardPicks(EGraph& g, const std::vector<ClassId>& xs,
                        const std::vector<int64_t>& widths, ClassId t, double a, ClassId z,
                        ClassId z2) {
  auto op = [](const char* name) { return *Lang().ops().Find(name); };
  auto flt = [&](double v) { return g.Add(Lang().Flt(v)); };
  std::vector<ClassId> parts;
  double offset = a;
  for (size_t r = 0; r < xs.size(); ++r) {
    ClassId mask = AddOp(
        g, op("or"),
        {AddOp(g, op("lt"), {t, flt(offset)}), AddOp(g, op("ge"), {t, flt(offset + widths[r])})});
    ClassId local = AddOp(g, op("masked_fill"), {AddOp(g, op("sub"), {t, flt(offset)}), mask, z});
    ClassId picked = AddOp(g, op("pick"), {xs[r], local});
    parts.push_back(AddOp(g, op("masked_fill"), {picked, mask, z2}));
    offset += static_cast<double>(widths[r]);
  }
  if (parts.size() == 1) return parts.front();
  return AddOp(g, Lang().sumr, std::move(parts));
}

// (masked_fill (pick (concat ?d ?xs...) (masked_fill (sub ?t ?a) m ?z)) m ?z2) with
// m = (t < a) | (t >= b), the logits concatenated along their last dim (the vocabulary) and
// b - a their total width: Megatron's vocabulary-parallel target logit. Rank r holds columns
// [o_r, o_r + n_r) (o_r = a + widths before r); it masks targets outside them
// (m_r = t < o_r | t >= o_r + n_r), picks masked_fill(t - o_r, m_r, z) in its shard, zeroes the
// masked rows with z2, and the ranks' results are summed. Exactly one rank keeps a target in
// [a, b) (where S keeps it too, picking x[t - a]), none keeps one outside (where S writes z2), so
// with z2 = 0 the sum equals S. z must be a valid column of every shard.
std::optional<ClassId> VocabParallelPick(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  ClassId t = b.Var("t");
  auto a = NumberOf(g, b.Var("a"));
  auto hi = NumberOf(g, b.Var("b"));
  auto z = NumberOf(g, b.Var("z"));
  auto z2 = NumberOf(g, b.Var("z2"));
  const auto& t_type = TypeOf(g, t);
  if (!a || !hi || !z || !z2 || *z2 != 0.0 || !t_type || ir::IsFloatingPoint(t_type->dtype) ||
      xs.empty() || *a != std::floor(*a)) {
    return std::nullopt;
  }
  std::vector<int64_t> widths;
  for (ClassId x : xs) {
    auto shape = ShapeOf(g, x);
    if (!shape || shape->empty()) return std::nullopt;
    auto d = Norm(IntOf(g, b.Var("d")), shape->size());
    if (!d || *d + 1 != static_cast<int64_t>(shape->size())) return std::nullopt;
    widths.push_back(shape->back());
  }
  int64_t total = 0;
  for (int64_t w : widths) total += w;
  if (*hi - *a != static_cast<double>(total)) return std::nullopt;
  if (*z != std::floor(*z) || *z < 0 || *z >= static_cast<double>(
                                              *std::min_element(widths.begin(), widths.end()))) {
    return std::nullopt;
  }
  return SumOfShardPicks(g, xs, widths, t, *a, b.Var("z"), b.Var("z2"));
}

// (pick (concat ?d ?xs...) ?t) with d the last (class) dim: pick reads x[..., t] for t in [0, V)
// (outside it pick is undefined, as gather and cross entropy are), so the same sum of masked
// shard picks as above with a = 0 and z = z2 = 0 equals it: exactly one rank keeps each t.
std::optional<ClassId> PickOfClassConcat(EGraph& g, const Bindings& b) {
  const auto& xs = b.List("xs");
  ClassId t = b.Var("t");
  const auto& t_type = TypeOf(g, t);
  if (xs.size() < 2 || !t_type || ir::IsFloatingPoint(t_type->dtype)) return std::nullopt;
  std::vector<int64_t> widths;
  for (ClassId x : xs) {
    auto shape = ShapeOf(g, x);
    if (!shape || shape->empty()) return std::nullopt;
    auto d = Norm(IntOf(g, b.Var("d")), shape->size());
    if (!d || *d + 1 != static_cast<int64_t>(shape->size())) return std::nullopt;
    widths.push_back(shape->back());
  }
  ClassId zero = g.Add(Lang().Flt(0.0));
  return SumOfShardPicks(g, xs, widths, t, 0.0, zero, zero);
}

// ---- vLLM vocabulary masks (integer ids compared with numbers) ------------------------------

// ?x holds integers (or bools) and ?a, ?b are numbers that are not NaN: then x >= a is exactly
// not(x < a), which De Morgan rewrites of the range masks need.
bool IntegerIdsNumericBounds(const EGraph& g, const Bindings& b) {
  const auto& x = TypeOf(g, b.Var("x"));
  if (!x || ir::IsFloatingPoint(x->dtype)) return false;
  for (const char* bound : {"a", "b"}) {
    const auto& f = FactsOf(g, b.Var(bound)).fconstant;
    if (!f || std::isnan(*f)) return false;
  }
  return true;
}

// The matched term has exactly ?y's type (so replacing it by ?y keeps shape and dtype), and ?k,
// when bound, is a finite number (false * k = 0 needs k finite).
bool SameTypeAsY(const EGraph& g, const Bindings& b) {
  const auto& root = TypeOf(g, b.match().eclass);
  const auto& y = TypeOf(g, b.Var("y"));
  if (!root || !y || *root != *y) return false;
  if (auto k = MaybeVar(b, "k")) {
    const auto& f = FactsOf(g, *k).fconstant;
    if (!f || !std::isfinite(*f)) return false;
  }
  return true;
}

// (mul (not ?m) (sub ?x (mul (not ?m) ?o))) with ?o a number: where m holds the product is 0, elsewhere
// x - o, i.e. masked_fill(x - o, m, 0) — the ids a vocabulary shard looks up (vLLM writes the
// masked ids as valid * (x - valid * offset)).
std::optional<ClassId> MaskedOffsetIds(EGraph& g, const Bindings& b) {
  ClassId o = b.Var("o");
  const auto& f = FactsOf(g, o).fconstant;
  if (!f || !std::isfinite(*f) || TypeOf(g, o)) return std::nullopt;
  ClassId shifted = AddOp(g, *Lang().ops().Find("sub"), {b.Var("x"), o});
  return AddOp(g, *Lang().ops().Find("masked_fill"),
               {shifted, b.Var("m"), g.Add(Lang().Flt(0.0))});
}

// ---- vLLM Qwen2 attention block --------------------------------------------------------------

// (slice (add ?y ?x) ?d ?s ?e) with ?x of the result's shape and ?y of lower rank (right-aligned,
// a bias): the add of the slices, ?y cut along its own copy of dim ?d, or kept whole when it
// broadcasts there (size 1 or absent).
std::optional<ClassId> SliceOfAddBcast(EGraph& g, const Bindings& b) {
  ClassId x = b.Var("x"), y = b.Var("y");
  auto sx = ShapeOf(g, x), sy = ShapeOf(g, y);
  if (!sx || !sy || sy->size() >= sx->size()) return std::nullopt;
  const int64_t shift = static_cast<int64_t>(sx->size() - sy->size());
  for (size_t k = 0; k < sy->size(); ++k) {  // y broadcasts into x: the sum has x's shape
    if ((*sy)[k] != 1 && (*sy)[k] != (*sx)[k + shift]) return std::nullopt;
  }
  auto d = Norm(IntOf(g, b.Var("d")), sx->size());
  if (!d) return std::nullopt;
  ClassId s = b.Var("s"), e = b.Var("e");
  ClassId sliced_x = AddOp(g, Lang().slice, {x, AddNum(g, *d), s, e});
  ClassId sliced_y = y;
  if (*d >= shift && (*sy)[*d - shift] != 1) {
    sliced_y = AddOp(g, Lang().slice, {y, AddNum(g, *d - shift), s, e});
  }
  return AddOp(g, *Lang().ops().Find("add"), {sliced_y, sliced_x});
}

// (rope (concat ?d ?xs...) ?p ?c ?hs ?nx): rotary embedding acts on each head of ?hs columns of
// the last dim alone, so it splits along the last dim at head boundaries (a split of the tokens
// would need the positions split alike, which this lemma does not look at).
bool RopeSplitsAtHeads(const EGraph& g, const Bindings& b) {
  auto hs = IntOf(g, b.Var("hs"));
  if (!hs || *hs <= 0) return false;
  for (ClassId x : b.List("xs")) {
    auto shape = ShapeOf(g, x);
    if (!shape || shape->size() != 2) return false;
    auto d = Norm(IntOf(g, b.Var("d")), shape->size());
    if (!d || *d != 1 || (*shape)[1] % *hs != 0) return false;  // tokens need their positions
  }
  return true;
}

// (attention (concat 1 ?xs...) (concat 1 ?ys...) (concat 1 ?zs...)): queries [T, Hq, d] split
// into head groups, keys and values [T, Hkv, d] alike; grouped-query attention lets query head h
// read kv head h / (Hq / Hkv), so the split is exact when every piece keeps that ratio.
bool GqaSplits(const EGraph& g, const Bindings& b) {
  const auto& qs = b.List("xs");
  const auto& ks = b.List("ys");
  const auto& vs = b.List("zs");
  if (qs.size() != ks.size() || qs.size() != vs.size() || qs.empty()) return false;
  int64_t hq = 0, hkv = 0;
  std::vector<std::pair<int64_t, int64_t>> heads;
  for (size_t i = 0; i < qs.size(); ++i) {
    auto q = ShapeOf(g, qs[i]), k = ShapeOf(g, ks[i]), v = ShapeOf(g, vs[i]);
    if (!q || !k || !v || q->size() != 3 || *k != *v || k->size() != 3) return false;
    if ((*q)[0] != (*k)[0] || (*q)[2] != (*k)[2] || (*k)[1] == 0) return false;
    hq += (*q)[1];
    hkv += (*k)[1];
    heads.emplace_back((*q)[1], (*k)[1]);
  }
  if (hkv == 0 || hq % hkv != 0) return false;
  for (const auto& [q, k] : heads) {
    if (q != k * (hq / hkv)) return false;
  }
  return true;
}

// (sdpa (concat ?d ?xs...) (concat ?d ?ys...) (concat ?d ?zs...) ...): q, k, v pieces of one rank
// r >= 3 split alike along a batch dim (d < r-3), or along the head dim (d = r-3) in groups
// that keep the GQA ratio Hq / Hkv (each query head still reads its own kv head); with a mask
// (?m), the mask broadcasts along d (right-aligned: absent or size 1 there).
bool SdpaSplits(const EGraph& g, const Bindings& b) {
  const auto& qs = b.List("xs");
  const auto& ks = b.List("ys");
  const auto& vs = b.List("zs");
  if (qs.size() != ks.size() || qs.size() != vs.size() || qs.empty()) return false;
  auto first = ShapeOf(g, qs.front());
  if (!first || first->size() < 3) return false;
  const size_t r = first->size();
  auto d = Norm(IntOf(g, b.Var("d")), r);
  if (!d || *d > static_cast<int64_t>(r) - 3) return false;
  int64_t hq = 0, hkv = 0;
  for (size_t i = 0; i < qs.size(); ++i) {
    auto q = ShapeOf(g, qs[i]), k = ShapeOf(g, ks[i]), v = ShapeOf(g, vs[i]);
    if (!q || !k || !v || q->size() != r || k->size() != r || v->size() != r) return false;
    if ((*k)[*d] != (*v)[*d] || (*k)[*d] == 0) return false;
    hq += (*q)[*d];
    hkv += (*k)[*d];
  }
  if (*d + 3 < static_cast<int64_t>(r)) {
    for (size_t i = 0; i < qs.size(); ++i) {
      if ((*ShapeOf(g, qs[i]))[*d] != (*ShapeOf(g, ks[i]))[*d]) return false;
    }
  } else {
    if (hq % hkv != 0) return false;
    for (size_t i = 0; i < qs.size(); ++i) {
      if ((*ShapeOf(g, qs[i]))[*d] != (*ShapeOf(g, ks[i]))[*d] * (hq / hkv)) return false;
    }
  }
  if (std::optional<ClassId> m = MaybeVar(b, "m")) {
    auto ms = ShapeOf(g, *m);
    if (!ms || ms->size() > r) return false;
    const int64_t at = *d - static_cast<int64_t>(r - ms->size());
    if (at >= 0 && (*ms)[at] != 1) return false;
  }
  return true;
}

// (sdpa (concat ?d ?xs...) ?k ?v ...): the query heads (d = r-3) split while k and v hold one
// kv head, which every query head reads (multi-query attention; a TP rank's replicated kv head).
bool SdpaSharedKv(const EGraph& g, const Bindings& b) {
  auto q = ShapeOf(g, b.List("xs").front());
  auto k = ShapeOf(g, b.Var("k"));
  if (!q || !k || q->size() < 3 || k->size() != q->size()) return false;
  auto d = Norm(IntOf(g, b.Var("d")), q->size());
  if (!d || *d + 3 != static_cast<int64_t>(q->size()) || (*k)[*d] != 1) return false;
  if (std::optional<ClassId> m = MaybeVar(b, "m")) {  // sdpa_mask: the mask broadcasts there
    auto ms = ShapeOf(g, *m);
    if (!ms || ms->size() > q->size()) return false;
    const int64_t at = *d - static_cast<int64_t>(q->size() - ms->size());
    if (at >= 0 && (*ms)[at] != 1) return false;
  }
  return true;
}

// Attention whose query pieces and kv pieces split the heads at different places: GQA with more
// ranks than kv heads, where a rank holds Hq / TP query heads and a replica of the kv head they
// read, so S's keys are a concat of one piece per kv head while its queries have one per rank.
// Query head h reads kv head h / g (g = Hq / Hkv); consecutive pieces are grouped (as
// mm-concat-inner groups a finer inner split) until a group of query pieces holds g query heads
// per kv head of its kv group, which makes each group an attention of its own:
// op(cat(d, qs), cat(d, ks), cat(d, vs), rest) = cat(d, op(cat(d, q group), cat(d, k group),
// cat(d, v group), rest) ...). Nothing when every group is one piece of each (the plain
// *-of-head-concats lemma) or when there is one group.
std::optional<ClassId> GroupedHeadConcats(EGraph& g, const Bindings& b, const char* op_name,
                                          int64_t head_from_end, std::vector<ClassId> rest) {
  const auto& qs = b.List("xs");
  const auto& ks = b.List("ys");
  const auto& vs = b.List("zs");
  if (qs.empty() || ks.empty() || ks.size() != vs.size()) return std::nullopt;
  auto first = ShapeOf(g, qs.front());
  if (!first || static_cast<int64_t>(first->size()) < head_from_end) return std::nullopt;
  const size_t rank = first->size();
  const int64_t d = static_cast<int64_t>(rank) - head_from_end;
  if (Norm(IntOf(g, b.Var("d")), rank) != d) return std::nullopt;
  auto q_heads = SizesAlong(g, qs, d), k_heads = SizesAlong(g, ks, d);
  if (!q_heads || !k_heads || *k_heads != SizesAlong(g, vs, d)) return std::nullopt;
  for (const auto* pieces : {&qs, &ks, &vs}) {
    for (ClassId c : *pieces) {
      if (ShapeOf(g, c)->size() != rank) return std::nullopt;
    }
  }
  int64_t hq = 0, hkv = 0;
  for (int64_t h : *q_heads) hq += h;
  for (int64_t h : *k_heads) hkv += h;
  if (hkv <= 0 || hq % hkv != 0) return std::nullopt;
  // kv heads counted in the query heads that read them
  std::vector<int64_t> k_reach;
  for (int64_t h : *k_heads) k_reach.push_back(h * (hq / hkv));
  auto groups = CommonBoundaryGroups(*q_heads, k_reach);
  if (!groups || groups->size() < 2) return std::nullopt;
  bool regrouped = false;
  for (const PieceGroup& grp : *groups) {
    regrouped = regrouped || grp.a_end - grp.a_begin > 1 || grp.b_end - grp.b_begin > 1;
  }
  if (!regrouped) return std::nullopt;
  const OpId op = *Lang().ops().Find(op_name);
  std::vector<ClassId> parts{AddNum(g, d)};
  for (const PieceGroup& grp : *groups) {
    std::vector<ClassId> children{JoinPieces(g, qs, grp.a_begin, grp.a_end, d),
                                  JoinPieces(g, ks, grp.b_begin, grp.b_end, d),
                                  JoinPieces(g, vs, grp.b_begin, grp.b_end, d)};
    children.insert(children.end(), rest.begin(), rest.end());
    parts.push_back(AddOp(g, op, std::move(children)));
  }
  return AddOp(g, Lang().concat, std::move(parts));
}

// (sdpa (concat ?d ?xs...) (concat ?d ?ys...) (concat ?d ?zs...) ?c ?sc), heads at d = rank-3.
std::optional<ClassId> SdpaGroupedHeads(EGraph& g, const Bindings& b) {
  return GroupedHeadConcats(g, b, "sdpa", 3, {b.Var("c"), b.Var("sc")});
}

// (sdpa_mask ...) likewise, the mask broadcasting along the heads (absent there or of size 1).
std::optional<ClassId> SdpaMaskGroupedHeads(EGraph& g, const Bindings& b) {
  auto q = ShapeOf(g, b.List("xs").front());
  auto m = ShapeOf(g, b.Var("m"));
  if (!q || !m || q->size() < 3 || m->size() > q->size()) return std::nullopt;
  const int64_t at = static_cast<int64_t>(m->size()) - 3;
  if (at >= 0 && (*m)[at] != 1) return std::nullopt;
  return GroupedHeadConcats(g, b, "sdpa_mask", 3, {b.Var("m"), b.Var("sc")});
}

// ---- online softmax: attention over key blocks (ring attention) ----------------------------

}  // namespace

bool FitsFinite(double v, ir::DType dtype) {
  double max = 0.0;
  switch (dtype) {
    case ir::DType::kFloat16:
      max = 65504.0;
      break;
    case ir::DType::kBFloat16:
    case ir::DType::kFloat32:
      max = 3.3e38;
      break;
    case ir::DType::kFloat64:
      max = 1.7e308;
      break;
    default:
      return false;
  }
  return std::isfinite(v) && std::fabs(v) <= max;
}

// Read from a node of the class: a finite number, a D tensor known finite from its definition
// (TensorLeaf::finite: an additive mask), a constant (full v ...) of a v finite in c's dtype,
// masked_fill(x, m, f) of finite x and an f finite in c's dtype, or a concat, slice, reshape,
// expand or permute of finite tensors (an additive attention mask made from a bool mask,
// Megatron's masked_fill(zeros, m, -10000), and its pieces). Any other D tensor or graph input is
// not known to be finite.
bool FiniteValued(const EGraph& g, ClassId c, int depth) {
  if (depth <= 0) return false;
  const TensorFacts& facts = FactsOf(g, c);
  if (facts.fconstant && !facts.type) return std::isfinite(*facts.fconstant);
  if (facts.constant && !facts.type) return true;
  const TensorLanguage& L = Lang();
  static const OpId full = *L.ops().Find("full");
  static const OpId masked_fill = *L.ops().Find("masked_fill");
  const TensorAnalysis* analysis = g.FindAnalysis<TensorAnalysis>();
  // a number written into this class's dtype stays finite (-1e9 into f16 is -inf)
  auto fits = [&](ClassId number) {
    const TensorFacts& f = FactsOf(g, number);
    if (f.type || !facts.type) return false;
    const double v = f.fconstant  ? *f.fconstant
                     : f.constant ? static_cast<double>(*f.constant)
                                  : std::nan("");
    return FitsFinite(v, facts.type->dtype);
  };
  for (const ENode& n : g.Nodes(c)) {
    if (n.op == L.tensor) {
      if (analysis != nullptr && analysis->leaves().at(n.payload).finite) return true;
    } else if (n.op == full && !n.children.empty()) {
      if (fits(n.children[0])) return true;
    } else if (n.op == masked_fill && n.children.size() == 3) {
      if (FiniteValued(g, n.children[0], depth - 1) && fits(n.children[2])) {
        return true;
      }
    } else if (n.op == L.slice || n.op == L.reshape || n.op == L.expand || n.op == L.permute) {
      if (!n.children.empty() && FiniteValued(g, n.children[0], depth - 1)) return true;
    } else if (n.op == L.concat && n.children.size() >= 2) {
      bool all = true;
      for (size_t i = 1; i < n.children.size() && all; ++i) {
        all = FiniteValued(g, n.children[i], depth - 1);
      }
      if (all) return true;
    }
  }
  return false;
}

namespace {

// The attention key blocks (k_i, v_i, m_i) of one query: keys and values of one rank r >= 3
// agreeing but for their key length (dim r-2, at least 1: an empty block's log-sum-exp is 0 in
// the kernel), masks (when given) of one rank agreeing but for their last dim, which is the
// block's key length (no broadcast along the keys). Returns the rank of k, the key dim and the
// mask's last dim (or nullopt).
struct KeyBlocks {
  size_t rank = 0;
  int64_t key_dim = 0;
  int64_t mask_dim = -1;  // -1: no masks
};
std::optional<KeyBlocks> AlignedKeyBlocks(const EGraph& g, ClassId q,
                                          const std::vector<ClassId>& ks,
                                          const std::vector<ClassId>& vs,
                                          const std::vector<ClassId>* ms) {
  auto qs = ShapeOf(g, q);
  if (!qs || qs->size() < 3 || ks.empty() || ks.size() != vs.size()) return std::nullopt;
  if (ms && ms->size() != ks.size()) return std::nullopt;
  KeyBlocks out;
  out.rank = qs->size();
  out.key_dim = static_cast<int64_t>(out.rank) - 2;
  std::optional<Shape64> k0 = ShapeOf(g, ks[0]), v0 = ShapeOf(g, vs[0]), m0;
  if (ms) m0 = ShapeOf(g, (*ms)[0]);
  if (!k0 || !v0 || (ms && !m0) || k0->size() != out.rank || v0->size() != out.rank) {
    return std::nullopt;
  }
  if (ms) {
    if (m0->empty()) return std::nullopt;
    out.mask_dim = static_cast<int64_t>(m0->size()) - 1;
  }
  auto same_but = [](const Shape64& a, const Shape64& b, int64_t at) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (static_cast<int64_t>(i) != at && a[i] != b[i]) return false;
    }
    return true;
  };
  for (size_t i = 0; i < ks.size(); ++i) {
    auto k = ShapeOf(g, ks[i]), v = ShapeOf(g, vs[i]);
    if (!k || !v || !same_but(*k, *k0, out.key_dim) || !same_but(*v, *v0, out.key_dim)) {
      return std::nullopt;
    }
    const int64_t len = (*k)[static_cast<size_t>(out.key_dim)];
    if (len <= 0 || (*v)[static_cast<size_t>(out.key_dim)] != len) return std::nullopt;
    if (ms) {
      auto m = ShapeOf(g, (*ms)[i]);
      if (!m || !same_but(*m, *m0, out.mask_dim) ||
          (*m)[static_cast<size_t>(out.mask_dim)] != len) {
        return std::nullopt;
      }
    }
  }
  return out;
}

// The sizes ?ss of (reshape L ?ss...) append one trailing 1 to L's shape: torch's
// lse.unsqueeze(-1), which broadcasts a log-sum-exp over the output's last dim.
bool AppendsTrailingOne(const EGraph& g, ClassId lse, const std::vector<ClassId>& sizes) {
  auto shape = ShapeOf(g, lse);
  if (!shape || sizes.size() != shape->size() + 1) return false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto v = IntOf(g, sizes[i]);
    if (!v || *v != (i < shape->size() ? (*shape)[i] : 1)) return false;
  }
  return true;
}

// Whether class c holds an attention `op` (sdpa_mask or sdpa_lse_mask) of the query q, directly
// or (the log-sum-exp) under its unsqueeze reshape: the form the online-softmax lemmas give a
// class. Once a class has one, another over a reordered or regrouped copy of the same key blocks
// adds only e-nodes (sdpa-*-sorted-keys brings every such copy to the same canonical order).
bool HasAttentionOf(const EGraph& g, ClassId c, ClassId q, OpId op) {
  q = g.Find(q);
  for (const ENode& n : g.NodesWithOp(c, op)) {
    if (g.Find(n.children[0]) == q) return true;
  }
  for (const ENode& n : g.NodesWithOp(c, Lang().reshape)) {
    for (const ENode& inner : g.NodesWithOp(n.children[0], op)) {
      if (g.Find(inner.children[0]) == q) return true;
    }
  }
  return false;
}

// Two key blocks of one query merged by their log-sum-exps (torch's _SDPAMerger, ring attention):
// the (sdpa_mask / sdpa_lse_mask) over the blocks' keys, values and mask columns concatenated.
// Reads ?q ?k1 ?v1 ?m1 ?k2 ?v2 ?m2 ?sc; masks finite (a fully masked row's log-sum-exp is 0 in
// the kernel, not -inf, and the merge would weigh its zero output). nullopt when the blocks do
// not align or the reshapes (?ss ?ts [?us]) are not the log-sum-exps' unsqueeze(-1).
std::optional<ClassId> MergedBlocks(EGraph& g, const Bindings& b, const char* op_name) {
  ClassId q = b.Var("q"), m1 = b.Var("m1"), m2 = b.Var("m2");
  const OpId op = *Lang().ops().Find(op_name);
  // One merged form per class: the other matches of the same merge (its blocks' other orders and
  // groupings) give attentions equal up to the order of the key blocks.
  if (HasAttentionOf(g, g.Find(b.match().node_id), q, op)) return std::nullopt;
  std::vector<ClassId> ks{b.Var("k1"), b.Var("k2")}, vs{b.Var("v1"), b.Var("v2")}, ms{m1, m2};
  auto blocks = AlignedKeyBlocks(g, q, ks, vs, &ms);
  if (!blocks || !FiniteValued(g, m1, 8) || !FiniteValued(g, m2, 8)) return std::nullopt;
  const OpId lse = *Lang().ops().Find("sdpa_lse_mask");
  std::vector<ClassId> block_args{q, b.Var("k1"), b.Var("v1"), m1, b.Var("sc")};
  auto lse1 = g.Lookup(ENode{lse, 0, block_args});
  block_args[1] = b.Var("k2");
  block_args[2] = b.Var("v2");
  block_args[3] = m2;
  auto lse2 = g.Lookup(ENode{lse, 0, block_args});
  if (!lse1 || !lse2) return std::nullopt;
  for (const char* sizes : {"ss", "ts", "us"}) {
    const std::vector<ClassId>* list = MaybeList(b, sizes);
    if (list && !AppendsTrailingOne(g, *lse1, *list)) return std::nullopt;
  }
  ClassId merged =
      AddOp(g, op,
            {q, JoinPieces(g, ks, 0, 2, blocks->key_dim), JoinPieces(g, vs, 0, 2, blocks->key_dim),
             JoinPieces(g, ms, 0, 2, blocks->mask_dim), b.Var("sc")});
  if (std::string_view(op_name) == "sdpa_lse_mask") {
    std::vector<ClassId> children{merged};
    const auto& ss = b.List("ss");
    children.insert(children.end(), ss.begin(), ss.end());
    return AddOp(g, Lang().reshape, std::move(children));
  }
  return merged;
}

// out1 - sigmoid(lse2 - lse1) * (out1 - out2) = attention over both blocks' keys
std::optional<ClassId> SdpaMaskMerge(EGraph& g, const Bindings& b) {
  return MergedBlocks(g, b, "sdpa_mask");
}

// lse1 - log_sigmoid(lse1 - lse2) = log-sum-exp over both blocks' keys (logaddexp)
std::optional<ClassId> SdpaLseMaskMerge(EGraph& g, const Bindings& b) {
  return MergedBlocks(g, b, "sdpa_lse_mask");
}

// (op ?q (concat ?d ?ks...) (concat ?e ?vs...) (concat ?f ?ms...) ?sc), op sdpa_mask or
// sdpa_lse_mask: attention does not depend on the order of the keys when values and mask columns
// are permuted alike. The blocks are put in one canonical order (by the classes of k_i, then v_i,
// then m_i, decreasing), so two attentions over the same blocks in different orders (a ring's
// rotated blocks, a zig-zag split) meet; nothing when the order is canonical already or a block
// is split further (the finer concat is sorted instead).
std::optional<ClassId> SortedKeyBlocks(EGraph& g, const Bindings& b, const char* op_name) {
  const auto &ks = b.List("ks"), &vs = b.List("vs"), &ms = b.List("ms");
  if (ks.size() < 2) return std::nullopt;
  auto blocks = AlignedKeyBlocks(g, b.Var("q"), ks, vs, &ms);
  if (!blocks) return std::nullopt;
  const size_t rank = blocks->rank;
  auto m_rank = ShapeOf(g, ms[0])->size();
  if (Norm(IntOf(g, b.Var("d")), rank) != blocks->key_dim ||
      Norm(IntOf(g, b.Var("e")), rank) != blocks->key_dim ||
      Norm(IntOf(g, b.Var("f")), m_rank) != blocks->mask_dim) {
    return std::nullopt;
  }
  // Only the finest split is sorted: a block that is itself a concat along the key dim (a coarser
  // grouping, which concat-flatten also writes flat) would give one more order per grouping.
  auto split_along = [&](ClassId c, int64_t dim) {
    for (const ENode& n : g.NodesWithOp(c, Lang().concat)) {
      auto shape = ShapeOf(g, c);
      if (shape && Norm(IntOf(g, n.children[0]), shape->size()) == dim) return true;
    }
    return false;
  };
  for (size_t i = 0; i < ks.size(); ++i) {
    if (split_along(ks[i], blocks->key_dim) || split_along(vs[i], blocks->key_dim) ||
        split_along(ms[i], blocks->mask_dim)) {
      return std::nullopt;
    }
  }
  std::vector<size_t> order(ks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](size_t i) { return std::make_tuple(g.Find(ks[i]), g.Find(vs[i]), g.Find(ms[i])); };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return key(x) > key(y); });
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) identity = identity && order[i] == i;
  if (identity) return std::nullopt;
  auto sorted = [&](const std::vector<ClassId>& pieces, int64_t dim) {
    std::vector<ClassId> children{AddNum(g, dim)};
    for (size_t i : order) children.push_back(pieces[i]);
    return AddOp(g, Lang().concat, std::move(children));
  };
  return AddOp(g, *Lang().ops().Find(op_name),
               {b.Var("q"), sorted(ks, blocks->key_dim), sorted(vs, blocks->key_dim),
                sorted(ms, blocks->mask_dim), b.Var("sc")});
}

std::optional<ClassId> SdpaMaskSortedKeys(EGraph& g, const Bindings& b) {
  return SortedKeyBlocks(g, b, "sdpa_mask");
}
std::optional<ClassId> SdpaLseMaskSortedKeys(EGraph& g, const Bindings& b) {
  return SortedKeyBlocks(g, b, "sdpa_lse_mask");
}

// (op (concat ?d ?xs...) ?k ?v ?m ?sc), op sdpa_mask or sdpa_lse_mask, d the query-length dim
// (r-2 of the query): each query row attends on its own, so the result is the concat (along r-2,
// which is the query dim of the output and of the log-sum-exp alike) of each query piece's
// attention over the mask's rows of that piece (the whole mask where it broadcasts along the
// rows: absent there or of size 1).
std::optional<ClassId> QueryPieces(EGraph& g, const Bindings& b, const char* op_name) {
  const auto& xs = b.List("xs");
  auto first = ShapeOf(g, xs.front());
  auto m = ShapeOf(g, b.Var("m"));
  if (xs.size() < 2 || !first || first->size() < 3 || !m) return std::nullopt;
  const int64_t d = static_cast<int64_t>(first->size()) - 2;
  if (Norm(IntOf(g, b.Var("d")), first->size()) != d) return std::nullopt;
  auto lengths = SizesAlong(g, xs, d);
  if (!lengths) return std::nullopt;
  const int64_t mask_rows = static_cast<int64_t>(m->size()) - 2;
  const bool sliced = mask_rows >= 0 && (*m)[static_cast<size_t>(mask_rows)] != 1;
  const OpId op = *Lang().ops().Find(op_name);
  // One split per class and query split: the class's other attentions of the same query pieces
  // (over reordered or regrouped copies of the same key blocks) split into pieces equal up to the
  // order of the key blocks.
  const ClassId root = g.Find(b.match().node_id);
  for (const ENode& n : g.NodesWithOp(root, Lang().concat)) {
    if (n.children.size() != xs.size() + 1 || Norm(IntOf(g, n.children[0]), first->size()) != d) {
      continue;
    }
    bool same = true;
    for (size_t i = 0; i < xs.size() && same; ++i) {
      same = HasAttentionOf(g, n.children[i + 1], xs[i], op);
    }
    if (same) return std::nullopt;
  }
  std::vector<ClassId> parts{AddNum(g, d)};
  int64_t offset = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    ClassId mask = b.Var("m");
    if (sliced) {
      mask =
          AddOp(g, Lang().slice,
                {mask, AddNum(g, mask_rows), AddNum(g, offset), AddNum(g, offset + (*lengths)[i])});
    }
    offset += (*lengths)[i];
    parts.push_back(AddOp(g, op, {xs[i], b.Var("k"), b.Var("v"), mask, b.Var("sc")}));
  }
  return AddOp(g, Lang().concat, std::move(parts));
}

std::optional<ClassId> SdpaMaskOfQueryConcat(EGraph& g, const Bindings& b) {
  return QueryPieces(g, b, "sdpa_mask");
}
std::optional<ClassId> SdpaLseMaskOfQueryConcat(EGraph& g, const Bindings& b) {
  return QueryPieces(g, b, "sdpa_lse_mask");
}

// (attention (concat 1 ?xs...) (concat 1 ?ys...) (concat 1 ?zs...) ?l): vLLM's [T, H, d] layout.
std::optional<ClassId> AttentionGroupedHeads(EGraph& g, const Bindings& b) {
  return GroupedHeadConcats(g, b, "attention", 2, {b.Var("l")});
}

// (attention (concat ?d ?xs...) ?k ?v ?l): vLLM's [T, H, d] queries split along the heads (d = 1)
// while k and v hold one kv head, which every query head reads.
bool AttentionSharedKv(const EGraph& g, const Bindings& b) {
  auto q = ShapeOf(g, b.List("xs").front());
  auto k = ShapeOf(g, b.Var("k"));
  auto v = ShapeOf(g, b.Var("v"));
  if (!q || !k || !v || q->size() != 3 || k->size() != 3 || v->size() != 3) return false;
  return Norm(IntOf(g, b.Var("d")), 3) == 1 && (*k)[1] == 1 && (*v)[1] == 1;
}

// ---- batch-merged attention (Megatron: [s, b, h, d] viewed as [s, b*h, d]) -----------------

// (op (concat d ?xs...) (concat d ?ys...)) for a batched matmul `op` along a batch dim d (d <
// rank - 2 of both operands): (concat d (op (concat d xs of group j) (concat d ys of group j))
// ...), the pieces grouped at the boundaries both splits share (pairwise when they agree).
std::optional<ClassId> ConcatBatchGrouped(EGraph& g, const Bindings& b, const char* op_name,
                                          int64_t d) {
  const auto& xs = b.List("xs");
  const auto& ys = b.List("ys");
  if (xs.empty() || ys.empty()) return std::nullopt;
  for (const auto* pieces : {&xs, &ys}) {
    for (ClassId c : *pieces) {
      auto shape = ShapeOf(g, c);
      if (!shape || d < 0 || d + 2 >= static_cast<int64_t>(shape->size())) return std::nullopt;
    }
  }
  auto x_sizes = SizesAlong(g, xs, d), y_sizes = SizesAlong(g, ys, d);
  if (!x_sizes || !y_sizes) return std::nullopt;
  auto groups = CommonBoundaryGroups(*x_sizes, *y_sizes);
  if (!groups) return std::nullopt;
  const OpId op = *Lang().ops().Find(op_name);
  std::vector<ClassId> parts{AddNum(g, d)};
  for (const PieceGroup& grp : *groups) {
    parts.push_back(AddOp(g, op, {JoinPieces(g, xs, grp.a_begin, grp.a_end, d),
                                  JoinPieces(g, ys, grp.b_begin, grp.b_end, d)}));
  }
  return AddOp(g, Lang().concat, std::move(parts));
}

// (bmm (concat 0 ?xs...) (concat 0 ?ys...)): ConcatBatchGrouped along the batch.
std::optional<ClassId> BmmConcatBatch(EGraph& g, const Bindings& b) {
  return ConcatBatchGrouped(g, b, "bmm", 0);
}

// (matmul (concat ?d ?xs...) (concat ?d ?ys...)): ConcatBatchGrouped along ?d (as written in
// both operands, which have one rank).
std::optional<ClassId> MatmulConcatBatch(EGraph& g, const Bindings& b) {
  auto x = ShapeOf(g, b.List("xs").front()), y = ShapeOf(g, b.List("ys").front());
  if (!x || !y || x->size() != y->size()) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), x->size());
  if (!d) return std::nullopt;
  return ConcatBatchGrouped(g, b, "matmul", *d);
}

// (transpose (reshape ?x ?ss...) ?a ?b) where the reshape only merges consecutive dims of ?x
// (out dim j = product of a group G_j of consecutive in dims, found greedily; groups may be
// empty for out dims of 1). Row-major, out index j is the flattened index of G_j, so swapping
// out dims a and b is permuting ?x's groups: (reshape (permute ?x G_0.. G_b .. G_a ..) out').
// Only when some group merges two or more dims (otherwise nothing is gained).
std::optional<ClassId> TransposeOfMergeReshape(EGraph& g, const Bindings& b) {
  auto in = ShapeOf(g, b.Var("x"));
  auto root = RootShape(g, b);
  if (!in || !root) return std::nullopt;
  const size_t r = root->size();
  auto a = Norm(IntOf(g, b.Var("a")), r), c = Norm(IntOf(g, b.Var("b")), r);
  if (!a || !c || *a == *c) return std::nullopt;
  Shape64 out = *root;  // the reshape's own shape: the transpose's with a and c swapped back
  std::swap(out[*a], out[*c]);
  std::vector<std::vector<int64_t>> groups(r);
  size_t next = 0;
  bool merges = false;
  for (size_t j = 0; j < r; ++j) {
    int64_t prod = 1;
    if (out[j] <= 0) return std::nullopt;
    while (prod < out[j] && next < in->size()) {
      if ((*in)[next] <= 0) return std::nullopt;
      prod *= (*in)[next];
      groups[j].push_back(static_cast<int64_t>(next++));
    }
    if (prod != out[j]) return std::nullopt;
  }
  for (; next < in->size(); ++next) {  // trailing dims of 1 join the last group
    if ((*in)[next] != 1) return std::nullopt;
    groups[r - 1].push_back(static_cast<int64_t>(next));
  }
  for (const auto& group : groups) merges = merges || group.size() >= 2;
  if (!merges) return std::nullopt;
  std::swap(groups[*a], groups[*c]);
  std::vector<ClassId> perm{b.Var("x")};
  for (const auto& group : groups) {
    for (int64_t dim : group) perm.push_back(AddNum(g, dim));
  }
  std::vector<ClassId> sizes{AddOp(g, Lang().permute, std::move(perm))};
  for (int64_t size : *root) sizes.push_back(AddNum(g, size));
  return AddOp(g, Lang().reshape, std::move(sizes));
}

// (bmm (reshape ?a ?p ?m ?k) (reshape ?b ?q ?k2 ?n)) where ?a is [B..., m, k] and ?b
// [B..., k, n] with one batch prefix B whose product is the bmm batch: the bmm is, per (b...),
// the batched matmul, flattened: (reshape (matmul ?a ?b) prod(B) m n).
std::optional<ClassId> BmmOfMergedBatch(EGraph& g, const Bindings& b) {
  auto sa = ShapeOf(g, b.Var("a")), sb = ShapeOf(g, b.Var("b"));
  auto root = RootShape(g, b);
  if (!sa || !sb || !root || root->size() != 3) return std::nullopt;
  const size_t r = sa->size();
  if (r < 3 || sb->size() != r) return std::nullopt;
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) {
    if ((*sa)[i] != (*sb)[i]) return std::nullopt;
    batch *= (*sa)[i];
  }
  if (batch != (*root)[0] || (*sa)[r - 2] != (*root)[1] || (*sb)[r - 1] != (*root)[2] ||
      (*sa)[r - 1] != (*sb)[r - 2]) {
    return std::nullopt;
  }
  const OpId matmul = *Lang().ops().Find("matmul");
  std::vector<ClassId> sizes{AddOp(g, matmul, {b.Var("a"), b.Var("b")})};
  for (int64_t size : *root) sizes.push_back(AddNum(g, size));
  return AddOp(g, Lang().reshape, std::move(sizes));
}

// (OP (sumr ?xs...) ?ss...) for a linear OP with integer arguments ?ss (reshape, permute):
// (sumr (OP x_i ?ss...)...). An applier only because the RHS repeats per ?xs while splicing all
// of ?ss into each element.
std::optional<ClassId> OfSumr(EGraph& g, const Bindings& b, OpId op) {
  const auto& ss = b.List("ss");
  std::vector<ClassId> terms;
  for (ClassId x : b.List("xs")) {
    std::vector<ClassId> args{x};
    args.insert(args.end(), ss.begin(), ss.end());
    terms.push_back(AddOp(g, op, std::move(args)));
  }
  return AddOp(g, Lang().sumr, std::move(terms));
}
std::optional<ClassId> ReshapeOfSumr(EGraph& g, const Bindings& b) {
  return OfSumr(g, b, Lang().reshape);
}
std::optional<ClassId> PermuteOfSumr(EGraph& g, const Bindings& b) {
  return OfSumr(g, b, Lang().permute);
}

// ---- broadcasts (expand) ------------------------------------------------------------------------

// The integer values of ?ss, or nullopt when one is not a known integer.
std::optional<Shape64> IntsOf(const EGraph& g, const std::vector<ClassId>& ids) {
  Shape64 out;
  for (ClassId id : ids) {
    auto v = IntOf(g, id);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

// expand-as-copies unfolds a broadcast into concats of copies only up to this many copies per
// dim, so a wide broadcast (a vocabulary) never puts a huge concat into an e-graph.
constexpr int64_t kMaxExpandCopies = 64;

// (expand ?x ?ss...): a reshape adding the leading 1s, then a concat of copies along each dim of
// size 1 that widens.
std::optional<ClassId> ExpandAsCopies(EGraph& g, const Bindings& b) {
  auto in = ShapeOf(g, b.Var("x"));
  auto sizes = IntsOf(g, b.List("ss"));
  if (!in || !sizes || sizes->size() < in->size()) return std::nullopt;
  Shape64 from(sizes->size() - in->size(), 1);
  from.insert(from.end(), in->begin(), in->end());
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != (*sizes)[d] && (from[d] != 1 || (*sizes)[d] > kMaxExpandCopies)) {
      return std::nullopt;
    }
  }
  ClassId x = b.Var("x");
  if (from.size() > in->size()) {
    std::vector<ClassId> children{x};
    for (int64_t size : from) children.push_back(AddNum(g, size));
    x = AddOp(g, Lang().reshape, std::move(children));
  }
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] == (*sizes)[d]) continue;
    std::vector<ClassId> children(static_cast<size_t>((*sizes)[d]) + 1, x);
    children[0] = AddNum(g, static_cast<int64_t>(d));
    x = AddOp(g, Lang().concat, std::move(children));
  }
  return x;
}

// (slice (expand ?x ?ss...) ?d ?s ?e): where x repeats or lacks dim d, the same broadcast to
// e - s there; where x has dim d whole, the broadcast of x's slice.
std::optional<ClassId> SliceOfExpand(EGraph& g, const Bindings& b) {
  auto in = ShapeOf(g, b.Var("x"));
  auto sizes = IntsOf(g, b.List("ss"));
  if (!in || !sizes || sizes->size() < in->size()) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), sizes->size());
  auto s = IntOf(g, b.Var("s")), e = IntOf(g, b.Var("e"));
  if (!d || !s || !e || *s < 0 || *e < *s || *e > (*sizes)[*d]) return std::nullopt;
  const int64_t at = *d - static_cast<int64_t>(sizes->size() - in->size());
  ClassId x = b.Var("x");
  if (at >= 0 && (*in)[at] != 1) {
    x = AddOp(g, Lang().slice, {x, AddNum(g, at), b.Var("s"), b.Var("e")});
  }
  std::vector<ClassId> children{x};
  for (size_t i = 0; i < sizes->size(); ++i) {
    children.push_back(i == static_cast<size_t>(*d) ? AddNum(g, *e - *s) : b.List("ss")[i]);
  }
  return AddOp(g, Lang().expand, std::move(children));
}

// (slice (reshape ?x ?ss...) ?d ?s ?e) when the reshape keeps the dims from d on: x's trailing
// dims equal out[d:], only the leading ones regrouped. Then every index keeps its place in the
// suffix, so the slice is x's along the matching dim, reshaped: (reshape (slice ?x d_in ?s ?e)
// out with e - s at d). A 3-D dot written as a batch-1 bmm and reshaped ([1, b*s, n] ->
// [b, s, n]) then sliced along n meets the same slice taken before the reshape.
std::optional<ClassId> SliceOfReshape(EGraph& g, const Bindings& b) {
  auto in = ShapeOf(g, b.Var("x"));
  auto out = IntsOf(g, b.List("ss"));
  if (!in || !out) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), out->size());
  auto s = IntOf(g, b.Var("s")), e = IntOf(g, b.Var("e"));
  if (!d || !s || !e || *s < 0 || *e < *s || *e > (*out)[*d]) return std::nullopt;
  const int64_t suffix = static_cast<int64_t>(out->size()) - *d;
  const int64_t at = static_cast<int64_t>(in->size()) - suffix;  // d's dim in x
  if (at < 0) return std::nullopt;
  int64_t in_lead = 1, out_lead = 1;
  for (int64_t k = 0; k < at; ++k) in_lead *= (*in)[k];
  for (int64_t k = 0; k < *d; ++k) out_lead *= (*out)[k];
  if (in_lead != out_lead) return std::nullopt;
  for (int64_t k = 0; k < suffix; ++k) {
    if ((*in)[at + k] != (*out)[*d + k]) return std::nullopt;
  }
  const ClassId sliced = AddOp(g, Lang().slice, {b.Var("x"), AddNum(g, at), b.Var("s"), b.Var("e")});
  std::vector<ClassId> children{sliced};
  for (size_t i = 0; i < out->size(); ++i) {
    children.push_back(i == static_cast<size_t>(*d) ? AddNum(g, *e - *s) : b.List("ss")[i]);
  }
  return AddOp(g, Lang().reshape, std::move(children));
}

// (slice (reshape ?x ?ss...) ?d ?s ?e) where the reshape flattens a 2-d x [a, b] to [a*b]: a
// slice of whole rows (s = i b, e = j b) is x's rows i..j flattened; a slice within one row i
// is that row's columns s - i b .. e - i b, flattened. FSDP2 reduce-scatters a flat [world,
// numel] buffer and cuts each parameter's gradient out of a rank's row.
std::optional<ClassId> SliceOfFlattenedRows(EGraph& g, const Bindings& b) {
  auto in = ShapeOf(g, b.Var("x"));
  auto out = IntsOf(g, b.List("ss"));
  if (!in || !out || in->size() != 2 || out->size() != 1) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), 1);
  auto s = IntOf(g, b.Var("s")), e = IntOf(g, b.Var("e"));
  const int64_t rows = (*in)[0], cols = (*in)[1];
  if (!d || !s || !e || cols <= 0 || *s < 0 || *e <= *s || (*out)[0] != rows * cols ||
      *e > rows * cols) {
    return std::nullopt;
  }
  ClassId sliced;
  if (*s % cols == 0 && *e % cols == 0) {
    sliced = AddOp(g, Lang().slice,
                   {b.Var("x"), AddNum(g, 0), AddNum(g, *s / cols), AddNum(g, *e / cols)});
  } else {
    const int64_t row = *s / cols;
    if (*e > (row + 1) * cols) return std::nullopt;
    const ClassId one_row =
        AddOp(g, Lang().slice, {b.Var("x"), AddNum(g, 0), AddNum(g, row), AddNum(g, row + 1)});
    sliced = AddOp(g, Lang().slice,
                   {one_row, AddNum(g, 1), AddNum(g, *s - row * cols), AddNum(g, *e - row * cols)});
  }
  return AddOp(g, Lang().reshape, {sliced, AddNum(g, *e - *s)});
}

// (slice (reshape ?x ?ss...) 0 ?s ?e) where the reshape views x [A, ...] as [W, N] rows of
// whole blocks of x's dim 0 (A = W k, N = k times the rest): rows s..e are x's dim-0 rows
// s k .. e k, viewed as [e - s, N]. FSDP2's chunk_cat views each gradient as [world, -1] and a
// rank's reduce-scattered row is its block.
std::optional<ClassId> SliceOfRowBlocks(EGraph& g, const Bindings& b) {
  auto in = ShapeOf(g, b.Var("x"));
  auto out = IntsOf(g, b.List("ss"));
  if (!in || !out || in->empty() || out->size() != 2) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), 2);
  auto s = IntOf(g, b.Var("s")), e = IntOf(g, b.Var("e"));
  const int64_t world = (*out)[0];
  if (!d || *d != 0 || !s || !e || world <= 0 || *s < 0 || *e <= *s || *e > world ||
      (*in)[0] % world != 0) {
    return std::nullopt;
  }
  const int64_t block = (*in)[0] / world;
  int64_t rest = 1;
  for (size_t k = 1; k < in->size(); ++k) rest *= (*in)[k];
  if ((*out)[1] != block * rest) return std::nullopt;
  const ClassId sliced = AddOp(
      g, Lang().slice, {b.Var("x"), AddNum(g, 0), AddNum(g, *s * block), AddNum(g, *e * block)});
  return AddOp(g, Lang().reshape, {sliced, AddNum(g, *e - *s), b.List("ss")[1]});
}

// (expand (concat ?d ?xs...) ?ss...) where the concat dim keeps its size: each piece broadcast
// alike, concatenated along that dim of the result.
std::optional<ClassId> ExpandOfConcat(EGraph& g, const Bindings& b) {
  const std::vector<ClassId>& xs = b.List("xs");
  auto sizes = IntsOf(g, b.List("ss"));
  auto first = xs.empty() ? std::nullopt : ShapeOf(g, xs.front());
  if (!first || !sizes || sizes->size() < first->size()) return std::nullopt;
  auto d = Norm(IntOf(g, b.Var("d")), first->size());
  if (!d) return std::nullopt;
  const size_t out_d = static_cast<size_t>(*d) + (sizes->size() - first->size());
  std::vector<ClassId> parts{AddNum(g, static_cast<int64_t>(out_d))};
  int64_t total = 0;
  for (ClassId x : xs) {
    auto shape = ShapeOf(g, x);
    if (!shape || shape->size() != first->size()) return std::nullopt;
    const int64_t size = (*shape)[*d];
    total += size;
    std::vector<ClassId> children{x};
    for (size_t i = 0; i < sizes->size(); ++i) {
      children.push_back(i == out_d ? AddNum(g, size) : b.List("ss")[i]);
    }
    parts.push_back(AddOp(g, Lang().expand, std::move(children)));
  }
  if (total != (*sizes)[out_d]) return std::nullopt;
  return AddOp(g, Lang().concat, std::move(parts));
}

// (concat ?d ?es...) where every piece's class holds a broadcast of one class x that repeats or
// lacks dim d, to sizes that agree outside d: that broadcast to the summed size along d.
std::optional<ClassId> ConcatOfExpands(EGraph& g, const Bindings& b) {
  const OpId expand = Lang().expand;
  const std::vector<ClassId>& es = b.List("es");
  std::optional<ClassId> x;
  std::optional<Shape64> sizes;
  std::optional<int64_t> d;
  for (ClassId piece : es) {
    std::optional<Shape64> piece_sizes;
    for (const ENode& node : g.Nodes(piece)) {
      if (node.op != expand || node.children.empty()) continue;
      ClassId from = g.Find(node.children[0]);
      if (x && from != *x) continue;
      std::vector<ClassId> rest(node.children.begin() + 1, node.children.end());
      if ((piece_sizes = IntsOf(g, rest))) {
        x = from;
        break;
      }
    }
    if (!piece_sizes) return std::nullopt;
    if (!sizes) {
      sizes = piece_sizes;
      d = Norm(IntOf(g, b.Var("d")), sizes->size());
      auto in = ShapeOf(g, *x);
      if (!d || !in || in->size() > sizes->size()) return std::nullopt;
      const int64_t at = *d - static_cast<int64_t>(sizes->size() - in->size());
      if (at >= 0 && (*in)[at] != 1) return std::nullopt;
      continue;
    }
    if (piece_sizes->size() != sizes->size()) return std::nullopt;
    for (size_t i = 0; i < sizes->size(); ++i) {
      if (static_cast<int64_t>(i) != *d && (*piece_sizes)[i] != (*sizes)[i]) return std::nullopt;
    }
    (*sizes)[*d] += (*piece_sizes)[*d];
  }
  if (!x) return std::nullopt;
  std::vector<ClassId> children{*x};
  for (int64_t size : *sizes) children.push_back(AddNum(g, size));
  return AddOp(g, expand, std::move(children));
}

// (op (expand ?x ?ss...) ?y), (op ?y (expand ...)): x and y broadcast (right-aligned, each dim
// equal or 1) to exactly the matched result's shape, so the op's own broadcast does the expand's.
bool ExpandAbsorbed(const EGraph& g, const Bindings& b) {
  auto out = RootShape(g, b);
  auto xs = ShapeOf(g, b.Var("x")), ys = ShapeOf(g, b.Var("y"));
  if (!out || !xs || !ys) return false;
  const size_t rank = std::max(xs->size(), ys->size());
  if (rank != out->size()) return false;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t xd = i + xs->size() < rank ? 1 : (*xs)[i + xs->size() - rank];
    const int64_t yd = i + ys->size() < rank ? 1 : (*ys)[i + ys->size() - rank];
    if (xd != yd && xd != 1 && yd != 1) return false;
    if ((xd == 1 ? yd : xd) != (*out)[i]) return false;
  }
  return true;
}

// ---- constant tensors -------------------------------------------------------------------------

// Whether a class holds (full v ...) with v the number 0: a tensor of zeros.
bool IsZeroTensorClass(const EGraph& g, ClassId id) {
  const OpId full = *Lang().ops().Find("full");
  for (const ENode& node : g.Nodes(id)) {
    if (node.op == full && !node.children.empty() && IsZeroNumber(g, node.children[0])) {
      return true;
    }
  }
  return false;
}

// (slice (full ?v ?t ?ss...) ?d ?s ?e): the same constant with size e - s along d.
std::optional<ClassId> SliceOfFull(EGraph& g, const Bindings& b) {
  std::vector<ClassId> sizes = b.List("ss");
  auto d = Norm(IntOf(g, b.Var("d")), sizes.size());
  auto s = IntOf(g, b.Var("s")), e = IntOf(g, b.Var("e"));
  if (!d || !s || !e || *s < 0 || *e < *s) return std::nullopt;
  sizes[static_cast<size_t>(*d)] = AddNum(g, *e - *s);
  sizes.insert(sizes.begin(), {b.Var("v"), b.Var("t")});
  return AddOp(g, *Lang().ops().Find("full"), std::move(sizes));
}

// (add ?y (full ?z ...)), (sub ?y (full ?z ...)): ?z is the number 0 and the result has exactly
// ?y's type (the zeros broadcast into ?y's shape and do not promote its dtype).
bool AddsNothing(const EGraph& g, const Bindings& b) {
  if (!IsZeroNumber(g, b.Var("z"))) return false;
  const auto& root = TypeOf(g, b.match().eclass);
  const auto& y = TypeOf(g, b.Var("y"));
  return root && y && *root == *y;
}

// (op (concat ?d ?x ?xs...) ?y), (op ?y (concat ?d ?x ?xs...)) for a broadcasting binary op: the
// concat is copies of one piece (every element of ?xs is ?x's class, as expand's lowering writes
// a broadcast) of size 1 along ?d, and ?x broadcast against the tensor ?y gives the result's shape
// (?y spans the concat along ?d), so the copies broadcast like the piece itself.
bool CopiesBroadcast(const EGraph& g, const Bindings& b) {
  ClassId x = g.Find(b.Var("x"));
  for (ClassId c : b.List("xs")) {
    if (g.Find(c) != x) return false;
  }
  auto out = RootShape(g, b), xs = ShapeOf(g, x), ys = ShapeOf(g, b.Var("y"));
  if (!out || !xs || !ys || xs->size() != out->size() || ys->size() > out->size()) return false;
  auto d = Norm(IntOf(g, b.Var("d")), xs->size());
  if (!d || (*xs)[*d] != 1) return false;
  const size_t shift = out->size() - ys->size();
  for (size_t i = 0; i < out->size(); ++i) {
    int64_t xd = (*xs)[i], yd = i < shift ? 1 : (*ys)[i - shift];
    if (xd != yd && xd != 1 && yd != 1) return false;
    if ((xd == 1 ? yd : xd) != (*out)[i]) return false;
  }
  return true;
}

// ---- cross-entropy gradient (one-hot) ------------------------------------------------------

// (sub (mul (neg (onehot ?i ?c ?t)) ?w) (mul (exp ?o) (sum_dim (mul ...) ?d 1))): ?d is the class
// dim (the last) and ?w has the ids' shape plus a trailing 1 (one weight per row).
bool OnehotRowWeight(const EGraph& g, const Bindings& b) {
  auto ids = ShapeOf(g, b.Var("i")), w = ShapeOf(g, b.Var("w"));
  if (!ids || !w) return false;
  auto d = Norm(IntOf(g, b.Var("d")), ids->size() + 1);
  Shape64 row = *ids;
  row.push_back(1);
  return d && *d == static_cast<int64_t>(ids->size()) && *w == row;
}

// (neg (onehot ?i ?c ?t)), a loss_parallel rank's share of a cross entropy's gradient: its
// columns [o_r, o_r + n_r) of -onehot(i) are onehot(where(m_r, 0, i - o_r), n_r) scaled by
// float(m_r) - 1 per row (-1 where the target is the rank's, 0 where masked), m_r = (i < o_r) |
// (i >= o_r + n_r). The columns are split like torch.chunk over the world's ranks (as in
// embedding-bwd-vocab-parallel); a float32 one-hot only (float(m) is float32 in the language), ids
// already local are not split again.
std::optional<ClassId> VocabParallelNegOnehot(EGraph& g, const Bindings& b) {
  const TensorAnalysis* analysis = g.FindAnalysis<TensorAnalysis>();
  ClassId ids = b.Var("i");
  auto id_shape = ShapeOf(g, ids);
  auto classes = IntOf(g, b.Var("c")), code = IntOf(g, b.Var("t"));
  if (analysis == nullptr || !id_shape || !classes || *classes < 2 || !code ||
      *code != static_cast<int64_t>(ir::DType::kFloat32)) {
    return std::nullopt;
  }
  const int64_t world = analysis->world_size();
  if (world < 2) return std::nullopt;
  if (IsShardLocalIds(g, ids)) return std::nullopt;
  auto op = [](const char* name) { return *Lang().ops().Find(name); };
  auto flt = [&](double v) { return g.Add(Lang().Flt(v)); };
  std::vector<ClassId> parts{AddNum(g, static_cast<int64_t>(id_shape->size()))};
  for (const auto& [offset, n] : ChunkSplit(*classes, world)) {
    VocabShardIds shard = VocabShard(g, ids, static_cast<double>(offset), n, flt(0.0));
    ClassId sign = AddOp(g, op("sub"), {AddOp(g, op("div"), {shard.mask, flt(1.0)}), flt(1.0)});
    ClassId local = AddOp(g, op("onehot"), {shard.local, AddNum(g, n), b.Var("t")});
    parts.push_back(AddOp(g, op("mul"), {local, RowMask(g, sign, *id_shape)}));
  }
  return AddOp(g, Lang().concat, std::move(parts));
}

// (mul (onehot (masked_fill (sub ?t ?a) m ?z) ?c ?dt) W) with m = (t < a) | (t >= b), c = b - a
// and W a per-row weight that is 0 where m holds: Megatron's vocabulary-parallel cross-entropy
// gradient, the one-hot of the masked targets scaled by a weight masked alike. Its classes split
// like torch.chunk over the world's ranks, o_r = a + the widths before r, m_r = (t < o_r) |
// (t >= o_r + n_r): rank r's columns are onehot(masked_fill(t - o_r, m_r, z), n_r) * W_r, W_r
// the weight written with m_r (weight_of). A target in [a, b) is kept by exactly one rank, at
// column t - o_r (S's column t - a), with W's value there (W_r = W where m_r does not hold);
// one outside has weight 0 in S and in every rank. z must be a column of every shard; ?rs is the
// ids' shape plus a trailing 1 (one weight per row).
// The ranks' own terms match the pattern as well (a shard of width n_r at a = o_r): splitting them
// again is sound but useless, and splitting every piece again makes a tree of C / 2W terms (510
// one-hots at C = 512). So only a term that starts at a = 0 (a whole vocabulary, as S's does),
// at least 2 W wide and that no rank computes (its class holds no D tensor: rank 0's own term
// is one) is split.
std::optional<ClassId> SplitOnehotRows(EGraph& g, const Bindings& b,
                                       const std::function<ClassId(ClassId mask)>& weight_of) {
  const TensorAnalysis* analysis = g.FindAnalysis<TensorAnalysis>();
  ClassId t = b.Var("t");
  const auto& t_type = TypeOf(g, t);
  auto t_shape = ShapeOf(g, t);
  auto a = NumberOf(g, b.Var("a")), hi = NumberOf(g, b.Var("b")), z = NumberOf(g, b.Var("z"));
  auto classes = IntOf(g, b.Var("c"));
  if (analysis == nullptr || !t_type || ir::IsFloatingPoint(t_type->dtype) || !t_shape || !a ||
      !hi || !z || !classes || *a != std::floor(*a) ||
      *hi - *a != static_cast<double>(*classes)) {
    return std::nullopt;
  }
  Shape64 row = *t_shape;
  row.push_back(1);
  const auto& rs = b.List("rs");
  if (rs.size() != row.size()) return std::nullopt;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (IntOf(g, rs[i]) != row[i]) return std::nullopt;
  }
  const int64_t world = analysis->world_size();
  if (world < 2 || *classes < 2 * world || *a != 0.0) return std::nullopt;
  for (const ENode& node : g.Nodes(b.match().eclass)) {
    if (node.op == Lang().tensor &&
        analysis->leaves().at(node.payload).side == TensorLeaf::Side::kDist) {
      return std::nullopt;
    }
  }
  const auto pieces = ChunkSplit(*classes, world);
  // z must be a valid local column of every piece (the smallest is the last)
  if (*z != std::floor(*z) || *z < 0 || *z >= static_cast<double>(pieces.back().second)) {
    return std::nullopt;
  }
  auto op = [](const char* name) { return *Lang().ops().Find(name); };
  std::vector<ClassId> parts{AddNum(g, static_cast<int64_t>(t_shape->size()))};
  for (const auto& [start, n] : pieces) {
    const double offset = *a + static_cast<double>(start);
    auto [mask, local] = VocabShard(g, t, offset, n, b.Var("z"));
    parts.push_back(AddOp(g, op("mul"), {AddOp(g, op("onehot"), {local, AddNum(g, n), b.Var("dt")}),
                                         weight_of(mask)}));
  }
  return AddOp(g, Lang().concat, std::move(parts));
}

// onehot-rows-vocab-parallel: W = masked_fill(g, reshape(m, rs), z2) with z2 = 0 (index_put of
// -g / N into zeros, autograd's gradient of the masked target logit); W_r = masked_fill(g,
// reshape(m_r, rs), 0). ?g has the rows' shape.
std::optional<ClassId> VocabParallelOnehotRows(EGraph& g, const Bindings& b) {
  auto g_shape = ShapeOf(g, b.Var("g"));
  auto z2 = NumberOf(g, b.Var("z2"));
  auto t_shape = ShapeOf(g, b.Var("t"));
  if (!g_shape || !z2 || *z2 != 0.0 || !t_shape) return std::nullopt;
  Shape64 row = *t_shape;
  row.push_back(1);
  if (*g_shape != row) return std::nullopt;
  const auto& rs = b.List("rs");
  return SplitOnehotRows(g, b, [&](ClassId mask) {
    std::vector<ClassId> row_mask{mask};
    row_mask.insert(row_mask.end(), rs.begin(), rs.end());
    ClassId per_row = AddOp(g, Lang().reshape, std::move(row_mask));
    return AddOp(g, *Lang().ops().Find("masked_fill"), {b.Var("g"), per_row, b.Var("z2")});
  });
}

// onehot-rows-kept-vocab-parallel: W = reshape(1 - float(m), rs), float(m) written m / 1 (as
// _to_copy of a bool to f32 lowers): 1 where the target is kept, 0 where m (Megatron's
// hand-written backward, `grad_2d[arange, masked_target] -= 1 - target_mask.float()`);
// W_r = reshape(1 - float(m_r), rs). ?one and ?one2 must be 1.
std::optional<ClassId> VocabParallelOnehotRowsKept(EGraph& g, const Bindings& b) {
  if (NumberOf(g, b.Var("one")) != 1.0 || NumberOf(g, b.Var("one2")) != 1.0) return std::nullopt;
  const auto& rs = b.List("rs");
  auto op = [](const char* name) { return *Lang().ops().Find(name); };
  return SplitOnehotRows(g, b, [&](ClassId mask) {
    std::vector<ClassId> reshape{AddOp(
        g, op("sub"), {b.Var("one"), AddOp(g, op("div"), {mask, b.Var("one2")})})};
    reshape.insert(reshape.end(), rs.begin(), rs.end());
    return AddOp(g, Lang().reshape, std::move(reshape));
  });
}

ConditionTable BuildConditions() {
  ConditionTable t;
  t.Add("bcast-along-d", BroadcastsAlongD);
  t.Add("equal-splits", EqualSplits);
  t.Add("pick-reshape-keeps-last", PickReshapeKeepsLast);
  t.Add("aligned-splits", AlignedSplits);
  t.Add("inner-splits-match", [](const EGraph& g, const Bindings& b) {
    return PairwiseDims(g, b, -1, -2);
  });
  t.Add("same-shape", SameShape);
  t.Add("reshape-is-identity", ReshapeIsIdentity);
  t.Add("permute-is-identity", PermuteIsIdentity);
  t.Add("slice-is-full", SliceIsFull);
  t.Add("dims-differ", DimsDiffer);
  t.Add("reduce-keeps-concat-dim", ReduceKeepsConcatDim);
  t.Add("norm-excludes-d", NormExcludesD);
  t.Add("not-last-dim", NotLastDim);
  t.Add("pick-rows-split", PickRowsSplit);
  t.Add("transpose-other-dim", TransposeOtherDim);
  t.Add("d-equals-a", DEqualsA);
  t.Add("dim-nonneg", DimNonNegative);
  t.Add("dim-is-one", DimIsOne);
  t.Add("complex-dim-kept", ComplexDimKept);
  t.Add("integer-ids-numeric-bounds", IntegerIdsNumericBounds);
  t.Add("same-type-as-y", SameTypeAsY);
  t.Add("rope-splits-at-heads", RopeSplitsAtHeads);
  t.Add("gqa-splits", GqaSplits);
  t.Add("sdpa-splits", SdpaSplits);
  t.Add("sdpa-shared-kv", SdpaSharedKv);
  t.Add("attention-shared-kv", AttentionSharedKv);
  t.Add("c-is-number", CIsNumber);
  t.Add("full-scales-x", FullScalesX);
  t.Add("mask-same-shape", MaskSameShape);
  t.Add("zero-fill", ZeroFill);
  t.Add("integer-division", IntegerDivision);
  t.Add("float-cast", FloatCast);
  t.Add("cast-to-own-dtype", CastToOwnDtype);
  t.Add("adds-nothing", AddsNothing);
  t.Add("onehot-row-weight", OnehotRowWeight);
  t.Add("copies-bcast", CopiesBroadcast);
  t.Add("expand-absorbed", ExpandAbsorbed);
  t.Add("clamp-spans-kept-ids", ClampSpansKeptIds);
  return t;
}

ApplierTable BuildAppliers() {
  ApplierTable t;
  t.Add("slice-of-concat", SliceOfConcat);
  t.Add("slice-of-slice", SliceOfSlice);
  t.Add("slice-tiling", SliceTiling);
  t.Add("concat-flatten", ConcatFlatten);
  t.Add("concat-interchange", ConcatInterchange);
  t.Add("sum-dim-of-concat-before", ReduceOfConcatBefore("sum_dim"));
  t.Add("max-dim-of-concat-before", ReduceOfConcatBefore("max_dim"));
  t.Add("mean-dim-of-concat-before", ReduceOfConcatBefore("mean_dim"));
  t.Add("mm-concat-inner", MmConcatInner);
  for (const char* op : {"add", "sub", "mul", "div"}) {
    t.Add(std::string(op) + "-of-concats-regrouped", BinaryOfConcatsRegrouped(op));
  }
  t.Add("reshape-of-concat", ReshapeOfConcat);
  t.Add("slice-of-reshape", SliceOfReshape);
  t.Add("slice-of-flattened-rows", SliceOfFlattenedRows);
  t.Add("slice-of-row-blocks", SliceOfRowBlocks);
  t.Add("permute-of-concat", PermuteOfConcat);
  t.Add("permute-of-permute", PermuteOfPermute);
  t.Add("reshape-inverse-of-leaf", ReshapeInverseOfLeaf);
  t.Add("permute-as-reshape", PermuteAsReshape);
  t.Add("transpose-of-slice", TransposeOfSlice);
  t.Add("reduce-of-concats", ReduceOfConcats);
  t.Add("concat-of-sumrs", ConcatOfSumrs);
  t.Add("sumr-interchange", SumrInterchange);
  t.Add("sumr-flatten", SumrFlatten);
  t.Add("sumr-regroup-by-sums", SumrRegroupBySums);
  t.Add("add-of-concats-cut-constants", AddOfConcatsCutConstants);
  t.Add("sumr-drop-zeros", SumrDropZeros);
  t.Add("scale-of-div-number", ScaleOfDivNumber);
  t.Add("scale-of-scale", ScaleOfScale);
  t.Add("scale-ratio", ScaleRatio);
  t.Add("div-number-as-scale", DivNumberAsScale);
  t.Add("sumr-of-scales", SumrOfScales);
  t.Add("add-share-over-sumr",
        [](EGraph& g, const Bindings& b) { return AddShareOverSumr(g, b, true); });
  t.Add("sumr-share-add",
        [](EGraph& g, const Bindings& b) { return AddShareOverSumr(g, b, false); });
  t.Add("sumr-as-adds", SumrAsAdds);
  t.Add("expand-of-full", ExpandOfFull);
  t.Add("div-of-full-number", DivOfFullNumber);
  t.Add("vocab-parallel-embedding", VocabParallelEmbedding);
  t.Add("vocab-parallel-pick", VocabParallelPick);
  t.Add("pick-of-class-concat", PickOfClassConcat);
  t.Add("masked-offset-ids", MaskedOffsetIds);
  t.Add("masked-fill-concat-mask", MaskedFillConcatMask);
  t.Add("slice-of-add-bcast", SliceOfAddBcast);
  t.Add("transpose-of-merge-reshape", TransposeOfMergeReshape);
  t.Add("bmm-of-merged-batch", BmmOfMergedBatch);
  t.Add("reshape-of-sumr", ReshapeOfSumr);
  t.Add("permute-of-sumr", PermuteOfSumr);
  t.Add("slice-of-full", SliceOfFull);
  t.Add("expand-as-copies", ExpandAsCopies);
  t.Add("slice-of-expand", SliceOfExpand);
  t.Add("expand-of-concat", ExpandOfConcat);
  t.Add("concat-of-expands", ConcatOfExpands);
  t.Add("vocab-parallel-embedding-bwd", VocabParallelEmbeddingBwd);
  t.Add("vocab-parallel-neg-onehot", VocabParallelNegOnehot);
  t.Add("vocab-parallel-onehot-rows", VocabParallelOnehotRows);
  t.Add("vocab-parallel-onehot-rows-kept", VocabParallelOnehotRowsKept);
  t.Add("embedding-of-concat", EmbeddingOfConcat);
  t.Add("embedding-bwd-of-concat", EmbeddingBwdOfConcat);
  t.Add("sumr-regroup-per-rank", SumrRegroupPerRank);
  t.Add("concat-piece-slices", ConcatPieceSlices);
  t.Add("bmm-concat-batch", BmmConcatBatch);
  t.Add("matmul-concat-batch", MatmulConcatBatch);
  t.Add("sdpa-grouped-heads", SdpaGroupedHeads);
  t.Add("sdpa-mask-grouped-heads", SdpaMaskGroupedHeads);
  t.Add("attention-grouped-heads", AttentionGroupedHeads);
  t.Add("mask-multiply", MaskMultiply);
  t.Add("permute-of-slice", PermuteOfSlice);
  t.Add("sdpa-mask-merge", SdpaMaskMerge);
  t.Add("sdpa-lse-mask-merge", SdpaLseMaskMerge);
  t.Add("sdpa-mask-sorted-keys", SdpaMaskSortedKeys);
  t.Add("sdpa-lse-mask-sorted-keys", SdpaLseMaskSortedKeys);
  t.Add("sdpa-mask-of-query-concat", SdpaMaskOfQueryConcat);
  t.Add("sdpa-lse-mask-of-query-concat", SdpaLseMaskOfQueryConcat);
  return t;
}

}  // namespace

const TensorFacts& FactsOf(const EGraph& graph, ClassId id) {
  const TensorAnalysis* analysis = graph.FindAnalysis<TensorAnalysis>();
  if (analysis == nullptr) throw std::logic_error("lemma condition on a graph without facts");
  return (*analysis)[id];
}

const ConditionTable& LemmaConditions() {
  static const ConditionTable* table = new ConditionTable(BuildConditions());
  return *table;
}

const ApplierTable& LemmaAppliers() {
  static const ApplierTable* table = new ApplierTable(BuildAppliers());
  return *table;
}

RuleContext LemmaRuleContext() {
  return RuleContext{&TensorLanguage::Get().ops(), &LemmaConditions(), &LemmaAppliers()};
}

}  // namespace gg::symbolic
