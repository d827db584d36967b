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
// next one comes soon. A thread joins a round only while it is open: the caller closes it
// once every index is taken and waits only for threads still inside, so a thread the OS
// has not scheduled (its core taken by another process) costs its round nothing, and the
// caller does the work alone rather than wait for a time slice. An exception thrown by a
// body is rethrown by for_each (the one of the lowest index, so the error reported does
// not depend on timing) after every other index has run.
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
  // Enters round `round` if it is still open; false when it has closed (or moved on).
  bool enter(std::uint32_t round);
  void run_items();

  // The round's state in one 32-bit word, so joining and closing cannot cross and waits
  // are plain futexes (libstdc++ waits on 64-bit atomics through a shared proxy, which
  // lost a wake-up here): the round's number (wrapping; it only makes each round a new
  // value) above kRoundShift, kClosed, and the workers inside the round below.
  static constexpr unsigned kRoundShift = 16;
  static constexpr std::uint32_t kClosed = std::uint32_t{1} << 15;
  static constexpr std::uint32_t kInsideMask = kClosed - 1;

  std::vector<std::thread> workers_;
  // The round: its body and size are written before the state opens it (release) and read
  // after a worker entered it (acquire).
  const std::function<void(std::size_t)>* body_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::uint32_t> state_{kClosed};
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> stop_{false};

  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::size_t error_index_ = 0;
};

}  // namespace meshsim::engine
