// The Schedule: one language for everything that costs time. A DAG of Compute, Transfer,
// Reduce and Delay operations on named places; collectives and workloads emit it, the analytic
// and the SimGrid evaluators consume it (design.md section 1).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/units.hpp"

namespace ffsim::sched {

/// Traffic classes, mapped by a scenario to InfiniBand service levels and virtual lanes.
enum class TrafficClass : std::uint8_t { Other = 0, HFReduce = 1, NCCL = 2, Storage = 3 };
inline constexpr int kTrafficClasses = 4;
[[nodiscard]] const char* class_name(TrafficClass c);  ///< "other", "hfreduce", "nccl", "storage"
/// Throws ValueError with the valid names for an unknown one.
[[nodiscard]] TrafficClass class_from_name(std::string_view name);
[[nodiscard]] std::vector<std::string> class_names();

/// What a place is: a GPU's memory, a socket's DRAM, a socket's cores (the CPU reducer),
/// a NIC, or a storage node's drives.
enum class PlaceKind : std::uint8_t { Gpu, Dram, Cpu, Nic, Disk };

/// A place in the cluster: (GPU node i | storage node i).(gpu g | cpu s DRAM | cpu s cores | nic j | drives).
struct Place {
  std::int32_t node = 0;
  PlaceKind kind = PlaceKind::Gpu;
  std::int16_t index = 0;  ///< GPU, socket or NIC index within the node
  bool storage = false;    ///< a storage node rather than a GPU node

  static Place gpu(int node, int g) { return {node, PlaceKind::Gpu, static_cast<std::int16_t>(g), false}; }
  static Place dram(int node, int socket) { return {node, PlaceKind::Dram, static_cast<std::int16_t>(socket), false}; }
  static Place cpu(int node, int socket) { return {node, PlaceKind::Cpu, static_cast<std::int16_t>(socket), false}; }
  static Place nic(int node, int n) { return {node, PlaceKind::Nic, static_cast<std::int16_t>(n), false}; }
  static Place storage_dram(int node) { return {node, PlaceKind::Dram, 0, true}; }
  static Place storage_disk(int node) { return {node, PlaceKind::Disk, 0, true}; }
  friend bool operator==(const Place&, const Place&) = default;
};
/// "n3.gpu5", "n3.cpu1.dram", "n3.cpu1", "n3.nic0", "s7.disk".
[[nodiscard]] std::string place_name(const Place& p);

enum class OpKind : std::uint8_t { Compute, Transfer, Reduce, Delay };
[[nodiscard]] const char* op_kind_name(OpKind k);

using OpId = std::uint32_t;
using BufferId = std::uint32_t;

/// A named buffer at a place, for the data-movement check (bytes; elements are elem_size bytes).
struct Buffer {
  Place place;
  double bytes = 0;
  std::string name;
};

/// A byte offset into a buffer.
struct DataRef {
  BufferId buffer = 0;
  double offset = 0;
};

/// One operation. Fields by kind:
/// - Compute:  `at` = a GPU; `amount` = seconds the GPU would take alone (work / rate of its kind).
/// - Transfer: `at` -> `to`; `amount` = bytes; `cls` = traffic class.
/// - Reduce:   `at` = a CPU socket (Cpu place); sums `inputs` (Dram places, `amount` bytes each)
///             into `to` (a Dram place): reads k x amount, writes amount.
///             A Compute op may carry reduce data semantics too (a GPU reduce kernel).
/// - Delay:    `amount` = seconds (a fixed overhead: a launch, a handshake).
struct Op {
  // (The op is 48 bytes: a simulated schedule holds millions. What few ops have, a rate cap and data
  // semantics, the schedule keeps beside them: Schedule::rate_cap, Schedule::data_refs.)
  OpKind kind = OpKind::Delay;
  TrafficClass cls = TrafficClass::Other;
  /// Reduce: the output is an accumulator kept in the reducer's cache: out += inputs, and only
  /// the inputs are read from memory (HFReduce's inter-node add, counted as 1 read in Sec. IV).
  bool accumulate = false;
  bool capped : 1 = false;       ///< Transfer: Schedule::rate_cap holds a cap for it (lowering looks it up only then)
  bool own_latency : 1 = false;  ///< Transfer: Schedule::latency holds its latency (instead of its path's)
  bool replicated : 1 = false;   ///< Transfer: Schedule::replicas holds the copies it stands for beside its own
  Place at;
  Place to;
  std::uint32_t tag = 0;  ///< index into Schedule::tags() (what the op is, for reports)
  double amount = 0;
  std::uint32_t inputs_begin = 0;  ///< Reduce: range in Schedule::reduce_inputs(); replicated Transfer: its list's
  std::uint32_t inputs_end = 0;
};
static_assert(sizeof(Op) <= 48, "an op in 48 bytes");

/// A growing array kept in pages of 2^16 elements: growing never moves what it holds. (A
/// std::vector that doubles holds the old and the new array at once: 251 MB of the 277 MB peak of a
/// 1.3-million-op schedule, 2026-12-06.)
template <class T>
class Paged {
public:
  static constexpr std::size_t kShift = 16;
  static constexpr std::size_t kPage = std::size_t{1} << kShift;
  void push_back(const T& v) {
    if (size_ == pages_.size() * kPage) {
      pages_.emplace_back();
      pages_.back().reserve(kPage);
    }
    pages_.back().push_back(v);
    ++size_;
  }
  template <class... A>
  void emplace_back(A&&... a) {
    push_back(T{std::forward<A>(a)...});
  }
  [[nodiscard]] std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return pages_[i >> kShift][i & (kPage - 1)]; }
  const T& operator[](std::size_t i) const { return pages_[i >> kShift][i & (kPage - 1)]; }
  /// Calls f on every element in order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& page : pages_)
      for (const T& v : page) f(v);
  }

