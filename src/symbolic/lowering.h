// Lowering: a captured ATen node as terms of the tensor language, one term per output.
//
// The table in lowering.cc holds one entry per operator (what `aten::addmm` means in the
// language: `(add self (mm mat1 mat2))` when beta = alpha = 1, ...). Operators without an entry,
// or whose arguments fall outside what an entry covers, become `opaque` terms: equal only to the
// same computation on equal inputs. Collectives are not lowered here: their meaning spans ranks,
// so relation inference builds them from the process groups.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "symbolic/egraph.h"
#include "symbolic/tensor_lang.h"

namespace gg::symbolic {

// The class holding a tensor input of the node being lowered.
using TensorClassFn = std::function<ClassId(ir::TensorRef)>;

struct LoweredNode {
  // One entry per node output: the class of its term, or nullopt for non-tensor outputs.
  std::vector<std::optional<ClassId>> outputs;
  // Outputs that fell back to an opaque term (for reports: "no lemma can look inside").
  std::vector<bool> opaque;
};

// True when the node is a collective (or wait) that inference lowers across ranks.
bool IsCollective(const ir::Node& node);

// The registry names (OpName::ToString() with overload, e.g. "aten::add.Tensor") of every
// operator that has a lowering, sorted. What the lowering self-tests must cover.
std::vector<std::string> LoweredOperatorNames();
// The C++ lowerings by name (sorted), and whether one exists: every registry entry that names a
// lowering (ir::OpLowering::kNamed) must find it, and every one must be named by some entry
// (lowering_test.cc checks both).
std::vector<std::string> NamedLoweringNames();
bool HasNamedLowering(const std::string& name);

// Lowers `node` of `graph` into `egraph` (whose analysis is a TensorAnalysis). `salt` makes
// terms of nondeterministic operators (empty, random ops with unknown semantics) unique: two such
// nodes are never equated. Every produced term is checked against the node's annotated output
// type; a term whose type disagrees is replaced by an opaque term (the lowering table is then
// wrong for that case, which the tests watch for).
// `constants` gives the values of graph constants by name (a spec's `constant` statements):
// a scalar argument read from such a constant (through lift_fresh_copy) is that number; without a
// value the reading node stays opaque.
// `rng_positional` is the spec's `rng positional` (docs/relations.md): a random draw (dropout in
// training with 0 < p < 1) lowers by its table entry (`dropout_mask`, a function of the element's
// position); without it the node is opaque and unique, never equal to another draw. What draws
// nothing (dropout in eval mode or with p = 0: the identity) lowers either way.
using ConstantValues = std::map<std::string, double>;
LoweredNode LowerNode(EGraph& egraph, const TensorAnalysis& analysis, const ir::Graph& graph,
                      ir::NodeId node_id, const TensorClassFn& tensor_class,
                      const std::string& salt, const ConstantValues* constants = nullptr,
                      bool rng_positional = false);

// The tensor inputs the lowering of a node reads (all of them when it is opaque; none of an
// overwritten buffer). Inference requires relations only for these.
std::vector<ir::TensorRef> ReadInputs(const ir::Graph& graph, ir::NodeId node_id,
                                      const ConstantValues* constants = nullptr);

// Whether every tensor output of `lowered` is one of `input_classes` (canonical) or a class of
// relation ops only (a view, slice, split, cat...): the node is structural.
bool IsRelationOnly(const EGraph& egraph, const LoweredNode& lowered,
                    const std::set<ClassId>& input_classes);

// IsRelationOnly for a node lowered on a scratch e-graph (nothing is added to any other graph).
bool LowersToRelationOps(const ir::Graph& graph, ir::NodeId node_id,
                         const ConstantValues* constants = nullptr);

// Lowers one collective call given the classes of its inputs (one per member of its group, in
// member order) and the position of the calling rank among the members: all-reduce to a
// reduction over ranks (sumr, maxr, minr; avg scales the sum), all-gather to a concat,
// reduce-scatter to this member's slice of the sum, broadcast to the source's input, all-to-all
// to the concat of this member's chunk of every input (uneven literal split sizes given every
// member's call, `member_nodes` in member order: each member's own input_split_sizes say where
// its chunks start). nullopt when the call cannot be said in the tensor language (another
// reduction, uneven splits without the members' calls or disagreeing, dynamic sizes).
std::optional<ClassId> LowerCollective(EGraph& egraph, const ir::Node& node,
                                       const std::vector<ClassId>& member_inputs, size_t position,
                                       const ir::TensorType& out_type,
                                       const std::vector<const ir::Node*>& member_nodes = {});

}  // namespace gg::symbolic
