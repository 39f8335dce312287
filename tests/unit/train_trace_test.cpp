// Tests of the Chrome/Perfetto trace of a simulated step: it parses back as JSON in the trace
// event format, has a track per GPU, NIC and CPU reducer, nests, and no event ends before it starts.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "coll/collective.hpp"
#include "config/coll_reader.hpp"
#include "config/reader.hpp"
#include "plan/scenario.hpp"
#include "report/trace.hpp"
#include "test_catalog.hpp"
#include "train/run.hpp"

using namespace ffsim;
using namespace ffsim::train;
using sched::Place;

namespace {

const config::Catalog& catalog() { return ffsim::testing::catalog(); }

plan::ScenarioSpec scenario(const std::string& workload, int nodes) {
  const std::string text = R"({"name": "t", "cluster": {"node": "fire_flyer_pcie", "nodes": )" + std::to_string(nodes) +
                           R"(}, "fabric": {"topology": "two_layer", "switch": "qm8700"}, "workload": )" + workload + "}";
  return plan::parse_scenario(config::Document::parse(text, "t.json", false), catalog());
}

struct Event {
  std::string name, ph, detail;
  double ts = 0, dur = 0;
  long long pid = 0, tid = 0;
};

struct Parsed {
  std::vector<Event> x;                                    // complete events
  std::map<std::pair<long long, long long>, std::string> threads;  // (pid, tid) -> lane name
  std::set<long long> processes;
};

// Parses a trace back with the project's only JSON reader, checking its shape on the way.
Parsed parse(const std::string& text) {
  const config::Document d = config::Document::parse(text, "trace.json", false);
  const config::Reader root = d.root();
  REQUIRE(root.is_object());
  CHECK(root.child("displayTimeUnit").as_string() == "ms");
  Parsed p;
  for (const config::Reader& e : root.child("traceEvents").elements("event")) {
    const std::string ph = e.child("ph").as_string();
    if (ph == "M") {
      const std::string what = e.child("name").as_string();
      const std::string label = e.child("args").child("name").as_string();
      if (what == "process_name") p.processes.insert(e.child("pid").as_integer());
      else if (what == "thread_name") p.threads[{e.child("pid").as_integer(), e.child("tid").as_integer()}] = label;
      continue;
    }
    REQUIRE(ph == "X");
    Event x;
    x.ph = ph;
    x.name = e.child("name").as_string();
    (void)e.child("cat").as_string();
    x.ts = e.child("ts").as_number();
    x.dur = e.child("dur").as_number();
    x.pid = e.child("pid").as_integer();
    x.tid = e.child("tid").as_integer();
    if (const auto args = e.optional_child("args")) x.detail = args->child("detail").as_string();
    p.x.push_back(x);
  }
  return p;
}

// Every event on a known track, none ends before it starts, and on each track events follow one
// another or nest (Chrome's rule for complete events on one thread).
void check_well_formed(const Parsed& p) {
  REQUIRE_FALSE(p.x.empty());
  std::map<std::pair<long long, long long>, std::vector<const Event*>> by_track;
  for (const auto& e : p.x) {
    CHECK(e.dur >= 0);
    CHECK(e.ts >= 0);
    CHECK(p.threads.count({e.pid, e.tid}) == 1);
    CHECK(p.processes.count(e.pid) == 1);
    by_track[{e.pid, e.tid}].push_back(&e);
  }
  for (auto& [track, evs] : by_track) {
    std::sort(evs.begin(), evs.end(), [](const Event* a, const Event* b) { return a->ts < b->ts; });
    std::vector<double> open_ends;  // ends of the events enclosing the current one
    for (const Event* e : evs) {
      // Exactly, as a viewer adds ts + dur: an event that ends where the next one begins must not
      // overlap it by a rounding (until 2026-12-01 dur was (end - start) x 1e6, up to 1.5e-8 us
      // past the next event's ts, which a tolerance of 1e-9 x end hid).
      const double end = e->ts + e->dur;
      while (!open_ends.empty() && open_ends.back() <= e->ts) open_ends.pop_back();
      if (!open_ends.empty()) CHECK(end <= open_ends.back());  // nested inside its parent
      open_ends.push_back(end);
    }
  }
}

std::set<std::string> lanes_of(const Parsed& p, long long pid) {
  std::set<std::string> s;
  for (const auto& [k, v] : p.threads)
    if (k.first == pid) s.insert(v);
  return s;
}

}  // namespace

