// Program: what GraphGuard checks — one graph per rank plus the process groups their collectives
// name. The sequential model is a Program with one graph (rank 0) and no groups.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gg::ir {

struct Program {
  std::vector<Graph> ranks;                           // index == rank
  std::map<std::string, std::vector<int32_t>> groups;  // group name -> member ranks, ascending

  int32_t world_size() const { return static_cast<int32_t>(ranks.size()); }
  const Graph& rank(int32_t r) const { return ranks.at(r); }
};

}  // namespace gg::ir
