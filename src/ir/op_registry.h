// OpRegistry: the one table of operators GraphGuard understands.
//
// Each operator is one entry declared as data: its ATen-style schema string (argument names,
// types, defaults, which arguments an op mutates), a shape/dtype rule (shared rules such as
// "elementwise with broadcasting" or "reduce over dims" are reused by many entries) and traits
// (collective kind, random, view, custom). Everything else reads this table: the importers check
// captured annotations against the rules, the symbolic engine uses shapes and traits, the
// executor dispatches on it. Adding an operator = adding one entry in src/ir/ops_*.cc.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gg::ir {

// One argument of a schema, e.g. "Tensor(a!) result" or "int[1] dim=[]" or "*, Scalar alpha=1".
struct ArgSchema {
  std::string name;
  std::string type;  // as written without alias annotation: "Tensor", "Tensor?",
                     // "Tensor[]", "int[]", "SymInt[]", "float", "Scalar", "str", ...
  bool kwarg_only = false;
  bool mutated = false;  // "(a!)" annotation: the op writes into this argument
  std::optional<Value> default_value;
};

struct OpSchema {
  OpName name;
  std::vector<ArgSchema> args;
  std::vector<std::string> returns;       // return types, e.g. {"Tensor", "Tensor"}; empty for void
  std::vector<std::string> return_names;  // parallel to returns; "" where the schema names none
  // Parses "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
  // Throws std::invalid_argument on a malformed schema (checked when the registry loads).
  static OpSchema Parse(const std::string& text);
  int ArgIndex(const std::string& arg_name) const;  // -1 if absent
};

// A node's arguments matched against its schema: positional and keyword arguments by schema
// name, defaults filled in. Throws ShapeError when an argument is missing or unknown.
class BoundArgs {
 public:
  BoundArgs(const OpSchema& schema, const Node& node);
  const Value& operator[](const std::string& arg_name) const;
  bool has(const std::string& arg_name) const;
  const OpSchema& schema() const { return *schema_; }

 private:
  const OpSchema* schema_;
  std::map<std::string, Value> values_;
};

// A shape rule's complaint: the node's arguments are inconsistent (wrong rank, mismatched sizes).
class ShapeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A shape rule's complaint about dtypes (mm of f32 and bf16, a mask that is not bool): the
// frontend reports it as a type error rather than a shape error.
class DTypeError : public ShapeError {
 public:
  using ShapeError::ShapeError;
};

enum class CollectiveKind {
  kNone,
  kAllReduce,      // reduce op + group
  kAllGather,      // gathers along dim 0 (all_gather_into_tensor)
  kReduceScatter,  // reduces then scatters along dim 0
  kBroadcast,      // copy of the source rank
  kAllToAll,
  kWait,  // wait_tensor: identity on the value
  // Point-to-point transfers between two members of a group (pipeline stages): a send posts its
  // tensor, the matching receive of the peer gets its value (frontend/p2p.h pairs them).
  kSend,
  kRecv,
};

// A point-to-point transfer (kSend, kRecv) rather than a collective of the whole group.
inline bool IsPointToPoint(CollectiveKind kind) {
  return kind == CollectiveKind::kSend || kind == CollectiveKind::kRecv;
}

// How the numeric runtime's tolerance model (runtime/tolerance.h) sees an operator's rounding.
enum class Rounding : uint8_t {
  kOnce,                // one rounding per output element (pointwise math): the default
  kExact,               // moves, selects or compares values: no rounding at all
  kSumsLastDim,         // accumulates over the last dim of tensor input `summed_input`
  kExactOrAccumulates,  // exact, unless its `accumulate` argument is true (index_put): then one
                        // rounding per value landing on a position (values' leading extent)
};

// The strides of an operator's result (ir/strides.h).
enum class ResultLayout : uint8_t {
  kUntracked,        // unknown (views have their own rules in strides.cc)
  kFreshContiguous,  // freshly allocated, contiguous when every tensor input is (TensorIterator
                     // follows its inputs' layout, so a non-contiguous input leaves it unknown)
  kPreservesFormat,  // memory_format=preserve (the default): the input's layout when that is
                     // dense, contiguous when asked for with contiguous_format (clone, *_like)
};

