// hfreduce-bench's ranks, deadlines and fault hook.
// SPDX-License-Identifier: Apache-2.0
#include "ranks.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef FFSIM_HFREDUCE_HAS_MPI
#include "ffsim/hfreduce/mpi_transport.hpp"
#endif

namespace ffsim::hfreduce::bench {

void leave(int code, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "hfreduce-bench: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(code);
}

void fault_point(const char* point, int rank) {
  static const char* spec = std::getenv("HFREDUCE_BENCH_FAULT");
  if (spec == nullptr || *spec == '\0') return;
  static int victim = -1;
  static std::string where;
  static int nth = 1;
  static bool parsed = false;
  if (!parsed) {
    parsed = true;
    char name[64] = {};
    if (std::sscanf(spec, "kill:%d:%63[a-z_]:%d", &victim, name, &nth) < 2)
      leave(kExitUsage, std::string("HFREDUCE_BENCH_FAULT: expected kill:<rank>:<point>[:<nth>], got \"") + spec + "\"");
    where = name;
  }
  static int seen = 0;
  if (rank != victim || where != point) return;
  if (++seen == nth) {
    std::fprintf(stderr, "hfreduce-bench: rank %d kills itself at %s (HFREDUCE_BENCH_FAULT)\n", rank, point);
    std::fflush(stderr);
    std::raise(SIGKILL);
  }
}

Watchdog::Watchdog(std::chrono::milliseconds timeout, std::string who) : timeout_(timeout), who_(std::move(who)) {
  thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Watchdog::Guard Watchdog::arm(const std::string& what) {
  {
    std::lock_guard lock(mutex_);
    armed_ = true;
    what_ = what;
    deadline_ = std::chrono::steady_clock::now() + timeout_;
  }
  cv_.notify_all();
  return Guard(*this);
}

void Watchdog::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
}

void Watchdog::run() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lock);
      continue;
    }
    const auto deadline = deadline_;
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && armed_ && deadline_ == deadline && !stop_) {
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%.3g", static_cast<double>(timeout_.count()) / 1000);
      leave(kExitFault, who_ + ": " + what_ + " did not complete within --timeout " + seconds +
                            " s; another rank died or stopped (exit 4)");
    }
  }
}

#ifdef FFSIM_HFREDUCE_HAS_MPI
namespace {
constexpr int kHeartbeatTag = 7001;
constexpr std::size_t kPlanBytes = 1024;
}  // namespace

MpiRanks::MpiRanks(MPI_Comm comm, Watchdog& watchdog) : watchdog_(watchdog) {
  FFSIM_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  FFSIM_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  FFSIM_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  FFSIM_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

void MpiRanks::barrier() {
  fault_point("barrier", rank_);
  auto guard = watchdog_.arm("a barrier");
  MPI_Request request = MPI_REQUEST_NULL;
  FFSIM_MPI_CHECK(MPI_Ibarrier(comm_, &request));
  int done = 0;
  auto test = [&] {
    FFSIM_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    return done != 0;
  };
  // Ranks leave the barrier within microseconds of the last one's arrival, as from a blocking
  // MPI_Barrier (which polls too): every rank's clock starts after it, and the slowest rank's
  // time is the repetition's, so a rank that slept through the release would add its lateness to
  // every timed call (sleeping 200 us between tests added 150-300 us to a 4 KiB ping-pong on a
  // 2-core VM, docs/hfreduce.md "The barrier's release"). Polling yields the core (ranks may
  // outnumber cores); a long wait (rank 0 alone in a stage) sleeps between tests after 10 ms.
  const auto poll_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
  while (!test()) {
    if (std::chrono::steady_clock::now() < poll_until) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

double MpiRanks::max(double value) {
  auto guard = watchdog_.arm("the exchange of a repetition's time (MPI_Allreduce of one double)");
  double result = 0;
  FFSIM_MPI_CHECK(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, comm_));
  return result;
}

double MpiRanks::sum(double value) {
  auto guard = watchdog_.arm("the sum of the ranks' CPU times (MPI_Allreduce of one double)");
  double result = 0;
  FFSIM_MPI_CHECK(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_SUM, comm_));
  return result;
}

int MpiRanks::broadcast(int value) {
  auto guard = watchdog_.arm("a broadcast from rank 0");
  FFSIM_MPI_CHECK(MPI_Bcast(&value, 1, MPI_INT, 0, comm_));
  return value;
}

void MpiRanks::agree(const std::string& plan) {
  std::vector<char> mine(kPlanBytes, '\0');
  std::memcpy(mine.data(), plan.data(), std::min(plan.size(), kPlanBytes - 1));
  std::vector<char> all(kPlanBytes * static_cast<std::size_t>(size_), '\0');
  {
    auto guard = watchdog_.arm("the check that every rank runs the same plan (MPI_Allgather)");
    FFSIM_MPI_CHECK(MPI_Allgather(mine.data(), static_cast<int>(kPlanBytes), MPI_CHAR, all.data(),
                                  static_cast<int>(kPlanBytes), MPI_CHAR, comm_));
  }
  const std::string first(all.data());
  for (int r = 1; r < size_; ++r) {
    const std::string other(all.data() + static_cast<std::size_t>(r) * kPlanBytes);
    if (other == first) continue;
    // every rank found the same pair: all leave with exit 2, rank 0 says why
    if (rank_ == 0) {
      std::fprintf(stderr,
                   "hfreduce-bench: the ranks disagree on what to measure: rank 0 has %s; rank %d has %s; give every "
                   "rank the same options\n",
                   first.c_str(), r, other.c_str());
    }
    std::fflush(stderr);
    FFSIM_MPI_CHECK(MPI_Barrier(comm_));  // all alive: let rank 0's message out before anyone leaves
    (void)MPI_Finalize();
    std::exit(kExitUsage);
  }
}

void MpiRanks::send_to_all(int value) {
  static int values[2] = {0, 1};  // persistent buffers: the sends are freed, not waited for
  for (int r = 1; r < size_; ++r) {
    MPI_Request request = MPI_REQUEST_NULL;
    FFSIM_MPI_CHECK(MPI_Isend(&values[value], 1, MPI_INT, r, kHeartbeatTag, comm_, &request));
    FFSIM_MPI_CHECK(MPI_Request_free(&request));
  }
}

void MpiRanks::heartbeat() {
  if (rank_ != 0 || size_ < 2) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_beat_ < watchdog_.timeout() / 4) return;
  last_beat_ = now;
  send_to_all(1);
}

void MpiRanks::done() {
  if (rank_ == 0 && size_ > 1) send_to_all(0);
}

void MpiRanks::wait_for_leader() {
  if (rank_ == 0) return;
  while (true) {
    int value = -1;
    MPI_Request request = MPI_REQUEST_NULL;
    FFSIM_MPI_CHECK(MPI_Irecv(&value, 1, MPI_INT, 0, kHeartbeatTag, comm_, &request));
    auto guard = watchdog_.arm("waiting for rank 0's single-node stages (no heartbeat)");
    int flag = 0;
    while (flag == 0) {
      FFSIM_MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
      if (flag == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (value == 0) return;
  }
}
#endif

}  // namespace ffsim::hfreduce::bench
