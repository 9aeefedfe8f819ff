#include "ir/op_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {
namespace {

// ---- a small Python-literal reader for test arguments and corpus lines -----------------------
// "$N" is input N of the test graph; other bare names are resolved by the caller (corpus values).
class LiteralReader {
 public:
  using Resolver = std::function<std::optional<Value>(const std::string&)>;
  LiteralReader(std::string text, Resolver resolve)
      : text_(std::move(text)), resolve_(std::move(resolve)) {}

  // Reads "a, b, key = value" up to the end (or up to `close`).
  void ReadArgs(std::vector<Value>* args, std::vector<NamedArg>* kwargs, char close = 0) {
    while (true) {
      SkipSpace();
      if (AtEnd() || (close && Peek() == close)) return;
      size_t save = pos_;
      std::string word = Word();
      SkipSpace();
      if (!word.empty() && !AtEnd() && Peek() == '=' && Peek(1) != '=') {
        ++pos_;
        kwargs->push_back({word, ReadValue()});
      } else {
        pos_ = save;
        args->push_back(ReadValue());
      }
      SkipSpace();
      if (!AtEnd() && Peek() == ',') ++pos_;
    }
  }

  Value ReadValue() {
    SkipSpace();
    if (AtEnd()) Fail("unexpected end");
    char c = Peek();
    if (c == '$') {
      ++pos_;
      return TensorRef{static_cast<NodeId>(std::stoi(Word())), 0};
    }
    if (c == '[' || c == '(') {
      char close = c == '[' ? ']' : ')';
      ++pos_;
      Value::List items;
      while (true) {
        SkipSpace();
        if (Peek() == close) break;
        items.push_back(ReadValue());
        SkipSpace();
        if (Peek() == ',') ++pos_;
      }
      ++pos_;
      return items;
    }
    if (c == '\'' || c == '"') {
      size_t end = text_.find(c, pos_ + 1);
      std::string s = text_.substr(pos_ + 1, end - pos_ - 1);
      pos_ = end + 1;
      return s;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.') {
      size_t start = pos_;
      bool floating = false;
      while (!AtEnd() && (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '.' ||
                          Peek() == '-' || Peek() == '+')) {
        char d = Peek();
        if (d == '.' || d == 'e' || d == 'E' || d == 'i' || d == 'n') floating = true;
        ++pos_;
      }
      std::string num = text_.substr(start, pos_ - start);
      if (num == "-inf") return -std::numeric_limits<double>::infinity();
      if (floating) return std::stod(num);
      return static_cast<int64_t>(std::stoll(num));
    }
    std::string word = Word();
    if (word == "True") return true;
    if (word == "False") return false;
    if (word == "None") return None{};
    if (word == "inf") return std::numeric_limits<double>::infinity();
    if (word == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (word == "device") {
      SkipSpace();
      ++pos_;  // '('
      std::vector<Value> args;
      std::vector<NamedArg> kwargs;
      ReadArgs(&args, &kwargs, ')');
      ++pos_;
      Device d;
      for (const NamedArg& kw : kwargs) {
        if (kw.name == "type") d.type = kw.value.as_string();
        if (kw.name == "index") d.index = static_cast<int32_t>(kw.value.as_int());
      }
      return d;
    }
    if (word.rfind("torch.ops.", 0) == 0) {
      auto op = OpName::Parse(word);
      if (!op) Fail("bad operator " + word);
      return OpRefValue{op->ToString()};
    }
    if (word.rfind("torch.", 0) == 0) {
      if (auto d = ParseDType(word)) return *d;
      return EnumValue{word};
    }
    if (resolve_) {
      if (auto v = resolve_(word)) return *v;
    }
    Fail("unknown name '" + word + "'");
  }

 private:
  [[noreturn]] void Fail(const std::string& why) const {
    throw std::runtime_error("test literal '" + text_ + "': " + why);
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void SkipSpace() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(Peek()))) ++pos_;
  }
  std::string Word() {
    size_t start = pos_;
    while (!AtEnd() && (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '_' ||
                        Peek() == '.')) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }

  std::string text_;
  Resolver resolve_;
  size_t pos_ = 0;
};

TensorType MustParse(const std::string& text) {
  std::string why;
  auto t = ParseTensorType(text, &why);
  if (!t) throw std::runtime_error(why);
  return *t;
}

std::string Render(const std::vector<std::optional<TensorType>>& outputs) {
  std::string out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (i) out += "; ";
    out += outputs[i] ? outputs[i]->ToString() : "None";
  }
  return out;
}

// One operator call on fresh graph inputs.
struct Case {
  std::string op;                   // "aten::mm" or "aten::add.Tensor"
  std::vector<std::string> inputs;  // types of $0, $1, ...
  std::string args;                 // Python-style arguments
  std::string expected;             // "f32[8, 4]", outputs joined by "; ", None for no tensor
  bool functionalized = false;
  int32_t group_size = 0;
};

struct Built {
  Graph graph;
  Node node;
};

Built Build(const Case& c) {
  Built b;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    Node in;
    in.kind = NodeKind::kInput;
    in.name = "in" + std::to_string(i);
    in.outputs.push_back({in.name, MustParse(c.inputs[i])});
    b.graph.AddNode(std::move(in));
  }
  auto op = OpName::Parse(c.op);
  if (!op) throw std::runtime_error("bad op " + c.op);
  b.node.op = *op;
  b.node.name = "node";
  b.node.functionalized = c.functionalized;
  LiteralReader(c.args, nullptr).ReadArgs(&b.node.args, &b.node.kwargs);
  return b;
}

std::string InferCase(const Case& c) {
  Built b = Build(c);
  return Render(OpRegistry::Default().Infer(b.graph, b.node, c.group_size));
}

