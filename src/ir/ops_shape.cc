// Views and layout operators: view/reshape, transpose/permute, squeeze/unsqueeze, slicing,
// selection, concatenation and splitting.
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> ShapeOps() {
  using namespace rules;  // NOLINT: the tables read as data
  return {
      {"aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", View,
       traits::Exact() | traits::Lower("reshape")},
      {"aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", View,
       traits::Exact() | traits::Lower("reshape")},
      {"aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor", View,
       traits::Exact() | traits::Lower("reshape")},
      {"aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", Expand,
       traits::Exact() | traits::Lower("expand")},
      {"aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)", Permute,
       traits::Exact() | traits::Lower("permute")},
      {"aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", Transpose,
       traits::Exact() | traits::Lower("transpose")},
      {"aten::t(Tensor(a) self) -> Tensor(a)", T, traits::Exact() | traits::Lower("t")},
      {"aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", Unsqueeze,
       traits::Exact() | traits::Lower("unsqueeze")},
      // every squeeze is a reshape to its output shape (the unsqueeze lowering)
      {"aten::squeeze(Tensor(a) self) -> Tensor(a)", Squeeze,
       traits::Exact() | traits::Lower("unsqueeze")},
      {"aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", SqueezeDims,
       traits::Exact() | traits::Lower("unsqueeze")},
      {"aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", SqueezeDims,
       traits::Exact() | traits::Lower("unsqueeze")},
      {"aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", Select,
       traits::Exact()},
      {"aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt "
       "step=1) -> Tensor(a)",
       Slice, traits::Exact() | traits::Lower("slice")},
      {"aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? "
       "end=None, SymInt step=1) -> Tensor",
       SliceScatter, traits::Exact() | traits::Fresh() | traits::Lower("slice_scatter")},
      {"aten::select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
       SelectScatter, traits::Exact() | traits::Fresh()},
      // Complex views (complex RoPE): a complex tensor is a value of the language like any
      // other (mul, add, concat, slice, reshape hold over C as over R); these two convert,
      // complex.rules moves them through concat and slice.
      {"aten::view_as_complex(Tensor(a) self) -> Tensor(a)", ViewAsComplex,
       traits::Exact() | traits::Mirror("view_as_complex")},
      {"aten::view_as_real(Tensor(a) self) -> Tensor(a)", ViewAsReal,
       traits::Exact() | traits::Mirror("view_as_real")},
      {"aten::cat(Tensor[] tensors, int dim=0) -> Tensor", Cat,
       traits::Exact() | traits::Fresh() | traits::Lower("cat")},
      {"aten::stack(Tensor[] tensors, int dim=0) -> Tensor", Stack,
       traits::Exact() | traits::Fresh()},
      {"aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
       Split, traits::Exact() | traits::Lower("split_equal")},
      {"aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> "
       "Tensor(a)[]",
       SplitWithSizes, traits::Exact() | traits::Lower("split_with_sizes")},
  };
}

}  // namespace gg::ir
