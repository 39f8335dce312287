// Collective algorithms: each emits a Schedule (design.md section 1) that both engines run and
// that the data-movement check executes; a registry names them (one file per algorithm).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "eval/engine.hpp"
#include "platform/platform.hpp"
#include "sched/schedule.hpp"

namespace ffsim::coll {

enum class Kind { AllReduce, ReduceScatter, AllGather, AllToAll, Broadcast, SendRecv };
[[nodiscard]] const char* kind_name(Kind k);

/// nccl-tests' bus bandwidth factor: busbw = algbw x factor (AllReduce 2(n-1)/n; ReduceScatter,
/// AllGather, AllToAll (n-1)/n; Broadcast and SendRecv 1).
[[nodiscard]] double busbw_factor(Kind k, int ranks);

/// NCCL's protocols (src/include/devcomm.h, NCCL 2.7: NCCL_PROTO_LL, NCCL_PROTO_LL128,
/// NCCL_PROTO_SIMPLE), in NCCL's order: its selection loop keeps the first of equal times.
enum class NcclProtocol { LL = 0, LL128 = 1, Simple = 2 };
inline constexpr int kNcclProtocols = 3;
[[nodiscard]] const char* protocol_name(NcclProtocol p);  ///< "LL", "LL128", "Simple"

/// One protocol's rows of tuning.cc's baseLat and hwLat tables (seconds), and its row of the tree
/// correction factors (index log2(bytes / 64); sizes past the row get none).
struct NcclProtocolLatencies {
  double ring_base_latency = 0;
  double tree_base_latency = 0;
  double ring_hop_latency_nvlink = 0, ring_hop_latency_pci = 0, ring_hop_latency_net = 0;
  double tree_hop_latency_nvlink = 0, tree_hop_latency_pci = 0, tree_hop_latency_net = 0;
  std::vector<double> tree_correction;
  /// What one step moves (LL, LL128; the Simple protocol's is NcclParams::step_size): the data bytes
  /// of one step of the protocol's buffer (its buffer / NCCL_STEPS, less the flags), the tree's chunk
  /// before nccl_tree_chunk's halving. 0 for Simple.
  double step_size = 0;
  /// Bytes on the wire per data byte: LL's 16-byte lines carry 8 bytes of data, LL128's 128-byte
  /// lines 120; Simple 1.
  double wire_factor = 1;
};

/// NCCL's tuning constants (src/graph/tuning.cc), for its per-step software latency and its own
/// choice of algorithm and protocol. Values come from models/libraries/nccl.json: its top-level
/// latencies are the Simple protocol's (`simple`), `ll` and `ll128` hold the other protocols' rows
/// and their steps and bytes on the wire; the schedules move `protocol`'s.
struct NcclParams {
  NcclProtocolLatencies simple;      ///< the Simple protocol's latencies (seconds) and tree correction factors
  int channels = 2;                  ///< channels NCCL builds per compute NIC (its own cost model)
  double max_bus_bw = 0;             ///< tuning.cc: bus bandwidth cap of its cost model (sm80)
  double tree_chunk_bytes = 0;       ///< the tree's and broadcast's pipeline chunk; 0: NCCL's rule (nccl_tree_chunk)
  double step_size = 0;              ///< NCCL_BUFFSIZE / NCCL_STEPS: NCCL's own chunk before nccl_tree_chunk's halving
  double pci_speed = 0;              ///< bytes/s per channel NCCL assumes for a PCIe hop
  double net_speed = 0;              ///< bytes/s per channel NCCL assumes for the NIC
  double tree_bw_factor = 0.9;       ///< tuning.cc: tree busBw x 0.9 (0.92 is LL128's factor); nccl.json sets it
  double ring_plateau_factor = 1;    ///< tuning.cc: the ring's latency x this for a multi-node allreduce ...
  double ring_plateau_bytes_per_rank = 0;  ///< ... of at least this many bytes per rank (nRanks/16 x 64 KiB)
  bool numa_restricted = true;       ///< use the GPUs and NIC of one NUMA node at node boundaries
  /// The protocol the ring and tree schedules move: its latencies, chunk, bytes on the wire and
  /// per-channel cap (nccl_protocol_cap). Not read from JSON: Simple, except where "nccl" runs
  /// NCCL's pick (nccl_select.cpp) with the protocol of that pick.
  NcclProtocol protocol = NcclProtocol::Simple;
  /// A protocol's latencies, tree correction, step and wire factor.
  [[nodiscard]] const NcclProtocolLatencies& of(NcclProtocol p) const {
    return p == NcclProtocol::LL ? ll : p == NcclProtocol::LL128 ? ll128 : simple;
  }
  /// Those of `protocol`, the one the schedules move.
  [[nodiscard]] const NcclProtocolLatencies& active() const { return of(protocol); }
  /// The ring LL's bus bandwidth cap over `nodes` nodes (tuning.cc llMaxBws: one, two, more).
  [[nodiscard]] double ll_max_bus_bw(int nodes) const {
    return nodes <= 1 ? ll_max_bus_bw_one_node : nodes == 2 ? ll_max_bus_bw_two_nodes : ll_max_bus_bw_more_nodes;
  }
  // ---- the choice of protocol (tuning.cc ncclTopoTuneModel, ncclTopoGetAlgoTime)
  NcclProtocolLatencies ll, ll128;                ///< LL's and LL128's latencies and tree correction factors
  double ll_ring_bw_factor = 0.25;                ///< ring LL: busBw x this ...
  double ll_max_bus_bw_one_node = 0;              ///< ... at most this on one node,
  double ll_max_bus_bw_two_nodes = 0;             ///< two nodes,
  double ll_max_bus_bw_more_nodes = 0;            ///< more nodes (llMaxBws)
  double ll_tree_bw_divisor = 3.8;                ///< tree LL: busBw / this
  double ll128_bw_factor = 0.92;                  ///< LL128: busBw x this ...
  double ll128_bw_factor_one_gpu_per_node = 0.7;  ///< ... or this with fewer than 2 ranks per node,
  double ll128_max_bw_per_channel = 0;            ///< ... at most channels x this (ll128MaxBwPerCh, allreduce)
};

/// HFReduce's parameters (arXiv 2408.14158 Sec. IV; unpublished ones are marked [I] in the JSON).
struct HfreduceParams {
  double chunk_bytes = 0;          ///< pipeline chunk: bytes of the vector (NVLink: half of it per GPU of a pair)
  double tree_slice_bytes = 0;     ///< the trees pipeline each chunk's part in slices of this size (0: whole parts)
  int staging_buffers = 4;         ///< chunks in flight per GPU (pinned staging buffers reused)
  /// 0: the reduce writes into a result buffer as large as the vector (the model of Fire-Flyer's
  /// HFReduce); k > 0: the result has k chunk-sized slots, reused: a chunk's reduce waits until chunk
  /// c - k went back to every GPU (our library: src/hfreduce/pipeline.cpp, PipelineOptions::depth;
  /// with one GPU the D2H lands in the slot, which staging_buffers already orders). Set by
  /// calibration's simulation of hfreduce-bench (src/calib/bench_model.cpp), not read from JSON.
  int result_slots = 0;
  /// Seconds a device copy waits for its stream to take it up, paid only when the stream's queue
  /// ran empty: a copy queued behind the one before starts as that one ends. 0: none (a copy's
  /// latency is its path's, paid by every copy). Our library's host backend: the copy thread sleeps
  /// once its queue is empty and is woken for the next copy (src/hfreduce/host_backend.cpp). The
  /// D2H copies and memcpy H2Ds take it; a GDRCopy H2D is the cores' own write, on no stream.
  /// Set by calibration's simulation of hfreduce-bench (src/calib/bench_model.cpp), not read from JSON.
  double copy_handoff = 0;
  double chunk_overhead = 0;       ///< seconds of software work per chunk and stage
  std::string h2d = "gdrcopy";     ///< "gdrcopy" (CPU reads once per socket, writes 4 GPUs) or "memcpy"
  double gdrcopy_write_bandwidth = 0;  ///< bytes/s a CPU thread writes through a GPU BAR
  bool interleave_d2h = true;      ///< D2H buffers interleaved over both NUMA nodes
};

/// What a collective library is tuned with (config/coll_reader.hpp reads it from models/libraries/).
struct LibraryParams {
  NcclParams nccl;
  HfreduceParams hfreduce;
};

/// The GPUs taking part, in rank order (ranks of a node are consecutive).
struct Group {
  std::vector<sched::Place> ranks;
  [[nodiscard]] int size() const { return static_cast<int>(ranks.size()); }
  /// Distinct nodes in order of first appearance, and each node's ranks.
  [[nodiscard]] std::vector<int> nodes() const;
  [[nodiscard]] std::vector<std::vector<int>> ranks_by_node() const;
  /// The first `gpus` GPUs of the cluster, node by node.
  static Group first_gpus(const platform::Platform& p, int gpus);
};

inline constexpr sched::OpId kNoOp = std::numeric_limits<sched::OpId>::max();

struct Options {
  int elem_size = 4;                ///< bytes per element (fp32)
  bool with_data = false;           ///< emit buffers and data refs for the data-movement check
  sched::TrafficClass cls = sched::TrafficClass::Other;  ///< set by each algorithm's default if Other
  /// Ops each rank must wait for before starting (kNoOp or empty: none).
  std::vector<sched::OpId> ready;
  int root = 0;                     ///< Broadcast root rank; SendRecv: sender 0 -> receiver 1
  /// Copies that nothing tells apart (a node's alike GPUs: alike_gpus in common.hpp) may be one
  /// replicated transfer (sched::Schedule::replicate), which an engine that runs replicas runs as
  /// one flow. Only where the collective runs alone (no other flow crosses a GPU's own link), with
  /// no `ready` and no data: simulate() sets it for such an engine; simulate_full() never does.
  bool replicas = false;
};

/// What an emitted collective gives back.
struct Emitted {
  std::vector<sched::OpId> done;             ///< per rank: the op after which its result is complete
  std::vector<sched::BufferId> input, output;  ///< per rank, when with_data
  double data_bytes = 0;                     ///< size of each input buffer
  /// Per rank (offset, bytes) of its contribution in `input` and of its result in `output`;
  /// empty: the whole buffer.
  std::vector<std::pair<double, double>> in_range, out_range;
};

/// What the size of a collective's schedule depends on, known from the scenario alone (before the
/// platform is built): the size guard (src/coll/size_guard.hpp) sizes a request with it.
struct GroupShape {
  int ranks = 1;           ///< GPUs in the group
  int nodes = 1;           ///< distinct nodes
  int ranks_per_node = 1;  ///< the most ranks on one node
  int sockets = 1;         ///< CPU sockets per node
  int rails = 1;           ///< compute NICs per node (NCCL's rings and trees: one per rail on 2+ nodes)
  /// The node's GPUs have NVLink (pairs or a switch): NCCL's first ring may cross only NVLink inside a
  /// node, and then NCCL may pick LL128 (nccl_select.cpp sizes "nccl" for both cases).
  bool nvlink = false;
  /// The first `gpus` GPUs of a cluster of `gpus_per_node`-GPU nodes, node by node (Group::first_gpus).
  static GroupShape first_gpus(int gpus, int gpus_per_node, int sockets, int compute_nics, bool nvlink = false);
  /// The shape of a group on a built platform (train's collectives).
  static GroupShape of(const platform::Platform& p, const Group& g);
};

/// An algorithm's closed-form estimate (bottleneck bound + latency), microseconds to compute.
struct Estimate {
  double time = 0;
  std::string bottleneck;       ///< "root port cpu1.rp1 (gpu5+gpu6)", "NIC", "GPU<->NIC P2P", ...
  double host_traffic_per_byte = 0;  ///< host-memory bytes per node per byte of S (HFReduce: 24)
  std::string note;
};

class Algorithm {
public:
  virtual ~Algorithm() = default;
  [[nodiscard]] virtual Kind kind() const = 0;
  /// Emits the collective of `bytes` per rank (AllReduce: the vector size S) into `s`.
  virtual Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                       double bytes, const Options& o) const = 0;
  /// Closed-form estimate on `p` (the "analytic" engine of `ffsim collective`).
  [[nodiscard]] virtual Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g,
                                          double bytes) const = 0;
  /// Time on an engine. The default emits the whole schedule and runs it; algorithms with exact
  /// shortcuts (identical steps) override it, and tests prove them against the full schedule.
  [[nodiscard]] virtual double simulate(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib,
                                        const Group& g, double bytes) const;
  /// The operations the schedule that simulate() builds holds (with `full`, simulate_full(); for
  /// an algorithm whose simulate() runs several schedules, the largest), counted from the
  /// schedule's structure without building it: an upper bound, within 2x of the built schedule's
  /// count (tests/unit/coll_size_test.cpp compares them).
  [[nodiscard]] virtual double schedule_ops(const LibraryParams& lib, const GroupShape& g, double bytes,
                                            bool full) const = 0;
  /// The full schedule's time (no shortcut), for tests of the shortcuts.
  [[nodiscard]] double simulate_full(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib,
                                     const Group& g, double bytes) const;
};

using AlgorithmFactory = std::function<std::unique_ptr<Algorithm>()>;
using AlgorithmRegistry = Registry<AlgorithmFactory>;
/// Every built-in algorithm (registration lines in registry.cpp).
[[nodiscard]] const AlgorithmRegistry& algorithms();

}  // namespace ffsim::coll
