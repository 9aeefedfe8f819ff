// Benchmark of the generic e-graph: saturate associativity + commutativity on a sum of n
// symbols (every subset of the symbols becomes a class), reporting e-nodes created per second.
#include <benchmark/benchmark.h>

#include "symbolic/egraph.h"
#include "symbolic/rewrite.h"
#include "symbolic/toy_language_testutil.h"

namespace {

using gg::symbolic::EGraph;
using gg::symbolic::RecExpr;

RecExpr LongSum(const gg::symbolic::toy::Language& lang, int n) {
  RecExpr e;
  uint32_t acc = e.Add({lang.sym, n - 1, {}});
  for (int i = n - 2; i >= 0; --i) {
    uint32_t s = e.Add({lang.sym, i, {}});
    acc = e.Add({lang.add, 0, {s, acc}});
  }
  return e;
}

void SaturateAssocComm(benchmark::State& state, bool explanations) {
  gg::symbolic::toy::Language lang;
  gg::symbolic::RuleContext context{&lang.ops, nullptr, nullptr};
  auto rules = gg::symbolic::LoadRules(
      "comm: (add ?a ?b) => (add ?b ?a)\n"
      "assoc: (add ?a (add ?b ?c)) <=> (add (add ?a ?b) ?c)\n",
      context);
  const int n = static_cast<int>(state.range(0));
  size_t nodes = 0, classes = 0, iterations = 0;
  bool saturated = true;
  for (auto _ : state) {
    EGraph graph(lang.ops, EGraph::Options{explanations});
    graph.AddExpr(LongSum(lang, n));
    gg::symbolic::RunnerLimits limits;
    limits.iterations = 1000;
    limits.nodes = 50'000'000;
    limits.time = std::chrono::seconds(600);
    auto report = gg::symbolic::Runner(graph, rules, limits).WithScheduler(std::nullopt).Run();
    saturated = saturated && report.stop == gg::symbolic::StopReason::kSaturated;
    nodes = report.nodes;
    classes = report.classes;
    iterations = report.iterations;
    benchmark::DoNotOptimize(nodes);
  }
  if (!saturated) state.SkipWithError("did not saturate");
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["classes"] = static_cast<double>(classes);
  state.counters["iterations"] = static_cast<double>(iterations);
  state.counters["nodes/s"] = benchmark::Counter(static_cast<double>(nodes) *
                                                     static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate);
}

void BM_AssocComm(benchmark::State& state) { SaturateAssocComm(state, true); }
void BM_AssocCommNoExplanations(benchmark::State& state) { SaturateAssocComm(state, false); }

BENCHMARK(BM_AssocComm)->DenseRange(4, 9)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AssocCommNoExplanations)->DenseRange(4, 9)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
