// Operators the registry does not know (opaque nodes, typed from the file) run by name through
// the ATen dispatcher when LibTorch has them; otherwise the run fails naming the operator.
#include <gtest/gtest.h>

#include <string>

#include "frontend/fx_reader.h"
#include "runtime/executor.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

TEST(OpaqueOpsRuntime, UnknownOperatorsRunThroughTheDispatcher) {
  // aten::logit and aten::frexp are in LibTorch but not in GraphGuard's registry.
  const std::string text =
      "class G(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[3, 4]\"):\n"
      "        sigmoid: \"f32[3, 4]\" = torch.ops.aten.sigmoid.default(x)\n"
      "        logit: \"f32[3, 4]\" = torch.ops.aten.logit.default(sigmoid, eps = 1e-06)\n"
      "        frexp = torch.ops.aten.frexp.Tensor(logit)\n"
      "        mantissa: \"f32[3, 4]\" = frexp[0]\n"
      "        exponent: \"i32[3, 4]\" = frexp[1];  frexp = None\n"
      "        return (logit, mantissa, exponent)\n";
  ir::Graph g = frontend::ParseFx(text, "opaque.py");
  at::Tensor x = at::linspace(-2.0, 2.0, 12).reshape({3, 4});
  ExecutionResult r = Execute(g, {{x}, {}});
  ASSERT_EQ(r.outputs.size(), 3u);
  at::Tensor want_logit = at::logit(at::sigmoid(x), 1e-06);
  EXPECT_TRUE(at::allclose(r.outputs[0], want_logit));
  auto [mantissa, exponent] = at::frexp(want_logit);
  EXPECT_TRUE(at::equal(r.outputs[1], mantissa));
  EXPECT_TRUE(at::equal(r.outputs[2], exponent));
  EXPECT_EQ(r.outputs[2].scalar_type(), at::kInt);
}

TEST(OpaqueOpsRuntime, AnOperatorLibTorchLacksIsAnErrorNamingIt) {
  const std::string text =
      "class G(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[4]\"):\n"
      "        y: \"f32[4]\" = torch.ops.mylib.fancy_gelu.default(x)\n"
      "        return (y,)\n";
  ir::Graph g = frontend::ParseFx(text, "fancy.py");
  try {
    Execute(g, {{at::ones({4})}, {}});
    FAIL() << "no error";
  } catch (const NotExecutableError& e) {  // GraphGuard's limit, not the program's failure
    EXPECT_EQ(e.file(), "fancy.py");
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(e.problem().find("mylib::fancy_gelu.default is unknown to GraphGuard"),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.problem().find("LibTorch has no operator of that name"), std::string::npos)
        << e.what();
  }
}

TEST(OpaqueOpsRuntime, AnAnnotationLibTorchContradictsIsAnError) {
  // The annotation is the type GraphGuard trusts; the run checks the value against it.
  const std::string text =
      "class G(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[4]\"):\n"
      "        y: \"f32[2]\" = torch.ops.aten.frac.default(x)\n"
      "        return (y,)\n";
  ir::Graph g = frontend::ParseFx(text, "frac.py");
  EXPECT_THROW(Execute(g, {{at::ones({4})}, {}}), InputError);
}

}  // namespace
}  // namespace gg::runtime
