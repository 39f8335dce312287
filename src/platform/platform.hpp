// The simulated machine: every shared resource of the cluster (PCIe links and root ports, DRAM,
// socket links, NICs, NVLink, fabric links, GPU compute, CPU reducers, drives), the path between
// any two places, and the lowering of schedule operations into flows that both engines run.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hw/specs.hpp"
#include "platform/traffic.hpp"
#include "sched/schedule.hpp"
#include "topo/fabric.hpp"

namespace ffsim::platform {

enum class ResourceKind {
  GpuLink,     ///< a GPU's own PCIe link, one direction
  PciePort,    ///< a root port (host bridge) or PCIe switch uplink, one direction
  PcieDuplex,  ///< a root port's cap on both directions together
  PcieBidir,   ///< a root port's cap on both directions together while both carry traffic
  Dram,        ///< a socket's DRAM: every byte read or written
  SocketLink,  ///< the link between two sockets, one direction
  Nic,         ///< a NIC port, one direction
  Nvlink,      ///< an NVLink bridge direction, or a GPU's NVSwitch port direction
  Fabric,      ///< a fabric cable, one direction
  GpuCompute,  ///< a GPU's SMs (capacity 1: work is measured in seconds alone)
  CpuReduce,   ///< a socket's cores summing buffers (input bytes per second)
  Disk,        ///< a storage node's drives (read or write)
  PeerToPeer,  ///< a node's GPU<->NIC peer-to-peer capacity through the root complex, one direction
};
[[nodiscard]] const char* resource_kind_name(ResourceKind k);

inline constexpr std::uint32_t kNoResource = std::numeric_limits<std::uint32_t>::max();

/// A shared resource. Capacity is in bytes per second (GpuCompute: 1, work in seconds).
/// A PcieBidir resource is conditional: `capacity` holds only while flows cross both `up` and
/// `down` (the port's two directions); otherwise `one_way` (their sum, which one direction alone
/// never reaches, so the resource does not bind).
struct Resource {
  ResourceKind kind;
  double capacity;
  std::uint32_t up = kNoResource, down = kNoResource;
  double one_way = 0;
  /// The capacity in force given whether the up and down directions carry flows.
  [[nodiscard]] double capacity_when(bool up_busy, bool down_busy) const {
    return kind != ResourceKind::PcieBidir || (up_busy && down_busy) ? capacity : one_way;
  }
};

/// The resources a flow crosses (a resource may appear twice: it is then loaded twice), a cap on
/// the flow's own rate (peer-to-peer limits), and the fixed latency before data moves.
struct Path {
  std::vector<std::uint32_t> resources;
  double rate_cap = std::numeric_limits<double>::infinity();  ///< bytes per second
  double latency = 0;                                         ///< seconds
  const char* cap_what = nullptr;  ///< what sets rate_cap, for labels ("GPU<->NIC peer-to-peer cap ...")
};

/// One flow of a lowered operation.
struct Flow {
  std::uint32_t path = 0;  ///< Platform::path id
  double amount = 0;       ///< bytes (GpuCompute: seconds)
  double weight = 1;       ///< share weight of its traffic class
  sched::TrafficClass cls = sched::TrafficClass::Other;
  /// Arbitration delay before the flow shares bandwidth: options().arbitration_latency / weight for
  /// transfers and reductions (the SimGrid engine's penalty link), 0 for compute.
  double start_delay = 0;
  /// The flow's own rate cap: the path's (peer-to-peer) and the op's (software), bytes per second.
  double rate_cap = std::numeric_limits<double>::infinity();
};

/// What an engine runs for one operation: wait `latency` (the physical latency of its path or
/// its fixed delay), then run all flows concurrently (each after its start_delay); the operation
/// ends when its last flow ends.
struct Lowered {
  double latency = 0;
  std::vector<Flow> flows;
};

struct PlatformOptions {
  /// Latency added to every flow of weight w as arbitration_latency / w: the SimGrid engine
  /// realises class weights as route-latency penalties (CM02 shares in proportion to 1/latency),
  /// and the analytic engine charges the same delay so that both agree exactly.
  double arbitration_latency = 1e-12;
};

class Platform {
public:
  /// `fabric` may be null for single-node platforms (no NICs used).
  Platform(hw::ClusterSpec cluster, std::shared_ptr<const topo::Fabric> fabric, TrafficConfig traffic,
           PlatformOptions opts = {});

