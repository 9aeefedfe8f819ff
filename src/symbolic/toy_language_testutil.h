// Toy arithmetic language for the e-graph engine's tests and benchmark: integer literals,
// symbols, binary arithmetic and variadic ops, plus a constant-folding analysis.
#pragma once

#include <optional>

#include "symbolic/egraph.h"

namespace gg::symbolic::toy {

struct Language {
  OpTable ops;
  OpId num, sym, add, mul, shl, neg, sum, concat, mm, div;
  OpId a, b, c, x, y;  // zero-ary symbols
  Language() {
    num = ops.AddPayloadLeaf("num");
    sym = ops.AddPayloadLeaf("sym");
    add = ops.Add("add", 2);
    mul = ops.Add("mul", 2);
    shl = ops.Add("shl", 2);
    neg = ops.Add("neg", 1);
    sum = ops.Add("sum", kVariadic);
    concat = ops.Add("concat", kVariadic);
    mm = ops.Add("mm", 2);
    div = ops.Add("div", 2);
    a = ops.Add("a", 0);
    b = ops.Add("b", 0);
    c = ops.Add("c", 0);
    x = ops.Add("x", 0);
    y = ops.Add("y", 0);
  }
};

// Constant folding over num/add/mul/neg: Data is the known value; Modify adds `(num k)`.
class ConstFold : public AnalysisOf<ConstFold, std::optional<int64_t>> {
 public:
  explicit ConstFold(const Language& lang) : lang_(lang) {}
  Data Make(const EGraph& graph, const ENode& node) {
    if (node.op == lang_.num) return node.payload;
    auto arg = [&](size_t i) { return (*this)[node.children[i]]; };
    if (node.op == lang_.neg && arg(0)) return -*arg(0);
    if ((node.op == lang_.add || node.op == lang_.mul) && arg(0) && arg(1)) {
      return node.op == lang_.add ? *arg(0) + *arg(1) : *arg(0) * *arg(1);
    }
    return std::nullopt;
  }
  bool Merge(Data& into, Data from) {
    if (!into && from) {
      into = from;
      return true;
    }
    return false;  // two different constants in one class would be a bug in the rules
  }
  void Modify(EGraph& graph, ClassId id) override {
    if (const Data& value = (*this)[id]) {
      ClassId literal = graph.AddUncanonical(ENode{lang_.num, *value, {}});
      graph.Union(id, literal, graph.InternReason("constant-fold"));
    }
  }

 private:
  const Language& lang_;
};

}  // namespace gg::symbolic::toy
