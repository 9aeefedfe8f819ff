#include "frontend/fx_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "util/diagnostic.h"
#include "util/diagnostic_testutil.h"

namespace gg::frontend {
namespace {

namespace fs = std::filesystem;

const char* kMlp = R"(import torch
from torch import device

f32: type

# Graph[rank=3](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8, 16]", w: "f32[32, 16]", b: "f32[32]"):
        # File: /src/model.py:10 in forward, code: y = x @ w.t() + b
        t: "f32[16, 32]" = torch.ops.aten.t.default(w);  w = None
        mm: "f32[8, 32]" = torch.ops.aten.mm.default(x, t);  x = t = None
        add: "f32[8, 32]" = torch.ops.aten.add.Tensor(mm, b);  mm = b = None

        native_dropout = torch.ops.aten.native_dropout.default(add, 0.1, True);  add = None
        getitem: "f32[8, 32]" = native_dropout[0];  native_dropout = None
        return (getitem, None)
)";

// The body of a forward() with the given parameters, wrapped in the file structure.
std::string Wrap(const std::string& params, const std::string& body) {
  return "import torch\n\nclass GraphModule(torch.nn.Module):\n    def forward(self, " + params +
         "):\n" + body;
}

TEST(FxReader, ParsesHeaderInputsNodesAndOutputs) {
  ir::Graph g = ParseFx(kMlp, "mlp.py");
  EXPECT_EQ(g.name, "GraphModule");
  EXPECT_EQ(g.rank, 3);
  EXPECT_EQ(g.file, "mlp.py");
  ASSERT_EQ(g.inputs.size(), 3u);
  EXPECT_EQ(g.node(g.inputs[0]).kind, ir::NodeKind::kInput);
  EXPECT_EQ(g.node(g.inputs[1]).name, "w");
  EXPECT_EQ(g.node(g.inputs[1]).type().ToString(), "f32[32, 16]");
  EXPECT_EQ(g.node(g.inputs[1]).def_line, 8);
  ASSERT_EQ(g.nodes.size(), 7u);  // 3 inputs, t, mm, add, native_dropout

  const ir::Node& mm = g.node(g.Find("mm")->node);
  EXPECT_EQ(mm.op.ToString(), "aten::mm.default");
  EXPECT_EQ(mm.type().ToString(), "f32[8, 32]");
  ASSERT_EQ(mm.args.size(), 2u);
  EXPECT_EQ(g.ValueName(mm.args[0].as_tensor()), "x");
  EXPECT_EQ(g.ValueName(mm.args[1].as_tensor()), "t");
  EXPECT_EQ(mm.def_line, 11);
  EXPECT_EQ(mm.source.file, "/src/model.py");
  EXPECT_EQ(mm.source.line, 10);
  EXPECT_EQ(mm.source.function, "forward");
  EXPECT_EQ(mm.source.code, "y = x @ w.t() + b");

  // The blank line ends the scope of the "# File:" comment.
  const ir::Node& dropout = g.nodes.back();
  EXPECT_TRUE(dropout.source.empty());
  EXPECT_EQ(dropout.name, "native_dropout");
  ASSERT_EQ(dropout.outputs.size(), 2u);
  EXPECT_EQ(dropout.outputs[0].name, "getitem");
  EXPECT_EQ(dropout.outputs[0].type->ToString(), "f32[8, 32]");
  EXPECT_EQ(dropout.outputs[1].name, "");  // nobody reads the mask: unnamed, typed by inference
  ASSERT_TRUE(dropout.outputs[1].type.has_value());
  EXPECT_EQ(dropout.outputs[1].type->ToString(), "b8[8, 32]");
  EXPECT_EQ(dropout.args[1], ir::Value(0.1));
  EXPECT_EQ(dropout.args[2], ir::Value(true));

  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.ValueName(g.outputs[0].as_tensor()), "getitem");
  EXPECT_TRUE(g.outputs[1].is_none());
  EXPECT_EQ(g.return_line, 16);
  EXPECT_EQ(*g.Find("getitem"), (ir::TensorRef{6, 0}));
}

TEST(FxReader, RankFromFileNameWithoutHeader) {
  std::string text = Wrap("x: \"f32[4]\"", "        return (x,)\n");
  EXPECT_EQ(ParseFx(text, "dir/fw.g0.r2.py").rank, 2);
  EXPECT_EQ(ParseFx(text, "dir/model.py").rank, 0);
  EXPECT_EQ(ParseFx(text, "x").name, "GraphModule");
}

