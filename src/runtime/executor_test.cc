#include "runtime/executor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "frontend/loader.h"
#include "runtime/op_kernels.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

using ir::Value;

ir::TensorType F32(std::vector<int64_t> dims) {
  ir::TensorType t{ir::DType::kFloat32, {}};
  for (int64_t d : dims) t.shape.push_back(d);
  return t;
}

// Builds small graphs node by node.
struct Builder {
  ir::Graph g;
  Value Input(const std::string& name, ir::TensorType type) {
    ir::Node n;
    n.kind = ir::NodeKind::kInput;
    n.name = name;
    n.outputs.push_back({name, type});
    ir::NodeId id = g.AddNode(n);  // AddNode lists inputs
    return ir::TensorRef{id, 0};
  }
  Value Op(const std::string& name, const std::string& op, std::vector<Value> args,
           ir::TensorType type, int line = 0) {
    ir::Node n;
    n.name = name;
    n.op = *ir::OpName::Parse(op);
    n.args = std::move(args);
    n.outputs.push_back({name, type});
    n.def_line = line;
    return ir::TensorRef{g.AddNode(n), 0};
  }
};

// Each rank: y = wait(all_reduce(x, op)); g = wait(all_gather(y)); s = wait(reduce_scatter(g)).
ir::Program CollectiveProgram(int world, const std::string& reduce_op) {
  ir::Program p;
  for (int r = 0; r < world; ++r) {
    Builder b;
    b.g.rank = r;
    b.g.file = "rank" + std::to_string(r) + ".py";
    Value x = b.Input("x", F32({2, 2}));
    Value ar = b.Op("ar", "_c10d_functional::all_reduce.default", {x, reduce_op, "g"},
                    F32({2, 2}));
    Value y = b.Op("y", "_c10d_functional::wait_tensor.default", {ar}, F32({2, 2}));
    Value ag = b.Op("ag", "_c10d_functional::all_gather_into_tensor.default",
                    {x, int64_t(world), "g"}, F32({2 * world, 2}));
    Value g = b.Op("g", "_c10d_functional::wait_tensor.default", {ag}, F32({2 * world, 2}));
    Value rs = b.Op("rs", "_c10d_functional::reduce_scatter_tensor.default",
                    {g, "sum", int64_t(world), "g"}, F32({2, 2}), 7);
    Value s = b.Op("s", "_c10d_functional::wait_tensor.default", {rs}, F32({2, 2}));
    b.g.outputs = {y, g, s};
    p.ranks.push_back(b.g);
  }
  for (int r = 0; r < world; ++r) p.groups["g"].push_back(r);
  return p;
}

TEST(ExecuteProgram, CollectivesOverTwoAndFourRanks) {
  for (int world : {2, 4}) {
    for (std::string op : {"sum", "max"}) {
      SCOPED_TRACE(std::to_string(world) + " ranks, " + op);
      ir::Program p = CollectiveProgram(world, op);
      std::vector<GraphInputs> inputs;
      std::vector<at::Tensor> xs;
      for (int r = 0; r < world; ++r) {
        xs.push_back(at::randn({2, 2}));
        inputs.push_back({{xs.back()}, {}});
      }
      std::vector<ExecutionResult> out = ExecuteProgram(p, inputs);
      ASSERT_EQ(out.size(), size_t(world));
      at::Tensor stacked = at::stack(xs);
      at::Tensor reduced = op == "sum" ? stacked.sum(0) : std::get<0>(stacked.max(0));
      at::Tensor gathered = at::cat(xs, 0);
      for (int r = 0; r < world; ++r) {
        EXPECT_TRUE(at::allclose(out[r].outputs[0], reduced));
        EXPECT_TRUE(at::equal(out[r].outputs[1], gathered));
        // Every rank gathered the same thing, so the scatter is world * its own chunk.
        EXPECT_TRUE(at::allclose(out[r].outputs[2], gathered.chunk(world, 0)[r] * world));
      }
    }
  }
}

