// Evaluation of tensor-language terms with ATen: one case per op of the language's own table;
// an op mirroring a registry operator runs that operator (runtime/op_kernels.h).
#include "runtime/term_eval.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "runtime/op_kernels.h"
#include "symbolic/tensor_lang.h"

namespace gg::runtime {
namespace {

using symbolic::ENode;
using symbolic::TensorLanguage;

class Evaluator {
 public:
  Evaluator(const symbolic::RecExpr& expr, const std::map<int64_t, at::Tensor>& leaves)
      : expr_(expr), leaves_(leaves) {}

  TermValue Run() {
    values_.reserve(expr_.nodes.size());
    for (const ENode& node : expr_.nodes) values_.push_back(Eval(node));
    return values_.back();
  }

 private:
  const std::string& Name(const ENode& n) const { return TensorLanguage::Get().ops().Name(n.op); }
  [[noreturn]] void Fail(const ENode& n, const std::string& why) const {
    throw TermEvalError(Name(n) + ": " + why);
  }
  const TermValue& Child(const ENode& n, size_t i) const { return values_.at(n.children.at(i)); }
  at::Tensor T(const ENode& n, size_t i) const {
    const TermValue& v = Child(n, i);
    if (const auto* t = std::get_if<at::Tensor>(&v)) return *t;
    Fail(n, "operand " + std::to_string(i) + " is not a tensor");
  }
  int64_t I(const ENode& n, size_t i) const {
    const TermValue& v = Child(n, i);
    if (const auto* k = std::get_if<int64_t>(&v)) return *k;
    Fail(n, "operand " + std::to_string(i) + " is not an integer");
  }
  double F(const ENode& n, size_t i) const {
    const TermValue& v = Child(n, i);
    if (const auto* f = std::get_if<double>(&v)) return *f;
    if (const auto* k = std::get_if<int64_t>(&v)) return static_cast<double>(*k);
    Fail(n, "operand " + std::to_string(i) + " is not a number");
  }
  // A binary operand: tensor, or a scalar wrapped as a 0-d tensor of the other side's dtype.
  std::pair<at::Tensor, at::Tensor> Pair(const ENode& n) const {
    const bool a_tensor = std::holds_alternative<at::Tensor>(Child(n, 0));
    const bool b_tensor = std::holds_alternative<at::Tensor>(Child(n, 1));
    if (!a_tensor && !b_tensor) Fail(n, "no tensor operand");
    // A scalar next to an integer tensor stays an integer when it is one (the language types
    // `ids - 3` as integer ids); otherwise it is a 0-d double, so 1.5 is not compared as 1.
    auto wrap = [&](double v, const at::Tensor& other) {
      bool integral = !at::isFloatingType(other.scalar_type()) && v == static_cast<int64_t>(v);
      return integral ? at::scalar_tensor(static_cast<int64_t>(v), other.options())
                      : at::scalar_tensor(v, at::kDouble);
    };
    at::Tensor a = a_tensor ? T(n, 0) : wrap(F(n, 0), T(n, 1));
    at::Tensor b = b_tensor ? T(n, 1) : wrap(F(n, 1), a);
    return {a, b};
  }
  std::vector<at::Tensor> Tensors(const ENode& n, size_t from) const {
    std::vector<at::Tensor> out;
    for (size_t i = from; i < n.children.size(); ++i) out.push_back(T(n, i));
    if (out.empty()) Fail(n, "needs a tensor operand");
    return out;
  }
  std::vector<int64_t> Ints(const ENode& n, size_t from) const {
    std::vector<int64_t> out;
    for (size_t i = from; i < n.children.size(); ++i) out.push_back(I(n, i));
    return out;
  }

