#include "runtime/check.h"

#include <ATen/CPUGeneratorImpl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <type_traits>
#include <variant>

#include "runtime/input_synthesis.h"
#include "runtime/op_kernels.h"
#include "runtime/relation_eval.h"
#include "runtime/tolerance.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

constexpr int64_t kNoiseSamples = 1 << 16;
// The fewest samples of the rounding noise a failing checked tensor is judged on: the spread of
// a tensor of fewer elements (a scalar loss) from one perturbed run is itself a single random
// draw (a bf16 MoE's loss at TP 4 gave tolerances from 0.003 to 0.12 over eight seeds, and one
// correct seed failed by 2.9x). Such a tensor that fails its comparison is judged again on the
// samples of enough further perturbed runs of S (at most kMaxReferenceRuns in all); one that
// holds is not (the runs would cost every joint graph's check, whose loss is a scalar, up to 8
// runs of S).
constexpr int64_t kMinNoiseSamples = 8;
constexpr int64_t kMaxReferenceRuns = 8;

// The perturbed runs of S that give a tensor of `elements` elements kMinNoiseSamples samples.
int64_t ReferenceRunsFor(int64_t elements) {
  if (elements <= 0) return 1;
  return std::min((kMinNoiseSamples + elements - 1) / elements, kMaxReferenceRuns);
}

void CollectLeaves(const symbolic::RelExpr& expr, std::vector<std::set<ir::TensorRef>>* keep) {
  std::visit(
      [&](const auto& node) {
        using T = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<T, symbolic::DTensor>) {
          if (node.rank >= 0 && static_cast<size_t>(node.rank) < keep->size()) {
            (*keep)[static_cast<size_t>(node.rank)].insert(node.tensor);
          }
        } else if constexpr (std::is_same_v<T, symbolic::Concat> ||
                             std::is_same_v<T, symbolic::Sum> || std::is_same_v<T, symbolic::Max> ||
                             std::is_same_v<T, symbolic::Min>) {
          for (const symbolic::RelExpr& child : node.children) CollectLeaves(child, keep);
        } else {
          CollectLeaves(node.child, keep);
        }
      },
      expr.node().kind);
}

// The flat indices at which the perturbed reference run is sampled (all elements of a small
// tensor; a fixed random subset of a large one).
at::Tensor SampleIndices(int64_t numel, uint64_t seed) {
  if (numel <= kNoiseSamples) return at::arange(numel, at::kLong);
  at::Generator generator = at::detail::createCPUGenerator(seed);
  return at::randint(numel, {kNoiseSamples}, generator, at::TensorOptions().dtype(at::kLong));
}

// Bytes D's run keeps for `ref` (inputs and constants are alive anyway: none).
uint64_t KeptBytes(const ir::Graph& graph, ir::TensorRef ref) {
  const ir::Node& node = graph.node(ref.node);
  if (node.kind != ir::NodeKind::kOperator || ref.output < 0 ||
      static_cast<size_t>(ref.output) >= node.outputs.size() || !node.outputs[ref.output].type) {
    return 0;
  }
  const ir::TensorType& type = *node.outputs[ref.output].type;
  uint64_t elements = 1;
  for (const ir::Dim& d : type.shape)
    elements *= d.is_static() ? static_cast<uint64_t>(d.value()) : 1;
  return elements * at::elementSize(ToAten(type.dtype));
}

// A quarter of the machine's memory: D's and S's runs need their own working memory besides.
uint64_t DefaultMemoryBudget() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{4} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

std::vector<ir::TensorRef> TensorOutputs(const ir::Graph& graph, ir::NodeId node) {
  std::vector<ir::TensorRef> refs;
  const ir::Node& n = graph.node(node);
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    if (n.outputs[o].type) refs.push_back(ir::TensorRef{node, static_cast<int32_t>(o)});
  }
  return refs;
}

