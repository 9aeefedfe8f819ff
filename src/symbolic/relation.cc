#include "symbolic/relation.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>

#include "util/diagnostic.h"

namespace gg::symbolic {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

RelExpr Require(RelExpr e, const char* what) {
  if (!e.valid()) throw std::invalid_argument(std::string(what) + ": empty child expression");
  return e;
}

void RequireAll(const std::vector<RelExpr>& children, const char* what) {
  if (children.empty()) throw std::invalid_argument(std::string(what) + ": no children");
  for (const RelExpr& c : children) Require(c, what);
}

std::string IntList(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(values[i]);
  }
  return out + "]";
}

std::string JoinChildren(const std::vector<RelExpr>& children) {
  std::string out;
  for (size_t i = 0; i < children.size(); ++i) {
    if (i) out += ", ";
    out += children[i].ToString();
  }
  return out;
}

// ---- type inference ------------------------------------------------------------------------

using TypeResult = std::optional<ir::TensorType>;

TypeResult Fail(std::string* why, const std::string& reason) {
  if (why) *why = reason;
  return std::nullopt;
}

TypeResult Infer(const RelExpr& expr, const ir::Program& program, std::string* why);

// Types of all children, or nullopt (with *why set) at the first failure.
std::optional<std::vector<ir::TensorType>> InferAll(const std::vector<RelExpr>& children,
                                                    const ir::Program& program, std::string* why) {
  std::vector<ir::TensorType> types;
  for (const RelExpr& c : children) {
    TypeResult t = Infer(c, program, why);
    if (!t) return std::nullopt;
    types.push_back(*t);
  }
  return types;
}

TypeResult InferElementwise(const char* op, const std::vector<RelExpr>& children,
                            const RelExpr& whole, const ir::Program& program, std::string* why) {
  auto types = InferAll(children, program, why);
  if (!types) return std::nullopt;
  for (size_t i = 1; i < types->size(); ++i) {
    if ((*types)[i] != (*types)[0]) {
      return Fail(why, std::string(op) + " of tensors of different types " +
                           (*types)[0].ToString() + " and " + (*types)[i].ToString() + " in " +
                           whole.ToString());
    }
  }
  return (*types)[0];
}

