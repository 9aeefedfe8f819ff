// The shared corpus's Megatron GPT layer-1 rank graphs under mpirun: TP2 under 2 processes, TP4
// under 4, each at batch 1 (frontend/resize.h: 8 -> 1 and the derived extents), one rank per
// process with the MPI backend (TP2 in the exact mode, TP4 with native MPI sums). Rank 0 gathers
// every rank's outputs (GatherToRoot) and compares them with ExecuteProgram of all ranks in one
// process on the same inputs: bit-identical in the exact mode, within 1e-6 (relative to the
// largest value) with native MPI sums.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "frontend/loader.h"
#include "frontend/resize.h"
#include "runtime/executor.h"
#include "runtime/op_kernels.h"
#include "runtime/mpi/mpi_collectives.h"

namespace gg::runtime {
namespace {

using Mode = MpiCollectives::Mode;

// Inputs of one rank's graph, the same values on every process: input i is drawn from seed i, so
// replicated inputs are equal across ranks. Token ids and labels fall inside one vocabulary
// shard, positions inside the position table, the attention mask is causal.
std::vector<at::Tensor> GptInputs(const ir::Graph& g) {
  std::vector<at::Tensor> in;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const ir::TensorType& t = g.node(g.inputs[i]).type();
    std::vector<int64_t> dims;
    for (const ir::Dim& d : t.shape) dims.push_back(d.value());
    at::Generator gen = at::detail::createCPUGenerator(100 + i);
    if (t.dtype == ir::DType::kInt64) {
      int64_t bound = dims.back();  // the sequence length: below every table's size
      in.push_back(at::randint(bound, dims, gen, at::kLong));
    } else if (t.dtype == ir::DType::kBool) {
      int64_t s = dims.back();
      in.push_back(at::ones({s, s}, at::kBool).triu(1).expand(dims).contiguous());
    } else {
      in.push_back((at::randn(dims, gen, at::kDouble) * 0.05).to(ToAten(t.dtype)));
    }
  }
  return in;
}

void RunGpt(const std::string& config, const std::string& resize, Mode mode) {
  int world = 0, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::string dir = std::string(GG_CORPUS_DIR) + "/gpt/" + config;
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "corpus not found: " << dir;
  ir::Program full = frontend::LoadProgram({dir});
  if (full.world_size() != world) {
    GTEST_SKIP() << config << " has " << full.world_size() << " ranks; this run has " << world
                 << " processes";
  }
  ir::Program program = frontend::ResizeProgram(full, frontend::ParseResizeMap(resize));
  std::vector<GraphInputs> inputs;
  for (int r = 0; r < world; ++r) inputs.push_back({GptInputs(program.rank(r)), {}});
  ExecutionOptions options;
  options.dropout_off = true;
  MpiCollectives mpi(program, MPI_COMM_WORLD, mode);
  auto t0 = std::chrono::steady_clock::now();
  ExecutionResult mine = ExecuteRankDistributed(program, inputs[me], mpi, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::map<std::string, at::Tensor> named;
  for (size_t o = 0; o < mine.outputs.size(); ++o) {
    if (mine.outputs[o].defined()) named["out" + std::to_string(o)] = mine.outputs[o];
  }
  auto gathered = GatherToRoot(named, MPI_COMM_WORLD, 0);
  if (me != 0) return;
  std::cout << "[ timing ] " << config << " rank 0 alone: " << seconds << " s\n";
  std::vector<ExecutionResult> reference = ExecuteProgram(program, inputs, options);
  for (int r = 0; r < world; ++r) {
    for (size_t o = 0; o < reference[r].outputs.size(); ++o) {
      const at::Tensor& want = reference[r].outputs[o];
      std::string name = "out" + std::to_string(o);
      SCOPED_TRACE(config + " rank " + std::to_string(r) + " output " + std::to_string(o));
      ASSERT_EQ(gathered[r].count(name), want.defined() ? 1u : 0u);
      if (!want.defined()) continue;
      const at::Tensor& got = gathered[r].at(name);
      ASSERT_TRUE(got.sizes().equals(want.sizes()));
      if (mode == Mode::kExactReference || !at::isFloatingType(want.scalar_type())) {
        EXPECT_TRUE(at::equal(got, want));
      } else {
        at::Tensor g = got.to(at::kDouble), w = want.to(at::kDouble);
        double scale = std::max(1.0, w.abs().max().item<double>());
        EXPECT_LE((g - w).abs().max().item<double>(), 1e-6 * scale);
      }
    }
  }
}

TEST(MpiCorpus, GptTp2Layer1AtBatchOneMatchesOneProcess) {
  // Batch 8 -> 1: tokens 12288 -> 1536, a rank's sequence shard 6144 -> 768, batch * heads of a
  // rank 96 -> 12.
  RunGpt("paral2_layer1", "8=1,12288=1536,6144=768,96=12", Mode::kExactReference);
}

TEST(MpiCorpus, GptTp4Layer1AtBatchOneMatchesOneProcess) {
  RunGpt("paral4_layer1", "8=1,12288=1536,3072=384,48=6", Mode::kNative);
}

}  // namespace
}  // namespace gg::runtime
