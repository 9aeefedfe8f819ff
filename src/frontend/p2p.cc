#include "frontend/p2p.h"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "frontend/node_check.h"
#include "util/diagnostic.h"

namespace gg::frontend {
namespace {

// One send or receive node, its peer resolved to a global rank.
struct End {
  int32_t rank = 0;
  ir::NodeId node = -1;
  int32_t peer = 0;
  std::string group;
  std::optional<ir::TensorType> type;  // the sent tensor, or the receive buffer
};

std::string Where(const ir::Graph& g, ir::NodeId node) {
  return g.file + ":" + std::to_string(g.nodes.at(node).def_line);
}

std::string Members(const std::vector<int32_t>& members) {
  std::string text = "[";
  for (size_t i = 0; i < members.size(); ++i) text += (i ? ", " : "") + std::to_string(members[i]);
  return text + "]";
}

// The transfer end of node `id` of rank `rank`; InputError when it names a peer it cannot.
End ResolveEnd(const ir::Program& program, int32_t rank, ir::NodeId id, const ir::OpInfo& info) {
  const ir::Graph& g = program.rank(rank);
  const ir::Node& node = g.nodes.at(id);
  End end;
  end.rank = rank;
  end.node = id;
  std::optional<std::string> group = GroupNameOf(info, node);
  if (!group) {
    throw InputError(g.file, node.def_line,
                     DescribeNode(node) +
                         " names no process group; name the group (its name, "
                         "as the capture writes it) in '" +
                         info.traits.group_arg + "'");
  }
  end.group = *group;
  auto it = program.groups.find(*group);
  std::vector<int32_t> members;
  if (it != program.groups.end()) {
    members = it->second;
  } else {
    for (int32_t r = 0; r < program.world_size(); ++r) members.push_back(r);
  }
  if (!std::binary_search(members.begin(), members.end(), rank)) {
    throw InputError(g.file, node.def_line,
                     "rank " + std::to_string(rank) + " is not a member of process group '" +
                         *group + "' " + Members(members) + " used by " + DescribeNode(node));
  }
  std::optional<ir::Value> peer = BoundArg(info, node, info.traits.peer_arg);
  if (!peer || !peer->is_int()) {
    throw InputError(g.file, node.def_line,
                     "'" + info.traits.peer_arg + "' of " + DescribeNode(node) +
                         " must be an integer (the peer rank)");
  }
  const int64_t given = peer->as_int();
  if (info.traits.peer_in_group) {
    if (given < 0 || given >= static_cast<int64_t>(members.size())) {
      throw InputError(g.file, node.def_line,
                       "'" + info.traits.peer_arg + "' " + std::to_string(given) + " of " +
                           DescribeNode(node) + " is not a position in process group '" + *group +
                           "' " + Members(members) +
                           " (c10d names the peer by its rank in the group)");
    }
    end.peer = members[static_cast<size_t>(given)];
  } else {
    if (given < 0 || given > INT32_MAX ||
        !std::binary_search(members.begin(), members.end(), static_cast<int32_t>(given))) {
      throw InputError(g.file, node.def_line,
                       "'" + info.traits.peer_arg + "' " + std::to_string(given) + " of " +
                           DescribeNode(node) + " is not a member of process group '" + *group +
                           "' " + Members(members) +
                           " (_c10d_functional names the peer by its global rank)");
    }
    end.peer = static_cast<int32_t>(given);
  }
  if (end.peer == rank) {
    throw InputError(g.file, node.def_line,
                     DescribeNode(node) + " names its own rank " + std::to_string(rank) +
                         " as the peer; a transfer goes to another rank of the group");
  }
  const bool writes_buffer = std::any_of(info.schema.args.begin(), info.schema.args.end(),
                                         [](const ir::ArgSchema& a) { return a.mutated; });
  if (info.traits.collective == ir::CollectiveKind::kRecv && writes_buffer &&
      !node.functionalized) {
    std::vector<ir::TensorRef> buffers = node.TensorInputs();
    throw InputError(
        g.file, node.def_line,
        DescribeNode(node) + " writes the received tensor into " +
            (buffers.empty() ? std::string("its buffer") : "'" + g.ValueName(buffers[0]) + "'") +
            " in place, which a value graph does not see (its readers would read the buffer "
            "before the write); write it functionalized (outputs: the Work, then the received "
            "tensor), as gg_capture does, or as _c10d_functional::irecv + wait_tensor");
  }
  std::vector<ir::TensorRef> inputs = node.TensorInputs();
  if (!inputs.empty()) end.type = g.type(inputs[0]);
  return end;
}

// A point in a rank's graph where the executor's model may stop: before node `index` (the end
// of the graph: index == nodes.size()).
struct Event {
  enum Kind { kNeed, kPost, kCollective };
  size_t index = 0;
  Kind kind = kNeed;
  size_t transfer = 0;  // kNeed, kPost
  std::string group;    // kCollective
  size_t call = 0;      // kCollective: the call's number on its group
  friend bool operator<(const Event& a, const Event& b) {
    // at one node: what it reads first (needs), then what it does (post, collective)
    return std::tie(a.index, a.kind) < std::tie(b.index, b.kind);
  }
};

// The deadlock check: runs the events of every rank as the executor would.
void CheckProgress(const ir::Program& program, const std::vector<ir::Transfer>& transfers) {
  const int32_t world = program.world_size();
  const ir::OpRegistry& registry = ir::OpRegistry::Default();
  std::vector<std::vector<Event>> events(world);
  std::map<std::pair<int32_t, ir::NodeId>, size_t> recv_of;  // (rank, recv node) -> transfer
  for (size_t t = 0; t < transfers.size(); ++t) {
    events[transfers[t].src].push_back(
        Event{static_cast<size_t>(transfers[t].send), Event::kPost, t, "", 0});
    recv_of[{transfers[t].dst, transfers[t].recv}] = t;
  }
  for (int32_t r = 0; r < world; ++r) {
    const ir::Graph& g = program.rank(r);
    std::map<std::string, size_t> calls;
    std::set<size_t> read;  // transfers whose value this rank read already
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& node = g.nodes[i];
      for (const ir::TensorRef& in : node.TensorInputs()) {
        auto it = recv_of.find({r, in.node});
        if (it != recv_of.end() && read.insert(it->second).second) {
          events[r].push_back(Event{i, Event::kNeed, it->second, "", 0});
        }
      }
      if (node.kind != ir::NodeKind::kOperator) continue;
      const ir::OpInfo* info = registry.Find(node.op);
      if (info == nullptr) continue;
      const ir::CollectiveKind kind = info->traits.collective;
      if (kind == ir::CollectiveKind::kNone || kind == ir::CollectiveKind::kWait ||
          ir::IsPointToPoint(kind)) {
        continue;
      }
      std::optional<std::string> group = GroupNameOf(*info, node);
      if (!group) continue;
      events[r].push_back(Event{i, Event::kCollective, 0, *group, calls[*group]++});
    }
    for (const auto& [key, t] : recv_of) {  // received, never read: completes at the end
      if (key.first == r && read.count(t) == 0) {
        events[r].push_back(Event{g.nodes.size(), Event::kNeed, t, "", 0});
      }
    }
    std::stable_sort(events[r].begin(), events[r].end());
  }
  std::vector<size_t> at(world, 0);
  std::vector<bool> posted(transfers.size(), false);
  auto members_of = [&](const std::string& group) {
    auto it = program.groups.find(group);
    if (it != program.groups.end()) return it->second;
    std::vector<int32_t> all;
    for (int32_t r = 0; r < world; ++r) all.push_back(r);
    return all;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int32_t r = 0; r < world; ++r) {
      while (at[r] < events[r].size()) {
        const Event& e = events[r][at[r]];
        if (e.kind == Event::kPost) {
          posted[e.transfer] = true;
        } else if (e.kind != Event::kNeed || !posted[e.transfer]) {
          break;
        }
        ++at[r];
        progress = true;
      }
    }
    for (int32_t r = 0; r < world; ++r) {
      if (at[r] >= events[r].size() || events[r][at[r]].kind != Event::kCollective) continue;
      const Event& e = events[r][at[r]];
      std::vector<int32_t> members = members_of(e.group);
      bool ready = true;
      for (int32_t m : members) {
        ready = ready && at[m] < events[m].size() && events[m][at[m]].kind == Event::kCollective &&
                events[m][at[m]].group == e.group && events[m][at[m]].call == e.call;
      }
      if (!ready) continue;
      for (int32_t m : members) ++at[m];
      progress = true;
    }
  }
  std::string waits;
  int32_t first = -1;
  for (int32_t r = 0; r < world; ++r) {
    if (at[r] >= events[r].size()) continue;
    if (first < 0) first = r;
    const ir::Graph& g = program.rank(r);
    const Event& e = events[r][at[r]];
    const std::string here = e.index < g.nodes.size()
                                 ? Where(g, static_cast<ir::NodeId>(e.index))
                                 : g.file + ":" + std::to_string(g.return_line) + " (the end)";
    waits += "; rank " + std::to_string(r) + " waits at " + here;
    if (e.kind == Event::kCollective) {
      waits += " in collective #" + std::to_string(e.call + 1) + " on group '" + e.group +
               "' for its other members";
    } else {
      const ir::Transfer& t = transfers[e.transfer];
      waits += " for the tensor rank " + std::to_string(t.src) + " sends at " +
               Where(program.rank(t.src), t.send) + " (received at " + Where(g, t.recv) + ")";
    }
  }
  if (first < 0) return;
  const ir::Graph& g = program.rank(first);
  const Event& e = events[first][at[first]];
  throw InputError(g.file, e.index < g.nodes.size() ? g.nodes[e.index].def_line : g.return_line,
                   "the ranks deadlock: no rank can go on (a send posts its tensor and goes on, a "
                   "receive completes where its value is first read, a collective waits for its "
                   "whole group)" +
                       waits +
                       "; reorder the transfers so that each tensor is sent before its "
                       "receiver needs it");
}

}  // namespace

