#pragma once

#include <cstdint>
#include <vector>

namespace meshsim::engine {

// A map from 64-bit keys (hashes: already well spread) to 32-bit values, open-addressed
// with linear probing and deletion by backward shift (no tombstones), its power-of-two
// capacity at least twice its size. For hot tables that std::unordered_map makes allocate
// a node per entry and chase a pointer per lookup.
class FlatU64Map {
 public:
  static constexpr std::uint32_t kAbsent = ~0u;

  std::uint32_t find(std::uint64_t key) const {
    if (slots_.empty()) return kAbsent;
    return slots_[probe(key)].value;
  }
  // Precondition: `key` is absent and `value` is not kAbsent.
  void insert(std::uint64_t key, std::uint32_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    slots_[probe(key)] = Slot{key, value};
    ++size_;
  }
  void erase(std::uint64_t key) {
    if (slots_.empty()) return;
    std::size_t hole = probe(key);
    if (slots_[hole].value == kAbsent) return;
    // Later entries of the probe run move into the hole unless their home lies
    // cyclically in (hole, their position]: every lookup still finds them.
    std::size_t at = hole;
    while (true) {
      at = (at + 1) & mask_;
      if (slots_[at].value == kAbsent) break;
      const std::size_t want = home(slots_[at].key);
      if (((at - want) & mask_) >= ((at - hole) & mask_)) {
        slots_[hole] = slots_[at];
        hole = at;
      }
    }
    slots_[hole] = Slot{};
    --size_;
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t value = kAbsent;
  };
  std::size_t home(std::uint64_t key) const { return (key ^ (key >> 29)) & mask_; }
  // The slot holding `key`, or the empty slot where it would go.
  std::size_t probe(std::uint64_t key) const {
    std::size_t at = home(key);
    while (slots_[at].value != kAbsent && slots_[at].key != key) at = (at + 1) & mask_;
    return at;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : 2 * old.size(), Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.value != kAbsent) slots_[probe(slot.key)] = slot;
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace meshsim::engine
