// Pattern parsing, compilation to a bind/compare machine, e-matching and RHS instantiation.
#include "symbolic/pattern.h"

#include <algorithm>
#include <charconv>

#include "util/diagnostic.h"

namespace gg::symbolic {

// ---- s-expressions ---------------------------------------------------------------------------

namespace {

constexpr std::string_view kEllipsis = "...";

std::vector<std::string> Tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '(' || c == ')') {
      tokens.emplace_back(1, c);
      ++i;
    } else {
      size_t start = i;
      while (i < text.size() && text[i] != '(' && text[i] != ')' && text[i] != ' ' &&
             text[i] != '\t' && text[i] != '\n' && text[i] != '\r') {
        ++i;
      }
      std::string_view atom = text.substr(start, i - start);
      if (atom.size() > kEllipsis.size() && atom.ends_with(kEllipsis)) {
        tokens.emplace_back(atom.substr(0, atom.size() - kEllipsis.size()));
        tokens.emplace_back(kEllipsis);
      } else {
        tokens.emplace_back(atom);
      }
    }
  }
  return tokens;
}

struct SExprParser {
  const std::vector<std::string>& tokens;
  const std::string& file;
  int line;
  size_t pos = 0;

  [[noreturn]] void Fail(const std::string& problem) { throw InputError(file, line, problem); }

  SExpr Item() {
    if (pos >= tokens.size()) Fail("unbalanced parentheses: missing ')'");
    const std::string& tok = tokens[pos++];
    SExpr e;
    if (tok == "(") {
      e.is_list = true;
      while (true) {
        if (pos >= tokens.size()) Fail("unbalanced parentheses: missing ')'");
        if (tokens[pos] == ")") {
          ++pos;
          break;
        }
        e.items.push_back(Item());
      }
      if (e.items.empty()) Fail("empty list '()'");
    } else if (tok == ")") {
      Fail("unbalanced parentheses: unexpected ')'");
    } else if (tok == kEllipsis) {
      Fail("'...' must follow an element");
    } else {
      e.atom = tok;
    }
    if (pos < tokens.size() && tokens[pos] == kEllipsis) {
      e.repeated = true;
      ++pos;
    }
    return e;
  }
};

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

SExpr ParseSExpr(std::string_view text, const std::string& file, int line) {
  std::vector<std::string> tokens = Tokenize(text);
  SExprParser parser{tokens, file, line};
  if (tokens.empty()) parser.Fail("empty expression");
  SExpr e = parser.Item();
  if (parser.pos != tokens.size()) {
    parser.Fail(tokens[parser.pos] == ")" ? "unbalanced parentheses: unexpected ')'"
                                          : "trailing input after expression: '" +
                                                tokens[parser.pos] + "'");
  }
  return e;
}

// ---- building patterns -----------------------------------------------------------------------

namespace {

enum class Role { kTerm, kLhs, kRhs };

struct PatternBuilder {
  const OpTable& ops;
  Pattern& pattern;
  Role role;
  const std::string& file;
  int line;
  bool in_repeat = false;
  std::vector<uint32_t>* zip_vars = nullptr;  // collects list vars inside a repetition

  [[noreturn]] void Fail(const std::string& problem) { throw InputError(file, line, problem); }

  uint32_t Push(PatternNode node) {
    pattern.nodes.push_back(std::move(node));
    return static_cast<uint32_t>(pattern.nodes.size()) - 1;
  }

