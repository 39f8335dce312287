// SPDX-License-Identifier: Apache-2.0
#include "coll/placement.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.hpp"
#include "core/spell.hpp"
#include "platform/platform.hpp"

namespace ffsim::coll {

namespace {

const std::vector<std::string>& kinds() {
  static const std::vector<std::string> k{"packed", "spread", "cross-zone", "random"};
  return k;
}

std::string forms() { return "packed, spread, cross-zone[:SHARE] (SHARE in (0, 1), default 0.5), random[:SEED]"; }

std::string fmt_share(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", s);
  return b;
}

// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): a seed's stream, the same bytes on every
// standard library (no std::*_distribution).
std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Uniform in [0, n) by rejection (no modulo bias).
std::uint64_t below(std::uint64_t& s, std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  for (;;) {
    const std::uint64_t x = splitmix(s);
    if (x < limit) return x % n;
  }
}

}  // namespace

std::string Placement::name() const {
  switch (kind) {
    case Kind::Packed: return "packed";
    case Kind::Spread: return "spread";
    case Kind::CrossZone: return "cross-zone:" + fmt_share(share);
    case Kind::Random: return "random:" + std::to_string(seed);
  }
  return "packed";
}

Placement parse_placement(const std::string& text) {
  const auto colon = text.find(':');
  const std::string head = text.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  Placement pl;
  if (head == "packed" || head == "spread") {
    if (colon != std::string::npos)
      throw UsageError("--placement " + text + ": " + head + " takes no argument; valid: " + forms());
    pl.kind = head == "packed" ? Placement::Kind::Packed : Placement::Kind::Spread;
  } else if (head == "cross-zone") {
    pl.kind = Placement::Kind::CrossZone;
    if (colon != std::string::npos) {
      char* end = nullptr;
      pl.share = std::strtod(arg.c_str(), &end);
      if (arg.empty() || end != arg.c_str() + arg.size() || !(pl.share > 0 && pl.share < 1))
        throw UsageError("--placement " + text + ": expected the share of nodes in the first zone, a number in (0, 1) "
                         "such as cross-zone:0.5; found \"" + arg + "\"");
    }
  } else if (head == "random") {
    pl.kind = Placement::Kind::Random;
    if (colon != std::string::npos) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(arg.c_str(), &end, 10);
      if (arg.empty() || arg[0] == '-' || end != arg.c_str() + arg.size())
        throw UsageError("--placement " + text + ": expected a seed, a non-negative integer such as random:7; found \"" +
                         arg + "\"");
      pl.seed = v;
    }
  } else {
    throw UsageError("--placement " + text + ": unknown placement \"" + head + "\"" + did_you_mean(head, kinds()) +
                     "; valid: " + forms());
  }
  return pl;
}

std::vector<int> node_zones(const platform::Platform& p) {
  const int n = p.cluster().nodes;
  std::vector<int> z(static_cast<std::size_t>(n), 0);
  const auto* f = p.fabric();
  if (!f) return z;
  for (int v = 0; v < n; ++v)
    z[static_cast<std::size_t>(v)] =
        f->endpoints()[static_cast<std::size_t>(p.endpoint_of(sched::Place::nic(v, p.nic_for(sched::Place::dram(v, 0)))))]
            .zone;
  return z;
}

std::vector<int> place_nodes(const platform::Platform& p, int gpus, const Placement& pl, const std::string& what) {
  const int per = static_cast<int>(p.cluster().node.gpus.size());
  const int total = p.cluster().nodes;
  if (gpus < 1 || gpus > p.cluster().gpus())
    throw ValueError("asked for " + std::to_string(gpus) + " GPUs; the cluster has " + std::to_string(p.cluster().gpus()));
  const int n = (gpus + per - 1) / per;
  std::vector<int> out;
  if (pl.kind == Placement::Kind::Packed) {
    for (int v = 0; v < n; ++v) out.push_back(v);
    return out;
  }
  const auto zones = node_zones(p);
  // The first zone's nodes (the zone of node 0), and the first other zone's.
  std::vector<int> first, second;
  int z1 = -1;
  for (int v = 0; v < total; ++v) {
    const int z = zones[static_cast<std::size_t>(v)];
    if (z == zones[0]) first.push_back(v);
    else if (z1 < 0 || z == z1) z1 = z, second.push_back(v);
  }
  std::vector<int> pool;
  if (pl.kind == Placement::Kind::CrossZone) {
    if (gpus % per != 0)
      throw UsageError(what + " needs whole nodes: " + std::to_string(gpus) + " GPUs is not a multiple of " +
                       std::to_string(per));
    if (n < 2)
      throw UsageError(what + ": " + std::to_string(gpus) + " GPUs are one node, which sits in one zone; a group across "
                       "two zones needs at least 2 nodes (" + std::to_string(2 * per) + " GPUs)");
    if (second.empty()) throw UsageError(what + ": the scenario's fabric has a single zone");
    const int a = std::clamp(static_cast<int>(std::floor(n * pl.share + 0.5)), 1, n - 1), b = n - a;
    if (a > static_cast<int>(first.size()) || b > static_cast<int>(second.size()))
      throw UsageError(what + ": not enough nodes in the zones");
    out.assign(first.begin(), first.begin() + a);
    out.insert(out.end(), second.begin(), second.begin() + b);
    std::sort(out.begin(), out.end());
    return out;
  }
  // spread and random keep a job that fits the first zone inside it (the paper's rule for jobs
  // under a zone's size); a larger job takes nodes of the whole cluster.
  if (n <= static_cast<int>(first.size())) pool = first;
  else
    for (int v = 0; v < total; ++v) pool.push_back(v);
  const int m = static_cast<int>(pool.size());
  if (pl.kind == Placement::Kind::Spread) {
    // Node i of n at floor(i m / n): equal gaps, the first node first.
    for (int i = 0; i < n; ++i)
      out.push_back(pool[static_cast<std::size_t>(static_cast<long long>(i) * m / n)]);
    return out;
  }
  // random: a partial Fisher-Yates shuffle of the pool, the first n kept, in ascending order.
  std::uint64_t s = pl.seed;
  for (int i = 0; i < n; ++i) {
    const int j = i + static_cast<int>(below(s, static_cast<std::uint64_t>(m - i)));
    std::swap(pool[static_cast<std::size_t>(i)], pool[static_cast<std::size_t>(j)]);
  }
  out.assign(pool.begin(), pool.begin() + n);
  std::sort(out.begin(), out.end());
  return out;
}

Group place_group(const platform::Platform& p, int gpus, const Placement& pl, const std::string& what) {
  if (pl.packed()) return Group::first_gpus(p, gpus);
  const int per = static_cast<int>(p.cluster().node.gpus.size());
  const auto nodes = place_nodes(p, gpus, pl, what);
  Group g;
  for (int r = 0; r < gpus; ++r) g.ranks.push_back(sched::Place::gpu(nodes[static_cast<std::size_t>(r / per)], r % per));
  return g;
}

}  // namespace ffsim::coll
