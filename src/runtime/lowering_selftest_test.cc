// Numeric self-tests of the index-like lowerings (symbolic/lowering.cc): the term a node lowers to,
// evaluated with term_eval on the node's input values, equals what ATen computes for the node, on
// ids drawn from the op's whole domain: negative ids for index / index_put (which wrap them),
// ids past the table for embedding_dense_backward (which drops them), size-1 dims. Each case also
// says whether the lowering had to write the wrap (wrap_index) or proved the ids in range from
// the graph (index_domain.h: a mask, clamp, arange, topk indices, a where that wraps).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "frontend/fx_reader.h"
#include "runtime/executor.h"
#include "runtime/term_eval.h"
#include "symbolic/extract.h"
#include "symbolic/index_domain.h"
#include "symbolic/lowering.h"
#include "symbolic/tensor_lang.h"

namespace gg::runtime {
namespace {

struct Case {
  const char* name;
  const char* fx;         // one graph; its integer input `u` is drawn in [0, u_bound)
  const char* node;       // the node whose lowering is checked
  int64_t u_bound;
  bool wraps;             // the lowered term holds wrap_index
  // The term is a sum of one-hots times the values: 0 * inf is NaN where ATen writes 0, so it
  // equals ATen on finite values only (a known limit of the onehot lowerings): no NaN/inf drawn.
  bool finite_only = false;
};

// w [6, 3], u the raw integer input (non-negative: a graph input's premise), ids derived from it.
const Case kCases[] = {
    {"index of negative ids wraps", R"(class GraphModule(torch.nn.Module):
    def forward(self, w: "f32[6, 3]", u: "i64[5]"):
        ids: "i64[5]" = torch.ops.aten.sub.Tensor(u, 6)
        y: "f32[5, 3]" = torch.ops.aten.index.Tensor(w, [ids])
        return (y,)
)", "y", 12, true},
    {"index of a non-negative input", R"(class GraphModule(torch.nn.Module):
    def forward(self, w: "f32[6, 3]", u: "i64[2, 4]"):
        y: "f32[2, 4, 3]" = torch.ops.aten.index.Tensor(w, [u])
        return (y,)
)", "y", 6, false},
    {"index of a size-1 table", R"(class GraphModule(torch.nn.Module):
    def forward(self, w: "f32[1, 3]", u: "i64[1]"):
        ids: "i64[1]" = torch.ops.aten.sub.Tensor(u, 1)
        y: "f32[1, 3]" = torch.ops.aten.index.Tensor(w, [ids])
        return (y,)
)", "y", 2, true},
    {"index of masked ids needs no wrap", R"(class GraphModule(torch.nn.Module):
    def forward(self, w: "f32[6, 3]", u: "i64[7]"):
        lt: "b8[7]" = torch.ops.aten.lt.Scalar(u, 3)
        ge: "b8[7]" = torch.ops.aten.ge.Scalar(u, 9)
        m: "b8[7]" = torch.ops.aten.bitwise_or.Tensor(lt, ge)
        c: "i64[7]" = torch.ops.aten.clone.default(u)
        s: "i64[7]" = torch.ops.aten.sub.Tensor(c, 3)
        ids: "i64[7]" = torch.ops.aten.masked_fill.Scalar(s, m, 0)
        y: "f32[7, 3]" = torch.ops.aten.index.Tensor(w, [ids])
        return (y,)
)", "y", 12, false},
    {"index of a where that wraps needs no wrap", R"(class GraphModule(torch.nn.Module):
    def forward(self, w: "f32[6, 3]", u: "i64[7]"):
        s: "i64[7]" = torch.ops.aten.sub.Tensor(u, 6)
        neg: "b8[7]" = torch.ops.aten.lt.Scalar(s, 0)
        up: "i64[7]" = torch.ops.aten.add.Tensor(s, 6)
        ids: "i64[7]" = torch.ops.aten.where.self(neg, up, s)
        y: "f32[7, 3]" = torch.ops.aten.index.Tensor(w, [ids])
        return (y,)
)", "y", 12, false},
    {"a hand-written where(x < 0, x + n, x) is the wrap", R"(class GraphModule(torch.nn.Module):
    def forward(self, u: "i64[9]"):
        s: "i64[9]" = torch.ops.aten.sub.Tensor(u, 14)
        neg: "b8[9]" = torch.ops.aten.lt.Scalar(s, 0)
        up: "i64[9]" = torch.ops.aten.add.Tensor(s, 6)
        y: "i64[9]" = torch.ops.aten.where.self(neg, up, s)
        return (y,)
)", "y", 20, true},
    {"index of clamped ids needs no wrap", R"(class GraphModule(torch.nn.Module):
    def forward(self, w: "f32[6, 3]", u: "i64[7]"):
        s: "i64[7]" = torch.ops.aten.sub.Tensor(u, 4)
        ids: "i64[7]" = torch.ops.aten.clamp.default(s, 0, 5)
        y: "f32[7, 3]" = torch.ops.aten.index.Tensor(w, [ids])
        return (y,)
)", "y", 12, false},
    {"index of topk indices needs no wrap", R"(class GraphModule(torch.nn.Module):
    def forward(self, w: "f32[4, 2, 3]", r: "f32[5, 4]"):
        topk = torch.ops.aten.topk.default(r, 2)
        getitem: "f32[5, 2]" = topk[0]
        getitem_1: "i64[5, 2]" = topk[1];  topk = None
        y: "f32[5, 2, 2, 3]" = torch.ops.aten.index.Tensor(w, [getitem_1])
        return (y,)
)", "y", 1, false},
    {"target pick of negative columns wraps", R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 6]", u: "i64[4]"):
        a: "i64[4]" = torch.ops.aten.arange.start(0, 4)
        t: "i64[4]" = torch.ops.aten.sub.Tensor(u, 6)
        y: "f32[4]" = torch.ops.aten.index.Tensor(x, [a, t])
        return (y,)
)", "y", 12, true},
    {"one-hot index_put of negative columns wraps", R"(class GraphModule(torch.nn.Module):
    def forward(self, v: "f32[4]", u: "i64[4]"):
        z: "f32[4, 6]" = torch.ops.aten.new_zeros.default(v, [4, 6], dtype = torch.float32)
        a: "i64[4]" = torch.ops.aten.arange.start(0, 4)
        t: "i64[4]" = torch.ops.aten.sub.Tensor(u, 6)
        y: "f32[4, 6]" = torch.ops.aten.index_put.default(z, [a, t], v, True)
        return (y,)
)", "y", 12, true, /*finite_only=*/true},
    {"accumulating index_put of negative ids wraps", R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[6, 3]", v: "f32[8, 3]", u: "i64[8]"):
        ids: "i64[8]" = torch.ops.aten.sub.Tensor(u, 6)
        y: "f32[6, 3]" = torch.ops.aten.index_put.default(x, [ids], v, True)
        return (y,)
)", "y", 12, true},
    {"embedding_dense_backward drops ids outside the table", R"(class GraphModule(torch.nn.Module):
    def forward(self, g: "f32[2, 5, 3]", u: "i64[2, 5]"):
        ids: "i64[2, 5]" = torch.ops.aten.sub.Tensor(u, 3)
        y: "f32[6, 3]" = torch.ops.aten.embedding_dense_backward.default(g, ids, 6, -1, False)
        return (y,)
)", "y", 12, false},
    {"embedding of in-range ids", R"(class GraphModule(torch.nn.Module):
    def forward(self, w: "f32[6, 3]", u: "i64[1, 4]"):
        y: "f32[1, 4, 3]" = torch.ops.aten.embedding.default(w, u)
        return (y,)
)", "y", 6, false},
    {"gather of in-range ids", R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 6]", u: "i64[4, 1]"):
        y: "f32[4, 1]" = torch.ops.aten.gather.default(x, 1, u)
        return (y,)
)", "y", 6, false},
    {"scatter of topk indices", R"(class GraphModule(torch.nn.Module):
    def forward(self, r: "f32[5, 4]", src: "f32[5, 2]"):
        topk = torch.ops.aten.topk.default(r, 2)
        getitem: "f32[5, 2]" = topk[0]
        getitem_1: "i64[5, 2]" = topk[1];  topk = None
        z: "f32[5, 4]" = torch.ops.aten.new_zeros.default(r, [5, 4], dtype = torch.float32)
        y: "f32[5, 4]" = torch.ops.aten.scatter.src(z, -1, getitem_1, src)
        return (y,)
)", "y", 1, false, /*finite_only=*/true},
};

