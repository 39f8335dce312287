// MPI transport (OpenMPI point-to-point, nonblocking) and FFSIM_MPI_CHECK; MPI builds only.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <mpi.h>

#include <mutex>
#include <string>
#include <vector>

#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/transport.hpp"

namespace ffsim::hfreduce {

/// The text MPI gives for an error code.
std::string mpi_error_string(int code);

}  // namespace ffsim::hfreduce

/// Evaluates an MPI call; unless it returns MPI_SUCCESS, throws KernelError naming the call and the error.
#define FFSIM_MPI_CHECK(call)                                                                               \
  do {                                                                                                      \
    const int ffsim_mpi_status = (call);                                                                    \
    if (ffsim_mpi_status != MPI_SUCCESS) {                                                                  \
      FFSIM_KERNEL_THROW(::ffsim::hfreduce::KernelError, #call, " failed: ",                                \
                         ::ffsim::hfreduce::mpi_error_string(ffsim_mpi_status));                            \
    }                                                                                                       \
  } while (false)

namespace ffsim::hfreduce {

/// Transport over a duplicate of an MPI communicator (errors return instead of aborting).
/// MPI must be initialised with at least MPI_THREAD_SERIALIZED: the double binary tree calls MPI
/// from two threads. Below MPI_THREAD_MULTIPLE (or when serialize is true) every MPI call of this
/// transport holds one mutex; OpenMPI 4.1 built with thread support provides MPI_THREAD_MULTIPLE.
/// A request destroyed before completion (after a timeout) is cancelled or freed without waiting:
/// after such a failure the communicator is not to be used for hfreduce again.
class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MPI_Comm comm = MPI_COMM_WORLD, bool serialize = false);
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;
  ~MpiTransport() override;

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::string_view name() const noexcept override { return "mpi"; }
  std::int64_t max_tag() const noexcept override { return max_tag_; }
  std::unique_ptr<Request> isend(int peer, std::int64_t tag, const void* data, std::size_t bytes) override;
  std::unique_ptr<Request> irecv(int peer, std::int64_t tag, void* data, std::size_t bytes) override;
  /// The peers on this rank's node: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) at construction.
  bool shares_memory_with(int peer) const noexcept override;

  /// The duplicated communicator.
  MPI_Comm comm() const noexcept { return comm_; }
  /// True when calls are serialised by the transport's mutex.
  bool serialized() const noexcept { return serialize_; }
  /// Locks the mutex when calls are serialised; an empty lock otherwise.
  std::unique_lock<std::mutex> lock_if_serialized();

 private:
  void check(int peer, std::int64_t tag, std::size_t bytes) const;
  std::vector<bool> same_node_;  // by rank of comm_
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::int64_t max_tag_ = 32767;
  bool serialize_ = false;
  std::mutex mutex_;
};

/// MPI_Init_thread asking for MPI_THREAD_MULTIPLE, MPI_Finalize on destruction (RAII).
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession();
  /// Thread level MPI granted (MPI_THREAD_SINGLE .. MPI_THREAD_MULTIPLE).
  int provided() const noexcept { return provided_; }

 private:
  int provided_ = MPI_THREAD_SINGLE;
};

}  // namespace ffsim::hfreduce
