// Pattern: s-expression patterns over an OpTable, e-matching (LHS) and instantiation (RHS).
//
// Syntax: `(mm ?a (concat ?d ?xs...))`. `?x` matches any class; `(num 0)` or a bare `0` matches
// a class containing that constant; `?xs...` (last child of a variadic op) binds the remaining
// children as a list. Right-hand sides may also repeat a child per list element,
// `(concat ?d (mm ?a ?xs)...)`, zipping every list variable the child mentions.
// LHS patterns compile to a small register machine (bind / compare) run over the classes that
// contain the root op, in increasing class order, so matches come out deterministically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbolic/egraph.h"

namespace gg::symbolic {

// A parsed s-expression (shared by patterns, terms and rule files).
struct SExpr {
  bool is_list = false;
  std::string atom;          // when !is_list
  std::vector<SExpr> items;  // when is_list
  bool repeated = false;     // followed by `...`
};
// Throws gg::InputError(file, line, ...) on unbalanced parentheses or trailing input.
SExpr ParseSExpr(std::string_view text, const std::string& file, int line);

// Parses a ground term (`(add (num 1) x)`), throwing gg::InputError on unknown ops or arities.
RecExpr ParseTerm(std::string_view text, const OpTable& ops, const std::string& file = "",
                  int line = 0);

struct PatternNode {
  enum class Kind : uint8_t {
    kVar,       // ?x
    kListVar,   // ?xs...  (trailing children; in an RHS: splices the whole list)
    kListElem,  // ?xs inside an RHS repetition: the current element
    kOp,        // (op children...) or a payload leaf / literal
    kRepeat,    // RHS only: children[0] instantiated once per list element
  };
  Kind kind = Kind::kOp;
  OpId op = 0;
  int64_t payload = 0;
  uint32_t var = 0;                 // kVar, kListVar, kListElem
  std::vector<uint32_t> children;   // indices into Pattern::nodes
  std::vector<uint32_t> zip_vars;   // kRepeat: list variables the repeated child mentions
};

// One instruction of the compiled matcher.
struct MatchInstr {
  enum class Kind : uint8_t { kBind, kCompare };
  Kind kind = Kind::kBind;
  OpId op = 0;
  bool check_payload = false;
  bool has_list = false;       // a trailing ?xs... follows the fixed children
  int64_t payload = 0;
  uint32_t in_reg = 0;         // kBind: class to scan; kCompare: first register
  uint32_t out_reg = 0;        // kBind: first child register; kCompare: second register
  uint32_t num_fixed = 0;      // fixed children of the node
  uint32_t list_var = 0;       // when has_list
};

struct Pattern {
  std::vector<PatternNode> nodes;  // children precede parents; root is last
  std::vector<std::string> var_names;
  std::vector<bool> var_is_list;
  std::string text;  // as written (used to generate reverse rules)
  // LHS only: the compiled matcher.
  std::vector<MatchInstr> program;
  uint32_t num_regs = 0;
  std::vector<uint32_t> var_regs;  // register of each class variable's first occurrence

  uint32_t root() const { return static_cast<uint32_t>(nodes.size()) - 1; }
  const PatternNode& root_node() const { return nodes.back(); }
  std::optional<uint32_t> VarIndex(std::string_view name) const;  // name without '?'
  // Variables the pattern mentions (indices), increasing.
  std::vector<uint32_t> UsedVars() const;
  std::string ToString(const OpTable& ops) const;
};

// Parses a left-hand side (matchable; no repetition; root must be an op).
Pattern ParseLhs(std::string_view text, const OpTable& ops, const std::string& file = "",
                 int line = 0);
// Parses a right-hand side whose variables must be bound by `lhs`.
Pattern ParseRhs(std::string_view text, const Pattern& lhs, const OpTable& ops,
                 const std::string& file = "", int line = 0);

// Variable bindings of one match: `vars[i]` for class variables, `lists[i]` for list variables
// (`lists` is empty when the pattern has none).
struct Subst {
  std::vector<ClassId> vars;
  std::vector<std::vector<ClassId>> lists;
};

struct Match {
  ClassId eclass = kNoClass;   // canonical class matched by the root
  ClassId node_id = kNoClass;  // original id of the root e-node that matched (explanations)
  Subst subst;
};

// Appends the matches of `lhs` in every class (or in one class) to `out`, stopping once `out`
// holds `limit` matches. Requires graph.clean(). Returns the number appended.
size_t Search(const EGraph& graph, const Pattern& lhs, size_t limit, std::vector<Match>* out);
size_t SearchClass(const EGraph& graph, const Pattern& lhs, ClassId eclass, size_t limit,
                   std::vector<Match>* out);

// Adds the RHS instantiated under `subst`; returns the original node id of its root (a class id
// when the root is a variable), or nullopt when zipped lists differ in length.
std::optional<ClassId> Instantiate(EGraph& graph, const Pattern& rhs, const Subst& subst);

}  // namespace gg::symbolic
