#include "symbolic/local_graph.h"

#include <gtest/gtest.h>

#include <string>

#include "frontend/fx_reader.h"
#include "frontend/loader.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/relation_spec.h"

namespace gg::symbolic {
namespace {

// Repeated computations of one rank: the same deterministic operator with the same arguments
// over the same inputs (up to the same equivalence) is represented by the first; a different
// argument, another input, an unspecified buffer, a random draw or a collective is not.
constexpr char kRepeated[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 6]", y: "f32[4, 6]"):
        a: "f32[4, 1, 6]" = torch.ops.aten.unsqueeze.default(x, 1)
        b: "f32[4, 1, 6]" = torch.ops.aten.unsqueeze.default(x, 1)
        c: "f32[4, 1, 6]" = torch.ops.aten.unsqueeze.default(y, 1)
        d: "f32[4, 6, 1]" = torch.ops.aten.unsqueeze.default(x, 2)
        e: "f32[4, 1, 6]" = torch.ops.aten.mul.Tensor(a, a)
        f: "f32[4, 1, 6]" = torch.ops.aten.mul.Tensor(b, b)
        g: "f32[4, 1, 6]" = torch.ops.aten.mul.Tensor(a, c)
        h: "f32[4, 6]" = torch.ops.aten.empty.memory_format([4, 6], dtype = torch.float32)
        i: "f32[4, 6]" = torch.ops.aten.empty.memory_format([4, 6], dtype = torch.float32)
        j: "f32[4, 6]" = torch.ops.aten.rand_like.default(x)
        k: "f32[4, 6]" = torch.ops.aten.rand_like.default(x)
        l: "f32[6]" = torch.ops.aten.arange.default(6, dtype = torch.float32)
        m: "f32[4, 6]" = torch.ops.aten.add.Tensor(x, 0.5)
        n: "f32[4, 6]" = torch.ops.aten.add.Tensor(x, 0.25)
        o: "f32[4, 6]" = torch.ops.aten.add.Tensor(x, 0.5)
        return (e, f, g, d, h, i, j, k, m, n, o)
)";

TEST(DIndexTest, RepeatedDeterministicComputationsShareARepresentative) {
  ir::Graph g = frontend::ParseFx(kRepeated, "repeated.py");
  std::vector<ir::NodeId> canonical = DIndex::CommonSubexpressions(g);
  auto id = [&](const std::string& name) { return g.Find(name).value().node; };
  auto rep = [&](const std::string& name) { return canonical[id(name)]; };
  EXPECT_EQ(rep("b"), id("a"));
  EXPECT_EQ(rep("f"), id("e"));  // mul(b, b) is mul(a, a) once b stands for a
  EXPECT_EQ(rep("o"), id("m"));
  for (const char* own : {"a", "c", "d", "e", "g", "h", "i", "j", "k", "m", "n", "x", "y"}) {
    EXPECT_EQ(rep(own), id(own)) << own;
  }
}

// A rank that recomputes a value (every layer's unsqueeze of one table) relates S to the first
// computation only, and the program still refines; a rank whose second computation differs (a
// wrong constant) is not merged and does not refine.
std::string Program(int rank, int rows, const std::string& second_scale) {
  const std::string r = std::to_string(rows);
  return "# Graph[rank=" + std::to_string(rank) + "](fw, gid=0)\n" +
         "class GraphModule(torch.nn.Module):\n"
         "    def forward(self, t: \"f32[" +
         r + ", 6]\", h: \"f32[" + r +
         ", 1, 6]\"):\n"
         "        u1: \"f32[" +
         r +
         ", 1, 6]\" = torch.ops.aten.unsqueeze.default(t, 1)\n"
         "        s1: \"f32[" +
         r +
         ", 1, 6]\" = torch.ops.aten.mul.Tensor(u1, 2.0)\n"
         "        a: \"f32[" +
         r +
         ", 1, 6]\" = torch.ops.aten.mul.Tensor(h, s1)\n"
         "        u2: \"f32[" +
         r +
         ", 1, 6]\" = torch.ops.aten.unsqueeze.default(t, 1)\n"
         "        s2: \"f32[" +
         r + ", 1, 6]\" = torch.ops.aten.mul.Tensor(u2, " + second_scale +
         ")\n"
         "        b: \"f32[" +
         r +
         ", 1, 6]\" = torch.ops.aten.mul.Tensor(a, s2)\n"
         "        return (b,)\n";
}

VerifyResult VerifyRepeated(const std::string& d_second_scale) {
  ir::Graph s = frontend::ParseFx(Program(0, 4, "2.0"), "seq.py");
  ir::Program d;
  d.ranks.push_back(frontend::ParseFx(Program(0, 2, d_second_scale), "r0.py"));
  d.ranks.push_back(frontend::ParseFx(Program(1, 2, d_second_scale), "r1.py"));
  d.groups["0"] = {0, 1};
  RelationSpec spec = RelationSpec::Parse(
      "input t = shard(0)\ninput h = shard(0)\noutput b = shard(0)\n", "spec.rel");
  return Verify(s, d, EvaluateSpec(spec, s, d), LemmaCatalogue::Default().Rules(),
                InferenceOptions{});
}

TEST(DIndexTest, RelationsNameTheFirstOfRepeatedComputations) {
  VerifyResult same = VerifyRepeated("2.0");
  EXPECT_EQ(same.verdict, Verdict::kRefines) << same.summary;
  // S's second scaled table is related to each rank's first one (its representative).
  bool named_first = false;
  for (const auto& [name, rels] : same.relations) {
    if (name != "s2") continue;
    for (const InferredRelation& r : rels) {
      std::string text = r.relation.expr.ToString();
      EXPECT_EQ(text.find("s2@"), std::string::npos) << text;
      named_first |= text.find("s1@") != std::string::npos;
    }
  }
  EXPECT_TRUE(named_first) << [&] {
    std::string all;
    for (const auto& [name, rels] : same.relations) {
      for (const InferredRelation& r : rels)
        all += name + " == " + r.relation.expr.ToString() + "\n";
    }
    return all;
  }();
  VerifyResult differs = VerifyRepeated("3.0");
  EXPECT_NE(differs.verdict, Verdict::kRefines) << differs.summary;
}

}  // namespace
}  // namespace gg::symbolic
