// CPU feature detection (GCC's __builtin_cpu_supports checks OS state too), HFREDUCE_ISA, NUMA.
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/cpu.hpp"

#include <sched.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "ffsim/hfreduce/error.hpp"

#ifdef FFSIM_HFREDUCE_HAS_NUMA
#include <numa.h>
#endif

namespace ffsim::hfreduce {
namespace {

struct Feature {
  const char* name;
  bool present;
};

std::vector<Feature> features_of(Isa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case Isa::Scalar:
      return {};
    case Isa::Avx2:
      return {{"avx2", __builtin_cpu_supports("avx2") != 0}, {"f16c", __builtin_cpu_supports("f16c") != 0}};
    case Isa::Avx512:
      return {{"avx512f", __builtin_cpu_supports("avx512f") != 0},
              {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
              {"avx512vl", __builtin_cpu_supports("avx512vl") != 0},
              {"f16c", __builtin_cpu_supports("f16c") != 0}};
  }
  return {};
}

}  // namespace

std::string_view isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::Scalar:
      return "scalar";
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
  }
  return "unknown";
}

Isa parse_isa(std::string_view name) {
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
    if (name == isa_name(isa)) return isa;
  }
  FFSIM_KERNEL_THROW(KernelError, "unknown ISA \"", name, "\"; valid: scalar, avx2, avx512");
}

std::string isa_missing_features(Isa isa) {
  std::string missing;
  for (const Feature& feature : features_of(isa)) {
    if (feature.present) continue;
    if (!missing.empty()) missing += ' ';
    missing += feature.name;
  }
  return missing;
}

bool isa_supported(Isa isa) { return isa_missing_features(isa).empty(); }

std::vector<Isa> supported_isas() {
  std::vector<Isa> result;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
    if (isa_supported(isa)) result.push_back(isa);
  }
  return result;
}

Isa best_isa() { return supported_isas().back(); }

Isa default_isa() {
  const char* forced = std::getenv("HFREDUCE_ISA");
  if (forced == nullptr || *forced == '\0') return best_isa();
  const Isa isa = parse_isa(forced);
  const std::string missing = isa_missing_features(isa);
  if (!missing.empty()) {
    FFSIM_KERNEL_THROW(KernelError, "HFREDUCE_ISA=", forced, " but this CPU lacks ", missing);
  }
  return isa;
}

int usable_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  const int count = CPU_COUNT(&set);
  return count > 0 ? count : 1;
}

int numa_node_count() {
#ifdef FFSIM_HFREDUCE_HAS_NUMA
  if (numa_available() < 0) return 1;
  const int nodes = numa_num_configured_nodes();
  return nodes > 0 ? nodes : 1;
#else
  return 1;
#endif
}

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string value = line.substr(colon + 1);
        const auto first = value.find_first_not_of(' ');
        return first == std::string::npos ? std::string("unknown") : value.substr(first);
      }
    }
  }
  return "unknown";
}

std::string cpu_feature_summary() {
  __builtin_cpu_init();
  const Feature all[] = {{"avx2", __builtin_cpu_supports("avx2") != 0},
                         {"fma", __builtin_cpu_supports("fma") != 0},
                         {"f16c", __builtin_cpu_supports("f16c") != 0},
                         {"avx512f", __builtin_cpu_supports("avx512f") != 0},
                         {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
                         {"avx512vl", __builtin_cpu_supports("avx512vl") != 0},
                         {"avx512bf16", __builtin_cpu_supports("avx512bf16") != 0},
                         {"avx512fp16", __builtin_cpu_supports("avx512fp16") != 0}};
  std::string summary;
  for (const Feature& feature : all) {
    if (!feature.present) continue;
    if (!summary.empty()) summary += ' ';
    summary += feature.name;
  }
  return summary;
}

}  // namespace ffsim::hfreduce