TEST(FxReader, ParsesArgumentValues) {
  std::string text = Wrap(
      "x: \"f32[8, 16]\", m: \"b8[8, 16]\", i: \"i32[8, 16]\"",
      "        _to_copy: \"i64[8, 16]\" = torch.ops.aten._to_copy.default(i, dtype = torch.int64, "
      "layout = torch.strided, device = device(type='cuda', index=0))\n"
      "        masked_fill: \"f32[8, 16]\" = torch.ops.aten.masked_fill.Scalar(x, m, -inf)\n"
      "        masked_fill_1: \"f32[8, 16]\" = torch.ops.aten.masked_fill.Scalar(x, m, -10000.0)\n"
      "        slice_1: \"f32[8, 16]\" = torch.ops.aten.slice.Tensor(x, 1, 0, "
      "9223372036854775807)\n"
      "        clone: \"f32[8, 16]\" = torch.ops.aten.clone.default(x, memory_format = "
      "torch.contiguous_format)\n"
      "        view: \"f32[128]\" = torch.ops.aten.view.default(x, [-1])\n"
      "        return [_to_copy, masked_fill, slice_1, clone, view]\n");
  ir::Graph g = ParseFx(text, "values.py");
  const ir::Node& to_copy = g.node(g.Find("_to_copy")->node);
  EXPECT_EQ(*to_copy.Kwarg("dtype"), ir::Value(ir::DType::kInt64));
  EXPECT_EQ(*to_copy.Kwarg("layout"), ir::Value(ir::EnumValue{"torch.strided"}));
  EXPECT_EQ(*to_copy.Kwarg("device"), ir::Value(ir::Device{"cuda", 0}));
  const ir::Node& fill = g.node(g.Find("masked_fill")->node);
  ASSERT_TRUE(fill.args[2].is_double());
  EXPECT_TRUE(std::isinf(fill.args[2].as_double()) && fill.args[2].as_double() < 0);
  EXPECT_EQ(g.node(g.Find("masked_fill_1")->node).args[2], ir::Value(-10000.0));
  const ir::Node& slice = g.node(g.Find("slice_1")->node);
  EXPECT_EQ(slice.args[3], ir::Value(int64_t{9223372036854775807}));
  EXPECT_TRUE(slice.args[1].is_int());
  EXPECT_EQ(*g.node(g.Find("clone")->node).Kwarg("memory_format"),
            ir::Value(ir::EnumValue{"torch.contiguous_format"}));
  EXPECT_EQ(g.node(g.Find("view")->node).args[1], ir::Value(ir::Value::List{ir::Value(-1)}));
  EXPECT_EQ(g.outputs.size(), 5u);
}

TEST(FxReader, ConstantsTakeTheirTypeFromAnIdentityConsumer) {
  std::string text = Wrap(
      "x: \"i64[8]\"",
      "        _tensor_constant0 = self._tensor_constant0\n"
      "        lift_fresh_copy: \"i64[]\" = "
      "torch.ops.aten.lift_fresh_copy.default(_tensor_constant0);  _tensor_constant0 = None\n"
      "        _tensor_constant1 = self._tensor_constant1\n"
      "        return (lift_fresh_copy, _tensor_constant1)\n");
  ir::Graph g = ParseFx(text, "const.py");
  const ir::Node& c0 = g.node(g.Find("_tensor_constant0")->node);
  EXPECT_EQ(c0.kind, ir::NodeKind::kConstant);
  ASSERT_TRUE(c0.outputs[0].type.has_value());
  EXPECT_EQ(c0.outputs[0].type->ToString(), "i64[]");
  // Not consumed by an identity: stays unknown.
  const ir::Node& c1 = g.node(g.Find("_tensor_constant1")->node);
  EXPECT_FALSE(c1.outputs[0].type.has_value());
  // An operator reading an untyped constant is an error at its line (issue 19: such a node went
  // unchecked, and verify crashed on it), unless the constant is annotated.
  std::string read =
      Wrap("x: \"i64[8]\"",
           "        _tensor_constant1 = self._tensor_constant1\n"
           "        add: \"i64[8]\" = torch.ops.aten.add.Tensor(x, _tensor_constant1)\n"
           "        return (add,)\n");
  try {
    ParseFx(read, "const.py");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(e.problem().find("'add' (aten::add.Tensor) reads the constant '_tensor_constant1'"),
              std::string::npos)
        << e.what();
  }
  std::string annotated = read;
  annotated.replace(annotated.find("_tensor_constant1 = self"), 24,
                    "_tensor_constant1: \"i64[]\" = self");
  ir::Graph typed = ParseFx(annotated, "const.py");
  EXPECT_EQ(typed.node(typed.Find("add")->node).type().ToString(), "i64[8]");
}

