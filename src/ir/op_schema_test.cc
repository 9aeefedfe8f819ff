#include <gtest/gtest.h>

#include <cmath>

#include "ir/op_registry.h"

namespace gg::ir {
namespace {

TEST(OpSchemaTest, ParsesNameOverloadAndKwargOnlyMarker) {
  OpSchema s = OpSchema::Parse("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_EQ(s.name.ToString(), "aten::add.Tensor");
  ASSERT_EQ(s.args.size(), 3u);
  EXPECT_EQ(s.args[0].name, "self");
  EXPECT_EQ(s.args[0].type, "Tensor");
  EXPECT_FALSE(s.args[1].kwarg_only);
  EXPECT_TRUE(s.args[2].kwarg_only);
  ASSERT_TRUE(s.args[2].default_value);
  EXPECT_EQ(*s.args[2].default_value, Value(int64_t{1}));
  EXPECT_EQ(s.returns, (std::vector<std::string>{"Tensor"}));
  EXPECT_EQ(s.ArgIndex("alpha"), 2);
  EXPECT_EQ(s.ArgIndex("beta"), -1);
}

TEST(OpSchemaTest, MissingOverloadIsDefault) {
  OpSchema s = OpSchema::Parse("_c10d_functional::all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor");
  EXPECT_EQ(s.name.ns, "_c10d_functional");
  EXPECT_EQ(s.name.overload, "default");
}

TEST(OpSchemaTest, ParsesDefaults) {
  OpSchema s = OpSchema::Parse(
      "x::f(int a=3, int b=-1, float c=1e-05, float d=0., int[1] e=[], int[2] f=[0, 1], "
      "Tensor? g=None, bool h=True, bool i=False, str j='none', str k=\"x,y\", float l=inf, "
      "float m=1, MemoryFormat n=contiguous_format, int reduction=Mean) -> Tensor");
  auto def = [&](const std::string& name) { return *s.args[s.ArgIndex(name)].default_value; };
  EXPECT_EQ(def("a"), Value(int64_t{3}));
  EXPECT_EQ(def("b"), Value(int64_t{-1}));
  EXPECT_DOUBLE_EQ(def("c").as_double(), 1e-05);
  EXPECT_DOUBLE_EQ(def("d").as_double(), 0.0);
  EXPECT_EQ(def("e"), Value(Value::List{}));
  EXPECT_EQ(def("f"), Value(Value::List{Value(0), Value(1)}));
  EXPECT_TRUE(def("g").is_none());
  EXPECT_EQ(def("h"), Value(true));
  EXPECT_EQ(def("i"), Value(false));
  EXPECT_EQ(def("j"), Value("none"));
  EXPECT_EQ(def("k"), Value("x,y"));
  EXPECT_TRUE(std::isinf(def("l").as_double()));
  EXPECT_TRUE(def("m").is_double());  // an int literal for a float argument becomes a float
  EXPECT_EQ(def("n"), Value(EnumValue{"contiguous_format"}));
  EXPECT_EQ(def("reduction"), Value(int64_t{1}));
  EXPECT_EQ(s.args[s.ArgIndex("e")].type, "int[1]");
  EXPECT_EQ(s.args[s.ArgIndex("g")].type, "Tensor?");
}

TEST(OpSchemaTest, ParsesAliasAnnotations) {
  OpSchema s = OpSchema::Parse(
      "_C::rotary_embedding(Tensor positions, Tensor(a!) query, Tensor(b!)? key, int head_size, "
      "Tensor cos_sin_cache, bool is_neox) -> ()");
  EXPECT_FALSE(s.args[0].mutated);
  EXPECT_TRUE(s.args[1].mutated);
  EXPECT_EQ(s.args[1].type, "Tensor");
  EXPECT_TRUE(s.args[2].mutated);
  EXPECT_EQ(s.args[2].type, "Tensor?");
  EXPECT_TRUE(s.returns.empty());

  OpSchema view = OpSchema::Parse("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)");
  EXPECT_FALSE(view.args[0].mutated);
  EXPECT_EQ(view.args[0].type, "Tensor");
  EXPECT_EQ(view.args[1].type, "SymInt[]");
  EXPECT_EQ(view.returns, (std::vector<std::string>{"Tensor"}));

  OpSchema split = OpSchema::Parse(
      "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]");
  EXPECT_EQ(split.args[0].type, "Tensor");
  EXPECT_EQ(split.returns, (std::vector<std::string>{"Tensor[]"}));

  OpSchema old_style = OpSchema::Parse("_C::f(Tensor! out, Tensor!? maybe) -> ()");
  EXPECT_TRUE(old_style.args[0].mutated);
  EXPECT_EQ(old_style.args[1].type, "Tensor?");
}

TEST(OpSchemaTest, ParsesListTypesAndReturns) {
  OpSchema index = OpSchema::Parse("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  EXPECT_EQ(index.args[1].type, "Tensor?[]");
  OpSchema max = OpSchema::Parse(
      "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  EXPECT_EQ(max.returns, (std::vector<std::string>{"Tensor", "Tensor"}));
  EXPECT_EQ(max.return_names, (std::vector<std::string>{"values", "indices"}));
  OpSchema ln = OpSchema::Parse(
      "apex::fused_layer_norm_affine_fwd(Tensor input, Tensor weight, Tensor bias, "
      "int[] normalized_shape, float eps) -> (Tensor, Tensor, Tensor)");
  EXPECT_EQ(ln.returns.size(), 3u);
  EXPECT_EQ(ln.return_names, (std::vector<std::string>{"", "", ""}));
  OpSchema mixed = OpSchema::Parse("x::g(Tensor a) -> (Tensor out, SymInt n, Tensor(a!) b)");
  OpSchema annotated = OpSchema::Parse("x::h(Tensor(a!) a) -> Tensor(a!)");
  EXPECT_EQ(annotated.return_names, (std::vector<std::string>{""}));
  EXPECT_EQ(mixed.returns, (std::vector<std::string>{"Tensor", "SymInt", "Tensor"}));
  EXPECT_EQ(mixed.return_names, (std::vector<std::string>{"out", "n", "b"}));
}

TEST(OpSchemaTest, RejectsMalformedSchemas) {
  for (const char* bad : {
           "aten::add.Tensor(Tensor self, Tensor other",          // unclosed
           "add(Tensor self) -> Tensor",                          // no namespace
           "aten::add(Tensor self)",                              // no returns
           "aten::add(Tensor self, Tensor self) -> Tensor",       // duplicate argument
           "aten::add(Tensr self) -> Tensor",                     // unknown type
           "aten::add(Tensor) -> Tensor",                         // no name
           "aten::add(Tensor self, *, *, int a=1) -> Tensor",     // '*' twice
           "aten::add(int a=) -> Tensor",                         // empty default
           "aten::add(int a=[1, ) -> Tensor",                     // bad list default
           "aten::add(int a=@) -> Tensor",                        // bad default
           "aten::add(Tensor(a! self) -> Tensor",                 // unclosed annotation
           "aten::add(int[x] a) -> Tensor",                       // bad list size
           "aten::add(Tensor self) -> ",                          // empty return
       }) {
    EXPECT_THROW(OpSchema::Parse(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace gg::ir
