// Collectives: torch's functional c10d operators (each result passes through wait_tensor) and
// vLLM's all_reduce (no wait); point-to-point transfers between pipeline stages.
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
      // What make_fx records for torch.distributed.send/recv/isend/irecv/batch_isend_irecv (the
      // torch.distributed.pipelining schedules' transfers): the ProcessGroup (written as its
      // name) and the peer's position in it. recv_ writes into its buffer: a value graph holds
      // it functionalized (outputs: the Work slot, then the received tensor), as gg_capture
      // writes it and the FX reader reads an in-place recv_.
      {"c10d::send(Tensor[] tensors, ProcessGroup process_group, int dst, int tag) -> Work",
       SendOrRecvList, traits::PointToPoint(K::kSend, "process_group", "dst", true)},
      {"c10d::recv_(Tensor(a!)[] tensors, ProcessGroup process_group, int src, int tag) -> Work",
       SendOrRecvList, traits::PointToPoint(K::kRecv, "process_group", "src", true)},
      // The functional forms (torch.compile's remap of the same calls, funcol's
      // isend_inplace/irecv_inplace): the peer's global rank; the received value is read
      // through wait_tensor.
      {"_c10d_functional::isend(Tensor tensor, int dst, int tag, str group_name) -> Tensor",
       FunctionalSend, traits::PointToPoint(K::kSend, "group_name", "dst", false)},
      {"_c10d_functional::irecv(Tensor tensor, int src, int tag, str group_name) -> Tensor",
       Identity,
       traits::PointToPoint(K::kRecv, "group_name", "src", false) | traits::AsyncResult()},
  };
}

}  // namespace gg::ir
