// What hfreduce-bench ran, rebuilt for the simulator: each measured configuration becomes a
// Schedule (a copy, a k-way reduce, the HFReduce pipeline, the inter-node double binary tree) on a
// Platform of the measured machine's node model, with the parameters calibration sets applied.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <limits>
#include <map>
#include <string>

#include "calib/measurement.hpp"
#include "coll/collective.hpp"
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

/// The memory levels a CPU kernel's bytes are served from: the per-core L1 data cache and L2, the
/// last-level cache the cores share, DRAM.
enum class Level { L1 = 0, L2 = 1, Llc = 2, Dram = 3 };
inline constexpr int kLevels = 4;
[[nodiscard]] const char* level_name(Level l);  ///< "l1", "l2", "llc", "dram"

/// Rates of one kind of CPU kernel (a copy: memcpy, kernel_regular, kernel_nt; a reduce group:
/// ISA, dtype and stores) in the memory model.
struct KindRates {
  /// Traffic bytes (read plus written) per second one thread moves from each level; NaN: not set
  /// (no point of the kind is served from that level; the model takes the nearest slower level's,
  /// else the nearest faster one's). The model reads them through kind_rate, which keeps them
  /// monotone (a level's rate is at least the slower levels'); calibration stores them so.
  std::array<double, kLevels> rate{};
  /// What each thread beyond the first adds, as a fraction of the first's rate (1: perfect
  /// scaling; less where the vCPUs share a core's execution ports or a memory path). The model
  /// uses min(gain, 1); NaN: 1.
  double gain = 0;
};

/// The memory model of the measured machine's CPU kernels (copies and reduces). A call of a kernel
/// on n threads that moves W traffic bytes (W_w of them written) takes
///   t = call_latency + (n - 1) x fork_cost + sum over levels l of f_l x W_c / R_l + W_s / R_dram,
///   R_l = min((1 + (n - 1) x min(gain, 1)) x rate_l, shared_l x share),
/// where W_c are the bytes that may come from a cache (all of W; with streaming stores the read
/// bytes only, the written W_s = W_w always going to DRAM) and f_l the fraction of them level l
/// serves: with the per-thread working set w = W_c / n against the per-core caches and W_c against the
/// shared one (the streamed bytes never enter a cache: cached_bytes), h(x, C) = 1 / (1 + (x / C)^sharpness) of a cache
/// of size C, f_L1 = h(w, L1), f_L2 = (1 - f_L1) h(w, L2), f_LLC = (1 - h(w, L1))(1 - h(w, L2)) h(W, LLC), f_DRAM the
/// rest; `share` the kind's counted traffic over its physical traffic (counted_share: write-allocate).
struct MemoryModel {
  double call_latency = 0;  ///< fixed time of a kernel call (seconds)
  double fork_cost = 0;     ///< time each thread beyond the first adds to a call (waking a pool thread and joining it)
  double sharpness = 0;     ///< exponent of the transition between levels (NaN: a step)
  /// The cap each level puts on all threads together (bytes per second): the LLC's and DRAM's; NaN
  /// (the per-core L1 and L2; an unpinned cap): none.
  std::array<double, kLevels> shared{};
  std::map<std::string, KindRates> kinds;  ///< by kernel_kind()
};
[[nodiscard]] MemoryModel unset_memory_model();

/// The machine a calibration describes.
struct BenchModel {
  hw::NodeSpec node;
  coll::LibraryParams lib;
  /// Last-level cache of the node's CPU (bytes); 0 when the model does not say (every run is DRAM).
  double llc = 0;
  /// Per-core L1 data cache and L2 of the node's CPU (bytes); 0 when the model does not say.
  double l1 = 0, l2 = 0;
  /// The per-call size from which the CPU's memcpy streams (hw::CpuSpec::memcpy_streaming_threshold,
  /// bytes); 0 when the model does not say (every memcpy then takes the memcpy kind's rates).
  double memcpy_streaming = 0;
};

/// What `simulate` runs a point with: the node-level parameters and the memory model.
struct ModelParams {
  ParamSet node = unset_params();
  MemoryModel memory = unset_memory_model();
  /// The memory-model kind whose rates the composed stages' reduces take (HFReduce's group).
  std::string reduce_kind;
};

/// The machine of a node model and the collective libraries (config::make_bench_model reads them
/// from the catalog), with its CPU's caches.
[[nodiscard]] BenchModel make_bench_model(hw::NodeSpec node, coll::LibraryParams lib);

/// Which both-ways cap of a device port `device_port_duplex_bandwidth` is: the always-on duplex cap
/// (`duplex_bandwidth`), or, on a port that states only `bidirectional_bandwidth` (the VMs' emulated
/// devices: a copy thread alone runs at its link's rate, two directions at once contend), that cap,
/// which holds only while both directions carry copies.
[[nodiscard]] bool port_cap_is_bidirectional(const hw::PciePortSpec& port);

