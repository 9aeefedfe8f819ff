// Relation: `S tensor == expression over D tensors`, the one representation of how the sequential
// model's tensors are rebuilt from the distributed program's tensors.
//
// The symbolic engine proves relations, the numeric runtime evaluates them and the report prints
// them. RelExpr is an immutable tree (shared, value semantics) whose leaves are tensors of given D
// ranks; its canonical text (`concat(0, primals_1@0, primals_1@1)`) parses back to the same tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"

namespace gg::symbolic {

struct RelNode;

// An immutable expression over D tensors. Copies share the tree. A default-constructed RelExpr is
// empty (valid() is false) and only exists so that containers and structs can hold one.
class RelExpr {
 public:
  RelExpr() = default;

  // Leaf: output `tensor` of rank `rank`'s graph; `name` is its FX name (used for printing).
  static RelExpr Tensor(int32_t rank, ir::TensorRef tensor, std::string name);
  // Leaf by FX name; throws gg::InputError when the rank or the name does not exist.
  static RelExpr Tensor(const ir::Program& program, int32_t rank, const std::string& name);
  static RelExpr Concat(int64_t dim, std::vector<RelExpr> children);
  // Elements [start, end) of dimension `dim` (step 1).
  static RelExpr Slice(RelExpr child, int64_t dim, int64_t start, int64_t end);
  static RelExpr Sum(std::vector<RelExpr> children);  // elementwise
  static RelExpr Max(std::vector<RelExpr> children);  // elementwise
  static RelExpr Min(std::vector<RelExpr> children);  // elementwise
  static RelExpr Scale(double factor, RelExpr child);  // factor * child (mean = scale(1/n, sum))
  // One entry may be -1 (inferred from the element count), as in torch.reshape.
  static RelExpr Reshape(RelExpr child, std::vector<int64_t> shape);
  // child broadcast to `sizes` as aten::expand (right-aligned; dims of size 1 repeat)
  static RelExpr Expand(RelExpr child, std::vector<int64_t> sizes);
  static RelExpr Transpose(RelExpr child, int64_t d0, int64_t d1);
  static RelExpr Permute(RelExpr child, std::vector<int64_t> perm);

  bool valid() const { return node_ != nullptr; }
  const RelNode& node() const { return *node_; }

  // Canonical text, e.g. `concat(0, slice(arg4_1@0, 0, 0, 768), arg4_1@1)`.
  std::string ToString() const;

  // Structural equality (leaves compare rank and tensor; names are only labels).
  friend bool operator==(const RelExpr& a, const RelExpr& b);
  friend bool operator!=(const RelExpr& a, const RelExpr& b) { return !(a == b); }

 private:
  explicit RelExpr(std::shared_ptr<const RelNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const RelNode> node_;
};

// A hash consistent with operator== (leaf names are not hashed), so that sets of relations are
// looked up in constant time: inference keeps every relation of an S tensor, and a tensor read
// by every layer (a rotary table) gathers one per layer and rank.
struct RelExprHash {
  size_t operator()(const RelExpr& expr) const;
};

// The node kinds. Consumers dispatch with std::visit on RelNode::kind.
struct DTensor {
  int32_t rank = 0;
  ir::TensorRef tensor;
  std::string name;
};
struct Concat {
  int64_t dim = 0;
  std::vector<RelExpr> children;
};
struct Slice {
  int64_t dim = 0;
  int64_t start = 0;
  int64_t end = 0;
  RelExpr child;
};
struct Sum {
  std::vector<RelExpr> children;
};
struct Max {
  std::vector<RelExpr> children;
};
struct Min {
  std::vector<RelExpr> children;
};
struct Scale {
  double factor = 1.0;
  RelExpr child;
};
struct Reshape {
  std::vector<int64_t> shape;
  RelExpr child;
};
struct Expand {
  std::vector<int64_t> sizes;
  RelExpr child;
};
struct Transpose {
  int64_t d0 = 0;
  int64_t d1 = 0;
  RelExpr child;
};
struct Permute {
  std::vector<int64_t> perm;
  RelExpr child;
};

struct RelNode {
  std::variant<DTensor, Concat, Slice, Sum, Max, Min, Scale, Reshape, Expand, Transpose, Permute>
      kind;
};

// Calls `visit` on every D tensor leaf of `expr`, left to right.
template <class Visit>
void ForEachDLeaf(const RelExpr& expr, Visit&& visit) {
  std::visit(
      [&](const auto& kind) {
        if constexpr (std::is_same_v<std::decay_t<decltype(kind)>, DTensor>) {
          visit(kind);
        } else if constexpr (requires { kind.children; }) {
          for (const RelExpr& child : kind.children) ForEachDLeaf(child, visit);
        } else {
          ForEachDLeaf(kind.child, visit);
        }
      },
      expr.node().kind);
}

// The type of `expr` evaluated over `program`; nullopt with the reason in *why when a leaf does
// not exist or the shapes do not fit (e.g. concat of tensors that differ outside the concat dim).
std::optional<ir::TensorType> InferRelType(const RelExpr& expr, const ir::Program& program,
                                           std::string* why);

// Parses the canonical syntax. Leaves `name@rank` are resolved in `program`. Errors are
// gg::InputError(file, line, problem) where the problem names the column.
RelExpr ParseRelExpr(const std::string& text, const ir::Program& program,
                     const std::string& file = "", int line = 0);

// `s_tensor` of the sequential graph equals `expr` over the distributed program.
struct Relation {
  ir::TensorRef s_tensor;
  RelExpr expr;
  std::string origin;  // "file:line: <spec text>" for relations from a spec, or "inferred"
};

// "primals_1 == concat(0, primals_1@0, primals_1@1)"
std::string RelationToString(const Relation& relation, const ir::Graph& s_graph);

// Formats a double in the shortest text that reads back as the same value ("0.5", "3").
std::string FormatFactor(double factor);

}  // namespace gg::symbolic
