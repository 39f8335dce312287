// Platform::all_pairs_loads (an alltoall's traffic without a path per pair) against the sum over
// every pair's own path, on every shipped fabric.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "approx.hpp"
#include "coll/collective.hpp"
#include "coll/common.hpp"
#include "config/coll_reader.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using sched::Place;

namespace {

// The definition: every ordered pair (a, b), a != b, loads each resource of path(a, b) with
// `bytes` (twice if the path crosses it twice); the rate cap is the smallest over the pairs'
// paths; the latency of each kind (inside a node, between nodes) the largest over its pairs.
platform::Platform::PairLoads brute_force(const platform::Platform& p, const std::vector<Place>& ranks, double bytes) {
  platform::Platform::PairLoads out;
  out.load.assign(p.resource_count(), 0.0);
  for (std::size_t a = 0; a < ranks.size(); ++a)
    for (std::size_t b = 0; b < ranks.size(); ++b) {
      if (a == b) continue;
      const auto& path = p.path(p.path_id(ranks[a], ranks[b]));
      for (std::uint32_t r : path.resources) out.load[r] += bytes;
      out.min_rate_cap = std::min(out.min_rate_cap, path.rate_cap);
      const bool net = ranks[a].node != ranks[b].node;
      (net ? out.any_net : out.any_local) = true;
      if (net) out.max_net_latency = std::max(out.max_net_latency, path.latency);
    }
  return out;
}

// A deterministic spread of GPUs over the whole cluster: node i*stride+offset, g GPUs of it
// (1..gpus per node, varying), so that nodes of every leaf, zone and plane mix with whole and
// partial nodes.
std::vector<Place> spread(const platform::Platform& p, int count, std::uint64_t seed) {
  const int nodes = p.cluster().nodes;
  const int gpn = static_cast<int>(p.cluster().node.gpus.size());
  std::vector<Place> r;
  std::uint64_t x = seed;
  auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((x >> 33) % 1000003);
  };
  std::vector<int> used;
  for (int i = 0; i < count && static_cast<int>(used.size()) < nodes; ++i) {
    int node = next() % nodes;
    while (std::find(used.begin(), used.end(), node) != used.end()) node = (node + 1) % nodes;
    used.push_back(node);
    const int g = 1 + next() % gpn;
    const int first = next() % gpn;
    for (int k = 0; k < g; ++k) r.push_back(Place::gpu(node, (first + k * 3) % gpn));
  }
  // Keep each GPU once (the stride of 3 may revisit one on nodes of 3 or 6 GPUs).
  std::vector<Place> once;
  for (const Place& q : r)
    if (std::find(once.begin(), once.end(), q) == once.end()) once.push_back(q);
  return once;
}

void check_same(const platform::Platform& p, const std::vector<Place>& ranks, double bytes) {
  const auto fast = p.all_pairs_loads(ranks, bytes);
  const auto ref = brute_force(p, ranks, bytes);
  REQUIRE(fast.load.size() == ref.load.size());
  std::size_t loaded = 0, off = 0;
  for (std::size_t r = 0; r < ref.load.size(); ++r) {
    // Sums of equal terms, counted instead of added one by one: equal to the rounding of the sum.
    if (ref.load[r] > 0) ++loaded;
    if (std::abs(fast.load[r] - ref.load[r]) > 1e-12 * ref.load[r] || (ref.load[r] == 0) != (fast.load[r] == 0)) {
      if (off++ < 5) {
        CAPTURE(p.resource_name(static_cast<std::uint32_t>(r)));
        CHECK(fast.load[r] == ref.load[r]);
      }
    }
  }
  CHECK(off == 0);
  CHECK(fast.any_local == ref.any_local);
  CHECK(fast.any_net == ref.any_net);
  CHECK(fast.min_rate_cap == ref.min_rate_cap);
  CHECK(fast.max_net_latency == doctest::Approx(ref.max_net_latency).epsilon(1e-12).scale(testing::kRelative));
  // Not vacuous: every pair moved something, so every pair's resources are loaded.
  if (ranks.size() > 1 && bytes > 0) CHECK(loaded > 0);
}

