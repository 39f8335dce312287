// Measurement files written by hfreduce-bench (schema "ffsim.hfreduce-bench/1"), as the fits take
// them; config/measurement_reader.hpp reads and checks them.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace ffsim::calib {

inline constexpr const char* kMeasurementSchema = "ffsim.hfreduce-bench/1";

struct MeasuredMachine {
  std::string name;
  std::string cpu_model;
  int usable_cpus = 0;
  int numa_nodes = 0;
  std::vector<std::string> isa;
  std::vector<std::string> gpus;
  double memory_bytes = 0;
  /// Host backend: "pinned" (HFREDUCE_HOST_PIN=1: each stream's copy thread on its own CPU, in
  /// turn) or "unpinned" (left to the scheduler, the default; files written before hfreduce-bench
  /// recorded it, 2026-12-01, ran so).
  std::string host_streams = "unpinned";
  /// The size per call from which the machine's memcpy streams (glibc's x86_non_temporal_threshold,
  /// as hfreduce-bench read it from the loader since 2026-12-06); 0: not recorded.
  double memcpy_streaming_threshold = 0;
};

struct Bound {
  std::string name;
  std::string metric;  ///< "traffic_Bps" or "algbw_Bps"
  double value_Bps = 0;
  double ratio = 0;
};

/// One measured configuration.
struct Point {
  std::string stage;    ///< copy, reduce, d2h, h2d, bidir, pipeline, mpi_allreduce, internode, allreduce
  std::string backend;  ///< cpu, host, cuda, mpi
  std::string variant;
  std::string dtype;
  std::string store;
  int k = 0, devices = 0, ranks = 0, threads = 0;
  double chunk_bytes = 0;
  /// "in_place" or "out_of_place" (hfreduce-bench's allreduce stages since 2026-12-01: nccl-tests'
  /// two rows), else empty. Two configurations, not two runs of one: the Zen 3 VM's tree ran out of
  /// place slower than in place in every round at 64 and 256 MiB (medians 12-37% apart).
  std::string placement;
  /// The size per call from which the run's memcpy streamed, as its file recorded it
  /// (MeasuredMachine::memcpy_streaming_threshold); 0: not recorded, the node model's CPU says. A
  /// property of the boot, not of the CPU model: glibc derives it from the cache size the VM reports,
  /// which moved between boots of one VM (the Zen 5 VM: 288 MiB on 2026-12-06).
  double memcpy_streaming = 0;
  double bytes = 0;          ///< tensor size S
  double traffic_bytes = 0;  ///< bytes read + written (copies: bytes over the link)
  double time_min = 0, time_median = 0, time_max = 0;
  int reps = 0;
  int calls_per_sample = 1;  ///< calls timed together per sample (hfreduce-bench batches calls under 50 us)
  /// The median time of each round (hfreduce-bench --rounds N >= 2; empty for one sweep).
  std::vector<double> rounds;
  double algbw_Bps = 0, traffic_Bps = 0;
  std::vector<Bound> bounds;
  std::string pointer;  ///< JSON pointer of the point, for messages
};

struct MeasurementFile {
  std::string file;
  std::string date;
  std::string command;
  MeasuredMachine machine;
  std::vector<Point> points;
};

/// The median of `v` (for an even count, the mean of the middle two); NaN if empty.
[[nodiscard]] double median_of(std::vector<double> v);

}  // namespace ffsim::calib