TEST_CASE("report::trace: a DDP step with a CPU-reduced collective: GPU, NIC and CPU reducer tracks") {
  const auto sc = scenario(R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                               "algorithms": {"allreduce": "nccl_ring"}, "gpus": [16]})", 2);
  const auto p = plan::make_platform(sc);
  const auto lib = config::load_library_params(catalog());
  eval::FluidEngine fluid;
  CollectiveCosts costs(fluid, *p, lib, CollectiveCosts::Method::Simulate);
  // A step by hand: two GPUs of two nodes compute, then reduce on the host CPUs (as HFReduce does).
  StepBuilder b(*p, &costs, false);
  const Place g0 = Place::gpu(0, 0), g8 = Place::gpu(1, 0);
  const OpId a = b.compute(g0, Seconds(1e-3), "fwd");
  const OpId c = b.compute(g8, Seconds(2e-3), "fwd");
  coll::Group group{{g0, g8}};
  const OpId r = b.collective(CollectiveCall{RoleAlgorithm{"nccl_ring", false, true}, group, 1e6, {g0, g8}},
                              "allreduce", {a, c});
  b.compute(g0, Seconds(1e-4), "optimizer", {r});
  b.transfer(g0, g8, Bytes(1e6), "send", {r});
  const eval::Result res = fluid.run(b.schedule(), *p);
  std::ostringstream os;
  report::write_chrome_trace(os, trace_of(b, res, "by hand"));
  const Parsed t = parse(os.str());
  check_well_formed(t);
  CHECK(t.processes == std::set<long long>{0, 1});
  CHECK(lanes_of(t, 0) == std::set<std::string>{"gpu0", "cpu reducer", "nic0"});
  CHECK(lanes_of(t, 1) == std::set<std::string>{"gpu0", "cpu reducer", "nic0"});
  // The collective shows on both CPU reducers and both NICs; it starts when the slower GPU is done.
  const auto reduce = std::count_if(t.x.begin(), t.x.end(), [](const Event& e) { return e.name == "allreduce"; });
  CHECK(reduce == 4);
  for (const auto& e : t.x)
    if (e.name == "allreduce") CHECK(e.ts == doctest::Approx(2e3).epsilon(1e-12).scale(ffsim::testing::kRelative));  // microseconds
}

TEST_CASE("report::trace: simulated DDP and pipeline steps parse back, nest and name their tracks") {
  const auto lib = config::load_library_params(catalog());
  eval::FluidEngine fluid;
  SUBCASE("DDP on NCCL's ring: a compute and a communication track per GPU, the node's NIC") {
    const auto sc = scenario(R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                                 "algorithms": {"allreduce": "nccl_ring"}, "gpus": [16]})", 2);
    const auto p = plan::make_platform(sc);
    CollectiveCosts costs(fluid, *p, lib, CollectiveCosts::Method::Simulate);
    StepTrace tr;
    (void)simulate_step(*sc.workload, StepEnv{*p, fluid, costs}, 16, true, &tr);
    std::ostringstream os;
    report::write_chrome_trace(os, tr);
    const Parsed t = parse(os.str());
    check_well_formed(t);
    CHECK(t.processes.size() == 2);
    for (long long node : {0LL, 1LL}) {
      const auto lanes = lanes_of(t, node);
      for (int g = 0; g < 8; ++g) {
        CHECK(lanes.count("gpu" + std::to_string(g)) == 1);
        CHECK(lanes.count("gpu" + std::to_string(g) + " comm") == 1);
      }
      CHECK(lanes.count("nic0") == 1);
    }
  }
  SUBCASE("pipeline: activations through the NICs, overlapping ones on extra lanes") {
    const auto sc = scenario(R"({"kind": "pipeline", "model": "llama_13b", "scaling": "strong", "batch": 16,
                                 "seq": 2048, "precision": "bf16", "pp": 4, "zero_stage": 1,
                                 "algorithms": {"allreduce": "nccl_ring"}, "gpus": [32]})", 4);
    const auto p = plan::make_platform(sc);
    CollectiveCosts costs(fluid, *p, lib, CollectiveCosts::Method::Simulate);
    StepTrace tr;
    (void)simulate_step(*sc.workload, StepEnv{*p, fluid, costs}, 32, false, &tr);
    std::ostringstream os;
    report::write_chrome_trace(os, tr);
    const Parsed t = parse(os.str());
    check_well_formed(t);
    CHECK(t.processes.size() == 4);
    // 8 pipelines send through each node's one NIC at once: extra lanes "nic0 #2", ...
    const auto lanes = lanes_of(t, 1);
    CHECK(lanes.count("nic0") == 1);
    CHECK(lanes.count("nic0 #2") == 1);
    for (int g = 0; g < 8; ++g) CHECK(lanes.count("gpu" + std::to_string(g)) == 1);
  }
}

