// TensorLanguage: the ops GraphGuard's lemmas and relation inference speak, and the facts the
// e-graph keeps about every class (its tensor type, its integer value, whether it is "clean").
//
// The language has three layers, declared as one table in tensor_lang.cc:
//  - leaves: `(num k)` integers (dims, offsets, sizes), `(flt bits)` doubles, `(tensor id)` a
//    tensor of S or of one rank of D (id indexes a LeafTable);
//  - relation ops, the vocabulary of relations (concat, slice, sum/max/min over ranks, scale,
//    reshape, expand, transpose, permute): a class is *clean* when it holds a D tensor or a
//    relation op over clean classes — the expressions relation inference is allowed to extract;
//  - compute ops: the language's own (mm, add, softmax, layernorm, ...), and one op per registry
//    entry that mirrors an ATen operator (ir::OpLowering::kMirror: exp, tanh, sin, ...), whose
//    type rule is that entry's shape rule and whose evaluation is that operator's kernel.
// The own ops' shape rules are the small, exact rules of this language; broadcasting and type
// promotion are ir/shape_rules.h's, shared with the registry.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_registry.h"
#include "symbolic/egraph.h"

namespace gg::symbolic {

// How an op's output type is computed from its children (one rule serves many ops).
enum class TensorRule : uint8_t {
  kNone,           // integer leaves and arithmetic: no tensor type
  kLeaf,           // (tensor id): from the LeafTable
  kConcat,         // (concat dim xs...)
  kSlice,          // (slice x dim start end)
  kSameAsAll,      // (sumr xs...), (maxr xs...): all children share one type
  kUnary,          // same type as child 0 (elementwise, scale, softmax, norms)
  kBroadcast,      // elementwise binary with broadcasting and type promotion
  kCompare,        // broadcasting binary with a bool result
  kMatmul,         // (mm a b): [m,k] x [k,n]
  kBatchMatmul,    // (bmm a b): [b,m,k] x [b,k,n]
  kGroupedMm,      // (grouped_mm a b offs): [M,K] x [G,K,N] -> [M,N]; (grouped_mm_k a b offs):
                   // [M,K] x [K,N] -> [G,M,N]; offs integer [G] (ir::rules::GroupedMmShape)
  kBatchedMatmul,  // (matmul a b): [B..., m, k] x [B..., k, n], equal batch dims B (no broadcast)
  kReshape,        // (reshape x sizes...)
  kExpand,         // (expand x sizes...): x broadcast to sizes (x's dims right-aligned, each 1 or
                   // equal to its size), as aten::expand
  kTranspose,      // (transpose x d0 d1)
  kPermute,        // (permute x dims...)
  kReduceDim,      // (sum_dim x dim keepdim), (max_dim x dim keepdim), (mean_dim ...)
  kReduceAll,      // (sum_all x): scalar
  kEmbedding,      // (embedding weight indices): weight [E, ...], ids [...] -> [ids..., ...]
  kPick,           // (pick x ids): x [..., V], integer ids [...] -> [...]
  kFull,           // (full v (num dtype) sizes...): the constant tensor of that dtype and shape
  kEmbeddingBwd,   // (embedding_bwd g ids (num rows)): g [ids..., m] -> [rows, m]
  kOnehot,         // (onehot ids (num C) (num dtype)): integer ids [...] -> [..., C] of that dtype
  kCast,           // (cast x (num dtype)): x's shape, that dtype
  kOpaque,         // (opaque (num code) inputs...): type recorded with the code (OpaqueSignatures)
  kSdpa,           // (sdpa q k v ...): q [B..., Hq, L, E], k [B..., Hkv, S, E], v [B..., Hkv, S, F]
                   // -> [B..., Hq, L, F] (Hq a multiple of Hkv); sdpa_mask's mask broadcasts to
                   // the scores [B..., Hq, L, S]; sdpa_lse(_mask) -> [B..., Hq, L]
  kTopk,           // (topk_values x (num k) dim), (topk_indices x (num k) dim): x's shape with
                   // dim's extent k; the values of x's dtype, the indices int64
  kSort,           // (sort_values x dim (num descending)), (sort_indices ...): x's shape; the
                   // values of x's dtype, the indices int64
  kRegistry,       // an op mirroring a registry operator: that entry's shape rule
};

struct TensorOpInfo {
  const char* name;
  int arity;  // kVariadic for any number of children
  bool relation;  // part of the relation vocabulary (may appear in clean expressions)
  TensorRule rule;
  const ir::OpInfo* mirror = nullptr;  // kRegistry: the operator this op is
  bool pointwise = false;  // elementwise unary: a member of the lemma files' `{f}` families
};

// The ops of the language in declaration order (ids are indices into this table).
const std::vector<TensorOpInfo>& TensorOpTable();

// Captured operators the language has no op for become `(opaque (num code) inputs...)`: the code
// stands for the operator with its non-tensor arguments and output index, so congruence still
// equates the same opaque computation on equal inputs (S's and a rank's), which is all that
// inference may assume about it. The signature also fixes the output type.
class OpaqueSignatures {
 public:
  // Process-wide table (codes are stable within a process; inference interns in graph order).
  static OpaqueSignatures& Get();
  int64_t Intern(const std::string& signature, const ir::TensorType& type);
  const ir::TensorType& Type(int64_t code) const;
  const std::string& Signature(int64_t code) const;