/// The node model's own (published) value of every parameter.
[[nodiscard]] ParamSet published(const BenchModel& m);

/// Host bytes a configuration touches over and over, over all ranks (they share one machine):
/// copy 2S, reduce (k+1)S, host-backend D2H/H2D 2S (CUDA: S), both at once twice that, pipeline
/// D x S plus its staging slots, inter-node ranks x S, whole allreduce ranks x the pipeline's.
[[nodiscard]] double working_set(const Point& pt);
/// Bytes the bench touches between two repetitions of a point besides the point's own working set:
/// hfreduce-bench measures a host-backend device copy beside one thread's copy of its size (2S),
/// and a one-rank host pipeline beside a copy of its traffic / 2 (at most 512 MiB) on every core;
/// measure_interleaved alternates them, so that copy's bytes pass through the caches between two
/// calls of the point and evict its working set where the two together exceed them.
[[nodiscard]] double between_repetitions(const Point& pt);
/// Cache when the working set is at most twice the last-level cache, else DRAM (see the .cpp);
/// always DRAM when the model gives no cache size.
[[nodiscard]] Regime regime_of(const BenchModel& m, const Point& pt);

/// The memory-model kind of a copy or reduce point: "copy memcpy", "reduce avx512 fp32 regular";
/// "" for other stages.
[[nodiscard]] std::string kernel_kind(const Point& pt);
/// glibc's memcpy from its streaming threshold on: a kind of its own. It was once timed as the
/// streaming copy kernel ("copy kernel_nt": the same stores), but its loop is another one (glibc
/// 2.36's large_memcpy_4x copies four pages at a time with prefetches) and runs faster: on the Xeon
/// 480 MiB VM one thread's 1.125 GiB copy took 97 ms against the kernel's 132
/// (models/measured/xeon-l3-480m-2c-vm-2026-12-07-receives.json), which one set of rates fitted
/// 10-20% wrong both ways.
inline constexpr const char* kStreamingMemcpy = "copy memcpy_streaming";
/// Whether a copy kind writes with streaming stores (its written half always to DRAM).
[[nodiscard]] bool streaming_copy(const std::string& kind);
/// The kind whose rates time the point: its kernel_kind, but a memcpy of at least the machine's
/// streaming threshold per thread (the one the point's run recorded, Point::memcpy_streaming, else
/// BenchModel::memcpy_streaming) is glibc's streaming loop, kStreamingMemcpy.
[[nodiscard]] std::string model_kind(const BenchModel& m, const Point& pt);
/// The copy kind a memcpy of `call_bytes` per call takes on this machine: from the streaming
/// threshold on (`recorded`, the run's own, where > 0, else the node model's) kStreamingMemcpy
/// where the model has that kind, else the streaming kernel's ("copy kernel_nt"), else "copy
/// memcpy"; below it "copy memcpy".
[[nodiscard]] std::string memcpy_kind(const BenchModel& m, const MemoryModel& mm, double call_bytes,
                                      double recorded = 0);
/// A pipeline's or allreduce's chunk copies (`copy`, their memcpy kind) against what the memory
/// model gives the point's whole working set: the staging slot's side in the last-level cache for
/// the share `served` gives the bytes the pipeline touches between two uses of a slot (its slots
/// and the device bytes read and written meanwhile, depth chunks per device each way, one way in
/// place; all ranks of an allreduce), else at DRAM; the device side (half the copy traffic) at DRAM,
/// in place too (the H2D finds the lines the D2H read in the cache, but they go back to DRAM dirty).
/// The whole working set includes what the bench touches between two calls (between_repetitions).
/// At least 1, and 1 for other stages or without an LLC or that kind.
[[nodiscard]] double slot_copy_gain(const BenchModel& m, const MemoryModel& mm, const std::string& copy,
                                    const Point& pt);