  [[nodiscard]] std::size_t resource_count() const { return resources_.size(); }
  [[nodiscard]] const Resource& resource(std::uint32_t id) const { return resources_[id]; }
  /// "n3.cpu1.rp1.up", "f.z0.leaf3-z0.spine7.up", ...
  [[nodiscard]] std::string resource_name(std::uint32_t id) const;
  /// A reader's label: "root port cpu1.rp1 (gpu5+gpu6), GPU->CPU", "DRAM cpu1", "NIC nic0 send".
  [[nodiscard]] std::string resource_label(std::uint32_t id) const;

  /// The node a resource belongs to: {false, i} for GPU node i, {true, i} for storage node i,
  /// {false, -1} for fabric links.
  [[nodiscard]] std::pair<bool, int> node_of_resource(std::uint32_t id) const;
  /// The path id between two places (computed once, then cached).
  [[nodiscard]] std::uint32_t path_id(const sched::Place& from, const sched::Place& to) const;
  [[nodiscard]] const Path& path(std::uint32_t id) const { return paths_[id]; }
  [[nodiscard]] std::size_t path_count() const { return paths_.size(); }
  /// What every ordered pair (a, b), a != b, of `ranks` moving `bytes` from a to b at once puts
  /// on each resource (an alltoall's traffic), without a path per pair: the sender's and the
  /// receiver's sides are counted once per rank (and destination plane) and the fabric once per
  /// pair of NICs. The loads equal the sum over the pairs' paths up to the order of additions
  /// (tests/unit/platform_all_pairs_test.cpp); latencies are the largest of any pair's path.
  struct PairLoads {
    std::vector<double> load;  ///< bytes by resource id (resource_count() entries)
    double min_rate_cap = std::numeric_limits<double>::infinity();  ///< the smallest path rate cap
    bool any_local = false, any_net = false;  ///< pairs inside a node / between nodes exist
    double max_local_latency = 0, max_net_latency = 0;  ///< largest path latency of each kind
  };
  [[nodiscard]] PairLoads all_pairs_loads(const std::vector<sched::Place>& ranks, double bytes) const;
  /// The resource a GPU computes on (for Compute ops).
  [[nodiscard]] std::uint32_t compute_resource(const sched::Place& gpu) const;

  /// Lowers an operation of `s` into flows (appends to out.flows).
  void lower(const sched::Schedule& s, sched::OpId op, Lowered& out) const;

