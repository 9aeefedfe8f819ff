// LemmaSelfTest: the numeric self-test of one lemma. For each of its signatures (the `# test`
// lines of lemma_catalogue.h) and several draws (world sizes, uneven pieces): build the LHS
// instance, apply the lemma (rule or applier) once, then evaluate every node of every class on
// random float64 tensors (term_eval.h); all nodes of a class must agree. A false lemma merges
// classes whose nodes differ. The catalogue's test runs it on every lemma; the CLI on the lemmas
// of a user's `--lemmas FILE` before using them.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>

#include "symbolic/lemma_catalogue.h"

namespace gg::runtime {

// Runs every signature of `lemma` with seeds 0..seeds-1. A malformed signature throws
// gg::InputError naming the lemma's file and line (RunLemmaSelfTest).
symbolic::LemmaSelfTestReport SelfTestLemma(const symbolic::Lemma& lemma, uint64_t seeds = 4);

// The random leaf tensors of one self-test case (float64, masks, indices in their bounds, and
// `leaf TERM` values computed from the leaves before them), drawn from `seed`.
std::map<int64_t, at::Tensor> MakeSelfTestLeaves(const symbolic::SelfTestCase& c, uint64_t seed);

}  // namespace gg::runtime
