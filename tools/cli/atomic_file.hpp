#pragma once

#include <fstream>
#include <string>

#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// A file written under a temporary name and renamed into place by commit(), so a reader
// never sees half a file and a failed run leaves no partial output. Destroying it
// without commit() removes the temporary file.
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
  bool committed_ = false;
};

}  // namespace meshsim::cli
