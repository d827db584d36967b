#include "rl/ppo/rank_group.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <torch/torch.h>

// USE_C10D_GLOO comes with LibTorch's compile definitions (Debian's is built with Gloo).
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "rl/ppo/torch_message.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::rl {
namespace {

constexpr std::string_view kTcp = "tcp://", kFile = "file://";

// A tensor over `data` (no copy). c10d takes non-const tensors, even for inputs.
template <typename T>
at::Tensor over(std::span<T> data, at::ScalarType type) {
  return torch::from_blob(const_cast<std::remove_const_t<T>*>(data.data()), {static_cast<std::int64_t>(data.size())},
                          torch::TensorOptions().dtype(type));
}

}  // namespace

struct RankGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  int rank = 0;

  // Waits for `work`, turning the transport's errors into one that names this rank.
  void wait(const c10::intrusive_ptr<c10d::Work>& work) const {
    try {
      work->wait();
    } catch (const std::exception& e) {
      throw std::runtime_error("rank " + std::to_string(rank) + ": a collective with the other ranks failed (" +
                               e.what() + ")");
    }
  }

  template <typename T>
  void all_gather(std::span<const T> mine, std::span<T> all, at::ScalarType type, int size) {
    if (all.size() != mine.size() * static_cast<std::size_t>(size)) {
      throw std::logic_error("RankGroup::all_gather: output is not world size x input");
    }
    std::vector<at::Tensor> inputs{over(mine, type)};
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int r = 0; r < size; ++r) outputs[0].push_back(over(all.subspan(r * mine.size(), mine.size()), type));
    wait(group->allgather(outputs, inputs));
  }

  template <typename T>
  void all_reduce_sum(std::span<T> values, at::ScalarType type) {
    std::vector<at::Tensor> tensors{over(values, type)};
    wait(group->allreduce(tensors));
  }
};

RankGroup::RankGroup(int rank, int size, std::unique_ptr<Impl> impl) : rank_(rank), size_(size), impl_(std::move(impl)) {}
RankGroup::~RankGroup() = default;

std::shared_ptr<RankGroup> RankGroup::single() { return std::shared_ptr<RankGroup>(new RankGroup(0, 1, nullptr)); }

Expected<std::shared_ptr<RankGroup>> RankGroup::connect(const RankGroupOptions& options) {
  const int size = options.world_size, rank = options.rank;
  if (size < 1) return Error{"--world-size: expected at least 1, got " + std::to_string(size)};
  if (rank < 0 || rank >= size) {
    return Error{"--rank: expected 0 to " + std::to_string(size - 1) + " for a world of " + std::to_string(size) +
                 ", got " + std::to_string(rank)};
  }
  if (!(options.timeout_s > 0) || options.timeout_s > 86400) {
    return Error{"--timeout: expected seconds in (0, 86400], got " + number_text(options.timeout_s)};
  }
  if (size == 1) return single();
  if (const auto scheme = options.store.find("://");
      scheme != std::string::npos && !options.store.starts_with(kTcp) && !options.store.starts_with(kFile)) {
    return Error{"--store " + options.store + ": unknown scheme '" + options.store.substr(0, scheme) +
                 "' (expected tcp://HOST:PORT, file://PATH or a path)"};
  }
  if (options.store.empty()) {
    return Error{"--store: a world of " + std::to_string(size) +
                 " ranks needs a store to meet at (tcp://HOST:PORT or file://PATH)"};
  }
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_s * 1000.0));
  auto impl = std::make_unique<Impl>();
  impl->rank = rank;
  try {
    const std::string& spec = options.store;
    if (spec.starts_with(kTcp)) {
      const std::string address = spec.substr(kTcp.size());
      const auto colon = address.rfind(':');
      int port = -1;
      if (colon != std::string::npos && colon > 0) {
        try {
          port = std::stoi(address.substr(colon + 1));
        } catch (const std::exception&) {
          port = -1;
        }
      }
      if (port <= 0 || port > 65535) return Error{"--store " + spec + ": expected tcp://HOST:PORT with a port 1-65535"};
      c10d::TCPStoreOptions tcp;
      tcp.port = static_cast<std::uint16_t>(port);
      tcp.isServer = rank == 0;
      tcp.numWorkers = static_cast<std::size_t>(size);
      tcp.timeout = timeout;
      impl->store = c10::make_intrusive<c10d::TCPStore>(address.substr(0, colon), tcp);
    } else {
      const std::string path = spec.starts_with(kFile) ? spec.substr(kFile.size()) : spec;
      if (const auto folder = std::filesystem::path(path).parent_path(); !folder.empty()) {
        std::filesystem::create_directories(folder);  // throws, naming the folder, when it cannot
      }
      impl->store = c10::make_intrusive<c10d::FileStore>(path, size);
      impl->store->setTimeout(timeout);
    }
    auto gloo = c10d::ProcessGroupGloo::Options::create(timeout);
    const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
    gloo->devices.push_back(interface != nullptr && *interface != '\0'
                                ? c10d::ProcessGroupGloo::createDeviceForInterface(interface)
                                : c10d::ProcessGroupGloo::createDefaultDevice());
    gloo->threads = 1;  // one collective at a time: PPO waits for each
    impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, rank, size, gloo);
  } catch (const std::exception& e) {
    return Error{"rank " + std::to_string(rank) + " of " + std::to_string(size) + ": could not meet the other ranks at " +
                 options.store + ": " + torch_message(e)};
  }
  return std::shared_ptr<RankGroup>(new RankGroup(rank, size, std::move(impl)));
}

