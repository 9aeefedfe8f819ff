// Mutator: random semantic mutations of a (S, D) pair for the soundness fuzzer
// (soundness_test.cc). A mutation is one small edit of S, of one rank of D, or of the same node on
// every rank of D: an operator swapped within its family, a scalar or constant perturbed, a slice
// moved, a dimension changed, a collective dropped, duplicated, given another reduce op or group,
// a wait removed, operands of a non-commutative operator swapped, a transpose inserted or
// removed, a value doubled or its elements reordered by a reshape, two ranks' graphs exchanged. The mutant is re-typed from the edit on and re-read through the loader (JSON round
// trip), so a mutant that would not load is discarded, never verified.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"

namespace gg::soundness {

// Where an edit applies.
// kBoth: the same edit on S and on every rank of D (nodes of the same name and operator).
enum class Target { kS, kDRank, kDAll, kDProgram /* the program as a whole */, kBoth };

// One place a mutation can be made, found on the unmutated pair.
struct Site {
  std::string kind;    // "op-swap", "scalar", ... (MutationKinds())
  Target target = Target::kS;
  int32_t rank = 0;    // kDRank: the rank edited
  std::string node;    // the FX name of the node edited
  std::string detail;  // "aten::add.Tensor -> aten::sub.Tensor"
  // Edits graph `g` (S, or one rank of D; `d` is the program for D edits and null for S;
  // kDProgram: `g` is null and the edit is made on `d` once).
  // Returns false when the edit does not apply to this graph (a rank lacks the node).
  std::function<bool(ir::Graph* g, ir::Program* d)> edit;

  std::string Where() const;     // "S", "D rank 1", "D every rank"
  std::string ToString() const;  // "op-swap at add_3 (D rank 1): aten::add.Tensor -> ..."
};

// Every kind of mutation, in a fixed order.
const std::vector<std::string>& MutationKinds();

// Every site of the pair, on nodes that the graphs' outputs depend on, in a deterministic order.
std::vector<Site> EnumerateSites(const ir::Graph& s, const ir::Program& d);

struct Mutant {
  ir::Graph s;
  ir::Program d;
};

// Why a mutant was discarded ("type-check", "load", "no-op"), or empty when it loads.
struct MutantOutcome {
  std::string discarded;  // category; empty: the mutant is valid
  std::string reason;     // the loader's or shape rule's message
  Mutant mutant;
};

// Applies `site` to copies of (s, d), re-types every node from the edit on and reloads both
// through GraphGuard JSON in `scratch_dir` (which must exist), exactly as files would be checked.
MutantOutcome ApplySite(const Site& site, const ir::Graph& s, const ir::Program& d,
                        const std::string& scratch_dir);

// splitmix64: a small deterministic generator (the same numbers on every platform, unlike the
// standard distributions).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }

 private:
  uint64_t state_;
};

// FNV-1a of a string, to give every case its own stream of seeds.
uint64_t Fnv1a(const std::string& text);

}  // namespace gg::soundness
