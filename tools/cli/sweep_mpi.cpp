#include "tools/cli/sweep_mpi.hpp"

#include <cstdlib>

#ifdef MESHSIM_HAVE_MPI
#include <mpi.h>

#include <chrono>
#include <mutex>
#include <thread>
#endif

namespace meshsim::cli {

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

#ifdef MESHSIM_HAVE_MPI
namespace {

constexpr int kAskTag = 1;   // worker -> rank 0: "" (first ask) or "INDEX\nTEXT" (a finished job)
constexpr int kJobTag = 2;   // rank 0 -> worker: a job index, or -1 (no more)

void send_text(const std::string& text, int to, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

}  // namespace

MpiSession::MpiSession() {
  int provided = 0;
  // Only the main thread calls MPI (rank 0's worker thread never does).
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

int MpiSession::broadcast(int value) const {
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return value;
}

std::vector<std::string> MpiSession::distribute(std::size_t count, const std::function<std::string(std::size_t)>& work,
                                                const std::function<void(std::size_t, const std::string&)>& done) const {
  if (rank_ != 0) {
    std::string message;  // nothing finished yet
    while (true) {
      send_text(message, 0, kAskTag);
      long long index = -1;
      MPI_Recv(&index, 1, MPI_LONG_LONG, 0, kJobTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (index < 0) return {};
      message = std::to_string(index) + '\n' + work(static_cast<std::size_t>(index));
    }
  }
  std::vector<std::string> texts(count);
  std::mutex mutex;
  std::size_t next = 0;
  const auto take = [&]() -> long long {
    std::lock_guard lock(mutex);
    return next < count ? static_cast<long long>(next++) : -1;
  };
  // Rank 0 works too, on its own thread; its main thread answers the other ranks.
  std::thread local([&] {
    for (long long index = take(); index >= 0; index = take()) {
      auto text = work(static_cast<std::size_t>(index));
      std::lock_guard lock(mutex);
      texts[static_cast<std::size_t>(index)] = std::move(text);
      if (done) done(static_cast<std::size_t>(index), texts[static_cast<std::size_t>(index)]);
    }
  });
  int stopped = 0;
  while (stopped < size_ - 1) {
    int waiting = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kAskTag, MPI_COMM_WORLD, &waiting, &status);
    if (!waiting) {
      // Polling with a pause, not a blocking receive: Open MPI spins in one, taking a
      // core from the local worker.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    std::string message(static_cast<std::size_t>(length), '\0');
    MPI_Recv(message.data(), length, MPI_CHAR, status.MPI_SOURCE, kAskTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (!message.empty()) {
      const auto newline = message.find('\n');
      const auto index = static_cast<std::size_t>(std::stoull(message.substr(0, newline)));
      std::lock_guard lock(mutex);
      texts[index] = message.substr(newline + 1);
      if (done) done(index, texts[index]);
    }
    long long index = take();
    MPI_Send(&index, 1, MPI_LONG_LONG, status.MPI_SOURCE, kJobTag, MPI_COMM_WORLD);
    if (index < 0) ++stopped;
  }
  local.join();
  return texts;
}
#endif

}  // namespace meshsim::cli
