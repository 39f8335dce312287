// Tests of every registered fabric generator against closed forms, their routes, and their rejects.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "config/reader.hpp"
#include "config/topo_reader.hpp"
#include "core/error.hpp"
#include "topo/fabric.hpp"
#include "topo/topology.hpp"
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
  s.power = 250_W;
  return s;
}

FabricDemand nodes(int n, int nics = 1, int gpus = 0, int storage = 0, int storage_nics = 0) {
  FabricDemand d;
  d.gpu_nodes = n;
  d.nics_per_gpu_node = nics;
  d.gpus_per_node = gpus;
  d.storage_nodes = storage;
  d.nics_per_storage_node = storage_nics;
  d.host_bandwidth = 25_GBps;
  return d;
}

const CableLatencies kCables{5_ns, 50_ns};

int three_layer_core(const Fabric& f) { return f.counts().switches_by_tier.at("core"); }

// A generator from the registry with its parameters given as JSON (the "fabric" section less
// "topology" and "switch").
std::unique_ptr<Topology> make(const std::string& name, const std::string& params, int radix) {
  const config::Document doc = config::Document::parse(params, "fabric.json", false);
  return config::topologies().get(name).factory(doc.root(), radix_switch(radix), kCables);
}

// The ConfigError or ValueError message of `f`.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.pointer() + "|" + e.message();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "no error";
}

// A route is a contiguous walk from src up its host link to dst down its host link. Within one
// tree (no inter-zone bridge) it never goes up after going down (up/down routing is deadlock-free).
// `bridged_ok`: a route between endpoints of different zones may turn (it crosses a bridge); one
// within a zone may not, on any fabric.
void check_route(const Fabric& f, int src, int dst, bool bridged_ok = false) {
  const auto r = f.route(src, dst);
  REQUIRE(r.size() >= 2);
  const auto& L = f.links();
  CHECK(L[static_cast<std::size_t>(r.front().link)].lower == f.endpoint_vertex(src));
  CHECK(r.front().up);
  CHECK(L[static_cast<std::size_t>(r.back().link)].lower == f.endpoint_vertex(dst));
  CHECK_FALSE(r.back().up);
  int at = f.endpoint_vertex(src);
  int turns = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const Link& l = L[static_cast<std::size_t>(r[i].link)];
    CHECK((r[i].up ? l.lower : l.upper) == at);
    at = r[i].up ? l.upper : l.lower;
    if (i > 0 && r[i].up && !r[i - 1].up) ++turns;  // down then up again
  }
  const auto& e = f.endpoints();
  if (!bridged_ok || e[static_cast<std::size_t>(src)].zone == e[static_cast<std::size_t>(dst)].zone) CHECK(turns == 0);
  CHECK(f.route(src, dst) == r);  // deterministic
}

// Routes between a spread of endpoint pairs, and the same routes on a second build.
void check_routes(const Topology& t, const FabricDemand& d, int stride, bool bridged_ok = false) {
  const Fabric a = t.build(d), b = t.build(d);
  const int n = static_cast<int>(a.endpoints().size());
  for (int s = 0; s < n; s += stride)
    for (int e = (s * 7 + 1) % n; e < n; e += stride) {
      if (s == e || a.endpoints()[static_cast<std::size_t>(s)].plane != a.endpoints()[static_cast<std::size_t>(e)].plane)
        continue;
      CAPTURE(s);
      CAPTURE(e);
      check_route(a, s, e, bridged_ok);
      CHECK(a.route(s, e) == b.route(s, e));
    }
}

}  // namespace

TEST_CASE("topo::registry: every generator is registered with a description") {
  const auto names = config::topologies().names();
  CHECK(names == std::vector<std::string>{"multi_plane", "multi_zone", "single_switch", "three_layer", "two_layer"});
  for (const auto& e : config::topologies().entries()) CHECK_FALSE(e.description.empty());
  CHECK(error_of([] { (void)config::topologies().get("fat_tre"); }) ==
        "unknown topology \"fat_tre\"; valid: multi_plane, multi_zone, single_switch, three_layer, two_layer");
}

