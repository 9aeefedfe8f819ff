#include "ir/strides.h"

#include <algorithm>
#include <exception>
#include <set>
#include <stdexcept>

#include "ir/op_registry.h"

namespace gg::ir {
namespace {

// a * b; std::overflow_error past int64 (the propagation then leaves the layout unknown).
int64_t Mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("stride overflows int64");
  return r;
}

// ATen's is_contiguous: size-1 dims may have any stride; an empty tensor is contiguous.
bool IsContiguous(const std::vector<int64_t>& sizes, const Strides& strides) {
  int64_t expected = 1;
  for (int64_t s : sizes) {
    if (s == 0) return true;
  }
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

std::optional<int64_t> Wrap(const Value& v, size_t rank) {
  if (!v.is_int()) return std::nullopt;
  return WrapDim(v.as_int(), static_cast<int64_t>(rank));
}

class Propagation {
 public:
  explicit Propagation(const Graph& graph) : graph_(graph), strides_(graph.nodes.size()) {}

  void Run(std::optional<ImpossibleView>* first_failure) {
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Node& node = graph_.nodes[i];
      strides_[i].assign(node.outputs.size(), std::nullopt);
      try {
        Visit(static_cast<NodeId>(i), first_failure);
      } catch (const std::exception&) {
        // Arguments that do not bind: unknown (the importer reports what is wrong with them).
        strides_[i].assign(node.outputs.size(), std::nullopt);
      }
    }
  }

  std::vector<std::vector<std::optional<Strides>>> Take() { return std::move(strides_); }

 private:
  std::optional<std::vector<int64_t>> SizesOf(TensorRef ref) const {
    const NodeOutput& out = graph_.nodes.at(ref.node).outputs.at(ref.output);
    if (!out.type) return std::nullopt;
    return StaticSizes(*out.type);
  }
  const std::optional<Strides>& StridesOf(TensorRef ref) const {
    return strides_.at(ref.node).at(ref.output);
  }
  std::optional<std::vector<int64_t>> OutSizes(const Node& node, size_t i) const {
    if (i >= node.outputs.size() || !node.outputs[i].type) return std::nullopt;
    return StaticSizes(*node.outputs[i].type);
  }

  void Visit(NodeId id, std::optional<ImpossibleView>* first_failure) {
    const Node& node = graph_.nodes[id];
    std::vector<std::optional<Strides>>& out = strides_[id];
    if (node.kind == NodeKind::kInput) {
      if (std::optional<std::vector<int64_t>> sizes = OutSizes(node, 0)) {
        out[0] = ContiguousStrides(*sizes);
      }
      return;
    }
    if (node.kind != NodeKind::kOperator || node.functionalized) return;
    const OpInfo* info = OpRegistry::Default().Find(node.op);
    if (info == nullptr || info->traits.custom) return;
    const std::string& name = node.op.name;
    BoundArgs args(info->schema, node);

    // Every output's sizes and the first tensor input's layout.
    std::vector<TensorRef> inputs = node.TensorInputs();
    bool all_inputs_contiguous = true;
    for (TensorRef in : inputs) {
      std::optional<std::vector<int64_t>> sizes = SizesOf(in);
      const std::optional<Strides>& strides = StridesOf(in);
      if (!sizes || !strides || strides->size() != sizes->size() ||
          !IsContiguous(*sizes, *strides)) {
        all_inputs_contiguous = false;
      }
    }
    auto contiguous_outputs = [&]() {
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (std::optional<std::vector<int64_t>> sizes = OutSizes(node, i)) {
          out[i] = ContiguousStrides(*sizes);
        }
      }
    };
    if (info->traits.collective != CollectiveKind::kNone) {
      if (info->traits.collective == CollectiveKind::kWait) {
        if (!inputs.empty()) out[0] = StridesOf(inputs[0]);
      } else if (all_inputs_contiguous) {
        contiguous_outputs();
      }
      return;
    }
    if (info->traits.layout == ResultLayout::kFreshContiguous) {
      if (all_inputs_contiguous) contiguous_outputs();
      return;
    }
    if (name == "empty_strided") {
      std::optional<std::vector<int64_t>> sizes = OutSizes(node, 0);
      if (sizes && args["stride"].is_int_list() &&
          args["stride"].as_int_list().size() == sizes->size()) {
        out[0] = args["stride"].as_int_list();
      }
      return;
    }
    if (inputs.empty()) return;
    const TensorRef self = inputs[0];
    std::optional<std::vector<int64_t>> in_sizes = SizesOf(self);
    const std::optional<Strides> in = StridesOf(self);
    if (!in_sizes || !in || in->size() != in_sizes->size()) return;
    const size_t rank = in_sizes->size();
    std::optional<std::vector<int64_t>> out_sizes = OutSizes(node, 0);

    if (info->traits.layout == ResultLayout::kPreservesFormat) {
      if (!out_sizes) return;
      const Value* format = args.has("memory_format") ? &args["memory_format"] : nullptr;
      const bool contiguous_format =
          format != nullptr && format->is_enum() &&
          format->as_enum().name.find("contiguous_format") != std::string::npos;
      if (contiguous_format) {
        out[0] = ContiguousStrides(*out_sizes);
      } else if ((format == nullptr || format->is_none() ||
                  (format->is_enum() &&
                   format->as_enum().name.find("preserve_format") != std::string::npos)) &&
                 *out_sizes == *in_sizes && IsNonOverlappingAndDense(*in_sizes, *in)) {
        out[0] = in;
      }
      return;
    }
    if (name == "view" || name == "_unsafe_view" || name == "reshape") {
      if (!out_sizes) return;
      std::optional<Strides> viewed = ComputeViewStrides(*in_sizes, *in, *out_sizes);
      if (viewed) {
        out[0] = std::move(viewed);
      } else if (name == "reshape") {
        out[0] = ContiguousStrides(*out_sizes);  // a copy
      } else if (first_failure != nullptr && !*first_failure) {
        *first_failure = ImpossibleView{id, *in_sizes, *in, *out_sizes};
      }
      return;
    }
    if (name == "alias" || name == "detach") {
      out[0] = in;
      return;
    }
    if (name == "t") {
      Strides s = *in;
      if (rank == 2) std::swap(s[0], s[1]);
      out[0] = s;
      return;
    }
    if (name == "transpose") {
      std::optional<int64_t> a = Wrap(args["dim0"], rank), b = Wrap(args["dim1"], rank);
      if (!a || !b) return;
      Strides s = *in;
      std::swap(s[*a], s[*b]);
      out[0] = s;
      return;
    }
    if (name == "permute") {
      if (!args["dims"].is_int_list()) return;
      std::vector<int64_t> dims = args["dims"].as_int_list();
      if (dims.size() != rank) return;
      Strides s(rank);
      for (size_t i = 0; i < rank; ++i) {
        std::optional<int64_t> d = WrapDim(dims[i], static_cast<int64_t>(rank));
        if (!d) return;
        s[i] = (*in)[*d];
      }
      out[0] = s;
      return;
    }
    if (name == "expand") {
      if (!out_sizes || out_sizes->size() < rank) return;
      const size_t lead = out_sizes->size() - rank;
      Strides s(out_sizes->size(), 0);
      for (size_t i = lead; i < out_sizes->size(); ++i) {
        const size_t j = i - lead;
        if ((*in_sizes)[j] == (*out_sizes)[i]) {
          s[i] = (*in)[j];
        } else if ((*in_sizes)[j] != 1) {
          return;
        }
      }
      out[0] = s;
      return;
    }
    if (name == "slice") {
      std::optional<int64_t> d = Wrap(args["dim"], rank);
      if (!d || !args["step"].is_int() || args["step"].as_int() < 1) return;
      Strides s = *in;
      s[*d] = Mul(s[*d], args["step"].as_int());
      out[0] = s;
      return;
    }
    if (name == "select") {
      std::optional<int64_t> d = Wrap(args["dim"], rank);
      if (!d) return;
      Strides s = *in;
      s.erase(s.begin() + *d);
      out[0] = s;
      return;
    }
    if (name == "unsqueeze") {
      std::optional<int64_t> d = Wrap(args["dim"], rank + 1);
      if (!d) return;
      Strides s = *in;
      int64_t stride = *d >= static_cast<int64_t>(rank) ? 1 : Mul((*in_sizes)[*d], (*in)[*d]);
      s.insert(s.begin() + *d, stride);
      out[0] = s;
      return;
    }
    if (name == "squeeze") {
      // The result drops size-1 dims only: match the output's dims against the input's.
      if (!out_sizes) return;
      std::set<int64_t> dropped;
      if (node.op.overload == "dim" && args["dim"].is_int()) {
        std::optional<int64_t> d = Wrap(args["dim"], rank);
        if (!d) return;
        if ((*in_sizes)[*d] == 1) dropped.insert(*d);
      } else if (node.op.overload == "dims" && args["dim"].is_int_list()) {
        for (int64_t v : args["dim"].as_int_list()) {
          std::optional<int64_t> d = WrapDim(v, static_cast<int64_t>(rank));
          if (!d) return;
          if ((*in_sizes)[*d] == 1) dropped.insert(*d);
        }
      } else if (node.op.overload.empty() || node.op.overload == "default") {
        for (size_t i = 0; i < rank; ++i) {
          if ((*in_sizes)[i] == 1) dropped.insert(static_cast<int64_t>(i));
        }
      } else {
        return;
      }
      Strides s;
      std::vector<int64_t> kept;
      for (size_t i = 0; i < rank; ++i) {
        if (dropped.count(static_cast<int64_t>(i))) continue;
        s.push_back((*in)[i]);
        kept.push_back((*in_sizes)[i]);
      }
      if (kept == *out_sizes) out[0] = s;
      return;
    }
    if (name == "split" || name == "split_with_sizes") {
      // Every piece keeps the input's strides (a narrow along the split dim).
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        std::optional<std::vector<int64_t>> sizes = OutSizes(node, i);
        if (sizes && sizes->size() == rank) out[i] = in;
      }
      return;
    }
    if (name == "as_strided") {
      if (out_sizes && args["stride"].is_int_list() &&
          args["stride"].as_int_list().size() == out_sizes->size()) {
        out[0] = args["stride"].as_int_list();
      }
      return;
    }
    // Anything else: unknown.
  }

  const Graph& graph_;
  std::vector<std::vector<std::optional<Strides>>> strides_;
};

}  // namespace

