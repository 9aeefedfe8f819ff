// OpSchema parsing, argument binding (BoundArgs) and the ShapeContext accessors.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include "ir/op_registry.h"

namespace gg::ir {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

[[noreturn]] void Malformed(const std::string& text, const std::string& why) {
  throw std::invalid_argument("malformed operator schema '" + text + "': " + why);
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// Splits on commas that are not inside (), [] or quotes.
std::vector<std::string> SplitTopLevel(const std::string& text, const std::string& schema) {
  std::vector<std::string> parts;
  int depth = 0;
  char quote = 0;
  std::string current;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      if (--depth < 0) Malformed(schema, "unbalanced brackets");
    } else if (c == ',' && depth == 0) {
      parts.push_back(Trim(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (quote || depth != 0) Malformed(schema, "unbalanced brackets or quotes");
  if (!Trim(current).empty() || !parts.empty()) parts.push_back(Trim(current));
  return parts;
}

// Finds the ')' matching the '(' at `open`, skipping quoted text.
size_t MatchingParen(const std::string& text, size_t open) {
  int depth = 0;
  char quote = 0;
  for (size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth == 0) return i;
    }
  }
  return std::string::npos;
}

const std::set<std::string>& BaseTypes() {
  static const std::set<std::string> kTypes = {
      "Tensor", "int",    "SymInt",       "float",     "bool",    "str",     "Scalar",
      "ScalarType", "Layout", "Device", "MemoryFormat", "Generator", "Dimname", "Storage",
      "Stream", "Any",    "complex",      "t",         "QScheme", "SymBool", "SymFloat",
      // torch.distributed's script classes (__torch__.torch.classes.c10d.*): a process group
      // is written as its name (a string), a Work is no value GraphGuard reads
      "ProcessGroup", "Work"};
  return kTypes;
}

struct ParsedType {
  std::string type;  // without alias annotation
  bool mutated = false;
};

// "Tensor(a!)" -> Tensor, mutated; "Tensor(a -> *)[]" -> Tensor[]; "Tensor!?" -> Tensor?, mutated.
ParsedType ParseType(const std::string& written, const std::string& schema) {
  ParsedType out;
  std::string t = written;
  size_t open = t.find('(');
  if (open != std::string::npos) {
    size_t close = t.find(')', open);
    if (close == std::string::npos) Malformed(schema, "unclosed alias annotation in '" + written + "'");
    std::string annotation = t.substr(open + 1, close - open - 1);
    if (annotation.empty()) Malformed(schema, "empty alias annotation in '" + written + "'");
    out.mutated = annotation.find('!') != std::string::npos;
    t = t.substr(0, open) + t.substr(close + 1);
  }
  size_t bang = t.find('!');
  if (bang != std::string::npos) {
    out.mutated = true;
    t.erase(bang, 1);
  }
  // Validate: Base, then optional '?', optional "[N]" or "[]", optional '?'.
  std::string base = t;
  size_t pos = 0;
  while (pos < base.size() && (std::isalnum(static_cast<unsigned char>(base[pos])) ||
                               base[pos] == '_')) {
    ++pos;
  }
  std::string rest = base.substr(pos);
  base = base.substr(0, pos);
  if (!BaseTypes().count(base)) Malformed(schema, "unknown type '" + written + "'");
  size_t i = 0;
  if (i < rest.size() && rest[i] == '?') ++i;
  if (i < rest.size() && rest[i] == '[') {
    size_t close = rest.find(']', i);
    if (close == std::string::npos) Malformed(schema, "bad list type '" + written + "'");
    for (size_t k = i + 1; k < close; ++k) {
      if (!std::isdigit(static_cast<unsigned char>(rest[k]))) {
        Malformed(schema, "bad list size in '" + written + "'");
      }
    }
    i = close + 1;
  }
  if (i < rest.size() && rest[i] == '?') ++i;
  if (i != rest.size()) Malformed(schema, "bad type '" + written + "'");
  out.type = t;
  return out;
}

bool IsListType(const std::string& type) { return type.find('[') != std::string::npos; }

std::optional<Value> ParseScalarLiteral(const std::string& text) {
  if (text == "None") return Value(None{});
  if (text == "True") return Value(true);
  if (text == "False") return Value(false);
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
      text.back() == text.front()) {
    return Value(text.substr(1, text.size() - 2));
  }
  if (text == "inf") return Value(std::numeric_limits<double>::infinity());
  if (text == "-inf") return Value(-std::numeric_limits<double>::infinity());
  if (text == "nan") return Value(std::numeric_limits<double>::quiet_NaN());
  if (text.empty()) return std::nullopt;
  bool is_int = true;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (!(std::isdigit(static_cast<unsigned char>(c)) || (i == 0 && c == '-'))) is_int = false;
  }
  if (is_int && text != "-") {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno == 0 && *end == '\0') return Value(static_cast<int64_t>(v));
    return std::nullopt;
  }
  if (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-' || text[0] == '.') {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end && *end == '\0') return Value(v);
    return std::nullopt;
  }
  if (IsIdentifier(text)) return Value(EnumValue{text});
  return std::nullopt;
}

