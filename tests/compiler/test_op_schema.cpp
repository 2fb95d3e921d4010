#include <gtest/gtest.h>

#include <set>

#include "compiler/compile_error.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler::ir {
namespace {

const OpSchema& schema(std::string_view name) {
  const OpSchema* s = OpSchemaRegistry::global().find(name);
  if (s == nullptr) throw std::runtime_error("no schema " + std::string(name));
  return *s;
}

std::vector<std::string> arg_names(const OpSchema& s) {
  std::vector<std::string> names;
  for (const ArgSchema& a : s.args) names.push_back(a.name);
  return names;
}

TEST(OpRef, ParsesAllSpellings) {
  EXPECT_EQ(OpRef::parse("torch.ops.aten.add.Tensor"), (OpRef{"aten", "add", "Tensor"}));
  EXPECT_EQ(OpRef::parse("aten::addmm"), (OpRef{"aten", "addmm", "default"}));
  EXPECT_EQ(OpRef::parse("aten::add.out").str(), "aten::add.out");
  EXPECT_EQ(OpRef::parse("torch.ops.quantized_decomposed.quantize_per_tensor.default").ns,
            "quantized_decomposed");
  EXPECT_THROW(OpRef::parse("torch.ops.aten.add"), CompileError);
  EXPECT_THROW(OpRef::parse("add.Tensor"), CompileError);
  EXPECT_THROW(OpRef::parse("aten::"), CompileError);
}

TEST(ArgType, ParsesTorchSpellings) {
  const ArgType list = ArgType::parse("int[2]");
  EXPECT_EQ(list.base, BaseType::Int);
  EXPECT_TRUE(list.is_list);
  EXPECT_EQ(list.fixed_size, 2);
  EXPECT_FALSE(list.optional);
  const ArgType opt = ArgType::parse("Tensor?[]");
  EXPECT_TRUE(opt.is_list && opt.elem_optional && !opt.optional);
  const ArgType opt_list = ArgType::parse("int[1]?");
  EXPECT_TRUE(opt_list.is_list && opt_list.optional && opt_list.fixed_size == 1);
  EXPECT_EQ(ArgType::parse("Scalar?").base, BaseType::Scalar);
  EXPECT_EQ(ArgType::parse("Dimname").base, BaseType::Other);
}

TEST(OpSchema, AddHasDefaultsAndOutVariant) {
  const OpSchema& add = schema("aten::add.Tensor");
  EXPECT_EQ(arg_names(add), (std::vector<std::string>{"self", "other", "alpha"}));
  const ArgSchema& alpha = add.args[2];
  EXPECT_TRUE(alpha.kwarg_only);
  ASSERT_TRUE(alpha.default_value.has_value());
  EXPECT_EQ(*alpha.default_value, Argument(Scalar{int64_t{1}}));
  ASSERT_NE(add.out_variant, nullptr);
  EXPECT_EQ(add.out_variant->op.str(), "aten::add.out");
  EXPECT_EQ(arg_names(*add.out_variant),
            (std::vector<std::string>{"self", "other", "alpha", "out"}));
  EXPECT_EQ(add.out_variant->out_arg_indices(), std::vector<int>{3});
  EXPECT_TRUE(add.out_variant->is_out_variant);
  EXPECT_FALSE(add.is_view);
  // Overload names differ between functional ops and their out variants.
  EXPECT_EQ(schema("aten::add.Scalar").out_variant->op.str(), "aten::add.Scalar_out");
  EXPECT_EQ(schema("aten::sum.dim_IntList").out_variant->op.str(), "aten::sum.IntList_out");
}

TEST(OpSchema, MultiOutputOutVariants) {
  const OpSchema& ln = schema("aten::native_layer_norm.default");
  ASSERT_EQ(ln.returns.size(), 3u);
  ASSERT_NE(ln.out_variant, nullptr);
  EXPECT_EQ(ln.out_variant->op.str(), "aten::native_layer_norm.out");
  EXPECT_EQ(ln.out_variant->out_arg_indices(), (std::vector<int>{5, 6, 7}));
  const OpSchema& pool = schema("aten::max_pool2d_with_indices.default");
  EXPECT_EQ(*pool.args[pool.arg_index("dilation")].default_value,
            Argument(std::vector<int64_t>{1, 1}));
  EXPECT_EQ(*pool.args[pool.arg_index("stride")].default_value, Argument(std::vector<int64_t>{}));
  EXPECT_EQ(pool.out_variant->op.str(), "aten::max_pool2d_with_indices.out");
}

TEST(OpSchema, OutVariantsDropTensorOptions) {
  const OpSchema& to_copy = schema("aten::_to_copy.default");
  ASSERT_NE(to_copy.out_variant, nullptr);
  EXPECT_EQ(arg_names(*to_copy.out_variant),
            (std::vector<std::string>{"self", "non_blocking", "memory_format", "out"}));
  EXPECT_EQ(schema("aten::full.default").out_variant->op.str(), "aten::full.out");
}

TEST(OpSchema, ViewsMapToCopyOps) {
  const std::pair<const char*, const char*> cases[] = {
      {"aten::view.default", "aten::view_copy.out"},
      {"aten::permute.default", "aten::permute_copy.out"},
      {"aten::expand.default", "aten::expand_copy.out"},
      {"aten::slice.Tensor", "aten::slice_copy.Tensor_out"},
      {"aten::select.int", "aten::select_copy.int_out"},
      {"aten::unsqueeze.default", "aten::unsqueeze_copy.out"},
      {"aten::squeeze.dims", "aten::squeeze_copy.dims_out"},
      {"aten::t.default", "aten::t_copy.out"},
      {"aten::transpose.int", "aten::transpose_copy.int_out"},
      {"aten::alias.default", "aten::alias_copy.out"},
      {"aten::split_with_sizes.default", "aten::split_with_sizes_copy.out"},
  };
  for (auto [view, out] : cases) {
    const OpSchema& s = schema(view);
    EXPECT_TRUE(s.is_view) << view;
    ASSERT_NE(s.view_copy, nullptr) << view;
    ASSERT_NE(s.view_copy->out_variant, nullptr) << view;
    EXPECT_EQ(s.view_copy->out_variant->op.str(), out);
  }
  // split_with_sizes_copy writes a list of tensors.
  const OpSchema& split_out = schema("aten::split_with_sizes_copy.out");
  const ArgSchema& out = split_out.args[split_out.out_arg_indices().at(0)];
  EXPECT_TRUE(out.type.is_list);
  EXPECT_EQ(out.type.base, BaseType::Tensor);
}

TEST(OpSchema, QuantizedAndDimOrderOps) {
  const OpSchema& dq = schema("quantized_decomposed::dequantize_per_tensor.default");
  EXPECT_EQ(dq.out_variant->op.str(), "quantized_decomposed::dequantize_per_tensor.out");
  EXPECT_EQ(dq.args.back().name, "out_dtype");
  EXPECT_EQ(*dq.args.back().default_value, Argument(None{}));
  EXPECT_EQ(schema("quantized_decomposed::quantize_per_channel.default").out_variant->op.str(),
            "quantized_decomposed::quantize_per_channel.out");
  EXPECT_EQ(schema("quantized_decomposed::quantize_per_tensor.tensor").out_variant->op.str(),
            "quantized_decomposed::quantize_per_tensor.Tensor_out");
  EXPECT_EQ(schema("dim_order_ops::_to_dim_order_copy.default").out_variant->op.str(),
            "dim_order_ops::_to_dim_order_copy.out");
}

// Properties of the whole generated table, so a regenerated table cannot silently break them.
TEST(OpSchema, TableIsConsistent) {
  const auto all = OpSchemaRegistry::global().all();
  EXPECT_GT(all.size(), 400u);
  static const std::set<std::string> kTensorOptions = {"dtype", "layout", "device", "pin_memory"};
  for (const OpSchema* s : all) {
    if (s->out_variant != nullptr) {
      // Every out-variant input is a functional input of the same name and type.
      const OpSchema& out = *s->out_variant;
      EXPECT_TRUE(out.is_out_variant) << s->op.str();
      size_t inputs = 0;
      for (const ArgSchema& a : out.args) {
        if (a.is_out) continue;
        ++inputs;
        const int i = s->arg_index(a.name);
        ASSERT_GE(i, 0) << out.op.str() << " " << a.name;
        EXPECT_EQ(s->args[i].type.spelling, a.type.spelling) << out.op.str();
      }
      size_t dropped = 0;
      for (const ArgSchema& a : s->args) dropped += out.arg_index(a.name) < 0;
      EXPECT_EQ(inputs + dropped, s->args.size()) << s->op.str();
      EXPECT_FALSE(out.out_arg_indices().empty()) << out.op.str();
    }
    if (s->view_copy != nullptr) EXPECT_TRUE(s->is_view) << s->op.str();
    for (const ArgSchema& a : s->args) {
      if (a.default_value && a.type.base == BaseType::Int && !a.type.is_list) {
        EXPECT_TRUE(a.default_value->is<int64_t>() || a.default_value->is_none()) << s->op.str();
      }
    }
  }
}

TEST(OpSchemaRegistry, AddsBackendOps) {
  OpSchemaRegistry registry;
  OpSchema s;
  s.op = OpRef::parse("my_backend::gelu_fast.default");
  ArgSchema self;
  self.name = "self";
  self.type = ArgType::parse("Tensor");
  s.args.push_back(self);
  s.returns.push_back({"", ArgType::parse("Tensor"), ""});
  const OpSchema& added = registry.add(s);
  EXPECT_EQ(registry.find("my_backend::gelu_fast.default"), &added);
  EXPECT_THROW(registry.add(s), CompileError);
  OpSchema other = s;
  other.op.name = "other";
  EXPECT_THROW(registry.add(other, "my_backend::missing.out"), CompileError);
}

}  // namespace
}  // namespace pteron::compiler::ir
