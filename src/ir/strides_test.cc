#include "ir/strides.h"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "frontend/fx_reader.h"

namespace gg::ir {
namespace {

TEST(Strides, ContiguousStridesAreRowMajor) {
  EXPECT_EQ(ContiguousStrides({4, 6}), (Strides{6, 1}));
  EXPECT_EQ(ContiguousStrides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(ContiguousStrides({4, 0, 5}), (Strides{5, 5, 1}));  // size 0 counts as 1
  EXPECT_EQ(ContiguousStrides({}), Strides{});
  // An empty tensor's other extents may multiply past int64: an error, never a wrapped stride.
  EXPECT_THROW(ContiguousStrides({0, int64_t{1} << 40, int64_t{1} << 40}), std::overflow_error);
}

// The cases of at::detail::computeStride that decide what view accepts.
TEST(Strides, ComputeViewStridesFollowsATen) {
  // Contiguous: any shape of the same element count.
  EXPECT_EQ(ComputeViewStrides({4, 6}, {6, 1}, {24}), (Strides{1}));
  EXPECT_EQ(ComputeViewStrides({4, 6}, {6, 1}, {2, 2, 6}), (Strides{12, 6, 1}));
  EXPECT_EQ(ComputeViewStrides({4, 6}, {6, 1}, {4, 1, 6}), (Strides{6, 6, 1}));
  // A transposed [6, 4] (strides 1, 6): flattening needs a copy; splitting a dim does not.
  EXPECT_EQ(ComputeViewStrides({6, 4}, {1, 6}, {24}), std::nullopt);
  EXPECT_EQ(ComputeViewStrides({6, 4}, {1, 6}, {2, 3, 4}), (Strides{3, 1, 6}));
  EXPECT_EQ(ComputeViewStrides({6, 4}, {1, 6}, {6, 2, 2}), (Strides{1, 12, 6}));
  EXPECT_EQ(ComputeViewStrides({6, 4}, {1, 6}, {3, 8}), std::nullopt);
  // [s, b, h, d] -> transpose(0, 1) -> [b, s, h, d]: merging h and d is fine, s and h is not.
  Strides t{8, 16, 4, 1};  // transpose of contiguous [2, 3, 2, 4] strides [24, 8, 4, 1]
  EXPECT_EQ(ComputeViewStrides({3, 2, 2, 4}, t, {3, 2, 8}), (Strides{8, 16, 1}));
  EXPECT_EQ(ComputeViewStrides({3, 2, 2, 4}, t, {6, 8}), std::nullopt);
  // Size-1 dims never block a view; a 0-d tensor views as anything of one element.
  EXPECT_EQ(ComputeViewStrides({1, 4}, {99, 1}, {4}), (Strides{1}));
  EXPECT_EQ(ComputeViewStrides({}, {}, {1, 1}), (Strides{1, 1}));
  // Expanded (stride 0) rows: viewing them as one dim needs a copy.
  EXPECT_EQ(ComputeViewStrides({3, 4}, {0, 1}, {12}), std::nullopt);
  EXPECT_EQ(ComputeViewStrides({3, 4}, {0, 1}, {3, 2, 2}), (Strides{0, 2, 1}));
  // A column slice (step 1) of [4, 8] to [4, 4]: rows are 8 apart.
  EXPECT_EQ(ComputeViewStrides({4, 4}, {8, 1}, {16}), std::nullopt);
  EXPECT_EQ(ComputeViewStrides({4, 4}, {8, 1}, {4, 2, 2}), (Strides{8, 2, 1}));
  // Empty tensors: strides as if resized.
  EXPECT_EQ(ComputeViewStrides({0, 4}, {1, 0}, {4, 0}), (Strides{1, 1}));
}

TEST(Strides, NonOverlappingAndDense) {
  EXPECT_TRUE(IsNonOverlappingAndDense({4, 6}, {6, 1}));
  EXPECT_TRUE(IsNonOverlappingAndDense({6, 4}, {1, 6}));  // a transpose
  EXPECT_FALSE(IsNonOverlappingAndDense({3, 4}, {0, 1}));  // expanded
  EXPECT_FALSE(IsNonOverlappingAndDense({4, 4}, {8, 1}));  // a slice
  EXPECT_TRUE(IsNonOverlappingAndDense({1, 4}, {99, 1}));
}

Graph Parse(const std::string& body) {
  frontend::FxOptions options;
  return frontend::ParseFx("# Graph[rank=0](fw, gid=0)\nclass GraphModule(torch.nn.Module):\n" +
                              body,
                          "strides.py", options);
}

TEST(Strides, PropagatesThroughViewsAndStopsAtLayoutFollowingOps) {
  Graph g = Parse(
      "    def forward(self, x: \"f32[4, 6]\"):\n"
      "        t: \"f32[6, 4]\" = torch.ops.aten.t.default(x)\n"
      "        u: \"f32[6, 1, 4]\" = torch.ops.aten.unsqueeze.default(t, 1)\n"
      "        e: \"f32[6, 3, 4]\" = torch.ops.aten.expand.default(u, [6, 3, 4])\n"
      "        s: \"f32[6, 2]\" = torch.ops.aten.slice.Tensor(t, 1, 0, 4, 2)\n"
      "        p: \"f32[4, 6]\" = torch.ops.aten.permute.default(t, [1, 0])\n"
      "        r: \"f32[6, 4]\" = torch.ops.aten.relu.default(t)\n"
      "        m: \"f32[4, 4]\" = torch.ops.aten.mm.default(x, t)\n"
      "        c: \"f32[6, 4]\" = torch.ops.aten.clone.default(t)\n"
      "        k: \"f32[6, 4]\" = torch.ops.aten.clone.default(t, memory_format = torch.contiguous_format)\n"
      "        return (e, s, p, r, m, c, k)\n");
  auto strides = InferStrides(g);
  auto of = [&](const std::string& name) { return strides.at(g.Find(name)->node).at(0); };
  EXPECT_EQ(of("x"), (Strides{6, 1}));
  EXPECT_EQ(of("t"), (Strides{1, 6}));
  EXPECT_EQ(of("u"), (Strides{1, 24, 6}));  // ATen: size * stride of the dim it precedes
  EXPECT_EQ(of("e"), (Strides{1, 0, 6}));
  EXPECT_EQ(of("s"), (Strides{1, 12}));
  EXPECT_EQ(of("p"), (Strides{6, 1}));
  EXPECT_EQ(of("r"), std::nullopt);  // elementwise on a transpose: follows it in ATen, unknown
  EXPECT_EQ(of("m"), std::nullopt);  // an input is not contiguous: not modelled
  EXPECT_EQ(of("c"), (Strides{1, 6}));  // clone preserves a dense layout
  EXPECT_EQ(of("k"), (Strides{4, 1}));
}

TEST(Strides, SelectSqueezeSplitAndWait) {
  Graph g = Parse(
      "    def forward(self, x: \"f32[2, 1, 6]\"):\n"
      "        p: \"f32[6, 1, 2]\" = torch.ops.aten.permute.default(x, [2, 1, 0])\n"
      "        s: \"f32[1, 2]\" = torch.ops.aten.select.int(p, 0, 3)\n"
      "        q: \"f32[6, 2]\" = torch.ops.aten.squeeze.dim(p, 1)\n"
      "        split = torch.ops.aten.split.Tensor(q, 4, 0)\n"
      "        a: \"f32[4, 2]\" = split[0]\n"
      "        b: \"f32[2, 2]\" = split[1]\n"
      "        ar: \"f32[4, 2]\" = torch.ops._c10d_functional.all_reduce.default(a, 'sum', '0')\n"
      "        w: \"f32[4, 2]\" = torch.ops._c10d_functional.wait_tensor.default(ar)\n"
      "        c: \"f32[2, 1, 6]\" = torch.ops.aten.add.Tensor(x, 1)\n"
      "        w2: \"f32[2, 2]\" = torch.ops._c10d_functional.wait_tensor.default(b)\n"
      "        return (s, w, c, w2)\n");
  auto strides = InferStrides(g);
  auto of = [&](const std::string& name) {
    std::optional<TensorRef> ref = g.Find(name);
    return strides.at(ref->node).at(ref->output);
  };
  EXPECT_EQ(of("p"), (Strides{1, 6, 6}));
  EXPECT_EQ(of("s"), (Strides{6, 6}));
  EXPECT_EQ(of("q"), (Strides{1, 6}));
  EXPECT_EQ(of("a"), (Strides{1, 6}));
  EXPECT_EQ(of("b"), (Strides{1, 6}));
  EXPECT_EQ(of("ar"), std::nullopt);  // a collective of a non-contiguous tensor: not modelled
  EXPECT_EQ(of("c"), (Strides{6, 6, 1}));  // elementwise on contiguous: fresh and contiguous
  EXPECT_EQ(of("w2"), (Strides{1, 6}));    // wait_tensor is its input
}

TEST(Strides, FindsTheViewATenRefuses) {
  Graph bad = Parse(
      "    def forward(self, x: \"f32[4, 6]\"):\n"
      "        t: \"f32[6, 4]\" = torch.ops.aten.t.default(x)\n"
      "        ok: \"f32[2, 3, 4]\" = torch.ops.aten.view.default(t, [2, 3, 4])\n"
      "        v: \"f32[24]\" = torch.ops.aten.view.default(t, [-1])\n"
      "        return (ok, v)\n");
  std::optional<ImpossibleView> found = FirstImpossibleView(bad);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(bad.nodes[found->node].name, "v");
  EXPECT_EQ(found->input_strides, (Strides{1, 6}));
  EXPECT_EQ(found->sizes, (std::vector<int64_t>{24}));
  // reshape copies where view cannot; a view of the copy is fine; unknown layouts pass.
  Graph good = Parse(
      "    def forward(self, x: \"f32[4, 6]\"):\n"
      "        t: \"f32[6, 4]\" = torch.ops.aten.t.default(x)\n"
      "        r: \"f32[24]\" = torch.ops.aten.reshape.default(t, [24])\n"
      "        v: \"f32[2, 12]\" = torch.ops.aten.view.default(r, [2, 12])\n"
      "        g: \"f32[6, 4]\" = torch.ops.aten.gelu.default(t)\n"
      "        w: \"f32[24]\" = torch.ops.aten.view.default(g, [24])\n"
      "        return (v, w)\n");
  EXPECT_EQ(FirstImpossibleView(good), std::nullopt);
}

}  // namespace
}  // namespace gg::ir
