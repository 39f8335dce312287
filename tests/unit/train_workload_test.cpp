// Tests of the training workloads on small Fire-Flyer clusters: every symmetry shortcut against the
// full schedule, step times against hand-derived timelines, the breakdown, both engines.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "app/engines.hpp"
#include "coll/collective.hpp"
#include "config/catalog.hpp"
#include "config/coll_reader.hpp"
#include "core/error.hpp"
#include "plan/scenario.hpp"
#include "sim/simgrid_engine.hpp"
#include "test_catalog.hpp"
#include "train/ddp.hpp"
#include "train/pipeline.hpp"
#include "train/run.hpp"

using namespace ffsim;
using namespace ffsim::train;
using sched::Place;

namespace {

const config::Catalog& catalog() { return ffsim::testing::catalog(); }

// A Fire-Flyer cluster of `nodes` nodes on one two-layer tree, running `workload` (a JSON object).
struct Env {
  plan::ScenarioSpec sc;
  std::unique_ptr<platform::Platform> p;
  coll::LibraryParams lib;
  std::unique_ptr<eval::Engine> engine;
  std::unique_ptr<eval::Engine> reference = app::make_engine("fluid");  // the compute-only runs
  std::unique_ptr<CollectiveCosts> costs;
  [[nodiscard]] StepEnv env() const { return StepEnv{*p, *engine, *costs, false, reference.get()}; }
  [[nodiscard]] const WorkloadSpec& w() const { return *sc.workload; }
};

std::unique_ptr<Env> make(const std::string& workload, int nodes = 8, const char* engine = "analytic") {
  auto e = std::make_unique<Env>();
  const std::string text = R"({"name": "t", "cluster": {"node": "fire_flyer_pcie", "nodes": )" + std::to_string(nodes) +
                           R"(}, "fabric": {"topology": "two_layer", "switch": "qm8700"}, "workload": )" + workload + "}";
  e->sc = plan::parse_scenario(config::Document::parse(text, "t.json", false), catalog());
  e->p = plan::make_platform(e->sc);
  e->lib = config::load_library_params(catalog());
  e->engine = app::make_engine(engine);
  e->costs = std::make_unique<CollectiveCosts>(*e->engine, *e->p, e->lib, CollectiveCosts::Method::Simulate);
  return e;
}

// NCCL's ring for every gradient reduction (the backends' table is tested on its own).
const std::string kRing = R"("algorithms": {"allreduce": "nccl_ring", "reduce_scatter": "reduce_scatter"})";

void check_same(const StepResult& a, const StepResult& b) {
  CHECK(a.step_s == doctest::Approx(b.step_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(a.compute_s == doctest::Approx(b.compute_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(a.bubble_s == doctest::Approx(b.bubble_s).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(a.exposed_comm_s == doctest::Approx(b.exposed_comm_s).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(a.samples_per_s == doctest::Approx(b.samples_per_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
}

}  // namespace

TEST_CASE("train::algorithm_for: one table maps backend and role to an algorithm") {
  CHECK(algorithm_for("hfreduce", Role::GradAllReduce).algorithm == "hfreduce");
  CHECK(algorithm_for("hfreduce", Role::GradAllReduce).host_reduce);
  CHECK(algorithm_for("nccl", Role::GradAllReduce).algorithm == "nccl");
  CHECK_FALSE(algorithm_for("nccl", Role::GradAllReduce).host_reduce);
  CHECK(algorithm_for("nccl", Role::GradReduceScatter).algorithm == "reduce_scatter");
  // HaiScale's sharded collectives run on HFReduce's host path [I] (train/collectives.cpp).
  CHECK(algorithm_for("hfreduce", Role::GradReduceScatter).algorithm == "hf_reduce_scatter");
  CHECK(algorithm_for("hfreduce", Role::ParamAllGather).algorithm == "hf_allgather");
  CHECK(algorithm_for("hfreduce", Role::ParamAllGather).per_rank_input);
  // An allgather is given its per-rank input (S / n).
  CHECK(algorithm_for("nccl", Role::ParamAllGather).per_rank_input);
  CHECK_THROWS_WITH_AS((void)algorithm_for("ncl", Role::GradAllReduce),
                       "unknown backend \"ncl\" (did you mean \"nccl\"?); valid: hfreduce, nccl", ValueError);
}

TEST_CASE("train::ddp: one GPU alone: the step is its kernels, nothing exposed") {
  auto e = make(R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 8, "precision": "tf32",
                    "optimizer": "sgd", "gpus": [1]})");
  const StepResult r = simulate_step(e->w(), e->env(), 1);
  // A group of one reduces nothing; the step is forward + backward of 8 images + the SGD update.
  const auto layers = layer_costs(e->w().model, 1, true);
  const auto& gpu = e->sc.cluster.node.gpus.front().gpu;
  const LayerTimes t = layer_times(e->w(), gpu, layers, 8, false);
  double expect = optimizer_time(e->w(), gpu, total_params(layers));
  for (std::size_t k = 0; k < layers.size(); ++k) expect += t.fwd[k] + t.bwd[k];
  CHECK(r.step_s == doctest::Approx(expect).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(r.compute_s == doctest::Approx(expect).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(r.exposed_comm_s == 0);
  CHECK(r.bubble_s == 0);
  // SGD with momentum, fp32: 20 bytes of traffic per parameter (read w, g, m; write w, m).
  CHECK(optimizer_traffic_bytes(e->w()) == 20);
  // Model FLOPs: 3 x forward, less the input gradient of the first layer, per image.
  CHECK(r.model_flops == doctest::Approx(8 * (3 * forward_flops(layers) - layers.front().conv_flops)).epsilon(1e-12).scale(ffsim::testing::kRelative));
}

TEST_CASE("train::ddp: the bucketed allreduce timeline, derived by hand") {
  auto e = make(R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 4, "precision": "tf32",
                    "optimizer": "sgd", )" + kRing + R"(, "gpus": [16]})");
  const StepResult r = simulate_step(e->w(), e->env(), 16);
  const auto layers = layer_costs(e->w().model, 1, true);
  const auto& gpu = e->sc.cluster.node.gpus.front().gpu;
  const LayerTimes t = layer_times(e->w(), gpu, layers, 4, false);
  // Bucket i is ready when the backward of its last layer ends; the stream runs buckets in order:
  // start_i = max(ready_i, end_{i-1}); the optimizer follows the last bucket and the last kernel.
  const auto buckets = assign_buckets(layers, 4, 25.0 * 1048576, 1048576);
  const coll::Group g = coll::Group::first_gpus(*e->p, 16);
  const auto ring = coll::algorithms().get("nccl_ring").factory();
  double clock = 0;
  for (double f : t.fwd) clock += f;
  std::vector<double> bwd_end(layers.size());
  for (std::size_t k = layers.size(); k-- > 0;) bwd_end[k] = clock += t.bwd[k];
  double stream = 0;
  for (const auto& b : buckets)
    stream = std::max(stream, bwd_end[b.layers.back()]) + ring->simulate(*e->engine, *e->p, e->lib, g, b.bytes);
  const double expect = std::max(stream, clock) + optimizer_time(e->w(), gpu, total_params(layers));
  CHECK(r.step_s == doctest::Approx(expect).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // The fc buckets overlap the conv backward: less is exposed than the collectives take.
  double total = 0;
  for (const auto& b : buckets) total += ring->simulate(*e->engine, *e->p, e->lib, g, b.bytes);
  CHECK(r.exposed_comm_s > 0);
  CHECK(r.exposed_comm_s < total);
  CHECK(r.exposed_comm_s == doctest::Approx(r.step_s - r.compute_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // 6 distinct (algorithm, group, size), one per bucket (the two 27 MiB buckets differ by 512
  // parameters); a second step finds them all cached.
  CHECK(e->costs->evaluations() == 6);
  (void)simulate_step(e->w(), e->env(), 16);
  CHECK(e->costs->evaluations() == 6);
}

TEST_CASE("train::sync_dp: the whole backward, then the fused gradient allreduces back to back") {
  // fusion F: buffers filled in backward order (assign_buckets with every cap F); none starts before
  // the whole backward ends, so step = fwd + bwd + sum of the buffers' allreduces + optimizer, and
  // everything the collectives take is exposed. fusion 0 is one allreduce of the whole gradient.
  for (const char* fusion : {"", R"(, "fusion": "64MiB")", R"(, "fusion": "1B")"}) {
    CAPTURE(fusion);
    auto e = make(std::string(R"({"kind": "sync_dp", "model": "vgg16", "scaling": "weak", "batch": 4,
                    "precision": "tf32", "optimizer": "sgd", )") +
                  kRing + fusion + R"(, "gpus": [16]})");
    const StepResult r = simulate_step(e->w(), e->env(), 16);
    const auto layers = layer_costs(e->w().model, 1, true);
    const auto& gpu = e->sc.cluster.node.gpus.front().gpu;
    const LayerTimes t = layer_times(e->w(), gpu, layers, 4, false);
    const double cap = std::string(fusion).empty()                              ? 1e300
                       : std::string(fusion).find("64MiB") != std::string::npos ? 64.0 * 1048576
                                                                                : 1.0;
    const auto buffers = assign_buckets(layers, 4, cap, cap);
    const coll::Group g = coll::Group::first_gpus(*e->p, 16);
    const auto ring = coll::algorithms().get("nccl_ring").factory();
    double compute = 0, comm = 0;
    for (std::size_t k = 0; k < layers.size(); ++k) compute += t.fwd[k] + t.bwd[k];
    for (const auto& b : buffers) comm += ring->simulate(*e->engine, *e->p, e->lib, g, b.bytes);
    const double opt = optimizer_time(e->w(), gpu, total_params(layers));
    CHECK(r.step_s == doctest::Approx(compute + comm + opt).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(r.exposed_comm_s == doctest::Approx(comm).epsilon(1e-9).scale(ffsim::testing::kRelative));
    // One buffer without fusion; one per layer with parameters at 1 byte (VGG16: 13 conv + 3 fc).
    if (std::string(fusion).empty()) CHECK(buffers.size() == 1);
    if (cap == 1.0) CHECK(buffers.size() == 16);
  }
  // One rank against all; a single GPU reduces nothing; DDP's overlap makes it no slower.
  const std::string w = R"({"kind": "sync_dp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                            "optimizer": "sgd", )" +
                        kRing + R"(, "gpus": [16]})";
  auto e = make(w, 4);
  check_same(simulate_step(e->w(), e->env(), 16, false), simulate_step(e->w(), e->env(), 16, true));
  auto one = make(R"({"kind": "sync_dp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                      "optimizer": "sgd", "gpus": [1]})");
  CHECK(simulate_step(one->w(), one->env(), 1).exposed_comm_s == 0);
  auto ddp = make(R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                      "optimizer": "sgd", )" +
                      kRing + R"(, "gpus": [16]})",
                  4);
  CHECK(simulate_step(ddp->w(), ddp->env(), 16).step_s < simulate_step(e->w(), e->env(), 16).step_s);
}

TEST_CASE("train::ddp: one rank stands for all, in both engines") {
  const std::string w = R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                            "optimizer": "sgd", )" + kRing + R"(, "gpus": [16]})";
  for (const char* engine : {"analytic", "simgrid"}) {
    CAPTURE(engine);
    auto e = make(w, 4, engine);
    const StepResult rep = simulate_step(e->w(), e->env(), 16, false);
    const StepResult all = simulate_step(e->w(), e->env(), 16, true);
    CHECK(rep.simulated_gpus == 1);
    CHECK(all.simulated_gpus == 16);
    check_same(rep, all);
  }
  auto a = make(w, 4, "analytic"), s = make(w, 4, "simgrid");
  CHECK(simulate_step(s->w(), s->env(), 16).step_s ==
        doctest::Approx(simulate_step(a->w(), a->env(), 16).step_s).epsilon(1e-6).scale(ffsim::testing::kRelative));
}

TEST_CASE("train: model FLOPs count the attention backward at 2x its forward, without recomputation") {
  // MFU's model FLOPs (PaLM, arXiv 2204.02311 App. B): forward + backward, the backward 2x the
  // forward for GEMMs (less the first layer's input gradient) and for attention too (dV, dP, dQ,
  // dK: four products against the forward's two). The kernel time's attention backward factor
  // (2.5: FlashAttention-2 recomputes QK^T) must not reach it. GPT2-medium: per sample
  // 3 x forward - the first layer's input-gradient GEMMs.
  auto e = make(R"({"kind": "fsdp", "model": "gpt2_medium", "scaling": "weak", "batch": 2, "seq": 256,
                    "precision": "bf16", "param_dtype": "bf16", )" + kRing + R"(, "gpus": [16]})");
  const auto layers = layer_costs(e->w().model, 256, true);
  double attention = 0;
  for (const auto& l : layers) attention += l.attention_flops;
  REQUIRE(attention > 0);
  REQUIRE(e->w().compute.backward_attention == 2.5);
  const double first_input_grad = layers.front().needs_input_grad ? 0.0 : layers.front().gemm_flops + layers.front().conv_flops;
  CHECK(model_flops_per_sample(e->w(), layers) ==
        doctest::Approx(3 * forward_flops(layers) - first_input_grad).epsilon(1e-12).scale(ffsim::testing::kRelative));
}

TEST_CASE("train::fsdp: one rank stands for all - free communication leaves no idle time") {
  auto e = make(R"({"kind": "fsdp", "model": "gpt2_medium", "scaling": "weak", "batch": 2, "seq": 256,
                    "precision": "bf16", "param_dtype": "bf16", )" + kRing + R"(, "gpus": [1, 16]})");
  const StepResult rep = simulate_step(e->w(), e->env(), 16, false);
  const StepResult all = simulate_step(e->w(), e->env(), 16, true);
  check_same(rep, all);
  // Without communication the GPU never waits: no bubble; the collectives add what is exposed.
  CHECK(rep.bubble_s == 0);
  CHECK(rep.exposed_comm_s == doctest::Approx(rep.step_s - rep.compute_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(rep.exposed_comm_s > 0);
  // On one GPU nothing is gathered or reduced.
  const StepResult one = simulate_step(e->w(), e->env(), 1);
  CHECK(one.exposed_comm_s == 0);
  CHECK(one.step_s == doctest::Approx(one.compute_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
}

TEST_CASE("train::pipeline: with free communication the timeline is the 1F1B recurrence") {
  // 4 stages on one node, 6 micro-batches, no data parallelism.
  auto e = make(R"({"kind": "pipeline", "model": "llama_13b", "scaling": "strong", "batch": 6, "seq": 2048,
                    "precision": "bf16", "pp": 4, "gpus": [4]})", 1);
  StepBuilder free(*e->p, nullptr, true);
  (void)e->w().impl->build(free, e->w(), 4, false);
  eval::FluidEngine fluid;
  const double makespan = fluid.run(free.schedule(), *e->p).makespan;
  // Stage times from the partition, then the recurrence: an op starts when the op before it on
  // its stage and the op it needs (the forward of stage s-1, the backward of stage s+1) have ended.
  const auto layers = layer_costs(e->w().model, 2048, true);
  const auto& gpu = e->sc.cluster.node.gpus.front().gpu;
  const LayerTimes t = layer_times(e->w(), gpu, layers, 1, false);
  std::vector<double> cost;
  for (std::size_t k = 0; k < layers.size(); ++k) cost.push_back(t.fwd[k] + t.bwd[k]);
  const auto ranges = partition_stages(layers, cost, 4, "balanced");
  const int p = 4, m = 6;
  std::vector<double> f(p, 0), b(p, 0);
  for (int s = 0; s < p; ++s)
    for (std::size_t k = ranges[static_cast<std::size_t>(s)].first; k < ranges[static_cast<std::size_t>(s)].second; ++k) {
      f[static_cast<std::size_t>(s)] += t.fwd[k];
      b[static_cast<std::size_t>(s)] += t.bwd[k];
    }
  std::map<std::tuple<int, bool, int>, double> end;  // (stage, forward, micro-batch)
  std::vector<std::size_t> next(p, 0);
  std::vector<double> clock(p, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      const auto order = stage_order("1f1b", s, p, m);
      while (next[static_cast<std::size_t>(s)] < order.size()) {
        const auto [fwd, i] = order[next[static_cast<std::size_t>(s)]];
        double ready = clock[static_cast<std::size_t>(s)];
        if (fwd && s > 0) {
          auto it = end.find({s - 1, true, i});
          if (it == end.end()) break;
          ready = std::max(ready, it->second);
        }
        if (!fwd && s + 1 < p) {
          auto it = end.find({s + 1, false, i});
          if (it == end.end()) break;
          ready = std::max(ready, it->second);
        }
        clock[static_cast<std::size_t>(s)] = end[{s, fwd, i}] =
            ready + (fwd ? f[static_cast<std::size_t>(s)] : b[static_cast<std::size_t>(s)]);
        ++next[static_cast<std::size_t>(s)];
        progress = true;
      }
    }
  }
  // Stage 0 ends last (its last backward); the optimizer of the stages follows (ZeRO-0: whole stage).
  double expect = 0;
  for (int s = 0; s < p; ++s) {
    double params = 0;
    for (std::size_t k = ranges[static_cast<std::size_t>(s)].first; k < ranges[static_cast<std::size_t>(s)].second; ++k)
      params += layers[k].params;
    expect = std::max(expect, clock[static_cast<std::size_t>(s)] + optimizer_time(e->w(), gpu, params));
  }
  CHECK(makespan == doctest::Approx(expect).epsilon(1e-9).scale(ffsim::testing::kRelative));
  // Equal stages would give the textbook (m + p - 1)(f + b); ours are balanced, so close to it.
  const double fb = *std::max_element(f.begin(), f.end()) + *std::max_element(b.begin(), b.end());
  CHECK(clock[0] <= (m + p - 1) * fb * (1 + 1e-12));
}

TEST_CASE("train::pipeline: the ranks that share nodes stand for the whole job") {
  // 8 nodes, PP=4 x DP=16, dp_inner: stage s of ranks 0-7 fills node 2s, of ranks 8-15 node 2s+1.
  for (const char* layout : {"dp_inner", "pp_inner"})
    for (const char* stagger : {"none", "transfer"}) {
      CAPTURE(layout);
      CAPTURE(stagger);
      auto e = make(std::string(R"({"kind": "pipeline", "model": "llama_13b", "scaling": "strong", "batch": 32,
                    "seq": 2048, "precision": "bf16", "pp": 4, "zero_stage": 1, "layout": ")") + layout +
                    R"(", "stagger": ")" + stagger + R"(", )" + kRing + R"(, "gpus": [64]})");
      const StepResult rep = simulate_step(e->w(), e->env(), 64, false);
      const StepResult all = simulate_step(e->w(), e->env(), 64, true);
      // dp_inner: ranks 0-7 (32 GPUs); pp_inner: rank d's stages fill half a node, ranks 2k and 2k+1 share it.
      CHECK(rep.simulated_gpus == (std::string(layout) == "dp_inner" ? 32u : 8u));
      CHECK(all.simulated_gpus == 64);
      check_same(rep, all);
    }
}

TEST_CASE("train::pipeline: layouts decide which transfers cross the NIC - staggering spreads them") {
  const std::string common = R"("kind": "pipeline", "model": "llama_13b", "scaling": "strong", "batch": 16,
      "seq": 2048, "precision": "bf16", "pp": 4, "zero_stage": 1, )" + kRing + R"(, "gpus": [32])";
  auto count_inter_node = [](const StepBuilder& b) {
    int n = 0;
    const sched::Schedule& s = b.schedule();
    for (sched::OpId i = 0; i < s.size(); ++i)
      if (s.op(i).kind == sched::OpKind::Transfer && s.op(i).at.node != s.op(i).to.node) ++n;
    return n;
  };
  {
    // pp_inner: each pipeline's 4 stages on 4 GPUs of one node: no activation leaves the node.
    auto e = make("{" + common + R"(, "layout": "pp_inner"})", 4);
    StepBuilder b(*e->p, e->costs.get(), false);
    (void)e->w().impl->build(b, e->w(), 32, true);
    CHECK(count_inter_node(b) == 0);
  }
  // dp_inner: a node holds one stage of 8 pipelines; every activation crosses a NIC, 8 at once
  // unless the pipelines are staggered.
  auto none = make("{" + common + R"(, "layout": "dp_inner", "stagger": "none"})", 4);
  auto stag = make("{" + common + R"(, "layout": "dp_inner", "stagger": "transfer"})", 4);
  StepBuilder b(*none->p, none->costs.get(), false);
  (void)none->w().impl->build(b, none->w(), 32, true);
  // 3 boundaries x 8 pipelines x 2 micro-batches x 2 directions.
  CHECK(count_inter_node(b) == 3 * 8 * 2 * 2);
  const StepResult rn = simulate_step(none->w(), none->env(), 32);
  const StepResult rs = simulate_step(stag->w(), stag->env(), 32);
  CHECK(rs.exposed_comm_s < rn.exposed_comm_s);
  // The stagger itself idles the later pipelines: it shows as bubble, by 7 transfer slots at most.
  CHECK(rs.bubble_s > rn.bubble_s);
}

TEST_CASE("train::pipeline: staggered transfers stay apart only while a middle stage's forward lasts 8 of them") {
  // dp_inner puts one stage of 8 pipelines on a node, and the stagger starts them one lone transfer
  // time tau apart. In 1F1B's steady state a middle stage's pipeline j sends its activation when a
  // forward F ends and its gradient when the backward B ends, jtau after pipeline 0; so per cycle
  // F + B the node's NIC sends a burst of 8 activations filling [t, t + 8 tau) and, B later, a burst
  // of 8 gradients. The bursts never meet iff F >= 8 tau and B >= 8 tau (B = 2F here; tau includes
  // the path's latency, when the NIC is idle, so the exact edge sits a little lower: at F = 0.997 x
  // 8 tau they still miss, which is why the test aims 2% to either side). Below that a
  // pair shares the NIC, both finish late, the two receivers start their next passes together, and
  // the collisions spread. Nothing restores the stagger: that is the cliff of the DeepSeekMoE-16B
  // job (docs/commands/train.md, "When staggered pipelines collide"). GPT-2 medium on PP=4 (6
  // layers a stage) puts F near 8 tau; F is found at two GEMM efficiencies, F(e) = a / e + c (the
  // GEMM time scales as 1 / e, the rest does not), and the test runs 2% above and below 8 tau.
  auto exact = [](double v) {
    std::ostringstream o;
    o << std::setprecision(17) << v;
    return o.str();
  };
  auto run = [&](double gemm, StepTrace& t) {
    auto e = make(R"({"kind": "pipeline", "model": "gpt2_medium", "scaling": "strong", "batch": 256, "seq": 1024,
                      "precision": "bf16", "pp": 4, "zero_stage": 1, "layout": "dp_inner", "stagger": "transfer",
                      "efficiency": {"gemm": )" +
                      exact(gemm) + R"(}, )" + kRing + R"(, "gpus": [32]})",
                  4);
    return simulate_step(e->w(), e->env(), 32, false, &t);
  };
  struct Seen {
    double forward = 0;                                     // a middle stage's forward pass (the shortest)
    double lone = std::numeric_limits<double>::infinity();  // the shortest inter-stage transfer: tau
    double longest = 0;                                     // the longest one
    std::size_t transfers = 0;
  };
  auto seen = [](const StepTrace& t) {
    Seen s;
    s.forward = std::numeric_limits<double>::infinity();
    for (const auto& ev : t.events) {
      const double d = ev.end - ev.start;
      if (ev.name.rfind("fwd mb", 0) == 0 && (ev.node == 1 || ev.node == 2)) s.forward = std::min(s.forward, d);
      if (ev.name.rfind("activation mb", 0) == 0 || ev.name.rfind("gradient mb", 0) == 0) {
        s.lone = std::min(s.lone, d);
        s.longest = std::max(s.longest, d);
        ++s.transfers;
      }
    }
    return s;
  };
  StepTrace t1, t2;
  (void)run(1.0, t1);
  (void)run(0.5, t2);
  const Seen s1 = seen(t1), s2 = seen(t2);
  // 3 boundaries x 8 pipelines x 32 micro-batches (256 / 8) x 2 directions, each shown on the
  // sending and the receiving node's NIC lane.
  REQUIRE(s1.transfers == 3 * 8 * 32 * 2 * 2);
  const double tau = s1.lone, a = s2.forward - s1.forward, c = s1.forward - a;
  CHECK(s2.lone == doctest::Approx(tau).epsilon(1e-12).scale(ffsim::testing::kRelative));
  REQUIRE(a > 0);
  auto efficiency_for = [&](double forward) { return a / (forward - c); };
  const double above = efficiency_for(1.02 * 8 * tau), below = efficiency_for(0.98 * 8 * tau);
  CAPTURE(tau);
  CAPTURE(above);
  CAPTURE(below);
  REQUIRE(above > 0);
  REQUIRE(below > above);
  REQUIRE(below <= 1);
  StepTrace ta, tb;
  const StepResult ra = run(above, ta), rb = run(below, tb);
  const Seen sa = seen(ta), sb = seen(tb);
  // The fitted F(e) is the model's: the runs land where they were aimed.
  CHECK(sa.forward == doctest::Approx(1.02 * 8 * tau).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(sb.forward == doctest::Approx(0.98 * 8 * tau).epsilon(1e-9).scale(ffsim::testing::kRelative));
  // Above: every one of the 1,536 transfers has the NIC to itself.
  CHECK(sa.longest == doctest::Approx(tau).epsilon(1e-9).scale(ffsim::testing::kRelative));
  // Below: some share it (two at once take 2 tau), and the step exposes more communication though
  // its compute is faster.
  CHECK(sb.longest > 1.9 * tau);
  CHECK(rb.compute_s < ra.compute_s);
  CHECK(rb.exposed_comm_s > ra.exposed_comm_s);
  // The plan states the edge (what `ffsim train` prints): 8 pipelines, a transfer's bytes over the
  // path's rate (tau less its latency), the shortest middle forward; crossed below it only.
  for (const StepResult* r : {&ra, &rb}) {
    CHECK(r->stagger.pipelines == 8);
    CHECK(r->stagger.transfer_s < tau);
    CHECK(r->stagger.transfer_s > 0.98 * tau);
  }
  CHECK(ra.stagger.shortest_forward_s == doctest::Approx(sa.forward).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(rb.stagger.shortest_forward_s == doctest::Approx(sb.forward).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK_FALSE(ra.stagger.crossed());
  CHECK(rb.stagger.crossed());
  // No stagger, a pipeline of two stages (no middle stage), or tensor parallelism: no edge.
  for (const char* w : {R"("pp": 4, "stagger": "none")", R"("pp": 2, "stagger": "transfer")",
                        R"("pp": 4, "tp": 2, "stagger": "transfer")"}) {
    CAPTURE(w);
    auto e = make(R"({"kind": "pipeline", "model": "gpt2_medium", "scaling": "strong", "batch": 64, "seq": 1024,
                      "precision": "bf16", "zero_stage": 1, "layout": "dp_inner", )" +
                      std::string(w) + ", " + kRing + R"(, "gpus": [32]})",
                  4);
    const StepResult r = simulate_step(e->w(), e->env(), 32);
    CHECK(r.stagger.pipelines == 0);
    CHECK_FALSE(r.stagger.crossed());
  }
}

TEST_CASE("train::pipeline: with tensor parallelism the stagger spaces pipelines by their burst") {
  // dp_inner on 32 GPUs of fire_flyer_pcie nodes (one NIC each, and one GPU<->NIC peer-to-peer cap
  // per NIC): with PP=4 and TP=1, 8 pipelines' first stages sit on node 0, each sending a
  // micro-batch's activation A (GPT-2 medium: s h = 1024 x 1024 values at 2 bytes) as one flow,
  // alone A / r with r the slowest rate on its path (the peer-to-peer cap or the NIC, both per
  // node); pipeline j starts j A / r after pipeline 0. With TP=2, 4 pipelines sit there, each
  // sending two shares of A / 2 at once through the same per-node bottleneck: alone they take
  // 2 (A / 2) / r = A / r, the same spacing. Spacing them by one share (A / 2r), as before
  // 2026-12-05, let each pipeline's burst overlap the next one's.
  auto stagger_delays = [&](int tp) {
    auto e = make(R"({"kind": "pipeline", "model": "gpt2_medium", "scaling": "strong", "batch": 64, "seq": 1024,
                      "precision": "bf16", "pp": 4, "tp": )" +
                      std::to_string(tp) + R"(, "zero_stage": 1, "layout": "dp_inner", "stagger": "transfer", )" +
                      kRing + R"(, "gpus": [32]})",
                  4);
    StepBuilder b(*e->p, e->costs.get(), false);
    const StepPlan plan = e->w().impl->build(b, e->w(), 32, false);
    std::vector<double> delays;
    for (sched::OpId id = 0; id < b.schedule().size(); ++id)
      if (b.name(id) == "stagger") delays.push_back(b.schedule().op(id).amount);
    // The edge is stated without tensor parallelism only (src/train/pipeline.cpp says why).
    CHECK(plan.stagger.pipelines == (tp == 1 ? 8 : 0));
    return delays;
  };
  const std::vector<double> one = stagger_delays(1), two = stagger_delays(2);
  // Pipeline 0 waits for nothing: 7 and 3 delays.
  REQUIRE(one.size() == 7);
  REQUIRE(two.size() == 3);
  const double beta = one[0];
  CHECK(beta > 0);
  for (std::size_t j = 0; j < one.size(); ++j)
    CHECK(one[j] == doctest::Approx(static_cast<double>(j + 1) * beta).epsilon(1e-12).scale(ffsim::testing::kRelative));
  for (std::size_t j = 0; j < two.size(); ++j)
    CHECK(two[j] == doctest::Approx(static_cast<double>(j + 1) * beta).epsilon(1e-12).scale(ffsim::testing::kRelative));
}

TEST_CASE("train::moe: expert parallelism adds all-to-alls and splits the routed experts") {
  auto names = [](const std::string& w) {
    auto e = make(w, 2);
    StepBuilder b(*e->p, e->costs.get(), false);
    const StepPlan plan = e->w().impl->build(b, e->w(), 16, false);
    int a2a = 0;
    for (sched::OpId i = 0; i < b.schedule().size(); ++i)
      if (b.name(i).rfind("all-to-all", 0) == 0) ++a2a;
    return std::make_pair(a2a, plan.memory_bytes);
  };
  const std::string base = R"({"kind": "moe", "model": "deepseek_moe_16b", "scaling": "strong", "batch": 16,
      "seq": 4096, "precision": "bf16", "pp": 2, "zero_stage": 1, )" + kRing + R"(, "gpus": [16], "ep": )";
  const auto [a1, m1] = names(base + "1}");
  const auto [a4, m4] = names(base + "4}");
  CHECK(a1 == 0);
  // PP=2 x DP=8, EP=4: the representative is one expert-parallel block of 4 ranks (they share a node
  // with the other block, so both: 8 ranks = 2 groups); 2 micro-batches; per stage pass one
  // all-to-all op (dispatch + combine of its MoE layers), forward and backward, except the split
  // last backward, which has one per MoE layer.
  // Counted: 2 expert-parallel groups per stage; per group and micro-batch one op forward and one
  // backward, except the last micro-batch's backward, split per MoE layer of the group's stage.
  // DeepSeekMoE-16B has 28 layers, the first dense: 27 MoE layers over the two stages. With m
  // micro-batches: 2 x (2 stages x (2m - 1) + 27); 66 for m = 2 (batch 16 over DP 8), 74 for m = 3.
  CHECK(a4 == 2 * (2 * (2 * 2 - 1) + 27));
  std::string batch24 = base;
  batch24.replace(batch24.find("\"batch\": 16"), 11, "\"batch\": 24");
  CHECK(names(batch24 + "4}").first == 2 * (2 * (2 * 3 - 1) + 27));
  CHECK(m4 < m1);
  auto e = make(base + "4}", 2);
  const StepResult r = simulate_step(e->w(), e->env(), 16);
  CHECK(r.exposed_comm_s > 0);
}

TEST_CASE("train::moe: ZeRO-1 shards the experts' optimizer state over their expert group") {
  // PP=1 x DP=16 with ZeRO-1: the dense parameters' Adam state is sharded over all 16 ranks, a
  // rank's routed experts (1/ep of them) over the ranks that hold the same experts, 16/ep of them
  // (their gradients are reduce-scattered over that group). Activations do not depend on ep, so
  // memory(ep 4) - memory(ep 1) = R/4 x state(4) - R x state(16), R the routed parameters and
  // state(k) the bytes per parameter with the moments over k shards. (Until 2026-12-01 the
  // experts' state was divided by 16 too: the difference was R/4 x state(16) - R x state(16).)
  auto memory = [](int ep) {
    auto e = make(R"({"kind": "moe", "model": "deepseek_moe_16b", "scaling": "strong", "batch": 16, "seq": 4096,
                      "precision": "bf16", "pp": 1, "zero_stage": 1, )" + kRing + R"(, "gpus": [16], "ep": )" +
                      std::to_string(ep) + "}", 2);
    StepBuilder b(*e->p, e->costs.get(), false);
    return std::make_pair(e->w().impl->build(b, e->w(), 16, false).memory_bytes, e->w());
  };
  const auto [m1, w] = memory(1);
  const double m4 = memory(4).first;
  double routed = 0;
  for (const auto& l : layer_costs(w.model, w.seq, true)) routed += l.routed_params;
  REQUIRE(routed > 1e10);  // DeepSeekMoE-16B: most of its 16.4B parameters are routed experts
  CHECK(m4 - m1 == doctest::Approx(routed / 4 * optimizer_state_bytes(w, 4) - routed * optimizer_state_bytes(w, 16))
                       .epsilon(1e-9).scale(ffsim::testing::kRelative));
}

TEST_CASE("train::set_efficiencies: samples per second per GPU against the first row") {
  std::vector<StepResult> rows(3);
  rows[0].gpus = 32;
  rows[0].samples_per_s = 100;
  rows[1].gpus = 64;
  rows[1].samples_per_s = 190;  // 190/64 over 100/32 = 0.95
  rows[2].gpus = 16;
  rows[2].samples_per_s = 60;   // 60/16 over 100/32 = 1.2
  set_efficiencies(rows);
  CHECK(rows[0].efficiency == 1);
  CHECK(rows[1].efficiency == doctest::Approx(0.95).epsilon(1e-15).scale(ffsim::testing::kRelative));
  CHECK(rows[2].efficiency == doctest::Approx(1.2).epsilon(1e-15).scale(ffsim::testing::kRelative));
}

TEST_CASE("train: GPU counts a workload cannot run are rejected with the reason") {
  auto e = make(R"({"kind": "pipeline", "model": "llama_13b", "scaling": "strong", "batch": 4096, "seq": 2048,
                    "precision": "bf16", "pp": 4, "gpus": [64]})");
  CHECK(e->w().impl->check(e->w(), 66, 64, 8) == "the cluster has 64 GPUs; cannot run 66");
  CHECK(e->w().impl->check(e->w(), 30, 64, 8) == "PP=4 x TP=1 does not divide 30 GPUs");
  // 4096 over 48 / 4 = 12 ranks is not whole.
  CHECK(e->w().impl->check(e->w(), 48, 64, 8) ==
        "a batch of 4096 samples per step is not a whole number of micro-batches of 1 on each of 12 data-parallel ranks");
  CHECK_THROWS_AS((void)simulate_step(e->w(), e->env(), 30), ValueError);
}

TEST_CASE("train: the shipped experiments stay below the GPU's GEMM rate (MFU reported)") {
  // Efficiencies are fractions of the GEMM rate (at most 1), so no step can beat it; checked on the
  // smallest GPU count of each experiment (collective durations from the closed forms, for speed).
  for (const char* name : {"vgg16-ddp", "gpt2-fsdp", "llama13b-pp", "moe16b"}) {
    CAPTURE(name);
    const auto sc = plan::load_scenario(std::string(FFSIM_TEST_DATA_DIR) + "/train/" + name + "-ring.json", catalog());
    const auto p = plan::make_platform(sc);
    const auto lib = config::load_library_params(catalog());
    eval::FluidEngine fluid;
    CollectiveCosts costs(fluid, *p, lib, CollectiveCosts::Method::Estimate);
    const StepResult r = simulate_step(*sc.workload, StepEnv{*p, fluid, costs}, sc.workload->gpus.front());
    const GpuRates rates = rates_of(sc.cluster.node.gpus.front().gpu, sc.workload->precision);
    CHECK(r.gemm_measured);
    CHECK(r.of_gemm > 0.1);
    CHECK(r.of_gemm < 1);
    CHECK(r.tflops_per_gpu * 1e12 < rates.gemm.si());
    CHECK(r.mfu == doctest::Approx(r.of_gemm * rates.gemm.si() / rates.peak.si()).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(r.fits);
  }
}

TEST_CASE("train: a collective as a timed op against its whole schedule inside the step") {
  // HFReduce runs on copy engines, host memory and the CPUs: nothing the step's kernels use, so
  // the timed op (the collective simulated alone) and the emitted schedule give the same step.
  // NCCL's ring sums on the GPU: its reduce kernels share the SMs with backward, so the emitted
  // step is a little longer; the timed op leaves that contention out.
  const std::string base = R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                               "optimizer": "sgd", "gpus": [16], "algorithms": {"allreduce": ")";
  for (const char* alg : {"hfreduce", "nccl_ring"}) {
    CAPTURE(alg);
    auto e = make(base + alg + "\"}}", 2);
    StepEnv timed = e->env(), emitted = e->env();
    emitted.emit_collectives = true;
    const StepResult t = simulate_step(e->w(), timed, 16, true);
    const StepResult x = simulate_step(e->w(), emitted, 16, true);
    CHECK(x.ops > t.ops);
    CHECK(x.compute_s == doctest::Approx(t.compute_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
    if (std::string(alg) == "hfreduce") {
      CHECK(x.step_s == doctest::Approx(t.step_s).epsilon(1e-9).scale(ffsim::testing::kRelative));
    } else {
      CHECK(x.step_s >= t.step_s * (1 - 1e-12));
      CHECK(x.step_s == doctest::Approx(t.step_s).epsilon(0.02).scale(ffsim::testing::kRelative));
    }
  }
  SUBCASE("FSDP on the host path (hf_allgather, hf_reduce_scatter), emitted") {
    // The host-path collectives, like HFReduce, use none of the GPU's SMs. FSDP issues them on one
    // stream in order; a timed op ends when the whole collective does, while emitted, a rank's next
    // collective starts once its own part of the previous one is done (a reduce-scatter's shard
    // lands on each node at its own time), so the emitted step can only be shorter, by the
    // collectives' tails (0.17% measured).
    auto e = make(R"({"kind": "fsdp", "model": "gpt2_medium", "scaling": "weak", "batch": 2, "seq": 256,
                      "precision": "bf16", "gpus": [16]})", 2);
    StepEnv emitted = e->env();
    emitted.emit_collectives = true;
    const StepResult t = simulate_step(e->w(), e->env(), 16, true);
    const StepResult x = simulate_step(e->w(), emitted, 16, true);
    CHECK(x.ops > t.ops);
    CHECK(x.step_s <= t.step_s * (1 + 1e-12));
    CHECK(x.step_s == doctest::Approx(t.step_s).epsilon(0.01).scale(ffsim::testing::kRelative));
  }
  SUBCASE("a pipeline's data-parallel reduction and ZeRO-1 allgather, emitted") {
    auto e = make(R"({"kind": "pipeline", "model": "llama_13b", "scaling": "strong", "batch": 8, "seq": 2048,
                      "precision": "bf16", "grad_dtype": "bf16", "pp": 4, "zero_stage": 1, "stagger": "transfer",
                      "algorithms": {"allreduce": "hfreduce"}, "gpus": [32]})", 4);
    StepEnv emitted = e->env();
    emitted.emit_collectives = true;
    const StepResult t = simulate_step(e->w(), e->env(), 32, true);
    const StepResult x = simulate_step(e->w(), emitted, 32, true);
    CHECK(x.step_s == doctest::Approx(t.step_s).epsilon(0.01).scale(ffsim::testing::kRelative));
  }
}

TEST_CASE("train::pipeline: ZeRO-1 reduce-scatters the gradients and allgathers the parameters") {
  // ZeRO (Rajbhandari et al., SC'20, Sec. 7.2.1): with the optimizer state sharded, each rank needs
  // only its shard of the summed gradients, so the reduction is a reduce-scatter and the updated
  // parameters come back by an allgather: the volume of one allreduce. Without ZeRO, an allreduce.
  auto count = [](const StepTrace& t, const std::string& prefix, const std::string& algo = "") {
    int n = 0;
    for (const auto& e : t.events)
      n += e.name.rfind(prefix, 0) == 0 && e.name.find(algo) != std::string::npos ? 1 : 0;
    return n;
  };
  for (int zero : {0, 1}) {
    CAPTURE(zero);
    auto e = make(R"({"kind": "pipeline", "model": "llama_13b", "scaling": "strong", "batch": 8, "seq": 2048,
                      "precision": "bf16", "grad_dtype": "bf16", "pp": 4, "zero_stage": )" +
                      std::to_string(zero) + R"(, "gpus": [32]})",
                  4);
    StepTrace t;
    (void)simulate_step(e->w(), e->env(), 32, false, &t);
    // The hfreduce backend: HFReduce's allreduce, or the host path's reduce-scatter.
    CHECK((count(t, "grad reduce-scatter", ", hf_reduce_scatter)") > 0) == (zero == 1));
    CHECK((count(t, "grad allreduce", ", hfreduce)") > 0) == (zero == 0));
    CHECK(count(t, "grad ") == count(t, "grad ", zero == 1 ? ", hf_reduce_scatter)" : ", hfreduce)"));
    CHECK((count(t, "param allgather") > 0) == (zero == 1));
  }
}

TEST_CASE("train::CollectiveCosts: collectives run on several threads give the times of one after the other") {
  // Each run has its own engine, all share the one platform (its router is thread-safe), and the fluid engine is
  // deterministic: the times must be equal bit for bit (not merely close) to the serial ones,
  // whatever the thread count, and so must whole steps built on them. HFReduce (host path) and the
  // NCCL ring over 2-8 nodes and several sizes, one of them repeated (asked twice, run once).
  const auto serial = make(R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                                "gpus": [64]})");
  std::vector<std::tuple<std::string, int, double>> queries;
  for (const char* alg : {"hfreduce", "nccl_ring"})
    for (int gpus : {16, 24, 64})
      for (double bytes : {1.0 * 1048576, 25.0 * 1048576 + 3, 1.0 * 1048576}) queries.emplace_back(alg, gpus, bytes);
  std::vector<double> want;
  for (const auto& [alg, gpus, bytes] : queries)
    want.push_back(serial->costs->time(alg, coll::Group::first_gpus(*serial->p, gpus), bytes));
  for (int threads : {2, 3, 8}) {
    CAPTURE(threads);
    const auto par = make(R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                               "gpus": [64]})");
    par->costs->set_parallel([] { return app::make_engine("analytic"); }, threads);
    REQUIRE(par->costs->parallel());
    par->costs->begin_recording();
    for (const auto& [alg, gpus, bytes] : queries)
      CHECK(par->costs->time(alg, coll::Group::first_gpus(*par->p, gpus), bytes) == 0);  // recorded, not run
    CHECK(par->costs->evaluations() == 0);
    par->costs->run_recorded();
    CHECK(par->costs->evaluations() == 12);  // 2 algorithms x 3 GPU counts x 2 distinct sizes
    for (std::size_t i = 0; i < queries.size(); ++i) {
      const auto& [alg, gpus, bytes] = queries[i];
      CAPTURE(alg);
      CAPTURE(gpus);
      CHECK(par->costs->time(alg, coll::Group::first_gpus(*par->p, gpus), bytes) == want[i]);
    }
    // A whole step: recorded, run at once, built again from the cache.
    const StepResult a = simulate_step(serial->w(), serial->env(), 64);
    const StepResult b = simulate_step(par->w(), par->env(), 64);
    CHECK(a.step_s == b.step_s);
    CHECK(a.exposed_comm_s == b.exposed_comm_s);
  }
  // A run that fails: the error of the first failing query in the order asked, as serially.
  const auto par = make(R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                             "gpus": [64]})");
  par->costs->set_parallel([] { return app::make_engine("analytic"); }, 2);
  par->costs->begin_recording();
  (void)par->costs->time("nccl_ring", coll::Group::first_gpus(*par->p, 16), 1e6);
  (void)par->costs->time("hfreduce", coll::Group{{Place::gpu(0, 0), Place::gpu(0, 1), Place::gpu(1, 0)}}, 1e6);
  // Two failing queries with different messages: the first one asked is the one reported, whichever
  // thread failed first.
  (void)par->costs->time("hfreduce_nvlink", coll::Group{{Place::gpu(0, 0), Place::gpu(0, 2)}}, 1e6);
  CHECK_THROWS_WITH(par->costs->run_recorded(), doctest::Contains("hfreduce needs the same number of GPUs on every node"));
  par->costs->begin_recording();  // an unknown algorithm fails when asked, recording or not
  CHECK_THROWS_WITH_AS(par->costs->time("no_such_algorithm", coll::Group::first_gpus(*par->p, 16), 1e6),
                       doctest::Contains("no_such_algorithm"), ValueError);
  par->costs->discard_recorded();
  CHECK_THROWS_WITH_AS(par->costs->time("no_such_algorithm", coll::Group::first_gpus(*par->p, 16), 1e6),
                       doctest::Contains("no_such_algorithm"), ValueError);
}

TEST_CASE("train::prepare_steps: each GPU count's share of the collectives' wall time (ffsim train --timing)") {
  // The counts' distinct collectives run at once before the steps (prepare_steps), outside the
  // steps' own timing; a count's row adds its share: the elapsed time of that run in proportion to
  // the times of the collectives it was the first to need. So: a count with collectives of its own
  // gets a positive share, a repeated count (every collective already recorded by the first) none,
  // and the shares add up to at most the time the call took. Without parallel runs nothing is
  // prepared (the steps simulate their collectives in their own time): zeros.
  const char* spec = R"({"kind": "ddp", "model": "vgg16", "scaling": "weak", "batch": 2, "precision": "tf32",
                         "gpus": [16]})";
  const std::vector<int> gpus{16, 32, 16};
  {
    const auto serial = make(spec);
    const std::vector<double> s = prepare_steps(serial->w(), serial->env(), gpus);
    CHECK(s == std::vector<double>(3, 0.0));
  }
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    const auto par = make(spec);
    par->costs->set_parallel([] { return app::make_engine("analytic"); }, threads);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<double> s = prepare_steps(par->w(), par->env(), gpus);
    const double call = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(s.size() == 3);
    CHECK(s[0] > 0);
    CHECK(s[1] > 0);
    CHECK(s[2] == 0);
    CHECK(s[0] + s[1] <= call);
    CHECK(par->costs->evaluations() > 0);
    // Prepared again: every collective is known, nothing is run.
    CHECK(prepare_steps(par->w(), par->env(), gpus) == std::vector<double>(3, 0.0));
  }
}
