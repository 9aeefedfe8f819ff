// End-to-end verification of real corpus configurations: S (paral1) against D (paral<N>) with the
// example relation spec and the default lemma catalogue must say REFINES. One TEST per
// configuration; the options each one needs (hop limits) are stated in the test.
#include <gtest/gtest.h>

#include <string>

#include "frontend/loader.h"
#include "symbolic/inference.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/relation_spec.h"

namespace gg::symbolic {
namespace {

std::string CorpusPath(const std::string& rel) { return std::string(GG_CORPUS_DIR) + "/" + rel; }
std::string ExamplePath(const std::string& rel) { return std::string(GG_SOURCE_DIR) + "/" + rel; }

// The verdict line and the first failing S operator, for failure messages.
std::string Describe(const VerifyResult& result, const ir::Graph& s_graph) {
  std::string out = std::string(VerdictName(result.verdict)) + ": " + result.summary;
  if (result.first_failure) {
    const NodeOutcome& n = result.nodes[*result.first_failure];
    out += "\n  first failure " + s_graph.node(n.s_node).name + ": " + n.detail;
  }
  return out;
}

}  // namespace
}  // namespace gg::symbolic

namespace gg::symbolic {
namespace {

// vLLM Qwen2, one layer, TP 2: vocabulary-parallel embedding (range masks + all_reduce), fused QKV
// with GQA, rotary embedding, attention split by head groups, row-parallel o_proj and down_proj,
// fused gate/up with silu_and_mul. The masked-id chain of the embedding is 7 computing D
// operators deep (ge/lt, and, or, mul, add, sub, mul, embedding, masked_fill): the default
// iterative deepening of the D neighbourhood has to reach it.
TEST(CorpusVerifyTest, Qwen2Tp2Layer1Refines) {
  ir::Graph s = frontend::LoadGraph(CorpusPath("qwen2/paral1_layer1/fw.g0.r0.py"));
  ir::Program d = frontend::LoadProgram({CorpusPath("qwen2/paral2_layer1")});
  RelationSpec spec = RelationSpec::Load(ExamplePath("examples/qwen2.rel"));
  SpecResult relations = EvaluateSpec(spec, s, d);
  InferenceOptions options;
  VerifyResult result = Verify(s, d, relations, LemmaCatalogue::Default().Rules(), options);
  EXPECT_EQ(result.verdict, Verdict::kRefines) << Describe(result, s);
  ASSERT_EQ(result.outputs.size(), 2u);  // getitem_34 = its copy on rank 0, and on rank 1
  for (const OutputCheck& check : result.outputs) EXPECT_TRUE(check.implied) << check.detail;
  EXPECT_FALSE(result.first_failure.has_value());
}

}  // namespace
}  // namespace gg::symbolic

namespace gg::symbolic {
namespace {

// Megatron-LM GPT (tensor + sequence parallel), S = paral1, D = paral<N>, with examples/gpt.rel and
// default options. The whole forward relates: vocabulary-parallel embedding, attention, MLP,
// reduce_scatter / all_gather of every layer, and the vocabulary-parallel cross entropy (max,
// target logit picked per shard and summed, exp-sum, log), the loss mask and the mean. Assumption
// made visible by the spec: the captured `_tensor_constant*` (masked ids, masked logits) are 0.
VerifyResult VerifyGpt(const std::string& s_dir, const std::string& d_dir, ir::Graph* s) {
  *s = frontend::LoadGraph(CorpusPath("gpt/" + s_dir + "/fw.g0.r0.py"));
  ir::Program d = frontend::LoadProgram({CorpusPath("gpt/" + d_dir)});
  RelationSpec spec = RelationSpec::Load(ExamplePath("examples/gpt.rel"));
  SpecResult relations = EvaluateSpec(spec, *s, d);
  InferenceOptions options;
  return Verify(*s, d, relations, LemmaCatalogue::Default().Rules(), options);
}

void ExpectGptRefines(const std::string& s_dir, const std::string& d_dir, size_t ranks) {
  ir::Graph s;
  VerifyResult result = VerifyGpt(s_dir, d_dir, &s);
  EXPECT_EQ(result.verdict, Verdict::kRefines) << Describe(result, s);
  ASSERT_EQ(result.outputs.size(), ranks);  // the loss, replicated on every rank
  for (const OutputCheck& check : result.outputs) EXPECT_TRUE(check.implied) << check.detail;
  EXPECT_FALSE(result.first_failure.has_value());
}

TEST(CorpusVerifyTest, GptTp2Layer1Refines) {
  ExpectGptRefines("paral1_layer1", "paral2_layer1", 2);
}

TEST(CorpusVerifyTest, GptTp2Layer2Refines) {
  ExpectGptRefines("paral1_layer2", "paral2_layer2", 2);
}

TEST(CorpusVerifyTest, GptTp4Layer1Refines) {
  ExpectGptRefines("paral1_layer1", "paral4_layer1", 4);
}

}  // namespace
}  // namespace gg::symbolic

