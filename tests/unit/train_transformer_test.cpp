// Tests of the 3D-parallel transformer workload (train/transformer.hpp) on a tiny GPT derived by
// hand: bubble fraction, tensor-parallel collectives, parameters per GPU, the memory estimate under
// ZeRO 0-3 and recomputation, and the closed-form step against its own composition.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "app/engines.hpp"
#include "config/coll_reader.hpp"
#include "core/error.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"
#include "train/run.hpp"
#include "train/transformer.hpp"

using namespace ffsim;
using namespace ffsim::train;

namespace {

// A tiny GPT: 2 blocks, h = 64, 4 heads, 4h GELU MLP with biases, LayerNorm, vocabulary 128,
// 16 learned positions, untied head, sequence 16. By hand (nn_model.cpp's counts):
//   block:     12 h^2 + 13 h = 49152 + 832 = 49984 parameters
//   embedding: (V + positions) h = 144 x 64 = 9216
//   head:      final norm 2h + V h = 128 + 8192 = 8320
const std::string kTiny = R"({"extends": "gpt2_medium", "layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256,
    "vocab": 128, "learned_positions": 16, "max_sequence": 16, "tied_embeddings": false, "published_parameters": null})";

// `nodes` DGX-A100 nodes (8 GPUs each) on a two-layer tree, running the transformer with `keys`.
struct Env {
  plan::ScenarioSpec sc;
  std::unique_ptr<platform::Platform> p;
  coll::LibraryParams lib;
  std::unique_ptr<eval::Engine> engine = app::make_engine("fluid");  // unused by the estimates
  std::unique_ptr<CollectiveCosts> costs;
  [[nodiscard]] const WorkloadSpec& w() const { return *sc.workload; }
};

std::string workload(const std::string& keys, int gpus, const std::string& model = kTiny) {
  return R"({"kind": "transformer", "model": )" + model +
         R"(, "scaling": "strong", "seq": 16, "precision": "bf16", "grad_dtype": "bf16",
      "optimizer": "adamw", "flash_attention": false, "backend": "nccl", "gpus": [)" +
         std::to_string(gpus) + "], " + keys + "}";
}

std::unique_ptr<Env> make(const std::string& keys, int gpus, int nodes = 1, const std::string& model = kTiny,
                          const std::string& node = "dgx_a100") {
  auto e = std::make_unique<Env>();
  const std::string text = R"({"name": "t", "cluster": {"node": ")" + node + R"(", "nodes": )" + std::to_string(nodes) +
                           R"(}, "fabric": {"topology": "two_layer", "switch": "qm8700"}, "workload": )" +
                           workload(keys, gpus, model) + "}";
  e->sc = plan::parse_scenario(config::Document::parse(text, "t.json", false), ffsim::testing::catalog());
  e->p = plan::make_platform(e->sc);
  e->lib = config::load_library_params(ffsim::testing::catalog());
  e->costs = std::make_unique<CollectiveCosts>(*e->engine, *e->p, e->lib, CollectiveCosts::Method::Estimate);
  return e;
}

TransformerParams params(int tp, int pp, int zero = 0, const std::string& recompute = "none", bool sp = false,
                         int v = 1) {
  TransformerParams p;
  p.tp = tp;
  p.pp = pp;
  p.zero_stage = zero;
  p.recompute = recompute;
  p.sequence_parallel = sp;
  p.interleave = v;
  return p;
}

}  // namespace

TEST_CASE("transformer: the bubble fraction is (p - 1) / (m v)") {
  CHECK(bubble_fraction(2, 4, 1) == doctest::Approx(0.25));           // 1 / 4
  CHECK(bubble_fraction(2, 4, 2) == doctest::Approx(0.125));          // 1 / 8: two chunks per stage
  CHECK(bubble_fraction(64, 512, 1) == doctest::Approx(63.0 / 512));  // GPT 1T: 12.3%
  CHECK(bubble_fraction(3, 3, 1) == doctest::Approx(2.0 / 3));        // odd sizes
  CHECK(bubble_fraction(1, 8, 1) == 0);                               // one stage: no bubble
  CHECK(bubble_fraction(4, 0, 1) == 0);
}

