// "transformer": a 3D-parallel training step on the closed form.
// SPDX-License-Identifier: Apache-2.0
#include "train/transformer.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"

namespace ffsim::train {

namespace {

int blocks_of(const WorkloadSpec& w) { return w.model.transformer.layers; }
int micro_batch_of(const WorkloadSpec& w) { return w.micro_batch > 0 ? w.micro_batch : 1; }

// Indices into layer_costs() (embedding, block 0 .. L-1, head) that stage `s` holds.
std::vector<std::size_t> stage_layers(const TransformerParams& p, int blocks, int s) {
  std::vector<std::size_t> out;
  const int chunk = blocks / (p.pp * p.interleave);
  if (s == 0) out.push_back(0);
  for (int k = 0; k < p.interleave; ++k) {
    const int j = s + k * p.pp;
    for (int b = j * chunk; b < (j + 1) * chunk; ++b) out.push_back(static_cast<std::size_t>(b + 1));
  }
  if (s == p.pp - 1) out.push_back(static_cast<std::size_t>(blocks + 1));
  return out;
}

// Element bytes of Korthikanti et al.'s activation counts: their 34 s b h is in bytes of 16-bit
// activations (arXiv 2205.05198 Sec. 4.1), of which 10 s b h are not split by tensor parallelism
// without sequence parallelism (Sec. 4.2.1: the two layernorm inputs 4, the attention and MLP
// dropout inputs 4 and masks 2).
constexpr double kKorthikantiUnsplit = 10.0 / 2.0;  // elements per token per hidden unit at 2 bytes

// Bytes one block stores for backward for one micro-batch of `mb` samples, on one GPU.
double block_activation_bytes(const TransformerParams& p, const WorkloadSpec& w, const LayerCost& block, int mb) {
  const auto& t = w.model.transformer;
  const double s = w.seq, h = t.hidden, act = w.act_bytes(), tp = p.tp;
  // layer_costs' memory_elems: s (9 h + mats x ffn) + 2.5 a s^2 when attention is materialised;
  // for GPT (4h GELU MLP) at 2 bytes that is Korthikanti's 34 s h + 5 a s^2 (Sec. 4.1, eq. 1).
  const double scores = w.flash_attention ? 0.0 : 2.5 * t.heads * s * s;
  const double linear = block.memory_elems - scores;
  if (p.recompute == "full") {
    // Only each block's input is kept (2 s b h bytes at 16 bits, Korthikanti Table 2); with
    // sequence parallelism it is split over the tensor ranks [I].
    return s * h * mb * act / (p.sequence_parallel ? tp : 1.0);
  }
  // Selective recomputation reruns the attention core and keeps none of its scores (Sec. 5);
  // FlashAttention stores none either (Dao et al. 2022).
  const double kept_scores = p.recompute == "selective" ? 0.0 : scores;
  double elems = 0;
  if (p.sequence_parallel || p.tp == 1) {
    elems = (linear + kept_scores) / tp;  // Table 2: s b h (34 + 5 a s / h) / t
  } else {
    const double unsplit = std::min(linear, kKorthikantiUnsplit * s * h);
    elems = unsplit + (linear - unsplit) / tp + kept_scores / tp;  // Table 2: s b h (10 + 24 / t + 5 a s / (h t))
  }
  return elems * mb * act;
}

// The memory-bound share one tensor rank runs (rank_work's, and the shaped model's split).
double memory_share(const TransformerParams& p) {
  return p.sequence_parallel || p.tp == 1 ? 1.0 / p.tp : (10.0 + 24.0 / p.tp) / 34.0;
}

// The forward and backward work of `l` for `mb` samples on one tensor rank: GEMMs and attention
// split over tp; memory-bound work split with sequence parallelism, otherwise the share that
// Korthikanti's activation counts split (10 of 34 duplicated) [I], the attention scores by heads.
std::pair<Work, Work> rank_work(const TransformerParams& p, const WorkloadSpec& w, const LayerCost& l, int mb) {
  const bool full = p.recompute == "full";
  Work f = forward_work(l, mb, w.act_bytes(), w.compute);
  Work b = backward_work(l, mb, w.act_bytes(), w.compute, full);
  // Selective recomputation reruns the attention core's forward in backward; FlashAttention's
  // backward already recomputes it (counted in its backward factor), so nothing is added then.
  if (p.recompute == "selective" && !w.flash_attention) b.attention_flops += f.attention_flops;
  const double tp = p.tp;
  double mem_share = memory_share(p);
  if (l.score_elems > 0 && !p.sequence_parallel && p.tp > 1) {
    // The materialised attention scores (softmax, dropout) split by heads, 1 / tp (Korthikanti
    // Table 2's 5 a s / (h t)), the rest by the share; as tensor_parallel_share splits elements.
    const double scores = l.score_elems / l.memory_elems;
    mem_share = (1 - scores) * mem_share + scores / tp;
  }
  for (Work* x : {&f, &b}) {
    x->gemm_flops /= tp;
    x->conv_flops /= tp;
    x->attention_flops /= tp;
    x->memory_bytes *= mem_share;
  }
  return {f, b};
}

// Seconds alone of `l`'s forward and backward for `mb` samples on one tensor rank, recomputation
// included: the shaped model's shapes when the workload names one, else the per-kind efficiencies.
double rank_seconds(const TransformerParams& p, const WorkloadSpec& w, const hw::GpuSpec& gpu, const GpuRates& rates,
                    const LayerCost& l, int mb) {
  if (!w.compute.shaped) {
    const auto [f, b] = rank_work(p, w, l, mb);
    return kernel_time(w.compute, rates, f).si() + kernel_time(w.compute, rates, b).si();
  }
  const ShapedPassTimes t = shaped_pass_times(w, gpu, tensor_parallel_share(p, l, w.model.transformer.hidden), mb);
  // As rank_work: full recomputation reruns the forward in the backward; selective reruns the
  // attention core, which FlashAttention's backward already does (counted in its products).
  double recompute = 0;
  if (p.recompute == "full") recompute = t.fwd;
  if (p.recompute == "selective" && !w.flash_attention) recompute = t.fwd_attention;
  return t.fwd + t.bwd + recompute;
}

// Megatron's placement: tensor ranks innermost, then data-parallel ranks, then stages
// (Narayanan et al. SC'21 Sec. 3.3: tensor parallelism inside a node).
sched::Place place_of(const coll::Group& all, int tp, int dp, int s, int d, int t) {
  return all.ranks[static_cast<std::size_t>((s * dp + d) * tp + t)];
}

}  // namespace

LayerCost tensor_parallel_share(const TransformerParams& p, const LayerCost& l, int hidden) {
  if (p.tp == 1) return l;
  LayerCost x = l;
  const double tp = p.tp;
  for (GemmOp& g : x.gemms) {
    if (g.kind == GemmOp::Kind::Attention)
      g.batch /= tp;
    else if (g.n == hidden)
      g.k /= tp;
    else
      g.n /= tp;
  }
  x.score_elems = l.score_elems / tp;
  x.memory_elems = (l.memory_elems - l.score_elems) * memory_share(p) + x.score_elems;
  return x;
}

TpTraffic tp_traffic_per_block(const TransformerParams& p, const WorkloadSpec& w, int micro_batch) {
  TpTraffic x;
  x.bytes = static_cast<double>(micro_batch) * w.seq * w.model.transformer.hidden * w.act_bytes();
  if (p.tp == 1) return x;
  // Megatron-LM (Shoeybi et al. 2019 Sec. 3, Fig. 4; Narayanan et al. SC'21 Sec. 2.3): two
  // allreduces in the forward (after the attention's and the MLP's row-parallel layers) and two
  // in the backward (the f operators); a full recomputation reruns the forward's two.
  const int passes = p.recompute == "full" ? 3 : 2;
  if (p.sequence_parallel) {
    // Korthikanti et al. 2022 Sec. 4.2.2: each allreduce becomes an allgather (g) and a
    // reduce-scatter (g-bar), in the forward and in the backward.
    x.allgathers = 2 * passes;
    x.reduce_scatters = 2 * passes;
  } else {
    x.allreduces = 2 * passes;
  }
  return x;
}

double bubble_fraction(int pp, int micro_batches, int interleave) {
  if (pp <= 1 || micro_batches <= 0) return 0;
  return static_cast<double>(pp - 1) / (static_cast<double>(micro_batches) * interleave);
}

double stage_params(const TransformerParams& p, const WorkloadSpec& w, int stage) {
  const auto layers = layer_costs(w.model, w.seq, w.flash_attention);
  double params = 0;
  for (std::size_t k : stage_layers(p, blocks_of(w), stage)) params += layers[k].params;
  // Tied embeddings: the last stage keeps its own copy of the word embedding for the output layer
  // (Megatron-LM's initialize_word_embeddings; its gradients are allreduced with stage 0's).
  const auto& t = w.model.transformer;
  if (t.tied_embeddings && p.pp > 1 && stage == p.pp - 1) params += static_cast<double>(t.vocab) * t.hidden;
  return params;
}

TransformerMemory transformer_memory(const TransformerParams& p, const WorkloadSpec& w, int dp, int m) {
  const auto layers = layer_costs(w.model, w.seq, w.flash_attention);
  const int mb = micro_batch_of(w);
  // Bytes held per parameter (Rajbhandari et al., ZeRO, SC'20 Sec. 3.1 and Fig. 1: 2 + 2 + K
  // with K = 12 for mixed-precision Adam): 16-bit weights (fp32 without mixed precision),
  // gradients at grad_dtype, fp32 master weights (mixed precision only) and moments (Adam 2, SGD 1).
  const bool mixed = element_bytes(w.precision) < 4;
  const double wb = mixed ? w.act_bytes() : 4.0, gb = w.grad_bytes;
  const double ob = (w.optimizer == "sgd" ? 4.0 : 8.0) + (mixed ? 4.0 : 0.0);
  TransformerMemory best;
  for (int s = 0; s < p.pp; ++s) {
    TransformerMemory x;
    x.stage = s;
    x.params = stage_params(p, w, s) / p.tp;
    x.weights = x.params * wb / (p.zero_stage >= 3 ? dp : 1);
    x.grads = x.params * gb / (p.zero_stage >= 2 ? dp : 1);
    x.optimizer = x.params * ob / (p.zero_stage >= 1 ? dp : 1);
    // ZeRO-3 gathers the weights of one unit at a time and frees them after its use: a transformer
    // block, or the embedding or the head ([I] PyTorch FSDP's per-block wrapping as people run it,
    // e.g. llm-foundry's FULL_SHARD; DeepSpeed's ZeRO-3 gathers per module too), with the next unit
    // gathered beside it (FSDP's default prefetch of one unit). So the working set is the two
    // largest units of a chunk, at most the chunk's whole weights. (Until 2026-12-07 it was the
    // chunk's whole weights: without pipeline stages, the whole model, so that ZeRO-3 saved no
    // weight memory and refused FSDP runs that fit, e.g. a 13B model on 8 A100 80 GB.)
    if (p.zero_stage >= 3) {
      double first = 0, second = 0;
      for (std::size_t k : stage_layers(p, blocks_of(w), s)) {
        const double u = layers[k].params / p.tp;
        if (u > first) {
          second = first;
          first = u;
        } else if (u > second) {
          second = u;
        }
      }
      x.weights += std::min(x.params / p.interleave, first + second) * wb;
    }
    // 1F1B: stage s holds the activations of min(p - s, m) micro-batches; the interleaved schedule
    // holds (1 + (p - 1) / (p v)) times as many (Korthikanti et al. 2022 Sec. 4.2.3, after
    // Narayanan et al. SC'21 Sec. 2.2.2).
    x.in_flight = std::min(p.pp - s, m);
    const double factor = p.interleave > 1 ? 1.0 + static_cast<double>(p.pp - 1) / (p.pp * p.interleave) : 1.0;
    double per_mb = 0, largest_block = 0;
    for (std::size_t k : stage_layers(p, blocks_of(w), s)) {
      const LayerCost& l = layers[k];
      if (l.name.rfind("block", 0) == 0) {
        per_mb += block_activation_bytes(p, w, l, mb);
        largest_block = std::max(largest_block, l.memory_elems * mb * w.act_bytes() / p.tp);
      }
    }
    x.activations = per_mb * x.in_flight * factor;
    // Full recomputation rebuilds one block's activations at a time during backward.
    if (p.recompute == "full") x.activations += largest_block;
    // The head's logits and their softmax for one micro-batch (vocabulary-parallel, split by tp).
    if (s == p.pp - 1) x.activations += layers.back().memory_elems * mb * w.act_bytes() / p.tp;
    if (x.total() > best.total()) best = x;
  }
  return best;
}

TransformerStep estimate_transformer(const TransformerParams& p, const WorkloadSpec& w, const platform::Platform& P,
                                     CollectiveCosts& costs, int gpus) {
  const hw::GpuSpec& gpu = P.cluster().node.gpus.front().gpu;
  const GpuRates rates = rates_of(gpu, w.precision);
  const int tp = p.tp, pp = p.pp, v = p.interleave, dp = gpus / (tp * pp);
  const int mb = micro_batch_of(w), m = samples_per_rank(w, dp) / mb;
  const auto layers = layer_costs(w.model, w.seq, w.flash_attention);
  const coll::Group all = w.group(P, gpus);
  TransformerStep r;
  r.dp = dp;
  r.micro_batches = m;
  r.bubble_fraction = bubble_fraction(pp, m, v);

  // Tensor-parallel collectives: one group inside a node (every stage's group looks the same).
  const TpTraffic tpx = tp_traffic_per_block(p, w, mb);
  coll::Group tpg;
  for (int t = 0; t < tp; ++t) tpg.ranks.push_back(place_of(all, tp, dp, 0, 0, t));
  const std::string tp_ar = w.algorithm(Role::TensorAllReduce).algorithm;
  const double t_ar = costs.time(tp_ar, tpg, tpx.bytes);
  // Sequence parallelism: NCCL's reduce-scatter (S in) and allgather (S / tp in per rank).
  const double t_rs = costs.time("reduce_scatter", tpg, tpx.bytes);
  const double t_ag = costs.time("allgather", tpg, tpx.bytes / tp);
  const double t_block_tp = tpx.allreduces * t_ar + tpx.reduce_scatters * t_rs + tpx.allgathers * t_ag;
  // The vocabulary-parallel embedding's output allreduce (forward; its backward is the identity)
  // and the output layer's input-gradient allreduce (backward); with sequence parallelism the
  // embedding reduce-scatters (forward) and allgathers (backward), the head the reverse.
  const double t_edge_tp = tp == 1 ? 0.0 : (p.sequence_parallel ? t_rs + t_ag : t_ar);

  // Activations to the next stage and gradients back: 1 / tp of b s h per tensor rank (Narayanan
  // et al. SC'21 Sec. 4.1, scatter/gather: each tensor rank sends its share over its own NIC).
  double t_p2p = 0;
  if (pp > 1) {
    const coll::Group pair{{place_of(all, tp, dp, 0, 0, 0), place_of(all, tp, dp, 1, 0, 0)}};
    t_p2p = costs.time("sendrecv", pair, tpx.bytes / tp);
  }

  // ZeRO over each stage's data-parallel group (tensor rank 0; the others are translated copies).
  const RoleAlgorithm ar = w.algorithm(Role::GradAllReduce), rsc = w.algorithm(Role::GradReduceScatter);
  const RoleAlgorithm ag = w.algorithm(Role::ParamAllGather);
  auto gather_bytes = [&](double params) { return params * w.param_bytes / (ag.per_rank_input ? dp : 1); };

  double worst = -1;
  for (int s = 0; s < pp; ++s) {
    double comp = 0, tpc = 0;
    for (std::size_t k : stage_layers(p, blocks_of(w), s)) {
      comp += rank_seconds(p, w, gpu, rates, layers[k], mb);
      tpc += layers[k].name.rfind("block", 0) == 0 ? t_block_tp : t_edge_tp;
    }
    const double params = stage_params(p, w, s) / tp;
    coll::Group dpg;
    for (int d = 0; d < dp; ++d) dpg.ranks.push_back(place_of(all, tp, dp, s, d, 0));
    const double grads = params * w.grad_bytes;
    // Per micro-batch: ZeRO-2 reduce-scatters each micro-batch's gradients (no full gradient buffer
    // to accumulate in); ZeRO-3 also gathers the weights for its forward and its backward
    // (Rajbhandari et al. SC'20 Sec. 7.2.2). Both run unit by unit (a block, the embedding, the
    // head) on a communication stream beside the compute, as PyTorch FSDP and DeepSpeed run them
    // ([S] Zhao et al., PyTorch FSDP, VLDB 2023: forward and backward prefetch; [I] one unit ahead):
    // a unit's gather overlaps the unit before's compute, a unit's reduce-scatter the unit after's
    // backward. What cannot overlap: the first unit's gather before the forward starts, and the
    // first unit's reduce-scatter after the backward ends (it is the last one computed). So
    //   forward  = g1 + max(f C, AG - g1),  backward = max((1 - f) C, AG + RS - r1) + r1,
    // C the stage's compute stream per micro-batch, f its forward share ([I] 1/3: a backward does
    // twice a forward's products; 1/4 with full recomputation, which reruns the forward), AG and RS
    // the stage's gather and reduce-scatter, g1 and r1 the first unit's share of them. (Until
    // 2026-12-07 none of it overlapped: AG twice and RS added to every micro-batch, an upper bound.)
    // Not modelled: the SMs NCCL's kernels take from the compute while they overlap.
    double rs_t = 0, ag_t = 0;
    if (p.zero_stage >= 2 && dp > 1) rs_t = costs.time(rsc.algorithm, dpg, grads);
    if (p.zero_stage >= 3 && dp > 1) ag_t = costs.time(ag.algorithm, dpg, gather_bytes(params));
    const double C = comp + tpc + 2.0 * v * t_p2p;
    double zero = 0;
    if (rs_t > 0 || ag_t > 0) {
      double first_unit = 0;  // the stage's first layer with parameters, per tensor rank
      for (std::size_t k : stage_layers(p, blocks_of(w), s))
        if (layers[k].params > 0) {
          first_unit = layers[k].params / tp;
          break;
        }
      const double share = params > 0 ? std::min(1.0, first_unit / params) : 0;
      const double f = p.recompute == "full" ? 0.25 : 1.0 / 3;
      const double g1 = ag_t * share, r1 = rs_t * share;
      const double fwd = g1 + std::max(f * C, ag_t - g1);
      const double bwd = std::max((1 - f) * C, ag_t + rs_t - r1) + r1;
      zero = fwd + bwd - C;
    }
    const double stage = C + zero;
    // After the flush (Megatron-LM reduces gradients once the pipeline drains, Narayanan et al.
    // SC'21 Sec. 2.2.1): ZeRO-0 allreduces; ZeRO-1 reduce-scatters and gathers the updated weights
    // (the same volume, Rajbhandari et al. Sec. 7.2.1); ZeRO-2 only gathers; ZeRO-3 neither.
    double dpc = 0;
    if (dp > 1) {
      if (p.zero_stage == 0) dpc = costs.time(ar.algorithm, dpg, grads);
      if (p.zero_stage == 1) dpc = costs.time(rsc.algorithm, dpg, grads);
      if (p.zero_stage == 1 || p.zero_stage == 2) dpc += costs.time(ag.algorithm, dpg, gather_bytes(params));
    }
    const double opt = optimizer_time(w, gpu, params / (p.zero_stage >= 1 ? dp : 1));
    const double pipeline = (m + static_cast<double>(pp - 1) / v) * stage;
    const double step = pipeline + dpc + opt;
    if (step > worst) {
      worst = step;
      r.stage_compute_s = comp;
      r.stage_tp_s = tpc;
      r.stage_p2p_s = 2.0 * v * t_p2p;
      r.stage_zero_s = zero;
      r.pipeline_s = pipeline;
      r.dp_comm_s = dpc;
      r.optimizer_s = opt;
      r.step_s = step;
    }
  }
  r.memory = transformer_memory(p, w, dp, m);
  r.memory_limit = gpu.memory.si();
  if (r.memory.total() > r.memory_limit) {
    const auto gb = [](double b) { return fmt_bytes_si(Bytes(b)); };
    throw ValueError("the per-GPU memory estimate " + gb(r.memory.total()) + " exceeds the " + gb(r.memory_limit) +
                     " of " + gpu.name + " (stage " + std::to_string(r.memory.stage) + ", " +
                     fmt_g(r.memory.params / 1e9, 4) + "B parameters per GPU: weights " + gb(r.memory.weights) +
                     ", gradients " + gb(r.memory.grads) + ", optimizer state " + gb(r.memory.optimizer) +
                     ", activations " + gb(r.memory.activations) + " of " + std::to_string(r.memory.in_flight) +
                     " micro-batches in flight); raise zero_stage, tp or pp, set "
                     "recompute to \"selective\" or \"full\", or lower micro_batch");
  }
  return r;
}

namespace {

class Transformer final : public Workload {
public:
  explicit Transformer(TransformerParams p) : p_(std::move(p)) {}

