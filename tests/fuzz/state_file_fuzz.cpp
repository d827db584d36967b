// Feeds arbitrary bytes to the readers of what a resumed run reads back: a checkpoint's
// state.json, a sweep run's summary.json and the scheduler's state file. Each is refused
// with an error or read; a checkpoint or scheduler state read is written back, and that
// text reads back to the same text (nothing wrapped or rounded on the way in), never a
// crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "rl/ppo/checkpoint_state.hpp"
#include "tools/runs/state_file.hpp"
#include "tools/cli/sweep_command.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto state = meshsim::rl::parse_checkpoint_state(text, "state.json")) {
    const std::string written = meshsim::rl::to_json(*state).dump();
    auto again = meshsim::rl::parse_checkpoint_state(written, "state.json");
    if (!again || meshsim::rl::to_json(*again).dump() != written) std::abort();
  }
  (void)meshsim::cli::read_sweep_run_summary(text, "summary.json");
  if (auto state = meshsim::cli::parse_state_file(text, "scheduler.json")) {
    const std::string written = meshsim::cli::state_file_text(*state);
    auto again = meshsim::cli::parse_state_file(written, "scheduler.json");
    if (!again || meshsim::cli::state_file_text(*again) != written) std::abort();
  }
  return 0;
}
