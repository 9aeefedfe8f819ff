#include "frontend/loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "frontend/json_format.h"
#include "frontend/node_check.h"
#include "util/diagnostic.h"

#include <unistd.h>

namespace gg::frontend {
namespace {

namespace fs = std::filesystem;

const std::string kCorpus = GG_CORPUS_DIR;
const std::string kData = GG_TEST_DATA_DIR;

TEST(Loader, LoadsEveryCorpusConfiguration) {
  struct Config {
    const char* dir;
    int world;
    const char* group;
  };
  const Config configs[] = {
      {"gpt/paral1_layer1", 1, "7"},  {"gpt/paral1_layer2", 1, "7"},
      {"gpt/paral2_layer1", 2, "12"}, {"gpt/paral2_layer2", 2, "12"},
      {"gpt/paral4_layer1", 4, "22"}, {"qwen2/paral2_layer1", 2, "tp:0"},
  };
  for (const Config& c : configs) {
    SCOPED_TRACE(c.dir);
    ir::Program p;
    try {
      p = LoadProgram({kCorpus + "/" + c.dir});
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
    ASSERT_EQ(p.world_size(), c.world);
    for (int r = 0; r < c.world; ++r) EXPECT_EQ(p.rank(r).rank, r);
    ASSERT_EQ(p.groups.size(), 1u);
    ASSERT_TRUE(p.groups.count(c.group)) << p.groups.begin()->first;
    EXPECT_EQ(p.groups.at(c.group).size(), static_cast<size_t>(c.world));
  }
  // The sequential vLLM model has no collectives, hence no groups.
  ir::Program seq = LoadProgram({kCorpus + "/qwen2/paral1_layer1"});
  EXPECT_EQ(seq.world_size(), 1);
  EXPECT_TRUE(seq.groups.empty());
}

TEST(Loader, FilesInAnyOrderAndLoadGraph) {
  std::string dir = kCorpus + "/gpt/paral2_layer1/";
  ir::Program p = LoadProgram({dir + "fw.g0.r1.py", dir + "fw.g0.r0.py"});
  ASSERT_EQ(p.world_size(), 2);
  EXPECT_NE(p.rank(0).file.find("r0"), std::string::npos);
  ir::Graph g = LoadGraph(kCorpus + "/gpt/paral1_layer1/fw.g0.r0.py");
  EXPECT_EQ(g.rank, 0);
  EXPECT_GT(g.nodes.size(), 100u);
}

TEST(Loader, SmallGoodGraphs) {
  ir::Program p = LoadProgram({kData + "/good/tp2"});
  ASSERT_EQ(p.world_size(), 2);
  EXPECT_EQ(p.groups.at("0"), (std::vector<int32_t>{0, 1}));
  ir::Graph mlp = LoadGraph(kData + "/good/mlp.py");
  EXPECT_EQ(mlp.nodes.size(), 7u);
  ir::Graph tiny = LoadGraph(kData + "/good/tiny.json");
  EXPECT_EQ(tiny.name, "tiny");
  // all_to_all_single with uneven splits (expert parallelism): each rank's input has its own
  // dim 0 (5 and 4 rows), the split sizes agree across the group.
  ir::Program uneven = LoadProgram({kData + "/good/all_to_all_uneven"});
  ASSERT_EQ(uneven.world_size(), 2);
}

TEST(Loader, JsonProgramsLoadLikeTheirSource) {
  ir::Program p = LoadProgram({kCorpus + "/gpt/paral2_layer1"});
  fs::path tmp = fs::temp_directory_path() / ("gg_loader_test_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  {
    std::ofstream out(tmp / "program.json");
    WriteJson(p, out);
  }
  ir::Program back = LoadProgram({(tmp / "program.json").string()});
  ASSERT_EQ(back.world_size(), 2);
  EXPECT_EQ(back.groups, p.groups);
  EXPECT_EQ(back.rank(1).nodes.size(), p.rank(1).nodes.size());
  // One rank as FX and one as a single-graph JSON file.
  {
    std::ofstream out(tmp / "r1.json");
    WriteJson(p.rank(1), out);
  }
  ir::Program mixed = LoadProgram(
      {kCorpus + "/gpt/paral2_layer1/fw.g0.r0.py", (tmp / "r1.json").string()});
  EXPECT_EQ(mixed.world_size(), 2);
  EXPECT_EQ(mixed.rank(1).file, (tmp / "r1.json").string());
  fs::remove_all(tmp);
}

// Every broken input under tests/data/bad: where the error must point and what it must say.
TEST(Loader, BadInputsFailWithFileLineAndReason) {
  struct Case {
    const char* path;       // under tests/data/bad
    const char* file;       // expected file (under tests/data/bad)
    int line;
    const char* phrase;
  };
  const Case cases[] = {
      {"truncated.py", "truncated.py", 11, "truncated"},
      {"unknown_op.py", "unknown_op.py", 13, "unknown operator 'aten::frobnicate.default'"},
      {"shape_mismatch.py", "shape_mismatch.py", 12,
       "inferred f32[8, 32] for 'mm' (aten::mm.default) but the annotation says f32[8, 33]"},
      {"unbalanced_paren.py", "unbalanced_paren.py", 12, "unbalanced '('"},
      {"undefined_name.py", "undefined_name.py", 13, "undefined name 'bias'"},
      {"duplicate_name.py", "duplicate_name.py", 13, "duplicate name 'mm'"},
      {"bad_annotation.py", "bad_annotation.py", 9, "bad type annotation"},
      {"getitem_not_multi.py", "getitem_not_multi.py", 17, "not a multi-output node"},
      {"collective_mismatch", "collective_mismatch/fw.g0.r1.py", 8,
       "differs between ranks"},
      {"invalid.json", "invalid.json", 4, "invalid JSON"},
      {"wrong_version.json", "wrong_version.json", 1, "unsupported version 7"},
      {"dangling_ref.json", "dangling_ref.json", 9, "undefined value 'y'"},
      {"json_type_mismatch.json", "json_type_mismatch.json", 9, "inferred f32[8, 4]"},
      {"json_missing_field.json", "json_missing_field.json", 8, "missing field \"outputs\""},
      {"rank_twice", "rank_twice/b.py", 0, "rank 0 is given twice"},
      {"group_size_mismatch", "group_size_mismatch/fw.g0.r0.py", 10,
       "group_size argument 2"},
      {"unsynchronized_read", "unsynchronized_read/fw.g0.r1.py", 10,
       "'relu' (aten::relu.default) reads the result of the asynchronous collective 'all_reduce'"},
      {"broadcast_src_mismatch", "broadcast_src_mismatch/fw.g0.r1.py", 7,
       "differs between ranks"},
      {"all_to_all_split_mismatch", "all_to_all_split_mismatch/fw.g0.r1.py", 7,
       "disagrees on split sizes"},
      {"view_of_transpose.py", "view_of_transpose.py", 10,
       "'view' (aten::view.default) views 'transpose' of sizes [32, 8] and strides [1, 32] as "
       "[256], which those strides cannot express without a copy: ATen raises here; use reshape"},
      // Issue 19: inputs that once crashed, hung or were accepted wrongly.
      {"untyped_constant.py", "untyped_constant.py", 6,
       "'add' (aten::add.Tensor) reads the constant '_tensor_constant0' (line 5), which the "
       "capture left without a type or a value"},
      {"json_untyped_constant.json", "json_untyped_constant.json", 10,
       "'y' (aten::mul.Tensor) reads the constant 'c' (line 9), which the capture left without"},
      {"json_output_out_of_range.json", "json_output_out_of_range.json", 9,
       "'y' (aten::relu.default) reads output 3 of 'x', which has 1 output(s)"},
      {"element_count_overflow.py", "element_count_overflow.py", 3,
       "the element count of 'f32[4611686018427387904, 4]' overflows a 64-bit integer"},
      {"view_size_overflow.py", "view_size_overflow.py", 4,
       "shape error in 'view' (aten::view.default): view: the element count of size "
       "[4611686018427387904, 4, -1] overflows a 64-bit integer"},
      {"negative_extent.py", "negative_extent.py", 3, "negative dimension '-1' in 'f32[-1, 6]'"},
      {"dtype_mismatch.py", "dtype_mismatch.py", 4,
       "type error in 'mm' (aten::mm.default): mm: dtypes differ: f32 and bf16"},
  };
  size_t bad_entries = 0;
  for (const auto& entry : fs::directory_iterator(kData + "/bad")) {
    (void)entry;
    ++bad_entries;
  }
  EXPECT_EQ(bad_entries, std::size(cases)) << "every file under tests/data/bad needs a case";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    std::string path = kData + "/bad/" + c.path;
    // An unknown operator is an error under --strict-ops only (else it loads opaque).
    StrictOps strict(std::string(c.path) == "unknown_op.py");
    try {
      LoadProgram({path});
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), kData + "/bad/" + c.file) << e.what();
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.phrase), std::string::npos) << e.what();
    }
  }
}