TEST_CASE("transformer: tensor-parallel collectives per block") {
  const auto e = make(R"("batch": 8, "tp": 2, "pp": 2)", 8);
  // S = b s h x 2 bytes = 1 x 16 x 64 x 2 = 2048 bytes per collective.
  const TpTraffic none = tp_traffic_per_block(params(2, 2), e->w(), 1);
  CHECK(none.allreduces == 4);  // Megatron: 2 forward + 2 backward
  CHECK(none.reduce_scatters == 0);
  CHECK(none.allgathers == 0);
  CHECK(none.bytes == 2048);
  CHECK(tp_traffic_per_block(params(2, 2), e->w(), 3).bytes == 3 * 2048);  // micro-batch of 3
  // Full recomputation reruns the forward's two; selective reruns only the attention core (no TP comm).
  CHECK(tp_traffic_per_block(params(2, 2, 0, "full"), e->w(), 1).allreduces == 6);
  CHECK(tp_traffic_per_block(params(2, 2, 0, "selective"), e->w(), 1).allreduces == 4);
  // Sequence parallelism: each allreduce becomes a reduce-scatter and an allgather.
  const TpTraffic sp = tp_traffic_per_block(params(2, 2, 0, "none", true), e->w(), 1);
  CHECK(sp.allreduces == 0);
  CHECK(sp.reduce_scatters == 4);
  CHECK(sp.allgathers == 4);
  const TpTraffic one = tp_traffic_per_block(params(1, 2), e->w(), 1);  // TP = 1: none
  CHECK(one.allreduces + one.reduce_scatters + one.allgathers == 0);
}

TEST_CASE("transformer: parameters per stage and per GPU") {
  const auto e = make(R"("batch": 8, "tp": 2, "pp": 2)", 8);
  // PP = 2: stage 0 = embedding + block 0 = 9216 + 49984 = 59200; stage 1 = block 1 + head = 58304.
  CHECK(stage_params(params(2, 2), e->w(), 0) == 59200);
  CHECK(stage_params(params(2, 2), e->w(), 1) == 58304);
  // PP = 1: everything, 9216 + 2 x 49984 + 8320 = 117504.
  CHECK(stage_params(params(2, 1), e->w(), 0) == 117504);
  // Per GPU, the fullest stage over TP = 2: 59200 / 2 = 29600.
  CHECK(transformer_memory(params(2, 2), e->w(), 2, 4).params == 29600);
  // Tied embeddings: the last stage keeps a copy of the word embedding (V h = 8192) for its head of
  // 2h = 128: still 49984 + 128 + 8192 = 58304.
  const std::string tied = R"({"extends": "gpt2_medium", "layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256,
      "vocab": 128, "learned_positions": 16, "max_sequence": 16, "published_parameters": null})";
  const auto t = make(R"("batch": 8, "tp": 2, "pp": 2)", 8, 1, tied);
  CHECK(stage_params(params(2, 2), t->w(), 1) == 58304);
  CHECK(stage_params(params(2, 1), t->w(), 0) == 9216 + 2 * 49984 + 128);  // one stage: no copy
}

