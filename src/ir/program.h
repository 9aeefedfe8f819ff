// Program: what GraphGuard checks — one graph per rank plus the process groups their collectives
// name. The sequential model is a Program with one graph (rank 0) and no groups.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gg::ir {

// A point-to-point transfer: the tensor that the send node `send` of rank `src` posts is the
// value that the receive node `recv` of rank `dst` gets (frontend/p2p.h pairs them).
struct Transfer {
  int32_t src = 0;
  NodeId send = -1;
  int32_t dst = 0;
  NodeId recv = -1;
  std::string group;  // the process group both name
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

struct Program {
  std::vector<Graph> ranks;                           // index == rank
  std::map<std::string, std::vector<int32_t>> groups;  // group name -> member ranks, ascending
  // Every point-to-point transfer, paired by the loader (frontend::PairTransfers), in the order
  // of the sending rank and its nodes. Derived from the graphs: not written by import.
  std::vector<Transfer> transfers;

  int32_t world_size() const { return static_cast<int32_t>(ranks.size()); }
  const Graph& rank(int32_t r) const { return ranks.at(r); }
  // The transfer a send or receive node takes part in, or nullptr.
  const Transfer* TransferOf(int32_t rank, NodeId node) const {
    for (const Transfer& t : transfers) {
      if ((t.src == rank && t.send == node) || (t.dst == rank && t.recv == node)) return &t;
    }
    return nullptr;
  }
};

}  // namespace gg::ir
