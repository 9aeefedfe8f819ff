// Operator kernels: an ATen implementation for the registry operators that need one (custom,
// random and functionalized operators, and those whose arguments need translating), in a table
// keyed by the operator's name ("aten::add.Tensor"). A pure ATen operator without an entry runs
// through the ATen dispatcher by its schema (CallOperator).
//
// A kernel reads its arguments through a KernelCall (the node's arguments bound to the schema,
// tensor arguments resolved to values) and returns the op's results: one tensor per schema return
// (a Tensor[] return contributes its elements), nothing for a void op. Ops that mutate arguments
// write into the tensors they are given; the executor hands them clones for functionalized nodes.
// Collectives are not kernels: the executor computes them over all ranks (collectives.h).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_registry.h"

namespace gg::runtime {

at::ScalarType ToAten(ir::DType dtype);
ir::DType FromAten(at::ScalarType type);

// How random operators behave in one execution.
// Random values are always drawn from a CPU generator and then moved to the values' device, so a
// run on CUDA draws the same numbers as the same run on the CPU (same seed, same masks).
struct RandomMode {
  bool dropout_off = false;            // native_dropout = identity with an all-true mask
  at::Generator* generator = nullptr;  // CPU, seeded by the caller; required unless dropout_off
};

// The arguments of one operator call as a kernel sees them.
class KernelCall {
 public:
  using TensorLookup = std::function<at::Tensor(ir::TensorRef)>;
  // `device`: where factories without a tensor argument (zeros, arange, ...) create their values,
  // the execution's device; kernels with tensor arguments follow their inputs' device.
  KernelCall(const ir::Node& node, const ir::BoundArgs& args, TensorLookup lookup,
             const std::map<std::string, at::Tensor>& overrides, RandomMode random,
             at::Device device = at::kCPU);

  const ir::Node& node() const { return node_; }
  const RandomMode& random() const { return random_; }
  at::Device device() const { return device_; }
  // Options of a value a factory creates: on the execution's device, dtype left to the caller.
  at::TensorOptions FactoryOptions() const { return at::TensorOptions().device(device_); }
  bool IsNone(const std::string& arg) const;
  at::Tensor Tensor(const std::string& arg) const;  // a number becomes a wrapped scalar tensor
  std::optional<at::Tensor> OptionalTensor(const std::string& arg) const;
  std::vector<at::Tensor> TensorList(const std::string& arg) const;
  c10::List<std::optional<at::Tensor>> OptionalTensorList(const std::string& arg) const;
  int64_t Int(const std::string& arg) const;
  std::optional<int64_t> OptionalInt(const std::string& arg) const;
  double Double(const std::string& arg) const;
  bool Bool(const std::string& arg) const;
  std::optional<bool> OptionalBool(const std::string& arg) const;
  std::string String(const std::string& arg) const;
  std::vector<int64_t> IntList(const std::string& arg) const;
  std::vector<bool> BoolList(const std::string& arg) const;  // bool[N]: bools (or 0/1 ints)
  at::Scalar Scalar(const std::string& arg) const;
  std::optional<at::ScalarType> DType(const std::string& arg) const;
  bool IsNumber(const std::string& arg) const;
  // The name of an enum argument as the FX printer writes it ("torch.contiguous_format"); empty
  // when it is None, missing or not an enum.
  std::string EnumName(const std::string& arg) const;

 private:
  const ir::Value& Arg(const std::string& arg) const;
  [[noreturn]] void Fail(const std::string& arg, const std::string& problem) const;

  const ir::Node& node_;
  const ir::BoundArgs& args_;
  TensorLookup lookup_;
  const std::map<std::string, at::Tensor>& overrides_;
  RandomMode random_;
  at::Device device_;
};

// torch._grouped_mm for any dtype and device (ATen's CPU kernel takes f32/bf16/f16 only, with
// 16-byte aligned strides). An index i of the grouped dim (self's rows, 2-d x 3-d; the inner dim,
// 2-d x 2-d; mat2's columns, 3-d x 2-d) is in group g = #{j : offs[j] <= i}, which for sorted
// offs is ATen's [offs[g-1], offs[g]); indices in no group (i >= offs[-1]) give zero rows or
// columns, where ATen leaves them unspecified, and add nothing to an inner-dim product. 3-d x 3-d
// (offs None) is bmm. The language ops grouped_mm / grouped_mm_k evaluate through it too.
at::Tensor GroupedMm(const at::Tensor& a, const at::Tensor& b,
                     const std::optional<at::Tensor>& offs);

using Kernel = std::function<std::vector<at::Tensor>(const KernelCall&)>;

// Every kernel, keyed by "ns::name.overload".
const std::map<std::string, Kernel>& KernelTable();
// The kernel of an operator (an empty overload also matches "default"); nullptr if none.
const Kernel* FindKernel(const ir::OpName& op);

// Calls `kernel` for `node` (its schema `info`, bound `args`). A functionalized node's op writes
// into clones of its mutated arguments, which become the node's outputs after the op's own
// return (a None slot for a void op).
std::vector<at::Tensor> CallKernel(const Kernel& kernel, const ir::Node& node,
                                   const ir::OpInfo& info, const ir::BoundArgs& args,
                                   const KernelCall::TensorLookup& lookup, RandomMode random,
                                   at::Device device = at::kCPU);

// Runs registry operator `info` for `node`: its kernel, or, for an ATen operator without one,
// the ATen dispatcher by name (CallByName): a pure ATen operator needs no kernel line. Throws
// std::invalid_argument for a custom, random or functionalized operator without a kernel.
std::vector<at::Tensor> CallOperator(const ir::Node& node, const ir::OpInfo& info,
                                     const ir::BoundArgs& args,
                                     const KernelCall::TensorLookup& lookup, RandomMode random,
                                     at::Device device = at::kCPU);

// Executes an operator the registry does not know (an opaque node) by name through the ATen
// dispatcher (c10::Dispatcher::findSchema with the node's "ns::name" and overload, then
// callBoxed), binding the node's arguments to the dispatcher's schema. Throws
// std::runtime_error naming the operator when LibTorch has no such operator or the arguments do
// not bind; the outputs are the returned tensors (a Tensor[] return flattened).
std::vector<at::Tensor> CallByName(const ir::Node& node, const KernelCall::TensorLookup& lookup);

}  // namespace gg::runtime
