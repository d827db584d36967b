#pragma once

#include <string>

namespace meshsim::cli {

// Files a command removes if it is interrupted (SIGINT, SIGTERM) before it is done with
// them: AtomicFile's temporaries and FolderLock's lock file. The handler removes them,
// then re-raises the signal so the process ends as it would have.

// The most runs a command may write at once (sweep --threads): the handler has room for
// all of their files.
inline constexpr unsigned kMaxConcurrentRuns = 256;

// Registers `path`; returns its slot (-1 when every slot is taken: it is then left on a
// signal).
int remove_on_signal(const std::string& path);
// Done with the file of `slot` (-1: nothing to do).
void keep_on_signal(int slot);

}  // namespace meshsim::cli
