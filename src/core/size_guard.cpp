// The size guard's limit and refusal.
// SPDX-License-Identifier: Apache-2.0
#include "core/size_guard.hpp"

#include <atomic>

#include "core/error.hpp"
#include "core/format.hpp"

namespace ffsim {

namespace {
std::atomic<double> g_limit{kDefaultMemoryLimit};
}  // namespace

double memory_limit() { return g_limit.load(); }

void set_memory_limit(double bytes) {
  FFSIM_ASSERT(bytes > 0, "a memory limit above 0");
  g_limit.store(bytes);
}

bool oversized(const Footprint& f, double largest_schedule_ops, double max_ops) {
  return f.bytes > memory_limit() || largest_schedule_ops > max_ops;
}

void refuse_oversized(const std::string& request, const Footprint& f, const std::string& detail,
                      const std::string& suggestion, bool over_ops) {
  std::string m = request + " needs about ";
  if (f.ops > 0) m += fmt_g(f.ops, 3) + " schedule operations and ";
  m += fmt_bytes(Bytes(f.bytes)) + " of memory by the size guard's estimate";
  if (!detail.empty()) m += " (" + detail + ")";
  m += f.bytes > memory_limit() ? ", over the limit of " + fmt_bytes(Bytes(memory_limit())) + " (--max-memory)"
                                : ", within the limit of " + fmt_bytes(Bytes(memory_limit())) + " (--max-memory)";
  if (over_ops)
    m += std::string(f.bytes > memory_limit() ? " and" : " but") + " beyond what one simulated schedule holds";
  m += "; refused before building it: " + suggestion;
  throw SimulationError(m);
}

}  // namespace ffsim
