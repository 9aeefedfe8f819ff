// Numeric check of every lowering (symbolic/lowering.cc) on the sample calls of
// runtime/lowering_samples.txt (its header gives the syntax): each call becomes a small FX graph
// (graph inputs for its tensor arguments, producer nodes for nested calls), runs with the executor
// at float64, float32 and bfloat16, is lowered with symbolic::LowerNode, and every output's term,
// evaluated with term_eval on the call's input values, must equal what ATen computed. A wrong
// lowering would let inference prove a wrong program equal to its model, so each entry of the
// lowering table is checked here, and a coverage test requires a sample for each of them.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/fx_reader.h"
#include "ir/op_registry.h"
#include "runtime/executor.h"
#include "runtime/op_kernels.h"
#include "runtime/term_eval.h"
#include "symbolic/extract.h"
#include "symbolic/lowering.h"
#include "symbolic/tensor_lang.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

// ---- the sample table ---------------------------------------------------------------------------

// A graph input the sample draws: its type as written and the range of its values.
struct TensorSpec {
  ir::TensorType type;
  std::optional<std::pair<double, double>> range;  // [lo, hi)
};

struct Call;

// One argument value of a sample call (see the syntax in lowering_samples.txt).
struct SampleValue {
  enum class Kind { kTensor, kCall, kRef, kList, kTuple, kLiteral };
  Kind kind = Kind::kLiteral;
  TensorSpec tensor;               // kTensor
  std::shared_ptr<Call> call;      // kCall
  std::string ref;                 // kRef: the name used
  std::string def;                 // a `%name=` given to this value ("" when none)
  std::optional<int64_t> item;     // `[k]` after a call or a reference: its output k
  std::vector<SampleValue> items;  // kList, kTuple
  std::string literal;             // kLiteral, as the FX reader reads it
};

struct Call {
  ir::OpName op;
  bool functionalized = false;
  std::vector<std::pair<std::string, SampleValue>> args;  // name "" for positional ones
};

struct Sample {
  std::string file;
  int line = 0;
  std::string text;
  Call call;
  bool all_opaque = false;  // `-> opaque`
  std::set<size_t> opaque;  // `-> opaque[i, ...]`
  bool rng_positional = false;
  bool finite = false;            // `finite`: no run with NaN and infinities in the inputs
  std::vector<ir::DType> dtypes;  // the runs' floating dtypes (one entry when it does not sweep)
  bool sweeps = false;            // mentions f32, which each run replaces
  std::string bug;                // the `# BUG:` text of a known failure
  std::string where() const { return file + ":" + std::to_string(line); }
};

// The floating dtypes a sweeping sample runs at.
const std::vector<ir::DType> kSweep = {ir::DType::kFloat64, ir::DType::kFloat32,
                                       ir::DType::kBFloat16};

// Tokens of one sample line.
struct Token {
  enum class Kind { kIdent, kNumber, kString, kPunct, kDots, kArrow, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;
  size_t column = 0;
};

class LineParser {
 public:
  LineParser(std::string_view text, const std::string& file, int line) : file_(file), line_(line) {
    Tokenize(text);
  }

  Sample Parse(std::string text, std::string bug) {
    Sample s;
    s.file = file_;
    s.line = line_;
    s.text = std::move(text);
    s.bug = std::move(bug);
    s.call = ParseCall();
    ParseOptions(&s);
    s.sweeps = sweeps_;
    if (!s.dtypes.empty() && !sweeps_) {
      throw InputError(file_, line_, "dtypes(...) on a line without f32, which it would replace");
    }
    if (s.dtypes.empty()) s.dtypes = sweeps_ ? kSweep : std::vector<ir::DType>{ir::DType::kFloat32};
    return s;
  }

 private:
  [[noreturn]] void Fail(const Token& at, const std::string& why) const {
    throw InputError(file_, line_, "column " + std::to_string(at.column + 1) + ": " + why);
  }
  const Token& Peek(size_t k = 0) const { return tokens_[std::min(pos_ + k, tokens_.size() - 1)]; }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool IsPunct(const Token& t, char c) const {
    return t.kind == Token::Kind::kPunct && t.text.size() == 1 && t.text[0] == c;
  }
  void Expect(char c, const char* where) {
    if (!IsPunct(Peek(), c)) {
      Fail(Peek(), std::string("expected '") + c + "' " + where + ", found " + Describe(Peek()));
    }
    Next();
  }
  static std::string Describe(const Token& t) {
    return t.kind == Token::Kind::kEnd ? "the end of the line" : "'" + t.text + "'";
  }