std::string Key(const std::string& op) {
  OpName name = *OpName::Parse(op);
  if (name.overload.empty()) name.overload = "default";
  return name.ToString();
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> kCases = {
      // ---- elementwise ----
      {"aten::add.Tensor", {"f32[8, 1]", "f32[1, 4]"}, "$0, $1", "f32[8, 4]"},
      {"aten::add.Tensor", {"i64[32768]", "i64[32768]"}, "$0, $1", "i64[32768]"},
      {"aten::add.Tensor", {"i64[4]"}, "$0, 0.5", "f32[4]"},
      {"aten::add.Tensor", {"f32[s0, 768]", "f32[768]"}, "$0, $1, alpha=2", "f32[s0, 768]"},
      {"aten::add.Scalar", {"i32[3]"}, "$0, 2", "i32[3]"},
      {"aten::sub.Tensor", {"i64[8, 1536]"}, "$0, 0", "i64[8, 1536]"},
      {"aten::sub.Scalar", {"bf16[2]"}, "$0, 1.5", "bf16[2]"},
      {"aten::rsub.Scalar", {"f16[2, 3]"}, "$0, 1", "f16[2, 3]"},
      {"aten::mul.Tensor", {"b8[32768]"}, "$0, 0", "i64[32768]"},
      {"aten::mul.Tensor", {"f32[2, 3]", "f64[]"}, "$0, $1", "f32[2, 3]"},
      {"aten::mul.Tensor", {"i32[2]", "f64[]"}, "$0, $1", "f64[2]"},
      {"aten::mul.Tensor", {"b8[4]", "i64[4]"}, "$0, $1", "i64[4]"},
      {"aten::mul.Tensor", {"bf16[4]", "f16[4]"}, "$0, $1", "f32[4]"},
      {"aten::mul.Scalar", {"i64[2]"}, "$0, 2.0", "f32[2]"},
      {"aten::div.Tensor", {"i64[4]", "i64[4]"}, "$0, $1", "f32[4]"},
      {"aten::div.Tensor", {"f32[]", "f32[]"}, "$0, $1", "f32[]"},
      {"aten::div.Tensor", {"f32[]"}, "$0, 1", "f32[]"},
      {"aten::div.Scalar", {"i32[3]"}, "$0, 2", "f32[3]"},
      {"aten::div.Tensor_mode", {"i64[4]", "i64[4]"}, "$0, $1, rounding_mode='floor'", "i64[4]"},
      {"aten::div.Tensor_mode", {"i64[4]", "i64[4]"}, "$0, $1, rounding_mode=None", "f32[4]"},
      {"aten::pow.Tensor_Scalar", {"bf16[4, 8]"}, "$0, 2", "bf16[4, 8]"},
      {"aten::pow.Tensor_Tensor", {"f32[4]", "f32[1]"}, "$0, $1", "f32[4]"},
      {"aten::maximum", {"f32[2, 1]", "f32[3]"}, "$0, $1", "f32[2, 3]"},
      {"aten::minimum", {"i32[2]", "i64[2]"}, "$0, $1", "i64[2]"},
      {"aten::where.self", {"b8[4, 1]", "f32[4, 8]", "f32[]"}, "$0, $1, $2", "f32[4, 8]"},
      {"aten::where.self", {"b8[4]", "i64[4]"}, "$0, $1, 0.0", "f32[4]"},
      {"aten::clamp", {"f32[3]"}, "$0, min=0", "f32[3]"},
      {"aten::eq.Scalar", {"i64[8, 1536]"}, "$0, 0", "b8[8, 1536]"},
      {"aten::ne.Scalar", {"i64[8]"}, "$0, -100", "b8[8]"},
      {"aten::lt.Scalar", {"i64[8, 1536]"}, "$0, 0", "b8[8, 1536]"},
      {"aten::le.Scalar", {"f32[3]"}, "$0, 0.5", "b8[3]"},
      {"aten::gt.Scalar", {"f32[3]"}, "$0, 0.5", "b8[3]"},
      {"aten::ge.Scalar", {"i64[32768]"}, "$0, 151936", "b8[32768]"},
      {"aten::eq.Tensor", {"f32[2, 3]", "f32[3]"}, "$0, $1", "b8[2, 3]"},
      {"aten::ne.Tensor", {"i64[2, 3]", "i64[]"}, "$0, $1", "b8[2, 3]"},
      {"aten::lt.Tensor", {"f32[2, 1]", "f32[1, 3]"}, "$0, $1", "b8[2, 3]"},
      {"aten::gt.Tensor", {"f32[2]", "f32[2]"}, "$0, $1", "b8[2]"},
      {"aten::ge.Tensor", {"i64[8, 1]", "i64[8]"}, "$0, $1", "b8[8, 8]"},
      {"aten::bitwise_and.Tensor", {"b8[32768]", "b8[32768]"}, "$0, $1", "b8[32768]"},
      {"aten::bitwise_or.Tensor", {"i32[4]", "i64[4]"}, "$0, $1", "i64[4]"},
      {"aten::bitwise_not", {"b8[32768]"}, "$0", "b8[32768]"},
      {"aten::logical_not", {"f32[4]"}, "$0", "b8[4]"},
      {"aten::logical_and", {"b8[4, 1]", "f32[3]"}, "$0, $1", "b8[4, 3]"},
      {"aten::logical_or", {"i64[2]", "b8[2]"}, "$0, $1", "b8[2]"},
      {"aten::tril", {"f32[4, 4]"}, "$0", "f32[4, 4]"},
      {"aten::triu", {"b8[2, 3, 5]"}, "$0, 1", "b8[2, 3, 5]"},
      {"aten::masked_fill.Scalar",
       {"bf16[32768, 1536]", "b8[32768, 1]"},
       "$0, $1, 0",
       "bf16[32768, 1536]"},
      {"aten::masked_fill.Scalar",
       {"f32[8, 12, 1536, 1536]", "b8[8, 1, 1536, 1536]"},
       "$0, $1, -10000.0",
       "f32[8, 12, 1536, 1536]"},
      {"aten::masked_fill.Tensor", {"f32[2, 3]", "b8[3]", "f32[]"}, "$0, $1, $2", "f32[2, 3]"},
      {"aten::neg", {"i64[3]"}, "$0", "i64[3]"},
      {"aten::abs", {"f16[2]"}, "$0", "f16[2]"},
      {"aten::exp", {"i64[2]"}, "$0", "f32[2]"},
      {"aten::exp", {"f32[1536, 8, 49152]"}, "$0", "f32[1536, 8, 49152]"},
      {"aten::log", {"f32[1536, 8]"}, "$0", "f32[1536, 8]"},
      {"aten::sqrt", {"bf16[4]"}, "$0", "bf16[4]"},
      {"aten::rsqrt", {"f32[4, 1]"}, "$0", "f32[4, 1]"},
      {"aten::reciprocal", {"i32[4]"}, "$0", "f32[4]"},
      {"aten::sin", {"f32[4]"}, "$0", "f32[4]"},
      {"aten::cos", {"f64[4]"}, "$0", "f64[4]"},
      {"aten::erf", {"f32[4]"}, "$0", "f32[4]"},
      {"aten::tanh", {"f16[4]"}, "$0", "f16[4]"},
      {"aten::sigmoid", {"i32[2]"}, "$0", "f32[2]"},
      {"aten::log_sigmoid", {"bf16[2, 3]"}, "$0", "bf16[2, 3]"},
      {"aten::log_sigmoid_forward", {"f32[2, 4, 1]"}, "$0", "f32[2, 4, 1]; f32[2, 4, 1]"},
      {"aten::log1p", {"i64[3]"}, "$0", "f32[3]"},
      {"aten::expm1", {"f64[2, 2]"}, "$0", "f64[2, 2]"},
      {"aten::sign", {"i32[2]"}, "$0", "i32[2]"},
      {"aten::floor", {"i64[2]"}, "$0", "i64[2]"},
      {"aten::ceil", {"bf16[3]"}, "$0", "bf16[3]"},
      {"aten::round", {"f32[1, 4]"}, "$0", "f32[1, 4]"},
      {"aten::relu", {"f32[2]"}, "$0", "f32[2]"},
      {"aten::silu", {"bf16[3]"}, "$0", "bf16[3]"},
      {"aten::gelu", {"f32[1536, 8, 1536]"}, "$0", "f32[1536, 8, 1536]"},
      {"aten::gelu", {"f32[2]"}, "$0, approximate='tanh'", "f32[2]"},
      {"aten::gelu_backward",
       {"f32[4, 8]", "f32[4, 8]"},
       "$0, $1, approximate='tanh'",
       "f32[4, 8]"},
      {"aten::silu_backward", {"bf16[4, 8]", "bf16[4, 8]"}, "$0, $1", "bf16[4, 8]"},
      {"aten::threshold_backward", {"f32[4, 8]", "f32[4, 8]"}, "$0, $1, 0", "f32[4, 8]"},
      {"aten::sigmoid_backward", {"f32[4]", "f32[4]"}, "$0, $1", "f32[4]"},
      {"aten::tanh_backward", {"f32[4]", "f32[4]"}, "$0, $1", "f32[4]"},
      {"aten::native_dropout",
       {"f32[768, 8, 768]"},
       "$0, 0.1, True",
       "f32[768, 8, 768]; b8[768, 8, 768]"},
      {"aten::native_dropout_backward", {"f32[4]", "b8[4]"}, "$0, $1, 1.1111111", "f32[4]"},
      {"aten::clone",
       {"f32[1536, 8, 768]"},
       "$0, memory_format=torch.contiguous_format",
       "f32[1536, 8, 768]"},
      {"aten::lift_fresh_copy", {"i64[]"}, "$0", "i64[]"},
      {"aten::detach", {"bf16[1536]"}, "$0", "bf16[1536]"},
      {"aten::alias", {"f32[2, s0]"}, "$0", "f32[2, s0]"},
      {"aten::copy", {"f32[8, 1536, 768]", "f32[8, 1536, 768]"}, "$0, $1", "f32[8, 1536, 768]"},
      {"aten::copy", {"f32[4, 3]", "f16[3]"}, "$0, $1", "f32[4, 3]"},
      {"aten::fill.Scalar", {"f32[2]"}, "$0, 1", "f32[2]"},
      {"aten::_to_copy",
       {"f32[8, 1536]"},
       "$0, dtype=torch.int64, layout=torch.strided, device=device(type='cuda', index=0)",
       "i64[8, 1536]"},
      {"aten::_to_copy", {"bf16[2]"}, "$0", "bf16[2]"},
      // ---- linear algebra ----
      {"aten::mm", {"f32[12288, 768]", "f32[768, 1152]"}, "$0, $1", "f32[12288, 1152]"},
      {"aten::mm", {"bf16[s0, 768]", "bf16[768, 1536]"}, "$0, $1", "bf16[s0, 1536]"},
      {"aten::addmm",
       {"bf16[1024]", "bf16[32768, 1536]", "bf16[1536, 1024]"},
       "$0, $1, $2",
       "bf16[32768, 1024]"},
      {"aten::bmm", {"f32[96, 1536, 1536]", "f32[96, 1536, 32]"}, "$0, $1", "f32[96, 1536, 32]"},
      {"aten::_grouped_mm",
       {"bf16[12, 8]", "bf16[4, 8, 16]", "i32[4]"},
       "$0, $1, offs=$2",
       "bf16[12, 16]"},
      {"aten::_grouped_mm",
       {"bf16[8, 12]", "bf16[12, 16]", "i32[4]"},
       "$0, $1, $2",
       "bf16[4, 8, 16]"},
      {"aten::_grouped_mm", {"f32[4, 8, 12]", "f32[12, 16]", "i32[4]"}, "$0, $1, $2", "f32[8, 16]"},
      {"aten::_grouped_mm",
       {"bf16[4, 8, 12]", "bf16[4, 12, 16]"},
       "$0, $1, out_dtype=torch.float32",
       "f32[4, 8, 16]"},
      {"aten::baddbmm",
       {"f32[96, 1536, 1536]", "f32[96, 1536, 32]", "f32[96, 32, 1536]"},
       "$0, $1, $2, beta=0.0, alpha=0.17677669529663687",
       "f32[96, 1536, 1536]"},
      {"aten::matmul", {"f32[2, 1, 4, 8]", "f32[3, 8, 5]"}, "$0, $1", "f32[2, 3, 4, 5]"},
      {"aten::matmul", {"f32[8]", "f32[8, 5]"}, "$0, $1", "f32[5]"},
      {"aten::matmul", {"f32[8]", "f32[8]"}, "$0, $1", "f32[]"},
      {"aten::linear", {"f32[4, 6, 8]", "f32[16, 8]", "f32[16]"}, "$0, $1, $2", "f32[4, 6, 16]"},
      {"aten::_scaled_dot_product_flash_attention",
       {"bf16[2, 12, 128, 64]", "bf16[2, 12, 256, 64]", "bf16[2, 12, 256, 64]"},
       "$0, $1, $2, 0.0, True, scale=0.125",
       "bf16[2, 12, 128, 64]; f32[2, 12, 128]; None; None; None; None; i64[]; i64[]; bf16[0]"},
      {"aten::_scaled_dot_product_efficient_attention",
       {"f32[2, 4, 100, 32]", "f32[2, 4, 50, 32]", "f32[2, 4, 50, 16]"},
       "$0, $1, $2, None, True",
       "f32[2, 4, 100, 16]; f32[2, 4, 128]; i64[]; i64[]"},
      {"aten::_scaled_dot_product_flash_attention_for_cpu",
       {"bf16[2, 8, 16, 64]", "bf16[2, 2, 32, 64]", "bf16[2, 2, 32, 64]"},
       "$0, $1, $2, 0.0, True",
       "bf16[2, 8, 16, 64]; f32[2, 8, 16]"},
      {"aten::_scaled_dot_product_flash_attention_for_cpu",
       {"f64[1, 2, 3, 4]", "f64[1, 2, 5, 4]", "f64[1, 2, 5, 4]"},
       "$0, $1, $2",
       "f64[1, 2, 3, 4]; f64[1, 2, 3]"},
      {"aten::scaled_dot_product_attention",
       {"f32[2, 4, 100, 32]", "f32[2, 4, 50, 32]", "f32[2, 4, 50, 16]"},
       "$0, $1, $2, is_causal=True",
       "f32[2, 4, 100, 16]"},
      // ---- shape ----
      {"aten::view", {"f32[1536, 8, 1152]"}, "$0, [1536, 8, 12, 96]", "f32[1536, 8, 12, 96]"},
      {"aten::view", {"f32[1536, 8, 12, 32]"}, "$0, [1536, 96, -1]", "f32[1536, 96, 32]"},
      {"aten::view", {"bf16[s0, 768]"}, "$0, [-1, 6, 128]", "bf16[s0, 6, 128]"},
      {"aten::view", {"f32[8, 1536]"}, "$0, [-1]", "f32[12288]"},
      {"aten::reshape", {"f32[4, 6]"}, "$0, [2, -1]", "f32[2, 12]"},
      {"aten::_unsafe_view", {"f32[4, 6]"}, "$0, [24]", "f32[24]"},
      {"aten::expand", {"f32[4, 1]"}, "$0, [2, 4, 8]", "f32[2, 4, 8]"},
      {"aten::expand", {"f32[s0, 1]"}, "$0, [-1, 3]", "f32[s0, 3]"},
      {"aten::permute", {"f32[8, 12, 1536, 32]"}, "$0, [2, 0, 1, 3]", "f32[1536, 8, 12, 32]"},
      {"aten::transpose.int", {"f32[8, 1536, 768]"}, "$0, 0, 1", "f32[1536, 8, 768]"},
      {"aten::transpose.int", {"f32[s0, 8]"}, "$0, -1, 0", "f32[8, s0]"},
      {"aten::t", {"f32[1152, 768]"}, "$0", "f32[768, 1152]"},
      {"aten::t", {"f32[5]"}, "$0", "f32[5]"},
      {"aten::unsqueeze", {"f32[1536, 8]"}, "$0, -1", "f32[1536, 8, 1]"},
      {"aten::unsqueeze", {"b8[32768]"}, "$0, 0", "b8[1, 32768]"},
      {"aten::squeeze", {"f32[1, 4, 1]"}, "$0", "f32[4]"},
      {"aten::squeeze.dim", {"f32[1, 4, 1]"}, "$0, 0", "f32[4, 1]"},
      {"aten::squeeze.dim", {"f32[2, 4]"}, "$0, 0", "f32[2, 4]"},
      {"aten::squeeze.dims", {"f32[1, 4, 1]"}, "$0, [0, -1]", "f32[4]"},
      {"aten::select.int", {"f32[4, 5, 6]"}, "$0, 1, -1", "f32[4, 6]"},
      {"aten::slice.Tensor",
       {"f32[8, 1536, 768]"},
       "$0, 1, 0, 9223372036854775807",
       "f32[8, 1536, 768]"},
      {"aten::slice.Tensor", {"f32[1536, 8, 768]"}, "$0, 0, 0, 768", "f32[768, 8, 768]"},
      {"aten::slice.Tensor", {"f32[10]"}, "$0, 0, -3", "f32[3]"},
      {"aten::slice.Tensor", {"f32[10]"}, "$0, 0, 0, -3", "f32[7]"},
      {"aten::slice.Tensor", {"f32[10]"}, "$0, 0, 1, 10, 3", "f32[3]"},
      {"aten::slice.Tensor", {"f32[10]"}, "$0, 0, 20, 30", "f32[0]"},
      {"aten::slice.Tensor", {"f32[s0, 4]"}, "$0, 0, 0, 9223372036854775807", "f32[s0, 4]"},
      {"aten::slice.Tensor", {"f32[4, 8]"}, "$0, -1, None, 4", "f32[4, 4]"},
      {"aten::slice_scatter",
       {"bf16[32768, 1024]", "bf16[32768, 128]"},
       "$0, $1, 1, 768, 896",
       "bf16[32768, 1024]"},
      {"aten::select_scatter", {"f32[4, 5]", "f32[5]"}, "$0, $1, 0, 2", "f32[4, 5]"},
      {"aten::cat", {"f32[2, 3]", "f32[4, 3]"}, "[$0, $1]", "f32[6, 3]"},
      {"aten::cat", {"f32[2, 3]", "f32[2, 5]", "f32[0]"}, "[$0, $1, $2], -1", "f32[2, 8]"},
      {"aten::cat", {"f32[s0, 3]", "f32[s0, 3]"}, "[$0, $1], 1", "f32[s0, 6]"},
      {"aten::view_as_complex", {"f32[2, 8, 32, 2]"}, "$0", "c64[2, 8, 32]"},
      {"aten::view_as_real", {"c128[2, 8, 32]"}, "$0", "f64[2, 8, 32, 2]"},
      {"aten::_conj", {"c64[2, 8]"}, "$0", "c64[2, 8]"},
      {"aten::conj_physical", {"c128[3]"}, "$0", "c128[3]"},
      {"aten::resolve_conj", {"c64[4, 1]"}, "$0", "c64[4, 1]"},
      {"aten::stack", {"f32[2, 3]", "f32[2, 3]"}, "[$0, $1], 1", "f32[2, 2, 3]"},
      {"aten::split.Tensor", {"f32[10, 4]"}, "$0, 4", "f32[4, 4]; f32[4, 4]; f32[2, 4]"},
      {"aten::split_with_sizes",
       {"bf16[32768, 1024]"},
       "$0, [768, 128, 128], -1",
       "bf16[32768, 768]; bf16[32768, 128]; bf16[32768, 128]"},
      {"aten::split_with_sizes",
       {"f32[1536, 8, 12, 96]"},
       "$0, [32, 32, 32], 3",
       "f32[1536, 8, 12, 32]; f32[1536, 8, 12, 32]; f32[1536, 8, 12, 32]"},
      // ---- reductions ----
      {"aten::sum", {"f32[12288]"}, "$0", "f32[]"},
      {"aten::sum", {"b8[4]"}, "$0", "i64[]"},
      {"aten::sum", {"f16[4]"}, "$0, dtype=torch.float32", "f32[]"},
      {"aten::sum.dim_IntList", {"f32[1536, 8, 49152]"}, "$0, [-1]", "f32[1536, 8]"},
      {"aten::sum.dim_IntList", {"i32[2, 3]"}, "$0, [0], True", "i64[1, 3]"},
      {"aten::sum.dim_IntList", {"f32[2, 3]"}, "$0, None", "f32[]"},
      {"aten::mean", {"f32[2, 3]"}, "$0", "f32[]"},
      {"aten::mean.dim", {"bf16[4, 8]"}, "$0, [-1], True", "bf16[4, 1]"},
      {"aten::amax", {"f32[4, 8]"}, "$0, [1], True", "f32[4, 1]"},
      {"aten::amin", {"f32[4, 8]"}, "$0", "f32[]"},
      {"aten::max", {"f32[4, 8]"}, "$0", "f32[]"},
      {"aten::max.dim", {"f32[1536, 8, 49152]"}, "$0, -1", "f32[1536, 8]; i64[1536, 8]"},
      {"aten::min.dim", {"f32[4, 8]"}, "$0, 0, True", "f32[1, 8]; i64[1, 8]"},
      {"aten::argmax", {"f32[4, 8]"}, "$0, 1", "i64[4]"},
      {"aten::argmax", {"f32[4, 8]"}, "$0", "i64[]"},
      {"aten::all.dim", {"b8[4, 8]"}, "$0, 1", "b8[4]"},
      {"aten::any.dim", {"f32[4, 8]"}, "$0, -1, True", "b8[4, 1]"},
      {"aten::any.dim", {"u8[4, 8]"}, "$0, 0", "u8[8]"},
      {"aten::logsumexp", {"f32[4, 8]"}, "$0, [1]", "f32[4]"},
      {"aten::var.correction", {"f32[4, 8]"}, "$0, [1], correction=0, keepdim=True", "f32[4, 1]"},
      {"aten::var_mean.correction",
       {"bf16[4, 8]"},
       "$0, [1], correction=0, keepdim=True",
       "bf16[4, 1]; bf16[4, 1]"},
      {"aten::linalg_vector_norm", {"f32[4, 8]"}, "$0, 2, [-1]", "f32[4]"},
      {"aten::cumsum", {"i32[4, 8]"}, "$0, 1", "i64[4, 8]"},
      {"aten::cumsum", {"f32[4, 8]"}, "$0, -1", "f32[4, 8]"},
      {"aten::topk", {"f32[4, 64]"}, "$0, 2", "f32[4, 2]; i64[4, 2]"},
      {"aten::sort", {"f32[4, 8]"}, "$0", "f32[4, 8]; i64[4, 8]"},
      {"aten::sort.stable", {"i64[16]"}, "$0, stable=True", "i64[16]; i64[16]"},
      {"aten::floor_divide", {"i64[16]"}, "$0, 2", "i64[16]"},
      {"aten::remainder.Scalar", {"i64[32]"}, "$0, 4", "i64[32]"},
      {"aten::index_copy",
       {"f32[32, 16]", "i64[32]", "f32[32, 16]"},
       "$0, 0, $1, $2",
       "f32[32, 16]"},
      {"aten::remainder.Scalar", {"f32[2, 3]"}, "$0, 3", "f32[2, 3]"},
      {"aten::remainder.Tensor", {"i64[2, 5]", "f32[5]"}, "$0, $1", "f32[2, 5]"},
      {"aten::_softmax", {"f32[8, 12, 1536, 1536]"}, "$0, -1, False", "f32[8, 12, 1536, 1536]"},
      {"aten::_softmax", {"f16[2, 4]"}, "$0, -1, True", "f32[2, 4]"},
      {"aten::_log_softmax", {"f32[8, 100]"}, "$0, 1, False", "f32[8, 100]"},
      {"aten::_safe_softmax", {"f32[2, 4, 5]"}, "$0, -1", "f32[2, 4, 5]"},
      {"aten::_safe_softmax", {"bf16[2, 4]"}, "$0, 1, dtype=torch.float32", "f32[2, 4]"},
      {"aten::_softmax_backward_data",
       {"f32[2, 4]", "f32[2, 4]"},
       "$0, $1, -1, torch.bfloat16",
       "bf16[2, 4]"},
      {"aten::_log_softmax_backward_data",
       {"f32[2, 4]", "f32[2, 4]"},
       "$0, $1, 1, torch.float32",
       "f32[2, 4]"},
      {"aten::native_layer_norm",
       {"bf16[8, 128, 768]", "bf16[768]", "bf16[768]"},
       "$0, [768], $1, $2, 1e-05",
       "bf16[8, 128, 768]; f32[8, 128, 1]; f32[8, 128, 1]"},
      {"aten::native_layer_norm",
       {"f32[8, 768]"},
       "$0, [768], None, None, 1e-05",
       "f32[8, 768]; f32[8, 1]; f32[8, 1]"},
      {"aten::native_layer_norm_backward",
       {"f32[8, 768]", "f32[8, 768]", "f32[8, 1]", "f32[8, 1]", "f32[768]", "f32[768]"},
       "$0, $1, [768], $2, $3, $4, $5, [True, True, False]",
       "f32[8, 768]; f32[768]; None"},
      {"aten::nll_loss_forward",
       {"f32[12288, 50257]", "i64[12288]"},
       "$0, $1, None, 1, -100",
       "f32[]; f32[]"},
      {"aten::nll_loss_forward",
       {"f32[16, 10]", "i64[16]"},
       "$0, $1, None, 0, -100",
       "f32[16]; f32[]"},
      {"aten::nll_loss_backward",
       {"f32[]", "f32[12288, 100]", "i64[12288]", "f32[]"},
       "$0, $1, $2, None, 1, -100, $3",
       "f32[12288, 100]"},
      // ---- indexing ----
      {"aten::index.Tensor", {"f32[49152, 768]", "i64[8, 1536]"}, "$0, [$1]", "f32[8, 1536, 768]"},
      {"aten::index.Tensor",
       {"f32[12288, 49152]", "i64[12288]", "i64[12288]"},
       "$0, [$1, $2]",
       "f32[12288]"},
      {"aten::index.Tensor", {"f32[4, 5, 6]", "i64[3]"}, "$0, [None, $1]", "f32[4, 3, 6]"},
      {"aten::index.Tensor",
       {"f32[4, 5, 6]", "i64[3]", "i64[3]"},
       "$0, [$1, None, $2]",
       "f32[3, 5]"},
      {"aten::index.Tensor",
       {"f32[4, 5, 6]", "i64[2, 1]", "i64[3]"},
       "$0, [None, $1, $2]",
       "f32[4, 2, 3]"},
      {"aten::index.Tensor", {"f32[4, 5]", "b8[4]"}, "$0, [$1]", "f32[nnz_in1, 5]"},
      {"aten::index_put", {"i64[8, 1536]", "b8[8, 1536]", "i64[]"}, "$0, [$1], $2", "i64[8, 1536]"},
      {"aten::index_put",
       {"f32[8, 1536, 768]", "b8[8, 1536]", "f32[]"},
       "$0, [$1], $2, True",
       "f32[8, 1536, 768]"},
      {"aten::embedding", {"bf16[75968, 1536]", "i64[32768]"}, "$0, $1", "bf16[32768, 1536]"},
      {"aten::embedding", {"f32[1536, 768]", "i64[8, 1536]"}, "$0, $1", "f32[8, 1536, 768]"},
      {"aten::embedding_dense_backward",
       {"f32[8, 128, 768]", "i64[8, 128]"},
       "$0, $1, 50257, -1, False",
       "f32[50257, 768]"},
      {"aten::gather", {"f32[4, 8]", "i64[4, 1]"}, "$0, 1, $1", "f32[4, 1]"},
      {"aten::scatter.src", {"f32[4, 8]", "i64[4, 1]", "f32[4, 1]"}, "$0, 1, $1, $2", "f32[4, 8]"},
      {"aten::scatter.value", {"f32[4, 8]", "i64[4, 1]"}, "$0, 1, $1, 1.0", "f32[4, 8]"},
      {"aten::scatter_add", {"f32[4, 8]", "i64[4, 2]", "f32[4, 2]"}, "$0, 1, $1, $2", "f32[4, 8]"},
      {"torchtitan::deterministic_scatter_add",
       {"bf16[6, 8]", "i64[12, 8]", "bf16[12, 8]"},
       "$0, $1, $2",
       "bf16[6, 8]"},
      {"aten::index_select", {"f32[10, 4]", "i64[3]"}, "$0, 0, $1", "f32[3, 4]"},
      // ---- factories ----
      {"aten::empty.memory_format",
       {},
       "[96, 1536, 1536], dtype=torch.float32, device=device(type='cuda', index=0), "
       "pin_memory=False",
       "f32[96, 1536, 1536]"},
      {"aten::empty.memory_format", {}, "[2, 's0']", "f32[2, s0]"},
      {"aten::empty_strided", {}, "[2, 3], [3, 1], dtype=torch.bfloat16", "bf16[2, 3]"},
      {"aten::empty_like", {"bf16[32768, 1536]"}, "$0, pin_memory=False", "bf16[32768, 1536]"},
      {"aten::new_empty", {"f16[2]"}, "$0, [3, 4]", "f16[3, 4]"},
      {"aten::new_empty_strided", {"f16[2]"}, "$0, [3, 4], [4, 1]", "f16[3, 4]"},
      {"aten::new_empty_strided", {"f32[2]"}, "$0, [5], [1], dtype=torch.int64", "i64[5]"},
      {"aten::zeros",
       {},
       "[], dtype=torch.int32, device=device(type='cuda'), pin_memory=False",
       "i32[]"},
      {"aten::ones", {}, "[2, 3]", "f32[2, 3]"},
      {"aten::full", {}, "[2, 3], 7", "i64[2, 3]"},
      {"aten::full", {}, "[2], 0.5", "f32[2]"},
      {"aten::full", {}, "[2], True", "b8[2]"},
      {"aten::full", {}, "[2], 1, dtype=torch.float16", "f16[2]"},
      {"aten::zeros_like", {"i64[4]"}, "$0, dtype=torch.float16", "f16[4]"},
      {"aten::ones_like", {"bf16[4, 2]"}, "$0", "bf16[4, 2]"},
      {"aten::full_like", {"f32[3]"}, "$0, 2", "f32[3]"},
      {"aten::new_zeros", {"bf16[2]"}, "$0, [5]", "bf16[5]"},
      {"aten::new_ones", {"bf16[2]"}, "$0, [5], dtype=torch.int64", "i64[5]"},
      {"aten::scalar_tensor", {}, "1", "f32[]"},
      {"aten::scalar_tensor", {}, "-inf, dtype=torch.float16", "f16[]"},
      {"aten::arange", {}, "10", "i64[10]"},
      {"aten::arange.start",
       {},
       "0, 12288, device=device(type='cuda', index=0), pin_memory=False",
       "i64[12288]"},
      {"aten::arange.start", {}, "0, 's0'", "i64[s0]"},
      {"aten::arange.start_step", {}, "0, 1, 0.25", "f32[4]"},
      {"aten::rand_like", {"f32[2]"}, "$0", "f32[2]"},
      {"aten::randn_like", {"bf16[2]"}, "$0, dtype=torch.float32", "f32[2]"},
      {"aten::rand", {}, "[3]", "f32[3]"},
      {"aten::bernoulli.p", {"f32[3]"}, "$0, 0.5", "f32[3]"},
      // ---- collectives ----
      {"_c10d_functional::all_reduce",
       {"f32[8, 1536, 768]"},
       "$0, 'sum', '12'",
       "f32[8, 1536, 768]"},
      {"_c10d_functional::all_gather_into_tensor",
       {"f32[768, 8, 768]"},
       "$0, 2, '12'",
       "f32[1536, 8, 768]"},
      {"_c10d_functional::all_gather_into_tensor", {"f32[s0, 8]"}, "$0, 4, '0'", "f32[s0*4, 8]"},
      {"_c10d_functional::reduce_scatter_tensor",
       {"f32[1536, 8, 768]"},
       "$0, 'sum', 2, '12'",
       "f32[768, 8, 768]"},
      {"_c10d_functional::broadcast", {"f32[4]"}, "$0, 0, '12'", "f32[4]"},
      {"_c10d_functional::all_to_all_single",
       {"f32[8, 4]"},
       "$0, [2, 6], [4, 4], '0'",
       "f32[8, 4]"},
      {"_c10d_functional::all_to_all_single", {"f32[8, 4]"}, "$0, [1, 1], None, '0'", "f32[2, 4]"},
      {"_c10d_functional::wait_tensor", {"f32[4]"}, "$0", "f32[4]"},
      {"vllm::all_reduce", {"bf16[32768, 1536]"}, "$0, 'tp:0'", "bf16[32768, 1536]"},
      // point-to-point: c10d's send/recv_ return a Work, recv_ functionalized the received tensor
      {"c10d::send", {"f32[4, 16]"}, "[$0], '3', 1, 0", "None"},
      {"c10d::recv_", {"f32[4, 16]"}, "[$0], '3', 0, 0", "None"},
      {"c10d::recv_", {"bf16[2, 8]"}, "[$0], 'pp', 1, 0", "None; bf16[2, 8]", true},
      {"_c10d_functional::isend", {"f32[4, 16]"}, "$0, 1, 0, 'pp'", "f32[0]"},
      {"_c10d_functional::irecv", {"f32[4, 16]"}, "$0, 0, 0, 'pp'", "f32[4, 16]"},
      // ---- custom ----
      {"apex::fused_layer_norm_affine_fwd",
       {"f32[768, 8, 768]", "f32[768]", "f32[768]"},
       "$0, $1, $2, [768], 1e-05",
       "f32[768, 8, 768]; f32[6144]; f32[6144]"},
      {"apex::fused_layer_norm_affine_fwd",
       {"bf16[s0, 768]", "bf16[768]", "bf16[768]"},
       "$0, $1, $2, [768], 1e-05",
       "bf16[s0, 768]; f32[s0]; f32[s0]"},
      {"apex::fused_layer_norm_affine_bwd",
       {"f32[4, 6, 8]", "f32[24]", "f32[24]", "f32[4, 6, 8]", "f32[8]", "f32[8]"},
       "$0, $1, $2, $3, [8], $4, $5, 1e-05, False",
       "f32[4, 6, 8]; f32[8]; f32[8]"},
      {"apex::fused_rms_norm_affine_fwd",
       {"bf16[s0, 768]", "bf16[768]"},
       "$0, $1, [768], 1e-05",
       "bf16[s0, 768]; f32[s0]"},
      {"apex::fused_rms_norm_affine_bwd",
       {"f32[4, 6, 8]", "f32[4]", "f32[4, 6, 8]", "f32[6, 8]"},
       "$0, $1, $2, [6, 8], $3, 1e-05",
       "f32[4, 6, 8]; f32[6, 8]"},
      {"_C::rms_norm",
       {"bf16[32768, 1536]", "bf16[32768, 1536]", "bf16[1536]"},
       "result=$0, input=$1, weight=$2, epsilon=1e-06",
       "None; bf16[32768, 1536]",
       true},
      {"_C::rms_norm", {"bf16[4, 16]", "bf16[4, 16]", "bf16[16]"}, "$0, $1, $2, 1e-06", "None"},
      {"_C::fused_add_rms_norm",
       {"bf16[32768, 1536]", "bf16[32768, 1536]", "bf16[1536]"},
       "input=$0, residual=$1, weight=$2, epsilon=1e-06",
       "None; bf16[32768, 1536]; bf16[32768, 1536]",
       true},
      {"_C::silu_and_mul",
       {"bf16[32768, 4480]", "bf16[32768, 8960]"},
       "out=$0, input=$1",
       "None; bf16[32768, 4480]",
       true},
      {"_C::rotary_embedding",
       {"i64[32768]", "bf16[32768, 768]", "bf16[32768, 128]", "bf16[32768, 128]"},
       "positions=$0, query=$1, key=$2, head_size=128, cos_sin_cache=$3, is_neox=True",
       "None; bf16[32768, 768]; bf16[32768, 128]",
       true},
      {"_C::rotary_embedding",
       {"i64[16]", "f16[16, 256]", "f16[64, 128]"},
       "positions=$0, query=$1, key=None, head_size=128, cos_sin_cache=$2, is_neox=False",
       "None; f16[16, 256]; None",
       true},
      {"vllm::unified_attention_with_output",
       {"bf16[32768, 6, 128]", "bf16[32768, 1, 128]", "bf16[32768, 1, 128]", "bf16[32768, 6, 128]"},
       "query=$0, key=$1, value=$2, output=$3, layer_name='model.layers.0.self_attn.attn'",
       "None; bf16[32768, 6, 128]",
       true},
      {"tg::log_tensor", {"f32[4]"}, "$0, 'hidden'", "f32[4]"},
      {"tg::inplace_log_tensor", {"f32[4]"}, "x=$0, name='hidden'", "None; f32[4]", true},
  };
  return kCases;
}

