// Every registry operator runs through the executor on a small case and is compared with a direct
// call of the same ATen operator through the dispatcher (boxed, by schema), or, for custom ops,
// with a reference written from the op's definition.
#include "runtime/op_kernels.h"

// GCC 12 reports a false "maybe uninitialized" inside std::variant when ir::Value lists are
// built in the case table below.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "ir/op_registry.h"
#include "runtime/executor.h"

namespace gg::runtime {
namespace {

using ir::Value;
using Refs = std::vector<at::Tensor>;

struct OpCase {
  std::string op;
  Refs inputs;
  std::vector<Value> args;
  std::vector<ir::NamedArg> kwargs;
  bool functionalized = false;
  bool random = false;  // random or unspecified contents (empty*): compare types only
  std::function<Refs(const Refs&)> reference;  // custom ops; empty: dispatcher call
};

Value In(int i) { return ir::TensorRef{i, 0}; }
Value Ints(std::vector<int64_t> v) {
  Value::List l;
  for (int64_t x : v) l.push_back(Value(x));
  return l;
}
at::Tensor R(std::vector<int64_t> s) { return at::randn(s); }
at::Tensor P(std::vector<int64_t> s) { return at::rand(s) + 0.5; }
at::Tensor L(std::vector<int64_t> v) { return at::tensor(v, at::kLong); }
at::Tensor B(std::vector<int64_t> s) { return at::rand(s) > 0.5; }

// The dispatcher's boxed call with the case's arguments (defaults from the ATen schema).
Refs DispatcherCall(const OpCase& c) {
  std::optional<ir::OpName> name = ir::OpName::Parse(c.op);
  auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(
      (name->ns + "::" + name->name).c_str(), name->overload == "default" ? "" : name->overload.c_str());
  const c10::FunctionSchema& schema = handle.schema();
  auto convert = [&](const Value& v, const c10::Argument& arg) -> c10::IValue {
    if (v.is_tensor()) return c.inputs.at(v.as_tensor().node);
    if (v.is_none() || v.is_device() || v.is_enum()) return c10::IValue();
    if (v.is_dtype()) return c10::IValue(ToAten(v.as_dtype()));
    if (v.is_string()) return c10::IValue(v.as_string());
    if (v.is_bool()) return c10::IValue(v.as_bool());
    if (v.is_double()) return c10::IValue(v.as_double());
    if (v.is_number() && arg.type()->kind() == c10::TypeKind::TensorType) {
      at::Tensor t = c10::scalar_to_tensor(v.is_double() ? at::Scalar(v.as_double())
                                           : v.is_bool() ? at::Scalar(v.as_bool())
                                                         : at::Scalar(v.as_int()));
      t.unsafeGetTensorImpl()->set_wrapped_number(true);
      return t;
    }
    if (v.is_int()) {
      if (arg.type()->kind() == c10::TypeKind::FloatType) return c10::IValue(v.as_double());
      return c10::IValue(v.as_int());
    }
    std::string type = arg.type()->str();
    if (type.find("Tensor?[]") != std::string::npos) {
      c10::List<std::optional<at::Tensor>> l;
      for (const Value& x : v.as_list()) {
        l.push_back(x.is_none() ? std::optional<at::Tensor>() : c.inputs.at(x.as_tensor().node));
      }
      return l;
    }
    if (type.find("Tensor[]") != std::string::npos) {
      c10::List<at::Tensor> l;
      for (const Value& x : v.as_list()) l.push_back(c.inputs.at(x.as_tensor().node));
      return l;
    }
    if (type.find("bool[") != std::string::npos) {
      c10::List<bool> l;
      for (const Value& x : v.as_list()) l.push_back(x.as_bool());
      return l;
    }
    return c10::IValue(v.as_int_list());
  };
  std::vector<c10::IValue> stack;
  size_t positional = 0;
  for (const c10::Argument& arg : schema.arguments()) {
    const Value* given = nullptr;
    for (const ir::NamedArg& kw : c.kwargs) {
      if (kw.name == arg.name()) given = &kw.value;
    }
    if (given == nullptr && !arg.kwarg_only() && positional < c.args.size()) {
      given = &c.args[positional++];
    }
    if (given != nullptr) {
      stack.push_back(convert(*given, arg));
    } else {
      EXPECT_TRUE(arg.default_value().has_value()) << c.op << ": " << arg.name();
      stack.push_back(arg.default_value().value_or(c10::IValue()));
    }
  }
  handle.callBoxed(stack);
  Refs out;
  for (const c10::IValue& v : stack) {
    if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) out.push_back(t);
    } else {
      out.push_back(at::Tensor());
    }
  }
  return out;
}

