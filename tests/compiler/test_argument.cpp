#include <gtest/gtest.h>

#include "compiler/compile_error.h"
#include "compiler/ir/argument.h"

namespace pteron::compiler::ir {
namespace {

std::string print(const Argument& a) {
  return to_string(a, [](ValueId id) { return "%v" + std::to_string(id); });
}

TEST(Argument, KindsFollowTheVariant) {
  EXPECT_EQ(Argument().kind(), ArgKind::None);
  EXPECT_EQ(Argument(3).kind(), ArgKind::Int);
  EXPECT_EQ(Argument(int64_t{3}).kind(), ArgKind::Int);
  EXPECT_EQ(Argument(0.5).kind(), ArgKind::Float);
  EXPECT_EQ(Argument(true).kind(), ArgKind::Bool);
  EXPECT_EQ(Argument(std::string("tanh")).kind(), ArgKind::String);
  EXPECT_EQ(Argument(ScalarType::Float).kind(), ArgKind::ScalarType);
  EXPECT_EQ(Argument(MemoryFormat::ChannelsLast).kind(), ArgKind::MemoryFormat);
  EXPECT_EQ(Argument(std::vector<int64_t>{1, 0}).kind(), ArgKind::IntList);
  EXPECT_EQ(Argument(TensorRef{4}).kind(), ArgKind::Tensor);
  EXPECT_EQ(Argument(Scalar{int64_t{1}}).kind(), ArgKind::Scalar);
}

TEST(Argument, GetChecksTheKind) {
  const Argument a(std::vector<int64_t>{1, 2});
  EXPECT_EQ(a.get<std::vector<int64_t>>().size(), 2u);
  EXPECT_THROW(a.get<double>(), CompileError);
  EXPECT_DOUBLE_EQ(Argument(Scalar{int64_t{2}}).to_double(), 2.0);
  EXPECT_DOUBLE_EQ(Argument(3).to_double(), 3.0);
}

TEST(Argument, VisitsAndRewritesValues) {
  Argument list(OptionalTensorList{{1, kNoValue, 2, 1}});
  std::vector<ValueId> seen;
  list.for_each_value([&](ValueId id) { seen.push_back(id); });
  EXPECT_EQ(seen, (std::vector<ValueId>{1, 2, 1}));
  EXPECT_EQ(list.replace_value(1, 7), 2);
  EXPECT_EQ(list.get<OptionalTensorList>().ids, (std::vector<ValueId>{7, kNoValue, 2, 7}));
  Argument scalar(5);
  EXPECT_EQ(scalar.replace_value(5, 6), 0);  // ints are not value ids
}

TEST(Argument, PrintsLikeTorch) {
  EXPECT_EQ(print(Argument()), "None");
  EXPECT_EQ(print(Argument(1e-5)), "1e-05");
  EXPECT_EQ(print(Argument(2.0)), "2.0");
  EXPECT_EQ(print(Argument(-std::numeric_limits<double>::infinity())), "-inf");
  EXPECT_EQ(print(Argument(std::vector<int64_t>{1, 0})), "[1, 0]");
  EXPECT_EQ(print(Argument(std::vector<bool>{true, false})), "[True, False]");
  EXPECT_EQ(print(Argument(TensorList{{0, 3}})), "[%v0, %v3]");
  EXPECT_EQ(print(Argument(OptionalTensorList{{kNoValue, 3}})), "[None, %v3]");
  EXPECT_EQ(print(Argument(Scalar{int64_t{1}})), "1");
  EXPECT_EQ(print(Argument(Scalar{0.5})), "0.5");
  EXPECT_EQ(print(Argument(ScalarType::BFloat16)), "bf16");
  EXPECT_EQ(print(Argument(std::string("none"))), "\"none\"");
  EXPECT_EQ(print(Argument(Device{"cpu"})), "cpu");
}

}  // namespace
}  // namespace pteron::compiler::ir