TEST(OpRegistryTest, EveryCaseInfersItsAnnotation) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.op + "(" + c.args + ")");
    try {
      EXPECT_EQ(InferCase(c), c.expected);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
    }
  }
}

TEST(OpRegistryTest, EveryRegisteredOperatorHasACase) {
  std::set<std::string> covered;
  for (const Case& c : Cases()) covered.insert(Key(c.op));
  std::vector<OpName> names = OpRegistry::Default().Names();
  EXPECT_GE(names.size(), 110u);
  for (const OpName& name : names) {
    EXPECT_TRUE(covered.count(name.ToString())) << "no shape-rule case for " << name.ToString();
  }
  for (const std::string& key : covered) {
    EXPECT_NE(OpRegistry::Default().Find(*OpName::Parse(key)), nullptr)
        << "case for unregistered " << key;
  }
}

TEST(OpRegistryTest, NamesAreSortedAndFindMapsEmptyOverloadToDefault) {
  std::vector<OpName> names = OpRegistry::Default().Names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  const OpInfo* bare = OpRegistry::Default().Find(OpName{"vllm", "all_reduce", ""});
  ASSERT_NE(bare, nullptr);
  EXPECT_EQ(bare, OpRegistry::Default().Find(OpName{"vllm", "all_reduce", "default"}));
  EXPECT_EQ(OpRegistry::Default().Find(OpName{"aten", "no_such_op", ""}), nullptr);
}

