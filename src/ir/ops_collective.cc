// Collectives: torch's functional c10d operators (each result passes through wait_tensor) and
// vLLM's all_reduce (no wait).
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> CollectiveOps() {
  using namespace rules;  // NOLINT: the tables read as data
  using K = CollectiveKind;
  return {
      {"_c10d_functional::all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor",
       Identity, traits::AsyncCollective(K::kAllReduce, "group_name", "reduce_op")},
      {"_c10d_functional::all_gather_into_tensor(Tensor input, int group_size, str group_name) -> "
       "Tensor",
       AllGather, traits::AsyncCollective(K::kAllGather, "group_name", "") | traits::Exact()},
      {"_c10d_functional::reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str "
       "group_name) -> Tensor",
       ReduceScatter, traits::AsyncCollective(K::kReduceScatter, "group_name", "reduce_op")},
      {"_c10d_functional::broadcast(Tensor input, int src, str group_name) -> Tensor", Identity,
       traits::AsyncCollective(K::kBroadcast, "group_name", "") | traits::Exact()},
      {"_c10d_functional::all_to_all_single(Tensor input, SymInt[]? output_split_sizes, SymInt[]? "
       "input_split_sizes, str group_name) -> Tensor",
       AllToAllSingle, traits::AsyncCollective(K::kAllToAll, "group_name", "") | traits::Exact()},
      {"_c10d_functional::wait_tensor(Tensor tensor) -> Tensor", Identity,
       traits::Collective(K::kWait, "", "") | traits::Exact()},
      {"vllm::all_reduce(Tensor tensor, str group_name) -> Tensor", Identity,
       traits::Collective(K::kAllReduce, "group_name", "", /*custom=*/true)},
  };
}

}  // namespace gg::ir
