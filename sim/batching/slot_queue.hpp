#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace meshsim::cluster {

// A queue of request slots for an instance: first in, first out, and work can also be
// put back at the front (an evicted sequence recomputes first) or taken from the back.
// A ring buffer on one vector whose size is a power of two. Unlike std::deque, an empty
// queue allocates nothing: an instance has five of them and a scaling policy creates
// instances all the time, so a deque's eager 1 KB per queue made every scale-up pay ten
// allocations.
class SlotQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // The i-th slot from the front (i < size()).
  std::uint32_t operator[](std::size_t i) const { return buffer_[(head_ + i) & mask()]; }
  std::uint32_t front() const { return buffer_[head_]; }
  std::uint32_t back() const { return (*this)[size_ - 1]; }

  void push_back(std::uint32_t slot) {
    if (size_ == buffer_.size()) grow();
    buffer_[(head_ + size_) & mask()] = slot;
    ++size_;
  }
  void push_front(std::uint32_t slot) {
    if (size_ == buffer_.size()) grow();
    head_ = (head_ + buffer_.size() - 1) & mask();
    buffer_[head_] = slot;
    ++size_;
  }
  // Both require a non-empty queue.
  void pop_front() {
    head_ = (head_ + 1) & mask();
    --size_;
  }
  void pop_back() { --size_; }
  void clear() {
    head_ = 0;
    size_ = 0;
  }
  // Frees the buffer of an empty queue (an instance whose KV cache is flushed).
  void shrink_to_fit() {
    if (size_ == 0) {
      buffer_ = {};
      head_ = 0;
    }
  }
  // Appends the slots, front to back, to `out`.
  void append_to(std::vector<std::uint32_t>& out) const {
    for (std::size_t i = 0; i < size_; ++i) out.push_back((*this)[i]);
  }

 private:
  std::size_t mask() const { return buffer_.size() - 1; }
  // Doubles the buffer (first 8 slots), unrolling the ring so the front is at 0.
  void grow() {
    std::vector<std::uint32_t> bigger(buffer_.empty() ? 8 : buffer_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    buffer_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<std::uint32_t> buffer_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace meshsim::cluster
