#include "rl/ppo/checkpoint_folder.hpp"

#include <algorithm>
#include <vector>

namespace meshsim::rl {
namespace {

namespace fs = std::filesystem;

fs::path beside(const fs::path& dir, const char* suffix) { return dir.string() + suffix; }

Status failed(const fs::path& path, const char* what, const std::error_code& error) {
  return Error{path.string() + ": " + what + ": " + error.message()};
}

}  // namespace

bool complete_checkpoint(const fs::path& dir) { return fs::is_regular_file(dir / kCheckpointStateFile); }

fs::path fresh_checkpoint(const fs::path& dir) { return beside(dir, ".tmp"); }

Status swap_in_checkpoint(const fs::path& dir) {
  const fs::path fresh = fresh_checkpoint(dir), old = beside(dir, ".old");
  std::error_code error;
  fs::remove_all(old, error);
  if (error) return failed(old, "cannot remove", error);
  if (fs::exists(dir)) {
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

}  // namespace meshsim::rl
