// DistributedCheck: `graphguard check --distributed` under mpirun. Process r of the communicator
// runs D's rank-r graph with MPI collectives (mpi_collectives.h); rank 0 also runs S and the
// perturbed S run, receives the D tensors the relations need (and D's fingerprints when
// classifying) and evaluates the relations exactly as RunCheck does (check.h: the same plan, the
// same passes within the memory budget, the same comparisons), so the report is the
// single-process one.
//
// Inputs are synthesized on every process from the same seed rather than on rank 0 and scattered:
// SynthesizeInputs is deterministic, so this costs no messages and no second code path, and
// rank 0 needs every rank's inputs anyway (relations may name D inputs and constants).
//
// No process hangs when another fails: every collective of D is preceded by an exchange of an
// "ok" flag over its group, and a process whose rank fails walks the rest of its graph's
// collectives with "failed" flags (the sequence is static: the graph's collective nodes in
// order), so the others see the failure at their next collective and stop too. After each pass
// the processes agree on the first failure (lowest rank whose own graph failed).
#pragma once

#include <mpi.h>

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "runtime/check.h"
#include "runtime/mpi/mpi_collectives.h"
#include "symbolic/relation.h"
#include "symbolic/relation_spec.h"

namespace gg::runtime {

// A failure as it travels between processes: what kind it was and its text, so every process
// can rethrow the same error.
struct ProcessFailure {
  enum class Kind { kInput = 2, kUsage = 5, kInternal = 4, kPeer = 6 };
  Kind kind = Kind::kInternal;
  std::string file;  // InputError's file and line
  int line = 0;
  std::string text;  // InputError's problem, or the exception's message
  int rank = 0;      // the process it happened on
};

// The failure an exception describes: InputError keeps its file and line; anything else is
// internal with its message.
ProcessFailure FailureOf(std::exception_ptr error);

// Collective over `comm`: every process learns the first failure (lowest rank; failures of kind
// kPeer, caused by another process's failure, only when there is no other), or nullopt when no
// process failed.
std::optional<ProcessFailure> FirstFailure(const std::optional<ProcessFailure>& mine,
                                           MPI_Comm comm = MPI_COMM_WORLD);

// Rethrows a failure as the exception it was (InputError; std::runtime_error otherwise).
[[noreturn]] void Rethrow(const ProcessFailure& failure);

// A barrier over `comm` that sleeps between polls: processes that wait for rank 0's S runs do not
// spin on the cores it needs (MPI implementations busy-poll in blocking calls).
void WaitQuietly(MPI_Comm comm = MPI_COMM_WORLD);

// The distributed check, collective over `comm` (its size must be D's world size: InputError
// naming `dist_path` otherwise, on every process, before any other communication). On `comm`'s
// rank 0 the result is RunCheck's on the same inputs (bit for bit with kExactReference; native
// MPI sums may round differently); the other processes return an empty result. Errors before D
// first runs are thrown on every process; later ones (D failing after the first pass, S failing)
// on rank 0 only, while the others return.
CheckResult RunDistributedCheck(const ir::Graph& s_graph, const ir::Program& d_program,
                                const symbolic::SpecResult& spec,
                                const std::vector<symbolic::Relation>& inferred,
                                const CheckOptions& options,
                                MpiCollectives::Mode mode = MpiCollectives::Mode::kNative,
                                MPI_Comm comm = MPI_COMM_WORLD, const std::string& dist_path = "");

}  // namespace gg::runtime
