#include "runtime/collectives.h"

#include <stdexcept>

namespace gg::runtime {

at::Tensor ReduceTensors(const std::vector<at::Tensor>& inputs, const std::string& reduce_op) {
  if (inputs.empty()) throw std::invalid_argument("collective over an empty group");
  for (const at::Tensor& t : inputs) {
    if (!t.sizes().equals(inputs[0].sizes()) || t.scalar_type() != inputs[0].scalar_type()) {
      throw std::invalid_argument("collective inputs differ in shape or dtype across ranks");
    }
  }
  at::Tensor stacked = at::stack(inputs);
  at::ScalarType dtype = inputs[0].scalar_type();
  if (reduce_op == "sum") return stacked.sum(0).to(dtype);
  if (reduce_op == "avg") return stacked.sum(0).div(static_cast<double>(inputs.size())).to(dtype);
  if (reduce_op == "max") return std::get<0>(stacked.max(0));
  if (reduce_op == "min") return std::get<0>(stacked.min(0));
  if (reduce_op == "product") return stacked.prod(0).to(dtype);
  throw std::invalid_argument("unknown reduce op '" + reduce_op + "'");
}

std::vector<at::Tensor> RunCollective(const CollectiveCall& call) {
  const std::vector<at::Tensor>& in = call.inputs;
  int64_t n = static_cast<int64_t>(in.size());
  if (n == 0) throw std::invalid_argument("collective over an empty group");
  std::vector<at::Tensor> out;
  switch (call.kind) {
    case ir::CollectiveKind::kAllReduce: {
      at::Tensor r = ReduceTensors(in, call.reduce_op);
      for (int64_t i = 0; i < n; ++i) out.push_back(i == 0 ? r : r.clone());
      return out;
    }
    case ir::CollectiveKind::kAllGather: {
      at::Tensor g = at::cat(in, 0);
      for (int64_t i = 0; i < n; ++i) out.push_back(i == 0 ? g : g.clone());
      return out;
    }
    case ir::CollectiveKind::kReduceScatter: {
      at::Tensor r = ReduceTensors(in, call.reduce_op);
      if (r.dim() == 0 || r.size(0) % n != 0) {
        throw std::invalid_argument("reduce_scatter: dim 0 is not divisible by the group size " +
                                    std::to_string(n));
      }
      for (const at::Tensor& chunk : r.chunk(n, 0)) out.push_back(chunk.clone());
      return out;
    }
    case ir::CollectiveKind::kBroadcast: {
      if (call.source < 0 || call.source >= n) {
        throw std::invalid_argument("broadcast source is not a member of the group");
      }
      for (int64_t i = 0; i < n; ++i) out.push_back(in[call.source].clone());
      return out;
    }
    case ir::CollectiveKind::kAllToAll: {
      // Equal splits: rank i's output chunk j is rank j's input chunk i.
      std::vector<std::vector<at::Tensor>> chunks;
      for (const at::Tensor& t : in) {
        if (t.dim() == 0 || t.size(0) % n != 0) {
          throw std::invalid_argument("all_to_all: dim 0 is not divisible by the group size");
        }
        chunks.push_back(t.chunk(n, 0));
      }
      for (int64_t i = 0; i < n; ++i) {
        std::vector<at::Tensor> parts;
        for (int64_t j = 0; j < n; ++j) parts.push_back(chunks[j][i]);
        out.push_back(at::cat(parts, 0));
      }
      return out;
    }
    case ir::CollectiveKind::kWait:
      return in;
    case ir::CollectiveKind::kSend:  // point-to-point transfers: not a group's collective
    case ir::CollectiveKind::kRecv:
    case ir::CollectiveKind::kNone:
      break;
  }
  throw std::invalid_argument("not a collective");
}

}  // namespace gg::runtime