TEST(OpRegistryTest, Traits) {
  const OpRegistry& r = OpRegistry::Default();
  auto traits = [&](const std::string& op) { return r.Find(*OpName::Parse(op))->traits; };
  OpTraits ar = traits("_c10d_functional::all_reduce");
  EXPECT_EQ(ar.collective, CollectiveKind::kAllReduce);
  EXPECT_EQ(ar.group_arg, "group_name");
  EXPECT_EQ(ar.reduce_op_arg, "reduce_op");
  EXPECT_FALSE(ar.custom);
  OpTraits rs = traits("_c10d_functional::reduce_scatter_tensor");
  EXPECT_EQ(rs.collective, CollectiveKind::kReduceScatter);
  EXPECT_EQ(rs.reduce_op_arg, "reduce_op");
  EXPECT_EQ(traits("_c10d_functional::all_gather_into_tensor").collective,
            CollectiveKind::kAllGather);
  EXPECT_EQ(traits("_c10d_functional::all_gather_into_tensor").reduce_op_arg, "");
  EXPECT_EQ(traits("_c10d_functional::broadcast").collective, CollectiveKind::kBroadcast);
  EXPECT_EQ(traits("_c10d_functional::all_to_all_single").collective, CollectiveKind::kAllToAll);
  EXPECT_EQ(traits("_c10d_functional::wait_tensor").collective, CollectiveKind::kWait);
  // point-to-point: c10d names the peer's position in the group, _c10d_functional its rank
  OpTraits send = traits("c10d::send");
  EXPECT_EQ(send.collective, CollectiveKind::kSend);
  EXPECT_EQ(send.group_arg, "process_group");
  EXPECT_EQ(send.peer_arg, "dst");
  EXPECT_TRUE(send.peer_in_group);
  EXPECT_EQ(traits("c10d::recv_").collective, CollectiveKind::kRecv);
  EXPECT_EQ(traits("c10d::recv_").peer_arg, "src");
  EXPECT_FALSE(traits("_c10d_functional::irecv").peer_in_group);
  EXPECT_TRUE(traits("_c10d_functional::irecv").async_result);
  EXPECT_FALSE(traits("_c10d_functional::isend").async_result);
  EXPECT_TRUE(IsPointToPoint(traits("_c10d_functional::isend").collective));
  OpTraits vllm = traits("vllm::all_reduce");
  EXPECT_EQ(vllm.collective, CollectiveKind::kAllReduce);
  EXPECT_EQ(vllm.group_arg, "group_name");
  EXPECT_TRUE(vllm.custom);
  // torch's functional collectives complete at their wait_tensor; vLLM's all_reduce is synchronous.
  EXPECT_TRUE(ar.async_result);
  EXPECT_TRUE(rs.async_result);
  EXPECT_TRUE(traits("_c10d_functional::all_gather_into_tensor").async_result);
  EXPECT_TRUE(traits("_c10d_functional::broadcast").async_result);
  EXPECT_TRUE(traits("_c10d_functional::all_to_all_single").async_result);
  EXPECT_FALSE(traits("_c10d_functional::wait_tensor").async_result);
  EXPECT_FALSE(vllm.async_result);
  EXPECT_TRUE(traits("aten::native_dropout").random);
  EXPECT_FALSE(traits("aten::add.Tensor").random);
  EXPECT_TRUE(traits("aten::empty.memory_format").nondeterministic_init);
  EXPECT_TRUE(traits("aten::empty_like").nondeterministic_init);
  EXPECT_FALSE(traits("aten::zeros").nondeterministic_init);
  EXPECT_TRUE(traits("apex::fused_layer_norm_affine_fwd").custom);
  EXPECT_TRUE(traits("_C::rms_norm").custom);
  EXPECT_TRUE(traits("tg::log_tensor").custom);
  EXPECT_EQ(traits("aten::mm").collective, CollectiveKind::kNone);
}

