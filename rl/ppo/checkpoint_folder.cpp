#include "rl/ppo/checkpoint_folder.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

#include "configs/config_file.hpp"

namespace meshsim::rl {
namespace {

namespace fs = std::filesystem;

fs::path beside(const fs::path& dir, const char* suffix) { return dir.string() + suffix; }

Status failed(const fs::path& path, const char* what, const std::error_code& error) {
  return Error{path.string() + ": " + what + ": " + error.message()};
}

}  // namespace

// Anything there counts (a link loop included): reading it then says what is wrong.
bool complete_checkpoint(const fs::path& dir) {
  return configs::path_kind(dir / kCheckpointStateFile) != configs::PathKind::kMissing;
}

fs::path fresh_checkpoint(const fs::path& dir) { return beside(dir, ".tmp"); }

Status swap_in_checkpoint(const fs::path& dir) {
  const fs::path fresh = fresh_checkpoint(dir), old = beside(dir, ".old");
  std::error_code error;
  fs::remove_all(old, error);
  if (error) return failed(old, "cannot remove", error);
  if (configs::path_kind(dir) != configs::PathKind::kMissing) {
    fs::rename(dir, old, error);
    if (error) return failed(dir, "cannot move the previous checkpoint aside", error);
  }
  fs::rename(fresh, dir, error);
  if (error) return failed(fresh, "cannot move the new checkpoint into place", error);
  fs::remove_all(old, error);
  if (error) return failed(old, "cannot remove the previous checkpoint", error);
  return Ok{};
}

Status recover_checkpoint(const fs::path& dir) {
  const fs::path fresh = fresh_checkpoint(dir), old = beside(dir, ".old");
  std::error_code error;
  if (complete_checkpoint(fresh)) return swap_in_checkpoint(dir);  // written whole, not yet swapped in
  fs::remove_all(fresh, error);
  if (error) return failed(fresh, "cannot remove", error);
  if (!complete_checkpoint(dir) && complete_checkpoint(old)) {  // moved aside, the new one lost
    fs::remove_all(dir, error);
    if (!error) fs::rename(old, dir, error);
    if (error) return failed(old, "cannot move the previous checkpoint back", error);
  }
  fs::remove_all(old, error);
  if (error) return failed(old, "cannot remove", error);
  return Ok{};
}

Status copy_checkpoint(const fs::path& from, const fs::path& to) {
  const fs::path fresh = fresh_checkpoint(to);
  std::error_code error;
  fs::remove_all(fresh, error);
  if (!error) fs::create_directories(fresh, error);
  if (error) return failed(fresh, "cannot create", error);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(from, error)) files.push_back(entry.path());
  if (error) return failed(from, "cannot list", error);
  // state.json last: the copy is complete once it is there.
  std::stable_partition(files.begin(), files.end(),
                        [](const fs::path& f) { return f.filename() != kCheckpointStateFile; });
  for (const fs::path& file : files) {
    const bool state = file.filename() == kCheckpointStateFile;
    const fs::path copy = fresh / (state ? std::string(kCheckpointStateFile) + ".part" : file.filename().string());
    fs::copy(file, copy, fs::copy_options::recursive, error);
    if (!error && state) fs::rename(copy, fresh / kCheckpointStateFile, error);
    if (error) return failed(copy, "cannot copy the checkpoint", error);
  }
  return swap_in_checkpoint(to);
}

Status write_checkpoint(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& files,
                        const std::string& state) {
  const fs::path fresh = fresh_checkpoint(dir);
  const auto give_up = [&](const std::string& why) -> Status {
    std::error_code ignored;
    fs::remove_all(fresh, ignored);  // a failed checkpoint leaves the previous one alone
    return Error{fresh.string() + ": cannot write the checkpoint: " + why};
  };
  std::error_code error;
  fs::remove_all(fresh, error);
  if (!error) fs::create_directories(fresh, error);
  if (error) return give_up(error.message());
  const auto write = [&](const fs::path& file, const std::string& bytes) {
    std::ofstream out(file, std::ios::binary);
    out << bytes;
    out.close();
    return static_cast<bool>(out);
  };
  for (const auto& [name, bytes] : files) {
    if (!write(fresh / name, bytes)) return give_up((fresh / name).string() + ": write failed (disk full?)");
  }
  // state.json last, renamed into place whole: the folder is complete once it is there.
  const fs::path part = fresh / (std::string(kCheckpointStateFile) + ".part");
  if (!write(part, state)) return give_up(part.string() + ": write failed (disk full?)");
  fs::rename(part, fresh / kCheckpointStateFile, error);
  if (error) return give_up(error.message());
  return swap_in_checkpoint(dir);
}

}  // namespace meshsim::rl
