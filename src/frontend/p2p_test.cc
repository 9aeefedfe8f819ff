#include "frontend/p2p.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "frontend/loader.h"
#include "util/diagnostic.h"

namespace gg::frontend {
namespace {

namespace fs = std::filesystem;

const std::string kPipeline = std::string(GG_TEST_DATA_DIR) + "/goals/pipeline_two_stages/dist";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The two-stage pipeline of tests/data/goals/pipeline_two_stages with `from` replaced by `to` (each
// once).
class Variant {
 public:
  Variant() : dir_(fs::temp_directory_path() / ("gg_p2p_test_" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
  }
  ~Variant() { fs::remove_all(dir_); }

  std::string Write(const std::vector<std::pair<std::string, std::string>>& edits) {
    std::string text = ReadAll(kPipeline + "/dist.json");
    for (const auto& [from, to] : edits) {
      size_t at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) text.replace(at, from.size(), to);
    }
    std::string path = (dir_ / "dist.json").string();
    std::ofstream(path) << text;
    return path;
  }

 private:
  fs::path dir_;
};

// The InputError of loading `path`: its line and message (a failure when it loads).
std::pair<int, std::string> LoadError(const std::string& path) {
  try {
    LoadProgram({path});
  } catch (const InputError& e) {
    return {e.line(), e.what()};
  }
  ADD_FAILURE() << "no error";
  return {0, ""};
}

TEST(PointToPoint, PairsEachReceiveWithItsPeersSendInOrder) {
  ir::Program p = LoadProgram({kPipeline + "/dist.json"});
  ASSERT_EQ(p.transfers.size(), 2u);
  const ir::Graph& g0 = p.rank(0);
  const ir::Graph& g1 = p.rank(1);
  EXPECT_EQ(g0.node(p.transfers[0].send).name, "send0");
  EXPECT_EQ(g1.node(p.transfers[0].recv).name, "recv0");
  EXPECT_EQ(g0.node(p.transfers[1].send).name, "send1");
  EXPECT_EQ(g1.node(p.transfers[1].recv).name, "recv1");
  EXPECT_EQ(p.transfers[1].src, 0);
  EXPECT_EQ(p.transfers[1].dst, 1);
  EXPECT_EQ(p.transfers[1].group, "pp");
  EXPECT_EQ(p.TransferOf(1, p.transfers[1].recv), &p.transfers[1]);
  EXPECT_EQ(p.TransferOf(0, p.transfers[0].recv), nullptr);  // node ids are per rank
}

// _c10d_functional::isend / irecv name the peer by its global rank; irecv's value is read
// through wait_tensor.
TEST(PointToPoint, FunctionalFormsPairByGlobalRank) {
  Variant v;
  std::string path = v.Write(
      {{R"("op":"c10d::send.default","args":[[{"ref":"h0"}],"pp",1,0],"kwargs":[],"outputs":[{"name":"send0","type":null}])",
        R"("op":"_c10d_functional::isend.default","args":[{"ref":"h0"},1,0,"pp"],"kwargs":[],"outputs":[{"name":"send0","type":"f32[0]"}])"},
       {R"({"name":"recv0","kind":"call","op":"c10d::recv_.default","functionalized":true,"args":[[{"ref":"buf0"}],"pp",0,0],"kwargs":[],"outputs":[{"name":"","type":null},{"name":"a0","type":"f32[2, 8]"}]},)",
        R"({"name":"recv0","kind":"call","op":"_c10d_functional::irecv.default","args":[{"ref":"buf0"},0,0,"pp"],"kwargs":[],"outputs":[{"name":"recv0","type":"f32[2, 8]"}]},
        {"name":"a0","kind":"call","op":"_c10d_functional::wait_tensor.default","args":[{"ref":"recv0"}],"kwargs":[],"outputs":[{"name":"a0","type":"f32[2, 8]"}]},)"}});
  ir::Program p = LoadProgram({path});
  ASSERT_EQ(p.transfers.size(), 2u);
  EXPECT_EQ(p.rank(1).node(p.transfers[0].recv).name, "recv0");
  EXPECT_EQ(p.rank(0).node(p.transfers[0].send).name, "send0");
}

TEST(PointToPoint, UnpairedTransfersNameTheFirstUnmatched) {
  Variant v;
  // rank 0 sends its second tensor to nobody (rank 1 receives one)
  auto [line, msg] = LoadError(v.Write(
      {{R"("recv1","kind":"call","op":"c10d::recv_.default","functionalized":true,"args":[[{"ref":"buf1"}],"pp",0,0],"kwargs":[],"outputs":[{"name":"","type":null},{"name":"a1","type":"f32[2, 8]"}])",
        R"("a1","kind":"call","op":"aten::relu.default","args":[{"ref":"buf1"}],"kwargs":[],"outputs":[{"name":"a1","type":"f32[2, 8]"}])"}}));
  EXPECT_EQ(line, 17) << msg;
  EXPECT_NE(msg.find("rank 0 sends 2 tensors to rank 1 on group 'pp' but rank 1 receives 1 from "
                     "rank 0; the first unmatched is"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("'send1' (c10d::send.default) (a send without its receive)"),
            std::string::npos)
      << msg;
}

TEST(PointToPoint, PairedTensorsAgreeInShapeAndDtype) {
  Variant v;
  // rank 1 receives the first tensor into a bf16 buffer (and reads the second one twice)
  auto [line, msg] = LoadError(
      v.Write({{R"("args":[[2, 8]],"kwargs":[{"name":"dtype","value":{"dtype":"f32"}})",
                R"("args":[[2, 8]],"kwargs":[{"name":"dtype","value":{"dtype":"bf16"}})"},
               {R"({"name":"buf0","type":"f32[2, 8]"})", R"({"name":"buf0","type":"bf16[2, 8]"})"},
               {R"({"name":"a0","type":"f32[2, 8]"})", R"({"name":"a0","type":"bf16[2, 8]"})"},
               {R"("op":"aten::relu.default","args":[{"ref":"a0"}])",
                R"("op":"aten::relu.default","args":[{"ref":"a1"}])"}}));
  EXPECT_EQ(line, 27) << msg;
  EXPECT_NE(msg.find("transfer #1 from rank 0 to rank 1 on group 'pp'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sends f32[2, 8] but"), std::string::npos) << msg;
  EXPECT_NE(msg.find("receives into bf16[2, 8]"), std::string::npos) << msg;
}

TEST(PointToPoint, PeersMustBeOtherMembersOfTheGroup) {
  Variant v;
  // c10d names the peer by its position in the group: 2 is not one of [0, 1]
  auto [line, msg] =
      LoadError(v.Write({{R"([[{"ref":"h0"}],"pp",1,0])", R"([[{"ref":"h0"}],"pp",2,0])"}}));
  EXPECT_EQ(line, 14) << msg;
  EXPECT_NE(msg.find("'dst' 2 of 'send0' (c10d::send.default) is not a position in process group "
                     "'pp' [0, 1]"),
            std::string::npos)
      << msg;
  auto [line2, msg2] =
      LoadError(v.Write({{R"([[{"ref":"h0"}],"pp",1,0])", R"([[{"ref":"h0"}],"pp",0,0])"}}));
  EXPECT_EQ(line2, 14) << msg2;
  EXPECT_NE(msg2.find("names its own rank 0 as the peer"), std::string::npos) << msg2;
}

TEST(PointToPoint, AnInPlaceReceiveMustBeFunctionalized) {
  Variant v;
  auto [line, msg] = LoadError(v.Write(
      {{R"("op":"c10d::recv_.default","functionalized":true,"args":[[{"ref":"buf0"}],"pp",0,0],"kwargs":[],"outputs":[{"name":"","type":null},{"name":"a0","type":"f32[2, 8]"}]},)",
        R"("op":"c10d::recv_.default","args":[[{"ref":"buf0"}],"pp",0,0],"kwargs":[],"outputs":[{"name":"recv0","type":null}]},
        {"name":"a0","kind":"call","op":"aten::relu.default","args":[{"ref":"buf0"}],"kwargs":[],"outputs":[{"name":"a0","type":"f32[2, 8]"}]},)"}}));
  EXPECT_EQ(line, 27) << msg;
  EXPECT_NE(msg.find("writes the received tensor into 'buf0' in place"), std::string::npos) << msg;
}

// Under the executor's model a send goes on and a receive completes where its value is first
// read: receiving before sending is fine when nothing reads the value first.
TEST(PointToPoint, DeadlocksAreFoundAndPostedReceivesAreNot) {
  Variant v;
  // rank 0 waits for a tensor of rank 1 (which waits for rank 0's) before it sends anything
  const std::string back_buffer =
      R"({"name":"bb","kind":"call","op":"aten::empty.memory_format","args":[[2, 8]],"kwargs":[{"name":"dtype","value":{"dtype":"f32"}},{"name":"layout","value":{"enum":"torch.strided"}},{"name":"device","value":{"device":"cpu"}},{"name":"pin_memory","value":false}],"outputs":[{"name":"bb","type":"f32[2, 8]"}]},
        {"name":"back","kind":"call","op":"c10d::recv_.default","functionalized":true,"args":[[{"ref":"bb"}],"pp",1,0],"kwargs":[],"outputs":[{"name":"","type":null},{"name":"g","type":"f32[2, 8]"}]},)";
  const std::string read_back =
      R"({"name":"x0","kind":"call","op":"aten::slice.Tensor","args":[{"ref":"g"},0,0,2],)";
  const std::string send_back =
      R"({"name":"y","kind":"call","op":"aten::cat.default","args":[[{"ref":"y0"},{"ref":"y1"}]],"kwargs":[],"outputs":[{"name":"y","type":"f32[4, 8]"}]},
        {"name":"sb","kind":"call","op":"c10d::send.default","args":[[{"ref":"y0"}],"pp",0,0],"kwargs":[],"outputs":[{"name":"sb","type":null}]})";
  const std::string cat =
      R"({"name":"y","kind":"call","op":"aten::cat.default","args":[[{"ref":"y0"},{"ref":"y1"}]],"kwargs":[],"outputs":[{"name":"y","type":"f32[4, 8]"}]})";
  const std::string first_node =
      R"({"name":"x0","kind":"call","op":"aten::slice.Tensor","args":[{"ref":"x"},0,0,2],)";
  auto [line, msg] =
      LoadError(v.Write({{first_node, back_buffer + "\n        " + read_back}, {cat, send_back}}));
  EXPECT_EQ(line, 14) << msg;
  EXPECT_NE(msg.find("the ranks deadlock"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 0 waits at"), std::string::npos) << msg;
  EXPECT_NE(msg.find("for the tensor rank 1 sends at"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 1 waits at"), std::string::npos) << msg;
  // The same receive read only at the end (after rank 0's sends): no deadlock.
  EXPECT_NO_THROW(LoadProgram(
      {v.Write({{first_node, back_buffer + "\n        " + first_node}, {cat, send_back}})}));
}

// A collective waits for its whole group: a rank that needs a tensor sent after the collective,
// before taking part in it, deadlocks.
TEST(PointToPoint, DeadlocksThroughACollective) {
  Variant v;
  const std::string h1 =
      R"({"name":"h1","kind":"call","op":"aten::mm.default","args":[{"ref":"x1"},{"ref":"w1"}],"kwargs":[],"outputs":[{"name":"h1","type":"f32[2, 8]"}]},)";
  const std::string all_reduce =
      R"({"name":"ar","kind":"call","op":"_c10d_functional::all_reduce.default","args":[{"ref":"x1"},"sum","pp"],"kwargs":[],"outputs":[{"name":"ar","type":"f32[2, 8]"}]},
        {"name":"arw","kind":"call","op":"_c10d_functional::wait_tensor.default","args":[{"ref":"ar"}],"kwargs":[],"outputs":[{"name":"arw","type":"f32[2, 8]"}]},)";
  const std::string y =
      R"({"name":"y","kind":"call","op":"aten::cat.default","args":[[{"ref":"y0"},{"ref":"y1"}]],"kwargs":[],"outputs":[{"name":"y","type":"f32[4, 8]"}]})";
  const std::string y_reduced =
      R"({"name":"y","kind":"call","op":"aten::cat.default","args":[[{"ref":"y0"},{"ref":"y1"}]],"kwargs":[],"outputs":[{"name":"y","type":"f32[4, 8]"}]},
        {"name":"ar","kind":"call","op":"_c10d_functional::all_reduce.default","args":[{"ref":"y0"},"sum","pp"],"kwargs":[],"outputs":[{"name":"ar","type":"f32[2, 8]"}]},
        {"name":"arw","kind":"call","op":"_c10d_functional::wait_tensor.default","args":[{"ref":"ar"}],"kwargs":[],"outputs":[{"name":"arw","type":"f32[2, 8]"}]})";
  // rank 0: all_reduce before its second send; rank 1: reads both tensors, then all_reduces
  auto [line, msg] = LoadError(v.Write({{h1, all_reduce + "\n        " + h1}, {y, y_reduced}}));
  EXPECT_NE(msg.find("the ranks deadlock"), std::string::npos) << msg;
  EXPECT_NE(msg.find("in collective #1 on group 'pp' for its other members"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("rank 1 waits at"), std::string::npos) << msg;
  (void)line;
}

TEST(PointToPoint, ReceivedOutputFollowsTheOperatorsResults) {
  const ir::OpRegistry& registry = ir::OpRegistry::Default();
  ir::Node recv;
  recv.op = ir::OpName{"c10d", "recv_", "default"};
  recv.functionalized = true;
  EXPECT_EQ(ReceivedOutput(*registry.Find(recv.op), recv), 1);
  ir::Node irecv;
  irecv.op = ir::OpName{"_c10d_functional", "irecv", "default"};
  EXPECT_EQ(ReceivedOutput(*registry.Find(irecv.op), irecv), 0);
}

}  // namespace
}  // namespace gg::frontend
