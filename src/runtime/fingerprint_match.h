// Fingerprint matching: which expressions over D tensors equal a given S tensor numerically,
// judged on fingerprints alone (fingerprint.h). Used to propose relations (infer-relations, hints
// for the symbolic engine) and to classify what the symbolic engine could not relate: a D
// expression that equals the S tensor means a missing lemma; none means the values differ.
//
// Candidates, limited by shape (the D tensors are indexed by shape, by shape with one dimension
// left open, and by element count):
//   identical   S == t@r                          (same shape; every projection equal)
//   replicated  S == t@r for every rank r          (one relation per rank)
//   concat      S == concat(d, t@0, t@1, ...)      (slices along d are the ranks' slices, in order)
//   sum         S == sum(t@0, t@1, ...)            (projections add)
//   slices      S == concat(d, slice(t@r, d, a, b), ...) or one slice: S's slices along d are
//               runs of consecutive slices of the ranks' tensors (a row range of one rank, an
//               interleaved fused layout such as vLLM's [q; k; v] per rank)
//   reshape     S == reshape(t@r, shape)           (same element count; whole-tensor projections)
//   concat-of-sums  S == concat(d, sum(t@0, t@1), sum(t@2, t@3)) or concat(d, sum(t@0, t@2),
//               sum(t@1, t@3)): C chunks (1 < C < world, C divides it), chunk c the sum of a
//               group of ranks, contiguous or strided: a tensor sharded over one axis of a 2-D
//               mesh and partial over the other (TP x DP gradients; KV heads shared by TP ranks)
// A D tensor `t` on several ranks means the value of the same FX name on each rank.
//
// Error of a candidate: the largest |projection(S) - projection(expr)| over projections and
// slices, each divided by the slice's scale sqrt(max(|S_j|^2, |expr_j|^2, floor)) with the floor
// 1e-4 of the mean slice's squared norm: an estimate of the normwise relative error per slice.
// A candidate holds when its error is at most the tolerance: tolerance_factor times the larger
// unit roundoff of the two dtypes (bf16 2^-8, fp16 2^-11, fp32 2^-24, fp64 2^-53), capped at
// max_tolerance, and at least exact_tolerance (integers and booleans compare exactly up to double
// rounding). With float_floor, a floating comparison's tolerance is at least that (searches
// guided by the matches: a correct D differs from S by more than a few roundings a layer deep).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/fingerprint.h"
#include "symbolic/relation.h"

namespace gg::runtime {

// Floor of a floating tensor's tolerance where a wrong match costs only time (guided search,
// relation inference): float32 values a layer deep differ between S and a correct D by up to 1e-4
// per slice (reductions over 768-3072 terms; a backward's weight gradients 1e-5 at 64 terms,
// beyond 64 u), while a wrong layout is off by 0.5 or more.
constexpr double kLooseFloatFloor = 1e-3;

struct MatchOptions {
  double tolerance_factor = 64.0;
  double max_tolerance = 0.05;
  double exact_tolerance = 1e-9;
  double float_floor = 0.0;  // least tolerance of a floating comparison (kLooseFloatFloor)
  // Runs-of-slices candidates only for S tensors whose slices along the dimension are distinct
  // (guided search: a cover of a mask's repeated rows by coincidence is a hint that fails and
  // leaves its operator unrelated; infer-relations counts evidence and keeps them).
  bool distinct_slices = false;
  size_t max_candidates = 8;       // at most this many holding and this many failing candidates
};

// The tolerance of a comparison whose dtypes' larger unit roundoff is `u` (0: exact types).
double Tolerance(const MatchOptions& options, double u);

struct Candidate {
  enum class Kind { kReplicated, kConcat, kSum, kIdentical, kSlices, kReshape, kConcatOfSums };
  Kind kind = Kind::kIdentical;
  std::vector<symbolic::RelExpr> exprs;  // S == each of them (replicated: one per rank)
  double error = 0.0;
  double tolerance = 0.0;
  bool holds() const { return error <= tolerance; }
  // "replicated: t@0, t@1 (error 1.2e-07, tolerance 3.8e-06)".
  std::string ToString() const;
};

const char* KindName(Candidate::Kind kind);

// D's fingerprints indexed for matching many S tensors.
class FingerprintMatcher {
 public:
  FingerprintMatcher(const FingerprintTable& d, MatchOptions options = {});
  ~FingerprintMatcher();

  // Candidates for one S fingerprint: those that hold first (by kind as listed in Kind, then
  // error), then the closest ones that fail (by error). Compares S with every D tensor of a
  // compatible shape: in a deep model, every layer's copy of it.
  std::vector<Candidate> CandidatesFor(const TensorFingerprint& s) const;

  // The holding candidates only: CandidatesFor's holding prefix, in the same order. An index of
  // D's first projections by value (built on the first call) leaves out every D tensor whose
  // projection is farther from S's than any tolerance allows, so matching all of a deep model's
  // tensors costs about linear time in its depth, not quadratic. Not thread-safe.
  std::vector<Candidate> HoldingCandidatesFor(const TensorFingerprint& s) const;

  const MatchOptions& options() const { return options_; }

 private:
  struct Entry {
    int32_t rank;
    ir::TensorRef ref;
    const TensorFingerprint* fp;
  };
  using Slots = std::vector<const Entry*>;     // one per rank (null: none on that rank)
  using Names = std::map<std::string, Slots>;  // by FX name: deterministic order
  struct NameFilter;
  class ValueIndex;
  // Candidates from the names `filter` admits (every name without one).
  std::vector<Candidate> Collect(const TensorFingerprint& s, const NameFilter* filter) const;
  NameFilter NamesNear(const TensorFingerprint& s) const;

  const FingerprintTable& d_;
  MatchOptions options_;
  int32_t world_ = 0;
  int uniform_projections_ = -1;  // every D fingerprint's projection count (-1: they differ)
  std::vector<Entry> entries_;
  std::map<std::vector<int64_t>, Names> by_shape_;
  // Shape with dimension d replaced by -1, and d appended.
  std::map<std::vector<int64_t>, Names> by_open_dim_;
  std::map<int64_t, Names> by_numel_;
  mutable std::unique_ptr<ValueIndex> index_;
};

// Candidates for S tensor `s_tensor` (of `s`'s rank 0); empty when it has no fingerprint.
std::vector<Candidate> CandidatesFor(const FingerprintTable& s, const FingerprintTable& d,
                                     ir::TensorRef s_tensor, const MatchOptions& options = {});

// What the numbers say of an S tensor the symbolic engine could not relate.
struct NumericClassification {
  enum class Kind {
    kMissingLemma,           // some D expression equals it: the relation exists, unproved
    kNumericallyDifferent,   // no candidate holds: the values differ (a real bug, or a relation
                             // outside the candidate forms)
    kNotObserved,            // no fingerprint (not computed, or complex)
  };
  Kind kind = Kind::kNotObserved;
  std::optional<Candidate> closest;  // the holding candidate, or the one with the least error
  std::string ToString() const;      // one line for a report
};

NumericClassification ClassifyNumerically(const FingerprintTable& s, const FingerprintTable& d,
                                          ir::TensorRef s_tensor,
                                          const MatchOptions& options = {});
// The same with one matcher over D built once for many S tensors.
NumericClassification ClassifyNumerically(const FingerprintTable& s,
                                          const FingerprintMatcher& matcher,
                                          ir::TensorRef s_tensor);

}  // namespace gg::runtime
