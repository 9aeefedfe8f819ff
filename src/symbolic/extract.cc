// Bottom-up cost extraction (fixpoint over classes in id order) and term reconstruction.
#include "symbolic/extract.h"

#include <stdexcept>
#include <unordered_map>

namespace gg::symbolic {

CostFunction AstSize() {
  return [](const ENode&, std::span<const double> children) {
    double total = 1;
    for (double c : children) total += c;
    return total;
  };
}

CostFunction AdditiveCost(std::function<double(const ENode&)> node_cost) {
  return [node_cost = std::move(node_cost)](const ENode& node, std::span<const double> children) {
    double total = node_cost(node);
    for (double c : children) total += c;
    return total;
  };
}

Extractor::Extractor(const EGraph& graph, CostFunction cost) : graph_(graph) {
  if (!graph.clean()) throw std::logic_error("Extractor: rebuild the e-graph first");
  std::vector<ClassId> classes = graph.ClassIds();
  best_.assign(classes.empty() ? 0 : classes.back() + 1, Best{});
  std::vector<double> child_costs;
  // Costs only decrease, and a node's index only changes at equal cost toward smaller indices,
  // so this terminates; the pass bound guards against cost functions that break the contract.
  for (size_t pass = 0; pass <= classes.size() + 1; ++pass) {
    bool changed = false;
    for (ClassId c : classes) {
      std::span<const ENode> nodes = graph.Nodes(c);
      Best& best = best_[c];
      for (size_t i = 0; i < nodes.size(); ++i) {
        child_costs.clear();
        bool feasible = true;
        for (ClassId child : nodes[i].children) {
          double child_cost = best_[graph.Find(child)].cost;
          if (child_cost == kInfiniteCost) {
            feasible = false;
            break;
          }
          child_costs.push_back(child_cost);
        }
        if (!feasible) continue;
        double node_cost = cost(nodes[i], child_costs);
        if (node_cost < best.cost || (node_cost == best.cost && node_cost != kInfiniteCost &&
                                      i < best.index)) {
          best = Best{node_cost, i};
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
}

std::optional<Extracted> Extractor::Extract(ClassId id) const {
  ClassId root = graph_.Find(id);
  if (best_[root].cost == kInfiniteCost) return std::nullopt;
  Extracted result;
  result.cost = best_[root].cost;
  std::unordered_map<ClassId, uint32_t> index_of;  // class -> index in the RecExpr
  std::unordered_map<ClassId, bool> on_stack;
  // Iterative post-order over chosen nodes (terms can be deep).
  std::vector<std::pair<ClassId, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [c, expanded] = stack.back();
    stack.pop_back();
    if (index_of.count(c)) continue;
    const ENode& node = graph_.Nodes(c)[best_[c].index];
    if (!expanded) {
      if (on_stack[c]) throw std::logic_error("Extractor: cost function chose a cycle");
      on_stack[c] = true;
      stack.push_back({c, true});
      for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) {
        ClassId child = graph_.Find(*it);
        if (!index_of.count(child)) stack.push_back({child, false});
      }
      continue;
    }
    ENode out{node.op, node.payload, {}};
    for (ClassId child : node.children) out.children.push_back(index_of.at(graph_.Find(child)));
    index_of[c] = result.expr.Add(std::move(out));
    on_stack[c] = false;
  }
  return result;
}

}  // namespace gg::symbolic