Value ParseDefault(const std::string& text, const std::string& type, const std::string& schema) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    Value::List items;
    for (const std::string& item : SplitTopLevel(text.substr(1, text.size() - 2), schema)) {
      auto v = ParseScalarLiteral(item);
      if (!v || v->is_list()) Malformed(schema, "bad list default '" + text + "'");
      items.push_back(*v);
    }
    return Value(std::move(items));
  }
  auto v = ParseScalarLiteral(text);
  if (!v) Malformed(schema, "bad default value '" + text + "'");
  // Reduction enums written by name in ATen schemas ("int reduction=Mean").
  if (v->is_enum() && type.rfind("int", 0) == 0) {
    if (v->as_enum().name == "Mean") return Value(int64_t{1});
    if (v->as_enum().name == "Sum") return Value(int64_t{2});
  }
  if (type.rfind("float", 0) == 0 && !IsListType(type) && v->is_int()) {
    return Value(static_cast<double>(v->as_int()));
  }
  return *v;
}

std::string OpLabel(const OpSchema& schema) { return schema.name.ToString(); }

}  // namespace

OpSchema OpSchema::Parse(const std::string& text) {
  OpSchema schema;
  size_t open = text.find('(');
  if (open == std::string::npos) Malformed(text, "no argument list");
  std::string qualified = Trim(text.substr(0, open));
  auto name = OpName::Parse(qualified);
  if (!name || qualified.find("::") == std::string::npos) {
    Malformed(text, "bad operator name '" + qualified + "'");
  }
  schema.name = *name;
  if (schema.name.overload.empty()) schema.name.overload = "default";
  size_t close = MatchingParen(text, open);
  if (close == std::string::npos) Malformed(text, "unclosed argument list");

  bool kwarg_only = false;
  std::set<std::string> names;
  for (const std::string& item : SplitTopLevel(text.substr(open + 1, close - open - 1), text)) {
    if (item.empty()) Malformed(text, "empty argument");
    if (item == "*") {
      if (kwarg_only) Malformed(text, "'*' given twice");
      kwarg_only = true;
      continue;
    }
    std::string decl = item, default_text;
    // The default starts at the first '=' outside brackets (alias annotations hold no '=').
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      decl = Trim(item.substr(0, eq));
      default_text = Trim(item.substr(eq + 1));
      if (default_text.empty()) Malformed(text, "empty default in '" + item + "'");
    }
    // "Tensor(a -> *) self": the name is the last word; the type is everything before it.
    size_t space = decl.find_last_of(' ');
    if (space == std::string::npos) Malformed(text, "argument '" + item + "' has no name");
    ArgSchema arg;
    arg.name = Trim(decl.substr(space + 1));
    if (!IsIdentifier(arg.name)) Malformed(text, "bad argument name '" + arg.name + "'");
    if (!names.insert(arg.name).second) Malformed(text, "argument '" + arg.name + "' twice");
    ParsedType type = ParseType(Trim(decl.substr(0, space)), text);
    arg.type = type.type;
    arg.mutated = type.mutated;
    arg.kwarg_only = kwarg_only;
    if (!default_text.empty()) arg.default_value = ParseDefault(default_text, arg.type, text);
    schema.args.push_back(std::move(arg));
  }

  std::string rest = Trim(text.substr(close + 1));
  if (rest.rfind("->", 0) != 0) Malformed(text, "expected '-> returns' after the arguments");
  std::string returns = Trim(rest.substr(2));
  if (returns.empty()) Malformed(text, "empty return type");
  std::vector<std::string> items;
  if (returns.front() == '(' && MatchingParen(returns, 0) == returns.size() - 1) {
    items = SplitTopLevel(returns.substr(1, returns.size() - 2), text);
  } else {
    items.push_back(returns);
  }
  for (const std::string& item : items) {
    if (item.empty()) Malformed(text, "empty return");
    // A return may be named: "Tensor values". Alias annotations may hold spaces ("Tensor(a -> *)").
    std::string type_text = item, ret_name;
    size_t close_annot = item.find(')');
    size_t space = item.find_last_of(' ');
    if (space != std::string::npos && (close_annot == std::string::npos || space > close_annot)) {
      std::string candidate = Trim(item.substr(space + 1));
      std::string before = Trim(item.substr(0, space));
      if (IsIdentifier(candidate) && !before.empty() && before.back() != '>') {
        ret_name = candidate;
        type_text = before;
      }
    }
    schema.returns.push_back(ParseType(type_text, text).type);
    schema.return_names.push_back(ret_name);
  }
  return schema;
}

