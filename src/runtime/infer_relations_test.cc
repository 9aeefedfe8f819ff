#include "runtime/infer_relations.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "frontend/loader.h"
#include "frontend/resize.h"
#include "symbolic/relation_spec.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

std::string Corpus(const std::string& sub) { return std::string(GG_CORPUS_DIR) + "/" + sub; }

// Sorted "s_tensor == expr" lines of a set of relations.
std::vector<std::string> Lines(const std::vector<symbolic::Relation>& relations,
                               const ir::Graph& s) {
  std::vector<std::string> out;
  for (const symbolic::Relation& r : relations) out.push_back(RelationToString(r, s));
  std::sort(out.begin(), out.end());
  return out;
}

struct Config {
  std::string family;
  int paral;
  int layers;
  std::string s_resize;  // --resize of S
  std::string d_resize;  // --resize of D (sequence-parallel shards have extents of their own)
  std::vector<int64_t> outputs;  // the outputs the hand-written spec lists
};

// infer-relations on a corpus configuration writes a spec equivalent to the hand-written one in
// examples/: the same input relations, the same expected outputs, the same constants.
void ExpectEquivalentToExample(const Config& c) {
  std::string s_dir = Corpus(c.family + "/paral1_layer" + std::to_string(c.layers));
  std::string d_dir =
      Corpus(c.family + "/paral" + std::to_string(c.paral) + "_layer" + std::to_string(c.layers));
  if (!std::filesystem::exists(s_dir) || !std::filesystem::exists(d_dir)) {
    GTEST_SKIP() << "corpus not found: " << d_dir;
  }
  // One thread: idle OpenMP workers spin by default, which on a shared 2-core machine costs
  // most of the run (Qwen2: 60 s instead of 8).
  at::set_num_threads(1);
  ir::Graph s = frontend::LoadProgram({s_dir}).ranks.at(0);
  ir::Program d = frontend::LoadProgram({d_dir});
  ir::Graph small_s = frontend::ResizeGraph(s, frontend::ParseResizeMap(c.s_resize));
  ir::Program small_d = frontend::ResizeProgram(d, frontend::ParseResizeMap(c.d_resize));
  InferOptions options;
  options.outputs = c.outputs;
  options.resize_text = c.s_resize;
  auto start = std::chrono::steady_clock::now();
  InferResult inferred = InferRelations(s, d, small_s, small_d, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s TP%d L%d: %d D executions, %d of %d S tensors matched, %.1f s (inputs %.1f, "
              "S %.1f, D %.1f, matching %.1f)\n",
              c.family.c_str(), c.paral, c.layers, inferred.executions, inferred.matched,
              inferred.s_tensors, seconds, inferred.seconds_inputs, inferred.seconds_s,
              inferred.seconds_d, inferred.seconds_match);
  for (const std::string& trial : inferred.trials) std::printf("  %s\n", trial.c_str());
  std::string unmatched;
  for (const std::string& name : inferred.unmatched) unmatched += "\n    " + name;
  std::printf("  unmatched:%s\n", unmatched.c_str());
  EXPECT_TRUE(inferred.unresolved.empty());
  SCOPED_TRACE(inferred.spec_text);
  symbolic::SpecResult ours = symbolic::EvaluateSpec(
      symbolic::RelationSpec::Parse(inferred.spec_text, "inferred.rel"), s, d);
  symbolic::SpecResult theirs = symbolic::EvaluateSpec(
      symbolic::RelationSpec::Load(std::string(GG_SOURCE_DIR) + "/examples/" + c.family + ".rel"),
      s, d);
  EXPECT_EQ(Lines(ours.inputs, s), Lines(theirs.inputs, s));
  EXPECT_EQ(Lines(ours.expected_outputs, s), Lines(theirs.expected_outputs, s));
  EXPECT_EQ(ours.constants, theirs.constants);
  EXPECT_GT(inferred.matched, inferred.s_tensors / 2) << "most S tensors have a D equal";
}

// The reduced sizes below are ones verify and check accept; they keep a run to seconds.
constexpr char kQwen2Tp2[] = "32768=256,151936=1024,75968=512,17920=1792,8960=896,4480=448";

TEST(InferRelations, Qwen2Tp2) {
  ExpectEquivalentToExample({"qwen2", 2, 1, kQwen2Tp2, kQwen2Tp2, {0}});
}

TEST(InferRelations, GptTp2OneLayer) {
  ExpectEquivalentToExample({"gpt", 2, 1, "8=1,12288=1536,192=24,98304=1024",
                             "8=1,12288=1536,96=12,6144=768,98304=1024,49152=512", {0}});
}

TEST(InferRelations, GptTp4OneLayer) {
  ExpectEquivalentToExample(
      {"gpt", 4, 1, "8=1,12288=1536,192=24,98304=1024",
       "8=1,12288=1536,48=6,3072=384,98304=1024,24576=256,49152=512,73728=768", {0}});
}

}  // namespace
}  // namespace gg::runtime
