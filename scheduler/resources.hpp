#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/expected.hpp"

namespace meshsim::scheduler {

// Exact resource amounts: cpu (cores), memory (MB), gpu (devices) and named custom
// resources, each held as an integer count of thousandths so that ledgers add and
// subtract without drift (a Ray-style 0.5 GPU is 500 milli-GPUs).
class ResourceVector {
 public:
  ResourceVector() = default;
  // The largest amount of one resource an input may give (a million nodes of it still
  // add up without overflowing the milli-unit ledgers).
  static constexpr double kMaxAmount = 1e12;
  // Amounts in whole units, each in [0, kMaxAmount]; rounded to the nearest thousandth.
  static ResourceVector of(double cpu, double memory_mb, double gpu);
  ResourceVector& with_custom(const std::string& name, double amount);

  std::int64_t cpu_milli() const { return cpu_milli_; }
  std::int64_t memory_milli() const { return memory_milli_; }
  std::int64_t gpu_milli() const { return gpu_milli_; }
  std::int64_t custom_milli(const std::string& name) const;
  double cpu() const { return static_cast<double>(cpu_milli_) / 1000.0; }
  double memory_mb() const { return static_cast<double>(memory_milli_) / 1000.0; }
  double gpu() const { return static_cast<double>(gpu_milli_) / 1000.0; }
  // Custom resources sorted by name, zero amounts omitted.
  const std::vector<std::pair<std::string, std::int64_t>>& custom_milli_all() const { return custom_; }

  ResourceVector& operator+=(const ResourceVector& other);
  ResourceVector& operator-=(const ResourceVector& other);
  friend ResourceVector operator+(ResourceVector a, const ResourceVector& b) { return a += b; }
  friend ResourceVector operator-(ResourceVector a, const ResourceVector& b) { return a -= b; }
  bool operator==(const ResourceVector&) const = default;
  // An arbitrary total order, for use as a map key.
  auto operator<=>(const ResourceVector&) const = default;

  // Every component of *this is <= the same component of `capacity`.
  bool fits_in(const ResourceVector& capacity) const;
  // fits_in(a + b) without building the sum (what-if checks add freed room to a node's).
  bool fits_in_sum(const ResourceVector& a, const ResourceVector& b) const;
  bool is_non_negative() const;
  bool is_zero() const { return *this == ResourceVector(); }
  // "cpu=2 memory_mb=1024 gpu=0.5 accelerator=1": for messages and logs.
  std::string to_string() const;
  // Appends what to_string() gives, for a message built in one string.
  void append_to(std::string& out) const;

 private:
  void add_custom(const std::string& name, std::int64_t milli);

  std::int64_t cpu_milli_ = 0;
  std::int64_t memory_milli_ = 0;
  std::int64_t gpu_milli_ = 0;
  std::vector<std::pair<std::string, std::int64_t>> custom_;
};

// A quota or a node's capacity with what is reserved (promised to an operation under
// way) and used (committed). Reserve -> commit, or reserve -> roll back, so a failed
// operation leaves nothing behind. reserved + used never exceeds capacity and neither
// goes below zero.
class ResourceLedger {
 public:
  explicit ResourceLedger(ResourceVector capacity) : capacity_(std::move(capacity)), available_(capacity_) {}

  const ResourceVector& capacity() const { return capacity_; }
  const ResourceVector& reserved() const { return reserved_; }
  const ResourceVector& used() const { return used_; }
  // capacity - reserved - used, kept up to date by every change: placement asks it of
  // many nodes per decision, and building it each time allocated (node capacities carry
  // a custom SKU resource).
  const ResourceVector& available() const { return available_; }

  // Fails, changing nothing, when `amount` does not fit in what is available.
  Status reserve(const ResourceVector& amount);
  // Moves a reservation to used.
  void commit(const ResourceVector& amount);
  // Drops a reservation.
  void rollback(const ResourceVector& amount);
  // Frees committed resources.
  void release(const ResourceVector& amount);
  // Changes the capacity; fails when it would fall below what is reserved and used.
  Status resize(const ResourceVector& capacity);

 private:
  ResourceVector capacity_;
  ResourceVector reserved_;
  ResourceVector used_;
  ResourceVector available_;
};

}  // namespace meshsim::scheduler