  uint32_t Var(const std::string& atom, bool list) {
    std::string name = atom.substr(1);
    if (name.empty()) Fail("variable without a name: '?'");
    if (role == Role::kTerm) Fail("variable ?" + name + " in a term");
    std::optional<uint32_t> index = pattern.VarIndex(name);
    PatternNode node;
    if (role == Role::kLhs) {
      if (index) {
        if (list || pattern.var_is_list[*index]) {
          Fail("list variable ?" + name + " may occur only once in a left-hand side");
        }
      } else {
        index = static_cast<uint32_t>(pattern.var_names.size());
        pattern.var_names.push_back(name);
        pattern.var_is_list.push_back(list);
      }
      node.kind = list ? PatternNode::Kind::kListVar : PatternNode::Kind::kVar;
    } else {
      if (!index) Fail("unbound variable ?" + name + " (not bound by the left-hand side)");
      bool is_list = pattern.var_is_list[*index];
      if (list) {
        if (!is_list) Fail("?" + name + " is not a list variable; '...' needs one");
        if (in_repeat) Fail("?" + name + "... inside a repetition (nested lists)");
        node.kind = PatternNode::Kind::kListVar;
      } else if (is_list) {
        if (!in_repeat) {
          Fail("list variable ?" + name + " needs '...' or an enclosing repetition");
        }
        node.kind = PatternNode::Kind::kListElem;
        if (std::find(zip_vars->begin(), zip_vars->end(), *index) == zip_vars->end()) {
          zip_vars->push_back(*index);
        }
      } else {
        node.kind = PatternNode::Kind::kVar;
      }
    }
    node.var = *index;
    return Push(std::move(node));
  }

  uint32_t Literal(int64_t value) {
    std::optional<OpId> lit = ops.literal_op();
    if (!lit) Fail("integer literal but the language has no literal op");
    PatternNode node;
    node.op = *lit;
    node.payload = value;
    return Push(std::move(node));
  }

  OpId LookupOp(const std::string& name) {
    std::optional<OpId> op = ops.Find(name);
    if (!op) Fail("unknown op '" + name + "'");
    return *op;
  }

  uint32_t Build(const SExpr& e) {
    if (!e.is_list) {
      const std::string& atom = e.atom;
      if (atom[0] == '?') return Var(atom, e.repeated);
      if (e.repeated) Fail("'...' after '" + atom + "' (only list variables repeat)");
      if (auto value = ParseInt(atom)) return Literal(*value);
      OpId op = LookupOp(atom);
      const OpTable::OpInfo& info = ops.Info(op);
      if (info.payload_leaf) Fail("op '" + atom + "' needs a payload: (" + atom + " N)");
      if (info.arity > 0) {
        Fail("op '" + atom + "' takes " + std::to_string(info.arity) + " children, got 0");
      }
      PatternNode node;
      node.op = op;
      return Push(std::move(node));
    }
    const SExpr& head = e.items[0];
    if (head.is_list || head.repeated) Fail("a list must start with an op name");
    OpId op = LookupOp(head.atom);
    const OpTable::OpInfo& info = ops.Info(op);
    if (info.payload_leaf) {
      std::optional<int64_t> value;
      if (e.items.size() == 2 && !e.items[1].is_list) value = ParseInt(e.items[1].atom);
      if (!value || e.items[1].repeated) {
        Fail("payload op '" + head.atom + "' takes one integer: (" + head.atom + " N)");
      }
      PatternNode node;
      node.op = op;
      node.payload = *value;
      return Push(std::move(node));
    }
    bool variadic = info.arity == kVariadic;
    std::vector<uint32_t> children;
    for (size_t k = 1; k < e.items.size(); ++k) {
      const SExpr& item = e.items[k];
      if (item.repeated && !variadic) {
        Fail("'...' inside fixed-arity op '" + head.atom + "'");
      }
      if (item.repeated && !item.is_list) {
        if (item.atom[0] == '?' && role == Role::kLhs && k + 1 != e.items.size()) {
          Fail("list variable " + item.atom + "... must be the last child");
        }
        children.push_back(Build(item));
      } else if (item.repeated) {
        if (role != Role::kRhs) Fail("repetition '...' is only allowed in right-hand sides");
        if (in_repeat) Fail("nested repetition '...'");
        PatternNode rep;
        rep.kind = PatternNode::Kind::kRepeat;
        in_repeat = true;
        zip_vars = &rep.zip_vars;
        SExpr body = item;
        body.repeated = false;
        uint32_t inner = Build(body);
        in_repeat = false;
        zip_vars = nullptr;
        if (rep.zip_vars.empty()) Fail("repetition '...' mentions no list variable");
        rep.children.push_back(inner);
        children.push_back(Push(std::move(rep)));
      } else {
        children.push_back(Build(item));
      }
    }
    if (!variadic && static_cast<int>(children.size()) != info.arity) {
      Fail("op '" + head.atom + "' takes " + std::to_string(info.arity) + " children, got " +
           std::to_string(children.size()));
    }
    PatternNode node;
    node.op = op;
    node.children = std::move(children);
    return Push(std::move(node));
  }
};

void Compile(Pattern& p, uint32_t index, uint32_t reg, std::vector<int64_t>& var_reg) {
  const PatternNode& node = p.nodes[index];
  if (node.kind == PatternNode::Kind::kVar) {
    if (var_reg[node.var] < 0) {
      var_reg[node.var] = reg;
    } else {
      MatchInstr cmp;
      cmp.kind = MatchInstr::Kind::kCompare;
      cmp.in_reg = static_cast<uint32_t>(var_reg[node.var]);
      cmp.out_reg = reg;
      p.program.push_back(cmp);
    }
    return;
  }
  MatchInstr bind;
  bind.op = node.op;
  bind.in_reg = reg;
  bind.check_payload = node.children.empty();  // leaves compare payloads (0 for plain leaves)
  bind.payload = node.payload;
  uint32_t fixed = static_cast<uint32_t>(node.children.size());
  if (fixed > 0 && p.nodes[node.children.back()].kind == PatternNode::Kind::kListVar) {
    bind.has_list = true;
    bind.list_var = p.nodes[node.children.back()].var;
    --fixed;
  }
  bind.num_fixed = fixed;
  bind.out_reg = p.num_regs;
  p.num_regs += fixed;
  p.program.push_back(bind);
  uint32_t out = bind.out_reg;
  for (uint32_t k = 0; k < fixed; ++k) Compile(p, node.children[k], out + k, var_reg);
}

}  // namespace