// ---- errors ----------------------------------------------------------------------------------

std::string ShapeErrorOf(const Case& c) {
  try {
    InferCase(c);
  } catch (const ShapeError& e) {
    return e.what();
  }
  return "<no ShapeError>";
}

TEST(OpRegistryTest, MmInnerDimensionMismatchIsPrecise) {
  EXPECT_EQ(ShapeErrorOf({"aten::mm", {"f32[12288, 768]", "f32[1152, 768]"}, "$0, $1", ""}),
            "mm: inner dimensions differ: [12288, 768] x [1152, 768]");
  EXPECT_EQ(ShapeErrorOf({"aten::mm", {"f32[4, 8]", "bf16[8, 2]"}, "$0, $1", ""}),
            "mm: dtypes differ: f32 and bf16");
  EXPECT_EQ(ShapeErrorOf({"aten::mm", {"f32[4, 8, 1]", "f32[8, 2]"}, "$0, $1", ""}),
            "mm: expected 2-D tensors, got [4, 8, 1] and [8, 2]");
}

TEST(OpRegistryTest, RulesRejectInconsistentArguments) {
  const std::vector<std::pair<Case, std::string>> bad = {
      {{"aten::view", {"f32[4, 6]"}, "$0, [5, 5]", ""},
       "view: shape [5, 5] is invalid for input of shape [4, 6]"},
      {{"aten::view", {"f32[4, 6]"}, "$0, [-1, -1]", ""}, "only one dimension can be inferred"},
      {{"aten::view", {"f32[4, 6]"}, "$0, [-1, 5]", ""}, "is invalid for input"},
      {{"_c10d_functional::reduce_scatter_tensor", {"f32[7, 8]"}, "$0, 'sum', 2, '12'", ""},
       "reduce_scatter_tensor: dim 0 of [7, 8] is not divisible by the group size 2"},
      {{"_c10d_functional::all_gather_into_tensor", {"f32[7, 8]"}, "$0, 2, '12'", "", false, 4},
       "group_size argument 2 differs from the process group's size 4"},
      {{"aten::add.Tensor", {"f32[3]", "f32[4]"}, "$0, $1", ""},
       "add: shapes [3] and [4] are not broadcastable"},
      {{"aten::split_with_sizes", {"f32[10]"}, "$0, [3, 3]", ""},
       "split sizes [3, 3] sum to 6 but dim 0 of [10] has size 10"},
      {{"aten::bmm", {"f32[2, 3, 4]", "f32[3, 4, 5]"}, "$0, $1", ""}, "batch sizes differ"},
      {{"aten::_grouped_mm", {"f32[12, 8]", "f32[3, 8, 16]", "i32[4]"}, "$0, $1, $2", ""},
       "mat2 has 3 groups, offs 4"},
      {{"aten::_grouped_mm", {"f32[12, 8]", "f32[4, 8, 16]"}, "$0, $1", ""},
       "offs is required unless both operands are 3-D"},
      {{"aten::addmm", {"f32[7]", "f32[2, 3]", "f32[3, 4]"}, "$0, $1, $2", ""},
       "does not broadcast to [2, 4]"},
      {{"aten::transpose.int", {"f32[2, 3]"}, "$0, 0, 2", ""},
       "transpose: dimension 2 out of range for a tensor of rank 2"},
      {{"aten::permute", {"f32[2, 3]"}, "$0, [0, 0]", ""}, "repeat a dim"},
      {{"aten::bitwise_or.Tensor", {"f32[2]", "f32[2]"}, "$0, $1", ""},
       "expected integral or bool tensors, got f32"},
      {{"aten::embedding", {"f32[10, 4]", "f32[3]"}, "$0, $1", ""},
       "indices must be an integer tensor"},
      {{"aten::index_put", {"f32[4]", "b8[4]", "i64[]"}, "$0, [$1], $2", ""},
       "values dtype i64 differs from self dtype f32"},
      {{"aten::slice_scatter", {"f32[8, 4]", "f32[3, 4]"}, "$0, $1, 0, 0, 4", ""},
       "does not match the slice [4, 4]"},
      {{"aten::cat", {"f32[2, 3]", "f32[2, 4]"}, "[$0, $1]", ""}, "differ outside dim 0"},
      {{"aten::masked_fill.Scalar", {"f32[4]", "i64[4]"}, "$0, $1, 0", ""}, "mask must be bool"},
      {{"aten::copy", {"f32[4]", "f32[5]"}, "$0, $1", ""}, "does not broadcast to self"},
      {{"aten::gelu", {"i64[4]"}, "$0", ""}, "expected a floating-point tensor, got i64"},
      {{"aten::mean.dim", {"i64[4]"}, "$0, [0]", ""}, "expected a floating point"},
      {{"aten::native_layer_norm", {"f32[8, 768]"}, "$0, [512], None, None, 1e-05", ""},
       "normalized_shape [512] is not the trailing shape of [8, 768]"},
      {{"apex::fused_layer_norm_affine_fwd",
        {"f32[8, 768]", "f32[512]", "f32[768]"},
        "$0, $1, $2, [768], 1e-05",
        ""},
       "weight [512] does not match normalized_shape [768]"},
      {{"apex::fused_layer_norm_affine_bwd",
        {"f32[4, 8]", "f32[5]", "f32[4]", "f32[4, 8]", "f32[8]", "f32[8]"},
        "$0, $1, $2, $3, [8], $4, $5, 1e-05",
        ""},
       "mean [5] is not one entry per row ([4])"},
      {{"apex::fused_rms_norm_affine_bwd",
        {"f32[4, 8]", "f32[4]", "f32[4, 6]", "f32[6]"},
        "$0, $1, $2, [6], $3, 1e-05",
        ""},
       "grad_output [4, 8] and input_or_output [4, 6] differ"},
      {{"_C::rms_norm", {"bf16[4, 16]", "bf16[4, 16]", "bf16[8]"}, "$0, $1, $2, 1e-06", "", true},
       "_C::rms_norm: weight [8] does not match the hidden size of [4, 16]"},
      {{"_C::silu_and_mul", {"bf16[4, 16]", "bf16[4, 16]"}, "out=$0, input=$1", "", true},
       "with the last dim halved"},
      {{"aten::mm", {"f32[2, 3]"}, "$0", ""}, "missing argument 'mat2'"},
      {{"aten::mm", {"f32[2, 3]", "f32[3, 2]"}, "$0, $1, $0", ""}, "too many positional"},
      {{"aten::mm", {"f32[2, 3]", "f32[3, 2]"}, "$0, $1, beta=1", ""}, "unknown argument 'beta'"},
      {{"aten::mm", {"f32[2, 3]", "f32[3, 2]"}, "$0, mat2=$1, self=$0", ""}, "given twice"},
      {{"aten::add.Tensor", {"f32[2]", "f32[2]"}, "$0, $1, 1", ""}, "keyword-only"},
      {{"aten::select.int", {"f32[4, 5]"}, "$0, 1, 5", ""}, "index 5 out of range"},
  };
  for (const auto& [c, message] : bad) {
    std::string got = ShapeErrorOf(c);
    EXPECT_NE(got.find(message), std::string::npos)
        << c.op << "(" << c.args << "): expected '" << message << "', got '" << got << "'";
  }
}