// Integers in [0, u_bound); floats normal, with a NaN and an infinity on odd seeds (a lookup
// must carry them to exactly the positions ATen does, and a dropped id must not spread them).
at::Tensor Draw(const ir::TensorType& type, int64_t u_bound, uint64_t seed, bool finite) {
  std::vector<int64_t> shape;
  for (const ir::Dim& d : type.shape) shape.push_back(d.value());
  if (type.dtype == ir::DType::kInt64) return at::randint(0, u_bound, shape, at::kLong);
  at::Tensor x = at::randn(shape, at::kFloat);
  if (!finite && seed % 2 == 1 && x.numel() >= 2) {
    at::Tensor flat = x.view({-1});
    flat[at::randint(0, x.numel(), {}, at::kLong).item<int64_t>()] = NAN;
    flat[at::randint(0, x.numel(), {}, at::kLong).item<int64_t>()] = INFINITY;
  }
  return x;
}

TEST(LoweringSelfTest, IndexLikeLoweringsMatchAtenOnTheirWholeDomain) {
  const symbolic::TensorLanguage& lang = symbolic::TensorLanguage::Get();
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    ir::Graph graph = frontend::ParseFx(c.fx, std::string(c.name) + ".py");
    std::optional<ir::TensorRef> out = graph.Find(c.node);
    ASSERT_TRUE(out);
    const ir::Node& node = graph.node(out->node);
    std::vector<ir::TensorRef> ins = node.TensorInputs();
    for (uint64_t seed = 0; seed < 6; ++seed) {
      at::manual_seed(seed);
      GraphInputs inputs;
      for (ir::NodeId id : graph.inputs) {
        inputs.inputs.push_back(Draw(graph.node(id).type(), c.u_bound, seed, c.finite_only));
      }
      std::set<ir::TensorRef> keep(ins.begin(), ins.end());
      keep.insert(*out);
      ExecutionResult run = Execute(graph, inputs, {}, keep);
      // a kept value, or a graph input's own
      auto Value = [&](ir::TensorRef ref) -> at::Tensor {
        if (auto it = run.kept.find(ref); it != run.kept.end()) return it->second;
        for (size_t i = 0; i < graph.inputs.size(); ++i) {
          if (graph.inputs[i] == ref.node) return inputs.inputs[i];
        }
        ADD_FAILURE() << "no value for " << graph.ValueName(ref);
        return at::Tensor();
      };

      // The node over leaves holding its inputs' values.
      symbolic::LeafTable leaves;
      symbolic::EGraph egraph(lang.ops());
      const auto& analysis =
          egraph.AddAnalysis(std::make_unique<symbolic::TensorAnalysis>(leaves));
      std::map<int64_t, at::Tensor> values;
      symbolic::TensorClassFn leaf_of = [&](ir::TensorRef ref) {
        symbolic::TensorLeaf leaf{symbolic::TensorLeaf::Side::kSeq, 0, ref, graph.type(ref),
                                  graph.ValueName(ref)};
        int64_t id = leaves.Intern(leaf);
        at::Tensor v = Value(ref);
        values[id] = at::isFloatingType(v.scalar_type()) ? v.to(at::kDouble) : v;
        return egraph.Add(lang.Tensor(id));
      };
      symbolic::LoweredNode lowered =
          symbolic::LowerNode(egraph, analysis, graph, out->node, leaf_of, "selftest");
      egraph.Rebuild();
      ASSERT_TRUE(lowered.outputs[out->output]);
      ASSERT_FALSE(lowered.opaque[out->output]) << "the lowering did not cover the node";
      symbolic::Extractor extractor(egraph, symbolic::AstSize());
      auto term = extractor.Extract(*lowered.outputs[out->output]);
      ASSERT_TRUE(term);
      const std::string text = term->expr.ToString(lang.ops());
      EXPECT_EQ(text.find("wrap_index") != std::string::npos, c.wraps) << text;
      at::Tensor got;
      try {
        got = std::get<at::Tensor>(EvalTerm(term->expr, values)).to(at::kDouble);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "seed " << seed << ": cannot evaluate " << text << ": "
                      << std::string(e.what()).substr(0, 200);
        continue;
      }
      at::Tensor want = Value(*out).to(at::kDouble);
      ASSERT_EQ(got.sizes(), want.sizes()) << text;
      EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-5, /*equal_nan=*/true))
          << "seed " << seed << ": " << text
                                                       << "\nids " << values.rbegin()->second;
    }
  }
}

// The ids a lowering needs in range must be: a wrap of the negative ones stays outside the
// language's lookup ops only when the analysis proved them non-negative.
TEST(LoweringSelfTest, RangeAnalysisBoundsWhatTheGraphBounds) {
  ir::Graph graph = frontend::ParseFx(kCases[3].fx, "masked.py");
  symbolic::IndexDomain domain(graph);
  symbolic::IntRange r = domain.Range(*graph.Find("ids"));
  EXPECT_EQ(r, (symbolic::IntRange{0, 5}));
  EXPECT_TRUE(domain.IdsInRange(*graph.Find("ids"), 6));
  EXPECT_FALSE(domain.IdsInRange(*graph.Find("ids"), 5));
  EXPECT_EQ(domain.Range(*graph.Find("s")), (symbolic::IntRange{-3, std::nullopt}));
  symbolic::IndexDomain unassumed(graph, nullptr, /*assume_inputs_nonneg=*/false);
  EXPECT_EQ(unassumed.Range(*graph.Find("s")), symbolic::IntRange::Any());
  // the guard bounds the masked ids whatever the input
  EXPECT_EQ(unassumed.Range(*graph.Find("ids")), (symbolic::IntRange{0, 5}));
}

}  // namespace
}  // namespace gg::runtime
