// Lemma proposals: when a proof stops at an S operator whose outputs equal, numerically, some
// expression over D tensors (fingerprint_match.h's classification), the lemma the catalogue likely
// lacks, written as a rule in the catalogue's syntax and kept only when it passes its numeric
// self-test (lemma_selftest.h).
//
//   LHS  the S operator's lowered term (symbolic/lowering.h) over the relation forms inference
//        knows for its inputs: `(mm (concat 1 x@0 x@1) (concat 0 w@0 w@1))`;
//   RHS  the matching D expression (`sum(y@0, y@1)`) with every D tensor that the inputs'
//        relations do not mention unfolded through its own lowered D definition (collectives
//        included): `(sumr (mm x@0 w@0) (mm x@1 w@1))`.
// Both are generalized to pattern variables: a concat or sum over ranks of one D tensor's
// per-rank values becomes a list variable (`?xs...`, and an RHS child repeated per rank becomes
// `(mm ?xs ?ys)...`), so the rule holds at any world size; otherwise each D tensor is one
// variable (`?a`), replicas of one S input one variable. The self-test signature comes from the
// shapes seen: equal sizes share a size symbol, the concat dimension of a list is drawn per
// element (`k*`). A candidate that fails its self-test (or cannot be written) is never returned.
// A proposal is evidence, not proof: `verify --accept-proposed` uses the survivors as user lemmas
// (cli/user_lemmas.h), listed as premises.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "symbolic/inference.h"
#include "symbolic/relation.h"
#include "symbolic/relation_spec.h"

namespace gg::runtime {

struct LemmaProposal {
  std::string id;       // "proposed-mm-1"
  std::string math;     // one comment line: where it came from
  std::string rule;     // "proposed-mm-1: (mm ...) => (sumr ...)"
  std::string test;     // the signature, after "#   test "
  std::string checked;  // "self-tested: 4 draws, 12 e-nodes compared"
  // The ready-to-paste block: "# math\n# checked\nrule\n#   test ...\n".
  std::string Text() const;
};

struct ProposalOptions {
  uint64_t seeds = 4;            // self-test draws per signature
  size_t max_input_choices = 4;  // combinations of the inputs' relation forms tried
  int32_t max_unfold_depth = 8;  // D definitions unfolded below a matched D tensor
  size_t max_proposals = 3;
};

// Proposals for S operator `s_node` (where the proof stopped), given what its tensor outputs
// equal numerically (`numeric`: S output -> a D expression that holds; several per output are
// tried in order) and the relations `verify` knows for its inputs. Self-tested; never throws for
// a candidate that cannot be built or tested (it is dropped).
std::vector<LemmaProposal> ProposeLemmas(
    const ir::Graph& s_graph, const ir::Program& d_program, const symbolic::SpecResult& spec,
    const symbolic::VerifyResult& verify, ir::NodeId s_node,
    const std::vector<std::pair<ir::TensorRef, symbolic::RelExpr>>& numeric,
    const ProposalOptions& options = {});

}  // namespace gg::runtime
