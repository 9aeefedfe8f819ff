// TermEval: evaluates a tensor-language term (symbolic/tensor_lang.h) with ATen, given the
// tensors its `(tensor id)` leaves stand for. It gives the lemma self-tests (and relation checks)
// a numeric meaning of every op of the language, independent of the e-graph.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <variant>

#include "symbolic/egraph.h"

namespace gg::runtime {

// The value of a subterm: an integer (`(num k)`), a double (`(flt f)`), or a tensor.
using TermValue = std::variant<int64_t, double, at::Tensor>;

// Raised for a term that cannot be evaluated (an op without a numeric meaning such as `opaque`,
// a missing leaf, an integer where a tensor is needed); never for ATen shape errors, which
// propagate as c10::Error.
class TermEvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Evaluates `expr` (over TensorLanguage::Get().ops()) with leaf id -> tensor.
TermValue EvalTerm(const symbolic::RecExpr& expr, const std::map<int64_t, at::Tensor>& leaves);

}  // namespace gg::runtime
