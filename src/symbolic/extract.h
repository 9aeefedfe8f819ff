// Extractor: picks the cheapest term in an e-class by bottom-up cost analysis.
//
// The cost of a node is a user function of the node and its children's best costs; +infinity
// means "not allowed" (the tensor layer uses it to forbid ops that are not clean), so a class
// whose every node is forbidden has no extraction. Ties go to the smaller node (ENode order), so
// the result is deterministic.
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "symbolic/egraph.h"

namespace gg::symbolic {

inline constexpr double kInfiniteCost = std::numeric_limits<double>::infinity();

// Cost of `node` given the best costs of its children (in child order). Must be >= every child
// cost plus something positive for nodes with children, or extraction could pick a cycle.
using CostFunction = std::function<double(const ENode& node, std::span<const double> children)>;

// 1 per node (term size).
CostFunction AstSize();
// node_cost(node) + sum of children; node_cost may return kInfiniteCost.
CostFunction AdditiveCost(std::function<double(const ENode&)> node_cost);

struct Extracted {
  RecExpr expr;
  double cost = kInfiniteCost;
};

class Extractor {
 public:
  // Computes best costs for every class; requires graph.clean().
  Extractor(const EGraph& graph, CostFunction cost);
  double Cost(ClassId id) const { return best_[graph_.Find(id)].cost; }
  // The best term of the class, or nullopt when every choice costs infinity.
  std::optional<Extracted> Extract(ClassId id) const;

 private:
  struct Best {
    double cost = kInfiniteCost;
    size_t index = 0;  // into the class's Nodes()
  };
  const EGraph& graph_;
  std::vector<Best> best_;  // by class id (roots)
};

}  // namespace gg::symbolic