  void Tokenize(std::string_view s) {
    auto ident_char = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    };
    size_t i = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i;
        continue;
      }
      Token t;
      t.column = i;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        // a dotted or namespaced name: aten::add.Tensor, torch.float32, f32
        size_t j = i;
        while (j < s.size()) {
          if (ident_char(s[j])) {
            ++j;
          } else if (s[j] == '.' && j + 1 < s.size() && ident_char(s[j + 1])) {
            ++j;
          } else if (s.substr(j, 2) == "::" && j + 2 < s.size() && ident_char(s[j + 2])) {
            j += 2;
          } else {
            break;
          }
        }
        t.kind = Token::Kind::kIdent;
        t.text = std::string(s.substr(i, j - i));
        i = j;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        // digits [. digits] [e [+-] digits]; "0..6" is 0, .., 6
        size_t j = i;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
          ++j;
          while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        }
        if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
          size_t k = j + 1;
          if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
          if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
            j = k;
            while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
          }
        }
        t.kind = Token::Kind::kNumber;
        t.text = std::string(s.substr(i, j - i));
        i = j;
      } else if (c == '\'' || c == '"') {
        size_t j = s.find(c, i + 1);
        if (j == std::string_view::npos) {
          tokens_.push_back(t);
          Fail(t, "unterminated string");
        }
        t.kind = Token::Kind::kString;
        t.text = std::string(s.substr(i, j + 1 - i));
        i = j + 1;
      } else if (s.substr(i, 2) == "..") {
        t.kind = Token::Kind::kDots;
        t.text = "..";
        i += 2;
      } else if (s.substr(i, 2) == "->") {
        t.kind = Token::Kind::kArrow;
        t.text = "->";
        i += 2;
      } else if (std::string_view("()[]{},=%-").find(c) != std::string_view::npos) {
        t.kind = Token::Kind::kPunct;
        t.text = std::string(1, c);
        ++i;
      } else {
        t.text = std::string(1, c);
        tokens_.push_back(t);
        Fail(t, "unexpected character '" + t.text + "'");
      }
      tokens_.push_back(std::move(t));
    }
    Token end;
    end.column = s.size();
    tokens_.push_back(end);
  }

  ir::OpName ParseOpName(const Token& t) {
    std::optional<ir::OpName> op = ir::OpName::Parse(t.text);
    if (t.kind != Token::Kind::kIdent || t.text.find("::") == std::string::npos || !op ||
        op->overload.empty()) {
      Fail(t, "expected an operator ns::name.overload, found " + Describe(t));
    }
    return *op;
  }

  Call ParseCall() {
    const Token& head = Next();
    Call call;
    if (head.kind == Token::Kind::kIdent && head.text == "auto_functionalized") {
      Expect('(', "after auto_functionalized");
      call.op = ParseOpName(Next());
      call.functionalized = true;
      if (IsPunct(Peek(), ',')) Next();
    } else {
      call.op = ParseOpName(head);
      Expect('(', ("after " + head.text).c_str());
    }
    while (!IsPunct(Peek(), ')')) {
      std::string name;
      if (Peek().kind == Token::Kind::kIdent && IsPunct(Peek(1), '=')) {
        name = Next().text;
        if (name.find_first_of(".:") != std::string::npos) Fail(Peek(), "bad keyword " + name);
        Next();
      } else if (call.functionalized) {
        Fail(Peek(), "auto_functionalized takes keyword arguments only");
      } else if (!call.args.empty() && !call.args.back().first.empty()) {
        Fail(Peek(), "positional argument after keyword arguments");
      }
      call.args.emplace_back(name, ParseValue());
      if (IsPunct(Peek(), ',')) {
        Next();
      } else if (!IsPunct(Peek(), ')')) {
        Fail(Peek(), "expected ',' or ')' in the arguments of " + call.op.ToString() + ", found " +
                         Describe(Peek()));
      }
    }
    Next();  // )
    return call;
  }

  std::optional<int64_t> ParseItem() {
    if (!IsPunct(Peek(), '[')) return std::nullopt;
    Next();
    const Token& k = Next();
    if (k.kind != Token::Kind::kNumber ||
        k.text.find_first_not_of("0123456789") != std::string::npos) {
      Fail(k, "expected an output index in [k], found " + Describe(k));
    }
    Expect(']', "after the output index");
    return std::stoll(k.text);
  }

  double ParseSignedNumber() {
    bool negative = false;
    if (IsPunct(Peek(), '-')) {
      Next();
      negative = true;
    }
    const Token& t = Next();
    if (t.kind != Token::Kind::kNumber) Fail(t, "expected a number, found " + Describe(t));
    double v = std::stod(t.text);
    return negative ? -v : v;
  }

  SampleValue ParseTensorType(ir::DType dtype) {
    SampleValue v;
    v.kind = SampleValue::Kind::kTensor;
    v.tensor.type.dtype = dtype;
    Expect('[', "after the dtype");
    while (!IsPunct(Peek(), ']')) {
      const Token& d = Next();
      if (d.kind != Token::Kind::kNumber ||
          d.text.find_first_not_of("0123456789") != std::string::npos || d.text.size() > 6) {
        Fail(d, "expected a static dimension, found " + Describe(d));
      }
      v.tensor.type.shape.push_back(ir::Dim(std::stoll(d.text)));
      if (IsPunct(Peek(), ',')) {
        Next();
      } else if (!IsPunct(Peek(), ']')) {
        Fail(Peek(), "expected ',' or ']' in the shape, found " + Describe(Peek()));
      }
    }
    Next();  // ]
    if (dtype == ir::DType::kFloat32) sweeps_ = true;
    if (IsPunct(Peek(), '{')) {
      const Token& open = Next();
      if (dtype == ir::DType::kBool) Fail(open, "bool tensors take no value range");
      double lo = ParseSignedNumber();
      if (Peek().kind != Token::Kind::kDots) Fail(Peek(), "expected '..' in {lo..hi}");
      Next();
      double hi = ParseSignedNumber();
      Expect('}', "to close {lo..hi}");
      if (!(lo < hi)) Fail(open, "empty value range {lo..hi}: lo must be below hi");
      if (ir::IsIntegral(dtype, false) && (lo != std::floor(lo) || hi != std::floor(hi))) {
        Fail(open, "an integer tensor's range has integer bounds");
      }
      v.tensor.range = std::make_pair(lo, hi);
    }
    return v;
  }

  SampleValue ParseValue() {
    const Token& t = Peek();
    if (IsPunct(t, '%')) {
      Next();
      const Token& name = Next();
      if (name.kind != Token::Kind::kIdent || name.text.find_first_of(".:") != std::string::npos) {
        Fail(name, "expected a name after '%', found " + Describe(name));
      }
      if (IsPunct(Peek(), '=')) {
        Next();
        if (defined_.count(name.text)) Fail(name, "%" + name.text + " is defined twice");
        SampleValue v = ParseValue();
        if (v.kind != SampleValue::Kind::kTensor && v.kind != SampleValue::Kind::kCall) {
          Fail(name, "%" + name.text + " must name a tensor or a call");
        }
        v.def = name.text;
        defined_.insert(name.text);
        return v;
      }
      if (!defined_.count(name.text)) Fail(name, "%" + name.text + " is used before it is defined");
      SampleValue v;
      v.kind = SampleValue::Kind::kRef;
      v.ref = name.text;
      v.item = ParseItem();
      return v;
    }
    if (IsPunct(t, '[') || IsPunct(t, '(')) {
      const char close = IsPunct(t, '[') ? ']' : ')';
      Next();
      SampleValue v;
      v.kind = close == ']' ? SampleValue::Kind::kList : SampleValue::Kind::kTuple;
      while (!IsPunct(Peek(), close)) {
        v.items.push_back(ParseValue());
        if (IsPunct(Peek(), ',')) {
          Next();
        } else if (!IsPunct(Peek(), close)) {
          Fail(Peek(), std::string("expected ',' or '") + close + "', found " + Describe(Peek()));
        }
      }
      Next();
      return v;
    }
    if (t.kind == Token::Kind::kNumber || IsPunct(t, '-')) {
      SampleValue v;
      if (IsPunct(t, '-')) {
        Next();
        v.literal = "-";
        if (Peek().kind != Token::Kind::kNumber && Peek().text != "inf") {
          Fail(Peek(), "expected a number after '-', found " + Describe(Peek()));
        }
      }
      v.literal += Next().text;
      return v;
    }
    if (t.kind == Token::Kind::kString) {
      SampleValue v;
      v.literal = Next().text;
      return v;
    }
    if (t.kind != Token::Kind::kIdent) Fail(t, "expected a value, found " + Describe(t));
    if (IsPunct(Peek(1), '(')) {
      if (t.text.find("::") == std::string::npos && t.text != "auto_functionalized") {
        Fail(t, "'" + t.text + "(' is not a call of an operator ns::name.overload");
      }
      SampleValue v;
      v.kind = SampleValue::Kind::kCall;
      v.call = std::make_shared<Call>(ParseCall());
      v.item = ParseItem();
      return v;
    }
    if (IsPunct(Peek(1), '[')) {
      std::optional<ir::DType> dtype = ir::ParseDType(t.text);
      if (!dtype || t.text.find('.') != std::string::npos) {
        Fail(t, "expected a tensor type dtype[d, ...] (f32, bf16, i64, b8, ...), found " +
                    Describe(t));
      }
      Next();
      return ParseTensorType(*dtype);
    }
    static const std::set<std::string> kNames = {"True", "False", "None", "inf", "nan"};
    if (!kNames.count(t.text) && t.text.rfind("torch.", 0) != 0) {
      Fail(t, "unknown name " + Describe(t) +
                  " (literals: numbers, strings, True, False, None, inf, nan, torch.<name>)");
    }
    if (t.text == "torch.float32") sweeps_ = true;
    SampleValue v;
    v.literal = Next().text;
    return v;
  }

  void ParseOptions(Sample* s) {
    while (Peek().kind != Token::Kind::kEnd) {
      const Token& t = Next();
      if (t.kind == Token::Kind::kArrow) {
        const Token& what = Next();
        if (what.text != "opaque")
          Fail(what, "expected 'opaque' after '->', found " + Describe(what));
        if (s->all_opaque || !s->opaque.empty()) Fail(what, "'-> opaque' given twice");
        if (!IsPunct(Peek(), '[')) {
          s->all_opaque = true;
          continue;
        }
        Next();
        while (!IsPunct(Peek(), ']')) {
          const Token& k = Next();
          if (k.kind != Token::Kind::kNumber ||
              k.text.find_first_not_of("0123456789") != std::string::npos) {
            Fail(k, "expected an output index, found " + Describe(k));
          }
          s->opaque.insert(std::stoul(k.text));
          if (IsPunct(Peek(), ',')) Next();
        }
        Next();
        if (s->opaque.empty()) Fail(what, "'-> opaque[]' names no output");
      } else if (t.kind == Token::Kind::kIdent && t.text == "rng_positional") {
        s->rng_positional = true;
      } else if (t.kind == Token::Kind::kIdent && t.text == "finite") {
        s->finite = true;
      } else if (t.kind == Token::Kind::kIdent && t.text == "dtypes") {
        Expect('(', "after dtypes");
        while (!IsPunct(Peek(), ')')) {
          const Token& d = Next();
          std::optional<ir::DType> dtype = ir::ParseDType(d.text);
          if (!dtype || !ir::IsFloatingPoint(*dtype)) {
            Fail(d, "expected a floating dtype, found " + Describe(d));
          }
          s->dtypes.push_back(*dtype);
          if (IsPunct(Peek(), ',')) Next();
        }
        Next();
        if (s->dtypes.empty()) Fail(t, "dtypes() names no dtype");
      } else {
        Fail(t,
             "expected an option (-> opaque, -> opaque[i], rng_positional, finite, dtypes(...)) or "
             "'#', found " +
                 Describe(t));
      }
    }
    if (s->rng_positional && s->call.op.ToString() != "aten::native_dropout.default") {
      throw InputError(file_, line_, "rng_positional is for aten::native_dropout.default only");
    }
  }

  std::string file_;
  int line_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool sweeps_ = false;
  std::set<std::string> defined_;
};

