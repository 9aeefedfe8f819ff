// Factories: tensors made from a size argument or shaped like another tensor.
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> FactoryOps() {
  using namespace rules;  // NOLINT: the tables read as data
  return {
      {"aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       FromSize, traits::NondeterministicInit() | traits::Exact() | traits::Fresh()},
      {"aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? "
       "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       FromSize, traits::NondeterministicInit()},
      {"aten::empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       Like, traits::NondeterministicInit() | traits::Exact() | traits::PreservesFormat()},
      {"aten::new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? "
       "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       NewFromSize, traits::NondeterministicInit() | traits::Exact() | traits::Fresh()},
      // Uninitialized like new_empty (the strides only lay it out): never trusted, each one unique.
      {"aten::new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, ScalarType? "
       "dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       NewFromSize, traits::NondeterministicInit() | traits::Exact()},
      {"aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None) -> Tensor",
       FromSize, traits::Exact() | traits::Fresh() | traits::Lower("zeros")},
      {"aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None) -> Tensor",
       FromSize, traits::Exact() | traits::Fresh() | traits::Lower("ones")},
      {"aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? "
       "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       Full, traits::Exact() | traits::Fresh() | traits::Lower("full")},
      {"aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       Like,
       traits::MetadataOnly() | traits::Exact() | traits::Lower("zeros") |
           traits::PreservesFormat()},
      {"aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       Like,
       traits::MetadataOnly() | traits::Exact() | traits::Lower("ones") |
           traits::PreservesFormat()},
      {"aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? "
       "layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) "
       "-> Tensor",
       Like,
       traits::MetadataOnly() | traits::Exact() | traits::Lower("full") |
           traits::PreservesFormat()},
      {"aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? "
       "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       NewFromSize,
       traits::MetadataOnly() | traits::Exact() | traits::Fresh() | traits::Lower("zeros")},
      {"aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       NewFromSize,
       traits::MetadataOnly() | traits::Exact() | traits::Fresh() | traits::Lower("ones")},
      {"aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None) -> Tensor",
       ScalarTensor, traits::Fresh()},
      {"aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None) -> Tensor",
       Arange, traits::Exact() | traits::Fresh()},
      {"aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? "
       "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       Arange, traits::Exact() | traits::Fresh()},
      {"aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? "
       "dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
       Arange, traits::Exact() | traits::Fresh()},
      // Random factories.
      {"aten::rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       Like, traits::Random() | traits::PreservesFormat()},
      {"aten::randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
       Like, traits::Random() | traits::PreservesFormat()},
      {"aten::rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None) -> Tensor",
       FromSize, traits::Random() | traits::Fresh()},
      {"aten::bernoulli.p(Tensor self, float p=0.5, *, Generator? generator=None) -> Tensor",
       Identity, traits::Random() | traits::Fresh()},
  };
}

}  // namespace gg::ir
