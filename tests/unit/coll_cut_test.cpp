// How the pipelined collectives cut a vector into pieces: whole pieces of the chunk, the remainder
// as one shorter piece last, as our hfreduce library (src/hfreduce/pipeline.cpp, tree.cpp) and
// NCCL's tree and broadcast loops cut it. Until 2026-12-07 the model cut equal parts, so that one
// byte over k chunks made k + 1 smaller chunks that pipelined better: 4 MiB + 1 B took 0.6x the
// time of 4 MiB (HFReduce, 128 GPUs).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <string>

#include "app/engines.hpp"
#include "coll/collective.hpp"
#include "coll/common.hpp"
#include "config/coll_reader.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;

TEST_CASE("coll::cut: whole pieces, the remainder last") {
  // 10 B in pieces of 4 B: ceil(10 / 4) = 3 pieces, 4 + 4 + 2; the last is half a piece.
  const coll::Cut c = coll::cut(10, 4);
  CHECK(c.count == 3);
  CHECK(c.piece == 4);
  CHECK(c.last == 2);
  CHECK(c.off(0) == 0);
  CHECK(c.off(2) == 8);
  CHECK(c.len(0) == 4);
  CHECK(c.len(1) == 4);
  CHECK(c.len(2) == 2);
  CHECK(c.last_share() == 0.5);
  // An exact multiple: 2 whole pieces, the last one whole too.
  const coll::Cut m = coll::cut(8, 4);
  CHECK(m.count == 2);
  CHECK(m.last == 4);
  CHECK(m.last_share() == 1);
  // One byte over one 4 MiB chunk: the chunk and a 1-byte piece (the equal cut: two of 2 MiB + 0.5 B).
  const coll::Cut o = coll::cut(4194305, 4194304);
  CHECK(o.count == 2);
  CHECK(o.piece == 4194304);
  CHECK(o.last == 1);
  // Below one piece, zero bytes, no piece size: one piece of the whole.
  for (const auto& [bytes, piece] : {std::pair{3.0, 4.0}, std::pair{0.0, 4.0}, std::pair{5.0, 0.0}}) {
    CAPTURE(bytes);
    CAPTURE(piece);
    const coll::Cut w = coll::cut(bytes, piece);
    CHECK(w.count == 1);
    CHECK(w.piece == bytes);
    CHECK(w.last == bytes);
    CHECK(w.len(0) == bytes);
  }
}

TEST_CASE("coll::cut_elems: whole pieces of elements, the last to the end, nothing lost") {
  // 10 fp32 elements in pieces of 16 B = 4 elements: [0, 4), [4, 8), [8, 10).
  CHECK(coll::cut_elems(10, 16, 4, 3, 0) == std::pair<std::size_t, std::size_t>{0, 4});
  CHECK(coll::cut_elems(10, 16, 4, 3, 1) == std::pair<std::size_t, std::size_t>{4, 8});
  CHECK(coll::cut_elems(10, 16, 4, 3, 2) == std::pair<std::size_t, std::size_t>{8, 10});
  // 18 B pieces of 4-byte elements hold 4 whole elements (floor), as the library's
  // chunk_bytes / element; a piece smaller than an element holds one.
  CHECK(coll::cut_elems(10, 18, 4, 3, 1) == std::pair<std::size_t, std::size_t>{4, 8});
  CHECK(coll::cut_elems(3, 2, 4, 3, 2) == std::pair<std::size_t, std::size_t>{2, 3});
  // Every element count 0..40 and piece of 1..7 elements (2-byte elements): as many pieces as
  // ceil(elems / per) (at least 1), contiguous from 0 to elems, each of `per` but the last.
  for (std::size_t elems = 0; elems <= 40; ++elems)
    for (int per = 1; per <= 7; ++per) {
      CAPTURE(elems);
      CAPTURE(per);
      const int count = static_cast<int>(coll::cut(static_cast<double>(elems) * 2, per * 2.0).count);
      CHECK(count ==
            std::max<std::size_t>(1, (elems + static_cast<std::size_t>(per) - 1) / static_cast<std::size_t>(per)));
      std::size_t at = 0;
      for (int i = 0; i < count; ++i) {
        const auto [b, e] = coll::cut_elems(elems, per * 2.0, 2, count, i);
        CHECK(b == at);
        CHECK(e >= b);
        if (i + 1 < count) CHECK(e - b == static_cast<std::size_t>(per));
        at = e;
      }
      CHECK(at == elems);
    }
}

namespace {

const coll::LibraryParams& lib() {
  static const coll::LibraryParams l = config::load_library_params(testing::catalog());
  return l;
}

eval::Engine& fluid() {
  static std::unique_ptr<eval::Engine> e = app::make_engine("analytic");
  return *e;
}

}  // namespace