// The index of the '#' that starts the comment of `line` (outside strings), or npos.
size_t CommentStart(std::string_view line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (quote != 0) {
      if (line[i] == quote) quote = 0;
    } else if (line[i] == '\'' || line[i] == '"') {
      quote = line[i];
    } else if (line[i] == '#') {
      return i;
    }
  }
  return std::string_view::npos;
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e + 1 - b));
}

// Parses the sample table; a malformed line is an InputError naming file:line.
std::vector<Sample> ParseSamples(std::string_view text, const std::string& file) {
  std::vector<Sample> samples;
  int line_no = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    size_t hash = CommentStart(line);
    std::string code = Trim(line.substr(0, hash));
    std::string comment = hash == std::string_view::npos ? "" : Trim(line.substr(hash + 1));
    if (code.empty()) continue;
    std::string bug;
    if (comment.rfind("BUG", 0) == 0) {
      if (comment.rfind("BUG:", 0) != 0 || Trim(comment.substr(4)).empty()) {
        throw InputError(file, line_no, "a known failure is marked '# BUG: <what differs>'");
      }
      bug = Trim(comment.substr(4));
    }
    samples.push_back(LineParser(code, file, line_no).Parse(code, bug));
    if (end == text.size()) break;
  }
  return samples;
}

// ---- one sample as a graph ----------------------------------------------------------------------

