// The machine as resources: every shared resource of the cluster (PCIe links and root ports, DRAM,
// socket links, NICs, NVLink, fabric links, GPU compute, CPU reducers, drives), built once from the
// specs and never changed after, so any number of threads may read it at once.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
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
  HostCores,   ///< PlatformOptions::host_cpu: the machine's cores (work in core-seconds)
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

struct PlatformOptions {
  /// Latency added to every flow of weight w as arbitration_latency / w: the SimGrid engine
  /// realises class weights as route-latency penalties (CM02 shares in proportion to 1/latency),
  /// and the analytic engine charges the same delay so that both agree exactly.
  double arbitration_latency = 1e-12;
  /// The GPU nodes are ranks of one machine (calibrating a measured machine: hfreduce-bench's ranks
  /// under mpirun): each node's DRAM, reduce cores and device ports are that rank's own limits (what
  /// its threads can use), and every path through one of them also crosses the machine's, built
  /// from this spec (the node's structure, the machine's capacities): the ranks share the machine
  /// as they use it, not in fixed shares. Null: nodes are machines of their own.
  std::shared_ptr<const hw::NodeSpec> host_pool;
  /// With host_pool (without it, nothing): the machine's cores as time the ranks' threads share,
  /// whatever they do. Every copy a host thread makes (an emulated device's copy, a message between
  /// ranks) and every reducer read also runs a flow of core-seconds (its bytes at that thread's rate
  /// alone) on one resource of `cores` capacity, at most one core each (a thread), beside its bytes:
  /// on a machine of few cores, copies, reduces and messages take turns on the same cores. 0: off.
  struct HostCpu {
    int cores = 0;
    double copy_s_per_byte = 0;       ///< an emulated device's copy thread: 1 / its memcpy rate
    double reduce_s_per_byte = 0;     ///< a reducer thread: 1 / its rate of input bytes
    double transport_s_per_byte = 0;  ///< a message between ranks: 1 / the transport's rate
    int reduce_threads = 1;           ///< the cores one (non-accumulating) reduce may use at once
  } host_cpu;
};

/// The resources of one node model, by local index (a node's resource id is its base plus the
/// local index), and the indices of each part: what the router walks to build a path.
struct NodeModel {
  struct LocalResource {
    std::string name;   ///< within the node: "gpu3.pcie.up", "cpu1.rp1.up", "cpu0.dram"
    std::string label;  ///< for reports
    ResourceKind kind;
    double capacity;
    int up = -1, down = -1;  ///< PcieBidir: the port's direction resources (local indices)
  };
  const hw::NodeSpec* spec = nullptr;
  std::vector<LocalResource> res;
  std::vector<int> gpu_up, gpu_down, compute;
  std::vector<int> port_up, port_down, port_duplex;  ///< by port index
  std::vector<int> port_bidir;                       ///< by port index, -1 if none
  std::vector<int> dram, cpu_reduce;                 ///< by socket
  std::vector<std::vector<int>> socket_link;         ///< [from][to], -1 on the diagonal
  std::vector<int> nic_tx, nic_rx;                   ///< by NIC
  std::vector<std::vector<int>> nvlink;              ///< [from gpu][to gpu] direction, -1 if none
  std::vector<int> nvswitch_tx, nvswitch_rx;         ///< by GPU, for NVSwitch nodes
  int disk_read = -1, disk_write = -1;
  int p2p_to_nic = -1, p2p_from_nic = -1;  ///< GPU<->NIC peer-to-peer, per direction
  std::vector<int> gpu_port, nic_port;     ///< index of the attach port
  std::vector<int> port_parent;            ///< parent port index, -1 for root ports
  std::vector<int> port_socket;            ///< socket index of each port's root
  std::vector<int> compute_nics;           ///< NIC indices usable for compute traffic
  std::vector<std::vector<int>> affinity;  ///< [gpu][nic]: Machine::nic_affinity
  std::vector<int> gpu_nic;                ///< by GPU: nic_for's choice (any plane)

  /// How near NIC `nic` is to GPU `gpu` in the PCIe tree: 2 per port their chains share, +1 on
  /// the same socket.
  [[nodiscard]] int nic_affinity(int gpu, int nic) const {
    return affinity[static_cast<std::size_t>(gpu)][static_cast<std::size_t>(nic)];
  }
};

