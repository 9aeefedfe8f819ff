#include "frontend/memory_estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "ir/liveness.h"
#include "ir/op_registry.h"

namespace gg::frontend {
namespace {

// The tolerance model samples at most this many elements of each compared S tensor, as an int64
// index and a float64 value (runtime/check.cc, kNoiseSamples).
constexpr uint64_t kSamples = 1 << 16;
constexpr uint64_t kSampleBytes = 16;
// One comparison (runtime/compare.cc) holds about this many float64 copies of the S tensor at
// once: the flattened S value, the rebuilt D expression, both in the comparison type, their
// difference and the masks.
constexpr uint64_t kCompareCopies = 6;

uint64_t Elements(const ir::TensorType& type) {
  uint64_t n = 1;
  for (const ir::Dim& d : type.shape) n *= d.is_static() ? static_cast<uint64_t>(d.value()) : 1;
  return n;
}

uint64_t OutputBytes(const ir::Graph& graph, ir::TensorRef ref) {
  if (ref.node < 0 || static_cast<size_t>(ref.node) >= graph.nodes.size()) return 0;
  const ir::Node& node = graph.node(ref.node);
  if (ref.output < 0 || static_cast<size_t>(ref.output) >= node.outputs.size()) return 0;
  const std::optional<ir::TensorType>& type = node.outputs[ref.output].type;
  return type ? TensorBytes(*type) : 0;
}

// wait_tensor returns its input (the completed collective's value): no new storage.
bool Aliases(const ir::Node& node) {
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
  return info != nullptr && info->traits.collective == ir::CollectiveKind::kWait;
}

}  // namespace

uint64_t TensorBytes(const ir::TensorType& type) {
  return Elements(type) * static_cast<uint64_t>(ir::ElementSize(type.dtype));
}

GraphMemory EstimateGraphMemory(const ir::Graph& graph, int temporaries) {
  GraphMemory memory;
  const size_t n = graph.nodes.size();
  // Last use of every value, the executor's (it frees a value after that node).
  const std::map<ir::TensorRef, size_t> last_use = ir::LastUses(graph);
  std::vector<uint64_t> freed_after(n, 0);
  std::vector<uint64_t> own(n, 0);  // bytes each node allocates
  for (size_t i = 0; i < n; ++i) {
    const ir::Node& node = graph.nodes[i];
    if (node.kind == ir::NodeKind::kInput) {
      for (const ir::NodeOutput& out : node.outputs) {
        if (out.type) memory.inputs += TensorBytes(*out.type);
      }
      continue;  // held by the caller, not freed with the graph's values
    }
    if (node.kind == ir::NodeKind::kOperator && Aliases(node)) continue;
    for (const ir::NodeOutput& out : node.outputs) {
      if (out.type) own[i] += TensorBytes(*out.type);
    }
  }
  for (const auto& [ref, i] : last_use) {
    const ir::Node& owner = graph.node(ref.node);
    if (owner.kind == ir::NodeKind::kInput) continue;
    if (owner.kind == ir::NodeKind::kOperator && Aliases(owner)) continue;
    freed_after[i] += OutputBytes(graph, ref);
  }
  // Constants are bound before the first node runs (zeros of their type when not given).
  uint64_t live = 0;
  for (size_t i = 0; i < n; ++i) {
    if (graph.nodes[i].kind == ir::NodeKind::kConstant) live += own[i];
  }
  memory.peak = live;
  for (size_t i = 0; i < n; ++i) {
    const ir::Node& node = graph.nodes[i];
    if (node.kind == ir::NodeKind::kOperator) {
      live += own[i];
      // The kernel's temporaries, as big as what it computes.
      uint64_t at_node = live + static_cast<uint64_t>(temporaries) * own[i];
      if (at_node > memory.peak) {
        memory.peak = at_node;
        memory.peak_node = i;
      }
    }
    live -= std::min(live, freed_after[i]);
  }
  return memory;
}

std::string MemoryEstimate::ToString() const {
  return FormatBytes(peak) + " (inputs " + FormatBytes(inputs) + ", D run " + FormatBytes(d_run) +
         ", S run " + FormatBytes(s_run) + ")";
}

MemoryEstimate EstimateCheckMemory(const ir::Graph& s_graph, const ir::Program& d_program,
                                   const CheckFootprint& footprint) {
  MemoryEstimate estimate;
  GraphMemory s = EstimateGraphMemory(s_graph, /*temporaries=*/2);
  estimate.inputs = s.inputs;
  uint64_t d_live = 0;
  // Ranks run interleaved in one process: at most every rank at its own peak at once.
  for (const ir::Graph& rank : d_program.ranks) {
    GraphMemory d = EstimateGraphMemory(rank);
    estimate.inputs += d.inputs;
    d_live += d.peak;
  }
  uint64_t kept = 0, largest_kept = 0;
  for (size_t r = 0; r < footprint.kept.size() && r < d_program.ranks.size(); ++r) {
    const ir::Graph& rank = d_program.ranks[r];
    for (const ir::TensorRef& ref : footprint.kept[r]) {
      if (rank.node(ref.node).kind != ir::NodeKind::kOperator) continue;
      uint64_t bytes = OutputBytes(rank, ref);
      kept += bytes;
      largest_kept = std::max(largest_kept, bytes);
    }
  }
  // Passes keep at most the budget, or one S tensor's D tensors when they alone exceed it.
  if (footprint.keep_budget > 0) kept = std::min(kept, footprint.keep_budget + largest_kept);
  uint64_t samples = 0, comparison = 0;
  for (const ir::TensorRef& ref : footprint.compared) {
    const ir::TensorType* type =
        ref.node >= 0 && static_cast<size_t>(ref.node) < s_graph.nodes.size() &&
                static_cast<size_t>(ref.output) < s_graph.node(ref.node).outputs.size() &&
                s_graph.node(ref.node).outputs[ref.output].type
            ? &*s_graph.node(ref.node).outputs[ref.output].type
            : nullptr;
    if (type == nullptr) continue;
    uint64_t elements = Elements(*type);
    samples += std::min(elements, kSamples) * kSampleBytes;
    comparison = std::max(comparison, kCompareCopies * elements * 8);
  }
  estimate.d_run = d_live + kept;
  estimate.s_run = s.peak + kept + samples + comparison;
  estimate.peak = estimate.inputs + std::max(estimate.d_run, estimate.s_run);
  return estimate;
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buffer[32];
  if (unit == 0) {
    std::snprintf(buffer, sizeof buffer, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buffer, sizeof buffer,
                  value < 10    ? "%.2f %s"
                  : value < 100 ? "%.1f %s"
                                : "%.0f %s",
                  value, kUnits[unit]);
  }
  return buffer;
}

uint64_t ParseMemorySize(const std::string& text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "none" || lower == "0") return 0;
  size_t used = 0;
  double number = 0;
  bool digits = !lower.empty() && (std::isdigit(static_cast<unsigned char>(lower[0])) != 0);
  if (digits) {
    try {
      number = std::stod(lower, &used);
    } catch (const std::exception&) {
      digits = false;
    }
  }
  std::string unit = digits ? lower.substr(used) : "";
  static const std::map<std::string, double> kScale = {{"", 1.0},
                                                       {"b", 1.0},
                                                       {"k", 1024.0},
                                                       {"kb", 1024.0},
                                                       {"kib", 1024.0},
                                                       {"m", 1048576.0},
                                                       {"mb", 1048576.0},
                                                       {"mib", 1048576.0},
                                                       {"g", 1073741824.0},
                                                       {"gb", 1073741824.0},
                                                       {"gib", 1073741824.0},
                                                       {"t", 1099511627776.0},
                                                       {"tb", 1099511627776.0},
                                                       {"tib", 1099511627776.0}};
  auto scale = kScale.find(unit);
  if (!digits || scale == kScale.end() || !(number > 0) || !std::isfinite(number)) {
    throw std::invalid_argument("'" + text +
                                "' is not a memory size (a positive number with an optional "
                                "unit K, M, G or T, e.g. 8G or 512M; 0 or none: no budget)");
  }
  double bytes = number * scale->second;
  if (bytes < 1 || bytes > 1.8e19) {
    throw std::invalid_argument("'" + text + "' is out of range for a memory size");
  }
  return static_cast<uint64_t>(bytes);
}

uint64_t MemAvailableOf(const std::string& meminfo) {
  std::istringstream lines(meminfo);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    uint64_t kb = 0;
    std::string unit;
    if (fields >> kb) return kb * 1024;
  }
  return 0;
}

uint64_t DefaultMemoryBudget() {
  std::ifstream file("/proc/meminfo");
  std::stringstream text;
  text << file.rdbuf();
  if (uint64_t available = MemAvailableOf(text.str()); available > 0) return available / 2;
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{4} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4;
}

}  // namespace gg::frontend
