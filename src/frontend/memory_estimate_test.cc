#include "frontend/memory_estimate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "frontend/loader.h"

namespace gg::frontend {
namespace {

namespace fs = std::filesystem;

// x[4, 8] @ w[8, 16] -> relu -> sum, in f32; written as rank `rank` of a program.
fs::path WriteSmallGraph(const fs::path& dir, int rank) {
  fs::create_directories(dir);
  fs::path file = dir / ("fw.g0.r" + std::to_string(rank) + ".py");
  std::ofstream out(file);
  out << "# Graph[rank=" << rank
      << "](fw, gid=0)\n"
         "class GraphModule(torch.nn.Module):\n"
         "    def forward(self, x: \"f32[4, 8]\", w: \"f32[8, 16]\"):\n"
         "        mm: \"f32[4, 16]\" = torch.ops.aten.mm.default(x, w)\n"
         "        relu: \"f32[4, 16]\" = torch.ops.aten.relu.default(mm)\n"
         "        sum_1: \"f32[]\" = torch.ops.aten.sum.default(relu)\n"
         "        return (sum_1,)\n";
  return file;
}

TEST(MemoryEstimate, SmallGraphByHand) {
  fs::path dir = fs::temp_directory_path() / ("gg_memory_estimate_" + std::to_string(::getpid()));
  ir::Graph graph = LoadGraph(WriteSmallGraph(dir, 0).string());
  GraphMemory memory = EstimateGraphMemory(graph);
  // Inputs: 4*8*4 + 8*16*4 bytes. mm: its output (256) and a temporary as big (256) = 512;
  // relu: mm still live (freed after relu) + relu's 256 + its temporary 256 = 768, the peak;
  // sum: relu 256 + 4 + 4.
  EXPECT_EQ(memory.inputs, 640u);
  EXPECT_EQ(memory.peak, 768u);
  EXPECT_EQ(graph.nodes.at(memory.peak_node).name, "relu");

  // D: two ranks of the same graph. Inputs 3 x 640; the D run holds both ranks at their peaks
  // (2 x 768); the S run holds S's peak with two temporaries per operator (relu: 256 + 256 +
  // 2 x 256), one sample (16 bytes) and one comparison of the scalar (6 float64 copies).
  WriteSmallGraph(dir / "d", 0);
  WriteSmallGraph(dir / "d", 1);
  ir::Program d = LoadProgram({(dir / "d").string()});
  CheckFootprint footprint;
  footprint.compared.push_back(*graph.Find("sum_1"));
  MemoryEstimate estimate = EstimateCheckMemory(graph, d, footprint);
  EXPECT_EQ(estimate.inputs, 1920u);
  EXPECT_EQ(estimate.d_run, 1536u);
  EXPECT_EQ(estimate.s_run, 1024u + 16u + 48u);
  EXPECT_EQ(estimate.peak, 1920u + 1536u);
  // Kept D tensors add to both runs (rank 1's mm: 256 bytes).
  footprint.kept = {{}, {*d.rank(1).Find("mm")}};
  EXPECT_EQ(EstimateCheckMemory(graph, d, footprint).peak, 1920u + 1536u + 256u);
  fs::remove_all(dir);
}

TEST(MemoryEstimate, ParsesSizes) {
  EXPECT_EQ(ParseMemorySize("8G"), uint64_t{8} << 30);
  EXPECT_EQ(ParseMemorySize("512M"), uint64_t{512} << 20);
  EXPECT_EQ(ParseMemorySize("1.5GiB"), uint64_t{3} << 29);
  EXPECT_EQ(ParseMemorySize("64k"), uint64_t{64} << 10);
  EXPECT_EQ(ParseMemorySize("2048"), 2048u);
  EXPECT_EQ(ParseMemorySize("none"), 0u);
  EXPECT_EQ(ParseMemorySize("0"), 0u);
  for (const char* bad : {"", "G", "x", "-1G", "8Q", "0.0000001", "1e30T", "nan"}) {
    EXPECT_THROW(ParseMemorySize(bad), std::invalid_argument) << bad;
  }
  EXPECT_EQ(FormatBytes(12), "12 B");
  EXPECT_EQ(FormatBytes(uint64_t{3} << 29), "1.50 GiB");
  EXPECT_EQ(FormatBytes(uint64_t{512} << 20), "512 MiB");
}

TEST(MemoryEstimate, DefaultBudgetIsHalfOfMemAvailable) {
  EXPECT_EQ(MemAvailableOf("MemTotal:       24000000 kB\nMemAvailable:   2000 kB\n"), 2000u * 1024);
  EXPECT_EQ(MemAvailableOf("MemTotal: 1 kB\n"), 0u);
  EXPECT_GT(DefaultMemoryBudget(), 0u);
}

}  // namespace
}  // namespace gg::frontend