// A graph input of the built graph with the range its values are drawn from.
struct DrawnInput {
  ir::TensorType type;
  std::optional<std::pair<double, double>> range;
};

struct Built {
  ir::Graph graph;
  ir::NodeId node = -1;  // the sample's call
  std::vector<DrawnInput> inputs;
  std::string fx;
};

std::string PythonOp(const ir::OpName& op) {
  return "torch.ops." + op.ns + "." + op.name + "." + op.overload;
}

// Whether the FX printer writes the call as one value (one Tensor return) or as a tuple read
// through getitem.
bool SingleValued(const Call& call) {
  if (call.functionalized) return false;
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(call.op);
  if (info == nullptr) return true;
  const auto& returns = info->schema.returns;
  return returns.size() == 1 && returns[0].rfind("Tensor", 0) == 0 &&
         returns[0].find('[') == std::string::npos;
}

// Writes the FX text of one sample at one floating dtype.
class FxWriter {
 public:
  explicit FxWriter(ir::DType run) : run_(run) {}

  std::string Write(const Call& call, std::vector<DrawnInput>* inputs) {
    std::string y = EmitCall(call, "y");
    std::ostringstream fx;
    fx << "class GraphModule(torch.nn.Module):\n    def forward(self";
    for (size_t i = 0; i < inputs_.size(); ++i) {
      fx << ", a" << i << ": \"" << inputs_[i].type.ToString() << "\"";
    }
    fx << "):\n";
    for (const std::string& line : body_) fx << "        " << line << "\n";
    fx << "        return " << (SingleValued(call) ? "(" + y + ",)" : "()") << "\n";
    *inputs = inputs_;
    return fx.str();
  }

 private:
  struct Named {
    std::string expr;  // the FX name of the value or of the call's node
    bool call = false;
  };

  std::string Getitem(const std::string& node, int64_t k) {
    const std::string name = node + "_" + std::to_string(k);
    if (getitems_.insert(name).second)
      body_.push_back(name + " = " + node + "[" + std::to_string(k) + "]");
    return name;
  }

  std::string Emit(const SampleValue& v) {
    switch (v.kind) {
      case SampleValue::Kind::kTensor: {
        DrawnInput in{v.tensor.type, v.tensor.range};
        if (in.type.dtype == ir::DType::kFloat32) in.type.dtype = run_;
        const std::string name = "a" + std::to_string(inputs_.size());
        inputs_.push_back(in);
        if (!v.def.empty()) named_[v.def] = {name, false};
        return name;
      }
      case SampleValue::Kind::kCall: {
        const std::string node = EmitCall(*v.call, "n" + std::to_string(nodes_++));
        if (!v.def.empty()) named_[v.def] = {node, true};
        return v.item ? Getitem(node, *v.item) : node;
      }
      case SampleValue::Kind::kRef: {
        const Named& n = named_.at(v.ref);
        if (!v.item) return n.expr;
        if (!n.call) throw std::invalid_argument("%" + v.ref + "[k] of a tensor, not of a call");
        return Getitem(n.expr, *v.item);
      }
      case SampleValue::Kind::kList:
      case SampleValue::Kind::kTuple: {
        std::string text = v.kind == SampleValue::Kind::kList ? "[" : "(";
        for (size_t i = 0; i < v.items.size(); ++i) text += (i ? ", " : "") + Emit(v.items[i]);
        if (v.kind == SampleValue::Kind::kTuple && v.items.size() == 1) text += ",";
        return text + (v.kind == SampleValue::Kind::kList ? "]" : ")");
      }
      case SampleValue::Kind::kLiteral:
        return v.literal == "torch.float32" ? ir::TorchName(run_) : v.literal;
    }
    return "";
  }

