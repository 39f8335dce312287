// Inter-node allreduce: NCCL 2.4's double binary tree (Algorithm 2 of the HFReduce paper), chunk-pipelined.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "ffsim/hfreduce/cpu.hpp"
#include "ffsim/hfreduce/dtype.hpp"
#include "ffsim/hfreduce/transport.hpp"

namespace ffsim::hfreduce {

/// One rank's links in one binary tree; -1 = none.
struct TreeLinks {
  int parent = -1;
  std::array<int, 2> children{-1, -1};
};

/// The two trees of NCCL 2.4's double binary tree (ncclGetBtree / ncclGetDtree) seen from rank.
/// Tree 0 is an in-order binary tree over ranks 0..n-1 rooted at 0 (its interior nodes are the
/// even ranks); tree 1 is its mirror r -> n-1-r when n is even, or its shift r -> r+1 when n is
/// odd, so most ranks are interior in one tree and a leaf in the other:
/// ```
///   n = 8   tree 0:       0        tree 1 (mirror):     7     root
///                         |                             |
///                         4                             3     depth 1
///                       /   \                         /   \   at most 2 children
///                      2     6                       5     1  depth 2
///                     / \   / \                     / \   / \   up: partial sums; down: the sum
///                    1   3 5   7                   6   4 2   0  depth 3
///   (tree 0's interior ranks 2, 4, 6 are leaves in tree 1, and 1, 3, 5 the other way round)
/// ```
std::array<TreeLinks, 2> double_binary_tree(int ranks, int rank);

/// Options of the inter-node stage.
struct TreeOptions {
  /// Largest message (in bytes): each tree's half of a chunk is cut into slices of this size.
  std::size_t slice_bytes = std::size_t{512} << 10;
  /// Slices one tree keeps in flight (pipeline depth); each holds 2 receive buffers of slice_bytes.
  int window = 4;
  /// A rank that sees no progress (no message completes) for this long throws TimeoutError.
  std::chrono::milliseconds timeout{30000};
  /// Threads that drive the two trees: 2 (one per tree), 1 (one thread polls both trees in turn)
  /// or 0 = auto: 1 where the process may use fewer than 4 CPUs, else 2. On a 2-CPU machine two
  /// ranks with two busy tree threads each put 4 pollers on 2 cores, and the MPI progress engine
  /// is entered from two threads at once; one thread per rank avoids both (measured in
  /// docs/hfreduce.md, "Inter-node tree").
  int threads = 0;
  /// Slices of one tree whose receives may be posted at a time: 1 to window, or 0 = auto: 1 where
  /// a peer of the tree shares this rank's memory (Transport::shares_memory_with), else the window.
  /// A posted receive is a copy the transport may make in any later test: over shared memory
  /// Open MPI's receiver copies every message that has arrived for a posted receive in the first
  /// test that finds it, so a window of posted receives is copied in one test while no slice is
  /// summed and no result leaves, and two ranks take turns (docs/hfreduce.md, "Receives one slice
  /// at a time"). With one slice posted the copies interleave with the sums. A NIC that moves the bytes
  /// (RDMA) costs the CPU nothing per posted receive: there the whole window is posted.
  int receives = 0;
  /// Path of the adds; unset = default_isa().
  std::optional<Isa> isa;
};

/// In-place sum over all ranks of a transport: two trees each carry half of every buffer, reduce
/// up then broadcast down, one thread per tree, slices pipelined. Every rank must submit the same
/// sequence of (count, dtype); results are identical on all ranks (the root's sums are broadcast).
/// Summation order at a rank: own + first child + second child, rounded once to the dtype.
/// After a failure (timeout, transport error) the object is broken: every pending and later
/// operation rethrows that first error.
class TreeAllreduce {
 public:
  using Ticket = std::uint64_t;

  /// The transport must outlive this object.
  TreeAllreduce(Transport& transport, TreeOptions options = {});
  TreeAllreduce(const TreeAllreduce&) = delete;
  TreeAllreduce& operator=(const TreeAllreduce&) = delete;
  ~TreeAllreduce();

  /// Starts summing count elements of dtype at data (which must stay valid until done) across
  /// ranks. fingerprint (e.g. a hash of a tensor name) goes into the message tags when the tag
  /// space allows, so ranks reducing different things never exchange data silently.
  Ticket submit(void* data, std::size_t count, DType dtype, std::uint32_t fingerprint = 0);
  /// True when the operation has completed; throws its error if it failed (by then neither
  /// tree thread touches its data any more).
  bool done(Ticket ticket);
  /// Blocks until the operation has completed; throws its error if it failed (by then neither
  /// tree thread touches its data any more).
  void wait(Ticket ticket);
  /// Blocks until no operation is in flight (each has completed or been abandoned after a failure).
  void quiesce();
  /// Out of place: the sum of every rank's src lands in data (src is only read; the two must not
  /// overlap). A leaf sends straight from src and an interior rank sums src and its children's
  /// halves into data, so out of place costs no extra copy.
  Ticket submit(const void* src, void* data, std::size_t count, DType dtype, std::uint32_t fingerprint = 0);
  /// submit + wait.
  void allreduce(void* data, std::size_t count, DType dtype, std::uint32_t fingerprint = 0);
  void allreduce(const void* src, void* data, std::size_t count, DType dtype, std::uint32_t fingerprint = 0);
  /// Threads driving the trees (TreeOptions::threads resolved): 1 or 2; 0 for a single rank.
  int threads() const noexcept { return size_ > 1 ? threads_ : 0; }
  /// Slices of tree t (0 or 1) whose receives may be posted at a time (TreeOptions::receives
  /// resolved): 1 to the window; 0 for a single rank.
  int receives(int tree) const noexcept;

  /// Blocks until every rank has passed its description (e.g. "tensor 'w1': 1000 x fp32"); throws
  /// MismatchError naming two ranks that differ, on every rank, or TimeoutError.
  void check_consistent(std::string_view description);

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  const std::array<TreeLinks, 2>& links() const noexcept { return links_; }
  const TreeOptions& options() const noexcept { return options_; }

  class Worker;
  class Engine;
  struct Job {
    int halves_left = 2;  // halves still held by a tree thread (running, or queued)
    std::exception_ptr error;
  };

 private:
  friend class Worker;
  friend class Engine;
  void finish_half(Ticket ticket, std::exception_ptr error);
  void fail(std::exception_ptr error);
  std::int64_t tag(std::uint64_t sequence, std::uint32_t fingerprint, int channel) const noexcept;

  Transport& transport_;
  TreeOptions options_;
  Isa isa_;
  int rank_;
  int size_;
  std::array<TreeLinks, 2> links_;
  bool use_fingerprint_ = false;
  std::uint64_t sequence_space_ = 0;
  std::uint64_t meta_sequence_ = 0;

  std::mutex mutex_;
  std::condition_variable done_cv_;
  Ticket next_ticket_ = 1;
  std::map<Ticket, Job> jobs_;
  std::exception_ptr failure_;
  std::atomic<bool> failed_{false};
  int threads_ = 2;
  std::array<std::unique_ptr<Worker>, 2> workers_;
  std::array<std::unique_ptr<Engine>, 2> engines_;
};

}  // namespace ffsim::hfreduce
