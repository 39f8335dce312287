// Topology generators: named fabric designs, each one file with a plain parameter struct, each
// building a Fabric for a demand. config/topo_reader.hpp reads a scenario's "fabric" section into
// them and holds the registry of names.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/specs.hpp"
#include "topo/fabric.hpp"

namespace ffsim::topo {

/// What the cluster asks of its fabric: how many NIC ports of each kind attach.
struct FabricDemand {
  int gpu_nodes = 0;
  int nics_per_gpu_node = 1;      ///< compute NICs (ports) per GPU node
  int storage_nodes = 0;
  int nics_per_storage_node = 0;  ///< NICs per storage node (2 when dual-homed into two zones)
  BytesPerSecond host_bandwidth;  ///< NIC port rate, per direction
  int gpus_per_node = 0;          ///< GPUs per GPU node (0: unknown), for designs that pair GPUs with NICs
  [[nodiscard]] int endpoints() const { return gpu_nodes * nics_per_gpu_node + storage_nodes * nics_per_storage_node; }
};

/// Cable propagation delays (one way). Host cables run inside a rack, switch-to-switch
/// cables between racks.
struct CableLatencies {
  Seconds host;    ///< host <-> leaf
  Seconds switch_; ///< between switches
};

/// The size of the fabric a design builds for a demand, from its parameters alone (the size guard
/// weighs a platform with it before any switch or link is allocated).
struct FabricSize {
  long long endpoints = 0;
  long long switches = 0;
  long long leaves = 0;  ///< leaf switches (the routes' reachability bitsets have one bit per leaf)
  long long links = 0;
};

/// A fabric design with its parameters parsed.
class Topology {
public:
  virtual ~Topology() = default;
  /// Builds (and finalizes) the fabric for `demand`, or throws ValueError naming the limit that
  /// the demand exceeds ("a two-layer fat-tree of 40-port switches holds at most 800 endpoints").
  [[nodiscard]] virtual Fabric build(const FabricDemand& demand) const = 0;
  /// What build(demand) would allocate, counted from the shape (nothing built); the same
  /// ValueError as build() for a demand beyond the design. tests/unit/topo_generators_test.cpp
  /// compares it with the built fabric.
  [[nodiscard]] virtual FabricSize size_of(const FabricDemand& demand) const = 0;
  /// The most endpoints this design can hold.
  [[nodiscard]] virtual long long capacity() const = 0;
  /// One line: "two-layer fat-tree, 40-port qm8700, 1:1".
  [[nodiscard]] virtual std::string summary() const = 0;
};

/// The NIC ports a cluster attaches: compute NICs of GPU nodes, all NICs of storage nodes.
[[nodiscard]] FabricDemand demand_of(const hw::ClusterSpec& c);

/// A host link runs at the highest rate both of its ends support, as InfiniBand and Ethernet links
/// train (IBTA Vol. 2 link training; IEEE 802.3 auto-negotiation): a NIC port faster than the
/// switch's ports (a 400 Gb/s NDR NIC in a 200 Gb/s HDR switch) runs at the switch's rate. Every
/// NIC that attaches to the fabric (compute NICs of GPU nodes, all NICs of storage nodes) faster
/// than `sw` gets the switch's line rate, and its payload rate scaled by the same ratio (the
/// protocol overhead is a fraction of the line rate); returns one note per NIC changed, for the
/// caller to report at the scenario's "cluster".
[[nodiscard]] std::vector<std::string> negotiate_link_rates(hw::ClusterSpec& c, const hw::SwitchSpec& sw);

/// A scenario's "fabric" section.
struct FabricSpec {
  std::string topology;             ///< registry name
  hw::SwitchSpec sw;                ///< the switch model
  std::shared_ptr<const Topology> design;
};

}  // namespace ffsim::topo
