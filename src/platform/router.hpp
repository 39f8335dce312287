// The router: the path between any two places of a Machine (the resources a flow crosses, its
// latency and rate cap), computed on first use and kept in a table that any number of threads
// share: lookups and insertions may run at once, and a path, once made, never moves.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/hash.hpp"
#include "platform/machine.hpp"

namespace ffsim::platform {

/// The resources a flow crosses (a resource may appear twice: it is then loaded twice), a cap on
/// the flow's own rate (peer-to-peer limits), and the fixed latency before data moves.
struct Path {
  std::vector<std::uint32_t> resources;
  double rate_cap = std::numeric_limits<double>::infinity();  ///< bytes per second
  double latency = 0;                                         ///< seconds
  const char* cap_what = nullptr;  ///< what sets rate_cap, for labels ("GPU<->NIC peer-to-peer cap ...")
  /// Work in seconds, not bytes (a GPU's compute, the host's cores): engines scale it as such.
  bool time = false;
  /// PlatformOptions::host_cpu: the core-seconds a host thread spends per byte on this path (0: none).
  double cpu_s_per_byte = 0;
  /// A replica path (Router::replica_path_id): (another copy's own resource, the first copy's own
  /// resource that stands for it). Empty for every other path.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> mirrors;
};

/// Paths by a pair of 64-bit keys, each made once and numbered in the order they were first asked
/// for (one thread alone gets the same ids as an unshared table). Thread-safe: the keys are
/// spread over shards, each with its own lock; paths live in segments that double in size and
/// are never moved, so a reference stays valid while other threads add paths.
class PathTable {
public:
  PathTable() = default;
  ~PathTable();
  PathTable(const PathTable&) = delete;
  PathTable& operator=(const PathTable&) = delete;

  /// The id of the path under (ka, kb); the first call makes it with `make()` (under the shard's
  /// lock, so `make` must not intern into this table).
  template <class Make>
  std::uint32_t intern(std::uint64_t ka, std::uint64_t kb, Make&& make);
  /// A path by an id that intern returned (to this thread, or to another before a synchronisation).
  [[nodiscard]] const Path& operator[](std::uint32_t id) const {
    const auto [k, off] = locate(id);
    return segments_[k].load(std::memory_order_acquire)[off];
  }
  /// Ids handed out so far.
  [[nodiscard]] std::size_t size() const { return next_.load(std::memory_order_acquire); }

private:
  using Key = std::pair<std::uint64_t, std::uint64_t>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return static_cast<std::size_t>(k.first * 0x9E3779B97F4A7C15ULL ^
                                      (k.second + 0x632BE59BD9B4E019ULL + (k.first << 6)));
    }
  };
  // A shard's keys: open addressing with linear probing in one array, at most half full, so that a
  // lookup is about one cache line (the node-based std::unordered_map it replaces chased a pointer
  // per lookup: 5.7% of a 9,600-GPU HFReduce's time on the fluid engine). Which id a key maps to
  // does not depend on the table: ids are handed out in the order keys are first asked for.
  class Index {
  public:
    /// The id under `key` (whose hash is h), or kMissing.
    [[nodiscard]] std::uint32_t find(const Key& key, std::uint64_t h) const {
      if (slots_.empty()) return kMissing;
      for (std::size_t i = spot(h) & mask_;; i = (i + 1) & mask_) {
        const Slot& s = slots_[i];
        if (s.id == kMissing) return kMissing;
        if (s.key == key) return s.id;
      }
    }
    void insert(const Key& key, std::uint64_t h, std::uint32_t id) {
      if (2 * (count_ + 1) > slots_.size()) grow();
      place(Slot{key, id}, h);
      ++count_;
    }
    static constexpr std::uint32_t kMissing = ~std::uint32_t{0};

  private:
    struct Slot {
      Key key{};
      std::uint32_t id = kMissing;
    };
    // KeyHash's low bits see only the keys' low bits: mixed first.
    static std::size_t spot(std::uint64_t h) { return static_cast<std::size_t>(core::mix64(h)); }
    void place(const Slot& s, std::uint64_t h) {
      std::size_t i = spot(h) & mask_;
      while (slots_[i].id != kMissing) i = (i + 1) & mask_;
      slots_[i] = s;
    }
    void grow() {
      std::vector<Slot> old = std::move(slots_);
      slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
      mask_ = slots_.size() - 1;
      for (const Slot& s : old)
        if (s.id != kMissing) place(s, KeyHash{}(s.key));
    }
    std::vector<Slot> slots_;
    std::size_t mask_ = 0, count_ = 0;
  };
  struct alignas(64) Shard {
    std::mutex m;
    Index index;
  };
  static constexpr unsigned kShardBits = 5;
  // Segment k holds 64 << k paths: 27 segments cover every 32-bit id.
  static constexpr unsigned kFirstBits = 6;
  static constexpr std::size_t kSegments = 32 - kFirstBits + 1;
  static std::pair<std::size_t, std::size_t> locate(std::uint32_t id) {
    const std::uint64_t j = std::uint64_t{id} + (std::uint64_t{1} << kFirstBits);
    const auto k = static_cast<std::size_t>(std::bit_width(j)) - 1 - kFirstBits;
    return {k, static_cast<std::size_t>(j - (std::uint64_t{1} << (k + kFirstBits)))};
  }
  void store(std::uint32_t id, Path&& p);

  std::array<Shard, std::size_t{1} << kShardBits> shards_;
  std::array<std::atomic<Path*>, kSegments> segments_{};
  std::atomic<std::uint32_t> next_{0};
};

