#include "frontend/hlo_reader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/fx_reader.h"
#include "ir/op_registry.h"
#include "util/diagnostic.h"

namespace gg::frontend {
namespace {

// ---- tokens ------------------------------------------------------------------------------------

struct Tok {
  enum Kind { kIdent, kNum, kStr, kPunct, kEnd } kind = kEnd;
  std::string text;
  int line = 0;
  bool spaced = false;  // whitespace (or a comment) before it: `]{1,0}` is a layout, `] {` a body
};

// '#': MLIR attributes in frontend_attributes ({mesh = #sdy.mesh<["tp"=2]>}), read as words.
bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '%' || c == '$' ||
         c == '#';
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '%' ||
         c == '$';
}

std::vector<Tok> Lex(std::string_view text, const std::string& file) {
  std::vector<Tok> out;
  int line = 1;
  size_t i = 0;
  const size_t n = text.size();
  auto at = [&](size_t k) { return k < n ? text[k] : '\0'; };
  bool spaced = true;
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      spaced = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      spaced = true;
      continue;
    }
    if (c == '/' && at(i + 1) == '*') {  // /*index=5*/ and other comments
      const int start = line;
      size_t end = text.find("*/", i + 2);
      if (end == std::string_view::npos) {
        throw InputError(file, start, "unterminated /* comment; close it with */");
      }
      line += static_cast<int>(std::count(text.begin() + i, text.begin() + end, '\n'));
      i = end + 2;
      spaced = true;
      continue;
    }
    if (c == '/' && at(i + 1) == '/') {
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    Tok tok;
    tok.line = line;
    tok.spaced = spaced;
    spaced = false;
    if (c == '"' || c == '\'') {  // 'axis' names in the mesh form of replica_groups
      tok.kind = Tok::kStr;
      ++i;
      while (true) {
        if (i >= n || text[i] == '\n') {
          throw InputError(file, tok.line, std::string("unterminated string; close it with ") + c);
        }
        if (text[i] == c) break;
        if (text[i] == '\\' && i + 1 < n) ++i;
        tok.text += text[i++];
      }
      ++i;
    } else if (IsIdentStart(c)) {
      tok.kind = Tok::kIdent;
      tok.text += text[i++];  // the start ('#' is no IdentChar)
      while (i < n && (IsIdentChar(text[i]) ||
                       (text[i] == '-' && (std::isalnum(static_cast<unsigned char>(at(i + 1))) ||
                                           at(i + 1) == '_')))) {
        tok.text += text[i++];
      }
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               ((c == '-' || c == '+') &&
                (std::isdigit(static_cast<unsigned char>(at(i + 1))) || at(i + 1) == '.' ||
                 at(i + 1) == 'i' || at(i + 1) == 'n'))) {
      tok.kind = Tok::kNum;
      tok.text += text[i++];
      while (i < n) {
        char d = text[i];
        if (std::isalnum(static_cast<unsigned char>(d)) || d == '_' || d == '.') {
          tok.text += text[i++];
        } else if ((d == '-' || d == '+') && (tok.text.back() == 'e' || tok.text.back() == 'E')) {
          tok.text += text[i++];
        } else {
          break;
        }
      }
    } else if (c == '.' && at(i + 1) == '.' && at(i + 2) == '.') {
      // `{...}`: a literal XLA printed without its values (print_large_constants off)
      tok.kind = Tok::kIdent;
      tok.text = "...";
      i += 3;
    } else if (c == '-' && at(i + 1) == '>') {
      tok.kind = Tok::kPunct;
      tok.text = "->";
      i += 2;
    } else if (std::string_view("(){}[],=:<>*").find(c) != std::string_view::npos) {
      tok.kind = Tok::kPunct;
      tok.text = std::string(1, c);
      ++i;
    } else {
      throw InputError(file, line,
                       std::string("unexpected character '") + c +
                           "' in HLO text (expected an instruction `%name = type opcode(...)`)");
    }
    out.push_back(std::move(tok));
  }
  out.push_back(Tok{Tok::kEnd, "", line, true});
  return out;
}

// ---- the parsed module -------------------------------------------------------------------------

struct HloShape {
  bool tuple = false;
  std::vector<HloShape> elems;  // tuple elements
  ir::TensorType type;          // non-tuple
  std::string unsupported;      // an element type GraphGuard has no dtype for ("token", "f8e5m2")
  bool is_unsigned = false;     // u16/u32/u64, typed as the next wider signed dtype (i32, i64)
};

// Whether any element of the shape is unsigned (u16-u64).
bool HasUnsigned(const HloShape& s) {
  if (s.is_unsigned) return true;
  for (const HloShape& e : s.elems) {
    if (HasUnsigned(e)) return true;
  }
  return false;
}

struct Attr {
  std::vector<Tok> value;
  int line = 0;
};

struct Instr {
  std::string hlo_name;  // as written, without '%'
  bool root = false;
  HloShape shape;
  std::string opcode;
  std::vector<std::vector<Tok>> operands;  // each operand's tokens (type and name, or literal)
  std::map<std::string, Attr> attrs;
  int line = 0;
};

struct Computation {
  std::string name;
  bool entry = false;
  std::vector<Instr> instrs;
  int line = 0;
};

std::string StripPercent(const std::string& s) {
  return !s.empty() && s[0] == '%' ? s.substr(1) : s;
}