TEST(OpRegistryTest, UnknownOperatorIsOutOfRange) {
  Case c{"aten::frobnicate", {"f32[2]"}, "$0", ""};
  EXPECT_THROW(InferCase(c), std::out_of_range);
}

TEST(OpRegistryTest, TensorArgumentWithoutTypeIsAShapeError) {
  Graph g;
  Node constant;
  constant.kind = NodeKind::kConstant;
  constant.name = "_tensor_constant0";
  constant.outputs.push_back({"_tensor_constant0", std::nullopt});
  g.AddNode(constant);
  Node n;
  n.op = *OpName::Parse("aten::lift_fresh_copy");
  n.args.push_back(TensorRef{0, 0});
  EXPECT_THROW(OpRegistry::Default().Infer(g, n), ShapeError);
}

TEST(OpRegistryTest, FunctionalizedCallSkipsTheOperatorReference) {
  Case c{"_C::silu_and_mul", {"bf16[2, 4]", "bf16[2, 8]"}, "out=$0, input=$1", "", true};
  Built b = Build(c);
  b.node.args.insert(b.node.args.begin(), Value(OpRefValue{"_C::silu_and_mul.default"}));
  EXPECT_EQ(Render(OpRegistry::Default().Infer(b.graph, b.node)), "None; bf16[2, 4]");
}