TEST_CASE("coll::hfreduce: the schedule copies whole 4 MiB chunks and the remainder") {
  // 4 MiB + 4 B on one fire_flyer_pcie node (D2H interleaved over the two sockets: each chunk's
  // two tree parts, one per socket): chunk 0 is two 2 MiB parts, chunk 1 two parts of 2 B.
  const auto p = plan::make_platform(testing::cluster(1));
  const auto a = coll::algorithms().get("hfreduce").factory();
  sched::Schedule s;
  (void)a->emit(s, *p, lib(), coll::Group::first_gpus(*p, 8), 4194304.0 + 4, coll::Options{});
  double lo = 1e300, hi = 0;
  int copies = 0;
  for (sched::OpId i = 0; i < s.size(); ++i) {
    const sched::Op& op = s.op(i);
    if (op.kind != sched::OpKind::Transfer || s.tags()[op.tag] != "hfreduce D2H") continue;
    lo = std::min(lo, op.amount);
    hi = std::max(hi, op.amount);
    ++copies;
  }
  CHECK(copies == 8 * 2 * 2);  // 8 GPUs x 2 chunks x 2 parts
  CHECK(hi == 2097152);
  CHECK(lo == 2);
}

// On Fire-Flyer 2 (2 and 3 nodes; NVLink pairs for hfreduce_nvlink), 1 to 9 MiB in 1 MiB steps and
// one byte (one element) over each: the time never falls as the size grows, simulated (the whole
// schedule on the fluid engine) or closed form. With whole chunks one byte more is one more tiny
// piece (its latency and software overhead); with the equal cut it made every piece smaller: one
// element over 4 or 8 MiB, HFReduce fell by 6-30% (fluid and closed form), the broadcast by up to
// 42%, and with it the reduce-scatter's closed form (checked with cut() made the equal cut again).
TEST_CASE("coll: a larger vector never takes less time (whole pieces)") {
  const auto ff2 = plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/fire-flyer-2.json", testing::catalog()));
  const auto nvl = plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/fire-flyer-2-nvlink.json", testing::catalog()));
  for (const std::string algo :
       {"hfreduce", "hfreduce_nvlink", "nccl_tree", "broadcast", "hf_reduce_scatter", "hf_allgather"}) {
    const auto a = coll::algorithms().get(algo).factory();
    const auto& p = algo == "hfreduce_nvlink" ? *nvl : *ff2;
    for (const int gpus : {16, 24}) {
      const auto g = coll::Group::first_gpus(p, gpus);
      double prev_sim = 0, prev_est = 0;
      for (int mib = 1; mib <= 9; ++mib)
        for (const double extra : {0.0, 4.0}) {
          const double S = mib * 1048576.0 + extra;
          CAPTURE(algo);
          CAPTURE(gpus);
          CAPTURE(S);
          const double sim = a->simulate(fluid(), p, lib(), g, S);
          const double est = a->estimate(p, lib(), g, S).time;
          CHECK(sim >= prev_sim * (1 - 1e-12));
          CHECK(est >= prev_est * (1 - 1e-12));
          prev_sim = sim;
          prev_est = est;
        }
    }
  }
}

// On DGX-A100 nodes (8 NICs: 8 rails, each carrying an eighth of the vector, its trees a half of that)
// the closed forms of NCCL's tree and the broadcast, 8 to 96 MiB in 8 MiB steps and 4 B over each
// (a rail's tree half crosses whole 4 MiB chunks at 64 MiB): never less time for more bytes. The
// simulated broadcast is not checked here: its rings' chunks collide in lockstep on the NVSwitch
// ports in ways the short chunk's size changes (docs/results.md, "Chunk boundaries").
TEST_CASE("coll: on 8-rail nodes the closed forms never fall as the size grows") {
  const auto p = plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/dgx-a100-cluster.json", testing::catalog()));
  for (const std::string algo : {"nccl_tree", "broadcast"}) {
    const auto a = coll::algorithms().get(algo).factory();
    for (const int gpus : {16, 24}) {
      const auto g = coll::Group::first_gpus(*p, gpus);
      double prev = 0;
      for (int m = 1; m <= 12; ++m)
        for (const double extra : {0.0, 4.0}) {
          const double S = m * 8 * 1048576.0 + extra;
          CAPTURE(algo);
          CAPTURE(gpus);
          CAPTURE(S);
          const double est = a->estimate(*p, lib(), g, S).time;
          CHECK(est >= prev * (1 - 1e-12));
          prev = est;
        }
    }
  }
}