  [[nodiscard]] const hw::ClusterSpec& cluster() const { return cluster_; }
  [[nodiscard]] const topo::Fabric* fabric() const { return fabric_.get(); }
  [[nodiscard]] const TrafficConfig& traffic() const { return traffic_; }
  [[nodiscard]] const PlatformOptions& options() const { return opts_; }
  /// The compute-NIC index a GPU (or, for Dram/Cpu places, a socket) uses for inter-node traffic.
  /// With `plane` >= 0 the choice is among the node's NICs in that fabric plane (none: -1).
  [[nodiscard]] int nic_for(const sched::Place& p, int plane = -1) const;
  /// How near NIC `nic` of its node is to GPU `gpu` in the PCIe tree (higher: nearer; the score
  /// nic_for ranks by).
  [[nodiscard]] int nic_affinity(const sched::Place& gpu, int nic) const { return nic_affinity(tmpl(gpu), gpu.index, nic); }
  /// The fabric endpoint of a NIC (storage NICs are per zone).
  [[nodiscard]] int endpoint_of(const sched::Place& nic) const;

private:
  struct LocalResource {
    std::string name;   // within the node: "gpu3.pcie.up", "cpu1.rp1.up", "cpu0.dram"
    std::string label;  // for reports
    ResourceKind kind;
    double capacity;
    int up = -1, down = -1;  // PcieBidir: the port's direction resources (local indices)
  };
  /// The resources of one node model and the indices of each part.
  struct NodeTemplate {
    const hw::NodeSpec* spec = nullptr;
    std::vector<LocalResource> res;
    std::vector<int> gpu_up, gpu_down, compute;
    std::vector<int> port_up, port_down, port_duplex;     // by port index
    std::vector<int> port_bidir;                          // by port index, -1 if none
    std::vector<int> dram, cpu_reduce;                    // by socket
    std::vector<std::vector<int>> socket_link;            // [from][to], -1 on the diagonal
    std::vector<int> nic_tx, nic_rx;                      // by NIC
    std::vector<std::vector<int>> nvlink;                 // [from gpu][to gpu] direction, -1 if none
    std::vector<int> nvswitch_tx, nvswitch_rx;            // by GPU, for NVSwitch nodes
    int disk_read = -1, disk_write = -1;
    int p2p_to_nic = -1, p2p_from_nic = -1;               // GPU<->NIC peer-to-peer, per direction
    std::vector<int> gpu_port, nic_port;                  // index of the attach port
    std::vector<int> port_parent;                         // parent port index, -1 for root ports
    std::vector<int> port_socket;                         // socket index of each port's root
    std::vector<int> compute_nics;                        // NIC indices usable for compute traffic
    std::vector<std::vector<int>> affinity;               // [gpu][nic]: nic_affinity
    std::vector<int> gpu_nic;                             // by GPU: nic_for's choice (any plane)
  };
  static NodeTemplate make_template(const hw::NodeSpec& spec);
  [[nodiscard]] const NodeTemplate& tmpl(const sched::Place& p) const;
  [[nodiscard]] std::uint32_t base(const sched::Place& p) const;
  [[nodiscard]] Path compute_path(const sched::Place& from, const sched::Place& to) const;
  // An inter-node path in three parts, which compute_path concatenates and all_pairs_loads counts
  // once per distinct part: the sender's side (relay and local path to its NIC, the NIC's send
  // resource), the fabric hops (and the NIC and route latency), the receiver's side (the NIC's
  // receive resource and the local path from it).
  /// The NICs an inter-node transfer leaves and enters by.
  [[nodiscard]] std::pair<int, int> net_nics(const sched::Place& from, const sched::Place& to) const;
  /// The NIC a GPU-node place sends by to a NIC in fabric plane `plane`.
  [[nodiscard]] int send_nic(const sched::Place& from, int plane) const;
  [[nodiscard]] int plane_of_nic(int node, int nic) const;
  void send_side(const sched::Place& from, int na, Path& p) const;
  void net_hops(const sched::Place& from, int na, const sched::Place& to, int nb, Path& p) const;
  void recv_side(int nb, const sched::Place& to, Path& p) const;
  /// Appends the node-local path between two places of the same node.
  void local_path(const sched::Place& from, const sched::Place& to, Path& p) const;
  // Chains between a device port and its socket (in the given direction).
  /// Port q in one direction (`dir`: port_up or port_down) and its caps on both directions.
  static void port_hop(const NodeTemplate& t, const std::vector<int>& dir, int q, std::vector<int>& local);
  void chain_up(const NodeTemplate& t, std::uint32_t b, int port, Path& p) const;
  void chain_down(const NodeTemplate& t, std::uint32_t b, int port, Path& p) const;
  [[nodiscard]] int socket_of(const sched::Place& p) const;
  /// How near NIC `nic` is to GPU `gpu` in the PCIe tree: 2 per port their chains share, +1 on
  /// the same socket.
  static int nic_affinity(const NodeTemplate& t, int gpu, int nic);

  hw::ClusterSpec cluster_;
  std::shared_ptr<const topo::Fabric> fabric_;
  TrafficConfig traffic_;
  PlatformOptions opts_;
  NodeTemplate gpu_t_, storage_t_;
  std::uint32_t storage_base_ = 0, fabric_base_ = 0;
  std::vector<Resource> resources_;
  int nics_per_gpu_node_ = 0, nics_per_storage_node_ = 0;
  struct KeyHash {
    std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& k) const {
      return static_cast<std::size_t>(k.first * 0x9E3779B97F4A7C15ULL ^ (k.second + 0x632BE59BD9B4E019ULL + (k.first << 6)));
    }
  };
  template <class Make>
  std::uint32_t intern(std::uint64_t ka, std::uint64_t kb, Make&& make) const;

  mutable std::vector<Path> paths_;
  mutable std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, std::uint32_t, KeyHash> path_index_;
};

/// Packs a place into 64 bits (node 32 | storage 1 | kind 3 | index 16).
[[nodiscard]] std::uint64_t place_key(const sched::Place& p);

}  // namespace ffsim::platform
