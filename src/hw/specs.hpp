// Hardware specifications: plain structs that know nothing of JSON, SimGrid or the CLI.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/units.hpp"

namespace ffsim::hw {

/// Arithmetic formats a GPU computes in ("tf32", "fp16", ...), as JSON keys.
inline const std::vector<std::string>& precisions() {
  static const std::vector<std::string> k{"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};
  return k;
}

/// Throughput of one arithmetic format.
struct ComputeRate {
  FlopsPerSecond peak;                         ///< datasheet peak (dense)
  std::optional<FlopsPerSecond> gemm_measured; ///< measured large-GEMM rate, when published
  /// The rate a GEMM-bound kernel reaches: the measured GEMM rate if known, else the peak.
  [[nodiscard]] FlopsPerSecond gemm() const { return gemm_measured.value_or(peak); }
};

struct GpuSpec {
  std::string name;
  std::string description;
  std::string form_factor;         ///< "pcie", "sxm", or "emulated" (a device emulated in host memory)
  Bytes memory;                    ///< device memory (bytes)
  BytesPerSecond memory_bandwidth; ///< device memory bandwidth (bytes per second)
  std::map<std::string, ComputeRate> compute;  ///< by precision name
  int pcie_generation = 4;
  int pcie_lanes = 16;
  BytesPerSecond pcie_bandwidth;   ///< achievable host<->device copy rate per direction
  BytesPerSecond nvlink_bandwidth; ///< per GPU and direction; 0 when the GPU has no NVLink
  int copy_engines = 2;            ///< asynchronous copy engines (D2H and H2D can overlap when >= 2)
  int sms = 0;                     ///< streaming multiprocessors (the GEMM model's waves); 0 if the model gives none
  Watts tdp;                       ///< 0 for an emulated device
  /// An emulated device (hfreduce's host backend): its memory is the DRAM of the socket its port
  /// hangs off, so a copy to or from it reads or writes that DRAM too, and it has no compute.
  [[nodiscard]] bool emulated() const { return form_factor == "emulated"; }
};

struct CpuSpec {
  std::string name;
  std::string description;
  int cores = 1;
  int threads = 1;
  std::optional<Hertz> base_clock;
  std::string simd;                ///< widest SIMD used for reductions: "avx2", "avx512", "neon", "scalar"
  int memory_channels = 1;         ///< per socket
  BytesPerSecond memory_bandwidth; ///< theoretical DRAM bandwidth per socket
  int pcie_lanes = 0;              ///< per socket
  std::optional<Watts> tdp;
  /// Input bytes per second one core sums with SIMD when several cores share the socket's DRAM
  /// (the CPU-reduce throughput of HFReduce); nullopt leaves reductions bound by DRAM only.
  std::optional<BytesPerSecond> reduce_bandwidth_per_core;
  /// Last-level cache a socket's cores share (bytes); calibration uses it to tell cache-resident
  /// benchmark runs from DRAM-bound ones.
  std::optional<Bytes> last_level_cache;
  /// Per-core L1 data and L2 caches (bytes): calibration's memory model (calib/bench_model.hpp)
  /// tells the levels a CPU kernel's working set is served from.
  std::optional<Bytes> l1d_cache_per_core;
  std::optional<Bytes> l2_cache_per_core;
  /// The size from which the C library's memcpy writes with streaming (non-temporal) stores, per
  /// call (glibc: the tunable glibc.cpu.x86_non_temporal_threshold, 3/4 of the shared cache it
  /// detects; `ld.so --list-tunables` prints it): calibration's memory model times a memcpy of at
  /// least this many bytes per thread with the streaming copy kernel's rates.
  std::optional<Bytes> memcpy_streaming_threshold;
};

struct NicSpec {
  std::string name;
  std::string description;
  int ports = 1;
  BytesPerSecond port_bandwidth;   ///< line rate per port and direction
  BytesPerSecond effective_bandwidth; ///< achievable payload rate per port and direction
  Seconds latency;                 ///< one-way NIC latency (send + receive side)
  int pcie_generation = 4;         ///< 0: no PCIe link (a software transport)
  int pcie_lanes = 16;
  Watts power;                     ///< 0 for a software transport
};

struct SwitchSpec {
  std::string name;
  std::string description;
  int ports = 0;                   ///< ports at `port_bandwidth`
  BytesPerSecond port_bandwidth;   ///< per port and direction
  Seconds latency;                 ///< port-to-port forwarding latency
  Watts power;                     ///< typical power with all ports in use
};

/// A socket of a node: a CPU package with its own DRAM (one NUMA node).
struct SocketSpec {
  std::string name;            ///< "cpu0"
  CpuSpec cpu;
  Bytes memory;                ///< DRAM capacity attached to this socket
  BytesPerSecond dram_bandwidth; ///< practical DRAM bandwidth of this socket (reads + writes together)
};

/// A PCIe attachment point: a CPU root port (host bridge) or a PCIe switch below one.
struct PciePortSpec {
  std::string name;            ///< "cpu1.rp1"
  std::string parent;          ///< a socket name, or another port's name for a PCIe switch
  std::string kind;            ///< "root_port" or "switch"
  BytesPerSecond bandwidth;    ///< per direction, shared by everything below it
  /// Cap on both directions together when traffic is bidirectional (Rome host bridges);
  /// nullopt when the two directions are independent.
  std::optional<BytesPerSecond> duplex_bandwidth;
  /// Cap on both directions together while both carry traffic (one direction alone is held only by
  /// `bandwidth`): a bridge that is "lower again when bidirectional"; nullopt when there is none.
  std::optional<BytesPerSecond> bidirectional_bandwidth;
};

struct GpuSlot {
  std::string name;            ///< "gpu0"
  GpuSpec gpu;
  std::string port;            ///< PCIe port it hangs off
};

struct NicSlot {
  std::string name;            ///< "nic0"
  NicSpec nic;
  std::string port;
  std::string role;            ///< "compute", "storage" or "any"
};

struct NvlinkSpec {
  std::string kind = "none";   ///< "none", "pairs" (bridges) or "switch" (NVSwitch: all-to-all)
  std::vector<std::pair<int, int>> pairs;  ///< GPU indices, for "pairs"
  BytesPerSecond bandwidth;    ///< per GPU and direction
};

struct DriveSpec {
  int count = 0;
  Bytes capacity;              ///< per drive
  BytesPerSecond read_bandwidth;  ///< per drive
  BytesPerSecond write_bandwidth; ///< per drive
};

/// A server: sockets, PCIe tree, GPUs, NICs, NVLink, drives, price and power.
struct NodeSpec {
  std::string name;
  std::string description;
  std::string role;                     ///< "gpu" or "storage"
  /// The measured machine this node model describes (hfreduce-bench's `--machine` name, e.g.
  /// "xeon-2c-vm"): calibration fits only runs of that machine. Empty: a model of no measured machine.
  std::string measured_machine;
  /// The CPU model string hfreduce-bench recorded on that machine (`machine.cpu_model`); empty: not
  /// recorded. Calibration refuses runs of another CPU under the same machine name.
  std::string measured_cpu_model;
  std::vector<SocketSpec> sockets;
  BytesPerSecond socket_link_bandwidth; ///< per direction between the sockets (0 with one socket)
  Seconds socket_link_latency;
  std::vector<PciePortSpec> ports;
  std::vector<GpuSlot> gpus;
  std::vector<NicSlot> nics;
  NvlinkSpec nvlink;
  /// GPU<->NIC peer-to-peer rate through the root complex (Rome without chained writes).
  BytesPerSecond gpu_nic_p2p_bandwidth;
  /// GPU<->GPU peer-to-peer rate through the root complex.
  BytesPerSecond gpu_gpu_p2p_bandwidth;
  Seconds pcie_latency;                 ///< one PCIe traversal
  DriveSpec drives;
  std::optional<double> price;          ///< in the catalog's price unit (relative units of Table III)
  std::optional<Watts> power;           ///< average power under training load

  [[nodiscard]] const PciePortSpec* port(const std::string& n) const;
  [[nodiscard]] const SocketSpec* socket(const std::string& n) const;
  /// The socket at the top of a port's chain.
  [[nodiscard]] const SocketSpec& socket_of_port(const std::string& port) const;
  /// The root port above `port` (itself if it is a root port).
  [[nodiscard]] const PciePortSpec& root_port_of(const std::string& port) const;
  [[nodiscard]] int compute_nics() const;
};

/// The machines of a scenario: GPU nodes and storage nodes.
struct StorageSpec {
  NodeSpec node;
  int count = 0;
};
struct ClusterSpec {
  NodeSpec node;                 ///< the GPU node
  int nodes = 0;                 ///< number of GPU nodes
  std::optional<StorageSpec> storage;
  [[nodiscard]] int gpus() const { return nodes * static_cast<int>(node.gpus.size()); }
};

}  // namespace ffsim::hw
