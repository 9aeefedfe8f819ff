#include "symbolic/relation_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "frontend/loader.h"
#include "util/diagnostic.h"

namespace gg::symbolic {
namespace {

ir::TensorType Type(const std::string& text) {
  std::string why;
  auto t = ir::ParseTensorType(text, &why);
  EXPECT_TRUE(t.has_value()) << why;
  return t ? *t : ir::TensorType{};
}

using NamedTypes = std::vector<std::pair<std::string, std::string>>;

// A graph with the given inputs and, for each output, one operator node producing it.
ir::Graph MakeGraph(int32_t rank, const NamedTypes& inputs, const NamedTypes& outputs = {}) {
  ir::Graph g;
  g.rank = rank;
  g.file = "rank" + std::to_string(rank) + ".py";
  for (const auto& [name, type] : inputs) {
    ir::Node n;
    n.kind = ir::NodeKind::kInput;
    n.name = name;
    n.outputs.push_back({name, Type(type)});
    g.AddNode(std::move(n));
  }
  for (const auto& [name, type] : outputs) {
    ir::Node n;
    n.kind = ir::NodeKind::kOperator;
    n.name = name;
    n.op = *ir::OpName::Parse("aten::clone.default");
    n.outputs.push_back({name, Type(type)});
    const ir::NodeId id = g.AddNode(std::move(n));
    g.outputs.emplace_back(ir::TensorRef{id, 0});
  }
  return g;
}

std::string Corpus(const std::string& rel) { return std::string(GG_CORPUS_DIR) + "/" + rel; }
std::string Example(const std::string& name) {
  return std::string(GG_SOURCE_DIR) + "/examples/" + name;
}

// The corpus through the real FX loader: S is rank 0 of a paral1 directory.
ir::Program ReadProgram(const std::string& dir) { return frontend::LoadProgram({Corpus(dir)}); }

// All relations of S tensor `name`, printed.
std::vector<std::string> RelationsOf(const std::vector<Relation>& rels, const ir::Graph& s,
                                     const std::string& name) {
  std::vector<std::string> out;
  for (const Relation& r : rels) {
    if (s.ValueName(r.s_tensor) == name) out.push_back(r.expr.ToString());
  }
  return out;
}

using Strings = std::vector<std::string>;

// ---- the corpus examples ---------------------------------------------------------------------

TEST(RelationSpecCorpusTest, GptSpecHoldsForEveryConfiguration) {
  RelationSpec spec = RelationSpec::Load(Example("gpt.rel"));
  struct Config {
    std::string s_dir, d_dir;
    int tp, layers;
  };
  for (const Config& c : {Config{"gpt/paral1_layer1", "gpt/paral1_layer1", 1, 1},
                          Config{"gpt/paral1_layer2", "gpt/paral1_layer2", 1, 2},
                          Config{"gpt/paral1_layer1", "gpt/paral2_layer1", 2, 1},
                          Config{"gpt/paral1_layer2", "gpt/paral2_layer2", 2, 2},
                          Config{"gpt/paral1_layer1", "gpt/paral4_layer1", 4, 1}}) {
    SCOPED_TRACE(c.d_dir);
    ir::Graph s = ReadProgram(c.s_dir).ranks[0];
    ir::Program d = ReadProgram(c.d_dir);
    ASSERT_EQ(d.world_size(), c.tp);
    ASSERT_EQ(s.inputs.size(), static_cast<size_t>(10 + 12 * c.layers));
    SpecResult result = EvaluateSpec(spec, s, d);
    // Sharded parameters: embedding, output layer, and 6 per layer; the rest is replicated.
    size_t sharded = 2 + 6 * c.layers;
    EXPECT_EQ(result.inputs.size(), sharded + (s.inputs.size() - sharded) * c.tp);
    EXPECT_TRUE(result.assumed.empty());
    ASSERT_EQ(result.expected_outputs.size(), static_cast<size_t>(c.tp));
    for (int r = 0; r < c.tp; ++r) {
      EXPECT_EQ(result.expected_outputs[r].expr.ToString(), "div_2@" + std::to_string(r));
      EXPECT_EQ(s.ValueName(result.expected_outputs[r].s_tensor), "div_2");
    }
    // The loader gives whole graphs, not just signatures.
    EXPECT_GT(s.nodes.size(), s.inputs.size() + 100);
    if (c.tp == 2) {
      // A cut point on the first dropout mask, which sequence parallelism splits along dim 0.
      std::ifstream in(Example("gpt.rel"));
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      text += "assume getitem_1 = concat(0, [D.getitem_1@r for r in ranks])\n";
      SpecResult with_cut = EvaluateSpec(RelationSpec::Parse(text, "gpt+cut.rel"), s, d);
      ASSERT_EQ(with_cut.assumed.size(), 1u);
      EXPECT_EQ(RelationToString(with_cut.assumed[0], s),
                "getitem_1 == concat(0, getitem_1@0, getitem_1@1)");
      EXPECT_EQ(RelationsOf(result.inputs, s, "primals_1"),
                Strings{"concat(0, primals_1@0, primals_1@1)"});
      EXPECT_EQ(RelationsOf(result.inputs, s, "primals_6"),
                Strings{"concat(1, primals_6@0, primals_6@1)"});
      EXPECT_EQ(RelationsOf(result.inputs, s, "primals_2"), (Strings{"primals_2@0", "primals_2@1"}));
      Strings expected_22 = c.layers == 1 ? Strings{"primals_22@0", "primals_22@1"}
                                          : Strings{"concat(0, primals_22@0, primals_22@1)"};
      EXPECT_EQ(RelationsOf(result.inputs, s, "primals_22"), expected_22);
    }
    if (c.layers == 2) {
      // Second layer's FC2 weight and the output layer weight.
      EXPECT_EQ(RelationsOf(result.inputs, s, "primals_24").size(), 1u);
      EXPECT_NE(RelationsOf(result.inputs, s, "primals_24")[0].find("concat(1, "),
                std::string::npos);
      EXPECT_NE(RelationsOf(result.inputs, s, "primals_28")[0].find("concat(0, "),
                std::string::npos);
    }
    // Origins name the spec line.
    EXPECT_NE(result.inputs[0].origin.find("gpt.rel:5: input #0 = shard(0)"), std::string::npos)
        << result.inputs[0].origin;
  }
}

TEST(RelationSpecCorpusTest, Qwen2SpecHoldsForEveryConfiguration) {
  RelationSpec spec = RelationSpec::Load(Example("qwen2.rel"));
  ir::Graph s = ReadProgram("qwen2/paral1_layer1").ranks[0];
  {
    SpecResult self = EvaluateSpec(spec, s, ReadProgram("qwen2/paral1_layer1"));
    EXPECT_EQ(RelationsOf(self.inputs, s, "arg4_1"),
              Strings{"concat(0, slice(arg4_1@0, 0, 0, 1536), slice(arg4_1@0, 0, 1536, 1792), "
                      "slice(arg4_1@0, 0, 1792, 2048))"});
    EXPECT_EQ(self.inputs.size(), 12u);
  }
  ir::Program d = ReadProgram("qwen2/paral2_layer1");
  SpecResult result = EvaluateSpec(spec, s, d);
  EXPECT_EQ(RelationsOf(result.inputs, s, "arg4_1"),
            Strings{"concat(0, slice(arg4_1@0, 0, 0, 768), slice(arg4_1@1, 0, 0, 768), "
                    "slice(arg4_1@0, 0, 768, 896), slice(arg4_1@1, 0, 768, 896), "
                    "slice(arg4_1@0, 0, 896, 1024), slice(arg4_1@1, 0, 896, 1024))"});
  EXPECT_EQ(RelationsOf(result.inputs, s, "arg3_1"),
            Strings{"concat(0, slice(arg3_1@0, 0, 0, 768), slice(arg3_1@1, 0, 0, 768), "
                    "slice(arg3_1@0, 0, 768, 896), slice(arg3_1@1, 0, 768, 896), "
                    "slice(arg3_1@0, 0, 896, 1024), slice(arg3_1@1, 0, 896, 1024))"});
  EXPECT_EQ(RelationsOf(result.inputs, s, "arg9_1"),
            Strings{"concat(0, slice(arg9_1@0, 0, 0, 4480), slice(arg9_1@1, 0, 0, 4480), "
                    "slice(arg9_1@0, 0, 4480, 8960), slice(arg9_1@1, 0, 4480, 8960))"});
  EXPECT_EQ(RelationsOf(result.inputs, s, "arg1_1"), Strings{"concat(0, arg1_1@0, arg1_1@1)"});
  EXPECT_EQ(RelationsOf(result.inputs, s, "arg7_1"), Strings{"concat(1, arg7_1@0, arg7_1@1)"});
  EXPECT_EQ(RelationsOf(result.inputs, s, "arg10_1"), Strings{"concat(1, arg10_1@0, arg10_1@1)"});
  EXPECT_EQ(RelationsOf(result.inputs, s, "arg5_1"), (Strings{"arg5_1@0", "arg5_1@1"}));
  // 6 concatenations + 6 replicated inputs on 2 ranks.
  EXPECT_EQ(result.inputs.size(), 6u + 6u * 2u);
  EXPECT_EQ(RelationsOf(result.expected_outputs, s, "getitem_34"),
            (Strings{"getitem_34@0", "getitem_34@1"}));
}

// TP 4 has more ranks than Qwen2's 2 kv heads: ranks 0,1 hold kv head 0 and ranks 2,3 hold kv
// head 1, so S's k and v rows come from ranks 0 and 2 only. No capture exists; shapes by hand.
TEST(RelationSpecCorpusTest, Qwen2SpecReplicatedKvHeadsAtTp4) {
  RelationSpec spec = RelationSpec::Load(Example("qwen2.rel"));
  ir::Graph s = ReadProgram("qwen2/paral1_layer1").ranks[0];
  ir::Program d;
  for (int32_t r = 0; r < 4; ++r) {
    d.ranks.push_back(MakeGraph(r,
                                {{"arg0_1", "i64[32768]"},
                                 {"arg1_1", "bf16[37984, 1536]"},
                                 {"arg2_1", "bf16[1536]"},
                                 {"arg3_1", "bf16[640]"},
                                 {"arg4_1", "bf16[640, 1536]"},
                                 {"arg5_1", "bf16[32768, 128]"},
                                 {"arg6_1", "i64[32768]"},
                                 {"arg7_1", "bf16[1536, 384]"},
                                 {"arg8_1", "bf16[1536]"},
                                 {"arg9_1", "bf16[4480, 1536]"},
                                 {"arg10_1", "bf16[1536, 2240]"},
                                 {"arg11_1", "bf16[1536]"}},
                                {{"getitem_34", "bf16[32768, 1536]"}}));
  }
  SpecResult result = EvaluateSpec(spec, s, d);
  EXPECT_EQ(RelationsOf(result.inputs, s, "arg4_1"),
            Strings{"concat(0, slice(arg4_1@0, 0, 0, 384), slice(arg4_1@1, 0, 0, 384), "
                    "slice(arg4_1@2, 0, 0, 384), slice(arg4_1@3, 0, 0, 384), "
                    "slice(arg4_1@0, 0, 384, 512), slice(arg4_1@2, 0, 384, 512), "
                    "slice(arg4_1@0, 0, 512, 640), slice(arg4_1@2, 0, 512, 640))"});
  EXPECT_EQ(RelationsOf(result.inputs, s, "arg9_1"),
            Strings{"concat(0, slice(arg9_1@0, 0, 0, 2240), slice(arg9_1@1, 0, 0, 2240), "
                    "slice(arg9_1@2, 0, 0, 2240), slice(arg9_1@3, 0, 0, 2240), "
                    "slice(arg9_1@0, 0, 2240, 4480), slice(arg9_1@1, 0, 2240, 4480), "
                    "slice(arg9_1@2, 0, 2240, 4480), slice(arg9_1@3, 0, 2240, 4480))"});
  EXPECT_EQ(result.expected_outputs.size(), 4u);
}

// ---- the language on small graphs --------------------------------------------------------------

ir::Graph SmallS() {
  return MakeGraph(0,
                   {{"w_a", "f32[8, 4]"},
                    {"w_b", "f32[4, 8]"},
                    {"bias", "f32[4]"},
                    {"ln", "f32[4]"},
                    {"ids", "i64[2, 3]"}},
                   {{"loss", "f32[]"}, {"mask", "f32[8, 4]"}});
}

ir::Program SmallD(int n) {
  ir::Program p;
  for (int32_t r = 0; r < n; ++r) {
    p.ranks.push_back(MakeGraph(r,
                                {{"w_a", "f32[" + std::to_string(8 / n) + ", 4]"},
                                 {"w_b", "f32[4, " + std::to_string(8 / n) + "]"},
                                 {"bias", "f32[4]"},
                                 {"ln", "f32[4]"},
                                 {"ids", "i64[2, 3]"}},
                                {{"out_loss", "f32[]"},
                                 {"dmask", "f32[" + std::to_string(8 / n) + ", 4]"}}));
  }
  return p;
}

SpecResult Eval(const std::string& text, const ir::Graph& s, const ir::Program& d) {
  return EvaluateSpec(RelationSpec::Parse(text, "t.rel"), s, d);
}

// Runs `text` and returns the InputError's "line: problem", or "" when it succeeds.
std::string ErrorOf(const std::string& text, const ir::Graph& s, const ir::Program& d) {
  try {
    Eval(text, s, d);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "t.rel");
    return std::to_string(e.line()) + ": " + e.problem();
  }
  return "";
}

TEST(RelationSpecTest, SelectorsShorthandsAndDefaults) {
  ir::Graph s = SmallS();
  ir::Program d = SmallD(2);
  SpecResult r = Eval(
      "# comments with '# ' and '//' are both fine\n"
      "input #0 = shard(0)        # first input\n"
      "input w_b = shard(-1)      // last dim\n"
      "inputs #2..#3 = partial\n"
      "input i* = replicate\n"
      "output #0 = replicate(D.out_loss)\n"
      "output mask = concat(0, [D@r for r in ranks])\n",
      s, d);
  EXPECT_EQ(RelationsOf(r.inputs, s, "w_a"), Strings{"concat(0, w_a@0, w_a@1)"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "w_b"), Strings{"concat(-1, w_b@0, w_b@1)"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "bias"), Strings{"sum(bias@0, bias@1)"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "ln"), Strings{"sum(ln@0, ln@1)"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "ids"), (Strings{"ids@0", "ids@1"}));
  EXPECT_EQ(RelationsOf(r.expected_outputs, s, "loss"), (Strings{"out_loss@0", "out_loss@1"}));
  // For outputs, D@r is rank r's output at the same position (names of intermediates differ).
  EXPECT_EQ(RelationsOf(r.expected_outputs, s, "mask"), Strings{"concat(0, dmask@0, dmask@1)"});
  EXPECT_EQ(r.inputs[0].origin, "t.rel:2: input #0 = shard(0)");
}

TEST(RelationSpecTest, LetArithmeticAndComprehensions) {
  ir::Graph s = SmallS();
  ir::Program d = SmallD(2);
  SpecResult r = Eval(
      "let tp = world\n"
      "let rows = dim(S.w_a, 0)\n"
      "let per = dim(D.w_a@0, 0)\n"
      "let x = -7 / 2 + -7 % 2 * 10 + max(1, tp, 3) * min(4, 5) - (1 + 2) * 2\n"
      "input w_a = concat(0, [slice(D@r, 0, 0, per / 2) for r in ranks],\n"
      "                      [slice(D@r, 0, per / 2, rows / tp) for r in ranks if not r == 5])\n"
      "input w_b = concat(1, D@0, D.w_b@(tp - 1))\n"
      "input bias = mean([D@r for r in ranks])\n"
      "input ln = scale(1 / tp, sum(D@0, D@1))\n"
      "input ids = max(D@0, D@(x - x + 1))\n"
      "output #1 = slice(concat(0, D@0, D@1), 0, 0, rows)\n",
      s, d);
  EXPECT_EQ(RelationsOf(r.inputs, s, "w_a"),
            Strings{"concat(0, slice(w_a@0, 0, 0, 2), slice(w_a@1, 0, 0, 2), "
                    "slice(w_a@0, 0, 2, 4), slice(w_a@1, 0, 2, 4))"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "w_b"), Strings{"concat(1, w_b@0, w_b@1)"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "bias"), Strings{"scale(0.5, sum(bias@0, bias@1))"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "ln"), Strings{"scale(0.5, sum(ln@0, ln@1))"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "ids"), Strings{"max(ids@0, ids@1)"});
  // -7/2 = -4 (floor), -7%2 = 1, so x = -4 + 10 + 12 - 6 = 12.
  SpecResult r2 = Eval(
      "let x = -7 / 2 + -7 % 2 * 10 + max(1, world, 3) * min(4, 5) - (1 + 2) * 2\n"
      "input w_a = slice(concat(0, D@0, D@1, D@0), 0, x - 12, x - 4)\n"
      "input w_b = shard(1)\n"
      "inputs #2..#-1 = replicate\n",
      s, d);
  EXPECT_EQ(RelationsOf(r2.inputs, s, "w_a"),
            Strings{"slice(concat(0, w_a@0, w_a@1, w_a@0), 0, 0, 8)"});
}

TEST(RelationSpecTest, CycleRepeatsRules) {
  ir::Graph s = MakeGraph(0, {{"emb", "f32[8]"},
                              {"a1", "f32[8]"}, {"b1", "f32[4]"},
                              {"a2", "f32[8]"}, {"b2", "f32[4]"},
                              {"a3", "f32[8]"}, {"b3", "f32[4]"},
                              {"data", "f32[4]"}});
  ir::Program d;
  for (int32_t r = 0; r < 2; ++r) {
    d.ranks.push_back(MakeGraph(r, {{"emb", "f32[4]"},
                                    {"a1", "f32[4]"}, {"b1", "f32[4]"},
                                    {"a2", "f32[4]"}, {"b2", "f32[4]"},
                                    {"a3", "f32[4]"}, {"b3", "f32[4]"},
                                    {"data", "f32[4]"}}));
  }
  SpecResult r = Eval("input #0 = shard(0)\ninputs #1..#-2 cycle [shard(0), replicate]\n"
                      "input #-1 = replicate\n",
                      s, d);
  for (const char* a : {"a1", "a2", "a3"}) {
    EXPECT_EQ(RelationsOf(r.inputs, s, a),
              Strings{"concat(0, " + std::string(a) + "@0, " + std::string(a) + "@1)"});
  }
  for (const char* b : {"b1", "b2", "b3"}) {
    EXPECT_EQ(RelationsOf(r.inputs, s, b).size(), 2u);
  }
  EXPECT_NE(r.inputs[1].origin.find("[cycle rule 0]"), std::string::npos);
  EXPECT_EQ(ErrorOf("input #0 = shard(0)\ninputs #1..#-1 cycle [shard(0), replicate]\n", s, d),
            "2: the cycle has 2 rules but the selectors pick 7 inputs, which is not a multiple");
}

TEST(RelationSpecTest, UnevenShardsTakeSizesFromD) {
  ir::Graph s = MakeGraph(0, {{"w", "f32[10, 2]"}});
  ir::Program d;
  d.ranks.push_back(MakeGraph(0, {{"w", "f32[6, 2]"}}));
  d.ranks.push_back(MakeGraph(1, {{"w", "f32[4, 2]"}}));
  EXPECT_EQ(Eval("input w = shard(0)\n", s, d).inputs.at(0).expr.ToString(),
            "concat(0, w@0, w@1)");
}

TEST(RelationSpecTest, GroupsRestrictRanks) {
  ir::Graph s = SmallS();
  ir::Program d = SmallD(4);
  // Ranks 0 and 2 form one data-parallel replica's tensor-parallel group (hypothetically).
  SpecResult r = Eval(
      "group even = [r for r in all if r % 2 == 0]\n"
      "let n = world\n"
      "input w_a = concat(0, [D@r for r in ranks], [D@r for r in ranks])\n"
      "input w_b = concat(1, [D@r for r in all])\n"
      "inputs bias, ln = replicate\n"
      "group everyone = all\n"
      "input ids = replicate\n"
      "output #0 = sum([D@r for r in even])\n",
      s, d);
  EXPECT_EQ(RelationsOf(r.inputs, s, "w_a"), Strings{"concat(0, w_a@0, w_a@2, w_a@0, w_a@2)"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "bias"), (Strings{"bias@0", "bias@2"}));
  EXPECT_EQ(RelationsOf(r.inputs, s, "ids").size(), 4u);
  EXPECT_EQ(RelationsOf(r.expected_outputs, s, "loss"), Strings{"sum(out_loss@0, out_loss@2)"});
}

// A 2 x 2 mesh (dp, tp) over ranks 0..3, row-major: rank = 2 * dp + tp.
TEST(RelationSpecTest, MeshPlacementsRelateEveryReplica) {
  ir::Graph s = MakeGraph(0,
                          {{"x", "f32[4, 6]"},
                           {"y", "f32[4, 6]"},
                           {"z", "f32[8]"},
                           {"g", "f32[6]"},
                           {"w", "f32[4, 6]"}},
                          {{"out", "f32[4, 6]"}});
  ir::Program d;
  for (int32_t r = 0; r < 4; ++r) {
    d.ranks.push_back(MakeGraph(r,
                                {{"x", "f32[2, 3]"},
                                 {"y", "f32[4, 3]"},
                                 {"z", "f32[2]"},
                                 {"g", "f32[6]"},
                                 {"w", "f32[4, 3]"}},
                                {{"dout", "f32[2, 6]"}}));
  }
  SpecResult r = Eval(
      "mesh dp = 2, tp = world / 2\n"
      "input x = placements(shard(0), shard(1))\n"
      "input y = placements(replicate, shard(1))\n"
      "input z = placements(shard(0), shard(0))\n"
      "input g = placements(partial, replicate)\n"
      "input w = placements(shard(-1), partial)\n"
      "output #0 = placements(shard(0), replicate)\n",
      s, d);
  EXPECT_EQ(RelationsOf(r.inputs, s, "x"),
            Strings{"concat(0, concat(1, x@0, x@1), concat(1, x@2, x@3))"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "y"), (Strings{"concat(1, y@0, y@1)", "concat(1, y@2, y@3)"}));
  // Two axes on one dim: dp is the major one.
  EXPECT_EQ(RelationsOf(r.inputs, s, "z"), Strings{"concat(0, z@0, z@1, z@2, z@3)"});
  EXPECT_EQ(RelationsOf(r.inputs, s, "g"), (Strings{"sum(g@0, g@2)", "sum(g@1, g@3)"}));
  EXPECT_EQ(RelationsOf(r.inputs, s, "w"),
            Strings{"sum(concat(1, w@0, w@2), concat(1, w@1, w@3))"});
  EXPECT_EQ(RelationsOf(r.expected_outputs, s, "out"),
            (Strings{"concat(0, dout@0, dout@2)", "concat(0, dout@1, dout@3)"}));

  // A mesh over the active group; a D family as the last argument.
  SpecResult sub = Eval(
      "group odd = [1, 3]\nmesh pp = 2\ninput y = placements(shard(1), D.w)\n"
      "group everyone = all\nmesh dp = 2, tp = 2\ninput x = placements(shard(0), shard(1))\n"
      "input z = placements(shard(0), shard(0))\ninput g = placements(partial, replicate)\n"
      "input w = placements(shard(1), partial)\n",
      s, d);
  EXPECT_EQ(RelationsOf(sub.inputs, s, "y"), Strings{"concat(1, w@1, w@3)"});

  // Each error stops the evaluation at its line, before coverage is checked.
  auto has = [](const std::string& error, const std::string& part) {
    return error.find(part) != std::string::npos;
  };
  std::string e = ErrorOf("input x = placements(shard(0), shard(1))\n", s, d);
  EXPECT_TRUE(has(e, "1: placements(...) needs a mesh statement above it")) << e;
  e = ErrorOf("mesh dp = 2, tp = 3\n", s, d);
  EXPECT_TRUE(has(e, "1: the mesh dp=2 x tp=3 has 6 devices but the active group has 4 ranks"))
      << e;
  e = ErrorOf("mesh dp = 2, tp = 2\ninput x = placements(shard(0))\n", s, d);
  EXPECT_TRUE(has(e,
                  "2: placements takes one placement per mesh axis (2, the mesh of line 1), "
                  "got 1"))
      << e;
  e = ErrorOf("mesh dp = 2, tp = 2\ninput x = placements(shard(2), replicate)\n", s, d);
  EXPECT_TRUE(has(e, "2: placement 0 (axis dp): dimension 2 is out of range for x")) << e;
  e = ErrorOf("mesh dp = 2, tp = 2\ninput x = placements(concat(0, D@0), replicate)\n", s, d);
  EXPECT_TRUE(has(e, "2: placement 0 (axis dp) must be replicate, partial, shard(d) or zigzag(d)"))
      << e;
  e = ErrorOf("mesh dp = 2, dp = 2\n", s, d);
  EXPECT_TRUE(has(e, "1: mesh axis 'dp' is named twice")) << e;
  e = ErrorOf("mesh dp = 4\ninput x = placements(replicate)\n", s, d);
  EXPECT_TRUE(has(e, "2: relation for S tensor x has shape [2, 3]")) << e;
  e = ErrorOf("mesh dp = 4\nlet k = placements(replicate)\n", s, d);
  EXPECT_TRUE(has(e, "2: 'placements' is a whole rule")) << e;
}

// Context parallelism's load-balanced split: on a cp x tp mesh, cp rank i holds chunks i and
// 2 * cp - 1 - i of the sequence (dim 0), replicated over tp.
TEST(RelationSpecTest, ZigzagPlacementSplitsChunksHeadAndTail) {
  ir::Graph s = MakeGraph(0, {{"h", "f32[8, 3]"}, {"odd", "f32[6, 3]"}}, {{"out", "f32[8, 3]"}});
  ir::Program d;
  for (int32_t r = 0; r < 4; ++r) {
    d.ranks.push_back(
        MakeGraph(r, {{"h", "f32[4, 3]"}, {"odd", "f32[3, 3]"}}, {{"dout", "f32[4, 3]"}}));
  }
  SpecResult r = Eval(
      "mesh cp = 2, tp = 2\n"
      "input h = placements(zigzag(0), replicate)\n"
      "input odd = placements(shard(0), replicate)\n"
      "output #0 = placements(zigzag(-2), replicate)\n",
      s, d);
  EXPECT_EQ(RelationsOf(r.inputs, s, "h"),
            (Strings{"concat(0, slice(h@0, 0, 0, 2), slice(h@2, 0, 0, 2), slice(h@2, 0, 2, 4), "
                     "slice(h@0, 0, 2, 4))",
                     "concat(0, slice(h@1, 0, 0, 2), slice(h@3, 0, 0, 2), slice(h@3, 0, 2, 4), "
                     "slice(h@1, 0, 2, 4))"}));
  EXPECT_EQ(RelationsOf(r.expected_outputs, s, "out").size(), 2u);
  // One cp axis of 4 ranks: chunks 0..7 are held by ranks 0, 1, 2, 3, 3, 2, 1, 0.
  ir::Graph s4 = MakeGraph(0, {{"h", "f32[16, 3]"}});
  ir::Program d4;
  for (int32_t r = 0; r < 4; ++r) d4.ranks.push_back(MakeGraph(r, {{"h", "f32[4, 3]"}}));
  EXPECT_EQ(
      Eval("mesh cp = 4\ninput h = placements(zigzag(0))\n", s4, d4).inputs.at(0).expr.ToString(),
      "concat(0, slice(h@0, 0, 0, 2), slice(h@1, 0, 0, 2), slice(h@2, 0, 0, 2), "
      "slice(h@3, 0, 0, 2), slice(h@3, 0, 2, 4), slice(h@2, 0, 2, 4), slice(h@1, 0, 2, 4), "
      "slice(h@0, 0, 2, 4))");

  auto has = [](const std::string& error, const std::string& part) {
    return error.find(part) != std::string::npos;
  };
  std::string e =
      ErrorOf("mesh cp = 2, tp = 2\ninput odd = placements(zigzag(0), replicate)\n", s, d);
  EXPECT_TRUE(has(e, "2: zigzag(0) needs an even static size along its dimension")) << e;
  e = ErrorOf("mesh cp = 2, tp = 2\ninput h = placements(zigzag(0), shard(0))\n", s, d);
  EXPECT_TRUE(has(e, "2: zigzag(0) splits its dimension alone")) << e;
}

TEST(RelationSpecTest, AssumeRelatesIntermediates) {
  ir::Graph s = SmallS();
  ir::Program d = SmallD(2);
  SpecResult r = Eval(
      "input w_a = shard(0)\n"
      "input w_b = shard(1)\n"
      "inputs bias, ln, ids = replicate\n"
      "assume mask = concat(0, [D.dmask@r for r in ranks])\n",
      s, d);
  EXPECT_EQ(r.inputs.size(), 8u);
  ASSERT_EQ(r.assumed.size(), 1u);
  EXPECT_EQ(RelationToString(r.assumed[0], s), "mask == concat(0, dmask@0, dmask@1)");
  EXPECT_TRUE(r.expected_outputs.empty());  // no output line: nothing expected
}

// An input rule naming a tensor D computes would bind S's input to an intermediate and hide what
// computes it (verify once proved REFINES so while check refused the spec): refused by the one
// evaluator every command uses.
TEST(RelationSpecTest, InputRulesNameOnlyDInputs) {
  ir::Graph s = SmallS();
  ir::Program d = SmallD(2);
  const std::string rest = "input w_b = shard(1)\ninputs bias, ln, ids = replicate\n";
  EXPECT_EQ(ErrorOf("input w_a = shard(0, D.dmask)\n" + rest, s, d),
            "1: the input rule of S input w_a names dmask@0, which is not an input of that rank "
            "but computed in it: input rules can only name D inputs (placeholders); relate an "
            "intermediate tensor with 'assume'");
  EXPECT_NE(ErrorOf("input w_a = concat(0, D@0, D.dmask@1)\n" + rest, s, d).find("dmask@1"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("input w_a = shard(0)\n" + rest, s, d), "");
  // The same tensor is fine as a cut point, which is a listed premise.
  SpecResult r = Eval("input w_a = shard(0)\n" + rest + "assume mask = shard(0, D.dmask)\n", s, d);
  ASSERT_EQ(r.premises.size(), 1u);
  EXPECT_EQ(r.premises[0].kind, "assume");
  EXPECT_EQ(r.premises[0].text, "mask == concat(0, dmask@0, dmask@1)");
  EXPECT_EQ(r.premises[0].origin, "t.rel:4");
}

// `rng positional` states the RNG model of random operators: a premise of kind "rng", once.
TEST(RelationSpecTest, RngStatesTheModelOfRandomOperators) {
  ir::Graph s = SmallS();
  ir::Program d = SmallD(2);
  const std::string rules =
      "input w_a = shard(0)\ninput w_b = shard(1)\ninputs bias, ln, ids = replicate\n";
  SpecResult none = Eval(rules, s, d);
  EXPECT_EQ(none.rng_model, "");
  EXPECT_TRUE(none.premises.empty());
  SpecResult r = Eval(rules + "rng positional  // same draw per element\n", s, d);
  EXPECT_EQ(r.rng_model, "positional");
  ASSERT_EQ(r.premises.size(), 1u);
  EXPECT_EQ(r.premises[0].kind, "rng");
  EXPECT_EQ(r.premises[0].text,
            "positional: every random operator of S and D draws the same value for the same "
            "element of the same logical tensor");
  EXPECT_EQ(r.premises[0].origin, "t.rel:4");
  EXPECT_EQ(ErrorOf(rules + "rng positional\nrng positional\n", s, d),
            "5: the RNG model is already stated on line 4");
  EXPECT_NE(ErrorOf(rules + "rng megatron\n", s, d).find("4: unknown RNG model 'megatron'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(rules + "rng\n", s, d).find("4: "), std::string::npos);
  EXPECT_NE(ErrorOf(rules + "rng positional extra\n", s, d).find("4: unexpected"),
            std::string::npos);
  EXPECT_NE(ErrorOf(rules + "let rng = 1\n", s, d).find("reserved"), std::string::npos);
}

TEST(RelationSpecTest, ErrorsNameLineAndProblem) {
  ir::Graph s = SmallS();
  ir::Program d = SmallD(2);
  const std::string rest = "input w_b = shard(1)\ninputs #2..#-1 = replicate\n";
  auto has = [](const std::string& error, const std::string& part) {
    return error.find(part) != std::string::npos;
  };
  std::string e = ErrorOf("input #0 = shard(0)\n", s, d);
  EXPECT_TRUE(has(e, "0: 4 S input(s) are covered by no input rule: w_b (#1), bias (#2)")) << e;
  e = ErrorOf("input #0 = shard(0)\n" + rest + "input w_b = replicate\n", s, d);
  EXPECT_TRUE(has(e, "4: S input w_b (#1) is already covered by the input rule on line 2")) << e;
  e = ErrorOf("input #0 = shard(1)\n" + rest, s, d);
  EXPECT_TRUE(has(e, "1: relation for S tensor w_a has shape [4, 8] but w_a has shape [8, 4]"))
      << e;
  e = ErrorOf("input #0 = concat(0, D@0, D.ids@1)\n" + rest, s, d);
  EXPECT_TRUE(has(e, "1: relation for S tensor w_a: concat along dimension 0")) << e;
  e = ErrorOf("input #7 = replicate\n", s, d);
  EXPECT_TRUE(has(e, "1: position #7 is out of range: S has 5 inputs")) << e;
  e = ErrorOf("input nothing_* = replicate\n", s, d);
  EXPECT_TRUE(has(e, "1: no S inputs matches 'nothing_*'")) << e;
  e = ErrorOf("let x = 1 / (world - 2)\n", s, d);
  EXPECT_TRUE(has(e, "1: division by zero")) << e;
  e = ErrorOf("let x = y + 1\n", s, d);
  EXPECT_TRUE(has(e, "1: unknown name 'y'")) << e;
  e = ErrorOf("\n\ninput w_a = D@5\n", s, d);
  EXPECT_TRUE(has(e, "3: rank 5 is outside the distributed program (2 ranks)")) << e;
  e = ErrorOf("input w_a = concat(0, [D@r for r in ranks if r > 7])\n", s, d);
  EXPECT_TRUE(has(e, "1: concat() got no tensors")) << e;
  e = ErrorOf("input #0 = shard(0)\n" + rest + "output #0 = D.nope@0\n", s, d);
  EXPECT_TRUE(has(e, "4: rank 0 has no tensor named nope")) << e;
  e = ErrorOf("let world2 = dim(S.w_a, 2)\n", s, d);
  EXPECT_TRUE(has(e, "1: dimension 2 is out of range for f32[8, 4]")) << e;
  // Syntax errors are reported by Parse.
  e = ErrorOf("input #0 = concat(0,\n  D@0,\n", s, d);
  EXPECT_TRUE(has(e, "expected")) << e;
  e = ErrorOf("let = 3\n", s, d);
  EXPECT_TRUE(has(e, "1: expected a name")) << e;
  e = ErrorOf("let ranks = 3\n", s, d);
  EXPECT_TRUE(has(e, "1: 'ranks' is a reserved word")) << e;
  e = ErrorOf("frobnicate #0\n", s, d);
  EXPECT_TRUE(has(e, "1: unknown statement 'frobnicate'")) << e;
  e = ErrorOf("input #x = replicate\n", s, d);
  EXPECT_TRUE(has(e, "1: column 7: '#' must be followed by a position")) << e;
  e = ErrorOf("input #0 = replicate extra\n", s, d);
  EXPECT_TRUE(has(e, "1: unexpected 'extra' at the end of the statement")) << e;
  e = ErrorOf("let x = 9223372036854775807 + 1\n", s, d);
  EXPECT_TRUE(has(e, "1: integer overflow in '+'")) << e;
  e = ErrorOf("let x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n", s, d);
  EXPECT_TRUE(has(e, "1: expression nested too deeply")) << e;
  e = ErrorOf("let x = " + std::string(5000, '-') + "1\n", s, d);
  EXPECT_TRUE(has(e, "1: expression nested too deeply")) << e;
  e = ErrorOf("output #0 cycle [replicate]\n", s, d);
  EXPECT_TRUE(has(e, "1: 'cycle' is only allowed for inputs")) << e;
}

// Every file in tests/data/bad-specs starts with `// expect-error: <line>: <text>` and is run
// against the Qwen2 TP2 corpus graphs.
TEST(RelationSpecTest, BadSpecFilesFailWithTheirExpectedError) {
  ir::Graph s = ReadProgram("qwen2/paral1_layer1").ranks[0];
  ir::Program d = ReadProgram("qwen2/paral2_layer1");
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GG_TEST_DATA_DIR) + "/bad-specs")) {
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 5u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    static const std::regex kExpect(R"(^// expect-error: (\d+): (.*)$)");
    std::smatch m;
    ASSERT_TRUE(std::regex_match(first, m, kExpect)) << first;
    try {
      EvaluateSpec(RelationSpec::Load(path.string()), s, d);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path.string());
      EXPECT_EQ(e.line(), std::stoi(m[1]));
      EXPECT_NE(e.problem().find(m[2].str()), std::string::npos) << e.what();
    }
  }
}

