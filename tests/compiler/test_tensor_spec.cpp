#include <gtest/gtest.h>

#include "compiler/ir/tensor_spec.h"

namespace pteron::compiler::ir {
namespace {

using Order = std::vector<uint8_t>;

Order order_of(std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  return dim_order_from_strides(sizes, strides);
}

// Expected values are torch 2.13's Tensor.dim_order() for torch.empty_strided(sizes, strides).
TEST(DimOrder, MatchesTorch) {
  EXPECT_EQ(order_of({2, 3, 4}, {12, 4, 1}), (Order{0, 1, 2}));
  EXPECT_EQ(order_of({2, 3, 4, 5}, {60, 1, 15, 3}), (Order{0, 2, 3, 1}));
  EXPECT_EQ(order_of({4, 8}, {1, 4}), (Order{1, 0}));
  EXPECT_EQ(order_of({2, 3, 1, 1}, {3, 1, 3, 3}), (Order{0, 2, 3, 1}));
  EXPECT_EQ(order_of({1, 3, 1, 1}, {3, 1, 1, 1}), (Order{0, 1, 2, 3}));
  EXPECT_EQ(order_of({2, 3, 4}, {1, 2, 6}), (Order{2, 1, 0}));
  EXPECT_EQ(order_of({2, 1, 4}, {4, 4, 1}), (Order{0, 1, 2}));
  EXPECT_EQ(order_of({3, 4, 5, 6, 7}, {840, 1, 168, 28, 4}), (Order{0, 2, 3, 4, 1}));
  EXPECT_EQ(order_of({2, 2}, {0, 1}), (Order{0, 1}));
  EXPECT_EQ(order_of({}, {}), Order{});
}

TEST(DimOrder, StridesRoundTrip) {
  const std::vector<int64_t> sizes{2, 3, 4, 5};
  const Order cl{0, 2, 3, 1};
  EXPECT_EQ(strides_from_dim_order(sizes, cl), (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_EQ(dim_order_from_strides(sizes, strides_from_dim_order(sizes, cl)), cl);
}

TEST(DimOrder, DenseCheckIgnoresSizeOneDims) {
  EXPECT_TRUE(is_dense_in_dim_order(std::vector<int64_t>{2, 1, 4}, std::vector<int64_t>{4, 99, 1},
                                    Order{0, 1, 2}));
  // A slice with a step skips elements: not dense in any order.
  EXPECT_FALSE(
      is_dense_in_dim_order(std::vector<int64_t>{4, 3}, std::vector<int64_t>{6, 2}, Order{0, 1}));
  // Broadcast (stride 0) is not dense either.
  EXPECT_FALSE(
      is_dense_in_dim_order(std::vector<int64_t>{2, 2}, std::vector<int64_t>{0, 1}, Order{0, 1}));
}

TEST(TensorSpec, SizesAndPrinting) {
  TensorSpec spec = TensorSpec::contiguous(ScalarType::Float, {2, 3, 4});
  EXPECT_EQ(spec.numel(), 24);
  EXPECT_EQ(spec.nbytes(), 96u);
  EXPECT_TRUE(spec.is_contiguous());
  EXPECT_EQ(to_string(spec), "f32[2, 3, 4]");
  spec.dim_order = {0, 2, 1};
  EXPECT_EQ(spec.strides(), (std::vector<int64_t>{12, 1, 3}));
  EXPECT_EQ(to_string(spec), "f32[2, 3, 4] dim_order=[0, 2, 1]");
  EXPECT_EQ(to_string(TensorSpec::contiguous(ScalarType::Long, {})), "i64[]");
  EXPECT_EQ(TensorSpec::contiguous(ScalarType::Half, {0, 5}).nbytes(), 0u);
}

TEST(Dtype, C10NumberingAndNames) {
  EXPECT_EQ(dtype_size(ScalarType::BFloat16), 2u);
  EXPECT_EQ(dtype_name(ScalarType::Bool), "b8");
  EXPECT_EQ(dtype_size(static_cast<ScalarType>(9)), 8u);  // complex64
  EXPECT_EQ(dtype_name(static_cast<ScalarType>(24)), "f8e4m3fn");
  EXPECT_EQ(dtype_size(static_cast<ScalarType>(99)), 0u);
  EXPECT_EQ(dtype_name(static_cast<ScalarType>(99)), "dtype(99)");
}

}  // namespace
}  // namespace pteron::compiler::ir