  TermValue Eval(const ENode& n) {
    const std::string& op = Name(n);
    if (op == "num") return n.payload;
    if (op == "flt") return TensorLanguage::FltValue(n.payload);
    if (op == "tensor") {
      auto it = leaves_.find(n.payload);
      if (it == leaves_.end()) Fail(n, "no tensor for leaf " + std::to_string(n.payload));
      return it->second;
    }
    if (op == "concat") return at::cat(Tensors(n, 1), I(n, 0));
    if (op == "slice") {
      at::Tensor x = T(n, 0);
      return x.slice(I(n, 1), I(n, 2), I(n, 3));
    }
    if (op == "sumr" || op == "maxr" || op == "minr") {
      std::vector<at::Tensor> xs = Tensors(n, 0);
      at::Tensor acc = xs[0].clone();
      for (size_t i = 1; i < xs.size(); ++i) {
        acc = op == "sumr"   ? acc + xs[i]
              : op == "maxr" ? at::maximum(acc, xs[i])
                             : at::minimum(acc, xs[i]);
      }
      return acc;
    }
    if (op == "scale") return T(n, 0) * F(n, 1);
    if (op == "reshape") return T(n, 0).reshape(Ints(n, 1));
    if (op == "transpose") return T(n, 0).transpose(I(n, 1), I(n, 2));
    if (op == "permute") return T(n, 0).permute(Ints(n, 1));
    if (op == "expand") return T(n, 0).expand(Ints(n, 1)).contiguous();
    if (op == "add" || op == "sub" || op == "mul" || op == "div" || op == "lt" || op == "ge" ||
        op == "eq") {
      auto [a, b] = Pair(n);
      if (op == "add") return a + b;
      if (op == "sub") return a - b;
      if (op == "mul") return a * b;
      if (op == "div") return a / b;
      if (op == "lt") return at::lt(a, b);
      if (op == "eq") return at::eq(a, b);
      return at::ge(a, b);
    }
    if (op == "floor_div" || op == "trunc_div" || op == "remainder") {
      auto [a, b] = Pair(n);
      if (op == "remainder") return at::remainder(a, b);
      return at::div(a, b, op == "floor_div" ? "floor" : "trunc");
    }
    if (op == "and" || op == "or") {
      auto [a, b] = Pair(n);
      return op == "and" ? at::logical_and(a, b) : at::logical_or(a, b);
    }
    if (op == "not") return at::logical_not(T(n, 0));
    if (op == "gelu_grad") return at::gelu_backward(at::ones_like(T(n, 0)), T(n, 0));
    if (op == "mm") return at::mm(T(n, 0), T(n, 1));
    if (op == "bmm") return at::bmm(T(n, 0), T(n, 1));
    if (op == "grouped_mm" || op == "grouped_mm_k") return GroupedMm(T(n, 0), T(n, 1), T(n, 2));
    if (op == "matmul") return at::matmul(T(n, 0), T(n, 1));
    if (op == "softmax") return at::softmax(T(n, 0), I(n, 1));
    if (op == "sum_dim") return at::sum(T(n, 0), {I(n, 1)}, I(n, 2) != 0);
    if (op == "max_dim") return std::get<0>(at::max(T(n, 0), I(n, 1), I(n, 2) != 0));
    if (op == "topk_values") return std::get<0>(at::topk(T(n, 0), I(n, 1), I(n, 2)));
    if (op == "topk_indices") return std::get<1>(at::topk(T(n, 0), I(n, 1), I(n, 2)));
    if (op == "sort_values" || op == "sort_indices") {
      auto sorted = at::sort(T(n, 0), /*stable=*/true, I(n, 1), I(n, 2) != 0);
      return op == "sort_values" ? std::get<0>(sorted) : std::get<1>(sorted);
    }
    if (op == "mean_dim") return at::mean(T(n, 0), {I(n, 1)}, I(n, 2) != 0);
    if (op == "sum_all") return at::sum(T(n, 0));
    if (op == "layernorm") {
      at::Tensor x = T(n, 0);
      int64_t nd = I(n, 3);
      std::vector<int64_t> shape(x.sizes().end() - nd, x.sizes().end());
      return at::layer_norm(x, shape, T(n, 1), T(n, 2), F(n, 4));
    }
    if (op == "rmsnorm") {
      at::Tensor x = T(n, 0);
      return x * at::rsqrt(at::mean(x * x, {-1}, true) + F(n, 2)) * T(n, 1);
    }
    if (op == "rope") return Rope(T(n, 0), T(n, 1), T(n, 2), I(n, 3), I(n, 4) != 0);
    if (op == "attention") return Attention(T(n, 0), T(n, 1), T(n, 2));
    if (op == "safe_softmax") return SafeSoftmax(T(n, 0), I(n, 1));
    if (op == "sdpa") return Sdpa(T(n, 0), T(n, 1), T(n, 2), std::nullopt, I(n, 3) != 0, F(n, 4));
    if (op == "sdpa_mask") return Sdpa(T(n, 0), T(n, 1), T(n, 2), T(n, 3), false, F(n, 4));
    if (op == "sdpa_lse") {
      return SdpaLse(T(n, 0), T(n, 1), std::nullopt, I(n, 3) != 0, F(n, 4));
    }
    if (op == "sdpa_lse_mask") return SdpaLse(T(n, 0), T(n, 1), T(n, 3), false, F(n, 4));
    if (op == "masked_fill") return at::masked_fill(T(n, 0), T(n, 1), F(n, 2));
    if (op == "embedding") {
      // Rows of an n-d weight [E, ...] (at::embedding takes 2-d tables only): ids.shape + w[1:].
      at::Tensor w = T(n, 0), ids = T(n, 1);
      if (w.dim() == 2) return at::embedding(w, ids);
      std::vector<int64_t> shape(ids.sizes().begin(), ids.sizes().end());
      shape.insert(shape.end(), w.sizes().begin() + 1, w.sizes().end());
      return at::index_select(w, 0, ids.reshape({-1})).reshape(shape);
    }
    if (op == "pick") return at::gather(T(n, 0), -1, T(n, 1).unsqueeze(-1)).squeeze(-1);
    if (op == "or") return at::logical_or(T(n, 0), T(n, 1));
    if (op == "onehot") {
      return at::one_hot(T(n, 0), I(n, 1)).to(ToAten(static_cast<ir::DType>(I(n, 2))));
    }
    if (op == "embedding_bwd") {
      at::Tensor g = T(n, 0), ids = T(n, 1);
      // g [ids..., rest...] (rest = [m] for a 2-d table): rows summed into [rows, rest...].
      std::vector<int64_t> rest(g.sizes().begin() + ids.dim(), g.sizes().end());
      // Ids outside [0, rows) add nothing, as aten::embedding_dense_backward drops them.
      std::vector<int64_t> flat{-1}, out{I(n, 2)};
      flat.insert(flat.end(), rest.begin(), rest.end());
      out.insert(out.end(), rest.begin(), rest.end());
      at::Tensor flat_ids = ids.reshape({-1});
      at::Tensor keep = (flat_ids >= 0).logical_and(flat_ids < I(n, 2));
      at::Tensor rows = g.reshape(flat);
      std::vector<int64_t> keep_shape{-1};
      keep_shape.resize(rows.dim(), 1);
      rows = at::where(keep.reshape(keep_shape), rows, at::zeros({}, rows.options()));
      return at::zeros(out, g.options())
          .index_add_(0, at::where(keep, flat_ids, at::zeros_like(flat_ids)), rows);
    }
    if (op == "cast") return T(n, 0).to(ToAten(static_cast<ir::DType>(I(n, 1))));
    if (op == "clamp") {
      // integral bounds on integer x as integers (a double bound would promote x to float)
      at::Tensor x = T(n, 0);
      if (at::isFloatingType(x.scalar_type())) return at::clamp(x, F(n, 1), F(n, 2));
      return at::clamp(x, static_cast<int64_t>(F(n, 1)), static_cast<int64_t>(F(n, 2)));
    }
    if (op == "wrap_index") {
      // where(ids < 0, ids + n, ids): aten::index's reading of ids in [-n, n), for any ids
      at::Tensor ids = T(n, 0);
      return at::where(ids < 0, ids + I(n, 1), ids);
    }
    if (op == "full") {
      return at::full(Ints(n, 2), F(n, 0),
                      at::TensorOptions().dtype(ToAten(static_cast<ir::DType>(I(n, 1)))));
    }
    if (op == "dropout_mask") {
      // The modelled mask: a fixed pseudo-random function of each element and p (tensor_lang.cc).
      at::Tensor x = T(n, 0).to(at::kDouble);
      double p = F(n, 1);
      return at::frac(at::sin(x * 12.9898 + p * 78.233) * 43758.5453).abs() >= p;
    }
    if (const ir::OpInfo* mirror = TensorLanguage::Get().info(n.op).mirror) {
      // An op mirroring a registry operator means that operator: run its kernel.
      std::vector<at::Tensor> inputs = Tensors(n, 0);
      ir::Node call = ir::MirrorCall(*mirror);
      ir::BoundArgs args(mirror->schema, call);
      RandomMode deterministic{.dropout_off = true};
      return CallOperator(
                 call, *mirror, args, [&](ir::TensorRef ref) { return inputs.at(ref.node); },
                 deterministic, inputs[0].device())
          .at(0);
    }
    Fail(n, "has no numeric meaning");
  }