TEST(OpRegistryTest, AddValidatesEntries) {
  OpRegistry r;
  r.Add("x::f(Tensor self) -> Tensor", rules::Identity);
  EXPECT_THROW(r.Add("x::f(Tensor self) -> Tensor", rules::Identity), std::invalid_argument);
  EXPECT_THROW(r.Add("x::g(Tensor self -> Tensor", rules::Identity), std::invalid_argument);
  EXPECT_THROW(r.Add("x::h(Tensor self) -> Tensor", nullptr), std::invalid_argument);
  EXPECT_THROW(r.Add("x::c(Tensor input, str group) -> Tensor", rules::Identity,
                     traits::Collective(CollectiveKind::kAllReduce, "group_name", "")),
               std::invalid_argument);
  EXPECT_THROW(r.Add("x::d(Tensor input, str group) -> Tensor", rules::Identity,
                     traits::Collective(CollectiveKind::kAllReduce, "", "")),
               std::invalid_argument);
  EXPECT_NE(r.Find(OpName{"x", "f", ""}), nullptr);
  EXPECT_EQ(r.Names().size(), 1u);
}

TEST(OpRegistryTest, MirrorsAndTraitSetsAreCheckedWhenAdded) {
  OpRegistry r;
  // What a mirror can stand for: tensors as children, every other argument defaulted.
  r.Add("x::sin(Tensor self) -> Tensor", rules::UnaryFloat, traits::Pointwise("sin"));
  r.Add("x::gelu(Tensor self, *, str approximate='none') -> Tensor", rules::Identity,
        traits::Pointwise("gelu"));
  r.Add("x::hypot(Tensor self, Tensor other) -> Tensor", rules::Broadcast,
        traits::Mirror("hypot"));
  EXPECT_THROW(r.Add("x::pow(Tensor self, Scalar exponent) -> Tensor", rules::Identity,
                     traits::Mirror("pow")),
               std::invalid_argument);  // exponent has no default: needs a named lowering
  EXPECT_THROW(r.Add("x::sin2(Tensor self) -> Tensor", rules::Identity, traits::Mirror("sin")),
               std::invalid_argument);  // one language op mirrors one operator
  EXPECT_THROW(r.Add("x::add(Tensor a, Tensor b) -> Tensor", rules::Broadcast,
                     traits::Pointwise("add2")),
               std::invalid_argument);  // pointwise reads one tensor
  EXPECT_THROW(r.Add("x::split(Tensor self) -> Tensor[]", rules::Identity, traits::Mirror("sp")),
               std::invalid_argument);  // a mirror returns one tensor
  EXPECT_THROW(r.Add("x::bad(Tensor self) -> Tensor", rules::Identity, traits::Lower("Bad-Name")),
               std::invalid_argument);
  EXPECT_THROW(r.Add("x::put(Tensor self) -> Tensor", rules::Identity,
                     traits::ExactOrAccumulates()),
               std::invalid_argument);  // needs an `accumulate` argument
  // A trait set twice, differently, is a table error; the same value twice is not.
  EXPECT_THROW(traits::Exact() | traits::SumsLastDim(), std::logic_error);
  EXPECT_THROW(traits::Lower("a") | traits::Lower("b"), std::logic_error);
  OpTraits both = traits::Fresh() | traits::Exact() | traits::Fresh();
  EXPECT_EQ(both.layout, ResultLayout::kFreshContiguous);
  EXPECT_EQ(both.rounding, Rounding::kExact);
  ASSERT_EQ(r.Mirrors().size(), 3u);
  EXPECT_EQ(r.Mirrors()[0]->traits.lowering.name, "gelu");  // sorted by operator name
}