TypeResult Infer(const RelExpr& expr, const ir::Program& program, std::string* why) {
  if (!expr.valid()) return Fail(why, "empty relation expression");
  return std::visit(
      Overloaded{
          [&](const DTensor& t) -> TypeResult {
            if (t.rank < 0 || t.rank >= program.world_size()) {
              return Fail(why, "rank " + std::to_string(t.rank) + " of " + t.name +
                                   " is outside the distributed program (" +
                                   std::to_string(program.world_size()) + " ranks)");
            }
            const ir::Graph& g = program.rank(t.rank);
            if (t.tensor.node < 0 || t.tensor.node >= static_cast<int32_t>(g.nodes.size()) ||
                t.tensor.output < 0 ||
                t.tensor.output >= static_cast<int32_t>(g.nodes[t.tensor.node].outputs.size())) {
              return Fail(why, "tensor " + t.name + " does not exist on rank " +
                                   std::to_string(t.rank));
            }
            const auto& type = g.nodes[t.tensor.node].outputs[t.tensor.output].type;
            if (!type) return Fail(why, t.name + "@" + std::to_string(t.rank) + " is not a tensor");
            return *type;
          },
          [&](const Concat& c) -> TypeResult {
            auto types = InferAll(c.children, program, why);
            if (!types) return std::nullopt;
            ir::TensorType out = (*types)[0];
            auto dim = ir::WrapDim(c.dim, static_cast<int64_t>(out.shape.size()));
            if (!dim || out.shape.empty()) {
              return Fail(why, "concat dimension " + std::to_string(c.dim) + " is out of range for " +
                                   out.ToString() + " in " + expr.ToString());
            }
            for (size_t i = 1; i < types->size(); ++i) {
              const ir::TensorType& t = (*types)[i];
              bool fits = t.dtype == out.dtype && t.shape.size() == out.shape.size();
              for (size_t d = 0; fits && d < t.shape.size(); ++d) {
                if (static_cast<int64_t>(d) != *dim && t.shape[d] != out.shape[d]) fits = false;
              }
              if (!fits) {
                return Fail(why, "concat along dimension " + std::to_string(*dim) + " of " +
                                     (*types)[0].ToString() + " and " + t.ToString() +
                                     " (they must agree outside that dimension) in " +
                                     expr.ToString());
              }
              out.shape[*dim] = out.shape[*dim] + t.shape[*dim];
            }
            return out;
          },
          [&](const Slice& s) -> TypeResult {
            TypeResult t = Infer(s.child, program, why);
            if (!t) return std::nullopt;
            auto dim = ir::WrapDim(s.dim, static_cast<int64_t>(t->shape.size()));
            if (!dim || t->shape.empty()) {
              return Fail(why, "slice dimension " + std::to_string(s.dim) + " is out of range for " +
                                   t->ToString() + " in " + expr.ToString());
            }
            const ir::Dim& size = t->shape[*dim];
            bool in_range = s.start >= 0 && s.start <= s.end &&
                            (!size.is_static() || s.end <= size.value());
            if (!in_range) {
              return Fail(why, "slice [" + std::to_string(s.start) + ", " + std::to_string(s.end) +
                                   ") is outside dimension " + std::to_string(*dim) + " of " +
                                   t->ToString() + " in " + expr.ToString());
            }
            t->shape[*dim] = ir::Dim(s.end - s.start);
            return t;
          },
          [&](const Sum& s) { return InferElementwise("sum", s.children, expr, program, why); },
          [&](const Max& s) { return InferElementwise("max", s.children, expr, program, why); },
          [&](const Min& s) { return InferElementwise("min", s.children, expr, program, why); },
          [&](const Scale& s) { return Infer(s.child, program, why); },
          [&](const Reshape& r) -> TypeResult {
            TypeResult t = Infer(r.child, program, why);
            if (!t) return std::nullopt;
            if (!ir::IsStatic(t->shape)) {
              return Fail(why, "reshape of a tensor with symbolic shape " + t->ToString() + " in " +
                                   expr.ToString());
            }
            int64_t total = ir::NumElements(t->shape).value();
            int64_t known = 1;
            int inferred = -1;
            for (size_t i = 0; i < r.shape.size(); ++i) {
              if (r.shape[i] == -1 && inferred < 0) {
                inferred = static_cast<int>(i);
              } else if (r.shape[i] < 0) {
                return Fail(why, "bad reshape target " + IntList(r.shape) + " in " + expr.ToString());
              } else if (__builtin_mul_overflow(known, r.shape[i], &known)) {
                return Fail(why, "reshape target " + IntList(r.shape) + " is too large in " +
                                     expr.ToString());
              }
            }
            ir::Shape shape(r.shape.begin(), r.shape.end());
            if (inferred >= 0) {
              if (known == 0 || total % known != 0) {
                return Fail(why, "cannot reshape " + t->ToString() + " to " + IntList(r.shape) +
                                     " in " + expr.ToString());
              }
              shape[inferred] = ir::Dim(total / known);
            } else if (known != total) {
              return Fail(why, "cannot reshape " + t->ToString() + " (" + std::to_string(total) +
                                   " elements) to " + IntList(r.shape) + " in " + expr.ToString());
            }
            t->shape = shape;
            return t;
          },
          [&](const Expand& e) -> TypeResult {
            TypeResult t = Infer(e.child, program, why);
            if (!t) return std::nullopt;
            const size_t rank = e.sizes.size(), in = t->shape.size();
            bool fits = rank >= in;
            ir::Shape shape;
            for (size_t i = 0; fits && i < rank; ++i) {
              fits = e.sizes[i] >= 0 && (i < rank - in || t->shape[i - (rank - in)] == ir::Dim(1) ||
                                         t->shape[i - (rank - in)] == ir::Dim(e.sizes[i]));
              shape.emplace_back(e.sizes[i]);
            }
            if (!fits) {
              return Fail(why, "cannot expand " + t->ToString() + " to " + IntList(e.sizes) +
                                   " in " + expr.ToString());
            }
            t->shape = shape;
            return t;
          },
          [&](const Transpose& tr) -> TypeResult {
            TypeResult t = Infer(tr.child, program, why);
            if (!t) return std::nullopt;
            auto rank = static_cast<int64_t>(t->shape.size());
            auto d0 = ir::WrapDim(tr.d0, rank), d1 = ir::WrapDim(tr.d1, rank);
            if (!d0 || !d1) {
              return Fail(why, "transpose dimensions out of range for " + t->ToString() + " in " +
                                   expr.ToString());
            }
            if (rank > 0) std::swap(t->shape[*d0], t->shape[*d1]);
            return t;
          },
          [&](const Permute& p) -> TypeResult {
            TypeResult t = Infer(p.child, program, why);
            if (!t) return std::nullopt;
            auto rank = static_cast<int64_t>(t->shape.size());
            std::set<int64_t> seen;
            ir::Shape shape;
            for (int64_t d : p.perm) {
              auto w = ir::WrapDim(d, rank);
              if (!w || rank == 0 || !seen.insert(*w).second) break;
              shape.push_back(t->shape[*w]);
            }
            if (static_cast<int64_t>(p.perm.size()) != rank || shape.size() != p.perm.size()) {
              return Fail(why, "permutation " + IntList(p.perm) + " does not fit " + t->ToString() +
                                   " in " + expr.ToString());
            }
            t->shape = shape;
            return t;
          },
      },
      expr.node().kind);
}