TEST_CASE("transformer: memory per GPU under ZeRO 0-3 and recomputation") {
  const auto e = make(R"("batch": 8, "tp": 2, "pp": 2)", 8);
  const WorkloadSpec& w = e->w();
  // TP 2, PP 2, DP 2, batch 8 -> 4 samples per pipeline, m = 4 micro-batches of 1.
  // Activations per block per micro-batch (Korthikanti et al. 2022 Table 2, bytes, TP without SP):
  //   s b h (10 + 24 / t) + 5 a s^2 b / t = 1024 x 22 + 5 x 4 x 256 / 2 = 22528 + 2560 = 25088.
  // Stage 0 (1 block) holds min(p - 0, m) = 2 micro-batches: 50176. Stage 1 holds 1 (25088) plus
  // the head's logits s (h + 2V) x 2 bytes / t = 16 x 320 = 5120: 30208.
  // Bytes per parameter (bf16 weights 2, bf16 gradients 2, Adam fp32 master + 2 moments 12):
  //   ZeRO-0: 16 -> stage 0: 16 x 29600 + 50176 = 523776 (stage 1: 16 x 29152 + 30208 = 496640)
  //   ZeRO-1: 2 + 2 + 12 / 2 = 10 -> 296000 + 50176 = 346176
  //   ZeRO-2: 2 + 1 + 6 = 9 -> 266400 + 50176 = 316576
  //   ZeRO-3: 1 + 1 + 6 = 8, plus the two largest units' gathered weights (block 24992 + embedding
  //   4608 = the whole chunk, 29600) x 2 -> 10 x 29600 + 50176 = 346176
  const double z[4] = {523776, 346176, 316576, 346176};
  for (int zero = 0; zero <= 3; ++zero) {
    CAPTURE(zero);
    const TransformerMemory m = transformer_memory(params(2, 2, zero), w, 2, 4);
    CHECK(m.stage == 0);
    CHECK(m.activations == doctest::Approx(50176));
    CHECK(m.in_flight == 2);
    CHECK(m.total() == doctest::Approx(z[zero]));
  }
  // DP = 1: ZeRO shards nothing (the stage-3 working copy stays): 16 x 29600 + 2 x 29600 + 50176.
  CHECK(transformer_memory(params(2, 2, 3), w, 1, 4).total() == doctest::Approx(18 * 29600 + 50176));
  // Sequence parallelism splits all of it: s b h 34 / t + 5 a s^2 b / t = (17408 + 2560) / 2 x 2 = 19968.
  CHECK(transformer_memory(params(2, 2, 0, "none", true), w, 2, 4).activations == doctest::Approx(2 * 19968));
  // Selective recomputation keeps no scores: s b h (10 + 24 / t) = 22528 per micro-batch.
  CHECK(transformer_memory(params(2, 2, 0, "selective"), w, 2, 4).activations == doctest::Approx(2 * 22528));
  // Full recomputation keeps each block's input (s b h x 2 = 2048) and rebuilds one block at a time
  // (its 19968 elements x 2 bytes / t = 19968 bytes): 2 x 2048 + 19968.
  CHECK(transformer_memory(params(2, 2, 0, "full"), w, 2, 4).activations == doctest::Approx(2 * 2048 + 19968));
  // TP = 1: nothing split: s b h 34 + 5 a s^2 b = 34816 + 5120 = 39936 per micro-batch.
  CHECK(transformer_memory(params(1, 2), w, 4, 2).activations == doctest::Approx(2 * 39936));
  // One micro-batch: stage 0 holds min(2, 1) = 1.
  CHECK(transformer_memory(params(2, 2), w, 2, 1).in_flight == 1);
}