/// Whether the point's memcpys (a memcpy copy's per thread, a device copy's, a pipeline's chunk) stream
/// by the threshold its own run recorded (false where it recorded none): samples_of keeps such a
/// point apart from the same configuration's runs that did not stream (another kernel).
[[nodiscard]] bool streams_by_its_record(const Point& pt);
/// The threads a copy or reduce call runs on: hfreduce's Reducer (the vector kernels and the
/// reduces) hands a thread at least 64 KiB of output (ReducerOptions::min_bytes_per_thread), so
/// min(threads, max(1, floor(S / 64 KiB))); the bench's memcpy splits over every thread.
[[nodiscard]] int kernel_threads(const Point& pt);
inline constexpr double kMinBytesPerThread = 64.0 * 1024;
/// Fractions of a working set of W bytes on n threads that each level serves (they sum to 1).
[[nodiscard]] std::array<double, kLevels> level_fractions(const BenchModel& m, double sharpness, double W, int n);
/// A kind's per-thread rate at a level: the fastest of its own and the slower levels' set rates (a
/// level nearer the core serves its bytes at least as fast as the levels behind it: the rates are
/// monotone, L1 >= L2 >= LLC >= DRAM), else the nearest faster level's; NaN if the kind has none.
[[nodiscard]] double kind_rate(const KindRates& k, Level l);
/// R_l of the memory model for `n` threads of a kind (above); NaN if the kind has no rate. The
/// shared caps bound physical traffic: `share` is the counted traffic's share of it (counted_share).
[[nodiscard]] double level_rate(const MemoryModel& mm, const KindRates& k, Level l, int n, double share);
/// The share of a kind's counted traffic (its reads plus its writes) in what it moves through the
/// shared levels. Ordinary stores that miss the core's caches read each line before writing it
/// (write-allocate): a copy with ordinary stores ("copy memcpy" below glibc's streaming threshold,
/// "copy kernel_regular") moves 3 bytes for the 2 counted, a reduce of k inputs with ordinary stores
/// k + 2 for k + 1. Streaming stores write around the caches: 1. The per-thread rates are fitted on
/// counted traffic and absorb the extra read; the shared caps (llc_shared_bandwidth,
/// dram_shared_bandwidth) are what all threads and kinds together move, so a kind reaches cap x share.
[[nodiscard]] double counted_share(const std::string& kind, int k);
/// The bytes of a copy or reduce point that pass through the caches: its traffic (copy 2S, reduce
/// (k+1)S) less what streaming stores write (S), which goes around them. The working set the caches'
/// fractions (level_fractions) see: a streaming copy of S keeps S in them, not 2S. Measured on the
/// Xeon 480 MiB VM: one thread's streaming-kernel copy held the LLC's rate up to 232 MiB of traffic,
/// its ordinary-store copy and memcpy to 135-141 (models/cpus/xeon_l3_480m_2c_vm.json).
[[nodiscard]] double cached_bytes(const BenchModel& m, const Point& pt);
/// Time of one copy or reduce call by the memory model (seconds; NaN if its kind has no rates).
[[nodiscard]] double kernel_seconds(const BenchModel& m, const MemoryModel& mm, const Point& pt);
/// The traffic rate all `n` threads of `kind` reach over a working set of W bytes (the levels'
/// rates mixed by level_fractions; the streaming copy's written half at DRAM's); NaN if the model
/// has no rate for the kind.
/// `k`: a reduce kind's inputs (counted_share); a copy's is not used (pass 0).
[[nodiscard]] double mixed_rate(const BenchModel& m, const MemoryModel& mm, const std::string& kind, double W, int n,
                                int k);

/// What `threads` threads (summed over the sockets; 0: all the cores) can use of machine `n`: each
/// socket's reduce rate becomes one "core" of min(threads, its cores); DRAM and ports stay as they
/// are. A rank of an MPI stage is limited so, and the ranks together by the machine they share
/// (platform::PlatformOptions::host_pool).
void thread_limits(hw::NodeSpec& n, int threads);

/// "" if the simulator rebuilds this configuration, else why it does not.
[[nodiscard]] std::string not_simulated(const Point& pt);

/// Checks that the measured machine and every point fit the node model (cores, NUMA nodes,
/// devices, backend against emulated or real GPUs, SIMD paths, a NIC for inter-node stages).
/// Errors are ConfigErrors at the measurement file's JSON pointer.
void check_machine(const BenchModel& m, const MeasurementFile& f);

/// Time of one measured configuration simulated on `engine` with parameters `p` (unset entries
/// keep the node model's values). Throws for configurations not_simulated() rejects.
/// Copies and reduces run as the memory model says: a delay of their fixed time, then the op with
/// the platform's rates set to the memory model's at the point's levels. The composed stages (device
/// copies, pipeline, tree, allreduce) run on the node model with its DRAM rate, device link and
/// per-core reduce rate taken from the memory model at their working set where it has them.
[[nodiscard]] double simulate(const BenchModel& m, const ModelParams& p, const Point& pt, eval::Engine& engine);

/// The pipeline depth hfreduce's Pipeline uses (PipelineOptions::depth), i.e. staging slots per device.
inline constexpr int kPipelineDepth = 3;
/// Slices one tree of hfreduce's TreeAllreduce keeps in flight (TreeOptions::window).
inline constexpr int kTreeWindow = 4;

}  // namespace ffsim::calib