// What an operator means in the tensor language (symbolic/tensor_lang.h). Read by the lowering,
// the e-graph's type analysis, the term evaluator and the lemma families alike.
struct OpLowering {
  enum class Kind : uint8_t {
    kNone,    // no meaning: the node lowers to an opaque term (equal only by congruence)
    kMirror,  // the language op `name`, (name tensor-args...), IS this operator at its default
              // non-tensor arguments: its type rule and its evaluation are this entry's own
    kNamed,   // a lowering written in C++, registered under `name` in symbolic/lowering.cc
  };
  Kind kind = Kind::kNone;
  std::string name;
  // kMirror only: elementwise with one tensor argument (the output element at a position reads
  // the input element there), so it commutes with concat and slice: the lemma files' `{f}`
  // families range over these (symbolic/lemma_catalogue.h).
  bool pointwise = false;
  bool operator==(const OpLowering&) const = default;
};

struct OpTraits {
  CollectiveKind collective = CollectiveKind::kNone;
  std::string group_arg;               // schema argument holding the group name ("group_name")
  std::string reduce_op_arg;           // "reduce_op" for all_reduce / reduce_scatter; "" otherwise
  // kSend / kRecv: the argument naming the peer ("dst", "src"), and whether it is the peer's
  // position in the group (c10d::send/recv_, as torch.distributed passes it to the
  // ProcessGroup) or its global rank (_c10d_functional::isend/irecv).
  std::string peer_arg;
  bool peer_in_group = false;
  bool random = false;                 // draws random numbers (native_dropout)
  bool custom = false;                 // not an ATen core op (apex, vLLM, capture markers)
  bool nondeterministic_init = false;  // empty/empty_like: contents unspecified
  bool metadata_only = false;  // zeros_like/new_zeros/...: reads only its tensors' shape and dtype
  // An asynchronous collective (torch's _c10d_functional ops): its result may be read only by
  // the wait_tensor that completes it, or after that wait (the loader checks).
  bool async_result = false;
  Rounding rounding = Rounding::kOnce;
  int8_t summed_input = 0;  // kSumsLastDim: the tensor input (in TensorInputs order) summed
  // The result's strides as ir/strides.h tracks them (through these and views only).
  ResultLayout layout = ResultLayout::kUntracked;
  OpLowering lowering;
};

// Combines trait sets written as data (`traits::Fresh() | traits::Mirror("exp")`): each field
// set (non-default) in either; a field set differently in both is a table error (thrown when the
// registry loads).
OpTraits operator|(OpTraits a, const OpTraits& b);

// What a shape rule sees.
struct ShapeContext {
  const OpSchema& schema;
  const BoundArgs& args;
  const Graph& graph;
  // Type of a tensor argument (by schema name); throws ShapeError if it is None / not a tensor.
  const TensorType& TensorArg(const std::string& arg_name) const;
  // Types of a Tensor[] argument.
  std::vector<TensorType> TensorListArg(const std::string& arg_name) const;
  // Size of the process group named by a group argument, when the program knows it (0 if not).
  int32_t group_size = 0;
};

// Output types of one call; nullopt entries are non-tensor (None) outputs.
using ShapeRule = std::function<std::vector<std::optional<TensorType>>(const ShapeContext&)>;

struct OpInfo {
  OpSchema schema;
  ShapeRule rule;
  OpTraits traits;
};

class OpRegistry {
 public:
  // The registry with every built-in operator. Built once; thread-safe to read.
  static const OpRegistry& Default();

  // Looks an operator up; an empty overload also matches "default".
  const OpInfo* Find(const OpName& op) const;
  std::vector<OpName> Names() const;  // sorted

  // Infers the output types of an operator node (functionalized nodes: the op's returns — one
  // None slot when it returns nothing — followed by the mutated arguments' types).
  // Throws ShapeError on inconsistent arguments and std::out_of_range for an unknown op.
  std::vector<std::optional<TensorType>> Infer(const Graph& graph, const Node& node,
                                               int32_t group_size = 0) const;

  // The operators whose lowering mirrors them into the tensor language, sorted by name.
  std::vector<const OpInfo*> Mirrors() const;

  // Adds an entry; throws std::invalid_argument for a malformed schema, a duplicate, or traits
  // the schema cannot carry (a mirror of an operator with non-tensor arguments lacking defaults).
  void Add(const std::string& schema, ShapeRule rule, OpTraits traits = {});

 private:
  std::map<std::string, OpInfo> ops_;  // key: OpName::ToString() with overload
};

// The call a mirrored op stands for: `info`'s operator with its i-th Tensor argument read from
// TensorRef{i, 0} and every other argument at its default. A graph whose nodes 0..n-1 are those
// tensors can infer or execute it.
Node MirrorCall(const OpInfo& info);
// The output type of a mirrored op on tensors of `types` (one per Tensor argument): the entry's
// own shape rule. Throws ShapeError as Infer does.
TensorType InferMirror(const OpInfo& info, const std::vector<TensorType>& types);

}  // namespace gg::ir
