// Progress line: its text, when it is drawn and erased (on a fake clock: no test waits), the
// layer read from parameter names, and verify's callback, which must not change the result.
#include "report/progress.h"

#include <gtest/gtest.h>

#include <sstream>

#include "frontend/fx_reader.h"
#include "report/report_testutil.h"
#include "report/verify_report.h"

namespace gg::report {
namespace {

TEST(Progress, FormatsCountLayerElapsedAndEstimate) {
  ProgressState s;
  s.what = "verify";
  s.done = 120;
  s.total = 2000;
  s.unit = "S operators";
  s.layer = 3;
  s.elapsed = 12;
  EXPECT_EQ(FormatProgress(s),
            "verify: 120/2000 S operators (6%), layer 3, 12 s elapsed, ETA 3 min 8 s");
  s.layer.reset();
  s.done = 0;  // nothing done yet: no estimate
  EXPECT_EQ(FormatProgress(s), "verify: 0/2000 S operators (0%), 12 s elapsed");
  ProgressState phase;
  phase.what = "check";
  phase.phase = "pass 1/2: D";
  phase.elapsed = 3725;
  EXPECT_EQ(FormatProgress(phase), "check: pass 1/2: D, 1 h 2 min elapsed");
}

TEST(Progress, DurationText) {
  EXPECT_EQ(DurationText(0.4), "0 s");
  EXPECT_EQ(DurationText(59.4), "59 s");
  EXPECT_EQ(DurationText(61), "1 min 1 s");
  EXPECT_EQ(DurationText(7200), "2 h 0 min");
  EXPECT_EQ(DurationText(-3), "0 s");
}

TEST(Progress, LayerOfParameterNames) {
  EXPECT_EQ(LayerOfName("layers_3_attn_q_weight"), 3);
  EXPECT_EQ(LayerOfName("model.layers.12.mlp.up_proj.weight"), 12);
  EXPECT_EQ(LayerOfName("model_layers_0_self_attn_q_proj_weight"), 0);
  EXPECT_EQ(LayerOfName("transformer_h_11_ln_1_weight"), 11);
  EXPECT_EQ(LayerOfName("blocks_2_w"), 2);
  EXPECT_EQ(LayerOfName("embed_weight"), std::nullopt);
  EXPECT_EQ(LayerOfName("layers_x_w"), std::nullopt);
  EXPECT_EQ(LayerOfName("h_"), std::nullopt);
  EXPECT_EQ(LayerOfName("mm_3"), std::nullopt);
}

struct FakeClock {
  double now = 0;
  ProgressLine::Clock clock() {
    return [this] { return now; };
  }
};

ProgressState Counted(size_t done, size_t total) {
  ProgressState s;
  s.what = "verify";
  s.done = done;
  s.total = total;
  s.unit = "S operators";
  return s;
}

TEST(ProgressLine, DrawnAfterTheDelayRewrittenAndErased) {
  FakeClock t;
  std::ostringstream err;
  ProgressLine line(&err, /*show_after=*/1.0, t.clock());
  line.Update(Counted(1, 4));
  EXPECT_EQ(err.str(), "");  // a short run stays silent
  t.now = 2;
  line.Update(Counted(2, 4));
  EXPECT_EQ(err.str(), "\rverify: 2/4 S operators (50%), 2 s elapsed, ETA 2 s");
  t.now = 2.05;  // too soon to redraw
  line.Update(Counted(3, 4));
  EXPECT_EQ(err.str(), "\rverify: 2/4 S operators (50%), 2 s elapsed, ETA 2 s");
  t.now = 2.5;
  err.str("");
  ProgressState phase;
  phase.what = "verify";
  phase.phase = "numeric";
  line.Update(phase);
  // A shorter line covers what is left of the longer one.
  std::string shorter = "verify: numeric, 3 s elapsed";
  std::string drawn = "\r" + shorter;
  drawn += std::string(
      std::string("verify: 2/4 S operators (50%), 2 s elapsed, ETA 2 s").size() - shorter.size(),
      ' ');
  EXPECT_EQ(err.str(), drawn);
  err.str("");
  line.Clear();
  EXPECT_EQ(err.str(), "\r" + std::string(shorter.size(), ' ') + "\r");
  err.str("");
  line.Clear();  // nothing drawn: nothing written
  EXPECT_EQ(err.str(), "");
}

TEST(ProgressLine, ForcedUpdateIgnoresTheRedrawInterval) {
  FakeClock t;
  std::ostringstream err;
  ProgressLine line(&err, 0, t.clock());
  line.Update(Counted(1, 4));
  size_t size = err.str().size();
  line.Update(Counted(2, 4), /*force=*/true);
  EXPECT_GT(err.str().size(), size);
}

TEST(ProgressLine, LongLinesAreCutToTheTerminalWidth) {
  FakeClock t;
  std::ostringstream err;
  ProgressLine line(&err, 0, t.clock());
  ProgressState s;
  s.what = "check";
  s.phase = std::string(200, 'x');
  line.Update(s);
  EXPECT_EQ(err.str().size(), 1 + 79u);
  EXPECT_EQ(err.str().substr(err.str().size() - 3), "...");
}

TEST(ProgressLine, SilentWithoutAStream) {
  FakeClock t;
  ProgressLine line(nullptr, 0, t.clock());
  EXPECT_FALSE(line.enabled());
  line.Update(Counted(1, 2));
  line.Clear();
}

TEST(ProgressLine, DestructorErases) {
  FakeClock t;
  std::ostringstream err;
  {
    ProgressLine line(&err, 0, t.clock());
    line.Update(Counted(1, 2));
  }
  EXPECT_EQ(err.str().back(), '\r');
}

// The verify callback counts S operators in topological order and names the layer of the last
// layer parameter read; the inference result is the same with and without it.
TEST(VerifyProgress, CountsOperatorsAndDoesNotChangeTheResult) {
  testing::GoalRun plain = testing::RunGoal("matmul_rowpar_missing_allreduce");
  FakeClock t;
  std::ostringstream err;
  ProgressLine line(&err, 0, t.clock());
  VerifyProgress progress(plain.s_graph, &line);
  std::vector<ir::NodeId> seen;
  symbolic::InferenceOptions options;
  options.progress = [&](ir::NodeId next) {
    seen.push_back(next);
    progress.OnOperator(next);
    t.now += 1;  // past the redraw interval: each call draws
  };
  testing::GoalRun watched = testing::RunGoal("matmul_rowpar_missing_allreduce", {}, options);
  ASSERT_EQ(seen.size(), watched.result.nodes.size());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], watched.result.nodes[i].s_node);
  EXPECT_NE(err.str().find("\rverify: 0/2 S operators (0%), 0 s elapsed"), std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("verify: 1/2 S operators (50%)"), std::string::npos) << err.str();
  EXPECT_EQ(FormatVerifyText(watched.result, watched.s_graph, watched.d_program, watched.info),
            FormatVerifyText(plain.result, plain.s_graph, plain.d_program, plain.info));
}

