// Seeded bugs: five bugs planted in memory into the real corpus programs (Qwen2 and GPT TP2),
// shared by the symbolic test (each is a VIOLATION at the right S operator, seeded_bugs_test.cc)
// and the numeric one (each gives a counterexample there, runtime/check_test.cc). Test support
// only: the functions use GoogleTest assertions.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "frontend/loader.h"
#include "frontend/node_check.h"
#include "ir/graph_edit.h"
#include "symbolic/relation_spec.h"

namespace gg::symbolic::seeded {

inline std::string CorpusPath(const std::string& rel) {
  return std::string(GG_CORPUS_DIR) + "/" + rel;
}
inline std::string ExamplePath(const std::string& rel) {
  return std::string(GG_SOURCE_DIR) + "/" + rel;
}

struct Pair {
  ir::Graph s;
  ir::Program d;
  RelationSpec spec;
};

inline Pair LoadQwen2Tp2() {
  return Pair{frontend::LoadGraph(CorpusPath("qwen2/paral1_layer1/fw.g0.r0.py")),
              frontend::LoadProgram({CorpusPath("qwen2/paral2_layer1")}),
              RelationSpec::Load(ExamplePath("examples/qwen2.rel"))};
}

inline Pair LoadGptTp2() {
  return Pair{frontend::LoadGraph(CorpusPath("gpt/paral1_layer1/fw.g0.r0.py")),
              frontend::LoadProgram({CorpusPath("gpt/paral2_layer1")}),
              RelationSpec::Load(ExamplePath("examples/gpt.rel"))};
}

inline ir::NodeId NodeNamed(const ir::Graph& g, const std::string& name) {
  std::optional<ir::NodeId> id = ir::FindNode(g, name);
  if (!id) throw std::runtime_error(g.file + ": no node named " + name);
  return *id;
}

// Gives node `id` the output types the operator registry infers from its (edited) inputs.
inline void RetypeNode(ir::Graph* g, const ir::Program& d, ir::NodeId id) {
  ir::Node& node = g->nodes[id];
  auto types = frontend::InferNodeTypes(*g, node, d.groups, d.world_size(), g->file, node.def_line);
  ASSERT_TRUE(types.has_value()) << node.name;
  ASSERT_EQ(types->size(), node.outputs.size()) << node.name;
  for (size_t i = 0; i < types->size(); ++i) node.outputs[i].type = (*types)[i];
}

// What the loader checks on reading, re-checked after an edit: every operator node of every rank
// infers the type its annotation says. (Collective sequences agree because every edit below is
// made identically on every rank.)
inline void ExpectWellTyped(const ir::Program& d) {
  for (const ir::Graph& g : d.ranks) {
    for (const ir::Node& node : g.nodes) {
      if (node.kind != ir::NodeKind::kOperator) continue;
      auto types =
          frontend::InferNodeTypes(g, node, d.groups, d.world_size(), g.file, node.def_line);
      if (!types) continue;  // reads an unrecorded constant: nothing to infer, as on load
      ASSERT_EQ(types->size(), node.outputs.size()) << g.file << ": " << node.name;
      for (size_t i = 0; i < types->size(); ++i) {
        EXPECT_EQ(frontend::TypeText((*types)[i]), frontend::TypeText(node.outputs[i].type))
            << g.file << ": " << node.name << " output " << i;
      }
    }
  }
}

// Deletes collective `name` (an all_reduce) from graph `g`: its readers read its input instead.
inline void DeleteCollective(ir::Graph* g, const std::string& name) {
  ir::NodeId id = NodeNamed(*g, name);
  ir::TensorRef input = g->nodes[id].args.at(0).as_tensor();
  ASSERT_GT(ir::ReplaceAllUses(g, ir::TensorRef{id, 0}, input), 0) << name << " had no readers";
  ir::RemoveNode(g, id);
}

// (a) all_reduce `name` deleted on every rank (Qwen2: all_reduce_1 after o_proj, all_reduce_2
// after down_proj).
inline void DeleteAllReduce(Pair* p, const std::string& name) {
  for (ir::Graph& g : p->d.ranks) DeleteCollective(&g, name);
}

// (b) Qwen2: the rotated key written back one column off (slice_scatter_1 769..897).
inline void ShiftRotaryScatter(Pair* p) {
  for (ir::Graph& g : p->d.ranks) {
    ir::Node& scatter = g.nodes[NodeNamed(g, "slice_scatter_1")];
    ASSERT_EQ(scatter.args.at(3), ir::Value(768));
    ASSERT_EQ(scatter.args.at(4), ir::Value(896));
    scatter.args[3] = ir::Value(769);
    scatter.args[4] = ir::Value(897);
  }
}

// (c) GPT: the vocabulary-parallel embedding's all_reduce made 'max'.
inline void EmbeddingAllReduceWithMax(Pair* p) {
  for (ir::Graph& g : p->d.ranks) {
    ir::Node& reduce = g.nodes[NodeNamed(g, "all_reduce")];
    ASSERT_EQ(reduce.op.ToString(), "_c10d_functional::all_reduce.default");
    ASSERT_EQ(reduce.args.at(1), ir::Value("sum"));
    reduce.args[1] = ir::Value("max");
  }
}

// (d) Qwen2: the vocabulary offset factor of the embedding dropped (mul by 1).
inline void DropVocabOffsetScale(Pair* p) {
  for (ir::Graph& g : p->d.ranks) {
    ir::Node& mul = g.nodes[NodeNamed(g, "mul")];
    ASSERT_EQ(mul.op.ToString(), "aten::mul.Tensor");
    ASSERT_EQ(mul.args.at(1), ir::Value(g.rank == 0 ? 0 : 75968));
    mul.args[1] = ir::Value(1);
  }
}

// (e) GPT: the sequence-parallel LayerNorm output gathered along the batch, not the sequence.
inline void GatherAlongBatch(Pair* p) {
  for (ir::Graph& g : p->d.ranks) {
    const ir::NodeId gather = NodeNamed(g, "all_gather_into_tensor");
    ASSERT_EQ(g.nodes[gather].args.at(1), ir::Value(2));
    const ir::TensorRef piece = g.nodes[gather].args.at(0).as_tensor();
    const ir::Node transpose_template = g.nodes[NodeNamed(g, "transpose")];  // transpose(x, 0, 1)
    const ir::Node clone_template = g.nodes[NodeNamed(g, "clone_1")];        // contiguous clone
    const ir::Node view_template = g.nodes[NodeNamed(g, "view_2")];

    auto make = [&](const ir::Node& tmpl, const std::string& name, std::vector<ir::Value> args) {
      ir::Node n = tmpl;
      n.name = name;
      n.args = std::move(args);
      n.outputs = {ir::NodeOutput{name, std::nullopt}};
      return n;
    };
    // Before the gather: transpose the piece, and gather that.
    ir::NodeId t0 = ir::InsertNode(
        &g, gather, make(transpose_template, "bug_t0", {piece, ir::Value(0), ir::Value(1)}));
    RetypeNode(&g, p->d, t0);
    const ir::NodeId gather_id = t0 + 1;
    g.nodes[gather_id].args[0] = ir::TensorRef{t0, 0};
    RetypeNode(&g, p->d, gather_id);
    const ir::NodeId wait = NodeNamed(g, "wait_tensor_1");
    ASSERT_EQ(g.nodes[wait].args.at(0).as_tensor().node, gather_id);
    RetypeNode(&g, p->d, wait);
    // After the wait: transpose back (ranks now side by side on dim 1) and view as [s, b, h].
    const ir::TensorType gathered = g.type(ir::TensorRef{gather_id, 0});
    const ir::TensorType expected = g.type(piece);  // [s/tp, b, h]
    std::vector<ir::Value> sizes = {ir::Value(expected.shape[0].value() * p->d.world_size()),
                                    ir::Value(expected.shape[1].value()),
                                    ir::Value(expected.shape[2].value())};
    ASSERT_EQ(gathered.shape[0].value(), expected.shape[1].value() * p->d.world_size());
    ir::NodeId t1 = ir::InsertNode(
        &g, wait + 1, make(transpose_template, "bug_t1", {ir::TensorRef{wait, 0}, 0, 1}));
    RetypeNode(&g, p->d, t1);
    ir::NodeId c =
        ir::InsertNode(&g, t1 + 1, make(clone_template, "bug_c", {ir::TensorRef{t1, 0}}));
    RetypeNode(&g, p->d, c);
    ir::NodeId v = ir::InsertNode(
        &g, c + 1, make(view_template, "bug_v", {ir::TensorRef{c, 0}, ir::Value(sizes)}));
    RetypeNode(&g, p->d, v);
    EXPECT_EQ(ir::ReplaceAllUses(&g, ir::TensorRef{wait, 0}, ir::TensorRef{v, 0}, /*after=*/v), 1);
  }
}

}  // namespace gg::symbolic::seeded