TEST_CASE("topo::two_layer: built fabric of the non-blocking radix-k tree") {
  for (int k : {2, 4, 6, 8, 16, 40, 64}) {
    CAPTURE(k);
    const auto t = make("two_layer", R"({"build": "full"})", k);
    // Non-blocking radix k, full: k leaves (k/2 down, k/2 up), k/2 spines, k^2/2 hosts.
    const long long hosts = static_cast<long long>(k) * k / 2;
    CHECK(t->capacity() == hosts);
    const Fabric f = t->build(nodes(static_cast<int>(hosts)));
    const FabricCounts c = f.counts();
    CHECK(c.switches_by_tier.at("leaf") == k);
    CHECK(c.switches_by_tier.at("spine") == k / 2);
    CHECK(c.switches == 3 * k / 2);
    // k^2/2 host cables, k leaves x k/2 spines leaf-spine cables, two optics per leaf-spine cable.
    CHECK(c.cables_by_kind.at("host_leaf") == hosts);
    CHECK(c.cables_by_kind.at("leaf_spine") == hosts);
    CHECK(c.optics == 2 * hosts);
    // Every port in use: 3k/2 switches x k ports = host ends + 2 ends per leaf-spine cable.
    CHECK(c.total_ports == 3 * k / 2 * k);
    CHECK(c.used_ports == c.total_ports);
    CHECK(c.access_points == hosts);
    CHECK(c.layers == 2);
    CHECK(c.zones == 1);
    CHECK(c.planes == 1);
  }
}

