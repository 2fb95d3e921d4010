// ir::constant_values: the one constant reader the lowerings share (TOSA, XNNPACK, Cortex-M,
// the quantized-linear pass). Elements come in logical order whatever the dim order.
#include <gtest/gtest.h>

#include <cstring>

#include "compiler/ir/constant_values.h"
#include "compiler/ir/queries.h"

namespace pteron::compiler::ir {
namespace {

template <typename T>
Value constant(ScalarType dtype, std::vector<int64_t> sizes, std::vector<uint8_t> dim_order,
               const std::vector<T>& stored) {
  Value v;
  v.name = "w";
  v.kind = ValueKind::Constant;
  v.spec = TensorSpec::contiguous(dtype, std::move(sizes));
  v.spec.dim_order = std::move(dim_order);
  std::vector<uint8_t> bytes(stored.size() * sizeof(T));
  std::memcpy(bytes.data(), stored.data(), bytes.size());
  v.constant = ConstantData::owned(std::move(bytes));
  return v;
}

TEST(ConstantValues, LogicalOrderOfATransposedLayout) {
  // Logical [[1, 2, 3], [4, 5, 6]] stored column-major (dim order [1, 0]).
  const Value v = constant<float>(ScalarType::Float, {2, 3}, {1, 0}, {1, 4, 2, 5, 3, 6});
  EXPECT_EQ(*constant_values<double>(v), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(*constant_values<float>(v), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(ConstantValues, IntegerAndBoolDtypes) {
  EXPECT_EQ(*constant_values<double>(constant<int8_t>(ScalarType::Char, {3}, {0}, {-128, 0, 127})),
            (std::vector<double>{-128, 0, 127}));
  EXPECT_EQ(*constant_values<double>(constant<uint8_t>(ScalarType::Byte, {2}, {0}, {0, 255})),
            (std::vector<double>{0, 255}));
  EXPECT_EQ(
      *constant_values<double>(constant<int64_t>(ScalarType::Long, {2}, {0}, {-5, 1LL << 40})),
      (std::vector<double>{-5, static_cast<double>(1LL << 40)}));
  EXPECT_EQ(*constant_values<double>(constant<uint8_t>(ScalarType::Bool, {2}, {0}, {0, 3})),
            (std::vector<double>{0, 1}));
}

TEST(ConstantValues, RefusesWithAReason) {
  std::string why;
  Value input;
  input.name = "x";
  input.kind = ValueKind::Input;
  EXPECT_FALSE(constant_values<double>(input, &why));
  EXPECT_EQ(why, "'x' is not a constant");
  EXPECT_FALSE(constant_values<double>(constant<float>(ScalarType::Float, {4}, {0}, {1, 2}), &why));
  EXPECT_EQ(why, "constant 'w' is short");
  EXPECT_FALSE(constant_values<double>(constant<uint16_t>(ScalarType::Half, {1}, {0}, {0}), &why));
  EXPECT_EQ(why.rfind("constant 'w' has dtype ", 0), 0u) << why;
}

TEST(ShapeHelpers, NumelAndShapeStr) {
  EXPECT_EQ(numel(std::vector<int64_t>{2, 3, 4}), 24);
  EXPECT_EQ(numel(std::vector<int64_t>{}), 1);
  EXPECT_EQ(shape_str(std::vector<int64_t>{1, 8}), "[1, 8]");
  EXPECT_EQ(shape_str(std::vector<int64_t>{}), "[]");
}

}  // namespace
}  // namespace pteron::compiler::ir
