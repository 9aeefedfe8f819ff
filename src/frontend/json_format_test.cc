#include "frontend/json_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>

#include "frontend/fx_reader.h"
#include "frontend/loader.h"
#include "util/diagnostic.h"
#include "util/diagnostic_testutil.h"

namespace gg::frontend {
namespace {

namespace fs = std::filesystem;

// Equality of values where NaN equals NaN (the round trip must keep it, == cannot say so).
bool SameValue(const ir::Value& a, const ir::Value& b) {
  if (a.is_double() && b.is_double() && std::isnan(a.as_double()) && std::isnan(b.as_double())) {
    return true;
  }
  if (a.is_double() && b.is_double()) {
    return a.as_double() == b.as_double() &&
           std::signbit(a.as_double()) == std::signbit(b.as_double());
  }
  if (a.is_list() && b.is_list()) {
    if (a.as_list().size() != b.as_list().size()) return false;
    for (size_t i = 0; i < a.as_list().size(); ++i) {
      if (!SameValue(a.as_list()[i], b.as_list()[i])) return false;
    }
    return true;
  }
  return a == b;
}

// First difference between two graphs ("" when equal). def_line and return_line are positions in
// the file that was read, so they are not compared.
std::string GraphDiff(const ir::Graph& a, const ir::Graph& b) {
  if (a.name != b.name) return "name " + a.name + " vs " + b.name;
  if (a.rank != b.rank) return "rank";
  if (a.nodes.size() != b.nodes.size()) return "node count";
  if (a.inputs != b.inputs) return "inputs";
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const ir::Node& x = a.nodes[i];
    const ir::Node& y = b.nodes[i];
    std::string at = "node " + std::to_string(i) + " (" + x.name + "): ";
    if (x.kind != y.kind || x.name != y.name || !(x.op == y.op) ||
        x.functionalized != y.functionalized) {
      return at + "identity";
    }
    if (x.args.size() != y.args.size() || x.kwargs.size() != y.kwargs.size()) return at + "arity";
    for (size_t k = 0; k < x.args.size(); ++k) {
      if (!SameValue(x.args[k], y.args[k])) return at + "arg " + std::to_string(k);
    }
    for (size_t k = 0; k < x.kwargs.size(); ++k) {
      if (x.kwargs[k].name != y.kwargs[k].name || !SameValue(x.kwargs[k].value, y.kwargs[k].value)) {
        return at + "kwarg " + x.kwargs[k].name;
      }
    }
    if (x.outputs.size() != y.outputs.size()) return at + "output count";
    for (size_t k = 0; k < x.outputs.size(); ++k) {
      if (x.outputs[k].name != y.outputs[k].name || x.outputs[k].type != y.outputs[k].type) {
        return at + "output " + std::to_string(k);
      }
    }
    if (!(x.source == y.source)) return at + "source";
  }
  if (a.outputs.size() != b.outputs.size()) return "graph output count";
  for (size_t k = 0; k < a.outputs.size(); ++k) {
    if (!SameValue(a.outputs[k], b.outputs[k])) return "graph output " + std::to_string(k);
  }
  return "";
}

TEST(JsonFormat, RoundTripsEveryCorpusFile) {
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(GG_CORPUS_DIR)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".py") continue;
    SCOPED_TRACE(entry.path().string());
    ir::Graph fx = ReadFxFile(entry.path().string());
    std::string json = ToJson(fx);
    JsonGraphs back = ParseJson(json, "roundtrip.json");
    ASSERT_EQ(back.graphs.size(), 1u);
    EXPECT_FALSE(back.is_program);
    EXPECT_EQ(GraphDiff(fx, back.graphs[0]), "");
    // Writing again gives the same bytes: the format is canonical.
    EXPECT_EQ(ToJson(back.graphs[0]), json);
    ++files;
  }
  EXPECT_EQ(files, 13);
}

TEST(JsonFormat, RoundTripsWholePrograms) {
  for (const char* dir : {"gpt/paral2_layer2", "gpt/paral4_layer1", "qwen2/paral2_layer1"}) {
    SCOPED_TRACE(dir);
    ir::Program p = LoadProgram({std::string(GG_CORPUS_DIR) + "/" + dir});
    JsonGraphs back = ParseJson(ToJson(p), "program.json");
    EXPECT_TRUE(back.is_program);
    EXPECT_EQ(back.groups, p.groups);
    ASSERT_EQ(back.graphs.size(), p.ranks.size());
    for (size_t r = 0; r < p.ranks.size(); ++r) EXPECT_EQ(GraphDiff(p.ranks[r], back.graphs[r]), "");
  }
}