std::optional<ir::DType> HloDType(const std::string& t) {
  static const std::map<std::string, ir::DType> kTypes = {
      {"pred", ir::DType::kBool},     {"s8", ir::DType::kInt8},
      {"s16", ir::DType::kInt16},     {"s32", ir::DType::kInt32},
      {"s64", ir::DType::kInt64},     {"u8", ir::DType::kUInt8},
      {"f16", ir::DType::kFloat16},   {"bf16", ir::DType::kBFloat16},
      {"f32", ir::DType::kFloat32},   {"f64", ir::DType::kFloat64},
      {"c64", ir::DType::kComplex64}, {"c128", ir::DType::kComplex128},
  };
  auto it = kTypes.find(t);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

class Parser {
 public:
  Parser(std::vector<Tok> toks, const std::string& file) : toks_(std::move(toks)), file_(file) {}

  [[noreturn]] void Fail(const Tok& at, const std::string& problem) const {
    throw InputError(file_, at.line, problem);
  }
  const Tok& Peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Tok& Next() {
    const Tok& t = Peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  bool IsPunct(const Tok& t, const char* p) const { return t.kind == Tok::kPunct && t.text == p; }
  void Expect(const char* p, const std::string& what) {
    if (!IsPunct(Peek(), p)) {
      Fail(Peek(), std::string("expected '") + p + "' " + what + ", found " + Describe(Peek()));
    }
    Next();
  }
  static std::string Describe(const Tok& t) {
    return t.kind == Tok::kEnd ? std::string("the end of the file") : "'" + t.text + "'";
  }
  // Skips a balanced group starting at an opening bracket; returns its tokens (brackets included).
  std::vector<Tok> Balanced() {
    std::vector<Tok> out;
    int depth = 0;
    do {
      const Tok& t = Peek();
      if (t.kind == Tok::kEnd) Fail(t, "unbalanced brackets: the file ends inside a group");
      if (t.kind == Tok::kPunct && (t.text == "(" || t.text == "{" || t.text == "[")) ++depth;
      if (t.kind == Tok::kPunct && (t.text == ")" || t.text == "}" || t.text == "]")) --depth;
      out.push_back(Next());
    } while (depth > 0);
    return out;
  }

  HloShape Shape(int depth = 0) {
    HloShape s;
    if (IsPunct(Peek(), "(")) {
      if (depth > 16) Fail(Peek(), "tuple shapes nested too deeply");
      Next();
      s.tuple = true;
      while (!IsPunct(Peek(), ")")) {
        s.elems.push_back(Shape(depth + 1));
        if (IsPunct(Peek(), ",")) {
          Next();
        } else if (!IsPunct(Peek(), ")")) {
          Fail(Peek(), "expected ',' or ')' in a tuple shape, found " + Describe(Peek()));
        }
      }
      Next();
      return s;
    }
    const Tok& t = Next();
    if (t.kind != Tok::kIdent) Fail(t, "expected a shape (f32[8,16]), found " + Describe(t));
    std::optional<ir::DType> dtype = HloDType(t.text);
    if (t.text == "u16" || t.text == "u32" || t.text == "u64") {
      // No unsigned dtype past u8: typed as a signed one that holds the values (u64 beyond 2^63
      // excepted), and every instruction reading or giving one is opaque (wrap-around
      // arithmetic is not ATen's), so the type only ever describes opaque values.
      s.is_unsigned = true;
      dtype = t.text == "u16" ? ir::DType::kInt32 : ir::DType::kInt64;
    }
    if (!dtype) s.unsupported = t.text;
    if (dtype) s.type.dtype = *dtype;
    Expect("[", "after the element type " + t.text);
    int64_t elements = 1;
    while (!IsPunct(Peek(), "]")) {
      const Tok& d = Next();
      if (d.kind != Tok::kNum || d.text.find_first_not_of("0123456789") != std::string::npos ||
          d.text.size() > 15) {
        Fail(d, "expected a static dimension size in the shape, found " + Describe(d) +
                    " (dynamic shapes such as <=8 or ? are not supported)");
      }
      const int64_t size = std::stoll(d.text);
      if (size > 0 && elements > (int64_t{1} << 48) / size) {
        Fail(d, "the shape has more than 2^48 elements");
      }
      elements *= std::max<int64_t>(size, 1);
      s.type.shape.push_back(size);
      if (IsPunct(Peek(), ",")) Next();
    }
    Next();
    if (IsPunct(Peek(), "{") && !Peek().spaced) Balanced();  // the layout: ignored
    return s;
  }

  // The tokens of an attribute value: up to a ',' at depth 0, or the end of the line.
  std::vector<Tok> AttrValue() {
    std::vector<Tok> out;
    int depth = 0;
    const int line = Peek().line;
    while (true) {
      const Tok& t = Peek();
      if (t.kind == Tok::kEnd) break;
      if (depth == 0 && (t.line != line || IsPunct(t, ",") || IsPunct(t, ")") || IsPunct(t, "}") ||
                         IsPunct(t, "]"))) {
        break;
      }
      if (t.kind == Tok::kPunct && (t.text == "(" || t.text == "{" || t.text == "[")) ++depth;
      if (t.kind == Tok::kPunct && (t.text == ")" || t.text == "}" || t.text == "]")) --depth;
      out.push_back(Next());
    }
    if (out.empty()) Fail(Peek(), "expected an attribute value after '='");
    return out;
  }

  std::map<std::string, Attr> Attrs() {
    std::map<std::string, Attr> attrs;
    while (IsPunct(Peek(), ",")) {
      Next();
      const Tok& key = Next();
      if (key.kind != Tok::kIdent) Fail(key, "expected an attribute name, found " + Describe(key));
      Expect("=", "after the attribute name '" + key.text + "'");
      Attr a;
      a.line = key.line;
      a.value = AttrValue();
      attrs[key.text] = std::move(a);
    }
    return attrs;
  }

  Instr Instruction() {
    Instr in;
    if (Peek().kind == Tok::kIdent && Peek().text == "ROOT") {
      in.root = true;
      Next();
    }
    const Tok& name = Next();
    in.line = name.line;
    if (name.kind != Tok::kIdent) {
      Fail(name, "expected an instruction `%name = type opcode(...)`, found " + Describe(name));
    }
    in.hlo_name = StripPercent(name.text);
    Expect("=", "after the instruction name '" + name.text + "'");
    in.shape = Shape();
    const Tok& op = Next();
    if (op.kind != Tok::kIdent) Fail(op, "expected an opcode, found " + Describe(op));
    in.opcode = op.text;
    Expect("(", "after the opcode '" + op.text + "'");
    std::vector<Tok> current;
    int depth = 0;
    while (true) {
      const Tok& t = Peek();
      if (t.kind == Tok::kEnd) Fail(t, "the file ends inside the operands of '" + name.text + "'");
      if (depth == 0 && IsPunct(t, ")")) break;
      if (depth == 0 && IsPunct(t, ",")) {
        if (current.empty()) Fail(t, "empty operand in '" + name.text + "'");
        in.operands.push_back(std::move(current));
        current.clear();
        Next();
        continue;
      }
      if (t.kind == Tok::kPunct && (t.text == "(" || t.text == "{" || t.text == "[")) ++depth;
      if (t.kind == Tok::kPunct && (t.text == ")" || t.text == "}" || t.text == "]")) --depth;
      current.push_back(Next());
    }
    Next();
    if (!current.empty()) in.operands.push_back(std::move(current));
    in.attrs = Attrs();
    return in;
  }

  void Module() {
    const Tok& head = Next();
    if (head.kind != Tok::kIdent || head.text != "HloModule") {
      Fail(head,
           "expected 'HloModule <name>' at the start of an HLO module, found " + Describe(head));
    }
    const Tok& name = Next();
    if (name.kind != Tok::kIdent) Fail(name, "expected the module name after HloModule");
    module_name = name.text;
    header = Attrs();
    while (Peek().kind != Tok::kEnd) {
      // Stack-frame tables (before or after the computations): what stack_frame_id= means.
      if (Peek().kind == Tok::kIdent &&
          (Peek().text == "FileNames" || Peek().text == "FunctionNames" ||
           Peek().text == "FileLocations" || Peek().text == "StackFrames")) {
        StackTable();
        continue;
      }
      Computation c;
      if (Peek().kind == Tok::kIdent && Peek().text == "ENTRY") {
        c.entry = true;
        Next();
      }
      const Tok& cname = Next();
      c.line = cname.line;
      if (cname.kind != Tok::kIdent) {
        Fail(cname, "expected a computation `%name (params) -> type {`, found " + Describe(cname));
      }
      c.name = StripPercent(cname.text);
      if (IsPunct(Peek(), "(")) {
        Balanced();  // the signature; the parameter instructions give the types
        Expect("->", "after the parameters of computation '" + cname.text + "'");
        Shape();
      }
      Expect("{", "to open computation '" + cname.text + "'");
      while (!IsPunct(Peek(), "}")) {
        if (Peek().kind == Tok::kEnd)
          Fail(Peek(), "computation '" + cname.text + "' is not closed");
        c.instrs.push_back(Instruction());
      }
      Next();
      if (c.instrs.empty()) Fail(cname, "computation '" + cname.text + "' has no instructions");
      computations.push_back(std::move(c));
    }
  }

  // One table: lines `ID "text"` (FileNames, FunctionNames) or `ID {key=value ...}`.
  void StackTable() {
    const std::string table = Next().text;
    while (Peek().kind == Tok::kNum) {
      const Tok& id_tok = Next();
      if (id_tok.text.find_first_not_of("0123456789") != std::string::npos ||
          id_tok.text.size() > 9) {
        Fail(id_tok, "expected a table row number in " + table + ", found " + Describe(id_tok));
      }
      const int64_t id = std::stoll(id_tok.text);
      if (table == "FileNames" || table == "FunctionNames") {
        const Tok& name = Next();
        if (name.kind != Tok::kStr) {
          Fail(name, "expected a quoted name in " + table + ", found " + Describe(name));
        }
        if (table == "FileNames") file_names[id] = name.text;
        continue;
      }
      if (!IsPunct(Peek(), "{")) Fail(Peek(), "expected '{' after row " + id_tok.text);
      const std::vector<Tok> row = Balanced();
      std::map<std::string, int64_t> fields;
      for (size_t k = 0; k + 2 < row.size(); ++k) {
        const std::string& value = row[k + 2].text;
        if (row[k].kind == Tok::kIdent && IsPunct(row[k + 1], "=") &&
            row[k + 2].kind == Tok::kNum && value.size() <= 15 &&
            value.find_first_not_of("0123456789") == std::string::npos) {
          fields[row[k].text] = std::stoll(value);
        }
      }
      if (table == "FileLocations") {
        file_locations[id] = {fields["file_name_id"], fields["line"]};
      } else {
        frame_locations[id] = fields["file_location_id"];
      }
    }
  }

  std::string module_name;
  std::map<std::string, Attr> header;
  std::vector<Computation> computations;
  // The stack-frame tables: a frame's location, a location's file and line, a file's name.
  std::map<int64_t, int64_t> frame_locations;
  std::map<int64_t, std::pair<int64_t, int64_t>> file_locations;
  std::map<int64_t, std::string> file_names;

 private:
  std::vector<Tok> toks_;
  size_t pos_ = 0;
  const std::string& file_;
};

// ---- attribute values --------------------------------------------------------------------------

std::string TokText(const std::vector<Tok>& toks) {
  std::string s;
  for (const Tok& t : toks) {
    if (!s.empty() && t.kind != Tok::kPunct && s.back() != '{' && s.back() != '[' &&
        s.back() != '(' && s.back() != '=') {
      s += ' ';
    }
    s += t.kind == Tok::kStr ? "\"" + t.text + "\"" : t.text;
  }
  return s;
}

int64_t ToInt(const Tok& t, const std::string& file, const std::string& what) {
  const size_t digits = !t.text.empty() && t.text[0] == '-' ? 1 : 0;
  if (t.kind != Tok::kNum || t.text.size() <= digits || t.text.size() > 15 ||
      t.text.find_first_not_of("0123456789", digits) != std::string::npos) {
    throw InputError(file, t.line, "expected an integer in " + what + ", found '" + t.text + "'");
  }
  return std::stoll(t.text);
}

// A nested list of integers ({1,0}, {{0,1},{2,3}}, [2,4]): the integers of each innermost group.
struct IntTree {
  std::vector<int64_t> ints;
  std::vector<IntTree> groups;
};

IntTree ParseIntTree(const std::vector<Tok>& toks, size_t& i, const std::string& file,
                     const std::string& what, int depth = 0) {
  IntTree tree;
  if (depth > 8) {
    throw InputError(file, toks[std::min(i, toks.size() - 1)].line,
                     "lists nested too deeply in " + what);
  }
  if (i >= toks.size() || !(toks[i].text == "{" || toks[i].text == "[")) {
    throw InputError(file, toks.empty() ? 0 : toks[std::min(i, toks.size() - 1)].line,
                     "expected '{' in " + what);
  }
  const std::string close = toks[i].text == "{" ? "}" : "]";
  ++i;
  while (i < toks.size() && toks[i].text != close) {
    if (toks[i].text == "{" || toks[i].text == "[") {
      tree.groups.push_back(ParseIntTree(toks, i, file, what, depth + 1));
    } else if (toks[i].text != ",") {
      tree.ints.push_back(ToInt(toks[i], file, what));
      ++i;
    } else {
      ++i;
    }
  }
  if (i >= toks.size()) {
    throw InputError(file, toks.back().line, "unclosed list in " + what);
  }
  ++i;
  return tree;
}

// ---- building the graph ------------------------------------------------------------------------

// What an HLO value is in the graph: one tensor, or a tuple of values.
struct HVal {
  std::optional<ir::TensorRef> ref;
  std::vector<HVal> elems;
  bool tuple = false;
  std::optional<double> scalar;  // a scalar constant, or a broadcast of one
  // An integer (or pred) value known when the module is read (row-major): constants,
  // partition-id (the rank) and arithmetic on them, which is how SPMD code picks a device's
  // slice; dynamic-slice offsets read it.
  std::optional<std::vector<int64_t>> ints;
  bool is_unsigned = false;      // holds u16-u64 values (typed as signed ones)
  // A broadcast whose operand dims are the result's trailing dims in order (numpy's rule): its
  // operand, which an ATen elementwise operator broadcasts alike.
  std::optional<ir::TensorRef> broadcast_of;
  // An asynchronous collective started (all-reduce-start, all-gather-start): the
  // _c10d_functional collective's result, which the matching *-done waits for.
  std::optional<ir::TensorRef> started;
};

enum class Reducer { kNone, kAdd, kMax, kMin, kAnd, kOr };

class Builder {
 public:
  Builder(const Parser& p, const std::string& file, const HloOptions& options)
      : p_(p), file_(file), rank_(options.rank) {
    world_ = options.world;
    if (world_ <= 0) {
      int64_t partitions = HeaderInt("num_partitions"), replicas = HeaderInt("replica_count");
      if (partitions < 1 || replicas < 1 || partitions > 4096 || replicas > 4096) {
        throw InputError(file_, 1, "num_partitions and replica_count must be 1..4096");
      }
      if (partitions * replicas > 1) world_ = static_cast<int32_t>(partitions * replicas);
    }
    if (world_ <= 0) {
      int64_t largest = -1;
      for (const Computation& c : p_.computations) {
        for (const Instr& in : c.instrs) {
          auto it = in.attrs.find("replica_groups");
          if (it == in.attrs.end()) continue;
          for (const auto& members : ReplicaGroups(it->second, 1 << 20)) {
            for (int32_t m : members) largest = std::max<int64_t>(largest, m);
          }
        }
      }
      world_ = static_cast<int32_t>(largest + 1);
    }
    if (world_ <= 0) world_ = 1;
    if (world_ > 4096) throw InputError(file_, 0, "more than 4096 ranks are not supported");
    if (rank_ < 0 || rank_ >= world_) {
      throw InputError(file_, 0,
                       "rank " + std::to_string(rank_) + " is outside the module's " +
                           std::to_string(world_) + " ranks");
    }
  }

  HloModule Build() {
    const Computation* entry = nullptr;
    for (const Computation& c : p_.computations) {
      if (c.entry) {
        if (entry) {
          throw InputError(
              file_, c.line,
              "a second ENTRY computation (the first is '" + entry->name + "'); a module has one");
        }
        entry = &c;
      }
      computations_[c.name] = &c;
    }
    if (!entry && !p_.computations.empty()) entry = &p_.computations.back();
    if (!entry) throw InputError(file_, 1, "the module has no computation; add an ENTRY one");
    graph_.name = p_.module_name;
    graph_.file = file_;
    graph_.rank = rank_;
    std::vector<std::pair<int64_t, ir::NodeId>> params;
    const Instr* root = nullptr;
    for (const Instr& in : entry->instrs) {
      if (in.root) root = &in;
      if (values_.count(in.hlo_name)) {
        throw InputError(file_, in.line, "'" + in.hlo_name + "' is defined twice");
      }
      if (in.opcode == "parameter") {
        if (in.operands.size() != 1 || in.operands[0].size() != 1) {
          throw InputError(file_, in.line, "parameter takes its number: parameter(0)");
        }
        int64_t number = ToInt(in.operands[0][0], file_, "parameter");
        for (const auto& [n, id] : params) {
          if (n == number) {
            throw InputError(file_, in.line,
                             "parameter(" + std::to_string(number) + ") is given twice");
          }
        }
        ir::Node node;
        node.kind = ir::NodeKind::kInput;
        node.name = UniqueName(in.hlo_name);
        node.def_line = in.line;
        node.source = Source(in);
        // jax names a parameter by its argument path (op_name="x", "params['w1']"): the input's
        // FQN, which specs name inputs by when S and D number their parameters differently.
        node.fqn = MetadataOpName(in);
        node.outputs.push_back({node.name, TensorTypeOf(in)});
        ir::NodeId id = graph_.AddNode(std::move(node));
        params.emplace_back(number, id);
        HVal v;
        v.ref = ir::TensorRef{id, 0};
        v.is_unsigned = HasUnsigned(in.shape);
        values_[in.hlo_name] = v;
        continue;
      }
      values_[in.hlo_name] = Lower(in);
    }
    if (!root) root = &entry->instrs.back();
    std::sort(params.begin(), params.end());
    graph_.inputs.clear();  // AddNode listed them in file order; the signature is by number
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].first != static_cast<int64_t>(i)) {
        throw InputError(file_, graph_.node(params[i].second).def_line,
                         "parameters must be numbered 0.." + std::to_string(params.size() - 1) +
                             " without gaps");
      }
      graph_.inputs.push_back(params[i].second);
    }
    for (ir::NodeId id : elided_constants_) graph_.inputs.push_back(id);
    const HVal& out = values_.at(root->hlo_name);
    std::vector<ir::TensorRef> refs;
    Flatten(out, *root, &refs);
    for (ir::TensorRef r : refs) graph_.outputs.push_back(ir::Value(r));
    graph_.return_line = root->line;
    HloModule m;
    m.graph = std::move(graph_);
    m.groups = std::move(groups_);
    m.world = world_;
    return m;
  }

 private:
  [[noreturn]] void Fail(const Instr& in, const std::string& problem) const {
    throw InputError(file_, in.line, "'" + in.hlo_name + "' (" + in.opcode + "): " + problem);
  }

  int64_t HeaderInt(const std::string& key) const {
    auto it = p_.header.find(key);
    if (it == p_.header.end() || it->second.value.size() != 1) return 1;
    return ToInt(it->second.value[0], file_, key);
  }

  ir::SourceLocation Source(const Instr& in) const {
    ir::SourceLocation loc;
    auto it = in.attrs.find("metadata");
    if (it == in.attrs.end()) return loc;
    const std::vector<Tok>& t = it->second.value;
    std::optional<int64_t> frame;
    for (size_t i = 0; i + 2 < t.size(); ++i) {
      if (t[i].kind != Tok::kIdent || t[i + 1].text != "=") continue;
      const Tok& v = t[i + 2];
      if (t[i].text == "source_file" && v.kind == Tok::kStr) loc.file = v.text;
      if (t[i].text == "source_line" && v.kind == Tok::kNum) {
        loc.line = static_cast<int32_t>(ToInt(v, file_, "source_line"));
      }
      if (t[i].text == "op_name" && v.kind == Tok::kStr) loc.code = v.text;
      if (t[i].text == "stack_frame_id" && v.kind == Tok::kNum) {
        frame = ToInt(v, file_, "stack_frame_id");
      }
    }
    // Newer XLA: the innermost frame's location (the user's line) from the module's tables.
    if (loc.file.empty() && frame) {
      auto f = p_.frame_locations.find(*frame);
      auto l = f == p_.frame_locations.end() ? p_.file_locations.end()
                                             : p_.file_locations.find(f->second);
      auto n =
          l == p_.file_locations.end() ? p_.file_names.end() : p_.file_names.find(l->second.first);
      if (n != p_.file_names.end()) {
        loc.file = n->second;
        loc.line = static_cast<int32_t>(l->second.second);
      }
    }
    if (loc.file.empty()) loc = {};
    return loc;
  }

  // The op_name of the instruction's metadata, or "".
  std::string MetadataOpName(const Instr& in) const {
    auto it = in.attrs.find("metadata");
    if (it == in.attrs.end()) return "";
    const std::vector<Tok>& t = it->second.value;
    for (size_t i = 0; i + 2 < t.size(); ++i) {
      if (t[i].text == "op_name" && t[i + 1].text == "=" && t[i + 2].kind == Tok::kStr) {
        return t[i + 2].text;
      }
    }
    return "";
  }

  // A node name the spec language can write: [A-Za-z_][A-Za-z0-9_]*, unique in the graph.
  std::string UniqueName(const std::string& hlo_name) {
    std::string s;
    for (char c : hlo_name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
    std::string name = s;
    for (int k = 1; used_names_.count(name); ++k) name = s + "_" + std::to_string(k);
    used_names_.insert(name);
    return name;
  }

  ir::TensorType TensorTypeOf(const Instr& in) const {
    if (in.shape.tuple) Fail(in, "a tuple here is not supported; use one tensor per parameter");
    if (!in.shape.unsupported.empty()) {
      Fail(in, "element type '" + in.shape.unsupported +
                   "' is not supported (use pred, s8-s64, u8, f16, bf16, f32, f64, c64, c128)");
    }
    return in.shape.type;
  }

  void Flatten(const HVal& v, const Instr& in, std::vector<ir::TensorRef>* out) const {
    if (v.tuple) {
      for (const HVal& e : v.elems) Flatten(e, in, out);
    } else if (v.ref) {
      out->push_back(*v.ref);
    } else {
      Fail(in, "reads a value that is not a tensor");
    }
  }

  // Operand i: a name (the last token; a type before it is the long form, ignored).
  const HVal& Operand(const Instr& in, size_t i) const {
    if (i >= in.operands.size()) {
      Fail(in, "expects at least " + std::to_string(i + 1) + " operand(s), has " +
                   std::to_string(in.operands.size()));
    }
    const Tok& name = in.operands[i].back();
    if (name.kind != Tok::kIdent) {
      Fail(in, "operand " + std::to_string(i) + " is not a value name ('" + name.text + "')");
    }
    auto it = values_.find(StripPercent(name.text));
    if (it == values_.end()) {
      Fail(in, "operand '" + name.text +
                   "' is not defined before this instruction (define values before their use)");
    }
    return it->second;
  }
  ir::TensorRef OperandRef(const Instr& in, size_t i) const {
    const HVal& v = Operand(in, i);
    if (!v.ref) Fail(in, "operand " + std::to_string(i) + " is a tuple, expected a tensor");
    return *v.ref;
  }
  const ir::TensorType& OperandType(const Instr& in, size_t i) const {
    return graph_.type(OperandRef(in, i));
  }

  const Attr* FindAttr(const Instr& in, const std::string& key) const {
    auto it = in.attrs.find(key);
    return it == in.attrs.end() ? nullptr : &it->second;
  }
  std::vector<int64_t> IntList(const Instr& in, const std::string& key, bool required) const {
    const Attr* a = FindAttr(in, key);
    if (!a) {
      if (required) Fail(in, "needs the attribute " + key + "={...}");
      return {};
    }
    size_t i = 0;
    IntTree t = ParseIntTree(a->value, i, file_, key);
    if (!t.groups.empty() || i != a->value.size()) {
      throw InputError(file_, a->line, key + " must be a flat list of integers: " + key + "={0,1}");
    }
    return t.ints;
  }
  std::string Word(const Instr& in, const std::string& key) const {
    const Attr* a = FindAttr(in, key);
    if (!a || a->value.size() != 1) return "";
    return a->value[0].text;
  }

  // The reducer a to_apply= computation is: ROOT op(p0, p1) of its two parameters.
  Reducer ReducerOf(const Instr& in) const {
    const Attr* a = FindAttr(in, "to_apply");
    if (!a || a->value.size() != 1) Fail(in, "needs to_apply=%computation");
    auto it = computations_.find(StripPercent(a->value[0].text));
    if (it == computations_.end()) {
      throw InputError(
          file_, a->line,
          "to_apply names computation '" + a->value[0].text + "', which is not defined");
    }
    const Computation& c = *it->second;
    const Instr* root = &c.instrs.back();
    std::map<std::string, int64_t> params;
    for (const Instr& i : c.instrs) {
      if (i.root) root = &i;
      if (i.opcode == "parameter" && i.operands.size() == 1 && i.operands[0].size() == 1) {
        params[i.hlo_name] = ToInt(i.operands[0][0], file_, "parameter");
      }
    }
    if (params.size() != 2 || root->operands.size() != 2) return Reducer::kNone;
    std::set<int64_t> read;
    for (const auto& operand : root->operands) {
      auto p = params.find(StripPercent(operand.back().text));
      if (p == params.end()) return Reducer::kNone;
      read.insert(p->second);
    }
    if (read != std::set<int64_t>{0, 1}) return Reducer::kNone;
    const std::string& op = root->opcode;
    if (op == "add") return Reducer::kAdd;
    if (op == "maximum") return Reducer::kMax;
    if (op == "minimum") return Reducer::kMin;
    if (op == "and") return Reducer::kAnd;
    if (op == "or") return Reducer::kOr;
    return Reducer::kNone;
  }

  // replica_groups: {{0,1},{2,3}}, {} (every rank), [G,S]<=[dims...] or [G,S]<=[dims...]T(perm).
  std::vector<std::vector<int32_t>> ReplicaGroups(const Attr& a, int32_t world) const {
    const std::vector<Tok>& t = a.value;
    std::vector<std::vector<int32_t>> groups;
    auto check = [&](int64_t m) {
      if (m < 0 || m >= world) {
        throw InputError(file_, a.line,
                         "replica_groups names rank " + std::to_string(m) + " but the module has " +
                             std::to_string(world) + " ranks (num_partitions x replica_count)");
      }
      return static_cast<int32_t>(m);
    };
    size_t i = 0;
    if (!t.empty() && t[0].kind == Tok::kIdent && t[0].text == "mesh") return MeshGroups(a, check);
    if (!t.empty() && t[0].text == "{") {
      IntTree tree = ParseIntTree(t, i, file_, "replica_groups");
      if (i != t.size() || !tree.ints.empty()) {
        throw InputError(file_, a.line, "replica_groups must be a list of groups: {{0,1},{2,3}}");
      }
      for (const IntTree& g : tree.groups) {
        if (!g.groups.empty() || g.ints.empty()) {
          throw InputError(file_, a.line, "each replica group is a list of ranks: {0,1}");
        }
        std::vector<int32_t> members;
        for (int64_t m : g.ints) members.push_back(check(m));
        groups.push_back(std::move(members));
      }
      return groups;
    }
    // The iota form.
    IntTree shape = ParseIntTree(t, i, file_, "replica_groups");
    if (shape.ints.size() != 2 || i + 2 >= t.size() || t[i].text != "<" || t[i + 1].text != "=") {
      throw InputError(file_, a.line,
                       "replica_groups must be {{0,1},...} or the iota form [groups,size]<=[n]");
    }
    i += 2;
    IntTree dims = ParseIntTree(t, i, file_, "replica_groups");
    std::vector<int64_t> perm;
    if (i < t.size()) {
      if (t[i].text != "T" || i + 1 >= t.size() || t[i + 1].text != "(") {
        throw InputError(file_, a.line, "expected T(perm) after the iota dims of replica_groups");
      }
      ++i;
      std::vector<Tok> inner;
      for (const Tok& tok : t) inner.push_back(tok);
      inner[i].text = "[";
      size_t close = i;
      while (close < inner.size() && inner[close].text != ")") ++close;
      if (close >= inner.size() || close + 1 != inner.size()) {
        throw InputError(file_, a.line, "expected T(perm) to end replica_groups");
      }
      inner[close].text = "]";
      perm = ParseIntTree(inner, i, file_, "replica_groups").ints;
    }
    int64_t total = 1;
    for (int64_t d : dims.ints) {
      if (d <= 0 || d > 4096)
        throw InputError(file_, a.line, "bad iota dimension in replica_groups");
      total *= d;
      if (total > 4096) throw InputError(file_, a.line, "replica_groups names over 4096 ranks");
    }
    const int64_t n_groups = shape.ints[0], size = shape.ints[1];
    if (n_groups <= 0 || size <= 0 || n_groups > total || size > total ||
        n_groups * size != total) {
      throw InputError(file_, a.line,
                       "replica_groups [" + std::to_string(n_groups) + "," + std::to_string(size) +
                           "] does not hold the " + std::to_string(total) + " iota ranks");
    }
    if (perm.empty()) {
      perm.resize(dims.ints.size());
      std::iota(perm.begin(), perm.end(), 0);
    }
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t k = 0; k < sorted.size(); ++k) {
      if (sorted[k] != static_cast<int64_t>(k) || perm.size() != dims.ints.size()) {
        throw InputError(file_, a.line, "T(...) of replica_groups must permute the iota dims");
      }
    }
    // Element k of the transposed iota: its index in the transposed shape, mapped back.
    const size_t r = dims.ints.size();
    std::vector<int64_t> tdims(r), strides(r, 1);
    for (size_t k = 0; k < r; ++k) tdims[k] = dims.ints[perm[k]];
    for (size_t k = r; k-- > 1;) strides[k - 1] = strides[k] * dims.ints[k];
    std::vector<int32_t> flat;
    for (int64_t k = 0; k < total; ++k) {
      int64_t rest = k, value = 0;
      for (size_t d = r; d-- > 0;) {
        int64_t idx = rest % tdims[d];
        rest /= tdims[d];
        value += idx * strides[perm[d]];
      }
      flat.push_back(check(value));
    }
    for (int64_t g = 0; g < n_groups; ++g) {
      groups.emplace_back(flat.begin() + g * size, flat.begin() + (g + 1) * size);
    }
    return groups;
  }

  // The mesh form mesh['a'=2,'b'=4] {'b'}: devices numbered row-major over the mesh axes; a group
  // per value of the axes not named, its members along the named axes (row-major in the order
  // named).
  template <typename Check>
  std::vector<std::vector<int32_t>> MeshGroups(const Attr& a, const Check& check) const {
    const std::vector<Tok>& t = a.value;
    auto bad = [&](const std::string& problem) {
      throw InputError(file_, a.line,
                       "replica_groups mesh form: " + problem +
                           " (read: mesh['axis'=size,...] {'axis',...}; sub-axes and device "
                           "lists are not supported: dump the module with list replica_groups)");
    };
    std::vector<std::string> axes;
    std::vector<int64_t> sizes;
    size_t i = 1;
    if (i >= t.size() || t[i].text != "[") bad("expected '[' after mesh");
    ++i;
    while (i < t.size() && t[i].text != "]") {
      if (t[i].text == ",") {
        ++i;
        continue;
      }
      if (t[i].kind != Tok::kStr || i + 2 >= t.size() || t[i + 1].text != "=") {
        bad("expected 'axis'=size");
      }
      const int64_t size = ToInt(t[i + 2], file_, "replica_groups");
      if (size < 1 || size > 4096) bad("an axis size must be 1..4096");
      axes.push_back(t[i].text);
      sizes.push_back(size);
      i += 3;
    }
    if (i >= t.size() || axes.empty()) bad("expected the mesh axes, closed by ']'");
    ++i;
    if (i >= t.size() || t[i].text != "{") bad("expected {'axis',...} after the mesh");
    std::vector<size_t> named;
    for (++i; i < t.size() && t[i].text != "}"; ++i) {
      if (t[i].text == ",") continue;
      auto it = std::find(axes.begin(), axes.end(), t[i].text);
      if (t[i].kind != Tok::kStr || it == axes.end()) bad("'" + t[i].text + "' is not a mesh axis");
      const size_t axis = static_cast<size_t>(it - axes.begin());
      if (std::count(named.begin(), named.end(), axis)) bad("an axis is named twice");
      named.push_back(axis);
    }
    if (i + 1 != t.size()) bad("expected the named axes to end replica_groups");
    int64_t total = 1;
    for (int64_t size : sizes) {
      total *= size;
      if (total > 4096) bad("the mesh has over 4096 devices");
    }
    std::vector<int64_t> strides(sizes.size(), 1);
    for (size_t k = sizes.size(); k-- > 1;) strides[k - 1] = strides[k] * sizes[k];
    std::vector<size_t> others;
    for (size_t k = 0; k < axes.size(); ++k) {
      if (!std::count(named.begin(), named.end(), k)) others.push_back(k);
    }
    // Enumerates the coordinates of `dims` row-major: the sum of coordinate x stride of each.
    auto offsets = [&](const std::vector<size_t>& dims) {
      std::vector<int64_t> out{0};
      for (size_t d : dims) {
        std::vector<int64_t> next;
        for (int64_t base : out) {
          for (int64_t c = 0; c < sizes[d]; ++c) next.push_back(base + c * strides[d]);
        }
        out = std::move(next);
      }
      return out;
    };
    std::vector<std::vector<int32_t>> groups;
    for (int64_t base : offsets(others)) {
      std::vector<int32_t> members;
      for (int64_t offset : offsets(named)) members.push_back(check(base + offset));
      groups.push_back(std::move(members));
    }
    return groups;
  }

  // The process group of this rank in the collective's replica_groups; `ascending` says whether
  // the group lists its members in rank order (a member's position in the group is its place
  // in an all-gather's result and the slice a reduce-scatter leaves it).
  std::string GroupOf(const Instr& in, bool* ascending) {
    std::vector<std::vector<int32_t>> groups;
    if (const Attr* a = FindAttr(in, "replica_groups")) groups = ReplicaGroups(*a, world_);
    if (groups.empty()) {  // {}: one group of every rank
      groups.emplace_back(world_);
      std::iota(groups[0].begin(), groups[0].end(), 0);
    }
    std::set<int32_t> seen;
    const std::vector<int32_t>* mine = nullptr;
    for (const auto& g : groups) {
      for (int32_t m : g) {
        if (!seen.insert(m).second) {
          Fail(in, "rank " + std::to_string(m) + " is in two replica groups");
        }
        if (m == rank_) mine = &g;
      }
    }
    if (!mine) {
      Fail(in, "rank " + std::to_string(rank_) + " is in none of the replica_groups");
    }
    std::vector<int32_t> members = *mine;
    *ascending = std::is_sorted(members.begin(), members.end());
    std::sort(members.begin(), members.end());
    std::string name = "hlo_ranks";
    for (int32_t m : members) name += "_" + std::to_string(m);
    groups_[name] = members;
    return name;
  }

  // Adds an operator node; its type is inferred and checked against `expected` when given.
  ir::TensorRef Emit(const Instr& in, const std::string& name, const std::string& op,
                     std::vector<ir::Value> args, std::vector<ir::NamedArg> kwargs,
                     const std::optional<ir::TensorType>& expected) {
    ir::Node node;
    node.kind = ir::NodeKind::kOperator;
    node.name = UniqueName(name);
    node.op = *ir::OpName::Parse(op);
    node.args = std::move(args);
    node.kwargs = std::move(kwargs);
    node.def_line = in.line;
    node.source = Source(in);
    auto inferred = InferNodeTypes(graph_, node, groups_, world_, file_, in.line);
    std::optional<ir::TensorType> type = expected;
    if (inferred) {
      if (inferred->size() != 1 || !(*inferred)[0]) {
        Fail(in, DescribeNode(node) + " does not give one tensor");
      }
      if (expected && *(*inferred)[0] != *expected) {
        Fail(in, "the HLO shape says " + expected->ToString() + " but " + DescribeNode(node) +
                     " gives " + (*inferred)[0]->ToString() + "; fix the shape or the operands");
      }
      type = (*inferred)[0];
    }
    if (!type) Fail(in, "internal: no type for " + DescribeNode(node));
    node.outputs.push_back({node.name, type});
    return {graph_.AddNode(std::move(node)), 0};
  }

  HVal One(ir::TensorRef r) const {
    HVal v;
    v.ref = r;
    return v;
  }

  static bool IsCollectiveOpcode(const std::string& op) {
    static const std::set<std::string> kCollectives = {
        "all-reduce",        "all-gather",         "reduce-scatter",      "all-to-all",
        "ragged-all-to-all", "collective-permute", "collective-broadcast"};
    if (kCollectives.count(op)) return true;
    const size_t dash = op.rfind('-');
    return dash != std::string::npos && op.substr(dash) == "-start" &&
           kCollectives.count(op.substr(0, dash));
  }

  static std::string ShapeText(const HloShape& s) {
    if (s.tuple) {
      std::string out = "(";
      for (size_t k = 0; k < s.elems.size(); ++k) out += (k ? "," : "") + ShapeText(s.elems[k]);
      return out + ")";
    }
    std::string out = s.is_unsigned ? "unsigned:" : "";
    if (!s.unsupported.empty()) out += s.unsupported + ":";
    return out + s.type.ToString();
  }

  // An attribute's text, each computation it names (sort's comparator, scatter's combiner,
  // reduce-window's reducer, a while's body) replaced by that computation's text: an opaque
  // node's signature must say what it computes, so two sorts whose comparators are named alike
  // (jax's %region_0.5 in S and in D) but differ are not congruent.
  std::string AttrText(const std::vector<Tok>& toks, int depth) const {
    std::vector<Tok> named = toks;
    for (Tok& t : named) {
      if (t.kind == Tok::kIdent && computations_.count(StripPercent(t.text))) {
        t.text = ComputationText(StripPercent(t.text), depth);
      }
    }
    return TokText(named);
  }

  // A computation's instructions, names replaced by their positions (so the text does not
  // depend on how the printer named them). A text over 64 KiB (a while body holding a model) is
  // the computation's place in the file instead: equal only to itself, which is sound.
  std::string ComputationText(const std::string& name, int depth) const {
    if (auto cached = computation_texts_.find(name); cached != computation_texts_.end()) {
      return cached->second;
    }
    const Computation& c = *computations_.at(name);
    if (depth > 16) {
      throw InputError(file_, c.line,
                       "computation '" + name + "' calls computations more than 16 deep");
    }
    const Instr* root = &c.instrs.back();
    for (const Instr& i : c.instrs) {
      if (i.root) root = &i;
    }
    std::map<std::string, size_t> index;
    std::string s = "{";
    for (size_t k = 0; k < c.instrs.size() && s.size() <= (size_t{1} << 16); ++k) {
      const Instr& i = c.instrs[k];
      s += std::string(&i == root ? "ROOT #" : "#") + std::to_string(k) + "=" + ShapeText(i.shape) +
           " " + i.opcode + "(";
      for (size_t o = 0; o < i.operands.size(); ++o) {
        const Tok& last = i.operands[o].back();
        auto local = index.find(StripPercent(last.text));
        s += o ? "," : "";
        s += last.kind == Tok::kIdent && local != index.end() ? "#" + std::to_string(local->second)
                                                              : TokText(i.operands[o]);
      }
      s += ")";
      for (const auto& [key, attr] : i.attrs) {
        if (key == "metadata" || key == "sharding") continue;
        s += "," + key + "=" + AttrText(attr.value, depth + 1);
      }
      s += ";";
      index[i.hlo_name] = k;
    }
    s += "}";
    if (s.size() > (size_t{1} << 16)) s = "%" + name + "@" + file_ + ":" + std::to_string(c.line);
    computation_texts_[name] = s;
    return s;
  }

  // What the computations an instruction's attributes name (a while's body, a conditional's
  // branches, transitively) hold that its text does not say: kRankDependent (a collective,
  // partition-id, replica-id) and kRandom (rng*), so an opaque caller is tagged as they are.
  enum CalleeFlag : int { kRankDependent = 1, kRandom = 2 };
  int CalleeFlags(const Instr& in, int depth = 0) const {
    int flags = 0;
    for (const auto& [key, attr] : in.attrs) {
      if (key == "metadata" || key == "sharding") continue;
      for (const Tok& t : attr.value) {
        if (t.kind != Tok::kIdent) continue;
        const std::string name = StripPercent(t.text);
        auto c = computations_.find(name);
        if (c == computations_.end()) continue;
        auto cached = callee_flags_.find(name);
        if (cached != callee_flags_.end()) {
          flags |= cached->second;
          continue;
        }
        if (depth > 16) {
          throw InputError(file_, c->second->line,
                           "computation '" + name + "' calls computations more than 16 deep");
        }
        int own = 0;
        for (const Instr& i : c->second->instrs) {
          if (IsCollectiveOpcode(i.opcode) || i.opcode == "partition-id" ||
              i.opcode == "replica-id") {
            own |= kRankDependent;
          }
          if (i.opcode.rfind("rng", 0) == 0) own |= kRandom;
          own |= CalleeFlags(i, depth + 1);
        }
        callee_flags_[name] = own;
        flags |= own;
      }
    }
    return flags;
  }

  // An instruction GraphGuard gives no meaning: hlo::<opcode>, its operands and attributes as
  // arguments, typed from its shape.
  HVal Opaque(const Instr& in) {
    ir::Node node;
    node.kind = ir::NodeKind::kOperator;
    node.name = UniqueName(in.hlo_name);
    std::string op = in.opcode;
    std::replace(op.begin(), op.end(), '-', '_');
    node.op = ir::OpName{"hlo", op, ""};
    node.def_line = in.line;
    node.source = Source(in);
    for (size_t i = 0; i < in.operands.size(); ++i) {
      const Tok& last = in.operands[i].back();
      if (last.kind == Tok::kIdent && values_.count(StripPercent(last.text))) {
        std::vector<ir::TensorRef> refs;
        Flatten(Operand(in, i), in, &refs);
        for (ir::TensorRef r : refs) node.args.emplace_back(r);
      } else {
        node.args.emplace_back(TokText(in.operands[i]));  // a literal (constant, iota)
      }
    }
    for (const auto& [key, attr] : in.attrs) {
      if (key == "metadata" || key == "sharding") continue;  // annotations: values unchanged
      node.kwargs.push_back({key, ir::Value(AttrText(attr.value, 0))});
    }
    // Values that differ per rank or per draw must never be congruent across ranks or graphs.
    if (in.opcode == "partition-id" || in.opcode == "replica-id") {
      node.kwargs.push_back({"rank", ir::Value(static_cast<int64_t>(rank_))});
    }
    // A collective's result is a function of its group's operands, not of this rank's alone (a
    // collective-permute's is its source's; an all-to-all's differs per member): two ranks' (or
    // a one-device S's and a rank's) calls on equal operands may differ, so they are never
    // congruent across ranks or rank counts.
    // A while or conditional running collectives (or drawing) in its body is tagged alike.
    const int callees = CalleeFlags(in);
    if (IsCollectiveOpcode(in.opcode) || (callees & kRankDependent)) {
      node.kwargs.push_back({"rank", ir::Value(static_cast<int64_t>(rank_))});
      node.kwargs.push_back({"world", ir::Value(static_cast<int64_t>(world_))});
    }
    if (in.opcode.rfind("rng", 0) == 0 || (callees & kRandom)) {
      node.kwargs.push_back(
          {"draw", ir::Value(file_ + ":" + std::to_string(in.line) + "@" + std::to_string(rank_))});
    }
    std::vector<ir::TensorType> types;
    if (in.shape.tuple) {
      for (const HloShape& e : in.shape.elems) {
        if (e.tuple) Fail(in, "nested tuple results are not supported");
        if (!e.unsupported.empty()) Fail(in, "element type '" + e.unsupported + "' not supported");
        types.push_back(e.type);
      }
    } else {
      types.push_back(TensorTypeOf(in));
    }
    (void)InferNodeTypes(graph_, node, groups_, world_, file_, in.line);  // strict mode, inputs
    HVal v;
    v.tuple = in.shape.tuple;
    for (size_t i = 0; i < types.size(); ++i) {
      node.outputs.push_back({in.shape.tuple ? "" : node.name, types[i]});
    }
    ir::NodeId id = graph_.AddNode(std::move(node));
    if (!v.tuple) return One({id, 0});
    for (size_t i = 0; i < types.size(); ++i) v.elems.push_back(One({id, static_cast<int32_t>(i)}));
    return v;
  }

  std::optional<double> ScalarLiteral(const Instr& in) const {
    if (in.operands.size() != 1 || in.operands[0].size() != 1) return std::nullopt;
    const Tok& t = in.operands[0][0];
    const std::string& s = t.text;
    if (s == "true") return 1.0;
    if (s == "false") return 0.0;
    if (s == "inf" || s == "+inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (t.kind != Tok::kNum) return std::nullopt;
    try {
      size_t used = 0;
      double v = std::stod(s, &used);
      if (used != s.size()) return std::nullopt;
      return v;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  // Whether the constant's literal was printed elided, `constant({...})`: its values are not in
  // the module.
  static bool ElidedLiteral(const Instr& in) {
    if (in.operands.size() != 1) return false;
    for (const Tok& t : in.operands[0]) {
      if (t.kind == Tok::kIdent && t.text == "...") return true;
    }
    return false;
  }

  HVal Constant(const Instr& in) {
    const ir::TensorType type = TensorTypeOf(in);
    if (ElidedLiteral(in)) {
      // The module does not hold the values (XLA prints large literals as {...}): a graph input
      // named after the instruction, listed after the parameters, so the spec says how S's and
      // D's relate (`input constant_22 = replicate`: a premise), and never a value GraphGuard
      // would make up.
      ir::Node node;
      node.kind = ir::NodeKind::kInput;
      node.name = UniqueName(in.hlo_name);
      node.def_line = in.line;
      node.source = Source(in);
      node.outputs.push_back({node.name, type});
      const ir::NodeId id = graph_.AddNode(std::move(node));
      elided_constants_.push_back(id);
      return One({id, 0});
    }
    double number = 0.0;
    bool known = false;
    if (type.shape.empty()) {
      if (std::optional<double> lit = ScalarLiteral(in)) {
        number = *lit;
        known = true;
      }
    }
    const bool integral = !ir::IsFloatingPoint(type.dtype) && type.dtype != ir::DType::kBool;
    if (ir::IsComplex(type.dtype) || std::isnan(number) ||
        (integral && (std::fabs(number) > 9.0e15 || number != std::trunc(number)))) {
      known = false;
    }
    if (!known) {
      // An array constant (or NaN): a graph constant typed from its shape, its value not read.
      ir::Node node;
      node.kind = ir::NodeKind::kConstant;
      node.name = UniqueName(in.hlo_name);
      node.def_line = in.line;
      node.source = Source(in);
      node.outputs.push_back({node.name, type});
      return One({graph_.AddNode(std::move(node)), 0});
    }
    ir::Value value = ir::IsFloatingPoint(type.dtype)  ? ir::Value(number)
                      : type.dtype == ir::DType::kBool ? ir::Value(number != 0.0)
                                                       : ir::Value(static_cast<int64_t>(number));
    HVal out = One(Emit(in, in.hlo_name, "aten::scalar_tensor", {value},
                        {{"dtype", ir::Value(type.dtype)}}, type));
    out.scalar = number;
    return out;
  }

  HVal Elementwise(const Instr& in) {
    static const std::map<std::string, std::string> kUnary = {
        {"negate", "aten::neg"},
        {"abs", "aten::abs"},
        {"exponential", "aten::exp"},
        {"log", "aten::log"},
        {"rsqrt", "aten::rsqrt"},
        {"sqrt", "aten::sqrt"},
        {"tanh", "aten::tanh"},
        {"logistic", "aten::sigmoid"},
        {"not", "aten::bitwise_not"},
        {"copy", "aten::clone"},
        {"sine", "aten::sin"},
        {"cosine", "aten::cos"},
        {"log-plus-one", "aten::log1p"},
        {"exponential-minus-one", "aten::expm1"},
        {"sign", "aten::sign"},
        {"floor", "aten::floor"},
        {"ceil", "aten::ceil"},
        // round-nearest-afz (half away from zero) has no ATen operator: it stays opaque.
        {"round-nearest-even", "aten::round"},
    };
    static const std::map<std::string, std::string> kBinary = {
        {"add", "aten::add.Tensor"},          {"subtract", "aten::sub.Tensor"},
        {"multiply", "aten::mul.Tensor"},     {"divide", "aten::div.Tensor"},
        {"maximum", "aten::maximum"},         {"minimum", "aten::minimum"},
        {"power", "aten::pow.Tensor_Tensor"}, {"and", "aten::bitwise_and.Tensor"},
        {"or", "aten::bitwise_or.Tensor"},
    };
    const ir::TensorType out = TensorTypeOf(in);
    const bool floating = ir::IsFloatingPoint(out.dtype);
    if (auto u = kUnary.find(in.opcode); u != kUnary.end()) {
      if (in.operands.size() != 1) Fail(in, "takes one operand");
      if (in.opcode == "not" && ir::IsFloatingPoint(out.dtype)) return Opaque(in);
      return One(Emit(in, in.hlo_name, u->second, {OperandRef(in, 0)}, {}, out));
    }
    auto b = kBinary.find(in.opcode);
    if (in.operands.size() != 2) Fail(in, "takes two operands");
    ir::TensorRef lhs = OperandRef(in, 0), rhs = OperandRef(in, 1);
    const HVal *lv = &Operand(in, 0), *rv = &Operand(in, 1);
    std::optional<double> ls = lv->scalar, rs = rv->scalar;
    if (OperandType(in, 0).shape != out.shape || OperandType(in, 1).shape != out.shape) {
      Fail(in, "operands must have the result's shape " + out.ToString() +
                   " (HLO does not broadcast implicitly; use broadcast)");
    }
    if ((in.opcode == "divide" || in.opcode == "power") && !floating) return Opaque(in);
    const bool commutes = in.opcode == "add" || in.opcode == "multiply" || in.opcode == "maximum" ||
                          in.opcode == "minimum";
    if (floating && ls && !rs && commutes) {
      std::swap(lhs, rhs);
      std::swap(lv, rv);
      std::swap(ls, rs);
    }
    if (floating && rs && !ls) {
      // x op c, c a broadcast scalar constant: the wrapped-scalar form of the ATen operator.
      if (in.opcode == "maximum" && *rs == 0.0) {
        return One(Emit(in, in.hlo_name, "aten::relu", {lhs}, {}, out));
      }
      // max(x, -inf) and min(x, +inf) are x (XLA's maximum and minimum propagate NaN): the
      // initial value of jax's max reductions (softmax's stabilizer).
      if ((in.opcode == "maximum" && *rs == -std::numeric_limits<double>::infinity()) ||
          (in.opcode == "minimum" && *rs == std::numeric_limits<double>::infinity())) {
        return One(Emit(in, in.hlo_name, "aten::alias", {lhs}, {}, out));
      }
      if (in.opcode == "add" || in.opcode == "subtract" || in.opcode == "multiply" ||
          in.opcode == "divide") {
        return One(Emit(in, in.hlo_name, b->second, {lhs, *rs}, {}, out));
      }
      if (in.opcode == "power") {
        return One(Emit(in, in.hlo_name, "aten::pow.Tensor_Scalar", {lhs, *rs}, {}, out));
      }
    }
    // A numpy-style broadcast operand: ATen's operator broadcasts its source alike, the form FX
    // graphs have (add(mm, bias)), so the same lemmas apply.
    if (rv->broadcast_of && !lv->broadcast_of) {
      rhs = *rv->broadcast_of;
    } else if (lv->broadcast_of && !rv->broadcast_of) {
      lhs = *lv->broadcast_of;
    }
    return One(Emit(in, in.hlo_name, b->second, {lhs, rhs}, {}, out));
  }

  HVal Compare(const Instr& in) {
    const ir::TensorType out = TensorTypeOf(in);
    if (in.operands.size() != 2) Fail(in, "takes two operands");
    std::string dir = Word(in, "direction");
    std::transform(dir.begin(), dir.end(), dir.begin(), ::tolower);
    const std::string type = Word(in, "type");
    if (!type.empty() && type != "FLOAT" && type != "SIGNED" && type != "UNSIGNED") {
      return Opaque(in);  // TOTALORDER orders NaNs and signed zeros
    }
    static const std::set<std::string> kDirections = {"eq", "ne", "lt", "le", "gt", "ge"};
    if (!kDirections.count(dir)) Fail(in, "needs direction=EQ, NE, LT, LE, GT or GE");
    const ir::TensorType& lt = OperandType(in, 0);
    std::optional<double> rs = Operand(in, 1).scalar, ls = Operand(in, 0).scalar;
    if (rs && ir::IsFloatingPoint(lt.dtype)) {
      return One(
          Emit(in, in.hlo_name, "aten::" + dir + ".Scalar", {OperandRef(in, 0), *rs}, {}, out));
    }
    if (ls && !rs && ir::IsFloatingPoint(lt.dtype)) {
      // c op x is x op' c with the direction mirrored (jax's relu gradient: 0 == max(x, 0)).
      static const std::map<std::string, std::string> kMirrored = {
          {"eq", "eq"}, {"ne", "ne"}, {"lt", "gt"}, {"gt", "lt"}, {"le", "ge"}, {"ge", "le"}};
      return One(Emit(in, in.hlo_name, "aten::" + kMirrored.at(dir) + ".Scalar",
                      {OperandRef(in, 1), *ls}, {}, out));
    }
    if ((dir == "le" || dir == "ge") && !ir::IsFloatingPoint(lt.dtype) &&
        !ir::IsComplex(lt.dtype)) {
      // No le/ge.Tensor in the registry: on integers (totally ordered, no NaN) a >= b is
      // not(a < b) and a <= b is not(a > b).
      const ir::TensorRef strict =
          Emit(in, in.hlo_name + "_strict", dir == "ge" ? "aten::lt.Tensor" : "aten::gt.Tensor",
               {OperandRef(in, 0), OperandRef(in, 1)}, {}, out);
      return One(Emit(in, in.hlo_name, "aten::bitwise_not", {strict}, {}, out));
    }
    if (dir == "le" || dir == "ge") return Opaque(in);
    return One(Emit(in, in.hlo_name, "aten::" + dir + ".Tensor",
                    {OperandRef(in, 0), OperandRef(in, 1)}, {}, out));
  }

  static ir::Value Ints(const std::vector<int64_t>& v) {
    ir::Value::List list;
    for (int64_t x : v) list.emplace_back(x);
    return ir::Value(std::move(list));
  }
  static std::vector<int64_t> Sizes(const ir::TensorType& t) {
    std::vector<int64_t> out;
    for (const ir::Dim& d : t.shape) out.push_back(d.value());
    return out;
  }

  HVal Broadcast(const Instr& in) {
    const ir::TensorType out = TensorTypeOf(in);
    const HVal& x = Operand(in, 0);
    ir::TensorRef ref = OperandRef(in, 0);
    const ir::TensorType& t = graph_.type(ref);
    std::vector<int64_t> dims = IntList(in, "dimensions", false);
    if (dims.size() != t.shape.size()) {
      Fail(in, "dimensions={...} must name one result dimension per operand dimension (" +
                   std::to_string(t.shape.size()) + ")");
    }
    std::vector<int64_t> shape(out.shape.size(), 1);
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] < 0 || dims[k] >= static_cast<int64_t>(out.shape.size()) ||
          (k > 0 && dims[k] <= dims[k - 1])) {
        return Opaque(in);  // a broadcast that also transposes
      }
      shape[dims[k]] = t.shape[k].value();
    }
    HVal result;
    bool trailing = true;
    for (size_t k = 0; k < dims.size(); ++k) {
      trailing = trailing && dims[k] == static_cast<int64_t>(out.shape.size() - dims.size() + k);
    }
    if (t.shape.empty()) {
      result = One(Emit(in, in.hlo_name, "aten::expand", {ref, Ints(Sizes(out))}, {}, out));
    } else {
      ir::TensorType mid{t.dtype, {}};
      for (int64_t s : shape) mid.shape.push_back(s);
      if (mid == out) {
        result = One(Emit(in, in.hlo_name, "aten::reshape", {ref, Ints(shape)}, {}, out));
      } else {
        // The operand with a 1 at each broadcast dim, the new leading dims dropped
        // (right-aligned, as ATen broadcasts; the operand's own dims all kept, size 1 or not):
        // expanded to the result, and what an elementwise operator reading the broadcast takes
        // instead (ATen broadcasts it alike), so S's broadcast over all heads and a rank's over
        // its own (which XLA may write as a reshape and a trailing broadcast) meet at one term.
        const std::vector<int64_t> kept(shape.begin() + dims.front(), shape.end());
        ir::TensorType lead{t.dtype, {}};
        for (int64_t s : kept) lead.shape.push_back(s);
        ir::TensorRef r = ref;
        if (lead.shape != t.shape) {
          r = Emit(in, in.hlo_name + "_rs", "aten::reshape", {ref, Ints(kept)}, {}, lead);
        }
        result = One(Emit(in, in.hlo_name, "aten::expand", {r, Ints(Sizes(out))}, {}, out));
        result.broadcast_of = r;
      }
    }
    result.scalar = x.scalar;
    if (trailing) result.broadcast_of = ref;
    return result;
  }

  HVal Slice(const Instr& in) {
    const ir::TensorType out = TensorTypeOf(in);
    const Attr* a = FindAttr(in, "slice");
    if (!a) Fail(in, "needs slice={[start:limit], ...}");
    // {[0:4], [2:8:1]}
    const std::vector<Tok>& t = a->value;
    std::vector<std::array<int64_t, 3>> ranges;
    size_t i = 1;
    while (i < t.size() && t[i].text != "}") {
      if (t[i].text == ",") {
        ++i;
        continue;
      }
      if (t[i].text != "[") throw InputError(file_, a->line, "slice ranges are [start:limit:step]");
      std::array<int64_t, 3> r{0, 0, 1};
      size_t k = 0;
      ++i;
      while (i < t.size() && t[i].text != "]") {
        if (t[i].text == ":") {
          ++i;
          continue;
        }
        if (k >= 3) throw InputError(file_, a->line, "slice ranges are [start:limit:step]");
        r[k++] = ToInt(t[i], file_, "slice");
        ++i;
      }
      if (i >= t.size() || k < 2) {
        throw InputError(file_, a->line, "slice ranges are [start:limit:step]");
      }
      ++i;
      ranges.push_back(r);
    }
    ir::TensorRef ref = OperandRef(in, 0);
    const ir::TensorType& x = graph_.type(ref);
    if (ranges.size() != x.shape.size()) {
      Fail(in, "slice={...} needs one range per operand dimension (" +
                   std::to_string(x.shape.size()) + ")");
    }
    std::vector<size_t> cut;
    for (size_t d = 0; d < ranges.size(); ++d) {
      const auto& r = ranges[d];
      if (r[2] != 1) return Opaque(in);
      if (r[0] < 0 || r[1] < r[0] || r[1] > x.shape[d].value()) {
        Fail(in, "slice range " + std::to_string(d) + " is outside the operand");
      }
      if (r[0] != 0 || r[1] != x.shape[d].value()) cut.push_back(d);
    }
    if (cut.empty()) return One(Emit(in, in.hlo_name, "aten::alias", {ref}, {}, out));
    for (size_t k = 0; k < cut.size(); ++k) {
      const size_t d = cut[k];
      const bool last = k + 1 == cut.size();
      ref = Emit(in, last ? in.hlo_name : in.hlo_name + "_d" + std::to_string(d),
                 "aten::slice.Tensor",
                 {ref, static_cast<int64_t>(d), ranges[d][0], ranges[d][1], int64_t{1}}, {},
                 last ? std::optional<ir::TensorType>(out) : std::nullopt);
    }
    return One(ref);
  }

  HVal Dot(const Instr& in) {
    const ir::TensorType out = TensorTypeOf(in);
    ir::TensorRef a = OperandRef(in, 0), b = OperandRef(in, 1);
    const ir::TensorType &ta = graph_.type(a), &tb = graph_.type(b);
    const auto lb = IntList(in, "lhs_batch_dims", false), rb = IntList(in, "rhs_batch_dims", false);
    const auto lc = IntList(in, "lhs_contracting_dims", false);
    const auto rc = IntList(in, "rhs_contracting_dims", false);
    if (ta.dtype != out.dtype || tb.dtype != out.dtype) return Opaque(in);  // mixed precision
    if (lc.size() != 1 || rc.size() != 1) return GeneralDot(in, a, b, lb, rb, lc, rc, out);
    if (ta.shape.size() == 2 && tb.shape.size() == 2 && lb.empty() && rb.empty()) {
      if (lc[0] == 0) a = Emit(in, in.hlo_name + "_lt", "aten::t", {a}, {}, std::nullopt);
      if (rc[0] == 1) b = Emit(in, in.hlo_name + "_rt", "aten::t", {b}, {}, std::nullopt);
      return One(Emit(in, in.hlo_name, "aten::mm", {a, b}, {}, out));
    }
    if (ta.shape.size() == 3 && tb.shape.size() == 3 && lb == std::vector<int64_t>{0} &&
        rb == std::vector<int64_t>{0} && lc[0] != 0 && rc[0] != 0) {
      const ir::Value swap = Ints({0, 2, 1});
      if (lc[0] == 1)
        a = Emit(in, in.hlo_name + "_lt", "aten::permute", {a, swap}, {}, std::nullopt);
      if (rc[0] == 2)
        b = Emit(in, in.hlo_name + "_rt", "aten::permute", {b, swap}, {}, std::nullopt);
      return One(Emit(in, in.hlo_name, "aten::bmm", {a, b}, {}, out));
    }
    return GeneralDot(in, a, b, lb, rb, lc, rc, out);
  }

  // Any dot: lhs permuted to [batch, free, contracting] and rhs to [batch, contracting, free],
  // each flattened to 3-D, a bmm, and the result reshaped to HLO's [batch, lhs free, rhs free].
  HVal GeneralDot(const Instr& in, ir::TensorRef a, ir::TensorRef b, const std::vector<int64_t>& lb,
                  const std::vector<int64_t>& rb, const std::vector<int64_t>& lc,
                  const std::vector<int64_t>& rc, const ir::TensorType& out) {
    const std::vector<int64_t> da = Sizes(graph_.type(a)), db = Sizes(graph_.type(b));
    if (lb.size() != rb.size() || lc.size() != rc.size()) {
      Fail(in, "lhs and rhs need as many batch (and contracting) dims");
    }
    auto check = [&](const std::vector<int64_t>& dims, size_t rank) {
      std::set<int64_t> seen;
      for (int64_t d : dims) {
        if (d < 0 || d >= static_cast<int64_t>(rank) || !seen.insert(d).second) {
          Fail(in, "a batch or contracting dim is out of range or given twice");
        }
      }
    };
    std::vector<int64_t> lhs_dims = lb, rhs_dims = rb;
    lhs_dims.insert(lhs_dims.end(), lc.begin(), lc.end());
    rhs_dims.insert(rhs_dims.end(), rc.begin(), rc.end());
    check(lhs_dims, da.size());
    check(rhs_dims, db.size());
    auto free_dims = [](const std::vector<int64_t>& used, size_t rank) {
      std::vector<int64_t> out;
      for (int64_t d = 0; d < static_cast<int64_t>(rank); ++d) {
        if (std::find(used.begin(), used.end(), d) == used.end()) out.push_back(d);
      }
      return out;
    };
    const std::vector<int64_t> lf = free_dims(lhs_dims, da.size());
    const std::vector<int64_t> rf = free_dims(rhs_dims, db.size());
    auto product = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes) {
      int64_t p = 1;
      for (int64_t d : dims) p *= sizes[d];
      return p;
    };
    for (size_t k = 0; k < lb.size(); ++k) {
      if (da[lb[k]] != db[rb[k]]) Fail(in, "batch dims of different sizes");
    }
    for (size_t k = 0; k < lc.size(); ++k) {
      if (da[lc[k]] != db[rc[k]]) Fail(in, "contracting dims of different sizes");
    }
    const int64_t batch = product(lb, da), contract = product(lc, da);
    const int64_t lfree = product(lf, da), rfree = product(rf, db);
    auto arrange = [&](ir::TensorRef ref, std::vector<int64_t> order, const std::string& side,
                       std::vector<int64_t> shape3) {
      std::vector<int64_t> identity(order.size());
      std::iota(identity.begin(), identity.end(), 0);
      if (order != identity) {
        ref = Emit(in, in.hlo_name + "_" + side + "p", "aten::permute", {ref, Ints(order)}, {},
                   std::nullopt);
      }
      return Emit(in, in.hlo_name + "_" + side + "3", "aten::reshape", {ref, Ints(shape3)}, {},
                  std::nullopt);
    };
    std::vector<int64_t> lorder = lb, rorder = rb;
    lorder.insert(lorder.end(), lf.begin(), lf.end());
    lorder.insert(lorder.end(), lc.begin(), lc.end());
    rorder.insert(rorder.end(), rc.begin(), rc.end());
    rorder.insert(rorder.end(), rf.begin(), rf.end());
    const ir::TensorRef a3 = arrange(a, lorder, "l", {batch, lfree, contract});
    const ir::TensorRef b3 = arrange(b, rorder, "r", {batch, contract, rfree});
    const ir::TensorRef prod =
        Emit(in, in.hlo_name + "_bmm", "aten::bmm", {a3, b3}, {}, std::nullopt);
    return One(Emit(in, in.hlo_name, "aten::reshape", {prod, Ints(Sizes(out))}, {}, out));
  }

  HVal Reduce(const Instr& in) {
    if (in.operands.size() != 2 || in.shape.tuple) return Opaque(in);  // variadic reduce
    const ir::TensorType out = TensorTypeOf(in);
    const ir::TensorType& x = OperandType(in, 0);
    std::vector<int64_t> dims = IntList(in, "dimensions", true);
    std::optional<double> init = Operand(in, 1).scalar;
    const Reducer r = ReducerOf(in);
    if (!ir::IsFloatingPoint(x.dtype) || dims.empty() || !init) return Opaque(in);
    if (r == Reducer::kAdd && *init == 0.0) {
      std::vector<int64_t> sorted = dims;
      std::sort(sorted.begin(), sorted.end());
      const bool shifts = sorted.back() + 1 != static_cast<int64_t>(x.shape.size()) ||
                          sorted.back() - sorted.front() + 1 != static_cast<int64_t>(dims.size());
      if (!shifts) {
        return One(Emit(in, in.hlo_name, "aten::sum.dim_IntList", {OperandRef(in, 0), Ints(dims)},
                        {}, out));
      }
      // Removing a dim before a kept one renumbers the kept dims: summed with keepdim, then
      // reshaped (the form FX graphs have, whose lemmas keep a concat dim across the sum).
      const ir::TensorRef kept = Emit(in, in.hlo_name + "_keep", "aten::sum.dim_IntList",
                                      {OperandRef(in, 0), Ints(dims), true}, {}, std::nullopt);
      return One(Emit(in, in.hlo_name, "aten::reshape", {kept, Ints(Sizes(out))}, {}, out));
    }
    if (r == Reducer::kMax && *init == -std::numeric_limits<double>::infinity()) {
      return One(Emit(in, in.hlo_name, "aten::amax", {OperandRef(in, 0), Ints(dims)}, {}, out));
    }
    return Opaque(in);
  }

  // Whether the collective's replica_groups name ranks: XLA reads them as global device ids
  // (use_global_device_ids), partition ids (channel_id without it) or replica ids (no
  // channel_id); the ids are ranks when the kind of id they are is the one that varies.
  bool IdsAreRanks(const Instr& in) const {
    if (Word(in, "use_global_device_ids") == "true") return true;
    const bool channel = FindAttr(in, "channel_id") != nullptr;
    const int64_t partitions = HeaderInt("num_partitions"), replicas = HeaderInt("replica_count");
    if (partitions > 1 && replicas > 1) return false;
    if (partitions > 1) return channel;
    if (replicas > 1) return !channel;
    return true;
  }

  // Whether every group of the collective has one member: then it returns its operand (a sum,
  // gather or scatter over one device; psum over an axis of size 1, a one-device program).
  bool SingletonGroups(const Instr& in) const {
    const Attr* a = FindAttr(in, "replica_groups");
    if (!a || (a->value.size() == 2 && a->value[0].text == "{")) return world_ == 1;  // {}: all
    const std::vector<std::vector<int32_t>> groups = ReplicaGroups(*a, world_);
    for (const auto& g : groups) {
      if (g.size() != 1) return false;
    }
    return !groups.empty();
  }

  // all-to-all of one array: its dimensions={d}, which must keep the operand's shape.
  int64_t AllToAllDim(const Instr& in) const {
    const std::vector<int64_t> dims = IntList(in, "dimensions", true);
    const ir::TensorType out = TensorTypeOf(in);
    const int64_t rank = static_cast<int64_t>(out.shape.size());
    if (dims.size() != 1 || dims[0] < 0 || dims[0] >= rank) {
      throw InputError(file_, FindAttr(in, "dimensions")->line,
                       "'" + in.hlo_name + "' (all-to-all): dimensions= must name one dimension " +
                           "of the operand (0.." + std::to_string(rank - 1) +
                           "), the one it splits and concatenates: dimensions={0}");
    }
    if (OperandType(in, 0) != out) {
      Fail(in, "an all-to-all keeps its operand's shape, but the operand is " +
                   OperandType(in, 0).ToString() + " and the result " + out.ToString());
    }
    return dims[0];
  }

  // all-to-all of n operands (XLA's decomposed form, in compiled modules): member i's operand j
  // goes to member j, where it is element i of the result. The operands concatenated on dim 0
  // (each a 1-row block when scalars), all_to_all_single's equal-split exchange, element i the
  // i-th block of what arrives.
  HVal AllToAllTuple(const Instr& in) {
    const size_t n = in.operands.size();
    if (n == 0 || in.shape.elems.size() != n) {
      Fail(in, "a tuple all-to-all has one result element per operand");
    }
    std::vector<ir::TensorRef> parts;
    for (size_t i = 0; i < n; ++i) parts.push_back(OperandRef(in, i));
    const ir::TensorType piece = graph_.type(parts[0]);
    for (size_t i = 0; i < n; ++i) {
      const HloShape& e = in.shape.elems[i];
      if (e.tuple || !e.unsupported.empty() || graph_.type(parts[i]) != piece || e.type != piece) {
        return Opaque(in);  // operands of several shapes: not an equal-split exchange
      }
    }
    HVal result;
    result.tuple = true;
    if (SingletonGroups(in)) {
      if (n != 1) Fail(in, "groups of one member exchange one operand, not " + std::to_string(n));
      result.elems.push_back(
          One(Emit(in, in.hlo_name + "_0", "aten::alias", {parts[0]}, {}, piece)));
      return result;
    }
    if (!IdsAreRanks(in)) return Opaque(in);
    bool ascending = true;
    const std::string group = GroupOf(in, &ascending);
    if (groups_.at(group).size() != n) {
      Fail(in, "exchanges " + std::to_string(n) + " operands in a group of " +
                   std::to_string(groups_.at(group).size()) + " members (one operand per member)");
    }
    if (!ascending) return Opaque(in);
    const bool scalar = piece.shape.empty();
    const int64_t rows = scalar ? 1 : piece.shape[0].value();
    ir::Value::List blocks;
    for (size_t i = 0; i < n; ++i) {
      blocks.emplace_back(scalar ? Emit(in, in.hlo_name + "_row" + std::to_string(i),
                                        "aten::reshape", {parts[i], Ints({1})}, {}, std::nullopt)
                                 : parts[i]);
    }
    const ir::TensorRef joined = Emit(in, in.hlo_name + "_cat", "aten::cat",
                                      {ir::Value(std::move(blocks)), int64_t{0}}, {}, std::nullopt);
    const ir::TensorType& whole = graph_.type(joined);
    const ir::TensorRef started =
        Emit(in, in.hlo_name + "_start", "_c10d_functional::all_to_all_single",
             {joined, ir::Value(ir::None{}), ir::Value(ir::None{}), group}, {}, whole);
    const ir::TensorRef arrived =
        Emit(in, in.hlo_name + "_wait", "_c10d_functional::wait_tensor", {started}, {}, whole);
    for (size_t i = 0; i < n; ++i) {
      const std::string name = in.hlo_name + "_" + std::to_string(i);
      const int64_t start = static_cast<int64_t>(i) * rows;
      ir::TensorRef block = Emit(in, scalar ? name + "_row" : name, "aten::slice.Tensor",
                                 {arrived, int64_t{0}, start, start + rows, int64_t{1}}, {},
                                 scalar ? std::nullopt : std::optional(piece));
      if (scalar) block = Emit(in, name, "aten::reshape", {block, Ints({})}, {}, piece);
      result.elems.push_back(One(block));
    }
    return result;
  }

  // all-reduce-start / all-gather-start: the collective started (its _c10d_functional node,
  // whose result only the matching *-done may read: the loader checks it); all-gather-start's
  // result is the tuple (operand, gathered) XLA prints. *-done: the wait.
  HVal AsyncStart(const Instr& in) {
    Instr sync = in;
    sync.opcode = in.opcode.substr(0, in.opcode.size() - std::string("-start").size());
    if (sync.opcode == "all-gather" && in.shape.tuple && in.shape.elems.size() == 2 &&
        in.operands.size() == 1 && !in.shape.elems[1].tuple) {
      sync.shape = in.shape.elems[1];
    }
    if (sync.shape.tuple) return Opaque(in);
    HVal v = Collective(sync, &in);
    if (!v.started || !in.shape.tuple) return v;  // no started: the start's opaque node
    HVal t;  // (operand, gathered): element 1 is the collective's result, read by the done only
    t.tuple = true;
    t.elems = {Operand(in, 0), v};
    t.started = v.started;
    return t;
  }

  HVal AsyncDone(const Instr& in) {
    if (in.operands.size() != 1 || in.shape.tuple) return Opaque(in);
    const HVal& start = Operand(in, 0);
    if (!start.started) return Opaque(in);  // the start loaded opaque
    return One(Emit(in, in.hlo_name, "_c10d_functional::wait_tensor", {*start.started}, {},
                    TensorTypeOf(in)));
  }

  // `started_by`: the *-start instruction read as this synchronous one (its opaque form is the
  // start's, and the result the started collective, not waited for).
  HVal Collective(const Instr& in, const Instr* started_by = nullptr) {
    const bool async = started_by != nullptr;
    const Instr& original = async ? *started_by : in;
    if (in.opcode == "all-to-all" && in.shape.tuple) return AllToAllTuple(in);
    if (in.operands.size() != 1 || in.shape.tuple) return Opaque(original);  // tuple collectives
    std::optional<int64_t> exchanged;  // all-to-all: the split (and concat) dimension
    if (in.opcode == "all-to-all") exchanged = AllToAllDim(in);
    if (!async && SingletonGroups(in) && OperandType(in, 0) == TensorTypeOf(in) &&
        (in.opcode != "all-reduce" || ReducerOf(in) != Reducer::kNone)) {
      return One(Emit(in, in.hlo_name, "aten::alias", {OperandRef(in, 0)}, {}, TensorTypeOf(in)));
    }
    // Groups of replicas in a partitioned module (or the converse): each device's group holds
    // other devices than the ranks the ids would name; not modelled.
    if (!IdsAreRanks(in)) return Opaque(original);
    const ir::TensorType out = TensorTypeOf(in);
    ir::TensorRef x = OperandRef(in, 0);
    bool ascending = true;
    const std::string group = GroupOf(in, &ascending);
    const int64_t size = static_cast<int64_t>(groups_.at(group).size());
    ir::TensorRef started;
    if (in.opcode == "all-reduce") {
      const Reducer r = ReducerOf(in);
      const char* op = r == Reducer::kAdd   ? "sum"
                       : r == Reducer::kMax ? "max"
                       : r == Reducer::kMin ? "min"
                                            : nullptr;
      if (!op) return Opaque(original);
      started = Emit(in, in.hlo_name + "_start", "_c10d_functional::all_reduce",
                     {x, std::string(op), group}, {}, out);
    } else {
      // In rank order only: the registry's collectives exchange, gather and scatter along dim 0.
      // Another dimension d (jax's sequence-sharded activations gathered on dim 1) is swapped
      // with dim 0 around the collective and back after (a transpose, whose lemmas move concats
      // and slices, and which undoes itself). An asynchronous one stays along dim 0.
      if (!ascending) return Opaque(original);
      int64_t d = 0;
      if (exchanged) {
        // Member i's block j goes to member j, which concatenates the blocks in member order.
        d = *exchanged;
        if (out.shape[d].value() % size != 0) {
          Fail(in, "dimension " + std::to_string(d) + " (" +
                       std::to_string(out.shape[d].value()) + ") does not split into the group's " +
                       std::to_string(size) + " members");
        }
      } else {
        const std::vector<int64_t> dims = IntList(in, "dimensions", true);
        const int64_t rank = static_cast<int64_t>(out.shape.size());
        if (dims.size() != 1 || dims[0] < 0 || dims[0] >= rank || (async && dims[0] != 0)) {
          return Opaque(original);
        }
        if (in.opcode != "all-gather" && ReducerOf(in) != Reducer::kAdd) return Opaque(original);
        d = dims[0];
      }
      ir::TensorType moved = out;
      if (d != 0) {
        x = Emit(in, in.hlo_name + "_swap", "aten::transpose.int", {x, int64_t{0}, d}, {},
                 std::nullopt);
        std::swap(moved.shape[0], moved.shape[static_cast<size_t>(d)]);
      }
      if (exchanged) {
        started = Emit(in, in.hlo_name + "_start", "_c10d_functional::all_to_all_single",
                       {x, ir::Value(ir::None{}), ir::Value(ir::None{}), group}, {}, moved);
      } else if (in.opcode == "all-gather") {
        started = Emit(in, in.hlo_name + "_start", "_c10d_functional::all_gather_into_tensor",
                       {x, size, group}, {}, moved);
      } else {
        started = Emit(in, in.hlo_name + "_start", "_c10d_functional::reduce_scatter_tensor",
                       {x, std::string("sum"), size, group}, {}, moved);
      }
      if (d != 0) {
        const ir::TensorRef waited =
            Emit(in, in.hlo_name + "_wait", "_c10d_functional::wait_tensor", {started}, {}, moved);
        return One(Emit(in, in.hlo_name, "aten::transpose.int", {waited, int64_t{0}, d}, {}, out));
      }
    }
    if (async) {
      HVal v = One(started);
      v.started = started;
      return v;
    }
    return One(Emit(in, in.hlo_name, "_c10d_functional::wait_tensor", {started}, {}, out));
  }

  // fusion and call: the called computation's instructions, its parameters the operands (what a
  // fusion computes is its computation, whatever the backend's kind or config).
  HVal Inline(const Instr& in) {
    const Attr* a = FindAttr(in, in.opcode == "fusion" ? "calls" : "to_apply");
    if (!a || a->value.size() != 1) {
      Fail(in, std::string("needs ") + (in.opcode == "fusion" ? "calls" : "to_apply") +
                   "=%computation");
    }
    auto it = computations_.find(StripPercent(a->value[0].text));
    if (it == computations_.end()) {
      throw InputError(file_, a->line,
                       "'" + a->value[0].text + "' names no computation of the module");
    }
    if (inline_depth_ >= 16) Fail(in, "calls nested more than 16 deep (a recursive call?)");
    const Computation& c = *it->second;
    std::vector<HVal> args;
    for (size_t i = 0; i < in.operands.size(); ++i) args.push_back(Operand(in, i));
    std::map<std::string, HVal> outer = std::move(values_);
    values_.clear();
    ++inline_depth_;
    const Instr* root = &c.instrs.back();
    for (const Instr& i : c.instrs) {
      if (i.root) root = &i;
      if (values_.count(i.hlo_name)) {
        throw InputError(file_, i.line, "'" + i.hlo_name + "' is defined twice");
      }
      if (i.opcode == "parameter") {
        if (i.operands.size() != 1 || i.operands[0].size() != 1) {
          throw InputError(file_, i.line, "parameter takes its number: parameter(0)");
        }
        const int64_t k = ToInt(i.operands[0][0], file_, "parameter");
        if (k < 0 || k >= static_cast<int64_t>(args.size())) {
          Fail(in, "computation '" + c.name + "' reads parameter(" + std::to_string(k) +
                       ") but is called with " + std::to_string(args.size()) + " operand(s)");
        }
        if (args[k].ref && !i.shape.tuple && i.shape.unsupported.empty() &&
            graph_.type(*args[k].ref) != i.shape.type) {
          throw InputError(file_, i.line,
                           "parameter(" + std::to_string(k) + ") of '" + c.name + "' is " +
                               i.shape.type.ToString() + " but '" + in.hlo_name + "' passes " +
                               graph_.type(*args[k].ref).ToString());
        }
        values_[i.hlo_name] = args[k];
        continue;
      }
      values_[i.hlo_name] = Lower(i);
    }
    HVal result = values_.at(root->hlo_name);
    --inline_depth_;
    values_ = std::move(outer);
    return result;
  }

  HVal Lower(const Instr& in) {
    HVal v = LowerTyped(in);
    v.is_unsigned = v.is_unsigned || HasUnsigned(in.shape);
    return v;
  }

  bool ReadsUnsigned(const Instr& in) const {
    for (const auto& operand : in.operands) {
      auto it = values_.find(StripPercent(operand.back().text));
      // a known value has no wrap-around left: FoldInts refused results outside the type
      if (operand.back().kind == Tok::kIdent && it != values_.end() && it->second.is_unsigned &&
          !it->second.ints) {
        return true;
      }
    }
    return false;
  }

  // Custom calls that return their operand: sharding annotations (with_sharding_constraint's
  // Sharding, Shardy's), Neuron's weight placement, and on one device the shard/full shape changes, which leave the shape.
  bool IsIdentityCustomCall(const Instr& in) const {
    if (in.operands.size() != 1 || in.shape.tuple || !in.shape.unsupported.empty()) return false;
    const Attr* a = FindAttr(in, "custom_call_target");
    if (!a || a->value.size() != 1 || a->value[0].kind != Tok::kStr) return false;
    const std::string& target = a->value[0].text;
    // AwsNeuronTransferWithStaticRing: transformers-neuronx places each weight with it (hlo.py
    // transfer_with_static_ring); the value is its operand's.
    static const std::set<std::string> kAnnotations = {"Sharding", "xla.sdy.FuncResultSharding",
                                                       "xla.sdy.Sharding",
                                                       "AwsNeuronTransferWithStaticRing"};
    static const std::set<std::string> kShapeChanges = {
        "SPMDFullToShardShape", "SPMDShardToFullShape", "xla.sdy.GlobalToLocalShape",
        "xla.sdy.LocalToGlobalShape"};
    if (kAnnotations.count(target)) return true;
    return world_ == 1 && kShapeChanges.count(target) && OperandType(in, 0) == in.shape.type;
  }

  // The custom_call_target of a custom-call, or "".
  std::string CustomCallTarget(const Instr& in) const {
    const Attr* a = FindAttr(in, "custom_call_target");
    if (!a || a->value.size() != 1 || a->value[0].kind != Tok::kStr) return "";
    return a->value[0].text;
  }

  // AwsNeuronRmsNorm(x, weight, eps), backend_config="<d>" (transformers-neuronx's hlo.rms_norm,
  // torch_neuronx's RmsNorm): RMSNorm over dimension d, computed in x's dtype and given in the
  // instruction's, as the generic HLO transformers-neuronx emits instead (rms_norm_legacy):
  // x * rsqrt(mean(x^2, d) + eps) * weight along d. Lowered to that ATen decomposition
  // (pow.Tensor_Scalar, mean.dim with keepdim, add, rsqrt, mul, the weight reshaped to broadcast
  // along d, _to_copy), so the lemmas and the numeric runtime serve it. nullopt (opaque) when
  // eps is not a known scalar, d is no dimension of x, or the shapes disagree.
  std::optional<HVal> NeuronRmsNorm(const Instr& in) {
    if (in.operands.size() != 3 || in.shape.tuple || !in.shape.unsupported.empty()) {
      return std::nullopt;
    }
    const ir::TensorType out = in.shape.type;
    const Attr* config = FindAttr(in, "backend_config");
    if (!config || config->value.size() != 1 || config->value[0].kind != Tok::kStr) {
      return std::nullopt;
    }
    const std::string& dim_text = config->value[0].text;
    if (dim_text.empty() || dim_text.size() > 3 ||
        dim_text.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    const int64_t d = std::stoll(dim_text);
    const ir::TensorRef x = OperandRef(in, 0), w = OperandRef(in, 1);
    const ir::TensorType &tx = graph_.type(x), &tw = graph_.type(w);
    const std::optional<double> eps = Operand(in, 2).scalar;
    if (!eps || d >= static_cast<int64_t>(tx.shape.size()) || !ir::IsFloatingPoint(tx.dtype) ||
        !ir::IsFloatingPoint(tw.dtype) || !ir::IsFloatingPoint(out.dtype) ||
        tw.shape.size() != 1 || tw.shape[0] != tx.shape[d] || out.shape != tx.shape) {
      return std::nullopt;
    }
    const std::string& n = in.hlo_name;
    const ir::TensorRef sq =
        Emit(in, n + "_sq", "aten::pow.Tensor_Scalar", {x, 2.0}, {}, std::nullopt);
    const ir::TensorRef mean =
        Emit(in, n + "_mean", "aten::mean.dim", {sq, Ints({d}), true}, {}, std::nullopt);
    const ir::TensorRef shifted =
        Emit(in, n + "_eps", "aten::add.Tensor", {mean, *eps}, {}, std::nullopt);
    const ir::TensorRef scale = Emit(in, n + "_rsqrt", "aten::rsqrt", {shifted}, {}, std::nullopt);
    const ir::TensorRef normed =
        Emit(in, n + "_normed", "aten::mul.Tensor", {x, scale}, {}, std::nullopt);
    ir::TensorRef weight = w;
    if (tw.dtype != tx.dtype) {
      weight = Emit(in, n + "_w", "aten::_to_copy", {weight}, {{"dtype", ir::Value(tx.dtype)}},
                    std::nullopt);
    }
    std::vector<int64_t> along(tx.shape.size(), 1);
    along[d] = tx.shape[d].value();
    if (along.size() != 1) {
      weight = Emit(in, n + "_wd", "aten::reshape", {weight, Ints(along)}, {}, std::nullopt);
    }
    const bool cast = out.dtype != tx.dtype;
    const ir::TensorRef scaled =
        Emit(in, cast ? n + "_scaled" : n, "aten::mul.Tensor", {normed, weight}, {},
             cast ? std::nullopt : std::optional<ir::TensorType>(out));
    if (!cast) return One(scaled);
    return One(
        Emit(in, n, "aten::_to_copy", {scaled}, {{"dtype", ir::Value(out.dtype)}}, out));
  }

  // gather in index_select form: one index per result row (index_vector_dim the indices' rank,
  // or their last dim when it has size 1: jax's x[i]), at most one batch dim, one collapsed dim
  // d that is also the start_index_map, every other dim taken whole, the batch dim in d's place
  // (offset_dims = the others), no batching dims: x indexed along d. XLA clamps each start so
  // the slice stays inside x (to 0..n-1 here), which aten::clamp makes explicit before
  // aten::index_select. nullopt (opaque) otherwise.
  std::optional<HVal> IndexSelectGather(const Instr& in) {
    if (in.operands.size() != 2 || in.shape.tuple || !in.shape.unsupported.empty()) {
      return std::nullopt;
    }
    const ir::TensorRef x = OperandRef(in, 0);
    ir::TensorRef idx = OperandRef(in, 1);
    const ir::TensorType &tx = graph_.type(x), ti = graph_.type(idx);
    const int64_t rank = static_cast<int64_t>(tx.shape.size());
    const std::vector<int64_t> collapsed = IntList(in, "collapsed_slice_dims", false);
    const std::vector<int64_t> start_map = IntList(in, "start_index_map", false);
    const std::vector<int64_t> sizes = IntList(in, "slice_sizes", false);
    const std::vector<int64_t> offset = IntList(in, "offset_dims", false);
    const Attr* ivd_attr = FindAttr(in, "index_vector_dim");
    if (!ivd_attr || ivd_attr->value.size() != 1) return std::nullopt;
    const int64_t ivd = ToInt(ivd_attr->value[0], file_, "index_vector_dim");
    std::vector<int64_t> batch = Sizes(ti);  // the indices' shape without the index vector dim
    if (ivd == static_cast<int64_t>(ti.shape.size()) - 1 && ti.shape[ivd].value() == 1) {
      batch.pop_back();
    } else if (ivd != static_cast<int64_t>(ti.shape.size())) {
      return std::nullopt;
    }
    if (FindAttr(in, "operand_batching_dims") || FindAttr(in, "start_indices_batching_dims") ||
        batch.size() > 1 || (ti.dtype != ir::DType::kInt32 && ti.dtype != ir::DType::kInt64) ||
        collapsed.size() != 1 || start_map != collapsed ||
        sizes.size() != static_cast<size_t>(rank)) {
      return std::nullopt;
    }
    const int64_t d = collapsed[0];
    if (d < 0 || d >= rank || sizes[d] != 1 || tx.shape[d].value() < 1) return std::nullopt;
    const bool one = batch.empty();  // a single index: the collapsed dim is dropped
    std::vector<int64_t> expected_offset;
    for (int64_t k = 0; k < rank; ++k) {
      if (k != d && sizes[k] != tx.shape[k].value()) return std::nullopt;
      if (k != d) expected_offset.push_back(one && k > d ? k - 1 : k);
    }
    if (offset != expected_offset) return std::nullopt;
    const ir::TensorType out = in.shape.type;
    const std::string& n = in.hlo_name;
    if (batch.size() != ti.shape.size()) {
      idx = Emit(in, n + "_index", "aten::reshape", {idx, Ints(batch)}, {}, std::nullopt);
    }
    const ir::TensorRef clamped =
        Emit(in, n + "_clamp", "aten::clamp", {idx, int64_t{0}, tx.shape[d].value() - 1}, {},
             std::nullopt);
    const ir::TensorRef picked =
        Emit(in, one ? n + "_select" : n, "aten::index_select", {x, d, clamped}, {},
             one ? std::nullopt : std::optional<ir::TensorType>(out));
    if (!one) return One(picked);
    return One(Emit(in, n, "aten::reshape", {picked, Ints(Sizes(out))}, {}, out));
  }

  // ---- integer values known at load time ----

  // The value range of an integer (or pred) HLO element type; nullopt for others.
  static std::optional<std::pair<int64_t, int64_t>> IntRange(const HloShape& shape,
                                                             const std::string& elem) {
    static const std::map<std::string, std::pair<int64_t, int64_t>> kRanges = {
        {"pred", {0, 1}},
        {"s8", {-128, 127}},
        {"s16", {-32768, 32767}},
        {"s32", {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}},
        {"s64", {-(int64_t{1} << 53), int64_t{1} << 53}},  // exact as the doubles they become
        {"u8", {0, 255}},
        {"u16", {0, 65535}},
        {"u32", {0, std::numeric_limits<uint32_t>::max()}},
        {"u64", {0, int64_t{1} << 53}},
    };
    if (shape.tuple) return std::nullopt;
    auto it = kRanges.find(elem);
    if (it == kRanges.end()) return std::nullopt;
    return it->second;
  }

  // The element type as written (the HloShape keeps the dtype GraphGuard maps it to).
  static std::string ElemName(const Instr& in) {
    if (in.shape.is_unsigned) {
      return in.shape.type.dtype == ir::DType::kInt32 ? "u16" : "u32_or_u64";
    }
    switch (in.shape.type.dtype) {
      case ir::DType::kBool:
        return "pred";
      case ir::DType::kInt8:
        return "s8";
      case ir::DType::kInt16:
        return "s16";
      case ir::DType::kInt32:
        return "s32";
      case ir::DType::kInt64:
        return "s64";
      case ir::DType::kUInt8:
        return "u8";
      default:
        return "";
    }
  }

  // The range of the instruction's result; u32 and u64 (both typed i64) share u32's range.
  std::optional<std::pair<int64_t, int64_t>> ResultRange(const Instr& in) const {
    if (in.shape.tuple || !in.shape.unsupported.empty()) return std::nullopt;
    std::string elem = ElemName(in);
    if (elem == "u32_or_u64") elem = "u32";
    return IntRange(in.shape, elem);
  }

  const std::vector<int64_t>* KnownInts(const Instr& in, size_t i) const {
    if (i >= in.operands.size() || in.operands[i].back().kind != Tok::kIdent) return nullptr;
    auto it = values_.find(StripPercent(in.operands[i].back().text));
    if (it == values_.end() || !it->second.ints || !it->second.ref) return nullptr;
    return &*it->second.ints;
  }

  // The integer literal elements of a constant (row-major), or nullopt.
  std::optional<std::vector<int64_t>> IntLiteral(const Instr& in, int64_t count) const {
    if (in.operands.size() != 1) return std::nullopt;
    std::vector<int64_t> out;
    for (const Tok& t : in.operands[0]) {
      if (t.kind == Tok::kPunct) continue;
      if (t.text == "true" || t.text == "false") {
        out.push_back(t.text == "true" ? 1 : 0);
        continue;
      }
      if (t.kind != Tok::kNum || t.text.size() > 18 ||
          t.text.find_first_not_of("0123456789", t.text[0] == '-' ? 1 : 0) != std::string::npos) {
        return std::nullopt;
      }
      out.push_back(std::stoll(t.text));
    }
    if (static_cast<int64_t>(out.size()) != count) return std::nullopt;
    return out;
  }

  // An integer instruction whose value is known (constants, partition-id, arithmetic on known
  // values): that value, its node a constant; nullopt otherwise.
  std::optional<HVal> FoldInts(const Instr& in) {
    const auto range = ResultRange(in);
    if (!range) return std::nullopt;
    const ir::TensorType& type = in.shape.type;
    int64_t count = 1;
    for (const ir::Dim& d : type.shape) count *= d.value();
    if (count > 65536) return std::nullopt;
    const std::string& op = in.opcode;
    std::optional<std::vector<int64_t>> v;
    const std::vector<int64_t>* a = KnownInts(in, 0);
    const std::vector<int64_t>* b = KnownInts(in, 1);
    const int64_t partitions = HeaderInt("num_partitions"), replicas = HeaderInt("replica_count");
    if (op == "constant") {
      v = IntLiteral(in, count);
    } else if ((op == "partition-id" && replicas == 1) || (op == "replica-id" && partitions == 1)) {
      v = std::vector<int64_t>{rank_};  // the id that varies is the rank
    } else if (a && (op == "convert" || op == "reshape" || op == "bitcast" || op == "copy") &&
               static_cast<int64_t>(a->size()) == count) {
      v = *a;
    } else if (a && op == "broadcast" && a->size() == 1) {
      v = std::vector<int64_t>(count, (*a)[0]);
    } else if (a && op == "negate" && static_cast<int64_t>(a->size()) == count) {
      v = *a;
      for (int64_t& x : *v) x = -x;
    } else if (a && b && a->size() == b->size() && static_cast<int64_t>(a->size()) == count) {
      static const std::set<std::string> kOps = {"add",     "subtract", "multiply", "divide",
                                                 "maximum", "minimum",  "remainder"};
      if (!kOps.count(op)) return std::nullopt;
      v.emplace();
      for (size_t k = 0; k < a->size(); ++k) {
        const int64_t x = (*a)[k], y = (*b)[k];
        if ((op == "divide" || op == "remainder") && y == 0) return std::nullopt;
        int64_t r = 0;
        bool overflow = false;
        if (op == "add") overflow = __builtin_add_overflow(x, y, &r);
        if (op == "subtract") overflow = __builtin_sub_overflow(x, y, &r);
        if (op == "multiply") overflow = __builtin_mul_overflow(x, y, &r);
        // C semantics, as XLA's: division truncates, the remainder has the dividend's sign
        // (operands are within their types' ranges, so INT64_MIN / -1 cannot occur)
        if (op == "divide") r = x / y;
        if (op == "remainder") r = x % y;
        if (op == "maximum") r = std::max(x, y);
        if (op == "minimum") r = std::min(x, y);
        if (overflow) return std::nullopt;
        v->push_back(r);
      }
    } else if (op == "clamp" && a && b && KnownInts(in, 2) && a->size() == 1 &&
               KnownInts(in, 2)->size() == 1 && static_cast<int64_t>(b->size()) == count) {
      v.emplace();
      for (int64_t x : *b) v->push_back(std::min(std::max(x, (*a)[0]), (*KnownInts(in, 2))[0]));
    } else if (a && op == "dynamic-slice" && type.shape.size() == 1 && in.operands.size() == 2 &&
               b && b->size() == 1 && OperandType(in, 0).shape.size() == 1) {
      const int64_t size = type.shape[0].value(), n = static_cast<int64_t>(a->size());
      if (size > n) return std::nullopt;
      const int64_t start = std::min(std::max<int64_t>((*b)[0], 0), n - size);
      v = std::vector<int64_t>(a->begin() + start, a->begin() + start + size);
    }
    if (!v || static_cast<int64_t>(v->size()) != count) return std::nullopt;
    for (int64_t x : *v) {
      if (x < range->first || x > range->second) return std::nullopt;  // wraps: not folded
    }
    HVal out;
    if (type.shape.empty()) {
      const ir::Value value =
          type.dtype == ir::DType::kBool ? ir::Value((*v)[0] != 0) : ir::Value((*v)[0]);
      out = One(Emit(in, in.hlo_name, "aten::scalar_tensor", {value},
                     {{"dtype", ir::Value(type.dtype)}}, type));
      out.scalar = static_cast<double>((*v)[0]);
    } else if (std::all_of(v->begin(), v->end(), [&](int64_t x) { return x == v->front(); })) {
      // One value everywhere (a broadcast constant, a mask of all true): aten::full, which the
      // lowering and the lemmas read as the constant it is.
      const ir::Value value =
          type.dtype == ir::DType::kBool ? ir::Value(v->front() != 0) : ir::Value(v->front());
      std::vector<int64_t> sizes;
      for (const ir::Dim& d : type.shape) sizes.push_back(d.value());
      out = One(Emit(in, in.hlo_name, "aten::full", {Ints(sizes), value},
                     {{"dtype", ir::Value(type.dtype)}}, type));
    } else {
      ir::Node node;  // an array constant, its value not in the graph (reads use `ints`)
      node.kind = ir::NodeKind::kConstant;
      node.name = UniqueName(in.hlo_name);
      node.def_line = in.line;
      node.source = Source(in);
      node.outputs.push_back({node.name, type});
      out = One({graph_.AddNode(std::move(node)), 0});
    }
    out.ints = std::move(v);
    return out;
  }

  // The start indices of a dynamic-slice / dynamic-update-slice (operands from `first`: one
  // scalar per dimension, or one 1-D tensor), clamped as XLA clamps them so the slice of
  // `sizes` stays inside `dims`; nullopt when one is not known.
  std::optional<std::vector<int64_t>> StartIndices(const Instr& in, size_t first,
                                                   const std::vector<int64_t>& dims,
                                                   const std::vector<int64_t>& sizes) const {
    std::vector<int64_t> starts;
    for (size_t i = first; i < in.operands.size(); ++i) {
      const std::vector<int64_t>* known = KnownInts(in, i);
      if (!known) return std::nullopt;
      starts.insert(starts.end(), known->begin(), known->end());
    }
    if (starts.size() != dims.size()) {
      Fail(in, "needs one start index per operand dimension (" + std::to_string(dims.size()) +
                   "), has " + std::to_string(starts.size()));
    }
    for (size_t d = 0; d < dims.size(); ++d) {
      if (sizes[d] < 0 || sizes[d] > dims[d]) Fail(in, "the slice is larger than the operand");
      starts[d] = std::min(std::max<int64_t>(starts[d], 0), dims[d] - sizes[d]);
    }
    return starts;
  }

  // x[starts[d] : starts[d] + sizes[d]] on each dimension, as aten::slice nodes.
  ir::TensorRef SliceRef(const Instr& in, ir::TensorRef ref, const std::vector<int64_t>& starts,
                         const std::vector<int64_t>& sizes, const std::string& name,
                         const std::optional<ir::TensorType>& out) {
    const std::vector<int64_t> dims = Sizes(graph_.type(ref));
    std::vector<size_t> cut;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (starts[d] != 0 || sizes[d] != dims[d]) cut.push_back(d);
    }
    if (cut.empty()) return Emit(in, name, "aten::alias", {ref}, {}, out);
    for (size_t k = 0; k < cut.size(); ++k) {
      const size_t d = cut[k];
      const bool last = k + 1 == cut.size();
      ref = Emit(in, last ? name : name + "_d" + std::to_string(d), "aten::slice.Tensor",
                 {ref, static_cast<int64_t>(d), starts[d], starts[d] + sizes[d], int64_t{1}}, {},
                 last ? out : std::nullopt);
    }
    return ref;
  }

  // iota: 0, 1, ... along iota_dimension, an arange broadcast over the other dims.
  HVal Iota(const Instr& in) {
    const ir::TensorType out = TensorTypeOf(in);
    const std::vector<int64_t> dims = Sizes(out);
    const Attr* a = FindAttr(in, "iota_dimension");
    if (!a || a->value.size() != 1) Fail(in, "needs iota_dimension=d");
    const int64_t d = ToInt(a->value[0], file_, "iota_dimension");
    if (d < 0 || d >= static_cast<int64_t>(dims.size())) Fail(in, "iota_dimension is no dim");
    if (out.dtype == ir::DType::kBool || ir::IsComplex(out.dtype)) return Opaque(in);
    const ir::TensorType line{out.dtype, {ir::Dim(dims[d])}};
    if (dims.size() == 1) {
      return One(
          Emit(in, in.hlo_name, "aten::arange", {dims[d]}, {{"dtype", ir::Value(out.dtype)}}, out));
    }
    const ir::TensorRef range = Emit(in, in.hlo_name + "_range", "aten::arange", {dims[d]},
                                     {{"dtype", ir::Value(out.dtype)}}, line);
    std::vector<int64_t> shape(dims.size(), 1);
    shape[d] = dims[d];
    const ir::TensorRef shaped =
        Emit(in, in.hlo_name + "_rs", "aten::reshape", {range, Ints(shape)}, {}, std::nullopt);
    return One(Emit(in, in.hlo_name, "aten::expand", {shaped, Ints(dims)}, {}, out));
  }

  HVal DynamicSlice(const Instr& in) {
    const ir::TensorType out = TensorTypeOf(in);
    const ir::TensorRef x = OperandRef(in, 0);
    const std::vector<int64_t> sizes = IntList(in, "dynamic_slice_sizes", true);
    const std::vector<int64_t> dims = Sizes(graph_.type(x));
    if (sizes.size() != dims.size()) Fail(in, "needs one dynamic_slice_sizes entry per dim");
    const auto starts = StartIndices(in, 1, dims, sizes);
    if (!starts) return Opaque(in);  // offsets computed from data
    return One(SliceRef(in, x, *starts, sizes, in.hlo_name, out));
  }

  // The operand with `update` written at the (clamped) start indices: when the update spans
  // the operand on every dimension but one, cat(before, update, after) on that dimension.
  HVal DynamicUpdateSlice(const Instr& in) {
    const ir::TensorType out = TensorTypeOf(in);
    const ir::TensorRef x = OperandRef(in, 0), update = OperandRef(in, 1);
    const std::vector<int64_t> dims = Sizes(graph_.type(x)), sizes = Sizes(graph_.type(update));
    if (sizes.size() != dims.size()) Fail(in, "the update must have the operand's rank");
    const auto starts = StartIndices(in, 2, dims, sizes);
    if (!starts) return Opaque(in);
    std::vector<size_t> partial;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (sizes[d] != dims[d]) partial.push_back(d);
    }
    if (partial.empty()) return One(Emit(in, in.hlo_name, "aten::alias", {update}, {}, out));
    if (partial.size() != 1) return Opaque(in);
    const size_t d = partial[0];
    ir::Value::List pieces;
    std::vector<int64_t> zero(dims.size(), 0), head = dims, tail_start(dims.size(), 0);
    head[d] = (*starts)[d];
    if (head[d] > 0) {
      pieces.emplace_back(SliceRef(in, x, zero, head, in.hlo_name + "_head", std::nullopt));
    }
    pieces.emplace_back(update);
    std::vector<int64_t> tail = dims;
    tail_start[d] = (*starts)[d] + sizes[d];
    tail[d] = dims[d] - tail_start[d];
    if (tail[d] > 0) {
      pieces.emplace_back(SliceRef(in, x, tail_start, tail, in.hlo_name + "_tail", std::nullopt));
    }
    if (pieces.size() == 1) return One(Emit(in, in.hlo_name, "aten::alias", {update}, {}, out));
    return One(Emit(in, in.hlo_name, "aten::cat",
                    {ir::Value(std::move(pieces)), static_cast<int64_t>(d)}, {}, out));
  }

  // padding=low_high[_interior]x...: one [low, high, interior] per dimension.
  std::vector<std::array<int64_t, 3>> PaddingConfig(const Instr& in, size_t rank) const {
    const Attr* a = FindAttr(in, "padding");
    if (!a) {
      if (rank == 0) return {};
      Fail(in, "needs padding=low_high[_interior]x... (one entry per dimension: padding=0_0x1_2)");
    }
    std::string text;
    for (const Tok& t : a->value) text += t.text;
    auto bad = [&](const std::string& problem) {
      throw InputError(file_, a->line,
                       "'" + in.hlo_name + "' (pad): padding=" + text + ": " + problem +
                           " (expected low_high or low_high_interior per dimension, joined by "
                           "x: padding=0_0x1_2)");
    };
    std::vector<std::array<int64_t, 3>> config;
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('x', start);
      if (end == std::string::npos) end = text.size();
      const std::string entry = text.substr(start, end - start);
      std::array<int64_t, 3> c{0, 0, 0};
      size_t parts = 0, from = 0;
      while (from <= entry.size()) {
        size_t to = entry.find('_', from);
        if (to == std::string::npos) to = entry.size();
        const std::string part = entry.substr(from, to - from);
        const size_t digits = !part.empty() && part[0] == '-' ? 1 : 0;
        if (part.size() <= digits || part.size() > 15 ||
            part.find_first_not_of("0123456789", digits) != std::string::npos) {
          bad("'" + part + "' is not an integer");
        }
        if (parts >= 3) bad("an entry has more than three numbers");
        c[parts++] = std::stoll(part);
        from = to + 1;
      }
      if (parts < 2) bad("an entry needs low_high");
      config.push_back(c);
      start = end + 1;
    }
    if (config.size() != rank) {
      bad("has " + std::to_string(config.size()) + " entries for an operand of rank " +
          std::to_string(rank));
    }
    return config;
  }

  // pad with edge padding: the operand cut where low or high is negative (aten::slice.Tensor),
  // then on each padded dimension aten::cat(fill, x, fill), the fill an aten::full of the
  // padding value when it is a constant, else an aten::expand of it. Interior padding (zeros
  // between elements) is opaque.
  HVal Pad(const Instr& in) {
    const ir::TensorType out = TensorTypeOf(in);
    if (in.operands.size() != 2) Fail(in, "takes two operands: the operand and the padding value");
    ir::TensorRef x = OperandRef(in, 0);
    const HVal& value = Operand(in, 1);
    const ir::TensorRef value_ref = OperandRef(in, 1);
    const ir::TensorType xt = graph_.type(x);
    if (!graph_.type(value_ref).shape.empty() || graph_.type(value_ref).dtype != xt.dtype) {
      Fail(in, "the padding value must be a scalar of the operand's element type " +
                   std::string(ir::ShortName(xt.dtype)));
    }
    const std::vector<int64_t> dims = Sizes(xt);
    const std::vector<std::array<int64_t, 3>> config = PaddingConfig(in, dims.size());
    bool interior = false, identity = true, all_padding = false;
    ir::TensorType result{xt.dtype, {}};
    for (size_t d = 0; d < dims.size(); ++d) {
      const auto [low, high, inner] = config[d];
      if (inner < 0) Fail(in, "interior padding must not be negative");
      const int64_t n = dims[d];
      const int64_t size = low + high + n + (n > 0 ? (n - 1) * inner : 0);
      if (size < 0) {
        Fail(in, "padding dimension " + std::to_string(d) + " gives a negative size " +
                     std::to_string(size));
      }
      result.shape.push_back(size);
      interior = interior || inner != 0;
      identity = identity && low == 0 && high == 0;
      // cuts reaching past the operand leave only padding (of the other end) on this dim
      all_padding = all_padding || std::max<int64_t>(-low, 0) + std::max<int64_t>(-high, 0) >= n;
    }
    if (result != out) {
      Fail(in,
           "the padding gives " + result.ToString() + " but the HLO shape says " + out.ToString());
    }
    if (interior) return Opaque(in);
    if (identity) return One(Emit(in, in.hlo_name, "aten::alias", {x}, {}, out));
    // The padding value over `shape`.
    auto fill = [&](const std::string& name, const std::vector<int64_t>& shape,
                    const std::optional<ir::TensorType>& type) {
      if (value.scalar) {
        const double v = *value.scalar;
        const ir::Value scalar = ir::IsFloatingPoint(xt.dtype) ? ir::Value(v)
                                 : xt.dtype == ir::DType::kBool
                                     ? ir::Value(v != 0.0)
                                     : ir::Value(static_cast<int64_t>(v));
        return Emit(in, name, "aten::full", {Ints(shape), scalar}, {{"dtype", ir::Value(xt.dtype)}},
                    type);
      }
      return Emit(in, name, "aten::expand", {value_ref, Ints(shape)}, {}, type);
    };
    if (all_padding) return One(fill(in.hlo_name, Sizes(out), out));
    // The cuts first (each within the operand: all_padding is false), then the pads.
    std::vector<std::pair<bool, size_t>> steps;  // (cut, dim)
    for (size_t d = 0; d < dims.size(); ++d) {
      if (config[d][0] < 0 || config[d][1] < 0) steps.emplace_back(true, d);
    }
    for (size_t d = 0; d < dims.size(); ++d) {
      if (config[d][0] > 0 || config[d][1] > 0) steps.emplace_back(false, d);
    }
    for (size_t k = 0; k < steps.size(); ++k) {
      const auto [cut, d] = steps[k];
      const bool last = k + 1 == steps.size();
      const std::string name =
          last ? in.hlo_name : in.hlo_name + (cut ? "_cut" : "_pad") + std::to_string(d);
      const std::optional<ir::TensorType> type = last ? std::optional(out) : std::nullopt;
      const int64_t low = config[d][0], high = config[d][1];
      if (cut) {
        const int64_t n = graph_.type(x).shape[d].value();
        x = Emit(in, name, "aten::slice.Tensor",
                 {x, static_cast<int64_t>(d), std::max<int64_t>(-low, 0),
                  n - std::max<int64_t>(-high, 0), int64_t{1}},
                 {}, type);
        continue;
      }
      std::vector<int64_t> shape = Sizes(graph_.type(x));
      ir::Value::List pieces;
      if (low > 0) {
        shape[d] = low;
        pieces.emplace_back(fill(in.hlo_name + "_low" + std::to_string(d), shape, std::nullopt));
      }
      pieces.emplace_back(x);
      if (high > 0) {
        shape[d] = high;
        pieces.emplace_back(fill(in.hlo_name + "_high" + std::to_string(d), shape, std::nullopt));
      }
      x = Emit(in, name, "aten::cat", {ir::Value(std::move(pieces)), static_cast<int64_t>(d)}, {},
               type);
    }
    return One(x);
  }

  // sort, gather, scatter, reduce-window and collective-permute load opaque, but their
  // attributes are checked, so a malformed module is an error at its line rather than a node
  // whose signature reads wrong text: the computations they call exist, integer lists are
  // lists, source_target_pairs are pairs of ranks.
  void CheckOpaqueAttrs(const Instr& in) const {
    for (const char* key : {"to_apply", "calls", "condition", "body"}) {
      const Attr* a = FindAttr(in, key);
      if (!a) continue;
      if (a->value.size() != 1 || a->value[0].kind != Tok::kIdent ||
          !computations_.count(StripPercent(a->value[0].text))) {
        throw InputError(file_, a->line,
                         "'" + in.hlo_name + "' (" + in.opcode + "): " + key + "=" +
                             TokText(a->value) +
                             " names no computation of the module (define it, or fix the name)");
      }
    }
    static const std::map<std::string, std::vector<std::string>> kLists = {
        {"sort", {"dimensions"}},
        {"gather",
         {"offset_dims", "collapsed_slice_dims", "start_index_map", "slice_sizes",
          "operand_batching_dims", "start_indices_batching_dims"}},
        {"scatter",
         {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
          "input_batching_dims", "scatter_indices_batching_dims"}},
    };
    if (auto it = kLists.find(in.opcode); it != kLists.end()) {
      for (const std::string& key : it->second) (void)IntList(in, key, false);
    }
    if (in.opcode == "sort" || in.opcode == "scatter" || in.opcode == "reduce-window") {
      if (!FindAttr(in, "to_apply")) Fail(in, "needs to_apply=%computation");
    }
    if (in.opcode == "reduce-window") {
      const Attr* a = FindAttr(in, "window");
      if (!a || a->value.empty() || a->value[0].text != "{") {
        Fail(in, "needs window={size=... stride=...}");
      }
    }
    if (in.opcode == "gather" || in.opcode == "scatter") {
      const Attr* a = FindAttr(in, "index_vector_dim");
      if (a && a->value.size() != 1) {
        throw InputError(file_, a->line, "index_vector_dim must be one integer");
      }
      if (a) (void)ToInt(a->value[0], file_, "index_vector_dim");
    }
    if (in.opcode == "collective-permute" || in.opcode == "collective-permute-start") {
      const Attr* a = FindAttr(in, "source_target_pairs");
      if (!a) Fail(in, "needs source_target_pairs={{source,target},...}");
      size_t i = 0;
      const IntTree pairs = ParseIntTree(a->value, i, file_, "source_target_pairs");
      std::set<int64_t> sources, targets;
      bool ok = i == a->value.size() && pairs.ints.empty();
      for (const IntTree& pair : pairs.groups) {
        ok = ok && pair.groups.empty() && pair.ints.size() == 2 && pair.ints[0] >= 0 &&
             pair.ints[1] >= 0 && sources.insert(pair.ints[0]).second &&
             targets.insert(pair.ints[1]).second;
      }
      if (!ok) {
        throw InputError(file_, a->line,
                         "'" + in.hlo_name +
                             "' (collective-permute): source_target_pairs must be pairs of "
                             "device ids {{0,1},{1,0}}, each a source once and a target once");
      }
    }
  }

  HVal LowerTyped(const Instr& in) {
    const std::string& op = in.opcode;
    if (std::optional<HVal> folded = FoldInts(in)) return *folded;
    if (op != "tuple" && op != "get-tuple-element" &&
        (HasUnsigned(in.shape) || ReadsUnsigned(in))) {
      return Opaque(in);
    }
    if (op == "constant") return Constant(in);
    if (op == "fusion" || op == "call") return Inline(in);
    if (op == "custom-call" && IsIdentityCustomCall(in)) {
      return One(Emit(in, in.hlo_name, "aten::alias", {OperandRef(in, 0)}, {}, TensorTypeOf(in)));
    }
    if (op == "custom-call" && CustomCallTarget(in) == "AwsNeuronRmsNorm") {
      if (std::optional<HVal> v = NeuronRmsNorm(in)) return *v;
      return Opaque(in);
    }
    if (op == "gather") {
      CheckOpaqueAttrs(in);
      if (std::optional<HVal> v = IndexSelectGather(in)) return *v;
      return Opaque(in);
    }
    if (op == "tuple") {
      HVal v;
      v.tuple = true;
      for (size_t i = 0; i < in.operands.size(); ++i) v.elems.push_back(Operand(in, i));
      return v;
    }
    if (op == "get-tuple-element") {
      const HVal& t = Operand(in, 0);
      const Attr* a = FindAttr(in, "index");
      if (!a || a->value.size() != 1) Fail(in, "needs index=N");
      int64_t index = ToInt(a->value[0], file_, "index");
      if (!t.tuple || index < 0 || index >= static_cast<int64_t>(t.elems.size())) {
        Fail(in, "index " + std::to_string(index) + " is not an element of the operand tuple");
      }
      return t.elems[index];
    }
    if (op == "compare") return Compare(in);
    if (op == "broadcast") return Broadcast(in);
    if (op == "slice") return Slice(in);
    if (op == "dot") return Dot(in);
    if (op == "iota") return Iota(in);
    if (op == "dynamic-slice") return DynamicSlice(in);
    if (op == "dynamic-update-slice") return DynamicUpdateSlice(in);
    if (op == "reduce") return Reduce(in);
    if (op == "pad") return Pad(in);
    if (op == "all-reduce" || op == "all-gather" || op == "reduce-scatter" || op == "all-to-all") {
      return Collective(in);
    }
    if (op == "all-reduce-start" || op == "all-gather-start") return AsyncStart(in);
    if (op == "all-reduce-done" || op == "all-gather-done") return AsyncDone(in);
    static const std::set<std::string> kChecked = {"sort",
                                                   "gather",
                                                   "scatter",
                                                   "reduce-window",
                                                   "collective-permute",
                                                   "collective-permute-start"};
    if (kChecked.count(op)) {
      CheckOpaqueAttrs(in);
      return Opaque(in);
    }
    const ir::TensorType* out =
        in.shape.tuple || !in.shape.unsupported.empty() ? nullptr : &in.shape.type;
    if (out && op == "reshape") {
      return One(
          Emit(in, in.hlo_name, "aten::reshape", {OperandRef(in, 0), Ints(Sizes(*out))}, {}, *out));
    }
    if (out && op == "bitcast" && OperandType(in, 0).dtype == out->dtype) {
      return One(
          Emit(in, in.hlo_name, "aten::reshape", {OperandRef(in, 0), Ints(Sizes(*out))}, {}, *out));
    }
    if (out && op == "bitcast-convert" && OperandType(in, 0) == *out) {
      // the same element type (and so the same width and shape): the bits unchanged
      return One(Emit(in, in.hlo_name, "aten::alias", {OperandRef(in, 0)}, {}, *out));
    }
    if (out && op == "transpose") {
      return One(Emit(in, in.hlo_name, "aten::permute",
                      {OperandRef(in, 0), Ints(IntList(in, "dimensions", true))}, {}, *out));
    }
    if (out && op == "concatenate") {
      std::vector<int64_t> dims = IntList(in, "dimensions", true);
      if (dims.size() != 1) Fail(in, "needs dimensions={d}: one dimension");
      ir::Value::List pieces;
      for (size_t i = 0; i < in.operands.size(); ++i) pieces.emplace_back(OperandRef(in, i));
      return One(
          Emit(in, in.hlo_name, "aten::cat", {ir::Value(std::move(pieces)), dims[0]}, {}, *out));
    }
    if (out && op == "convert") {
      return One(Emit(in, in.hlo_name, "aten::_to_copy", {OperandRef(in, 0)},
                      {{"dtype", ir::Value(out->dtype)}}, *out));
    }
    if (out && op == "select") {
      // A numpy-style broadcast mask is passed unbroadcast (aten::where broadcasts it alike, and
      // the lemmas then see a mask that broadcasts along a sharded dim).
      const HVal& mask = Operand(in, 0);
      const ir::TensorRef cond = mask.broadcast_of ? *mask.broadcast_of : OperandRef(in, 0);
      return One(Emit(in, in.hlo_name, "aten::where.self",
                      {cond, OperandRef(in, 1), OperandRef(in, 2)}, {}, *out));
    }
    static const std::set<std::string> kElementwise = {"negate",
                                                       "abs",
                                                       "exponential",
                                                       "log",
                                                       "rsqrt",
                                                       "sqrt",
                                                       "tanh",
                                                       "logistic",
                                                       "not",
                                                       "copy",
                                                       "sine",
                                                       "cosine",
                                                       "add",
                                                       "subtract",
                                                       "multiply",
                                                       "divide",
                                                       "maximum",
                                                       "minimum",
                                                       "power",
                                                       "and",
                                                       "or",
                                                       "log-plus-one",
                                                       "exponential-minus-one",
                                                       "sign",
                                                       "floor",
                                                       "ceil",
                                                       "round-nearest-even"};
    if (out && kElementwise.count(op)) return Elementwise(in);
    return Opaque(in);
  }

  const Parser& p_;
  const std::string& file_;
  int32_t rank_;
  int32_t world_ = 0;
  std::map<std::string, const Computation*> computations_;
  std::map<std::string, HVal> values_;
  std::set<std::string> used_names_;
  mutable std::map<std::string, std::string> computation_texts_;  // ComputationText's, by name
  mutable std::map<std::string, int> callee_flags_;               // CalleeFlags of a computation
  int inline_depth_ = 0;
  std::vector<ir::NodeId> elided_constants_;  // constant({...}): inputs after the parameters
  ir::Graph graph_;
  GroupMap groups_;
};

}  // namespace

HloModule ParseHlo(std::string_view text, const std::string& file, const HloOptions& options) {
  Parser parser(Lex(text, file), file);
  parser.Module();
  Builder builder(parser, file, options);
  return builder.Build();
}

HloModule ReadHloFile(const std::string& path, const HloOptions& options) {
  return ParseHlo(ReadTextFile(path), path, options);
}

bool IsHloPath(const std::string& path) {
  auto ends = [&](const std::string& suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".hlo") || ends(".hlo.txt");
}

}  // namespace gg::frontend