void RankGroup::all_gather(std::span<const float> mine, std::span<float> all) {
  if (!impl_) return static_cast<void>(std::copy(mine.begin(), mine.end(), all.begin()));
  impl_->all_gather(mine, all, at::kFloat, size_);
}

void RankGroup::all_gather(std::span<const double> mine, std::span<double> all) {
  if (!impl_) return static_cast<void>(std::copy(mine.begin(), mine.end(), all.begin()));
  impl_->all_gather(mine, all, at::kDouble, size_);
}

void RankGroup::all_gather(std::span<const std::uint8_t> mine, std::span<std::uint8_t> all) {
  if (!impl_) return static_cast<void>(std::copy(mine.begin(), mine.end(), all.begin()));
  impl_->all_gather(mine, all, at::kByte, size_);
}

std::vector<std::string> RankGroup::all_gather(const std::string& mine) {
  if (!impl_) return {mine};
  const auto ranks = static_cast<std::size_t>(size_);
  const double length = static_cast<double>(mine.size());  // exact below 2^53 bytes
  std::vector<double> lengths(ranks);
  all_gather(std::span(&length, 1), std::span(lengths));
  const auto longest = static_cast<std::size_t>(*std::max_element(lengths.begin(), lengths.end()));
  std::vector<std::uint8_t> padded(longest, 0), all(longest * ranks);
  std::copy(mine.begin(), mine.end(), padded.begin());
  all_gather(std::span<const std::uint8_t>(padded), std::span(all));
  std::vector<std::string> result;
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto* begin = reinterpret_cast<const char*>(all.data() + r * longest);
    result.emplace_back(begin, static_cast<std::size_t>(lengths[r]));
  }
  return result;
}

void RankGroup::all_reduce_sum(std::span<float> values) {
  if (impl_) impl_->all_reduce_sum(values, at::kFloat);
}

void RankGroup::all_reduce_sum(std::span<double> values) {
  if (impl_) impl_->all_reduce_sum(values, at::kDouble);
}

bool RankGroup::all_ok(bool ok, int* failed_rank) {
  const std::uint8_t mine = ok ? 1 : 0;
  std::vector<std::uint8_t> all(static_cast<std::size_t>(size_));
  all_gather(std::span(&mine, 1), std::span(all));
  const auto failed = std::find(all.begin(), all.end(), std::uint8_t{0});
  if (failed_rank != nullptr) *failed_rank = failed == all.end() ? -1 : static_cast<int>(failed - all.begin());
  return failed == all.end();
}

Status check_same_on_every_rank(RankGroup& group, const std::string& digest, const std::string& what,
                                const std::string& purpose) {
  const auto digests = group.all_gather(digest);
  for (std::size_t r = 1; r < digests.size(); ++r) {
    if (digests[r] != digests[0]) {
      return Error{"rank " + std::to_string(r) + " was started with another " + what + " than rank 0; every rank must " +
                   purpose};
    }
  }
  return Ok{};
}

}  // namespace meshsim::rl