TEST(VerifyProgress, LayerFromTheParametersAnOperatorReads) {
  ir::Graph g = frontend::ParseFx(
      "class GraphModule(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[4, 4]\", layers_0_w: \"f32[4, 4]\", "
      "layers_1_w: \"f32[4, 4]\"):\n"
      "        a: \"f32[4, 4]\" = torch.ops.aten.mm.default(x, layers_0_w)\n"
      "        b: \"f32[4, 4]\" = torch.ops.aten.relu.default(a)\n"
      "        c: \"f32[4, 4]\" = torch.ops.aten.mm.default(b, layers_1_w)\n"
      "        return (c,)\n",
      "layers.py");
  auto id = [&](const std::string& name) { return g.Find(name)->node; };
  ir::NodeId a = id("a"), b = id("b"), c = id("c");
  FakeClock t;
  std::ostringstream err;
  ProgressLine line(&err, 0, t.clock());
  VerifyProgress progress(g, &line);
  progress.OnOperator(a);
  EXPECT_NE(err.str().find("0/3 S operators (0%), layer 0,"), std::string::npos) << err.str();
  t.now = 1;
  progress.OnOperator(b);  // reads no parameter: still layer 0
  EXPECT_NE(err.str().find("1/3 S operators (33%), layer 0,"), std::string::npos) << err.str();
  t.now = 2;
  progress.OnOperator(c);
  EXPECT_NE(err.str().find("2/3 S operators (66%), layer 1,"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace gg::report
