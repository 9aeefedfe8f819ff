// Executor overhead: the sequential graphs of the corpus (GPT L1 and Qwen2 L1 at the reduced sizes
// of the check tests, and Qwen2 at 32 tokens, where per-node costs weigh most) run three ways:
//   executor     runtime::Execute, as `graphguard check` runs S (argument binding, type check of
//                every output against its annotation, freeing after last use);
//   tape         the same kernels called in a loop over a pre-built tape: arguments bound once,
//                values in a flat table, no checks, nothing freed;
//   aten_inside  the executor again with an ATen RecordFunction observer that sums the time
//                spent inside outermost ATen operators (counter aten_ms): what the same ATen
//                calls cost by themselves. executor - aten_ms is the overhead of the executor and
//                of the kernel wrappers' argument decoding together.
// Inputs come from the spec (input_synthesis.h), dropout off.
// Run: build/bench/executor_overhead_runtime_bench [--benchmark_repetitions=3]
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "frontend/loader.h"
#include "frontend/resize.h"
#include "ir/op_registry.h"
#include "runtime/executor.h"
#include "runtime/input_synthesis.h"
#include "runtime/op_kernels.h"
#include "symbolic/relation_spec.h"

namespace {

using namespace gg;

struct Config {
  const char* name;
  const char* seq;    // corpus path of S
  const char* dist;   // corpus directory of D (for input synthesis)
  const char* spec;   // examples/*.rel
  const char* s_map;  // --resize of S
  const char* d_map;  // --resize-dist of D
};

const Config kConfigs[] = {
    {"gpt_L1_batch1_vocab1024", "gpt/paral1_layer1/fw.g0.r0.py", "gpt/paral2_layer1", "gpt.rel",
     "8=1,12288=1536,192=24,98304=1024", "8=1,12288=1536,96=12,6144=768,98304=1024,49152=512"},
    {"qwen2_L1_tokens256_vocab1024", "qwen2/paral1_layer1/fw.g0.r0.py", "qwen2/paral2_layer1",
     "qwen2.rel", "32768=256,151936=1024,75968=512", "32768=256,151936=1024,75968=512"},
    {"qwen2_L1_tokens32_vocab1024", "qwen2/paral1_layer1/fw.g0.r0.py", "qwen2/paral2_layer1",
     "qwen2.rel", "32768=32,151936=1024,75968=512", "32768=32,151936=1024,75968=512"},
};

struct Loaded {
  ir::Graph s;
  runtime::GraphInputs inputs;
  size_t operators = 0;
};

std::unique_ptr<Loaded> Load(const Config& config) {
  const std::string corpus = GG_CORPUS_DIR;
  auto loaded = std::make_unique<Loaded>();
  ir::Graph s = frontend::LoadGraph(corpus + "/" + config.seq);
  ir::Program d = frontend::LoadProgram({corpus + "/" + config.dist});
  loaded->s = frontend::ResizeGraph(s, frontend::ParseResizeMap(config.s_map));
  d = frontend::ResizeProgram(d, frontend::ParseResizeMap(config.d_map));
  symbolic::SpecResult spec = symbolic::EvaluateSpec(
      symbolic::RelationSpec::Load(std::string(GG_SOURCE_DIR) + "/examples/" + config.spec),
      loaded->s, d);
  loaded->inputs = runtime::SynthesizeInputs(loaded->s, d, spec, /*seed=*/0).s;
  for (const ir::Node& node : loaded->s.nodes) {
    if (node.kind == ir::NodeKind::kOperator) ++loaded->operators;
  }
  return loaded;
}

// One operator call with its arguments bound once.
struct TapeStep {
  const ir::Node* node;
  const ir::OpInfo* info;
  const runtime::Kernel* kernel;
  ir::BoundArgs args;
  size_t index;
};

class Tape {
 public:
  explicit Tape(const Loaded& loaded) : loaded_(loaded), values_(loaded.s.nodes.size()) {
    const ir::Graph& g = loaded.s;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& node = g.nodes[i];
      if (node.kind != ir::NodeKind::kOperator) continue;
      const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
      steps_.push_back(TapeStep{&node, info, runtime::FindKernel(node.op),
                                ir::BoundArgs(info->schema, node), i});
    }
  }

