#include "tools/cli/companion.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

namespace meshsim::cli {

int run_companion(std::string_view name, char** argv, std::ostream& err) {
  std::error_code ec;
  // This executable's own path, whatever PATH or symlink started it.
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    err << "error: cannot find the meshsim executable's folder to run " << name << ": " << ec.message() << '\n';
    return 70;
  }
  const std::string path = (self.parent_path() / name).string();
  argv[0] = const_cast<char*>(path.c_str());
  ::execv(path.c_str(), argv);
  const int cause = errno;
  err << "error: this command runs " << path << ", which cannot be started (" << std::strerror(cause)
      << "): build it beside meshsim (cmake --build BUILD builds both where its libraries are installed)\n";
  return 70;
}

}  // namespace meshsim::cli
