// Relation spec: the human-written file that says how the sequential model's inputs relate to the
// distributed program's inputs, which intermediate relations to assume, and which output
// relations are expected. One spec describes a model family for any tensor-parallel degree and
// layer count: sizes come from `let` bindings over shapes and the world, repeated layers from
// cyclic input patterns. The language is documented in docs/relations.md.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "symbolic/premise.h"
#include "symbolic/relation.h"

namespace gg::symbolic {

struct SpecAst;  // the parsed statements (relation_spec.cc)

class RelationSpec {
 public:
  // Parses spec text; `file` names it in errors. Syntax errors are gg::InputError(file, line, ..).
  static RelationSpec Parse(const std::string& text, const std::string& file);
  // Reads and parses a spec file (an unreadable file is an InputError too).
  static RelationSpec Load(const std::string& path);

  const std::string& file() const;
  const SpecAst& ast() const { return *ast_; }

 private:
  std::shared_ptr<const SpecAst> ast_;
};

// An S tensor a `cut` statement makes a leaf of the checked region: inference reads nothing
// upstream of it. `related`: the cut states a relation (in SpecResult::assumed, a premise);
// without one, a checked tensor that depends on it cannot be proved.
struct CutPoint {
  ir::TensorRef s_tensor;
  bool related = false;
  std::string origin;  // "file:line: <statement>"
};

// The concrete relations a spec means for one (S graph, D program) pair.
struct SpecResult {
  // Every S input a checked tensor depends on (all of them when nothing is checked), one or more
  // relations each; inputs outside the checked region may have none.
  std::vector<Relation> inputs;
  std::vector<Relation> assumed;  // `assume` and `cut` relations on intermediate tensors
  // The relations to prove: of the outputs the spec lists (`output`) and of intermediate
  // tensors (`expect`).
  std::vector<Relation> expected_outputs;
  std::vector<CutPoint> cuts;  // every `cut` tensor, in statement order
  // Values of graph constants (`self._tensor_constantN`, whose values captures omit) by name, in S
  // and every rank of D: every element of the constant equals the value.
  std::map<std::string, double> constants;
  // Every premise the spec states, in statement order: each assumed relation ("assume"), each
  // constant value ("constant"), and what other statements take as given.
  std::vector<Premise> premises;
  // The RNG model the spec states (`rng positional`), or "" when it states none: random
  // operators are then unique terms, never equal to anything (docs/relations.md).
  std::string rng_model;
};

// Evaluates `spec` against the graphs: binds lets and groups, resolves selectors, expands
// shorthands and comprehensions, and checks that every relation's shape equals its S tensor's
// shape, that no S input is covered twice and that every S input the checked tensors depend on
// (not looking past cuts and assumed tensors) is covered. Errors are gg::InputError naming the
// spec file and line.
SpecResult EvaluateSpec(const RelationSpec& spec, const ir::Graph& s_graph,
                        const ir::Program& d_program);

}  // namespace gg::symbolic
