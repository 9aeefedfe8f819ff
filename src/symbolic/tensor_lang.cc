#include "symbolic/tensor_lang.h"

#include <bit>
#include <cmath>
#include <numeric>

#include "ir/shape_rules.h"

namespace gg::symbolic {
namespace {

using ir::DType;
using ir::Shape;
using ir::TensorType;

// One line per op. Integer attributes (dims, offsets, sizes) are children that are `num` classes,
// so lemmas can bind and compare them like any other subterm.
const std::vector<TensorOpInfo> kOwnOps = {
    // leaves
    {"num", 0, true, TensorRule::kNone},
    {"flt", 0, true, TensorRule::kNone},
    {"tensor", 0, true, TensorRule::kLeaf},
    // relation vocabulary
    {"concat", kVariadic, true, TensorRule::kConcat},    // (concat dim xs...)
    {"slice", 4, true, TensorRule::kSlice},              // (slice x dim start end)
    {"sumr", kVariadic, true, TensorRule::kSameAsAll},   // elementwise sum of xs
    {"maxr", kVariadic, true, TensorRule::kSameAsAll},   // elementwise max of xs
    {"minr", kVariadic, true, TensorRule::kSameAsAll},   // elementwise min of xs
    {"scale", 2, true, TensorRule::kUnary},              // (scale x (flt f)) = f * x
    {"reshape", kVariadic, true, TensorRule::kReshape},  // (reshape x sizes...)
    // x broadcast to sizes, as PyTorch broadcasts (x's dims right-aligned; a dim of size 1
    // repeats, new leading dims are added): one node however wide (a 50k-vocabulary gradient).
    {"expand", kVariadic, true, TensorRule::kExpand},    // (expand x sizes...)
    {"transpose", 3, true, TensorRule::kTranspose},      // (transpose x d0 d1)
    {"permute", kVariadic, true, TensorRule::kPermute},  // (permute x dims...)
    // compute ops (the operators that mirror an ATen operator exactly are not listed: they come
    // from the registry's entries, ir::OpLowering::kMirror, after these)
    {"add", 2, false, TensorRule::kBroadcast},
    {"sub", 2, false, TensorRule::kBroadcast},
    {"mul", 2, false, TensorRule::kBroadcast},
    {"div", 2, false, TensorRule::kBroadcast},
    // x / y rounded down (Python's //) and toward zero, in the promoted dtype (integers stay
    // integers); remainder is Python's x % y, x - floor_div(x, y) * y, with the sign of y.
    {"floor_div", 2, false, TensorRule::kBroadcast},
    {"trunc_div", 2, false, TensorRule::kBroadcast},
    {"remainder", 2, false, TensorRule::kBroadcast},
    {"lt", 2, false, TensorRule::kCompare},
    {"ge", 2, false, TensorRule::kCompare},
    {"eq", 2, false, TensorRule::kCompare},
    // d/dx gelu(x) = Phi(x) + x phi(x) (exact, erf form): gelu_backward(g, x) is g * gelu_grad(x).
    {"gelu_grad", 1, false, TensorRule::kUnary, nullptr, true},
    {"mm", 2, false, TensorRule::kMatmul},
    {"bmm", 2, false, TensorRule::kBatchMatmul},
    // torch._grouped_mm (MoE experts), an index of the grouped dim in group #{j : offs[j] <= i}
    // (sorted offs: [offs[g-1], offs[g])), indices in no group zero (runtime::GroupedMm):
    // (grouped_mm a b offs): row i of a times b[group(i)]; (grouped_mm_k a b offs): per group g,
    // a's columns of g times b's rows of g.
    {"grouped_mm", 3, false, TensorRule::kGroupedMm},
    {"grouped_mm_k", 3, false, TensorRule::kGroupedMm},
    {"softmax", 2, false, TensorRule::kUnary},      // (softmax x dim)
    {"sum_dim", 3, false, TensorRule::kReduceDim},  // (sum_dim x dim keepdim)
    {"max_dim", 3, false, TensorRule::kReduceDim},  // values of max over dim
    {"mean_dim", 3, false, TensorRule::kReduceDim},
    {"sum_all", 1, false, TensorRule::kReduceAll},
    {"layernorm", 5, false, TensorRule::kUnary},      // (layernorm x w b ndims (flt eps))
    {"rmsnorm", 3, false, TensorRule::kUnary},        // (rmsnorm x w (flt eps))
    {"masked_fill", 3, false, TensorRule::kUnary},    // (masked_fill x mask (flt v))
    {"embedding", 2, false, TensorRule::kEmbedding},  // (embedding weight indices)
    // Random masks are modelled as a fixed function of the masked tensor's elements (and p): the
    // documented assumption that S's random stream follows the layout of its input across ranks.
    {"dropout_mask", 2, false, TensorRule::kCompare},   // (dropout_mask x (flt p)) -> bool
    {"opaque", kVariadic, false, TensorRule::kOpaque},  // (opaque (num code) inputs...)
    // vLLM kernels: rotary embedding of x [tokens, heads*head_size] at `positions` from
    // `cache` [max_pos, rot_dim] = [cos | sin] (neox: rotate halves, else interleaved pairs), and
    // causal attention of q [T, Hq, d] over k, v [T, Hkv, d] (Hq a multiple of Hkv: GQA).
    {"rope", 5, false, TensorRule::kUnary},       // (rope x positions cache hs neox)
    {"attention", 4, false, TensorRule::kUnary},  // (attention q k v (num layer))
    {"or", 2, false, TensorRule::kCompare},       // (or a b): logical or of bool masks
    {"and", 2, false, TensorRule::kCompare},      // (and a b): logical and of bool masks
    {"not", 1, false, TensorRule::kUnary},        // (not m): logical not of a bool mask
    // bmm with any number of batch dims: what a bmm over merged [B, H] batches is per (b, h).
    {"matmul", 2, false, TensorRule::kBatchedMatmul},  // (matmul a b)
    // x[..., ids[...]]: one entry of x's last dim per position, the target logit a cross entropy
    // reads (x[arange(n), ids] on a 2-d x).
    {"pick", 2, false, TensorRule::kPick},  // (pick x ids)
    // The k largest entries along dim, largest first, and their positions (aten::topk, largest
    // and sorted): a function of each line along dim alone (ties broken alike on equal lines, the
    // same kernel on the same values), so it commutes with concat and slice along another dim.
    {"topk_values", 3, false, TensorRule::kTopk},   // (topk_values x (num k) dim)
    {"topk_indices", 3, false, TensorRule::kTopk},  // (topk_indices x (num k) dim)
    // x sorted along dim (ascending, or descending for 1) and the positions the sorted entries
    // come from, equal entries in their order in x (aten::sort with stable=True): a function of
    // each line along dim alone, so it commutes with concat and slice along another dim.
    {"sort_values", 3, false, TensorRule::kSort},   // (sort_values x dim (num descending))
    {"sort_indices", 3, false, TensorRule::kSort},  // (sort_indices x dim (num descending))
    // A constant tensor (zeros, ones_like, full); the dtype is ir::DType's enumerator value and v
    // a number class (flt, or num in self-tests). Not a relation op: a relation names D tensors
    // only, so S's constants are lowered where they are read (inference treats their producers
    // as input-free) and lemmas (add-zeros-*, slice-of-full) make them drop out.
    {"full", kVariadic, false, TensorRule::kFull},  // (full v (num dtype) sizes...)
    // The weight gradient of an embedding lookup: row k sums g over the positions whose id is k
    // (aten::embedding_dense_backward without padding index or frequency scaling).
    {"embedding_bwd", 3, false, TensorRule::kEmbeddingBwd},  // (embedding_bwd g ids rows)
    // 1 at column ids[...] of each row, 0 elsewhere: what a cross entropy's backward scatters
    // (nll_loss_backward; a loss_parallel rank's index_put into zeros). Ids are in [0, C), as a
    // loss's targets must be.
    {"onehot", 3, false, TensorRule::kOnehot},  // (onehot ids C dtype)
    // where(ids < 0, ids + n, ids) (any ids): how aten::index and index_put read ids in [-n, n)
    // (x[-1] is the last row). Lowerings write it unless the ids are proved non-negative
    // (index_domain.h), so the lookup ops above, whose lemmas assume ids in [0, n), only see
    // in-range ids; a hand-written where(x < 0, x + n, x) lowers to it too.
    {"wrap_index", 2, false, TensorRule::kUnary},  // (wrap_index ids (num n))
    // x clamped into [lo, hi] (lo <= hi numbers; NaN stays NaN), as aten::clamp with both bounds:
    // torchtitan's vocabulary-parallel embedding clamps the shard-local ids into its rows.
    {"clamp", 3, false, TensorRule::kUnary},  // (clamp x (flt lo) (flt hi))
    // x converted to another dtype (ir::DType's enumerator value), as _to_copy / .to(dtype) do:
    // rounds to the target per element, so it commutes with what moves elements (concat, slice,
    // reshape) and not with a sum (a sum of rounded terms is not the rounded sum).
    {"cast", 2, false, TensorRule::kCast},  // (cast x (num dtype))
    // softmax whose rows of -inf only are 0 rather than NaN (aten::_safe_softmax, what SDPA's
    // math path applies so that a fully masked query row attends to nothing).
    {"safe_softmax", 2, false, TensorRule::kUnary},  // (safe_softmax x dim)
    // Scaled dot-product attention, safe_softmax(q k^T * scale [+ mask]) v over the last two
    // dims, query head h reading kv head h / (Hq / Hkv) (GQA). sdpa: causal 1 masks key j > query
    // i (top-left aligned, as torch's is_causal); sdpa_mask: a bool mask keeps its true entries,
    // a floating one is added to the scores.
    {"sdpa", 5, false, TensorRule::kSdpa},       // (sdpa q k v (num causal) (flt scale))
    {"sdpa_mask", 5, false, TensorRule::kSdpa},  // (sdpa_mask q k v mask (flt scale))
    // The log-sum-exp over the keys of the same scaled (masked) scores, [B..., Hq, L]: what the
    // CPU flash kernel returns beside its output (aten::_scaled_dot_product_flash_attention_for_cpu
    // output 1) and what ring attention merges partial results by. A query row whose scores are
    // all -inf (fully masked) gives 0, as that kernel writes. v takes no part in the value; it is
    // there so that an attention and its log-sum-exp have the same children.
    {"sdpa_lse", 5, false, TensorRule::kSdpa},       // (sdpa_lse q k v (num causal) (flt scale))
    {"sdpa_lse_mask", 5, false, TensorRule::kSdpa},  // (sdpa_lse_mask q k v mask (flt scale))
};

std::string Str(const Shape& s) { return ir::ShapeToString(s); }

// The language: its own ops, then one op per registry entry that mirrors an operator (by name,
// so ids are stable). A mirror named like an own op is a table error.
std::vector<TensorOpInfo> BuildOps() {
  std::vector<TensorOpInfo> ops = kOwnOps;
  for (const ir::OpInfo* info : ir::OpRegistry::Default().Mirrors()) {
    const ir::OpLowering& lowering = info->traits.lowering;
    for (const TensorOpInfo& own : kOwnOps) {
      if (lowering.name == own.name) {
        throw std::logic_error("operator " + info->schema.name.ToString() + " mirrors '" +
                               lowering.name + "', a tensor-language op of its own");
      }
    }
    int arity = static_cast<int>(ir::MirrorCall(*info).args.size());
    ops.push_back(TensorOpInfo{lowering.name.c_str(), arity, false, TensorRule::kRegistry, info,
                               lowering.pointwise});
  }
  return ops;
}

}  // namespace

const std::vector<TensorOpInfo>& TensorOpTable() {
  static const std::vector<TensorOpInfo>* ops = new std::vector<TensorOpInfo>(BuildOps());
  return *ops;
}

int64_t LeafTable::Intern(const TensorLeaf& leaf) {
  std::pair<std::pair<int, int32_t>, ir::TensorRef> key{{static_cast<int>(leaf.side), leaf.rank},
                                                        leaf.ref};
  auto [it, fresh] = ids_.emplace(key, static_cast<int64_t>(leaves_.size()));
  if (fresh) leaves_.push_back(leaf);
  return it->second;
}

OpaqueSignatures& OpaqueSignatures::Get() {
  static OpaqueSignatures* table = new OpaqueSignatures();
  return *table;
}

int64_t OpaqueSignatures::Intern(const std::string& signature, const ir::TensorType& type) {
  std::string key = signature + " -> " + type.ToString();
  auto it = codes_.find(key);
  if (it != codes_.end()) return it->second;
  int64_t code = static_cast<int64_t>(entries_.size());
  entries_.emplace_back(key, type);
  codes_.emplace(std::move(key), code);
  return code;
}

const ir::TensorType& OpaqueSignatures::Type(int64_t code) const {
  return entries_.at(static_cast<size_t>(code)).second;
}

const std::string& OpaqueSignatures::Signature(int64_t code) const {
  return entries_.at(static_cast<size_t>(code)).first;
}

const TensorLanguage& TensorLanguage::Get() {
  static const TensorLanguage* language = new TensorLanguage();
  return *language;
}

TensorLanguage::TensorLanguage() {
  for (const TensorOpInfo& op : TensorOpTable()) {
    if (op.arity == 0 && (std::string(op.name) == "num" || std::string(op.name) == "flt" ||
                          std::string(op.name) == "tensor")) {
      ops_.AddPayloadLeaf(op.name);
    } else {
      ops_.Add(op.name, op.arity);
    }
  }
  auto id = [&](const char* name) { return *ops_.Find(name); };
  num = id("num");
  flt = id("flt");
  tensor = id("tensor");
  concat = id("concat");
  slice = id("slice");
  sumr = id("sumr");
  maxr = id("maxr");
  minr = id("minr");
  scale = id("scale");
  reshape = id("reshape");
  expand = id("expand");
  transpose = id("transpose");
  permute = id("permute");
  opaque = id("opaque");
  ops_.SetLiteralOp(num);
}

ENode TensorLanguage::Flt(double value) const {
  return ENode{flt, std::bit_cast<int64_t>(value), {}};
}

double TensorLanguage::FltValue(int64_t payload) { return std::bit_cast<double>(payload); }

// ---- analysis ----------------------------------------------------------------------------------

TensorFacts TensorAnalysis::Make(const EGraph& graph, const ENode& node) {
  const TensorLanguage& lang = TensorLanguage::Get();
  TensorFacts facts;
  if (node.op == lang.num) {
    facts.constant = node.payload;
    facts.clean = true;
    return facts;
  }
  if (node.op == lang.flt) {
    facts.fconstant = TensorLanguage::FltValue(node.payload);
    facts.clean = true;
    return facts;
  }
  if (node.op == lang.tensor) {
    const TensorLeaf& leaf = leaves_->at(node.payload);
    facts.type = leaf.type;
    facts.clean = leaf.side == TensorLeaf::Side::kDist;
    return facts;
  }
  std::string why;
  facts.type = InferType(node, &why);
  if (!facts.type) {
    facts.conflict = true;
    facts.conflict_reason = "ill-typed " + lang.ops().Name(node.op) + ": " + why;
  }
  if (lang.is_relation(node.op)) {
    facts.clean = true;
    for (ClassId child : node.children) facts.clean = facts.clean && (*this)[child].clean;
  }
  return facts;
}

bool TensorAnalysis::Merge(TensorFacts& into, TensorFacts from) {
  bool changed = false;
  auto conflict = [&](const std::string& reason) {
    if (!into.conflict) {
      into.conflict = true;
      into.conflict_reason = reason;
      changed = true;
    }
  };
  if (from.constant) {
    if (!into.constant) {
      into.constant = from.constant;
      changed = true;
    } else if (*into.constant != *from.constant) {
      conflict("merged integers " + std::to_string(*into.constant) + " and " +
               std::to_string(*from.constant));
    }
  }
  if (from.fconstant && !into.fconstant) {
    into.fconstant = from.fconstant;
    changed = true;
  }
  if (from.type) {
    if (!into.type) {
      into.type = from.type;
      changed = true;
    } else if (*into.type != *from.type) {
      conflict("merged tensors of types " + into.type->ToString() + " and " +
               from.type->ToString());
    }
  }
  if (from.clean && !into.clean) {
    into.clean = true;
    changed = true;
  }
  if (from.conflict) conflict(from.conflict_reason);
  return changed;
}

std::optional<TensorType> TensorAnalysis::InferType(const ENode& node, std::string* why) const {
  const TensorLanguage& lang = TensorLanguage::Get();
  const TensorOpInfo& info = lang.info(node.op);
  auto fail = [&](const std::string& reason) -> std::optional<TensorType> {
    if (why) *why = reason;
    return std::nullopt;
  };
  auto type_of = [&](size_t i) -> const std::optional<TensorType>& {
    return (*this)[node.children.at(i)].type;
  };
  auto int_of = [&](size_t i) -> std::optional<int64_t> {
    return (*this)[node.children.at(i)].constant;
  };
  auto dim_of = [&](size_t i, size_t rank) -> std::optional<int64_t> {
    auto v = int_of(i);
    if (!v) return std::nullopt;
    return ir::WrapDim(*v, static_cast<int64_t>(rank));
  };
  switch (info.rule) {
    case TensorRule::kNone:
    case TensorRule::kLeaf:
      return fail("not a tensor op");
    case TensorRule::kUnary: {
      if (!type_of(0)) return fail("operand is not a tensor");
      return *type_of(0);
    }
    case TensorRule::kSameAsAll: {
      if (node.children.empty()) return fail("needs at least one operand");
      for (size_t i = 0; i < node.children.size(); ++i) {
        if (!type_of(i)) return fail("operand " + std::to_string(i) + " is not a tensor");
        if (*type_of(i) != *type_of(0)) {
          return fail("operands differ: " + type_of(0)->ToString() + " vs " +
                      type_of(i)->ToString());
        }
      }
      return *type_of(0);
    }
    case TensorRule::kConcat: {
      if (node.children.size() < 2) return fail("concat needs a dim and a tensor");
      if (!type_of(1)) return fail("operand is not a tensor");
      TensorType out = *type_of(1);
      auto dim = dim_of(0, out.shape.size());
      if (!dim || out.shape.empty()) return fail("bad concat dim");
      for (size_t i = 2; i < node.children.size(); ++i) {
        const auto& t = type_of(i);
        if (!t || t->dtype != out.dtype || t->shape.size() != out.shape.size()) {
          return fail("concat operands differ in dtype or rank");
        }
        for (size_t d = 0; d < out.shape.size(); ++d) {
          if (static_cast<int64_t>(d) == *dim) continue;
          if (t->shape[d] != out.shape[d]) {
            return fail("concat operands differ outside dim " + std::to_string(*dim) + ": " +
                        Str(out.shape) + " vs " + Str(t->shape));
          }
        }
        out.shape[*dim] = out.shape[*dim] + t->shape[*dim];
      }
      return out;
    }
    case TensorRule::kSlice: {
      if (!type_of(0)) return fail("operand is not a tensor");
      TensorType out = *type_of(0);
      auto dim = dim_of(1, out.shape.size());
      auto start = int_of(2), end = int_of(3);
      if (!dim || !start || !end || out.shape.empty()) return fail("bad slice arguments");
      const ir::Dim& size = out.shape[*dim];
      if (!size.is_static()) return fail("slice of a symbolic dimension");
      if (*start < 0 || *end < *start || *end > size.value()) {
        return fail("slice [" + std::to_string(*start) + ", " + std::to_string(*end) +
                    ") out of range for size " + size.ToString());
      }
      out.shape[*dim] = ir::Dim(*end - *start);
      return out;
    }
    case TensorRule::kBroadcast:
    case TensorRule::kCompare: {
      // torch's broadcasting and result_type, as the registry's rules compute them
      // (ir/shape_rules.h): a Python number is a wrapped number (integral when its value is).
      std::vector<ir::Operand> operands;
      std::vector<const Shape*> shapes;
      for (size_t i = 0; i < 2; ++i) {
        if (const auto& t = type_of(i)) {
          operands.push_back({t->dtype, t->shape.empty() ? ir::Operand::kZeroDimTensor
                                                         : ir::Operand::kDimTensor});
          shapes.push_back(&t->shape);
        } else if (const auto& v = (*this)[node.children.at(i)].fconstant) {
          operands.push_back({*v == std::floor(*v) ? DType::kInt64 : DType::kFloat64,
                              ir::Operand::kWrappedNumber});
        }
      }
      if (shapes.empty()) return fail("no tensor operand");
      std::optional<Shape> shape = *shapes[0];
      if (shapes.size() == 2) shape = ir::BroadcastShapes(*shapes[0], *shapes[1]);
      if (!shape) {
        return fail("cannot broadcast " + Str(*shapes[0]) + " with " + Str(*shapes[1]));
      }
      DType dtype = ir::ResultType(operands);
      if (std::string_view(info.name) == "div") dtype = ir::ToFloating(dtype);
      if (info.rule == TensorRule::kCompare) dtype = DType::kBool;
      return TensorType{dtype, *shape};
    }
    case TensorRule::kMatmul: {
      const auto& a = type_of(0);
      const auto& b = type_of(1);
      if (!a || !b || a->shape.size() != 2 || b->shape.size() != 2) {
        return fail("mm needs two matrices");
      }
      if (a->shape[1] != b->shape[0]) {
        return fail("mm inner dimensions differ: " + Str(a->shape) + " x " + Str(b->shape));
      }
      return TensorType{ir::PromoteTypes(a->dtype, b->dtype), {a->shape[0], b->shape[1]}};
    }
    case TensorRule::kBatchMatmul: {
      const auto& a = type_of(0);
      const auto& b = type_of(1);
      if (!a || !b || a->shape.size() != 3 || b->shape.size() != 3) {
        return fail("bmm needs two 3-d tensors");
      }
      if (a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) {
        return fail("bmm shapes differ: " + Str(a->shape) + " x " + Str(b->shape));
      }
      return TensorType{ir::PromoteTypes(a->dtype, b->dtype),
                        {a->shape[0], a->shape[1], b->shape[2]}};
    }
    case TensorRule::kGroupedMm: {
      const auto& a = type_of(0);
      const auto& b = type_of(1);
      const auto& offs = type_of(2);
      if (!a || !b || !offs) return fail("grouped_mm needs three tensors");
      const size_t b_rank = std::string_view(info.name) == "grouped_mm" ? 3 : 2;
      if (a->shape.size() != 2 || b->shape.size() != b_rank) {
        return fail(std::string(info.name) + " shapes: " + Str(a->shape) + " x " + Str(b->shape));
      }
      if (!ir::IsIntegral(offs->dtype, false)) return fail("offs must be an integer tensor");
      std::string why;
      std::optional<Shape> shape =
          ir::rules::GroupedMmShape(a->shape, b->shape, &offs->shape, &why);
      if (!shape) return fail(std::string(info.name) + ": " + why);
      return TensorType{ir::PromoteTypes(a->dtype, b->dtype), *shape};
    }
    case TensorRule::kBatchedMatmul: {
      const auto& a = type_of(0);
      const auto& b = type_of(1);
      if (!a || !b || a->shape.size() < 3 || a->shape.size() != b->shape.size()) {
        return fail("matmul needs two tensors of one rank >= 3");
      }
      const size_t r = a->shape.size();
      for (size_t i = 0; i + 2 < r; ++i) {
        if (a->shape[i] != b->shape[i]) {
          return fail("matmul batch dims differ: " + Str(a->shape) + " x " + Str(b->shape));
        }
      }
      if (a->shape[r - 1] != b->shape[r - 2]) {
        return fail("matmul inner dimensions differ: " + Str(a->shape) + " x " + Str(b->shape));
      }
      TensorType out{ir::PromoteTypes(a->dtype, b->dtype), a->shape};
      out.shape[r - 1] = b->shape[r - 1];
      return out;
    }
    case TensorRule::kReshape: {
      if (!type_of(0)) return fail("operand is not a tensor");
      TensorType out{type_of(0)->dtype, {}};
      int infer_at = -1;
      ir::Dim known(1);
      for (size_t i = 1; i < node.children.size(); ++i) {
        auto v = int_of(i);
        if (!v) return fail("reshape size is not an integer");
        if (*v == -1) {
          if (infer_at >= 0) return fail("reshape with two -1 sizes");
          infer_at = static_cast<int>(out.shape.size());
          out.shape.emplace_back(1);
          continue;
        }
        out.shape.emplace_back(*v);
        known = known * ir::Dim(*v);
      }
      ir::Dim total = ir::NumElements(type_of(0)->shape);
      if (infer_at >= 0) {
        if (!total.is_static() || known.value() == 0 || total.value() % known.value() != 0) {
          return fail("cannot infer -1 in reshape");
        }
        out.shape[infer_at] = total / known;
      } else if (known != total) {
        return fail("reshape of " + Str(type_of(0)->shape) + " to " + Str(out.shape) +
                    " changes the number of elements");
      }
      return out;
    }
    case TensorRule::kExpand: {
      if (!type_of(0)) return fail("operand is not a tensor");
      const Shape& in = type_of(0)->shape;
      const size_t rank = node.children.size() - 1;
      if (rank < in.size()) return fail("expand to fewer dims than its operand has");
      TensorType out{type_of(0)->dtype, {}};
      for (size_t i = 0; i < rank; ++i) {
        auto v = int_of(i + 1);
        if (!v || *v < 0) return fail("expand size is not a non-negative integer");
        out.shape.emplace_back(*v);
        if (i < rank - in.size()) continue;
        const ir::Dim& d = in[i - (rank - in.size())];
        if (d != ir::Dim(1) && d != ir::Dim(*v)) {
          return fail("cannot expand " + Str(in) + " to " + Str(out.shape));
        }
      }
      return out;
    }
    case TensorRule::kTranspose: {
      if (!type_of(0)) return fail("operand is not a tensor");
      TensorType out = *type_of(0);
      auto d0 = dim_of(1, out.shape.size()), d1 = dim_of(2, out.shape.size());
      if (!d0 || !d1) return fail("bad transpose dims");
      if (!out.shape.empty()) std::swap(out.shape[*d0], out.shape[*d1]);
      return out;
    }
    case TensorRule::kPermute: {
      if (!type_of(0)) return fail("operand is not a tensor");
      const TensorType& in = *type_of(0);
      if (node.children.size() - 1 != in.shape.size()) return fail("permute rank mismatch");
      TensorType out{in.dtype, {}};
      std::vector<bool> seen(in.shape.size(), false);
      for (size_t i = 1; i < node.children.size(); ++i) {
        auto d = dim_of(i, in.shape.size());
        if (!d || seen[*d]) return fail("permute dims are not a permutation");
        seen[*d] = true;
        out.shape.push_back(in.shape[*d]);
      }
      return out;
    }
    case TensorRule::kReduceDim: {
      if (!type_of(0)) return fail("operand is not a tensor");
      TensorType out = *type_of(0);
      auto dim = dim_of(1, out.shape.size());
      auto keepdim = int_of(2);
      if (!dim || !keepdim || out.shape.empty()) return fail("bad reduction dim");
      // as torch.sum: bools and integers sum to int64 (tokens per expert of a routing map)
      if (std::string_view(info.name) == "sum_dim" && !ir::IsFloatingPoint(out.dtype) &&
          !ir::IsComplex(out.dtype)) {
        out.dtype = DType::kInt64;
      }
      if (*keepdim) {
        out.shape[*dim] = ir::Dim(1);
      } else {
        out.shape.erase(out.shape.begin() + *dim);
      }
      return out;
    }
    case TensorRule::kReduceAll: {
      if (!type_of(0)) return fail("operand is not a tensor");
      // as torch.sum: bools and integers sum to int64 (a count of kept targets)
      DType dtype = type_of(0)->dtype;
      return TensorType{ir::IsFloatingPoint(dtype) ? dtype : DType::kInt64, {}};
    }
    case TensorRule::kEmbedding: {
      const auto& w = type_of(0);
      const auto& idx = type_of(1);
      // A lookup of rows of w [E, ...] (an embedding table [V, m], or a stack of per-expert
      // weights [E, n, k]): ids.shape + w.shape[1:].
      if (!w || !idx || w->shape.empty()) return fail("embedding needs a weight with rows");
      TensorType out{w->dtype, idx->shape};
      out.shape.insert(out.shape.end(), w->shape.begin() + 1, w->shape.end());
      return out;
    }
    case TensorRule::kTopk: {
      if (!type_of(0)) return fail("operand is not a tensor");
      TensorType out = *type_of(0);
      auto k = int_of(1);
      auto dim = dim_of(2, out.shape.size());
      if (!k || !dim || out.shape.empty() || !out.shape[*dim].is_static() || *k < 0 ||
          *k > out.shape[*dim].value()) {
        return fail("bad topk k or dim");
      }
      out.shape[*dim] = ir::Dim(*k);
      if (std::string_view(info.name) == "topk_indices") out.dtype = DType::kInt64;
      return out;
    }
    case TensorRule::kSort: {
      if (!type_of(0)) return fail("operand is not a tensor");
      TensorType out = *type_of(0);
      auto descending = int_of(2);
      if (out.shape.empty() || !dim_of(1, out.shape.size()) || !descending ||
          (*descending != 0 && *descending != 1)) {
        return fail("bad sort dim or direction");
      }
      if (std::string_view(info.name) == "sort_indices") out.dtype = DType::kInt64;
      return out;
    }
    case TensorRule::kPick: {
      const auto& x = type_of(0);
      const auto& idx = type_of(1);
      if (!x || !idx || x->shape.empty()) return fail("pick needs a tensor with a last dim");
      if (ir::IsFloatingPoint(idx->dtype) || idx->dtype == ir::DType::kBool) {
        return fail("pick needs integer ids");
      }
      Shape lead(x->shape.begin(), x->shape.end() - 1);
      if (lead != idx->shape) return fail("pick ids must have x's leading shape");
      return TensorType{x->dtype, idx->shape};
    }
    case TensorRule::kFull: {
      if (node.children.size() < 2) return fail("full needs a value and a dtype");
      const TensorFacts& value = (*this)[node.children[0]];
      if (value.type || (!value.constant && !value.fconstant)) {
        return fail("full value is not a number");
      }
      auto code = int_of(1);
      if (!code || *code < 0 || *code > static_cast<int64_t>(DType::kComplex128)) {
        return fail("full dtype is not a dtype code");
      }
      TensorType out{static_cast<DType>(*code), {}};
      for (size_t i = 2; i < node.children.size(); ++i) {
        auto size = int_of(i);
        if (!size || *size < 0) return fail("full size is not a non-negative integer");
        out.shape.emplace_back(*size);
      }
      return out;
    }
    case TensorRule::kEmbeddingBwd: {
      const auto& grad = type_of(0);
      const auto& idx = type_of(1);
      auto rows = int_of(2);
      if (!grad || !idx || !rows || *rows < 0) return fail("embedding_bwd needs g, ids and rows");
      if (ir::IsFloatingPoint(idx->dtype) || idx->dtype == ir::DType::kBool) {
        return fail("embedding_bwd needs integer ids");
      }
      // g [ids..., rest...] -> [rows, rest...]: the gradient of a lookup of rows of a weight
      // [rows, rest...] (a table [V, m], or per-expert weights [E, n, k]).
      if (grad->shape.size() <= idx->shape.size() ||
          !std::equal(idx->shape.begin(), idx->shape.end(), grad->shape.begin())) {
        return fail("embedding_bwd gradient must be [ids..., m...]");
      }
      TensorType out{grad->dtype, {ir::Dim(*rows)}};
      out.shape.insert(out.shape.end(), grad->shape.begin() + idx->shape.size(), grad->shape.end());
      return out;
    }
    case TensorRule::kOnehot: {
      const auto& idx = type_of(0);
      auto classes = int_of(1), code = int_of(2);
      if (!idx || ir::IsFloatingPoint(idx->dtype) || idx->dtype == ir::DType::kBool) {
        return fail("onehot needs integer ids");
      }
      if (!classes || *classes < 1) return fail("onehot needs a positive class count");
      if (!code || *code < 0 || *code > static_cast<int64_t>(DType::kComplex128)) {
        return fail("onehot dtype is not a dtype code");
      }
      TensorType out{static_cast<DType>(*code), idx->shape};
      out.shape.emplace_back(*classes);
      return out;
    }
    case TensorRule::kRegistry: {
      // The operator's own shape rule (ir/shape_rules.h): one type system for both.
      std::vector<TensorType> types;
      for (size_t i = 0; i < node.children.size(); ++i) {
        if (!type_of(i)) return fail("operand " + std::to_string(i) + " is not a tensor");
        types.push_back(*type_of(i));
      }
      try {
        return ir::InferMirror(*info.mirror, types);
      } catch (const ir::ShapeError& e) {
        return fail(e.what());
      }
    }
    case TensorRule::kCast: {
      auto code = int_of(1);
      if (!type_of(0)) return fail("cast of a non-tensor");
      if (!code || *code < 0 || *code > static_cast<int64_t>(DType::kComplex128)) {
        return fail("cast dtype is not a dtype code");
      }
      return TensorType{static_cast<DType>(*code), type_of(0)->shape};
    }
    case TensorRule::kSdpa: {
      const auto& q = type_of(0);
      const auto& k = type_of(1);
      const auto& v = type_of(2);
      if (!q || !k || !v) return fail("sdpa needs query, key and value tensors");
      const size_t r = q->shape.size();
      if (r < 3 || k->shape.size() != r || v->shape.size() != r) {
        return fail("sdpa needs query, key and value of one rank >= 3");
      }
      for (size_t i = 0; i + 3 < r; ++i) {
        if (q->shape[i] != k->shape[i] || q->shape[i] != v->shape[i]) {
          return fail("sdpa batch dims differ: " + Str(q->shape) + ", " + Str(k->shape) + ", " +
                      Str(v->shape));
        }
      }
      const ir::Dim &hq = q->shape[r - 3], &hkv = k->shape[r - 3];
      if (!hq.is_static() || !hkv.is_static() || hkv.value() == 0 ||
          hq.value() % hkv.value() != 0 || v->shape[r - 3] != hkv) {
        return fail("sdpa query heads must be a multiple of the key/value heads: " + Str(q->shape) +
                    ", " + Str(k->shape) + ", " + Str(v->shape));
      }
      if (q->shape[r - 1] != k->shape[r - 1] || k->shape[r - 2] != v->shape[r - 2]) {
        return fail("sdpa head sizes or key lengths differ: " + Str(q->shape) + ", " +
                    Str(k->shape) + ", " + Str(v->shape));
      }
      const std::string_view name(info.name);
      if (name == "sdpa_mask" || name == "sdpa_lse_mask") {
        const auto& m = type_of(3);
        Shape scores = q->shape;
        scores[r - 1] = k->shape[r - 2];
        if (!m || ir::BroadcastShapes(m->shape, scores) != scores) {
          return fail("sdpa mask does not broadcast to the scores " + Str(scores));
        }
        if (m->dtype != DType::kBool && !ir::IsFloatingPoint(m->dtype)) {
          return fail("sdpa mask must be bool or floating");
        }
      } else {
        auto causal = int_of(3);
        if (!causal || (*causal != 0 && *causal != 1)) return fail("sdpa causal flag is not 0/1");
      }
      TensorType out{q->dtype, q->shape};
      if (name == "sdpa_lse" || name == "sdpa_lse_mask") {
        out.shape.pop_back();  // one log-sum-exp per query row
      } else {
        out.shape[r - 1] = v->shape[r - 1];
      }
      return out;
    }
    case TensorRule::kOpaque: {
      auto code = node.children.empty() ? std::nullopt : int_of(0);
      if (!code) return fail("opaque needs a signature code");
      return OpaqueSignatures::Get().Type(*code);
    }
  }
  return fail("unknown rule");
}

}  // namespace gg::symbolic