  // vLLM rotary embedding: x [T, H*hs], cache [max_pos, rot] = [cos | sin]; the first `rot`
  // columns of each head rotate (neox: halves; otherwise interleaved pairs), the rest pass.
  static at::Tensor Rope(const at::Tensor& x, const at::Tensor& positions, const at::Tensor& cache,
                         int64_t head_size, bool neox) {
    const int64_t tokens = x.size(0);
    at::Tensor heads = x.reshape({tokens, -1, head_size});
    at::Tensor cos_sin = cache.index_select(0, positions.reshape({-1}));
    const int64_t rot = cos_sin.size(-1);
    at::Tensor cos = cos_sin.slice(-1, 0, rot / 2).unsqueeze(-2);
    at::Tensor sin = cos_sin.slice(-1, rot / 2, rot).unsqueeze(-2);
    at::Tensor part = heads.slice(-1, 0, rot);
    at::Tensor rotated;
    if (neox) {
      at::Tensor x1 = part.slice(-1, 0, rot / 2), x2 = part.slice(-1, rot / 2, rot);
      rotated = at::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
    } else {
      at::Tensor x1 = part.slice(-1, 0, rot, 2), x2 = part.slice(-1, 1, rot, 2);
      rotated = at::stack({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1).flatten(-2);
    }
    return at::cat({rotated, heads.slice(-1, rot, head_size)}, -1).reshape(x.sizes());
  }
  // Causal attention of q [T, Hq, d] over k, v [T, Hkv, d] (query head h reads kv head
  // h / (Hq / Hkv)), scaled by 1/sqrt(d).
  static at::Tensor Attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    const int64_t group = q.size(1) / k.size(1);
    at::Tensor kk = k.repeat_interleave(group, 1), vv = v.repeat_interleave(group, 1);
    at::Tensor scores = at::einsum("thd,shd->hts", {q, kk}) / std::sqrt(double(q.size(2)));
    at::Tensor future = at::ones({q.size(0), k.size(0)}, q.options().dtype(at::kBool)).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
    return at::einsum("hts,shd->thd", {at::softmax(scores, -1), vv});
  }

