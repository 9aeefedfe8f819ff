// Rule loading (text -> Rewrite), the BackoffScheduler and the saturation Runner.
#include "symbolic/rewrite.h"

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "util/diagnostic.h"

namespace gg::symbolic {

// ---- Bindings --------------------------------------------------------------------------------

uint32_t Bindings::Index(std::string_view name, bool list) const {
  if (!name.empty() && name[0] == '?') name.remove_prefix(1);
  std::optional<uint32_t> index = lhs_->VarIndex(name);
  if (!index || lhs_->var_is_list[*index] != list) {
    throw std::out_of_range("no " + std::string(list ? "list " : "") + "variable ?" +
                            std::string(name) + " in " + lhs_->text);
  }
  return *index;
}

ClassId Bindings::Var(std::string_view name) const {
  return match_->subst.vars[Index(name, false)];
}

const std::vector<ClassId>& Bindings::List(std::string_view name) const {
  return match_->subst.lists[Index(name, true)];
}

// ---- loading ---------------------------------------------------------------------------------

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-' || c == '.';
}

bool IsName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

Rewrite BuildRule(std::string id, std::string_view lhs_text, std::string_view rhs_text,
                  std::string condition, const RuleContext& context, const std::string& file,
                  int line) {
  if (context.ops == nullptr) throw std::invalid_argument("RuleContext without an OpTable");
  if (!IsName(id)) throw InputError(file, line, "bad rule id '" + id + "'");
  Rewrite rule;
  rule.id = std::move(id);
  rule.file = file;
  rule.line = line;
  rule.lhs = ParseLhs(Trim(lhs_text), *context.ops, file, line);
  rhs_text = Trim(rhs_text);
  if (!rhs_text.empty() && rhs_text[0] == '@') {
    rule.applier = std::string(rhs_text.substr(1));
    const Applier* fn = context.appliers ? context.appliers->Find(rule.applier) : nullptr;
    if (fn == nullptr) throw InputError(file, line, "unknown applier '@" + rule.applier + "'");
    rule.applier_fn = *fn;
  } else {
    rule.rhs = ParseRhs(rhs_text, rule.lhs, *context.ops, file, line);
  }
  rule.condition = std::move(condition);
  if (!rule.condition.empty()) {
    const Condition* fn = context.conditions ? context.conditions->Find(rule.condition) : nullptr;
    if (fn == nullptr) throw InputError(file, line, "unknown condition '" + rule.condition + "'");
    rule.condition_fn = *fn;
  }
  return rule;
}

// Position of `token` in `s` outside parentheses, or npos.
size_t FindTopLevel(std::string_view s, std::string_view token, size_t from = 0) {
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
    if (i >= from && depth == 0 && s.substr(i, token.size()) == token) return i;
  }
  return std::string_view::npos;
}

// Position of the word `if` (whitespace around it) outside parentheses, or npos.
size_t FindIf(std::string_view s) {
  for (size_t at = FindTopLevel(s, "if"); at != std::string_view::npos;
       at = FindTopLevel(s, "if", at + 1)) {
    bool before = at > 0 && (s[at - 1] == ' ' || s[at - 1] == '\t' || s[at - 1] == ')');
    bool after = at + 2 == s.size() || s[at + 2] == ' ' || s[at + 2] == '\t';
    if (before && after) return at;
  }
  return std::string_view::npos;
}

}  // namespace

Rewrite MakeRewrite(std::string id, std::string_view lhs, std::string_view rhs,
                    const RuleContext& context, std::string condition) {
  return BuildRule(std::move(id), lhs, rhs, std::move(condition), context, "", 0);
}