// A broadcast within a group of ranks {2, 3} of four: src is the position in the group (the
// ProcessGroup's root rank), so src 1 is rank 3's value on both members.
TEST(ExecuteProgram, BroadcastSourceIsAPositionInTheGroup) {
  ir::Program p;
  for (int r = 0; r < 4; ++r) {
    Builder b;
    b.g.rank = r;
    b.g.file = "rank" + std::to_string(r) + ".py";
    Value x = b.Input("x", F32({2}));
    if (r >= 2) {
      Value bc =
          b.Op("bc", "_c10d_functional::broadcast.default", {x, int64_t(1), "pair"}, F32({2}));
      b.g.outputs = {b.Op("y", "_c10d_functional::wait_tensor.default", {bc}, F32({2}))};
    } else {
      b.g.outputs = {x};
    }
    p.ranks.push_back(b.g);
  }
  p.groups["pair"] = {2, 3};
  std::vector<GraphInputs> inputs;
  for (int r = 0; r < 4; ++r) inputs.push_back({{at::full({2}, double(r))}, {}});
  std::vector<ExecutionResult> out = ExecuteProgram(p, inputs);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(at::equal(out[2].outputs[0], at::full({2}, 3.0)));
  EXPECT_TRUE(at::equal(out[3].outputs[0], at::full({2}, 3.0)));
  // src 2 is no position in a group of two.
  for (int r = 2; r < 4; ++r) p.ranks[r].nodes[1].args[1] = int64_t(2);
  EXPECT_THROW(ExecuteProgram(p, inputs), InputError);
}

// all_to_all_single with uneven splits, as expert parallelism dispatches tokens: rank r sends
// sends[r][j] rows to rank j. Row k of what r sends j holds 100 r + 10 j + k (float64), so each
// output row says where it came from.
Value Ints(const std::vector<int64_t>& v);

ir::Program AllToAllProgram(const std::vector<std::vector<int64_t>>& sends) {
  int world = static_cast<int>(sends.size());
  ir::Program p;
  for (int r = 0; r < world; ++r) {
    std::vector<int64_t> out_splits;
    int64_t rows_in = 0, rows_out = 0;
    for (int j = 0; j < world; ++j) {
      out_splits.push_back(sends[j][r]);
      rows_in += sends[r][j];
      rows_out += sends[j][r];
    }
    Builder b;
    b.g.rank = r;
    b.g.file = "rank" + std::to_string(r) + ".py";
    ir::TensorType in_type{ir::DType::kFloat64, {rows_in, 2}};
    ir::TensorType out_type{ir::DType::kFloat64, {rows_out, 2}};
    Value x = b.Input("x", in_type);
    Value a2a = b.Op("a2a", "_c10d_functional::all_to_all_single.default",
                     {x, Ints(out_splits), Ints(sends[r]), "g"}, out_type, 5);
    b.g.outputs = {b.Op("y", "_c10d_functional::wait_tensor.default", {a2a}, out_type)};
    p.ranks.push_back(b.g);
    p.groups["g"].push_back(r);
  }
  return p;
}

Value Ints(const std::vector<int64_t>& v) { return Value::List(v.begin(), v.end()); }

at::Tensor Rows(const std::vector<double>& labels) {
  return at::tensor(labels, at::kDouble).unsqueeze(1).repeat({1, 2}).reshape({-1, 2});
}

std::vector<GraphInputs> AllToAllInputs(const std::vector<std::vector<int64_t>>& sends) {
  std::vector<GraphInputs> inputs;
  for (size_t r = 0; r < sends.size(); ++r) {
    std::vector<double> labels;
    for (size_t j = 0; j < sends.size(); ++j) {
      for (int64_t k = 0; k < sends[r][j]; ++k) labels.push_back(100.0 * r + 10.0 * j + k);
    }
    inputs.push_back({{Rows(labels)}, {}});
  }
  return inputs;
}

TEST(ExecuteProgram, AllToAllWithUnevenSplitsOverTwoAndFourRanks) {
  // World 2: rank 0 sends rank 1 nothing. World 4: rank 1 sends nothing at all (its input has
  // no rows) and rank 2 receives nothing from ranks 0 and 2.
  for (const std::vector<std::vector<int64_t>>& sends :
       std::vector<std::vector<std::vector<int64_t>>>{
           {{3, 0}, {1, 2}}, {{1, 0, 2, 0}, {0, 0, 0, 0}, {2, 1, 0, 3}, {1, 1, 1, 1}}}) {
    size_t world = sends.size();
    SCOPED_TRACE(std::to_string(world) + " ranks");
    std::vector<ExecutionResult> out =
        ExecuteProgram(AllToAllProgram(sends), AllToAllInputs(sends));
    ASSERT_EQ(out.size(), world);
    for (size_t i = 0; i < world; ++i) {
      std::vector<double> expected;  // from every rank j in rank order, what j sends i
      for (size_t j = 0; j < world; ++j) {
        for (int64_t k = 0; k < sends[j][i]; ++k) expected.push_back(100.0 * j + 10.0 * i + k);
      }
      EXPECT_TRUE(at::equal(out[i].outputs[0], Rows(expected))) << "rank " << i;
    }
  }
}