// Runs the case through the executor as a one-node graph; returns the node's outputs.
Refs RunCase(const OpCase& c, const Refs& expected, const ExecutionOptions& options) {
  ir::Graph g;
  g.name = c.op;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    ir::Node in;
    in.kind = ir::NodeKind::kInput;
    in.name = "in" + std::to_string(i);
    ir::TensorType type{FromAten(c.inputs[i].scalar_type()), {}};
    for (int64_t d : c.inputs[i].sizes()) type.shape.push_back(d);
    in.outputs.push_back({in.name, type});
    g.AddNode(in);
  }
  ir::Node node;
  node.name = "op";
  node.op = *ir::OpName::Parse(c.op);
  node.args = c.args;
  node.kwargs = c.kwargs;
  node.functionalized = c.functionalized;
  for (size_t o = 0; o < expected.size(); ++o) {
    std::optional<ir::TensorType> type;
    if (expected[o].defined()) {
      type = ir::TensorType{FromAten(expected[o].scalar_type()), {}};
      for (int64_t d : expected[o].sizes()) type->shape.push_back(d);
    }
    node.outputs.push_back({"op_" + std::to_string(o), type});
  }
  ir::NodeId id = g.AddNode(node);
  for (size_t o = 0; o < expected.size(); ++o) {
    g.outputs.push_back(expected[o].defined() ? Value(ir::TensorRef{id, int32_t(o)}) : Value());
  }
  GraphInputs inputs{c.inputs, {}};
  return Execute(g, inputs, options).outputs;
}

std::vector<OpCase> Cases();

// A registry operator runs by its kernel, or (a pure ATen operator) by the ATen dispatcher under
// its schema name (CallOperator): the dispatcher must know that name, or the entry needs a kernel.
TEST(OpKernels, EveryRegistryOperatorHasAKernelOrTheDispatcherRunsIt) {
  std::vector<std::string> missing;
  for (const ir::OpName& name : ir::OpRegistry::Default().Names()) {
    const ir::OpInfo* info = ir::OpRegistry::Default().Find(name);
    ASSERT_NE(info, nullptr);
    if (info->traits.collective != ir::CollectiveKind::kNone) continue;  // the executor's
    if (FindKernel(name) != nullptr) continue;
    bool by_name = !info->traits.custom && !info->traits.random &&
                   c10::Dispatcher::singleton()
                       .findSchema({name.ns + "::" + name.name, name.overload == "default"
                                                                     ? ""
                                                                     : name.overload})
                       .has_value();
    if (!by_name) missing.push_back(name.ToString());
  }
  EXPECT_TRUE(missing.empty()) << "no kernel for: " << ::testing::PrintToString(missing);
}

TEST(OpKernels, EveryRegistryOperatorHasACase) {
  std::set<std::string> covered;
  for (const OpCase& c : Cases()) {
    ir::OpName n = *ir::OpName::Parse(c.op);
    if (n.overload == "default") n.overload.clear();
    covered.insert(n.ToString());
    n.overload = "default";
    covered.insert(n.ToString());
  }
  std::vector<std::string> missing;
  for (const ir::OpName& name : ir::OpRegistry::Default().Names()) {
    const ir::OpInfo* info = ir::OpRegistry::Default().Find(name);
    if (info->traits.collective != ir::CollectiveKind::kNone) continue;  // executor_test
    if (covered.count(name.ToString()) == 0) missing.push_back(name.ToString());
  }
  EXPECT_TRUE(missing.empty()) << "no test case for: " << ::testing::PrintToString(missing);
}

TEST(OpKernels, EachCaseMatchesADirectAtenCall) {
  at::manual_seed(7);
  ExecutionOptions options;
  options.seed = 11;
  for (const OpCase& c : Cases()) {
    SCOPED_TRACE(c.op);
    Refs expected;
    try {
      expected = c.reference ? c.reference(c.inputs) : DispatcherCall(c);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "reference failed: " << std::string(e.what()).substr(0, 300);
      continue;
    }
    Refs got;
    EXPECT_NO_THROW(got = RunCase(c, expected, options));
    if (got.size() != expected.size()) {
      ADD_FAILURE() << got.size() << " outputs, expected " << expected.size();
      continue;
    }
    for (size_t o = 0; o < got.size(); ++o) {
      if (!expected[o].defined()) continue;
      if (!got[o].defined()) {
        ADD_FAILURE() << "output " << o << " undefined";
        continue;
      }
      EXPECT_EQ(got[o].scalar_type(), expected[o].scalar_type()) << "output " << o;
      if (!got[o].sizes().equals(expected[o].sizes())) {
        ADD_FAILURE() << "output " << o << " shape";
        continue;
      }
      if (c.random) continue;
      if (at::isFloatingType(got[o].scalar_type())) {
        EXPECT_TRUE(at::allclose(got[o].to(at::kDouble), expected[o].to(at::kDouble), 2e-2, 2e-2,
                                 /*equal_nan=*/true))
            << "output " << o << "\n" << got[o] << "\n" << expected[o];
      } else {
        EXPECT_TRUE(at::equal(got[o], expected[o])) << "output " << o;
      }
    }
    if (c.random) {  // the same seed gives the same draw
      Refs again = RunCase(c, expected, options);
      EXPECT_TRUE(at::equal(again[0], got[0]));
    }
  }
}

