// The data-movement check: every collective's schedule, executed on small in-memory buffers in two
// different topological orders, leaves every rank with the exact result.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "coll/collective.hpp"
#include "coll/dbt.hpp"
#include "config/catalog.hpp"
#include "config/coll_reader.hpp"
#include "plan/scenario.hpp"
#include "sched/execute.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using coll::Kind;

namespace {

using testing::cluster;

coll::Group group(int nodes, int per_node) {
  coll::Group g;
  for (int n = 0; n < nodes; ++n)
    for (int l = 0; l < per_node; ++l) g.ranks.push_back(sched::Place::gpu(n, l));
  return g;
}

// Distinct integer-valued inputs: rank r, element e -> (r + 1) * 100003 + e, so that sums are exact in
// double and a misplaced element shows.
double input_value(int r, std::size_t e) { return (r + 1) * 100003.0 + static_cast<double>(e); }

// Runs `algo` with data on `g` and checks every rank's result; returns the number of ops emitted.
std::size_t check(const std::string& algo, const platform::Platform& p, const coll::LibraryParams& lib,
                  const coll::Group& g, std::size_t elems) {
  const auto a = coll::algorithms().get(algo).factory();
  sched::Schedule s;
  coll::Options o;
  o.with_data = true;
  const int n = g.size();
  const double bytes = static_cast<double>(elems) * o.elem_size;
  if (algo == "sendrecv" && n != 2) return 0;
  const coll::Emitted em = a->emit(s, p, lib, g, bytes, o);
  REQUIRE(em.input.size() == static_cast<std::size_t>(n));
  REQUIRE(em.output.size() == static_cast<std::size_t>(n));
  // The ranges the algorithm reports decide which elements are checked below, so they are checked
  // first against what the collective means (the algorithm must not shrink its own test). The
  // shards partition [0, total) without gaps or overlap, in some order of the ranks (NCCL's ring
  // gives rank X the chunk after its ring position): a reduce-scatter's results split the elems of
  // the vector, floor or ceil of elems / n each; an allgather's contributions are elems each (the
  // size is per rank, as in NCCL), n x elems in all. Every other collective gives (and takes) the
  // whole buffer.
  auto partition = [&](const std::vector<std::pair<double, double>>& rs, const std::string& what, double total,
                       double lo, double hi) {
    CAPTURE(what);
    if (n == 1 && rs.empty()) return;  // one rank: its shard is the whole buffer
    REQUIRE(rs.size() == static_cast<std::size_t>(n));
    auto sorted = rs;
    std::sort(sorted.begin(), sorted.end());
    double next = 0;
    for (const auto& [off, len] : sorted) {
      CHECK(off == next * o.elem_size);  // contiguous, no overlap
      CHECK(len / o.elem_size >= lo);
      CHECK(len / o.elem_size <= hi);
      next += len / o.elem_size;
    }
    CHECK(next == total);  // covers [0, total)
  };
  const double share = static_cast<double>(elems) / n;
  if (a->kind() == Kind::ReduceScatter) {
    partition(em.out_range, "reduce-scatter result shards", static_cast<double>(elems), std::floor(share), std::ceil(share));
    CHECK(em.in_range.empty());
  } else if (a->kind() == Kind::AllGather) {
    partition(em.in_range, "allgather contributions", static_cast<double>(elems) * n, static_cast<double>(elems),
              static_cast<double>(elems));
    CHECK(em.out_range.empty());
  } else {
    CHECK(em.in_range.empty());
    CHECK(em.out_range.empty());
  }
  for (bool lifo : {false, true}) {
    CAPTURE(lifo);
    sched::Memory mem = sched::allocate(s, o.elem_size);
    auto range = [&](const std::vector<std::pair<double, double>>& rs, int r, std::size_t size) {
      if (rs.empty()) return std::make_pair<std::size_t, std::size_t>(0, std::move(size));
      const auto& [off, len] = rs[static_cast<std::size_t>(r)];
      return std::make_pair(static_cast<std::size_t>(off / o.elem_size), static_cast<std::size_t>((off + len) / o.elem_size));
    };
    for (int r = 0; r < n; ++r) {
      auto& in = mem[em.input[static_cast<std::size_t>(r)]];
      const auto [b, e] = range(em.in_range, r, in.size());
      for (std::size_t i = b; i < e; ++i) in[i] = input_value(r, i);
    }
    sched::execute(s, mem, o.elem_size, lifo);
    // AllGather: the rank whose contribution range holds each element (-1: none).
    std::vector<int> owner;
    if (a->kind() == Kind::AllGather) {
      owner.assign(mem[em.output[0]].size(), -1);
      for (int k = 0; k < n; ++k) {
        const auto [kb, ke] = range(em.in_range, k, owner.size());
        for (std::size_t i = kb; i < ke; ++i) owner[i] = k;
      }
    }
    std::size_t checked = 0;
    for (int r = 0; r < n; ++r) {
      CAPTURE(r);
      const auto& out = mem[em.output[static_cast<std::size_t>(r)]];
      REQUIRE(out.size() >= elems);  // every output holds the whole vector (a shard at its offset)
      const auto [b, e] = range(em.out_range, r, out.size());
      checked += e - b;
      bool ok = true;
      for (std::size_t i = b; i < e && ok; ++i) {
        double want = 0;
        switch (a->kind()) {
          case Kind::AllReduce:
          case Kind::ReduceScatter:
            for (int k = 0; k < n; ++k) want += input_value(k, i);
            break;
          case Kind::AllGather:
            // Element i belongs to the rank whose contribution range holds it.
            want = owner[i] >= 0 ? input_value(owner[i], i) : 0.0;
            break;
          case Kind::Broadcast: want = input_value(o.root, i); break;
          case Kind::SendRecv: want = input_value(0, i); break;
          case Kind::AllToAll: {
            // Blocks of floor(elems / n): block a of rank r's output is block r of rank a's input;
            // the remainder is not exchanged (the output keeps its zeros).
            const std::size_t per = elems / static_cast<std::size_t>(n);
            if (per == 0 || i >= per * static_cast<std::size_t>(n)) {
              want = 0;
              break;
            }
            const auto blk = static_cast<int>(i / per);
            want = input_value(blk, static_cast<std::size_t>(r) * per + i % per);
            break;
          }
        }
        if (out[i] != want) {
          CHECK_MESSAGE(out[i] == want, algo << ": rank " << r << " element " << i);
          ok = false;
        }
      }
      CHECK(ok);
    }
    // Every element of every result was compared: n whole vectors, or the shards once each.
    const std::size_t whole = static_cast<std::size_t>(n) * elems;
    if (a->kind() == Kind::ReduceScatter) CHECK(checked == elems);
    else CHECK(checked >= whole);
  }
  return s.size();
}

const std::vector<std::size_t> kSizes{0, 1, 7, 100, 4097};

}  // namespace

