// Point-to-point transfers between the ranks of a program (pipeline stages): every receive is
// paired with its peer's send, and the pairing is checked before anything runs.
//
// A transfer is a send node of rank a naming peer b and a receive node of rank b naming peer a,
// both on one process group (registry traits kSend / kRecv: c10d::send / c10d::recv_ name the
// peer by its position in the group, _c10d_functional::isend / irecv by its global rank). The
// k-th send from a to b on a group pairs with the k-th receive of b from a on that group, in
// node order (what NCCL and MPI do for messages between one pair of ranks; tags are not
// compared, as NCCL ignores them).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/op_registry.h"
#include "ir/program.h"

namespace gg::frontend {

// Pairs the transfers of `program` (its groups already known) and checks them; throws
// gg::InputError naming file and line:
//  - a transfer names a peer outside its group, itself, or a group it is not a member of;
//  - c10d::recv_ is not functionalized (its buffer would be read as if nothing were written);
//  - a send has no matching receive or a receive no send (counts per pair of ranks and group);
//  - the paired tensors differ in shape or dtype;
//  - the transfers and collectives deadlock under the executor's model: a send posts its value
//    and goes on (a buffered send), a receive is posted at its node and completes where its
//    value is first read (or at the end of the graph), a collective waits for every member of
//    its group. The error lists what each blocked rank waits for.
std::vector<ir::Transfer> PairTransfers(const ir::Program& program);

// The output of a receive node that holds the received value: after the operator's own
// results for a functionalized node (c10d::recv_: the Work slot, then the buffer's new value),
// else the result itself (_c10d_functional::irecv).
int32_t ReceivedOutput(const ir::OpInfo& info, const ir::Node& node);

}  // namespace gg::frontend
