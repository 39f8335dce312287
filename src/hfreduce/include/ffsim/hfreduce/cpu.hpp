// CPU facts hfreduce needs: SIMD paths (ISA) available and forced, CPUs usable, NUMA nodes.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ffsim::hfreduce {

/// A SIMD path of the reduce kernels.
enum class Isa { Scalar, Avx2, Avx512 };

/// Registry name: "scalar", "avx2", "avx512".
std::string_view isa_name(Isa isa) noexcept;

/// Parses a registry name; throws KernelError listing the valid names otherwise.
Isa parse_isa(std::string_view name);

/// CPU features the path needs but this CPU (or OS) lacks, space separated; empty if usable.
/// avx2 needs avx2 and f16c; avx512 needs avx512f, avx512bw, avx512vl and f16c.
std::string isa_missing_features(Isa isa);

/// True when this CPU can run the path.
bool isa_supported(Isa isa);

/// Every usable path, scalar first.
std::vector<Isa> supported_isas();

/// The fastest usable path.
Isa best_isa();

/// The path forced by the environment variable HFREDUCE_ISA (scalar|avx2|avx512), else best_isa().
/// Throws KernelError when the variable names an unknown path or one this CPU cannot run.
Isa default_isa();

/// CPUs this process may run on (sched_getaffinity), at least 1.
int usable_cpu_count();

/// NUMA nodes with memory reported by libnuma; 1 without libnuma or when it is unavailable.
int numa_node_count();

/// CPU model name from /proc/cpuinfo ("unknown" if absent).
std::string cpu_model_name();

/// CPU feature flags of interest present on this machine, e.g. "avx2 f16c avx512f avx512bw".
std::string cpu_feature_summary();

}  // namespace ffsim::hfreduce
