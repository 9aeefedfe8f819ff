// Stats report: what `graphguard stats` prints about a loaded program.
//
// Per rank: node counts (inputs, constants, operator calls), operator histogram sorted by count
// then name, collectives per process group with their kinds, and the number of graph inputs and
// outputs. The text is deterministic (no paths, no addresses, ordered containers), so the same
// program read from FX text or from its GraphGuard JSON prints byte-identical stats.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/program.h"

namespace gg::report {

struct RankStats {
  int32_t rank = 0;
  std::string graph_name;
  int64_t nodes = 0;       // inputs + constants + operators
  int64_t inputs = 0;
  int64_t constants = 0;
  int64_t operators = 0;
  int64_t outputs = 0;
  // (operator, count), sorted by count descending then operator name ascending. Functionalized
  // calls (auto_functionalized in FX) are listed as "<op> [functionalized]".
  std::vector<std::pair<std::string, int64_t>> operator_counts;
  // group name -> collective kind ("all_reduce", "all_gather", ...) -> count. wait_tensor is not
  // a collective of its own (it is counted among the operators).
  std::map<std::string, std::map<std::string, int64_t>> collectives;
  // Operators the registry does not know (loaded as opaque nodes typed from the file's
  // annotations) -> count, in operator-name order.
  std::map<std::string, int64_t> unknown_operators;
};

struct ProgramStats {
  std::vector<RankStats> ranks;
  std::map<std::string, std::vector<int32_t>> groups;
};

// Uses the operator registry's traits to recognise collectives and their group arguments.
ProgramStats ComputeStats(const ir::Program& program);
std::string FormatStats(const ProgramStats& stats);

}  // namespace gg::report
