#include "tools/runs/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "tools/runs/signal_cleanup.hpp"

namespace meshsim::cli {
namespace {

// What the holder wrote into the lock file ("pid 123, meshsim sweep"), or a placeholder.
std::string holder_of(int fd) {
  char text[256] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return "another process";
  std::string out(text, static_cast<std::size_t>(n));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\0')) out.pop_back();
  return out.empty() ? "another process" : out;
}

// The files by which each command's outputs are known: a folder holding one of another
// command's is that command's, and is refused (a train into a replay's folder would mix
// their files, a replay into a finished sweep would write beside its runs).
struct Outputs {
  std::string_view command;
  std::vector<std::string_view> files;
};
const std::vector<Outputs>& command_outputs() {
  static const std::vector<Outputs> outputs = {
      {"meshsim replay", {"summary.json", "requests.csv"}},
      {"meshsim sweep", {"sweep.json", "sweep.csv"}},
      {"meshsim compare-presets", {"presets.csv"}},
      {"meshsim capacity", {"capacity.csv"}},
      {"meshsim train", {"learning_curve.csv", "checkpoint"}},
      {"meshsim eval", {"eval.csv", "verdicts.csv"}},
  };
  return outputs;
}

// Another command's outputs in `folder`, as "meshsim train (learning_curve.csv)"; empty when none.
std::string other_commands_outputs(const std::string& folder, std::string_view command) {
  for (const auto& [other, files] : command_outputs()) {
    if (other == command) continue;
    for (const auto file : files) {
      std::error_code error;
      if (std::filesystem::exists(std::filesystem::path(folder) / file, error)) {
        return std::string(other) + " (" + std::string(file) + ")";
      }
    }
  }
  return {};
}

}  // namespace

Expected<FolderLock> FolderLock::acquire(const std::string& folder, std::string_view command) {
  std::error_code error;
  const bool created = !std::filesystem::exists(folder, error);
  std::filesystem::create_directories(folder, error);
  if (error) return Error{folder + ": cannot create the output folder: " + error.message()};
  const std::string path = (std::filesystem::path(folder) / kFileName).string();
  // A holder removes the file as it finishes: a lock taken on the file it removed would
  // lock nothing, so the lock counts only while the path still names the locked file.
  for (int attempt = 0; attempt < 100; ++attempt) {
    // Created registered for removal, so that a signal at any moment leaves no lock file of
    // ours; a file already there (another holder's, or one a killed holder left) is opened
    // as it is. Never through a link: the holder's name is written into the file, and a
    // link there would have it overwrite a file outside the folder (O_EXCL follows none).
    constexpr int kFlags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    int fd = -1;
    int open_error = 0;
    int slot = create_removed_on_signal(path, [&] {
      fd = ::open(path.c_str(), kFlags | O_CREAT | O_EXCL, 0644);
      open_error = fd < 0 ? errno : 0;
      return fd >= 0;
    });
    if (fd < 0 && open_error == 0) return Error{folder + ": interrupted before the output folder was locked"};
    if (fd < 0 && open_error == EEXIST) {
      fd = ::open(path.c_str(), kFlags);
      open_error = fd < 0 ? errno : 0;
      if (fd < 0 && open_error == ENOENT) continue;  // its holder removed it meanwhile
    }
    if (fd < 0 && open_error == ELOOP) {
      return Error{path + ": the output folder's lock file is a symbolic link: remove it (meshsim writes through none)"};
    }
    if (fd < 0) return Error{folder + ": cannot lock the output folder: " + std::strerror(open_error)};
    // Not ours to remove until it is locked: another holder may take the file we created.
    if (struct stat file {}; ::fstat(fd, &file) != 0 || !S_ISREG(file.st_mode)) {
      keep_on_signal(slot);
      ::close(fd);
      return Error{path + ": the output folder's lock file is not a regular file: remove it"};
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int why = errno;
      keep_on_signal(slot);
      const std::string holder = why == EWOULDBLOCK ? holder_of(fd) : std::string();
      ::close(fd);
      if (why != EWOULDBLOCK) return Error{folder + ": cannot lock the output folder: " + std::strerror(why)};
      return Error{folder + ": another command is writing this folder (" + holder +
                   "): wait for it to finish, or give another folder"};
    }
    struct stat locked {}, named {};
    if (::fstat(fd, &locked) == 0 && ::lstat(path.c_str(), &named) == 0 && locked.st_dev == named.st_dev &&
        locked.st_ino == named.st_ino) {
      // A file that was there before is registered once it is ours.
      if (slot < 0) slot = std::max(-1, create_removed_on_signal(path, [] { return true; }));
      const std::string holder = "pid " + std::to_string(::getpid()) + ", " + std::string(command) + "\n";
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, holder.data(), holder.size(), 0) < 0) {
        // Only the holder's name is lost: the lock holds.
      }
      FolderLock lock(fd, path, created ? folder : std::string());
      lock.signal_slot_ = slot;
      // Checked under the lock, so no writer of another kind is half-way through.
      if (const std::string other = other_commands_outputs(folder, command); !other.empty()) {
        return Error{folder + ": holds the outputs of " + other + ": give " + std::string(command) +
                     " a folder of its own"};
      }
      return lock;
    }
    keep_on_signal(slot);  // removed (or replaced) while we waited for it: try the new one
    ::close(fd);
  }
  return Error{folder + ": cannot lock the output folder: its lock file keeps changing"};
}

FolderLock::FolderLock(FolderLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      created_(std::move(other.created_)),
      signal_slot_(std::exchange(other.signal_slot_, -1)) {}

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    created_ = std::move(other.created_);
    signal_slot_ = std::exchange(other.signal_slot_, -1);
  }
  return *this;
}

FolderLock::~FolderLock() { release(); }

void FolderLock::release() {
  if (fd_ < 0) return;
  // Removed while still locked (a waiter that opened it sees it gone), then unregistered:
  // a signal in between finds the path gone, where the other order would leave the file.
  ::unlink(path_.c_str());
  keep_on_signal(std::exchange(signal_slot_, -1));
  ::close(fd_);
  fd_ = -1;
  if (!created_.empty()) {
    std::error_code ignored;
    std::filesystem::remove(created_, ignored);  // only if the command wrote nothing into it
  }
}

}  // namespace meshsim::cli
