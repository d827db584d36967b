#include "tools/runs/signal_cleanup.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <ctime>

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

// The handlers in place before ours (SIGINT, SIGTERM), which ours passes the signal on
// to once the files are gone: the default ends the process as it would have; a library's
// host keeps its own (Python's turns SIGINT into KeyboardInterrupt, also after an
// evaluation in meshsim.evaluate has registered files and finished).
std::array<struct sigaction, 2> previous{};
constexpr std::array<int, 2> kSignals{SIGINT, SIGTERM};

// Other threads keep creating files while the handler runs (a sweep's runs): `stopping`
// tells them not to start, and the handler waits for those in the middle of creating one
// (`creating`) before it removes the files, so none is created behind its back. The wait
// is bounded (1 s): the signal may have landed on a thread in the middle itself.
std::atomic<bool> stopping{false};
std::atomic<int> creating{0};

extern "C" void remove_files_and_pass_on(int signal_number, siginfo_t* info, void* context) {
  stopping.store(true);
  for (int waited_ms = 0; creating.load() > 0 && waited_ms < 1000; ++waited_ms) {
    const struct timespec millisecond {0, 1'000'000};
    ::nanosleep(&millisecond, nullptr);
  }
  for (std::size_t i = 0; i < kSlots; ++i) {
    if (slot_state[i].load() == kReady) ::unlink(slot_path[i].data());
  }
  const struct sigaction& before = previous[signal_number == SIGINT ? 0 : 1];
  if ((before.sa_flags & SA_SIGINFO) != 0) {
    before.sa_sigaction(signal_number, info, context);
  } else if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN) {
    before.sa_handler(signal_number);
  } else if (before.sa_handler == SIG_DFL) {
    // The default action ends the process once this handler returns (the signal is held
    // until then): `stopping` stays set, or other threads would create files meanwhile.
    ::sigaction(signal_number, &before, nullptr);
    std::raise(signal_number);
    return;
  }
  stopping.store(false);  // a host's handler (Python's) let the process go on
}

}  // namespace

int create_removed_on_signal(const std::string& path, const std::function<bool()>& create) {
  static const bool installed = [] {
    for (std::size_t k = 0; k < kSignals.size(); ++k) {
      ::sigaction(kSignals[k], nullptr, &previous[k]);
      // A signal ignored on entry (SIGINT for a background job) stays ignored.
      if ((previous[k].sa_flags & SA_SIGINFO) == 0 && previous[k].sa_handler == SIG_IGN) continue;
      struct sigaction ours {};
      ours.sa_sigaction = remove_files_and_pass_on;
      ours.sa_flags = SA_SIGINFO;
      sigemptyset(&ours.sa_mask);
      ::sigaction(kSignals[k], &ours, nullptr);
    }
    return true;
  }();
  (void)installed;
  creating.fetch_add(1);
  if (stopping.load()) {  // the process is being stopped: create nothing more
    creating.fetch_sub(1);
    return kNotCreated;
  }
  // Registered before it exists, so the handler removes it whenever the signal comes.
  int slot = -1;
  for (std::size_t i = 0; i < kSlots && path.size() < kPathBytes; ++i) {
    int expected = kFree;
    if (!slot_state[i].compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(slot_path[i].data(), path.c_str(), path.size() + 1);
    slot_state[i].store(kReady);
    slot = static_cast<int>(i);
    break;
  }
  const bool created = create();
  creating.fetch_sub(1);
  if (!created) {
    keep_on_signal(slot);
    return kNotCreated;
  }
  return slot;  // -1 when every slot was taken: the file is then left on a signal
}

void keep_on_signal(int slot) {
  if (slot >= 0) slot_state[static_cast<std::size_t>(slot)].store(kFree);
}

}  // namespace meshsim::cli
