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
  // all_to_all: per member, in group order, the rows it sends to each member (input_splits) and
  // receives from each (output_splits); an empty list (or no lists at all) is an equal split of
  // dim 0. Member a's input_splits[b] must equal member b's output_splits[a].
  std::vector<std::vector<int64_t>> input_splits;
  std::vector<std::vector<int64_t>> output_splits;
};

// One output per member rank, in group order. Throws std::invalid_argument when the inputs do not
// fit the collective (different shapes, a dim 0 the group size does not divide, unknown reduce op,
// all_to_all split sizes that do not sum to dim 0 or that sender and receiver disagree on).
std::vector<at::Tensor> RunCollective(const CollectiveCall& call);

// Element-wise reduction of equally shaped tensors; the result keeps their dtype.
at::Tensor ReduceTensors(const std::vector<at::Tensor>& inputs, const std::string& reduce_op);

}  // namespace gg::runtime