TEST(ExecuteProgram, AllToAllSplitsTheRanksDisagreeOnAreInputErrors) {
  std::vector<std::vector<int64_t>> sends = {{3, 0}, {1, 2}};
  ir::Program p = AllToAllProgram(sends);
  // Rank 1 expects 1 row from rank 0, which sends it none; its input then has rows to spare.
  p.ranks[1].nodes[1].args[1] = Ints({1, 1});
  p.ranks[1].nodes[1].outputs[0].type->shape = {ir::Dim(2), ir::Dim(2)};
  try {
    ExecuteProgram(p, AllToAllInputs(sends));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(std::string(e.what()).find("output_split_sizes expect 1"), std::string::npos)
        << e.what();
  }
}

TEST(ExecuteProgram, MismatchedCollectivesAreInputErrors) {
  ir::Program p = CollectiveProgram(2, "sum");
  // Rank 1 stops before its reduce_scatter: rank 0 waits forever.
  p.ranks[1].nodes.resize(4);
  p.ranks[1].outputs = {ir::TensorRef{2, 0}};
  p.ranks[1].Reindex();
  std::vector<GraphInputs> inputs = {{{at::ones({2, 2})}, {}}, {{at::ones({2, 2})}, {}}};
  try {
    ExecuteProgram(p, inputs);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "rank0.py");
    EXPECT_EQ(e.line(), 7);
  }
}

TEST(Execute, WrongInputTypeIsAnInputError) {
  Builder b;
  b.g.file = "s.py";
  Value x = b.Input("x", F32({2, 2}));
  b.g.outputs = {b.Op("n", "aten::neg.default", {x}, F32({2, 2}))};
  EXPECT_THROW(Execute(b.g, {{at::ones({3})}, {}}), InputError);
  EXPECT_THROW(Execute(b.g, {{at::ones({2, 2}, at::kLong)}, {}}), InputError);
  EXPECT_THROW(Execute(b.g, {{}, {}}), InputError);
  ExecutionResult ok = Execute(b.g, {{at::ones({2, 2})}, {}});
  EXPECT_TRUE(at::equal(ok.outputs[0], -at::ones({2, 2})));
}

TEST(Execute, KeepsRequestedValuesAndFreesTheRest) {
  Builder b;
  Value x = b.Input("x", F32({3}));
  Value e = b.Op("e", "aten::exp.default", {x}, F32({3}));
  Value n = b.Op("n", "aten::neg.default", {e}, F32({3}));
  b.g.outputs = {n};
  at::Tensor in = at::randn({3});
  ExecutionResult r = Execute(b.g, {{in}, {}}, {}, {e.as_tensor()});
  ASSERT_EQ(r.kept.count(e.as_tensor()), 1u);
  EXPECT_TRUE(at::allclose(r.kept.at(e.as_tensor()), at::exp(in)));
  EXPECT_TRUE(at::allclose(r.outputs[0], -at::exp(in)));
  EXPECT_EQ(r.random_mode, "dropout seeded with 0");
}

TEST(Execute, ObservesEveryValueOnceInGraphOrder) {
  Builder b;
  Value x = b.Input("x", F32({3}));
  Value e = b.Op("e", "aten::exp.default", {x}, F32({3}));
  Value n = b.Op("n", "aten::neg.default", {e}, F32({3}));
  b.g.outputs = {n};
  at::Tensor in = at::randn({3});
  std::vector<std::pair<ir::TensorRef, at::Tensor>> seen;
  ExecutionOptions options;
  options.observe = [&](int32_t rank, ir::TensorRef ref, const at::Tensor& value) {
    EXPECT_EQ(rank, 0);
    seen.emplace_back(ref, value);
  };
  Execute(b.g, {{in}, {}}, options);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, x.as_tensor());
  EXPECT_EQ(seen[1].first, e.as_tensor());
  EXPECT_TRUE(at::allclose(seen[1].second, at::exp(in)));  // e is freed after n, seen before
  EXPECT_EQ(seen[2].first, n.as_tensor());
}

