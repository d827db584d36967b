#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace meshsim::engine {

// A fixed set of threads that run `for_each(n, body)`: body(0) .. body(n - 1), each index
// exactly once, spread over the threads, the caller being one of them; for_each returns
// when every index is done. Work is handed out one index at a time (fast items do not
// wait for slow ones), so which thread runs an index depends on timing: bodies must only
// touch state of their own index for results to be deterministic.
//
// Built for many short rounds (a vector of environments stepped every few microseconds):
// idle threads spin briefly before they sleep, so a round costs no system call when the
// next one comes soon. An exception thrown by a body is rethrown by for_each (the one of
// the lowest index, so the error reported does not depend on timing) after every other
// index has run.
class ThreadPool {
 public:
  // `threads` counts the caller: 1 runs everything inline and starts no thread; 0 means
  // one per hardware thread.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }
  void for_each(std::size_t n, const std::function<void(std::size_t)>& body);

 private:
  void worker_loop();
  void run_items();

  std::vector<std::thread> workers_;
  // The round: its body and size are written before `round_` is bumped (release) and read
  // after it is seen (acquire).
  const std::function<void(std::size_t)>* body_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::uint64_t> round_{0};
  std::atomic<std::size_t> next_{0};
  std::atomic<unsigned> busy_workers_{0};
  std::atomic<bool> stop_{false};

  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::size_t error_index_ = 0;
};

}  // namespace meshsim::engine
