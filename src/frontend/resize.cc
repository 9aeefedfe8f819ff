#include "frontend/resize.h"

#include <algorithm>
#include <numeric>
#include <set>
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

// Unmapped integer size literals of a node (candidates for a derived extent).
void CollectUnmapped(ir::Value& value, const ResizeMap& sizes, std::vector<MappedSlot>* slots) {
  if (value.is_int()) {
    if (value.as_int() > 1 && sizes.count(value.as_int()) == 0) {
      slots->push_back({&value, value.as_int(), value.as_int()});
    }
  } else if (value.is_list()) {
    for (ir::Value& item : value.as_list()) CollectUnmapped(item, sizes, slots);
  }
}

std::vector<MappedSlot> UnmappedSlots(ir::Node& node, const ResizeMap& sizes,
                                      const std::string& file) {
  std::vector<MappedSlot> slots;
  const ir::OpInfo& info = FindOperator(node, file, node.def_line);
  const std::vector<ir::ArgSchema>& schema = info.schema.args;
  for (size_t i = 0; i < node.args.size() && i < schema.size(); ++i) {
    if (HoldsSizes(schema[i], node.op)) CollectUnmapped(node.args[i], sizes, &slots);
  }
  for (ir::NamedArg& kwarg : node.kwargs) {
    for (const ir::ArgSchema& arg : schema) {
      if (arg.name == kwarg.name && HoldsSizes(arg, node.op)) {
        CollectUnmapped(kwarg.value, sizes, &slots);
      }
    }
  }
  return slots;
}