TEST(OpKernels, DropoutModes) {
  at::Tensor x = at::rand({64, 64}) + 1.0;
  OpCase c{"aten::native_dropout.default", {x}, {In(0), 0.25, true}};
  Refs types = {x, x > 0};
  ExecutionOptions off;
  off.dropout_off = true;
  Refs identity = RunCase(c, types, off);
  EXPECT_TRUE(at::equal(identity[0], x));
  EXPECT_TRUE(identity[1].all().item<bool>());
  ExecutionOptions seeded;
  seeded.seed = 3;
  Refs a = RunCase(c, types, seeded);
  Refs b = RunCase(c, types, seeded);
  EXPECT_TRUE(at::equal(a[1], b[1]));
  double kept = a[1].to(at::kFloat).mean().item<double>();
  EXPECT_NEAR(kept, 0.75, 0.05);
  EXPECT_TRUE(at::allclose(a[0], x * a[1] / 0.75));
  seeded.seed = 4;
  EXPECT_FALSE(at::equal(RunCase(c, types, seeded)[1], a[1]));
}

// clone(memory_format=torch.contiguous_format) (what autograd's .contiguous() records) returns a
// contiguous copy of a transposed input; the default preserves the input's layout, as ATen does.
TEST(OpKernels, CloneHonorsMemoryFormat) {
  at::Tensor x = at::rand({2, 3}).t();
  OpCase contiguous{"aten::clone.default",
                    {x},
                    {In(0)},
                    {ir::NamedArg{"memory_format", Value(ir::EnumValue{"torch.contiguous_format"})}}};
  Refs out = RunCase(contiguous, {x}, ExecutionOptions{});
  EXPECT_TRUE(out[0].is_contiguous());
  EXPECT_TRUE(at::equal(out[0], x));
  OpCase preserve{"aten::clone.default", {x}, {In(0)}};
  EXPECT_EQ(RunCase(preserve, {x}, ExecutionOptions{})[0].strides(), x.strides());
}

// ---- references for the custom operators, written from their definitions ----

Refs RmsNormRef(const at::Tensor& x, const at::Tensor& w, double eps) {
  at::Tensor xf = x.to(at::kFloat);
  at::Tensor y = xf / at::sqrt((xf * xf).mean({-1}, true) + eps);
  return {y.to(x.scalar_type()) * w};
}

at::Tensor RotateNeox(const at::Tensor& x, int64_t head_size, const at::Tensor& cache,
                      const at::Tensor& pos) {
  int64_t t = x.size(0);
  at::Tensor h = x.reshape({t, -1, head_size}).to(at::kFloat);
  at::Tensor cs = cache.index({pos}).to(at::kFloat);
  int64_t half = cs.size(1) / 2;
  at::Tensor cos = cs.slice(1, 0, half).unsqueeze(1), sin = cs.slice(1, half).unsqueeze(1);
  at::Tensor x1 = h.slice(2, 0, half), x2 = h.slice(2, half, 2 * half);
  at::Tensor out = h.clone();
  out.slice(2, 0, half).copy_(x1 * cos - x2 * sin);
  out.slice(2, half, 2 * half).copy_(x2 * cos + x1 * sin);
  return out.reshape(x.sizes()).to(x.scalar_type());
}

at::Tensor CausalGqaRef(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  int64_t t = q.size(0), hq = q.size(1), hk = k.size(1), d = q.size(2);
  at::Tensor out = at::empty_like(q, q.options().dtype(at::kFloat));
  at::Tensor mask = at::ones({t, t}, at::kBool).tril();
  for (int64_t h = 0; h < hq; ++h) {
    at::Tensor qh = q.select(1, h).to(at::kFloat);
    at::Tensor kh = k.select(1, h / (hq / hk)).to(at::kFloat);
    at::Tensor vh = v.select(1, h / (hq / hk)).to(at::kFloat);
    at::Tensor s = at::mm(qh, kh.t()) / std::sqrt(double(d));
    s = s.masked_fill(mask.logical_not(), -INFINITY);
    out.select(1, h).copy_(at::mm(at::softmax(s, -1), vh));
  }
  return out.to(q.scalar_type());
}

