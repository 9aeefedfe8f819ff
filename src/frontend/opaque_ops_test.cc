// Unknown operators load as opaque nodes typed from the file (docs/graph-format.md): FX and
// JSON, stats, the JSON round trip, the errors for missing types, and --strict-ops.
#include <gtest/gtest.h>

#include <string>

#include "frontend/fx_reader.h"
#include "frontend/json_format.h"
#include "frontend/loader.h"
#include "frontend/node_check.h"
#include "report/stats_report.h"
#include "util/diagnostic.h"

namespace gg::frontend {
namespace {

const std::string kFancy = std::string(GG_TEST_DATA_DIR) + "/good/opaque/fancy.py";

const ir::Node& NodeNamed(const ir::Graph& g, const std::string& name) {
  for (const ir::Node& n : g.nodes) {
    if (n.name == name) return n;
  }
  throw std::runtime_error("no node " + name);
}

TEST(OpaqueOps, UnknownOperatorsLoadTypedFromTheirAnnotations) {
  ir::Graph g = LoadGraph(kFancy);
  const ir::Node& gelu = NodeNamed(g, "fancy_gelu");
  EXPECT_TRUE(IsOpaqueNode(gelu));
  EXPECT_EQ(gelu.op.ToString(), "mylib::fancy_gelu.default");
  ASSERT_EQ(gelu.outputs.size(), 1u);
  EXPECT_EQ(gelu.outputs[0].type->ToString(), "f32[4, 8]");
  ASSERT_EQ(gelu.kwargs.size(), 1u);
  EXPECT_EQ(gelu.kwargs[0].value.as_string(), "tanh");
  // Multi-output: typed by its getitems.
  const ir::Node& split = NodeNamed(g, "split_pair");
  EXPECT_TRUE(IsOpaqueNode(split));
  ASSERT_EQ(split.outputs.size(), 2u);
  EXPECT_EQ(split.outputs[0].name, "getitem");
  EXPECT_EQ(split.outputs[1].type->ToString(), "f32[4, 4]");
  // A known operator reading opaque outputs is still checked against the registry.
  EXPECT_FALSE(IsOpaqueNode(NodeNamed(g, "add")));
  EXPECT_EQ(NodeNamed(g, "fancy_gelu_1").outputs[0].type->ToString(), "f32[4, 4]");
}

TEST(OpaqueOps, StatsListUnknownOperatorsAndJsonRoundTrips) {
  ir::Program p = LoadProgram({kFancy});
  report::ProgramStats stats = report::ComputeStats(p);
  ASSERT_EQ(stats.ranks.size(), 1u);
  std::map<std::string, int64_t> want{{"mylib::fancy_gelu.default", 2},
                                      {"mylib::split_pair.default", 1}};
  EXPECT_EQ(stats.ranks[0].unknown_operators, want);
  std::string text = report::FormatStats(stats);
  EXPECT_NE(text.find("  unknown operators (opaque, typed from the file): "
                      "mylib::fancy_gelu.default 2, mylib::split_pair.default 1\n"),
            std::string::npos)
      << text;

  std::string json = ToJson(p);
  JsonGraphs back = ParseJson(json, "fancy.json");
  ASSERT_EQ(back.graphs.size(), 1u);
  ir::Program q;
  q.ranks = back.graphs;
  q.groups = back.groups;
  EXPECT_EQ(report::FormatStats(report::ComputeStats(q)), text);
  EXPECT_EQ(ToJson(q), json);  // canonical: the same bytes again
  const ir::Node& split = NodeNamed(q.ranks[0], "split_pair");
  ASSERT_EQ(split.outputs.size(), 2u);
  EXPECT_EQ(split.outputs[1].name, "getitem_1");
  EXPECT_EQ(split.outputs[1].type->ToString(), "f32[4, 4]");
}

TEST(OpaqueOps, StrictOpsKeepsTheError) {
  StrictOps strict(true);
  try {
    LoadGraph(kFancy);
    FAIL() << "no error under --strict-ops";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 7);
    EXPECT_NE(e.problem().find("unknown operator 'mylib::fancy_gelu.default'"), std::string::npos)
        << e.what();
  }
}

TEST(OpaqueOps, WithoutStrictOpsTheOldBadFileLoads) {
  // tests/data/bad/unknown_op.py is bad input only under --strict-ops (loader_test.cc).
  ir::Graph g = LoadGraph(std::string(GG_TEST_DATA_DIR) + "/bad/unknown_op.py");
  const ir::Node& add = NodeNamed(g, "add");
  EXPECT_TRUE(IsOpaqueNode(add));
  EXPECT_EQ(add.outputs[0].type->ToString(), "f32[8, 32]");
}

TEST(OpaqueOps, StrictOpsIsScoped) {
  {
    StrictOps strict(true);
    EXPECT_TRUE(StrictOps::enabled());
  }
  EXPECT_FALSE(StrictOps::enabled());
  EXPECT_NO_THROW(LoadGraph(kFancy));
}

void ExpectNeedsType(const std::string& text, const std::string& file, int line) {
  try {
    if (file.size() > 5 && file.substr(file.size() - 5) == ".json") {
      ParseJson(text, file);
    } else {
      ParseFx(text, file);
    }
    FAIL() << "no error for " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(e.problem().find("is unknown to GraphGuard"), std::string::npos) << e.what();
    EXPECT_NE(e.problem().find("output types are needed"), std::string::npos) << e.what();
    EXPECT_NE(e.problem().find("re-capture with type annotations"), std::string::npos)
        << e.what();
  }
}

TEST(OpaqueOps, AnUnknownOperatorWithoutATypeIsAnError) {
  const std::string head =
      "class G(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[4]\"):\n";
  // No annotation and no getitem.
  ExpectNeedsType(head + "        y = torch.ops.mylib.f.default(x)\n        return (x,)\n",
                  "a.py", 3);
  // A getitem without an annotation.
  ExpectNeedsType(head +
                      "        y = torch.ops.mylib.f.default(x)\n"
                      "        g: \"f32[4]\" = y[0]\n"
                      "        h = y[1]\n"
                      "        return (g,)\n",
                  "b.py", 5);
  // JSON: an output without its "type".
  const std::string json =
      "{\"format\":\"graphguard-graph\",\"version\":1,\"graph\":{\"name\":\"g\",\"rank\":0,"
      "\"nodes\":[\n"
      "{\"name\":\"x\",\"kind\":\"input\",\"outputs\":[{\"name\":\"x\",\"type\":\"f32[4]\"}]},\n"
      "{\"name\":\"y\",\"kind\":\"call\",\"op\":\"mylib::f.default\",\"args\":[{\"ref\":\"x\"}],"
      "\"outputs\":[{\"name\":\"y\",\"type\":null}]}\n"
      "],\"outputs\":[{\"ref\":\"x\"}]}}\n";
  ExpectNeedsType(json, "c.json", 3);
}

TEST(OpaqueOps, OpaqueInputsMustBeTyped) {
  // An opaque node still needs typed inputs: reading an untyped constant is an error.
  const std::string text =
      "class G(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[4]\"):\n"
      "        _tensor_constant0 = self._tensor_constant0\n"
      "        z: \"f32[4]\" = torch.ops.mylib.g.default(x, _tensor_constant0)\n"
      "        return (z,)\n";
  try {
    ParseFx(text, "d.py");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 4);
    EXPECT_NE(e.problem().find("without a type"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gg::frontend