// ---- parser ----------------------------------------------------------------------------------

class Parser {
 public:
  Parser(const std::string& text, const ir::Program& program, const std::string& file, int line)
      : text_(text), program_(program), file_(file), line_(line) {}

  RelExpr ParseAll() {
    RelExpr e = ParseExpr();
    SkipSpace();
    if (pos_ != text_.size()) Error("unexpected '" + text_.substr(pos_, 10) + "' after expression");
    return e;
  }

 private:
  [[noreturn]] void Error(const std::string& problem) {
    throw InputError(file_, line_,
                     "in relation '" + text_ + "' at column " + std::to_string(pos_ + 1) + ": " +
                         problem);
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void Expect(char c) {
    if (!Accept(c)) Error(std::string("expected '") + c + "'");
  }

  std::string Identifier() {
    SkipSpace();
    size_t b = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            text_[pos_] == '.' || text_[pos_] == '#')) {
      ++pos_;
    }
    if (b == pos_) Error("expected a name");
    return text_.substr(b, pos_ - b);
  }

  int64_t Int() {
    SkipSpace();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
    if (ec != std::errc()) Error("expected an integer");
    pos_ = ptr - text_.data();
    return v;
  }

  double Number() {
    SkipSpace();
    const char* begin = text_.c_str() + pos_;
    char* end = nullptr;
    double v = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(v)) Error("expected a number");
    pos_ += end - begin;
    return v;
  }

  std::vector<int64_t> IntListArg() {
    Expect('[');
    std::vector<int64_t> values;
    if (!Accept(']')) {
      do values.push_back(Int());
      while (Accept(','));
      Expect(']');
    }
    return values;
  }

  std::vector<RelExpr> Children() {
    std::vector<RelExpr> children;
    do children.push_back(ParseExpr());
    while (Accept(','));
    return children;
  }

  RelExpr ParseExpr() {
    // Bounded nesting keeps hostile input from exhausting the stack.
    if (++depth_ > 500) Error("expression nested too deeply");
    RelExpr e = ParseNode();
    --depth_;
    return e;
  }

  RelExpr ParseNode() {
    std::string name = Identifier();
    if (Accept('@')) {
      int64_t rank = Int();
      if (rank < 0 || rank >= program_.world_size()) {
        Error("rank " + std::to_string(rank) + " is outside the distributed program (" +
              std::to_string(program_.world_size()) + " ranks)");
      }
      auto ref = program_.rank(static_cast<int32_t>(rank)).Find(name);
      if (!ref) Error("no tensor named '" + name + "' on rank " + std::to_string(rank));
      return RelExpr::Tensor(static_cast<int32_t>(rank), *ref, name);
    }
    Expect('(');
    RelExpr out;
    if (name == "concat") {
      int64_t dim = Int();
      Expect(',');
      out = RelExpr::Concat(dim, Children());
    } else if (name == "slice") {
      RelExpr child = ParseExpr();
      Expect(',');
      int64_t dim = Int();
      Expect(',');
      int64_t start = Int();
      Expect(',');
      int64_t end = Int();
      out = RelExpr::Slice(child, dim, start, end);
    } else if (name == "sum") {
      out = RelExpr::Sum(Children());
    } else if (name == "max") {
      out = RelExpr::Max(Children());
    } else if (name == "min") {
      out = RelExpr::Min(Children());
    } else if (name == "scale") {
      double factor = Number();
      Expect(',');
      out = RelExpr::Scale(factor, ParseExpr());
    } else if (name == "reshape") {
      RelExpr child = ParseExpr();
      Expect(',');
      out = RelExpr::Reshape(child, IntListArg());
    } else if (name == "expand") {
      RelExpr child = ParseExpr();
      Expect(',');
      out = RelExpr::Expand(child, IntListArg());
    } else if (name == "transpose") {
      RelExpr child = ParseExpr();
      Expect(',');
      int64_t d0 = Int();
      Expect(',');
      int64_t d1 = Int();
      out = RelExpr::Transpose(child, d0, d1);
    } else if (name == "permute") {
      RelExpr child = ParseExpr();
      Expect(',');
      out = RelExpr::Permute(child, IntListArg());
    } else {
      Error("unknown relation operator '" + name +
            "' (expected concat, slice, sum, max, min, scale, reshape, expand, transpose, "
            "permute, or a tensor name@rank)");
    }
    Expect(')');
    return out;
  }

  const std::string& text_;
  const ir::Program& program_;
  const std::string& file_;
  int line_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

