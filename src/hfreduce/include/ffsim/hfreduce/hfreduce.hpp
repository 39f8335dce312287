// The hfreduce API, modelled on the published one: named tensors, fused destination, async_reduce, synchronize.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string_view>

#include "ffsim/hfreduce/backend.hpp"
#include "ffsim/hfreduce/dtype.hpp"
#include "ffsim/hfreduce/memory.hpp"
#include "ffsim/hfreduce/pipeline.hpp"
#include "ffsim/hfreduce/transport.hpp"
#include "ffsim/hfreduce/tree.hpp"

namespace ffsim::hfreduce {

/// Options of one node.
struct NodeOptions {
  int local_size = 1;  ///< local ranks (= devices of the backend) on this node
  int node_rank = 0;   ///< this node, in [0, node_count)
  int node_count = 1;  ///< nodes in all
  PipelineOptions pipeline;
  TreeOptions tree;  ///< tree.timeout bounds the wait for other nodes
  /// Longest wait for the other local ranks of this node to call async_reduce for a tensor that
  /// local rank 0 has submitted.
  std::chrono::milliseconds timeout{30000};
};

/// What the local ranks of one node share: the backend, the pipeline, the inter-node stage and one
/// engine thread that runs operations in the order local rank 0 submits them (so every node runs
/// the same sequence). An error other than a mismatch (timeout, transport, CUDA) breaks the group:
/// pending and later operations rethrow it.
class NodeGroup {
 public:
  /// backend.device_count() must equal options.local_size. transport may be null only when
  /// node_count is 1; otherwise its rank and size must be node_rank and node_count. backend and
  /// transport must outlive the group.
  NodeGroup(CopyBackend& backend, Transport* transport, NodeOptions options);
  NodeGroup(const NodeGroup&) = delete;
  NodeGroup& operator=(const NodeGroup&) = delete;
  ~NodeGroup();

  CopyBackend& backend() noexcept;
  const NodeOptions& options() const noexcept;

  struct Impl;

 private:
  friend class HfReduce;
  std::unique_ptr<Impl> impl_;
};

/// One local rank's handle (one device). The published constructor takes (local rank, local
/// size, node rank, node count, transport); here the shared parts live in the NodeGroup and are
/// checked against these arguments. Every method may be called from the local rank's own thread.
class HfReduce {
 public:
  HfReduce(NodeGroup& group, int local_rank, int local_size, int node_rank, int node_count);
  HfReduce(const HfReduce&) = delete;
  HfReduce& operator=(const HfReduce&) = delete;
  ~HfReduce();

  /// Declares a tensor of count elements of dtype. Every local rank (and every node) must register
  /// the same tensors; a different count or dtype for a known name throws MismatchError.
  void register_tensor(std::string_view name, std::size_t count, DType dtype);

  /// Results go to destination + fused_offset(name) instead of back into the reduced buffer.
  /// bytes is the destination's size; it must cover fused_bytes() when a tensor is reduced.
  void set_fused_destination(DevicePtr<std::byte> destination, std::size_t bytes);
  /// Offset (in bytes) of a tensor in the fused destination: tensors in registration order, each
  /// starting on a 256-byte boundary.
  std::size_t fused_offset(std::string_view name) const;
  /// Bytes the fused destination needs for every tensor registered so far.
  std::size_t fused_bytes() const;

  /// Queues the allreduce of tensor name: count elements at data on this rank's device, read once
  /// the work queued on stream so far has finished. The sum over all local ranks and nodes lands
  /// in data (or in the fused destination). Returns at once; errors surface in synchronize().
  void async_reduce(Stream& stream, std::string_view name, DevicePtr<std::byte> data, std::size_t count);

  /// Blocks until every async_reduce this rank queued on stream has completed; rethrows the first
  /// error among them (TimeoutError, MismatchError, KernelError).
  void synchronize(Stream& stream);

  int local_rank() const noexcept { return local_rank_; }

 private:
  NodeGroup::Impl& group_;
  int local_rank_;
};

}  // namespace ffsim::hfreduce
