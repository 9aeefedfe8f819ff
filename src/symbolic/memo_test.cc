#include "symbolic/memo.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "frontend/loader.h"
#include "ir/graph_edit.h"
#include "symbolic/inference.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/relation_spec.h"

namespace gg::symbolic {
namespace {

namespace fs = std::filesystem;

// ---- the key ---------------------------------------------------------------------------------

// The key of the e-graph `build` makes from nothing, as inference takes it: the record of the
// calls and the leaves' side, rank and type.
using Build = std::function<void(EGraph&, LeafTable&)>;
LocalProblemKey KeyOf(const Build& build) {
  LeafTable leaves;
  EGraph graph(TensorLanguage::Get().ops());
  graph.AddAnalysis(std::make_unique<TensorAnalysis>(leaves));
  std::vector<int64_t> trace;
  graph.SetTrace(&trace);
  build(graph, leaves);
  graph.Rebuild();
  graph.SetTrace(nullptr);
  LocalProblemKey key;
  key.AddAll(trace);
  key.Add(static_cast<int64_t>(graph.NumReasons()));
  key.AddLeaves(leaves);
  return key;
}

ClassId Leaf(EGraph& g, LeafTable& leaves, int32_t rank, ir::NodeId node, const std::string& name,
             ir::TensorType type = {ir::DType::kFloat32, {4, 6}}) {
  TensorLeaf leaf{TensorLeaf::Side::kDist, rank, ir::TensorRef{node, 0}, type, name};
  return g.Add(TensorLanguage::Get().Tensor(leaves.Intern(leaf)));
}

// S leaf `y` equal to scale(sum(a, b), factor) over two D leaves, with the given reasons' names.
struct Problem {
  ir::NodeId a_node = 10, b_node = 11;
  std::string a_name = "mm", b_name = "mm_1";
  ir::TensorType a_type{ir::DType::kFloat32, {4, 6}};
  double factor = 0.5;
  bool max = false;         // maxr for sumr: another reduce op argument
  bool same_input = false;  // sum(a, a): another D input
  std::string reason = "D:all_reduce@0";
};
Build Make(const Problem& p) {
  return [p](EGraph& g, LeafTable& leaves) {
    const TensorLanguage& lang = TensorLanguage::Get();
    ClassId a = Leaf(g, leaves, 0, p.a_node, p.a_name, p.a_type);
    ClassId b = p.same_input ? a : Leaf(g, leaves, 1, p.b_node, p.b_name);
    ClassId reduced = g.Add(ENode{p.max ? lang.maxr : lang.sumr, 0, {a, b}});
    ClassId scaled = g.Add(ENode{lang.scale, 0, {reduced, g.Add(lang.Flt(p.factor))}});
    TensorLeaf y{
        TensorLeaf::Side::kSeq, 0, ir::TensorRef{3, 0}, {ir::DType::kFloat32, {4, 6}}, "y"};
    ClassId s = g.Add(lang.Tensor(leaves.Intern(y)));
    g.Union(s, scaled, g.InternReason(p.reason));
  };
}

TEST(LocalProblemKeyTest, EqualUpToRenamingOfTensorsAndReasonNames) {
  Problem renamed;
  renamed.a_node = 70;
  renamed.b_node = 71;
  renamed.a_name = "mm_40";
  renamed.b_name = "mm_41";
  renamed.reason = "D:all_reduce_20@0";
  EXPECT_EQ(KeyOf(Make(Problem{})), KeyOf(Make(renamed)));
}

TEST(LocalProblemKeyTest, DiffersInATypeAConstantAnArgumentOrADInput) {
  const LocalProblemKey base = KeyOf(Make(Problem{}));
  Problem type;
  type.a_type = {ir::DType::kBFloat16, {4, 6}};
  Problem shape;
  shape.a_type = {ir::DType::kFloat32, {4, 7}};
  Problem constant;
  constant.factor = 0.25;
  Problem argument;
  argument.max = true;
  Problem input;
  input.same_input = true;
  for (const Problem* p : {&type, &shape, &constant, &argument, &input}) {
    EXPECT_NE(KeyOf(Make(*p)), base);
  }
  // A D input read by another rank (the leaf's rank is part of the key).
  EXPECT_NE(KeyOf([](EGraph& g, LeafTable& leaves) { Leaf(g, leaves, 0, 1, "x"); }),
            KeyOf([](EGraph& g, LeafTable& leaves) { Leaf(g, leaves, 1, 1, "x"); }));
}

TEST(LocalProblemKeyTest, TraceRecordsOnlyOutsideCalls) {
  // A rebuild's congruence unions are consequences of the calls before it, not calls.
  std::vector<int64_t> trace;
  LeafTable leaves;
  EGraph g(TensorLanguage::Get().ops());
  g.AddAnalysis(std::make_unique<TensorAnalysis>(leaves));
  g.SetTrace(&trace);
  const TensorLanguage& lang = TensorLanguage::Get();
  ClassId a = Leaf(g, leaves, 0, 1, "a");
  ClassId b = Leaf(g, leaves, 0, 2, "b");
  ClassId fa = g.Add(ENode{lang.scale, 0, {a, g.Add(lang.Flt(2.0))}});
  ClassId fb = g.Add(ENode{lang.scale, 0, {b, g.Add(lang.Flt(2.0))}});
  g.Union(a, b);
  const size_t before = trace.size();
  g.Rebuild();  // unites fa and fb by congruence
  EXPECT_EQ(g.Find(fa), g.Find(fb));
  EXPECT_EQ(trace.size(), before + 1);  // the rebuild only
  g.SetTrace(nullptr);
  g.Add(lang.Num(7));
  EXPECT_EQ(trace.size(), before + 1);
}

TEST(LocalProblemCacheTest, FindsOnlyAnEqualKey) {
  LocalProblemCache cache;
  LocalProblemKey k1, k2;
  k1.Add(1);
  k2.Add(2);
  LocalSolution s;
  s.iterations = 3;
  cache.Insert(k1, s);
  ASSERT_NE(cache.Find(k1), nullptr);
  EXPECT_EQ(cache.Find(k1)->iterations, 3u);
  EXPECT_EQ(cache.Find(k2), nullptr);
}

// ---- memoized inference on many identical layers ----------------------------------------------

// A Megatron MLP block per layer with a residual: h' = h + relu(h w1^T + 1) w2^T, w1
// column-parallel and w2 row-parallel over kRanks ranks, an all_reduce after the second product.
// `odd` (rank, layer) changes that layer on that rank: its constant (2 for 1).
class LayersTest : public ::testing::Test {
 protected:
  static constexpr int kLayers = 8;
  static constexpr int kRanks = 2;
  static constexpr int kFf = 8;  // hidden width of the MLP, split over the ranks

