#include "runtime/relation_eval.h"

#include <stdexcept>
#include <type_traits>
#include <variant>

#include "runtime/collectives.h"

namespace gg::runtime {

at::Tensor EvalRelExpr(const symbolic::RelExpr& expr, const DValueLookup& lookup) {
  auto children = [&](const std::vector<symbolic::RelExpr>& list) {
    std::vector<at::Tensor> values;
    for (const symbolic::RelExpr& child : list) values.push_back(EvalRelExpr(child, lookup));
    return values;
  };
  return std::visit(
      [&](const auto& node) -> at::Tensor {
        using T = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<T, symbolic::DTensor>) {
          at::Tensor value = lookup(node.rank, node.tensor);
          if (!value.defined()) {
            throw std::invalid_argument("no value for " + node.name + "@" +
                                        std::to_string(node.rank));
          }
          return value;
        } else if constexpr (std::is_same_v<T, symbolic::Concat>) {
          return at::cat(children(node.children), node.dim);
        } else if constexpr (std::is_same_v<T, symbolic::Slice>) {
          at::Tensor child = EvalRelExpr(node.child, lookup);
          return child.narrow(node.dim, node.start, node.end - node.start);
        } else if constexpr (std::is_same_v<T, symbolic::Sum>) {
          return ReduceTensors(children(node.children), "sum");
        } else if constexpr (std::is_same_v<T, symbolic::Max>) {
          return ReduceTensors(children(node.children), "max");
        } else if constexpr (std::is_same_v<T, symbolic::Min>) {
          return ReduceTensors(children(node.children), "min");
        } else if constexpr (std::is_same_v<T, symbolic::Scale>) {
          return EvalRelExpr(node.child, lookup) * node.factor;
        } else if constexpr (std::is_same_v<T, symbolic::Reshape>) {
          return EvalRelExpr(node.child, lookup).reshape(node.shape);
        } else if constexpr (std::is_same_v<T, symbolic::Expand>) {
          return EvalRelExpr(node.child, lookup).expand(node.sizes).contiguous();
        } else if constexpr (std::is_same_v<T, symbolic::Transpose>) {
          return EvalRelExpr(node.child, lookup).transpose(node.d0, node.d1);
        } else {
          return EvalRelExpr(node.child, lookup).permute(node.perm);
        }
      },
      expr.node().kind);
}

}  // namespace gg::runtime
