#include "frontend/loader.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/fx_reader.h"
#include "frontend/hlo_reader.h"
#include "frontend/json_format.h"
#include "frontend/node_check.h"
#include "frontend/p2p.h"
#include "ir/strides.h"
#include "util/diagnostic.h"

namespace gg::frontend {
namespace {

namespace fs = std::filesystem;

bool HasGraphExtension(const fs::path& path) {
  std::string ext = path.extension().string();
  return ext == ".py" || ext == ".txt" || ext == ".json";
}

bool IsJson(const std::string& path) { return fs::path(path).extension() == ".json"; }

thread_local std::string graph_selection;

// The `.r<N>.` rank in a file name, or -1.
int RankInName(const std::string& base) {
  for (size_t p = base.find(".r"); p != std::string::npos; p = base.find(".r", p + 1)) {
    size_t q = p + 2;
    int rank = 0;
    bool digits = false;
    while (q < base.size() && base[q] >= '0' && base[q] <= '9' && rank < 1000000) {
      rank = rank * 10 + (base[q] - '0');
      digits = true;
      ++q;
    }
    if (digits && q < base.size() && base[q] == '.') return rank;
  }
  return -1;
}

bool Matches(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// The files of a directory to read: those of the selected kind (`--graph`); without a
// selection, a rank given by files of several kinds is an error listing the kinds.
std::vector<std::string> SelectKinds(const std::string& dir, std::vector<std::string> found) {
  const std::string& pattern = GraphSelection::pattern();
  std::map<std::string, size_t> kinds;  // kind -> files
  for (const std::string& f : found) ++kinds[GraphKindOf(f)];
  auto list_kinds = [&] {
    std::string text;
    for (const auto& [kind, n] : kinds) {
      if (!text.empty()) text += ", ";
      text += (kind.empty() ? std::string("(unnamed)") : "'" + kind + "'") + " (" +
              std::to_string(n) + (n == 1 ? " file)" : " files)");
    }
    return text;
  };
  if (!pattern.empty()) {
    std::vector<std::string> kept;
    for (const std::string& f : found) {
      if (Matches(pattern, GraphKindOf(f)) || Matches(pattern, fs::path(f).filename().string())) {
        kept.push_back(f);
      }
    }
    if (kept.empty()) {
      throw InputError(dir, 0,
                       "no graph file matches --graph '" + pattern + "'; the directory holds " +
                           list_kinds() + "; pass one of them to --graph");
    }
    found = std::move(kept);
  }
  std::map<int, std::string> kind_of_rank;  // rank (from the name) -> first kind seen
  for (const std::string& f : found) {
    int rank = RankInName(fs::path(f).filename().string());
    if (rank < 0) continue;
    std::string kind = GraphKindOf(f);
    auto [it, inserted] = kind_of_rank.emplace(rank, kind);
    if (inserted || it->second == kind) continue;
    throw InputError(dir, 0,
                     "the directory holds several graph kinds for rank " + std::to_string(rank) +
                         " ('" + it->second + "' and '" + kind + "'; all kinds: " + list_kinds() +
                         "); pick one with --graph KIND, e.g. --graph " +
                         (it->second.empty() ? kind : it->second) +
                         (pattern.empty() ? "" : " (--graph '" + pattern + "' matches several)"));
  }
  return found;
}

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
      found = SelectKinds(path, std::move(found));
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
  ir::CollectiveKind kind = ir::CollectiveKind::kNone;
  std::string op;
  std::string reduce_op;
  std::optional<int64_t> group_size;
  std::optional<int64_t> src;  // broadcast: the source, which every member must name alike
  std::string input_type;
  // all_to_all_single: the split sizes as written (nullopt: None, equal splits). They differ
  // between members legitimately; what must agree is checked across the group (below).
  std::optional<std::vector<int64_t>> output_splits, input_splits;
  std::optional<int64_t> input_rows, output_rows;  // dim 0 of input and result, when static

  std::string Describe() const {
    std::string s = op;
    if (!reduce_op.empty()) s += " '" + reduce_op + "'";
    if (group_size) s += " group_size " + std::to_string(*group_size);
    if (src) s += " src " + std::to_string(*src);
    s += " on " + input_type;
    return s;
  }
  bool SameAs(const CollectiveCall& o) const {
    return op == o.op && reduce_op == o.reduce_op && group_size == o.group_size && src == o.src &&
           input_type == o.input_type;
  }
  // The rows this member sends to (input) or receives from (output) each of n members; nullopt
  // when None splits of a dynamic or indivisible extent leave them unknown.
  std::optional<std::vector<int64_t>> Splits(bool input, size_t n) const {
    const std::optional<std::vector<int64_t>>& given = input ? input_splits : output_splits;
    if (given) return given;
    const std::optional<int64_t>& rows = input ? input_rows : output_rows;
    if (!rows || n == 0 || *rows % static_cast<int64_t>(n) != 0) return std::nullopt;
    return std::vector<int64_t>(n, *rows / static_cast<int64_t>(n));
  }
};

std::string Where(const ir::Graph& g, const ir::Node* node) {
  return g.file + ":" + std::to_string(node ? node->def_line : g.return_line);
}

// An asynchronous collective's result (torch's _c10d_functional ops, `async_result` in the
// registry) is ready only once its wait_tensor ran: every other read of it must come after a
// wait_tensor of it, and a returned result must have been waited on. A read before (or without)
// the wait is what a real machine runs on an unfinished buffer.
void CheckCollectiveWaits(const ir::Graph& g) {
  const ir::OpRegistry& registry = ir::OpRegistry::Default();
  // Nodes are in topological order: a collective is `waited` from its first wait_tensor on.
  std::set<ir::NodeId> waited;
  std::set<ir::NodeId> pending;  // async collectives seen so far
  auto describe_collective = [&](ir::NodeId id) {
    const ir::Node& c = g.nodes.at(id);
    return "asynchronous collective " + DescribeNode(c) + " (line " + std::to_string(c.def_line) +
           ")";
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& node = g.nodes[i];
    if (node.kind != ir::NodeKind::kOperator) continue;
    const ir::OpInfo* info = registry.Find(node.op);
    const bool is_wait = info != nullptr && info->traits.collective == ir::CollectiveKind::kWait;
    for (const ir::TensorRef& ref : node.TensorInputs()) {
      if (pending.count(ref.node) == 0) continue;
      if (is_wait) {
        waited.insert(ref.node);
        continue;
      }
      if (waited.count(ref.node) != 0) continue;
      throw InputError(g.file, node.def_line,
                       DescribeNode(node) + " reads the result of the " +
                           describe_collective(ref.node) +
                           " before its wait_tensor: the value is not ready there on a real "
                           "machine; read the result of _c10d_functional.wait_tensor instead");
    }
    if (info != nullptr && info->traits.async_result) pending.insert(static_cast<ir::NodeId>(i));
  }
  std::vector<ir::TensorRef> returned;
  for (const ir::Value& v : g.outputs) v.CollectTensors(&returned);
  for (const ir::TensorRef& ref : returned) {
    if (pending.count(ref.node) == 0 || waited.count(ref.node) != 0) continue;
    throw InputError(g.file, g.return_line,
                     "the graph returns the result of the " + describe_collective(ref.node) +
                         " without a wait_tensor of it: the value is not ready on a real "
                         "machine; return the result of _c10d_functional.wait_tensor instead");
  }
}

// A view ATen refuses: the requested shape cannot be expressed over the input's strides (a
// view of a transposed tensor). Layouts are tracked where they are known exactly (ir/strides.h);
// an unknown layout is never refused.
void CheckViews(const ir::Graph& g) {
  std::optional<ir::ImpossibleView> bad = ir::FirstImpossibleView(g);
  if (!bad) return;
  const ir::Node& node = g.nodes.at(bad->node);
  std::vector<ir::TensorRef> inputs = node.TensorInputs();
  std::string input =
      inputs.empty() ? std::string("its input") : "'" + g.ValueName(inputs[0]) + "'";
  throw InputError(g.file, node.def_line,
                   DescribeNode(node) + " views " + input + " of sizes " +
                       ir::IntListText(bad->input_sizes) + " and strides " +
                       ir::IntListText(bad->input_strides) + " as " + ir::IntListText(bad->sizes) +
                       ", which those strides cannot express without a copy: ATen raises here; "
                       "use reshape");
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
      if (node.kind != ir::NodeKind::kOperator || IsOpaqueNode(node)) continue;
      const ir::OpInfo& info = FindOperator(node, g.file, node.def_line);
      if (info.traits.collective == ir::CollectiveKind::kNone ||
          info.traits.collective == ir::CollectiveKind::kWait) {
        continue;
      }
      std::optional<std::string> group = GroupNameOf(info, node);
      if (ir::IsPointToPoint(info.traits.collective)) {
        // two members take part, not the whole group: paired by PairTransfers; the group is
        // defined here like a collective's
        if (group && program->groups.count(*group) == 0 && strict_files.count(g.file) == 0) {
          std::vector<int32_t> all(world);
          for (int32_t r = 0; r < world; ++r) all[r] = r;
          program->groups.emplace(*group, std::move(all));
        } else if (group && program->groups.count(*group) == 0) {
          throw InputError(g.file, node.def_line,
                           DescribeNode(node) + " uses process group '" + *group +
                               "', which the file does not define");
        }
        continue;
      }
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
      call.kind = info.traits.collective;
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
      if (info.traits.collective == ir::CollectiveKind::kBroadcast) {
        if (std::optional<ir::Value> src = BoundArg(info, node, "src")) {
          if (!src->is_int()) {
            throw InputError(g.file, node.def_line,
                             "src of " + DescribeNode(node) + " must be an integer");
          }
          call.src = src->as_int();
        }
      }
      std::vector<ir::TensorRef> inputs = node.TensorInputs();
      call.input_type = "no tensor";
      if (!inputs.empty()) {
        const ir::NodeOutput& out = g.nodes.at(inputs[0].node).outputs.at(inputs[0].output);
        call.input_type = TypeText(out.type);
        if (out.type && !out.type->shape.empty() && out.type->shape[0].is_static()) {
          call.input_rows = out.type->shape[0].value();
        }
      }
      if (info.traits.collective == ir::CollectiveKind::kAllToAll) {
        if (!node.outputs.empty() && node.outputs[0].type && !node.outputs[0].type->shape.empty() &&
            node.outputs[0].type->shape[0].is_static()) {
          call.output_rows = node.outputs[0].type->shape[0].value();
        }
        for (bool input : {false, true}) {
          const char* arg = input ? "input_split_sizes" : "output_split_sizes";
          std::optional<ir::Value> v = BoundArg(info, node, arg);
          // None (equal splits) or symbolic sizes: nothing to compare as written.
          if (!v || !v->is_int_list()) continue;
          std::vector<int64_t> sizes = v->as_int_list();
          if (sizes.size() != members.size()) {
            throw InputError(g.file, node.def_line,
                             std::string(arg) + " " + ir::IntListText(sizes) + " of " +
                                 DescribeNode(node) + " has " + std::to_string(sizes.size()) +
                                 " entries but process group '" + *group + "' has " +
                                 std::to_string(members.size()) + " ranks");
          }
          (input ? call.input_splits : call.output_splits) = std::move(sizes);
        }
        // With its own input split sizes a member's dim 0 is its own (expert parallelism sends
        // each rank as many rows as route there): the members agree on dtype and the other dims.
        if (call.input_splits && !inputs.empty()) {
          const ir::NodeOutput& out = g.nodes.at(inputs[0].node).outputs.at(inputs[0].output);
          if (out.type && !out.type->shape.empty()) {
            ir::TensorType rows_free = *out.type;
            rows_free.shape[0] = ir::Dim::Symbol("rows");
            call.input_type = TypeText(rows_free);
          }
        }
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
                             ") issues " + std::to_string(ref.size()) +
                             "; the first unmatched is " + Where(extra_graph, extra.node) + ": " +
                             extra.Describe());
      }
    }
    // all_to_all_single: what member a sends to member b (a's input_split_sizes[b]) is what b
    // receives from a (b's output_split_sizes[a]); sequences agree here, so call i matches.
    for (size_t i = 0; i < ref.size(); ++i) {
      if (ref[i].kind != ir::CollectiveKind::kAllToAll) continue;
      const size_t n = members.size();
      for (size_t a = 0; a < n; ++a) {
        const CollectiveCall& ca = seq_of(members[a]).at(i);
        std::optional<std::vector<int64_t>> sends = ca.Splits(/*input=*/true, n);
        if (!sends) continue;
        for (size_t b = 0; b < n; ++b) {
          const CollectiveCall& cb = seq_of(members[b]).at(i);
          std::optional<std::vector<int64_t>> receives = cb.Splits(/*input=*/false, n);
          if (!receives || (*sends)[b] == (*receives)[a]) continue;
          const ir::Graph& ga = program->ranks.at(members[a]);
          const ir::Graph& gb = program->ranks.at(members[b]);
          throw InputError(
              gb.file, cb.node->def_line,
              "collective #" + std::to_string(i + 1) + " on process group '" + group +
                  "' (all_to_all_single) disagrees on split sizes: " + Where(ga, ca.node) +
                  " (rank " + std::to_string(members[a]) + ") sends " +
                  std::to_string((*sends)[b]) + " rows to rank " + std::to_string(members[b]) +
                  " (input splits " + ir::IntListText(*sends) + ") but " + Where(gb, cb.node) +
                  " (rank " + std::to_string(members[b]) + ") receives " +
                  std::to_string((*receives)[a]) + " rows from rank " + std::to_string(members[a]) +
                  " (output splits " + ir::IntListText(*receives) + ")");
        }
      }
    }
  }
}

