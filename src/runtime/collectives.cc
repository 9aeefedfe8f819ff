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

namespace {

// Member `m`'s split sizes (`given`, or equal splits of its dim 0 over n members when empty),
// checked against its input's dim 0.
std::vector<int64_t> SplitsOf(const at::Tensor& t, const std::vector<int64_t>& given, int64_t n,
                              int64_t m, const char* which) {
  if (t.dim() == 0) throw std::invalid_argument("all_to_all of a 0-d tensor");
  if (given.empty()) {
    if (t.size(0) % n != 0) {
      throw std::invalid_argument("all_to_all: dim 0 is not divisible by the group size");
    }
    return std::vector<int64_t>(n, t.size(0) / n);
  }
  if (static_cast<int64_t>(given.size()) != n) {
    throw std::invalid_argument("all_to_all: member " + std::to_string(m) + "'s " + which +
                                " has " + std::to_string(given.size()) + " sizes for " +
                                std::to_string(n) + " members");
  }
  int64_t total = 0;
  for (int64_t s : given) {
    if (s < 0) throw std::invalid_argument("all_to_all: a negative split size");
    total += s;
  }
  if (std::string(which) == "input_split_sizes" && total != t.size(0)) {
    throw std::invalid_argument("all_to_all: member " + std::to_string(m) +
                                "'s input_split_sizes sum to " + std::to_string(total) +
                                " but its input has " + std::to_string(t.size(0)) + " rows");
  }
  return given;
}

// Member i's output is, in member order, the rows every member j sends it: j's input rows
// [sum(in_j[0..i)), + in_j[i]). Equal splits are the special case in_j[i] = dim 0 / n.
std::vector<at::Tensor> AllToAll(const CollectiveCall& call) {
  const std::vector<at::Tensor>& in = call.inputs;
  int64_t n = static_cast<int64_t>(in.size());
  auto list = [&](const std::vector<std::vector<int64_t>>& lists, int64_t m) {
    static const std::vector<int64_t> kNone;
    return m < static_cast<int64_t>(lists.size()) ? lists[m] : kNone;
  };
  std::vector<std::vector<at::Tensor>> chunks;  // chunks[j][i]: what member j sends member i
  for (int64_t j = 0; j < n; ++j) {
    std::vector<int64_t> sizes =
        SplitsOf(in[j], list(call.input_splits, j), n, j, "input_split_sizes");
    chunks.push_back(in[j].split_with_sizes(sizes, 0));
  }
  std::vector<at::Tensor> out;
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int64_t>& expected = list(call.output_splits, i);
    if (!expected.empty() && static_cast<int64_t>(expected.size()) != n) {
      throw std::invalid_argument("all_to_all: member " + std::to_string(i) +
                                  "'s output_split_sizes has " + std::to_string(expected.size()) +
                                  " sizes for " + std::to_string(n) + " members");
    }
    std::vector<at::Tensor> parts;
    for (int64_t j = 0; j < n; ++j) {
      int64_t rows = chunks[j][i].size(0);
      if (!expected.empty() && expected[j] != rows) {
        throw std::invalid_argument("all_to_all: member " + std::to_string(j) + " sends " +
                                    std::to_string(rows) + " rows to member " + std::to_string(i) +
                                    ", whose output_split_sizes expect " +
                                    std::to_string(expected[j]));
      }
      parts.push_back(chunks[j][i]);
    }
    out.push_back(at::cat(parts, 0));
  }
  return out;
}

}  // namespace

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
    case ir::CollectiveKind::kAllToAll:
      return AllToAll(call);
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
