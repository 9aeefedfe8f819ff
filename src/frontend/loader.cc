#include "frontend/loader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/fx_reader.h"
#include "frontend/json_format.h"
#include "frontend/node_check.h"
#include "util/diagnostic.h"

namespace gg::frontend {
namespace {

namespace fs = std::filesystem;

bool HasGraphExtension(const fs::path& path) {
  std::string ext = path.extension().string();
  return ext == ".py" || ext == ".txt" || ext == ".json";
}

bool IsJson(const std::string& path) { return fs::path(path).extension() == ".json"; }

// Files named on the command line, directories expanded (sorted by name, not recursive).
std::vector<std::string> ExpandPaths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) throw InputError(path, 0, "no such file or directory");
    if (fs::is_directory(status)) {
      std::vector<std::string> found;
      for (const fs::directory_entry& entry : fs::directory_iterator(path, ec)) {
        if (entry.is_regular_file() && HasGraphExtension(entry.path())) {
          found.push_back(entry.path().string());
        }
      }
      if (ec) throw InputError(path, 0, "cannot list directory: " + ec.message());
      if (found.empty()) {
        throw InputError(path, 0, "directory holds no graph files (*.py, *.txt, *.json)");
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(path);
    }
  }
  if (files.empty()) throw InputError("", 0, "no graph files given");
  return files;
}

// One collective call as the sequence check compares it.
struct CollectiveCall {
  const ir::Node* node;
  std::string op;
  std::string reduce_op;
  std::optional<int64_t> group_size;
  std::string input_type;

  std::string Describe() const {
    std::string s = op;
    if (!reduce_op.empty()) s += " '" + reduce_op + "'";
    if (group_size) s += " group_size " + std::to_string(*group_size);
    s += " on " + input_type;
    return s;
  }
  bool SameAs(const CollectiveCall& o) const {
    return op == o.op && reduce_op == o.reduce_op && group_size == o.group_size &&
           input_type == o.input_type;
  }
};

std::string Where(const ir::Graph& g, const ir::Node* node) {
  return g.file + ":" + std::to_string(node ? node->def_line : g.return_line);
}

// Collects each rank's collectives per group, checks groups and group_size arguments, and checks
// that every member of a group issues the same sequence.
// Groups no file defines mean all ranks (the FX convention), except in files of the JSON program
// form, which must define every group they use (`strict_files`).
void CheckCollectives(ir::Program* program, const std::set<std::string>& strict_files) {
  const int32_t world = program->world_size();
  // group -> rank -> calls
  std::map<std::string, std::map<int32_t, std::vector<CollectiveCall>>> calls;
  for (const ir::Graph& g : program->ranks) {
    for (const ir::Node& node : g.nodes) {
      if (node.kind != ir::NodeKind::kOperator) continue;
      const ir::OpInfo& info = FindOperator(node, g.file, node.def_line);
      if (info.traits.collective == ir::CollectiveKind::kNone ||
          info.traits.collective == ir::CollectiveKind::kWait) {
        continue;
      }
      std::optional<std::string> group = GroupNameOf(info, node);
      if (!group) {
        throw InputError(g.file, node.def_line,
                         "collective " + DescribeNode(node) + " names no process group");
      }
      auto it = program->groups.find(*group);
      if (it == program->groups.end()) {
        // Defined now as "all ranks"; a later use by a strict file finds it defined.
        if (strict_files.count(g.file) != 0) {
          throw InputError(g.file, node.def_line,
                           "collective " + DescribeNode(node) + " uses process group '" + *group +
                               "', which the file does not define");
        }
        std::vector<int32_t> all(world);
        for (int32_t r = 0; r < world; ++r) all[r] = r;
        it = program->groups.emplace(*group, std::move(all)).first;
      }
      const std::vector<int32_t>& members = it->second;
      if (!std::binary_search(members.begin(), members.end(), g.rank)) {
        throw InputError(g.file, node.def_line,
                         "rank " + std::to_string(g.rank) + " is not a member of process group '" +
                             *group + "' used by " + DescribeNode(node));
      }
      CollectiveCall call;
      call.node = &node;
      call.op = node.op.ToString();
      if (!info.traits.reduce_op_arg.empty()) {
        std::optional<ir::Value> reduce = BoundArg(info, node, info.traits.reduce_op_arg);
        if (reduce && reduce->is_string()) call.reduce_op = reduce->as_string();
      }
      if (std::optional<ir::Value> size = BoundArg(info, node, "group_size")) {
        if (!size->is_int()) {
          throw InputError(g.file, node.def_line,
                           "group_size of " + DescribeNode(node) + " must be an integer");
        }
        call.group_size = size->as_int();
        if (*call.group_size != static_cast<int64_t>(members.size())) {
          throw InputError(g.file, node.def_line,
                           "group_size " + std::to_string(*call.group_size) + " of " +
                               DescribeNode(node) + " does not match process group '" + *group +
                               "', which has " + std::to_string(members.size()) + " ranks");
        }
      }
      std::vector<ir::TensorRef> inputs = node.TensorInputs();
      call.input_type = "no tensor";
      if (!inputs.empty()) {
        const ir::NodeOutput& out = g.nodes.at(inputs[0].node).outputs.at(inputs[0].output);
        call.input_type = TypeText(out.type);
      }
      calls[*group][g.rank].push_back(std::move(call));
    }
  }
  for (const auto& group_calls : calls) {
    const std::string& group = group_calls.first;
    const auto& by_rank = group_calls.second;  // not a structured binding: lambdas capture it
    const std::vector<int32_t>& members = program->groups.at(group);
    const int32_t first = members.front();
    static const std::vector<CollectiveCall> kNone;
    auto seq_of = [&](int32_t r) -> const std::vector<CollectiveCall>& {
      auto it = by_rank.find(r);
      return it == by_rank.end() ? kNone : it->second;
    };
    const ir::Graph& g0 = program->ranks.at(first);
    const std::vector<CollectiveCall>& ref = seq_of(first);
    for (int32_t r : members) {
      if (r == first) continue;
      const ir::Graph& gr = program->ranks.at(r);
      const std::vector<CollectiveCall>& seq = seq_of(r);
      size_t n = std::min(ref.size(), seq.size());
      for (size_t i = 0; i < n; ++i) {
        if (ref[i].SameAs(seq[i])) continue;
        throw InputError(gr.file, seq[i].node->def_line,
                         "collective #" + std::to_string(i + 1) + " on process group '" + group +
                             "' differs between ranks: " + Where(g0, ref[i].node) + " (rank " +
                             std::to_string(first) + ") does " + ref[i].Describe() + " but " +
                             Where(gr, seq[i].node) + " (rank " + std::to_string(r) + ") does " +
                             seq[i].Describe());
      }
      if (ref.size() != seq.size()) {
        const bool rank_has_more = seq.size() > ref.size();
        const CollectiveCall& extra = rank_has_more ? seq[n] : ref[n];
        const ir::Graph& extra_graph = rank_has_more ? gr : g0;
        throw InputError(gr.file, rank_has_more ? extra.node->def_line : gr.return_line,
                         "rank " + std::to_string(r) + " (" + gr.file + ") issues " +
                             std::to_string(seq.size()) + " collectives on process group '" +
                             group + "' but rank " + std::to_string(first) + " (" + g0.file +
                             ") issues " + std::to_string(ref.size()) + "; the first unmatched is " +
                             Where(extra_graph, extra.node) + ": " + extra.Describe());
      }
    }
  }
}

}  // namespace

