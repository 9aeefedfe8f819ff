#include "report/stats_report.h"

#include <algorithm>
#include <sstream>

#include "ir/op_registry.h"

namespace gg::report {
namespace {

std::string CollectiveKindName(ir::CollectiveKind kind) {
  switch (kind) {
    case ir::CollectiveKind::kAllReduce: return "all_reduce";
    case ir::CollectiveKind::kAllGather: return "all_gather";
    case ir::CollectiveKind::kReduceScatter: return "reduce_scatter";
    case ir::CollectiveKind::kBroadcast: return "broadcast";
    case ir::CollectiveKind::kAllToAll: return "all_to_all";
    case ir::CollectiveKind::kWait: return "wait";
    case ir::CollectiveKind::kSend: return "send";
    case ir::CollectiveKind::kRecv: return "recv";
    case ir::CollectiveKind::kNone: return "none";
  }
  return "unknown";
}

// The group a collective node names, read through its schema; "<unnamed>" if the argument is
// absent or not a string (the loader validates groups, so this only shows on hand-built graphs).
std::string GroupOf(const ir::OpInfo& info, const ir::Node& node) {
  if (info.traits.group_arg.empty()) return "<unnamed>";
  try {
    ir::BoundArgs args(info.schema, node);
    if (args.has(info.traits.group_arg) && args[info.traits.group_arg].is_string()) {
      return args[info.traits.group_arg].as_string();
    }
  } catch (const ir::ShapeError&) {
  }
  return "<unnamed>";
}

RankStats ComputeRankStats(const ir::Graph& graph) {
  const ir::OpRegistry& registry = ir::OpRegistry::Default();
  RankStats stats;
  stats.rank = graph.rank;
  stats.graph_name = graph.name;
  stats.outputs = static_cast<int64_t>(graph.outputs.size());
  std::map<std::string, int64_t> histogram;
  for (const ir::Node& node : graph.nodes) {
    ++stats.nodes;
    switch (node.kind) {
      case ir::NodeKind::kInput: ++stats.inputs; continue;
      case ir::NodeKind::kConstant: ++stats.constants; continue;
      case ir::NodeKind::kOperator: ++stats.operators; break;
    }
    std::string key = node.op.ToString();
    if (node.functionalized) key += " [functionalized]";
    ++histogram[key];
    const ir::OpInfo* info = registry.Find(node.op);
    if (info == nullptr) {
      ++stats.unknown_operators[node.op.ToString()];
      continue;
    }
    ir::CollectiveKind kind = info->traits.collective;
    if (kind == ir::CollectiveKind::kNone || kind == ir::CollectiveKind::kWait) continue;
    ++stats.collectives[GroupOf(*info, node)][CollectiveKindName(kind)];
  }
  stats.operator_counts.assign(histogram.begin(), histogram.end());
  std::stable_sort(stats.operator_counts.begin(), stats.operator_counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return stats;
}

std::string RankList(const std::vector<int32_t>& ranks) {
  std::string text;
  for (int32_t r : ranks) text += (text.empty() ? "" : " ") + std::to_string(r);
  return text;
}

}  // namespace

ProgramStats ComputeStats(const ir::Program& program) {
  ProgramStats stats;
  stats.groups = program.groups;
  for (const ir::Graph& graph : program.ranks) stats.ranks.push_back(ComputeRankStats(graph));
  return stats;
}

std::string FormatStats(const ProgramStats& stats) {
  std::ostringstream out;
  out << "program: " << stats.ranks.size() << (stats.ranks.size() == 1 ? " rank" : " ranks")
      << ", " << stats.groups.size()
      << (stats.groups.size() == 1 ? " process group" : " process groups") << "\n";
  for (const auto& [name, members] : stats.groups) {
    out << "group '" << name << "': ranks " << RankList(members) << "\n";
  }
  for (const RankStats& rank : stats.ranks) {
    out << "\nrank " << rank.rank << " (" << rank.graph_name << ")\n";
    out << "  nodes: " << rank.nodes << " (inputs " << rank.inputs << ", constants "
        << rank.constants << ", operators " << rank.operators << ")\n";
    out << "  inputs: " << rank.inputs << "\n";
    out << "  outputs: " << rank.outputs << "\n";
    out << "  collectives:";
    if (rank.collectives.empty()) out << " none";
    out << "\n";
    for (const auto& [group, kinds] : rank.collectives) {
      out << "    group '" << group << "':";
      bool first = true;
      for (const auto& [kind, count] : kinds) {
        out << (first ? " " : ", ") << kind << " " << count;
        first = false;
      }
      out << "\n";
    }
    if (!rank.unknown_operators.empty()) {
      out << "  unknown operators (opaque, typed from the file):";
      bool first = true;
      for (const auto& [op, count] : rank.unknown_operators) {
        out << (first ? " " : ", ") << op << " " << count;
        first = false;
      }
      out << "\n";
    }
    out << "  operators: " << rank.operator_counts.size() << " distinct\n";
    for (const auto& [op, count] : rank.operator_counts) {
      std::string number = std::to_string(count);
      out << "    " << std::string(number.size() < 6 ? 6 - number.size() : 0, ' ') << number
          << "  " << op << "\n";
    }
  }
  return out.str();
}

}  // namespace gg::report