  static std::string Program(int rank, int parts, std::optional<std::pair<int, int>> odd) {
    const int ff = kFf / parts;
    auto T = [](int a, int b) {
      return "\"f32[" + std::to_string(a) + ", " + std::to_string(b) + "]\"";
    };
    std::string text = "# Graph[rank=" + std::to_string(rank) + "](fw, gid=0)\n" +
                       "class GraphModule(torch.nn.Module):\n    def forward(self, x: " + T(4, 6);
    for (int l = 0; l < kLayers; ++l) {
      text += ", w1_" + std::to_string(l) + ": " + T(ff, 6) + ", w2_" + std::to_string(l) + ": " +
              T(6, ff);
    }
    text += "):\n";
    std::string h = "x";
    for (int l = 0; l < kLayers; ++l) {
      const std::string s = "_" + std::to_string(l);
      const std::string k = odd && *odd == std::make_pair(rank, l) ? "2.0" : "1.0";
      auto line = [&](const std::string& name, const std::string& type, const std::string& op) {
        text += "        " + name + s + ": " + type + " = torch.ops." + op + "\n";
      };
      line("t1", T(6, ff), "aten.t.default(w1" + s + ")");
      line("a", T(4, ff), "aten.mm.default(" + h + ", t1" + s + ")");
      line("c", T(4, ff), "aten.add.Tensor(a" + s + ", " + k + ")");
      line("r", T(4, ff), "aten.relu.default(c" + s + ")");
      line("t2", T(ff, 6), "aten.t.default(w2" + s + ")");
      if (parts > 1) {
        line("p", T(4, 6), "aten.mm.default(r" + s + ", t2" + s + ")");
        line("ar", T(4, 6), "_c10d_functional.all_reduce.default(p" + s + ", 'sum', 'tp')");
        line("b", T(4, 6), "_c10d_functional.wait_tensor.default(ar" + s + ")");
      } else {
        line("b", T(4, 6), "aten.mm.default(r" + s + ", t2" + s + ")");
      }
      line("h", T(4, 6), "aten.add.Tensor(" + h + ", b" + s + ")");
      h = "h" + s;
    }
    return text + "        return (" + h + ",)\n";
  }

  void Load(std::optional<std::pair<int, int>> odd) {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    fs::path dir =
        fs::path(::testing::TempDir()) / ("gg_memo_layers_" + std::string(test->name()) + "_" +
                                          std::to_string(static_cast<long>(::getpid())));
    fs::remove_all(dir);
    fs::create_directories(dir / "dist");
    std::ofstream(dir / "seq.py") << Program(0, 1, std::nullopt);
    for (int r = 0; r < kRanks; ++r) {
      std::ofstream(dir / "dist" / ("r" + std::to_string(r) + ".py")) << Program(r, kRanks, odd);
    }
    s_ = frontend::LoadGraph((dir / "seq.py").string());
    d_ = frontend::LoadProgram({(dir / "dist").string()});
    fs::remove_all(dir);  // the graphs are in memory now
  }

