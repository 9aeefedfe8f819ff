#include "frontend/fx_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/node_check.h"
#include "util/diagnostic.h"
#include "util/read_file.h"

namespace gg::frontend {
namespace {

// ---- tokens ------------------------------------------------------------------------------------

enum class Tok { kName, kNumber, kString, kPunct, kComment, kNewline, kEnd };

struct Token {
  Tok kind;
  std::string_view text;  // raw text (for strings: with quotes; for comments: from '#')
  std::string value;      // decoded string literal
  int line;
};

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Splits the text into tokens. Newlines inside brackets are not statement ends (as in Python);
// brackets must balance, strings must close.
class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  std::vector<Token> Run() {
    std::vector<Token> out;
    out.reserve(text_.size() / 4);
    size_t i = 0;
    const size_t n = text_.size();
    while (i < n) {
      char c = text_[i];
      if (c == '\n') {
        if (open_.empty()) out.push_back({Tok::kNewline, text_.substr(i, 1), {}, line_});
        ++line_;
        ++i;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        ++i;
      } else if (c == '\\' && i + 1 < n && text_[i + 1] == '\n') {
        ++line_;
        i += 2;
      } else if (c == '#') {
        size_t end = text_.find('\n', i);
        if (end == std::string_view::npos) end = n;
        if (open_.empty()) {
          out.push_back({Tok::kComment, text_.substr(i, end - i), {}, line_});
        } else {
          // Inside brackets a comment ends no statement, but a multi-line signature's comment
          // may say what the parameter is (`# ParamAOTInput(target='...')`).
          bracket_comments_[line_] = text_.substr(i, end - i);
        }
        i = end;
      } else if (IsNameStart(c)) {
        size_t b = i;
        while (i < n && IsNameChar(text_[i])) ++i;
        out.push_back({Tok::kName, text_.substr(b, i - b), {}, line_});
      } else if (IsDigit(c) || (c == '.' && i + 1 < n && IsDigit(text_[i + 1]))) {
        size_t b = i;
        while (i < n) {
          char d = text_[i];
          if (IsNameChar(d) || d == '.') {
            ++i;
          } else if ((d == '+' || d == '-') && (text_[i - 1] == 'e' || text_[i - 1] == 'E')) {
            ++i;
          } else {
            break;
          }
        }
        out.push_back({Tok::kNumber, text_.substr(b, i - b), {}, line_});
      } else if (c == '\'' || c == '"') {
        out.push_back(LexString(&i));
      } else if (c == '(' || c == '[' || c == '{') {
        open_.push_back({c, line_});
        out.push_back({Tok::kPunct, text_.substr(i, 1), {}, line_});
        ++i;
      } else if (c == ')' || c == ']' || c == '}') {
        char want = c == ')' ? '(' : c == ']' ? '[' : '{';
        if (open_.empty()) {
          throw InputError(file_, line_, std::string("unbalanced '") + c + "': nothing to close");
        }
        if (open_.back().first != want) {
          throw InputError(file_, line_,
                           std::string("unbalanced '") + c + "': it closes '" + open_.back().first +
                               "' opened at line " + std::to_string(open_.back().second));
        }
        open_.pop_back();
        out.push_back({Tok::kPunct, text_.substr(i, 1), {}, line_});
        ++i;
      } else {
        out.push_back({Tok::kPunct, text_.substr(i, 1), {}, line_});
        ++i;
      }
    }
    if (!open_.empty()) {
      throw InputError(
          file_, open_.back().second,
          std::string("unbalanced '") + open_.back().first + "': opened here and never closed");
    }
    out.push_back({Tok::kNewline, {}, {}, line_});
    out.push_back({Tok::kEnd, {}, {}, line_});
    return out;
  }

 private:
  Token LexString(size_t* pos) {
    size_t i = *pos;
    const char quote = text_[i];
    const int start_line = line_;
    std::string value;
    ++i;
    while (true) {
      if (i >= text_.size() || text_[i] == '\n') {
        throw InputError(file_, start_line, "unterminated string literal");
      }
      char c = text_[i];
      if (c == quote) {
        ++i;
        break;
      }
      if (c == '\\' && i + 1 < text_.size()) {
        char e = text_[i + 1];
        switch (e) {
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          case 'r':
            value += '\r';
            break;
          case '\\':
            value += '\\';
            break;
          case '\'':
            value += '\'';
            break;
          case '"':
            value += '"';
            break;
          case '\n':
            ++line_;
            break;
          default:
            value += '\\';
            value += e;
            break;
        }
        i += 2;
        continue;
      }
      value += c;
      ++i;
    }
    Token t{Tok::kString, text_.substr(*pos, i - *pos), std::move(value), start_line};
    *pos = i;
    return t;
  }

  std::string_view text_;
  const std::string& file_;
  int line_ = 1;
  std::vector<std::pair<char, int>> open_;  // open brackets and their lines

 public:
  std::map<int, std::string_view> bracket_comments_;  // by line: comments inside brackets
};

// ---- parser ------------------------------------------------------------------------------------

// What a name in the forward body stands for.
struct Binding {
  bool multi = false;  // a multi-output call: only `name[i]` may read it
  ir::TensorRef ref;   // the value (multi: node id in ref.node)
  // Not a node: a symbolic integer (`x: "Sym(u0)" = ...`, read as the SymInt "u0") when `sym`
  // is set, else the (valueless) result of a dropped guard when `guard` is.
  std::optional<std::string> sym;
  bool guard = false;
  int line = 0;
};

// Runtime checks on symbolic integers (torch.export / dynamo with data-dependent sizes). They
// only assert; GraphGuard reads the graph for the inputs on which they hold.
bool IsSymGuard(const std::string& callee) {
  static const char* const kGuards[] = {
      "torch.ops.aten._assert_scalar.default",
      "torch.ops.aten.sym_constrain_range_for_size.default",
      "torch.ops.aten.sym_constrain_range.default",
      "torch.ops.aten._assert_async.msg",
      "torch.ops.aten._assert_async.default",
  };
  for (const char* g : kGuards) {
    if (callee == g) return true;
  }
  return false;
}

// Operators whose output is their (single) input: they give an unrecorded constant its type.
bool IsIdentityOp(const ir::OpName& op) {
  if (op.ns != "aten") return false;
  return op.name == "lift_fresh_copy" || op.name == "clone" || op.name == "detach" ||
         op.name == "alias" || op.name == "lift_fresh" || op.name == "lift";
}

int RankFromFileName(const std::string& file) {
  size_t slash = file.find_last_of('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  for (size_t p = base.find(".r"); p != std::string::npos; p = base.find(".r", p + 1)) {
    size_t q = p + 2;
    int rank = 0;
    bool digits = false;
    while (q < base.size() && IsDigit(base[q]) && rank < 1000000) {
      rank = rank * 10 + (base[q] - '0');
      digits = true;
      ++q;
    }
    if (digits && q < base.size() && base[q] == '.') return rank;
  }
  return 0;
}

class FxParser {
 public:
  FxParser(std::string_view text, const std::string& file, const FxOptions& options)
      : file_(file), options_(options) {
    Lexer lexer(text, file);
    tokens_ = lexer.Run();
    bracket_comments_ = std::move(lexer.bracket_comments_);
  }

