// Shared machinery of the algorithms: ring orders, hop latencies, step barriers, data buffers,
// and the bottleneck bound used by the closed-form estimates.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "coll/collective.hpp"

namespace ffsim::coll {

/// NCCL's ring order: nodes in group order; inside a node, with `numa_restricted`, the ring enters
/// and leaves through GPUs on the NIC's socket (NIC-socket GPUs split around the others), so that
/// GPU<->NIC traffic never crosses the socket link.
[[nodiscard]] std::vector<int> ring_order(const platform::Platform& p, const Group& g, bool numa_restricted);

/// NCCL's rings over a group that spans nodes with several compute NICs: one ring per NIC (NCCL
/// builds its channels rail by rail, each entering and leaving a node through one NIC's GPUs).
/// Ring r enters each node at the GPU whose NIC is the node's r-th compute NIC, visits the node's
/// other GPUs in index order and leaves from the other GPU nearest that NIC (the second GPU of a
/// DGX-style PCIe switch), so both ends of every hop between nodes sit by one NIC (and its plane)
/// and every NIC carries one ring. With one compute NIC, or a group inside one node: the single
/// ring_order.
[[nodiscard]] std::vector<std::vector<int>> ring_orders(const platform::Platform& p, const Group& g, bool numa_restricted);

enum class HopType { NvLink, Pci, Net };
[[nodiscard]] HopType hop_type(const platform::Platform& p, const sched::Place& a, const sched::Place& b);
/// NCCL's per-hop latency of a ring step, or with `tree` of a tree hop, for the hop from `a` to `b`,
/// by its type, in the protocol the schedules move (lib.nccl.protocol: Simple unless "nccl" runs
/// NCCL's pick).
[[nodiscard]] double nccl_hop_latency(const platform::Platform& p, const LibraryParams& lib, const sched::Place& a,
                                      const sched::Place& b, bool tree = false);

/// The tree allreduce's pipeline chunk (data bytes) in lib.nccl.protocol. LL: one step of its buffer
/// (ll/step_size); LL128: NCCL's rule for it (nccl_tree_chunk's comment in common.cpp); Simple:
/// `tree_chunk` where the library gives a size; with
/// "nccl", NCCL's own rule for the Simple protocol (src/enqueue.cc computeColl, NCCL 2.x): one step
/// (`step_size`: NCCL_BUFFSIZE / NCCL_STEPS), halved while a channel would get fewer than depth x 8
/// chunks (down to 128 KiB), depth x 4 (down to 64 KiB) and depth (down to 32 KiB), with depth =
/// ranks / nodes - 1 + floor(log2(nodes)) (src/graph/connect.cc, connectTrees).
/// `channel_bytes`: the bytes one channel (one of the trees) carries.
[[nodiscard]] double nccl_tree_chunk(const LibraryParams& lib, double channel_bytes, int ranks, int nodes);
/// The rate cap of one flow of NCCL's active protocol (lib.nccl.protocol), in bytes on the wire per
/// second, for a flow that carries `channels` of NCCL's channels (a ring of one rail: lib.nccl.channels;
/// one tree of a rail's pair: half of them), of `rings` rings, over `nodes` nodes: LL128 its
/// per-channel ceiling (tuning.cc ll128MaxBwPerCh, the allreduce entry), the LL ring its bus
/// bandwidth ceiling split over the rings (llMaxBws by node count); none (infinity) for Simple and
/// the LL tree. NCCL's model also discounts the protocols' bandwidth (ring LL x 1/4, tree LL / 3.8,
/// LL128 x 0.92) against its own rating of the links; the schedules move the bytes on the wire
/// (wire_factor) over the platform's links instead.
[[nodiscard]] double nccl_protocol_cap(const LibraryParams& lib, bool tree, double channels, int rings, int nodes);
/// NCCL's channels (lib.nccl.channels per compute NIC of the node) over `rings` rings: what one
/// ring's flow carries (a tree of a ring's pair: half of it).
[[nodiscard]] double nccl_channels_per_ring(const platform::Platform& p, const LibraryParams& lib, int rings);
/// Puts a finite protocol cap (nccl_protocol_cap) on transfer `op`; an infinite one leaves it uncapped.
/// Returns `op`.
sched::OpId with_protocol_cap(sched::Schedule& s, sched::OpId op, double cap);
/// What nccl_protocol_cap is, for bound labels.
[[nodiscard]] const char* nccl_protocol_cap_what(const LibraryParams& lib);

/// The pieces of at most `piece` bytes that `bytes` is cut into (at least 1), for a schedule that
/// repeats each piece for `copies` ranks or nodes. More pieces x copies than a schedule holds
/// (sched::Schedule::kMaxOps) is a SimulationError at once, before any piece is built (and the
/// count stays an int). Closed forms count pieces in doubles instead (piece_count_real).
[[nodiscard]] int piece_count(double bytes, double piece, int copies);
[[nodiscard]] double piece_count_real(double bytes, double piece);

/// How a library cuts `bytes` into pieces of at most `piece` bytes: whole pieces, the remainder as
/// one shorter piece last (our hfreduce cuts its chunks and tree slices so, src/hfreduce/pipeline.cpp
/// and tree.cpp; NCCL's tree and broadcast loops cut chunkSize pieces, the last one short). A vector
/// one byte over k pieces is k pieces and a 1-byte one, not k + 1 equal ones (which would pipeline
/// better than the k whole pieces). `count` = piece_count_real; piece <= 0 or bytes <= piece: one piece.
struct Cut {
  double count = 1;  ///< pieces (a double for closed forms; piece_count checks it for schedules)
  double piece = 0;  ///< bytes of each piece but the last (the whole vector when there is one)
  double last = 0;   ///< bytes of the last piece, in (0, piece] (bytes > 0)
  [[nodiscard]] double off(int i) const { return i * piece; }
  [[nodiscard]] double len(int i) const { return i + 1 < count ? piece : last; }
  /// The last piece's share of a whole one, in (0, 1]: a pipeline's last period scales by it.
  [[nodiscard]] double last_share() const { return piece > 0 ? last / piece : 1.0; }
};
[[nodiscard]] Cut cut(double bytes, double piece);
/// The same for a schedule that repeats each piece for `copies` ranks or nodes, checked as
/// piece_count checks it (a SimulationError before any piece is built when they are too many).
[[nodiscard]] Cut cut(double bytes, double piece, int copies);
/// [begin, end) in elements of piece `i` of `count` of `elems` elements cut as `cut` cuts bytes:
/// pieces of max(1, floor(piece_bytes / elem_size)) elements, the last one to the end.
[[nodiscard]] std::pair<std::size_t, std::size_t> cut_elems(std::size_t elems, double piece_bytes, int elem_size,
                                                            int count, int i);
/// Throws the SimulationError above when `ops` operations (what: how they come about) exceed what
/// a simulated schedule holds.
void check_schedule_size(double ops, const std::string& what);

/// The latency a hop of NCCL's kernels pays from `from` to `to`, given NCCL's per-hop latency for
/// it: inside a node NCCL's own (its kernels move the data with loads and stores over NVLink or
/// PCIe, not with a copy engine, so the path's latency, a DMA copy's setup ([I] pcie_latency),
/// does not apply; NCCL's hwLat is its measured hop), between nodes the longer of NCCL's and the
/// path's (the NIC and the fabric's switches are physical facts NCCL's constant does not scale
/// with). Until 2026-12-07 every hop paid the longer of the two: LL's NVLink hops (0.47 and 0.52
/// us) paid the path's 1 us, an 8-GPU DGX-A100 ring LL 17.6 us at 4 KiB against NCCL's 10.2.
[[nodiscard]] double nccl_path_latency(const platform::Platform& p, double hop_latency, const sched::Place& from,
                                       const sched::Place& to);

/// A transfer after `before` (kNoOp: after nothing) that pays `latency` before its data moves instead
/// of its path's (NaN: its path's; Schedule::set_latency), with data semantics where `src` is given.
sched::OpId transfer_after(sched::Schedule& s, sched::OpId before, const sched::Place& from, const sched::Place& to,
                           double bytes, sched::TrafficClass cls, std::uint32_t tag, const sched::DataRef* src,
                           const sched::DataRef* dst, double latency);

/// Emits `before` -> [software delay] -> transfer; returns the transfer, which takes
/// nccl_path_latency in all: the delay is what the hop's latency exceeds the path's by (never
/// negative), and inside a node a hop latency below the path's is the transfer's own (Schedule::set_latency).
sched::OpId hop_transfer(sched::Schedule& s, const platform::Platform& p, double hop_latency, sched::OpId before,
                         const sched::Place& from, const sched::Place& to, double bytes, sched::TrafficClass cls,
                         std::uint32_t tag, const sched::DataRef* src = nullptr, const sched::DataRef* dst = nullptr);

/// A hop of a chunk pipeline whose connection keeps several steps in flight (NCCL's Simple protocol):
/// the software delay runs from `data_ready`, beside the previous chunk's send on the connection
/// (`prev_send`), and the bytes move once both are over, so the latency is paid once per hop in the
/// pipeline's fill, not per chunk (NCCL's tree latency model: once per hop and operation).
sched::OpId pipelined_hop_transfer(sched::Schedule& s, const platform::Platform& p, double hop_latency,
                                   sched::OpId data_ready, sched::OpId prev_send, const sched::Place& from,
                                   const sched::Place& to, double bytes, sched::TrafficClass cls, std::uint32_t tag,
                                   const sched::DataRef* src = nullptr, const sched::DataRef* dst = nullptr);

/// A zero-time op that waits for all of `ops` (kNoOp entries ignored); kNoOp if `ops` is empty.
sched::OpId barrier(sched::Schedule& s, const std::vector<sched::OpId>& ops, std::uint32_t tag = 0);

/// Seconds a GPU reduce kernel of `bytes` takes (reads 2, writes 1 through its memory).
[[nodiscard]] double gpu_reduce_time(const platform::Platform& p, const sched::Place& gpu, double bytes);

/// [begin, end) in elements of part `i` of `n` of `elems` elements (sizes differ by at most one).
[[nodiscard]] std::pair<std::size_t, std::size_t> split(std::size_t elems, int n, int i);

/// Index of the socket named `name` in the node (0 if there is none of that name).
[[nodiscard]] int socket_index(const hw::NodeSpec& n, const std::string& name);

/// The per-rank "ready" op of options (kNoOp if none).
[[nodiscard]] sched::OpId ready_of(const Options& o, int rank);

/// Classes of a node's GPUs whose copies nothing tells apart, for transfers that run as one flow
/// (sched::Schedule::replicate, Options::replicas). `copies[l]` are GPU l's copies as (from, to)
/// places, one per kind (the same kinds in the same order for every GPU), `others` every other
/// transfer of the node. GPUs join a class when, kind by kind, the router can run their copies as
/// one flow (Router::replicable), no resource of one GPU's own (where their paths differ) is on
/// another GPU's copies or on `others`, and each GPU's own resources answer to the first GPU's the
/// same way in every kind. Then swapping two GPUs of a class, with their own resources, maps the
/// node's flows onto themselves, so their max-min rates are equal and one flow stands for all.
/// Classes in the order of their first GPU (which stands for the others), each ascending; a GPU
/// like no other is a class of its own.
[[nodiscard]] std::vector<std::vector<int>> alike_gpus(
    const platform::Platform& p, const std::vector<std::vector<std::pair<sched::Place, sched::Place>>>& copies,
    const std::vector<std::pair<sched::Place, sched::Place>>& others);

/// A collective that moves nothing (one rank of the host-path shards, or a zero-byte call of the
/// HFReduce family, which our library returns from at once: src/hfreduce/pipeline.cpp returns at
/// count 0): every rank is done when it is ready. With data, each rank gets a `full`-byte buffer
/// as input and output; a sharded collective's ranges (its results' for a reduce-scatter, its
/// contributions' for an allgather) are empty for every rank (n > 1).
enum class Shards { None, Results, Contributions };
[[nodiscard]] Emitted no_traffic(sched::Schedule& s, const Group& g, double full, const Options& o, Shards shards);

/// The bottleneck bound of a set of concurrent flows: max over resources of load / capacity and
/// over flows of bytes / rate cap, with the resource that binds.
struct Bound {
  double time = 0;
  std::uint32_t resource = eval::kLimitNone;  ///< or kLimitRateCap
  const char* cap_what = nullptr;             ///< with kLimitRateCap: what sets the binding cap, when known
};
[[nodiscard]] Bound bottleneck_bound(const platform::Platform& p,
                                     const std::vector<std::pair<std::uint32_t, double>>& path_bytes);
/// Each flow's bound under the loads of all of them: the larger of its bytes over its own rate cap
/// and, over the resources on its path, the resource's whole load over its capacity (a both-ways
/// cap where both directions carry flows). Where a flow's bottleneck carries flows of its own size
/// (a ring's step), that is its max-min completion time.
[[nodiscard]] std::vector<double> flow_bound_times(const platform::Platform& p,
                                                   const std::vector<std::pair<std::uint32_t, double>>& path_bytes);
/// The same from bytes per resource id (Platform::PairLoads::load) and the flows' longest time at
/// their own rate caps (0: none).
[[nodiscard]] Bound bottleneck_bound(const platform::Platform& p, const std::vector<double>& load, double cap_time);
[[nodiscard]] std::string bound_label(const platform::Platform& p, std::uint32_t resource);
/// The same for a bound, naming the cap that binds where the bound knows it.
[[nodiscard]] std::string bound_label(const platform::Platform& p, const Bound& b);
/// Bytes the flows put through GPU node `node`'s host memory (every DRAM resource of the node on
/// their paths, summed).
[[nodiscard]] double host_memory_bytes(const platform::Platform& p,
                                       const std::vector<std::pair<std::uint32_t, double>>& path_bytes, int node);

}  // namespace ffsim::coll