  std::string summary() const override {
    return "3D-parallel transformer: TP=" + std::to_string(p_.tp) +
           (p_.sequence_parallel ? " (sequence parallel)" : "") + ", PP=" + std::to_string(p_.pp) + " (1F1B" +
           (p_.interleave > 1 ? ", interleaved, " + std::to_string(p_.interleave) + " chunks per stage"
                              : std::string()) +
           "), ZeRO-" + std::to_string(p_.zero_stage) + ", recompute " + p_.recompute + "; closed form";
  }

  std::string check(const WorkloadSpec& w, int gpus, int cluster_gpus, int per_node) const override {
    if (w.model.architecture != "transformer") return "the transformer workload needs a transformer model";
    if (gpus > cluster_gpus)
      return "the cluster has " + std::to_string(cluster_gpus) + " GPUs; cannot run " + std::to_string(gpus);
    if (p_.tp > per_node || per_node % p_.tp != 0)
      return "TP=" + std::to_string(p_.tp) + " does not divide the " + std::to_string(per_node) +
             " GPUs of a node (tensor parallelism stays inside a node)";
    if (gpus % (p_.tp * p_.pp) != 0)
      return "TP=" + std::to_string(p_.tp) + " x PP=" + std::to_string(p_.pp) + " does not divide " +
             std::to_string(gpus) + " GPUs";
    const int dp = gpus / (p_.tp * p_.pp), mb = micro_batch_of(w), spr = samples_per_rank(w, dp);
    if (spr == 0 || spr % mb != 0)
      return "a batch of " + std::to_string(w.batch) +
             (w.scaling == "strong" ? " samples per step" : " samples per rank") +
             " is not a whole number of micro-batches of " + std::to_string(mb) + " on each of " + std::to_string(dp) +
             " data-parallel ranks";
    const int m = spr / mb;
    if (p_.interleave > 1 && m % p_.pp != 0)
      return "the interleaved schedule needs the micro-batches (" + std::to_string(m) +
             ") to be a multiple of PP=" + std::to_string(p_.pp) + " (Megatron-LM's requirement)";
    return "";
  }

