// Strides: the memory layout of a graph's tensors where it is known exactly, so that the loader
// can refuse an `aten::view` ATen itself would refuse ("view size is not compatible with input
// tensor's size and stride ... Use .reshape(...) instead").
//
// Known: graph inputs and fresh results of listed operators on contiguous inputs are contiguous;
// views (view, reshape, t, transpose, permute, expand, slice, select, unsqueeze, squeeze, split,
// alias, detach, as_strided) of a known layout have a known layout. Anything else is unknown: an
// elementwise op's output follows its inputs' layout in ATen (TensorIterator), so an op on a
// non-contiguous input is unknown, and an unknown layout is never refused. Only static shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gg::ir {

using Strides = std::vector<int64_t>;

// Row-major strides of `sizes` (ATen's contiguous strides: a size-0 or size-1 dim counts as 1).
// This and ComputeViewStrides throw std::overflow_error when a stride passes int64.
Strides ContiguousStrides(const std::vector<int64_t>& sizes);

// at::detail::computeStride: the strides of `old_sizes`/`old_strides` viewed as `new_sizes` (same
// element count), or nullopt when no such view exists (ATen's view raises there).
std::optional<Strides> ComputeViewStrides(const std::vector<int64_t>& old_sizes,
                                          const Strides& old_strides,
                                          const std::vector<int64_t>& new_sizes);

// Whether the layout covers its elements without gaps or overlaps (ATen's
// is_non_overlapping_and_dense).
bool IsNonOverlappingAndDense(const std::vector<int64_t>& sizes, const Strides& strides);

// The static sizes of a type, or nullopt when a dim is symbolic.
std::optional<std::vector<int64_t>> StaticSizes(const TensorType& type);

// Known strides of every tensor output of `graph` ([node][output], nullopt: unknown).
std::vector<std::vector<std::optional<Strides>>> InferStrides(const Graph& graph);

// An `aten::view` (or `_unsafe_view`) whose input layout cannot be viewed as the requested shape.
struct ImpossibleView {
  NodeId node = -1;
  std::vector<int64_t> input_sizes;
  Strides input_strides;
  std::vector<int64_t> sizes;  // the requested shape
};

// The first view of `graph`, in node order, that ATen would refuse (nullopt: none).
std::optional<ImpossibleView> FirstImpossibleView(const Graph& graph);

std::string IntListText(const std::vector<int64_t>& values);  // "[4, 6]"

}  // namespace gg::ir