namespace gg::symbolic {
namespace {

// Everything a report shows of a result but the timings: verdict, every operator's outcome and
// work, every relation with its proof.
std::string Fingerprint(const VerifyResult& r, const ir::Graph& s) {
  std::string out = std::string(VerdictName(r.verdict)) + " " + r.summary + "\n";
  out += "solved " + std::to_string(r.local_solved) + " reused " + std::to_string(r.local_reused) +
         " nodes " + std::to_string(r.total_egraph_nodes) + "\n";
  for (const NodeOutcome& n : r.nodes) {
    out += s.node(n.s_node).name + " " + std::string(NodeStatusName(n.status)) + " " + n.detail +
           " hops " + std::to_string(n.hops) + " attempts " + std::to_string(n.attempts) +
           " work " + std::to_string(n.work_nodes) + "\n";
  }
  for (const auto& [name, rels] : r.relations) {
    for (const InferredRelation& rel : rels) {
      out += RelationToString(rel.relation, s) + " by";
      for (const std::string& step : rel.proof) out += " " + step;
      out += "\n";
    }
  }
  return out;
}

// Inference saturates the local problems of independent S operators side by side: the result
// (relations, proofs, reuse counts, work) is the same for every thread count, with and without
// the memo, on a proof that completes and on one that stops.
TEST(ParallelInferenceTest, EveryThreadCountGivesTheSameResult) {
  ir::Graph s = frontend::LoadGraph(CorpusPath("gpt/paral1_layer2/fw.g0.r0.py"));
  ir::Program d = frontend::LoadProgram({CorpusPath("gpt/paral2_layer2")});
  SpecResult spec = EvaluateSpec(RelationSpec::Load(ExamplePath("examples/gpt.rel")), s, d);
  // The same spec without the relations of its last related input: the operators reading that
  // input are blocked.
  SpecResult partial = spec;
  const ir::TensorRef dropped = partial.inputs.back().s_tensor;
  std::erase_if(partial.inputs, [&](const Relation& r) { return r.s_tensor == dropped; });
  for (const SpecResult* relations : {&spec, &partial}) {
    for (bool memoize : {true, false}) {
      std::string first;
      for (size_t threads : {1u, 2u, 4u}) {
        InferenceOptions options;
        options.threads = threads;
        options.memoize = memoize;
        VerifyResult result = Verify(s, d, *relations, LemmaCatalogue::Default().Rules(), options);
        if (relations == &spec) {
          EXPECT_EQ(result.verdict, Verdict::kRefines) << Describe(result, s);
        } else {
          EXPECT_NE(result.verdict, Verdict::kRefines);
        }
        std::string now = Fingerprint(result, s);
        if (threads == 1) {
          first = now;
          EXPECT_GT(result.nodes.size(), 100u);
        } else {
          EXPECT_EQ(now, first) << "threads " << threads << ", memoize " << memoize;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gg::symbolic
