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
// A collective whose result is ready only after its wait_tensor.
inline OpTraits AsyncCollective(CollectiveKind kind, std::string group_arg,
                                std::string reduce_op_arg) {
  OpTraits t = Collective(kind, std::move(group_arg), std::move(reduce_op_arg));
  t.async_result = true;
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
