// Executor: runs a graph (the sequential model S) or every rank of a program (D) on given inputs
// with ATen on the CPU or a CUDA device, so that relations between their tensors can be checked
// numerically.
//
// The ranks of a program run in one process, interleaved: each rank runs until it reaches a
// collective, and a collective is computed once every member of its group has reached it. A
// point-to-point send posts its tensor and goes on; the receive paired with it (ir::Program::
// transfers) completes where its value is first read (or at the end of the graph), once the
// send has run. Every tensor is freed after its last use; graph outputs and the values the
// caller asks for are kept.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/op_registry.h"
#include "ir/program.h"

namespace gg::runtime {

// One rank's call of a collective, as a collective backend sees it.
struct RankCollective {
  ir::CollectiveKind kind = ir::CollectiveKind::kNone;
  std::string reduce_op = "sum";  // all_reduce, reduce_scatter: sum, avg, max, min, product
  int64_t source = 0;             // broadcast: position of the source rank in `members`
  std::string group;              // the group's name in the program ("" for the whole world)
  std::vector<int32_t> members;   // the group's ranks, in group order
  int32_t rank = 0;               // the calling rank
  at::Tensor input;               // its input (kRecv: the buffer, giving shape and dtype)
  int32_t peer = -1;              // kSend, kRecv: the other rank (global)
  // kAllToAll: the rows this rank sends to / receives from each member, in group order, as
  // all_to_all_single's input_split_sizes / output_split_sizes give them (empty: None, equal
  // splits of dim 0).
  std::vector<int64_t> input_splits;
  std::vector<int64_t> output_splits;
};

// Computes the calling rank's output of a collective whose other members run elsewhere (other
// processes: MPI, NCCL). Every member calls it at the same point of its graph. Point-to-point
// transfers come here too: a send (kSend, output ignored) where the graph sends, a receive
// (kRecv: the received tensor) where its value is first read, the receives from one peer on one
// group in the order the graph posted them (the order messages between two ranks match in). It is
// given CPU tensors (ExecuteRank copies a device value to the host and the output back) unless
// ExecutionOptions::collectives_on_device says it takes the device's tensors (NCCL).
using CollectiveBackend = std::function<at::Tensor(const RankCollective& call)>;

struct ExecutionOptions {
  // Where the graph runs: inputs and constants are moved there, factories create their values
  // there, collectives stay there. Random draws are made on the CPU and moved (RandomMode), so a
  // CUDA run differs from the CPU run only by the kernels' rounding.
  at::Device device = at::kCPU;
  // native_dropout: with dropout_off it is the identity with an all-true mask; otherwise it draws
  // from a CPU generator seeded with `seed + rank` (each rank its own stream).
  bool dropout_off = false;
  uint64_t seed = 0;
  // Graph outputs are kept until the end (ExecutionResult::outputs); false frees them after their
  // last use like any other value (a forward graph returns every activation saved for backward,
  // which a check that only observes does not need).
  bool keep_outputs = true;
  // Called with every value as soon as it exists (inputs, constants, operator outputs; undefined
  // tensors are skipped), before the executor may free it: fingerprints and relation checks see
  // every tensor without the executor keeping them all alive.
  std::function<void(int32_t rank, ir::TensorRef ref, const at::Tensor& value)> observe;
  // Called with an operator's computed outputs before they are stored; may replace them (same
  // types). The tolerance model uses it to simulate rounding at every operator (tolerance.h).
  std::function<void(int32_t rank, const ir::Node& node, std::vector<at::Tensor>& outputs)>
      transform_outputs;
  // ExecuteRank sends every collective here; Execute and ExecuteProgram compute collectives
  // themselves (reference collectives) and ignore it.
  CollectiveBackend collective_backend;
  // The backend takes and returns tensors on `device` (runtime/nccl_backend.h); false: host
  // tensors (MPI), copied there and back by ExecuteRank.
  bool collectives_on_device = false;
};

// The values a graph starts from.
struct GraphInputs {
  std::vector<at::Tensor> inputs;                // one per graph input, in signature order
  std::map<std::string, at::Tensor> constants;   // graph constants by node name; missing ones are
                                                 // zeros of their annotated type
};

struct ExecutionResult {
  std::vector<at::Tensor> outputs;               // the graph's returned values (undefined: None)
  std::map<ir::TensorRef, at::Tensor> kept;      // the values asked for with `keep`
  std::string random_mode;                       // "dropout off" or "dropout seeded with N"
};

// Runs one graph. Collectives act on a group of one rank. Throws gg::InputError (graph file and
// node line) when an input does not match its annotation, a kernel rejects its arguments, or a
// computed value contradicts the node's annotated type.
ExecutionResult Execute(const ir::Graph& graph, const GraphInputs& inputs,
                        const ExecutionOptions& options = {},
                        const std::set<ir::TensorRef>& keep = {});

// Runs every rank of a program; inputs and keep are indexed by rank (keep may be empty). Groups
// the program does not list are taken to be the whole world. Throws gg::InputError also when the
// ranks' collective calls do not match (deadlock, different kinds or shapes).
std::vector<ExecutionResult> ExecuteProgram(const ir::Program& program,
                                            const std::vector<GraphInputs>& inputs,
                                            const ExecutionOptions& options = {},
                                            const std::vector<std::set<ir::TensorRef>>& keep = {});

// Runs rank `rank` of a program alone, in this process: its collectives go to
// options.collective_backend (std::invalid_argument when it is empty) with the members of the
// program's groups, so each process of a distributed run executes its own rank. Errors as
// ExecuteProgram; an exception of the backend becomes an InputError at the collective's node.
ExecutionResult ExecuteRank(const ir::Program& program, int32_t rank, const GraphInputs& inputs,
                            const ExecutionOptions& options,
                            const std::set<ir::TensorRef>& keep = {});

// An exception's message without the C++ backtrace ATen appends to its c10::Error text (frame
// addresses differ between runs; reports must not).
std::string ErrorText(const std::exception& error);

// Zeros of a static tensor type on `device`; throws std::invalid_argument for a symbolic shape.
at::Tensor ZerosOf(const ir::TensorType& type, at::Device device = at::kCPU);

}  // namespace gg::runtime