TEST(RelationSpecTest, MissingFileIsAnInputError) {
  EXPECT_THROW(RelationSpec::Load("/nonexistent/spec.rel"), InputError);
}

}  // namespace
}  // namespace gg::symbolic

namespace gg::symbolic {
namespace {

std::string ConstantSpecError(const std::string& text, const ir::Graph& s, const ir::Program& d) {
  try {
    EvaluateSpec(RelationSpec::Parse(text, "c.rel"), s, d);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// `constant` states the values of graph constants (self._tensor_constantN) a capture omits.
TEST(RelationSpecCorpusTest, ConstantStatesGraphConstantValues) {
  ir::Graph s = frontend::LoadProgram({std::string(GG_CORPUS_DIR) + "/gpt/paral1_layer1"}).ranks[0];
  ir::Program d = frontend::LoadProgram({std::string(GG_CORPUS_DIR) + "/gpt/paral2_layer1"});
  std::ifstream in(std::string(GG_SOURCE_DIR) + "/examples/gpt.rel");
  std::string gpt((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SpecResult r = EvaluateSpec(RelationSpec::Parse(gpt, "gpt.rel"), s, d);
  // S has _tensor_constant0..1, D's ranks _tensor_constant0..3: all masked-fill values of 0.
  ASSERT_EQ(r.constants.size(), 4u);
  for (const auto& [name, value] : r.constants) {
    EXPECT_EQ(name.rfind("_tensor_constant", 0), 0u) << name;
    EXPECT_EQ(value, 0.0) << name;
  }
  // A name and a real-valued expression.
  std::string base = gpt.substr(0, gpt.find("constant _tensor_constant*"));
  SpecResult named = EvaluateSpec(
      RelationSpec::Parse(base + "constant _tensor_constant3 = -3 / 2\n", "c.rel"), s, d);
  ASSERT_EQ(named.constants.size(), 1u);
  EXPECT_EQ(named.constants.at("_tensor_constant3"), -1.5);
  auto has = [](const std::string& error, const std::string& part) {
    return error.find(part) != std::string::npos;
  };
  std::string e = ConstantSpecError(base + "constant _tensor_constant9 = 1\n", s, d);
  EXPECT_TRUE(has(e, "no graph constant of S or D matches '_tensor_constant9'")) << e;
  e = ConstantSpecError(base + "constant #0 = 1\n", s, d);
  EXPECT_TRUE(has(e, "not by position (#0)")) << e;
  e = ConstantSpecError(
      base + "constant _tensor_constant1 = 0\nconstant _tensor_constant* = 0\n", s, d);
  EXPECT_TRUE(has(e, "constant _tensor_constant1 is already given a value on line")) << e;
  e = ConstantSpecError(base + "constant _tensor_constant1 0\n", s, d);
  EXPECT_TRUE(has(e, "expected")) << e;
  e = ConstantSpecError(base + "let constant = 1\n", s, d);
  EXPECT_TRUE(has(e, "reserved")) << e;
}

// ---- regions: cut, expect, inputs outside the region --------------------------------------------

struct Region {
  ir::Graph s;
  ir::Program d;
};

// tests/data/regions/mlp: y = relu(x w1^T) w2^T, column- then row-parallel at TP 2; D names the
// first product h_par where S names it h.
Region LoadRegion(const std::string& dist = "dist") {
  const std::string dir = std::string(GG_TEST_DATA_DIR) + "/regions/mlp/";
  return {frontend::LoadGraph(dir + "seq.py"), frontend::LoadProgram({dir + dist})};
}

TEST(RelationSpecRegionTest, CutIsAPremiseAndInputsAboveItNeedNoRule) {
  Region g = LoadRegion();
  const std::string spec =
      "input w2 = shard(1)\n"
      "cut h = concat(1, [D.h_par@r for r in ranks])\n"
      "expect r = shard(1)\n"
      "output y = replicate\n";
  SpecResult r = Eval(spec, g.s, g.d);
  // x and w1 only feed h, above the cut: no rule is owed for them.
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(g.s.ValueName(r.inputs[0].s_tensor), "w2");
  ASSERT_EQ(r.assumed.size(), 1u);
  EXPECT_EQ(RelationToString(r.assumed[0], g.s), "h == concat(1, h_par@0, h_par@1)");
  ASSERT_EQ(r.cuts.size(), 1u);
  EXPECT_TRUE(r.cuts[0].related);
  EXPECT_EQ(g.s.ValueName(r.cuts[0].s_tensor), "h");
  ASSERT_EQ(r.premises.size(), 1u);
  EXPECT_EQ(r.premises[0].kind, "cut");
  EXPECT_EQ(r.premises[0].text, "h == concat(1, h_par@0, h_par@1)");
  EXPECT_EQ(r.premises[0].origin, "t.rel:2");
  // expect on an intermediate: the same-named D tensor; output: the same position.
  EXPECT_EQ(RelationsOf(r.expected_outputs, g.s, "r"), Strings{"concat(1, r@0, r@1)"});
  EXPECT_EQ(RelationsOf(r.expected_outputs, g.s, "y"), (Strings{"y@0", "y@1"}));
  // A cut without a relation is a leaf and no premise.
  SpecResult bare = Eval("input w2 = shard(1)\ncut h\noutput y = replicate\n", g.s, g.d);
  ASSERT_EQ(bare.cuts.size(), 1u);
  EXPECT_FALSE(bare.cuts[0].related);
  EXPECT_TRUE(bare.assumed.empty());
  EXPECT_TRUE(bare.premises.empty());
}

TEST(RelationSpecRegionTest, InputsInsideTheRegionStillNeedARule) {
  Region g = LoadRegion();
  // Without the cut, x and w1 are in y's cone.
  EXPECT_NE(ErrorOf("input w2 = shard(1)\noutput y = replicate\n", g.s, g.d)
                .find("0: 2 S input(s) are covered by no input rule: x (#0), w1 (#1) (the "
                      "checked tensors depend on them"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("cut h = concat(1, [D.h_par@r for r in ranks])\noutput y = replicate\n", g.s, g.d)
          .find("0: 1 S input(s) are covered by no input rule: w2 (#2)"),
      std::string::npos);
  // An expect is checked: its cone needs rules too (t_1 = t(w2)).
  EXPECT_NE(ErrorOf("expect t_1 = concat(0, [D.t_1@r for r in ranks])\n", g.s, g.d)
                .find("covered by no input rule: w2 (#2)"),
            std::string::npos);
  EXPECT_EQ(
      ErrorOf("input w2 = shard(1)\nexpect t_1 = concat(0, [D.t_1@r for r in ranks])\n", g.s, g.d),
      "");
  // Nothing checked: the spec serves a whole-graph run, every input needs its rule (as before).
  EXPECT_NE(ErrorOf("input w2 = shard(1)\n", g.s, g.d).find("2 S input(s) are covered"),
            std::string::npos);
}

TEST(RelationSpecRegionTest, CutAndExpectErrors) {
  Region g = LoadRegion();
  const std::string w2 = "input w2 = shard(1)\n";
  EXPECT_EQ(ErrorOf(w2 + "cut x = replicate\noutput y = replicate\n", g.s, g.d),
            "2: S tensor x is an input: relate it with an input rule, not a cut");
  EXPECT_EQ(ErrorOf(w2 + "cut h\ncut h\noutput y = replicate\n", g.s, g.d),
            "3: S tensor h is already cut on line 2");
  EXPECT_EQ(ErrorOf(w2 + "cut r\nexpect r = shard(1)\noutput y = replicate\n", g.s, g.d),
            "3: S tensor r is cut on line 2 and expected here: a cut's relation is a premise, not "
            "a check");
  EXPECT_EQ(ErrorOf(w2 + "cut y = replicate\noutput y = replicate\n", g.s, g.d),
            "3: S tensor y is cut on line 2 and expected here: a cut's relation is a premise, not "
            "a check");
  EXPECT_EQ(ErrorOf(w2 + "cut h\nexpect r = shard(1)\nexpect r = shard(1)\n", g.s, g.d),
            "4: S tensor r is already given an expected relation on line 3");
  EXPECT_EQ(ErrorOf(w2 + "cut h\noutput y = replicate\nexpect y = replicate\n", g.s, g.d),
            "4: S tensor y is already given an expected relation on line 3");
  EXPECT_EQ(ErrorOf(w2 + "cut h\nexpect #0 = replicate\n", g.s, g.d),
            "3: expect selects S tensors by name or glob, not by position (#0)");
  EXPECT_EQ(ErrorOf(w2 + "cut #0\n", g.s, g.d),
            "2: cut selects S tensors by name or glob, not by position (#0)");
  EXPECT_EQ(ErrorOf(w2 + "cut nothing_*\n", g.s, g.d), "2: no S tensor matches 'nothing_*'");
  EXPECT_NE(ErrorOf(w2 + "cut h cycle [replicate]\n", g.s, g.d).find("only allowed for inputs"),
            std::string::npos);
  EXPECT_NE(ErrorOf(w2 + "expect r\n", g.s, g.d).find("2: "), std::string::npos);
  // The counterpart of a cut is the same-named D tensor: D has no `h`.
  EXPECT_NE(ErrorOf(w2 + "cut h = shard(1)\noutput y = replicate\n", g.s, g.d)
                .find("rank 0 has no tensor named h"),
            std::string::npos);
  EXPECT_NE(ErrorOf("let cut = 1\n", g.s, g.d).find("reserved"), std::string::npos);
  EXPECT_NE(ErrorOf("let expect = 1\n", g.s, g.d).find("reserved"), std::string::npos);
}

// ---- naming inputs by FQN ---------------------------------------------------------------------

// SmallS / SmallD with FQNs on the weights; D's inputs are renamed (d_*), as AOT's primals_N
// differ between captures, so only the FQNs pair them.
void SetFqns(ir::Graph* g, const std::string& prefix) {
  const std::vector<std::string> fqns = {"decoder.layers.0.mlp.fc1.weight",
                                         "decoder.layers.0.mlp.fc2.weight", "decoder.bias"};
  for (size_t i = 0; i < fqns.size(); ++i) {
    ir::Node& node = g->nodes[g->inputs[i]];
    node.fqn = fqns[i];
    node.name = prefix + node.name;
    node.outputs[0].name = node.name;
  }
  g->Reindex();
}

struct FqnGraphs {
  ir::Graph s = SmallS();
  ir::Program d = SmallD(2);
  FqnGraphs() {
    SetFqns(&s, "");
    for (ir::Graph& g : d.ranks) SetFqns(&g, "d_");
  }
};

TEST(RelationSpecFqnTest, QuotedSelectorsAndReferencesResolveByFqn) {
  FqnGraphs g;
  SpecResult r = Eval(
      "input \"decoder.layers.0.mlp.fc1.weight\" = shard(0)\n"
      "input \"decoder.layers.0.mlp.fc2.weight\" = "
      "concat(1, [D.\"decoder.layers.0.mlp.fc2.weight\"@r for r in ranks])\n"
      "input \"decoder.bias\" = replicate(D.\"decoder.bias\")\n"
      "input ln, ids = replicate\n"
      "let k = dim(S.\"decoder.layers.0.mlp.fc1.weight\", 0)\n",
      g.s, g.d);
  // The shorthand's default counterpart is D's input of the same FQN, not of the same name.
  EXPECT_EQ(RelationsOf(r.inputs, g.s, "w_a"), Strings{"concat(0, d_w_a@0, d_w_a@1)"});
  EXPECT_EQ(RelationsOf(r.inputs, g.s, "w_b"), Strings{"concat(1, d_w_b@0, d_w_b@1)"});
  EXPECT_EQ(RelationsOf(r.inputs, g.s, "bias"), (Strings{"d_bias@0", "d_bias@1"}));
  EXPECT_EQ(r.inputs[0].origin, "t.rel:1: input \"decoder.layers.0.mlp.fc1.weight\" = shard(0)");
}

TEST(RelationSpecFqnTest, FqnGlobsSelectInSignatureOrder) {
  FqnGraphs g;
  SpecResult r = Eval(
      "inputs \"decoder.layers.*.mlp.fc?.weight\" cycle [shard(0), shard(1)]\n"
      "input \"decoder.bias\", ln, ids = replicate\n",
      g.s, g.d);
  EXPECT_EQ(RelationsOf(r.inputs, g.s, "w_a"), Strings{"concat(0, d_w_a@0, d_w_a@1)"});
  EXPECT_EQ(RelationsOf(r.inputs, g.s, "w_b"), Strings{"concat(1, d_w_b@0, d_w_b@1)"});
}

TEST(RelationSpecFqnTest, SameRelationsAsThePlainNameSpec) {
  FqnGraphs g;
  SpecResult by_fqn = Eval(
      "input \"decoder.layers.0.mlp.fc1.weight\" = shard(0)\n"
      "input \"decoder.layers.0.mlp.fc2.weight\" = shard(1)\n"
      "input \"decoder.bias\", ln = partial\n"
      "input ids = replicate\n",
      g.s, g.d);
  SpecResult by_name = Eval(
      "input w_a = shard(0, D.d_w_a)\n"
      "input w_b = shard(1, D.d_w_b)\n"
      "input bias = partial(D.d_bias)\n"
      "input ln = partial\n"
      "input ids = replicate\n",
      g.s, g.d);
  ASSERT_EQ(by_fqn.inputs.size(), by_name.inputs.size());
  for (size_t i = 0; i < by_fqn.inputs.size(); ++i) {
    EXPECT_EQ(by_fqn.inputs[i].s_tensor, by_name.inputs[i].s_tensor);
    EXPECT_EQ(by_fqn.inputs[i].expr.ToString(), by_name.inputs[i].expr.ToString());
  }
}

TEST(RelationSpecFqnTest, UnknownFqnsNameTheLineAndTheClosestFqns) {
  FqnGraphs g;
  const std::string rest =
      "input ln, ids, \"decoder.bias\" = replicate\n"
      "input \"decoder.layers.0.mlp.fc2.weight\" = shard(1)\n";
  std::string err =
      ErrorOf("input \"decoder.layers.0.mlp.fc1.weigth\" = shard(0)\n" + rest, g.s, g.d);
  EXPECT_EQ(err.rfind("1: no S input has the FQN \"decoder.layers.0.mlp.fc1.weigth\"", 0), 0u)
      << err;
  EXPECT_NE(err.find("closest FQNs in S: \"decoder.layers.0.mlp.fc1.weight\""), std::string::npos)
      << err;
  err = ErrorOf(rest + "input w_a = concat(0, D.\"decoder.layers.0.mlp.fc1\"@0, D.w_a@1)\n", g.s,
                g.d);
  EXPECT_EQ(err.rfind("3: rank 0 has no input with the FQN \"decoder.layers.0.mlp.fc1\"", 0), 0u)
      << err;
  EXPECT_NE(err.find("closest FQNs in rank 0: \"decoder.layers.0.mlp.fc1.weight\""),
            std::string::npos)
      << err;
  err = ErrorOf(rest + "input w_a = shard(0, D.d_w_a)\nlet k = dim(S.\"nope\", 0)\n", g.s, g.d);
  EXPECT_EQ(err.rfind("4: S has no input with the FQN \"nope\"", 0), 0u) << err;
  // A graph whose dump recorded no FQNs says so instead of suggesting.
  ir::Graph plain = SmallS();
  err = ErrorOf("input \"decoder.bias\" = replicate\n", plain, SmallD(2));
  EXPECT_NE(err.find("S records no parameter FQNs"), std::string::npos) << err;
  // A default counterpart by FQN that D lacks.
  ir::Program half = SmallD(2);
  SetFqns(&half.ranks[0], "d_");
  err = ErrorOf("input \"decoder.bias\" = replicate\n", g.s, half);
  EXPECT_EQ(err.rfind("1: rank 1 has no input with the FQN \"decoder.bias\"", 0), 0u) << err;
}

TEST(RelationSpecFqnTest, QuotedNamesAreInputsOnlyAndMustClose) {
  FqnGraphs g;
  EXPECT_NE(ErrorOf("output \"decoder.bias\" = replicate\n", g.s, g.d).find("1: a quoted FQN"),
            std::string::npos);
  EXPECT_NE(ErrorOf("assume \"decoder.bias\" = replicate\n", g.s, g.d).find("names a graph input"),
            std::string::npos);
  EXPECT_NE(ErrorOf("constant \"decoder.bias\" = 1\n", g.s, g.d).find("a quoted FQN"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("input ids = replicate\ninput \"decoder.bias = replicate\n", g.s, g.d),
            "2: column 7: unterminated quoted name (a closing '\"' is missing)");
  EXPECT_EQ(ErrorOf("input \"\" = replicate\n", g.s, g.d), "1: column 7: empty quoted name \"\"");
}

}  // namespace
}  // namespace gg::symbolic
