// Tests of rule loading, the Runner's stop reasons, the BackoffScheduler and explanations.
#include "symbolic/rewrite.h"

#include <gtest/gtest.h>

#include "symbolic/extract.h"
#include "symbolic/toy_language_testutil.h"
#include "util/diagnostic.h"

namespace gg::symbolic {
namespace {

using toy::Language;

struct Fixture {
  Language lang;
  ConditionTable conditions;
  ApplierTable appliers;
  RuleContext context{&lang.ops, &conditions, &appliers};
  Fixture() {
    // ?b's class does not contain the literal 0.
    conditions.Add("nonzero", [this](const EGraph& g, const Bindings& b) {
      for (const ENode& n : g.Nodes(b.Var("b"))) {
        if (n.op == lang.num && n.payload == 0) return false;
      }
      return true;
    });
    // Folds (add (num i) (num j)) into (num i+j): a RHS that needs arithmetic.
    appliers.Add("fold_add", [this](EGraph& g, const Bindings& b) -> std::optional<ClassId> {
      auto value = [&](ClassId c) -> std::optional<int64_t> {
        for (const ENode& n : g.Nodes(c)) {
          if (n.op == lang.num) return n.payload;
        }
        return std::nullopt;
      };
      auto x = value(b.Var("?x")), y = value(b.Var("?y"));
      if (!x || !y) return std::nullopt;
      return g.AddUncanonical(ENode{lang.num, *x + *y, {}});
    });
    // Unions ?x with ?y and returns the match's own class: a change made only by a union, with
    // no node added and no union left for the runner (like the lemma appliers that union a
    // piece with an existing slice).
    appliers.Add("union_args", [](EGraph& g, const Bindings& b) -> std::optional<ClassId> {
      g.Union(b.Var("x"), b.Var("y"));
      return b.match().eclass;
    });
  }
};

InputError LoadError(const Fixture& f, const std::string& text) {
  try {
    LoadRules(text, f.context, "rules.txt");
  } catch (const InputError& e) {
    return e;
  }
  return InputError("", -1, "no error");
}

TEST(RuleLoadTest, LoadsRulesCommentsConditionsAndReverses) {
  Fixture f;
  auto rules = LoadRules(
      "# arithmetic\n"
      "\n"
      "comm-add: (add ?a ?b) => (add ?b ?a)   # commutativity\n"
      "mul2:  (mul ?a 2) <=> (shl ?a 1)\n"
      "div-self: (div ?b ?b) => 1 if nonzero\n"
      "fold: (add ?x ?y) => @fold_add\n",
      f.context, "rules.txt");
  ASSERT_EQ(rules.size(), 5u);
  EXPECT_EQ(rules[0].id, "comm-add");
  EXPECT_EQ(rules[0].line, 3);
  EXPECT_EQ(rules[1].id, "mul2");
  EXPECT_EQ(rules[2].id, "mul2-rev");
  EXPECT_EQ(rules[2].lhs.ToString(f.lang.ops), "(shl ?a (num 1))");
  EXPECT_EQ(rules[2].rhs.ToString(f.lang.ops), "(mul ?a (num 2))");
  EXPECT_EQ(rules[3].condition, "nonzero");
  EXPECT_TRUE(static_cast<bool>(rules[3].condition_fn));
  EXPECT_EQ(rules[4].applier, "fold_add");
  EXPECT_TRUE(static_cast<bool>(rules[4].applier_fn));
}

TEST(RuleLoadTest, MalformedRulesNameFileAndLine) {
  Fixture f;
  struct Case {
    std::string text;
    int line;
    std::string problem;
  };
  std::vector<Case> cases = {
      {"ok: (add ?a ?b) => (add ?b ?a)\nbad: (add ?a (mul ?b ?c) => ?a\n", 2, "unbalanced"},
      {"# c\n\nbad: (frob ?a) => ?a\n", 3, "unknown op 'frob'"},
      {"bad: (neg ?a) => (add ?a ?z)\n", 1, "unbound variable ?z"},
      {"bad: (div ?a ?b) => 1 if sometimes\n", 1, "unknown condition 'sometimes'"},
      {"r: (neg ?a) => ?a\nr: (neg ?b) => ?b\n", 2, "duplicate rule id 'r'"},
      {"x: (neg ?a) => ?a\nx-rev: (add ?a 0) => ?a\nx: (neg ?a) <=> ?a\n", 3, "duplicate"},
      {"bad: (neg ?a) (neg ?b)\n", 1, "no '=>'"},
      {"(neg ?a) => ?a\n", 1, "expected 'id: LHS => RHS"},
      {"bad: (neg ?a) => @nope\n", 1, "unknown applier '@nope'"},
      {"bad: (mul ?a 0) <=> 0\n", 1, "cannot be reversed: unbound variable ?a"},
      {"bad: (neg ?a) <=> ?a\n", 1, "cannot be reversed: a left-hand side must be an op"},
      {"bad: (mm ?a (concat ?xs...)) <=> (concat (mm ?a ?xs)...)\n", 1,
       "cannot be reversed: repetition"},
  };
  for (const Case& c : cases) {
    InputError e = LoadError(f, c.text);
    EXPECT_EQ(e.line(), c.line) << c.text << " -> " << e.what();
    EXPECT_EQ(e.file(), "rules.txt") << c.text;
    EXPECT_NE(e.problem().find(c.problem), std::string::npos) << c.text << " -> " << e.what();
  }
}

TEST(RuleLoadTest, MissingFileIsAnInputError) {
  Fixture f;
  EXPECT_THROW(LoadRulesFile("/nonexistent/rules.txt", f.context), InputError);
}

TEST(RunnerTest, TerminatingRulesSaturate) {
  Fixture f;
  auto rules = LoadRules(
      "mul1: (mul ?a 1) => ?a\n"
      "add0: (add ?a 0) => ?a\n"
      "fold: (add ?x ?y) => @fold_add\n",
      f.context);
  EGraph g(f.lang.ops);
  ClassId e = g.AddExpr(ParseTerm("(add (mul x 1) (add (num 2) (num 3)))", f.lang.ops));
  ClassId e2 = g.AddExpr(ParseTerm("(add (mul (add y 0) 1) 0)", f.lang.ops));
  RunReport report = Runner(g, rules).Run();
  EXPECT_EQ(report.stop, StopReason::kSaturated) << report.ToString();
  EXPECT_EQ(g.LookupExpr(ParseTerm("(add x (num 5))", f.lang.ops)), g.Find(e));
  EXPECT_EQ(g.Lookup({f.lang.y, 0, {}}), g.Find(e2));
  EXPECT_GT(report.rules[0].applied, 0u);
  EXPECT_EQ(report.rules[2].applied, 1u);  // only (add 2 3) has two constants
  EXPECT_EQ(report.nodes, g.NumNodes());
  EXPECT_NE(report.ToString().find("saturated"), std::string::npos);
}

TEST(RunnerTest, ConditionsGateApplication) {
  Fixture f;
  auto rules = LoadRules("div-self: (div ?b ?b) => 1 if nonzero\n", f.context);
  EGraph g(f.lang.ops);
  ClassId dx = g.AddExpr(ParseTerm("(div x x)", f.lang.ops));
  ClassId d0 = g.AddExpr(ParseTerm("(div 0 0)", f.lang.ops));
  RunReport report = Runner(g, rules).Run();
  EXPECT_EQ(report.stop, StopReason::kSaturated);
  EXPECT_EQ(g.Lookup({f.lang.num, 1, {}}), g.Find(dx));
  EXPECT_NE(g.Lookup({f.lang.num, 1, {}}), g.Find(d0));
  EXPECT_EQ(report.rules[0].matches, 4u);  // 2 matches in each of 2 iterations
  EXPECT_EQ(report.rules[0].applied, 1u);
}

// Regression: the runner used to call an iteration that added no node "saturated" even when an
// applier had unioned classes, so rules that match only after the union never ran.
TEST(RunnerTest, UnionOnlyApplierIsAChangeNotSaturation) {
  Fixture f;
  {
    auto rules = LoadRules("merge: (mul ?x ?y) => @union_args\n", f.context);
    EGraph g(f.lang.ops);
    ClassId a = g.AddExpr(ParseTerm("a", f.lang.ops));
    ClassId b = g.AddExpr(ParseTerm("b", f.lang.ops));
    g.AddExpr(ParseTerm("(mul a b)", f.lang.ops));
    const size_t nodes = g.NumNodes(), classes = g.NumClasses();
    RunReport report = Runner(g, rules).Run();
    EXPECT_EQ(g.Find(a), g.Find(b));
    // No node was added, but two classes became one.
    EXPECT_EQ(report.nodes, nodes);
    EXPECT_EQ(report.classes, classes - 1);
    // Iteration 1 unions (a change); iteration 2 finds (mul a a), changes nothing, saturates.
    EXPECT_EQ(report.stop, StopReason::kSaturated) << report.ToString();
    EXPECT_EQ(report.iterations, 2u) << report.ToString();
    EXPECT_EQ(report.rules[0].applied, 1u) << report.ToString();  // the union, once
  }
  {
    // (div a b) is (div a a) only after the merge; div-self must get its turn.
    auto rules = LoadRules(
        "merge: (mul ?x ?y) => @union_args\n"
        "div-self: (div ?b ?b) => 1\n",
        f.context);
    EGraph g(f.lang.ops);
    g.AddExpr(ParseTerm("(mul a b)", f.lang.ops));
    ClassId d = g.AddExpr(ParseTerm("(div a b)", f.lang.ops));
    RunReport report = Runner(g, rules).Run();
    EXPECT_EQ(report.stop, StopReason::kSaturated) << report.ToString();
    EXPECT_EQ(g.Lookup({f.lang.num, 1, {}}), g.Find(d)) << report.ToString();
    // 1: merge unions a, b; 2: div-self adds 1 and unions; 3: nothing changes.
    EXPECT_EQ(report.iterations, 3u) << report.ToString();
    EXPECT_EQ(report.rules[1].applied, 1u);
    // The e-nodes each rule added: the union adds none, div-self the number 1.
    EXPECT_EQ(report.rules[0].nodes_added, 0u) << report.ToString();
    EXPECT_EQ(report.rules[1].nodes_added, 1u) << report.ToString();
    EXPECT_NE(report.ToString().find("div-self: matches 2, applied 1, added 1 e-nodes"),
              std::string::npos)
        << report.ToString();
  }
}

// Sum of n symbols as nested adds: (add s0 (add s1 (... s_{n-1})))
RecExpr LongSum(const Language& lang, int n) {
  RecExpr e;
  uint32_t acc = e.Add({lang.sym, n - 1, {}});
  for (int i = n - 2; i >= 0; --i) {
    uint32_t s = e.Add({lang.sym, i, {}});
    acc = e.Add({lang.add, 0, {s, acc}});
  }
  return e;
}

const char* kAssocComm =
    "comm: (add ?a ?b) => (add ?b ?a)\n"
    "assoc: (add ?a (add ?b ?c)) <=> (add (add ?a ?b) ?c)\n";

TEST(RunnerTest, AssocCommOnALongSumHitsTheNodeLimit) {
  Fixture f;
  auto rules = LoadRules(kAssocComm, f.context);
  EGraph g(f.lang.ops);
  g.AddExpr(LongSum(f.lang, 12));
  RunnerLimits limits;
  limits.nodes = 3000;
  limits.iterations = 100;
  RunReport report = Runner(g, rules, limits).WithScheduler(std::nullopt).Run();
  EXPECT_EQ(report.stop, StopReason::kNodeLimit) << report.ToString();
  EXPECT_GT(report.nodes, 3000u);
  EXPECT_NE(report.ToString().find("node limit"), std::string::npos);
}

TEST(RunnerTest, AssocCommOnAShortSumSaturates) {
  Fixture f;
  auto rules = LoadRules(kAssocComm, f.context);
  EGraph g(f.lang.ops);
  ClassId e = g.AddExpr(LongSum(f.lang, 4));
  RunReport report = Runner(g, rules).Run();
  EXPECT_EQ(report.stop, StopReason::kSaturated) << report.ToString();
  // Every bracketing and order of the 4 terms is one class: 4! orders x 5 bracketings.
  RecExpr other;
  uint32_t s3 = other.Add({f.lang.sym, 3, {}}), s1 = other.Add({f.lang.sym, 1, {}});
  uint32_t s2 = other.Add({f.lang.sym, 2, {}}), s0 = other.Add({f.lang.sym, 0, {}});
  uint32_t l = other.Add({f.lang.add, 0, {s3, s1}});
  uint32_t r = other.Add({f.lang.add, 0, {s2, s0}});
  other.Add({f.lang.add, 0, {l, r}});
  EXPECT_EQ(g.LookupExpr(other), g.Find(e));
}

TEST(RunnerTest, IterationTimeAndGoalLimits) {
  Fixture f;
  auto rules = LoadRules(kAssocComm, f.context);
  {
    EGraph g(f.lang.ops);
    g.AddExpr(LongSum(f.lang, 8));
    RunnerLimits limits;
    limits.iterations = 2;
    limits.nodes = 1000000;
    RunReport report = Runner(g, rules, limits).Run();
    EXPECT_EQ(report.stop, StopReason::kIterationLimit);
    EXPECT_EQ(report.iterations, 2u);
  }
  {
    EGraph g(f.lang.ops);
    g.AddExpr(LongSum(f.lang, 8));
    RunnerLimits limits;
    limits.time = std::chrono::duration<double>(0);
    EXPECT_EQ(Runner(g, rules, limits).Run().stop, StopReason::kTimeLimit);
  }
  {
    EGraph g(f.lang.ops);
    ClassId e = g.AddExpr(LongSum(f.lang, 8));
    ClassId t1 = g.AddExpr(ParseTerm("(add (sym 1) (add (sym 0) (sym 2)))", f.lang.ops));
    ClassId t2 = g.AddExpr(ParseTerm("(add (sym 0) (add (sym 1) (sym 2)))", f.lang.ops));
    RunReport report =
        Runner(g, rules)
            .WithGoal([&](const EGraph& graph) { return graph.Find(t1) == graph.Find(t2); })
            .Run();
    EXPECT_EQ(report.stop, StopReason::kGoalReached) << report.ToString();
    EXPECT_EQ(g.Find(t1), g.Find(t2));
    EXPECT_NE(g.Find(e), g.Find(t1));
  }
}

// The round that meets a goal stops there: the goal class's matches go first, the goal is
// checked after them and after each rule, and the rules after that point apply nothing.
TEST(RunnerTest, GoalMetInARoundStopsBeforeTheRestOfIt) {
  Fixture f;
  // `grow` (first in rule order) matches everywhere; `meet` relates the goal's two classes.
  auto rules = LoadRules(
      "grow: (neg ?x) => (neg (neg (neg ?x)))\n"
      "meet: (mul ?x (num 1)) => ?x\n",
      f.context);
  auto run = [&](bool goal_classes, RunReport* report) {
    EGraph g(f.lang.ops);
    for (int i = 0; i < 4; ++i)
      g.AddExpr(ParseTerm("(neg (sym " + std::to_string(i) + "))", f.lang.ops));
    ClassId product = g.AddExpr(ParseTerm("(mul (sym 7) (num 1))", f.lang.ops));
    ClassId seven = g.AddExpr(ParseTerm("(sym 7)", f.lang.ops));
    Runner runner(g, rules);
    runner.WithGoal([&](const EGraph& graph) { return graph.Find(product) == graph.Find(seven); });
    if (goal_classes) runner.WithGoalClasses({product});
    *report = runner.Run();
    return g.NumNodes();
  };
  RunReport plain, first;
  const size_t nodes_plain = run(false, &plain);
  const size_t nodes_first = run(true, &first);
  EXPECT_EQ(plain.stop, StopReason::kGoalReached) << plain.ToString();
  EXPECT_EQ(first.stop, StopReason::kGoalReached) << first.ToString();
  EXPECT_EQ(plain.iterations, 1u);
  EXPECT_EQ(first.iterations, 1u);
  // Rule order alone: `grow` applies to all four negations before `meet` meets the goal.
  EXPECT_EQ(plain.rules[0].applied, 4u) << plain.ToString();
  // Goal class first: `meet` meets it and `grow` applies nothing.
  EXPECT_EQ(first.rules[0].applied, 0u) << first.ToString();
  EXPECT_EQ(first.rules[1].applied, 1u) << first.ToString();
  EXPECT_LT(nodes_first, nodes_plain);
}

// Without goal classes the goal is still checked after each rule: a later rule's matches are
// left unapplied once an earlier one meets it.
TEST(RunnerTest, GoalIsCheckedAfterEachRule) {
  Fixture f;
  auto rules = LoadRules(
      "meet: (mul ?x (num 1)) => ?x\n"
      "grow: (neg ?x) => (neg (neg (neg ?x)))\n",
      f.context);
  EGraph g(f.lang.ops);
  g.AddExpr(ParseTerm("(neg (sym 0))", f.lang.ops));
  ClassId product = g.AddExpr(ParseTerm("(mul (sym 7) (num 1))", f.lang.ops));
  ClassId seven = g.AddExpr(ParseTerm("(sym 7)", f.lang.ops));
  RunReport report =
      Runner(g, rules)
          .WithGoal([&](const EGraph& graph) { return graph.Find(product) == graph.Find(seven); })
          .Run();
  EXPECT_EQ(report.stop, StopReason::kGoalReached) << report.ToString();
  EXPECT_EQ(report.rules[0].applied, 1u);
  EXPECT_EQ(report.rules[1].applied, 0u) << report.ToString();
}

TEST(RunnerTest, BackoffSchedulerBansExplodingRules) {
  Fixture f;
  auto rules = LoadRules(kAssocComm, f.context);
  EGraph g(f.lang.ops);
  g.AddExpr(LongSum(f.lang, 6));
  RunnerLimits limits;
  limits.nodes = 100000;
  limits.iterations = 60;
  RunReport report = Runner(g, rules, limits).WithScheduler(BackoffScheduler(8, 2)).Run();
  size_t banned = 0;
  for (const RuleStats& r : report.rules) banned += r.times_banned;
  EXPECT_GT(banned, 0u) << report.ToString();
  // Bans postpone work but the run still finishes the job (unbanning when otherwise saturated).
  EXPECT_EQ(report.stop, StopReason::kSaturated) << report.ToString();

  BackoffScheduler s(10, 3);
  s.Resize(1);
  EXPECT_TRUE(s.Admit(0, 0, 10));
  EXPECT_FALSE(s.Admit(0, 0, 11));
  EXPECT_TRUE(s.IsBanned(0, 2));
  EXPECT_FALSE(s.IsBanned(0, 3));
  EXPECT_EQ(s.Threshold(0), 20u);  // doubled after one ban
  EXPECT_FALSE(s.Admit(0, 3, 21));
  EXPECT_TRUE(s.IsBanned(0, 8));  // banned for 6 iterations now
  EXPECT_FALSE(s.IsBanned(0, 9));
}

TEST(RunnerTest, PerRuleMatchLimit) {
  Fixture f;
  auto rules = LoadRules("comm: (add ?a ?b) => (add ?b ?a)\n", f.context);
  EGraph g(f.lang.ops);
  g.AddExpr(LongSum(f.lang, 6));
  RunnerLimits limits;
  limits.matches_per_rule = 2;
  limits.iterations = 1;
  RunReport report = Runner(g, rules, limits).Run();
  EXPECT_EQ(report.rules[0].matches, 2u);
}

TEST(ExplainTest, TwoStepRewriteChain) {
  Fixture f;
  auto rules = LoadRules(
      "mul-to-shl: (mul ?a 2) => (shl ?a 1)\n"
      "shl-to-add: (shl ?a 1) => (add ?a ?a)\n",
      f.context);
  EGraph g(f.lang.ops);
  RecExpr start = ParseTerm("(mul x 2)", f.lang.ops);
  ClassId e = g.AddExpr(start);
  RunReport report = Runner(g, rules).Run();
  ASSERT_EQ(report.stop, StopReason::kSaturated);
  RecExpr goal = ParseTerm("(add x x)", f.lang.ops);
  ASSERT_EQ(g.LookupExpr(goal), g.Find(e));
  auto steps = g.ExplainExprs(start, goal);
  ASSERT_TRUE(steps.has_value());
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0].reason, "mul-to-shl");
  EXPECT_TRUE((*steps)[0].forward);
  EXPECT_EQ((*steps)[1].reason, "shl-to-add");
  EXPECT_TRUE((*steps)[1].forward);
  auto back = g.ExplainExprs(goal, start);
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].reason, "shl-to-add");
  EXPECT_FALSE((*back)[0].forward);
}

TEST(DeterminismTest, TwoRunsProduceIdenticalGraphs) {
  auto run = [] {
    Fixture f;
    auto rules =
        LoadRules(std::string(kAssocComm) + "mul1: (mul ?a 1) <=> (mul 1 ?a)\n", f.context);
    EGraph g(f.lang.ops);
    g.AddExpr(LongSum(f.lang, 7));
    g.AddExpr(ParseTerm("(mul (add (sym 1) (sym 2)) 1)", f.lang.ops));
    RunnerLimits limits;
    limits.nodes = 5000;
    RunReport report = Runner(g, rules, limits).Run();
    std::string text = g.Dump();
    for (const RuleStats& r : report.rules) {
      text += r.id + " " + std::to_string(r.matches) + " " + std::to_string(r.applied) + "\n";
    }
    return text + std::string(StopReasonName(report.stop));
  };
  std::string first = run();
  EXPECT_EQ(first, run());
  EXPECT_GT(first.size(), 1000u);
}

}  // namespace
}  // namespace gg::symbolic
