// Reference collectives: what NCCL would compute for one collective call of a process group,
// computed in one process from the inputs of all member ranks at once.
//
// The executor gathers the member ranks' inputs (in the group's rank order) when every member has
// reached its matching call, and hands each member its output.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "ir/op_registry.h"

namespace gg::runtime {

struct CollectiveCall {
  ir::CollectiveKind kind = ir::CollectiveKind::kNone;
  std::string reduce_op = "sum";   // all_reduce, reduce_scatter: sum, avg, max, min, product
  int64_t source = 0;              // broadcast: position of the source rank in the group
  std::vector<at::Tensor> inputs;  // one per member rank, in group order
};

// One output per member rank, in group order. Throws std::invalid_argument when the inputs do not
// fit the collective (different shapes, a dim 0 the group size does not divide, unknown reduce op).
std::vector<at::Tensor> RunCollective(const CollectiveCall& call);

// Element-wise reduction of equally shaped tensors; the result keeps their dtype.
at::Tensor ReduceTensors(const std::vector<at::Tensor>& inputs, const std::string& reduce_op);

}  // namespace gg::runtime
