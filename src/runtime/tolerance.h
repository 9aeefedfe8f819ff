// Tolerance: how far S's and D's values of one tensor may differ through floating-point rounding
// alone, per tensor, from the dtype and the computation that produced it (not a single rtol).
//
// The model is Monte Carlo arithmetic (Parker 1997; TTrace, arXiv 2506.09280, estimates its
// thresholds the same way, from a perturbed reference run): S runs once more with every computing
// operator's outputs perturbed by a random relative error of the size its rounding makes: one
// rounding of its dtype (unit roundoff u: bf16 2^-8, fp16 2^-11, fp32 2^-24, fp64 2^-53), plus,
// for an operator whose outputs sum K terms (matrix products, norms, softmax), sqrt(log2 K)
// roundings of its dtype (partial sums rounded along a tree: tensor-parallel partials, split-K)
// and sqrt(K) roundings of the accumulation precision (float32 for 16-bit types), the
// probabilistic error of a sum (Higham & Mary 2019). Perturbations propagate through the rest of
// the graph exactly as rounding errors do, so the spread between the perturbed and the plain run,
// sigma_t (RMS over a fixed sample of elements; a tensor of fewer than 8 elements that fails is
// judged again on several perturbed runs, check.cc's ReferenceRunsFor), is the rounding noise of
// tensor t at its depth in the graph. S and a correct D then differ elementwise by at most lambda *
// sqrt(2) * sigma_t (each side has its own rounding noise), lambda = sqrt(2 ln(2 N / delta)) the
// Gaussian tail bound for the largest of N elements with false-alarm probability delta = 1e-6 per
// tensor. The perturbations are relative, so sigma_t is the noise of a typical element: an element
// |S_i| above the RMS m_t of the sampled elements may differ by that bound times |S_i| / m_t
// (compare.h). A single sigma_t held the largest elements of accumulations
// (embedding_dense_backward, index_put with accumulate: gradients summed over repeated token ids
// or expert slots) to the noise of typical ones, failing correct programs by ~1.2x. sigma_t is
// floored at one rounding of the tensor's RMS, integers and booleans must be equal. Data-movement
// operators (views, slices, concatenation, gathers, embedding lookups, copies) are exact and are
// not perturbed.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"

namespace gg::runtime {

// Unit roundoff of a dtype (0 for integers and booleans).
double UnitRoundoff(ir::DType dtype);

// Whether `node` moves data without rounding (views, slices, cat, gathers, copies, collectives
// that only move data): its registry entry's rounding trait (ir::Rounding).
bool IsExactOperator(const ir::Node& node);

// The number of terms one output element of `node` sums (the inner dimension of a matrix
// product, the normalized or reduced extent: ir::Rounding::kSumsLastDim), 1 for elementwise
// operators; an operator the registry does not know counts its first input's last dim.
int64_t ReductionLength(const ir::Graph& graph, const ir::Node& node);

// Relative perturbation amplitude of `node`'s floating outputs under the model (0: exact).
double PerturbationAmplitude(const ir::Graph& graph, const ir::Node& node, ir::DType dtype);

// Multiplies every element of the floating tensor `value` by (1 + a * e), e uniform in [-1, 1),
// (in float32, float64 for float64 values), rounded back to its dtype.
at::Tensor Perturb(const at::Tensor& value, double amplitude, at::Generator& generator);

// lambda = sqrt(2 ln(2 N / delta)) for N elements and delta = 1e-6.
double TailFactor(int64_t elements);

}  // namespace gg::runtime