std::string_view RelationKindName(RelationKind kind) {
  switch (kind) {
    case RelationKind::kExpectedOutput:
      return "expected";
    case RelationKind::kAssumed:
      return "assumed";
    case RelationKind::kInferred:
      return "inferred";
  }
  return "?";
}

CheckPlan PlanCheck(const ir::Graph& s_graph, const ir::Program& d_program,
                    const symbolic::SpecResult& spec,
                    const std::vector<symbolic::Relation>& inferred, const CheckOptions& options) {
  CheckPlan plan;
  std::map<ir::TensorRef, std::vector<RelationCheck>>& pending = plan.pending;
  auto add = [&](const symbolic::Relation& relation, RelationKind kind) {
    RelationCheck check;
    check.relation = relation;
    check.kind = kind;
    check.s_order = static_cast<size_t>(relation.s_tensor.node);
    pending[relation.s_tensor].push_back(std::move(check));
  };
  for (const symbolic::Relation& r : spec.expected_outputs) add(r, RelationKind::kExpectedOutput);
  for (const symbolic::Relation& r : spec.assumed) add(r, RelationKind::kAssumed);
  for (const symbolic::Relation& r : inferred) {
    // Relations of S inputs hold by construction (SynthesizeInputs checks them forwards); the
    // inputs include the largest tensors (embedding tables), so they are not compared again.
    if (s_graph.node(r.s_tensor.node).kind == ir::NodeKind::kInput) continue;
    add(r, RelationKind::kInferred);
  }

  // Passes: D's run keeps the tensors the relations name until S produces the tensors they
  // rebuild. When those would not fit the memory budget, the S tensors are split into passes in
  // S order, each re-running D and S (the perturbed S run happens once, in the first pass).
  const size_t world = static_cast<size_t>(d_program.world_size());
  std::vector<std::vector<ir::TensorRef>>& passes = plan.passes;
  std::vector<std::vector<std::set<ir::TensorRef>>>& pass_keep = plan.keep;
  const uint64_t budget = options.memory_budget ? options.memory_budget : DefaultMemoryBudget();
  uint64_t bytes = 0;
  for (const auto& [tensor, checks] : pending) {
    std::vector<std::set<ir::TensorRef>> leaves(world);
    for (const RelationCheck& c : checks) CollectLeaves(c.relation.expr, &leaves);
    uint64_t added = 0;
    for (size_t r = 0; r < world; ++r) {
      for (const ir::TensorRef& ref : leaves[r]) {
        if (!passes.empty() && pass_keep.back()[r].count(ref)) continue;
        added += KeptBytes(d_program.rank(static_cast<int32_t>(r)), ref);
      }
    }
    if (passes.empty() || (bytes + added > budget && !passes.back().empty())) {
      passes.emplace_back();
      pass_keep.emplace_back(world);
      bytes = 0;
      added = 0;
      for (size_t r = 0; r < world; ++r) {
        for (const ir::TensorRef& ref : leaves[r]) {
          added += KeptBytes(d_program.rank(static_cast<int32_t>(r)), ref);
        }
      }
    }
    bytes += added;
    passes.back().push_back(tensor);
    for (size_t r = 0; r < world; ++r)
      pass_keep.back()[r].insert(leaves[r].begin(), leaves[r].end());
  }
  if (passes.empty()) {
    passes.emplace_back();
    pass_keep.emplace_back(world);
  }
  return plan;
}

