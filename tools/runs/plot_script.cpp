#include "tools/runs/plot_script.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "configs/catalog.hpp"
#include "configs/config_file.hpp"

namespace meshsim::cli {
namespace {

constexpr int kNoMatplotlib = 77;  // what tools/plot_setup.py's callers exit with
constexpr int kNoPython = 127;     // the shell's "command not found"

// POSIX shell quoting: inside '...' only a quote needs care ('\'').
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Expected<bool> draw_plot(const std::string& script_name, const std::vector<std::string>& args,
                         const std::string& png, std::ostream& err) {
  std::string command = "/usr/bin/python3 " + shell_quote(configs::default_catalog_folder() + "/../tools/" + script_name);
  for (const auto& arg : args) command += " " + shell_quote(arg);
  command += " --out " + shell_quote(png) + " > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  const int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string name = std::filesystem::path(png).filename().string();
  if (code == 0 && configs::path_kind(png) == configs::PathKind::kFile) return true;
  if (code == 0) {
    err << "note: no " << name << ": nothing to draw\n";
    return false;
  }
  if (code == kNoMatplotlib || code == kNoPython) {
    err << "note: no " << name << " (tools/" << script_name << " needs python3-matplotlib)\n";
    return false;
  }
  std::error_code ignored;
  std::filesystem::remove(png, ignored);  // never a partial PNG
  return Error{png + ": could not be written: tools/" + script_name + " exited " + std::to_string(code) +
               " (a full disk, or a file-size limit?)"};
}

}  // namespace meshsim::cli