// ---- construction ----------------------------------------------------------------------------

RelExpr RelExpr::Tensor(int32_t rank, ir::TensorRef tensor, std::string name) {
  return RelExpr(std::make_shared<const RelNode>(RelNode{DTensor{rank, tensor, std::move(name)}}));
}

RelExpr RelExpr::Tensor(const ir::Program& program, int32_t rank, const std::string& name) {
  if (rank < 0 || rank >= program.world_size()) {
    throw InputError("", 0,
                     "rank " + std::to_string(rank) + " of " + name +
                         " is outside the distributed program (" +
                         std::to_string(program.world_size()) + " ranks)");
  }
  auto ref = program.rank(rank).Find(name);
  if (!ref) {
    throw InputError(program.rank(rank).file, 0,
                     "no tensor named '" + name + "' on rank " + std::to_string(rank));
  }
  return Tensor(rank, *ref, name);
}

RelExpr RelExpr::Concat(int64_t dim, std::vector<RelExpr> children) {
  RequireAll(children, "concat");
  return RelExpr(
      std::make_shared<const RelNode>(RelNode{symbolic::Concat{dim, std::move(children)}}));
}

RelExpr RelExpr::Slice(RelExpr child, int64_t dim, int64_t start, int64_t end) {
  return RelExpr(std::make_shared<const RelNode>(
      RelNode{symbolic::Slice{dim, start, end, Require(std::move(child), "slice")}}));
}

RelExpr RelExpr::Sum(std::vector<RelExpr> children) {
  RequireAll(children, "sum");
  return RelExpr(std::make_shared<const RelNode>(RelNode{symbolic::Sum{std::move(children)}}));
}

RelExpr RelExpr::Max(std::vector<RelExpr> children) {
  RequireAll(children, "max");
  return RelExpr(std::make_shared<const RelNode>(RelNode{symbolic::Max{std::move(children)}}));
}

RelExpr RelExpr::Min(std::vector<RelExpr> children) {
  RequireAll(children, "min");
  return RelExpr(std::make_shared<const RelNode>(RelNode{symbolic::Min{std::move(children)}}));
}

