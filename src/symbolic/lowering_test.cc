// Tests of lowering.h through ReadInputs: the tensors a lowered node reads show whether its table
// entry covered it (an opaque node reads every input; a covered one only what its term uses).
#include "symbolic/lowering.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "frontend/fx_reader.h"

namespace gg::symbolic {
namespace {

// Names of the tensors node `name` of `graph` reads, in reference order.
std::vector<std::string> Reads(const ir::Graph& graph, const std::string& name,
                               const ConstantValues* constants = nullptr) {
  std::optional<ir::TensorRef> value = graph.Find(name);
  if (!value) {
    ADD_FAILURE() << "no value " << name;
    return {};
  }
  std::vector<std::string> out;
  for (const ir::TensorRef& ref : ReadInputs(graph, value->node, constants)) {
    out.push_back(graph.node(ref.node).name);
  }
  return out;
}

// `t[mask] = 0.0` as DTensor's _MaskPartial writes it, with the value from scalar_tensor (how
// scripts/capture writes a 0-dim tensor constant).
constexpr char kScalarTensorValue[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 3]", mask: "b8[4]"):
        v: "f32[]" = torch.ops.aten.scalar_tensor.default(0.0, dtype = torch.float32)
        y: "f32[4, 3]" = torch.ops.aten.index_put.default(x, [mask], v)
        return (y,)
)";

// The same write with the value in a tensor constant (how make_fx records it).
constexpr char kConstantValue[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 3]", mask: "b8[4]"):
        _tensor_constant0 = self._tensor_constant0
        v: "f32[]" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant0)
        y: "f32[4, 3]" = torch.ops.aten.index_put.default(x, [mask], v)
        return (y,)
)";

TEST(LoweringTest, IndexPutReadsItsValueFromScalarTensor) {
  ir::Graph g = frontend::ParseFx(kScalarTensorValue, "scalar_tensor.py");
  // masked_fill(x, mask, 0.0): the value is a number in the term, not a tensor read
  EXPECT_EQ(Reads(g, "y"), (std::vector<std::string>{"x", "mask"}));
}

TEST(LoweringTest, IndexPutOfAnUnstatedConstantStaysOpaque) {
  ir::Graph g = frontend::ParseFx(kConstantValue, "constant.py");
  EXPECT_EQ(Reads(g, "y"), (std::vector<std::string>{"x", "mask", "v"}));
  ConstantValues stated{{"_tensor_constant0", 0.0}};
  EXPECT_EQ(Reads(g, "y", &stated), (std::vector<std::string>{"x", "mask"}));
}

}  // namespace
}  // namespace gg::symbolic