// ---- the Qwen2 corpus graphs ----

std::string Corpus(const std::string& rel) { return std::string(GG_CORPUS_DIR) + "/" + rel; }

// Random inputs of a graph's annotated types; token ids and positions inside [0, bound).
std::vector<at::Tensor> QwenInputs(const ir::Graph& g, int64_t vocab, int64_t positions) {
  std::vector<at::Tensor> in;
  for (ir::NodeId id : g.inputs) {
    const ir::TensorType& t = g.node(id).type();
    std::vector<int64_t> dims;
    for (const ir::Dim& d : t.shape) dims.push_back(d.value());
    if (t.dtype == ir::DType::kInt64) {
      in.push_back(at::randint(g.node(id).name == "arg0_1" ? vocab : positions, dims, at::kLong));
    } else {
      in.push_back((at::randn(dims) * 0.05).to(ToAten(t.dtype)));
    }
  }
  return in;
}

bool FullSize() { return std::getenv("GG_RUNTIME_FULL") != nullptr; }

TEST(QwenCorpus, Tp2RanksAgreeAndMatchTheSequentialModel) {
  if (!FullSize()) {
    GTEST_SKIP() << "Qwen2 at 32768 tokens runs causal attention over 32768 tokens (O(n^2)) on "
                    "2 shared cores: set GG_RUNTIME_FULL=1 to run it";
  }
  std::string s_path = Corpus("qwen2/paral1_layer1/fw.g0.r0.py");
  std::string d_path = Corpus("qwen2/paral2_layer1");
  if (!std::filesystem::exists(s_path)) GTEST_SKIP() << "corpus not found: " << s_path;
  ir::Graph s = frontend::LoadGraph(s_path);
  ir::Program d = frontend::LoadProgram({d_path});
  ASSERT_EQ(d.world_size(), 2);
  at::manual_seed(5);
  std::vector<std::vector<at::Tensor>> rank_in;
  for (int r = 0; r < 2; ++r) rank_in.push_back(QwenInputs(d.rank(r), 151936, 32768));
  // Replicated data: token ids, positions, cos/sin cache, norm weights.
  for (int i : {0, 2, 5, 6, 8, 11}) rank_in[1][i] = rank_in[0][i];
  const auto& a = rank_in[0];
  const auto& b = rank_in[1];
  // S's inputs from the ranks' (README): embedding split on the vocabulary; QKV rows
  // [q0 q1 k0 k1 v0 v1] from each rank's [q; k; v]; o_proj and down_proj split on dim 1;
  // gate_up rows [gate0 gate1 up0 up1] from each rank's [gate; up].
  auto qkv = [](const at::Tensor& r0, const at::Tensor& r1) {
    std::vector<at::Tensor> p0 = r0.split_with_sizes({768, 128, 128}, 0);
    std::vector<at::Tensor> p1 = r1.split_with_sizes({768, 128, 128}, 0);
    return at::cat({p0[0], p1[0], p0[1], p1[1], p0[2], p1[2]}, 0);
  };
  std::vector<at::Tensor> s_in = {a[0], at::cat({a[1], b[1]}, 0), a[2], qkv(a[3], b[3]),
                                  qkv(a[4], b[4]), a[5], a[6], at::cat({a[7], b[7]}, 1), a[8]};
  std::vector<at::Tensor> g0 = a[9].chunk(2, 0), g1 = b[9].chunk(2, 0);
  s_in.push_back(at::cat({g0[0], g1[0], g0[1], g1[1]}, 0));
  s_in.push_back(at::cat({a[10], b[10]}, 1));
  s_in.push_back(a[11]);
  auto t0 = std::chrono::steady_clock::now();
  ExecutionResult s_out = Execute(s, {s_in, {}});
  auto t1 = std::chrono::steady_clock::now();
  std::vector<ExecutionResult> d_out = ExecuteProgram(d, {{rank_in[0], {}}, {rank_in[1], {}}});
  auto t2 = std::chrono::steady_clock::now();
  std::cout << "[ timing ] Qwen2 TP1 " << std::chrono::duration<double>(t1 - t0).count()
            << " s, TP2 (both ranks) " << std::chrono::duration<double>(t2 - t1).count()
            << " s\n";
  at::Tensor y0 = d_out[0].outputs[0], y1 = d_out[1].outputs[0], ys = s_out.outputs[0];
  EXPECT_TRUE(at::equal(y0, y1));
  double err = (y0.to(at::kFloat) - ys.to(at::kFloat)).abs().max().item<double>();
  double scale = ys.to(at::kFloat).abs().max().item<double>();
  std::cout << "[ compare ] max |D - S| = " << err << ", max |S| = " << scale << "\n";
  EXPECT_LT(err, 0.05 * scale);
}