TEST(JsonFormat, KeepsSpecialValues) {
  // The calls read a constant typed by its annotation (an operator may not read an untyped one).
  std::string text =
      "import torch\nclass M(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[4]\"):\n"
      "        c: \"f32[4]\" = self._tensor_constant0\n"
      "        y: \"f32[4]\" = torch.ops.aten.add.Tensor(c, -inf, alpha = inf)\n"
      "        z: \"f32[4]\" = torch.ops.aten.add.Tensor(c, nan)\n"
      "        w: \"f32[4]\" = torch.ops.aten.add.Tensor(c, 1.0)\n"
      "        v: \"f32[4]\" = torch.ops.aten.add.Tensor(c, 1)\n"
      "        u: \"f32[4]\" = torch.ops.aten.add.Tensor(c, -0.0)\n"
      "        return (u, None, 'its \\\\ \\'q\\'', [1, 2.5, True], torch.float16, "
      "device(type='cpu'), torch.contiguous_format, torch.ops.aten.mm.default, "
      "-9223372036854775807, x)\n";
  ir::Graph g = ParseFx(text, "special.py");
  std::string json = ToJson(g);
  EXPECT_NE(json.find("{\"float\":\"-inf\"}"), std::string::npos);
  EXPECT_NE(json.find("{\"float\":\"inf\"}"), std::string::npos);
  EXPECT_NE(json.find("{\"float\":\"nan\"}"), std::string::npos);
  ir::Graph back = ParseJson(json, "s.json").graphs.at(0);
  EXPECT_EQ(GraphDiff(g, back), "");
  EXPECT_TRUE(std::isnan(back.node(back.Find("z")->node).args[1].as_double()));
  EXPECT_TRUE(back.node(back.Find("w")->node).args[1].is_double());
  EXPECT_TRUE(back.node(back.Find("v")->node).args[1].is_int());
  EXPECT_TRUE(std::signbit(back.node(back.Find("u")->node).args[1].as_double()));
  EXPECT_EQ(back.outputs[2], ir::Value("its \\ 'q'"));
  EXPECT_EQ(back.node(back.Find("c")->node).outputs[0].type->ToString(), "f32[4]");
  EXPECT_EQ(back.outputs[4], ir::Value(ir::DType::kFloat16));
  EXPECT_EQ(back.outputs[5], ir::Value(ir::Device{"cpu", -1}));
  EXPECT_EQ(back.outputs[6], ir::Value(ir::EnumValue{"torch.contiguous_format"}));
  EXPECT_EQ(back.outputs[7], ir::Value(ir::OpRefValue{"aten::mm.default"}));
  EXPECT_EQ(back.outputs[8], ir::Value(int64_t{-9223372036854775807}));
}

TEST(JsonFormat, ReadsAHandWrittenGraph) {
  JsonGraphs content = ReadJsonFile(std::string(GG_TEST_DATA_DIR) + "/good/tiny.json");
  ASSERT_EQ(content.graphs.size(), 1u);
  const ir::Graph& g = content.graphs[0];
  EXPECT_EQ(g.name, "tiny");
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[1].def_line, 9);  // its line in the JSON file
  EXPECT_EQ(g.nodes[1].source.code, "x.t()");
  EXPECT_EQ(g.type(*g.Find("t")).ToString(), "f32[8, 4]");
  EXPECT_TRUE(g.outputs[1].is_none());
}

TEST(JsonFormat, ReportsErrorsWithLines) {
  struct Case {
    std::string text;
    int line;
    const char* phrase;
  };
  const std::string head = "{\n  \"format\": \"graphguard-graph\",\n  \"version\": 1,\n";
  const Case cases[] = {
      {"{\n  \"format\": \"graphguard-graph\",\n  \"version\": 1\n  \"graph\": {}\n}\n", 4,
       "invalid JSON"},
      {"{\n  \"format\": \"other\", \"version\": 1, \"graph\": {}\n}\n", 1, "not a GraphGuard"},
      {"{\"format\": \"graphguard-graph\", \"version\": 2, \"graph\": {}}", 1,
       "unsupported version 2"},
      {"[1, 2]", 0, "top level"},
      // nlohmann reports a number too large for a double as out_of_range, not a parse error
      // (found by the fuzzer).
      {"{\"format\": \"graphguard-graph\", \"version\": 1, \"graph\": 3e999999}", 0,
       "invalid JSON"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    InputError e = ExpectInputError([&] { ParseJson(c.text, "t.json"); });
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.phrase), std::string::npos) << e.what();
  }
  // Node-level problems point at the node's line.
  auto graph = [&](const std::string& nodes) {
    return head + "  \"graph\": {\"name\": \"g\", \"rank\": 0, \"nodes\": [\n" + nodes +
           "\n  ], \"outputs\": []}\n}\n";
  };
  const std::string x = R"({"name": "x", "kind": "input", "outputs": [{"name": "x", "type": "f32[2, 3]"}]})";
  const Case node_cases[] = {
      {R"({"name": "x", "kind": "input"})", 5, "missing field \"outputs\""},
      {R"({"name": "x", "kind": "weird", "outputs": []})", 5, "unknown node kind"},
      {R"({"name": "x", "kind": "input", "outputs": [{"name": "x", "type": "f32[2"}]})", 5,
       "bad type"},
      {x + ",\n" + R"({"name": "t", "kind": "call", "op": "aten::t.default", "args": [{"ref": "q"}], "outputs": []})",
       6, "undefined value 'q'"},
      {x + ",\n" + R"({"name": "t", "kind": "call", "op": "aten::t.default", "args": [{"ref": "x"}], "outputs": [{"name": "t", "type": "f32[2, 3]"}]})",
       6, "inferred f32[3, 2] for output 0 of 't' (aten::t.default) but the file says f32[2, 3]"},
      {x + ",\n" + R"({"name": "t", "kind": "call", "op": "aten::nope.default", "args": [], "outputs": []})",
       6, "operator 'aten::nope.default' of 't' is unknown to GraphGuard and the node lists no "
          "outputs"},
      {x + ",\n" + x, 6, "duplicate node name 'x'"},
      {x + ",\n" + R"({"name": "t", "kind": "call", "op": "aten::t.default", "args": [{"dtype": "q9"}], "outputs": []})",
       6, "unknown dtype"},
      {x + ",\n" + R"({"name": "t", "kind": "call", "op": "aten::t.default", "args": [{"zzz": 1}], "outputs": []})",
       6, "unknown tagged value"},
  };
  for (const Case& c : node_cases) {
    SCOPED_TRACE(c.text);
    std::string text = graph(c.text);
    InputError e = ExpectInputError([&] { ParseJson(text, "n.json"); });
    EXPECT_EQ(e.file(), "n.json");
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.phrase), std::string::npos) << e.what();
  }
}