  // softmax over dim with the rows of -inf only at 0 (aten::_safe_softmax's definition).
  static at::Tensor SafeSoftmax(const at::Tensor& x, int64_t dim) {
    at::Tensor none = (x == -std::numeric_limits<double>::infinity()).all(dim, true);
    return at::where(none, at::zeros({}, x.options()), at::softmax(x, dim));
  }
  // The scaled scores of q against k (kv heads repeated for GQA), masked: -inf where a causal or
  // bool mask hides a key, a floating mask added.
  static at::Tensor Scores(const at::Tensor& q, const at::Tensor& k,
                           const std::optional<at::Tensor>& mask, bool causal, double scale) {
    const int64_t group = q.size(-3) / k.size(-3);
    at::Tensor scores = at::matmul(q, k.repeat_interleave(group, -3).transpose(-2, -1)) * scale;
    const double inf = std::numeric_limits<double>::infinity();
    if (causal) {
      at::Tensor keep = at::ones({q.size(-2), k.size(-2)}, q.options().dtype(at::kBool)).tril();
      scores = scores.masked_fill(keep.logical_not(), -inf);
    }
    if (mask) {
      scores = mask->scalar_type() == at::kBool ? scores.masked_fill(mask->logical_not(), -inf)
                                                : scores + *mask;
    }
    return scores;
  }

  // Scaled dot-product attention by its definition (not ATen's fused kernels): scores
  // q k^T * scale over [..., Hq, L, S], kv heads repeated for GQA (query head h reads kv head
  // h / (Hq / Hkv)), causal keeps key j <= query i, a bool mask keeps its true entries and a
  // floating one is added; a row with nothing kept attends to nothing (safe softmax: 0).
  static at::Tensor Sdpa(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const std::optional<at::Tensor>& mask, bool causal, double scale) {
    const int64_t group = q.size(-3) / k.size(-3);
    return at::matmul(SafeSoftmax(Scores(q, k, mask, causal, scale), -1),
                      v.repeat_interleave(group, -3));
  }

  // logsumexp of the scores over the keys; 0 on a row whose scores are all -inf (the CPU flash
  // kernel's value there).
  static at::Tensor SdpaLse(const at::Tensor& q, const at::Tensor& k,
                            const std::optional<at::Tensor>& mask, bool causal, double scale) {
    at::Tensor scores = Scores(q, k, mask, causal, scale);
    const double inf = std::numeric_limits<double>::infinity();
    at::Tensor all_masked = (scores == -inf).all(-1);
    return at::logsumexp(scores, -1).masked_fill(all_masked, 0.0);
  }

  const symbolic::RecExpr& expr_;
  const std::map<int64_t, at::Tensor>& leaves_;
  std::vector<TermValue> values_;
};

}  // namespace

TermValue EvalTerm(const symbolic::RecExpr& expr, const std::map<int64_t, at::Tensor>& leaves) {
  if (expr.empty()) throw TermEvalError("empty term");
  return Evaluator(expr, leaves).Run();
}

}  // namespace gg::runtime
