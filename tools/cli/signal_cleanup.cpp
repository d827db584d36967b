#include "tools/cli/signal_cleanup.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>

namespace meshsim::cli {
namespace {

// The files, for the signal handler: fixed storage, since a handler may only touch what
// needs no allocation or lock. A slot is claimed (by one thread), filled, then marked
// ready; the handler reads ready slots only. Room for every file of the most runs a
// command writes at once (kMaxConcurrentRuns, a few files each) and then some: 32 slots
// left a 16-thread sweep's files behind. Untouched slots cost no memory (zero pages).
constexpr std::size_t kSlots = 8 * kMaxConcurrentRuns;
constexpr std::size_t kPathBytes = 4096;
enum SlotState : int { kFree, kFilling, kReady };
std::array<std::atomic<int>, kSlots> slot_state{};
std::array<std::array<char, kPathBytes>, kSlots> slot_path{};

extern "C" void remove_files_and_reraise(int signal_number) {
  for (std::size_t i = 0; i < kSlots; ++i) {
    if (slot_state[i].load() == kReady) ::unlink(slot_path[i].data());
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

int remove_on_signal(const std::string& path) {
  static const bool installed = [] {
    for (const int signal_number : {SIGINT, SIGTERM}) {
      // A signal ignored on entry (SIGINT for a background job) stays ignored.
      if (std::signal(signal_number, remove_files_and_reraise) == SIG_IGN) std::signal(signal_number, SIG_IGN);
    }
    return true;
  }();
  (void)installed;
  if (path.size() >= kPathBytes) return -1;
  for (std::size_t i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!slot_state[i].compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(slot_path[i].data(), path.c_str(), path.size() + 1);
    slot_state[i].store(kReady);
    return static_cast<int>(i);
  }
  return -1;  // more files than slots: this one is not cleaned up on a signal
}

void keep_on_signal(int slot) {
  if (slot >= 0) slot_state[static_cast<std::size_t>(slot)].store(kFree);
}

}  // namespace meshsim::cli
