#include "scheduler/resources.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/engine/check.hpp"

namespace meshsim::scheduler {
namespace {

std::int64_t to_milli(double amount) { return std::llround(amount * 1000.0); }

// Appends exactly: "2", "0.5", "1048576.125" (no stream and no temporaries: refused
// placements format these often).
void append_milli(std::string& out, std::int64_t milli) {
  const bool negative = milli < 0;
  const std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(milli) : static_cast<std::uint64_t>(milli);
  char buffer[32];
  char* end = buffer;
  if (negative) *end++ = '-';
  end = std::to_chars(end, buffer + sizeof buffer, magnitude / 1000).ptr;
  if (std::uint64_t frac = magnitude % 1000; frac != 0) {
    *end++ = '.';
    for (std::uint64_t scale = 100; frac != 0; scale /= 10) {
      *end++ = static_cast<char>('0' + frac / scale);
      frac %= scale;
    }
  }
  out.append(buffer, end);
}

}  // namespace

ResourceVector ResourceVector::of(double cpu, double memory_mb, double gpu) {
  ResourceVector v;
  v.cpu_milli_ = to_milli(cpu);
  v.memory_milli_ = to_milli(memory_mb);
  v.gpu_milli_ = to_milli(gpu);
  return v;
}

ResourceVector& ResourceVector::with_custom(const std::string& name, double amount) {
  add_custom(name, to_milli(amount));
  return *this;
}

std::int64_t ResourceVector::custom_milli(const std::string& name) const {
  const auto it = std::lower_bound(custom_.begin(), custom_.end(), name,
                                   [](const auto& entry, const std::string& key) { return entry.first < key; });
  return it != custom_.end() && it->first == name ? it->second : 0;
}

void ResourceVector::add_custom(const std::string& name, std::int64_t milli) {
  auto it = std::lower_bound(custom_.begin(), custom_.end(), name,
                             [](const auto& entry, const std::string& key) { return entry.first < key; });
  if (it != custom_.end() && it->first == name) {
    it->second += milli;
    if (it->second == 0) custom_.erase(it);
  } else if (milli != 0) {
    custom_.insert(it, {name, milli});
  }
}

ResourceVector& ResourceVector::operator+=(const ResourceVector& other) {
  cpu_milli_ += other.cpu_milli_;
  memory_milli_ += other.memory_milli_;
  gpu_milli_ += other.gpu_milli_;
  for (const auto& [name, milli] : other.custom_) add_custom(name, milli);
  return *this;
}

ResourceVector& ResourceVector::operator-=(const ResourceVector& other) {
  cpu_milli_ -= other.cpu_milli_;
  memory_milli_ -= other.memory_milli_;
  gpu_milli_ -= other.gpu_milli_;
  for (const auto& [name, milli] : other.custom_) add_custom(name, -milli);
  return *this;
}

bool ResourceVector::fits_in(const ResourceVector& capacity) const {
  // capacity - *this >= 0 in every component, without building the difference (this is
  // the core's hottest comparison): a merge walk of the two sorted custom lists.
  if (cpu_milli_ > capacity.cpu_milli_ || memory_milli_ > capacity.memory_milli_ ||
      gpu_milli_ > capacity.gpu_milli_) {
    return false;
  }
  auto mine = custom_.begin();
  auto theirs = capacity.custom_.begin();
  while (mine != custom_.end() || theirs != capacity.custom_.end()) {
    if (theirs == capacity.custom_.end() || (mine != custom_.end() && mine->first < theirs->first)) {
      if (mine->second > 0) return false;  // needed, absent from capacity
      ++mine;
    } else if (mine == custom_.end() || theirs->first < mine->first) {
      if (theirs->second < 0) return false;  // capacity below zero, not needed
      ++theirs;
    } else {
      if (mine->second > theirs->second) return false;
      ++mine;
      ++theirs;
    }
  }
  return true;
}

bool ResourceVector::fits_in_sum(const ResourceVector& a, const ResourceVector& b) const {
  if (cpu_milli_ > a.cpu_milli_ + b.cpu_milli_ || memory_milli_ > a.memory_milli_ + b.memory_milli_ ||
      gpu_milli_ > a.gpu_milli_ + b.gpu_milli_) {
    return false;
  }
  // As fits_in, over every custom resource named on any side (absent ones zero): a merge
  // walk of the three lists sorted by name, each name compared once per side (victim
  // selection asks this of every node a candidate frees room on).
  auto mine = custom_.begin();
  auto in_a = a.custom_.begin();
  auto in_b = b.custom_.begin();
  while (mine != custom_.end() || in_a != a.custom_.end() || in_b != b.custom_.end()) {
    const std::string* name = mine != custom_.end() ? &mine->first : nullptr;
    if (in_a != a.custom_.end() && (name == nullptr || in_a->first < *name)) name = &in_a->first;
    if (in_b != b.custom_.end() && (name == nullptr || in_b->first < *name)) name = &in_b->first;
    std::int64_t need = 0, have = 0;
    if (mine != custom_.end() && mine->first == *name) need = (mine++)->second;
    if (in_a != a.custom_.end() && in_a->first == *name) have += (in_a++)->second;
    if (in_b != b.custom_.end() && in_b->first == *name) have += (in_b++)->second;
    if (need > have) return false;
  }
  return true;
}

bool ResourceVector::is_non_negative() const {
  if (cpu_milli_ < 0 || memory_milli_ < 0 || gpu_milli_ < 0) return false;
  return std::all_of(custom_.begin(), custom_.end(), [](const auto& entry) { return entry.second >= 0; });
}

std::string ResourceVector::to_string() const {
  std::string out;
  out.reserve(48);
  append_to(out);
  return out;
}

void ResourceVector::append_to(std::string& out) const {
  out += "cpu=";
  append_milli(out, cpu_milli_);
  out += " memory_mb=";
  append_milli(out, memory_milli_);
  out += " gpu=";
  append_milli(out, gpu_milli_);
  for (const auto& [name, milli] : custom_) {
    out += ' ';
    out += name;
    out += '=';
    append_milli(out, milli);
  }
}

Status ResourceLedger::reserve(const ResourceVector& amount) {
  MESHSIM_CHECK(amount.is_non_negative(), "reserve: negative amount " + amount.to_string());
  if (!amount.fits_in(available_)) {
    return Error{"insufficient resources: requested " + amount.to_string() + ", available " + available_.to_string()};
  }
  reserved_ += amount;
  available_ -= amount;
  return Ok{};
}

void ResourceLedger::commit(const ResourceVector& amount) {
  MESHSIM_CHECK(amount.fits_in(reserved_), "commit: more than reserved: " + amount.to_string());
  reserved_ -= amount;
  used_ += amount;
}

void ResourceLedger::rollback(const ResourceVector& amount) {
  MESHSIM_CHECK(amount.fits_in(reserved_), "rollback: more than reserved: " + amount.to_string());
  reserved_ -= amount;
  available_ += amount;
}

void ResourceLedger::release(const ResourceVector& amount) {
  MESHSIM_CHECK(amount.fits_in(used_), "release: more than used: " + amount.to_string());
  used_ -= amount;
  available_ += amount;
}

Status ResourceLedger::resize(const ResourceVector& capacity) {
  if (!(reserved_ + used_).fits_in(capacity)) {
    return Error{"cannot shrink below what is reserved and used: " + (reserved_ + used_).to_string()};
  }
  capacity_ = capacity;
  available_ = capacity_ - reserved_ - used_;
  return Ok{};
}

}  // namespace meshsim::scheduler