private:
  std::vector<std::vector<T>> pages_;
  std::size_t size_ = 0;
};

/// A DAG of operations. Add operations, then dependencies (`after` waits for `before`).
class Schedule {
public:
  /// The most operations a schedule takes (SimulationError beyond).
  static constexpr std::size_t kMaxOps = std::size_t{1} << 23;

  OpId compute(Place gpu, Seconds alone, std::uint32_t tag = 0);
  OpId transfer(Place from, Place to, Bytes bytes, TrafficClass cls, std::uint32_t tag = 0);
  OpId reduce(Place cpu, const std::vector<Place>& inputs, Place out, Bytes bytes_each, std::uint32_t tag = 0);
  OpId delay(Seconds t, std::uint32_t tag = 0);

  // ---- the same operations with data semantics (for the data-movement check)
  BufferId buffer(Place at, Bytes size, std::string name);
  OpId transfer(DataRef from, DataRef to, Bytes bytes, TrafficClass cls, std::uint32_t tag = 0);
  /// A transfer whose path runs between `from` and `to` while its data moves from `src` to `dst`
  /// (GDRCopy: the CPU's cores write a DRAM buffer's data into a GPU).
  OpId transfer(Place from, Place to, DataRef src, DataRef dst, Bytes bytes, TrafficClass cls, std::uint32_t tag = 0);
  /// out += sum of inputs, with `out` in the reducer's cache (see Op::accumulate).
  OpId reduce_accumulate(Place cpu, const std::vector<DataRef>& inputs, DataRef inout, Bytes bytes, std::uint32_t tag = 0);
  OpId reduce_accumulate(Place cpu, const std::vector<Place>& inputs, Place inout, Bytes bytes, std::uint32_t tag = 0);
  /// Caps a transfer's rate (bytes per second).
  void set_rate_cap(OpId id, double bytes_per_second);
  /// A transfer's cap on its own rate set by the software that moves it (bytes per second;
  /// infinity when none).
  [[nodiscard]] double rate_cap(OpId id) const;
  /// Sets the latency a transfer pays before its data moves, instead of its path's (seconds, >= 0):
  /// an algorithm whose steps stand for a pipelined exchange charges each step its share of the
  /// latencies along the pipeline (a ring's hops, which a piece of data crosses one after another).
  void set_latency(OpId id, double seconds);
  /// A transfer's latency set by set_latency, or NaN when it pays its path's.
  [[nodiscard]] double latency(OpId id) const;
  /// Copies of transfers between other places, for replicate(): made once, given to many ops.
  struct ReplicaList {
    std::uint32_t begin = 0, end = 0;  ///< range of the schedule's replica places (see replica_places_count)
  };
  [[nodiscard]] ReplicaList replica_list(const std::vector<std::pair<Place, Place>>& places);
  /// Makes transfer `id` stand for copies of itself between other places too: one copy of its bytes
  /// from each `(from, to)` of `others` beside its own (`at` -> `to`), started together, ending
  /// together, under the same cap. For copies that nothing tells apart (a node's alike GPUs copying
  /// the same chunk): an engine that runs replicas (eval::Engine::runs_replicas) runs them as one
  /// flow (platform::Router::replica_path_id says when that is exact); the others refuse such a
  /// schedule. No data semantics (a plain transfer); an empty list changes nothing.
  void replicate(OpId id, ReplicaList others);
  /// The copies set by replicate() beside the op's own (empty for any other op).
  [[nodiscard]] std::span<const std::pair<Place, Place>> replicas(OpId id) const;
  /// The places of every replica list so far (a list's indices are below it).
  [[nodiscard]] std::size_t replica_places_count() const { return replica_places_.size(); }
  /// Whether any op is replicated (engines that cannot run them check this once).
  [[nodiscard]] bool has_replicas() const { return replicated_ > 0; }
  /// Data semantics (optional): the op's refs [first, second) in refs(). Transfer: source,
  /// destination. Reduce and GPU reduce: inputs..., output, `data_bytes` each. {0, 0}: none.
  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> data_refs(OpId id) const;
  /// The traffic class of a reduce's memory traffic (reduces start as Other): a class's lane weight
  /// applies to all of its flows, so a collective's reduces share host memory as its copies do.
  void set_class(OpId id, TrafficClass cls);
  /// CPU reduce: out = sum of inputs (elementwise, `bytes` each), on `cpu`'s cores.
  OpId reduce(Place cpu, const std::vector<DataRef>& inputs, DataRef out, Bytes bytes, std::uint32_t tag = 0);
  /// GPU reduce kernel: out = sum of inputs on `gpu`, taking `alone` seconds of the GPU.
  OpId gpu_reduce(Place gpu, const std::vector<DataRef>& inputs, DataRef out, Bytes bytes, Seconds alone,
                  std::uint32_t tag = 0);
  [[nodiscard]] const std::vector<Buffer>& buffers() const { return buffers_; }
  [[nodiscard]] const std::vector<DataRef>& refs() const { return refs_; }
  /// Bytes each data ref of op `id` covers (a GPU reduce's amount is its time, not its bytes).
  [[nodiscard]] double data_bytes(OpId id) const;
  /// `after` starts only once `before` has ended.
  void depend(OpId after, OpId before);
  /// Interns a tag string ("d2h", "reduce", "tree up", ...); 0 is "".
  std::uint32_t tag(std::string_view name);

