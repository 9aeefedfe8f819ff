#include "cli/distributed_commands.h"

#include <mpi.h>

#include <exception>
#include <new>
#include <optional>
#include <string>

#include "cli/numeric_commands.h"
#include "report/exit_codes.h"
#include "runtime/mpi/distributed_check.h"
#include "util/diagnostic.h"

namespace gg::cli {
namespace {

// MPI for the lifetime of one command: initialized here unless the caller did it, and then
// finalized here too.
class MpiSession {
 public:
  MpiSession() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
        throw std::runtime_error("MPI_Init failed (is this run under mpirun?)");
      }
      owned_ = true;
    }
  }
  ~MpiSession() {
    if (owned_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owned_ = false;
};

// The exit code RunGraphGuard gives an exception (app.h).
int ExitCodeOf(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const UsageError&) {
    return report::kExitBadInput;
  } catch (const InputError&) {
    return report::kExitBadInput;
  } catch (...) {
    return report::kExitInternalError;
  }
}

}  // namespace

int RunDistributedCheckCommand(const ParsedCommand& command, std::ostream& out) {
  MpiSession session;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = report::kExitOk;
  std::exception_ptr error;
  try {
    // Every process loads the same files; the processes agree on the first failure anyway, so
    // that none goes on into D's collectives alone.
    std::optional<CheckSetup> setup;
    std::optional<runtime::ProcessFailure> mine;
    try {
      setup = PrepareCheck(command);
    } catch (const UsageError& e) {
      mine = runtime::ProcessFailure{runtime::ProcessFailure::Kind::kUsage, "", 0, e.what(), rank};
    } catch (...) {
      mine = runtime::FailureOf(std::current_exception());
      mine->rank = rank;
    }
    if (std::optional<runtime::ProcessFailure> first = runtime::FirstFailure(mine)) {
      if (first->kind == runtime::ProcessFailure::Kind::kUsage) throw UsageError(first->text);
      runtime::Rethrow(*first);
    }
    std::string dist;
    for (const std::string& path : setup->info.dist) dist += (dist.empty() ? "" : " ") + path;
    runtime::CheckResult result = runtime::RunDistributedCheck(
        setup->s_graph, setup->d_program, setup->relations, setup->inferred, setup->options,
        command.Has("--exact-collectives") ? runtime::MpiCollectives::Mode::kExactReference
                                           : runtime::MpiCollectives::Mode::kNative,
        MPI_COMM_WORLD, dist);
    if (rank == 0) code = ReportCheck(command, *setup, result, out);
  } catch (...) {
    error = std::current_exception();
    code = ExitCodeOf(error);
  }
  out.flush();
  runtime::WaitQuietly();  // the others wait here while rank 0 runs S and writes the report
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  // Rank 0's error is printed by RunGraphGuard as in a single-process run; the others stay quiet.
  if (rank == 0 && error) std::rethrow_exception(error);
  return code;
}

}  // namespace gg::cli
