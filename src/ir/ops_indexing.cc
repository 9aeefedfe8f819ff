// Indexing: advanced indexing and index_put, embeddings, gather/scatter, index_select.
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> IndexingOps() {
  using namespace rules;  // NOLINT: the tables read as data
  return {
      {"aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", Index,
       traits::Exact() | traits::Lower("index")},
      {"aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> "
       "Tensor",
       IndexPut, traits::ExactOrAccumulates() | traits::Fresh() | traits::Lower("index_put")},
      {"aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool "
       "scale_grad_by_freq=False, bool sparse=False) -> Tensor",
       Embedding, traits::Exact() | traits::Fresh() | traits::Lower("embedding")},
      {"aten::embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
       "SymInt padding_idx, bool scale_grad_by_freq) -> Tensor",
       EmbeddingDenseBackward, traits::Fresh() | traits::Lower("embedding_dense_backward")},
      {"aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
       Gather, traits::Exact() | traits::Fresh() | traits::Lower("gather")},
      {"aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", ScatterLike,
       traits::Exact() | traits::Fresh() | traits::Lower("scatter_src")},
      {"aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
       ScatterLike, traits::Exact() | traits::Fresh() | traits::Lower("scatter_value")},
      {"aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", ScatterLike,
       traits::Fresh() | traits::Lower("scatter_add")},
      {"aten::index_select(Tensor self, int dim, Tensor index) -> Tensor", IndexSelect,
       traits::Exact() | traits::Fresh() | traits::Lower("index_select")},
      // source's rows written at index's positions (an MoE combine putting the expert outputs
      // back in slot order, the permutation's inverse)
      {"aten::index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor", IndexCopy,
       traits::Exact() | traits::Fresh() | traits::Lower("index_copy")},
  };
}

}  // namespace gg::ir