TEST(FxReader, FoldsAutoFunctionalized) {
  std::string text = Wrap(
      "x: \"bf16[16, 32]\", w: \"bf16[32]\"",
      "        empty_like: \"bf16[16, 32]\" = torch.ops.aten.empty_like.default(x, pin_memory = "
      "False)\n"
      "        auto_functionalized = torch.ops.higher_order.auto_functionalized("
      "torch.ops._C.rms_norm.default, result = empty_like, input = x, weight = w, epsilon = "
      "1e-06);  empty_like = None\n"
      "        getitem_1: \"bf16[16, 32]\" = auto_functionalized[1];  auto_functionalized = None\n"
      "        return (getitem_1,)\n");
  ir::Graph g = ParseFx(text, "vllm.py");
  const ir::Node& n = g.node(g.Find("getitem_1")->node);
  EXPECT_EQ(n.name, "auto_functionalized");
  EXPECT_EQ(n.op.ToString(), "_C::rms_norm.default");
  EXPECT_TRUE(n.functionalized);
  EXPECT_TRUE(n.args.empty());
  ASSERT_EQ(n.kwargs.size(), 4u);
  EXPECT_EQ(n.kwargs[0].name, "result");
  EXPECT_EQ(n.kwargs[3].value, ir::Value(1e-06));
  ASSERT_EQ(n.outputs.size(), 2u);  // None (void op), then the mutated `result`
  EXPECT_FALSE(n.outputs[0].type.has_value());
  EXPECT_EQ(n.outputs[1].name, "getitem_1");
}

struct BadCase {
  const char* what;
  std::string params;
  std::string body;
  int line;  // line of the error in the wrapped text (the def is line 4)
  const char* phrase;
};

TEST(FxReader, ReportsErrorsWithFileAndLine) {
  const std::string x = "x: \"f32[4, 4]\"";
  const BadCase cases[] = {
      {"undefined name", x,
       "        t: \"f32[4, 4]\" = torch.ops.aten.t.default(y)\n        return (t,)\n", 5,
       "undefined name 'y'"},
      {"duplicate", x,
       "        t: \"f32[4, 4]\" = torch.ops.aten.t.default(x)\n"
       "        t: \"f32[4, 4]\" = torch.ops.aten.t.default(x)\n        return (t,)\n",
       6, "duplicate name 't'"},
      {"mismatch", x,
       "        mm: \"f32[4, 5]\" = torch.ops.aten.mm.default(x, x)\n        return (mm,)\n", 5,
       "inferred f32[4, 4] for 'mm' (aten::mm.default) but the annotation says f32[4, 5]"},
      // An unknown operator loads opaque from its annotation (opaque_ops_test.cc); without one
      // its output type is missing.
      {"unknown op without a type", x,
       "        y = torch.ops.aten.foo.default(x)\n        return (x,)\n", 5,
       "operator 'aten::foo.default' of 'y' is unknown to GraphGuard and its result has no "
       "annotation (nor an annotated getitem)"},
      {"shape error", "x: \"f32[4, 4]\", z: \"f32[3, 3]\"",
       "        mm: \"f32[4, 3]\" = torch.ops.aten.mm.default(x, z)\n        return (mm,)\n", 5,
       "'mm' (aten::mm.default)"},
      {"truncated", x, "        t: \"f32[4, 4]\" = torch.ops.aten.t.default(x)\n", 5,
       "truncated"},
      {"unbalanced", x,
       "        t: \"f32[4, 4]\" = torch.ops.aten.t.default(x\n        return (t,)\n", 5,
       "unbalanced '('"},
      {"stray close", x, "        t: \"f32[4, 4]\" = torch.ops.aten.t.default(x))\n", 5,
       "unbalanced ')'"},
      {"bad annotation", x,
       "        t: \"f32[4, 4\" = torch.ops.aten.t.default(x)\n        return (t,)\n", 5,
       "bad type annotation"},
      {"bad dtype", "x: \"q7[4]\"", "        return (x,)\n", 4, "unknown dtype"},
      {"getitem of single", x,
       "        t: \"f32[4, 4]\" = torch.ops.aten.t.default(x)\n"
       "        g: \"f32[4, 4]\" = t[0]\n        return (g,)\n",
       6, "not a multi-output node"},
      {"getitem out of range", x,
       "        d = torch.ops.aten.native_dropout.default(x, 0.5, True)\n"
       "        g: \"f32[4, 4]\" = d[2]\n        return (g,)\n",
       6, "out of range"},
      {"getitem type", x,
       "        d = torch.ops.aten.native_dropout.default(x, 0.5, True)\n"
       "        g: \"f32[4, 4]\" = d[1]\n        return (g,)\n",
       6, "inferred b8[4, 4] for 'g' (output 1 of aten::native_dropout.default)"},
      {"tuple used directly", x,
       "        d = torch.ops.aten.native_dropout.default(x, 0.5, True)\n"
       "        t: \"f32[4, 4]\" = torch.ops.aten.t.default(d)\n        return (t,)\n",
       6, "multi-output node"},
      {"unterminated string", x, "        y = 'abc\n", 5, "unterminated string"},
      {"big int", x,
       "        t: \"f32[4, 4]\" = torch.ops.aten.t.default(x, 99999999999999999999)\n", 5,
       "out of range"},
      {"statement after return", x, "        return (x,)\n        t = x\n", 6, "after the"},
      {"not a call", x, "        t: \"f32[4, 4]\" = foo(x)\n        return (t,)\n", 5,
       "unsupported right-hand side"},
      {"free of unknown", x, "        t: \"f32[4, 4]\" = torch.ops.aten.t.default(x);  q = None\n",
       5, "undefined name 'q'"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    std::string text = Wrap(c.params, c.body);
    InputError e = ExpectInputError([&] { ParseFx(text, "bad.py"); });
    EXPECT_EQ(e.file(), "bad.py");
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.phrase), std::string::npos) << e.what();
  }
}