TEST_CASE("coll::double_binary_tree: both trees span every rank, binary, acyclic - interiors differ") {
  for (int n : {1, 2, 3, 4, 5, 7, 8, 16, 17, 100, 1250}) {
    CAPTURE(n);
    const auto t = coll::double_binary_tree(n);
    for (int k = 0; k < 2; ++k) {
      int roots = 0, edges = 0;
      for (int r = 0; r < n; ++r) {
        const auto& x = t[static_cast<std::size_t>(k)][static_cast<std::size_t>(r)];
        if (x.parent < 0) ++roots;
        for (int c : x.child)
          if (c >= 0) {
            ++edges;
            CHECK(t[static_cast<std::size_t>(k)][static_cast<std::size_t>(c)].parent == r);  // consistent links
          }
      }
      CHECK(roots == 1);
      CHECK(edges == n - 1);  // a spanning tree
      // Log depth: a balanced in-order tree over n ranks plus the root's single-child link (NCCL's
      // btree), so at most ceil(log2 n) + 1 edges from the root (the library's tree_test has the
      // same bound); a chain of n ranks would have n - 1.
      int log2n = 0;
      while ((1 << log2n) < n) ++log2n;
      CHECK(coll::tree_depth(t[static_cast<std::size_t>(k)]) <= log2n + 1);
    }
    if (n >= 4 && n % 2 == 0) {
      int both = 0, interior0 = 0;
      for (int r = 0; r < n; ++r) {
        auto interior = [&](int k) {
          const auto& x = t[static_cast<std::size_t>(k)][static_cast<std::size_t>(r)];
          return x.child[0] >= 0 || x.child[1] >= 0;
        };
        if (interior(0)) ++interior0;
        if (interior(0) && interior(1)) ++both;
      }
      // NCCL's mirror for even n: tree 1's interior ranks are tree 0's leaves, so no rank is
      // interior in both (as the library's tree_test requires), and half the ranks are interior.
      CHECK(both == 0);
      CHECK(interior0 == n / 2);
    }
  }
}

