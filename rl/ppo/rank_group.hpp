#pragma once

// No LibTorch here: the collectives take plain buffers, so the command line and tests
// that only launch training stay free of torch headers.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/expected.hpp"

namespace meshsim::rl {

struct RankGroupOptions {
  int world_size = 1;
  int rank = 0;
  // Where the ranks meet: "tcp://HOST:PORT" (rank 0 serves the store on PORT, the
  // others connect to HOST) or "file://PATH" / a plain PATH (a file every rank can reach:
  // one machine or a shared file system; removed once all ranks have met).
  std::string store;
  // How long a rank waits for the others, to meet and in each collective, before it
  // gives up with an error (a rank that died leaves the rest waiting this long).
  double timeout_s = 300.0;
};

// The ranks of a data-parallel training run and the collectives PPO needs between them,
// over LibTorch's c10d process group with the Gloo backend (CPU, TCP). A group of one
// rank needs no store and does everything in place. Every rank must make the same calls
// in the same order with buffers of the same sizes; the results are the same bits on
// every rank. Errors from the transport (a rank that died, a timeout) are thrown as
// std::runtime_error naming this rank.
class RankGroup {
 public:
  // Meets the other ranks (blocking until all have arrived or the timeout passes).
  // Gloo listens on the interface named by GLOO_SOCKET_IFNAME, as in PyTorch, else on
  // the address this host's name resolves to.
  static Expected<std::shared_ptr<RankGroup>> connect(const RankGroupOptions& options);
  static std::shared_ptr<RankGroup> single();
  ~RankGroup();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // `all` = every rank's `mine` (all of the same size) in rank order.
  void all_gather(std::span<const float> mine, std::span<float> all);
  void all_gather(std::span<const double> mine, std::span<double> all);
  void all_gather(std::span<const std::uint8_t> mine, std::span<std::uint8_t> all);
  // Byte strings of any length, in rank order (checkpoint state).
  std::vector<std::string> all_gather(const std::string& mine);
  // Element-wise sums over the ranks, in place.
  void all_reduce_sum(std::span<float> values);
  void all_reduce_sum(std::span<double> values);
  // True on every rank when `ok` on every rank: lets a rank that failed on its own
  // (a folder it refused, a file it could not read) stop the others instead of leaving
  // them waiting for it. The first failing rank, or -1, goes to `failed_rank`.
  bool all_ok(bool ok, int* failed_rank = nullptr);

 private:
  struct Impl;
  RankGroup(int rank, int size, std::unique_ptr<Impl> impl);
  int rank_ = 0, size_ = 1;
  std::unique_ptr<Impl> impl_;  // null for a single rank
};

// Ok when every rank of `group` passed the same `digest` (of what must agree for the
// ranks' work to be one); else an error naming the first rank that differs, as "rank R
// was started with another WHAT than rank 0; every rank must PURPOSE".
Status check_same_on_every_rank(RankGroup& group, const std::string& digest, const std::string& what,
                                const std::string& purpose);

}  // namespace meshsim::rl
