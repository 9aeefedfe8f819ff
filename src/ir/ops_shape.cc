// Views and layout operators: view/reshape, transpose/permute, squeeze/unsqueeze, slicing,
// selection, concatenation and splitting.
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> ShapeOps() {
  using namespace rules;  // NOLINT: the tables read as data
  return {
      {"aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", View},
      {"aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", View},
      {"aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor", View},
      {"aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", Expand},
      {"aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)", Permute},
      {"aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", Transpose},
      {"aten::t(Tensor(a) self) -> Tensor(a)", T},
      {"aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", Unsqueeze},
      {"aten::squeeze(Tensor(a) self) -> Tensor(a)", Squeeze},
      {"aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", SqueezeDims},
      {"aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", SqueezeDims},
      {"aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", Select},
      {"aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
       Slice},
      {"aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor",
       SliceScatter},
      {"aten::select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
       SelectScatter},
      {"aten::cat(Tensor[] tensors, int dim=0) -> Tensor", Cat},
      {"aten::stack(Tensor[] tensors, int dim=0) -> Tensor", Stack},
      {"aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
       Split},
      {"aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
       SplitWithSizes},
  };
}

}  // namespace gg::ir
