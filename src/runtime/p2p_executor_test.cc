// Point-to-point transfers in the executor: a receive gets the tensor its peer's send posted,
// in one process (ExecuteProgram) and through a backend (ExecuteRank).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "frontend/loader.h"
#include "runtime/executor.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

const std::string kGoals = std::string(GG_SOURCE_DIR) + "/tests/data/goals/";

// tests/data/goals/pipeline_two_stages: rank 0 sends x[0:2] w1 and x[2:4] w1, rank 1 returns
// cat(relu(a0) w2, relu(a1) w2) of what it receives: relu(x w1) w2. `goal`: the same program
// with c10d's send/recv_ or (pipeline_two_stages_functional) _c10d_functional's isend/irecv.
struct Pipeline {
  explicit Pipeline(const std::string& goal = "pipeline_two_stages")
      : program(frontend::LoadProgram({kGoals + goal + "/dist/dist.json"})) {}
  ir::Program program;
  at::Tensor x = at::randn({4, 8}, at::kDouble).to(at::kFloat);
  at::Tensor w1 = at::randn({8, 8}, at::kDouble).to(at::kFloat);
  at::Tensor w2 = at::randn({8, 8}, at::kDouble).to(at::kFloat);
  std::vector<GraphInputs> Inputs() const {
    return {GraphInputs{{x, w1}, {}}, GraphInputs{{w2}, {}}};
  }
  at::Tensor Expected() const { return at::mm(at::relu(at::mm(x, w1)), w2); }
};

TEST(PointToPointExecution, AReceiveGetsTheTensorItsPeerSent) {
  at::manual_seed(7);
  Pipeline p;
  std::vector<ExecutionResult> results = ExecuteProgram(p.program, p.Inputs());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(at::allclose(results[1].outputs.at(0), p.Expected())) << results[1].outputs.at(0);
  EXPECT_TRUE(at::equal(results[0].outputs.at(0), at::mm(p.x.slice(0, 2, 4), p.w1)));
}

// The functional forms: irecv's value passes through its wait_tensor.
TEST(PointToPointExecution, FunctionalTransfersDeliverTheirTensors) {
  at::manual_seed(9);
  Pipeline p("pipeline_two_stages_functional");
  ASSERT_EQ(p.program.transfers.size(), 2u);
  std::vector<ExecutionResult> results = ExecuteProgram(p.program, p.Inputs());
  EXPECT_TRUE(at::allclose(results[1].outputs.at(0), p.Expected())) << results[1].outputs.at(0);
}

// Through a backend each rank runs alone: the sends reach the backend where the graph sends,
// the receives where their value is first read, in posting order per peer.
TEST(PointToPointExecution, ExecuteRankHandsTransfersToTheBackend) {
  at::manual_seed(8);
  Pipeline p;
  std::vector<at::Tensor> sent;
  ExecutionOptions send_side;
  send_side.collective_backend = [&](const RankCollective& call) {
    EXPECT_EQ(call.kind, ir::CollectiveKind::kSend);
    EXPECT_EQ(call.rank, 0);
    EXPECT_EQ(call.peer, 1);
    EXPECT_EQ(call.group, "pp");
    EXPECT_EQ(call.members, (std::vector<int32_t>{0, 1}));
    sent.push_back(call.input.clone());
    return at::Tensor();
  };
  ExecuteRank(p.program, 0, p.Inputs()[0], send_side);
  ASSERT_EQ(sent.size(), 2u);
  size_t received = 0;
  ExecutionOptions recv_side;
  recv_side.collective_backend = [&](const RankCollective& call) {
    EXPECT_EQ(call.kind, ir::CollectiveKind::kRecv);
    EXPECT_EQ(call.peer, 0);
    EXPECT_EQ(call.input.sizes(), sent.at(received).sizes());  // the buffer's shape
    return sent.at(received++);
  };
  ExecutionResult last = ExecuteRank(p.program, 1, p.Inputs()[1], recv_side);
  EXPECT_EQ(received, 2u);
  EXPECT_TRUE(at::allclose(last.outputs.at(0), p.Expected()));
}

TEST(PointToPointExecution, AnUnpairedTransferIsAnInputError) {
  Pipeline p;
  p.program.transfers.clear();  // as a program built without the loader
  try {
    ExecuteProgram(p.program, p.Inputs());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("point-to-point transfer without its peer"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gg::runtime