  void BindInputs() {
    const ir::Graph& g = loaded_.s;
    for (size_t i = 0; i < g.inputs.size(); ++i) values_[g.inputs[i]] = {loaded_.inputs.inputs[i]};
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].kind != ir::NodeKind::kConstant) continue;
      auto it = loaded_.inputs.constants.find(g.nodes[i].name);
      values_[i] = {it != loaded_.inputs.constants.end()
                        ? it->second
                        : runtime::ZerosOf(*g.nodes[i].outputs[0].type)};
    }
  }

  // Runs every step: binds nothing, checks nothing, frees nothing.
  void Run() {
    runtime::RandomMode random{/*dropout_off=*/true, nullptr};
    auto lookup = [this](ir::TensorRef ref) { return values_[ref.node][ref.output]; };
    for (const TapeStep& step : steps_) {
      // S is one rank: its collectives (groups of one) and waits return their input.
      if (step.info->traits.collective != ir::CollectiveKind::kNone) {
        values_[step.index] = {Single(step)};
        continue;
      }
      values_[step.index] =
          runtime::CallKernel(*step.kernel, *step.node, *step.info, step.args, lookup, random);
    }
  }

 private:
  at::Tensor Single(const TapeStep& step) {
    for (const ir::TensorRef& ref : step.node->TensorInputs()) {
      return values_[ref.node][ref.output];
    }
    return at::Tensor();
  }

  const Loaded& loaded_;
  std::vector<std::vector<at::Tensor>> values_;
  std::vector<TapeStep> steps_;
};

void Report(benchmark::State& state, const Loaded& loaded) {
  state.counters["operators"] = static_cast<double>(loaded.operators);
}

void BM_Executor(benchmark::State& state, const Config* config) {
  std::unique_ptr<Loaded> loaded = Load(*config);
  runtime::ExecutionOptions options;
  options.dropout_off = true;
  options.keep_outputs = false;
  for (auto _ : state) {
    runtime::ExecutionResult result = runtime::Execute(loaded->s, loaded->inputs, options);
    benchmark::DoNotOptimize(result.outputs.data());
  }
  Report(state, *loaded);
}

void BM_Tape(benchmark::State& state, const Config* config) {
  std::unique_ptr<Loaded> loaded = Load(*config);
  Tape tape(*loaded);
  tape.BindInputs();
  for (auto _ : state) tape.Run();
  Report(state, *loaded);
}

// Wall time inside outermost ATen operators of this thread (intra-op worker threads run inside
// such a call, so their time is included once).
thread_local int aten_depth = 0;
thread_local std::chrono::steady_clock::time_point aten_start;
thread_local double aten_seconds = 0;

std::unique_ptr<at::ObserverContext> OnAtenEnter(const at::RecordFunction&) {
  if (aten_depth++ == 0) aten_start = std::chrono::steady_clock::now();
  return nullptr;
}
void OnAtenExit(const at::RecordFunction&, at::ObserverContext*) {
  if (--aten_depth == 0) {
    aten_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - aten_start).count();
  }
}

void BM_AtenInside(benchmark::State& state, const Config* config) {
  std::unique_ptr<Loaded> loaded = Load(*config);
  runtime::ExecutionOptions options;
  options.dropout_off = true;
  options.keep_outputs = false;
  at::CallbackHandle handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(OnAtenEnter, OnAtenExit).scopes({at::RecordScope::FUNCTION}));
  aten_seconds = 0;
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    runtime::ExecutionResult result = runtime::Execute(loaded->s, loaded->inputs, options);
    benchmark::DoNotOptimize(result.outputs.data());
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  at::removeCallback(handle);
  double iterations = static_cast<double>(state.iterations());
  state.counters["aten_ms"] = 1e3 * aten_seconds / iterations;
  // Outside ATen: the executor's bookkeeping and the kernels' argument decoding.
  state.counters["outside_pct"] = 100.0 * (wall - aten_seconds) / wall;
  state.counters["outside_us_per_op"] =
      1e6 * (wall - aten_seconds) / iterations / static_cast<double>(loaded->operators);
  Report(state, *loaded);
}

int RegisterAll() {
  if (!std::filesystem::exists(GG_CORPUS_DIR)) return 0;
  for (const Config& c : kConfigs) {
    benchmark::RegisterBenchmark((std::string("executor/") + c.name).c_str(), BM_Executor, &c)
        ->Unit(benchmark::kMillisecond)
        ->MinTime(2.0);
    benchmark::RegisterBenchmark((std::string("tape/") + c.name).c_str(), BM_Tape, &c)
        ->Unit(benchmark::kMillisecond)
        ->MinTime(2.0);
    benchmark::RegisterBenchmark((std::string("aten_inside/") + c.name).c_str(), BM_AtenInside, &c)
        ->Unit(benchmark::kMillisecond)
        ->MinTime(2.0);
  }
  return 0;
}
const int kRegistered = RegisterAll();

}  // namespace

BENCHMARK_MAIN();