// Issue 19: 100k levels of nesting once overflowed the stack (exit 139) through nlohmann's
// recursive dump of an unknown tagged value. Depth is bounded before parsing, at the line where
// the bound is crossed.
TEST(JsonFormat, DeepNestingIsAnErrorNotAStackOverflow) {
  const int kDeep = 100000;
  const std::string arrays = std::string(kDeep, '[') + std::string(kDeep, ']');
  InputError e = ExpectInputError([&] { ParseJson(arrays, "deep.json"); });
  EXPECT_EQ(e.file(), "deep.json");
  EXPECT_EQ(e.line(), 1);
  EXPECT_NE(e.problem().find("JSON nested deeper than 256 levels"), std::string::npos) << e.what();

  std::string objects;
  for (int i = 0; i < kDeep; ++i) objects += "{\"x\":";
  objects += "1" + std::string(kDeep, '}');
  const std::string text =
      "{\"format\": \"graphguard-graph\", \"version\": 1, \"graph\": {\"name\": \"g\",\n"
      "\"rank\": 0, \"nodes\": [\n"
      R"({"name": "x", "kind": "input", "outputs": [{"name": "x", "type": "f32[4]"}]},)"
      "\n"
      R"({"name": "r", "kind": "call", "op": "aten::relu.default", "args": [)" +
      objects + R"(], "outputs": [{"name": "r", "type": "f32[4]"}]}], "outputs": []}})";
  e = ExpectInputError([&] { ParseJson(text, "deep.json"); });
  EXPECT_EQ(e.line(), 4) << e.what();
  EXPECT_NE(e.problem().find("nested deeper"), std::string::npos) << e.what();

  // Braces inside strings do not count.
  const std::string quoted = "{\"format\": \"" + std::string(1000, '[') + "\"}";
  e = ExpectInputError([&] { ParseJson(quoted, "q.json"); });
  EXPECT_NE(e.problem().find("not a GraphGuard graph file"), std::string::npos) << e.what();
}

// The optional "fqn" of an input survives a round trip; older files without it still load.
TEST(JsonFormat, KeepsInputFqns) {
  const std::string text =
      "{\"format\": \"graphguard-graph\", \"version\": 1, \"graph\": {\"name\": \"g\", \"rank\": 0,"
      " \"nodes\": [\n"
      "{\"name\": \"w\", \"kind\": \"input\", \"fqn\": \"decoder.fc.weight\","
      " \"outputs\": [{\"name\": \"w\", \"type\": \"f32[2]\"}]},\n"
      "{\"name\": \"x\", \"kind\": \"input\", \"outputs\": [{\"name\": \"x\", \"type\": "
      "\"f32[2]\"}]}"
      "\n], \"outputs\": [{\"ref\": \"w\"}]}}\n";
  JsonGraphs content = ParseJson(text, "t.json");
  ASSERT_EQ(content.graphs.size(), 1u);
  EXPECT_EQ(content.graphs[0].nodes[0].fqn, "decoder.fc.weight");
  EXPECT_EQ(content.graphs[0].nodes[1].fqn, "");
  std::ostringstream out;
  WriteJson(content.graphs[0], out);
  JsonGraphs again = ParseJson(out.str(), "again.json");
  EXPECT_EQ(again.graphs[0].nodes[0].fqn, "decoder.fc.weight");
  EXPECT_EQ(out.str().find("\"fqn\"", out.str().find("\"x\"")), std::string::npos);
  std::string bad = text;
  bad.replace(bad.find("\"decoder.fc.weight\""), 19, "\"\"");
  InputError e = ExpectInputError([&] { ParseJson(bad, "t.json"); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(e.problem().find("\"fqn\" must be a non-empty string"), std::string::npos);
}

}  // namespace
}  // namespace gg::frontend