// Why the simulated HFReduce and NCCL tree run every node (docs/engines.md, "The sharing model"): simulating one node
// per class of interchangeable nodes and reusing it is exact only if the classes respect the
// trees, i.e. members of a class have parents and children of the same classes in both trees. The
// coarsest such partition is what colour refinement finds: start with one class, split by the
// classes of each rank's parent and children in tree 0 and tree 1 (none: a class of its own) until
// nothing splits. For NCCL's double binary tree it ends with every rank alone (checked in Python
// for every n up to 299 and at 1,200 and 1,250 nodes, 2026-12-01): no two nodes can share a run.
TEST_CASE("coll::double_binary_tree: no two ranks play the same roles in both trees (colour refinement)") {
  for (int n : {2, 3, 4, 5, 7, 8, 16, 17, 100, 180, 1250}) {
    CAPTURE(n);
    const auto t = coll::double_binary_tree(n);
    std::vector<int> colour(static_cast<std::size_t>(n), 0);
    int classes = 1;
    for (;;) {
      std::map<std::vector<int>, int> ids;
      std::vector<int> next(colour.size());
      for (int r = 0; r < n; ++r) {
        std::vector<int> sig{colour[static_cast<std::size_t>(r)]};
        for (int k = 0; k < 2; ++k) {
          const auto& x = t[static_cast<std::size_t>(k)][static_cast<std::size_t>(r)];
          auto c = [&](int v) { return v < 0 ? -1 : colour[static_cast<std::size_t>(v)]; };
          sig.push_back(c(x.parent));
          sig.push_back(std::min(c(x.child[0]), c(x.child[1])));  // children unordered
          sig.push_back(std::max(c(x.child[0]), c(x.child[1])));
        }
        next[static_cast<std::size_t>(r)] = ids.emplace(sig, static_cast<int>(ids.size())).first->second;
      }
      colour = std::move(next);
      if (static_cast<int>(ids.size()) == classes) break;  // stable
      classes = static_cast<int>(ids.size());
    }
    CHECK(classes == n);
  }
}