  ir::Graph Parse() {
    graph_.file = file_;
    graph_.rank = RankFromFileName(file_);
    while (Peek().kind != Tok::kEnd) ParseStatement();
    if (state_ == State::kHeader) {
      throw InputError(file_, LastLine(),
                       "no 'class ...(torch.nn.Module)' with a forward() found; is this an FX "
                       "print_readable file?");
    }
    if (state_ == State::kClass) {
      throw InputError(file_, LastLine(), "the class has no 'def forward(self, ...)'");
    }
    if (state_ == State::kBody) {
      throw InputError(file_, LastLine(),
                       "file ends before the 'return' of forward() (truncated file?)");
    }
    graph_.Reindex();
    return std::move(graph_);
  }

 private:
  enum class State { kHeader, kClass, kBody, kDone };

  // -- token helpers --
  const Token& Peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool IsPunct(const Token& t, char c) const {
    return t.kind == Tok::kPunct && t.text.size() == 1 && t.text[0] == c;
  }
  bool IsName(const Token& t, std::string_view name) const {
    return t.kind == Tok::kName && t.text == name;
  }
  // Line of the last token that is not an end of line: where a truncated file stops.
  int LastLine() const {
    for (auto it = tokens_.rbegin(); it != tokens_.rend(); ++it) {
      if (it->kind != Tok::kNewline && it->kind != Tok::kEnd) return it->line;
    }
    return 1;
  }
  [[noreturn]] void Fail(const Token& at, const std::string& problem) const {
    throw InputError(file_, at.line, problem);
  }
  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case Tok::kNewline:
        return "end of line";
      case Tok::kEnd:
        return "end of file";
      case Tok::kComment:
        return "a comment";
      default:
        return "'" + std::string(t.text) + "'";
    }
  }
  void ExpectPunct(char c, const char* context) {
    const Token& t = Peek();
    if (!IsPunct(t, c)) {
      Fail(t, std::string("expected '") + c + "' " + context + ", found " + Describe(t));
    }
    Next();
  }
  const Token& ExpectName(const char* context) {
    const Token& t = Peek();
    if (t.kind != Tok::kName)
      Fail(t, std::string("expected ") + context + ", found " + Describe(t));
    return Next();
  }
  void SkipToLineEnd() {
    while (Peek().kind != Tok::kNewline && Peek().kind != Tok::kEnd) Next();
    if (Peek().kind == Tok::kNewline) Next();
  }
  void ExpectLineEnd() {
    const Token& t = Peek();
    if (t.kind == Tok::kComment) Next();
    if (Peek().kind != Tok::kNewline && Peek().kind != Tok::kEnd) {
      Fail(Peek(), "unexpected " + Describe(Peek()) + " at the end of the statement");
    }
    if (Peek().kind == Tok::kNewline) Next();
  }

  // -- statements --
  void ParseStatement() {
    const Token& first = Peek();
    // Consecutive "# File:" comments are the frames of one stack.
    if (first.kind != Tok::kComment) in_frames_ = false;
    if (first.kind == Tok::kNewline) {  // blank line: ends the scope of a "# File:" comment
      source_ = {};
      Next();
      return;
    }
    if (first.kind == Tok::kComment) {
      HandleComment(first);
      Next();
      ExpectLineEnd();
      return;
    }
    switch (state_) {
      case State::kHeader:
        if (IsName(first, "class")) {
          ParseClass();
        } else if (IsName(first, "def") && IsName(Peek(1), "forward")) {
          // A module-level forward() (torch's `print_readable` of a function, or its `.code`).
          if (graph_.name.empty()) graph_.name = "forward";
          ParseDef();
        } else {
          SkipToLineEnd();  // imports, type stubs
        }
        return;
      case State::kClass:
        ParseDef();
        return;
      case State::kBody:
        if (IsName(first, "return")) {
          CheckPytreeBound(first);
          ParseReturn();
        } else if (first.kind == Tok::kName && IsPunct(Peek(1), ',')) {
          ParseTreeFlatten();
        } else {
          ParseNodeStatement();
        }
        return;
      case State::kDone:
        Fail(first, "unexpected " + Describe(first) + " after the 'return' of forward()");
    }
  }

  void HandleComment(const Token& t) {
    std::string_view text = t.text.substr(1);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (state_ == State::kHeader && text.substr(0, 11) == "Graph[rank=") {
      int64_t rank = 0;
      auto [ptr, ec] = std::from_chars(text.data() + 11, text.data() + text.size(), rank);
      if (ec != std::errc() || ptr == text.data() + 11 || rank < 0 || rank > (1 << 20)) {
        Fail(t, "bad rank in '# Graph[rank=...]' header");
      }
      graph_.rank = static_cast<int32_t>(rank);
      return;
    }
    if (state_ != State::kBody) return;
    if (text.substr(0, 5) == "File:") {
      // Several frames in a row (outermost first): the innermost one in the user's code, not in
      // torch itself (torch/nn/modules/...), else the innermost.
      ir::SourceLocation loc = ParseSourceComment(text.substr(5));
      if (!in_frames_ || !IsTorchFrame(loc.file) || IsTorchFrame(source_.file)) {
        source_ = std::move(loc);
      }
      in_frames_ = true;
      return;
    }
    if (text.substr(0, 8) == "No stack") source_ = {};
  }

  // The FQN of a forward() parameter, when the dump says it: AOT's descriptor comment on the
  // parameter's line (`# ParamAOTInput(target='l.weight')`, BufferAOTInput), or Dynamo's
  // placeholder name, which spells the module path (`L_self_modules_l_parameters_weight_`).
  std::string InputFqn(std::string_view name, int line) const {
    auto it = bracket_comments_.find(line);
    if (it != bracket_comments_.end()) {
      for (std::string_view desc : {"ParamAOTInput(target=", "BufferAOTInput(target="}) {
        size_t at = it->second.find(desc);
        if (at == std::string_view::npos) continue;
        size_t open = at + desc.size();
        if (open >= it->second.size()) continue;
        const char quote = it->second[open];
        if (quote != '\'' && quote != '"') continue;
        size_t close = it->second.find(quote, open + 1);
        if (close == std::string_view::npos) continue;
        return std::string(it->second.substr(open + 1, close - open - 1));
      }
    }
    return DynamoFqn(name);
  }

  // `L_self_modules_a_modules_b_parameters_weight_` -> "a.b.weight" (also `l_self_...`, and
  // `_buffers_`). Module and attribute names may themselves hold '_', so only the `_modules_`,
  // `_parameters_` and `_buffers_` separators split; a name of another shape has no FQN.
  static std::string DynamoFqn(std::string_view name) {
    std::string_view rest = name;
    if (rest.substr(0, 7) == "L_self_" || rest.substr(0, 7) == "l_self_") {
      rest.remove_prefix(7);
    } else {
      return "";
    }
    if (rest.empty() || rest.back() != '_') return "";
    rest.remove_suffix(1);
    std::string fqn;
    bool leaf = false;
    while (!rest.empty()) {
      std::string_view kind;
      for (std::string_view k : {"modules_", "parameters_", "buffers_"}) {
        if (rest.substr(0, k.size()) == k) kind = k;
      }
      if (kind.empty() || leaf) return "";
      leaf = kind != "modules_";
      rest.remove_prefix(kind.size());
      // The part runs to the next separator (or to the end for the leaf).
      size_t end = rest.size();
      if (!leaf) {
        end = std::string_view::npos;
        for (std::string_view k : {"_modules_", "_parameters_", "_buffers_"}) {
          end = std::min(end, rest.find(k));
        }
        if (end == std::string_view::npos) return "";
      }
      if (end == 0) return "";
      fqn += (fqn.empty() ? "" : ".") + std::string(rest.substr(0, end));
      rest.remove_prefix(end == rest.size() ? end : end + 1);
    }
    return leaf ? fqn : "";
  }

  static bool IsTorchFrame(const std::string& file) {
    return file.rfind("torch/", 0) == 0 || file.find("/torch/") != std::string::npos;
  }

  // " /path/x.py:456 in func, code: text"
  static ir::SourceLocation ParseSourceComment(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    ir::SourceLocation loc;
    std::string_view head = text;
    size_t code = text.find(", code: ");
    if (code != std::string_view::npos) {
      loc.code = std::string(text.substr(code + 8));
      head = text.substr(0, code);
    }
    size_t in = head.rfind(" in ");
    if (in != std::string_view::npos) {
      loc.function = std::string(head.substr(in + 4));
      head = head.substr(0, in);
    }
    size_t colon = head.rfind(':');
    if (colon != std::string_view::npos) {
      int32_t line = 0;
      std::string_view num = head.substr(colon + 1);
      auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), line);
      if (ec == std::errc() && ptr == num.data() + num.size() && !num.empty()) {
        loc.line = line;
        head = head.substr(0, colon);
      }
    }
    loc.file = std::string(head);
    return loc;
  }

  void ParseClass() {
    const Token& kw = Next();  // "class"
    std::string name;
    while (Peek().kind != Tok::kNewline && Peek().kind != Tok::kEnd && !IsPunct(Peek(), '(') &&
           !IsPunct(Peek(), ':')) {
      name += std::string(Next().text);
    }
    if (name.empty()) Fail(kw, "expected a class name after 'class'");
    SkipToLineEnd();
    graph_.name = name;
    state_ = State::kClass;
  }

  void ParseDef() {
    const Token& def = Peek();
    if (!IsName(def, "def"))
      Fail(def, "expected 'def forward(self, ...):', found " + Describe(def));
    Next();
    const Token& fname = ExpectName("a method name");
    if (fname.text != "forward") {
      Fail(fname,
           "expected 'def forward(self, ...)', found method '" + std::string(fname.text) + "'");
    }
    ExpectPunct('(', "after 'def forward'");
    const Token& self = ExpectName("'self'");
    if (self.text != "self") Fail(self, "the first parameter of forward() must be 'self'");
    while (IsPunct(Peek(), ',')) {
      Next();
      if (IsPunct(Peek(), ')')) break;  // trailing comma
      const Token& pname = ExpectName("a parameter name");
      if (IsPunct(Peek(), ',') || IsPunct(Peek(), ')')) {
        // A pytree parameter (`def forward(self, primals, tangents)`): its leaves are bound, and
        // typed, by the `fx_pytree.tree_flatten_spec` line that follows.
        pytree_params_.push_back({std::string(pname.text), pname.line});
        continue;
      }
      ExpectPunct(':', "after a parameter name (inputs need a type annotation)");
      const Token& annot = Peek();
      if (annot.kind != Tok::kString) {
        Fail(annot, "expected a type annotation string like \"f32[8, 1536]\" for parameter '" +
                        std::string(pname.text) + "'");
      }
      Next();
      ir::Node node;
      node.kind = ir::NodeKind::kInput;
      node.name = std::string(pname.text);
      node.def_line = pname.line;
      node.fqn = InputFqn(pname.text, pname.line);
      node.outputs.push_back({node.name, ParseAnnotation(annot)});
      Define(pname, node.name, false, {static_cast<ir::NodeId>(graph_.nodes.size()), 0});
      graph_.AddNode(std::move(node));
    }
    ExpectPunct(')', "to close the parameters of forward()");
    if (IsPunct(Peek(), '-')) {  // return annotation "-> ..."
      while (!IsPunct(Peek(), ':') && Peek().kind != Tok::kNewline) Next();
    }
    ExpectPunct(':', "after 'def forward(...)'");
    ExpectLineEnd();
    state_ = State::kBody;
  }

  ir::TensorType ParseAnnotation(const Token& t) {
    std::string why;
    std::optional<ir::TensorType> type = ir::ParseTensorType(t.value, &why);
    if (!type) Fail(t, "bad type annotation: " + why);
    for (ir::Dim& d : type->shape) {
      if (!d.is_static()) d = ir::Dim::Symbol(QualifySymbols(d.symbol()));
    }
    return *type;
  }

  // `"Sym(u0)"`, `"Sym(u0 >= 0)"`: the expression, else nullopt.
  static std::optional<std::string> SymAnnotation(const Token& t) {
    const std::string& v = t.value;
    if (v.size() < 5 || v.rfind("Sym(", 0) != 0 || v.back() != ')') return std::nullopt;
    return v.substr(4, v.size() - 5);
  }

  // `name: "Sym(e)" = torch.ops.aten.item.default(t)` / `= sym_size_int * 2` / `= u >= 0`: a
  // symbolic integer (or condition), no node: where it is read it is the SymInt e, as sizes are
  // in GraphGuard (the shape of what depends on it says e). The call's arguments must be
  // defined names.
  void ParseSymStatement(const Token& name_tok, const std::string& expr) {
    const Token& rhs = Peek();
    if (IsName(rhs, "torch")) {
      ParseDottedName();
      ExpectPunct('(', "after the operator of a symbolic integer");
      ir::Node scratch;
      ParseArguments(&scratch);
    } else {
      // A Python expression over earlier names (`item >= 0`, `sym_size_int * 2`).
      while (!IsPunct(Peek(), ';') && Peek().kind != Tok::kNewline &&
             Peek().kind != Tok::kComment && Peek().kind != Tok::kEnd) {
        const Token& t = Next();
        if (t.kind == Tok::kName && bindings_.find(std::string(t.text)) == bindings_.end()) {
          Fail(t, "undefined name '" + std::string(t.text) + "'");
        }
      }
      if (&Peek() == &rhs) Fail(rhs, "expected an expression after '='");
    }
    Binding b;
    b.sym = QualifySymbols(expr);
    DefineBinding(name_tok, std::string(name_tok.text), std::move(b));
  }

  void Define(const Token& at, const std::string& name, bool multi, ir::TensorRef ref) {
    Binding b;
    b.multi = multi;
    b.ref = ref;
    DefineBinding(at, name, std::move(b));
  }

  void DefineBinding(const Token& at, const std::string& name, Binding binding) {
    binding.line = at.line;
    auto [it, inserted] = bindings_.emplace(name, std::move(binding));
    if (!inserted) {
      Fail(at, "duplicate name '" + name + "' (first defined at line " +
                   std::to_string(it->second.line) + ")");
    }
  }

  // Unbacked symbols (u0, u1: sizes computed from data) of distinct graphs are distinct values,
  // so they get the graph's suffix (FxOptions::unbacked_suffix): a rank's u0 is never taken for
  // S's or another rank's.
  std::string QualifySymbols(const std::string& expr) const {
    if (options_.unbacked_suffix.empty()) return expr;
    const std::string suffix = options_.unbacked_suffix == "_r" ? "_r" + std::to_string(graph_.rank)
                                                                : options_.unbacked_suffix;
    std::string out;
    size_t i = 0;
    while (i < expr.size()) {
      if (!IsNameStart(expr[i])) {
        out += expr[i++];
        continue;
      }
      size_t b = i;
      while (i < expr.size() && IsNameChar(expr[i])) ++i;
      std::string_view id(expr.data() + b, i - b);
      out += id;
      bool unbacked = id.size() > 1 && id[0] == 'u';
      for (size_t k = 1; k < id.size() && unbacked; ++k) unbacked = IsDigit(id[k]);
      if (unbacked) out += suffix;
    }
    return out;
  }

  void ParseReturn() {
    const Token& ret = Next();
    graph_.return_line = ret.line;
    if (Peek().kind == Tok::kNewline || Peek().kind == Tok::kComment) {
      ExpectLineEnd();
      state_ = State::kDone;
      return;
    }
    if (IsName(Peek(), "pytree") && IsPunct(Peek(1), '.')) {
      ParsePytreeReturn();
      return;
    }
    ir::Value value = ParseValue();
    if (value.is_list()) {
      graph_.outputs = value.as_list();
    } else {
      graph_.outputs.push_back(std::move(value));
    }
    ExpectLineEnd();
    state_ = State::kDone;
  }

  // `return pytree.tree_unflatten([a, b, ...], self._out_spec)`: the flat list is the outputs
  // (the out spec only regroups them for the caller).
  void ParsePytreeReturn() {
    const Token& at = Peek();
    std::string callee = ParseDottedName();
    if (callee != "pytree.tree_unflatten") {
      Fail(at, "unsupported return '" + callee +
                   "(...)' (expected a tuple, a list or pytree.tree_unflatten([...], "
                   "self._out_spec))");
    }
    ExpectPunct('(', "after 'pytree.tree_unflatten'");
    ir::Value value = ParseValue();
    if (!value.is_list()) Fail(at, "pytree.tree_unflatten needs a list of the outputs first");
    graph_.outputs = value.as_list();
    ExpectPunct(',', "after the outputs of pytree.tree_unflatten");
    ExpectSelfSpec("_out_spec");
    ExpectPunct(')', "to close pytree.tree_unflatten(...)");
    ExpectLineEnd();
    state_ = State::kDone;
  }

  void ExpectSelfSpec(const char* attr) {
    const Token& t = Peek();
    if (!IsName(t, "self") || !IsPunct(Peek(1), '.') || !IsName(Peek(2), attr)) {
      Fail(t, std::string("expected 'self.") + attr + "', found " + Describe(t));
    }
    Next();
    Next();
    Next();
  }

  // `a: "f32[4]"; b: "f32[2]"; ` (or one per line): the types of the leaves the next
  // tree_flatten_spec line binds. Torch prints them apart because Python cannot annotate a
  // tuple assignment.
  void ParseDeclarations(const Token& first_name, const Token& first_annot) {
    if (pytree_params_.empty() || flattened_) {
      Fail(Peek(), "expected '=' after '" + std::string(first_name.text) + ": \"...\"', found " +
                       Describe(Peek()) +
                       " (a type alone declares a leaf of fx_pytree.tree_flatten_spec, which "
                       "needs untyped pytree parameters in forward())");
    }
    const Token* name = &first_name;
    const Token* annot = &first_annot;
    int count = 0;
    while (true) {
      ++count;
      if (!declared_.emplace(std::string(name->text), Declared{ParseAnnotation(*annot), name->line})
               .second) {
        Fail(*name,
             "type of '" + std::string(name->text) + "' declared twice; keep one declaration");
      }
      if (!IsPunct(Peek(), ';')) break;
      Next();
      if (Peek().kind != Tok::kName) break;  // the trailing "; "
      name = &Next();
      ExpectPunct(':', "after a name in a type declaration 'name: \"type\";'");
      if (Peek().kind != Tok::kString) {
        Fail(Peek(), "expected a type annotation string after '" + std::string(name->text) +
                         ":', found " + Describe(Peek()));
      }
      annot = &Next();
    }
    // One leaf per line (expanded_def): its comment may be its AOT descriptor, as in a signature.
    if (count == 1 && Peek().kind == Tok::kComment) bracket_comments_[Peek().line] = Peek().text;
    ExpectLineEnd();
  }

  // `a, b, c, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)`: the leaves of
  // the pytree parameters, in order, become the graph's inputs.
  void ParseTreeFlatten() {
    std::vector<const Token*> names;
    while (Peek().kind == Tok::kName) {
      names.push_back(&Next());
      if (!IsPunct(Peek(), ',')) break;
      Next();
    }
    const Token& eq = Peek();
    ExpectPunct('=', "after the names of a tuple assignment");
    std::string callee = ParseDottedName();
    if (callee != "fx_pytree.tree_flatten_spec") {
      Fail(eq, "unsupported tuple assignment from '" + callee +
                   "' (only the leaves of fx_pytree.tree_flatten_spec(..., self._in_spec) are "
                   "read)");
    }
    if (pytree_params_.empty()) {
      Fail(eq,
           "fx_pytree.tree_flatten_spec, but forward() has no untyped (pytree) parameter; "
           "give forward() the parameters it flattens");
    }
    if (flattened_)
      Fail(eq, "a second fx_pytree.tree_flatten_spec line; one line binds every leaf");
    ExpectPunct('(', "after 'fx_pytree.tree_flatten_spec'");
    // The first argument nests the parameters ([a, b] or ([a, b], {'k': c})); only the
    // parameters' names matter.
    int depth = 0;
    while (depth > 0 || !IsPunct(Peek(), ',')) {
      const Token& t = Peek();
      if (t.kind == Tok::kNewline || t.kind == Tok::kEnd) {
        Fail(t, "expected ', self._in_spec)' in fx_pytree.tree_flatten_spec");
      }
      if (IsPunct(t, '(') || IsPunct(t, '[') || IsPunct(t, '{')) ++depth;
      if (IsPunct(t, ')') || IsPunct(t, ']') || IsPunct(t, '}')) --depth;
      if (t.kind == Tok::kName && !IsPytreeParam(t.text)) {
        Fail(t, "'" + std::string(t.text) +
                    "' is not a parameter of forward(); tree_flatten_spec flattens "
                    "forward()'s parameters");
      }
      Next();
    }
    Next();  // ,
    ExpectSelfSpec("_in_spec");
    ExpectPunct(')', "to close fx_pytree.tree_flatten_spec(...)");
    ExpectLineEnd();
    for (const Token* n : names) {
      auto it = declared_.find(std::string(n->text));
      if (it == declared_.end()) {
        Fail(*n, "input '" + std::string(n->text) +
                     "' (a leaf of fx_pytree.tree_flatten_spec) has no type: the dump prints "
                     "'" +
                     std::string(n->text) +
                     ": \"f32[...]\";' before this line when the graph's placeholders carry "
                     "meta['val']; re-capture with make_fx/aot_autograd (fake or real tensors), "
                     "or write the graph as GraphGuard JSON with each input's type");
      }
      ir::Node node;
      node.kind = ir::NodeKind::kInput;
      node.name = std::string(n->text);
      node.def_line = n->line;
      node.fqn = InputFqn(node.name, it->second.line);
      node.outputs.push_back({node.name, it->second.type});
      Define(*n, node.name, false, {static_cast<ir::NodeId>(graph_.nodes.size()), 0});
      graph_.AddNode(std::move(node));
      declared_.erase(it);
    }
    if (!declared_.empty()) {
      const auto& [name, d] = *declared_.begin();
      throw InputError(
          file_, d.line,
          "type declared for '" + name +
              "', which fx_pytree.tree_flatten_spec does not bind; add it to the names "
              "it binds or remove the declaration");
    }
    flattened_ = true;
  }

  bool IsPytreeParam(std::string_view name) const {
    if (name == "self" || name == "_in_spec") return true;
    for (const auto& p : pytree_params_) {
      if (p.first == name) return true;
    }
    return false;
  }

  // A node or the return before the pytree parameters were flattened: they have no types.
  void CheckPytreeBound(const Token& at) {
    if (pytree_params_.empty() || flattened_) return;
    if (!declared_.empty()) {
      const auto& [name, d] = *declared_.begin();
      throw InputError(file_, d.line,
                       "type declared for '" + name +
                           "' but no fx_pytree.tree_flatten_spec line binds it before line " +
                           std::to_string(at.line));
    }
    throw InputError(file_, pytree_params_[0].second,
                     "parameter '" + pytree_params_[0].first +
                         "' of forward() has no type annotation and no "
                         "'... = fx_pytree.tree_flatten_spec(...)' line binds its leaves; "
                         "inputs need a type: re-capture with print_readable() of a graph whose "
                         "placeholders carry meta['val'], or write the graph as GraphGuard JSON");
  }

  // name[: "type"] = rhs [; a = b = None]...
  void ParseNodeStatement() {
    const Token& name_tok = Peek();
    if (name_tok.kind != Tok::kName) {
      Fail(name_tok,
           "expected a node definition 'name: \"type\" = ...', found " + Describe(name_tok));
    }
    Next();
    std::optional<ir::TensorType> annotation;
    if (IsPunct(Peek(), ':')) {
      Next();
      const Token& annot = Peek();
      if (annot.kind != Tok::kString) {
        Fail(annot, "expected a type annotation string after '" + std::string(name_tok.text) +
                        ":', found " + Describe(annot));
      }
      Next();
      if (IsPunct(Peek(), ';') || Peek().kind == Tok::kNewline || Peek().kind == Tok::kComment ||
          Peek().kind == Tok::kEnd) {
        ParseDeclarations(name_tok, annot);
        return;
      }
      if (std::optional<std::string> sym = SymAnnotation(annot)) {
        CheckPytreeBound(name_tok);
        ExpectPunct('=', ("after '" + std::string(name_tok.text) + "'").c_str());
        ParseSymStatement(name_tok, *sym);
        ParseFrees();
        return;
      }
      annotation = ParseAnnotation(annot);
    }
    CheckPytreeBound(name_tok);
    ExpectPunct('=', ("after '" + std::string(name_tok.text) + "'").c_str());
    const std::string name(name_tok.text);
    const Token& rhs = Peek();
    if (IsName(rhs, "self") && IsPunct(Peek(1), '.')) {
      ParseConstant(name_tok, annotation);
    } else if (rhs.kind == Tok::kName && IsPunct(Peek(1), '[')) {
      ParseGetItem(name_tok, annotation);
    } else if (IsName(rhs, "torch")) {
      ParseCall(name_tok, annotation);
    } else {
      Fail(rhs, "unsupported right-hand side " + Describe(rhs) + " for '" + name +
                    "' (expected torch.ops.<ns>.<op>.<overload>(...), x[i] or self.<attr>)");
    }
    ParseFrees();
  }

  // ";  a = b = None" parts: names freed by the printer.
  void ParseFrees() {
    while (IsPunct(Peek(), ';')) {
      Next();
      if (Peek().kind == Tok::kNewline || Peek().kind == Tok::kEnd) break;
      int names = 0;
      while (true) {
        const Token& t = ExpectName("a name in 'x = None'");
        if (IsName(t, "None")) {
          if (names == 0) Fail(t, "expected 'name = None' after ';'");
          break;
        }
        if (bindings_.find(std::string(t.text)) == bindings_.end()) {
          Fail(t, "undefined name '" + std::string(t.text) + "'");
        }
        ++names;
        ExpectPunct('=', "in 'x = None'");
      }
    }
    ExpectLineEnd();
  }

  void ParseConstant(const Token& name_tok, const std::optional<ir::TensorType>& annotation) {
    Next();  // self
    Next();  // .
    ExpectName("an attribute name after 'self.'");
    while (IsPunct(Peek(), '.')) {
      Next();
      ExpectName("an attribute name");
    }
    ir::Node node;
    node.kind = ir::NodeKind::kConstant;
    node.name = std::string(name_tok.text);
    node.def_line = name_tok.line;
    node.source = source_;
    node.outputs.push_back({node.name, annotation});
    Define(name_tok, node.name, false, {static_cast<ir::NodeId>(graph_.nodes.size()), 0});
    graph_.AddNode(std::move(node));
  }

  void ParseGetItem(const Token& name_tok, const std::optional<ir::TensorType>& annotation) {
    const Token& src = Next();
    const std::string src_name(src.text);
    Next();  // [
    const Token& index_tok = Peek();
    if (index_tok.kind != Tok::kNumber) {
      Fail(index_tok, "expected an integer index in '" + src_name + "[...]'");
    }
    Next();
    int64_t index = -1;
    auto [ptr, ec] = std::from_chars(index_tok.text.data(),
                                     index_tok.text.data() + index_tok.text.size(), index);
    if (ec != std::errc() || ptr != index_tok.text.data() + index_tok.text.size() ||
        index > 65535) {
      Fail(index_tok, "bad index '" + std::string(index_tok.text) + "'");
    }
    ExpectPunct(']', "after the index");
    auto it = bindings_.find(src_name);
    if (it == bindings_.end()) Fail(src, "undefined name '" + src_name + "'");
    if (!it->second.multi) {
      Fail(src, "getitem of '" + src_name + "', which is not a multi-output node");
    }
    ir::NodeId id = it->second.ref.node;
    ir::Node& node = graph_.nodes[id];
    const std::string name(name_tok.text);
    const bool inferred = id < static_cast<ir::NodeId>(inferred_.size()) && inferred_[id];
    if (inferred) {
      if (index >= static_cast<int64_t>(node.outputs.size())) {
        Fail(index_tok, "index " + std::to_string(index) + " out of range: " + DescribeNode(node) +
                            " has " + std::to_string(node.outputs.size()) + " outputs");
      }
    } else if (index >= static_cast<int64_t>(node.outputs.size())) {
      node.outputs.resize(index + 1);
    }
    ir::NodeOutput& out = node.outputs[index];
    if (!out.name.empty()) {
      Fail(name_tok, "output " + std::to_string(index) + " of '" + src_name +
                         "' is already named '" + out.name + "'");
    }
    if (!annotation && IsOpaqueNode(node)) {
      ThrowOpaqueNeedsType(
          node, file_, name_tok.line,
          "its output " + std::to_string(index) + " ('" + name + "') has no annotation");
    }
    if (annotation) {
      if (inferred && out.type != annotation) {
        Fail(name_tok, "inferred " + TypeText(out.type) + " for '" + name + "' (output " +
                           std::to_string(index) + " of " + node.op.ToString() +
                           ") but the annotation says " + annotation->ToString());
      }
      out.type = annotation;
    }
    out.name = name;
    Define(name_tok, name, false, {id, static_cast<int32_t>(index)});
  }

  // torch.ops.ns.op.overload(args...) or torch.ops.higher_order.auto_functionalized(op, kw...)
  void ParseCall(const Token& name_tok, const std::optional<ir::TensorType>& annotation) {
    const Token& start = Peek();
    std::string callee = ParseDottedName();
    if (IsSymGuard(callee) && IsPunct(Peek(), '(')) {
      Next();
      ir::Node scratch;  // arguments checked (defined names), then dropped with the guard
      ParseArguments(&scratch);
      Binding b;
      b.guard = true;
      DefineBinding(name_tok, std::string(name_tok.text), std::move(b));
      return;
    }
    ir::Node node;
    node.name = std::string(name_tok.text);
    node.def_line = name_tok.line;
    node.source = source_;
    std::optional<ir::OpName> op = ir::OpName::Parse(callee);
    if (callee.rfind("torch.ops.", 0) != 0 || !op) {
      Fail(start, "unsupported call '" + callee + "' (expected torch.ops.<ns>.<op>.<overload>)");
    }
    if (!IsPunct(Peek(), '(')) Fail(Peek(), "expected '(' after '" + callee + "'");
    Next();
    ParseArguments(&node);
    bool functionalized = op->ns == "higher_order" && op->name == "auto_functionalized";
    if (op->ns == "higher_order" && op->name == "auto_functionalized_v2") {
      // v1 when every mutated argument is a whole base (else an opaque node of the v2 call).
      functionalized = FunctionalizedV2AsV1(start, &node);
      if (!functionalized) node.op = *op;
    } else if (functionalized) {
      if (node.args.size() != 1 || !node.args[0].is_op_ref()) {
        Fail(start, "auto_functionalized takes an operator (torch.ops....) and keyword arguments");
      }
      std::optional<ir::OpName> inner = ir::OpName::Parse(node.args[0].as_op_ref().qualified_name);
      if (!inner) Fail(start, "bad operator in auto_functionalized");
      node.op = *inner;
      node.functionalized = true;
      node.args.clear();
    } else {
      node.op = *op;
    }
    // `torch.ops.aten.exp.out(x, out = buf)`: the functional overload, whose result is buf's new
    // value; later reads of buf read that result.
    std::optional<ir::TensorRef> out_buffer;
    if (!functionalized && IsOutOverload(node.op)) out_buffer = ReadOutVariant(start, &node);
    const ir::OpInfo* info = FindOperatorOrOpaque(node, file_, node.def_line);
    // One tensor return ("Tensor", "Tensor(a)"): the node is the value. Otherwise (tuples,
    // Tensor[], void ops, auto_functionalized) it is read through getitem. An unknown operator
    // (opaque) is single when annotated, else read through its annotated getitems.
    const bool single = info == nullptr
                            ? (!functionalized && annotation.has_value())
                            : !functionalized && info->schema.returns.size() == 1 &&
                                  info->schema.returns[0].rfind("Tensor", 0) == 0 &&
                                  info->schema.returns[0].find('[') == std::string::npos;
    if (info != nullptr && annotation && !single) {
      Fail(name_tok, DescribeNode(node) + " returns " +
                         std::to_string(info->schema.returns.size()) +
                         " values but is annotated as one tensor");
    }
    if (annotation) GiveConstantsTypes(node, *annotation);
    auto inferred = InferNodeTypes(graph_, node, {}, options_.group_size, file_, node.def_line);
    const ir::NodeId id = static_cast<ir::NodeId>(graph_.nodes.size());
    if (single) {
      if (inferred) {
        if (inferred->size() != 1 || (annotation && (*inferred)[0] != annotation)) {
          std::string got = inferred->size() == 1 ? TypeText((*inferred)[0])
                                                  : std::to_string(inferred->size()) + " outputs";
          Fail(name_tok, "inferred " + got + " for " + DescribeNode(node) +
                             " but the annotation says " + TypeText(annotation));
        }
      }
      std::optional<ir::TensorType> type = annotation;
      if (!type && inferred) type = (*inferred)[0];
      node.outputs.push_back({node.name, type});
    } else if (inferred) {
      for (auto& type : *inferred) node.outputs.push_back({"", type});
    }
    inferred_.resize(id + 1, false);
    inferred_[id] = inferred.has_value();
    if (out_buffer) {
      if (!single) {
        Fail(name_tok, DescribeNode(node) +
                           " writes 'out' but has no single annotated result; annotate it "
                           "(name: \"f32[...]\" = ...)");
      }
      if (out_buffer->node < static_cast<ir::NodeId>(graph_.nodes.size())) {
        const std::optional<ir::TensorType>& buf =
            graph_.nodes[out_buffer->node].outputs[out_buffer->output].type;
        if (buf && node.outputs[0].type && buf->dtype != node.outputs[0].type->dtype) {
          Fail(name_tok, DescribeNode(node) + " computes " + TypeText(node.outputs[0].type) +
                             " into an 'out' tensor of " + TypeText(buf) +
                             ": ATen casts or refuses here; give the out tensor the result's "
                             "dtype (or capture the functional call)");
        }
      }
      for (auto& [bound_name, binding] : bindings_) {
        if (!binding.multi && !binding.sym && !binding.guard && binding.ref == *out_buffer) {
          binding.ref = {id, 0};
        }
      }
    }
    Define(name_tok, node.name, !single, {id, 0});
    graph_.AddNode(std::move(node));
  }

  static bool IsOutOverload(const ir::OpName& op) {
    const std::string& o = op.overload;
    return o == "out" || (o.size() > 4 && o.compare(o.size() - 4, 4, "_out") == 0);
  }

  // An out= call (`aten::exp.out(x, *, out)`) becomes the functional overload of the same
  // operator that the other arguments bind to (tensors to Tensor arguments, the rest to the
  // others); with none, or several, the call stays as written (an opaque node typed from its
  // annotation). Returns the out tensor, whose name then means the call's result.
  std::optional<ir::TensorRef> ReadOutVariant(const Token& at, ir::Node* node) {
    auto out_it = std::find_if(node->kwargs.begin(), node->kwargs.end(),
                               [](const ir::NamedArg& kw) { return kw.name == "out"; });
    if (out_it == node->kwargs.end()) return std::nullopt;  // several outs: stays opaque
    if (!out_it->value.is_tensor())
      Fail(at,
           "'out' of " + DescribeNode(*node) + " is not a tensor; out= takes the tensor to write");
    const ir::TensorRef buffer = out_it->value.as_tensor();
    const ir::Node& producer = graph_.nodes.at(buffer.node);
    if (producer.kind == ir::NodeKind::kInput) {
      Fail(at, DescribeNode(*node) + " writes into graph input '" + producer.name +
                   "': a mutated input is not a result GraphGuard compares; capture the "
                   "functionalized graph (aot_autograd / make_fx functionalize out= calls)");
    }
    // The buffer must be storage of its own: a write into a view (or into what an operator of
    // unknown layout returned, which may be one) changes the viewed tensor too, unseen here.
    const ir::OpInfo* producer_info = producer.kind == ir::NodeKind::kOperator
                                          ? ir::OpRegistry::Default().Find(producer.op)
                                          : nullptr;
    const bool fresh =
        producer_info != nullptr && (producer_info->traits.nondeterministic_init ||
                                     producer_info->traits.layout != ir::ResultLayout::kUntracked);
    if (!fresh) {
      Fail(at, DescribeNode(*node) + " writes into '" + graph_.ValueName(buffer) + "', which " +
                   DescribeNode(producer) +
                   " returned: it may share storage with another tensor (a view), whose readers "
                   "would see the write, which GraphGuard does not model; capture the "
                   "functionalized graph (aot_autograd / make_fx functionalize out= calls)");
    }
    for (const ir::Node& earlier : graph_.nodes) {
      for (const ir::TensorRef& r : earlier.TensorInputs()) {
        if (r.node != buffer.node) continue;
        Fail(at, DescribeNode(*node) + " writes into '" + graph_.ValueName(buffer) + "', which " +
                     DescribeNode(earlier) + " (line " + std::to_string(earlier.def_line) +
                     ") read before: a view of it would see the write, which GraphGuard does "
                     "not model; capture the functionalized graph (aot_autograd / make_fx "
                     "functionalize out= calls)");
      }
    }
    ir::Node functional = *node;
    functional.kwargs.erase(functional.kwargs.begin() + (out_it - node->kwargs.begin()));
    const ir::OpRegistry& registry = ir::OpRegistry::Default();
    std::optional<ir::OpName> match;
    for (const ir::OpName& candidate : registry.Names()) {
      if (candidate.ns != node->op.ns || candidate.name != node->op.name) continue;
      const ir::OpInfo* info = registry.Find(candidate);
      if (info == nullptr || !BindsFunctionally(*info, functional)) continue;
      if (match) return buffer;  // ambiguous: opaque
      match = candidate;
    }
    if (match) {
      *node = std::move(functional);
      node->op = *match;
      if (node->op.overload.empty()) node->op.overload = "default";  // as FX spells it
    }
    return buffer;
  }

  // Whether the call's arguments bind to `info`'s schema with tensors exactly in its Tensor
  // arguments, and the schema is functional (one Tensor result, nothing mutated).
  bool BindsFunctionally(const ir::OpInfo& info, const ir::Node& call) const {
    const ir::OpSchema& schema = info.schema;
    if (schema.returns.size() != 1 || schema.returns[0] != "Tensor") return false;
    for (const ir::ArgSchema& arg : schema.args) {
      if (arg.mutated) return false;
    }
    ir::Node probe = call;
    probe.op = schema.name;
    std::map<std::string, const ir::Value*> given;
    if (call.args.size() > schema.args.size()) return false;
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (schema.args[i].kwarg_only) return false;
      given[schema.args[i].name] = &call.args[i];
    }
    for (const ir::NamedArg& kw : call.kwargs) {
      if (schema.ArgIndex(kw.name) < 0 || given.count(kw.name) != 0) return false;
      given[kw.name] = &kw.value;
    }
    for (const ir::ArgSchema& arg : schema.args) {
      auto it = given.find(arg.name);
      const bool tensor_arg = arg.type == "Tensor" || arg.type == "Tensor?";
      if (it == given.end()) {
        if (!arg.default_value) return false;
        continue;
      }
      const bool is_tensor = it->second->is_tensor();
      if (is_tensor != tensor_arg && !(arg.type == "Tensor?" && it->second->is_none())) {
        return false;
      }
    }
    return true;
  }

  // auto_functionalized_v2(op, _x_base_index = i, ..., _all_bases = [b0, ...]): when the k
  // mutated arguments are the bases 0..k-1 themselves, in schema order (no `_x_size`/`_x_slice_*`
  // view of a base), the results (op's, then the updated bases) are v1's (op's, then the mutated
  // arguments), so the node is v1's with x = b_i. Returns false (the caller keeps the v2 call,
  // opaque) otherwise.
  bool FunctionalizedV2AsV1(const Token& at, ir::Node* node) {
    if (node->args.size() != 1 || !node->args[0].is_op_ref()) {
      Fail(at, "auto_functionalized_v2 takes an operator (torch.ops....) and keyword arguments");
    }
    std::optional<ir::OpName> inner = ir::OpName::Parse(node->args[0].as_op_ref().qualified_name);
    if (!inner) Fail(at, "bad operator in auto_functionalized_v2");
    const ir::OpInfo* info = ir::OpRegistry::Default().Find(*inner);
    const ir::Value* bases = nullptr;
    for (const ir::NamedArg& kw : node->kwargs) {
      if (kw.name == "_all_bases") bases = &kw.value;
    }
    if (bases == nullptr || !bases->is_list()) {
      Fail(at,
           "auto_functionalized_v2 without '_all_bases = [...]' (torch >= 2.6 prints it); "
           "re-capture, or write the call as auto_functionalized");
    }
    if (info == nullptr) return false;  // unknown operator: opaque either way
    const ir::Value::List& base_list = bases->as_list();
    std::vector<ir::NamedArg> kwargs;
    std::set<std::string> used;
    size_t next_base = 0;
    for (const ir::ArgSchema& arg : info->schema.args) {
      if (!arg.mutated) continue;
      const std::string prefix = "_" + arg.name + "_";
      const ir::Value* index = nullptr;
      for (const ir::NamedArg& kw : node->kwargs) {
        if (kw.name == prefix + "base_index") index = &kw.value;
      }
      if (index == nullptr || !index->is_int() ||
          index->as_int() != static_cast<int64_t>(next_base) || next_base >= base_list.size()) {
        return false;  // None, a list of bases (Tensor[]), or bases out of order
      }
      used.insert(prefix + "base_index");
      for (const ir::NamedArg& kw : node->kwargs) {
        // `_x_alias = True`: x has the base's sizes, strides and offset: the base itself.
        if (kw.name == prefix + "alias" && kw.value.is_bool() && kw.value.as_bool()) {
          used.insert(kw.name);
        }
      }
      kwargs.push_back({arg.name, base_list[next_base]});
      ++next_base;
    }
    if (next_base != base_list.size()) return false;
    used.insert("_all_bases");
    for (const ir::NamedArg& kw : node->kwargs) {
      if (used.count(kw.name) != 0) continue;
      // A view of a base (_x_size, _x_stride, _x_storage_offset, _x_slice_*) or another v2
      // field: not modelled exactly, so the call stays opaque.
      if (kw.name.rfind('_', 0) == 0) return false;
      kwargs.push_back(kw);
    }
    node->op = *inner;
    node->args.clear();
    node->kwargs = std::move(kwargs);
    node->functionalized = true;
    return true;
  }

  // An unrecorded constant takes its type from its first consumer that is an identity.
  void GiveConstantsTypes(const ir::Node& node, const ir::TensorType& annotation) {
    if (!IsIdentityOp(node.op)) return;
    std::vector<ir::TensorRef> inputs = node.TensorInputs();
    if (inputs.empty()) return;
    ir::Node& producer = graph_.nodes[inputs[0].node];
    if (producer.kind == ir::NodeKind::kConstant && !producer.outputs[0].type) {
      producer.outputs[0].type = annotation;
    }
  }

  std::string ParseDottedName() {
    std::string name(ExpectName("a name").text);
    while (IsPunct(Peek(), '.') && Peek(1).kind == Tok::kName) {
      Next();
      name += '.';
      name += Next().text;
    }
    return name;
  }

  // After '(' : positional values, then `name = value` keywords, then ')'.
  void ParseArguments(ir::Node* node) {
    while (!IsPunct(Peek(), ')')) {
      if (Peek().kind == Tok::kName && IsPunct(Peek(1), '=')) {
        const Token& kw = Next();
        Next();  // =
        std::string kw_name(kw.text);
        for (const ir::NamedArg& prev : node->kwargs) {
          if (prev.name == kw_name) Fail(kw, "keyword argument '" + kw_name + "' given twice");
        }
        node->kwargs.push_back({kw_name, ParseValue()});
      } else {
        if (!node->kwargs.empty()) {
          Fail(Peek(), "positional argument after keyword arguments");
        }
        node->args.push_back(ParseValue());
      }
      if (IsPunct(Peek(), ',')) {
        Next();
      } else if (!IsPunct(Peek(), ')')) {
        Fail(Peek(), "expected ',' or ')' in the argument list, found " + Describe(Peek()));
      }
    }
    Next();  // )
  }

  ir::Value ParseNumber(const Token& t, bool negative) {
    std::string_view text = t.text;
    bool is_float = false;
    for (char c : text) {
      if (c == '.' || c == 'e' || c == 'E') is_float = true;
    }
    if (text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) is_float = false;
    if (is_float) {
      double d = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (ptr != text.data() + text.size() ||
          (ec != std::errc() && ec != std::errc::result_out_of_range)) {
        Fail(t, "bad number '" + std::string(text) + "'");
      }
      return ir::Value(negative ? -d : d);
    }
    std::string digits = negative ? "-" + std::string(text) : std::string(text);
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec == std::errc::result_out_of_range) Fail(t, "integer '" + digits + "' out of range");
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
      Fail(t, "bad number '" + std::string(text) + "'");
    }
    return ir::Value(v);
  }

  ir::Value ParseValue() {
    if (++depth_ > 200) Fail(Peek(), "values nested too deeply");
    ir::Value v = ParseValueInner();
    --depth_;
    return v;
  }

  ir::Value ParseValueInner() {
    const Token& t = Peek();
    if (t.kind == Tok::kNumber) {
      Next();
      return ParseNumber(t, false);
    }
    if (IsPunct(t, '-')) {
      Next();
      const Token& n = Peek();
      if (n.kind == Tok::kNumber) {
        Next();
        return ParseNumber(n, true);
      }
      if (IsName(n, "inf")) {
        Next();
        return ir::Value(-std::numeric_limits<double>::infinity());
      }
      if (IsName(n, "nan")) {
        Next();
        return ir::Value(std::numeric_limits<double>::quiet_NaN());
      }
      Fail(n, "expected a number after '-', found " + Describe(n));
    }
    if (t.kind == Tok::kString) {
      Next();
      return ir::Value(t.value);
    }
    if (IsPunct(t, '[') || IsPunct(t, '(')) {
      const char close = IsPunct(t, '[') ? ']' : ')';
      Next();
      ir::Value::List items;
      while (!IsPunct(Peek(), close)) {
        items.push_back(ParseValue());
        if (IsPunct(Peek(), ',')) {
          Next();
        } else if (!IsPunct(Peek(), close)) {
          Fail(Peek(), std::string("expected ',' or '") + close + "', found " + Describe(Peek()));
        }
      }
      Next();
      return ir::Value(std::move(items));
    }
    if (t.kind != Tok::kName) Fail(t, "expected a value, found " + Describe(t));
    if (t.text == "True") return Next(), ir::Value(true);
    if (t.text == "False") return Next(), ir::Value(false);
    if (t.text == "None") return Next(), ir::Value(ir::None{});
    if (t.text == "inf") return Next(), ir::Value(std::numeric_limits<double>::infinity());
    if (t.text == "nan") return Next(), ir::Value(std::numeric_limits<double>::quiet_NaN());
    if (t.text == "device" && IsPunct(Peek(1), '(')) return ParseDevice();
    if (t.text == "torch" && IsPunct(Peek(1), '.')) {
      std::string dotted = ParseDottedName();
      if (dotted.rfind("torch.ops.", 0) == 0) {
        std::optional<ir::OpName> op = ir::OpName::Parse(dotted);
        if (!op) Fail(t, "bad operator reference '" + dotted + "'");
        return ir::Value(ir::OpRefValue{op->ToString()});
      }
      if (std::optional<ir::DType> dtype = ir::ParseDType(dotted)) return ir::Value(*dtype);
      return ir::Value(ir::EnumValue{dotted});
    }
    const std::string name(t.text);
    auto it = bindings_.find(name);
    if (it == bindings_.end()) Fail(t, "undefined name '" + name + "'");
    if (it->second.multi) {
      Fail(t, "'" + name + "' is a multi-output node; read its outputs with " + name + "[i]");
    }
    if (it->second.sym) return Next(), ir::Value(*it->second.sym);  // a SymInt, as sizes are
    if (it->second.guard) {
      Fail(t, "'" + name + "' is the result of a runtime assertion (line " +
                  std::to_string(it->second.line) + "), which has no value; only free it ('" +
                  name + " = None')");
    }
    Next();
    return ir::Value(it->second.ref);
  }

  // device(type='cuda', index=0) or device('cuda') / device('cuda:0')
  ir::Value ParseDevice() {
    const Token& start = Next();  // device
    Next();                       // (
    ir::Device device;
    bool has_type = false;
    auto set_type = [&](const Token& at, const ir::Value& v) {
      if (!v.is_string()) Fail(at, "device type must be a string");
      std::string type = v.as_string();
      size_t colon = type.find(':');
      if (colon != std::string::npos) {
        int32_t index = -1;
        auto [p, ec] = std::from_chars(type.data() + colon + 1, type.data() + type.size(), index);
        if (ec != std::errc() || p != type.data() + type.size())
          Fail(at, "bad device '" + type + "'");
        device.index = index;
        type = type.substr(0, colon);
      }
      device.type = type;
      has_type = true;
    };
    int positional = 0;
    while (!IsPunct(Peek(), ')')) {
      const Token& at = Peek();
      std::string key;
      if (at.kind == Tok::kName && IsPunct(Peek(1), '=')) {
        key = std::string(at.text);
        Next();
        Next();
      } else {
        key = positional++ == 0 ? "type" : "index";
      }
      ir::Value v = ParseValue();
      if (key == "type") {
        set_type(at, v);
      } else if (key == "index") {
        if (!v.is_int() || v.as_int() < -1 || v.as_int() > (1 << 20)) {
          Fail(at, "device index must be a small integer");
        }
        device.index = static_cast<int32_t>(v.as_int());
      } else {
        Fail(at, "unknown device field '" + key + "'");
      }
      if (IsPunct(Peek(), ',')) {
        Next();
      } else if (!IsPunct(Peek(), ')')) {
        Fail(Peek(), "expected ',' or ')' in device(...), found " + Describe(Peek()));
      }
    }
    Next();
    if (!has_type) Fail(start, "device(...) without a type");
    return ir::Value(std::move(device));
  }

  const std::string& file_;
  FxOptions options_;
  std::vector<Token> tokens_;
  // By line: comments the lexer found inside brackets, and those of pytree leaf declarations.
  std::map<int, std::string_view> bracket_comments_;
  size_t pos_ = 0;
  int depth_ = 0;
  State state_ = State::kHeader;
  ir::Graph graph_;
  ir::SourceLocation source_;
  std::unordered_map<std::string, Binding> bindings_;
  // Pytree signatures: the untyped parameters (name, line), the declared leaf types, and whether
  // the tree_flatten_spec line has bound the leaves.
  struct Declared {
    ir::TensorType type;
    int line;
  };
  std::vector<std::pair<std::string, int>> pytree_params_;
  std::map<std::string, Declared> declared_;
  bool flattened_ = false;
  bool in_frames_ = false;  // the last statement was a "# File:" comment
  // Per node id: whether the outputs of a multi-output call were inferred (so a getitem past the
  // end is an error rather than a new slot). Sized lazily; missing entries mean false.
  std::vector<bool> inferred_;
};

}  // namespace

ir::Graph ParseFx(std::string_view text, const std::string& file, const FxOptions& options) {
  FxParser parser(text, file, options);
  ir::Graph graph = parser.Parse();
  // An opaque node (unknown operator) takes its types from the annotations: one without an
  // annotation and without annotated getitems has none.
  for (const ir::Node& node : graph.nodes) {
    if (!node.outputs.empty() || !IsOpaqueNode(node)) continue;
    ThrowOpaqueNeedsType(node, file, node.def_line,
                         "its result has no annotation (nor an annotated getitem)");
  }
  return graph;
}

std::string ReadTextFile(const std::string& path) { return ReadInputFile(path, "graph file"); }

ir::Graph ReadFxFile(const std::string& path, const FxOptions& options) {
  return ParseFx(ReadTextFile(path), path, options);
}

}  // namespace gg::frontend
