// Algorithm 1 of the HFReduce paper: chunked D2H -> CPU reduce -> inter-node stage -> H2D, pipelined.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ffsim/hfreduce/backend.hpp"
#include "ffsim/hfreduce/dtype.hpp"
#include "ffsim/hfreduce/reduce.hpp"
#include "ffsim/hfreduce/tree.hpp"

namespace ffsim::hfreduce {

/// Options of the intra-node pipeline.
struct PipelineOptions {
  /// Bytes per device per chunk (rounded down to whole elements, at least one).
  std::size_t chunk_bytes = std::size_t{4} << 20;
  /// Chunks in flight: staging slots, each holding one chunk per device plus one result chunk.
  int depth = 3;
  /// The CPU reduce (threads, ISA, store kind).
  ReducerOptions reducer;
};

/// One node's allreduce over all devices of a backend. For chunk c (slot c mod depth):
///   1. every device copies chunk c to its pinned staging buffer (D2H, one stream per device),
///   2. once all of chunk c's copies have landed, the CPU sums them into the slot's result buffer,
///   3. the result goes to the inter-node stage (if any; it runs on its own threads),
///   4. once that is done, every device copies the result back (H2D, a second stream per device).
/// D2H of chunk c + depth is issued as soon as chunk c's staging is summed, so copies of the next
/// chunks are in flight while chunk c is reduced and while it is on the network. Pinned buffers
/// are allocated once and reused. With one device the D2H lands in the result slot directly.
/// Not thread-safe: one allreduce at a time.
class Pipeline {
 public:
  /// backend and inter_node (null for a single node) must outlive the pipeline.
  explicit Pipeline(CopyBackend& backend, PipelineOptions options = {}, TreeAllreduce* inter_node = nullptr);
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline();

  /// Blocks until dst[d] holds, on every device d, the sum over devices (and nodes) of src[d]:
  /// count elements of dtype. src[d] may equal dst[d]. ready[d], when given and not null, is an
  /// event that device d's copies wait for before reading src[d] (e.g. the producer's stream).
  /// fingerprint goes to the inter-node stage (see TreeAllreduce::submit).
  /// On an error every copy already issued is waited for before the error is rethrown.
  void allreduce(DType dtype, std::span<const DevicePtr<const std::byte>> src,
                 std::span<const DevicePtr<std::byte>> dst, std::size_t count, std::span<Event* const> ready = {},
                 std::uint32_t fingerprint = 0);

  int devices() const noexcept { return devices_; }
  const PipelineOptions& options() const noexcept { return options_; }
  Reducer& reducer() noexcept { return reducer_; }

 private:
  std::size_t index(std::size_t slot, int device) const noexcept {
    return slot * static_cast<std::size_t>(devices_) + static_cast<std::size_t>(device);
  }

  CopyBackend& backend_;
  PipelineOptions options_;
  TreeAllreduce* inter_node_;
  int devices_;
  std::size_t depth_;
  Reducer reducer_;
  std::vector<std::unique_ptr<Stream>> d2h_;
  std::vector<std::unique_ptr<Stream>> h2d_;
  std::vector<HostBuffer> staging_;  // [slot][device], unused with one device
  std::vector<HostBuffer> result_;   // [slot]
  std::vector<std::unique_ptr<Event>> d2h_done_;  // [slot][device]
  std::vector<std::unique_ptr<Event>> h2d_done_;  // [slot][device]
};

}  // namespace ffsim::hfreduce
