// Memoized local inference: one S operator's local problem (its seeded e-graph, saturated with the
// lemma catalogue, then extracted) solved once and reused for every later problem that is the
// same up to a renaming of its tensors. Deep models repeat identical layers, so most local
// problems of a 126-layer model are copies of a few of its first layer's.
//
// Soundness rests on what a saturation can observe. The local e-graph is built from nothing by a
// sequence of calls (EGraph::SetTrace records them: every node with its op, payload and child
// classes, every union with its reason id, every reason id handed out, every rebuild); the rules,
// limits and world size are the same for every problem of one Verify call. The e-graph's analysis,
// rules and side conditions read a `(tensor id)` leaf only through its side and type (rank is in
// the key too, for safety), never its FX name or node id, which the renaming changes. So the key
// is: the call record, each leaf's side, rank and type, the classes the goal and the extraction
// ask about with their types, and the runner limits chosen. Two problems with equal keys (the
// whole key compared, not a hash) have equal e-graphs up to the leaves' identities, so the
// saturation, the extracted terms and the explanation paths of one are those of the other with
// leaf i standing for the other's leaf i; only the reasons' names differ (they name D nodes), and
// a reused proof takes them from its own e-graph. A problem that differs in anything the e-graph
// holds (a type, a constant, an argument, which D tensor an operator reads, a missing collective)
// has another record and is solved afresh. A search the time limit stopped is not stored: where
// the clock stops is not a function of the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/shape.h"
#include "symbolic/egraph.h"
#include "symbolic/rewrite.h"
#include "symbolic/tensor_lang.h"

namespace gg::symbolic {

// The full key of one local problem, as bytes (compared whole by LocalProblemCache).
class LocalProblemKey {
 public:
  void Add(int64_t value);
  void AddAll(const std::vector<int64_t>& values);
  void AddString(std::string_view text);  // length-prefixed
  void AddType(const ir::TensorType& type);
  // Side, rank and type of every leaf, in id order (not the ref or name: the renaming).
  void AddLeaves(const LeafTable& leaves);
  const std::string& bytes() const { return bytes_; }
  friend bool operator==(const LocalProblemKey& a, const LocalProblemKey& b) = default;

 private:
  std::string bytes_;
};

// What the saturation and extraction of one local problem gave, in leaf ids and reason ids of its
// e-graph: instantiated in any e-graph with the same key (InstantiateProof, and the terms read
// against that e-graph's own LeafTable).
struct LocalSolution {
  StopReason stop = StopReason::kSaturated;
  size_t iterations = 0;
  size_t egraph_nodes = 0;
  size_t egraph_classes = 0;
  struct Output {
    std::optional<std::string> conflict;  // the class's conflict reason (it stops the outputs)
    bool found = false;                   // a clean expression was extracted
    // The relations' terms (the cheapest clean one, then every D leaf of the class) that convert
    // to relation expressions, and the explanation of each from the S leaf.
    std::vector<RecExpr> terms;
    std::vector<std::vector<ProofRun>> proofs;
  };
  std::vector<Output> outputs;  // one per wanted output, in order, up to a conflict
  // Reasons interned after the key was taken (by the rules: lemma ids), whose ids follow
  // first_late_reason; those before are the seeding's and are named by each e-graph.
  ReasonId first_late_reason = 0;
  std::vector<std::string> late_reasons;
};

// A proof's reason names in `graph` (the e-graph of the problem being answered), consecutive
// repeats merged, " (reversed)" for a step used against its direction.
std::vector<std::string> InstantiateProof(const std::vector<ProofRun>& runs, const EGraph& graph,
                                          const LocalSolution& solution);

class LocalProblemCache {
 public:
  // The solution stored under a key equal to `key`, or nullptr.
  const LocalSolution* Find(const LocalProblemKey& key) const;
  const LocalSolution& Insert(const LocalProblemKey& key, LocalSolution solution);
  size_t size() const { return entries_.size(); }

 private:
  std::unordered_map<std::string, LocalSolution> entries_;  // key bytes -> solution
};

}  // namespace gg::symbolic
