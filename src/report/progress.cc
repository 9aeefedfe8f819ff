// Progress line on a terminal (progress.h).
#include "report/progress.h"

#include <chrono>
#include <cmath>

namespace gg::report {
namespace {

// Redraws closer together than this only flicker.
constexpr double kRedrawInterval = 0.1;
// A line wider than the terminal wraps, and "\r" then rewrites only its last row: stay within the
// narrowest common width.
constexpr size_t kMaxWidth = 79;

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::string DurationText(double seconds) {
  long s = seconds <= 0 ? 0 : static_cast<long>(std::lround(seconds));
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
  return std::to_string(s / 3600) + " h " + std::to_string(s % 3600 / 60) + " min";
}

std::optional<int> LayerOfName(std::string_view name) {
  std::vector<std::string_view> tokens;
  size_t begin = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '_' || name[i] == '.') {
      if (i > begin) tokens.push_back(name.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    std::string_view t = tokens[i];
    bool layer_word = t == "layers" || t == "layer" || t == "h" || t == "blocks" || t == "block";
    if (layer_word && IsDigits(tokens[i + 1]) && tokens[i + 1].size() < 7) {
      return std::stoi(std::string(tokens[i + 1]));
    }
  }
  return std::nullopt;
}

std::string FormatProgress(const ProgressState& state) {
  std::string line = state.what + ":";
  std::string sep = " ";
  if (!state.phase.empty()) {
    line += sep + state.phase;
    sep = ", ";
  }
  if (state.total > 0) {
    line += sep + std::to_string(state.done) + "/" + std::to_string(state.total) + " " +
            state.unit + " (" + std::to_string(state.done * 100 / state.total) + "%)";
    sep = ", ";
  }
  if (state.layer) line += sep + "layer " + std::to_string(*state.layer);
  line += sep + DurationText(state.elapsed) + " elapsed";
  if (state.eta && state.total > 0 && state.done > 0 && state.done < state.total) {
    double rest = state.elapsed * static_cast<double>(state.total - state.done) /
                  static_cast<double>(state.done);
    line += ", ETA " + DurationText(rest);
  }
  return line;
}

ProgressLine::ProgressLine(std::ostream* out, double show_after, Clock clock)
    : out_(out), show_after_(show_after), clock_(clock ? std::move(clock) : SteadySeconds) {
  start_ = clock_();
}

ProgressLine::~ProgressLine() { Clear(); }

double ProgressLine::Elapsed() const { return clock_() - start_; }

void ProgressLine::Update(ProgressState state, bool force) {
  if (out_ == nullptr) return;
  double now = clock_();
  if (now - start_ < show_after_) return;
  if (!force && last_draw_ >= 0 && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  state.elapsed = now - start_;
  std::string text = FormatProgress(state);
  if (text.size() > kMaxWidth) text = text.substr(0, kMaxWidth - 3) + "...";
  // Spaces over what is left of a longer previous line.
  size_t width = text.size();
  if (drawn_ > width) text += std::string(drawn_ - width, ' ');
  *out_ << "\r" << text << std::flush;
  drawn_ = width;
}

void ProgressLine::Clear() {
  if (out_ == nullptr || drawn_ == 0) return;
  *out_ << "\r" << std::string(drawn_, ' ') << "\r" << std::flush;
  drawn_ = 0;
}

VerifyProgress::VerifyProgress(const ir::Graph& s_graph, ProgressLine* line) : line_(line) {
  operators_before_.resize(s_graph.nodes.size());
  reads_layer_.resize(s_graph.nodes.size());
  for (size_t id = 0; id < s_graph.nodes.size(); ++id) {
    const ir::Node& node = s_graph.nodes[id];
    operators_before_[id] = total_;
    if (node.kind != ir::NodeKind::kOperator) continue;
    ++total_;
    for (ir::TensorRef in : node.TensorInputs()) {
      const ir::Node& producer = s_graph.node(in.node);
      if (producer.kind == ir::NodeKind::kOperator) continue;
      if (std::optional<int> layer = LayerOfName(producer.name)) {
        reads_layer_[id] = layer;
        break;
      }
    }
  }
}

void VerifyProgress::OnOperator(ir::NodeId next) {
  if (line_ == nullptr || !line_->enabled()) return;
  size_t id = static_cast<size_t>(next);
  if (id >= operators_before_.size()) return;
  if (reads_layer_[id]) layer_ = reads_layer_[id];
  ProgressState state;
  state.what = "verify";
  state.done = operators_before_[id];
  state.total = total_;
  state.unit = "S operators";
  state.layer = layer_;
  line_->Update(state);
}

void VerifyProgress::Phase(const std::string& phase) {
  if (line_ == nullptr || !line_->enabled()) return;
  ProgressState state;
  state.what = "verify";
  state.phase = phase;
  state.eta = false;
  line_->Update(state, /*force=*/true);
}

}  // namespace gg::report