  std::string EmitCall(const Call& call, const std::string& name) {
    std::vector<std::string> args;
    if (call.functionalized) args.push_back(PythonOp(call.op));
    for (const auto& [key, value] : call.args) {
      std::string text = Emit(value);
      args.push_back(key.empty() ? text : key + " = " + text);
    }
    std::string line =
        name + " = " +
        (call.functionalized ? std::string("torch.ops.higher_order.auto_functionalized")
                             : PythonOp(call.op)) +
        "(";
    for (size_t i = 0; i < args.size(); ++i) line += (i ? ", " : "") + args[i];
    body_.push_back(line + ")");
    return name;
  }

  ir::DType run_;
  std::vector<DrawnInput> inputs_;
  std::vector<std::string> body_;
  std::map<std::string, Named> named_;
  std::set<std::string> getitems_;
  int nodes_ = 0;
};

// The graph of `sample` at floating dtype `run`; an InputError at the sample's line when the FX
// reader (the registry's shape rules) rejects it.
Built Build(const Sample& sample, ir::DType run) {
  Built b;
  b.fx = FxWriter(run).Write(sample.call, &b.inputs);
  try {
    b.graph = frontend::ParseFx(b.fx, sample.where() + ".py");
  } catch (const std::exception& e) {
    throw InputError(
        sample.file, sample.line,
        "the graph of this sample does not load: " + std::string(e.what()) + "\n" + b.fx);
  }
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(b.graph.nodes.size()); ++id) {
    if (b.graph.node(id).name == "y") b.node = id;
  }
  if (b.node < 0) throw InputError(sample.file, sample.line, "no node y in\n" + b.fx);
  return b;
}

// The registry name of the sample's operator (what LoweredOperatorNames lists).
std::string RegistryName(const Call& call) {
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(call.op);
  return info ? info->schema.name.ToString() : call.op.ToString();
}

// ---- running a sample ---------------------------------------------------------------------------

// The values of one graph input; with `nonfinite`, a floating input of two or more elements gets
// a NaN and an infinity (and a -infinity from three elements) at random positions, which every
// lowered term must carry to where ATen puts them.
at::Tensor Draw(const DrawnInput& in, bool nonfinite) {
  std::vector<int64_t> shape;
  for (const ir::Dim& d : in.type.shape) shape.push_back(d.value());
  const at::ScalarType dtype = ToAten(in.type.dtype);
  if (in.type.dtype == ir::DType::kBool) return at::rand(shape, at::kDouble) < 0.5;
  if (ir::IsIntegral(in.type.dtype, false)) {
    auto [lo, hi] = in.range.value_or(std::make_pair(0.0, 10.0));
    return at::randint(static_cast<int64_t>(lo), static_cast<int64_t>(hi), shape,
                       at::TensorOptions().dtype(dtype));
  }
  if (ir::IsComplex(in.type.dtype)) return at::randn(shape, at::kComplexDouble).to(dtype);
  at::Tensor x = at::randn(shape, at::kDouble);
  if (in.range) {
    auto [lo, hi] = *in.range;
    x = at::rand(shape, at::kDouble) * (hi - lo) + lo;
  }
  if (nonfinite && x.numel() >= 2) {
    at::Tensor flat = x.view({-1});
    at::Tensor positions = at::randperm(x.numel(), at::kLong);
    flat[positions[0].item<int64_t>()] = NAN;
    flat[positions[1].item<int64_t>()] = INFINITY;
    if (x.numel() >= 3) flat[positions[2].item<int64_t>()] = -INFINITY;
  }
  return x.to(dtype);
}

// Relative tolerance of a floating output: a few roundings of its dtype for what ATen rounds
// (bf16: ATen's kernels round once or twice; float64: summation order only).
double Tolerance(at::ScalarType dtype) {
  switch (dtype) {
    case at::kDouble:
      return 1e-9;
    case at::kFloat:
      return 1e-4;
    case at::kHalf:
      return 5e-3;
    default:
      return 3e-2;  // bfloat16
  }
}

