#include "sim/cluster/load_index.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/engine/rng.hpp"

namespace meshsim::cluster {
namespace {

TEST(LoadIndexTest, LeastIsTheSmallestLoadWithTiesToTheLowestMember) {
  LoadIndex index;
  index.add(0, 5);
  index.add(1, 3);
  index.add(2, 3);
  EXPECT_EQ(index.least(), 1u);
  index.update(1, 9);
  EXPECT_EQ(index.least(), 2u);
  index.add(2, 10);  // adding again updates
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.least(), 0u);
}

TEST(LoadIndexTest, RemovedMembersAreNeverChosenAndIgnoreUpdates) {
  LoadIndex index;
  index.add(0, 1);
  index.add(1, 2);
  index.remove(0);
  EXPECT_FALSE(index.contains(0));
  EXPECT_EQ(index.least(), 1u);
  index.update(0, 0);  // a removed member stays out
  EXPECT_EQ(index.least(), 1u);
  EXPECT_EQ(index.size(), 1u);
  index.remove(0);  // twice: no-op
  index.add(0, 0);  // and back
  EXPECT_EQ(index.least(), 0u);
}

TEST(LoadIndexTest, AnEmptyIndexIsAnErrorNotUndefinedBehaviour) {
  LoadIndex index;
  EXPECT_THROW((void)index.least(), std::logic_error);
  index.add(3, 1);
  index.remove(3);
  EXPECT_TRUE(index.empty());
  EXPECT_THROW((void)index.least(), std::logic_error);
}

// The heap against a slow twin (an ordered set of (load, member), the structure it
// replaced) over random adds, updates, removes and re-adds on pools of 1 to 40 members,
// loads drawn from a few values so that ties are common: after every call both agree on
// the least member, the size and every member's load.
TEST(LoadIndexTest, MatchesAnOrderedSetOverRandomCalls) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    engine::Rng rng(seed);
    const auto members = static_cast<std::uint32_t>(1 + rng.uniform_int(40));
    const auto distinct = static_cast<std::int64_t>(1 + rng.uniform_int(6));
    LoadIndex index;
    std::set<std::pair<std::int64_t, std::uint32_t>> twin;
    std::vector<std::int64_t> load(members, 0);
    std::vector<bool> in(members, false);
    for (int call = 0; call < 400; ++call) {
      const auto m = static_cast<std::uint32_t>(rng.uniform_int(members));
      const auto l = static_cast<std::int64_t>(rng.uniform_int(static_cast<std::uint64_t>(distinct))) - 2;
      switch (rng.uniform_int(4)) {
        case 0:  // add (or update through add)
          if (in[m]) twin.erase({load[m], m});
          index.add(m, l);
          twin.emplace(l, m);
          load[m] = l;
          in[m] = true;
          break;
        case 1:
          index.remove(m);
          if (in[m]) twin.erase({load[m], m});
          in[m] = false;
          break;
        default:  // updates are the common call
          index.update(m, l);
          if (in[m]) {
            twin.erase({load[m], m});
            twin.emplace(l, m);
            load[m] = l;
          }
      }
      ASSERT_EQ(index.size(), twin.size()) << "seed " << seed << " call " << call;
      if (!twin.empty()) {
        ASSERT_EQ(index.least(), twin.begin()->second) << "seed " << seed << " call " << call;
      }
      for (std::uint32_t k = 0; k < members; ++k) {
        ASSERT_EQ(index.contains(k), in[k]) << "seed " << seed << " call " << call;
        if (in[k]) {
          ASSERT_EQ(index.load_of(k), load[k]) << "seed " << seed << " call " << call;
        }
      }
    }
  }
}

}  // namespace
}  // namespace meshsim::cluster