RelExpr RelExpr::Scale(double factor, RelExpr child) {
  return RelExpr(std::make_shared<const RelNode>(
      RelNode{symbolic::Scale{factor, Require(std::move(child), "scale")}}));
}

RelExpr RelExpr::Reshape(RelExpr child, std::vector<int64_t> shape) {
  return RelExpr(std::make_shared<const RelNode>(
      RelNode{symbolic::Reshape{std::move(shape), Require(std::move(child), "reshape")}}));
}

RelExpr RelExpr::Expand(RelExpr child, std::vector<int64_t> sizes) {
  return RelExpr(std::make_shared<const RelNode>(
      RelNode{symbolic::Expand{std::move(sizes), Require(std::move(child), "expand")}}));
}

RelExpr RelExpr::Transpose(RelExpr child, int64_t d0, int64_t d1) {
  return RelExpr(std::make_shared<const RelNode>(
      RelNode{symbolic::Transpose{d0, d1, Require(std::move(child), "transpose")}}));
}

RelExpr RelExpr::Permute(RelExpr child, std::vector<int64_t> perm) {
  return RelExpr(std::make_shared<const RelNode>(
      RelNode{symbolic::Permute{std::move(perm), Require(std::move(child), "permute")}}));
}

// ---- printing and equality -------------------------------------------------------------------

std::string FormatFactor(double factor) {
  char buffer[64];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), factor);
  if (ec != std::errc()) return std::to_string(factor);
  return std::string(buffer, ptr);
}

std::string RelExpr::ToString() const {
  if (!valid()) return "<empty>";
  return std::visit(
      Overloaded{
          [](const DTensor& t) { return t.name + "@" + std::to_string(t.rank); },
          [](const symbolic::Concat& c) {
            return "concat(" + std::to_string(c.dim) + ", " + JoinChildren(c.children) + ")";
          },
          [](const symbolic::Slice& s) {
            return "slice(" + s.child.ToString() + ", " + std::to_string(s.dim) + ", " +
                   std::to_string(s.start) + ", " + std::to_string(s.end) + ")";
          },
          [](const symbolic::Sum& s) { return "sum(" + JoinChildren(s.children) + ")"; },
          [](const symbolic::Max& s) { return "max(" + JoinChildren(s.children) + ")"; },
          [](const symbolic::Min& s) { return "min(" + JoinChildren(s.children) + ")"; },
          [](const symbolic::Scale& s) {
            return "scale(" + FormatFactor(s.factor) + ", " + s.child.ToString() + ")";
          },
          [](const symbolic::Reshape& r) {
            return "reshape(" + r.child.ToString() + ", " + IntList(r.shape) + ")";
          },
          [](const symbolic::Expand& e) {
            return "expand(" + e.child.ToString() + ", " + IntList(e.sizes) + ")";
          },
          [](const symbolic::Transpose& t) {
            return "transpose(" + t.child.ToString() + ", " + std::to_string(t.d0) + ", " +
                   std::to_string(t.d1) + ")";
          },
          [](const symbolic::Permute& p) {
            return "permute(" + p.child.ToString() + ", " + IntList(p.perm) + ")";
          },
      },
      node_->kind);
}

