// IndexDomain: a small range analysis of the integer tensors of one graph, which the index-like
// lowerings (index, index_put, and the language's embedding / pick / onehot / embedding_bwd ops)
// ask before they pick a term.
//
// Why: the language's lookup ops and their lemmas (embedding-vocab-parallel, pick-of-class-
// concat, neg-onehot-vocab-parallel, ...) are stated for ids in [0, V). aten::embedding, gather,
// scatter, one_hot and nll_loss raise on anything else, so their ids are in range on every run
// that executes. aten::index and index_put accept [-V, V) and wrap the negative ones (x[-1] is
// the last row), so their ids are in range only when the graph says so; otherwise the lowering
// writes the wrap, (wrap_index ids V), and a D that looks the unwrapped ids up is not congruent.
//
// The analysis is interval arithmetic over the producers of a tensor (inclusive bounds, either
// side may be unbounded): constants, arange, the indices outputs of topk / sort / max.dim /
// argmax, clamp, remainder, floor division by a number, views and copies, + - * by numbers,
// and guarded values — a masked_fill / index_put / where whose mask is a range test of the same
// tensor, as
// `(x - a).masked_fill((x < a) | (x >= b), 0)` (Megatron's and DTensor's vocabulary-parallel
// masks): where the mask is false, a <= x < b. Integer graph inputs are taken as non-negative
// (valid indices: token ids, positions, labels), a premise the report lists
// (IndexDomainPremises) whenever a lowering relied on it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "symbolic/lowering.h"
#include "symbolic/premise.h"

namespace gg::symbolic {

// The values of an integer tensor lie in [lo, hi] (inclusive); nullopt: unbounded on that side.
struct IntRange {
  std::optional<int64_t> lo, hi;
  static IntRange Any() { return {}; }
  static IntRange Exactly(int64_t v) { return {v, v}; }
  // Every value lies in [a, b].
  bool Within(int64_t a, int64_t b) const { return lo && hi && *lo >= a && *hi <= b; }
  bool NonNegative() const { return lo && *lo >= 0; }
  bool operator==(const IntRange&) const = default;
};

// The smallest range holding both.
IntRange Union(const IntRange& a, const IntRange& b);
// Values in both (an empty intersection is returned as is, lo > hi).
IntRange Intersect(const IntRange& a, const IntRange& b);

class IndexDomain {
 public:
  // `assume_inputs_nonneg`: integer graph inputs are >= 0 (see above); off, they are unbounded.
  explicit IndexDomain(const ir::Graph& graph, const ConstantValues* constants = nullptr,
                       bool assume_inputs_nonneg = true);

  // The range of `ref`'s values on every run (Any for non-integer tensors and unknown producers).
  IntRange Range(ir::TensorRef ref);

  // Named conditions the lowerings ask.
  // "ids-in-range": 0 <= ids < n on every run.
  bool IdsInRange(ir::TensorRef ids, int64_t n) { return Range(ids).Within(0, n - 1); }
  // "ids-nonneg": ids >= 0 on every run (the upper bound coming from the op raising past it).
  bool IdsNonNegative(ir::TensorRef ids) { return Range(ids).NonNegative(); }

  // Names of the integer graph inputs whose assumed non-negativity some query used.
  const std::set<std::string>& assumed_inputs() const { return assumed_inputs_; }

 private:
  // Facts that hold at the positions under consideration (a guard's false / true side): a tensor
  // known, there, to lie in a range. Only position-preserving producers are followed under them.
  using Facts = std::map<ir::TensorRef, IntRange>;
  IntRange RangeUnder(ir::TensorRef ref, const Facts& facts, int depth);
  IntRange Compute(ir::TensorRef ref, int depth);
  // What `cond` (a bool tensor) being `value` at a position says about integer tensors there.
  void LearnFrom(ir::TensorRef cond, bool value, Facts* facts, int depth);
  std::optional<double> ScalarOf(const ir::Value& v, int depth);

  const ir::Graph& graph_;
  const ConstantValues* constants_;
  bool assume_inputs_nonneg_;
  std::map<ir::TensorRef, IntRange> memo_;
  std::set<std::string> assumed_inputs_;
};

// The premises behind the graph's index / index_put lowerings: for each one whose ids are proved
// non-negative only by assuming some integer inputs are, a "domain" premise naming them.
// `where` says which graph it is ("S", "D rank 1") for the premise's origin.
std::vector<Premise> IndexDomainPremises(const ir::Graph& graph, const std::string& where,
                                         const ConstantValues* constants);

}  // namespace gg::symbolic
