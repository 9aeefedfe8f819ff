#include "symbolic/relation_spec.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>
#include <variant>

#include "util/diagnostic.h"
#include "util/read_file.h"

namespace gg::symbolic {

// ---- syntax tree -------------------------------------------------------------------------------

struct SpecExpr;
using ExprPtr = std::shared_ptr<const SpecExpr>;

struct SpecExpr {
  enum Kind {
    kInt,       // i
    kReal,      // d
    kName,      // name
    kUnary,     // name = "-" or "not"; args[0]
    kBinary,    // name = operator; args[0], args[1]
    kCall,      // name(args...)
    kDRef,      // D[.name]@args[0]; args empty: a tensor family `D.name` (shorthand argument)
    kSRef,      // S[.name]
    kList,      // [args...]
    kComprehension,  // [args[0] for name in args[1] (if args[2])]
  };
  Kind kind = kInt;
  int line = 0;
  int64_t i = 0;
  double d = 0;
  std::string name;
  bool fqn = false;  // kDRef, kSRef: `name` is an input's FQN (D."a.b.weight"@r)
  std::vector<ExprPtr> args;
};

struct Selector {
  enum Kind { kName, kGlob, kPosition, kRange };
  Kind kind = kName;
  std::string name;  // name or glob
  bool fqn = false;  // a quoted selector: `name` is an input FQN or FQN glob
  int64_t first = 0, last = 0;
  std::string text;
};

struct Statement {
  enum Kind { kLet, kGroup, kMesh, kInput, kOutput, kAssume, kConstant, kRng, kCut, kExpect };
  Kind kind = kLet;
  int line = 0;
  std::string text;  // the statement's source, comments removed, whitespace collapsed
  std::string name;  // let / group name; rng: the model ("positional")
  ExprPtr value;     // let / group value
  std::vector<Selector> selectors;
  bool cycle = false;
  std::vector<ExprPtr> rules;     // one rule, or the cycle's rules (cut: none or one); mesh: sizes
  std::vector<std::string> axes;  // mesh: the axis names, in order
};

struct SpecAst {
  std::string file;
  std::vector<Statement> statements;
};

namespace {

// ---- lexer -------------------------------------------------------------------------------------

struct Token {
  enum Kind { kIdent, kInt, kReal, kPosition, kPunct, kString, kNewline, kEnd };
  Kind kind = kEnd;
  std::string text;  // kString: the contents, without the quotes
  int64_t i = 0;
  double d = 0;
  int line = 0;
  int col = 0;  // 0-based column of the first character
};

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

struct Lexed {
  std::vector<Token> tokens;
  std::vector<std::string> code_lines;  // each source line without its comment
};

Lexed Lex(const std::string& text, const std::string& file) {
  Lexed out;
  std::vector<std::string> lines;
  {
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
  }
  for (size_t ln = 0; ln < lines.size(); ++ln) {
    const std::string& s = lines[ln];
    const int line_no = static_cast<int>(ln) + 1;
    size_t code_end = s.size();
    size_t p = 0;
    auto error = [&](const std::string& problem) {
      throw InputError(file, line_no, "column " + std::to_string(p + 1) + ": " + problem);
    };
    while (p < s.size()) {
      char c = s[p];
      if (c == ' ' || c == '\t') {
        ++p;
        continue;
      }
      Token t;
      t.line = line_no;
      t.col = static_cast<int>(p);
      if (c == '/' && p + 1 < s.size() && s[p + 1] == '/') {
        code_end = p;
        break;
      }
      if (c == '#') {
        // `#` then a digit or '-' is an input/output position; `#` then blank is a comment.
        if (p + 1 >= s.size() || s[p + 1] == ' ' || s[p + 1] == '\t') {
          code_end = p;
          break;
        }
        size_t q = p + 1;
        if (s[q] == '-') ++q;
        size_t digits = q;
        while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
        if (q == digits) {
          error("'#' must be followed by a position (#0, #-1) or by a space (a comment)");
        }
        t.kind = Token::kPosition;
        t.text = s.substr(p, q - p);
        auto [ptr, ec] = std::from_chars(s.data() + p + 1, s.data() + q, t.i);
        if (ec != std::errc()) error("position out of range: " + t.text);
        p = q;
      } else if (c == '"') {
        // A quoted name: a parameter's FQN ("decoder.layers.0.mlp.fc2.weight"), whose dots
        // would otherwise read as the '.' of S.name / D.name.
        size_t q = s.find('"', p + 1);
        if (q == std::string::npos) error("unterminated quoted name (a closing '\"' is missing)");
        t.kind = Token::kString;
        t.text = s.substr(p + 1, q - p - 1);
        if (t.text.empty()) error("empty quoted name \"\"");
        p = q + 1;
      } else if (IsIdentStart(c)) {
        size_t q = p;
        while (q < s.size() && IsIdentChar(s[q])) ++q;
        t.kind = Token::kIdent;
        t.text = s.substr(p, q - p);
        p = q;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        size_t q = p;
        while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
        bool real = false;
        if (q + 1 < s.size() && s[q] == '.' && std::isdigit(static_cast<unsigned char>(s[q + 1]))) {
          real = true;
          ++q;
          while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
        }
        if (q < s.size() && (s[q] == 'e' || s[q] == 'E')) {
          size_t e = q + 1;
          if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
          if (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) {
            real = true;
            q = e;
            while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
          }
        }
        if (q < s.size() && IsIdentChar(s[q])) error("bad number '" + s.substr(p, q - p + 1) + "'");
        t.text = s.substr(p, q - p);
        if (real) {
          t.kind = Token::kReal;
          t.d = std::strtod(t.text.c_str(), nullptr);
        } else {
          t.kind = Token::kInt;
          auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.i);
          if (ec != std::errc()) error("integer out of range: " + t.text);
        }
        p = q;
      } else {
        static const char* kTwoChar[] = {"..", "==", "!=", "<=", ">="};
        t.kind = Token::kPunct;
        for (const char* two : kTwoChar) {
          if (s.compare(p, 2, two) == 0) t.text = two;
        }
        if (t.text.empty()) {
          if (std::string("()[],@.=+-*/%<>?").find(c) == std::string::npos) {
            error(std::string("unexpected character '") + c + "'");
          }
          t.text = std::string(1, c);
        }
        p += t.text.size();
      }
      out.tokens.push_back(t);
    }
    Token nl;
    nl.kind = Token::kNewline;
    nl.line = line_no;
    nl.col = static_cast<int>(s.size());
    out.tokens.push_back(nl);
    out.code_lines.push_back(s.substr(0, code_end));
  }
  Token end;
  end.kind = Token::kEnd;
  end.line = static_cast<int>(lines.size());
  out.tokens.push_back(end);
  return out;
}

std::string CollapseSpaces(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    // No space right inside brackets or before a comma, so multi-line statements read naturally.
    if ((c == ')' || c == ']' || c == ',') && !out.empty() && out.back() == ' ') out.pop_back();
    if (!out.empty() && (out.back() == '(' || out.back() == '[') && c == ' ') continue;
    out += c;
  }
  return out;
}

// ---- parser ------------------------------------------------------------------------------------

class SpecParser {
 public:
  SpecParser(const Lexed& lexed, const std::string& file) : lexed_(lexed), file_(file) {}

  SpecAst Parse() {
    SpecAst ast;
    ast.file = file_;
    for (;;) {
      while (Peek().kind == Token::kNewline) ++pos_;
      if (Peek().kind == Token::kEnd) break;
      ast.statements.push_back(ParseStatement());
    }
    return ast;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    size_t p = pos_;
    // Newlines inside brackets do not end a statement.
    for (size_t k = 0;; ++p) {
      const Token& t = lexed_.tokens[p];
      if (t.kind == Token::kNewline && depth_ > 0) continue;
      if (k == ahead || t.kind == Token::kEnd) return lexed_.tokens[p];
      ++k;
    }
  }
  const Token& Next() {
    while (lexed_.tokens[pos_].kind == Token::kNewline && depth_ > 0) ++pos_;
    const Token& t = lexed_.tokens[pos_];
    if (t.kind != Token::kEnd) ++pos_;
    if (t.kind == Token::kPunct) {
      if (t.text == "(" || t.text == "[") ++depth_;
      if ((t.text == ")" || t.text == "]") && depth_ > 0) --depth_;
    }
    last_line_ = t.line;
    return t;
  }
  bool IsPunct(const std::string& p, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == Token::kPunct && t.text == p;
  }
  bool IsWord(const std::string& w, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == Token::kIdent && t.text == w;
  }
  bool AcceptPunct(const std::string& p) {
    if (!IsPunct(p)) return false;
    Next();
    return true;
  }
  std::string Describe(const Token& t) const {
    switch (t.kind) {
      case Token::kNewline: return "end of line";
      case Token::kEnd: return "end of file";
      case Token::kString:
        return "\"" + t.text + "\"";
      default: return "'" + t.text + "'";
    }
  }
  [[noreturn]] void Error(const Token& at, const std::string& problem) const {
    throw InputError(file_, at.line, problem);
  }
  void ExpectPunct(const std::string& p, const char* context) {
    if (!AcceptPunct(p)) {
      Error(Peek(), "expected '" + p + "' " + context + ", found " + Describe(Peek()));
    }
  }
  std::string ExpectIdent(const char* what) {
    if (Peek().kind != Token::kIdent) Error(Peek(), std::string("expected ") + what + ", found " +
                                                        Describe(Peek()));
    return Next().text;
  }

