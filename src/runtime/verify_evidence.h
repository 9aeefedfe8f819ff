// Verify evidence: the numeric evidence `graphguard verify` asks for when the symbolic engine
// leaves a verdict UNKNOWN (symbolic::NumericEvidence, ApplyNumericEvidence): the check of the
// spec's expected outputs on one seed (check.h), with the S tensors where the proof stopped
// classified by fingerprints (fingerprint_match.h). An expected output whose worst element is
// symbolic::kDecisiveExcess times its tolerance or more, or that fails in more than
// symbolic::kMarginalElements elements (or by NaN on one side), or D failing where S runs, is a
// counterexample; a narrow and small excess is only reported (marginal); an assumed relation of
// the spec that fails numerically leaves no evidence (error). A match of the stopping tensor
// points at a missing lemma.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "symbolic/hints.h"
#include "symbolic/inference.h"
#include "symbolic/relation_spec.h"

namespace gg::runtime {

// Runs the check on the CPU; a check that cannot run is reported in the evidence's error, never
// thrown. With `s_inputs` (S's inputs in signature order, e.g. the values graphs with
// value-dependent shapes were traced with; `source` says where they came from) S runs on those,
// not on inputs drawn from `seed`, and D on inputs derived from them through the spec.
symbolic::NumericEvidence GatherVerifyEvidence(const ir::Graph& s_graph,
                                               const ir::Program& d_program,
                                               const symbolic::SpecResult& spec,
                                               const symbolic::VerifyResult& verify, uint64_t seed,
                                               const std::vector<at::Tensor>* s_inputs = nullptr,
                                               const std::string& source = "");

// The guidance of `verify --guided`: the same check run with every S operator output
// fingerprinted, and every holding fingerprint match (fingerprint_match.h) of each. A run that
// cannot run says why in the guide's error, never thrown.
symbolic::NumericGuide GatherNumericGuide(const ir::Graph& s_graph, const ir::Program& d_program,
                                          const symbolic::SpecResult& spec, uint64_t seed);

}  // namespace gg::runtime
