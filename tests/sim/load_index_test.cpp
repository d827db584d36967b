#include "sim/cluster/load_index.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

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

}  // namespace
}  // namespace meshsim::cluster
