#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace meshsim::engine {

// FNV-1a 64 over bytes: the same value on every machine and build (std::hash is not), for
// seeds derived from names and for telling whether a file read before is the same now.
// Not a defence against someone forging a collision.
class Digest {
 public:
  Digest& add(std::string_view bytes) {
    for (const char ch : bytes) {
      value_ ^= static_cast<unsigned char>(ch);
      value_ *= 0x100000001b3ULL;
    }
    return *this;
  }
  std::uint64_t value() const { return value_; }
  std::string hex() const {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (std::size_t i = 0; i < 16; ++i) out[15 - i] = kDigits[(value_ >> (4 * i)) & 0xF];
    return out;
  }

 private:
  std::uint64_t value_ = 0xcbf29ce484222325ULL;
};

}  // namespace meshsim::engine