std::vector<Rewrite> LoadRules(std::string_view text, const RuleContext& context,
                               const std::string& file) {
  std::vector<Rewrite> rules;
  std::set<std::string> ids;
  auto add = [&](Rewrite rule) {
    if (!ids.insert(rule.id).second) {
      throw InputError(file, rule.line, "duplicate rule id '" + rule.id + "'");
    }
    rules.push_back(std::move(rule));
  };
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;

    size_t colon = line.find(':');
    std::string_view id = colon == std::string_view::npos ? "" : Trim(line.substr(0, colon));
    if (!IsName(id)) {
      throw InputError(file, line_no, "expected 'id: LHS => RHS [if condition]'");
    }
    std::string_view body = line.substr(colon + 1);
    int depth = 0;
    for (char ch : body) {
      depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
      if (depth < 0) break;
    }
    if (depth != 0) throw InputError(file, line_no, "unbalanced parentheses");
    bool both_ways = false;
    size_t arrow = FindTopLevel(body, "<=>");
    size_t arrow_len = 3;
    if (arrow != std::string_view::npos) {
      both_ways = true;
    } else {
      arrow = FindTopLevel(body, "=>");
      arrow_len = 2;
    }
    if (arrow == std::string_view::npos) {
      throw InputError(file, line_no, "rule '" + std::string(id) + "' has no '=>' or '<=>'");
    }
    std::string_view lhs = Trim(body.substr(0, arrow));
    std::string_view rhs = Trim(body.substr(arrow + arrow_len));
    std::string condition;
    if (size_t at = FindIf(rhs); at != std::string_view::npos) {
      condition = std::string(Trim(rhs.substr(at + 2)));
      rhs = Trim(rhs.substr(0, at));
      if (!IsName(condition)) {
        throw InputError(file, line_no, "bad condition name '" + condition + "'");
      }
    }
    if (lhs.empty() || rhs.empty()) {
      throw InputError(file, line_no, "rule '" + std::string(id) + "' has an empty side");
    }
    add(BuildRule(std::string(id), lhs, rhs, condition, context, file, line_no));
    if (both_ways) {
      if (rhs[0] == '@') {
        throw InputError(file, line_no, "rule '" + std::string(id) + "' with an applier "
                                        "cannot be bidirectional");
      }
      // The reverse is generated from the same text, so the two directions cannot drift apart.
      try {
        add(BuildRule(std::string(id) + "-rev", rhs, lhs, condition, context, file, line_no));
      } catch (const InputError& e) {
        if (e.problem().starts_with("duplicate")) throw;
        throw InputError(file, line_no,
                         "rule '" + std::string(id) + "' cannot be reversed: " + e.problem());
      }
    }
  }
  return rules;
}

std::vector<Rewrite> LoadRulesFile(const std::string& path, const RuleContext& context) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open rule file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return LoadRules(buffer.str(), context, path);
}

// ---- scheduler -------------------------------------------------------------------------------

bool BackoffScheduler::Admit(size_t rule, size_t iteration, size_t matches) {
  RuleState& state = rules_[rule];
  if (matches <= Threshold(rule)) return true;
  state.banned_until = iteration + (ban_length_ << state.times_banned);
  ++state.times_banned;
  return false;
}

bool BackoffScheduler::AnyBanned(size_t iteration) const {
  for (const RuleState& state : rules_) {
    if (state.banned_until > iteration) return true;
  }
  return false;
}

void BackoffScheduler::UnbanAll() {
  for (RuleState& state : rules_) state.banned_until = 0;
}

// ---- runner ----------------------------------------------------------------------------------

std::string_view StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kSaturated:
      return "saturated";
    case StopReason::kIterationLimit:
      return "iteration limit";
    case StopReason::kNodeLimit:
      return "node limit";
    case StopReason::kTimeLimit:
      return "time limit";
    case StopReason::kGoalReached:
      return "goal reached";
  }
  return "?";
}

namespace {

// "  id: matches M, applied A, added N e-nodes" (the rule's work over the run).
void AppendRuleWork(std::ostringstream& out, const RuleStats& r) {
  out << "  " << r.id << ": matches " << r.matches << ", applied " << r.applied << ", added "
      << r.nodes_added << " e-nodes";
}

}  // namespace

