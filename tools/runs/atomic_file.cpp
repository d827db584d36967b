#include "tools/runs/atomic_file.hpp"

#include <filesystem>
#include <system_error>

#include "tools/runs/signal_cleanup.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

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
  // A stale temporary, or a link planted at its name, goes first: opening it would write
  // through the link to whatever it names.
  fs::remove(temporary_, error);
  slot_ = create_removed_on_signal(temporary_, [&] {
    out_.open(temporary_, std::ios::binary | std::ios::trunc);
    return out_.is_open();
  });
}

AtomicFile::~AtomicFile() {
  if (committed_ || direct_) return;
  out_.close();
  std::error_code ignored;
  fs::remove(temporary_, ignored);
  keep_on_signal(slot_);
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
  keep_on_signal(slot_);
  if (error) return Error{path_ + ": cannot move the finished file into place: " + error.message()};
  return Ok{};
}

}  // namespace meshsim::cli
