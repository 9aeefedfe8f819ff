#include "frontend/resize.h"

#include <sstream>

#include "frontend/node_check.h"
#include "ir/op_registry.h"
#include "util/diagnostic.h"

namespace gg::frontend {
namespace {

int64_t Mapped(int64_t value, const ResizeMap& sizes) {
  auto it = sizes.find(value);
  return it == sizes.end() ? value : it->second;
}

void ResizeType(std::optional<ir::TensorType>& type, const ResizeMap& sizes) {
  if (!type) return;
  for (ir::Dim& d : type->shape) {
    if (d.is_static()) d = ir::Dim(Mapped(d.value(), sizes));
  }
}

// Whether an argument of this schema type holds sizes: symbolic ints and int lists do (view
// sizes, slice bounds, split sizes), and so do integer literals where a Scalar or a Tensor goes
// (range bounds, and the vocabulary bounds and offsets a vocabulary-parallel embedding compares
// and shifts token ids with); plain `int`
// arguments are dimension indices, group sizes or flags and stay.
bool HoldsSizes(const ir::ArgSchema& arg, const ir::OpName&) {
  const std::string& type = arg.type;
  if (type.find("SymInt") != std::string::npos) return true;
  if (type.rfind("int[", 0) == 0 || type.rfind("int?[", 0) == 0) return true;
  // An integer literal in a Scalar or Tensor position is a number (`sub.Tensor(ids, 49152)`).
  return type.rfind("Scalar", 0) == 0 || type.rfind("Tensor", 0) == 0;
}

}  // namespace

ResizeMap ParseResizeMap(const std::string& text, const std::string& origin) {
  ResizeMap sizes;
  std::stringstream items(text);
  std::string item;
  auto positive = [&](const std::string& number) {
    size_t used = 0;
    int64_t value = 0;
    try {
      value = std::stoll(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (number.empty() || used != number.size() || value <= 0) {
      throw InputError(origin, 0,
                       "resize entry '" + item + "': sizes are positive integers (OLD=NEW,...)");
    }
    return value;
  };
  while (std::getline(items, item, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw InputError(origin, 0, "resize entry '" + item + "' is not OLD=NEW");
    }
    int64_t from = positive(item.substr(0, eq));
    int64_t to = positive(item.substr(eq + 1));
    if (!sizes.emplace(from, to).second) {
      throw InputError(origin, 0, "resize map names " + std::to_string(from) + " twice");
    }
  }
  if (sizes.empty() || text.back() == ',') {
    throw InputError(origin, 0, "resize map '" + text + "' is not OLD=NEW,...");
  }
  return sizes;
}

std::string ResizeMapText(const ResizeMap& sizes) {
  std::string text;
  for (const auto& [from, to] : sizes) {
    text += (text.empty() ? "" : ",") + std::to_string(from) + "=" + std::to_string(to);
  }
  return text;
}

namespace {

// The integer slots of a node's size arguments that the map changed: (argument, path) pairs are
// flattened to pointers into the node, with the value before and after.
struct MappedSlot {
  ir::Value* value;
  int64_t before;
  int64_t after;
};

void CollectSlots(ir::Value& value, const ResizeMap& sizes, std::vector<MappedSlot>* slots) {
  if (value.is_int()) {
    auto it = sizes.find(value.as_int());
    if (it != sizes.end()) slots->push_back({&value, it->first, it->second});
  } else if (value.is_list()) {
    for (ir::Value& item : value.as_list()) CollectSlots(item, sizes, slots);
  }
}

std::vector<MappedSlot> SizeSlots(ir::Node& node, const ResizeMap& sizes, const std::string& file) {
  std::vector<MappedSlot> slots;
  if (node.kind != ir::NodeKind::kOperator) return slots;
  if (IsOpaqueNode(node)) {
    throw InputError(file, node.def_line,
                     "cannot resize " + DescribeNode(node) +
                         ": the operator is unknown to GraphGuard (loaded opaque from its "
                         "annotation), so its output types cannot be recomputed; resize without "
                         "it or add the operator to the registry in src/ir/ops_*.cc");
  }
  const ir::OpInfo& info = FindOperator(node, file, node.def_line);
  const std::vector<ir::ArgSchema>& schema = info.schema.args;
  for (size_t i = 0; i < node.args.size() && i < schema.size(); ++i) {
    if (HoldsSizes(schema[i], node.op)) CollectSlots(node.args[i], sizes, &slots);
  }
  for (ir::NamedArg& kwarg : node.kwargs) {
    for (const ir::ArgSchema& arg : schema) {
      if (arg.name == kwarg.name && HoldsSizes(arg, node.op)) {
        CollectSlots(kwarg.value, sizes, &slots);
      }
    }
  }
  return slots;
}

using Inferred = std::optional<std::vector<std::optional<ir::TensorType>>>;

// Output dims equal to the first tensor input's dims at the same position: a view that keeps a
// leading dim keeps its extent, which decides between two size lists of the same element count.
int Alignment(const ir::Graph& graph, const ir::Node& node, const Inferred& inferred) {
  std::vector<ir::TensorRef> inputs = node.TensorInputs();
  if (inputs.empty() || !inferred || inferred->empty() || !(*inferred)[0]) return 0;
  const std::optional<ir::TensorType>& in =
      graph.node(inputs[0].node).outputs[inputs[0].output].type;
  if (!in) return 0;
  int score = 0;
  for (size_t i = 0; i < in->shape.size() && i < (*inferred)[0]->shape.size(); ++i) {
    score += in->shape[i] == (*inferred)[0]->shape[i];
  }
  return score;
}

// Whether `got` differs from `original` only where the map says a dim may change.
bool OnlyMappedDims(const ir::TensorType& original, const ir::TensorType& got,
                    const ResizeMap& sizes) {
  if (original.dtype != got.dtype || original.shape.size() != got.shape.size()) return false;
  for (size_t i = 0; i < got.shape.size(); ++i) {
    const ir::Dim& o = original.shape[i];
    if (o == got.shape[i]) continue;
    if (!o.is_static() || !got.shape[i].is_static()) return false;
    auto it = sizes.find(o.value());
    if (it == sizes.end() || it->second != got.shape[i].value()) return false;
  }
  return true;
}

}  // namespace

ir::Graph ResizeGraph(const ir::Graph& graph, const ResizeMap& sizes,
                      const std::map<std::string, std::vector<int32_t>>& groups) {
  ir::Graph resized = graph;
  const std::string& file = graph.file;
  int32_t default_group_size = 1;
  for (const auto& [name, members] : groups) {
    default_group_size =
        std::max<int32_t>(default_group_size, static_cast<int32_t>(members.size()));
  }
  const std::string context = "after resizing (" + ResizeMapText(sizes) + "): ";
  const std::string hint = " (is an extent derived from a resized one missing from the map?)";
  for (size_t id = 0; id < resized.nodes.size(); ++id) {
    ir::Node& node = resized.nodes[id];
    const ir::Node& original = graph.nodes[id];
    if (node.kind != ir::NodeKind::kOperator) {
      for (ir::NodeOutput& out : node.outputs) {
        ResizeType(out.type, sizes);
        std::string why;
        if (out.type && !ir::ParseTensorType(out.type->ToString(), &why)) {
          throw InputError(file, node.def_line, context + "'" + node.name + "': " + why);
        }
      }
      continue;
    }
    // Every mapped size literal is resized; when the shape rule then rejects the node (an extent
    // such as 96 that is batch x heads in one place and 3 x head_dim in another), the fewest
    // literals are put back, preferring the choice that keeps the input's leading dims.
    std::vector<MappedSlot> slots = SizeSlots(node, sizes, file);
    if (slots.size() > 12) slots.resize(12);  // 4096 choices at most
    auto attempt = [&](uint32_t reverted) -> Inferred {
      for (size_t k = 0; k < slots.size(); ++k) {
        *slots[k].value = ir::Value((reverted >> k) & 1u ? slots[k].before : slots[k].after);
      }
      try {
        return InferNodeTypes(resized, node, groups, default_group_size, file, node.def_line);
      } catch (const InputError&) {
        return std::nullopt;
      }
    };
    Inferred inferred;
    std::string first_error;
    try {
      for (MappedSlot& slot : slots) *slot.value = ir::Value(slot.after);
      inferred = InferNodeTypes(resized, node, groups, default_group_size, file, node.def_line);
    } catch (const InputError& e) {
      first_error = e.problem();
    }
    if (!first_error.empty()) {
      std::vector<uint32_t> best;
      int best_count = 0;
      int best_score = -1;
      for (uint32_t reverted = 1; reverted < (1u << slots.size()); ++reverted) {
        int count = __builtin_popcount(reverted);
        if (!best.empty() && count > best_count) continue;
        Inferred trial = attempt(reverted);
        if (!trial) continue;
        int score = Alignment(resized, node, trial);
        if (best.empty() || count < best_count || score > best_score) {
          best = {reverted};
          best_count = count;
          best_score = score;
        } else if (score == best_score) {
          best.push_back(reverted);
        }
      }
      if (best.size() != 1) {
        throw InputError(file, node.def_line,
                         context + first_error +
                             (best.empty() ? hint : " (several size choices fit; ambiguous)"));
      }
      inferred = attempt(best[0]);
    }
    if (!inferred) {
      for (ir::NodeOutput& out : node.outputs) ResizeType(out.type, sizes);
      continue;
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      std::optional<ir::TensorType>& type = node.outputs[o].type;
      const std::optional<ir::TensorType>& got =
          o < inferred->size() ? (*inferred)[o] : std::nullopt;
      if (!type || !got) {
        ResizeType(type, sizes);
        continue;
      }
      if (!OnlyMappedDims(*original.outputs[o].type, *got, sizes)) {
        throw InputError(file, node.def_line,
                         context + DescribeNode(node) + " output " + std::to_string(o) + " is " +
                             got->ToString() + ", which is not its annotation " +
                             original.outputs[o].type->ToString() +
                             " with only the mapped extents changed" + hint);
      }
      type = got;
    }
  }
  return resized;
}

ir::Program ResizeProgram(const ir::Program& program, const ResizeMap& sizes) {
  ir::Program resized = program;
  for (ir::Graph& graph : resized.ranks) graph = ResizeGraph(graph, sizes, program.groups);
  return resized;
}

}  // namespace gg::frontend
