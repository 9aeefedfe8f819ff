// NodeCheck: what every importer does with a freshly parsed operator node — find its operator in
// the registry, infer its output types and compare them with what the file says — so that the FX
// reader and the JSON reader report unknown operators and contradicting shapes the same way.
// Also small accessors for collective arguments (group, reduce op, group size) used by the loader.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_registry.h"

namespace gg::frontend {

using GroupMap = std::map<std::string, std::vector<int32_t>>;

// "'mm' (aten::mm.default)"
std::string DescribeNode(const ir::Node& node);

// The registry entry of the node's operator; InputError(file, line) naming the operator and how
// to add one when it is unknown.
const ir::OpInfo& FindOperator(const ir::Node& node, const std::string& file, int line);

// Unknown operators load as opaque nodes typed from the file's annotations, unless strict mode
// (`--strict-ops`) is on, in which case they are errors as FindOperator reports them. The mode is
// per thread, set for the duration of a StrictOps object (the commands that read graphs).
class StrictOps {
 public:
  explicit StrictOps(bool strict);
  ~StrictOps();
  StrictOps(const StrictOps&) = delete;
  StrictOps& operator=(const StrictOps&) = delete;
  static bool enabled();

 private:
  bool previous_;
};

// The registry entry of the node's operator, or nullptr for an unknown operator that loads as an
// opaque node (strict mode: the error of FindOperator).
const ir::OpInfo* FindOperatorOrOpaque(const ir::Node& node, const std::string& file, int line);

// True for an operator node whose operator the registry does not know (an opaque node).
bool IsOpaqueNode(const ir::Node& node);

// The error for an opaque node whose outputs the file does not type.
[[noreturn]] void ThrowOpaqueNeedsType(const ir::Node& node, const std::string& file, int line,
                                       const std::string& what);

// The value of schema argument `arg_name` of an operator node (positional or keyword, defaults
// filled in), or nullopt when the arguments do not bind to the schema or the argument is absent.
std::optional<ir::Value> BoundArg(const ir::OpInfo& info, const ir::Node& node,
                                  const std::string& arg_name);

// The process-group name a collective node names (nullopt for non-collectives or when absent).
std::optional<std::string> GroupNameOf(const ir::OpInfo& info, const ir::Node& node);

// Infers the output types of `node` (not yet added to `graph`). Returns nullopt when some tensor
// input has an unknown type (an unrecorded constant), so nothing can be inferred. The group size
// passed to the shape rule is `groups[group]` when the node names a known group, else
// `default_group_size`. Opaque nodes (unknown operators) have their tensor inputs checked and
// give nullopt (their types are the file's). Unknown operators in strict mode, shape errors and rejected arguments become InputError
// at (file, line).
std::optional<std::vector<std::optional<ir::TensorType>>> InferNodeTypes(
    const ir::Graph& graph, const ir::Node& node, const GroupMap& groups,
    int32_t default_group_size, const std::string& file, int line);

// Text for an optional type: "f32[8, 1536]" or "None".
std::string TypeText(const std::optional<ir::TensorType>& type);

}  // namespace gg::frontend
