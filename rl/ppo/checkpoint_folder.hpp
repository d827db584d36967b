#pragma once

// Checkpoint folders replaced without a gap: a new one is written whole beside the old
// (DIR.tmp, state.json last), the old is renamed aside (DIR.old), the new renamed into
// place, then the old removed. At every moment one complete checkpoint is at DIR.tmp, DIR
// or DIR.old, and recover_checkpoint puts the newest back at DIR after an interruption.

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/expected.hpp"

namespace meshsim::rl {

// A checkpoint folder is complete when it holds state.json: writers put it there last.
inline constexpr const char* kCheckpointStateFile = "state.json";
bool complete_checkpoint(const std::filesystem::path& dir);

// Where the next checkpoint for `dir` is written before swap_in_checkpoint.
std::filesystem::path fresh_checkpoint(const std::filesystem::path& dir);

// fresh_checkpoint(dir), complete, becomes `dir`.
Status swap_in_checkpoint(const std::filesystem::path& dir);

// A new checkpoint at `dir`: `files` (name and bytes) and then `state` (state.json's
// text) written into fresh_checkpoint(dir), state.json renamed into place whole, then
// swapped in. A failed write (a full disk) is an error naming the file and leaves the
// previous checkpoint alone.
Status write_checkpoint(const std::filesystem::path& dir,
                        const std::vector<std::pair<std::string, std::string>>& files, const std::string& state);

// After an interruption: the newest complete of DIR.tmp, DIR and DIR.old becomes DIR, the
// rest are removed. Ok when there is none (DIR stays absent).
Status recover_checkpoint(const std::filesystem::path& dir);

// A copy of checkpoint `from` at `to`, swapped in the same way (state.json copied last).
Status copy_checkpoint(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace meshsim::rl