TEST_CASE("topo::two_layer: oversubscription and as-needed builds") {
  struct Case {
    int k;
    double r;
    int down, up;
  };
  // down = k r / (1 + r), up = k - down: 40 at 3:1 -> 30:10; 40 at 4:1 -> 32:8; 48 at 2:1 -> 32:16; 48 at 5:1 -> 40:8.
  for (const Case c : {Case{40, 1, 20, 20}, Case{40, 3, 30, 10}, Case{40, 4, 32, 8}, Case{48, 2, 32, 16}, Case{48, 5, 40, 8}}) {
    CAPTURE(c.k);
    CAPTURE(c.r);
    const auto t = make("two_layer", R"({"build": "full", "oversubscription": )" + std::to_string(c.r) + "}", c.k);
    // Capacity k x down hosts; k leaves, `up` spines; k x up leaf-spine cables.
    CHECK(t->capacity() == static_cast<long long>(c.k) * c.down);
    const FabricCounts n = t->build(nodes(c.k * c.down)).counts();
    CHECK(n.switches_by_tier.at("leaf") == c.k);
    CHECK(n.switches_by_tier.at("spine") == c.up);
    CHECK(n.cables_by_kind.at("leaf_spine") == c.k * c.up);
    CHECK(n.access_points == c.k * c.down);
    // Full ratio check: host ports per leaf / uplinks per leaf = down / up.
    CHECK(static_cast<double>(c.down) / c.up == doctest::Approx(c.r).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  // As needed, 40 ports at 1:1, n hosts: ceil(n / 20) leaves and 20 spines; sweep the edges.
  const auto t = make("two_layer", "{}", 40);
  for (int n : {1, 19, 20, 21, 399, 400, 401, 799, 800}) {
    CAPTURE(n);
    const FabricCounts c = t->build(nodes(n)).counts();
    CHECK(c.switches_by_tier.at("leaf") == (n + 19) / 20);
    CHECK(c.switches_by_tier.at("spine") == 20);
    CHECK(c.endpoints == n);
  }
}

TEST_CASE("topo::two_layer: rejects odd radix, zero ports and more hosts than it holds") {
  CHECK(error_of([] { (void)make("two_layer", "{}", 41); }) == "|a fat-tree needs an even switch radix of at least 2, got 41");
  CHECK(error_of([] { (void)make("two_layer", "{}", 0); }) == "|a fat-tree needs an even switch radix of at least 2, got 0");
  CHECK(error_of([] { (void)make("two_layer", "{}", 1); }) == "|a fat-tree needs an even switch radix of at least 2, got 1");
  CHECK(error_of([] { (void)make("two_layer", R"({"oversubscription": 0.5})", 40); }) ==
        "/oversubscription|expected a number in [1, 1e+06], got number 0.5");
  CHECK(error_of([] { (void)make("two_layer", R"({"buld": "full"})", 40); }) ==
        "|unknown key \"buld\" (did you mean \"build\"?); valid keys: build, oversubscription");
  // 40 ports at 1:1 hold 40 x 20 = 800 hosts; 801 is one too many, and the message names the limit.
  const auto t = make("two_layer", "{}", 40);
  CHECK(error_of([&] { (void)t->build(nodes(801)); }) ==
        "a two-layer fat-tree of 40-port switches at 20:20 holds at most 800 endpoints (40 leaves x 20 hosts); the "
        "cluster needs 801");
}

TEST_CASE("topo::fabric: a design beyond the fabric bounds is a clear error, not an out-of-memory crash") {
  // A full two-layer fat-tree of k-port switches has k leaves x k/2 spines = k^2/2 leaf-spine links:
  // 2,896 ports give 4,193,408 <= 2^22, 2,898 give 4,199,202 > 2^22 (until 2026-12-01 20,000-port
  // switches asked for 2e8 links and ended in std::bad_alloc, exit 1).
  CHECK(Fabric::kMaxLinks == 4194304);
  CHECK(make("two_layer", R"({"build": "full"})", 2896)->build(nodes(1)).counts().switches == 2896 + 1448);
  CHECK(error_of([] { (void)make("two_layer", R"({"build": "full"})", 2898)->build(nodes(1)); }) ==
        "the design needs more than 4,194,304 links (2,898-port sw2898 switches: a full two-layer fat-tree of k-port "
        "switches has k^2/2 of them), more than ffsim builds (each costs memory for its routes); check the switch's "
        "port count or the design's size");
}

TEST_CASE("topo::two_layer: routes are up/down, D-mod-k and deterministic") {
  for (int k : {4, 6, 8}) {
    CAPTURE(k);
    const auto t = make("two_layer", R"({"build": "full"})", k);
    check_routes(*t, nodes(k * k / 2), 1);
  }
  // Same leaf: 2 hops; other leaf: 4 hops (host, leaf-spine up, spine-leaf down, host).
  const Fabric f = make("two_layer", "{}", 8)->build(nodes(32));
  CHECK(f.route(0, 1).size() == 2);
  CHECK(f.route(0, 4).size() == 4);
  // D-mod-k: the spine is chosen by the destination: dst and dst + 4 (4 spines) share a spine.
  CHECK(f.links()[static_cast<std::size_t>(f.route(0, 5)[1].link)].upper ==
        f.links()[static_cast<std::size_t>(f.route(0, 9)[1].link)].upper);
}

TEST_CASE("topo::three_layer: the k-ary fat-tree's closed forms") {
  for (int k : {4, 8, 12, 16, 40}) {
    CAPTURE(k);
    const auto t = make("three_layer", R"({"core_sizing": "exact"})", k);
    // k pods of k/2 leaves + k/2 spines hold k^3/4 hosts; exact core: k^3/4 uplinks / k ports = k^2/4;
    // switches k^2 + k^2/4 = 5k^2/4 (k = 48 would give 27,648 hosts on 2,880 switches).
    const long long hosts = static_cast<long long>(k) * k * k / 4;
    CHECK(t->capacity() == hosts);
    const FabricCounts c = t->build(nodes(static_cast<int>(hosts))).counts();
    CHECK(c.switches_by_tier.at("leaf") == k * k / 2);
    CHECK(c.switches_by_tier.at("spine") == k * k / 2);
    CHECK(c.switches_by_tier.at("core") == k * k / 4);
    CHECK(c.switches == 5 * k * k / 4);
    // k^3/4 cables on each of the three levels; every installed port in use.
    CHECK(c.cables_by_kind.at("host_leaf") == hosts);
    CHECK(c.cables_by_kind.at("leaf_spine") == hosts);
    CHECK(c.cables_by_kind.at("spine_core") == hosts);
    CHECK(c.used_ports == c.total_ports);
    CHECK(c.layers == 3);
  }
}

TEST_CASE("topo::three_layer: core sizing rules over every pod count of 40-port switches") {
  const auto exact = make("three_layer", R"({"core_sizing": "exact"})", 40);
  const auto pow2 = make("three_layer", R"({"core_sizing": "power_of_two_pods"})", 40);
  for (int pods = 1; pods <= 40; ++pods) {
    CAPTURE(pods);
    const int hosts = pods * 400 - 7;  // just short of full pods: still `pods` pods of 400
    // Exact: P x 20 spines x 20 uplinks / 40 ports = 10 P, rounded up to the 20 core groups: 20 ceil(P/2).
    // Power of two: 2^ceil(log2 P) pods' uplinks (at most 40 pods): 10 x 2^ceil(log2 P). One pod: no core.
    int p2 = 1;
    while (p2 < pods) p2 *= 2;
    const int core_exact = pods == 1 ? 0 : 20 * ((pods + 1) / 2);
    const int core_pow2 = pods == 1 ? 0 : 10 * std::min(p2, 40);
    CHECK(three_layer_core(exact->build(nodes(hosts))) == core_exact);
    CHECK(three_layer_core(pow2->build(nodes(hosts))) == core_pow2);
    CHECK(exact->build(nodes(hosts)).counts().switches == 40 * pods + core_exact);
  }
}

TEST_CASE("topo::three_layer: Table III's designs: 1,600 access points -> 200, 10,000 -> 1,320") {
  // 1,250 hosts: ceil(1,250/400) = 4 pods (1,600 access points) x 40 + exact core 4 x 400 / 40 = 40.
  const FabricCounts a = make("three_layer", R"({"core_sizing": "exact"})", 40)->build(nodes(1250)).counts();
  CHECK(a.access_points == 1600);
  CHECK(a.switches_by_tier.at("core") == 40);
  CHECK(a.switches == 200);
  // 10,000 hosts: 25 pods = 500 leaves + 500 spines; core for 32 pods: 32 x 400 / 40 = 320.
  const FabricCounts b =
      make("three_layer", R"({"core_sizing": "power_of_two_pods"})", 40)->build(nodes(10000)).counts();
  CHECK(b.switches_by_tier.at("leaf") == 500);
  CHECK(b.switches_by_tier.at("spine") == 500);
  CHECK(b.switches_by_tier.at("core") == 320);
  CHECK(b.switches == 1320);
}

TEST_CASE("topo::three_layer: rejects and routes") {
  CHECK(error_of([] { (void)make("three_layer", "{}", 42); }) ==
        "|a three-layer fat-tree needs a radix divisible by 4 (k/2 spines split into k/2 core groups), got 42");
  CHECK(error_of([] { (void)make("three_layer", "{}", 0); }) ==
        "|a three-layer fat-tree needs a radix divisible by 4 (k/2 spines split into k/2 core groups), got 0");
  CHECK(error_of([] { (void)make("three_layer", R"({"core_sizing": "pow2"})", 40); }) ==
        "/core_sizing|expected one of exact, power_of_two_pods; got \"pow2\"");
  // k^3/4 = 16,000 hosts at most for 40 ports.
  CHECK(error_of([] { (void)make("three_layer", "{}", 40)->build(nodes(16001)); }) ==
        "a three-layer fat-tree of 40-port switches holds at most 16,000 endpoints (40 pods x 400); the cluster needs "
        "16,001");
  // Routes across pods go host, leaf, spine, core, spine, leaf, host: 6 hops.
  const auto t = make("three_layer", R"({"core_sizing": "exact"})", 8);
  check_routes(*t, nodes(128), 3);
  const Fabric f = t->build(nodes(128));
  CHECK(f.route(0, 127).size() == 6);
  CHECK(f.route(0, 9).size() == 4);  // same pod (k^2/4 = 16 hosts per pod, 4 per leaf), other leaf
}

TEST_CASE("topo::multi_zone: zones, dual-homed storage, inter-zone switches, chassis") {
  const std::string params =
      R"({"zones": 2, "zone_build": "full", "inter_zone": {"switches": 2, "links_per_zone": 10}})";
  const auto t = make("multi_zone", params, 40);
  // Fire-Flyer 2: 1,200 nodes + 180 storage nodes with one NIC in each zone.
  const FabricDemand d = nodes(1200, 1, 8, 180, 2);
  const FabricCounts c = t->build(d).counts();
  // 2 zones x (20 spines + 40 leaves) + 2 inter-zone switches = 122.
  CHECK(c.switches_by_tier.at("leaf") == 80);
  CHECK(c.switches_by_tier.at("spine") == 40);
  CHECK(c.switches_by_tier.at("inter_zone") == 2);
  CHECK(c.switches == 122);
  // Host cables: 1,200 + 2 x 180 = 1,560; leaf-spine: 2 x 40 x 20; inter-zone: 2 switches x 10 links x 2 zones.
  CHECK(c.cables_by_kind.at("host_leaf") == 1560);
  CHECK(c.cables_by_kind.at("leaf_spine") == 1600);
  CHECK(c.cables_by_kind.at("inter_zone") == 40);
  CHECK(c.optics == 2 * (1600 + 40));
  CHECK(c.access_points == 1600);  // 2 zones x 800
  CHECK(c.layers == 2);
  CHECK(c.zones == 2);
  CHECK(t->capacity() == 2 * (800 - 20));
  // Each storage node has NIC z in zone z.
  const Fabric f = t->build(d);
  for (const auto& e : f.endpoints())
    if (e.storage) CHECK(e.zone == e.nic);

  // Packaged as one chassis per zone: the same 122 switches, leaf-spine links on backplanes.
  const auto ch = make("multi_zone", params.substr(0, params.size() - 1) + R"(, "zone_chassis": "cs8500"})", 40);
  const FabricCounts cc = ch->build(d).counts();
  CHECK(cc.switches == 122);
  CHECK(cc.chassis == 2);
  CHECK(cc.chassis_by_model.at("cs8500") == 2);
  CHECK(cc.switches_in_chassis == 120);
  CHECK(cc.standalone_switches_by_model.at("sw40") == 2);
  CHECK(cc.cables_by_kind.at("leaf_spine") == 0);
  CHECK(cc.backplane_links == 1600);
  CHECK(cc.cables == 1560 + 40);
  CHECK(cc.optics == 2 * 40);
  CHECK(cc.access_points == 1600);
}

TEST_CASE("topo::multi_zone: capacity, rejects and bridged routes") {
  const auto t = make("multi_zone", R"({"zones": 2, "inter_zone": {"switches": 2, "links_per_zone": 10}})", 40);
  // Per zone: 625 nodes + 180 storage ports + 20 inter-zone links = 825 > 800 (why Fire-Flyer has 1,200 nodes).
  CHECK(error_of([&] { (void)t->build(nodes(1250, 1, 8, 180, 2)); }) ==
        "zone 0: a two-layer fat-tree of 40-port switches at 20:20 holds at most 800 endpoints (40 leaves x 20 hosts); "
        "the cluster needs 825 (805 host ports + 20 inter-zone links)");
  CHECK(error_of([&] { (void)t->build(nodes(100, 1, 8, 10, 1)); }) ==
        "storage nodes are dual-homed with one NIC per zone, but they have 1 NIC for 2 zones");
  CHECK(error_of([] { (void)make("multi_zone", R"({"zones": 2})", 40); }) ==
        "|missing required key \"inter_zone\" (expected {\"switches\": N, \"links_per_zone\": M} joining the zones)");
  CHECK(error_of([] {
          (void)make("multi_zone", R"({"zones": 2, "inter_zone": {"switches": 1, "links_per_zone": 21}})", 40);
        }) == "/inter_zone/links_per_zone|21 links into each of 2 zones need 42 ports; the sw40 has 40");
  CHECK(error_of([] {
          (void)make("multi_zone", R"({"zones": 1, "zone_chassis": "CS-8500"})", 40);
        }) == "/zone_chassis|expected the snake_case name of a director chassis in the price book (e.g. \"cs8500\"), got "
              "\"CS-8500\"");
  // Small two-zone fabric of 8-port switches: in-zone routes are up/down; cross-zone routes cross
  // an inter-zone switch (up to it from a bridge leaf, down to the other zone's bridge leaf).
  const auto s = make("multi_zone", R"({"zones": 2, "inter_zone": {"switches": 1, "links_per_zone": 2}})", 8);
  const FabricDemand d = nodes(40, 1, 8, 4, 2);
  check_routes(*s, d, 3, /*bridged_ok=*/true);
  const Fabric f = s->build(d);
  const auto r = f.route(0, 39);  // node 0 in zone 0, node 39 in zone 1
  int iz_hops = 0;
  for (const Hop& h : r)
    if (f.links()[static_cast<std::size_t>(h.link)].kind == LinkKind::InterZone) ++iz_hops;
  CHECK(iz_hops == 2);
}

// D-mod-k spreads consecutive destinations over the spines: from one leaf, destinations 0..19 in
// the same zone leave by 20 different spines (their lowest digit picks the up link). A route to
// the other zone climbs to a spine of its own zone too, on the way to the bridge leaf, and must
// spread the same way: until 2026-12-01 that climb took the digits left after the bridge's choices
// (destination / 200 on Fire-Flyer 2's 2 switches x 10 x 10 bridge links), so 20 consecutive
// destinations in the other zone shared one spine from a given leaf (a 1,440-GPU HFReduce across
// the zones met six tree edges on one spine-to-leaf link and ran 24% slower). Counted on Fire-Flyer
// 2's fabric: from node 0's leaf, to nodes 20..39 (the next leaf) and to 600..619 (zone 1), the
// distinct first spines.
TEST_CASE("topo::multi_zone: routes to the other zone spread over the spines as routes within it") {
  const auto t = make("multi_zone", R"({"zones": 2, "inter_zone": {"switches": 2, "links_per_zone": 10}})", 40);
  const Fabric f = t->build(nodes(1200, 1, 8, 180, 2));
  auto first_spine = [&](int src, int dst) {
    const auto r = f.route(src, dst);
    REQUIRE(r.size() >= 3);
    return f.links()[static_cast<std::size_t>(r[1].link)].upper;  // r[0]: host to leaf; r[1]: leaf up
  };
  std::set<int> within, across;
  for (int d = 20; d < 40; ++d) within.insert(first_spine(0, d));       // zone 0, the next leaf
  for (int d = 600; d < 620; ++d) across.insert(first_spine(0, d));     // zone 0 to zone 1
  CHECK(f.endpoints()[600].zone != f.endpoints()[0].zone);
  CHECK(within.size() == 20);
  CHECK(across.size() == 20);
  // And in the other zone, from the bridge leaf down: the last up link before the destination's
  // leaf is the destination's own spine choice, as for a route inside that zone.
  for (int d = 600; d < 620; ++d) {
    const auto r = f.route(0, d), inside = f.route(1199, d);  // 1199: zone 1, another leaf
    REQUIRE(inside.size() == 4);
    CAPTURE(d);
    // The spine above the destination's leaf: the upper end of the second-to-last hop.
    CHECK(f.links()[static_cast<std::size_t>(r[r.size() - 2].link)].upper ==
          f.links()[static_cast<std::size_t>(inside[inside.size() - 2].link)].upper);
  }
}

TEST_CASE("topo::multi_plane: Sec. IX and DeepSeek-V3 reach in two layers") {
  // 4 planes of 128-port switches at 1:1: 4 x 128 x 64 = 32,768 NIC ports = 32,768 GPUs (1 NIC each),
  // 4,096 nodes of 8 GPUs + 8 NICs, NIC i in plane i mod 4; 4 x (128 leaves + 64 spines) = 768 switches.
  const auto a = make("multi_plane", R"({"planes": 4})", 128);
  CHECK(a->capacity() == 32768);
  const FabricCounts ca = a->build(nodes(4096, 8, 8)).counts();
  CHECK(ca.endpoints == 32768);
  CHECK(ca.planes == 4);
  CHECK(ca.layers == 2);
  CHECK(ca.switches_by_tier.at("leaf") == 4 * 128);
  CHECK(ca.switches_by_tier.at("spine") == 4 * 64);
  CHECK(ca.switches_by_tier.at("core") == 0);
  CHECK(ca.switches == 768);
  CHECK(ca.cables_by_kind.at("host_leaf") == 32768);
  CHECK(ca.cables_by_kind.at("leaf_spine") == 4 * 128 * 64);
  // 8 planes of 64-port switches: 8 x 64 x 32 = 16,384 GPUs on 2,048 nodes; 8 x (64 + 32) = 768 switches.
  const auto b = make("multi_plane", R"({"planes": 8})", 64);
  CHECK(b->capacity() == 16384);
  const FabricCounts cb = b->build(nodes(2048, 8, 8)).counts();
  CHECK(cb.endpoints == 16384);
  CHECK(cb.planes == 8);
  CHECK(cb.layers == 2);
  CHECK(cb.switches == 768);
  // One node more does not fit, and the message names the limit.
  CHECK(error_of([&] { (void)b->build(nodes(2049, 8, 8)); }) ==
        "8 planes of two-layer fat-trees of 64-port switches at 32:32 hold at most 16,384 endpoints (8 planes x 64 "
        "leaves x 32 hosts); the cluster needs 16,392 (2,049 in one plane)");
}

TEST_CASE("topo::multi_plane: planes are separate fabrics - rejects") {
  const auto t = make("multi_plane", R"({"planes": 2})", 8);
  const FabricDemand d = nodes(16, 2, 2);  // 16 nodes x 2 GPUs x 2 NICs: 16 ports per plane
  const Fabric f = t->build(d);
  // Endpoint 2n + i is node n's NIC i, in plane i.
  for (const auto& e : f.endpoints()) CHECK(e.plane == e.nic);
  check_routes(*t, d, 1);
  CHECK(f.route(0, 2).size() >= 2);  // n0.nic0 -> n1.nic0: same plane
  CHECK(error_of([&] { (void)f.route(0, 3); }) ==
        "no route from n0.nic0 (plane 0) to n1.nic1 (plane 1): each plane is a separate fabric; only NIC ports of the "
        "same plane reach each other");
  // A plane's route never touches another plane's switches.
  for (const Hop& h : f.route(1, 31)) {
    const Link& l = f.links()[static_cast<std::size_t>(h.link)];
    CHECK(f.switches()[static_cast<std::size_t>(l.upper) - f.endpoints().size()].plane == 1);
  }
  // D-mod-k numbers a plane's hosts on their own (each plane its own subnet): from one leaf to the
  // 4 hosts of another leaf of the same plane, the 4 routes climb to the plane's 4 spines, one each.
  // (With the global endpoint ids, 2n + i, a plane's hosts were every other number and shared 2
  // of the 4 spines: half the plane's bisection.)
  for (int plane = 0; plane < 2; ++plane) {
    CAPTURE(plane);
    std::vector<int> members;
    for (std::size_t e = 0; e < f.endpoints().size(); ++e)
      if (f.endpoints()[e].plane == plane) members.push_back(static_cast<int>(e));
    std::map<int, std::vector<int>> by_leaf;  // leaf switch vertex -> the plane's endpoints on it
    for (int e : members) {
      const int other = e == members[0] ? members[1] : members[0];
      by_leaf[f.links()[static_cast<std::size_t>(f.route(e, other).front().link)].upper].push_back(e);
    }
    REQUIRE(by_leaf.size() == 4);
    const int src = by_leaf.begin()->second.front();
    const auto& far = std::next(by_leaf.begin())->second;
    REQUIRE(far.size() == 4);
    std::set<int> spines;
    for (int dst : far) {
      const auto r = f.route(src, dst);
      REQUIRE(r.size() == 4);  // host -> leaf -> spine -> leaf -> host
      spines.insert(f.links()[static_cast<std::size_t>(r[1].link)].upper);
    }
    CHECK(spines.size() == 4);
  }
  CHECK(error_of([&] { (void)t->build(nodes(16, 1, 8)); }) ==
        "a multi-plane fabric gives every GPU its own NIC, but the GPU node has 8 GPUs and 1 compute NIC");
  CHECK(error_of([] { (void)make("multi_plane", R"({"planes": 3})", 8)->build(nodes(4, 8, 8)); }) ==
        "8 compute NICs per node do not split evenly over 3 planes (NIC i joins plane i mod 3)");
  CHECK(error_of([&] { (void)t->build(nodes(4, 2, 2, 2, 1)); }) ==
        "storage nodes have 1 NIC; 2 planes need a multiple of 2 so that every plane reaches every storage node");
  CHECK(error_of([] { (void)make("multi_plane", "{}", 8); }) == "|missing required key \"planes\" (expected an integer)");
  CHECK(error_of([] { (void)make("multi_plane", R"({"planes": 2})", 7); }) ==
        "|a fat-tree needs an even switch radix of at least 2, got 7");
}

TEST_CASE("topo::single_switch: every port on one switch, two-hop routes, capacity and rejects") {
  // 8 ports, 2 spare: 6 hosts fit. 3 nodes x 2 NICs = 6 endpoints on one switch, 6 host links, and
  // any two endpoints are host link up, host link down: 2 hops.
  const auto t = make("single_switch", R"({"spare_ports": 2})", 8);
  CHECK(t->capacity() == 6);
  CHECK(t->summary() == "one 8-port sw8 switch (2 ports spare)");
  const Fabric f = t->build(nodes(3, 2));
  CHECK(f.counts().switches == 1);
  CHECK(f.links().size() == 6);
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 6; ++b)
      if (a != b) CHECK(f.route(a, b).size() == 2);
  check_routes(*t, nodes(3, 2), 1);
  // Storage ports count too: 2 GPU nodes + 2 storage nodes x 1 NIC = 4 endpoints.
  CHECK(t->build(nodes(2, 1, 0, 2, 1)).links().size() == 4);
  // Edges: 1 endpoint; no spare ports (the whole radix); one endpoint too many.
  CHECK(t->build(nodes(1)).links().size() == 1);
  CHECK(make("single_switch", "{}", 8)->capacity() == 8);
  CHECK(make("single_switch", "{}", 8)->summary() == "one 8-port sw8 switch");
  CHECK(error_of([&] { (void)t->build(nodes(7)); }) ==
        "one 8-port sw8 switch with 2 spare ports holds at most 6 endpoints; the cluster needs 7 (use two_layer for "
        "more)");
  CHECK(error_of([] { (void)make("single_switch", R"({"spare_ports": 8})", 8); }) ==
        "|spare_ports must leave at least one of the switch's 8 ports for hosts, got 8");
  CHECK(error_of([] { (void)make("single_switch", R"({"spare_ports": -1})", 8); }) ==
        "/spare_ports|expected an integer in [0, 1048576], got number -1");
  CHECK(error_of([] { (void)make("single_switch", R"({"spare_port": 1})", 8); }) ==
        "|unknown key \"spare_port\" (did you mean \"spare_ports\"?); valid keys: spare_ports");
}
