#include "sim/engine/thread_pool.hpp"

#include <algorithm>
#include <utility>

namespace meshsim::engine {
namespace {

// How long an idle thread polls before it sleeps: about the time a vector of light
// environments takes between two rounds, so back-to-back rounds never pay a wake-up.
constexpr int kSpins = 4000;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits until `value` differs from `old`: spins first, then sleeps on the atomic.
template <typename T>
T wait_change(const std::atomic<T>& value, T old) {
  for (int i = 0; i < kSpins; ++i) {
    const T now = value.load(std::memory_order_acquire);
    if (now != old) return now;
    cpu_relax();
  }
  value.wait(old, std::memory_order_acquire);
  return value.load(std::memory_order_acquire);
}

}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, kInsideMask);  // the state word counts them
  workers_.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  state_.fetch_add(std::uint32_t{1} << kRoundShift, std::memory_order_release);
  state_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::for_each(std::size_t n, const std::function<void(std::size_t)>& body) {
  if (n == 0) return;
  error_ = nullptr;
  body_ = &body;
  count_ = n;
  next_.store(0, std::memory_order_relaxed);
  if (workers_.empty() || n == 1) {
    run_items();
  } else {
    // A new round number, open, nobody inside (the last round ended with nobody inside).
    const std::uint32_t round = (state_.load(std::memory_order_relaxed) >> kRoundShift) + 1;
    state_.store(round << kRoundShift, std::memory_order_release);
    state_.notify_all();
    run_items();
    // Every index is taken: close the round, then wait for those inside to finish theirs
    // (before the next round reuses body_ and next_).
    for (std::uint32_t now = state_.fetch_or(kClosed, std::memory_order_acq_rel) | kClosed;
         (now & kInsideMask) != 0; now = state_.load(std::memory_order_acquire)) {
      wait_change(state_, now);
    }
  }
  body_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

bool ThreadPool::enter(std::uint32_t round) {
  std::uint32_t now = state_.load(std::memory_order_acquire);
  while ((now >> kRoundShift) == round && (now & kClosed) == 0) {
    if (state_.compare_exchange_weak(now, now + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
  }
  return false;
}

void ThreadPool::run_items() {
  for (std::size_t i = next_.fetch_add(1, std::memory_order_relaxed); i < count_;
       i = next_.fetch_add(1, std::memory_order_relaxed)) {
    try {
      (*body_)(i);
    } catch (...) {
      const std::lock_guard lock(error_mutex_);
      if (!error_ || i < error_index_) {
        error_ = std::current_exception();
        error_index_ = i;
      }
    }
  }
}

void ThreadPool::worker_loop() {
  // The state the pool began with, not a load: a thread that starts late must still see
  // the rounds (and the stop) that came before it.
  std::uint32_t seen = kClosed;
  for (;;) {
    seen = wait_change(state_, seen);
    if (stop_.load(std::memory_order_acquire)) return;
    const std::uint32_t round = seen >> kRoundShift;
    if (!enter(round)) continue;  // closed before this thread came: nothing to do
    run_items();
    // The last one out of a closed round wakes the caller.
    seen = state_.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if ((seen & kClosed) != 0 && (seen & kInsideMask) == 0) state_.notify_all();
  }
}

}  // namespace meshsim::engine
