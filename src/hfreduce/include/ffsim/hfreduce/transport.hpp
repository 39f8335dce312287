// Inter-node transport: tagged nonblocking point-to-point messages between ranks (one rank = one node).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace ffsim::hfreduce {

/// A posted send or receive. Destroying an incomplete request cancels it where the transport can.
class Request {
 public:
  virtual ~Request() = default;
  /// True once complete (the buffer may be reused / holds the message). Throws KernelError on a
  /// failed transfer, e.g. a message whose size differs from the posted receive.
  virtual bool test() = 0;
};

/// Messages match on (source, destination, tag) and arrive in order for equal triples, as in MPI.
/// Safe to call from several threads at once.
class Transport {
 public:
  virtual ~Transport() = default;
  /// This rank, in [0, size()).
  virtual int rank() const noexcept = 0;
  /// Ranks in all.
  virtual int size() const noexcept = 0;
  /// Registry name: "loopback" or "mpi".
  virtual std::string_view name() const noexcept = 0;
  /// Largest usable tag (MPI guarantees at least 32767).
  virtual std::int64_t max_tag() const noexcept = 0;
  /// Sends bytes at data to peer; data must stay valid and unchanged until the request completes.
  virtual std::unique_ptr<Request> isend(int peer, std::int64_t tag, const void* data, std::size_t bytes) = 0;
  /// Receives exactly bytes from peer into data.
  virtual std::unique_ptr<Request> irecv(int peer, std::int64_t tag, void* data, std::size_t bytes) = 0;
  /// True where messages between this rank and peer go through memory both share (ranks on one
  /// node), so that a CPU copies them: with Open MPI's shared-memory single copy (CMA) the
  /// receiver's, inside whichever of its tests first finds the message, every posted receive that
  /// has a message at once. False over a network whose NICs move the bytes, and where the
  /// transport cannot tell.
  virtual bool shares_memory_with(int peer) const noexcept {
    (void)peer;
    return false;
  }
};

/// In-process transport for ranks run as threads: every rank connects to one hub. Sends are
/// buffered (copied at once, complete immediately); receives complete when a message is there.
class LoopbackHub {
 public:
  explicit LoopbackHub(int ranks);
  ~LoopbackHub();
  LoopbackHub(const LoopbackHub&) = delete;
  LoopbackHub& operator=(const LoopbackHub&) = delete;
  int size() const noexcept;
  /// The transport of rank; the hub must outlive it.
  std::unique_ptr<Transport> connect(int rank);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace ffsim::hfreduce