TEST_CASE("coll: every algorithm gives every rank the exact result, 1 to 17 nodes, sizes 0, 1, odd, large") {
  coll::LibraryParams lib = config::load_library_params(testing::catalog());
  // Small chunks and two staging buffers, so that pipelining and buffer reuse are exercised; tree
  // slices of 200 bytes cut each 512-byte tree part into 3 uneven slices.
  lib.hfreduce.chunk_bytes = 1024;
  lib.hfreduce.staging_buffers = 2;
  lib.hfreduce.tree_slice_bytes = 200;
  lib.nccl.tree_chunk_bytes = 1024;
  for (int nodes : {1, 2, 3, 5, 17}) {
    const auto sc = cluster(nodes);
    const auto p = plan::make_platform(sc);
    for (int per : {1, 3, 8}) {
      if (nodes == 17 && per != 8) continue;
      const auto g = group(nodes, per);
      for (const auto& name : coll::algorithms().names()) {
        if (name == "hfreduce_nvlink") continue;  // needs NVLink pairs: below
        // 17 nodes: the allreduces (the tree's odd, deep shapes) and the host rings at the sizes that matter.
        if (nodes == 17 && name != "hfreduce" && name != "nccl_ring" && name != "nccl_tree" && name != "hf_reduce_scatter" &&
            name != "hf_allgather")
          continue;
        for (std::size_t elems : kSizes) {
          if (nodes == 17 && elems != 1 && elems != 4097) continue;
          if (name == "alltoall" && g.size() > 24) continue;  // n^2 transfers
          CAPTURE(name);
          CAPTURE(nodes);
          CAPTURE(per);
          CAPTURE(elems);
          check(name, *p, lib, g, elems);
        }
      }
    }
  }
}

TEST_CASE("coll: sendrecv and the NVLink variant of HFReduce") {
  coll::LibraryParams lib = config::load_library_params(testing::catalog());
  lib.hfreduce.chunk_bytes = 1024;
  lib.hfreduce.staging_buffers = 2;
  lib.hfreduce.tree_slice_bytes = 200;
  {
    const auto sc = cluster(2);
    const auto p = plan::make_platform(sc);
    for (std::size_t elems : kSizes) check("sendrecv", *p, lib, coll::Group{{sched::Place::gpu(0, 3), sched::Place::gpu(1, 5)}}, elems);
  }
  for (int nodes : {1, 2, 3, 7}) {
    const auto sc = cluster(nodes, "fire_flyer_pcie_nvlink");
    const auto p = plan::make_platform(sc);
    for (int per : {2, 8}) {
      for (std::size_t elems : kSizes) {
        CAPTURE(nodes);
        CAPTURE(per);
        CAPTURE(elems);
        check("hfreduce_nvlink", *p, lib, group(nodes, per), elems);
      }
    }
  }
}

TEST_CASE("coll: on nodes with a NIC per GPU pair (one ring per NIC) every algorithm gives the exact result") {
  // DGX-A100 nodes (8 compute NICs: 8 rings, each carrying its part of every rank's chunk) and
  // H800 nodes on 4 separate planes (the rings' hops between nodes stay in a plane): the ring's
  // reduce-scatter must still leave each rank its whole chunk and the allgather take it from there.
  // Group sizes where a node has fewer GPUs than NICs (3 per node) and sizes smaller than the rings.
  coll::LibraryParams lib = config::load_library_params(testing::catalog());
  lib.hfreduce.chunk_bytes = 1024;
  lib.hfreduce.staging_buffers = 2;
  lib.nccl.tree_chunk_bytes = 1024;
  for (const std::string node : {"dgx_a100", "h800_8x400g"}) {
    const std::string fabric = node == "dgx_a100" ? R"({"topology": "two_layer", "switch": "qm8700"})"
                                                  : R"({"topology": "multi_plane", "switch": "switch_128x400g", "planes": 4})";
    for (int nodes : {2, 3}) {
      const std::string text = R"({"name": "t", "cluster": {"node": ")" + node + R"(", "nodes": )" + std::to_string(nodes) +
                               R"(}, "fabric": )" + fabric + "}";
      const auto p = plan::make_platform(plan::parse_scenario(config::Document::parse(text, "t.json", false), testing::catalog()));
      for (int per : {3, 8})
        for (const std::string name : {"nccl_ring", "reduce_scatter", "allgather", "nccl_tree", "broadcast", "hfreduce"})
          for (std::size_t elems : kSizes) {
            CAPTURE(node);
            CAPTURE(nodes);
            CAPTURE(per);
            CAPTURE(name);
            CAPTURE(elems);
            check(name, *p, lib, group(nodes, per), elems);
          }
    }
  }
}