std::string RunReport::WorkText() const {
  std::ostringstream out;
  out << "stop: " << StopReasonName(stop) << "; iterations: " << iterations
      << "; e-nodes by iteration: " << start_nodes;
  for (size_t n : nodes_per_iteration) out << " " << n;
  out << "\n";
  for (const RuleStats& r : rules) {
    if (r.applied == 0) continue;
    AppendRuleWork(out, r);
    out << "\n";
  }
  return out.str();
}

std::string RunReport::ToString() const {
  std::ostringstream out;
  out << "stop: " << StopReasonName(stop) << "; iterations: " << iterations
      << "; nodes: " << nodes << "; classes: " << classes << "; seconds: " << seconds << "\n";
  out << "e-nodes by iteration: " << start_nodes;
  for (size_t n : nodes_per_iteration) out << " " << n;
  out << "\n";
  for (const RuleStats& r : rules) {
    AppendRuleWork(out, r);
    if (r.times_banned) out << ", banned " << r.times_banned << "x";
    out << "\n";
  }
  return out.str();
}

Runner::Runner(EGraph& graph, const std::vector<Rewrite>& rules, RunnerLimits limits)
    : graph_(graph), rules_(rules), limits_(limits) {}

Runner& Runner::WithScheduler(std::optional<BackoffScheduler> scheduler) {
  scheduler_ = std::move(scheduler);
  return *this;
}

Runner& Runner::WithGoal(std::function<bool(const EGraph&)> goal) {
  goal_ = std::move(goal);
  return *this;
}

Runner& Runner::WithGoalClasses(std::vector<ClassId> classes) {
  goal_classes_ = std::set<ClassId>(classes.begin(), classes.end());
  return *this;
}