ValueObserver DFingerprintObserver(const ir::Graph& s_graph, const ir::Program& d_program,
                                   const CheckOptions& options, FingerprintTable* table) {
  if (options.classify.empty()) return {};
  std::vector<const ir::Graph*> graphs;
  for (const ir::Graph& g : d_program.ranks) graphs.push_back(&g);
  // Only D tensors that could take part in a candidate for a classified S tensor: as many
  // dimensions, or as many elements, and no more than world-size times its elements.
  auto fingerprint = FingerprintObserver(table, graphs);
  std::vector<std::pair<int64_t, int64_t>> wanted;  // (dims, elements) of the S tensors
  for (const ir::TensorRef& ref : options.classify) {
    const ir::TensorType& type = s_graph.type(ref);
    int64_t elements = 1;
    for (const ir::Dim& d : type.shape) elements *= d.is_static() ? d.value() : 1;
    wanted.emplace_back(static_cast<int64_t>(type.shape.size()), elements);
  }
  const int64_t world_size = d_program.world_size();
  return
      [fingerprint, wanted, world_size](int32_t rank, ir::TensorRef ref, const at::Tensor& value) {
        for (const auto& [dims, elements] : wanted) {
          if ((value.dim() == dims || value.numel() == elements) &&
              value.numel() <= elements * world_size) {
            fingerprint(rank, ref, value);
            return;
          }
        }
      };
}

ProgramInputs InputsOn(ProgramInputs inputs, at::Device device) {
  auto move = [device](GraphInputs& g) {
    for (at::Tensor& t : g.inputs) {
      if (t.defined()) t = t.to(device);
    }
    for (auto& [name, t] : g.constants) {
      if (t.defined()) t = t.to(device);
    }
  };
  move(inputs.s);
  for (GraphInputs& d : inputs.d) move(d);
  return inputs;
}

ExecutionOptions CheckExecutionOptions(const CheckOptions& options) {
  ExecutionOptions exec;
  exec.dropout_off = options.dropout_off;
  exec.seed = options.seed;
  exec.keep_outputs = false;  // only observed and kept values matter
  exec.device = options.device;
  return exec;
}

CheckResult RunCheck(const ir::Graph& s_graph, const ir::Program& d_program,
                     const symbolic::SpecResult& spec,
                     const std::vector<symbolic::Relation>& inferred, const CheckOptions& options) {
  // Drawn on the CPU, moved once: every pass runs S and D from the same device copies.
  ProgramInputs inputs =
      InputsOn(SynthesizeInputs(s_graph, d_program, spec, options.seed,
                                options.s_inputs.empty() ? nullptr : &options.s_inputs),
               options.device);
  if (!options.s_inputs_note.empty())
    inputs.notes.insert(inputs.notes.begin(), options.s_inputs_note);
  CheckPlan plan = PlanCheck(s_graph, d_program, spec, inferred, options);
  auto run_d = [&](size_t pass, const ExecutionOptions& exec, FingerprintTable* fingerprints) {
    ExecutionOptions d_exec = exec;
    if (fingerprints)
      d_exec.observe = DFingerprintObserver(s_graph, d_program, options, fingerprints);
    std::vector<ExecutionResult> results =
        ExecuteProgram(d_program, inputs.d, d_exec, plan.keep[pass]);
    DPass d;
    d.random_mode = results.empty() ? "dropout off" : results[0].random_mode;
    for (ExecutionResult& r : results) d.kept.push_back(std::move(r.kept));
    return d;
  };
  return RunCheckPasses(s_graph, d_program, plan, inputs, options, run_d);
}

