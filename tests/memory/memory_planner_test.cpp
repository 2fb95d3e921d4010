// The memory planner never overlaps live tensors, stays close to the lower bound, fills regions
// in order, and refuses (with numbers) what does not fit.
#include "compiler/memory/memory_planner.h"

#include <gtest/gtest.h>

#include <random>

namespace pteron::compiler {
namespace {

std::vector<TensorLifetime> random_chain(std::mt19937& rng, int n) {
  // Like a network: each tensor is made at step i and read a few steps later.
  std::vector<TensorLifetime> t;
  std::uniform_int_distribution<int> span(0, 4);
  std::uniform_int_distribution<int> size(1, 100000);
  for (int i = 0; i < n; ++i) t.push_back({static_cast<uint64_t>(size(rng)), i, i + span(rng)});
  return t;
}

TEST(MemoryPlanner, RandomGraphsNeverOverlapAndStayTight) {
  std::mt19937 rng(7);
  double worst = 1.0;
  for (int trial = 0; trial < 300; ++trial) {
    auto tensors = random_chain(rng, 5 + trial % 60);
    MemoryPlan plan = plan_memory(tensors, {{"host", 1, 0}}, 16);
    ASSERT_TRUE(plan.fits);
    ASSERT_EQ(check_memory_plan(tensors, plan), "") << "trial " << trial;
    ASSERT_GE(plan.total_arena_bytes, plan.peak_live_bytes);
    worst = std::min(worst, plan.efficiency());
  }
  EXPECT_GT(worst, 0.75);  // greedy-by-size stays within a third of the bound on chains
}

TEST(MemoryPlanner, ReusesMemoryOfDeadTensors) {
  // a -> b -> c: a and c can share bytes.
  std::vector<TensorLifetime> t = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}};
  MemoryPlan plan = plan_memory(t, {{"host", 1, 0}}, 16);
  EXPECT_EQ(plan.total_arena_bytes, 2016u);
  EXPECT_EQ(plan.placements[0].offset, plan.placements[2].offset);
  EXPECT_EQ(check_memory_plan(t, plan), "");
}

TEST(MemoryPlanner, OffsetsAreAligned) {
  std::vector<TensorLifetime> t = {{3, 0, 5}, {5, 0, 5}, {7, 0, 5}};
  MemoryPlan plan = plan_memory(t, {{"host", 1, 0}}, 64);
  for (const auto& p : plan.placements) EXPECT_EQ(p.offset % 64, 0u);
}

TEST(MemoryPlanner, CheckerCatchesOverlap) {
  std::vector<TensorLifetime> t = {{100, 0, 2}, {100, 1, 3}};
  MemoryPlan plan = plan_memory(t, {{"host", 1, 0}}, 16);
  plan.placements[1].offset = 50;  // corrupt it
  EXPECT_NE(check_memory_plan(t, plan).find("overlap"), std::string::npos);
}

TEST(MemoryPlanner, FillsFastRegionFirstThenSpills) {
  std::vector<TensorLifetime> t = {{600, 0, 1}, {600, 0, 1}, {100, 0, 1}};
  MemoryPlan plan = plan_memory(t, {{"dtcm", 1, 1000}, {"sram", 2, 0}}, 16);
  ASSERT_TRUE(plan.fits);
  EXPECT_EQ(plan.placements[0].mem_id, 1u);
  EXPECT_EQ(plan.placements[1].mem_id, 2u);
  EXPECT_EQ(plan.placements[2].mem_id, 1u);
  EXPECT_EQ(check_memory_plan(t, plan), "");
}

TEST(MemoryPlanner, RefusesOverBudgetWithNumbers) {
  std::vector<TensorLifetime> t = {{60000, 0, 1}, {50000, 0, 1}};
  MemoryPlan plan = plan_memory(t, {{"sram", 1, 90 * 1024}}, 16);
  EXPECT_FALSE(plan.fits);
  EXPECT_NE(plan.why_not.find("110000"), std::string::npos) << plan.why_not;
  EXPECT_NE(plan.why_not.find("92160"), std::string::npos) << plan.why_not;
}

// An in-place pair: tensor 1 is made at step 1 from tensor 0, which dies there, and may start
// 300 bytes before it. A chain of three such tensors takes one tensor's bytes plus two lags
// instead of two tensors'; the checker accepts that overlap and no other.
TEST(MemoryPlanner, InPlaceOutputsStartTheirLagBeforeTheirInput) {
  const std::vector<TensorLifetime> t = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}};
  const std::vector<InPlacePair> pairs = {{1, 0, 300}, {2, 1, 300}};
  MemoryPlan plan = plan_memory(t, {{"sram", 1, 0}}, 16, pairs);
  ASSERT_TRUE(plan.fits);
  EXPECT_EQ(check_memory_plan(t, plan, pairs), "");
  // 300 rounds up to 304 (16-byte offsets): the output is at or below input - lag.
  EXPECT_EQ(plan.placements[0].offset, plan.placements[1].offset + 304);
  EXPECT_EQ(plan.placements[1].offset, plan.placements[2].offset + 304);
  EXPECT_EQ(plan.total_arena_bytes, 1616u);  // 2 x 304 + 1000, rounded up to 16
  // Without the pairs the same tensors need two apart, and the checker calls the overlap one.
  EXPECT_EQ(plan_memory(t, {{"sram", 1, 0}}, 16).total_arena_bytes, 2016u);
  EXPECT_NE(check_memory_plan(t, plan).find("overlap"), std::string::npos);
  // An output closer to its input than its lag is refused.
  MemoryPlan close = plan;
  close.placements[1].offset += 16;
  EXPECT_NE(check_memory_plan(t, close, pairs).find("overlap"), std::string::npos);
}

// A pair whose overlap would cost more than keeping it apart is planned apart: the planner tries
// every order with and without the pairs and keeps the smallest plan.
TEST(MemoryPlanner, InPlacePairsNeverMakeAPlanLarger) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    auto tensors = random_chain(rng, 5 + trial % 40);
    std::vector<InPlacePair> pairs;
    for (size_t i = 0; i + 1 < tensors.size(); ++i) {
      if (tensors[i].last == tensors[i + 1].first && rng() % 2)
        pairs.push_back({i + 1, i, rng() % 20000});
    }
    const MemoryPlan with = plan_memory(tensors, {{"host", 1, 0}}, 16, pairs);
    const MemoryPlan without = plan_memory(tensors, {{"host", 1, 0}}, 16);
    ASSERT_EQ(check_memory_plan(tensors, with, pairs), "") << "trial " << trial;
    EXPECT_LE(with.total_arena_bytes, without.total_arena_bytes) << "trial " << trial;
  }
}

}  // namespace
}  // namespace pteron::compiler