// Groups a graph names itself (JSON "process_groups" inside a graph) are identified by their
// members: the same group may have another name on each rank, and one name may mean other ranks
// on another rank. Every collective naming a local group is rewritten to one name per member
// set: the file-level group with those members, else the local name when it means those
// members wherever it is used, else "ranks[a,b,...]".
void UnifyGroups(ir::Program* program, const std::vector<GroupMap>& local_by_rank) {
  const int32_t world = program->world_size();
  auto members_text = [](const std::vector<int32_t>& m) {
    std::string t = "ranks[";
    for (size_t i = 0; i < m.size(); ++i) t += (i ? "," : "") + std::to_string(m[i]);
    return t + "]";
  };
  std::map<std::string, std::set<std::vector<int32_t>>> meanings;  // name -> member sets
  for (const auto& [name, members] : program->groups) meanings[name].insert(members);
  bool any = false;
  for (int32_t r = 0; r < world; ++r) {
    for (const auto& [name, members] : local_by_rank[r]) {
      if (members.back() >= world) {
        throw InputError(
            program->ranks[r].file, 0,
            "process group '" + name + "' of rank " + std::to_string(r) + " names rank " +
                std::to_string(members.back()) + " but there are only " + std::to_string(world) +
                " ranks; list the group's members as ranks 0.." + std::to_string(world - 1));
      }
      meanings[name].insert(members);
      any = true;
    }
  }
  if (!any) return;
  std::map<std::vector<int32_t>, std::string> canonical;
  for (const auto& [name, members] : program->groups) canonical.emplace(members, name);
  for (int32_t r = 0; r < world; ++r) {
    for (const auto& [name, members] : local_by_rank[r]) {
      if (canonical.count(members) != 0) continue;
      const bool unique = meanings[name].size() == 1 && program->groups.count(name) == 0;
      canonical.emplace(members, unique ? name : members_text(members));
    }
  }
  for (const auto& [members, name] : canonical) {
    auto [it, inserted] = program->groups.emplace(name, members);
    if (!inserted && it->second != members) {
      throw InputError(program->ranks[0].file, 0,
                       "process group name '" + name + "' is used for ranks " +
                           members_text(it->second) + " and " + members_text(members) +
                           "; rename one of the groups in the JSON files");
    }
  }
  for (int32_t r = 0; r < world; ++r) {
    if (local_by_rank[r].empty()) continue;
    ir::Graph& g = program->ranks[r];
    for (ir::Node& node : g.nodes) {
      if (node.kind != ir::NodeKind::kOperator || IsOpaqueNode(node)) continue;
      const ir::OpInfo& info = FindOperator(node, g.file, node.def_line);
      std::optional<std::string> group = GroupNameOf(info, node);
      if (!group) continue;
      auto local = local_by_rank[r].find(*group);
      if (local == local_by_rank[r].end()) continue;
      const std::string& name = canonical.at(local->second);
      if (name == *group) continue;
      const int index = info.schema.ArgIndex(info.traits.group_arg);
      if (index >= 0 && static_cast<size_t>(index) < node.args.size()) {
        node.args[index] = ir::Value(name);
      } else {
        for (ir::NamedArg& kw : node.kwargs) {
          if (kw.name == info.traits.group_arg) kw.value = ir::Value(name);
        }
      }
    }
  }
}

}  // namespace