TEST(FxReader, NotAGraph) {
  InputError e = ExpectInputError([] { ParseFx("print('hello')\n", "x.py"); });
  EXPECT_NE(std::string(e.what()).find("no 'class"), std::string::npos);
  e = ExpectInputError([] { ReadFxFile("/nonexistent/file.py"); });
  EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
}

// ---- the real corpus -----------------------------------------------------------------------------

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(GG_CORPUS_DIR)) {
    if (entry.is_regular_file() && entry.path().extension() == ".py") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Node count computed from the text without the parser: one node per forward() parameter and per
// assignment whose right-hand side is an operator call or a constant attribute (getitem lines
// fold into their multi-output node).
size_t CountNodesInText(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  size_t count = 0;
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    if (line.find("def forward(self") != std::string::npos) {
      for (size_t p = line.find(": \""); p != std::string::npos; p = line.find(": \"", p + 1)) {
        ++count;
      }
    } else if (line.find(" = torch.ops.") != std::string::npos ||
               line.find(" = self.") != std::string::npos) {
      ++count;
    }
  }
  return count;
}

TEST(FxReaderCorpus, EveryFileImportsWithTheExpectedNodeCount) {
  std::vector<std::string> files = CorpusFiles();
  ASSERT_EQ(files.size(), 13u);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    ir::Graph g;
    ASSERT_NO_THROW(g = ReadFxFile(file)) << [&] {
      try {
        ReadFxFile(file);
      } catch (const std::exception& e) {
        return std::string(e.what());
      }
      return std::string();
    }();
    EXPECT_EQ(g.nodes.size(), CountNodesInText(file));
    EXPECT_FALSE(g.outputs.empty());
    EXPECT_GT(g.inputs.size(), 5u);
    // Every node has a definition line, and every tensor it reads was defined before it.
    for (size_t id = 0; id < g.nodes.size(); ++id) {
      EXPECT_GT(g.nodes[id].def_line, 0);
      for (const ir::TensorRef& ref : g.nodes[id].TensorInputs()) {
        EXPECT_LT(ref.node, static_cast<ir::NodeId>(id));
      }
    }
    std::string name = fs::path(file).filename().string();
    int expected_rank = name[name.size() - 4] - '0';  // fw.g0.r<R>.py
    EXPECT_EQ(g.rank, expected_rank);
  }
}

TEST(FxReaderCorpus, RanksOfOneConfigurationHaveEqualNodeCounts) {
  std::map<std::string, std::set<size_t>> counts;
  for (const std::string& file : CorpusFiles()) {
    counts[fs::path(file).parent_path().string()].insert(ReadFxFile(file).nodes.size());
  }
  EXPECT_EQ(counts.size(), 7u);  // gpt: 5 configurations, qwen2: 2
  for (const auto& [dir, sizes] : counts) EXPECT_EQ(sizes.size(), 1u) << dir;
}

