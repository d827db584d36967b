#pragma once

// Data-parallel ranks in one test process: one thread per rank, meeting through a file
// store (the same c10d/Gloo path as separate processes, on the loopback interface).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rl/ppo/rank_group.hpp"

namespace meshsim::rl {

// Runs body(rank, group) for every rank of a world of `world`, concurrently; `name` keeps
// tests' stores apart.
inline void on_ranks(int world, const std::string& name,
                     const std::function<void(int, const std::shared_ptr<RankGroup>&)>& body) {
  const std::filesystem::path store = std::filesystem::path(::testing::TempDir()) / ("store-" + name);
  std::filesystem::remove(store);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      auto group = RankGroup::connect({.world_size = world, .rank = rank, .store = "file://" + store.string(),
                                       .timeout_s = 60});
      ASSERT_TRUE(group) << group.error().message;
      body(rank, *group);
    });
  }
  for (auto& thread : threads) thread.join();
}

}  // namespace meshsim::rl