TEST(OpRegistryTest, AMirrorIsTypedByItsOperatorsOwnRule) {
  const OpInfo* exp = OpRegistry::Default().Find(OpName{"aten", "exp", ""});
  ASSERT_NE(exp, nullptr);
  ASSERT_EQ(exp->traits.lowering.kind, OpLowering::Kind::kMirror);
  EXPECT_EQ(InferMirror(*exp, {TensorType{DType::kInt64, {Dim(2), Dim(3)}}}).ToString(),
            "f32[2, 3]");  // integral inputs compute in the default float dtype
  const OpInfo* gelu = OpRegistry::Default().Find(OpName{"aten", "gelu", ""});
  ASSERT_NE(gelu, nullptr);
  EXPECT_THROW(InferMirror(*gelu, {TensorType{DType::kInt64, {Dim(2)}}}), ShapeError);
  Node call = MirrorCall(*gelu);
  EXPECT_EQ(call.args.size(), 1u);
  BoundArgs args(gelu->schema, call);
  EXPECT_EQ(args["approximate"].as_string(), "none");
}

TEST(OpRegistryTest, EveryTableEntryLoadsIntoAFreshRegistry) {
  OpRegistry r;
  size_t count = 0;
  for (auto table : {ElementwiseOps, LinalgOps, ShapeOps, ReductionOps, IndexingOps, FactoryOps,
                     CollectiveOps, CustomOps}) {
    for (OpEntry& e : table()) {
      EXPECT_NO_THROW(r.Add(e.schema, e.rule, e.traits)) << e.schema;
      ++count;
    }
  }
  EXPECT_EQ(r.Names().size(), count);
  EXPECT_EQ(count, OpRegistry::Default().Names().size());
}

// ---- the published corpus: every annotated node output must be inferred exactly -------------

struct CorpusStats {
  int checked = 0;
  int skipped_untyped_inputs = 0;
  std::vector<std::string> failures;
};

void SweepFile(const std::filesystem::path& path, int32_t world_size, CorpusStats* stats) {
  std::ifstream in(path);
  Graph g;
  std::map<std::string, TensorRef> values;
  std::map<std::pair<NodeId, int>, std::string> annotated;  // output -> annotation
  std::map<NodeId, int> line_of;
  std::string line;
  int line_no = 0;
  auto resolve = [&](const std::string& name) -> std::optional<Value> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return Value(it->second);
  };
  while (std::getline(in, line)) {
    ++line_no;
    size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos || line[b] == '#') continue;
    std::string s = line.substr(b);
    if (s.rfind("def forward(self, ", 0) == 0) {
      std::string params = s.substr(18, s.rfind(')') - 18);
      std::stringstream ss(params);
      std::string item;
      while (std::getline(ss, item, ',')) {
        // name: "f32[8, 1536]" -- dims hold commas, so re-join until the closing quote.
        while (std::count(item.begin(), item.end(), '"') == 1) {
          std::string more;
          std::getline(ss, more, ',');
          item += "," + more;
        }
        size_t colon = item.find(':');
        std::string name = item.substr(item.find_first_not_of(' '), colon - item.find_first_not_of(' '));
        size_t q1 = item.find('"'), q2 = item.rfind('"');
        Node n;
        n.kind = NodeKind::kInput;
        n.name = name;
        n.outputs.push_back({name, MustParse(item.substr(q1 + 1, q2 - q1 - 1))});
        values[name] = {g.AddNode(std::move(n)), 0};
      }
      continue;
    }
    // name[: "type"] = rhs[;  x = None]
    size_t eq = s.find(" = ");
    if (eq == std::string::npos) continue;
    std::string lhs = s.substr(0, eq), rhs = s.substr(eq + 3);
    std::string name = lhs, type;
    if (size_t colon = lhs.find(": \""); colon != std::string::npos) {
      name = lhs.substr(0, colon);
      type = lhs.substr(colon + 3, lhs.size() - colon - 4);
    }
    if (rhs.rfind("self._tensor_constant", 0) == 0) {
      Node n;
      n.kind = NodeKind::kConstant;
      n.name = name;
      n.outputs.push_back({name, std::nullopt});
      values[name] = {g.AddNode(std::move(n)), 0};
      continue;
    }
    if (rhs.rfind("torch.ops.", 0) != 0) {
      // getitem: base[i]
      size_t open = rhs.find('['), close = rhs.find(']');
      if (open == std::string::npos) continue;
      std::string base = rhs.substr(0, open);
      int index = std::stoi(rhs.substr(open + 1, close - open - 1));
      TensorRef ref{values.at(base).node, index};
      Node& producer = g.nodes[ref.node];
      if (producer.outputs.size() <= static_cast<size_t>(index)) producer.outputs.resize(index + 1);
      producer.outputs[index] = {name, MustParse(type)};
      annotated[{ref.node, index}] = type;
      values[name] = ref;
      continue;
    }
    size_t open = rhs.find('(');
    size_t close = rhs.rfind(')');  // the call ends before ";  x = None"
    if (size_t semi = rhs.find(";  "); semi != std::string::npos) close = rhs.rfind(')', semi);
    Node n;
    n.name = name;
    LiteralReader(rhs.substr(open + 1, close - open - 1), resolve).ReadArgs(&n.args, &n.kwargs);
    std::string callee = rhs.substr(0, open);
    if (callee == "torch.ops.higher_order.auto_functionalized") {
      n.functionalized = true;
      n.op = *OpName::Parse(n.args.at(0).as_op_ref().qualified_name);
    } else {
      n.op = *OpName::Parse(callee);
    }
    if (!type.empty()) n.outputs.push_back({name, MustParse(type)});
    NodeId id = g.AddNode(std::move(n));
    if (!type.empty()) annotated[{id, 0}] = type;
    line_of[id] = line_no;
    values[name] = {id, 0};
  }
  for (const auto& [id, at] : line_of) {
    const Node& n = g.nodes[id];
    std::string where = path.string() + ":" + std::to_string(at) + " " + n.op.ToString();
    std::vector<std::optional<TensorType>> got;
    try {
      got = OpRegistry::Default().Infer(g, n, world_size);
    } catch (const ShapeError& e) {
      if (std::string(e.what()).find("has no tensor type") != std::string::npos) {
        ++stats->skipped_untyped_inputs;
      } else {
        stats->failures.push_back(where + ": " + e.what());
      }
      continue;
    } catch (const std::exception& e) {
      stats->failures.push_back(where + ": " + e.what());
      continue;
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      auto it = annotated.find({id, static_cast<int>(i)});
      if (it == annotated.end()) continue;
      ++stats->checked;
      std::string inferred = i < got.size() && got[i] ? got[i]->ToString() : "None";
      if (inferred != it->second) {
        stats->failures.push_back(where + " output " + std::to_string(i) + ": annotated " +
                                  it->second + ", inferred " + inferred);
      }
    }
  }
}

TEST(OpRegistryCorpusTest, InfersEveryAnnotatedOutputOfThePublishedGraphs) {
  namespace fs = std::filesystem;
  fs::path root(GG_CORPUS_DIR);
  if (!fs::exists(root)) GTEST_SKIP() << "corpus not found at " << root;
  CorpusStats stats;
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() == ".py") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    // paral<N>_layer<L>: N ranks.
    std::string dir = file.parent_path().filename().string();
    int32_t world = std::atoi(dir.substr(5, dir.find('_') - 5).c_str());
    SweepFile(file, world, &stats);
  }
  EXPECT_GT(files.size(), 0u);
  EXPECT_GT(stats.checked, 1500);
  for (const std::string& f : stats.failures) ADD_FAILURE() << f;
  std::cout << "corpus: " << files.size() << " files, " << stats.checked
            << " annotated outputs checked, " << stats.skipped_untyped_inputs
            << " nodes skipped (inputs are untyped graph constants)\n";
}

}  // namespace
}  // namespace gg::ir
