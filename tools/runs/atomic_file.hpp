#pragma once

#include <fstream>
#include <string>

#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// A file written under a temporary name and renamed into place by commit(), so a reader
// never sees half a file and a failed run leaves no partial output. Destroying it
// without commit() removes the temporary file, and so does SIGINT or SIGTERM. A symlink
// is followed (the file it names is replaced, not the link); a special file (/dev/null,
// a pipe, /proc/self/fd/1) is written directly, never replaced.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  bool is_open() const { return out_.is_open(); }
  const std::string& path() const { return path_; }
  Status commit();

 private:
  std::string path_;
  std::string temporary_;
  std::ofstream out_;
  bool direct_ = false;
  bool committed_ = false;
  int slot_ = -1;  // in the signal handler's list of temporaries
};

}  // namespace meshsim::cli
