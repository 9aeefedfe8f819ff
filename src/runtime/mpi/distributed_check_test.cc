// RunDistributedCheck under mpirun -np 2 (skipped with another process count), on the shared
// corpus's vLLM Qwen2 TP2 layer at reduced size: with a memory budget that splits the check into
// passes it gives rank 0 the figures of RunCheck in one process (exact collectives: equal), and
// with the seeded bug that sends embedding indices out of range (D fails on a rank) every process
// returns — no hang — and rank 0 reports the failing node as RunCheck does.
#include "runtime/mpi/distributed_check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "frontend/resize.h"
#include "symbolic/inference.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/seeded_bugs_testutil.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

using symbolic::seeded::Pair;

const char kQwenMap[] = "32768=256,151936=1024,75968=512";

// The pair at reduced size, or nullopt (skip) without the corpus or with another process count.
std::optional<Pair> QwenTp2(std::string* why) {
  if (!std::filesystem::exists(symbolic::seeded::CorpusPath("qwen2/paral2_layer1"))) {
    *why = "corpus not found";
    return std::nullopt;
  }
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    *why = "needs 2 MPI processes, this run has " + std::to_string(size);
    return std::nullopt;
  }
  return symbolic::seeded::LoadQwen2Tp2();
}

void Shrink(Pair* p) {
  p->s = frontend::ResizeGraph(p->s, frontend::ParseResizeMap(kQwenMap));
  p->d = frontend::ResizeProgram(p->d, frontend::ParseResizeMap(kQwenMap));
}

int Rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

TEST(DistributedCheck, PassesWithinAMemoryBudgetEqualOneProcess) {
  std::string why;
  std::optional<Pair> p = QwenTp2(&why);
  if (!p) GTEST_SKIP() << why;
  Shrink(&*p);
  symbolic::SpecResult spec = symbolic::EvaluateSpec(p->spec, p->s, p->d);
  // A few of verify's relations besides the expected outputs, so that there are several S
  // tensors to split into passes (every process verifies: the relations must agree).
  symbolic::VerifyResult verified =
      symbolic::Verify(p->s, p->d, spec, symbolic::LemmaCatalogue::Default().Rules(), {});
  std::vector<symbolic::Relation> inferred;
  for (const auto& [name, list] : verified.relations) {
    if (list.empty() || inferred.size() == 6) continue;
    const symbolic::Relation& r = list.front().relation;  // one per S tensor that is computed
    if (p->s.node(r.s_tensor.node).kind != ir::NodeKind::kInput) inferred.push_back(r);
  }
  CheckOptions options;
  options.seed = 3;
  options.memory_budget = 1;  // every S tensor its own pass
  CheckResult distributed = RunDistributedCheck(p->s, p->d, spec, inferred, options,
                                                MpiCollectives::Mode::kExactReference);
  if (Rank() != 0) {
    EXPECT_TRUE(distributed.checks.empty());
    return;
  }
  CheckResult single = RunCheck(p->s, p->d, spec, inferred, options);
  EXPECT_GT(single.passes, 2u);
  EXPECT_EQ(distributed.passes, single.passes);
  EXPECT_TRUE(single.all_hold);
  EXPECT_EQ(distributed.all_hold, single.all_hold);
  ASSERT_EQ(distributed.checks.size(), single.checks.size());
  for (size_t i = 0; i < single.checks.size(); ++i) {
    SCOPED_TRACE(single.checks[i].relation.expr.ToString());
    EXPECT_EQ(distributed.checks[i].holds(), single.checks[i].holds());
    EXPECT_EQ(distributed.checks[i].comparison.max_abs_error,
              single.checks[i].comparison.max_abs_error);
    EXPECT_EQ(distributed.checks[i].noise, single.checks[i].noise);
  }
  EXPECT_EQ(distributed.input_notes, single.input_notes);
}

TEST(DistributedCheck, DFailingOnOneRankStopsEveryProcess) {
  std::string why;
  std::optional<Pair> p = QwenTp2(&why);
  if (!p) GTEST_SKIP() << why;
  symbolic::seeded::DropVocabOffsetScale(&*p);
  Shrink(&*p);
  symbolic::SpecResult spec = symbolic::EvaluateSpec(p->spec, p->s, p->d);
  CheckResult distributed = RunDistributedCheck(p->s, p->d, spec, {}, {});
  if (Rank() != 0) return;
  CheckResult single = RunCheck(p->s, p->d, spec, {}, {});
  EXPECT_FALSE(distributed.all_hold);
  EXPECT_NE(single.d_failure.find("node 'embedding'"), std::string::npos) << single.d_failure;
  // The first line: file, line, rank, node and problem (ATen appends its own backtrace).
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  EXPECT_EQ(first_line(distributed.d_failure), first_line(single.d_failure));
}

TEST(DistributedCheck, WorldSizeMismatchThrowsOnEveryProcess) {
  std::string why;
  std::optional<Pair> p = QwenTp2(&why);
  if (!p) GTEST_SKIP() << why;
  // Two processes, one of them alone in a communicator of size 1: D has 2 ranks.
  MPI_Comm alone = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, Rank(), 0, &alone);
  symbolic::SpecResult spec = symbolic::EvaluateSpec(p->spec, p->s, p->d);
  try {
    RunDistributedCheck(p->s, p->d, spec, {}, {}, MpiCollectives::Mode::kNative, alone, "dist/");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "dist/");
    EXPECT_NE(e.problem().find("use mpirun -np 2"), std::string::npos) << e.problem();
  }
  MPI_Comm_free(&alone);
}

}  // namespace
}  // namespace gg::runtime