template <class Make>
std::uint32_t PathTable::intern(std::uint64_t ka, std::uint64_t kb, Make&& make) {
  const Key key{ka, kb};
  const std::uint64_t h = KeyHash{}(key);
  Shard& sh = shards_[static_cast<std::size_t>((h * 0xBF58476D1CE4E5B9ULL) >> (64 - kShardBits))];
  const std::lock_guard<std::mutex> lock(sh.m);
  if (const std::uint32_t found = sh.index.find(key, h); found != Index::kMissing) return found;
  const std::uint32_t id = next_.fetch_add(1, std::memory_order_acq_rel);
  store(id, make());
  sh.index.insert(key, h, id);
  return id;
}

/// Routing on a Machine: which resources a transfer between two places crosses (PCIe tree, socket
/// links, NVLink, the NIC chosen by affinity and plane, NCCL's PXN relay, the fabric's up/down
/// route). `route` is a pure function of the machine; `path_id` interns its result. Every member
/// may be called from any number of threads at once.
class Router {
public:
  explicit Router(const Machine& m) : m_(m) {}
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  /// The path id between two places (computed once, then shared).
  [[nodiscard]] std::uint32_t path_id(const sched::Place& from, const sched::Place& to) const;
  /// The path of a GPU's compute resource alone (Compute ops).
  [[nodiscard]] std::uint32_t compute_path_id(const sched::Place& gpu) const;
  /// The path of a host thread's core-seconds (PlatformOptions::host_cpu): the machine's cores, at
  /// most one core.
  [[nodiscard]] std::uint32_t cores_path_id() const;
  [[nodiscard]] const Path& path(std::uint32_t id) const { return table_[id]; }
  [[nodiscard]] std::size_t path_count() const { return table_.size(); }

  /// The path on which copies of one transfer run as one flow (sched::Schedule::replicate): `paths`
  /// are the copies' own paths, the first copy's first. The flow is one copy: its rate and bytes are
  /// each copy's. Where every copy crosses the same resource (a socket's DRAM), the flow crosses it
  /// once per copy, so its load is the copies' summed; where each crosses a resource of its own (its
  /// GPU's link and root port), the flow crosses the first copy's, which carries what each of the
  /// others' carries (Path::mirrors pairs them). That is the same max-min allocation as the copies
  /// apart when nothing else tells them apart: no other flow crosses one copy's own resource and not
  /// the others' (the caller's promise; the fluid engine refuses a flow that crosses a mirrored
  /// resource or one that stands for others, and tests compare with the copies apart).
  /// Throws SimulationError when the paths do not line up (see replicable).
  [[nodiscard]] std::uint32_t replica_path_id(const std::vector<std::uint32_t>& paths) const;
  /// Whether copies on these paths can run as one flow: the same length, latency, cap and work per
  /// byte; at each position either one resource for all or a resource of each copy's own (found on
  /// no other copy's path) of one kind and capacity and not a both-ways cap (whose capacity depends
  /// on the other direction's flows); each copy's own resources in the same pattern as the first's.
  /// Otherwise false and, with `why`, the reason.
  [[nodiscard]] bool replicable(const std::vector<std::uint32_t>& paths, std::string* why = nullptr) const;

  /// The path between two places, made afresh.
  [[nodiscard]] Path route(const sched::Place& from, const sched::Place& to) const;
  // An inter-node path in three parts, which route concatenates and all_pairs_loads counts once
  // per distinct part: the sender's side (relay and local path to its NIC, the NIC's send
  // resource), the fabric hops (and the NIC and route latency), the receiver's side (the NIC's
  // receive resource and the local path from it).
  /// The NICs an inter-node transfer leaves and enters by.
  [[nodiscard]] std::pair<int, int> net_nics(const sched::Place& from, const sched::Place& to) const;
  /// The NIC a GPU-node place sends by to a NIC in fabric plane `plane`.
  [[nodiscard]] int send_nic(const sched::Place& from, int plane) const;
  void send_side(const sched::Place& from, int na, Path& p) const;
  void net_hops(const sched::Place& from, int na, const sched::Place& to, int nb, Path& p) const;
  void recv_side(int nb, const sched::Place& to, Path& p) const;

private:
  /// Appends the node-local path between two places of the same node.
  void local_path(const sched::Place& from, const sched::Place& to, Path& p) const;
  // Chains between a device port and its socket (in the given direction).
  /// Port q in one direction (`dir`: port_up or port_down) and its caps on both directions.
  static void port_hop(const NodeModel& t, const std::vector<int>& dir, int q, std::vector<int>& local);
  /// The local resources up (`dir` = port_up) or down (port_down) the chain of ports from `port`.
  static std::vector<int> chain(const NodeModel& t, const std::vector<int>& dir, int port);

  const Machine& m_;
  mutable PathTable table_;
  // Replica paths by their copies' paths (exact keys: few, made once), interned under (kReplicaKey,
  // their number), a key no pair of places has (place_key's bits 24-30 are 0).
  static constexpr std::uint64_t kReplicaKey = ~std::uint64_t{0} - 1;
  mutable std::mutex replica_m_;
  mutable std::map<std::vector<std::uint32_t>, std::uint32_t> replica_ids_;
};

}  // namespace ffsim::platform