 private:
  std::vector<std::pair<std::string, ir::TensorType>> entries_;
  std::map<std::string, int64_t> codes_;
};

// A tensor that a `(tensor id)` leaf stands for.
struct TensorLeaf {
  enum class Side : uint8_t { kSeq, kDist };
  Side side = Side::kSeq;
  int32_t rank = 0;  // for kDist
  ir::TensorRef ref;
  ir::TensorType type;
  std::string name;  // FX name, for printing
  // Every element known finite from D's own definition of the tensor (an additive mask,
  // masked_fill of a finite constant with a finite number: LocalGraph::MarkFiniteFill), a fact
  // the lemmas read (lemma_conditions.cc FiniteValued) without the definition's term.
  bool finite = false;
};

class LeafTable {
 public:
  // Returns the id of the leaf, adding it if new (same side, rank and ref → same id).
  int64_t Intern(const TensorLeaf& leaf);
  const TensorLeaf& at(int64_t id) const { return leaves_.at(static_cast<size_t>(id)); }
  void MarkFinite(int64_t id) { leaves_.at(static_cast<size_t>(id)).finite = true; }
  size_t size() const { return leaves_.size(); }

 private:
  std::vector<TensorLeaf> leaves_;
  // (side, rank), ref -> id: a local e-graph can hold a thousand leaves (a tensor every layer
  // reads, on every rank), so Intern does not scan them.
  std::map<std::pair<std::pair<int, int32_t>, ir::TensorRef>, int64_t> ids_;
};

// The language's OpTable plus named ids for the ops code refers to directly.
class TensorLanguage {
 public:
  static const TensorLanguage& Get();

  const OpTable& ops() const { return ops_; }
  const TensorOpInfo& info(OpId op) const { return TensorOpTable()[op]; }
  bool is_relation(OpId op) const { return info(op).relation; }

  OpId num, flt, tensor;
  OpId concat, slice, sumr, maxr, minr, scale, reshape, expand, transpose, permute;
  OpId opaque;

  // Leaf nodes.
  ENode Num(int64_t value) const { return ENode{num, value, {}}; }
  ENode Flt(double value) const;
  ENode Tensor(int64_t leaf_id) const { return ENode{tensor, leaf_id, {}}; }
  static double FltValue(int64_t payload);

 private:
  TensorLanguage();
  OpTable ops_;
};

// What the e-graph knows about a class. A conflict (two different types or constants merged) means
// a lemma or an assumption equated different things: inference reports it, it is never ignored.
struct TensorFacts {
  std::optional<int64_t> constant;    // integer value (num leaves)
  std::optional<double> fconstant;    // double value (flt leaves)
  std::optional<ir::TensorType> type; // tensor-valued classes
  bool clean = false;                 // expressible over D tensors with relation ops
  bool conflict = false;
  std::string conflict_reason;
  bool operator==(const TensorFacts& other) const = default;
};

class TensorAnalysis : public AnalysisOf<TensorAnalysis, TensorFacts> {
 public:
  explicit TensorAnalysis(const LeafTable& leaves) : leaves_(&leaves) {}
  // The number of ranks of the distributed program (the TP degree lemmas split by when a term
  // carries no split of its own, as an embedding's gradient [rows, m] does not).
  void set_world_size(int64_t world_size) { world_size_ = world_size; }
  int64_t world_size() const { return world_size_; }
  const LeafTable& leaves() const { return *leaves_; }
  TensorFacts Make(const EGraph& graph, const ENode& node);
  bool Merge(TensorFacts& into, TensorFacts from);

  // The tensor type a node would have given its children's facts, or nullopt with a reason
  // (shape rules of the language; used by Make and by side conditions).
  std::optional<ir::TensorType> InferType(const ENode& node, std::string* why) const;

 private:
  const LeafTable* leaves_;
  int64_t world_size_ = 1;
};

}  // namespace gg::symbolic