Strides ContiguousStrides(const std::vector<int64_t>& sizes) {
  Strides strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) {
    strides[i - 1] = Mul(strides[i], std::max<int64_t>(sizes[i], 1));
  }
  return strides;
}

// at::detail::computeStride_impl (aten/src/ATen/TensorUtils.cpp), for static sizes.
std::optional<Strides> ComputeViewStrides(const std::vector<int64_t>& old_sizes,
                                          const Strides& old_strides,
                                          const std::vector<int64_t>& new_sizes) {
  if (old_sizes.empty()) return Strides(new_sizes.size(), 1);
  int64_t numel = 1;
  for (int64_t s : old_sizes) numel = Mul(numel, s);
  if (numel == 0 && old_sizes == new_sizes) return old_strides;
  Strides new_strides(new_sizes.size());
  if (numel == 0) {
    for (int64_t d = static_cast<int64_t>(new_sizes.size()) - 1; d >= 0; --d) {
      new_strides[d] = d == static_cast<int64_t>(new_sizes.size()) - 1
                           ? 1
                           : Mul(std::max<int64_t>(new_sizes[d + 1], 1), new_strides[d + 1]);
    }
    return new_strides;
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel = Mul(tensor_numel, old_sizes[tensor_d]);
    // The end of a chunk of dims that are contiguous with each other: the view's dims must
    // cover exactly that chunk's elements.
    if (tensor_d == 0 || (old_sizes[tensor_d - 1] != 1 &&
                          old_strides[tensor_d - 1] != Mul(tensor_numel, chunk_base_stride))) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = Mul(view_numel, chunk_base_stride);
        view_numel = Mul(view_numel, new_sizes[view_d]);
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

bool IsNonOverlappingAndDense(const std::vector<int64_t>& sizes, const Strides& strides) {
  const size_t n = sizes.size();
  if (n == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<size_t> perm(n);
  for (size_t i = 0; i < n; ++i) perm[i] = i;
  // Dims sorted by stride (size-1 dims last), as ATen's compute_non_overlapping_and_dense.
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t required = 1;
  for (size_t i : perm) {
    if (sizes[i] < 2) return true;
    if (strides[i] != required) return false;
    if (__builtin_mul_overflow(required, sizes[i], &required)) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> StaticSizes(const TensorType& type) {
  std::vector<int64_t> sizes;
  for (const Dim& d : type.shape) {
    if (!d.is_static()) return std::nullopt;
    sizes.push_back(d.value());
  }
  return sizes;
}

std::vector<std::vector<std::optional<Strides>>> InferStrides(const Graph& graph) {
  Propagation p(graph);
  p.Run(nullptr);
  return p.Take();
}

std::optional<ImpossibleView> FirstImpossibleView(const Graph& graph) {
  Propagation p(graph);
  std::optional<ImpossibleView> first;
  p.Run(&first);
  return first;
}

std::string IntListText(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

}  // namespace gg::ir
