// Rewrite rules as data, the rule-file loader, and the equality-saturation Runner.
//
// A rule is `id: LHS => RHS [if condition]` (one per line, `#` comments); `<=>` also generates
// the reverse rule `id-rev`. Side conditions and the rare computed right-hand sides (`=> @name`,
// an "applier") are C++ functions registered by name. The Runner applies rules in rounds
// (search all, apply all, rebuild) until saturation, a goal or an explicit limit, with egg's
// BackoffScheduler banning rules whose matches explode; everything is deterministic. With a goal,
// a round applies the matches in the goal's classes first and checks the goal after them and
// after each rule, so the round that meets it stops there instead of growing the whole graph.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "symbolic/egraph.h"
#include "symbolic/pattern.h"

namespace gg::symbolic {

// Read access to one match's variables by name (with or without the leading '?').
class Bindings {
 public:
  Bindings(const Pattern& lhs, const Match& match) : lhs_(&lhs), match_(&match) {}
  // Throws std::out_of_range when the LHS has no such class variable.
  ClassId Var(std::string_view name) const;
  const std::vector<ClassId>& List(std::string_view name) const;
  const Match& match() const { return *match_; }

 private:
  uint32_t Index(std::string_view name, bool list) const;
  const Pattern* lhs_;
  const Match* match_;
};

// A side condition: must hold for the match to be applied.
using Condition = std::function<bool(const EGraph&, const Bindings&)>;
// A computed right-hand side: returns the class (or node id) equal to the match, or nullopt to
// skip the match. May add nodes and union classes itself; the Runner counts either as a change
// (it compares node and class counts), so an applier that only unions is never "saturated".
using Applier = std::function<std::optional<ClassId>(EGraph&, const Bindings&)>;

template <class Fn>
class NamedTable {
 public:
  void Add(std::string name, Fn fn) { table_[std::move(name)] = std::move(fn); }
  const Fn* Find(const std::string& name) const {
    auto it = table_.find(name);
    return it == table_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, Fn> table_;
};
using ConditionTable = NamedTable<Condition>;
using ApplierTable = NamedTable<Applier>;

struct Rewrite {
  std::string id;
  Pattern lhs;
  Pattern rhs;            // empty when `applier` is set
  std::string condition;  // name in the ConditionTable; empty = unconditional
  std::string applier;    // name in the ApplierTable; empty = instantiate `rhs`
  std::string file;       // where the rule was defined (for messages)
  int line = 0;
  Condition condition_fn;  // resolved at load
  Applier applier_fn;      // resolved at load
};

// What rules may refer to; the tables must outlive loading only (functions are copied).
struct RuleContext {
  const OpTable* ops = nullptr;
  const ConditionTable* conditions = nullptr;
  const ApplierTable* appliers = nullptr;
};

// Parses rule text; throws gg::InputError(file, line, ...) for malformed rules: unbalanced
// parentheses, unknown ops, unbound RHS variables, unknown condition or applier names, duplicate
// ids, and `<=>` rules whose reverse would have unbound variables or an unmatchable LHS.
std::vector<Rewrite> LoadRules(std::string_view text, const RuleContext& context,
                               const std::string& file = "<rules>");
std::vector<Rewrite> LoadRulesFile(const std::string& path, const RuleContext& context);
// One rule from its parts (`rhs` may be `@applier`); same checks as LoadRules.
Rewrite MakeRewrite(std::string id, std::string_view lhs, std::string_view rhs,
                    const RuleContext& context, std::string condition = "");

// egg's BackoffScheduler: when a rule's matches in one iteration exceed
// match_limit << times_banned, the rule is banned for ban_length << times_banned iterations.
class BackoffScheduler {
 public:
  explicit BackoffScheduler(size_t match_limit = 1000, size_t ban_length = 5)
      : match_limit_(match_limit), ban_length_(ban_length) {}
  void Resize(size_t num_rules) { rules_.resize(num_rules); }
  bool IsBanned(size_t rule, size_t iteration) const {
    return rules_[rule].banned_until > iteration;
  }
  size_t Threshold(size_t rule) const { return match_limit_ << rules_[rule].times_banned; }
  // Reports `matches` found (searched with limit Threshold()+1); returns false (and bans the
  // rule) when they exceed the threshold.
  bool Admit(size_t rule, size_t iteration, size_t matches);
  bool AnyBanned(size_t iteration) const;
  void UnbanAll();
  size_t TimesBanned(size_t rule) const { return rules_[rule].times_banned; }

 private:
  struct RuleState {
    size_t times_banned = 0;
    size_t banned_until = 0;
  };
  size_t match_limit_;
  size_t ban_length_;
  std::vector<RuleState> rules_;
};

enum class StopReason { kSaturated, kIterationLimit, kNodeLimit, kTimeLimit, kGoalReached };
std::string_view StopReasonName(StopReason reason);

struct RunnerLimits {
  size_t iterations = 30;
  size_t nodes = 10000;
  std::chrono::duration<double> time = std::chrono::seconds(5);
  size_t matches_per_rule = 0;  // per rule and iteration; 0 = unlimited
};

struct RuleStats {
  std::string id;
  size_t matches = 0;       // matches found (after scheduling)
  size_t applied = 0;       // applications that changed the graph
  size_t times_banned = 0;  // by the scheduler
  size_t nodes_added = 0;   // e-nodes its applications added (duplicates merged later included)
};

struct RunReport {
  StopReason stop = StopReason::kSaturated;
  size_t iterations = 0;
  size_t nodes = 0;
  size_t classes = 0;
  double seconds = 0;
  size_t start_nodes = 0;                   // before the first iteration
  std::vector<size_t> nodes_per_iteration;  // after each iteration (for lemma authors)
  std::vector<RuleStats> rules;
  // The stop, the iterations, the e-nodes by iteration and each rule that applied (matches,
  // applications, e-nodes added), with no times, so deterministic (what --dump-egraph prints).
  std::string WorkText() const;
  std::string ToString() const;  // multi-line, with counts and seconds; every rule, in rule order
};

class Runner {
 public:
  Runner(EGraph& graph, const std::vector<Rewrite>& rules, RunnerLimits limits = {});
  // Replaces the default BackoffScheduler (nullopt: every rule applies every match).
  Runner& WithScheduler(std::optional<BackoffScheduler> scheduler);
  // Stops with kGoalReached when `goal` holds after an iteration.
  Runner& WithGoal(std::function<bool(const EGraph&)> goal);
  // Classes the goal is about: each iteration applies the matches rooted in them first and
  // checks the goal before applying the rest.
  Runner& WithGoalClasses(std::vector<ClassId> classes);
  RunReport Run();

 private:
  EGraph& graph_;
  const std::vector<Rewrite>& rules_;
  RunnerLimits limits_;
  std::optional<BackoffScheduler> scheduler_ = BackoffScheduler();
  std::function<bool(const EGraph&)> goal_;
  std::set<ClassId> goal_classes_;
};

}  // namespace gg::symbolic