GraphSelection::GraphSelection(std::string pattern) : previous_(graph_selection) {
  graph_selection = std::move(pattern);
}
GraphSelection::~GraphSelection() { graph_selection = previous_; }
const std::string& GraphSelection::pattern() { return graph_selection; }

std::string GraphKindOf(const std::string& path) {
  std::string base = fs::path(path).filename().string();
  size_t dot = base.rfind('.');
  if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  base += '.';  // so a final ".r<N>" reads like one inside the name
  for (size_t p = base.find(".r"); p != std::string::npos; p = base.find(".r", p + 1)) {
    size_t q = p + 2;
    while (q < base.size() && base[q] >= '0' && base[q] <= '9') ++q;
    if (q > p + 2 && q < base.size() && base[q] == '.') {
      base.erase(p, q - p);
      break;
    }
  }
  if (base.size() >= 2 && base[0] == 'r' && base[1] >= '0' && base[1] <= '9') {
    size_t q = 1;  // "r0.py": a rank file without a kind
    while (q < base.size() && base[q] >= '0' && base[q] <= '9') ++q;
    if (q < base.size() && base[q] == '.') base.erase(0, q + 1);
  }
  if (!base.empty() && base.back() == '.') base.pop_back();
  return base;
}

namespace {

// An HLO module (SPMD): one program for every rank, each rank's graph giving its collectives the
// process groups of its replica_groups.
ir::Program LoadHloProgram(const std::vector<std::string>& paths) {
  if (paths.size() != 1) {
    throw InputError(paths[0], 0,
                     "an HLO module is the program of every rank: pass one .hlo file, alone");
  }
  const std::string text = ReadTextFile(paths[0]);
  HloModule first = ParseHlo(text, paths[0]);
  ir::Program program;
  program.ranks.resize(first.world);
  program.groups = std::move(first.groups);
  program.ranks[0] = std::move(first.graph);
  for (int32_t r = 1; r < first.world; ++r) {
    HloModule m = ParseHlo(text, paths[0], HloOptions{.rank = r, .world = first.world});
    for (auto& [name, members] : m.groups) program.groups.emplace(name, members);
    program.ranks[r] = std::move(m.graph);
  }
  for (const ir::Graph& g : program.ranks) {
    CheckCollectiveWaits(g);
    CheckViews(g);
  }
  CheckCollectives(&program, {});
  program.transfers = PairTransfers(program);
  return program;
}

}  // namespace

