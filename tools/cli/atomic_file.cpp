#include "tools/cli/atomic_file.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

// Temporary files being written, for the signal handler: fixed storage, since a handler
// may only touch what needs no allocation or lock. A slot is claimed (by one thread),
// filled, then marked ready; the handler reads ready slots only.
constexpr std::size_t kSlots = 32;
constexpr std::size_t kPathBytes = 4096;
enum SlotState : int { kFree, kFilling, kReady };
std::array<std::atomic<int>, kSlots> slot_state{};
std::array<std::array<char, kPathBytes>, kSlots> slot_path{};

extern "C" void remove_temporaries_and_reraise(int signal_number) {
  for (std::size_t i = 0; i < kSlots; ++i) {
    if (slot_state[i].load() == kReady) ::unlink(slot_path[i].data());
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

int register_temporary(const std::string& path) {
  static const bool installed = [] {
    for (const int signal_number : {SIGINT, SIGTERM}) {
      // A signal ignored on entry (SIGINT for a background job) stays ignored.
      if (std::signal(signal_number, remove_temporaries_and_reraise) == SIG_IGN) std::signal(signal_number, SIG_IGN);
    }
    return true;
  }();
  (void)installed;
  if (path.size() >= kPathBytes) return -1;
  for (std::size_t i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!slot_state[i].compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(slot_path[i].data(), path.c_str(), path.size() + 1);
    slot_state[i].store(kReady);
    return static_cast<int>(i);
  }
  return -1;  // more files than slots: this one is not cleaned up on a signal
}

void unregister_temporary(int slot) {
  if (slot >= 0) slot_state[static_cast<std::size_t>(slot)].store(kFree);
}

// Where a write to `path` should go: through symlinks to what they name.
fs::path resolved(const std::string& path) {
  std::error_code error;
  const fs::path target = fs::weakly_canonical(path, error);
  return error ? fs::path(path) : target;
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  const fs::path target = resolved(path_);
  std::error_code error;
  const auto status = fs::status(target, error);
  // Special files (/dev/null, a pipe, /proc/self/fd/1) are written directly: renaming a
  // regular file over them would replace them.
  direct_ = !error && fs::exists(status) && !fs::is_regular_file(status);
  if (direct_) {
    out_.open(target, std::ios::binary);
    return;
  }
  temporary_ = target.string() + ".tmp";
  out_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (out_.is_open()) slot_ = register_temporary(temporary_);
}

AtomicFile::~AtomicFile() {
  if (committed_ || direct_) return;
  out_.close();
  std::error_code ignored;
  fs::remove(temporary_, ignored);
  unregister_temporary(slot_);
}

Status AtomicFile::commit() {
  out_.flush();
  if (!out_) return Error{(direct_ ? path_ : temporary_) + ": write failed"};
  out_.close();
  if (!out_) return Error{(direct_ ? path_ : temporary_) + ": write failed"};
  committed_ = true;
  if (direct_) return Ok{};
  std::error_code error;
  fs::rename(temporary_, resolved(path_), error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary_, ignored);
  }
  unregister_temporary(slot_);
  if (error) return Error{path_ + ": cannot move the finished file into place: " + error.message()};
  return Ok{};
}

}  // namespace meshsim::cli
