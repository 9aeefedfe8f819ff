// Indexing: advanced indexing and index_put, embeddings, gather/scatter, index_select.
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> IndexingOps() {
  using namespace rules;  // NOLINT: the tables read as data
  return {
      {"aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", Index},
      {"aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
       IndexPut},
      {"aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
       Embedding},
      {"aten::embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq) -> Tensor",
       EmbeddingDenseBackward},
      {"aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
       Gather},
      {"aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", ScatterLike},
      {"aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
       ScatterLike},
      {"aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", ScatterLike},
      {"aten::index_select(Tensor self, int dim, Tensor index) -> Tensor", IndexSelect},
  };
}

}  // namespace gg::ir
