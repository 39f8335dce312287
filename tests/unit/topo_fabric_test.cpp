// Tests of the fabric graph and its up/down routing, on hand-built and generated fabrics.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <set>

#include "core/error.hpp"
#include "topo/fabric.hpp"
#include "topo/three_layer.hpp"
#include "topo/two_layer.hpp"

using namespace ffsim;
using namespace ffsim::topo;
using namespace ffsim::literals;

namespace {
hw::SwitchSpec radix_switch(int k) {
  hw::SwitchSpec s;
  s.name = "sw" + std::to_string(k);
  s.ports = k;
  s.port_bandwidth = 25_GBps;
  s.latency = 130_ns;
  return s;
}
FabricDemand hosts(int n) {
  FabricDemand d;
  d.gpu_nodes = n;
  d.nics_per_gpu_node = 1;
  d.host_bandwidth = 25_GBps;
  return d;
}
const CableLatencies kCables{5_ns, 50_ns};

// Every route is a valid walk: starts at src going up, ends at dst going down, never goes up after down
// (up/down deadlock freedom) unless it crosses an inter-zone bridge.
void check_route(const Fabric& f, int src, int dst) {
  const auto r = f.route(src, dst);
  REQUIRE(r.size() >= 2);
  const auto& L = f.links();
  CHECK(L[static_cast<std::size_t>(r.front().link)].lower == f.endpoint_vertex(src));
  CHECK(r.front().up);
  CHECK(L[static_cast<std::size_t>(r.back().link)].lower == f.endpoint_vertex(dst));
  CHECK_FALSE(r.back().up);
  int at = f.endpoint_vertex(src);
  int turns = 0;  // down, then up again
  for (std::size_t i = 0; i < r.size(); ++i) {
    const Link& l = L[static_cast<std::size_t>(r[i].link)];
    CHECK((r[i].up ? l.lower : l.upper) == at);  // contiguous
    at = r[i].up ? l.upper : l.lower;
    if (i > 0 && r[i].up && !r[i - 1].up) ++turns;
  }
  const auto& e = f.endpoints();
  if (e[static_cast<std::size_t>(src)].zone == e[static_cast<std::size_t>(dst)].zone) CHECK(turns == 0);
}
}  // namespace

TEST_CASE("topo::two_layer: closed forms of the non-blocking radix-k tree") {
  for (int k : {4, 8, 40, 64}) {
    CAPTURE(k);
    // Non-blocking radix k, full build: k leaves (k/2 down, k/2 up), k/2 spines, k^2/2 endpoints.
    const auto s = two_layer_shape(k, 1.0, static_cast<long long>(k) * k / 2, true);
    CHECK(s.leaves == k);
    CHECK(s.spines == k / 2);
    CHECK(s.down == k / 2);
    CHECK(s.capacity() == static_cast<long long>(k) * k / 2);
  }
  // 3:1 oversubscription of 40 ports: 30 down, 10 up -> 10 spines, 40 x 30 = 1,200 hosts.
  const auto o = two_layer_shape(40, 3.0, 1200, true);
  CHECK(o.down == 30);
  CHECK(o.up == 10);
  CHECK(o.spines == 10);
  CHECK(o.capacity() == 1200);
  // As needed: 45 hosts on 40-port leaves with 20 down -> ceil(45/20) = 3 leaves.
  CHECK(two_layer_shape(40, 1.0, 45, false).leaves == 3);
  CHECK_THROWS_WITH_AS((void)two_layer_shape(41, 1.0, 1, false), "a fat-tree needs an even switch radix of at least 2, got 41",
                       ValueError);
  CHECK_THROWS_AS((void)two_layer_shape(0, 1.0, 1, false), ValueError);
  CHECK_THROWS_WITH_AS((void)two_layer_shape(40, 1.0, 801, false),
                       "a two-layer fat-tree of 40-port switches at 20:20 holds at most 800 endpoints (40 leaves x 20 "
                       "hosts); the cluster needs 801",
                       ValueError);
}

TEST_CASE("topo::three_layer: core sizing rules") {
  // 1,600 endpoints of 40-port switches: pods of 400 -> 4 pods x (20 + 20); uplinks 4*20*20 = 1,600 -> 40 core.
  auto p = three_layer_shape(40, 1600, CoreSizing::Exact);
  CHECK(p.pods == 4);
  CHECK(p.core == 40);
  CHECK(p.switches() == 200);
  CHECK(three_layer_shape(40, 1600, CoreSizing::PowerOfTwoPods).core == 40);  // 4 is a power of two
  // 10,000 endpoints: 25 pods -> 1,000 pod switches; exact core 25*400/40 = 250 ports' worth, rounded up to
  // a multiple of the k/2 = 20 core groups -> 260; power-of-two pods: 32*400/40 = 320.
  CHECK(three_layer_shape(40, 10000, CoreSizing::Exact).switches() == 1260);
  CHECK(three_layer_shape(40, 10000, CoreSizing::PowerOfTwoPods).core == 320);
  CHECK(three_layer_shape(40, 10000, CoreSizing::PowerOfTwoPods).switches() == 1320);
  // One pod needs no core.
  CHECK(three_layer_shape(40, 400, CoreSizing::Exact).core == 0);
  // k^3/4 endpoints at most: 40 pods of 400 = 16,000.
  CHECK_THROWS_AS((void)three_layer_shape(40, 16001, CoreSizing::Exact), ValueError);
  CHECK_THROWS_AS((void)three_layer_shape(42, 10, CoreSizing::Exact), ValueError);
}

TEST_CASE("topo::Fabric: routes on a small two-layer tree are up/down and D-mod-k") {
  const auto topo_shape = two_layer_shape(4, 1.0, 8, true);  // 4 leaves x 2 hosts, 2 spines
  Fabric f;
  const auto ids = add_demand_endpoints(f, hosts(8));
  add_two_layer_zone(f, topo_shape, radix_switch(4), kCables, 25_GBps, ids, 0, 0, "");
  f.finalize();
  const auto c = f.counts();
  CHECK(c.switches == 6);
  CHECK(c.cables_by_kind.at("host_leaf") == 8);
  CHECK(c.cables_by_kind.at("leaf_spine") == 8);  // 4 leaves x 2 spines
  CHECK(c.optics == 16);
  CHECK(c.used_ports == 8 + 2 * 8);
  // Same leaf: host up, host down. Hosts 0 and 1 share leaf 0.
  CHECK(f.route(0, 1).size() == 2);
  // Different leaves: 4 hops; the spine is chosen by dst mod 2.
  std::set<int> spines;
  for (int dst = 2; dst < 8; ++dst) {
    CAPTURE(dst);
    check_route(f, 0, dst);
    const auto r = f.route(0, dst);
    CHECK(r.size() == 4);
    spines.insert(f.links()[static_cast<std::size_t>(r[1].link)].upper);
    // latency: 4 cables (5 + 50 + 50 + 5 ns) + 3 switches x 130 ns
    CHECK(f.route_latency(r).si() == doctest::Approx(110e-9 + 390e-9).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  CHECK(spines.size() == 2);  // both spines in use
  CHECK(f.route(3, 3).empty());
}