  // A tensor name after `S.` / `D.`: an identifier, or a quoted FQN (sets e->fqn).
  std::string ExpectName(const char* what, SpecExpr* e) {
    if (Peek().kind == Token::kString) {
      e->fqn = true;
      return Next().text;
    }
    return ExpectIdent(what);
  }

  // Bounded nesting keeps hostile input from exhausting the stack.
  struct NestingGuard {
    int* depth;
    ~NestingGuard() { --*depth; }
  };
  NestingGuard Nest(const Token& at) {
    if (++nesting_ > kMaxNesting) Error(at, "expression nested too deeply");
    return NestingGuard{&nesting_};
  }

  Statement ParseStatement() {
    Statement st;
    const Token& head = Peek();
    st.line = head.line;
    if (head.kind != Token::kIdent) {
      Error(head,
            "expected a statement (let, group, mesh, input, inputs, output, outputs, "
            "assume, cut, expect), found " +
                Describe(head));
    }
    std::string word = Next().text;
    if (word == "let" || word == "group") {
      st.kind = word == "let" ? Statement::kLet : Statement::kGroup;
      st.name = ExpectIdent("a name");
      if (kReserved.count(st.name)) Error(head, "'" + st.name + "' is a reserved word");
      ExpectPunct("=", "after the name");
      st.value = ParseExpr();
    } else if (word == "mesh") {
      // mesh AXIS = SIZE, AXIS = SIZE, ...: the active group's ranks as a row-major device mesh
      // (the last axis varies fastest), which `placements(...)` rules refer to.
      st.kind = Statement::kMesh;
      do {
        const Token& name = Peek();
        std::string axis = ExpectIdent("a mesh axis name (mesh dp = 2, tp = 4)");
        if (kReserved.count(axis)) Error(name, "'" + axis + "' is a reserved word");
        if (std::find(st.axes.begin(), st.axes.end(), axis) != st.axes.end()) {
          Error(name, "mesh axis '" + axis + "' is named twice");
        }
        ExpectPunct("=", "after the mesh axis name (mesh dp = 2, tp = 4)");
        st.axes.push_back(axis);
        st.rules.push_back(ParseExpr());
      } while (AcceptPunct(","));
    } else if (word == "input" || word == "inputs" || word == "output" || word == "outputs" ||
               word == "assume" || word == "cut" || word == "expect") {
      st.kind = word == "assume"   ? Statement::kAssume
                : word == "cut"    ? Statement::kCut
                : word == "expect" ? Statement::kExpect
                : word[0] == 'i'   ? Statement::kInput
                                   : Statement::kOutput;
      st.selectors = ParseSelectors();
      const Token& after = Peek();
      if (st.kind == Statement::kCut &&
          (after.kind == Token::kNewline || after.kind == Token::kEnd)) {
        // `cut NAMES` without a relation: the tensors are leaves with nothing known of them,
        // for a region whose checked tensors do not read them (docs/relations.md).
      } else if (IsWord("cycle")) {
        if (st.kind != Statement::kInput) Error(Peek(), "'cycle' is only allowed for inputs");
        Next();
        st.cycle = true;
        const Token& open = Peek();
        if (!IsPunct("[")) Error(open, "expected '[' with the cycle's rules after 'cycle'");
        ExprPtr list = ParsePrimary();
        if (list->kind != SpecExpr::kList || list->args.empty()) {
          Error(open, "a cycle needs a non-empty list of rules: cycle [rule, rule, ...]");
        }
        st.rules = list->args;
      } else {
        ExpectPunct("=", "after the selectors (or 'cycle [...]')");
        st.rules.push_back(ParseExpr());
      }
    } else if (word == "constant") {
      // constant NAMES = NUMBER: the value of graph constants (`self._tensor_constantN`) that
      // the capture does not record.
      st.kind = Statement::kConstant;
      st.selectors = ParseSelectors();
      ExpectPunct("=", "after the constant's names");
      st.rules.push_back(ParseExpr());
    } else if (word == "rng") {
      // rng MODEL: what the random operators of S and D draw (docs/relations.md).
      st.kind = Statement::kRng;
      const Token& model = Peek();
      st.name = ExpectIdent("an RNG model (positional)");
      if (st.name != "positional") {
        Error(model, "unknown RNG model '" + st.name +
                         "' (the one model is 'positional': every random operator of S and D "
                         "draws the same value for the same element of the same logical tensor)");
      }
    } else {
      Error(head, "unknown statement '" + word +
                      "' (expected let, group, mesh, input, inputs, output, outputs, assume, "
                      "cut, expect, constant, rng)");
    }
    const Token& end = Peek();
    if (end.kind != Token::kNewline && end.kind != Token::kEnd) {
      Error(end, "unexpected " + Describe(end) + " at the end of the statement");
    }
    std::string text;
    for (int l = st.line; l <= last_line_; ++l) text += " " + lexed_.code_lines[l - 1];
    st.text = CollapseSpaces(text);
    return st;
  }

  std::vector<Selector> ParseSelectors() {
    std::vector<Selector> out;
    do {
      Selector sel;
      const Token& t = Peek();
      if (t.kind == Token::kPosition) {
        Next();
        sel.kind = Selector::kPosition;
        sel.first = sel.last = t.i;
        sel.text = t.text;
        if (AcceptPunct("..")) {
          const Token& e = Peek();
          if (e.kind != Token::kPosition) Error(e, "expected a position after '..', e.g. #-1");
          Next();
          sel.kind = Selector::kRange;
          sel.last = e.i;
          sel.text += ".." + e.text;
        }
      } else if (t.kind == Token::kIdent || IsPunct("*") || IsPunct("?")) {
        // A name or glob: adjacent identifier, '*' and '?' tokens form one word.
        int line = t.line, col = t.col;
        while ((Peek().kind == Token::kIdent || IsPunct("*") || IsPunct("?")) &&
               Peek().line == line && Peek().col == col) {
          const Token& part = Next();
          sel.text += part.text;
          col += static_cast<int>(part.text.size());
        }
        sel.name = sel.text;
        sel.kind = sel.text.find_first_of("*?") == std::string::npos ? Selector::kName
                                                                    : Selector::kGlob;
      } else if (t.kind == Token::kString) {
        Next();
        sel.fqn = true;
        sel.name = t.text;
        sel.text = "\"" + t.text + "\"";
        sel.kind =
            t.text.find_first_of("*?") == std::string::npos ? Selector::kName : Selector::kGlob;
      } else {
        Error(t,
              "expected a selector (a name, a glob like primals_*, a quoted FQN, #3, or "
              "#1..#-2), found " +
                  Describe(t));
      }
      out.push_back(sel);
    } while (AcceptPunct(","));
    return out;
  }

  // Precedence, loosest first: or, and, not, comparisons, + -, * / %, unary -, primary (with @).
  ExprPtr ParseExpr() { return ParseOr(); }

  ExprPtr Binary(const std::string& op, int line, ExprPtr a, ExprPtr b) {
    auto e = std::make_shared<SpecExpr>();
    e->kind = SpecExpr::kBinary;
    e->name = op;
    e->line = line;
    e->args = {std::move(a), std::move(b)};
    return e;
  }

  ExprPtr ParseOr() {
    ExprPtr e = ParseAnd();
    while (IsWord("or")) {
      int line = Next().line;  // consume the operator before parsing the right side
      e = Binary("or", line, e, ParseAnd());
    }
    return e;
  }
  ExprPtr ParseAnd() {
    ExprPtr e = ParseNot();
    while (IsWord("and")) {
      int line = Next().line;
      e = Binary("and", line, e, ParseNot());
    }
    return e;
  }
  ExprPtr ParseNot() {
    NestingGuard guard = Nest(Peek());
    if (IsWord("not")) {
      auto e = std::make_shared<SpecExpr>();
      e->kind = SpecExpr::kUnary;
      e->name = "not";
      e->line = Next().line;
      e->args = {ParseNot()};
      return e;
    }
    return ParseComparison();
  }
  ExprPtr ParseComparison() {
    ExprPtr e = ParseAdditive();
    for (const char* op : {"==", "!=", "<", "<=", ">", ">="}) {
      if (IsPunct(op)) {
        int line = Next().line;
        return Binary(op, line, e, ParseAdditive());
      }
    }
    return e;
  }
  ExprPtr ParseAdditive() {
    ExprPtr e = ParseTerm();
    while (IsPunct("+") || IsPunct("-")) {
      const Token& op = Next();
      ExprPtr right = ParseTerm();
      e = Binary(op.text, op.line, e, right);
    }
    return e;
  }
  ExprPtr ParseTerm() {
    ExprPtr e = ParseUnary();
    while (IsPunct("*") || IsPunct("/") || IsPunct("%")) {
      const Token& op = Next();
      ExprPtr right = ParseUnary();
      e = Binary(op.text, op.line, e, right);
    }
    return e;
  }
  ExprPtr ParseUnary() {
    NestingGuard guard = Nest(Peek());
    if (IsPunct("-")) {
      auto e = std::make_shared<SpecExpr>();
      e->kind = SpecExpr::kUnary;
      e->name = "-";
      e->line = Next().line;
      e->args = {ParseUnary()};
      return e;
    }
    return ParsePrimary();
  }

