#include "scheduler/bucket_treap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

namespace meshsim::scheduler {
namespace {

// The prefix aggregate a sorted map of the same buckets gives, field by field.
BucketTreap::Aggregate reference_prefix(const std::map<double, BucketTreap::Entry>& buckets, double below) {
  std::vector<BucketTreap::Entry> in;
  for (auto it = buckets.begin(); it != buckets.lower_bound(below); ++it) in.push_back(it->second);
  BucketTreap::Aggregate agg;
  if (in.empty()) return agg;
  const auto by = [](auto field) { return [field](const auto& a, const auto& b) { return a.*field < b.*field; }; };
  agg.min_priority = in.front().priority;  // the map is sorted by priority
  agg.max_priority = in.back().priority;
  agg.latest_deadline = std::max_element(in.begin(), in.end(), by(&BucketTreap::Entry::latest_deadline))->latest_deadline;
  agg.lead = std::max_element(in.begin(), in.end(), by(&BucketTreap::Entry::lead))->lead;
  agg.min_seq = std::min_element(in.begin(), in.end(), by(&BucketTreap::Entry::min_seq))->min_seq;
  for (const auto& entry : in) agg.tasks += entry.tasks;
  return agg;
}

// Random upserts (new buckets and changes to stored ones) and erases over few or many
// priorities: every prefix aggregate, and the cover of every prefix, is what a sorted
// map of the same buckets gives. (A bucket changed in place must pull its ancestors
// again; one that missed them kept a stale count or bound.)
TEST(BucketTreapTest, PrefixAggregatesMatchASortedMapOverRandomUpdates) {
  std::mt19937_64 rng(20261202);
  for (int round = 0; round < 100; ++round) {
    const int priorities = 1 + static_cast<int>(rng() % (round % 2 == 0 ? 4 : 60));
    BucketTreap tree;
    std::map<double, BucketTreap::Entry> twin;
    for (int step = 0; step < 300; ++step) {
      const double priority = static_cast<double>(rng() % static_cast<std::uint64_t>(priorities)) / 2.0;
      if (rng() % 4 == 0) {
        tree.erase(priority);
        twin.erase(priority);
      } else {
        const bool ahead = rng() % 3 != 0;
        const double deadline = static_cast<double>(rng() % 1000);
        BucketTreap::Entry entry{priority, ahead ? deadline : BucketTreap::kNone,
                                 ahead ? 0.1 * deadline - priority : BucketTreap::kNone, 1 + rng() % 10'000,
                                 static_cast<std::uint32_t>(1 + rng() % 50)};
        tree.upsert(entry);
        twin[priority] = entry;
      }
      const double below = static_cast<double>(rng() % static_cast<std::uint64_t>(priorities + 1)) / 2.0 + 0.25;
      const auto got = tree.aggregate_prefix([&](double p) { return p < below; });
      const auto want = reference_prefix(twin, below);
      const auto where = "round " + std::to_string(round) + " step " + std::to_string(step);
      ASSERT_EQ(got.tasks, want.tasks) << where;
      if (want.tasks == 0) continue;
      EXPECT_EQ(got.min_priority, want.min_priority) << where;
      EXPECT_EQ(got.max_priority, want.max_priority) << where;
      EXPECT_EQ(got.latest_deadline, want.latest_deadline) << where;
      EXPECT_EQ(got.lead, want.lead) << where;
      EXPECT_EQ(got.min_seq, want.min_seq) << where;
      std::uint32_t covered = 0;
      tree.cover_prefix([&](double p) { return p < below; },
                        [&](std::uint32_t n) { covered += tree.aggregate(n).tasks; },
                        [&](std::uint32_t n) { covered += tree.entry(n).tasks; });
      ASSERT_EQ(covered, want.tasks) << where;
    }
  }
}

}  // namespace
}  // namespace meshsim::scheduler