std::string Shape(const at::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

// "" when the term's value `got` equals ATen's `want`; else what differs, with the figures.
std::string Compare(const at::Tensor& got, const at::Tensor& want) {
  std::ostringstream out;
  if (got.is_complex() || want.is_complex()) {  // complex values: as their (real, imag) pairs
    if (got.is_complex() != want.is_complex()) {
      out << "the term computes " << got.scalar_type() << " where ATen gives "
          << want.scalar_type();
      return out.str();
    }
    return Compare(at::view_as_real(got.resolve_conj()), at::view_as_real(want.resolve_conj()));
  }
  if (got.sizes() != want.sizes()) {
    out << "shape " << Shape(got) << " where ATen gives " << Shape(want);
    return out.str();
  }
  const bool want_float = at::isFloatingType(want.scalar_type());
  if (at::isFloatingType(got.scalar_type()) != want_float) {
    out << "the term computes " << got.scalar_type() << " where ATen gives " << want.scalar_type();
    return out.str();
  }
  at::Tensor g = got.to(at::kDouble), w = want.to(at::kDouble);
  if (!want_float) {
    if (at::equal(g, w)) return "";
    at::Tensor differ = g != w;
    out << differ.sum().item<int64_t>() << " of " << w.numel() << " elements differ (exact "
        << want.scalar_type() << " output), max abs error " << (g - w).abs().max().item<double>()
        << ", shape " << Shape(w);
    return out.str();
  }
  at::Tensor same = (g == w).logical_or(at::isnan(g).logical_and(at::isnan(w)));
  at::Tensor finite = at::isfinite(w);
  double rms = 0.0;
  if (finite.any().item<bool>())
    rms = at::sqrt(w.masked_select(finite).square().mean()).item<double>();
  const double tol = Tolerance(want.scalar_type());
  at::Tensor diff = (g - w).abs();
  at::Tensor ok = same.logical_or(diff <= tol * (w.abs() + rms + 1e-300));
  if (ok.all().item<bool>()) return "";
  at::Tensor bad = ok.logical_not();
  at::Tensor both_finite = at::isfinite(g).logical_and(finite);
  at::Tensor finite_bad = bad.logical_and(both_finite);
  at::Tensor nonfinite_bad = bad.logical_and(both_finite.logical_not());
  out << bad.sum().item<int64_t>() << " of " << w.numel() << " elements differ beyond rel " << tol
      << " (" << want.scalar_type() << ")";
  if (finite_bad.any().item<bool>()) {
    out << ": max abs error " << diff.masked_select(finite_bad).max().item<double>();
  }
  if (nonfinite_bad.any().item<bool>()) {
    // one position as an example: where the term and ATen disagree on a NaN or an infinity
    const int64_t at = nonfinite_bad.reshape({-1}).nonzero()[0][0].item<int64_t>();
    out << "; " << nonfinite_bad.sum().item<int64_t>()
        << " where one side is NaN or infinite (term " << g.reshape({-1})[at].item<double>()
        << ", ATen " << w.reshape({-1})[at].item<double>() << ")";
  }
  out << "; RMS of ATen's finite values " << rms << ", shape " << Shape(w);
  return out.str();
}

std::string Clip(const std::string& s, size_t n = 400) {
  return s.size() <= n ? s : s.substr(0, n) + "...";
}

// Runs `sample` once (one dtype, one seed): "" when every output lowers as the line says and every
// lowered output equals ATen's; else the first problem.
std::string RunOnce(const Sample& sample, const Built& b, uint64_t seed, bool nonfinite) {
  const ir::Graph& graph = b.graph;
  const ir::Node& node = graph.node(b.node);
  at::manual_seed(seed);
  GraphInputs inputs;
  for (const DrawnInput& in : b.inputs) inputs.inputs.push_back(Draw(in, nonfinite));
  std::set<ir::TensorRef> keep;
  for (ir::TensorRef ref : node.TensorInputs()) keep.insert(ref);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].type) keep.insert({b.node, static_cast<int32_t>(i)});
  }
  // A call that must stay opaque has nothing to compare and is not run, so a line may name one
  // that ATen's CPU kernels reject (half_to_float softmax).
  ExecutionResult run;
  if (!sample.all_opaque) {
    try {
      ExecutionOptions options;
      options.seed = seed;
      run = Execute(graph, inputs, options, keep);
    } catch (const std::exception& e) {
      return "ATen cannot run it: " + Clip(ErrorText(e));
    }
  }
  auto value = [&](ir::TensorRef ref) -> at::Tensor {
    if (auto it = run.kept.find(ref); it != run.kept.end()) return it->second;
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
      if (graph.inputs[i] == ref.node) return inputs.inputs[i];
    }
    return at::Tensor();
  };

  // The call over leaves holding its inputs' values (floating ones exactly, as float64).
  const symbolic::TensorLanguage& lang = symbolic::TensorLanguage::Get();
  symbolic::LeafTable leaves;
  symbolic::EGraph egraph(lang.ops());
  const auto& analysis = egraph.AddAnalysis(std::make_unique<symbolic::TensorAnalysis>(leaves));
  std::map<int64_t, at::Tensor> values;
  symbolic::TensorClassFn leaf_of = [&](ir::TensorRef ref) {
    symbolic::TensorLeaf leaf{symbolic::TensorLeaf::Side::kSeq, 0, ref, graph.type(ref),
                              graph.ValueName(ref)};
    int64_t id = leaves.Intern(leaf);
    at::Tensor v = value(ref);
    if (v.defined() && at::isFloatingType(v.scalar_type())) v = v.to(at::kDouble);
    if (v.defined() && v.is_complex()) v = v.to(at::kComplexDouble);
    values[id] = v;
    return egraph.Add(lang.Tensor(id));
  };
  symbolic::LoweredNode lowered = symbolic::LowerNode(egraph, analysis, graph, b.node, leaf_of,
                                                      "samples", nullptr, sample.rng_positional);
  egraph.Rebuild();
  symbolic::Extractor extractor(egraph, symbolic::AstSize());

  std::map<size_t, at::Tensor> got;  // evaluated terms by output
  std::map<size_t, std::string> text;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (!node.outputs[i].type) continue;  // a void op's None slot
    const std::string out = "output " + std::to_string(i) + ": ";
    const bool expect_opaque = sample.all_opaque || sample.opaque.count(i);
    if (!lowered.outputs[i]) return out + "LowerNode gave no class";
    if (expect_opaque) {
      if (!lowered.opaque[i]) {
        auto term = extractor.Extract(*lowered.outputs[i]);
        return out + "lowered where the line says opaque (drop the '-> opaque' if the lowering " +
               "now covers it): " + Clip(term ? term->expr.ToString(lang.ops()) : "?");
      }
      continue;
    }
    if (lowered.opaque[i]) return out + "opaque: the lowering does not cover this call";
    auto term = extractor.Extract(*lowered.outputs[i]);
    if (!term) return out + "no term extracted";
    text[i] = term->expr.ToString(lang.ops());
    // GG_LOWERING_SAMPLES_VERBOSE=1 prints every term the samples lower to (first run of a line).
    static const bool verbose = std::getenv("GG_LOWERING_SAMPLES_VERBOSE") != nullptr;
    if (verbose && seed == 0)
      std::cout << sample.where() << " output " << i << ": " << text[i] << "\n";
    try {
      TermValue v = EvalTerm(term->expr, values);
      if (!std::holds_alternative<at::Tensor>(v)) return out + "the term is a number: " + text[i];
      got[i] = std::get<at::Tensor>(v);
    } catch (const std::exception& e) {
      return out + "term_eval cannot evaluate " + Clip(text[i]) + ": " + Clip(ErrorText(e), 200);
    }
  }

  for (const auto& [i, g] : got) {
    at::Tensor want = value({b.node, static_cast<int32_t>(i)});
    if (sample.rng_positional) {
      // The model's draw is the term's mask, not ATen's: output 0 is what dropout computes with
      // that mask (ATen's native_dropout_backward(x, mask, 1 / (1 - p))), the mask is not compared.
      if (i == 1) continue;
      ir::BoundArgs args(ir::OpRegistry::Default().Find(node.op)->schema, node);
      const double p = args["p"].as_double();
      if (!got.count(1)) return "rng_positional: the mask did not lower";
      want = at::native_dropout_backward(value(args["input"].as_tensor()), got.at(1).to(at::kBool),
                                         1.0 / (1.0 - p));
    }
    if (!want.defined()) return "output " + std::to_string(i) + ": ATen gives no tensor";
    std::string diff = Compare(g, want);
    if (!diff.empty()) {
      return "output " + std::to_string(i) + " at seed " + std::to_string(seed) +
             (nonfinite ? " (NaN and infinities in the inputs)" : "") + ": " + diff +
             "\n      term " + Clip(text[i]);
    }
  }
  return "";
}