int32_t ReceivedOutput(const ir::OpInfo& info, const ir::Node& node) {
  if (!node.functionalized) return 0;
  return static_cast<int32_t>(std::max<size_t>(info.schema.returns.size(), 1));
}

std::vector<ir::Transfer> PairTransfers(const ir::Program& program) {
  const ir::OpRegistry& registry = ir::OpRegistry::Default();
  // (group, src, dst) -> the sends of src and the receives of dst, in node order
  std::map<std::tuple<std::string, int32_t, int32_t>, std::pair<std::vector<End>, std::vector<End>>>
      queues;
  for (int32_t r = 0; r < program.world_size(); ++r) {
    const ir::Graph& g = program.rank(r);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& node = g.nodes[i];
      if (node.kind != ir::NodeKind::kOperator) continue;
      const ir::OpInfo* info = registry.Find(node.op);
      if (info == nullptr || !ir::IsPointToPoint(info->traits.collective)) continue;
      End end = ResolveEnd(program, r, static_cast<ir::NodeId>(i), *info);
      const bool send = info->traits.collective == ir::CollectiveKind::kSend;
      auto& queue = queues[{end.group, send ? r : end.peer, send ? end.peer : r}];
      (send ? queue.first : queue.second).push_back(std::move(end));
    }
  }
  std::vector<ir::Transfer> transfers;
  for (const auto& [key, queue] : queues) {
    const auto& [group, src, dst] = key;
    const std::vector<End>& sends = queue.first;
    const std::vector<End>& recvs = queue.second;
    const size_t n = std::min(sends.size(), recvs.size());
    for (size_t k = 0; k < n; ++k) {
      const ir::Graph& gs = program.rank(src);
      const ir::Graph& gd = program.rank(dst);
      if (sends[k].type && recvs[k].type && *sends[k].type != *recvs[k].type) {
        throw InputError(gd.file, gd.nodes.at(recvs[k].node).def_line,
                         "transfer #" + std::to_string(k + 1) + " from rank " +
                             std::to_string(src) + " to rank " + std::to_string(dst) +
                             " on group '" + group + "': " + Where(gs, sends[k].node) + " sends " +
                             TypeText(sends[k].type) + " but " + Where(gd, recvs[k].node) +
                             " receives into " + TypeText(recvs[k].type));
      }
      transfers.push_back(ir::Transfer{src, sends[k].node, dst, recvs[k].node, group});
    }
    if (sends.size() != recvs.size()) {
      const bool more_sends = sends.size() > recvs.size();
      const End& extra = more_sends ? sends[n] : recvs[n];
      const ir::Graph& ge = program.rank(extra.rank);
      throw InputError(
          ge.file, ge.nodes.at(extra.node).def_line,
          "rank " + std::to_string(src) + " sends " + std::to_string(sends.size()) +
              " tensors to rank " + std::to_string(dst) + " on group '" + group + "' but rank " +
              std::to_string(dst) + " receives " + std::to_string(recvs.size()) + " from rank " +
              std::to_string(src) + "; the first unmatched is " + Where(ge, extra.node) + ": " +
              DescribeNode(ge.nodes.at(extra.node)) + " (a " +
              (more_sends ? "send without its receive" : "receive without its send") + ")");
    }
  }
  std::sort(transfers.begin(), transfers.end(), [](const ir::Transfer& a, const ir::Transfer& b) {
    return std::tie(a.src, a.send) < std::tie(b.src, b.send);
  });
  CheckProgress(program, transfers);
  return transfers;
}

}  // namespace gg::frontend