ir::Program LoadProgram(const std::vector<std::string>& paths) {
  if (std::any_of(paths.begin(), paths.end(), IsHloPath)) return LoadHloProgram(paths);
  std::vector<std::string> files = ExpandPaths(paths);
  // JSON files first: they may hold several ranks, and the world size decides the size of the
  // groups FX collectives name.
  std::vector<ir::Graph> graphs;
  GroupMap groups;
  std::map<std::string, std::string> group_source;  // group -> file that defined it
  size_t fx_files = 0;
  std::set<std::string> strict_files;
  std::vector<GroupMap> locals;  // parallel to graphs: each graph's own group names
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
        throw InputError(
            file, 0,
            "process group '" + name + "' is defined differently in " + group_source[name]);
      }
      group_source.emplace(name, file);
    }
    for (size_t i = 0; i < content.graphs.size(); ++i) {
      graphs.push_back(std::move(content.graphs[i]));
      locals.push_back(i < content.local_groups.size() ? content.local_groups[i] : GroupMap{});
    }
  }
  const int32_t world = static_cast<int32_t>(graphs.size() + fx_files);
  for (const std::string& file : files) {
    if (IsJson(file)) continue;
    FxOptions options;
    options.group_size = world;
    options.unbacked_suffix = "_r";  // a rank's data-dependent sizes are its own
    graphs.push_back(ReadFxFile(file, options));
    locals.emplace_back();
  }
  // Ranks: 0..N-1, each once.
  std::vector<const ir::Graph*> by_rank(world, nullptr);
  for (const ir::Graph& g : graphs) {
    if (g.rank < 0 || g.rank >= world) {
      throw InputError(g.file, 0,
                       "rank " + std::to_string(g.rank) +
                           " is out of range: " + std::to_string(world) +
                           " graphs were given, so ranks must be 0.." + std::to_string(world - 1));
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
  std::vector<GroupMap> local_by_rank(world);
  for (size_t i = 0; i < graphs.size(); ++i) {
    int32_t r = graphs[i].rank;
    local_by_rank[r] = std::move(locals[i]);
    program.ranks[r] = std::move(graphs[i]);
  }
  UnifyGroups(&program, local_by_rank);
  for (const ir::Graph& g : program.ranks) {
    CheckCollectiveWaits(g);
    CheckViews(g);
  }
  CheckCollectives(&program, strict_files);
  program.transfers = PairTransfers(program);
  return program;
}

ir::Graph LoadGraph(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw InputError(path, 0, "expected one graph file, got a directory");
  }
  if (IsHloPath(path)) {
    ir::Graph graph = ReadHloFile(path).graph;
    CheckCollectiveWaits(graph);
    CheckViews(graph);
    return graph;
  }
  if (IsJson(path)) {
    JsonGraphs content = ReadJsonFile(path, 1);
    if (content.graphs.size() != 1) {
      throw InputError(
          path, 0, "expected one graph, the file holds " + std::to_string(content.graphs.size()));
    }
    CheckCollectiveWaits(content.graphs[0]);
    CheckViews(content.graphs[0]);
    return std::move(content.graphs[0]);
  }
  FxOptions options;
  options.group_size = 1;
  options.unbacked_suffix = "_s";  // S's data-dependent sizes are not D's
  ir::Graph graph = ReadFxFile(path, options);
  CheckCollectiveWaits(graph);
  CheckViews(graph);
  return graph;
}

}  // namespace gg::frontend