std::optional<uint32_t> Pattern::VarIndex(std::string_view name) const {
  for (size_t i = 0; i < var_names.size(); ++i) {
    if (var_names[i] == name) return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}

std::vector<uint32_t> Pattern::UsedVars() const {
  std::vector<uint32_t> used;
  for (const PatternNode& n : nodes) {
    if (n.kind == PatternNode::Kind::kVar || n.kind == PatternNode::Kind::kListVar ||
        n.kind == PatternNode::Kind::kListElem) {
      used.push_back(n.var);
    }
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  return used;
}

namespace {
void PrintPattern(const Pattern& p, const OpTable& ops, uint32_t index, std::string& out) {
  const PatternNode& n = p.nodes[index];
  switch (n.kind) {
    case PatternNode::Kind::kVar:
    case PatternNode::Kind::kListElem:
      out += "?" + p.var_names[n.var];
      return;
    case PatternNode::Kind::kListVar:
      out += "?" + p.var_names[n.var] + "...";
      return;
    case PatternNode::Kind::kRepeat:
      PrintPattern(p, ops, n.children[0], out);
      out += "...";
      return;
    case PatternNode::Kind::kOp:
      break;
  }
  const OpTable::OpInfo& info = ops.Info(n.op);
  if (info.payload_leaf) {
    out += "(" + info.name + " " + std::to_string(n.payload) + ")";
  } else if (n.children.empty() && info.arity == 0) {
    out += info.name;
  } else {
    out += "(" + info.name;
    for (uint32_t c : n.children) {
      out += ' ';
      PrintPattern(p, ops, c, out);
    }
    out += ')';
  }
}
}  // namespace

std::string Pattern::ToString(const OpTable& ops) const {
  std::string out;
  if (!nodes.empty()) PrintPattern(*this, ops, root(), out);
  return out;
}

Pattern ParseLhs(std::string_view text, const OpTable& ops, const std::string& file, int line) {
  SExpr e = ParseSExpr(text, file, line);
  Pattern p;
  p.text = std::string(text);
  PatternBuilder builder{ops, p, Role::kLhs, file, line};
  if (e.repeated) builder.Fail("'...' on a whole pattern");
  builder.Build(e);
  if (p.root_node().kind != PatternNode::Kind::kOp) {
    builder.Fail("a left-hand side must be an op, not a bare variable");
  }
  std::vector<int64_t> var_reg(p.var_names.size(), -1);
  p.num_regs = 1;
  Compile(p, p.root(), 0, var_reg);
  p.var_regs.assign(var_reg.size(), 0);
  for (size_t v = 0; v < var_reg.size(); ++v) {
    if (var_reg[v] >= 0) p.var_regs[v] = static_cast<uint32_t>(var_reg[v]);
  }
  return p;
}

Pattern ParseRhs(std::string_view text, const Pattern& lhs, const OpTable& ops,
                 const std::string& file, int line) {
  SExpr e = ParseSExpr(text, file, line);
  Pattern p;
  p.text = std::string(text);
  p.var_names = lhs.var_names;
  p.var_is_list = lhs.var_is_list;
  PatternBuilder builder{ops, p, Role::kRhs, file, line};
  if (e.repeated) builder.Fail("'...' on a whole pattern");
  builder.Build(e);
  if (p.root_node().kind == PatternNode::Kind::kListVar) {
    builder.Fail("a right-hand side cannot be a bare list");
  }
  return p;
}

RecExpr ParseTerm(std::string_view text, const OpTable& ops, const std::string& file, int line) {
  SExpr e = ParseSExpr(text, file, line);
  Pattern p;
  PatternBuilder builder{ops, p, Role::kTerm, file, line};
  if (e.repeated) builder.Fail("'...' in a term");
  builder.Build(e);
  RecExpr expr;
  for (const PatternNode& n : p.nodes) {
    expr.Add(ENode{n.op, n.payload, std::vector<ClassId>(n.children.begin(), n.children.end())});
  }
  return expr;
}

// ---- e-matching ------------------------------------------------------------------------------

namespace {

struct Machine {
  const EGraph& graph;
  const Pattern& pattern;
  const std::vector<uint32_t>& var_regs;
  std::vector<Match>* out;
  size_t stop_at;
  std::vector<ClassId> regs;
  std::vector<std::pair<const ENode*, uint32_t>> lists;  // per variable: node, first index
  ClassId root_class = kNoClass;
  ClassId root_node_id = kNoClass;

  // Returns false once the limit is reached.
  bool Run(size_t pc) {
    if (pc == pattern.program.size()) return Yield();
    const MatchInstr& in = pattern.program[pc];
    if (in.kind == MatchInstr::Kind::kCompare) {
      return regs[in.in_reg] != regs[in.out_reg] || Run(pc + 1);
    }
    std::span<const ENode> nodes = graph.NodesWithOp(regs[in.in_reg], in.op);
    for (const ENode& node : nodes) {
      if (in.check_payload && node.payload != in.payload) continue;
      size_t n = node.children.size();
      if (in.has_list ? n < in.num_fixed : n != in.num_fixed) continue;
      for (uint32_t k = 0; k < in.num_fixed; ++k) regs[in.out_reg + k] = node.children[k];
      if (in.has_list) lists[in.list_var] = {&node, in.num_fixed};
      if (pc == 0) {
        std::span<const ENode> all = graph.Nodes(root_class);
        root_node_id = graph.NodeIds(root_class)[static_cast<size_t>(&node - all.data())];
      }
      if (!Run(pc + 1)) return false;
    }
    return true;
  }

  bool Yield() {
    Match m;
    m.eclass = root_class;
    m.node_id = root_node_id;
    size_t nvars = pattern.var_names.size();
    m.subst.vars.assign(nvars, kNoClass);
    bool any_list = false;
    for (size_t v = 0; v < nvars; ++v) {
      if (pattern.var_is_list[v]) {
        any_list = true;
      } else {
        m.subst.vars[v] = regs[var_regs[v]];
      }
    }
    if (any_list) {
      m.subst.lists.resize(nvars);
      for (size_t v = 0; v < nvars; ++v) {
        if (!pattern.var_is_list[v]) continue;
        const auto& [node, first] = lists[v];
        m.subst.lists[v].assign(node->children.begin() + first, node->children.end());
      }
    }
    out->push_back(std::move(m));
    return out->size() < stop_at;
  }
};

bool RunOn(const EGraph& graph, const Pattern& lhs, ClassId eclass, size_t stop_at,
           std::vector<Match>* out) {
  Machine m{graph, lhs, lhs.var_regs, out, stop_at, std::vector<ClassId>(lhs.num_regs, kNoClass),
            std::vector<std::pair<const ENode*, uint32_t>>(lhs.var_names.size())};
  m.root_class = graph.Find(eclass);
  m.regs[0] = m.root_class;
  return m.Run(0);
}

}  // namespace

size_t SearchClass(const EGraph& graph, const Pattern& lhs, ClassId eclass, size_t limit,
                   std::vector<Match>* out) {
  size_t before = out->size();
  if (limit == 0 || lhs.program.empty()) return 0;
  RunOn(graph, lhs, eclass, before + limit, out);
  return out->size() - before;
}

size_t Search(const EGraph& graph, const Pattern& lhs, size_t limit, std::vector<Match>* out) {
  size_t before = out->size();
  if (limit == 0 || lhs.program.empty()) return 0;
  for (ClassId c : graph.ClassesWithOp(lhs.root_node().op)) {
    if (!RunOn(graph, lhs, c, before + limit, out)) break;
  }
  return out->size() - before;
}

// ---- instantiation ---------------------------------------------------------------------------

namespace {
bool Instantiate(EGraph& graph, const Pattern& rhs, const Subst& subst, uint32_t index,
                 size_t element, std::vector<ClassId>& out) {
  const PatternNode& node = rhs.nodes[index];
  switch (node.kind) {
    case PatternNode::Kind::kVar:
      out.push_back(subst.vars[node.var]);
      return true;
    case PatternNode::Kind::kListElem:
      out.push_back(subst.lists[node.var][element]);
      return true;
    case PatternNode::Kind::kListVar: {
      const std::vector<ClassId>& list = subst.lists[node.var];
      out.insert(out.end(), list.begin(), list.end());
      return true;
    }
    case PatternNode::Kind::kRepeat: {
      size_t length = subst.lists[node.zip_vars[0]].size();
      for (uint32_t v : node.zip_vars) {
        if (subst.lists[v].size() != length) return false;
      }
      for (size_t e = 0; e < length; ++e) {
        if (!Instantiate(graph, rhs, subst, node.children[0], e, out)) return false;
      }
      return true;
    }
    case PatternNode::Kind::kOp:
      break;
  }
  ENode enode{node.op, node.payload, {}};
  enode.children.reserve(node.children.size());
  for (uint32_t c : node.children) {
    if (!Instantiate(graph, rhs, subst, c, element, enode.children)) return false;
  }
  out.push_back(graph.AddUncanonical(std::move(enode)));
  return true;
}
}  // namespace

std::optional<ClassId> Instantiate(EGraph& graph, const Pattern& rhs, const Subst& subst) {
  // Check zipped lengths first so that a failed instantiation adds nothing.
  for (const PatternNode& node : rhs.nodes) {
    if (node.kind != PatternNode::Kind::kRepeat) continue;
    size_t length = subst.lists[node.zip_vars[0]].size();
    for (uint32_t v : node.zip_vars) {
      if (subst.lists[v].size() != length) return std::nullopt;
    }
  }
  std::vector<ClassId> out;
  if (!Instantiate(graph, rhs, subst, rhs.root(), 0, out)) return std::nullopt;
  return out.back();
}

}  // namespace gg::symbolic
