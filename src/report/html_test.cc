// HTML report of verify: the verdict and the stopped operator on the page, proofs behind a click,
// every graph string escaped, and a 2,000-operator graph grouped (by layer, or in chunks) at a
// bounded size. tests/cli/html_report.sh renders the CLI's page in headless chromium.
#include "report/html.h"

#include <gtest/gtest.h>

#include <functional>
#include <iostream>

#include "frontend/fx_reader.h"
#include "report/report_testutil.h"

namespace gg::report {
namespace {

using testing::Count;
using testing::GoalRun;
using testing::RunGoal;

TEST(HtmlEscape, EscapesMarkupAndReplacesWhatHtmlCannotHold) {
  EXPECT_EQ(HtmlEscape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt; &amp; &quot;q&quot;");
  EXPECT_EQ(HtmlEscape("\xFF"), "\xEF\xBF\xBD");
}

TEST(VerifyHtml, UnknownShowsVerdictStoppedOperatorSourceAndCandidates) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce", testing::LayersSource());
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kUnknown);
  std::string html = VerifyHtml(run.result, run.s_graph, run.info);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_NE(
      html.find("<h1 id=\"verdict\" class=\"unknown\">UNKNOWN: expected y == y@0 but inferred "),
      std::string::npos)
      << html;
  EXPECT_NE(html.find("<section id=\"stopped\">"), std::string::npos);
  EXPECT_NE(html.find("<code>aten::mm.default</code> &rarr; <code>y</code>"), std::string::npos)
      << html;
  EXPECT_NE(html.find("megatron/core/tensor_parallel/layers.py:12 in forward"), std::string::npos);
  EXPECT_NE(html.find("<pre class=\"src\">output = torch.matmul(input, weight.t())</pre>"),
            std::string::npos);
  EXPECT_NE(html.find("D operators that were candidates ("), std::string::npos);
  // An input's relation with its proof chain, folded in a <details>.
  EXPECT_NE(html.find("<details class=\"rel\"><summary><code>x == concat(1, x@0, x@1)</code>"),
            std::string::npos)
      << html;
  // The output decided it: its operator was inferred, yet the relation is not the expected one.
  EXPECT_NE(html.find("<tr id=\"n-3\" data-n=\"y\" class=\"st-inferred stopped\">"),
            std::string::npos);
  // Self-contained and deterministic.
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find(" s)"), std::string::npos);  // timing off: no seconds
  EXPECT_EQ(html, VerifyHtml(run.result, run.s_graph, run.info));
  run.info.timing = true;
  EXPECT_NE(VerifyHtml(run.result, run.s_graph, run.info).find(" s</td>"), std::string::npos);
}

TEST(VerifyHtml, RefinesShowsProofsAndNoStoppedSection) {
  GoalRun run = RunGoal("matmul_colpar");
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kRefines);
  std::string html = VerifyHtml(run.result, run.s_graph, run.info);
  EXPECT_NE(html.find("<h1 id=\"verdict\" class=\"refines\">REFINES"), std::string::npos) << html;
  EXPECT_EQ(html.find("<section id=\"stopped\">"), std::string::npos);
  EXPECT_NE(html.find("<ol class=\"proof\">"), std::string::npos);
  EXPECT_NE(html.find("<td>proved</td>"), std::string::npos);
}

TEST(VerifyHtml, ViolationShowsTheCounterexample) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce");
  symbolic::ApplyNumericEvidence(&run.result, testing::MissingAllReduceEvidence());
  std::string html = VerifyHtml(run.result, run.s_graph, run.info);
  EXPECT_NE(html.find("class=\"violation\""), std::string::npos);
  EXPECT_NE(html.find("<h3>Counterexamples</h3>\n<ul>\n<li><code>y == y@0: max |S-D| 3.1"),
            std::string::npos)
      << html;
}

// A node name, source and code with markup stay text: nothing from the graph opens a tag.
TEST(VerifyHtml, GraphStringsCannotInject) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce",
                        {"<img src=x onerror=alert(1)>.py", 3, "f\"<b>", "</pre><script>x()"});
  for (ir::Node& node : run.s_graph.nodes) {
    if (node.name == "y") node.name = "<script>alert(1)</script>";
  }
  std::string html = VerifyHtml(run.result, run.s_graph, run.info);
  EXPECT_EQ(Count(html, "<script>"), 1u);  // the page's own
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;/pre&gt;&lt;script&gt;x()"), std::string::npos);
}

// A chain of `n` relus, named by `name(i)`; the proof stops at node `stop`.
struct Chain {
  ir::Graph graph;
  symbolic::VerifyResult result;
};
Chain MakeChain(size_t n, const std::function<std::string(size_t)>& name, size_t stop) {
  std::string fx =
      "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4, 8]\"):\n";
  std::string prev = "x";
  for (size_t i = 0; i < n; ++i) {
    fx += "        " + name(i) + ": \"f32[4, 8]\" = torch.ops.aten.relu.default(" + prev + ")\n";
    prev = name(i);
  }
  fx += "        return (" + prev + ",)\n";
  Chain c;
  c.graph = frontend::ParseFx(fx, "chain.py");
  c.result.verdict = symbolic::Verdict::kUnknown;
  c.result.unknown_cause = symbolic::UnknownCause::kNoRelation;
  c.result.summary = "the proof stopped at " + name(stop);
  for (size_t id = 1; id < c.graph.nodes.size(); ++id) {
    symbolic::NodeOutcome o;
    o.s_node = static_cast<ir::NodeId>(id);
    o.status = id - 1 == stop  ? symbolic::NodeStatus::kNoRelation
               : id - 1 > stop ? symbolic::NodeStatus::kBlocked
                               : symbolic::NodeStatus::kInferred;
    o.candidates = {"relu@0", "relu@1"};
    if (id - 1 == stop) c.result.first_failure = c.result.nodes.size();
    c.result.nodes.push_back(o);
  }
  return c;
}