ir::Program LoadProgram(const std::vector<std::string>& paths) {
  std::vector<std::string> files = ExpandPaths(paths);
  // JSON files first: they may hold several ranks, and the world size decides the size of the
  // groups FX collectives name.
  std::vector<ir::Graph> graphs;
  GroupMap groups;
  std::map<std::string, std::string> group_source;  // group -> file that defined it
  size_t fx_files = 0;
  std::set<std::string> strict_files;
  for (const std::string& file : files) {
    if (!IsJson(file)) {
      ++fx_files;
      continue;
    }
    JsonGraphs content = ReadJsonFile(file);
    if (content.is_program) strict_files.insert(file);
    for (auto& [name, ranks] : content.groups) {
      auto [it, inserted] = groups.emplace(name, ranks);
      if (!inserted && it->second != ranks) {
        throw InputError(file, 0,
                         "process group '" + name + "' is defined differently in " +
                             group_source[name]);
      }
      group_source.emplace(name, file);
    }
    for (ir::Graph& g : content.graphs) graphs.push_back(std::move(g));
  }
  const int32_t world = static_cast<int32_t>(graphs.size() + fx_files);
  for (const std::string& file : files) {
    if (IsJson(file)) continue;
    FxOptions options;
    options.group_size = world;
    graphs.push_back(ReadFxFile(file, options));
  }
  // Ranks: 0..N-1, each once.
  std::vector<const ir::Graph*> by_rank(world, nullptr);
  for (const ir::Graph& g : graphs) {
    if (g.rank < 0 || g.rank >= world) {
      throw InputError(g.file, 0,
                       "rank " + std::to_string(g.rank) + " is out of range: " +
                           std::to_string(world) + " graphs were given, so ranks must be 0.." +
                           std::to_string(world - 1));
    }
    if (by_rank[g.rank] != nullptr) {
      throw InputError(g.file, 0,
                       "rank " + std::to_string(g.rank) + " is given twice (also by " +
                           by_rank[g.rank]->file + ")");
    }
    by_rank[g.rank] = &g;
  }
  for (const auto& [name, ranks] : groups) {
    if (ranks.back() >= world) {
      throw InputError(group_source[name], 0,
                       "process group '" + name + "' names rank " + std::to_string(ranks.back()) +
                           " but there are only " + std::to_string(world) + " ranks");
    }
  }
  ir::Program program;
  program.groups = std::move(groups);
  program.ranks.resize(world);
  for (ir::Graph& g : graphs) {
    int32_t r = g.rank;
    program.ranks[r] = std::move(g);
  }
  CheckCollectives(&program, strict_files);
  return program;
}

ir::Graph LoadGraph(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw InputError(path, 0, "expected one graph file, got a directory");
  }
  if (IsJson(path)) {
    JsonGraphs content = ReadJsonFile(path, 1);
    if (content.graphs.size() != 1) {
      throw InputError(path, 0,
                       "expected one graph, the file holds " +
                           std::to_string(content.graphs.size()));
    }
    return std::move(content.graphs[0]);
  }
  FxOptions options;
  options.group_size = 1;
  return ReadFxFile(path, options);
}

}  // namespace gg::frontend