  VerifyResult Run(bool memoize) {
    std::string spec_text = "input x = replicate\n";
    for (int l = 0; l < kLayers; ++l) {
      spec_text += "input w1_" + std::to_string(l) + " = shard(0)\ninput w2_" + std::to_string(l) +
                   " = shard(1)\n";
    }
    spec_text += "output h_" + std::to_string(kLayers - 1) + " = replicate\n";
    RelationSpec spec = RelationSpec::Parse(spec_text, "spec.rel");
    InferenceOptions options;
    options.memoize = memoize;
    return Verify(s_, d_, EvaluateSpec(spec, s_, d_), LemmaCatalogue::Default().Rules(), options);
  }

  // Everything a report shows but the timings and the memo counts.
  std::string Describe(const VerifyResult& r) const {
    std::string out = std::string(VerdictName(r.verdict)) + " " +
                      std::string(UnknownCauseName(r.unknown_cause)) + ": " + r.summary + "\n";
    for (const NodeOutcome& n : r.nodes) {
      out += "  " + s_.node(n.s_node).name + ": " + std::string(NodeStatusName(n.status)) + " (" +
             n.detail + ") stop " + std::string(StopReasonName(n.stop)) + ", hops " +
             std::to_string(n.hops) + ", " + std::to_string(n.iterations) + " iterations, " +
             std::to_string(n.egraph_nodes) + " nodes, " + std::to_string(n.egraph_classes) +
             " classes, " + std::to_string(n.attempts) + " attempts, work " +
             std::to_string(n.work_nodes) + "\n";
      for (const std::string& c : n.candidates) out += "    candidate " + c + "\n";
    }
    for (const OutputCheck& c : r.outputs) {
      out += "  output " + c.expected.expr.ToString() + (c.implied ? " yes " : " no ") + c.detail;
      for (const std::string& p : c.proof) out += " | " + p;
      out += "\n";
    }
    for (const auto& [name, rels] : r.relations) {
      for (const InferredRelation& rel : rels) {
        out += "  " + name + " == " + rel.relation.expr.ToString();
        for (const std::string& p : rel.proof) out += " | " + p;
        out += "\n";
      }
    }
    if (r.first_failure) out += "  first failure " + std::to_string(*r.first_failure) + "\n";
    return out;
  }

  std::string FirstFailure(const VerifyResult& r) const {
    return r.first_failure ? s_.node(r.nodes[*r.first_failure].s_node).name : "none";
  }

  ir::Graph s_;
  ir::Program d_;
};

TEST_F(LayersTest, IdenticalLayersAreReusedAndTheReportIsTheUnmemoizedOne) {
  Load(std::nullopt);
  VerifyResult memo = Run(true);
  VerifyResult plain = Run(false);
  ASSERT_EQ(memo.verdict, Verdict::kRefines) << Describe(memo);
  EXPECT_EQ(Describe(memo), Describe(plain));
  EXPECT_EQ(plain.local_reused, 0u);
  EXPECT_EQ(memo.local_solved + memo.local_reused, plain.local_solved);
  // Every layer after the first two is a copy (the first reads x, not a layer's output).
  EXPECT_GE(memo.local_reused * kLayers, memo.local_solved * (kLayers - 2)) << Describe(memo);
}

TEST_F(LayersTest, AChangedConstantInOneLayerOfOneRankIsLocalizedThere) {
  const int bad = 5;
  Load(std::make_pair(1, bad));
  VerifyResult memo = Run(true);
  VerifyResult plain = Run(false);
  EXPECT_NE(memo.verdict, Verdict::kRefines) << Describe(memo);
  EXPECT_EQ(FirstFailure(memo), "c_" + std::to_string(bad)) << Describe(memo);
  EXPECT_EQ(Describe(memo), Describe(plain));
  // The layers before it were reused; the odd layer's problems were solved afresh.
  EXPECT_GT(memo.local_reused, 0u);
  Load(std::nullopt);
  EXPECT_GT(memo.local_solved, Run(true).local_solved);
}

TEST_F(LayersTest, AMissingAllReduceInOneLayerOfOneRankIsLocalizedThere) {
  const int bad = 6;
  Load(std::nullopt);
  ir::Graph& g = d_.ranks[1];
  const ir::NodeId reduce = *ir::FindNode(g, "ar_" + std::to_string(bad));
  const ir::TensorRef partial = g.nodes[reduce].args.at(0).as_tensor();
  ASSERT_GT(ir::ReplaceAllUses(&g, ir::TensorRef{reduce, 0}, partial), 0);
  ir::RemoveNode(&g, reduce);
  VerifyResult memo = Run(true);
  VerifyResult plain = Run(false);
  EXPECT_NE(memo.verdict, Verdict::kRefines) << Describe(memo);
  ASSERT_TRUE(memo.first_failure.has_value()) << Describe(memo);
  EXPECT_EQ(FirstFailure(memo).substr(FirstFailure(memo).rfind('_')), "_" + std::to_string(bad))
      << Describe(memo);
  EXPECT_EQ(Describe(memo), Describe(plain));
  EXPECT_GT(memo.local_reused, 0u);
  Load(std::nullopt);
  EXPECT_GT(memo.local_solved, Run(true).local_solved);
}

}  // namespace
}  // namespace gg::symbolic
