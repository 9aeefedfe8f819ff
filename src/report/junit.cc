// JUnit XML reports of verify and check (junit.h; the choices in docs/report-format.md).
#include "report/junit.h"

#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "report/finding.h"
#include "report/sarif.h"

namespace gg::report {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence XML 1.0 can hold at text[i], or 0.
size_t XmlCharLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return c >= 0x20 || c == '\t' || c == '\n' || c == '\r' ? 1 : 0;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  // U+FFFE and U+FFFF are not XML characters.
  if (n == 3 && c == 0xEF && byte(i + 1) == 0xBF && byte(i + 2) >= 0xBE) return 0;
  return n;
}

std::string Seconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", seconds);
  return buffer;
}

// A small indenting XML writer: elements with attributes and optional text.
class Xml {
 public:
  Xml() { out_ << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"; }
  using Attributes = std::vector<std::pair<std::string, std::string>>;
  void Open(const std::string& tag, const Attributes& attributes) {
    out_ << Indent() << "<" << tag << Attrs(attributes) << ">\n";
    open_.push_back(tag);
  }
  void Close() {
    std::string tag = open_.back();
    open_.pop_back();
    out_ << Indent() << "</" << tag << ">\n";
  }
  void Empty(const std::string& tag, const Attributes& attributes) {
    out_ << Indent() << "<" << tag << Attrs(attributes) << "/>\n";
  }
  void WithText(const std::string& tag, const Attributes& attributes, const std::string& text) {
    out_ << Indent() << "<" << tag << Attrs(attributes) << ">" << XmlEscape(text, false) << "</"
         << tag << ">\n";
  }
  std::string str() const { return out_.str(); }

 private:
  std::string Indent() const { return std::string(2 * open_.size(), ' '); }
  static std::string Attrs(const Attributes& attributes) {
    std::string text;
    for (const auto& [name, value] : attributes) {
      text += " " + name + "=\"" + XmlEscape(value, true) + "\"";
    }
    return text;
  }
  std::ostringstream out_;
  std::vector<std::string> open_;
};

// One test case: passed, failed (with the evidence) or in error (could not be decided).
struct Case {
  std::string classname;
  std::string name;
  std::optional<double> seconds;
  enum class Outcome { kPass, kFailure, kError } outcome = Outcome::kPass;
  std::string type;     // the rule id
  std::string message;  // one line
  std::string body;     // the evidence or the cause, in full
};

struct Suite {
  std::string name;
  std::vector<std::pair<std::string, std::string>> properties;
  std::vector<Case> cases;
  std::optional<double> seconds;
};

std::string Write(const Suite& suite) {
  size_t failures = 0, errors = 0;
  for (const Case& c : suite.cases) {
    failures += c.outcome == Case::Outcome::kFailure;
    errors += c.outcome == Case::Outcome::kError;
  }
  Xml::Attributes counts = {{"name", suite.name},
                            {"tests", std::to_string(suite.cases.size())},
                            {"failures", std::to_string(failures)},
                            {"errors", std::to_string(errors)},
                            {"skipped", "0"}};
  if (suite.seconds) counts.emplace_back("time", Seconds(*suite.seconds));
  Xml xml;
  xml.Open("testsuites", counts);
  xml.Open("testsuite", counts);
  if (!suite.properties.empty()) {
    xml.Open("properties", {});
    for (const auto& [name, value] : suite.properties) {
      xml.Empty("property", {{"name", name}, {"value", value}});
    }
    xml.Close();
  }
  for (const Case& c : suite.cases) {
    Xml::Attributes attributes = {{"classname", c.classname}, {"name", c.name}};
    if (c.seconds) attributes.emplace_back("time", Seconds(*c.seconds));
    if (c.outcome == Case::Outcome::kPass) {
      xml.Empty("testcase", attributes);
      continue;
    }
    xml.Open("testcase", attributes);
    xml.WithText(c.outcome == Case::Outcome::kFailure ? "failure" : "error",
                 {{"type", c.type}, {"message", c.message}}, c.body);
    xml.Close();
  }
  xml.Close();
  xml.Close();
  return xml.str();
}

std::string Joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : " ") + item;
  return text;
}

// The counterexample of `relation` among the evidence's ("y == y@0: max |S-D| ..."), or "".
std::string CounterexampleOf(const std::vector<std::string>& counterexamples,
                             const std::string& relation) {
  for (const std::string& c : counterexamples) {
    if (c.rfind(relation + ": ", 0) == 0) return c;
  }
  return "";
}

}  // namespace