int OpSchema::ArgIndex(const std::string& arg_name) const {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].name == arg_name) return static_cast<int>(i);
  }
  return -1;
}

BoundArgs::BoundArgs(const OpSchema& schema, const Node& node) : schema_(&schema) {
  const std::string label = OpLabel(schema);
  size_t first = 0;
  // auto_functionalized keeps the operator reference as its first argument.
  if (node.functionalized && !node.args.empty() && node.args[0].is_op_ref()) first = 1;
  size_t positional = 0;
  for (size_t i = first; i < node.args.size(); ++i, ++positional) {
    if (positional >= schema.args.size()) {
      throw ShapeError(label + ": too many positional arguments (" +
                       std::to_string(node.args.size() - first) + " given, schema has " +
                       std::to_string(schema.args.size()) + ")");
    }
    const ArgSchema& arg = schema.args[positional];
    if (arg.kwarg_only) {
      throw ShapeError(label + ": argument '" + arg.name + "' is keyword-only but was given by "
                       "position");
    }
    values_[arg.name] = node.args[i];
  }
  for (const NamedArg& kw : node.kwargs) {
    if (schema.ArgIndex(kw.name) < 0) {
      throw ShapeError(label + ": unknown argument '" + kw.name + "'");
    }
    if (!values_.emplace(kw.name, kw.value).second) {
      throw ShapeError(label + ": argument '" + kw.name + "' given twice");
    }
  }
  for (const ArgSchema& arg : schema.args) {
    if (values_.count(arg.name)) continue;
    if (arg.default_value) {
      values_[arg.name] = *arg.default_value;
    } else if (!arg.type.empty() && arg.type.back() == '?') {
      values_[arg.name] = Value(None{});
    } else {
      throw ShapeError(label + ": missing argument '" + arg.name + "'");
    }
  }
}

const Value& BoundArgs::operator[](const std::string& arg_name) const {
  auto it = values_.find(arg_name);
  if (it == values_.end()) {
    throw ShapeError(OpLabel(*schema_) + ": no argument named '" + arg_name + "'");
  }
  return it->second;
}

bool BoundArgs::has(const std::string& arg_name) const { return values_.count(arg_name) > 0; }

namespace {

const TensorType& TypeOfRef(const ShapeContext& ctx, const TensorRef& ref,
                            const std::string& arg_name) {
  const std::string label = OpLabel(ctx.schema);
  if (ref.node < 0 || static_cast<size_t>(ref.node) >= ctx.graph.nodes.size()) {
    throw ShapeError(label + ": argument '" + arg_name + "' refers to a missing node");
  }
  const Node& producer = ctx.graph.node(ref.node);
  if (ref.output < 0 || static_cast<size_t>(ref.output) >= producer.outputs.size() ||
      !producer.outputs[ref.output].type) {
    throw ShapeError(label + ": argument '" + arg_name + "' (" + ctx.graph.ValueName(ref) +
                     ") has no tensor type");
  }
  return *producer.outputs[ref.output].type;
}

}  // namespace

const TensorType& ShapeContext::TensorArg(const std::string& arg_name) const {
  const Value& v = args[arg_name];
  if (!v.is_tensor()) {
    throw ShapeError(OpLabel(schema) + ": argument '" + arg_name + "' is not a tensor");
  }
  return TypeOfRef(*this, v.as_tensor(), arg_name);
}

std::vector<TensorType> ShapeContext::TensorListArg(const std::string& arg_name) const {
  const Value& v = args[arg_name];
  if (!v.is_list()) {
    throw ShapeError(OpLabel(schema) + ": argument '" + arg_name + "' is not a list of tensors");
  }
  std::vector<TensorType> out;
  for (const Value& item : v.as_list()) {
    if (!item.is_tensor()) {
      throw ShapeError(OpLabel(schema) + ": argument '" + arg_name +
                       "' holds a non-tensor element");
    }
    out.push_back(TypeOfRef(*this, item.as_tensor(), arg_name));
  }
  return out;
}

}  // namespace gg::ir