  [[nodiscard]] std::size_t size() const { return ops_.size(); }
  [[nodiscard]] const Op& op(OpId i) const { return ops_[i]; }
  [[nodiscard]] const std::vector<Place>& reduce_inputs() const { return inputs_; }
  [[nodiscard]] const std::vector<std::string>& tags() const { return tags_; }

  /// Successor lists and predecessor counts in CSR form (rebuilt on demand).
  struct Graph {
    std::vector<std::uint32_t> succ_begin;  ///< size() + 1 offsets into succ
    std::vector<OpId> succ;
    std::vector<std::uint32_t> preds;       ///< number of predecessors per op
  };
  [[nodiscard]] Graph graph() const;
  /// Throws SimulationError if the dependencies contain a cycle (the schedule could never finish).
  void check_acyclic() const;

private:
  OpId push(const Op& o);  // adds an op, at most kMaxOps
  std::uint32_t add_refs(const std::vector<DataRef>& r);

  Paged<Op> ops_;
  std::vector<Place> inputs_;
  std::vector<Buffer> buffers_;
  std::vector<DataRef> refs_;
  std::unordered_map<OpId, double> data_amount_;
  std::unordered_map<OpId, double> rate_caps_;
  std::vector<std::pair<OpId, double>> latencies_;       // by op id (set_latency: made in op order, so appended)
  std::vector<std::pair<Place, Place>> replica_places_;  // replica lists (a replicated op keeps its range)
  std::size_t replicated_ = 0;
  std::unordered_map<OpId, std::pair<std::uint32_t, std::uint32_t>> data_refs_;
  Paged<std::pair<OpId, OpId>> edges_;  // (after, before), in insertion order
  std::vector<std::string> tags_{""};
};

}  // namespace ffsim::sched
