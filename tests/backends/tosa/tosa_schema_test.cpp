// The TOSA schema header (generated from tosa-tools' tosa.fbs by Debian's flatc) builds and
// writes a graph that its own verifier accepts, with the "TOSA" identifier at bytes 4..7.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/tosa/schema/tosa_generated.h"

namespace {

TEST(TosaSchema, BuildsAndVerifiesAnIdentityGraph) {
  flatbuffers::FlatBufferBuilder fbb;
  auto shape = fbb.CreateVector(std::vector<int32_t>{1, 4});
  auto in = tosa::CreateTosaTensor(fbb, fbb.CreateString("x"), shape, tosa::DType::INT8);
  auto out = tosa::CreateTosaTensor(fbb, fbb.CreateString("y"), shape, tosa::DType::INT8);
  auto op =
      tosa::CreateTosaOperator(fbb, tosa::Op::IDENTITY, tosa::Attribute::IdentityAttribute,
                               tosa::CreateIdentityAttribute(fbb).Union(),
                               fbb.CreateVectorOfStrings({"x"}), fbb.CreateVectorOfStrings({"y"}));
  auto block = tosa::CreateTosaBasicBlock(
      fbb, fbb.CreateString("main"), fbb.CreateVector(std::vector{op}),
      fbb.CreateVector(std::vector{in, out}), fbb.CreateVectorOfStrings({"x"}),
      fbb.CreateVectorOfStrings({"y"}));
  auto region =
      tosa::CreateTosaRegion(fbb, fbb.CreateString("main"), fbb.CreateVector(std::vector{block}));
  auto version = tosa::CreateVersion(fbb, 1, 0, 0, false);
  tosa::FinishTosaGraphBuffer(
      fbb, tosa::CreateTosaGraph(fbb, version, fbb.CreateVector(std::vector{region})));

  flatbuffers::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
  ASSERT_TRUE(tosa::VerifyTosaGraphBuffer(verifier));
  EXPECT_EQ(std::memcmp(fbb.GetBufferPointer() + 4, "TOSA", 4), 0);
  const tosa::TosaGraph* graph = tosa::GetTosaGraph(fbb.GetBufferPointer());
  EXPECT_EQ(graph->version()->_major(), 1);
  const auto* op_read = graph->regions()->Get(0)->blocks()->Get(0)->operators()->Get(0);
  EXPECT_EQ(op_read->op(), tosa::Op::IDENTITY);
  EXPECT_STREQ(op_read->inputs()->Get(0)->c_str(), "x");
}

}  // namespace