// ResizeGraph; with `learned`, extents derived from mapped ones are added to the map as they are
// met (an output dim the shape rule now computes differently, a size literal that must scale like
// the mapped extents for the node to type-check) and recorded in *learned.
ir::Graph ResizeImpl(const ir::Graph& graph, const ResizeMap& given,
                     const std::map<std::string, std::vector<int32_t>>& groups, ResizeMap* learned,
                     std::map<int64_t, std::string>* reverted = nullptr) {
  ResizeMap sizes = given;
  ir::Graph resized = graph;
  const std::string& file = graph.file;
  int32_t default_group_size = 1;
  for (const auto& [name, members] : groups) {
    default_group_size =
        std::max<int32_t>(default_group_size, static_cast<int32_t>(members.size()));
  }
  const std::string context = "after resizing (" + ResizeMapText(given) + "): ";
  const std::string hint = " (is an extent derived from a resized one missing from the map?)";
  auto learn = [&](int64_t from, int64_t to) {
    sizes[from] = to;
    (*learned)[from] = to;
  };
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
      if (best.size() == 1) {
        inferred = attempt(best[0]);
        for (size_t k = 0; reverted != nullptr && k < slots.size(); ++k) {
          if ((best[0] >> k) & 1u) reverted->emplace(slots[k].before, DescribeNode(node));
        }
      } else if (best.empty() && learned != nullptr) {
        // A literal derived from a mapped extent (a view to 12288 = 8 x 1536 when 8 shrinks):
        // one unmapped literal scaled by one of the map's ratios that makes the node type-check.
        for (MappedSlot& slot : slots) *slot.value = ir::Value(slot.after);
        std::vector<MappedSlot> free_slots = UnmappedSlots(node, sizes, file);
        std::set<std::pair<int64_t, int64_t>> ratios;  // (new, old), reduced
        for (const auto& [from, to] : sizes) {
          int64_t g = std::gcd(from, to);
          if (from != to) ratios.insert({to / g, from / g});
        }
        struct Choice {
          size_t slot;
          int64_t value;
          int score;
        };
        // A literal that equals an extent of the node's (resized) inputs most likely names that
        // kept dim (the 32 of a head dim), not a derived one.
        std::set<int64_t> input_extents;
        for (const ir::TensorRef& ref : node.TensorInputs()) {
          const std::optional<ir::TensorType>& t =
              resized.node(ref.node).outputs.at(ref.output).type;
          if (!t) continue;
          for (const ir::Dim& d : t->shape) {
            if (d.is_static()) input_extents.insert(d.value());
          }
        }
        std::vector<Choice> fits;
        for (size_t k = 0; k < free_slots.size() && k < 16; ++k) {
          for (const auto& [num, den] : ratios) {
            int64_t v = free_slots[k].before;
            if ((v * num) % den != 0 || v * num / den <= 0) continue;
            *free_slots[k].value = ir::Value(v * num / den);
            try {
              Inferred trial =
                  InferNodeTypes(resized, node, groups, default_group_size, file, node.def_line);
              int score = Alignment(resized, node, trial) - 100 * (input_extents.count(v) > 0);
              fits.push_back({k, v * num / den, score});
            } catch (const InputError&) {
            }
            *free_slots[k].value = ir::Value(v);
          }
        }
        std::sort(fits.begin(), fits.end(),
                  [](const Choice& a, const Choice& b) { return a.score > b.score; });
        if (fits.empty() ||
            (fits.size() > 1 && fits[1].score == fits[0].score && fits[1].value != fits[0].value)) {
          throw InputError(file, node.def_line,
                           context + first_error +
                               (fits.empty() ? hint : " (several derived sizes fit; ambiguous)"));
        }
        learn(free_slots[fits[0].slot].before, fits[0].value);
        // Every literal of that extent in the node now takes the derived value.
        for (MappedSlot& slot : free_slots) {
          if (slot.before == free_slots[fits[0].slot].before)
            *slot.value = ir::Value(fits[0].value);
        }
        inferred = InferNodeTypes(resized, node, groups, default_group_size, file, node.def_line);
      } else {
        throw InputError(file, node.def_line,
                         context + first_error +
                             (best.empty() ? hint : " (several size choices fit; ambiguous)"));
      }
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
      const ir::TensorType& before = *original.outputs[o].type;
      if (learned != nullptr && before.dtype == got->dtype &&
          before.shape.size() == got->shape.size()) {
        // An output extent the shape rule now derives from mapped ones (12288 -> 1536).
        for (size_t i = 0; i < got->shape.size(); ++i) {
          const ir::Dim& d = before.shape[i];
          const ir::Dim& g = got->shape[i];
          if (d == g || !d.is_static() || !g.is_static() || sizes.count(d.value())) continue;
          learn(d.value(), g.value());
        }
      }
      if (!OnlyMappedDims(before, *got, sizes)) {
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

}  // namespace

ir::Graph ResizeGraph(const ir::Graph& graph, const ResizeMap& sizes,
                      const std::map<std::string, std::vector<int32_t>>& groups) {
  return ResizeImpl(graph, sizes, groups, nullptr);
}

ResizeMap DeriveResizeMap(const ir::Graph& graph, const ResizeMap& seeds,
                          const std::map<std::string, std::vector<int32_t>>& groups,
                          std::map<int64_t, std::string>* reverted) {
  ResizeMap sizes = seeds;
  // Each pass may learn extents that earlier nodes also carry: again until nothing new is learned,
  // which is then a plain ResizeGraph of the whole map.
  for (int pass = 0; pass < 32; ++pass) {
    ResizeMap learned;
    std::map<int64_t, std::string> kept_back;
    ResizeImpl(graph, sizes, groups, &learned, &kept_back);
    if (learned.empty()) {
      if (reverted != nullptr) reverted->insert(kept_back.begin(), kept_back.end());
      return sizes;
    }
    for (const auto& [from, to] : learned) sizes[from] = to;
  }
  throw InputError(graph.file, 0,
                   "resizing (" + ResizeMapText(seeds) +
                       "): the derived extents did not settle after 32 passes");
}

ResizeMap DeriveProgramResizeMap(const ir::Program& program, const ResizeMap& seeds,
                                 std::map<int64_t, std::string>* reverted) {
  ResizeMap sizes = seeds;
  // Ranks may meet different derived extents (a rank-specific offset): each rank's learning feeds
  // the others until the map holds for all of them.
  for (int round = 0; round < 8; ++round) {
    ResizeMap before = sizes;
    std::map<int64_t, std::string> kept_back;
    for (const ir::Graph& rank : program.ranks) {
      sizes = DeriveResizeMap(rank, sizes, program.groups, &kept_back);
    }
    if (sizes == before) {
      if (reverted != nullptr) reverted->insert(kept_back.begin(), kept_back.end());
      return sizes;
    }
  }
  return sizes;
}

ir::Program ResizeProgram(const ir::Program& program, const ResizeMap& sizes) {
  ir::Program resized = program;
  for (ir::Graph& graph : resized.ranks) graph = ResizeGraph(graph, sizes, program.groups);
  return resized;
}

}  // namespace gg::frontend