std::string ReadSamplesFile() { return frontend::ReadTextFile(GG_LOWERING_SAMPLES_FILE); }

std::vector<Sample> LoadSamples() {
  return ParseSamples(ReadSamplesFile(), "src/runtime/lowering_samples.txt");
}

// ---- tests --------------------------------------------------------------------------------------

// Seeds of the runs with finite inputs; one more run plants NaN and infinities unless the line
// says `finite`.
constexpr uint64_t kSeeds = 3;

TEST(LoweringSamples, EveryLoweringMatchesAtenOnItsSamples) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<Sample> samples = LoadSamples();
  ASSERT_FALSE(samples.empty());
  int runs = 0, known = 0;
  std::set<std::string> ops;
  std::map<ir::DType, int> runs_by_dtype;
  for (const Sample& s : samples) {
    ops.insert(RegistryName(s.call));
    std::string failure;  // one line per failing dtype
    for (ir::DType dtype : s.dtypes) {
      std::string problem;
      try {
        Built b = Build(s, dtype);
        const uint64_t seeds = s.finite ? kSeeds : kSeeds + 1;
        for (uint64_t seed = 0; seed < seeds && problem.empty(); ++seed) {
          problem = RunOnce(s, b, seed, /*nonfinite=*/seed == kSeeds);
          ++runs;
          if (s.sweeps) ++runs_by_dtype[dtype];
        }
      } catch (const InputError& e) {
        problem = e.problem();
      }
      if (!problem.empty()) {
        failure += "\n    " +
                   (s.sweeps ? std::string(ir::ShortName(dtype)) + ": " : std::string()) + problem;
      }
    }
    if (!s.bug.empty()) {
      if (failure.empty()) {
        ADD_FAILURE() << s.where() << ": marked '# BUG: " << s.bug
                      << "' but it passes now: remove the mark\n  " << s.text;
      } else {
        ++known;
        std::cout << "[ KNOWN BUG ] " << s.where() << ": " << s.bug << "\n    " << s.text << failure
                  << "\n";
      }
    } else if (!failure.empty()) {
      ADD_FAILURE() << s.where() << ": " << s.text << failure;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ SAMPLES   ] " << samples.size() << " samples of " << ops.size() << " operators, "
            << runs << " runs (" << runs_by_dtype[ir::DType::kFloat64] << " f64, "
            << runs_by_dtype[ir::DType::kFloat32] << " f32, " << runs_by_dtype[ir::DType::kBFloat16]
            << " bf16 among those that sweep), " << known << " known bugs, " << seconds << " s\n";
}

// Shapes of an elementwise call: every output has the broadcast shape of its tensor inputs.
bool Elementwise(const ir::Graph& graph, const ir::Node& node) {
  std::vector<ir::TensorRef> ins = node.TensorInputs();
  if (ins.empty()) return false;
  ir::Shape out;
  for (ir::TensorRef ref : ins) {
    const ir::Shape& s = graph.type(ref).shape;
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), ir::Dim(1));
    for (size_t k = 0; k < s.size(); ++k) {
      ir::Dim& o = out[out.size() - s.size() + k];
      if (s[k] == o || s[k] == ir::Dim(1)) continue;
      if (o != ir::Dim(1)) return false;
      o = s[k];
    }
  }
  for (const ir::NodeOutput& o : node.outputs) {
    if (o.type && o.type->shape != out) return false;
  }
  return true;
}

