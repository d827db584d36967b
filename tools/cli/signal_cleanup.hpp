#pragma once

#include <string>

namespace meshsim::cli {

// Files a command removes if it is interrupted (SIGINT, SIGTERM) before it is done with
// them: AtomicFile's temporaries and FolderLock's lock file. The handler removes them,
// then passes the signal on to the handler that was there before: the default ends the
// process as it would have, and a host's own (Python's) keeps working.

// The most runs a command may write at once (sweep --threads): the handler has room for
// all of their files.
inline constexpr unsigned kMaxConcurrentRuns = 256;

// Registers `path`; returns its slot (-1 when every slot is taken: it is then left on a
// signal).
int remove_on_signal(const std::string& path);
// Done with the file of `slot` (-1: nothing to do).
void keep_on_signal(int slot);

}  // namespace meshsim::cli
