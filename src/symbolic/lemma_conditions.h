// Named side conditions and appliers (computed right-hand sides) of the tensor lemma catalogue.
//
// Conditions read the facts of TensorAnalysis (types, integer constants) of the matched classes;
// they refer to pattern variables by fixed names (?x ?y ?xs ?ys ?d ?e ...) documented per entry
// in lemma_conditions.cc. Appliers compute right-hand sides that need arithmetic on dims and
// offsets (slice of concat, reshape of concat, tiling, ...). Both are looked up by the rule files.
#pragma once

#include <optional>

#include "symbolic/egraph.h"
#include "symbolic/rewrite.h"
#include "symbolic/tensor_lang.h"

namespace gg::symbolic {

// The TensorAnalysis facts of a class; throws std::logic_error when the graph has no
// TensorAnalysis attached (lemmas only run on tensor-language e-graphs).
const TensorFacts& FactsOf(const EGraph& graph, ClassId id);

// Whether every element of class c is known finite, read from its nodes up to `depth` deep (the
// online-softmax merges need finite masks: a fully masked row's log-sum-exp is 0 in the kernel).
bool FiniteValued(const EGraph& graph, ClassId c, int depth = 8);
// Whether the number v written into a tensor of dtype stays finite (-1e9 into f16 is -inf).
bool FitsFinite(double v, ir::DType dtype);

// All named conditions / appliers the catalogue's rule files may use.
const ConditionTable& LemmaConditions();
const ApplierTable& LemmaAppliers();
// The tensor language plus the two tables, for LoadRules.
RuleContext LemmaRuleContext();

}  // namespace gg::symbolic
