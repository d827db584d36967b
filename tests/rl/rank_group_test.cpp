#include "rl/ppo/rank_group.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "rl/ppo/ppo_loss.hpp"
#include "tests/local_http.hpp"
#include "tests/rl/ranks_on_threads.hpp"

namespace meshsim::rl {
namespace {

TEST(RankGroupTest, EveryRankGetsTheSameGatheredAndSummedValues) {
  constexpr int kWorld = 3;
  std::vector<std::vector<double>> sums(kWorld);
  std::vector<std::vector<std::string>> strings(kWorld);
  std::vector<int> failed(kWorld);
  on_ranks(kWorld, "collectives", [&](int rank, const std::shared_ptr<RankGroup>& group) {
    EXPECT_EQ(group->size(), kWorld);
    EXPECT_EQ(group->rank(), rank);
    const std::vector<float> mine{float(rank), float(10 * rank)};
    std::vector<float> all(2 * kWorld);
    group->all_gather(mine, all);
    EXPECT_EQ(all, (std::vector<float>{0, 0, 1, 10, 2, 20}));
    const std::vector<std::uint8_t> byte{static_cast<std::uint8_t>(rank + 1)};
    std::vector<std::uint8_t> bytes(kWorld);
    group->all_gather(byte, bytes);
    EXPECT_EQ(bytes, (std::vector<std::uint8_t>{1, 2, 3}));
    std::vector<double> values{0.1 * rank, 1.0, 1e16 + rank};
    group->all_reduce_sum(values);
    sums[static_cast<std::size_t>(rank)] = values;
    strings[static_cast<std::size_t>(rank)] = group->all_gather(std::string(static_cast<std::size_t>(rank) * 3, 'a' + char(rank)));
    EXPECT_FALSE(group->all_ok(rank != 1, &failed[static_cast<std::size_t>(rank)]));
    EXPECT_TRUE(group->all_ok(true));
  });
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_EQ(sums[static_cast<std::size_t>(r)], sums[0]);  // the same bits everywhere
    EXPECT_EQ(strings[static_cast<std::size_t>(r)], (std::vector<std::string>{"", "bbb", "cccccc"}));
    EXPECT_EQ(failed[static_cast<std::size_t>(r)], 1);
  }
  EXPECT_NEAR(sums[0][0], 0.3, 1e-12);
  EXPECT_EQ(sums[0][1], 3.0);
}

TEST(RankGroupTest, RanksMeetOverATcpStore) {
  const int port = testing::free_port();
  std::vector<std::thread> threads;
  std::vector<double> totals(2);
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      auto group = RankGroup::connect(
          {.world_size = 2, .rank = rank, .store = "tcp://127.0.0.1:" + std::to_string(port), .timeout_s = 60});
      ASSERT_TRUE(group) << group.error().message;
      std::vector<double> value{rank + 1.0};
      (*group)->all_reduce_sum(value);
      totals[static_cast<std::size_t>(rank)] = value[0];
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(totals, (std::vector<double>{3.0, 3.0}));
}

TEST(RankGroupTest, BadWorldsAreRefusedNamingTheOption) {
  const auto message = [](int world, int rank, const std::string& store) {
    auto group = RankGroup::connect({.world_size = world, .rank = rank, .store = store, .timeout_s = 5});
    return group ? std::string() : group.error().message;
  };
  EXPECT_NE(message(0, 0, "").find("--world-size"), std::string::npos);
  EXPECT_NE(message(2, 2, "x").find("--rank: expected 0 to 1"), std::string::npos);
  EXPECT_NE(message(2, 0, "").find("--store"), std::string::npos);
  EXPECT_NE(message(2, 1, "tcp://host").find("tcp://HOST:PORT"), std::string::npos);
  auto alone = RankGroup::connect(RankGroupOptions{});  // one rank: no store needed
  ASSERT_TRUE(alone);
  std::vector<double> v{2.0};
  (*alone)->all_reduce_sum(v);
  EXPECT_EQ(v[0], 2.0);
}

TEST(RankGroupTest, AdvantagesAreNormalisedOverTheWholeMinibatchAcrossRanks) {
  // One minibatch {1, 2, 3, 10} split 1 + 0 + 3 over three ranks: as in one process.
  const torch::Tensor whole = normalize_advantages(
      torch::tensor({1.f, 2.f, 3.f, 10.f}), [](std::span<const double> mine) { return std::vector<double>(mine.begin(), mine.end()); });
  std::vector<torch::Tensor> shares(3);
  on_ranks(3, "advantages", [&](int rank, const std::shared_ptr<RankGroup>& group) {
    const torch::Tensor mine = rank == 0 ? torch::tensor({1.f}) : rank == 1 ? torch::zeros({0}) : torch::tensor({2.f, 3.f, 10.f});
    shares[static_cast<std::size_t>(rank)] = normalize_advantages(mine, [&](std::span<const double> values) {
      std::vector<double> all(values.size() * 3);
      group->all_gather(values, std::span(all));
      return all;
    });
  });
  EXPECT_EQ(shares[1].numel(), 0);
  EXPECT_TRUE(torch::allclose(torch::cat({shares[0], shares[2]}), whole, 1e-6, 1e-6));
}

}  // namespace
}  // namespace meshsim::rl
