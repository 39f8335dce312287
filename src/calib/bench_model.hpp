// What hfreduce-bench ran, rebuilt for the simulator: each measured configuration becomes a
// Schedule (a copy, a k-way reduce, the HFReduce pipeline, the inter-node double binary tree) on a
// Platform of the measured machine's node model, with the parameters calibration sets applied.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <limits>
#include <string>

#include "calib/measurement.hpp"
#include "coll/collective.hpp"
#include "config/catalog.hpp"
#include "eval/engine.hpp"
#include "hw/specs.hpp"

namespace ffsim::calib {

/// The simulator parameters calibration fits. Each maps onto a fact of the node model (or of the
/// models it references, or of the hfreduce library), so that `--calibration` can apply it.
enum class Param {
  DramBandwidth,  ///< socket DRAM: bytes read plus written per second
  DeviceLink,     ///< a device's copy link, per direction (an emulated device: its copy thread)
  DeviceLatency,  ///< fixed time of one device copy (the node's pcie_latency)
  Duplex,         ///< the device port's cap on both directions together
  ReducePerCore,  ///< input bytes per second one core sums
  ChunkOverhead,  ///< HFReduce's software time per chunk and stage
  NicBandwidth,   ///< the inter-node transport's rate per direction
  NicLatency,     ///< the inter-node transport's time per message
};
inline constexpr int kParams = 8;
[[nodiscard]] const char* param_name(Param p);  ///< "dram_bandwidth", "device_link_bandwidth", ...
[[nodiscard]] bool is_bandwidth(Param p);

/// Values in SI units (bytes per second, seconds); NaN: not set (the node model's value holds).
using ParamSet = std::array<double, kParams>;
[[nodiscard]] ParamSet unset_params();
[[nodiscard]] inline double& at(ParamSet& s, Param p) { return s[static_cast<std::size_t>(p)]; }
[[nodiscard]] inline double at(const ParamSet& s, Param p) { return s[static_cast<std::size_t>(p)]; }

/// Benchmark runs whose working set fits in the last-level cache run at cache speed; the
/// simulator has no cache, so calibration fits each regime on its own and the node model takes
/// the DRAM regime's values.
enum class Regime { Cache = 0, Dram = 1 };
[[nodiscard]] const char* regime_name(Regime r);  ///< "cache", "dram"

/// The machine a calibration describes.
struct BenchModel {
  hw::NodeSpec node;
  coll::LibraryParams lib;
  /// Last-level cache of the node's CPU (bytes); 0 when the model does not say (every run is DRAM).
  double llc = 0;
};

/// The node model `node_name` of the catalog, its CPU's cache and the collective libraries.
/// An unknown name throws ValueError with the valid names.
[[nodiscard]] BenchModel make_bench_model(const config::Catalog& cat, const std::string& node_name);

/// The node model's own (published) value of every parameter.
[[nodiscard]] ParamSet published(const BenchModel& m);

/// Host bytes a configuration touches over and over, over all ranks (they share one machine):
/// copy 2S, reduce (k+1)S, host-backend D2H/H2D 2S (CUDA: S), both at once twice that, pipeline
/// D x S plus its staging slots, inter-node ranks x S, whole allreduce ranks x the pipeline's.
[[nodiscard]] double working_set(const Point& pt);
/// Cache when the working set is at most twice the last-level cache (the cache then serves most of
/// its bytes), else DRAM; always DRAM when the model gives no cache size.
[[nodiscard]] Regime regime_of(const BenchModel& m, const Point& pt);

/// "" if the simulator rebuilds this configuration, else why it does not.
[[nodiscard]] std::string not_simulated(const Point& pt);

/// Checks that the measured machine and every point fit the node model (cores, NUMA nodes,
/// devices, backend against emulated or real GPUs, SIMD paths, a NIC for inter-node stages).
/// Errors are ConfigErrors at the measurement file's JSON pointer.
void check_machine(const BenchModel& m, const MeasurementFile& f);

/// Time of one measured configuration simulated on `engine` with parameters `p` (unset entries
/// keep the node model's values). Throws for configurations not_simulated() rejects.
[[nodiscard]] double simulate(const BenchModel& m, const ParamSet& p, const Point& pt, eval::Engine& engine);

/// The pipeline depth hfreduce's Pipeline uses (PipelineOptions::depth), i.e. staging slots per device.
inline constexpr int kPipelineDepth = 3;
/// Slices one tree of hfreduce's TreeAllreduce keeps in flight (TreeOptions::window).
inline constexpr int kTreeWindow = 4;

}  // namespace ffsim::calib
