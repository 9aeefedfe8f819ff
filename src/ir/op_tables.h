// Operator tables: the per-family lists of registry entries (src/ir/ops_*.cc) and the small
// helpers that keep each entry to one line of data (schema string, shape rule, traits).
//
// OpRegistry::Default() loads every table listed here; a new family adds one function below.
#pragma once

#include <string>
#include <vector>

#include "ir/op_registry.h"

namespace gg::ir {

struct OpEntry {
  std::string schema;
  ShapeRule rule;
  OpTraits traits = {};
};

// Traits spelled as data in the tables.
namespace traits {
inline OpTraits None() { return {}; }
inline OpTraits Custom() { return {.custom = true}; }
inline OpTraits Random() { return {.random = true}; }
inline OpTraits NondeterministicInit() { return {.nondeterministic_init = true}; }
inline OpTraits MetadataOnly() { return {.metadata_only = true}; }
inline OpTraits Collective(CollectiveKind kind, std::string group_arg, std::string reduce_op_arg,
                           bool custom = false) {
  return {.collective = kind,
          .group_arg = std::move(group_arg),
          .reduce_op_arg = std::move(reduce_op_arg),
          .custom = custom};
}
// Rounding (runtime/tolerance.h): exact, or a sum over the last dim of tensor input k.
inline OpTraits Exact() { return {.rounding = Rounding::kExact}; }
inline OpTraits SumsLastDim(int8_t input = 0) {
  return {.rounding = Rounding::kSumsLastDim, .summed_input = input};
}
inline OpTraits ExactOrAccumulates() { return {.rounding = Rounding::kExactOrAccumulates}; }
// Result strides (ir/strides.h): fresh and contiguous from contiguous inputs, or the input's
// layout under memory_format=preserve.
inline OpTraits Fresh() { return {.layout = ResultLayout::kFreshContiguous}; }
inline OpTraits PreservesFormat() { return {.layout = ResultLayout::kPreservesFormat}; }
// Meaning in the tensor language (OpLowering): the language op `name` is this operator (its
// tensor arguments as children, the rest at their defaults); Pointwise also makes it a member
// of the lemma files' `{f}` families; Lower names a C++ lowering in symbolic/lowering.cc.
inline OpTraits Mirror(std::string name) {
  return {.lowering = {OpLowering::Kind::kMirror, std::move(name), false}};
}
inline OpTraits Pointwise(std::string name) {
  return {.lowering = {OpLowering::Kind::kMirror, std::move(name), true}};
}
inline OpTraits Lower(std::string name) {
  return {.lowering = {OpLowering::Kind::kNamed, std::move(name), false}};
}
// A collective whose result is ready only after its wait_tensor.
inline OpTraits AsyncCollective(CollectiveKind kind, std::string group_arg,
                                std::string reduce_op_arg) {
  OpTraits t = Collective(kind, std::move(group_arg), std::move(reduce_op_arg));
  t.async_result = true;
  return t;
}
// The result is ready only after its wait_tensor (the loader checks the reads).
inline OpTraits AsyncResult() { return {.async_result = true}; }
// A point-to-point transfer: kind kSend or kRecv, the group and peer arguments, the peer a
// position in the group (c10d) or a global rank (_c10d_functional). Moves values: exact.
inline OpTraits PointToPoint(CollectiveKind kind, std::string group_arg, std::string peer_arg,
                             bool peer_in_group) {
  OpTraits t = Collective(kind, std::move(group_arg), "");
  t.peer_arg = std::move(peer_arg);
  t.peer_in_group = peer_in_group;
  t.rounding = Rounding::kExact;
  return t;
}
}  // namespace traits

std::vector<OpEntry> ElementwiseOps();
std::vector<OpEntry> LinalgOps();
std::vector<OpEntry> ShapeOps();
std::vector<OpEntry> ReductionOps();
std::vector<OpEntry> IndexingOps();
std::vector<OpEntry> FactoryOps();
std::vector<OpEntry> CollectiveOps();
std::vector<OpEntry> CustomOps();

}  // namespace gg::ir