TEST(Loader, CollectiveMismatchNamesBothFiles) {
  try {
    LoadProgram({kData + "/bad/collective_mismatch"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("collective_mismatch/fw.g0.r0.py:8"), std::string::npos) << msg;
    EXPECT_NE(msg.find("collective_mismatch/fw.g0.r1.py:8"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'sum'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'max'"), std::string::npos) << msg;
  }
}

// An async collective's result is read only by its wait_tensor or after it (on a real machine the
// buffer is unfinished before); vLLM's all_reduce is synchronous and needs no wait.
TEST(Loader, AsyncCollectiveReadsWaitForTheirWait) {
  try {
    LoadProgram({kData + "/bad/unsynchronized_read"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("(line 8) before its wait_tensor"), std::string::npos) << msg;
    EXPECT_NE(msg.find("read the result of _c10d_functional.wait_tensor instead"),
              std::string::npos)
        << msg;
  }
  fs::path tmp = fs::temp_directory_path() / ("gg_loader_wait_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  auto write = [&](const std::string& body) {
    std::ofstream out(tmp / "g.py");
    out << "# Graph[rank=0](fw, gid=0)\n"
           "class GraphModule(torch.nn.Module):\n"
           "    def forward(self, x: \"f32[4, 4]\"):\n"
           "        ar: \"f32[4, 4]\" = torch.ops._c10d_functional.all_reduce.default(x, 'sum', '0')\n"
        << body;
  };
  // Read after its wait: the buffer is complete there (wait_tensor returns the same tensor).
  write("        w: \"f32[4, 4]\" = torch.ops._c10d_functional.wait_tensor.default(ar)\n"
        "        r: \"f32[4, 4]\" = torch.ops.aten.relu.default(ar)\n"
        "        return (r, w)\n");
  EXPECT_NO_THROW(LoadProgram({(tmp / "g.py").string()}));
  EXPECT_NO_THROW(LoadGraph((tmp / "g.py").string()));
  // Returned without any wait.
  write("        return (ar,)\n");
  try {
    LoadProgram({(tmp / "g.py").string()});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 5) << e.what();
    EXPECT_NE(std::string(e.what()).find("without a wait_tensor"), std::string::npos) << e.what();
  }
  // vLLM's all_reduce is synchronous: read directly.
  {
    std::ofstream out(tmp / "g.py");
    out << "# Graph[rank=0](fw, gid=0)\n"
           "class GraphModule(torch.nn.Module):\n"
           "    def forward(self, x: \"f32[4, 4]\"):\n"
           "        ar: \"f32[4, 4]\" = torch.ops.vllm.all_reduce.default(x, 'tp:0')\n"
           "        r: \"f32[4, 4]\" = torch.ops.aten.relu.default(ar)\n"
           "        return (r,)\n";
  }
  EXPECT_NO_THROW(LoadProgram({(tmp / "g.py").string()}));
  fs::remove_all(tmp);
}

// Arguments every member must give alike are compared across the ranks, naming both files.
TEST(Loader, CollectiveArgumentsAgreeAcrossRanks) {
  try {
    LoadProgram({kData + "/bad/broadcast_src_mismatch"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("broadcast_src_mismatch/fw.g0.r0.py:7 (rank 0) does "
                       "_c10d_functional::broadcast.default src 0"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("broadcast_src_mismatch/fw.g0.r1.py:7 (rank 1) does "
                       "_c10d_functional::broadcast.default src 1"),
              std::string::npos)
        << msg;
  }
  // all_to_all_single: rank 0 sends 5 rows to rank 1, which expects 4 from it.
  try {
    LoadProgram({kData + "/bad/all_to_all_split_mismatch"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("all_to_all_split_mismatch/fw.g0.r0.py:7 (rank 0) sends 5 rows to rank 1"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("all_to_all_split_mismatch/fw.g0.r1.py:7 (rank 1) receives 4 rows from "
                       "rank 0 (output splits [4, 4])"),
              std::string::npos)
        << msg;
  }
}

TEST(Loader, RankAndPathErrors) {
  // Ranks must be 0..N-1: a graph that says rank 5 among two graphs is out of range.
  fs::path tmp = fs::temp_directory_path() / ("gg_loader_rank_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  {
    std::ifstream in(kData + "/good/mlp.py");
    std::ofstream out(tmp / "fw.g0.r5.py");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("# Graph[", 0) == 0) continue;  // rank comes from the file name
      out << line << "\n";
    }
  }
  try {
    LoadProgram({kData + "/good/mlp.py", (tmp / "fw.g0.r5.py").string()});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), (tmp / "fw.g0.r5.py").string());
    EXPECT_NE(std::string(e.what()).find("rank 5 is out of range"), std::string::npos)
        << e.what();
  }
  fs::remove_all(tmp);
  EXPECT_THROW(LoadProgram({kData + "/does-not-exist"}), InputError);
  EXPECT_THROW(LoadProgram({}), InputError);
  EXPECT_THROW(LoadGraph(kData + "/good/tp2"), InputError);
}

}  // namespace
}  // namespace gg::frontend
