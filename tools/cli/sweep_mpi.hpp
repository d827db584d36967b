#pragma once

// `meshsim sweep` across processes with MPI (Open MPI from Debian): rank 0 hands run
// indices out one at a time as ranks ask for work, and gathers the rows. Built when CMake
// finds MPI (MESHSIM_HAVE_MPI); otherwise sweeps use threads only.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace meshsim::cli {

// Whether this process was started by mpirun / mpiexec (Open MPI's or a PMI launcher's
// variables are set), so a plain `meshsim sweep` never initialises MPI.
bool launched_by_mpi();

#ifdef MESHSIM_HAVE_MPI
// MPI_Init_thread on construction, MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Rank 0's `value` on every rank.
  int broadcast(int value) const;
  // Jobs 0..count-1 over all ranks, handed out dynamically by rank 0 (which works on them
  // too, on a thread of its own): every rank calls work(index) for the jobs it gets. Rank
  // 0 returns every job's text in index order, the other ranks an empty vector; it calls
  // done(index, text) as each job's text reaches it (one call at a time).
  std::vector<std::string> distribute(std::size_t count, const std::function<std::string(std::size_t)>& work,
                                      const std::function<void(std::size_t, const std::string&)>& done = {}) const;

 private:
  int rank_ = 0;
  int size_ = 1;
};
#endif

}  // namespace meshsim::cli
