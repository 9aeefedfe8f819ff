#include "ir/liveness.h"

namespace gg::ir {

std::map<TensorRef, size_t> LastUses(const Graph& graph) {
  std::map<TensorRef, size_t> last_use;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      last_use[{static_cast<NodeId>(i), static_cast<int32_t>(o)}] = i;
    }
    for (const TensorRef& ref : node.TensorInputs()) last_use[ref] = i;
  }
  return last_use;
}

}  // namespace gg::ir
