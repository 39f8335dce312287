// Placements (coll/placement.hpp): where a job's nodes are. Expectations are derived from each
// rule in the comments; fire-flyer-2 has two zones (its "multi_zone" fabric), the test fabric of
// testing::cluster one.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "coll/placement.hpp"
#include "core/error.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;

namespace {

const platform::Platform& ff2() {
  static const auto p = plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/fire-flyer-2.json", testing::catalog()));
  return *p;
}

std::vector<int> zone_nodes(const platform::Platform& p, int zone) {
  const auto z = coll::node_zones(p);
  std::vector<int> v;
  for (int i = 0; i < static_cast<int>(z.size()); ++i)
    if (z[static_cast<std::size_t>(i)] == zone) v.push_back(i);
  return v;
}

coll::Placement pl(const std::string& s) { return coll::parse_placement(s); }

}  // namespace

TEST_CASE("placement: the names read back, and bad forms are usage errors") {
  for (const char* s : {"packed", "spread", "cross-zone:0.5", "cross-zone:0.25", "random:1", "random:0", "random:42"})
    CHECK(pl(s).name() == s);
  CHECK(pl("cross-zone").name() == "cross-zone:0.5");  // the default share
  CHECK(pl("random").name() == "random:1");            // the default seed
  for (const char* bad : {"sprad", "", "packed:2", "spread:", "cross-zone:0", "cross-zone:1", "cross-zone:x",
                          "cross-zone:", "random:-1", "random:1.5", "random:"})
    CHECK_THROWS_AS((void)pl(bad), UsageError);
  try {
    (void)pl("sprad");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("did you mean \"spread\"") != std::string::npos);
  }
}

TEST_CASE("placement: packed is the first GPUs, whatever the count") {
  const auto& p = ff2();
  // 1 GPU, an odd count that leaves the last node partly used, one node, a zone's worth and more.
  for (int gpus : {1, 7, 8, 24, 1024, 5000}) {
    const auto g = coll::place_group(p, gpus, pl("packed"), "--placement");
    CHECK(g.ranks == coll::Group::first_gpus(p, gpus).ranks);
  }
}

