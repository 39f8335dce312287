// platform::Router and PathTable: ids in order of first use, one id per pair of places whatever
// the threads asking at once, paths that never move, and paths equal to a fresh route.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using sched::Place;

namespace {

// Every GPU, DRAM and CPU place of `nodes` Fire-Flyer nodes: the pairs between them cross PCIe,
// sockets and (between nodes) the fabric.
std::vector<Place> places(const platform::Platform& p, int nodes) {
  std::vector<Place> v;
  for (int n = 0; n < nodes; ++n) {
    for (int g = 0; g < static_cast<int>(p.cluster().node.gpus.size()); ++g) v.push_back(Place::gpu(n, g));
    for (int s = 0; s < static_cast<int>(p.cluster().node.sockets.size()); ++s) {
      v.push_back(Place::dram(n, s));
      v.push_back(Place::cpu(n, s));
    }
  }
  return v;
}

bool is_path(const Place& a, const Place& b) {
  // Data paths only: between nodes DRAM to DRAM; inside one, anything but into a CPU's cores from
  // a GPU or from other cores (a device writes memory; cores reach DRAM and GPUs, as GDRCopy).
  using sched::PlaceKind;
  if (a.node != b.node) return a.kind == PlaceKind::Dram && b.kind == PlaceKind::Dram;
  return b.kind != PlaceKind::Cpu || a.kind == PlaceKind::Dram;
}

bool same(const platform::Path& a, const platform::Path& b) {
  return a.resources == b.resources && a.latency == b.latency && a.rate_cap == b.rate_cap;
}

}  // namespace

TEST_CASE("platform::Router: one thread gets ids in order of first use, the same id for the same pair") {
  const auto p = plan::make_platform(ffsim::testing::cluster(2));
  const auto& r = p->router();
  REQUIRE(r.path_count() == 0);
  // Three distinct pairs asked for in turn, the first again at the end: ids 0, 1, 2, then 0.
  CHECK(r.path_id(Place::gpu(0, 0), Place::dram(0, 0)) == 0);
  CHECK(r.path_id(Place::dram(0, 0), Place::gpu(0, 0)) == 1);
  CHECK(r.compute_path_id(Place::gpu(0, 3)) == 2);
  CHECK(r.path_id(Place::gpu(0, 0), Place::dram(0, 0)) == 0);
  CHECK(r.path_count() == 3);
  CHECK(same(r.path(0), r.route(Place::gpu(0, 0), Place::dram(0, 0))));
  REQUIRE(r.path(2).resources.size() == 1);
  CHECK(r.path(2).resources[0] == p->compute_resource(Place::gpu(0, 3)));
}

TEST_CASE("platform::Router: threads asking at once share one id per pair, and paths never move") {
  const auto p = plan::make_platform(ffsim::testing::cluster(16));
  const auto& r = p->router();
  const auto all = places(*p, 16);
  std::vector<std::pair<Place, Place>> pairs;
  for (const Place& a : all)
    for (const Place& b : all)
      if (!(a == b) && is_path(a, b)) pairs.emplace_back(a, b);
  REQUIRE(pairs.size() > 1000);  // more than the first segments hold (64, 128, ...): several are made
  // The first path's address, taken before the others exist.
  const platform::Path* first = &r.path(r.path_id(pairs[0].first, pairs[0].second));
  constexpr int kThreads = 8;
  std::vector<std::vector<std::uint32_t>> ids(kThreads, std::vector<std::uint32_t>(pairs.size()));
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      // Each thread walks the pairs from its own starting point, so that threads insert at once.
      for (std::size_t k = 0; k < pairs.size(); ++k) {
        const std::size_t i = (k + static_cast<std::size_t>(t) * pairs.size() / kThreads) % pairs.size();
        ids[static_cast<std::size_t>(t)][i] = r.path_id(pairs[i].first, pairs[i].second);
      }
    });
  for (auto& th : pool) th.join();
  CHECK(r.path_count() == pairs.size());
  CHECK(&r.path(ids[0][0]) == first);
  std::vector<int> seen(pairs.size(), 0);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    CAPTURE(i);
    for (int t = 1; t < kThreads; ++t) REQUIRE(ids[static_cast<std::size_t>(t)][i] == ids[0][i]);
    REQUIRE(ids[0][i] < pairs.size());
    ++seen[ids[0][i]];
    CHECK(same(r.path(ids[0][i]), r.route(pairs[i].first, pairs[i].second)));
  }
  for (std::size_t id = 0; id < seen.size(); ++id) CHECK(seen[id] == 1);  // every id is one pair's
}
