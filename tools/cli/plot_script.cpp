#include "tools/cli/plot_script.hpp"

#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "configs/catalog.hpp"

namespace meshsim::cli {
namespace {

// POSIX shell quoting: inside '...' only a quote needs care ('\'').
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

bool run_plot_script(const std::string& script_name, const std::vector<std::string>& args) {
  std::string command = "/usr/bin/python3 " + shell_quote(configs::default_catalog_folder() + "/../tools/" + script_name);
  for (const auto& arg : args) command += " " + shell_quote(arg);
  command += " > /dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

bool draw_plot(const std::string& script_name, std::vector<std::string> args, const std::string& png,
               std::ostream& err) {
  args.push_back("--out");
  args.push_back(png);
  if (run_plot_script(script_name, args)) return true;
  err << "note: no " << std::filesystem::path(png).filename().string() << " (tools/" << script_name
      << " needs python3-matplotlib)\n";
  return false;
}

}  // namespace meshsim::cli