TEST_CASE("transformer: ZeRO-3 holds two units' gathered weights, not the whole chunk's") {
  // 4 blocks, TP 2, PP 1 (the whole model is one chunk), DP 4 on 8 GPUs. Per GPU:
  //   (embedding 9216 + 4 x 49984 + head 8320) / 2 = 217472 / 2 = 108736 parameters;
  //   sharded over DP 4: bf16 weights 108736 x 2 / 4 = 54368 bytes;
  //   gathered: the two largest units (2 blocks of 49984 / 2 = 24992) = 49984 parameters x 2 bytes
  //   = 99968 bytes, not the chunk's 217472.
  const std::string four = R"({"extends": "gpt2_medium", "layers": 4, "hidden": 64, "heads": 4, "ffn_hidden": 256,
      "vocab": 128, "learned_positions": 16, "max_sequence": 16, "tied_embeddings": false, "published_parameters": null})";
  const auto e = make(R"("batch": 8, "tp": 2, "pp": 1)", 8, 1, four);
  const TransformerMemory m = transformer_memory(params(2, 1, 3), e->w(), 4, 2);
  CHECK(m.params == 108736);
  CHECK(m.weights == doctest::Approx(54368 + 99968));
  // At most the chunk: with two blocks per stage and the embedding (PP 2: stage 0 = 9216 + 2 x
  // 49984 = 109184 / 2 = 54592 per GPU), two units are the two blocks, 49984 < 54592: 99968 bytes.
  const TransformerMemory m2 = transformer_memory(params(2, 2, 3), e->w(), 2, 4);
  CHECK(m2.weights == doctest::Approx(54592 * 2 / 2 + 99968));
}

TEST_CASE("transformer: interleaved stages hold 1 + (p - 1) / (p v) times the activations") {
  // 4 blocks, PP 2 x 2 chunks of 1: stage 0 holds blocks 0 and 2 (and the embedding), 2 of the
  // m = 4 micro-batches in flight, x (1 + 1 / 4) = 1.25: 2 blocks x 25088 x 2 x 1.25 = 125440.
  const std::string four = R"({"extends": "gpt2_medium", "layers": 4, "hidden": 64, "heads": 4, "ffn_hidden": 256,
      "vocab": 128, "learned_positions": 16, "max_sequence": 16, "tied_embeddings": false, "published_parameters": null})";
  const auto e = make(R"("batch": 8, "tp": 2, "pp": 2, "interleave": 2)", 8, 1, four);
  CHECK(stage_params(params(2, 2, 0, "none", false, 2), e->w(), 0) == 9216 + 2 * 49984);
  const TransformerMemory m = transformer_memory(params(2, 2, 0, "none", false, 2), e->w(), 2, 4);
  CHECK(m.stage == 0);
  CHECK(m.activations == doctest::Approx(125440));
  // Megatron-LM's interleaved schedule needs m a multiple of p: at DP 8 (32 GPUs) m = 1 is not.
  CHECK(e->w().impl->check(e->w(), 32, 32, 8).find("multiple of PP=2") != std::string::npos);
  CHECK(bubble_fraction(2, 4, 2) == doctest::Approx(0.125));
}

TEST_CASE("transformer: the checks") {
  const auto e = make(R"("batch": 8, "tp": 2, "pp": 2)", 8);
  const WorkloadSpec& w = e->w();
  CHECK(w.impl->check(w, 8, 8, 8).empty());
  // DP = 3 (non-power of two): 12 GPUs of TP 2 x PP 2; 8 samples do not split over 3 ranks.
  CHECK(w.impl->check(w, 12, 16, 8).find("not a whole number of micro-batches") != std::string::npos);
  CHECK(w.impl->check(w, 10, 16, 8).find("does not divide 10 GPUs") != std::string::npos);
  CHECK(w.impl->check(w, 16, 8, 8).find("the cluster has 8 GPUs") != std::string::npos);
  CHECK(w.impl->check(w, 8, 8, 1).find("TP=2 does not divide the 1 GPUs of a node") != std::string::npos);
  // Micro-batches of 3: 12 samples at DP 2 are 6 per pipeline (2 micro-batches); at DP 6 (24 GPUs)
  // 2 per pipeline, not a whole number of micro-batches.
  const auto mb = make(R"("batch": 12, "micro_batch": 3, "tp": 2, "pp": 2)", 8);
  CHECK(mb->w().impl->check(mb->w(), 8, 24, 8).empty());
  CHECK(mb->w().impl->check(mb->w(), 24, 24, 8).find("not a whole number of micro-batches of 3") != std::string::npos);
  CHECK_FALSE(w.impl->builds_schedules());
  CHECK(w.impl->has_closed_form());
}