/// The cluster's resources: one NodeModel instantiated per GPU node and per storage node, then
/// the fabric's links (two directions each). Immutable once built.
class Machine {
public:
  /// `fabric` may be null for single-node platforms (no NICs used).
  Machine(hw::ClusterSpec cluster, std::shared_ptr<const topo::Fabric> fabric, TrafficConfig traffic,
          PlatformOptions opts = {});
  // The node models point into the cluster spec it holds: no copies.
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  [[nodiscard]] std::size_t resource_count() const { return resources_.size(); }
  [[nodiscard]] const Resource& resource(std::uint32_t id) const { return resources_[id]; }
  /// "n3.cpu1.rp1.up", "f.z0.leaf3-z0.spine7.up", ...
  [[nodiscard]] std::string resource_name(std::uint32_t id) const;
  /// A reader's label: "root port cpu1.rp1 (gpu5+gpu6), GPU->CPU", "DRAM cpu1", "NIC nic0 send".
  [[nodiscard]] std::string resource_label(std::uint32_t id) const;
  /// The node a resource belongs to: {false, i} for GPU node i, {true, i} for storage node i,
  /// {false, -1} for fabric links.
  [[nodiscard]] std::pair<bool, int> node_of_resource(std::uint32_t id) const;
  /// The resource a GPU computes on (for Compute ops).
  [[nodiscard]] std::uint32_t compute_resource(const sched::Place& gpu) const;

  [[nodiscard]] const hw::ClusterSpec& cluster() const { return cluster_; }
  [[nodiscard]] const topo::Fabric* fabric() const { return fabric_.get(); }
  [[nodiscard]] const TrafficConfig& traffic() const { return traffic_; }
  [[nodiscard]] const PlatformOptions& options() const { return opts_; }
  /// The compute-NIC index a GPU (or, for Dram/Cpu places, a socket) uses for inter-node traffic.
  /// With `plane` >= 0 the choice is among the node's NICs in that fabric plane (none: -1).
  [[nodiscard]] int nic_for(const sched::Place& p, int plane = -1) const;
  /// How near NIC `nic` of its node is to GPU `gpu` in the PCIe tree (higher: nearer; the score
  /// nic_for ranks by).
  [[nodiscard]] int nic_affinity(const sched::Place& gpu, int nic) const {
    return model(gpu).nic_affinity(gpu.index, nic);
  }
  /// The fabric endpoint of a NIC (storage NICs are per zone).
  [[nodiscard]] int endpoint_of(const sched::Place& nic) const;
  /// The fabric plane of NIC `nic` of GPU node `node`.
  [[nodiscard]] int plane_of_nic(int node, int nic) const;

  /// The node model of a place's node (GPU or storage).
  [[nodiscard]] const NodeModel& model(const sched::Place& p) const { return p.storage ? storage_t_ : gpu_t_; }
  [[nodiscard]] const NodeModel& storage_model() const { return storage_t_; }
  /// The id of the first resource of a place's node.
  [[nodiscard]] std::uint32_t base(const sched::Place& p) const;
  /// The machine's resource that local resource `local` of a GPU node's model also loads (see
  /// PlatformOptions::host_pool), or kNoResource.
  [[nodiscard]] std::uint32_t pool_resource(int local) const {
    return pool_.empty() ? kNoResource : pool_[static_cast<std::size_t>(local)];
  }
  /// PlatformOptions::host_cpu's cores resource, or kNoResource.
  [[nodiscard]] std::uint32_t host_cores() const { return host_cores_; }
  /// The resource of one direction of a fabric hop.
  [[nodiscard]] std::uint32_t fabric_resource(const topo::Hop& h) const {
    return fabric_base_ + static_cast<std::uint32_t>(h.link) * 2 + (h.up ? 0U : 1U);
  }
  /// The socket index of a place (a device's root port's socket; Dram and Cpu: their own).
  [[nodiscard]] int socket_of(const sched::Place& p) const;
  /// Compute NICs per GPU node (the endpoints of a node are consecutive).
  [[nodiscard]] int nics_per_gpu_node() const { return nics_per_gpu_node_; }

private:
  hw::ClusterSpec cluster_;
  std::shared_ptr<const topo::Fabric> fabric_;
  TrafficConfig traffic_;
  PlatformOptions opts_;
  NodeModel gpu_t_, storage_t_;
  std::uint32_t storage_base_ = 0, fabric_base_ = 0, pool_base_ = 0;
  NodeModel pool_t_;                 // PlatformOptions::host_pool's model (same local indices as gpu_t_)
  std::vector<std::uint32_t> pool_;  // by local index of gpu_t_: its pool resource, or kNoResource
  std::uint32_t host_cores_ = kNoResource;
  std::vector<Resource> resources_;
  int nics_per_gpu_node_ = 0, nics_per_storage_node_ = 0;
};

/// Packs a place into 64 bits (node 32 | storage 1 | kind 3 | index 16).
[[nodiscard]] std::uint64_t place_key(const sched::Place& p);

}  // namespace ffsim::platform