  // The rank after '@': an integer, a name, or a parenthesized expression.
  ExprPtr ParseRankAtom() {
    const Token& t = Peek();
    if (t.kind == Token::kInt || t.kind == Token::kIdent || IsPunct("(")) return ParsePrimary();
    Error(t, "expected a rank after '@' (a number, a name or a parenthesized expression)");
  }

  ExprPtr ParsePrimary() {
    const Token& t = Peek();
    NestingGuard guard = Nest(t);
    auto e = std::make_shared<SpecExpr>();
    e->line = t.line;
    if (t.kind == Token::kInt || t.kind == Token::kReal) {
      Next();
      e->kind = t.kind == Token::kInt ? SpecExpr::kInt : SpecExpr::kReal;
      e->i = t.i;
      e->d = t.d;
      return e;
    }
    if (AcceptPunct("(")) {
      ExprPtr inner = ParseExpr();
      ExpectPunct(")", "to close '('");
      return inner;
    }
    if (AcceptPunct("[")) {
      if (AcceptPunct("]")) {
        e->kind = SpecExpr::kList;
        return e;
      }
      ExprPtr first = ParseExpr();
      if (IsWord("for")) {
        Next();
        e->kind = SpecExpr::kComprehension;
        e->name = ExpectIdent("a variable name after 'for'");
        if (!IsWord("in")) Error(Peek(), "expected 'in' after 'for " + e->name + "'");
        Next();
        e->args = {first, ParseExpr()};
        if (IsWord("if")) {
          Next();
          e->args.push_back(ParseExpr());
        }
        ExpectPunct("]", "to close the comprehension");
        return e;
      }
      e->kind = SpecExpr::kList;
      e->args.push_back(first);
      while (AcceptPunct(",")) {
        if (IsPunct("]")) break;  // trailing comma
        e->args.push_back(ParseExpr());
      }
      ExpectPunct("]", "to close the list");
      return e;
    }
    if (t.kind == Token::kIdent) {
      Next();
      if (t.text == "D" && (IsPunct(".") || IsPunct("@"))) {
        e->kind = SpecExpr::kDRef;
        if (AcceptPunct(".")) e->name = ExpectName("a D tensor name after 'D.'", e.get());
        if (AcceptPunct("@")) e->args.push_back(ParseRankAtom());
        return e;
      }
      if (t.text == "S") {
        e->kind = SpecExpr::kSRef;
        if (AcceptPunct(".")) e->name = ExpectName("an S tensor name after 'S.'", e.get());
        return e;
      }
      if (t.text == "D") Error(t, "'D' must be followed by '@rank' or '.name'");
      if (AcceptPunct("(")) {
        e->kind = SpecExpr::kCall;
        e->name = t.text;
        if (!AcceptPunct(")")) {
          do e->args.push_back(ParseExpr());
          while (AcceptPunct(","));
          ExpectPunct(")", ("to close the arguments of " + t.text + "(").c_str());
        }
        return e;
      }
      if (kKeywords.count(t.text)) {
        Error(t, "unexpected '" + t.text + "' in an expression");
      }
      e->kind = SpecExpr::kName;
      e->name = t.text;
      return e;
    }
    Error(t, "expected an expression, found " + Describe(t));
  }

  // Words that cannot start an expression.
  static inline const std::set<std::string> kKeywords = {
      "let",    "group", "mesh",   "input",    "inputs", "output", "outputs",
      "assume", "cut",   "expect", "constant", "rng",    "cycle",  "for",
      "in",     "if",    "and",    "or",       "not"};
  // Words that cannot be bound by let or group: keywords, built-in names and rule shorthands.
  static inline const std::set<std::string> kReserved = {
      "let",    "group", "mesh",   "input",     "inputs",  "output", "outputs",
      "assume", "cut",   "expect", "constant",  "rng",     "cycle",  "for",
      "in",     "if",    "and",    "or",        "not",     "D",      "S",
      "all",    "ranks", "world",  "replicate", "partial", "shard",  "placements"};

  const Lexed& lexed_;
  const std::string& file_;
  size_t pos_ = 0;
  int depth_ = 0;
  int last_line_ = 0;
  int nesting_ = 0;
  static constexpr int kMaxNesting = 200;
};

// ---- evaluation --------------------------------------------------------------------------------

struct Val {
  enum Kind { kInt, kReal, kTensor, kList };
  Kind kind = kInt;
  int64_t i = 0;
  double d = 0;
  RelExpr t;
  std::vector<Val> list;

  static Val Int(int64_t v) { Val x; x.kind = kInt; x.i = v; return x; }
  static Val Real(double v) { Val x; x.kind = kReal; x.d = v; return x; }
  static Val Tensor(RelExpr e) { Val x; x.kind = kTensor; x.t = std::move(e); return x; }
  static Val List(std::vector<Val> l) { Val x; x.kind = kList; x.list = std::move(l); return x; }
};

const char* KindName(Val::Kind k) {
  switch (k) {
    case Val::kInt: return "an integer";
    case Val::kReal: return "a real number";
    case Val::kTensor: return "a tensor expression";
    case Val::kList: return "a list";
  }
  return "?";
}

bool GlobMatch(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// What to tell a spec author whose FQN matched nothing in `where`: the closest known FQNs (by
// edit distance, ties by name), or that the dump recorded none.
std::string FqnHint(const std::string& wanted, const std::set<std::string>& known,
                    const std::string& where) {
  if (known.empty()) {
    return where +
           " records no parameter FQNs (the dump names none: AOT descriptor comments, "
           "Dynamo L_self_..._parameters_... names or JSON \"fqn\" fields); name the "
           "input by its graph name instead";
  }
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const std::string& k : known) ranked.emplace_back(EditDistance(wanted, k), k);
  std::sort(ranked.begin(), ranked.end());
  std::string out = "closest FQNs in " + where + ": ";
  for (size_t i = 0; i < ranked.size() && i < 3; ++i) {
    out += (i ? ", " : "") + std::string("\"") + ranked[i].second + "\"";
  }
  return out;
}

std::set<std::string> InputFqns(const ir::Graph& g) {
  std::set<std::string> out;
  for (ir::NodeId id : g.inputs) {
    if (!g.node(id).fqn.empty()) out.insert(g.node(id).fqn);
  }
  return out;
}