TEST(FxReaderCorpus, KeepsSourceLocationsAndTheLargestFileIsFast) {
  const std::string file = std::string(GG_CORPUS_DIR) + "/gpt/paral2_layer2/fw.g0.r0.py";
  std::string text = ReadTextFile(file);
  ReadFxFile(file);  // warm up the registry
  auto start = std::chrono::steady_clock::now();
  ir::Graph g = ParseFx(text, file);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  EXPECT_LT(ms, 250.0) << "parsing " << file << " took " << ms << " ms";
  size_t with_source = 0;
  for (const ir::Node& n : g.nodes) with_source += n.source.empty() ? 0 : 1;
  EXPECT_GT(with_source, g.nodes.size() / 2);
  const ir::Node& zeros = g.node(g.Find("zeros")->node);
  EXPECT_NE(zeros.source.file.find("schedules.py"), std::string::npos);
  EXPECT_EQ(zeros.source.function, "forward_backward_no_pipelining");
}

// Inputs record their parameter FQN where the dump says it: AOT's descriptor comments on an
// expanded signature, or the module path Dynamo spells in a placeholder's name.
TEST(FxReader, RecordsInputFqns) {
  const std::string aot =
      "class GraphModule(torch.nn.Module):\n"
      "    def forward(\n"
      "        self,\n"
      "        primals_1: \"f32[4, 4]\",  # ParamAOTInput(target='decoder.layers.0.fc_2.weight')\n"
      "        primals_2: \"f32[4]\",  # BufferAOTInput(target=\"norm.running_mean\")\n"
      "        primals_3: \"f32[2, 4]\",  # PlainAOTInput(idx=0)\n"
      "    ):\n"
      "        add: \"f32[2, 4]\" = torch.ops.aten.add.Tensor(primals_3, primals_2)\n"
      "        return (add, primals_1)\n";
  ir::Graph g = ParseFx(aot, "aot.py");
  ASSERT_EQ(g.inputs.size(), 3u);
  EXPECT_EQ(g.node(g.inputs[0]).fqn, "decoder.layers.0.fc_2.weight");
  EXPECT_EQ(g.node(g.inputs[1]).fqn, "norm.running_mean");
  EXPECT_EQ(g.node(g.inputs[2]).fqn, "");
  const std::string dynamo =
      "class GraphModule(torch.nn.Module):\n"
      "    def forward(self, L_self_modules_decoder_modules_layers_modules_0_modules_mlp_modules_"
      "linear_fc2_parameters_weight_: \"f32[4, 4]\", l_self_buffers_rope_inv_freq_: \"f32[4]\", "
      "L_x_: \"f32[2, 4]\", L_self_modules_a_: \"f32[4]\", L_self_parameters_: \"f32[4]\"):\n"
      "        return (L_x_,)\n";
  g = ParseFx(dynamo, "dynamo.py");
  ASSERT_EQ(g.inputs.size(), 5u);
  EXPECT_EQ(g.node(g.inputs[0]).fqn, "decoder.layers.0.mlp.linear_fc2.weight");
  EXPECT_EQ(g.node(g.inputs[1]).fqn, "rope_inv_freq");
  EXPECT_EQ(g.node(g.inputs[2]).fqn, "");  // a user input
  EXPECT_EQ(g.node(g.inputs[3]).fqn, "");  // a module, no parameter
  EXPECT_EQ(g.node(g.inputs[4]).fqn, "");  // no attribute name
  // A pytree signature's leaf declarations carry the descriptors (print_readable, expanded_def).
  g = ParseFx(
      "class joint(torch.nn.Module):\n"
      "    def forward(self, x, scale):\n"
      "        x_1: \"f32[4, 8]\"  # PlainAOTInput(idx=0)\n"
      "        scale_1: \"f32[8]\"  # ParamAOTInput(target='norm.scale')\n"
      "        x_1, scale_1, = fx_pytree.tree_flatten_spec(([x], {'scale':scale}), self._in_spec)\n"
      "        return (x_1,)\n",
      "joint.py");
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.node(g.inputs[0]).fqn, "");
  EXPECT_EQ(g.node(g.inputs[1]).fqn, "norm.scale");
}

}  // namespace
}  // namespace gg::frontend