RunReport Runner::Run() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  auto out_of_time = [&] { return Clock::now() - start > limits_.time; };

  RunReport report;
  std::vector<ReasonId> reasons;
  for (const Rewrite& rule : rules_) {
    reasons.push_back(graph_.InternReason(rule.id));
    report.rules.push_back(RuleStats{rule.id});
  }
  if (scheduler_) scheduler_->Resize(rules_.size());
  graph_.Rebuild();
  report.start_nodes = graph_.NumNodes();

  std::optional<StopReason> stop;
  std::vector<std::vector<Match>> matches(rules_.size());
  size_t iteration = 0;
  while (!stop) {
    if (iteration >= limits_.iterations) {
      stop = StopReason::kIterationLimit;
      break;
    }
    if (graph_.NumNodes() > limits_.nodes) {
      stop = StopReason::kNodeLimit;
      break;
    }
    if (out_of_time()) {
      stop = StopReason::kTimeLimit;
      break;
    }
    // Search every rule on the same (clean) graph.
    for (size_t i = 0; i < rules_.size() && !stop; ++i) {
      matches[i].clear();
      if (scheduler_ && scheduler_->IsBanned(i, iteration)) continue;
      size_t limit = static_cast<size_t>(-1);
      if (scheduler_) limit = scheduler_->Threshold(i) + 1;
      if (limits_.matches_per_rule) limit = std::min(limit, limits_.matches_per_rule);
      Search(graph_, rules_[i].lhs, limit, &matches[i]);
      if (scheduler_ && !scheduler_->Admit(i, iteration, matches[i].size())) {
        matches[i].clear();
        report.rules[i].times_banned = scheduler_->TimesBanned(i);
      }
      report.rules[i].matches += matches[i].size();
      if (out_of_time()) stop = StopReason::kTimeLimit;
    }
    // Apply all matches, then restore the invariants once. An applier may union classes itself
    // (and return the match's own class) without adding a node, so "changed" also watches the
    // class count: a Union always merges two live classes into one, and new classes only come
    // with new nodes, so equal node and class counts mean the graph is exactly as before.
    const size_t nodes_before = graph_.NumNodes();
    const size_t classes_before = graph_.NumClasses();
    bool changed = false;
    // Applies rule i's k-th match; false once a limit stops the iteration.
    auto apply = [&](size_t i, size_t k) {
      const Rewrite& rule = rules_[i];
      const Match& match = matches[i][k];
      Bindings bindings(rule.lhs, match);
      if (rule.condition_fn && !rule.condition_fn(graph_, bindings)) return true;
      const size_t nodes_seen = graph_.NumNodes();
      const size_t classes_seen = graph_.NumClasses();
      std::optional<ClassId> target = rule.applier_fn ? rule.applier_fn(graph_, bindings)
                                                      : Instantiate(graph_, rule.rhs, match.subst);
      // An applier's own unions and nodes (even when it then skips the match) count as this
      // rule changing the graph, as the runner's union does.
      const bool applier_changed =
          graph_.NumNodes() != nodes_seen || graph_.NumClasses() != classes_seen;
      if ((target && graph_.Union(match.node_id, *target, reasons[i])) || applier_changed) {
        ++report.rules[i].applied;
        changed = true;
      }
      report.rules[i].nodes_added += graph_.NumNodes() - nodes_seen;
      if (!target) return true;
      if (graph_.NumNodes() > limits_.nodes) {
        stop = StopReason::kNodeLimit;
        return false;
      }
      if ((k & 255) == 255 && out_of_time()) {
        stop = StopReason::kTimeLimit;
        return false;
      }
      return true;
    };
    // With goal classes, their matches go first and the goal is checked before the rest: the
    // iteration that reaches the goal often does so at the goal class, and the rest of it would
    // only grow the graph.
    std::vector<std::vector<bool>> at_goal(rules_.size());
    if (!goal_classes_.empty()) {
      std::set<ClassId> goal_now;
      for (ClassId c : goal_classes_) goal_now.insert(graph_.Find(c));
      for (size_t i = 0; i < rules_.size(); ++i) {
        at_goal[i].resize(matches[i].size());
        for (size_t k = 0; k < matches[i].size(); ++k) {
          at_goal[i][k] = goal_now.count(graph_.Find(matches[i][k].eclass)) != 0;
        }
      }
      for (size_t i = 0; i < rules_.size() && !stop; ++i) {
        for (size_t k = 0; k < matches[i].size() && !stop; ++k) {
          if (at_goal[i][k] && !apply(i, k)) break;
        }
      }
      if (!stop && changed) {
        graph_.Rebuild();
        if (goal_(graph_)) stop = StopReason::kGoalReached;
      }
    }
    // Then the rest, rule by rule; with a goal, it is checked after each rule that changed
    // the graph (a Rebuild each), so that the iteration stops where the goal is met.
    for (size_t i = 0; i < rules_.size() && !stop; ++i) {
      const size_t applied_before = report.rules[i].applied;
      for (size_t k = 0; k < matches[i].size(); ++k) {
        if (!at_goal[i].empty() && at_goal[i][k]) continue;
        if (!apply(i, k)) break;
      }
      if (goal_ && !stop && report.rules[i].applied != applied_before) {
        graph_.Rebuild();
        if (goal_(graph_)) stop = StopReason::kGoalReached;
      }
    }
    graph_.Rebuild();
    ++iteration;
    report.nodes_per_iteration.push_back(graph_.NumNodes());
    if (stop) break;
    if (goal_ && goal_(graph_)) {
      stop = StopReason::kGoalReached;
    } else if (!changed && graph_.NumNodes() == nodes_before &&
               graph_.NumClasses() == classes_before) {
      if (scheduler_ && scheduler_->AnyBanned(iteration)) {
        scheduler_->UnbanAll();  // only banned rules could still change something
      } else {
        stop = StopReason::kSaturated;
      }
    }
  }
  report.stop = *stop;
  report.iterations = iteration;
  report.nodes = graph_.NumNodes();
  report.classes = graph_.NumClasses();
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

}  // namespace gg::symbolic