std::vector<OpCase> Cases() {
  at::manual_seed(1);
  auto kw = [](std::string n, Value v) { return ir::NamedArg{std::move(n), std::move(v)}; };
  Value f32 = ir::DType::kFloat32, i64 = ir::DType::kInt64;
  std::vector<OpCase> c = {
      {"aten::add.Tensor", {R({2, 3}), R({3})}, {In(0), In(1)}, {kw("alpha", 2)}},
      {"aten::add.Tensor", {L({1, 2})}, {In(0), 3}},
      {"aten::add.Scalar", {R({2, 3})}, {In(0), 1.5}},
      {"aten::sub.Tensor", {R({2, 3}), R({2, 3})}, {In(0), In(1)}},
      {"aten::sub.Scalar", {R({2, 3})}, {In(0), 2}},
      {"aten::rsub.Scalar", {R({2, 3})}, {In(0), 1.0}},
      {"aten::mul.Tensor", {L({3, 4}), B({2})}, {In(1), In(0)}},
      {"aten::mul.Tensor", {L({3, 4})}, {In(0), 75968}},
      {"aten::mul.Scalar", {R({2, 3})}, {In(0), 0.5}},
      {"aten::div.Tensor", {R({2, 3}), P({2, 3})}, {In(0), In(1)}},
      {"aten::div.Scalar", {R({2, 3})}, {In(0), 4}},
      {"aten::div.Tensor_mode",
       {R({2, 3}) * 5, P({2, 3})},
       {In(0), In(1)},
       {kw("rounding_mode", "floor")}},
      {"aten::pow.Tensor_Scalar", {R({2, 3})}, {In(0), 2}},
      {"aten::pow.Tensor_Tensor", {P({2, 3}), R({2, 3})}, {In(0), In(1)}},
      {"aten::maximum", {R({2, 3}), R({2, 3})}, {In(0), In(1)}},
      {"aten::minimum", {R({2, 3}), R({2, 3})}, {In(0), In(1)}},
      {"aten::where.self", {B({2, 3}), R({2, 3}), R({2, 3})}, {In(0), In(1), In(2)}},
      {"aten::clamp", {R({2, 3})}, {In(0), -0.5, 0.5}},
      {"aten::eq.Scalar", {L({1, 2, 3})}, {In(0), 2}},
      {"aten::ne.Scalar", {L({1, 2, 3})}, {In(0), 2}},
      {"aten::lt.Scalar", {L({1, 2, 3})}, {In(0), 2}},
      {"aten::le.Scalar", {L({1, 2, 3})}, {In(0), 2}},
      {"aten::gt.Scalar", {L({1, 2, 3})}, {In(0), 2}},
      {"aten::ge.Scalar", {L({1, 2, 3})}, {In(0), 2}},
      {"aten::eq.Tensor", {L({1, 2, 3}), L({1, 0, 3})}, {In(0), In(1)}},
      {"aten::ne.Tensor", {L({1, 2, 3}), L({1, 0, 3})}, {In(0), In(1)}},
      {"aten::lt.Tensor", {L({1, 2, 3}), L({1, 0, 4})}, {In(0), In(1)}},
      {"aten::gt.Tensor", {L({1, 2, 3}), L({1, 0, 4})}, {In(0), In(1)}},
      {"aten::ge.Tensor", {L({1, 2, 3}), L({1, 0, 4})}, {In(0), In(1)}},
      {"aten::bitwise_and.Tensor", {B({5}), B({5})}, {In(0), In(1)}},
      {"aten::bitwise_or.Tensor", {B({5}), B({5})}, {In(0), In(1)}},
      {"aten::bitwise_not", {B({5})}, {In(0)}},
      {"aten::logical_not", {B({5})}, {In(0)}},
      {"aten::logical_and", {B({2, 3}), R({3})}, {In(0), In(1)}},
      {"aten::logical_or", {B({4, 1}), L({0, 2, 0})}, {In(0), In(1)}},
      {"aten::tril", {R({4, 4})}, {In(0)}},
      {"aten::triu", {R({3, 5})}, {In(0), 1}},
      {"aten::view_as_complex", {R({3, 4, 2})}, {In(0)}},
      {"aten::view_as_real", {at::view_as_complex(R({3, 4, 2}))}, {In(0)}},
      {"aten::_conj", {at::view_as_complex(R({3, 4, 2}))}, {In(0)}},
      {"aten::conj_physical", {at::view_as_complex(R({2, 2}))}, {In(0)}},
      {"aten::resolve_conj", {at::_conj(at::view_as_complex(R({3, 2})))}, {In(0)}},
      {"aten::masked_fill.Scalar", {R({2, 3}), B({2, 1})}, {In(0), In(1), 0}},
      {"aten::masked_fill.Tensor", {R({2, 3}), B({2, 3}), R({})}, {In(0), In(1), In(2)}},
      {"aten::neg", {R({4})}, {In(0)}},
      {"aten::abs", {R({4})}, {In(0)}},
      {"aten::exp", {R({4})}, {In(0)}},
      {"aten::log", {P({4})}, {In(0)}},
      {"aten::sqrt", {P({4})}, {In(0)}},
      {"aten::rsqrt", {P({4})}, {In(0)}},
      {"aten::reciprocal", {P({4})}, {In(0)}},
      {"aten::sin", {R({4})}, {In(0)}},
      {"aten::cos", {R({4})}, {In(0)}},
      {"aten::erf", {R({4})}, {In(0)}},
      {"aten::tanh", {R({4})}, {In(0)}},
      {"aten::sigmoid", {R({4})}, {In(0)}},
      {"aten::log_sigmoid", {R({4})}, {In(0)}},
      {"aten::log_sigmoid_forward", {R({2, 3})}, {In(0)}},
      {"aten::log1p", {P({4})}, {In(0)}},
      {"aten::expm1", {R({4})}, {In(0)}},
      {"aten::sign", {R({4})}, {In(0)}},
      {"aten::floor", {R({4})}, {In(0)}},
      {"aten::ceil", {R({4})}, {In(0)}},
      {"aten::round", {R({4})}, {In(0)}},
      {"aten::relu", {R({4})}, {In(0)}},
      {"aten::silu", {R({4})}, {In(0)}},
      {"aten::gelu", {R({4})}, {In(0)}},
      {"aten::gelu", {R({4})}, {In(0)}, {kw("approximate", "tanh")}},
      {"aten::gelu_backward", {R({4}), R({4})}, {In(0), In(1)}},
      {"aten::silu_backward", {R({4}), R({4})}, {In(0), In(1)}},
      {"aten::threshold_backward", {R({4}), R({4})}, {In(0), In(1), 0}},
      {"aten::sigmoid_backward", {R({4}), R({4})}, {In(0), In(1)}},
      {"aten::tanh_backward", {R({4}), R({4})}, {In(0), In(1)}},
      {"aten::native_dropout", {R({8, 8})}, {In(0), 0.1, true}, {}, false, true},
      {"aten::native_dropout_backward", {R({4}), B({4})}, {In(0), In(1), 1.25}},
      {"aten::clone", {R({2, 3}).t()}, {In(0)}},
      {"aten::lift_fresh_copy", {L({0})}, {In(0)}},
      {"aten::detach", {R({3})}, {In(0)}},
      {"aten::alias", {R({3})}, {In(0)}},
      {"aten::copy", {R({2, 3}), L({1, 2, 3})}, {In(0), In(1)}},
      {"aten::fill.Scalar", {R({2, 3})}, {In(0), 7}},
      {"aten::_to_copy", {L({8, 1})}, {In(0)}, {kw("dtype", ir::DType::kBool)}},
      {"aten::_to_copy", {R({2})}, {In(0)}, {kw("dtype", ir::DType::kBFloat16)}},
      {"aten::empty.memory_format", {}, {Ints({2, 3})}, {kw("dtype", f32)}, false, true},
      {"aten::empty_strided", {}, {Ints({2, 3}), Ints({3, 1})}, {kw("dtype", f32)}, false, true},
      {"aten::empty_like", {R({2, 3})}, {In(0)}, {}, false, true},
      {"aten::new_empty", {R({2, 3})}, {In(0), Ints({4})}, {}, false, true},
      {"aten::new_empty_strided",
       {R({2, 3})},
       {In(0), Ints({3, 4}), Ints({4, 1})},
       {},
       false,
       true},
      {"aten::zeros", {}, {Ints({})}, {kw("dtype", ir::DType::kInt32)}},
      {"aten::ones", {}, {Ints({2})}},
      {"aten::full", {}, {Ints({2}), 3.5}},
      {"aten::zeros_like", {R({2, 3})}, {In(0)}},
      {"aten::ones_like", {R({2, 3})}, {In(0)}, {kw("dtype", i64)}},
      {"aten::full_like", {R({2, 3})}, {In(0), 2}},
      {"aten::new_zeros", {R({2, 3})}, {In(0), Ints({3})}},
      {"aten::new_ones", {R({2, 3})}, {In(0), Ints({3})}},
      {"aten::scalar_tensor", {}, {2.5}},
      {"aten::arange", {}, {5}},
      {"aten::arange.start", {}, {2, 7}},
      {"aten::arange.start_step", {}, {0, 10, 3}},
      {"aten::rand_like", {R({3, 3})}, {In(0)}, {}, false, true},
      {"aten::randn_like", {R({3, 3})}, {In(0)}, {}, false, true},
      {"aten::rand", {}, {Ints({3, 3})}, {}, false, true},
      {"aten::bernoulli.p", {R({3, 3})}, {In(0), 0.3}, {}, false, true},
      {"aten::index.Tensor", {R({5, 4}), L({0, 3, 3})}, {In(0), Value::List{In(1)}}},
      {"aten::index.Tensor", {R({5, 4}), L({0, 3}), L({1, 2})}, {In(0), Value::List{In(1), In(2)}}},
      {"aten::index_put",
       {L({1, 2, 3}), B({3}), L({0}).squeeze()},
       {In(0), Value::List{In(1)}, In(2)}},
      {"aten::embedding", {R({6, 4}), L({0, 5, 2})}, {In(0), In(1)}},
      {"aten::embedding_dense_backward", {R({3, 4}), L({0, 5, 0})}, {In(0), In(1), 6, -1, false}},
      {"aten::gather", {R({3, 4}), L({0, 2, 1}).reshape({3, 1})}, {In(0), 1, In(1)}},
      {"aten::scatter.src",
       {R({3, 4}), L({0, 2, 1}).reshape({3, 1}), R({3, 1})},
       {In(0), 1, In(1), In(2)}},
      {"aten::scatter.value", {R({3, 4}), L({0, 2, 1}).reshape({3, 1})}, {In(0), 1, In(1), 9.0}},
      {"aten::scatter_add",
       {R({3, 4}), L({0, 2, 1}).reshape({3, 1}), R({3, 1})},
       {In(0), 1, In(1), In(2)}},
      {"aten::index_select", {R({3, 4}), L({2, 0})}, {In(0), 1, In(1)}},
      {"aten::index_copy", {R({3, 4}), L({2, 0, 1}), R({3, 4})}, {In(0), 0, In(1), In(2)}},
      {"aten::mm", {R({2, 3}), R({3, 4})}, {In(0), In(1)}},
      {"aten::addmm", {R({4}), R({2, 3}), R({3, 4})}, {In(0), In(1), In(2)}},
      {"aten::bmm", {R({2, 2, 3}), R({2, 3, 4})}, {In(0), In(1)}},
      // ATen's CPU grouped mm (f32, 16-byte aligned rows): offsets with an empty group, rows up
      // to offs[-1] (past it ATen leaves them unspecified, the kernel writes zeros)
      {"aten::_grouped_mm",
       {R({8, 4}), R({3, 4, 4}), at::tensor({3, 3, 8}, at::kInt)},
       {In(0), In(1), In(2)}},
      {"aten::_grouped_mm",
       {R({4, 8}), R({8, 4}), at::tensor({3, 3, 8}, at::kInt)},
       {In(0), In(1), In(2)}},
      {"aten::_grouped_mm",
       {R({3, 4, 8}), R({8, 8}), at::tensor({4, 4, 8}, at::kInt)},
       {In(0), In(1), In(2)}},
      {"aten::_grouped_mm", {R({2, 4, 4}), R({2, 4, 4})}, {In(0), In(1)}},
      {"aten::baddbmm",
       {R({2, 2, 4}), R({2, 2, 3}), R({2, 3, 4})},
       {In(0), In(1), In(2)},
       {kw("beta", 0.0), kw("alpha", 0.25)}},
      {"aten::matmul", {R({2, 2, 3}), R({3, 4})}, {In(0), In(1)}},
      {"aten::linear", {R({2, 3}), R({4, 3}), R({4})}, {In(0), In(1), In(2)}},
      {"aten::sum", {R({2, 3})}, {In(0)}},
      {"aten::sum.dim_IntList", {R({2, 3})}, {In(0), Ints({-1})}},
      {"aten::mean", {R({2, 3})}, {In(0)}},
      {"aten::mean.dim", {R({2, 3})}, {In(0), Ints({0}), true}},
      {"aten::amax", {R({2, 3})}, {In(0), Ints({1})}},
      {"aten::amin", {R({2, 3})}, {In(0), Ints({1})}},
      {"aten::max", {R({2, 3})}, {In(0)}},
      {"aten::max.dim", {R({2, 3})}, {In(0), -1}},
      {"aten::min.dim", {R({2, 3})}, {In(0), 0, true}},
      {"aten::argmax", {R({2, 3})}, {In(0), 1}},
      {"aten::all.dim", {B({2, 3})}, {In(0), 1}},
      {"aten::any.dim", {R({2, 3})}, {In(0), 0, true}},
      {"aten::logsumexp", {R({2, 3})}, {In(0), Ints({1})}},
      {"aten::var.correction", {R({2, 3})}, {In(0), Ints({1})}, {kw("correction", 0)}},
      {"aten::var_mean.correction", {R({2, 3})}, {In(0), Ints({1})}},
      {"aten::linalg_vector_norm", {R({2, 3})}, {In(0), 2, Ints({1})}},
      {"aten::cumsum", {R({2, 3})}, {In(0), 1}},
      {"aten::topk", {R({2, 5})}, {In(0), 2}},
      {"aten::sort", {R({2, 5})}, {In(0)}, {kw("descending", true)}},
      {"aten::sort.stable", {R({2, 5})}, {In(0)}, {kw("stable", true)}},
      {"aten::floor_divide", {L({7, -3, 5})}, {In(0), 2}},
      {"aten::remainder.Scalar", {L({7, -3, 5})}, {In(0), 4}},
      {"aten::remainder.Tensor", {R({2, 3}), R({3}).abs() + 0.5}, {In(0), In(1)}},
      {"aten::_softmax", {R({2, 5})}, {In(0), -1, false}},
      {"aten::_log_softmax", {R({2, 5})}, {In(0), -1, false}},
      {"aten::_safe_softmax", {R({2, 5}).masked_fill(B({2, 1}), -INFINITY)}, {In(0), -1}},
      {"aten::_softmax_backward_data",
       {R({2, 5}), at::softmax(R({2, 5}), -1)},
       {In(0), In(1), -1, f32}},
      {"aten::_log_softmax_backward_data",
       {R({2, 5}), at::log_softmax(R({2, 5}), -1)},
       {In(0), In(1), -1, f32}},
      {"aten::native_layer_norm",
       {R({2, 3, 4}), R({4}), R({4})},
       {In(0), Ints({4}), In(1), In(2), 1e-5}},
      {"aten::native_layer_norm_backward",
       {R({2, 4}), R({2, 4}), R({2, 1}), P({2, 1}), R({4}), R({4})},
       {In(0), In(1), Ints({4}), In(2), In(3), In(4), In(5), Value::List{true, true, true}}},
      {"aten::nll_loss_forward",
       {at::log_softmax(R({3, 5}), 1), L({1, 0, 4})},
       {In(0), In(1), Value(), 1, -100}},
      {"aten::nll_loss_backward",
       {R({}), at::log_softmax(R({3, 5}), 1), L({1, 0, 4}), P({})},
       {In(0), In(1), In(2), Value(), 1, -100, In(3)}},
      {"aten::view", {R({2, 6})}, {In(0), Ints({3, -1})}},
      {"aten::reshape", {R({2, 6})}, {In(0), Ints({4, 3})}},
      {"aten::_unsafe_view", {R({2, 6})}, {In(0), Ints({12})}},
      {"aten::expand", {R({1, 3})}, {In(0), Ints({4, 3})}},
      {"aten::permute", {R({2, 3, 4})}, {In(0), Ints({2, 0, 1})}},
      {"aten::transpose.int", {R({2, 3, 4})}, {In(0), 0, 2}},
      {"aten::t", {R({2, 3})}, {In(0)}},
      {"aten::unsqueeze", {R({2, 3})}, {In(0), -1}},
      {"aten::squeeze", {R({2, 1, 3})}, {In(0)}},
      {"aten::squeeze.dim", {R({2, 1, 3})}, {In(0), 1}},
      {"aten::squeeze.dims", {R({1, 2, 1})}, {In(0), Ints({0, 2})}},
      {"aten::select.int", {R({2, 3})}, {In(0), 1, 2}},
      {"aten::slice.Tensor", {R({4, 3})}, {In(0), 0, 1, int64_t(9223372036854775807)}},
      {"aten::slice_scatter", {R({4, 3}), R({4, 1})}, {In(0), In(1), 1, 1, 2}},
      {"aten::select_scatter", {R({4, 3}), R({4})}, {In(0), In(1), 1, 0}},
      {"aten::cat", {R({2, 3}), R({1, 3})}, {Value::List{In(0), In(1)}}},
      {"aten::stack", {R({2, 3}), R({2, 3})}, {Value::List{In(0), In(1)}, 1}},
      {"aten::split.Tensor", {R({5, 3})}, {In(0), 2}},
      {"aten::split_with_sizes", {R({5, 6})}, {In(0), Ints({4, 1, 1}), -1}},
  };
  // CUDA-only attention ops: the output compared with ATen's scaled_dot_product_attention.
  auto attention = [](const Refs& in) -> Refs {
    return {at::scaled_dot_product_attention(in[0], in[1], in[2], std::nullopt, 0.0, true),
            at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor()};
  };
  c.push_back({"aten::_scaled_dot_product_flash_attention", {R({1, 2, 5, 4}), R({1, 2, 5, 4}),
               R({1, 2, 5, 4})}, {In(0), In(1), In(2), 0.0, true}, {}, false, false, attention});
  c.push_back({"aten::_scaled_dot_product_efficient_attention",
               {R({1, 2, 5, 4}), R({1, 2, 5, 4}), R({1, 2, 5, 4})},
               {In(0), In(1), In(2), Value(), false, 0.0, true}, {}, false, false,
               [&](const Refs& in) -> Refs {
                 Refs r = attention(in);
                 r.resize(4);
                 return r;
               }});
  // Custom ops: functionalized, outputs (None, mutated arguments...).
  // ATen's CPU attention (its own kernels, dropout off): compared with the dispatcher's call.
  c.push_back({"aten::_scaled_dot_product_flash_attention_for_cpu",
               {R({1, 4, 3, 4}), R({1, 2, 5, 4}), R({1, 2, 5, 4})},
               {In(0), In(1), In(2), 0.0, true}});
  c.push_back({"aten::scaled_dot_product_attention",
               {R({1, 2, 3, 4}), R({1, 2, 5, 4}), R({1, 2, 5, 4}), B({3, 5})},
               {In(0), In(1), In(2), In(3)}});
  c.push_back({"apex::fused_layer_norm_affine_fwd", {R({3, 2, 8}), R({8}), R({8})},
               {In(0), In(1), In(2), Ints({8}), 1e-5}, {}, false, false, [](const Refs& in) {
                 auto [out, mean, rstd] = at::native_layer_norm(in[0], {8}, in[1], in[2], 1e-5);
                 return Refs{out, mean.flatten(), rstd.flatten()};
               }});
  // apex's backward kernels against autograd through the forward's definition; apex's RMSNorm
  // forward against its formula. The inputs are f64 (apex then accumulates in f64).
  auto f64 = [&](std::vector<int64_t> shape) { return R(shape).to(at::kDouble); };
  c.push_back({"apex::fused_layer_norm_affine_bwd",
               {f64({3, 2, 4}), f64({3, 2, 4}), f64({2, 4}), f64({2, 4})},
               {},
               {},
               false,
               false,
               nullptr});
  {
    // grad_output, mean, invvar, input, normalized_shape, weight, bias, eps: the statistics are
    // the forward's, computed here.
    at::Tensor g = c.back().inputs[0], x = c.back().inputs[1], w = c.back().inputs[2],
               b = c.back().inputs[3];
    auto [out, mean, rstd] = at::native_layer_norm(x, {2, 4}, w, b, 1e-5);
    c.back().inputs = {g, mean.flatten(), rstd.flatten(), x, w, b};
    c.back().args = {In(0), In(1), In(2), In(3), Ints({2, 4}), In(4), In(5), 1e-5};
    c.back().reference = [](const Refs& in) {
      at::Tensor x = in[3].detach().requires_grad_(), w = in[4].detach().requires_grad_(),
                 b = in[5].detach().requires_grad_();
      at::layer_norm(x, {2, 4}, w, b, 1e-5).backward(in[0]);
      return Refs{x.grad(), w.grad(), b.grad()};
    };
  }
  auto rms = [](const at::Tensor& x, const at::Tensor& w, double eps) {
    return x * at::rsqrt((x * x).mean({-1}, /*keepdim=*/true) + eps) * w;
  };
  c.push_back({"apex::fused_rms_norm_affine_fwd",
               {f64({3, 2, 8}), f64({8})},
               {In(0), In(1), Ints({8}), 1e-5},
               {},
               false,
               false,
               [rms](const Refs& in) {
                 at::Tensor invvar = at::rsqrt((in[0] * in[0]).mean({-1}) + 1e-5);
                 return Refs{rms(in[0], in[1], 1e-5), invvar.flatten()};
               }});
  {
    at::Tensor g = f64({3, 2, 8}), x = f64({3, 2, 8}), w = f64({8});
    at::Tensor invvar = at::rsqrt((x * x).mean({-1}) + 1e-5).flatten();
    c.push_back({"apex::fused_rms_norm_affine_bwd",
                 {g, invvar, x, w},
                 {In(0), In(1), In(2), Ints({8}), In(3), 1e-5},
                 {},
                 false,
                 false,
                 [rms](const Refs& in) {
                   at::Tensor x = in[2].detach().requires_grad_(),
                              w = in[3].detach().requires_grad_();
                   rms(x, w, 1e-5).backward(in[0]);
                   return Refs{x.grad(), w.grad()};
                 }});
  }
  c.push_back({"torchtitan::deterministic_scatter_add",
               {at::zeros({3, 2}), L({2, 0, 2, 1}).reshape({4, 1}).expand({4, 2}), R({4, 2})},
               {In(0), In(1), In(2)},
               {},
               false,
               false,
               [](const Refs& in) { return Refs{in[0].scatter_add(0, in[1], in[2])}; }});
  at::Tensor xb = R({4, 16}).to(at::kBFloat16), wb = R({16}).to(at::kBFloat16);
  c.push_back({"_C::rms_norm", {at::zeros_like(xb), xb, wb}, {},
               {kw("result", In(0)), kw("input", In(1)), kw("weight", In(2)),
                kw("epsilon", 1e-6)}, true, false, [](const Refs& in) {
                 return Refs{at::Tensor(), RmsNormRef(in[1], in[2], 1e-6)[0]};
               }});
  c.push_back({"_C::fused_add_rms_norm", {xb, R({4, 16}).to(at::kBFloat16), wb}, {},
               {kw("input", In(0)), kw("residual", In(1)), kw("weight", In(2)),
                kw("epsilon", 1e-6)}, true, false, [](const Refs& in) {
                 at::Tensor sum = in[0] + in[1];  // bf16 add: one rounding, as vLLM stores it
                 return Refs{at::Tensor(), RmsNormRef(sum, in[2], 1e-6)[0], sum};
               }});
  c.push_back({"_C::silu_and_mul", {at::zeros({4, 3}, at::kBFloat16), xb.slice(1, 0, 6)}, {},
               {kw("out", In(0)), kw("input", In(1))}, true, false, [](const Refs& in) {
                 at::Tensor x = in[1].to(at::kFloat);
                 return Refs{at::Tensor(),
                             (at::silu(x.slice(1, 0, 3)) * x.slice(1, 3)).to(at::kBFloat16)};
               }});
  c.push_back({"_C::rotary_embedding", {L({0, 3, 1, 7}), R({4, 2 * 8}), R({4, 8}), R({16, 8})},
               {}, {kw("positions", In(0)), kw("query", In(1)), kw("key", In(2)),
                    kw("head_size", 8), kw("cos_sin_cache", In(3)), kw("is_neox", true)},
               true, false, [](const Refs& in) {
                 return Refs{at::Tensor(), RotateNeox(in[1], 8, in[3], in[0]),
                             RotateNeox(in[2], 8, in[3], in[0])};
               }});
  at::Tensor q = R({6, 4, 8}), k = R({6, 2, 8}), v = R({6, 2, 8});
  c.push_back({"vllm::unified_attention_with_output", {q, k, v, at::zeros_like(q)}, {},
               {kw("query", In(0)), kw("key", In(1)), kw("value", In(2)), kw("output", In(3)),
                kw("layer_name", "layer0")}, true, false, [](const Refs& in) {
                 return Refs{at::Tensor(), CausalGqaRef(in[0], in[1], in[2])};
               }});
  c.push_back({"tg::log_tensor", {R({3})}, {In(0), "x"}, {}, false, false,
               [](const Refs& in) { return Refs{in[0]}; }});
  c.push_back({"tg::inplace_log_tensor", {R({3})}, {In(0), "x"}, {}, true, false,
               [](const Refs& in) { return Refs{at::Tensor(), in[0]}; }});
  return c;
}

}  // namespace
}  // namespace gg::runtime