TEST_CASE("report::schedule_trace: a whole HFReduce and an NCCL ring on their tracks (ffsim collective --trace)") {
  // Every op that occupies a resource shows on the tracks of what it occupies: a transfer on the
  // "out" track of a GPU it leaves and the "in" track of a GPU it enters (D2H, H2D, GDRCopy writes,
  // GPU to GPU), and between nodes also on the sender's "nic0 out" and the receiver's "nic0 in";
  // host-only transfers inside a node on one socket track; a CPU reduce on its socket's
  // "reducer", a kernel on its GPU; delays occupy nothing. So over the ops of positive duration
  // the events number: per transfer, its GPU ends + 2 between nodes (or 1 when it has neither);
  // per reduce or kernel, 1. The last one ends at the makespan.
  const auto sc = ffsim::testing::cluster(2);
  const auto p = plan::make_platform(sc);
  const auto lib = config::load_library_params(catalog());
  eval::FluidEngine fluid;
  for (const std::string name : {"hfreduce", "nccl_ring"}) {
    CAPTURE(name);
    const auto algo = coll::algorithms().get(name).factory();
    sched::Schedule s;
    (void)algo->emit(s, *p, lib, coll::Group::first_gpus(*p, 16), 9.0 * 1048576 + 4, coll::Options{});
    const eval::Result res = fluid.run(s, *p);
    std::size_t expected = 0;
    for (sched::OpId i = 0; i < s.size(); ++i) {
      const sched::Op& op = s.op(i);
      if (op.kind == sched::OpKind::Delay || !(res.ops[i].end > res.ops[i].start)) continue;
      if (op.kind != sched::OpKind::Transfer) {
        ++expected;
        continue;
      }
      const std::size_t gpus = (op.at.kind == sched::PlaceKind::Gpu ? 1u : 0u) + (op.to.kind == sched::PlaceKind::Gpu ? 1u : 0u);
      expected += gpus + (op.at.node != op.to.node ? 2 : gpus == 0 ? 1 : 0);
    }
    std::ostringstream os;
    report::write_chrome_trace(os, report::schedule_trace(s, res, *p, name));
    const Parsed t = parse(os.str());
    check_well_formed(t);
    CHECK(t.x.size() == expected);
    CHECK(t.processes == std::set<long long>{0, 1});
    double last = 0;
    for (const auto& e : t.x) {
      last = std::max(last, e.ts + e.dur);
      CHECK(e.detail.find("limited by") != std::string::npos);  // every event says what held it back
    }
    CHECK(last == doctest::Approx(res.makespan * 1e6).epsilon(1e-12).scale(ffsim::testing::kRelative));  // microseconds
    const auto lanes = lanes_of(t, 1);
    CHECK(lanes.count("nic0 out") == 1);
    CHECK(lanes.count("nic0 in") == 1);
    for (int g = 0; g < 8; ++g) CHECK(lanes.count("gpu" + std::to_string(g) + " out") == 1);
    if (name == "hfreduce") {
      for (int g = 0; g < 8; ++g) CHECK(lanes.count("gpu" + std::to_string(g) + " in") == 1);
      CHECK(lanes.count("cpu0 reducer") == 1);  // D2H buffers interleaved: both sockets reduce
      CHECK(lanes.count("cpu1 reducer") == 1);
    } else {
      CHECK(lanes.count("gpu0") == 1);  // the ring's reduce kernels
      CHECK(lanes.count("cpu0 reducer") == 0);
    }
  }
}