TEST_CASE("placement: the zones of fire-flyer-2") {
  const auto& p = ff2();
  const auto z0 = zone_nodes(p, coll::node_zones(p)[0]);
  const int total = p.cluster().nodes;
  // Two zones: the first zone is a contiguous block from node 0, the second the rest.
  REQUIRE(static_cast<int>(z0.size()) < total);
  CHECK(z0.front() == 0);
  CHECK(z0.back() == static_cast<int>(z0.size()) - 1);

  SUBCASE("spread inside the first zone: node i of n at floor(i Z / n)") {
    const int Z = static_cast<int>(z0.size());
    for (int n : {1, 2, 3, 7, Z}) {
      const auto nodes = coll::place_nodes(p, 8 * n, pl("spread"), "--placement spread");
      REQUIRE(static_cast<int>(nodes.size()) == n);
      for (int i = 0; i < n; ++i) CHECK(nodes[static_cast<std::size_t>(i)] == static_cast<int>(static_cast<long long>(i) * Z / n));
    }
  }
  SUBCASE("spread of a job larger than a zone: over the whole cluster") {
    const int n = static_cast<int>(z0.size()) + 1;
    const auto nodes = coll::place_nodes(p, 8 * n, pl("spread"), "--placement spread");
    REQUIRE(static_cast<int>(nodes.size()) == n);
    CHECK(nodes.front() == 0);
    CHECK(nodes.back() == static_cast<int>(static_cast<long long>(n - 1) * total / n));
  }
  SUBCASE("cross-zone: round(n x share) nodes of the first zone, the rest of the second") {
    const int second = static_cast<int>(z0.size());  // the second zone's first node
    // 4 nodes, share 0.5: 2 + 2. 8 nodes, share 0.25: 2 + 6. 3 nodes, share 0.5: round(1.5) = 2 + 1.
    // 2 nodes, share 0.01: round(0.02) = 0, held at 1 + 1 (each zone keeps one node).
    const std::vector<std::tuple<int, std::string, int>> cases{
        {4, "cross-zone", 2}, {8, "cross-zone:0.25", 2}, {3, "cross-zone:0.5", 2}, {2, "cross-zone:0.01", 1}};
    for (const auto& [n, spec, a] : cases) {
      const auto nodes = coll::place_nodes(p, 8 * n, pl(spec), "--placement " + spec);
      std::vector<int> want;
      for (int i = 0; i < a; ++i) want.push_back(i);
      for (int i = 0; i < n - a; ++i) want.push_back(second + i);
      CHECK(nodes == want);
    }
    // One node cannot cross; a partial node is refused; the messages name how the user asked.
    CHECK_THROWS_WITH_AS((void)coll::place_nodes(p, 8, pl("cross-zone"), "--cross-zone"),
                         doctest::Contains("--cross-zone: 8 GPUs are one node"), UsageError);
    CHECK_THROWS_WITH_AS((void)coll::place_nodes(p, 12, pl("cross-zone"), "--placement cross-zone:0.5"),
                         doctest::Contains("needs whole nodes"), UsageError);
    // More nodes in one zone than it has.
    CHECK_THROWS_WITH_AS((void)coll::place_nodes(p, 8 * total, pl("cross-zone:0.9"), "--placement cross-zone:0.9"),
                         doctest::Contains("not enough nodes in the zones"), UsageError);
  }
  SUBCASE("random: n distinct nodes of the first zone when they fit, ascending, the same for a seed") {
    const std::set<int> zone(z0.begin(), z0.end());
    for (int n : {1, 5, 16, static_cast<int>(z0.size())}) {
      const auto a = coll::place_nodes(p, 8 * n, pl("random:7"), "--placement random:7");
      REQUIRE(static_cast<int>(a.size()) == n);
      CHECK(std::is_sorted(a.begin(), a.end()));
      CHECK(std::set<int>(a.begin(), a.end()).size() == a.size());
      for (int v : a) CHECK(zone.count(v) == 1);
      CHECK(coll::place_nodes(p, 8 * n, pl("random:7"), "") == a);
    }
    // A whole zone's worth is the whole zone, whatever the seed.
    CHECK(coll::place_nodes(p, 8 * static_cast<int>(z0.size()), pl("random:3"), "") == z0);
    // Two seeds give two draws (16 of 600 nodes: the same draw twice is out of the question).
    CHECK(coll::place_nodes(p, 128, pl("random:1"), "") != coll::place_nodes(p, 128, pl("random:2"), ""));
  }
  SUBCASE("a partly used last node: 20 GPUs are 2 whole nodes and 4 GPUs of a third") {
    const auto g = coll::place_group(p, 20, pl("spread"), "");
    const auto nodes = coll::place_nodes(p, 20, pl("spread"), "");
    REQUIRE(g.size() == 20);
    CHECK(g.ranks[16].node == nodes[2]);
    CHECK(g.ranks[19] == sched::Place::gpu(nodes[2], 3));
  }
}

TEST_CASE("placement: a one-zone fabric has no cross-zone placement, spread and random use it whole") {
  const auto p = plan::make_platform(testing::cluster(6));
  CHECK_THROWS_WITH_AS((void)coll::place_nodes(*p, 16, pl("cross-zone"), "--cross-zone"),
                       doctest::Contains("single zone"), UsageError);
  // 2 of 6 nodes spread: 0 and floor(6/2) = 3.
  CHECK(coll::place_nodes(*p, 16, pl("spread"), "") == std::vector<int>{0, 3});
  // More GPUs than the cluster has.
  CHECK_THROWS_AS((void)coll::place_nodes(*p, 6 * 8 + 1, pl("random"), ""), ValueError);
}