TEST(VerifyHtml, TwoThousandOperatorsGroupByLayer) {
  // 20 layers of 100 operators, as a captured transformer names them.
  auto name = [](size_t i) {
    return "layers_" + std::to_string(i / 100) + "_relu_" + std::to_string(i % 100);
  };
  Chain c = MakeChain(2000, name, 1234);
  std::vector<HtmlNodeGroup> groups = HtmlNodeGroups(c.graph);
  ASSERT_EQ(groups.size(), 21u);  // the input x, then the layers
  EXPECT_EQ(groups[0].label, "graph inputs");
  EXPECT_EQ(groups[1].label, "layers.0");
  EXPECT_EQ(groups[13].label, "layers.12");
  EXPECT_EQ(groups[13].last - groups[13].first + 1, 100u);
  VerifyRunInfo info;
  info.timing = false;
  std::string html = VerifyHtml(c.result, c.graph, info);
  EXPECT_LT(html.size(), 2u * 1024 * 1024) << html.size();
  std::cout << "[ size     ] 2,000 layered operators: " << html.size() << " bytes\n";
  EXPECT_EQ(Count(html, "<details class=\"group\""), 21u);
  // Only the layer where the proof stopped is open.
  EXPECT_EQ(Count(html, "<details class=\"group\" open>"), 1u);
  EXPECT_NE(html.find("<details class=\"group\" open><summary>layers.12 "), std::string::npos);
  EXPECT_NE(html.find("data-n=\"layers_12_relu_34\" class=\"st-no-relation stopped\""),
            std::string::npos);
  EXPECT_NE(html.find("id=\"search\""), std::string::npos);
  EXPECT_EQ(Count(html, "<tr id=\"n-"), 2001u);
}

TEST(VerifyHtml, TwoThousandUnlayeredOperatorsGroupInChunks) {
  Chain c = MakeChain(
      2000, [](size_t i) { return "relu_" + std::to_string(i); }, 1999);
  std::vector<HtmlNodeGroup> groups = HtmlNodeGroups(c.graph);
  ASSERT_EQ(groups.size(), 21u);  // 2,001 nodes
  EXPECT_EQ(groups[0].label, "nodes 1-100");
  EXPECT_EQ(groups[20].label, "nodes 2001-2001");
  VerifyRunInfo info;
  info.timing = false;
  std::string html = VerifyHtml(c.result, c.graph, info);
  EXPECT_LT(html.size(), 2u * 1024 * 1024) << html.size();
  EXPECT_NE(html.find("<details class=\"group\" open><summary>nodes 2001-2001 "),
            std::string::npos);
}

TEST(HtmlNodeGroups, LayerNamesNeedSeparators) {
  ir::Graph g = frontend::ParseFx(
      "class GraphModule(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[2]\", layers_5_w: \"f32[2]\"):\n"
      "        relayers_1: \"f32[2]\" = torch.ops.aten.relu.default(x)\n"
      "        h_2_mlp: \"f32[2]\" = torch.ops.aten.relu.default(relayers_1)\n"
      "        add: \"f32[2]\" = torch.ops.aten.relu.default(h_2_mlp)\n"
      "        model_blocks_3: \"f32[2]\" = torch.ops.aten.relu.default(add)\n"
      "        mul: \"f32[2]\" = torch.ops.aten.mul.Tensor(layers_5_w, model_blocks_3)\n"
      "        return (mul,)\n",
      "g.py");
  std::vector<HtmlNodeGroup> groups = HtmlNodeGroups(g);
  ASSERT_EQ(groups.size(), 5u);
  EXPECT_EQ(groups[0].label, "graph inputs");  // x, layers_5_w
  EXPECT_EQ(groups[0].last, 1u);
  EXPECT_EQ(groups[1].label, "before the first layer");  // relayers_1: no separator
  EXPECT_EQ(groups[2].label, "h.2");                     // h_2_mlp, and add, which reads it
  EXPECT_EQ(groups[2].last, 4u);
  EXPECT_EQ(groups[3].label, "blocks.3");
  // An operator named without a layer takes the first among its inputs' (a parameter's here).
  EXPECT_EQ(groups[4].label, "layers.5");
}

// A layer of 250 operators opens in pieces of at most 100.
TEST(HtmlNodeGroups, LargeLayersAreSplit) {
  Chain c = MakeChain(
      250, [](size_t i) { return "layers_0_op_" + std::to_string(i); }, 0);
  std::vector<HtmlNodeGroup> groups = HtmlNodeGroups(c.graph);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[1].label, "layers.0, nodes 2-101");
  EXPECT_EQ(groups[3].label, "layers.0, nodes 202-251");
}

}  // namespace
}  // namespace gg::report