TEST_CASE("transformer: bad keys are refused at their pointer") {
  auto error_of = [](const std::string& keys) {
    try {
      (void)make(keys, 8);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // 4 heads: TP 3 gives no rank whole heads.
  const std::string tp = error_of(R"("batch": 8, "tp": 3, "pp": 1)");
  CHECK(tp.find("/workload/tp") != std::string::npos);
  CHECK(tp.find("TP=3 does not divide the 4 attention heads") != std::string::npos);
  CHECK(tp.find("choose a TP among 1, 2, 4") != std::string::npos);
  const std::string pp = error_of(R"("batch": 8, "tp": 1, "pp": 4)");  // 2 layers over 4 stages
  CHECK(pp.find("/workload/pp") != std::string::npos);
  const std::string zero = error_of(R"("batch": 8, "zero_stage": 4)");
  CHECK(zero.find("/workload/zero_stage") != std::string::npos);
  const std::string rc = error_of(R"("batch": 8, "recompute": "partial")");
  CHECK(rc.find("/workload/recompute") != std::string::npos);
}

TEST_CASE("transformer: the closed-form step is its parts") {
  SUBCASE("TP = 1, PP = 1, DP = 1: the kernels of every layer, m times, and the optimizer") {
    const auto e = make(R"("batch": 4, "tp": 1, "pp": 1)", 1);
    const WorkloadSpec& w = e->w();
    const hw::GpuSpec& gpu = e->sc.cluster.node.gpus.front().gpu;
    const GpuRates rates = rates_of(gpu, "bf16");
    double per_mb = 0;
    for (const auto& l : layer_costs(w.model, 16, false))
      per_mb += kernel_time(w.compute, rates, forward_work(l, 1, 2, w.compute)).si() +
                kernel_time(w.compute, rates, backward_work(l, 1, 2, w.compute, false)).si();
    const TransformerStep s = estimate_transformer(params(1, 1), w, *e->p, *e->costs, 1);
    CHECK(s.dp == 1);
    CHECK(s.micro_batches == 4);
    CHECK(s.stage_tp_s == 0);
    CHECK(s.stage_p2p_s == 0);
    CHECK(s.dp_comm_s == 0);
    CHECK(s.stage_compute_s == doctest::Approx(per_mb).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(s.step_s ==
          doctest::Approx(4 * per_mb + optimizer_time(w, gpu, 117504)).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  SUBCASE("TP 2 x PP 2 x DP 2: (m + p - 1) (compute + TP + 2 sends) + gradient allreduce + optimizer") {
    const auto e = make(R"("batch": 8, "tp": 2, "pp": 2)", 8);
    const WorkloadSpec& w = e->w();
    const TransformerStep s = estimate_transformer(params(2, 2), w, *e->p, *e->costs, 8);
    const coll::Group all = coll::Group::first_gpus(*e->p, 8);
    // Ranks: ((stage x dp + d) x tp + t): TP pairs {0,1}, DP pairs {0,2} (stage 0) and {4,6} (stage 1).
    const coll::Group tp{{all.ranks[0], all.ranks[1]}};
    const double ar = e->costs->time("nccl", tp, 2048);
    // Stage 0: embedding 1 allreduce + block 4 = 5; stage 1: block 4 + head 1 = 5.
    CHECK(s.stage_tp_s == doctest::Approx(5 * ar).epsilon(1e-12).scale(ffsim::testing::kRelative));
    const double send = e->costs->time("sendrecv", coll::Group{{all.ranks[0], all.ranks[4]}}, 2048.0 / 2);
    CHECK(s.stage_p2p_s == doctest::Approx(2 * send).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(s.micro_batches == 4);
    CHECK(s.bubble_fraction == doctest::Approx(0.25));
    const double stage = s.stage_compute_s + s.stage_tp_s + s.stage_p2p_s;
    CHECK(s.pipeline_s == doctest::Approx((4 + 1) * stage).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(s.step_s ==
          doctest::Approx(s.pipeline_s + s.dp_comm_s + s.optimizer_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(s.dp_comm_s > 0);
    // ZeRO-1: the same volume as one allreduce, as a reduce-scatter and an allgather; the optimizer on half.
    const TransformerStep z1 = estimate_transformer(params(2, 2, 1), w, *e->p, *e->costs, 8);
    CHECK(z1.optimizer_s == doctest::Approx(s.optimizer_s / 2).epsilon(1e-12).scale(ffsim::testing::kRelative));
    // ZeRO-3 adds collectives to every micro-batch.
    CHECK(estimate_transformer(params(2, 2, 3), w, *e->p, *e->costs, 8).stage_zero_s > 0);
  }
  SUBCASE("ZeRO-2 and 3: the reduce-scatters and gathers overlap the compute, but the first unit's") {
    // TP 2 x PP 1 x DP 4 on 8 GPUs: one stage of 117504 / 2 = 58752 parameters per rank, its first
    // unit the embedding, 9216 / 2 = 4608. DP group of tensor rank 0: ranks 0, 2, 4, 6. Per
    // micro-batch, with C the compute stream (kernels + TP collectives; no sends at PP 1), f = 1/3,
    // AG and RS the stage's gather (58752 x 2 bytes as the algorithm takes it) and reduce-scatter
    // (58752 x 2 bytes of bf16 gradients), u = 4608 / 58752:
    //   forward = u AG + max(C / 3, (1 - u) AG), backward = max(2C / 3, AG + (1 - u) RS) + u RS;
    //   ZeRO-2: AG = 0. Exposed = forward + backward - C.
    const auto e = make(R"("batch": 8, "tp": 2, "pp": 1)", 8);
    const WorkloadSpec& w = e->w();
    const coll::Group all = coll::Group::first_gpus(*e->p, 8);
    const coll::Group dpg{{all.ranks[0], all.ranks[2], all.ranks[4], all.ranks[6]}};
    const double u = 4608.0 / 58752;
    const double rs = e->costs->time(w.algorithm(Role::GradReduceScatter).algorithm, dpg, 58752.0 * 2);
    const RoleAlgorithm ag = w.algorithm(Role::ParamAllGather);
    const double agt = e->costs->time(ag.algorithm, dpg, 58752.0 * 2 / (ag.per_rank_input ? 4 : 1));
    for (int zero : {2, 3}) {
      CAPTURE(zero);
      const TransformerStep z = estimate_transformer(params(2, 1, zero), w, *e->p, *e->costs, 8);
      const double C = z.stage_compute_s + z.stage_tp_s + z.stage_p2p_s;
      const double AG = zero == 3 ? agt : 0;
      const double fwd = u * AG + std::max(C / 3, (1 - u) * AG);
      const double bwd = std::max(2 * C / 3, AG + (1 - u) * rs) + u * rs;
      CHECK(z.stage_zero_s == doctest::Approx(fwd + bwd - C).epsilon(1e-9).scale(ffsim::testing::kRelative));
      // Exposed at least the first unit's share, at most all of it (the sum of the collectives).
      CHECK(z.stage_zero_s >= u * (AG + rs) * (1 - 1e-12));
      CHECK(z.stage_zero_s <= 2 * AG + rs);
      CHECK(z.pipeline_s == doctest::Approx(2 * (C + z.stage_zero_s)).epsilon(1e-12).scale(ffsim::testing::kRelative));
    }
  }
  SUBCASE("TP = 2 without FlashAttention: a rank's memory-bound work splits the scores by heads") {
    // One stage on 2 GPUs, no sequence parallelism: each rank runs half of every product; of a
    // block's memory-bound elements the materialised scores (2.5 a s^2 of s (9 h + 2 x 4h) + 2.5 a s^2,
    // here 2,560 of 19,968) split by heads, 1 / 2 (Korthikanti et al. 2022 Table 2, 5 a s / (h t)),
    // the rest as Korthikanti's activations split, (10 + 24 / 2) / 34 with 10 of 34 duplicated.
    // Before 2026-12-05 the scores split as the rest (0.647 of them per rank instead of 0.5).
    const auto e = make(R"("batch": 2, "tp": 2, "pp": 1)", 2);
    const WorkloadSpec& w = e->w();
    const GpuRates rates = rates_of(e->sc.cluster.node.gpus.front().gpu, "bf16");
    double per_mb = 0;
    int blocks = 0;
    for (const auto& l : layer_costs(w.model, 16, false)) {
      const double scores = l.memory_elems > 0 ? l.score_elems / l.memory_elems : 0;
      if (scores > 0) {
        ++blocks;
        CHECK(l.score_elems == 2560);
        CHECK(l.memory_elems == 19968);
      }
      const double share = (1 - scores) * (10.0 + 24.0 / 2) / 34 + scores / 2;
      for (Work x : {forward_work(l, 1, 2, w.compute), backward_work(l, 1, 2, w.compute, false)}) {
        x.gemm_flops /= 2;
        x.conv_flops /= 2;
        x.attention_flops /= 2;
        x.memory_bytes *= share;
        per_mb += kernel_time(w.compute, rates, x).si();
      }
    }
    CHECK(blocks == 2);
    const TransformerStep s = estimate_transformer(params(2, 1), w, *e->p, *e->costs, 2);
    CHECK(s.stage_compute_s == doctest::Approx(per_mb).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  SUBCASE("DP = 3 over 6 GPUs of one node") {
    const auto e = make(R"("batch": 6, "tp": 2, "pp": 1)", 6);
    const TransformerStep s = estimate_transformer(params(2, 1), e->w(), *e->p, *e->costs, 6);
    CHECK(s.dp == 3);
    CHECK(s.micro_batches == 2);
    CHECK(s.bubble_fraction == 0);
    CHECK(s.dp_comm_s > 0);
  }
  SUBCASE("memory over the GPU's: a ValueError with the numbers") {
    // GPT 1T at TP 8 x PP 8 on 40 GB A100s: 16 blocks of 7.86e9 + the embedding per stage, 1/8 per GPU,
    // at 16 bytes per parameter: over 250 GB.
    const auto e = make(R"("batch": 8, "tp": 8, "pp": 8, "recompute": "full")", 64, 8, "\"gpt_1t\"");
    try {
      (void)estimate_transformer(params(8, 8, 0, "full"), e->w(), *e->p, *e->costs, 64);
      FAIL("no error");
    } catch (const ValueError& x) {
      const std::string m = x.what();
      CHECK(m.find("exceeds the 40.0 GB of a100_sxm4_40gb") != std::string::npos);
      CHECK(m.find("raise zero_stage") != std::string::npos);
    }
  }
}

TEST_CASE("transformer: on the shaped compute model each tensor rank times its share of the shapes") {
  const std::string shaped = R"("compute_model": "a100_shaped", )";
  // The tiny GPT's block at sequence 16 without FlashAttention (nn_model.cpp): fused QKV (N 3h =
  // 192, K h = 64), attention output (64, 64), MLP up (256, 64) and down (64, 256), per token; the
  // scores q.k (N 16 keys, K 16 = h / heads) and the weighted values (16, 16), batched by the 4 heads.
  // Megatron's split at TP = 2: QKV and up column-parallel (N / 2), output and down row-parallel
  // (K / 2), the attention products 2 heads each.
  const auto e = make(shaped + R"("batch": 4, "tp": 1, "pp": 1)", 1);
  const WorkloadSpec& w = e->w();
  const hw::GpuSpec& gpu = e->sc.cluster.node.gpus.front().gpu;
  const auto layers = layer_costs(w.model, 16, false);
  const LayerCost& block = layers[1];
  REQUIRE(block.name.rfind("block", 0) == 0);
  using Shape = std::tuple<int, double, double, double, double>;  // kind, rows, n, k, batch
  auto shapes = [](const LayerCost& l) {
    std::vector<Shape> v;
    for (const GemmOp& g : l.gemms) v.emplace_back(static_cast<int>(g.kind), g.rows, g.n, g.k, g.batch);
    std::sort(v.begin(), v.end());
    return v;
  };
  const int lin = static_cast<int>(GemmOp::Kind::Linear), att = static_cast<int>(GemmOp::Kind::Attention);
  std::vector<Shape> whole{{lin, 16, 192, 64, 1}, {lin, 16, 64, 64, 1}, {lin, 16, 256, 64, 1},
                           {lin, 16, 64, 256, 1}, {att, 16, 16, 16, 4}, {att, 16, 16, 16, 4}};
  std::vector<Shape> half{{lin, 16, 96, 64, 1},  {lin, 16, 64, 32, 1}, {lin, 16, 128, 64, 1},
                          {lin, 16, 64, 128, 1}, {att, 16, 16, 16, 2}, {att, 16, 16, 16, 2}};
  std::sort(whole.begin(), whole.end());
  std::sort(half.begin(), half.end());
  REQUIRE(shapes(block) == whole);
  CHECK(shapes(tensor_parallel_share(params(1, 1), block, 64)) == whole);
  CHECK(tensor_parallel_share(params(1, 1), block, 64).memory_elems == block.memory_elems);
  const LayerCost b2 = tensor_parallel_share(params(2, 1), block, 64);
  CHECK(shapes(b2) == half);
  // Memory-bound elements: 10 of Korthikanti's 34 s h duplicated, 24 split (22 / 34 at TP = 2);
  // the scores split by heads. With sequence parallelism all of it splits.
  REQUIRE(block.score_elems > 0);
  const double linear = block.memory_elems - block.score_elems;
  CHECK(b2.score_elems == doctest::Approx(block.score_elems / 2));
  CHECK(b2.memory_elems == doctest::Approx(linear * 22 / 34 + block.score_elems / 2));
  CHECK(tensor_parallel_share(params(2, 1, 0, "none", true), block, 64).memory_elems ==
        doctest::Approx(block.memory_elems / 2));

  // TP = 1: the stage's compute is the layer times every other kind uses (train::layer_times).
  const LayerTimes lt = layer_times(w, gpu, layers, 1, false);
  double one = 0;
  for (std::size_t k = 0; k < layers.size(); ++k) one += lt.fwd[k] + lt.bwd[k];
  CHECK(estimate_transformer(params(1, 1), w, *e->p, *e->costs, 1).stage_compute_s ==
        doctest::Approx(one).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // TP = 2 on 2 GPUs: each layer's share, recomputation as rank_work: full reruns the forward,
  // selective the attention core (without FlashAttention).
  const auto e2 = make(shaped + R"("batch": 4, "tp": 2, "pp": 1)", 2);
  for (const char* recompute : {"none", "selective", "full"}) {
    CAPTURE(recompute);
    const TransformerParams p2 = params(2, 1, 0, recompute);
    double two = 0;
    for (const auto& l : layers) {
      const ShapedPassTimes t = shaped_pass_times(e2->w(), gpu, tensor_parallel_share(p2, l, 64), 1);
      two += t.fwd + t.bwd;
      if (std::string(recompute) == "full") two += t.fwd;
      if (std::string(recompute) == "selective") two += t.fwd_attention;
    }
    const double got = estimate_transformer(p2, e2->w(), *e2->p, *e2->costs, 2).stage_compute_s;
    CHECK(got == doctest::Approx(two).epsilon(1e-12).scale(ffsim::testing::kRelative));
    if (std::string(recompute) == "none") {
      // A share is never faster than an even split (waves round up, 10 of 34 memory elements
      // stay whole), and slower products still beat one GPU doing it all.
      CHECK(got >= one / 2);
      CHECK(got < one);
    }
  }
}
