// RelationEval: the numeric meaning of a relation's right-hand side. Evaluates a RelExpr
// (concat, slice, sum/max/min over ranks, scale, reshape, transpose, permute over D tensors) with
// ATen, given the values of its D leaves — the same expression the symbolic engine proves and the
// report prints.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>

#include "ir/graph.h"
#include "symbolic/relation.h"

namespace gg::runtime {

// The value of D tensor `ref` of rank `rank`; returns an undefined tensor when it is not known.
using DValueLookup = std::function<at::Tensor(int32_t rank, ir::TensorRef ref)>;

// Evaluates `expr`. Sums, max and min keep the leaves' dtype (as the collectives do). Throws
// std::invalid_argument naming the leaf when a value is missing, and for shapes that do not fit.
at::Tensor EvalRelExpr(const symbolic::RelExpr& expr, const DValueLookup& lookup);

}  // namespace gg::runtime