std::shared_ptr<const platform::Platform> load(const std::string& scenario) {
  return plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/" + scenario + ".json", testing::catalog()));
}

}  // namespace

TEST_CASE("platform all_pairs_loads equals the sum over every pair's path - shipped fabrics") {
  // Two-layer (Fire-Flyer 2's two zones, with and without NVLink bridges, the DGX-A100 cluster of
  // 8 NICs per node), three-layer, multi-plane with PXN (DeepSeek-V3's MPFT, the rail-optimized
  // SuperPOD) and the one-node VM.
  for (const char* sc : {"fire-flyer-2", "fire-flyer-2-nvlink", "dgx-a100-cluster", "pcie-3layer", "deepseek-v3-mpft",
                         "dgx-a100-superpod", "fire-flyer-next", "xeon-2c-vm"}) {
    CAPTURE(sc);
    const auto p = load(sc);
    const int gpn = static_cast<int>(p->cluster().node.gpus.size());
    const int all = p->cluster().nodes * gpn;
    // 1 rank (no pairs), one node, 2 nodes and 3 whole nodes plus 5 GPUs of a fourth (odd, partial).
    for (int n : {1, 2, gpn, 2 * gpn, 3 * gpn + 5}) {
      if (n > all) continue;
      CAPTURE(n);
      check_same(*p, coll::Group::first_gpus(*p, n).ranks, 1048576.0 / 3);
    }
    // Nodes from all over the cluster (every zone, leaf and plane), some whole, some in part.
    for (std::uint64_t seed : {1, 2, 3}) {
      CAPTURE(seed);
      check_same(*p, spread(*p, 37, seed), 4096.0);
    }
    // Size 0: nothing loaded, latencies still counted.
    check_same(*p, coll::Group::first_gpus(*p, std::min(all, 2 * gpn + 1)).ranks, 0.0);
  }
}

TEST_CASE("platform all_pairs_loads - the alltoall closed form equals its per-pair definition") {
  // The closed form before all_pairs_loads: the bottleneck bound of n(n-1) flows of S/n, one per
  // pair's path, plus the largest of max(hop latency, path latency) + arbitration over the pairs.
  const auto lib = config::load_library_params(testing::catalog());
  const auto a2a = coll::algorithms().get("alltoall").factory();
  for (const char* sc : {"fire-flyer-2", "dgx-a100-cluster", "deepseek-v3-mpft"}) {
    const auto p = load(sc);
    for (std::uint64_t seed : {5, 6}) {
      CAPTURE(sc);
      CAPTURE(seed);
      coll::Group g;
      g.ranks = spread(*p, 29, seed);
      const int n = g.size();
      const double S = 184.0 * 1048576;
      std::vector<std::pair<std::uint32_t, double>> flows;
      double lat = 0;
      for (int x = 0; x < n; ++x)
        for (int y = 0; y < n; ++y) {
          if (x == y) continue;
          const auto& px = g.ranks[static_cast<std::size_t>(x)];
          const auto& py = g.ranks[static_cast<std::size_t>(y)];
          const auto pid = p->path_id(px, py);
          flows.emplace_back(pid, S / n);
          const double hop = px.node != py.node ? lib.nccl.simple.ring_hop_latency_net : lib.nccl.simple.ring_hop_latency_pci;
          lat = std::max(lat, std::max(hop, p->path(pid).latency) + p->options().arbitration_latency);
        }
      const coll::Bound b = coll::bottleneck_bound(*p, flows);
      const auto est = a2a->estimate(*p, lib, g, S);
      CHECK(est.time == doctest::Approx(b.time + lat).epsilon(1e-12).scale(testing::kRelative));
      CHECK(est.bottleneck == coll::bound_label(*p, b.resource));
    }
  }
}
