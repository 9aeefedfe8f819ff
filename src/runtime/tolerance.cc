#include "runtime/tolerance.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ir/op_registry.h"
#include "runtime/op_kernels.h"

namespace gg::runtime {

double UnitRoundoff(ir::DType dtype) {
  const int bits = ir::SignificandBits(dtype);
  return bits > 0 ? std::ldexp(1.0, -bits) : 0.0;
}

// index_put(self, indices, values, accumulate=True) sums the values written to one position: a
// rounding per colliding value, unlike the plain write.
bool IndexPutAccumulates(const ir::Node& node) {
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
  if (info == nullptr) return false;
  try {
    ir::BoundArgs args(info->schema, node);
    return args.has("accumulate") && args["accumulate"].is_bool() && args["accumulate"].as_bool();
  } catch (const std::exception&) {
    return false;
  }
}

bool IsExactOperator(const ir::Node& node) {
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
  if (info == nullptr) return false;  // an unknown operator may round
  switch (info->traits.rounding) {
    case ir::Rounding::kExact:
      return true;
    case ir::Rounding::kExactOrAccumulates:
      return !IndexPutAccumulates(node);
    default:
      return false;
  }
}

int64_t ReductionLength(const ir::Graph& graph, const ir::Node& node) {
  std::vector<ir::TensorRef> inputs = node.TensorInputs();
  auto last_dim = [&](size_t k) -> int64_t {
    if (k >= inputs.size()) return 1;
    const std::optional<ir::TensorType>& t =
        graph.node(inputs[k].node).outputs.at(inputs[k].output).type;
    if (!t || t->shape.empty() || !t->shape.back().is_static()) return 1;
    return std::max<int64_t>(1, t->shape.back().value());
  };
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
  // An unknown operator (opaque, typed from its annotation) may reduce: taken to sum over its
  // first input's last dim, the looser bound, so its rounding is never mistaken for a bug.
  if (info == nullptr) return last_dim(0);
  switch (info->traits.rounding) {
    case ir::Rounding::kSumsLastDim:
      return last_dim(static_cast<size_t>(info->traits.summed_input));
    case ir::Rounding::kExactOrAccumulates: {
      if (!IndexPutAccumulates(node) || inputs.size() < 2) return 1;
      // At most every value lands on one position: K = the number of values (their leading
      // extent, the length of the index tensors).
      const std::optional<ir::TensorType>& values =
          graph.node(inputs.back().node).outputs.at(inputs.back().output).type;
      if (!values || values->shape.empty() || !values->shape.front().is_static()) return 1;
      return std::max<int64_t>(1, values->shape.front().value());
    }
    default:
      return 1;
  }
}

double PerturbationAmplitude(const ir::Graph& graph, const ir::Node& node, ir::DType dtype) {
  double u = UnitRoundoff(dtype);
  if (u == 0 || IsExactOperator(node)) return 0;
  // One rounding of the output; for a K-term sum, the partial sums a distributed or split-K
  // implementation rounds to the output dtype along a tree of depth log2 K (tensor-parallel
  // partials, reduce-scatter), and the probabilistic error of the sum itself (Higham & Mary:
  // about sqrt(K) roundings) in the accumulation precision: float32 for 16-bit types.
  double k = static_cast<double>(ReductionLength(graph, node));
  if (k <= 1) return u;
  double accumulate = std::min(u, UnitRoundoff(ir::DType::kFloat32));
  return u * (1.0 + std::sqrt(std::log2(k))) + std::sqrt(k) * accumulate;
}

at::Tensor Perturb(const at::Tensor& value, double amplitude, at::Generator& generator) {
  if (amplitude == 0 || !value.defined() || !at::isFloatingType(value.scalar_type())) return value;
  // In float32 for 16-bit and 32-bit values (the multiplication's own rounding is of the size
  // being simulated), float64 for float64; in chunks, so a 5 GB logits tensor needs one more
  // output and a chunk of temporaries, not three copies.
  constexpr int64_t kChunk = int64_t{1} << 22;
  at::ScalarType type = value.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor source = value.contiguous().view({-1});
  at::Tensor out = at::empty_like(source);
  for (int64_t start = 0; start < source.numel(); start += kChunk) {
    int64_t n = std::min(kChunk, source.numel() - start);
    // Drawn on the CPU generator and moved, so a CUDA check perturbs exactly as a CPU one.
    at::Tensor e = at::rand({n}, generator, at::TensorOptions().dtype(type)).to(source.device());
    out.narrow(0, start, n)
        .copy_(source.narrow(0, start, n).to(type) * e.mul_(2 * amplitude).add_(1 - amplitude));
  }
  return out.view(value.sizes());
}

double TailFactor(int64_t elements) {
  constexpr double kDelta = 1e-6;
  double n = static_cast<double>(std::max<int64_t>(1, elements));
  return std::sqrt(2.0 * std::log(2.0 * n / kDelta));
}

}  // namespace gg::runtime
