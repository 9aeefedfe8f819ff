#include "cli/user_lemmas.h"

#include <set>

#include "util/diagnostic.h"
#include "util/read_file.h"

namespace gg::cli {
namespace {

LemmaSelfTester& Tester() {
  static LemmaSelfTester tester;
  return tester;
}

// The lemma id a proof step names ("mm-concat-inner", or "mm-concat-inner (reversed)" where the
// explanation walks the union backwards).
std::string StepId(const std::string& step) {
  const std::string reversed = " (reversed)";
  if (step.size() > reversed.size() &&
      step.compare(step.size() - reversed.size(), reversed.size(), reversed) == 0) {
    return step.substr(0, step.size() - reversed.size());
  }
  return step;
}

}  // namespace

void SetLemmaSelfTester(LemmaSelfTester tester) { Tester() = std::move(tester); }

UserLemmas LoadUserLemmas(const std::vector<std::string>& paths,
                          const std::vector<symbolic::LemmaFile>& proposed) {
  UserLemmas user;
  if (paths.empty() && proposed.empty()) return user;
  std::vector<symbolic::LemmaFile> files;
  for (const std::string& path : paths) files.push_back({path, ReadInputFile(path, "lemma file")});
  files.insert(files.end(), proposed.begin(), proposed.end());
  // Malformed rules and ids repeated between the user's files: file:line from the loader.
  user.catalogue = symbolic::LemmaCatalogue::Load(files);
  const symbolic::LemmaCatalogue& catalogue = symbolic::LemmaCatalogue::Default();
  for (const symbolic::Lemma& lemma : user.catalogue.lemmas()) {
    const symbolic::Rewrite& rule = lemma.rule;
    if (const symbolic::Lemma* known = catalogue.Find(rule.id)) {
      throw InputError(rule.file, rule.line,
                       "lemma id '" + rule.id + "' is already in the catalogue (" + known->family +
                           ".rules:" + std::to_string(known->rule.line) +
                           "); give the user lemma another id");
    }
    if (lemma.tests.empty()) {
      throw InputError(rule.file, rule.line,
                       "lemma '" + rule.id +
                           "' has no self-test signature: add a line '#   test ?x: [a, b]; ...' "
                           "below the rule binding its variables (docs/lemmas.md), so it can be "
                           "checked numerically before it is used");
    }
  }
  for (const symbolic::LemmaFile& file : proposed) {
    for (const symbolic::Lemma& lemma : user.catalogue.lemmas()) {
      if (lemma.rule.file == file.name) user.proposed.insert(lemma.rule.id);
    }
  }
  for (const symbolic::Lemma& lemma : user.catalogue.lemmas()) {
    const symbolic::Rewrite& rule = lemma.rule;
    if (!Tester()) {
      user.checked[rule.id] = "not self-tested: this build has no numeric runtime";
      continue;
    }
    symbolic::LemmaSelfTestReport report = Tester()(lemma);
    if (!report.failures.empty()) {
      throw InputError(
          rule.file, rule.line,
          "lemma '" + rule.id + "' fails its numeric self-test: " + report.failures.front() +
              (report.failures.size() > 1
                   ? " (and " + std::to_string(report.failures.size() - 1) + " more problems)"
                   : "") +
              "; fix the rule or its signature, or remove it");
    }
    user.checked[rule.id] = "self-tested: " + std::to_string(report.draws) + " draws, " +
                            std::to_string(report.compared) + " e-nodes compared";
  }
  return user;
}

std::vector<symbolic::Rewrite> UserLemmas::RulesWithCatalogue() const {
  std::vector<symbolic::Rewrite> rules = symbolic::LemmaCatalogue::Default().Rules();
  std::vector<symbolic::Rewrite> mine = catalogue.Rules();
  rules.insert(rules.end(), mine.begin(), mine.end());
  return rules;
}

void UserLemmas::AddPremises(symbolic::VerifyResult* result) const {
  if (empty()) return;
  std::set<std::string> used;
  auto scan = [&](const std::vector<std::string>& proof) {
    for (const std::string& step : proof) {
      std::string id = StepId(step);
      if (checked.count(id)) used.insert(id);
    }
  };
  // Every relation inference kept (inputs, assumptions, inferred) and the outputs' proofs.
  for (const symbolic::OutputCheck& output : result->outputs) scan(output.proof);
  for (const auto& [name, rels] : result->relations) {
    for (const symbolic::InferredRelation& rel : rels) scan(rel.proof);
  }
  std::vector<symbolic::Premise> premises;
  for (const std::string& id : used) {
    const symbolic::Lemma* lemma = catalogue.Find(id);
    // A proposed lemma exists nowhere else: the premise carries its rule.
    const std::string what = proposed.count(id)
                                 ? id + " proposed from the numeric run (" + checked.at(id) +
                                       "): " + lemma->rule.lhs.text + " => " + lemma->rule.rhs.text
                                 : id + " from --lemmas (" + checked.at(id) + ")";
    premises.push_back({"lemma", what, lemma->rule.file + ":" + std::to_string(lemma->rule.line)});
  }
  symbolic::AddPremises(result, premises);
}

}  // namespace gg::cli