  StepPlan build(StepBuilder&, const WorkloadSpec&, int, bool) const override {
    throw ValueError("the transformer workload evaluates on the closed form only: run it with --engine closed-form");
  }

  bool has_closed_form() const override { return true; }
  bool builds_schedules() const override { return false; }

  ClosedFormStep estimate(const WorkloadSpec& w, const platform::Platform& P, CollectiveCosts& costs,
                          int gpus) const override {
    const TransformerStep t = estimate_transformer(p_, w, P, costs, gpus);
    ClosedFormStep c;
    c.step_s = t.step_s;
    c.compute_s = t.micro_batches * t.stage_compute_s + t.optimizer_s;
    c.bubble_s = static_cast<double>(p_.pp - 1) / p_.interleave * t.stage_compute_s;
    c.exposed_comm_s = std::max(0.0, t.step_s - c.compute_s - c.bubble_s);
    c.plan.data_parallel = t.dp;
    c.plan.samples = static_cast<double>(samples_per_rank(w, t.dp)) * t.dp;
    c.plan.model_flops = model_flops_per_sample(w, layer_costs(w.model, w.seq, w.flash_attention)) * c.plan.samples;
    c.plan.memory_bytes = t.memory.total();
    c.plan.layout = "TP=" + std::to_string(p_.tp) + " x PP=" + std::to_string(p_.pp) + " x DP=" + std::to_string(t.dp) +
                    ", " + std::to_string(t.micro_batches) + " micro-batches of " + std::to_string(micro_batch_of(w)) +
                    ", bubble " + fmt_f(100 * t.bubble_fraction, 1) + "%";
    return c;
  }

private:
  TransformerParams p_;
};

}  // namespace

std::unique_ptr<Workload> make_transformer(const TransformerParams& p) { return std::make_unique<Transformer>(p); }

}  // namespace ffsim::train