bool operator==(const RelExpr& a, const RelExpr& b) {
  if (a.node_ == b.node_) return true;
  if (!a.valid() || !b.valid()) return false;
  const auto& ka = a.node_->kind;
  const auto& kb = b.node_->kind;
  if (ka.index() != kb.index()) return false;
  return std::visit(Overloaded{
                        [&](const DTensor& x) {
                          const auto& y = std::get<DTensor>(kb);
                          return x.rank == y.rank && x.tensor == y.tensor;
                        },
                        [&](const symbolic::Concat& x) {
                          const auto& y = std::get<symbolic::Concat>(kb);
                          return x.dim == y.dim && x.children == y.children;
                        },
                        [&](const symbolic::Slice& x) {
                          const auto& y = std::get<symbolic::Slice>(kb);
                          return x.dim == y.dim && x.start == y.start && x.end == y.end &&
                                 x.child == y.child;
                        },
                        [&](const symbolic::Sum& x) {
                          return x.children == std::get<symbolic::Sum>(kb).children;
                        },
                        [&](const symbolic::Max& x) {
                          return x.children == std::get<symbolic::Max>(kb).children;
                        },
                        [&](const symbolic::Min& x) {
                          return x.children == std::get<symbolic::Min>(kb).children;
                        },
                        [&](const symbolic::Scale& x) {
                          const auto& y = std::get<symbolic::Scale>(kb);
                          return x.factor == y.factor && x.child == y.child;
                        },
                        [&](const symbolic::Reshape& x) {
                          const auto& y = std::get<symbolic::Reshape>(kb);
                          return x.shape == y.shape && x.child == y.child;
                        },
                        [&](const symbolic::Expand& x) {
                          const auto& y = std::get<symbolic::Expand>(kb);
                          return x.sizes == y.sizes && x.child == y.child;
                        },
                        [&](const symbolic::Transpose& x) {
                          const auto& y = std::get<symbolic::Transpose>(kb);
                          return x.d0 == y.d0 && x.d1 == y.d1 && x.child == y.child;
                        },
                        [&](const symbolic::Permute& x) {
                          const auto& y = std::get<symbolic::Permute>(kb);
                          return x.perm == y.perm && x.child == y.child;
                        },
                    },
                    ka);
}

namespace {

size_t Mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

size_t MixInts(size_t seed, const std::vector<int64_t>& values) {
  for (int64_t v : values) seed = Mix(seed, std::hash<int64_t>()(v));
  return seed;
}

}  // namespace

size_t RelExprHash::operator()(const RelExpr& expr) const {
  if (!expr.valid()) return 0;
  const auto& kind = expr.node().kind;
  size_t h = Mix(0, kind.index());
  auto children = [&](size_t seed, const std::vector<RelExpr>& cs) {
    for (const RelExpr& c : cs) seed = Mix(seed, (*this)(c));
    return seed;
  };
  return std::visit(
      Overloaded{
          [&](const DTensor& x) {
            h = Mix(h, std::hash<int32_t>()(x.rank));
            h = Mix(h, std::hash<int32_t>()(x.tensor.node));
            return Mix(h, std::hash<int32_t>()(x.tensor.output));
          },
          [&](const symbolic::Concat& x) {
            return children(Mix(h, std::hash<int64_t>()(x.dim)), x.children);
          },
          [&](const symbolic::Slice& x) {
            return Mix(MixInts(h, {x.dim, x.start, x.end}), (*this)(x.child));
          },
          [&](const symbolic::Sum& x) { return children(h, x.children); },
          [&](const symbolic::Max& x) { return children(h, x.children); },
          [&](const symbolic::Min& x) { return children(h, x.children); },
          [&](const symbolic::Scale& x) {
            // 0.0 == -0.0 must hash alike; a NaN equals nothing, so any hash serves it.
            size_t f = x.factor == 0.0 ? 0 : std::hash<double>()(x.factor);
            return Mix(Mix(h, f), (*this)(x.child));
          },
          [&](const symbolic::Reshape& x) { return Mix(MixInts(h, x.shape), (*this)(x.child)); },
          [&](const symbolic::Expand& x) { return Mix(MixInts(h, x.sizes), (*this)(x.child)); },
          [&](const symbolic::Transpose& x) {
            return Mix(MixInts(h, {x.d0, x.d1}), (*this)(x.child));
          },
          [&](const symbolic::Permute& x) { return Mix(MixInts(h, x.perm), (*this)(x.child)); },
      },
      kind);
}

std::optional<ir::TensorType> InferRelType(const RelExpr& expr, const ir::Program& program,
                                           std::string* why) {
  return Infer(expr, program, why);
}

RelExpr ParseRelExpr(const std::string& text, const ir::Program& program, const std::string& file,
                     int line) {
  return Parser(text, program, file, line).ParseAll();
}

std::string RelationToString(const Relation& relation, const ir::Graph& s_graph) {
  return s_graph.ValueName(relation.s_tensor) + " == " + relation.expr.ToString();
}

}  // namespace gg::symbolic
