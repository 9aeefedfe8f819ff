// Memory estimate: how many bytes a numeric run of S and D (graphguard check, verify's numeric
// evidence: runtime/check.h) holds at its peak, computed from the graphs' static types before
// anything runs, so a run that would not fit is resized (frontend/auto_resize.h) instead of being
// killed by the kernel. No LibTorch: it follows the executor's plan (runtime/executor.h) on the
// IR.
//
// What the check holds at once, and how it is counted:
// - the inputs and graph constants of S and of every rank of D (drawn once, kept for every pass);
// - while D runs: every rank's live values, the ranks interleaved in one process (each runs to its
//   next collective), bounded by the sum of the ranks' own peaks; plus the D tensors kept for the
//   comparisons;
// - while S runs (perturbed, then plain): S's live values (with a perturbed copy of each
//   operator's outputs), the kept D tensors, the tolerance model's samples of each compared S
//   tensor and the temporaries of one comparison.
// A graph's live values follow its node order: an operator's outputs exist from the node on and
// are freed after their last use (graph outputs too: a check does not keep them), wait_tensor
// aliases its input, and every other operator (views included: an upper bound) allocates its
// outputs plus one output-sized temporary while it runs.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"

namespace gg::frontend {

// Bytes of a value of this type (symbolic dims count as 1).
uint64_t TensorBytes(const ir::TensorType& type);

struct GraphMemory {
  uint64_t inputs = 0;  // graph inputs (held by the caller for the whole run)
  uint64_t peak = 0;    // the most bytes of constants and operator values live at once
  size_t peak_node = 0;
};
// The liveness of one graph run in node order (see above); each operator also holds
// `temporaries` output-sized temporaries while it runs (S's perturbed run holds two: the
// kernel's and the perturbed copy of its outputs, runtime/tolerance.h).
GraphMemory EstimateGraphMemory(const ir::Graph& graph, int temporaries = 1);

// What a check compares: the S tensors of its relations and the D tensors they read, per rank.
struct CheckFootprint {
  std::vector<ir::TensorRef> compared;
  std::vector<std::set<ir::TensorRef>> kept;  // by rank (D inputs and constants are free)
  // Bytes of kept D tensors one pass holds at most (CheckOptions::memory_budget); 0: no bound.
  uint64_t keep_budget = 0;
};

struct MemoryEstimate {
  uint64_t inputs = 0;           // S's and every rank's inputs
  uint64_t d_run = 0;            // D's live values (sum over ranks) and the kept D tensors
  uint64_t s_run = 0;            // S's live values, kept D tensors, samples, one comparison
  uint64_t peak = 0;             // inputs + max(d_run, s_run)
  std::string ToString() const;  // "3.1 GiB (inputs 0.4 GiB, D run 2.7 GiB, S run 1.9 GiB)"
};
MemoryEstimate EstimateCheckMemory(const ir::Graph& s_graph, const ir::Program& d_program,
                                   const CheckFootprint& footprint);

// "31.2 GiB", "512 MiB", "900 KiB", "12 B" (binary units, three significant digits).
std::string FormatBytes(uint64_t bytes);

// A --memory-budget value: "8G", "512M", "1.5GiB", "2048" (bytes), binary units K, M, G, T with
// an optional "iB" or "B"; "0" or "none" is 0 (no budget). std::invalid_argument otherwise.
uint64_t ParseMemorySize(const std::string& text);

// The default budget: half of MemAvailable in /proc/meminfo (the rest is left to the process's
// own code, LibTorch's allocator slack and everything else on the machine); a quarter of the
// physical memory when /proc/meminfo cannot be read.
uint64_t DefaultMemoryBudget();
// The MemAvailable line of a /proc/meminfo text, in bytes (0 when absent).
uint64_t MemAvailableOf(const std::string& meminfo);

}  // namespace gg::frontend
