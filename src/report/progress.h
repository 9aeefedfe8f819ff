// Progress: the one line a long `verify` or `check` rewrites on a terminal's stderr — S operators
// done of total, the current layer (when the parameter names tell it), elapsed time and an
// estimate of the rest; the numeric run's passes.
//
// Only for people watching: the CLI makes one only when stderr is a terminal and --quiet is not
// given, it appears once a run has lasted a second, and it is erased before anything else is
// printed, so standard output, files and golden reports never contain it. Drawing happens on the
// caller's thread, at its updates (at most every 100 ms); nothing runs in the background.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace gg::report {

struct ProgressState {
  std::string what;   // "verify", "check"
  std::string phase;  // "", "numeric evidence", "pass 1/2: D"
  size_t done = 0;    // units done (S operators), 0 with total 0: none counted
  size_t total = 0;
  std::string unit;  // "S operators"
  std::optional<int> layer;
  double elapsed = 0;  // seconds
  // The estimate of what remains: from done/total when both are known.
  bool eta = true;
};

// "verify: 120/2000 S operators (6%), layer 3, 12 s elapsed, ETA 3 min 8 s".
std::string FormatProgress(const ProgressState& state);
// "12 s", "3 min 8 s", "1 h 2 min".
std::string DurationText(double seconds);
// The layer number a parameter name carries ("layers_3_attn_q_weight", "model.layers.3.mlp",
// "transformer_h_11_ln_1_weight", "blocks_0_..." -> 3, 3, 11, 0), or nullopt.
std::optional<int> LayerOfName(std::string_view name);

class ProgressLine {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  // `out` null: silent (every call is a no-op). The line is drawn only once `show_after` seconds
  // have passed since construction.
  explicit ProgressLine(std::ostream* out, double show_after = 1.0, Clock clock = {});
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Redraws with `state` (its elapsed is filled in here), unless drawn under 100 ms ago and not
  // `force`d (a new phase is drawn at once: it may last long with no update after it).
  void Update(ProgressState state, bool force = false);
  // Erases the line if one is drawn: call before printing anything else.
  void Clear();
  double Elapsed() const;
  bool enabled() const { return out_ != nullptr; }

 private:
  std::ostream* out_;
  double show_after_;
  Clock clock_;
  double start_;
  double last_draw_ = -1;
  size_t drawn_ = 0;  // width of the line on screen
};

// Verify's progress: the InferenceOptions::progress callback turned into lines. S operators are
// counted in topological order (an operator skipped because nothing needs it counts as done);
// the current layer is the one of the last layer parameter an operator read.
class VerifyProgress {
 public:
  VerifyProgress(const ir::Graph& s_graph, ProgressLine* line);
  void OnOperator(ir::NodeId next);
  // A stage after the symbolic engine ("numeric evidence"): shown without count or estimate.
  void Phase(const std::string& phase);

 private:
  ProgressLine* line_;
  std::vector<size_t> operators_before_;         // by node: operator nodes before it
  std::vector<std::optional<int>> reads_layer_;  // by node: layer of a parameter it reads
  size_t total_ = 0;
  std::optional<int> layer_;
};

}  // namespace gg::report
