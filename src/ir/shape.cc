#include "ir/shape.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cctype>
#include <charconv>
#include <stdexcept>

namespace gg::ir {
namespace {

// Symbolic spellings are wrapped in parentheses when they are compound, so that "a*b" composed
// with "+c" stays unambiguous.
std::string Operand(const Dim& d) {
  if (d.is_static()) return std::to_string(d.value());
  const std::string& s = d.symbol();
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return "(" + s + ")";
  }
  return s;
}

Dim Combine(const Dim& a, const Dim& b, char op) {
  return Dim::Symbol(Operand(a) + op + Operand(b));
}

[[noreturn]] void Overflow(int64_t a, char op, int64_t b) {
  throw DimOverflow("size arithmetic overflows a 64-bit integer: " + std::to_string(a) + " " + op +
                    " " + std::to_string(b));
}

int64_t FloorDiv(int64_t a, int64_t b) {
  if (b == 0) throw DimOverflow("size arithmetic divides by zero: " + std::to_string(a) + " / 0");
  if (b == -1 && a == INT64_MIN) Overflow(a, '/', b);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

Dim Dim::Symbol(std::string expression) {
  Dim d;
  d.symbol_ = std::move(expression);
  return d;
}

int64_t Dim::value() const {
  if (!is_static()) throw std::logic_error("Dim::value() on symbolic dim " + symbol_);
  return value_;
}

std::string Dim::ToString() const { return is_static() ? std::to_string(value_) : symbol_; }

Dim operator+(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) {
    int64_t out = 0;
    if (__builtin_add_overflow(a.value_, b.value_, &out)) Overflow(a.value_, '+', b.value_);
    return Dim(out);
  }
  if (a.is_static() && a.value_ == 0) return b;
  if (b.is_static() && b.value_ == 0) return a;
  return Combine(a, b, '+');
}

Dim operator-(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) {
    int64_t out = 0;
    if (__builtin_sub_overflow(a.value_, b.value_, &out)) Overflow(a.value_, '-', b.value_);
    return Dim(out);
  }
  if (b.is_static() && b.value_ == 0) return a;
  if (a == b) return Dim(0);
  return Combine(a, b, '-');
}

Dim operator*(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) {
    int64_t out = 0;
    if (__builtin_mul_overflow(a.value_, b.value_, &out)) Overflow(a.value_, '*', b.value_);
    return Dim(out);
  }
  if (a.is_static() && a.value_ == 1) return b;
  if (b.is_static() && b.value_ == 1) return a;
  if ((a.is_static() && a.value_ == 0) || (b.is_static() && b.value_ == 0)) return Dim(0);
  return Combine(a, b, '*');
}

Dim operator/(const Dim& a, const Dim& b) {
  if (a.is_static() && b.is_static()) return Dim(FloorDiv(a.value_, b.value_));
  if (b.is_static() && b.value_ == 1) return a;
  if (a == b) return Dim(1);
  return Combine(a, b, '/');
}

std::string ShapeToString(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i].ToString();
  }
  return out + "]";
}

Dim NumElements(const Shape& shape) {
  Dim n(1);
  for (const Dim& d : shape) n = n * d;
  return n;
}

bool IsStatic(const Shape& shape) {
  for (const Dim& d : shape) {
    if (!d.is_static()) return false;
  }
  return true;
}

std::optional<int64_t> WrapDim(int64_t dim, int64_t rank) {
  int64_t bound = rank == 0 ? 1 : rank;
  if (dim < -bound || dim >= bound) return std::nullopt;
  return dim < 0 ? dim + bound : dim;
}

std::string TensorType::ToString() const {
  std::string out(ShortName(dtype));
  out += ShapeToString(shape);
  return out;
}

std::optional<TensorType> ParseTensorType(const std::string& text, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<TensorType> {
    if (why) *why = reason;
    return std::nullopt;
  };
  size_t open = text.find('[');
  if (open == std::string::npos || text.empty() || text.back() != ']') {
    return fail("expected a tensor type like f32[8, 1536], got '" + text + "'");
  }
  auto dtype = ParseDType(text.substr(0, open));
  if (!dtype) return fail("unknown dtype '" + text.substr(0, open) + "' in '" + text + "'");
  TensorType type;
  type.dtype = *dtype;
  std::string body = text.substr(open + 1, text.size() - open - 2);
  size_t pos = 0;
  int64_t elements = 1;
  while (pos < body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string::npos) comma = body.size();
    std::string item = body.substr(pos, comma - pos);
    size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b == std::string::npos) return fail("empty dimension in '" + text + "'");
    item = item.substr(b, e - b + 1);
    if (item[0] == '-') {
      return fail("negative dimension '" + item + "' in '" + text +
                  "': extents are non-negative integers or symbols such as s0");
    }
    if (std::isdigit(static_cast<unsigned char>(item[0]))) {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (ec != std::errc() || ptr != item.data() + item.size()) {
        return fail("bad dimension '" + item + "' in '" + text + "'");
      }
      type.shape.emplace_back(v);
      // The product of the nonzero extents must fit, so every partial product does too.
      if (v != 0 && __builtin_mul_overflow(elements, v, &elements)) {
        return fail("the element count of '" + text + "' overflows a 64-bit integer");
      }
    } else {
      for (char c : item) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '*' || c == '+' ||
              c == '-' || c == '/' || c == '(' || c == ')')) {
          return fail("bad symbolic dimension '" + item + "' in '" + text + "'");
        }
      }
      if (std::none_of(item.begin(), item.end(), [](char c) {
            return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
          })) {
        return fail("bad dimension '" + item + "' in '" + text +
                    "' (expected an integer or a symbol such as s0)");
      }
      type.shape.push_back(Dim::Symbol(item));
    }
    pos = comma + 1;
  }
  return type;
}

}  // namespace gg::ir
