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
  workers_.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  round_.fetch_add(1, std::memory_order_release);
  round_.notify_all();
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
    busy_workers_.store(static_cast<unsigned>(workers_.size()), std::memory_order_relaxed);
    round_.fetch_add(1, std::memory_order_release);
    round_.notify_all();
    run_items();
    // Every worker must have left the round before the next one reuses body_ and next_.
    for (unsigned busy = busy_workers_.load(std::memory_order_acquire); busy != 0;
         busy = busy_workers_.load(std::memory_order_acquire)) {
      wait_change(busy_workers_, busy);
    }
  }
  body_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
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
  std::uint64_t seen = 0;
  for (;;) {
    seen = wait_change(round_, seen);
    if (stop_.load(std::memory_order_acquire)) return;
    run_items();
    if (busy_workers_.fetch_sub(1, std::memory_order_acq_rel) == 1) busy_workers_.notify_one();
  }
}

}  // namespace meshsim::engine