std::string XmlEscape(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = XmlCharLength(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    char c = text[i++];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += attribute ? "&quot;" : "\"";
        break;
      case '\'':
        out += attribute ? "&apos;" : "'";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += "&#13;";  // a literal CR would be normalized away in text too
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string VerifyJunit(const symbolic::VerifyResult& result, const ir::Graph& s_graph,
                        const VerifyRunInfo& info) {
  Suite suite;
  suite.name = "graphguard verify";
  const std::string verdict(symbolic::VerdictName(result.verdict));
  suite.properties.emplace_back("verdict", verdict);
  if (result.unknown_cause != symbolic::UnknownCause::kNone) {
    suite.properties.emplace_back("unknown_cause",
                                  std::string(symbolic::UnknownCauseName(result.unknown_cause)));
  }
  suite.properties.emplace_back("verdict_line", VerdictLine(result));
  suite.properties.emplace_back("seq", info.seq);
  suite.properties.emplace_back("dist", Joined(info.dist));
  suite.properties.emplace_back("relations", info.relations);
  for (const symbolic::Premise& p : result.premises) {
    suite.properties.emplace_back("premise", p.kind + " " + p.text + " [" + p.origin + "]");
  }
  if (info.timing) suite.seconds = result.seconds;

  std::optional<VerifyFinding> finding = FindingOf(result, s_graph);
  const std::string where =
      finding ? "\n\nwhere the proof stopped\n" + FindingText(*finding, 8, false) : "";
  // Seconds of each examined S operator's search, by S node.
  std::map<ir::NodeId, double> node_seconds;
  for (const symbolic::NodeOutcome& n : result.nodes) node_seconds[n.s_node] = n.seconds;
  // With numeric evidence that names no output (D failed where S runs), every output the proof
  // did not show fails with it.
  bool names_an_output = false;
  if (result.evidence) {
    for (const symbolic::OutputCheck& c : result.outputs) {
      std::string rel = symbolic::RelationToString(c.expected, s_graph);
      names_an_output =
          names_an_output || !CounterexampleOf(result.evidence->counterexamples, rel).empty();
    }
  }
  bool any_not_passed = false;
  for (const symbolic::OutputCheck& c : result.outputs) {
    Case tc;
    tc.classname = "graphguard.verify";
    tc.name = symbolic::RelationToString(c.expected, s_graph);
    if (info.timing) {
      auto it = node_seconds.find(c.expected.s_tensor.node);
      if (it != node_seconds.end()) tc.seconds = it->second;
    }
    if (!c.implied) {
      any_not_passed = true;
      std::string head = "expected output " + tc.name + " (" + c.expected.origin + ")\n" +
                         (c.detail.empty() ? "not shown" : c.detail);
      std::string counterexample =
          result.evidence ? CounterexampleOf(result.evidence->counterexamples, tc.name) : "";
      bool refuted = result.verdict == symbolic::Verdict::kViolation &&
                     (!counterexample.empty() || !names_an_output);
      if (refuted) {
        tc.outcome = Case::Outcome::kFailure;
        tc.type = kRuleViolation;
        tc.message = "VIOLATION: " + (counterexample.empty() ? result.summary : counterexample);
      } else {
        tc.outcome = Case::Outcome::kError;
        tc.type = VerdictRuleId(result);
        if (tc.type.empty() || tc.type == kRuleViolation) {
          // Not shown, yet not contradicted: this output is undecided although another fails.
          tc.type = std::string(kRuleUnknownPrefix) +
                    (result.unknown_cause == symbolic::UnknownCause::kNone
                         ? "no-relation"
                         : std::string(symbolic::UnknownCauseName(result.unknown_cause)));
        }
        tc.message = "UNKNOWN (" + tc.type.substr(std::string(kRuleUnknownPrefix).size()) +
                     "): " + (c.detail.empty() ? result.summary : c.detail);
      }
      tc.body = head + where;
    }
    suite.cases.push_back(std::move(tc));
  }
  if (finding && !any_not_passed) {
    // Every output passes, yet the verdict is not REFINES: the deciding operator is the case.
    Case tc;
    tc.classname = "graphguard.verify";
    tc.name = "verdict";
    tc.outcome = result.verdict == symbolic::Verdict::kViolation ? Case::Outcome::kFailure
                                                                 : Case::Outcome::kError;
    tc.type = finding->rule_id;
    tc.message = finding->verdict_line;
    tc.body = FindingText(*finding);
    suite.cases.push_back(std::move(tc));
  }
  return Write(suite);
}

std::string CheckJunit(const CheckSummary& s) {
  Suite suite;
  suite.name = "graphguard check";
  suite.properties = {{"outcome", s.outcome},         {"seed", std::to_string(s.seed)},
                      {"random", s.random_mode},      {"device", s.device},
                      {"collectives", s.collectives}, {"seq", s.seq},
                      {"dist", Joined(s.dist)},       {"relations", s.relations_file}};
  if (s.timing) suite.seconds = s.seconds;
  if (!s.d_failure.empty()) {
    Case tc;
    tc.classname = "graphguard.check";
    tc.name = "D runs on the inputs S runs on";
    tc.outcome = Case::Outcome::kFailure;
    tc.type = kRuleCheckDFails;
    tc.message = "D fails to execute on inputs S runs on";
    tc.body = s.d_failure;
    suite.cases.push_back(std::move(tc));
  }
  for (const CheckedRelation& c : s.relations) {
    Case tc;
    tc.classname = "graphguard.check." + c.kind;
    tc.name = c.relation;
    std::string where =
        "S tensor " + c.s_tensor + " = " + c.s_operator + " (node " + c.s_node +
        (c.graph_line > 0 ? ", line " + std::to_string(c.graph_line) + " of " + s.s_graph_file
                          : "") +
        ")\nsource: " + (c.source.empty() ? std::string("(not recorded)") : c.source.ToString()) +
        (c.source.code.empty() ? "" : "\ncode: " + c.source.code) +
        (c.first_failure ? "\nthe first failing relation in S's topological order" : "");
    if (c.status == CheckedRelation::Status::kFails) {
      tc.outcome = Case::Outcome::kFailure;
      tc.type = kRuleCheckFails;
      tc.message = c.figures;
      tc.body = c.relation + " [" + c.kind + "] does not hold: " + c.figures + "\n" + where;
    } else if (c.status == CheckedRelation::Status::kNotEvaluated) {
      tc.outcome = Case::Outcome::kError;
      tc.type = kRuleCheckNotEvaluated;
      tc.message = "not evaluated: " + c.error;
      tc.body = c.relation + " [" + c.kind + "] could not be evaluated: " + c.error + "\n" + where;
    }
    suite.cases.push_back(std::move(tc));
  }
  return Write(suite);
}

}  // namespace gg::report