CheckResult RunCheckPasses(const ir::Graph& s_graph, const ir::Program& d_program, CheckPlan plan,
                           const ProgramInputs& inputs, const CheckOptions& options,
                           const DPassRunner& run_d) {
  CheckResult result;
  result.seed = options.seed;
  result.device = options.device.str();
  result.input_notes = inputs.notes;
  std::map<ir::TensorRef, std::vector<RelationCheck>>& pending = plan.pending;
  const std::vector<std::vector<ir::TensorRef>>& passes = plan.passes;
  result.passes = passes.size();

  const ExecutionOptions exec = CheckExecutionOptions(options);
  FingerprintTable d_prints, s_prints;
  const bool classify = !options.classify.empty();
  ValueObserver s_fingerprint;
  if (classify) {
    auto s_print = FingerprintObserver(&s_prints, {&s_graph});
    std::set<ir::TensorRef> classified(options.classify.begin(), options.classify.end());
    s_fingerprint = [s_print, classified](int32_t rank, ir::TensorRef ref,
                                          const at::Tensor& value) {
      if (classified.count(ref)) s_print(rank, ref, value);
    };
  }

  // indices, and the values at them in each perturbed run
  std::map<ir::TensorRef, std::pair<at::Tensor, std::vector<at::Tensor>>> samples;
  // The perturbed runs of S: samples of the checked tensors (tolerance.h); `sampled` names the
  // tensors a run samples (nullptr: every pending one). One generator for all of them.
  ExecutionOptions reference = exec;
  at::Generator noise = at::detail::createCPUGenerator(options.seed ^ 0x9e3779b97f4a7c15ULL);
  const std::set<ir::TensorRef>* sampled = nullptr;
  reference.transform_outputs = [&](int32_t, const ir::Node& node,
                                    std::vector<at::Tensor>& outputs) {
    for (at::Tensor& t : outputs) {
      if (!t.defined() || !at::isFloatingType(t.scalar_type())) continue;
      t = Perturb(t, PerturbationAmplitude(s_graph, node, FromAten(t.scalar_type())), noise);
    }
  };
  reference.observe = [&](int32_t, ir::TensorRef ref, const at::Tensor& value) {
    if (!pending.count(ref) || !at::isFloatingType(value.scalar_type())) return;
    if (sampled != nullptr && !sampled->count(ref)) return;
    at::Tensor index = SampleIndices(value.numel(), static_cast<uint64_t>(ref.node) * 131 +
                                                        static_cast<uint64_t>(ref.output))
                           .to(value.device());
    auto& [indices, values] = samples[ref];
    indices = index;
    values.push_back(value.reshape({-1}).index_select(0, index).to(at::kDouble));
  };
  // The tolerance of a floating S value from its samples (TailFactor * sqrt(2) * sigma, sigma
  // at least one rounding of its RMS) and the magnitude compare.h scales it by.
  struct Noise {
    double tolerance = 0, sigma = 0, magnitude = 0;
  };
  auto noise_of = [&](ir::TensorRef ref, const at::Tensor& value) {
    Noise n;
    at::Tensor flat = value.reshape({-1}).to(CompareType(value.scalar_type()));
    double u = UnitRoundoff(FromAten(value.scalar_type()));
    double rms = flat.numel()
                     ? flat.masked_fill(flat.isnan(), 0).square().mean().sqrt().item<double>()
                     : 0.0;
    if (auto s = samples.find(ref); s != samples.end() && flat.numel() > 0) {
      at::Tensor one = flat.index_select(0, s->second.first).to(at::kDouble);
      const int64_t reference_runs = static_cast<int64_t>(s->second.second.size());
      // every perturbed run against the plain one: the samples of all runs pooled
      at::Tensor plain_sample = one.repeat({reference_runs});
      at::Tensor d = plain_sample - at::cat(s->second.second);
      d = d.masked_fill(d.isnan(), 0);
      // The spread of computed elements: entries zero in both runs (expert rows no token
      // chose, masked positions) are exact and would dilute the mean.
      at::Tensor computed = (plain_sample != 0).logical_or(d != 0);
      int64_t count = computed.sum().item<int64_t>();
      if (count > 0) {
        n.sigma = std::sqrt(d.square().sum().item<double>() / static_cast<double>(count));
        // The noise is relative to the values: sigma is the spread at the typical (RMS)
        // element, and larger elements carry proportionally more.
        at::Tensor values =
            plain_sample.masked_fill(plain_sample.isnan(), 0).masked_fill(plain_sample.isinf(), 0);
        n.magnitude = std::sqrt(values.square().sum().item<double>() / static_cast<double>(count));
      }
    }
    if (u * rms > n.sigma) {
      // The floor: one rounding of the tensor's RMS, so the typical element is the RMS one.
      n.sigma = u * rms;
      n.magnitude = rms;
    }
    // S and D each carry their own rounding: the difference of two independent noises of
    // spread sigma has spread sqrt(2) sigma.
    n.tolerance = TailFactor(value.numel()) * std::sqrt(2.0) * n.sigma;
    return n;
  };
  // Small tensors that failed on one perturbed run's samples, judged again after more runs: the
  // S value, and each failed check (its index in result.checks) with D's rebuilt value.
  struct Rejudge {
    at::Tensor value;
    std::vector<std::pair<size_t, at::Tensor>> checks;
  };
  std::map<ir::TensorRef, Rejudge> rejudge;
  // Runs of the check: D and S per pass, and the first perturbed S (a re-judging's further
  // perturbed runs are not counted).
  size_t runs_done = 0;
  const size_t runs = 2 * passes.size() + 1;
  auto stage = [&](size_t pass, const std::string& what) {
    if (!options.progress) return;
    std::string name = passes.size() > 1 ? "pass " + std::to_string(pass + 1) + "/" +
                                               std::to_string(passes.size()) + ": " + what
                                         : what;
    options.progress(name, runs_done++, runs);
  };
  for (size_t pass = 0; pass < passes.size(); ++pass) {
    const bool first = pass == 0;
    stage(pass, "D");
    auto start = std::chrono::steady_clock::now();
    DPass d_run;
    try {
      d_run = run_d(pass, exec, first && classify ? &d_prints : nullptr);
    } catch (const NotExecutableError&) {
      throw;  // GraphGuard's limit, not D's failure: no verdict on D from it
    } catch (const InputError& e) {
      if (!first) throw;
      // S must run on the same inputs (else the inputs, not D, are at fault: rethrown).
      result.seconds_d += Seconds(start);
      start = std::chrono::steady_clock::now();
      Execute(s_graph, inputs.s, exec);
      result.seconds_s += Seconds(start);
      result.d_failure = e.what();
      result.random_mode = options.dropout_off ? "dropout off" : "dropout seeded";
      result.all_hold = false;
      return result;
    }
    result.seconds_d += Seconds(start);
    result.random_mode = d_run.random_mode;
    auto stored = [&](int32_t rank, ir::TensorRef ref) -> at::Tensor {
      if (rank < 0 || rank >= d_program.world_size()) return at::Tensor();
      if (static_cast<size_t>(rank) < d_run.kept.size()) {
        const std::map<ir::TensorRef, at::Tensor>& kept = d_run.kept[static_cast<size_t>(rank)];
        if (auto it = kept.find(ref); it != kept.end()) return it->second;
      }
      const ir::Graph& g = d_program.rank(rank);
      for (size_t i = 0; i < g.inputs.size(); ++i) {
        if (g.inputs[i] == ref.node && ref.output == 0) return inputs.d[rank].inputs[i];
      }
      const ir::Node& node = g.node(ref.node);
      if (node.kind == ir::NodeKind::kConstant) {
        auto c = inputs.d[rank].constants.find(node.name);
        return c != inputs.d[rank].constants.end() ? c->second
                                                   : ZerosOf(node.type(), options.device);
      }
      return at::Tensor();
    };
    // D values on the comparisons' device (a distributed run receives them on the CPU).
    DValueLookup d_value = [&](int32_t rank, ir::TensorRef ref) -> at::Tensor {
      at::Tensor value = stored(rank, ref);
      return value.defined() ? value.to(options.device) : value;
    };

    if (first) {
      stage(pass, "perturbed S");
      start = std::chrono::steady_clock::now();
      Execute(s_graph, inputs.s, reference);
      result.seconds_reference = Seconds(start);
    }

    // The plain S run: this pass's tensors are compared the moment they exist.
    std::set<ir::TensorRef> in_pass(passes[pass].begin(), passes[pass].end());
    ExecutionOptions plain = exec;
    plain.observe = [&](int32_t rank, ir::TensorRef ref, const at::Tensor& value) {
      if (first && s_fingerprint) s_fingerprint(rank, ref, value);
      if (!in_pass.count(ref)) return;
      auto it = pending.find(ref);
      const bool floating = at::isFloatingType(value.scalar_type());
      const Noise n = floating ? noise_of(ref, value) : Noise{};
      // a small floating tensor, judged on fewer samples than kMinNoiseSamples
      const bool few_samples = floating && value.numel() > 0 && value.numel() < kMinNoiseSamples;
      for (RelationCheck& check : it->second) {
        check.noise = n.sigma;
        at::Tensor rebuilt;
        try {
          rebuilt = EvalRelExpr(check.relation.expr, d_value);
          check.comparison = CompareTensors(value, rebuilt, n.tolerance, n.magnitude);
          if (!check.comparison.problem.empty()) check.error = check.comparison.problem;
        } catch (const std::exception& e) {
          check.error = ErrorText(e);
        }
        if (few_samples && !check.holds() && check.error.empty()) {
          Rejudge& again = rejudge[ref];
          if (!again.value.defined()) again.value = value.clone();
          again.checks.emplace_back(result.checks.size(), rebuilt.clone());
        }
        result.checks.push_back(check);
      }
    };
    stage(pass, "S");
    start = std::chrono::steady_clock::now();
    Execute(s_graph, inputs.s, plain);
    result.seconds_s += Seconds(start);
  }
  if (!rejudge.empty()) {
    // The further perturbed runs the failing small tensors need, sampling only them.
    std::set<ir::TensorRef> again;
    int64_t runs_needed = 1;
    for (const auto& [ref, r] : rejudge) {
      again.insert(ref);
      runs_needed = std::max(runs_needed, ReferenceRunsFor(r.value.numel()));
    }
    sampled = &again;
    auto start = std::chrono::steady_clock::now();
    for (int64_t run = 1; run < runs_needed; ++run) Execute(s_graph, inputs.s, reference);
    result.seconds_reference += Seconds(start);
    for (const auto& [ref, r] : rejudge) {
      const Noise n = noise_of(ref, r.value);
      for (const auto& [index, rebuilt] : r.checks) {
        RelationCheck& check = result.checks[index];
        check.noise = n.sigma;
        check.comparison = CompareTensors(r.value, rebuilt, n.tolerance, n.magnitude);
        check.error = check.comparison.problem;
      }
    }
  }
  for (const auto& [ref, checks] : pending) {  // tensors the run never produced (None outputs)
    bool seen = false;
    for (const RelationCheck& c : result.checks) seen |= c.relation.s_tensor == ref;
    if (seen) continue;
    for (RelationCheck c : checks) {
      c.error = "S never produced this tensor";
      result.checks.push_back(c);
    }
  }
  FingerprintMatcher matcher(d_prints, options.match_all ? options.match : MatchOptions{});
  if (options.match_all) {
    for (const ir::TensorRef& ref : options.classify) {
      const TensorFingerprint* fp = s_prints.Find(0, ref);
      if (fp == nullptr) continue;
      for (const Candidate& c : matcher.HoldingCandidatesFor(*fp)) {
        for (const symbolic::RelExpr& expr : c.exprs) result.matches.emplace_back(ref, expr);
      }
    }
  } else {
    for (const ir::TensorRef& ref : options.classify) {
      result.classifications.emplace_back(ref, ClassifyNumerically(s_prints, matcher, ref));
    }
  }
  std::stable_sort(result.checks.begin(), result.checks.end(),
                   [](const RelationCheck& a, const RelationCheck& b) {
                     if (a.s_order != b.s_order) return a.s_order < b.s_order;
                     return a.kind < b.kind;
                   });
  result.all_hold = true;
  for (size_t i = 0; i < result.checks.size(); ++i) {
    if (result.checks[i].holds()) continue;
    result.all_hold = false;
    if (!result.first_failure) result.first_failure = i;
  }
  return result;
}

}  // namespace gg::runtime
