// UserLemmas: lemma files a user passes with `--lemmas FILE` (the catalogue's rule syntax,
// docs/lemmas.md). Each lemma needs a self-test signature and is self-tested numerically at
// load when this build has the numeric runtime (a false one is refused with its file:line and
// the counterexample); a verdict whose proofs use one lists it as a premise, since random
// testing is evidence, not proof, until the lemma joins the catalogue with its test.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "symbolic/inference.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/rewrite.h"

namespace gg::cli {

// Runs one lemma's numeric self-test (runtime/lemma_selftest.h, through the runtime plugin).
using LemmaSelfTester = std::function<symbolic::LemmaSelfTestReport(const symbolic::Lemma&)>;
// Set by a build with the numeric runtime (UseRuntimePlugin); unset, user lemmas load untested.
void SetLemmaSelfTester(LemmaSelfTester tester);

struct UserLemmas {
  symbolic::LemmaCatalogue catalogue;          // the user's lemmas only
  std::map<std::string, std::string> checked;  // lemma id -> how it was checked, for premises
  std::set<std::string> proposed;              // ids from `proposed` files (--accept-proposed)

  bool empty() const { return catalogue.lemmas().empty(); }
  // The catalogue's rules followed by the user's.
  std::vector<symbolic::Rewrite> RulesWithCatalogue() const;
  // A premise (kind "lemma") for each user lemma a proof in `result` used.
  void AddPremises(symbolic::VerifyResult* result) const;
};

// Loads `paths` (empty: no user lemmas). Throws gg::InputError with the file and line for a
// malformed rule, an id the catalogue (or another user file) has, a lemma without a self-test
// signature, and (when a tester is set) a lemma its self-test refutes.
// `proposed` are rule files made by verify from a numeric run (--accept-proposed), loaded and
// checked the same way; their premises say so.
UserLemmas LoadUserLemmas(const std::vector<std::string>& paths,
                          const std::vector<symbolic::LemmaFile>& proposed = {});

}  // namespace gg::cli
