#pragma once

#include <functional>
#include <string>

namespace meshsim::cli {

// Files a command removes if it is interrupted (SIGINT, SIGTERM) before it is done with
// them: AtomicFile's temporaries and FolderLock's lock file. The handler removes them,
// then passes the signal on to the handler that was there before: the default ends the
// process as it would have, and a host's own (Python's) keeps working.

// The most runs a command may write at once (sweep --threads): the handler has room for
// all of their files.
inline constexpr unsigned kMaxConcurrentRuns = 256;

// Creates the file `path` with `create` (which says whether it did) and registers it, so
// that a signal at any moment, on any thread, leaves no such file: it is registered before
// it exists, and once a signal is being handled nothing more is created. Returns its slot;
// -1 when every slot is taken (the file is then left on a signal); kNotCreated when
// `create` failed or the process is being stopped (then nothing was created).
inline constexpr int kNotCreated = -2;
int create_removed_on_signal(const std::string& path, const std::function<bool()>& create);
// Done with the file of `slot` (negative: nothing to do).
void keep_on_signal(int slot);

}  // namespace meshsim::cli
