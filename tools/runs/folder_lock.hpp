#pragma once

#include <string>
#include <string_view>

#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// An output folder's one writer. A command that writes a run, sweep, training or eval
// folder holds this lock for its whole life, so a second command aimed at the same folder
// is refused at once, naming the holder, instead of splicing its files into the first's.
// It is an advisory lock (flock) on FOLDER/.meshsim.lock, which records the holder's pid
// and command; the kernel drops it when the holder exits, however it exits, and the file
// is removed when the holder is done or interrupted (with the folder, if the lock created it and the
// command wrote nothing: a run refused before it started leaves no trace). Two holders in
// one process conflict too.
class FolderLock {
 public:
  // Creates `folder` if needed and locks it for `command` ("meshsim replay"). An Error
  // names the folder and the holder when another writer has it, or the other command
  // whose outputs the folder holds (one command kind per folder).
  static Expected<FolderLock> acquire(const std::string& folder, std::string_view command);

  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock();

  static constexpr std::string_view kFileName = ".meshsim.lock";

 private:
  FolderLock(int fd, std::string path, std::string created)
      : fd_(fd), path_(std::move(path)), created_(std::move(created)) {}
  void release();

  int fd_ = -1;
  std::string path_;
  std::string created_;  // the folder, when acquire created it: removed again if left empty
  int signal_slot_ = -1;  // the lock file's, removed if the command is interrupted
};

}  // namespace meshsim::cli