TEST(LoweringSamples, EveryLoweredOperatorHasSamples) {
  std::vector<Sample> samples = LoadSamples();
  const std::vector<std::string> lowered = symbolic::LoweredOperatorNames();
  const std::set<std::string> lowered_set(lowered.begin(), lowered.end());
  std::map<std::string, std::vector<const Sample*>> by_op;
  for (const Sample& s : samples) by_op[RegistryName(s.call)].push_back(&s);

  std::vector<std::string> missing, stale, one_shape;
  for (const std::string& name : lowered) {
    if (!by_op.count(name)) missing.push_back(name);
  }
  for (const auto& [name, lines] : by_op) {
    if (!lowered_set.count(name)) {
      for (const Sample* s : lines) stale.push_back(s->where() + " " + name);
      continue;
    }
    // Elementwise and broadcasting operators need two shapes of inputs (size-1 dims, broadcasts,
    // uneven sizes) among the samples they lower.
    bool elementwise = false;
    std::set<std::vector<ir::Shape>> shapes;
    for (const Sample* s : lines) {
      try {
        Built b = Build(*s, s->dtypes.front());
        const ir::Node& node = b.graph.node(b.node);
        elementwise = elementwise || Elementwise(b.graph, node);
        if (s->all_opaque) continue;
        std::vector<ir::Shape> signature;
        for (ir::TensorRef ref : node.TensorInputs()) signature.push_back(b.graph.type(ref).shape);
        shapes.insert(signature);
      } catch (const InputError&) {
        // a graph that does not load fails the numeric test (or is a known bug) already
      }
    }
    if (elementwise && shapes.size() < 2) one_shape.push_back(name);
  }
  auto join = [](const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& n : names) text += "\n  " + n;
    return text;
  };
  EXPECT_TRUE(missing.empty()) << "operators with a lowering but no sample in "
                               << "src/runtime/lowering_samples.txt:" << join(missing);
  EXPECT_TRUE(stale.empty()) << "samples of operators without a lowering (stale lines):"
                             << join(stale);
  EXPECT_TRUE(one_shape.empty())
      << "elementwise operators whose lowered samples have fewer than two input shapes:"
      << join(one_shape);
}

TEST(LoweringSamples, MalformedLinesAreRejectedWithFileAndLine) {
  const std::pair<const char*, const char*> kBad[] = {
      {"aten::add.Tensor(f32[2, 3]", "expected ',' or ')'"},
      {"aten::add.Tensor(f32[2, x])", "static dimension"},
      {"aten::add.Tensor(i64[3]{5..2}, 1)", "empty value range"},
      {"aten::add.Tensor(i64[3]{0..1.5}, 1)", "integer bounds"},
      {"aten::bitwise_not.default(b8[3]{0..1})", "no value range"},
      {"aten::add.Tensor(%y, 1)", "used before it is defined"},
      {"aten::add.Tensor(f32[3], 1) -> transparent", "expected 'opaque'"},
      {"aten::add.Tensor(f32[3], 1) fast", "expected an option"},
      {"add(f32[3], 1)", "expected an operator"},
      {"aten::add.Tensor(q32[3], 1)", "tensor type"},
      {"aten::add.Tensor(f32[3], foo)", "unknown name"},
      {"aten::add.Tensor(f32[3], 1) rng_positional", "native_dropout"},
      {"aten::add.Tensor(f32[3], 1) dtypes(i64)", "floating dtype"},
      {"aten::add.Tensor(f32[3], 1)  # BUG", "# BUG: <what differs>"},
      {"aten::add.Tensor(alpha=2, f32[3])", "positional argument after keyword"},
  };
  for (const auto& [line, why] : kBad) {
    SCOPED_TRACE(line);
    const std::string text = std::string("# a comment\n\n") + line + "\n";
    try {
      ParseSamples(text, "bad.txt");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "bad.txt");
      EXPECT_EQ(e.line(), 3);
      EXPECT_NE(std::string(e.what()).find("bad.txt:3: error:"), std::string::npos) << e.what();
      EXPECT_NE(e.problem().find(why), std::string::npos) << e.problem();
    }
  }
  // and a well-formed line with every form of the syntax
  std::vector<Sample> ok = ParseSamples(
      "aten::where.self(aten::lt.Scalar(%x=i64[2, 3]{-4..4}, 0), aten::add.Tensor(%x, 3), %x)"
      "  # fine\n"
      "auto_functionalized(_C::rms_norm.default, result=f32[4], input=f32[4], weight=f32[4], "
      "epsilon=1e-06) -> opaque[1] dtypes(bf16)  # BUG: an example\n",
      "ok.txt");
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_FALSE(ok[0].sweeps);
  EXPECT_EQ(ok[1].dtypes, std::vector<ir::DType>{ir::DType::kBFloat16});
  EXPECT_EQ(ok[1].opaque, std::set<size_t>{1});
  EXPECT_EQ(ok[1].bug, "an example");
  EXPECT_TRUE(ok[1].call.functionalized);
}

}  // namespace
}  // namespace gg::runtime
