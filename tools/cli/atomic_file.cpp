#include "tools/cli/atomic_file.hpp"

#include <cstdio>
#include <filesystem>
#include <system_error>

namespace meshsim::cli {

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), temporary_(path_ + ".tmp"), out_(temporary_, std::ios::binary | std::ios::trunc) {}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::error_code ignored;
  std::filesystem::remove(temporary_, ignored);
}

Status AtomicFile::commit() {
  out_.flush();
  if (!out_) return Error{temporary_ + ": write failed"};
  out_.close();
  std::error_code error;
  std::filesystem::rename(temporary_, path_, error);
  if (error) return Error{path_ + ": cannot move the finished file into place: " + error.message()};
  committed_ = true;
  return Ok{};
}

}  // namespace meshsim::cli
