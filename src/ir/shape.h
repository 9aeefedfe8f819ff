// Shape and TensorType: the static description of a tensor (dtype and dimensions).
//
// A dimension is either a known integer or a symbol ("s0", or an expression over symbols such as
// "s0*8" produced by shape rules). Shape rules compute with Dim so that graphs captured with
// dynamic shapes keep working; two symbolic dims are equal when their spellings are equal.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace gg::ir {

// Static size arithmetic that overflows int64 (or divides by zero): bad input, never a wrapped
// size. Shape rules let it propagate; the frontend reports it as a shape error of the node.
class DimOverflow : public std::overflow_error {
 public:
  using std::overflow_error::overflow_error;
};

class Dim {
 public:
  Dim() = default;
  Dim(int64_t value) : value_(value) {}  // NOLINT: implicit on purpose, dims are mostly ints.
  static Dim Symbol(std::string expression);

  bool is_static() const { return symbol_.empty(); }
  // The value of a static dim; calling it on a symbolic dim is a programming error.
  int64_t value() const;
  const std::string& symbol() const { return symbol_; }
  std::string ToString() const;

  friend bool operator==(const Dim& a, const Dim& b) {
    return a.value_ == b.value_ && a.symbol_ == b.symbol_;
  }
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }
  friend bool operator<(const Dim& a, const Dim& b) {
    return a.symbol_ != b.symbol_ ? a.symbol_ < b.symbol_ : a.value_ < b.value_;
  }

  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  // Floor division; symbolic when either side is.
  friend Dim operator/(const Dim& a, const Dim& b);

 private:
  int64_t value_ = 0;
  std::string symbol_;
};

using Shape = std::vector<Dim>;

std::string ShapeToString(const Shape& shape);  // "[8, 1536, s0]"
// Product of all dims (1 for a scalar).
Dim NumElements(const Shape& shape);
bool IsStatic(const Shape& shape);
// Wraps a possibly negative dimension index into [0, rank); nullopt when out of range.
// rank 0 accepts -1 and 0, as torch does.
std::optional<int64_t> WrapDim(int64_t dim, int64_t rank);

struct TensorType {
  DType dtype = DType::kFloat32;
  Shape shape;

  // FX annotation spelling: f32[8, 1536]
  std::string ToString() const;
  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
  friend bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }
};

// Parses "f32[8, 1536]" / "i64[]" / "f32[s0, 8]"; nullopt with a reason in *why on failure.
std::optional<TensorType> ParseTensorType(const std::string& text, std::string* why);

}  // namespace gg::ir
