#include "frontend/auto_resize.h"

#include <algorithm>
#include <map>
#include <set>

#include "util/diagnostic.h"

namespace gg::frontend {
namespace {

// Candidate extents: of integer inputs first (data: batch, sequence) in dim order, then the rest
// largest first.
std::vector<int64_t> CandidateExtents(const ir::Graph& s_graph) {
  std::vector<int64_t> data, model;
  auto seen = [&](int64_t e) {
    return std::find(data.begin(), data.end(), e) != data.end() ||
           std::find(model.begin(), model.end(), e) != model.end();
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (ir::NodeId id : s_graph.inputs) {
      const ir::Node& node = s_graph.node(id);
      if (node.outputs.empty() || !node.outputs[0].type) continue;
      const ir::TensorType& type = *node.outputs[0].type;
      bool integer = !ir::IsFloatingPoint(type.dtype) && type.dtype != ir::DType::kBool;
      if ((pass == 0) != integer) continue;
      for (const ir::Dim& d : type.shape) {
        if (!d.is_static() || d.value() <= 1 || seen(d.value())) continue;
        (pass == 0 ? data : model).push_back(d.value());
      }
    }
  }
  std::sort(model.begin(), model.end(), std::greater<>());
  data.insert(data.end(), model.begin(), model.end());
  return data;
}

std::set<int64_t> StaticExtents(const ir::Program& program) {
  std::set<int64_t> extents;
  for (const ir::Graph& g : program.ranks) {
    for (const ir::Node& node : g.nodes) {
      for (const ir::NodeOutput& out : node.outputs) {
        if (!out.type) continue;
        for (const ir::Dim& d : out.type->shape) {
          if (d.is_static()) extents.insert(d.value());
        }
      }
    }
  }
  return extents;
}

std::string Text(const ResizeMap& map) { return map.empty() ? "-" : ResizeMapText(map); }

}  // namespace

AutoResize FitMemoryBudget(const ir::Graph& s_graph, const ir::Program& d_program, uint64_t budget,
                           const MemoryEstimator& estimate, const ResizeValidator& validate) {
  AutoResize result;
  result.budget = budget;
  result.before = estimate(s_graph, d_program);
  result.after = result.before;
  if (budget == 0 || result.before.peak <= budget) {
    result.fits = true;
    return result;
  }
  result.needed = true;
  std::set<int64_t> split_factors;
  if (d_program.world_size() > 1) split_factors.insert(d_program.world_size());
  for (const auto& [name, members] : d_program.groups) {
    if (members.size() > 1) split_factors.insert(static_cast<int64_t>(members.size()));
  }
  const std::set<int64_t> d_extents = StaticExtents(d_program);

  ResizeMap chosen, d_chosen, s_map, d_map;  // the seeds of S's and D's maps, and the maps
  for (int64_t extent : CandidateExtents(s_graph)) {
    if (s_map.count(extent)) continue;  // derived from an earlier choice already
    // The split factors D shows for this extent (D carries extent / k).
    std::vector<int64_t> splits;
    for (int64_t k : split_factors) {
      if (extent % k == 0 && d_extents.count(extent / k)) splits.push_back(k);
    }
    std::vector<int64_t> sizes;  // new sizes, smallest first: divisors keep derived extents whole
    for (int64_t n = 1; n < extent; ++n) {
      if (extent % n != 0) continue;
      bool ok = true;
      for (int64_t k : splits) ok = ok && n % k == 0 && n / k >= 2;
      if (ok) sizes.push_back(n);
    }
    std::string first_failure;
    const size_t kTries = 6;  // per extent: each try resizes every graph
    std::set<int64_t> s_extents;
    for (const ir::Node& node : s_graph.nodes) {
      for (const ir::NodeOutput& out : node.outputs) {
        if (!out.type) continue;
        for (const ir::Dim& d : out.type->shape) {
          if (d.is_static()) s_extents.insert(d.value());
        }
      }
    }
    for (size_t t = 0; t < 2 * sizes.size() && t < 2 * kTries; ++t) {
      int64_t n = sizes[t / 2];
      // Second variant: a shard size that S also carries (a vocabulary of 64 split in 2 is 32,
      // the hidden size too) must shrink in S as well, or the spec's shards no longer divide.
      bool joint = t % 2 == 1;
      bool shared = false;
      for (int64_t k : splits) shared = shared || s_extents.count(extent / k);
      if (joint && !shared) continue;
      // Derived extents are derived again from the seeds (12288 = 8 x 1536 follows both).
      ResizeMap s_seeds = chosen, d_seeds = d_chosen;
      s_seeds[extent] = n;
      d_seeds[extent] = n;
      for (int64_t k : splits) {
        d_seeds[extent / k] = n / k;
        if (joint && s_extents.count(extent / k)) s_seeds[extent / k] = n / k;
      }
      try {
        std::map<int64_t, std::string> reverted;
        ResizeMap s_try = DeriveResizeMap(s_graph, s_seeds, {}, &reverted);
        ResizeMap d_try = DeriveProgramResizeMap(d_program, d_seeds, &reverted);
        // A chosen extent that some literal must keep also stands for another size there (a
        // sequence of 8 and a head dim of 8): S and D could then be resized into programs that
        // differ, so the choice is refused.
        for (const auto& [value, where] : reverted) {
          if (s_seeds.count(value) || d_seeds.count(value)) {
            throw InputError(s_graph.file, 0,
                             std::to_string(value) + " also stands for another size at " + where);
          }
        }
        ir::Graph s_resized = ResizeGraph(s_graph, s_try);
        ir::Program d_resized = ResizeProgram(d_program, d_try);
        validate(s_resized, d_resized);
        chosen = s_seeds;
        d_chosen = d_seeds;
        s_map = std::move(s_try);
        d_map = std::move(d_try);
        result.after = estimate(s_resized, d_resized);
        result.s_graph = std::move(s_resized);
        result.d_program = std::move(d_resized);
        first_failure.clear();
        break;
      } catch (const InputError& e) {
        if (first_failure.empty()) {
          first_failure = ResizeMapText(s_seeds) + ": " + e.problem();
        }
      }
    }
    if (!first_failure.empty()) result.rejected.push_back(first_failure);
    if (!chosen.empty() && result.after.peak <= budget) break;
  }
  result.chosen = chosen;
  result.s_map = s_map;
  result.d_map = d_map;
  std::string over =
      "estimated peak " + FormatBytes(result.before.peak) + " > budget " + FormatBytes(budget);
  if (!chosen.empty() && result.after.peak <= budget) {
    result.fits = true;
    result.note = over + ": ran at " + ResizeMapText(chosen) + " (S " + Text(s_map) + "; D " +
                  Text(d_map) + "); estimate now " + FormatBytes(result.after.peak);
  } else {
    result.note = over + ", and no resize brings it under: " +
                  (chosen.empty() ? std::string("no extent could shrink")
                                  : "the smallest sizes found (" + ResizeMapText(chosen) +
                                        ") still need " + FormatBytes(result.after.peak));
  }
  return result;
}

}  // namespace gg::frontend
