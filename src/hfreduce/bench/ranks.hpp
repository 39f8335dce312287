// hfreduce-bench's ranks: one process, or the ranks of an MPI world, every collective with a deadline.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#ifdef FFSIM_HFREDUCE_HAS_MPI
#include <mpi.h>
#endif

namespace ffsim::hfreduce::bench {

/// Exit codes of hfreduce-bench (the project's): 2 usage (also ranks that disagree on their
/// options), 4 the measurement failed (a rank died or stopped: a collective missed its deadline).
constexpr int kExitUsage = 2;
constexpr int kExitFault = 4;

/// Prints "hfreduce-bench: <message>" to stderr and leaves at once with `code`, without
/// MPI_Finalize (which would wait for a dead rank) and without unwinding (threads may be inside MPI).
[[noreturn]] void leave(int code, const std::string& message);

/// Test hook: HFREDUCE_BENCH_FAULT=kill:<rank>:<point>[:<nth>] makes that rank SIGKILL itself the
/// nth time (default 1st) it reaches the named point: "barrier", "mpi_allreduce", "tree",
/// "sendrecv". Used by tests/hfreduce/run_bench_fault_test.cmake; unset, it does nothing.
void fault_point(const char* point, int rank);

/// Ends the process (leave(kExitFault, ...)) when an armed wait outlives its timeout. One thread;
/// arm() returns a guard that disarms on destruction. Blocking MPI calls cannot be cancelled, so
/// this is how a blocking collective (MPI_Allreduce as shipped, MPI_Sendrecv) gets a deadline.
class Watchdog {
 public:
  Watchdog(std::chrono::milliseconds timeout, std::string who);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog();

  class Guard {
   public:
    explicit Guard(Watchdog& dog) : dog_(&dog) {}
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard() { dog_->disarm(); }

   private:
    Watchdog* dog_;
  };
  [[nodiscard]] Guard arm(const std::string& what);
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }

 private:
  void disarm();
  void run();
  std::chrono::milliseconds timeout_;
  std::string who_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool stop_ = false;
  std::string what_;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

class Ranks {
 public:
  virtual ~Ranks() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Barrier that sleeps while it waits, so that idle ranks leave the cores to the measured one.
  virtual void barrier() = 0;
  virtual double max(double value) = 0;
  /// The sum over the ranks (every rank gets it).
  virtual double sum(double value) = 0;
  virtual int broadcast(int value) = 0;
  /// Every rank passes its plan (the options that decide which collectives it runs); a rank whose
  /// plan differs from rank 0's is a usage error on every rank (exit 2) naming both.
  virtual void agree(const std::string& plan) = 0;
  /// The leader works alone (single-node stages): it calls heartbeat() now and then and done()
  /// at the end; every other rank waits in wait_for_leader(), whose deadline each heartbeat renews.
  virtual void heartbeat() {}
  virtual void done() {}
  virtual void wait_for_leader() {}
};

class SingleRank final : public Ranks {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void barrier() override {}
  double max(double value) override { return value; }
  double sum(double value) override { return value; }
  int broadcast(int value) override { return value; }
  void agree(const std::string&) override {}
};

#ifdef FFSIM_HFREDUCE_HAS_MPI
/// The ranks of a communicator (the transport's duplicate). Every wait has the watchdog's deadline.
class MpiRanks final : public Ranks {
 public:
  MpiRanks(MPI_Comm comm, Watchdog& watchdog);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override;
  double max(double value) override;
  double sum(double value) override;
  int broadcast(int value) override;
  void agree(const std::string& plan) override;
  void heartbeat() override;
  void done() override;
  void wait_for_leader() override;
  MPI_Comm comm() const noexcept { return comm_; }
  Watchdog& watchdog() noexcept { return watchdog_; }

 private:
  void send_to_all(int value);
  MPI_Comm comm_;
  Watchdog& watchdog_;
  int rank_ = 0;
  int size_ = 1;
  std::chrono::steady_clock::time_point last_beat_{};
};
#endif

}  // namespace ffsim::hfreduce::bench