// Factories create their values on the execution's device, inputs are moved there: on the meta
// device (shapes without data, no GPU needed) every value of the run is a meta tensor, and on the
// default CPU device every value is a CPU tensor with the expected contents.
ir::Graph FactoryGraph() {
  Builder b;
  b.g.file = "factories.py";
  Value x = b.Input("x", F32({2, 3}));
  Value z = b.Op("z", "aten::zeros.default", {Value::List{int64_t(2), int64_t(3)}}, F32({2, 3}));
  Value o = b.Op("o", "aten::ones.default", {Value::List{int64_t(2), int64_t(3)}}, F32({2, 3}));
  Value f = b.Op("f", "aten::full.default", {Value::List{int64_t(2), int64_t(3)}, 1.5},
                 F32({2, 3}));
  Value a = b.Op("a", "aten::arange.default", {int64_t(3)},
                 ir::TensorType{ir::DType::kInt64, {ir::Dim(int64_t(3))}});
  Value s1 = b.Op("s1", "aten::add.Tensor", {x, z}, F32({2, 3}));
  Value s2 = b.Op("s2", "aten::add.Tensor", {s1, o}, F32({2, 3}));
  Value s3 = b.Op("s3", "aten::add.Tensor", {s2, f}, F32({2, 3}));
  Value s4 = b.Op("s4", "aten::add.Tensor", {s3, a}, F32({2, 3}));
  b.g.outputs = {s4};
  return b.g;
}

TEST(ExecutorDevice, FactoriesAndInputsFollowTheExecutionDevice) {
  ir::Graph g = FactoryGraph();
  at::Tensor x = at::arange(6, at::kFloat).reshape({2, 3});
  for (at::Device device : {at::Device(at::kCPU), at::Device(at::kMeta)}) {
    ExecutionOptions options;
    options.device = device;
    std::vector<std::string> elsewhere;
    std::set<std::string> seen;
    options.observe = [&](int32_t, ir::TensorRef ref, const at::Tensor& value) {
      seen.insert(g.ValueName(ref));
      if (value.device() != device) elsewhere.push_back(g.ValueName(ref));
    };
    ExecutionResult result = Execute(g, {{x}, {}}, options);
    EXPECT_EQ(seen, (std::set<std::string>{"x", "z", "o", "f", "a", "s1", "s2", "s3", "s4"}))
        << device;
    EXPECT_TRUE(elsewhere.empty()) << device << ": " << elsewhere.size() << " values elsewhere";
    ASSERT_EQ(result.outputs.size(), 1u);
    EXPECT_EQ(result.outputs[0].device(), device);
    if (device.is_cpu()) {
      at::Tensor expected = x + 2.5 + at::arange(3, at::kFloat);
      EXPECT_TRUE(at::allclose(result.outputs[0], expected)) << result.outputs[0];
    }
  }
}

TEST(ExecutorDevice, KernelCallFactoryOptionsNameTheDevice) {
  ir::Graph g = FactoryGraph();
  const ir::Node& zeros = g.nodes[1];
  ir::BoundArgs args(ir::OpRegistry::Default().Find(zeros.op)->schema, zeros);
  std::map<std::string, at::Tensor> none;
  KernelCall cpu(zeros, args, [](ir::TensorRef) { return at::Tensor(); }, none, {}, at::kCPU);
  KernelCall meta(zeros, args, [](ir::TensorRef) { return at::Tensor(); }, none, {}, at::kMeta);
  const Kernel* kernel = FindKernel(zeros.op);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ((*kernel)(cpu).at(0).device(), at::Device(at::kCPU));
  EXPECT_EQ((*kernel)(meta).at(0).device(), at::Device(at::kMeta));
  EXPECT_EQ(meta.FactoryOptions().device(), at::Device(at::kMeta));
}

}  // namespace
}  // namespace gg::runtime
