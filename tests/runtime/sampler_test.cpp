// The LLM sampler (runtime/llm/sampler.h): greedy picks, the top-k and top-p candidate sets,
// the distribution it draws from, and the seeded RNG's reproducibility.
#include "runtime/llm/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

namespace pteron::llm {
namespace {

Span<const float> span(const std::vector<float>& v) { return {v.data(), v.size()}; }

int64_t draw(Sampler& s, const std::vector<float>& logits) {
  Result<int64_t> r = s.sample(span(logits));
  EXPECT_TRUE(r.ok()) << last_error_message();
  return r.ok() ? r.get() : -1;
}

TEST(SplitMix64, MatchesTheReferenceSequence) {
  // First outputs of the reference splitmix64.c seeded with 0 and with 1234567.
  SplitMix64 zero(0);
  EXPECT_EQ(zero.next(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(zero.next(), 0x6e789e6aa1b965f4ull);
  SplitMix64 other(1234567);
  EXPECT_EQ(other.next(), 6457827717110365317ull);
  EXPECT_EQ(other.next(), 3203168211198807973ull);
  for (int i = 0; i < 1000; ++i) {
    const double u = zero.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Sampler, GreedyIsTheArgmaxWithTiesToTheLowerIndex) {
  Sampler s(SamplerConfig{});
  EXPECT_EQ(draw(s, {0.1f, 3.0f, -2.0f, 2.9f}), 1);
  EXPECT_EQ(draw(s, {1.0f, 5.0f, 5.0f, 5.0f}), 1);
  EXPECT_EQ(draw(s, {NAN, -1.0f, NAN}), 1);  // NaN never wins
  EXPECT_EQ(draw(s, {-INFINITY, -INFINITY}), 0);
  Result<int64_t> all_nan = s.sample(span({NAN, NAN}));
  ASSERT_FALSE(all_nan.ok());
  EXPECT_STREQ(last_error_message(), "the logits of all 2 tokens are NaN");
  EXPECT_FALSE(s.sample(Span<const float>()).ok());
}

TEST(Sampler, TopKOneAndATinyTopPAreGreedyAtAnyTemperature) {
  const std::vector<float> logits = {0.5f, 0.2f, 0.9f, 0.85f, -1.0f};
  Sampler top1(SamplerConfig{5.0f, 1, 1.0f, 7});
  Sampler nucleus(SamplerConfig{5.0f, 0, 1e-6f, 7});
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(draw(top1, logits), 2);
    EXPECT_EQ(draw(nucleus, logits), 2);
  }
}

TEST(Sampler, DrawsStayInsideTheTopKAndTopPSets) {
  std::vector<float> logits(50);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(static_cast<float>(i) * 1.7f);
  // The 5 largest logits.
  std::vector<int> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  const std::set<int64_t> top5(order.begin(), order.begin() + 5);
  Sampler s(SamplerConfig{2.0f, 5, 1.0f, 11});
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const int64_t t = draw(s, logits);
    ASSERT_TRUE(top5.count(t)) << "token " << t << " is outside the top 5";
    seen.insert(t);
  }
  EXPECT_EQ(seen, top5);  // at temperature 2 every one of the five is drawn

  // top-p 0.5 over probabilities 0.4, 0.3, 0.2, 0.1: the first two reach it.
  const std::vector<float> probs = {std::log(0.1f), std::log(0.4f), std::log(0.2f), std::log(0.3f)};
  Sampler p(SamplerConfig{1.0f, 0, 0.5f, 3});
  std::set<int64_t> nucleus;
  for (int i = 0; i < 1000; ++i) nucleus.insert(draw(p, probs));
  EXPECT_EQ(nucleus, (std::set<int64_t>{1, 3}));
}

TEST(Sampler, FrequenciesFollowTheSoftmax) {
  // softmax(log p / T): at T = 1 the frequencies are p; at T = 0.5 they are p^2 renormalised.
  const std::vector<float> logits = {std::log(0.1f), std::log(0.2f), std::log(0.7f)};
  const int n = 40000;
  for (float t : {1.0f, 0.5f}) {
    Sampler s(SamplerConfig{t, 0, 1.0f, 42});
    std::vector<int> count(3);
    for (int i = 0; i < n; ++i) ++count[draw(s, logits)];
    double norm = 0;
    for (double p : {0.1, 0.2, 0.7}) norm += std::pow(p, 1.0 / t);
    const double want[3] = {std::pow(0.1, 1.0 / t) / norm, std::pow(0.2, 1.0 / t) / norm,
                            std::pow(0.7, 1.0 / t) / norm};
    for (int k = 0; k < 3; ++k) {
      // 5 standard deviations of a binomial proportion at n = 40000 is under 0.012.
      EXPECT_NEAR(static_cast<double>(count[k]) / n, want[k], 0.012) << "T " << t << " token " << k;
    }
  }
}

TEST(Sampler, OneSeedOneSequence) {
  std::vector<float> logits(64);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::cos(static_cast<float>(i));
  auto run = [&](uint64_t seed) {
    Sampler s(SamplerConfig{0.8f, 20, 0.9f, seed});
    std::vector<int64_t> out;
    for (int i = 0; i < 64; ++i) out.push_back(draw(s, logits));
    return out;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

TEST(Sampler, PositiveInfinityDominates) {
  Sampler s(SamplerConfig{1.0f, 0, 1.0f, 9});
  std::set<int64_t> seen;
  for (int i = 0; i < 200; ++i) seen.insert(draw(s, {1.0f, INFINITY, 2.0f, INFINITY}));
  EXPECT_EQ(seen, (std::set<int64_t>{1, 3}));
}

TEST(Sampler, BadSettingsAreOneLineErrors) {
  EXPECT_EQ(check_sampler_config(SamplerConfig{}), Error::Ok);
  EXPECT_EQ(check_sampler_config(SamplerConfig{-1.0f, 0, 1.0f, 0}), Error::InvalidArgument);
  EXPECT_STREQ(last_error_message(), "temperature -1 is not a number >= 0 (0: greedy)");
  EXPECT_EQ(check_sampler_config(SamplerConfig{NAN, 0, 1.0f, 0}), Error::InvalidArgument);
  EXPECT_EQ(check_sampler_config(SamplerConfig{1.0f, -3, 1.0f, 0}), Error::InvalidArgument);
  EXPECT_STREQ(last_error_message(), "top-k -3 is negative (0: every token)");
  EXPECT_EQ(check_sampler_config(SamplerConfig{1.0f, 0, 0.0f, 0}), Error::InvalidArgument);
  EXPECT_EQ(check_sampler_config(SamplerConfig{1.0f, 0, 1.5f, 0}), Error::InvalidArgument);
  EXPECT_STREQ(last_error_message(), "top-p 1.5 is outside (0, 1] (1: every token)");
}

}  // namespace
}  // namespace pteron::llm