// The input of `g` whose recorded FQN is `fqn`, if any.
std::optional<ir::TensorRef> FindInputByFqn(const ir::Graph& g, const std::string& fqn) {
  for (ir::NodeId id : g.inputs) {
    if (g.node(id).fqn == fqn) return ir::TensorRef{id, 0};
  }
  return std::nullopt;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

class Evaluator {
 public:
  Evaluator(const SpecAst& ast, const ir::Graph& s, const ir::Program& d)
      : ast_(ast), s_(s), d_(d) {
    for (int32_t r = 0; r < d.world_size(); ++r) all_ranks_.push_back(r);
    active_ = all_ranks_;
  }

  SpecResult Run() {
    SpecResult result;
    std::vector<int> input_line(s_.inputs.size(), 0);
    std::map<size_t, int> output_line;
    // Every tensor a relation is expected of (`output`, `expect`) and every cut, with its line:
    // a tensor both cut and checked would be checked against its own premise.
    std::map<ir::TensorRef, int> checked_line;
    std::map<ir::TensorRef, int> cut_line;
    std::map<std::string, int> constant_line;
    int rng_line = 0;
    for (const Statement& st : ast_.statements) {
      stmt_ = &st;
      switch (st.kind) {
        case Statement::kLet: {
          Val v = Eval(*st.value);
          if (v.kind != Val::kInt) Error(st.line, "let " + st.name + " must be an integer, got " +
                                                      KindName(v.kind));
          Bind(st, v);
          break;
        }
        case Statement::kGroup: {
          std::vector<int32_t> ranks = RankList(Eval(*st.value), st.line, "group " + st.name);
          if (ranks.empty()) Error(st.line, "group " + st.name + " has no ranks");
          Val v;
          v.kind = Val::kList;
          for (int32_t r : ranks) v.list.push_back(Val::Int(r));
          Bind(st, v);
          active_ = ranks;
          break;
        }
        case Statement::kMesh: {
          Mesh mesh;
          mesh.line = st.line;
          mesh.ranks = active_;
          int64_t count = 1;
          for (size_t k = 0; k < st.axes.size(); ++k) {
            Val size = Eval(*st.rules[k]);
            if (size.kind != Val::kInt || size.i < 1 || size.i > d_.world_size()) {
              Error(st.line, "mesh axis " + st.axes[k] +
                                 " must have a positive integer size of "
                                 "at most the " +
                                 std::to_string(d_.world_size()) + " ranks");
            }
            mesh.axes.push_back(st.axes[k]);
            mesh.sizes.push_back(size.i);
            count *= size.i;
          }
          if (count != static_cast<int64_t>(active_.size())) {
            std::string shape;
            for (size_t k = 0; k < mesh.axes.size(); ++k) {
              shape += (k ? " x " : "") + mesh.axes[k] + "=" + std::to_string(mesh.sizes[k]);
            }
            Error(st.line, "the mesh " + shape + " has " + std::to_string(count) +
                               " devices but the active group has " +
                               std::to_string(active_.size()) +
                               " ranks; the sizes must multiply to the group's size");
          }
          mesh_ = std::move(mesh);
          break;
        }
        case Statement::kInput: {
          std::vector<bool> via_fqn;
          std::vector<size_t> selected = SelectInputs(st, &via_fqn);
          if (st.cycle && selected.size() % st.rules.size() != 0) {
            Error(st.line, "the cycle has " + std::to_string(st.rules.size()) +
                               " rules but the selectors pick " + std::to_string(selected.size()) +
                               " inputs, which is not a multiple");
          }
          for (size_t k = 0; k < selected.size(); ++k) {
            size_t index = selected[k];
            const ir::Node& node = s_.node(s_.inputs[index]);
            if (input_line[index] != 0) {
              Error(st.line, "S input " + node.name + " (#" + std::to_string(index) +
                                 ") is already covered by the input rule on line " +
                                 std::to_string(input_line[index]));
            }
            input_line[index] = st.line;
            Target target{ir::TensorRef{s_.inputs[index], 0}, node.name, -1,
                          via_fqn[k] ? node.fqn : std::string()};
            const SpecExpr& rule = *st.rules[st.cycle ? k % st.rules.size() : 0];
            const size_t first = result.inputs.size();
            Apply(rule, target, st.cycle ? " [cycle rule " + std::to_string(k % st.rules.size()) +
                                               "]"
                                         : "",
                  &result.inputs);
            for (size_t j = first; j < result.inputs.size(); ++j) {
              RequireDInputs(result.inputs[j].expr, node.name, st.line);
            }
          }
          break;
        }
        case Statement::kOutput: {
          for (size_t index : SelectOutputs(st)) {
            if (output_line.count(index)) {
              Error(st.line, "S output #" + std::to_string(index) +
                                 " is already given a relation on line " +
                                 std::to_string(output_line[index]));
            }
            output_line[index] = st.line;
            const ir::TensorRef ref = s_.outputs[index].as_tensor();
            checked_line.emplace(ref, st.line);
            Target target{ref, s_.ValueName(ref), static_cast<int64_t>(index), ""};
            Apply(*st.rules[0], target, "", &result.expected_outputs);
          }
          break;
        }
        case Statement::kExpect: {
          // A relation expected of an intermediate S tensor, checked like an output's; `D@r` is
          // the same-named D tensor, as for `assume`.
          for (const auto& [name, ref] : SelectValues(st, "expect")) {
            auto [it, fresh] = checked_line.emplace(ref, st.line);
            if (!fresh) {
              Error(st.line, "S tensor " + name +
                                 " is already given an expected relation on line " +
                                 std::to_string(it->second));
            }
            Target target{ref, name, -1, ""};
            Apply(*st.rules[0], target, "", &result.expected_outputs);
          }
          break;
        }
        case Statement::kCut: {
          // A cut makes the selected S tensors leaves of the region: their relation (if any) is
          // a premise, like `assume`, and nothing upstream of them is analysed.
          for (const auto& [name, ref] : SelectValues(st, "cut")) {
            if (s_.node(ref.node).kind == ir::NodeKind::kInput) {
              Error(st.line, "S tensor " + name +
                                 " is an input: relate it with an input rule, "
                                 "not a cut");
            }
            auto [it, fresh] = cut_line.emplace(ref, st.line);
            if (!fresh) {
              Error(st.line,
                    "S tensor " + name + " is already cut on line " + std::to_string(it->second));
            }
            result.cuts.push_back({ref, !st.rules.empty(), Where(st.line) + ": " + st.text});
            if (st.rules.empty()) continue;
            Target target{ref, name, -1, ""};
            const size_t first = result.assumed.size();
            Apply(*st.rules[0], target, "", &result.assumed);
            for (size_t j = first; j < result.assumed.size(); ++j) {
              result.premises.push_back(
                  {"cut", RelationToString(result.assumed[j], s_), Where(st.line)});
            }
          }
          break;
        }
        case Statement::kAssume: {
          for (const auto& [name, ref] : SelectValues(st, "assume")) {
            Target target{ref, name, -1, ""};
            const size_t first = result.assumed.size();
            Apply(*st.rules[0], target, "", &result.assumed);
            for (size_t j = first; j < result.assumed.size(); ++j) {
              result.premises.push_back({"assume", RelationToString(result.assumed[j], s_),
                                         Where(st.line)});
            }
          }
          break;
        }
        case Statement::kConstant: {
          double value = Real(*st.rules[0]);
          const std::vector<std::string> names = SelectConstants(st);
          // One premise per statement: the names when few, else how many the selectors matched.
          std::string which;
          for (size_t j = 0; j < names.size() && names.size() <= 3; ++j) {
            which += (j ? ", " : "") + names[j];
          }
          if (names.size() > 3) {
            for (const Selector& sel : st.selectors) which += (which.empty() ? "" : ", ") + sel.text;
            which += " (" + std::to_string(names.size()) + " constants)";
          }
          result.premises.push_back({"constant", which + " = " + FormatFactor(value), Where(st.line)});
          for (const std::string& name : names) {
            auto [it, fresh] = constant_line.emplace(name, st.line);
            if (!fresh) {
              Error(st.line, "constant " + name + " is already given a value on line " +
                                 std::to_string(it->second));
            }
            result.constants[name] = value;
          }
          break;
        }
        case Statement::kRng: {
          if (rng_line != 0) {
            Error(st.line, "the RNG model is already stated on line " + std::to_string(rng_line));
          }
          rng_line = st.line;
          result.rng_model = st.name;
          result.premises.push_back(
              {"rng",
               st.name + ": every random operator of S and D draws the same value for the same "
                         "element of the same logical tensor",
               Where(st.line)});
          break;
        }
      }
    }
    for (const auto& [ref, line] : cut_line) {
      auto it = checked_line.find(ref);
      if (it != checked_line.end()) {
        Error(it->second, "S tensor " + s_.ValueName(ref) + " is cut on line " +
                              std::to_string(line) +
                              " and expected here: a cut's relation is a premise, not a check");
      }
    }
    // Coverage: an input rule is owed for every S input a checked tensor depends on. When the
    // spec checks nothing (it serves `infer-relations` or a whole-graph `check`), every input.
    std::vector<bool> in_cone(s_.nodes.size(), checked_line.empty());
    if (!checked_line.empty()) {
      std::set<ir::TensorRef> stops;
      for (const auto& [ref, line] : cut_line) stops.insert(ref);
      for (const Relation& r : result.assumed) stops.insert(r.s_tensor);
      in_cone = Cone(checked_line, stops);
    }
    std::string uncovered;
    int count = 0;
    for (size_t i = 0; i < s_.inputs.size(); ++i) {
      if (input_line[i] != 0 || !in_cone[s_.inputs[i]]) continue;
      if (count++ < 12) {
        uncovered += (uncovered.empty() ? "" : ", ") + s_.node(s_.inputs[i]).name + " (#" +
                     std::to_string(i) + ")";
      }
    }
    if (count > 0) {
      if (count > 12) uncovered += ", ...";
      throw InputError(
          ast_.file, 0,
          std::to_string(count) + " S input(s) are covered by no input rule: " + uncovered +
              (checked_line.empty() ? std::string()
                                    : " (the checked tensors depend on them; a cut above them "
                                      "would end the region there)"));
    }
    return result;
  }

 private:
  // The S tensor a rule relates; `output_position` >= 0 for outputs, where `D@r` means rank r's
  // output at the same position.
  struct Target {
    ir::TensorRef ref;
    std::string name;
    int64_t output_position = -1;
    // Set when an FQN selector chose this S input: its default D counterpart (`D@r`, the
    // shorthands) is then rank r's input of the same FQN, not of the same name.
    std::string fqn;
  };

  [[noreturn]] void Error(int line, const std::string& problem) const {
    throw InputError(ast_.file, line, problem);
  }

  std::string Where(int line) const { return ast_.file + ":" + std::to_string(line); }

  // The S nodes the `checked` tensors depend on through tensor inputs, not looking past the
  // `stops` (cuts and assumed tensors, which inference takes as leaves). It may hold more than
  // inference reads (shape-only reads such as ones_like(x) count here): then an input rule is
  // asked for that is not strictly needed, never the reverse.
  std::vector<bool> Cone(const std::map<ir::TensorRef, int>& checked,
                         const std::set<ir::TensorRef>& stops) const {
    std::vector<bool> in(s_.nodes.size(), false);
    std::vector<ir::TensorRef> stack;
    for (const auto& [ref, line] : checked) stack.push_back(ref);
    while (!stack.empty()) {
      ir::TensorRef ref = stack.back();
      stack.pop_back();
      if (stops.count(ref) || in[ref.node]) continue;
      in[ref.node] = true;
      for (ir::TensorRef input : s_.node(ref.node).TensorInputs()) stack.push_back(input);
    }
    return in;
  }

  // An input rule relates S's inputs to D's inputs: a D tensor computed inside the program is a
  // cut point (`assume`), not an input, or the premise would hide what computes it. The numeric
  // engine reads input rules the same way (it can only feed placeholders).
  void RequireDInputs(const RelExpr& expr, const std::string& s_name, int line) const {
    std::visit(
        [&](const auto& node) {
          using T = std::decay_t<decltype(node)>;
          if constexpr (std::is_same_v<T, DTensor>) {
            const ir::Graph& g = d_.rank(node.rank);
            if (node.tensor.output != 0 || g.node(node.tensor.node).kind != ir::NodeKind::kInput) {
              Error(line, "the input rule of S input " + s_name + " names " + node.name + "@" +
                              std::to_string(node.rank) +
                              ", which is not an input of that rank but computed in it: input "
                              "rules can only name D inputs (placeholders); relate an "
                              "intermediate tensor with 'assume'");
            }
          } else if constexpr (std::is_same_v<T, Concat> || std::is_same_v<T, Sum> ||
                               std::is_same_v<T, Max> || std::is_same_v<T, Min>) {
            for (const RelExpr& child : node.children) RequireDInputs(child, s_name, line);
          } else {
            RequireDInputs(node.child, s_name, line);
          }
        },
        expr.node().kind);
  }

  void Bind(const Statement& st, const Val& v) {
    if (globals_.count(st.name)) Error(st.line, "'" + st.name + "' is already defined");
    globals_[st.name] = v;
  }

  std::vector<int32_t> RankList(const Val& v, int line, const std::string& what) const {
    if (v.kind != Val::kList) Error(line, what + " must be a list of ranks, got " + KindName(v.kind));
    std::vector<int32_t> ranks;
    std::set<int64_t> seen;
    for (const Val& x : v.list) {
      if (x.kind != Val::kInt) Error(line, what + " must be a list of integer ranks");
      if (x.i < 0 || x.i >= d_.world_size()) {
        Error(line, what + ": rank " + std::to_string(x.i) + " is outside the distributed program (" +
                        std::to_string(d_.world_size()) + " ranks)");
      }
      if (!seen.insert(x.i).second) Error(line, what + ": rank " + std::to_string(x.i) + " twice");
      ranks.push_back(static_cast<int32_t>(x.i));
    }
    return ranks;
  }

  // ---- selectors ----

  // `fqns`: each element's FQN ("" if none), for quoted selectors; null where they do not apply.
  // `via_fqn`, if given, says per selected element whether a quoted selector chose it.
  std::vector<size_t> SelectPositions(const Statement& st, const std::vector<std::string>& names,
                                      const char* what,
                                      const std::vector<std::string>* fqns = nullptr,
                                      std::vector<bool>* via_fqn = nullptr) const {
    std::vector<size_t> out;
    const auto n = static_cast<int64_t>(names.size());
    auto wrap = [&](int64_t p, const std::string& text) -> size_t {
      int64_t w = p < 0 ? p + n : p;
      if (w < 0 || w >= n) {
        Error(st.line, std::string("position ") + text + " is out of range: S has " +
                           std::to_string(n) + " " + what + " (#0..#" + std::to_string(n - 1) + ")");
      }
      return static_cast<size_t>(w);
    };
    for (const Selector& sel : st.selectors) {
      if (sel.fqn && !fqns) {
        Error(st.line, "a quoted FQN (" + sel.text +
                           ") names a graph input, so it selects only "
                           "in input rules; name other tensors by their graph names");
      }
      if (via_fqn) via_fqn->resize(out.size(), false);
      switch (sel.kind) {
        case Selector::kPosition:
          out.push_back(wrap(sel.first, sel.text));
          break;
        case Selector::kRange: {
          size_t a = wrap(sel.first, sel.text), b = wrap(sel.last, sel.text);
          if (a > b) {
            Error(st.line, "range " + sel.text + " is empty: it means #" + std::to_string(a) +
                               "..#" + std::to_string(b) + " with " + std::to_string(n) + " " + what);
          }
          for (size_t i = a; i <= b; ++i) out.push_back(i);
          break;
        }
        case Selector::kName:
        case Selector::kGlob: {
          size_t before = out.size();
          const std::vector<std::string>& pool = sel.fqn ? *fqns : names;
          for (size_t i = 0; i < pool.size(); ++i) {
            if (sel.fqn && pool[i].empty()) continue;
            if (sel.kind == Selector::kName ? pool[i] == sel.name : GlobMatch(sel.name, pool[i])) {
              out.push_back(i);
            }
          }
          if (out.size() == before && sel.fqn) {
            std::set<std::string> known;
            for (const std::string& f : pool) {
              if (!f.empty()) known.insert(f);
            }
            Error(st.line, std::string("no S input has the FQN ") +
                               (sel.kind == Selector::kGlob ? "pattern " : "") + sel.text + "; " +
                               FqnHint(sel.name, known, "S"));
          }
          if (out.size() == before) {
            Error(st.line, std::string("no S ") + what + " matches '" + sel.text + "'");
          }
          if (via_fqn) via_fqn->resize(out.size(), sel.fqn);
          break;
        }
      }
    }
    return out;
  }

  std::vector<size_t> SelectInputs(const Statement& st, std::vector<bool>* via_fqn) const {
    std::vector<std::string> names, fqns;
    for (ir::NodeId id : s_.inputs) {
      names.push_back(s_.node(id).name);
      fqns.push_back(s_.node(id).fqn);
    }
    std::vector<size_t> out = SelectPositions(st, names, "inputs", &fqns, via_fqn);
    via_fqn->resize(out.size(), false);
    std::set<size_t> seen;
    for (size_t i : out) {
      if (!seen.insert(i).second) {
        Error(st.line, "S input " + names[i] + " (#" + std::to_string(i) +
                           ") is selected twice by this rule");
      }
    }
    return out;
  }

  std::vector<size_t> SelectOutputs(const Statement& st) const {
    std::vector<std::string> names;
    for (const ir::Value& v : s_.outputs) {
      names.push_back(v.is_tensor() ? s_.ValueName(v.as_tensor()) : std::string());
    }
    std::vector<size_t> out = SelectPositions(st, names, "outputs");
    for (size_t i : out) {
      if (!s_.outputs[i].is_tensor()) {
        Error(st.line, "S output #" + std::to_string(i) + " is not a tensor");
      }
    }
    return out;
  }

  // Names of graph constants (S or any rank of D) a `constant` statement selects, in name order.
  std::vector<std::string> SelectConstants(const Statement& st) const {
    std::set<std::string> out;
    auto scan = [&](const ir::Graph& g, const Selector& sel, bool* found) {
      for (const ir::Node& node : g.nodes) {
        if (node.kind != ir::NodeKind::kConstant) continue;
        if (sel.kind == Selector::kName ? node.name == sel.name : GlobMatch(sel.name, node.name)) {
          out.insert(node.name);
          *found = true;
        }
      }
    };
    for (const Selector& sel : st.selectors) {
      if (sel.kind == Selector::kPosition || sel.kind == Selector::kRange) {
        Error(st.line, "constant selects graph constants by name or glob, not by position (" +
                           sel.text + ")");
      }
      if (sel.fqn) {
        Error(st.line, "constant selects graph constants by name or glob; a quoted FQN (" +
                           sel.text + ") names a graph input");
      }
      bool found = false;
      scan(s_, sel, &found);
      for (int32_t r = 0; r < d_.world_size(); ++r) scan(d_.rank(r), sel, &found);
      if (!found) Error(st.line, "no graph constant of S or D matches '" + sel.text + "'");
    }
    return {out.begin(), out.end()};
  }

  std::vector<std::pair<std::string, ir::TensorRef>> SelectValues(const Statement& st,
                                                                  const std::string& word) const {
    std::vector<std::pair<std::string, ir::TensorRef>> out;
    for (const Selector& sel : st.selectors) {
      if (sel.kind == Selector::kPosition || sel.kind == Selector::kRange) {
        Error(st.line,
              word + " selects S tensors by name or glob, not by position (" + sel.text + ")");
      }
      if (sel.fqn) {
        Error(st.line, word + " selects intermediate S tensors by name or glob; a quoted FQN (" +
                           sel.text + ") names a graph input, which an input rule relates");
      }
      size_t before = out.size();
      for (size_t n = 0; n < s_.nodes.size(); ++n) {
        const ir::Node& node = s_.nodes[n];
        for (size_t o = 0; o < node.outputs.size(); ++o) {
          const std::string& name = node.outputs[o].name;
          if (name.empty() || !node.outputs[o].type) continue;
          if (sel.kind == Selector::kName ? name == sel.name : GlobMatch(sel.name, name)) {
            out.emplace_back(name, ir::TensorRef{static_cast<ir::NodeId>(n),
                                                 static_cast<int32_t>(o)});
          }
        }
      }
      if (out.size() == before) Error(st.line, "no S tensor matches '" + sel.text + "'");
    }
    return out;
  }

  // ---- rules ----

  void Add(const Target& target, RelExpr expr, int line, const std::string& note,
           std::vector<Relation>* out) const {
    std::string why;
    auto type = InferRelType(expr, d_, &why);
    if (!type) Error(line, "relation for S tensor " + target.name + ": " + why);
    const ir::TensorType& s_type = s_.type(target.ref);
    if (type->shape != s_type.shape) {
      // Differing only where a size is symbolic: each graph's data-dependent sizes (u0 of
      // .item(), renamed u0_s, u0_r<R> by the loader) are its own, never known equal.
      bool symbolic_only = type->shape.size() == s_type.shape.size();
      for (size_t i = 0; symbolic_only && i < s_type.shape.size(); ++i) {
        symbolic_only = type->shape[i] == s_type.shape[i] || !type->shape[i].is_static() ||
                        !s_type.shape[i].is_static();
      }
      Error(
          line,
          "relation for S tensor " + target.name + " has shape " + ir::ShapeToString(type->shape) +
              " but " + target.name + " has shape " + ir::ShapeToString(s_type.shape) + ": " +
              target.name + " == " + expr.ToString() +
              (symbolic_only ? " (they differ in symbolic sizes: a data-dependent size such as u0 "
                               "is each graph's own, so no relation over tensors it sizes can be "
                               "stated; relate the tensors they are computed from, or capture "
                               "with static sizes)"
                             : ""));
    }
    out->push_back(Relation{target.ref, std::move(expr),
                            ast_.file + ":" + std::to_string(stmt_->line) + ": " + stmt_->text +
                                note});
  }

  void Apply(const SpecExpr& rule, const Target& target, const std::string& note,
             std::vector<Relation>* out) {
    target_ = &target;
    if (rule.kind == SpecExpr::kCall && rule.name == "placements") {
      ApplyPlacements(rule, target, note, out);
      target_ = nullptr;
      return;
    }
    std::string shorthand;
    std::vector<ExprPtr> args;
    if (rule.kind == SpecExpr::kName &&
        (rule.name == "replicate" || rule.name == "partial" || rule.name == "shard")) {
      shorthand = rule.name;
    } else if (rule.kind == SpecExpr::kCall &&
               (rule.name == "replicate" || rule.name == "partial" || rule.name == "shard")) {
      shorthand = rule.name;
      args = rule.args;
    }
    if (shorthand.empty()) {
      Val v = Eval(rule);
      if (v.kind != Val::kTensor) {
        Error(rule.line, "a relation rule must be a tensor expression, got " +
                             std::string(KindName(v.kind)));
      }
      Add(target, v.t, rule.line, note, out);
      target_ = nullptr;
      return;
    }
    // Shorthands: an optional last argument `D.name` names another D tensor family.
    std::string family;
    bool family_fqn = false;
    size_t expected = shorthand == "shard" ? 1 : 0;
    if (args.size() == expected + 1) TakeFamily(&args, &family, &family_fqn);
    if (args.size() != expected) {
      Error(rule.line, shorthand == "shard"
                           ? "shard takes a dimension and optionally D.name: shard(0), "
                             "shard(1, D.other)"
                           : shorthand + " takes no argument or a D tensor family: " + shorthand +
                                 "(D.other)");
    }
    std::vector<RelExpr> leaves;
    for (int32_t r : active_) leaves.push_back(DLeaf(family, r, rule.line, family_fqn));
    if (shorthand == "replicate") {
      for (RelExpr& leaf : leaves) Add(target, leaf, rule.line, note, out);
    } else if (shorthand == "partial") {
      Add(target, RelExpr::Sum(leaves), rule.line, note, out);
    } else {
      Val dim = Eval(*args[0]);
      if (dim.kind != Val::kInt) Error(rule.line, "shard's dimension must be an integer");
      Add(target, RelExpr::Concat(dim.i, leaves), rule.line, note, out);
    }
    target_ = nullptr;
  }

  // A rule's last argument `D.name` (a D tensor family instead of the counterpart), taken off
  // `args` into `family` when it is one.
  static void TakeFamily(std::vector<ExprPtr>* args, std::string* family, bool* fqn) {
    if (args->empty() || args->back()->kind != SpecExpr::kDRef || !args->back()->args.empty()) {
      return;
    }
    *family = args->back()->name;
    *fqn = args->back()->fqn;
    args->pop_back();
  }

  // placements(P0, ..., Pn-1[, D.name]): one placement per axis of the mesh, as DTensor
  // writes a layout. shard(d) on an axis splits dim d over it (several axes on one dim: the
  // earlier mesh axis is the major one, as in DTensor and jax's PartitionSpec(('dp', 'tp'))),
  // partial sums over it, replicate repeats: one relation per combination of the replicated
  // axes' indices, so every replica is related. zigzag(d) splits dim d over its axis as context
  // parallelism's load balancing does (index i holds chunks i and 2W-1-i: ZigzagConcat).
  void ApplyPlacements(const SpecExpr& rule, const Target& target, const std::string& note,
                       std::vector<Relation>* out) {
    if (!mesh_) {
      Error(rule.line, "placements(...) needs a mesh statement above it, e.g. mesh dp = 2, tp = 4");
    }
    const Mesh& mesh = *mesh_;
    std::vector<ExprPtr> args = rule.args;
    std::string family;
    bool family_fqn = false;
    TakeFamily(&args, &family, &family_fqn);
    const size_t n = mesh.axes.size();
    if (args.size() != n) {
      Error(rule.line, "placements takes one placement per mesh axis (" + std::to_string(n) +
                           ", the mesh of line " + std::to_string(mesh.line) + "), got " +
                           std::to_string(args.size()));
    }
    const int64_t rank_of_s = static_cast<int64_t>(s_.type(target.ref).shape.size());
    std::vector<int> replicated, partial;
    std::map<int64_t, std::vector<int>> sharded;  // dim -> its axes, in mesh order
    std::set<int64_t> zigzag;                     // dims split zig-zag (one axis each)
    for (size_t k = 0; k < n; ++k) {
      const SpecExpr& p = *args[k];
      const std::string what = "placement " + std::to_string(k) + " (axis " + mesh.axes[k] + ")";
      if (p.kind == SpecExpr::kName && p.name == "replicate") {
        replicated.push_back(static_cast<int>(k));
      } else if (p.kind == SpecExpr::kName && p.name == "partial") {
        partial.push_back(static_cast<int>(k));
      } else if (p.kind == SpecExpr::kCall && (p.name == "shard" || p.name == "zigzag") &&
                 p.args.size() == 1) {
        Val dim = Eval(*p.args[0]);
        if (dim.kind != Val::kInt)
          Error(rule.line, what + ": " + p.name + "'s dimension must be an integer");
        int64_t d = dim.i < 0 ? dim.i + rank_of_s : dim.i;
        if (d < 0 || d >= rank_of_s) {
          Error(rule.line, what + ": dimension " + std::to_string(dim.i) + " is out of range for " +
                               target.name + " (" + std::to_string(rank_of_s) + " dimensions)");
        }
        if (p.name == "zigzag") zigzag.insert(d);
        sharded[d].push_back(static_cast<int>(k));
      } else {
        Error(rule.line, what + " must be replicate, partial, shard(d) or zigzag(d)");
      }
    }
    for (int64_t d : zigzag) {
      if (sharded[d].size() != 1) {
        Error(rule.line, "zigzag(" + std::to_string(d) +
                             ") splits its dimension alone: no other axis may shard or zigzag it");
      }
    }
    // Walks the indices of `axes` row-major, setting them in `index`, calling `body` for each.
    std::vector<int64_t> index(n, 0);
    auto each = [&](const std::vector<int>& axes, const auto& body) {
      for (int a : axes) index[a] = 0;
      for (;;) {
        body();
        size_t k = axes.size();
        while (k > 0) {
          const int a = axes[k - 1];
          if (++index[a] < mesh.sizes[a]) break;
          index[a] = 0;
          --k;
        }
        if (k == 0) return;
      }
    };
    auto leaf = [&]() {
      int64_t linear = 0;
      for (size_t k = 0; k < n; ++k) linear = linear * mesh.sizes[k] + index[k];
      Step(rule.line);
      return DLeaf(family, mesh.ranks[static_cast<size_t>(linear)], rule.line, family_fqn);
    };
    std::vector<int64_t> dims;
    for (const auto& [d, axes] : sharded) dims.push_back(d);
    std::function<RelExpr(size_t)> shards = [&](size_t k) -> RelExpr {
      if (k == dims.size()) return leaf();
      std::vector<RelExpr> parts;
      each(sharded[dims[k]], [&] { parts.push_back(shards(k + 1)); });
      if (zigzag.count(dims[k])) return ZigzagConcat(dims[k], parts, rule.line);
      return parts.size() == 1 ? parts[0] : RelExpr::Concat(dims[k], parts);
    };
    each(replicated, [&] {
      std::vector<RelExpr> terms;
      each(partial, [&] { terms.push_back(shards(0)); });
      Add(target, terms.size() == 1 ? terms[0] : RelExpr::Sum(terms), rule.line, note, out);
    });
  }

  // The zig-zag (load-balanced) split of context parallelism: the W pieces in axis order hold
  // chunks i and 2W-1-i of the 2W chunks along `dim`, so the whole is every piece's first half in
  // order, then every piece's second half in reverse order.
  RelExpr ZigzagConcat(int64_t dim, const std::vector<RelExpr>& parts, int line) const {
    std::vector<int64_t> halves;
    for (const RelExpr& part : parts) {
      std::string why;
      std::optional<ir::TensorType> type = InferRelType(part, d_, &why);
      if (!type) Error(line, "zigzag: " + why);
      const ir::Dim& size = type->shape[static_cast<size_t>(dim)];
      if (!size.is_static() || size.value() % 2 != 0) {
        Error(line, "zigzag(" + std::to_string(dim) + ") needs an even static size along its " +
                        "dimension (two chunks per rank), got " + part.ToString());
      }
      halves.push_back(size.value() / 2);
    }
    std::vector<RelExpr> chunks;
    for (size_t i = 0; i < parts.size(); ++i)
      chunks.push_back(RelExpr::Slice(parts[i], dim, 0, halves[i]));
    for (size_t i = parts.size(); i-- > 0;)
      chunks.push_back(RelExpr::Slice(parts[i], dim, halves[i], 2 * halves[i]));
    return RelExpr::Concat(dim, chunks);
  }

  // The D tensor for rank r: `name` if given, else the current target's counterpart (the
  // same-named tensor, or for outputs the output at the same position).
  // Rank `rank`'s tensor `name`; `fqn`: `name` is an FQN, naming the rank's input recorded with
  // it. An empty name is the rule's default counterpart.
  RelExpr DLeaf(const std::string& name, int64_t rank, int line, bool fqn = false) const {
    if (rank < 0 || rank >= d_.world_size()) {
      Error(line, "rank " + std::to_string(rank) + " is outside the distributed program (" +
                      std::to_string(d_.world_size()) + " ranks)");
    }
    const ir::Graph& g = d_.rank(static_cast<int32_t>(rank));
    const auto r32 = static_cast<int32_t>(rank);
    if (name.empty()) {
      if (!target_) Error(line, "'D@r' needs a rule's S tensor; outside rules write D.name@r");
      if (target_->output_position >= 0) {
        const auto pos = static_cast<size_t>(target_->output_position);
        if (pos >= g.outputs.size() || !g.outputs[pos].is_tensor()) {
          Error(line, "rank " + std::to_string(rank) + " has no tensor output #" +
                          std::to_string(pos) + " to relate to S output " + target_->name);
        }
        ir::TensorRef ref = g.outputs[pos].as_tensor();
        return RelExpr::Tensor(r32, ref, g.ValueName(ref));
      }
      if (!target_->fqn.empty()) {
        auto ref = FindInputByFqn(g, target_->fqn);
        if (!ref) {
          Error(line, "rank " + std::to_string(rank) + " has no input with the FQN \"" +
                          target_->fqn + "\" (the default counterpart of S's " + target_->name +
                          ", chosen by that FQN); " +
                          FqnHint(target_->fqn, InputFqns(g), "rank " + std::to_string(rank)) +
                          "; or name another with D.name@r");
        }
        return RelExpr::Tensor(r32, *ref, g.ValueName(*ref));
      }
      auto ref = g.Find(target_->name);
      if (!ref) {
        Error(line, "rank " + std::to_string(rank) + " has no tensor named " + target_->name +
                        " (the default counterpart of S's " + target_->name +
                        "); name another with D.name@r");
      }
      return RelExpr::Tensor(r32, *ref, target_->name);
    }
    if (fqn) {
      auto ref = FindInputByFqn(g, name);
      if (!ref) {
        Error(line, "rank " + std::to_string(rank) + " has no input with the FQN \"" + name +
                        "\"; " + FqnHint(name, InputFqns(g), "rank " + std::to_string(rank)));
      }
      return RelExpr::Tensor(r32, *ref, g.ValueName(*ref));
    }
    auto ref = g.Find(name);
    if (!ref) Error(line, "rank " + std::to_string(rank) + " has no tensor named " + name);
    return RelExpr::Tensor(r32, *ref, name);
  }

  // ---- expressions ----

  Val Lookup(const SpecExpr& e) const {
    for (auto it = locals_.rbegin(); it != locals_.rend(); ++it) {
      if (it->first == e.name) return Val::Int(it->second);
    }
    if (e.name == "world") return Val::Int(static_cast<int64_t>(active_.size()));
    if (e.name == "ranks" || e.name == "all") {
      const std::vector<int32_t>& ranks = e.name == "ranks" ? active_ : all_ranks_;
      std::vector<Val> l;
      for (int32_t r : ranks) l.push_back(Val::Int(r));
      return Val::List(std::move(l));
    }
    auto it = globals_.find(e.name);
    if (it != globals_.end()) return it->second;
    if (e.name == "replicate" || e.name == "partial" || e.name == "shard") {
      Error(e.line, "'" + e.name + "' is a whole rule; it cannot be part of an expression");
    }
    Error(e.line, "unknown name '" + e.name + "'");
  }

  int64_t Int(const SpecExpr& e, const char* what) {
    Val v = Eval(e);
    if (v.kind != Val::kInt) {
      Error(e.line, std::string(what) + " must be an integer, got " + KindName(v.kind));
    }
    return v.i;
  }

  // A number where reals are allowed (scale factors): '/' divides exactly here.
  double Real(const SpecExpr& e) {
    if (e.kind == SpecExpr::kBinary &&
        (e.name == "+" || e.name == "-" || e.name == "*" || e.name == "/")) {
      double a = Real(*e.args[0]), b = Real(*e.args[1]);
      if (e.name == "+") return a + b;
      if (e.name == "-") return a - b;
      if (e.name == "*") return a * b;
      if (b == 0) Error(e.line, "division by zero");
      return a / b;
    }
    if (e.kind == SpecExpr::kUnary && e.name == "-") return -Real(*e.args[0]);
    Val v = Eval(e);
    if (v.kind == Val::kInt) return static_cast<double>(v.i);
    if (v.kind == Val::kReal) return v.d;
    Error(e.line, std::string("expected a number, got ") + KindName(v.kind));
  }

  // Evaluates arguments, splicing lists (comprehensions) into the sequence.
  std::vector<Val> Spliced(const std::vector<ExprPtr>& args, size_t from) {
    std::vector<Val> out;
    for (size_t k = from; k < args.size(); ++k) {
      Val v = Eval(*args[k]);
      if (v.kind == Val::kList) {
        for (Val& x : v.list) out.push_back(std::move(x));
      } else {
        out.push_back(std::move(v));
      }
    }
    return out;
  }

  std::vector<RelExpr> Tensors(const std::vector<Val>& vals, const SpecExpr& e) const {
    std::vector<RelExpr> out;
    for (const Val& v : vals) {
      if (v.kind != Val::kTensor) {
        Error(e.line, e.name + "() expects tensors, got " + std::string(KindName(v.kind)));
      }
      out.push_back(v.t);
    }
    if (out.empty()) {
      Error(e.line, e.name + "() got no tensors (did a comprehension select no rank?)");
    }
    return out;
  }

  std::vector<int64_t> IntListOf(const SpecExpr& e, const char* what) {
    Val v = Eval(e);
    std::vector<int64_t> out;
    if (v.kind != Val::kList) Error(e.line, std::string(what) + " must be a list of integers");
    for (const Val& x : v.list) {
      if (x.kind != Val::kInt) Error(e.line, std::string(what) + " must be a list of integers");
      out.push_back(x.i);
    }
    return out;
  }

  ir::TensorType TypeOf(const SpecExpr& e) {
    if (e.kind == SpecExpr::kSRef) {
      if (e.name.empty()) {
        if (!target_) Error(e.line, "'S' alone means a rule's S tensor; outside rules write S.name");
        return s_.type(target_->ref);
      }
      auto ref = e.fqn ? FindInputByFqn(s_, e.name) : s_.Find(e.name);
      if (!ref && e.fqn) {
        Error(e.line, "S has no input with the FQN \"" + e.name + "\"; " +
                          FqnHint(e.name, InputFqns(s_), "S"));
      }
      if (!ref) Error(e.line, "S has no tensor named " + e.name);
      if (!s_.node(ref->node).outputs[ref->output].type) Error(e.line, e.name + " is not a tensor");
      return s_.type(*ref);
    }
    Val v = Eval(e);
    if (v.kind != Val::kTensor) Error(e.line, std::string("expected a tensor, got ") +
                                                  KindName(v.kind));
    std::string why;
    auto type = InferRelType(v.t, d_, &why);
    if (!type) Error(e.line, why);
    return *type;
  }

  void Arity(const SpecExpr& e, size_t n, const char* usage) const {
    if (e.args.size() != n) Error(e.line, std::string("usage: ") + usage);
  }

  Val Call(const SpecExpr& e) {
    const std::string& f = e.name;
    if (f == "dim") {
      Arity(e, 2, "dim(S.name, d) or dim(D.name@r, d)");
      ir::TensorType type = TypeOf(*e.args[0]);
      int64_t d = Int(*e.args[1], "dim's index");
      auto w = ir::WrapDim(d, static_cast<int64_t>(type.shape.size()));
      if (!w || type.shape.empty()) {
        Error(e.line, "dimension " + std::to_string(d) + " is out of range for " + type.ToString());
      }
      if (!type.shape[*w].is_static()) {
        Error(e.line, "dimension " + std::to_string(d) + " of " + type.ToString() + " is symbolic");
      }
      return Val::Int(type.shape[*w].value());
    }
    if (f == "size" || f == "len") {
      Arity(e, 1, "size(list)");
      Val v = Eval(*e.args[0]);
      if (v.kind != Val::kList) Error(e.line, f + "() expects a list or a group");
      return Val::Int(static_cast<int64_t>(v.list.size()));
    }
    if (f == "range") {
      Arity(e, 1, "range(n)");
      int64_t n = Int(*e.args[0], "range's bound");
      if (n < 0 || n > 1 << 20) Error(e.line, "range(" + std::to_string(n) + ") is out of bounds");
      Step(e.line, n);
      std::vector<Val> l;
      for (int64_t i = 0; i < n; ++i) l.push_back(Val::Int(i));
      return Val::List(std::move(l));
    }
    if (f == "min" || f == "max") {
      std::vector<Val> vals = Spliced(e.args, 0);
      if (vals.empty()) Error(e.line, f + "() needs arguments");
      bool ints = std::all_of(vals.begin(), vals.end(), [](const Val& v) {
        return v.kind == Val::kInt;
      });
      if (ints) {
        int64_t best = vals[0].i;
        for (const Val& v : vals) best = f == "min" ? std::min(best, v.i) : std::max(best, v.i);
        return Val::Int(best);
      }
      std::vector<RelExpr> ts = Tensors(vals, e);
      return Val::Tensor(f == "min" ? RelExpr::Min(ts) : RelExpr::Max(ts));
    }
    if (f == "sum") return Val::Tensor(RelExpr::Sum(Tensors(Spliced(e.args, 0), e)));
    if (f == "mean") {
      std::vector<RelExpr> ts = Tensors(Spliced(e.args, 0), e);
      return Val::Tensor(RelExpr::Scale(1.0 / static_cast<double>(ts.size()), RelExpr::Sum(ts)));
    }
    if (f == "concat") {
      if (e.args.empty()) Error(e.line, "usage: concat(dim, tensors...)");
      int64_t dim = Int(*e.args[0], "concat's dimension");
      return Val::Tensor(RelExpr::Concat(dim, Tensors(Spliced(e.args, 1), e)));
    }
    auto tensor_arg = [&](size_t k) {
      Val v = Eval(*e.args[k]);
      if (v.kind != Val::kTensor) {
        Error(e.line, f + "() expects a tensor as argument " + std::to_string(k + 1) + ", got " +
                          KindName(v.kind));
      }
      return v.t;
    };
    if (f == "slice") {
      Arity(e, 4, "slice(tensor, dim, start, end)");
      RelExpr x = tensor_arg(0);
      int64_t dim = Int(*e.args[1], "slice's dimension");
      int64_t start = Int(*e.args[2], "slice's start");
      int64_t end = Int(*e.args[3], "slice's end");
      return Val::Tensor(RelExpr::Slice(x, dim, start, end));
    }
    if (f == "scale") {
      Arity(e, 2, "scale(factor, tensor)");
      double factor = Real(*e.args[0]);
      return Val::Tensor(RelExpr::Scale(factor, tensor_arg(1)));
    }
    if (f == "reshape") {
      Arity(e, 2, "reshape(tensor, [d0, d1, ...])");
      RelExpr x = tensor_arg(0);
      return Val::Tensor(RelExpr::Reshape(x, IntListOf(*e.args[1], "reshape's shape")));
    }
    if (f == "transpose") {
      Arity(e, 3, "transpose(tensor, d0, d1)");
      RelExpr x = tensor_arg(0);
      int64_t d0 = Int(*e.args[1], "transpose's d0"), d1 = Int(*e.args[2], "transpose's d1");
      return Val::Tensor(RelExpr::Transpose(x, d0, d1));
    }
    if (f == "permute") {
      Arity(e, 2, "permute(tensor, [p0, p1, ...])");
      RelExpr x = tensor_arg(0);
      return Val::Tensor(RelExpr::Permute(x, IntListOf(*e.args[1], "permute's order")));
    }
    if (f == "replicate" || f == "partial" || f == "shard" || f == "placements") {
      Error(e.line, "'" + f + "' is a whole rule; it cannot be part of an expression");
    }
    Error(e.line, "unknown function '" + f +
                      "' (known: dim, size, len, range, min, max, sum, mean, concat, slice, scale, "
                      "reshape, transpose, permute)");
  }

  // One global budget of evaluation steps (expressions evaluated, range elements made), so that
  // nested comprehensions whose sizes multiply stop with an error instead of running for hours.
  static constexpr int64_t kMaxSteps = int64_t{1} << 21;
  void Step(int line, int64_t count = 1) {
    steps_ += count;
    if (steps_ > kMaxSteps) {
      Error(line, "the spec takes more than " + std::to_string(kMaxSteps) +
                      " evaluation steps (nested comprehensions or ranges whose sizes multiply?); "
                      "iterate over ranks or groups, not over large ranges");
    }
  }

  Val Eval(const SpecExpr& e) {
    Step(e.line);
    switch (e.kind) {
      case SpecExpr::kInt: return Val::Int(e.i);
      case SpecExpr::kReal: return Val::Real(e.d);
      case SpecExpr::kName: return Lookup(e);
      case SpecExpr::kUnary: {
        int64_t v = Int(*e.args[0], e.name == "-" ? "the operand of '-'" : "the operand of 'not'");
        if (e.name == "-" && v == INT64_MIN) Error(e.line, "integer overflow in '-'");
        return Val::Int(e.name == "-" ? -v : !v);
      }
      case SpecExpr::kBinary: {
        int64_t a = Int(*e.args[0], ("the left side of '" + e.name + "'").c_str());
        if (e.name == "and" && !a) return Val::Int(0);
        if (e.name == "or" && a) return Val::Int(1);
        int64_t b = Int(*e.args[1], ("the right side of '" + e.name + "'").c_str());
        const std::string& op = e.name;
        int64_t out = 0;
        if (op == "+" || op == "-" || op == "*") {
          bool overflow = op == "+"   ? __builtin_add_overflow(a, b, &out)
                          : op == "-" ? __builtin_sub_overflow(a, b, &out)
                                      : __builtin_mul_overflow(a, b, &out);
          if (overflow) Error(e.line, "integer overflow in '" + op + "'");
          return Val::Int(out);
        }
        if (op == "/" || op == "%") {
          if (b == 0) Error(e.line, "division by zero");
          if (b == -1 && a == INT64_MIN) Error(e.line, "integer overflow in '" + op + "'");
          int64_t q = FloorDiv(a, b);
          return Val::Int(op == "/" ? q : a - q * b);
        }
        if (op == "==") return Val::Int(a == b);
        if (op == "!=") return Val::Int(a != b);
        if (op == "<") return Val::Int(a < b);
        if (op == "<=") return Val::Int(a <= b);
        if (op == ">") return Val::Int(a > b);
        if (op == ">=") return Val::Int(a >= b);
        return Val::Int(b != 0);  // and / or after short-circuit
      }
      case SpecExpr::kCall: return Call(e);
      case SpecExpr::kDRef: {
        if (e.args.empty()) {
          Error(e.line, "D." + e.name + " needs a rank: D." + e.name +
                            "@r (only shorthands take a bare D.name)");
        }
        int64_t rank = Int(*e.args[0], "a rank");
        return Val::Tensor(DLeaf(e.name, rank, e.line, e.fqn));
      }
      case SpecExpr::kSRef:
        Error(e.line, "S tensors can only be measured (dim(S.name, d)); a relation is over D");
      case SpecExpr::kList: {
        std::vector<Val> l;
        for (const ExprPtr& a : e.args) l.push_back(Eval(*a));
        return Val::List(std::move(l));
      }
      case SpecExpr::kComprehension: {
        Val domain = Eval(*e.args[1]);
        if (domain.kind != Val::kList) {
          Error(e.line, "'for " + e.name + " in ...' needs a list (ranks, all, a group, range(n)), "
                        "got " + KindName(domain.kind));
        }
        std::vector<Val> out;
        for (const Val& x : domain.list) {
          if (x.kind != Val::kInt) Error(e.line, "comprehensions iterate over integers");
          locals_.emplace_back(e.name, x.i);
          bool keep = e.args.size() < 3 || Int(*e.args[2], "the 'if' condition") != 0;
          if (keep) out.push_back(Eval(*e.args[0]));
          locals_.pop_back();
        }
        return Val::List(std::move(out));
      }
    }
    Error(e.line, "bad expression");
  }

  const SpecAst& ast_;
  const ir::Graph& s_;
  const ir::Program& d_;
  std::vector<int32_t> all_ranks_;
  std::vector<int32_t> active_;
  // The ranks of the group active at a `mesh` statement as a row-major device mesh.
  struct Mesh {
    std::vector<std::string> axes;
    std::vector<int64_t> sizes;
    std::vector<int32_t> ranks;
    int line = 0;
  };
  std::optional<Mesh> mesh_;
  std::map<std::string, Val> globals_;
  std::vector<std::pair<std::string, int64_t>> locals_;
  const Statement* stmt_ = nullptr;
  const Target* target_ = nullptr;
  int64_t steps_ = 0;
};

}  // namespace

RelationSpec RelationSpec::Parse(const std::string& text, const std::string& file) {
  Lexed lexed = Lex(text, file);
  RelationSpec spec;
  spec.ast_ = std::make_shared<const SpecAst>(SpecParser(lexed, file).Parse());
  return spec;
}

RelationSpec RelationSpec::Load(const std::string& path) {
  return Parse(ReadInputFile(path, "relation spec file"), path);
}

const std::string& RelationSpec::file() const { return ast_->file; }

SpecResult EvaluateSpec(const RelationSpec& spec, const ir::Graph& s_graph,
                        const ir::Program& d_program) {
  if (d_program.world_size() == 0) {
    throw InputError(spec.file(), 0, "the distributed program has no ranks");
  }
  return Evaluator(spec.ast(), s_graph, d_program).Run();
}

}  // namespace gg::symbolic
