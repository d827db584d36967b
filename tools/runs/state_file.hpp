#pragma once

#include <string>
#include <string_view>

#include "scheduler/scheduler.hpp"
#include "sim/engine/expected.hpp"
#include "sim/script/script_world.hpp"

namespace meshsim::cli {

// The scheduler's state file (JSON): everything SchedulerState holds, so that saving,
// loading and saving again gives the same bytes, and a loaded scheduler behaves as the
// one that saved it. Written atomically (temporary file, then rename).
Status write_state_file(const std::string& path, const scheduler::SchedulerState& state);
Expected<scheduler::SchedulerState> read_state_file(const std::string& path);
// The same without the file: the text written, and the text read (errors name `path`).
std::string state_file_text(const scheduler::SchedulerState& state);
Expected<scheduler::SchedulerState> parse_state_file(std::string_view text, const std::string& path);

// A scenario script's save_state and load_state on these files.
class StateFiles final : public script::StateStore {
 public:
  Status save(const std::string& path, const scheduler::SchedulerState& state) override {
    return write_state_file(path, state);
  }
  Expected<scheduler::SchedulerState> load(const std::string& path) override { return read_state_file(path); }
};

}  // namespace meshsim::cli
