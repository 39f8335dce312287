// "pipeline": pipeline parallelism with micro-batches (1F1B or GPipe), activations and their
// gradients sent between stages as real transfers (over the NIC when stages sit on different
// nodes), tensor parallelism inside a stage, and the data-parallel gradient reduction at the end.
// SPDX-License-Identifier: Apache-2.0
#include "train/pipeline.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/format.hpp"
#include "train/ddp.hpp"

namespace ffsim::train {

using sched::Place;

std::vector<std::pair<std::size_t, std::size_t>> partition_stages(const std::vector<LayerCost>& layers,
                                                                  const std::vector<double>& cost, int pp,
                                                                  const std::string& how) {
  const std::size_t L = layers.size(), P = static_cast<std::size_t>(pp);
  FFSIM_ASSERT(P >= 1 && L >= P, "fewer layers than pipeline stages");
  std::vector<std::pair<std::size_t, std::size_t>> out;
  if (how == "uniform") {
    // Transformers: blocks evenly (Megatron), the embedding before the first, the head after the last.
    const bool transformer = layers.front().name == "embedding" && layers.back().name == "head";
    const std::size_t first = transformer ? 1 : 0, last = transformer ? L - 1 : L;
    const std::size_t n = last - first;
    FFSIM_ASSERT(n >= P, "fewer blocks than pipeline stages");
    std::size_t at = first;
    for (std::size_t s = 0; s < P; ++s) {
      const std::size_t take = n / P + (s < n % P ? 1 : 0);
      out.emplace_back(s == 0 ? 0 : at, s + 1 == P ? L : at + take);
      at += take;
    }
    return out;
  }
  // Linear partition: best[k][j] = the least slowest stage when layers [0, j) form k stages.
  std::vector<double> prefix(L + 1, 0);
  for (std::size_t i = 0; i < L; ++i) prefix[i + 1] = prefix[i] + cost[i];
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(P + 1, std::vector<double>(L + 1, inf));
  std::vector<std::vector<std::size_t>> cut(P + 1, std::vector<std::size_t>(L + 1, 0));
  best[0][0] = 0;
  for (std::size_t k = 1; k <= P; ++k)
    for (std::size_t j = k; j <= L; ++j)
      for (std::size_t i = k - 1; i < j; ++i) {
        const double v = std::max(best[k - 1][i], prefix[j] - prefix[i]);
        if (v < best[k][j] * (1 - 1e-12)) {
          best[k][j] = v;
          cut[k][j] = i;
        }
      }
  std::size_t j = L;
  for (std::size_t k = P; k >= 1; --k) {
    out.emplace_back(cut[k][j], j);
    j = cut[k][j];
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::pair<bool, int>> stage_order(const std::string& schedule, int stage, int stages, int m) {
  std::vector<std::pair<bool, int>> seq;
  if (schedule == "gpipe") {
    for (int i = 0; i < m; ++i) seq.emplace_back(true, i);
    for (int i = 0; i < m; ++i) seq.emplace_back(false, i);
    return seq;
  }
  // 1F1B (PipeDream-flush, Narayanan et al. 2021, arXiv 2104.04473 Sec. 2.2): stage s runs
  // p - s - 1 warm-up forwards, then alternates one forward and one backward, then drains.
  const int warm = std::min(stages - stage - 1, m);
  for (int i = 0; i < warm; ++i) seq.emplace_back(true, i);
  for (int i = 0; i < m - warm; ++i) {
    seq.emplace_back(true, warm + i);
    seq.emplace_back(false, i);
  }
  for (int i = m - warm; i < m; ++i) seq.emplace_back(false, i);
  return seq;
}

namespace {

// Disjoint sets over data-parallel ranks (the smallest rank represents its set).
struct Sets {
  std::vector<int> parent;
  explicit Sets(int n) : parent(static_cast<std::size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int& up(int x) { return parent[static_cast<std::size_t>(x)]; }
  int find(int x) {
    while (up(x) != x) x = up(x) = up(up(x));  // path halving
    return x;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) up(std::max(a, b)) = std::min(a, b);
  }
};

// Seconds that `bytes` from each pair's first place to its second take when they all start at once
// and nothing else runs (latencies left out): the most loaded resource's bytes over its capacity in
// one direction, or a flow's own rate cap. That is the max-min time exactly: every flow runs at
// least at min(its cap, min over its resources of capacity / flows crossing it) throughout (fewer
// cross as flows end), and the most loaded resource cannot carry its bytes sooner. One pair: the
// bytes over the path's slowest rate. One flow crosses one direction: a bidirectional cap does not hold.
double burst_seconds(const platform::Platform& p, const std::vector<std::pair<Place, Place>>& pairs, double bytes) {
  std::map<std::uint32_t, int> crossing;
  double t = 0;
  for (const auto& [a, b] : pairs) {
    const auto& path = p.path(p.path_id(a, b));
    t = std::max(t, bytes / path.rate_cap);
    for (std::uint32_t res : path.resources) ++crossing[res];
  }
  for (const auto& [res, n] : crossing) t = std::max(t, n * bytes / p.resource(res).capacity_when(false, false));
  return t;
}

// One piece of a stage's forward or backward pass: kernels, then the blocking collectives they need.
struct Segment {
  std::string name;
  double time = 0;          // seconds alone per GPU
  int tp_allreduces = 0;    // tensor-parallel allreduces of activations
  double tp_bytes = 0;
  int alltoalls = 0;        // MoE dispatch + combine
  double a2a_bytes = 0;
  std::size_t layer = 0;    // the layer it ends with (for gradient buckets)
};

class Pipeline final : public Workload {
public:
  Pipeline(PipelineParams p, bool moe) : p_(std::move(p)), moe_(moe) {}

  std::string summary() const override {
    std::string s = std::string(moe_ ? "MoE on pipeline" : "pipeline") + ": PP=" + std::to_string(p_.pp) + " (" +
                    (p_.schedule == "1f1b" ? "1F1B" : "GPipe") + "), TP=" + std::to_string(p_.tp);
    if (moe_) s += ", EP=" + std::to_string(p_.ep);
    s += ", layout " + p_.layout + (p_.stagger == "none" ? "" : ", staggered") + ", ZeRO-" + std::to_string(p_.zero_stage);
    if (p_.recompute) s += ", recomputation";
    return s;
  }

  std::string check(const WorkloadSpec& w, int gpus, int cluster_gpus, int per_node) const override {
    if (gpus > cluster_gpus)
      return "the cluster has " + std::to_string(cluster_gpus) + " GPUs; cannot run " + std::to_string(gpus);
    if (p_.tp > per_node || per_node % p_.tp != 0)
      return "TP=" + std::to_string(p_.tp) + " does not divide the " + std::to_string(per_node) + " GPUs of a node";
    if (gpus % (p_.tp * p_.pp) != 0)
      return "PP=" + std::to_string(p_.pp) + " x TP=" + std::to_string(p_.tp) + " does not divide " + std::to_string(gpus) +
             " GPUs";
    const int dp = gpus / (p_.tp * p_.pp);
    if (dp % p_.ep != 0) return "EP=" + std::to_string(p_.ep) + " does not divide the " + std::to_string(dp) + " data-parallel ranks";
    if (p_.ep > 1 && p_.tp > 1) return "expert parallelism together with tensor parallelism is not modelled (set tp or ep to 1)";
    const int mb = w.micro_batch > 0 ? w.micro_batch : 1;
    const int spr = samples_per_rank(w, dp);
    if (spr == 0 || spr % mb != 0)
      return "a batch of " + std::to_string(w.batch) + (w.scaling == "strong" ? " samples per step" : " samples per rank") +
             " is not a whole number of micro-batches of " + std::to_string(mb) + " on each of " + std::to_string(dp) +
             " data-parallel ranks";
    const std::size_t layers = layer_costs(w.model, w.seq, w.flash_attention).size();
    if (layers < static_cast<std::size_t>(p_.pp))
      return std::to_string(layers) + " layers cannot fill " + std::to_string(p_.pp) + " pipeline stages";
    return "";
  }

  StepPlan build(StepBuilder& b, const WorkloadSpec& w, int gpus, bool full) const override;

private:
  PipelineParams p_;
  bool moe_;
};

StepPlan Pipeline::build(StepBuilder& b, const WorkloadSpec& w, int gpus, bool full) const {
  const platform::Platform& P = b.platform();
  const hw::GpuSpec& gpu = P.cluster().node.gpus.front().gpu;
  const int tp = p_.tp, pp = p_.pp, ep = p_.ep, dp = gpus / (tp * pp);
  const int mb = w.micro_batch > 0 ? w.micro_batch : 1;
  const int spr = samples_per_rank(w, dp), m = spr / mb;
  const double act = w.act_bytes();
  const auto layers = layer_costs(w.model, w.seq, w.flash_attention);
  const LayerTimes lt = layer_times(w, gpu, layers, mb, p_.recompute);
  // Tensor parallelism splits every kernel over the tp GPUs of a stage ([I] with sequence
  // parallelism, memory-bound work splits too: Korthikanti et al. 2022, arXiv 2205.05198).
  std::vector<double> cost(layers.size());
  for (std::size_t k = 0; k < layers.size(); ++k) cost[k] = (lt.fwd[k] + lt.bwd[k]) / tp;
  const auto ranges = partition_stages(layers, cost, pp, p_.partition);
  const bool a2a_on = moe_ && ep > 1;
  // Megatron's tensor parallelism: two allreduces of the activations per transformer block in
  // forward and two in backward, one for the (vocabulary-parallel) embedding.
  auto tp_count = [&](const LayerCost& l) { return tp == 1 || l.output_elems <= 0 ? 0 : (l.name.rfind("block", 0) == 0 ? 2 : 1); };
  auto segment = [&](std::size_t k, bool fwd) {
    const LayerCost& l = layers[k];
    Segment g;
    g.name = l.name;
    g.time = (fwd ? lt.fwd[k] : lt.bwd[k]) / tp;
    g.tp_allreduces = tp_count(l);
    g.tp_bytes = l.output_elems * mb * act;
    if (a2a_on && l.moe) {
      g.alltoalls = 2;  // dispatch and combine (forward); their gradients (backward)
      g.a2a_bytes = alltoall_bytes(l, mb, act);
    }
    g.layer = k;
    return g;
  };
  // A whole stage pass as one segment: the same collectives, run back to back after the kernels.
  auto whole = [&](int s, bool fwd) {
    Segment g;
    g.name = fwd ? "fwd" : "bwd";
    const auto [lo, hi] = ranges[static_cast<std::size_t>(s)];
    for (std::size_t k = lo; k < hi; ++k) {
      const Segment x = segment(k, fwd);
      g.time += x.time;
      g.tp_allreduces += x.tp_allreduces;
      if (x.tp_allreduces > 0) g.tp_bytes = x.tp_bytes;
      g.alltoalls += x.alltoalls;
      if (x.alltoalls > 0) g.a2a_bytes = x.a2a_bytes;
    }
    g.layer = lo;
    return g;
  };

  // Where each (stage, data-parallel rank, tensor rank) runs.
  const coll::Group all = w.group(P, gpus);
  auto index = [&](int s, int d, int t) {
    return p_.layout == "dp_inner" ? (s * dp + d) * tp + t : (d * pp + s) * tp + t;
  };
  auto place = [&](int s, int d, int t) { return all.ranks[static_cast<std::size_t>(index(s, d, t))]; };
  // Data-parallel ranks that share a node (their transfers contend for its NIC and PCIe) or an
  // expert-parallel group (their all-to-alls synchronise them) must be simulated together; every
  // such set is a translated copy of the first one on other nodes, so that set stands for all.
  Sets sets(dp);
  {
    std::map<int, int> first_on_node;
    for (int d = 0; d < dp; ++d)
      for (int s = 0; s < pp; ++s)
        for (int t = 0; t < tp; ++t) {
          const auto [it, added] = first_on_node.try_emplace(place(s, d, t).node, d);
          if (!added) sets.unite(d, it->second);
        }
    for (int d = 0; d < dp; ++d) sets.unite(d, d - d % ep);
  }
  std::vector<int> sim;
  for (int d = 0; d < dp; ++d)
    if (full || sets.find(d) == sets.find(0)) sim.push_back(d);
  const std::size_t D = sim.size();
  StepPlan plan;
  plan.data_parallel = dp;
  for (int d : sim)
    for (int s = 0; s < pp; ++s)
      for (int t = 0; t < tp; ++t) plan.simulated.push_back(place(s, d, t));

  // Activation bytes crossing each stage boundary per micro-batch (each tensor rank sends its share).
  std::vector<double> boundary(static_cast<std::size_t>(pp), 0);
  for (int s = 0; s + 1 < pp; ++s)
    boundary[static_cast<std::size_t>(s)] = layers[ranges[static_cast<std::size_t>(s)].second - 1].output_elems * mb * act / tp;
  // Stagger: the pipelines whose first stage shares a node start one activation burst apart: the
  // time their tp shares across the first boundary take together, alone (with one NIC per node,
  // tp shares through it; with a NIC per GPU, one share's time).
  std::vector<double> offset(D, 0);
  if (p_.stagger == "transfer" && pp > 1) {
    auto burst = [&](int d) {
      std::vector<std::pair<Place, Place>> shares;
      for (int t = 0; t < tp; ++t) shares.emplace_back(place(0, d, t), place(1, d, t));
      return burst_seconds(P, shares, boundary[0]);
    };
    std::map<int, int> seen;
    for (std::size_t i = 0; i < D; ++i) {
      const int j = seen[place(0, sim[i], 0).node]++;
      offset[i] = j * burst(sim[i]);
      plan.stagger.pipelines = std::max(plan.stagger.pipelines, j + 1);
    }
    // The edge past which their transfers collide (docs/commands/train.md): a middle stage's
    // forward against that many lone bursts. Stated without tensor parallelism only: the edge is
    // about each node's sending side, and with tp = 2 (GPT-2 medium, PP=4, fire_flyer_pcie nodes,
    // GEMM efficiency 0.25: middle forwards of 1.90 ms against 4 bursts of 0.217 ms) an activation from the stage
    // before and a gradient from the stage after still reached a middle stage's node together (its NIC's receive side),
    // 1,316 of 3,072 transfers taking longer than a lone burst.
    if (pp > 2 && tp == 1 && plan.stagger.pipelines > 1) {
      plan.stagger.transfer_s = burst(sim[0]);
      plan.stagger.shortest_forward_s = std::numeric_limits<double>::infinity();
      for (int s = 1; s + 1 < pp; ++s)
        plan.stagger.shortest_forward_s = std::min(plan.stagger.shortest_forward_s, whole(s, true).time);
    } else {
      plan.stagger = StaggerEdge{};
    }
  }

  const RoleAlgorithm tp_alg = w.algorithm(Role::TensorAllReduce);
  const RoleAlgorithm a2a_alg = w.algorithm(Role::ExpertAllToAll);
  // Per stage: the first compute op of each pass (by rank, tensor rank, micro-batch) and the op
  // that ends it (by rank, micro-batch); the ends of the last backward's layers.
  const std::size_t M = static_cast<std::size_t>(m), T = static_cast<std::size_t>(tp);
  auto at3 = [&](std::size_t i, std::size_t t, int mbi) { return (i * T + t) * M + static_cast<std::size_t>(mbi); };
  std::vector<std::vector<OpId>> fbeg(static_cast<std::size_t>(pp)), bbeg(static_cast<std::size_t>(pp));
  std::vector<std::vector<OpId>> fend(static_cast<std::size_t>(pp)), bend(static_cast<std::size_t>(pp));
  std::vector<std::vector<std::map<std::size_t, OpId>>> layer_end(static_cast<std::size_t>(pp),
                                                                  std::vector<std::map<std::size_t, OpId>>(D));
  std::vector<std::vector<OpId>> last(static_cast<std::size_t>(pp), std::vector<OpId>(D, kNone));
  for (int s = 0; s < pp; ++s) {
    const auto us = static_cast<std::size_t>(s);
    fbeg[us].assign(D * T * M, kNone);
    bbeg[us].assign(D * T * M, kNone);
    fend[us].assign(D * M, kNone);
    bend[us].assign(D * M, kNone);
    std::vector<OpId> prev(D, kNone);
    if (s == 0)
      for (std::size_t i = 0; i < D; ++i)
        if (offset[i] > 0) prev[i] = b.delay(Seconds(offset[i]), "stagger");
    const auto [lo, hi] = ranges[us];
    for (const auto& [fwd, i] : stage_order(p_.schedule, s, pp, m)) {
      const bool split = !fwd && i == m - 1 && p_.overlap_grad_reduce;
      std::vector<Segment> segs;
      if (split)
        for (std::size_t k = hi; k-- > lo;) segs.push_back(segment(k, false));
      else
        segs.push_back(whole(s, fwd));
      const std::string tagname = (fwd ? "fwd mb " : "bwd mb ") + std::to_string(i);
      for (std::size_t g = 0; g < segs.size(); ++g) {
        const Segment& seg = segs[g];
        const std::string name = split ? "bwd " + seg.name + " (mb " + std::to_string(i) + ")" : tagname;
        for (std::size_t di = 0; di < D; ++di) {
          std::vector<OpId> ops;
          for (int t = 0; t < tp; ++t) {
            const OpId op = b.compute(place(s, sim[di], t), Seconds(seg.time), name, {prev[di]});
            if (g == 0) (fwd ? fbeg : bbeg)[us][at3(di, static_cast<std::size_t>(t), i)] = op;
            ops.push_back(op);
          }
          if (seg.tp_allreduces > 0) {
            CollectiveCall c{tp_alg, coll::Group{}, seg.tp_bytes, {}, seg.tp_allreduces};
            for (int t = 0; t < tp; ++t) c.group.ranks.push_back(place(s, sim[di], t));
            c.shown = c.group.ranks;
            prev[di] = b.collective(c, "tensor allreduce x" + std::to_string(seg.tp_allreduces), ops);
          } else {
            prev[di] = ops.front();
          }
        }
        if (seg.alltoalls > 0) {
          // One all-to-all group per expert-parallel block of simulated ranks.
          for (std::size_t di = 0; di < D; di += static_cast<std::size_t>(ep)) {
            CollectiveCall c{a2a_alg, coll::Group{}, seg.a2a_bytes, {}, seg.alltoalls};
            std::vector<OpId> after;
            for (std::size_t k = di; k < di + static_cast<std::size_t>(ep); ++k) {
              c.group.ranks.push_back(place(s, sim[k], 0));
              after.push_back(prev[k]);
            }
            c.shown = c.group.ranks;
            const OpId op = b.collective(c, "all-to-all x" + std::to_string(seg.alltoalls), after);
            for (std::size_t k = di; k < di + static_cast<std::size_t>(ep); ++k) prev[k] = op;
          }
        }
        if (split)
          for (std::size_t di = 0; di < D; ++di) layer_end[us][di][seg.layer] = prev[di];
      }
      for (std::size_t di = 0; di < D; ++di) (fwd ? fend : bend)[us][di * M + static_cast<std::size_t>(i)] = prev[di];
    }
    last[us] = prev;
  }
  // Activations forward and their gradients back, between consecutive stages.
  for (int s = 0; s + 1 < pp; ++s) {
    const auto us = static_cast<std::size_t>(s);
    for (std::size_t di = 0; di < D; ++di)
      for (int t = 0; t < tp; ++t)
        for (int i = 0; i < m; ++i) {
          const auto ut = static_cast<std::size_t>(t);
          const Place a = place(s, sim[di], t), c = place(s + 1, sim[di], t);
          const OpId f = b.transfer(a, c, Bytes(boundary[us]), "activation mb " + std::to_string(i),
                                    {fend[us][di * M + static_cast<std::size_t>(i)]});
          b.depend(fbeg[us + 1][at3(di, ut, i)], f);
          const OpId g = b.transfer(c, a, Bytes(boundary[us]), "gradient mb " + std::to_string(i),
                                    {bend[us + 1][di * M + static_cast<std::size_t>(i)]});
          b.depend(bbeg[us][at3(di, ut, i)], g);
        }
  }

  // Data-parallel gradient reduction per stage and tensor rank: the dense part over all
  // data-parallel ranks, routed experts over the ranks that hold the same experts (d mod ep).
  // Without ZeRO every rank needs the whole sum (allreduce). With ZeRO-1 each rank updates only its
  // shard of the optimizer state, so the gradients are reduce-scattered and the updated parameters
  // allgathered: the same volume as one allreduce (Rajbhandari et al., ZeRO, SC'20, Sec. 7.2.1:
  // "Pos ... incurs the same communication volume as baseline DP"; Megatron-LM's distributed
  // optimizer does the same).
  const RoleAlgorithm ar = w.algorithm(Role::GradAllReduce), rsc = w.algorithm(Role::GradReduceScatter);
  const RoleAlgorithm ag = w.algorithm(Role::ParamAllGather);
  const int shards = p_.zero_stage >= 1 ? dp : 1;
  for (int s = 0; s < pp; ++s) {
    const auto us = static_cast<std::size_t>(s);
    const auto [lo, hi] = ranges[us];
    struct Part {
      std::vector<int> ranks;      // data-parallel ranks of the group
      std::vector<LayerCost> local;  // per-layer parameters one GPU holds (params field only)
    };
    std::vector<Part> parts;
    auto make_local = [&](bool experts) {
      std::vector<LayerCost> v;
      for (std::size_t k = lo; k < hi; ++k) {
        LayerCost x;
        x.name = layers[k].name;
        x.params = (experts ? layers[k].routed_params / ep : layers[k].params - (ep > 1 ? layers[k].routed_params : 0.0)) / tp;
        v.push_back(x);
      }
      return v;
    };
    {
      Part dense;
      for (int d = 0; d < dp; ++d) dense.ranks.push_back(d);
      dense.local = make_local(false);
      parts.push_back(dense);
    }
    if (ep > 1)
      for (int r = 0; r < ep; ++r) {
        Part e;
        for (int d = r; d < dp; d += ep) e.ranks.push_back(d);
        e.local = make_local(true);
        parts.push_back(e);
      }
    for (int t = 0; t < tp; ++t) {
      for (const Part& part : parts) {
        std::vector<std::size_t> members;  // simulated ranks in this group
        for (std::size_t di = 0; di < D; ++di)
          if (std::find(part.ranks.begin(), part.ranks.end(), sim[di]) != part.ranks.end()) members.push_back(di);
        if (members.empty()) continue;
        coll::Group g;
        for (int d : part.ranks) g.ranks.push_back(place(s, d, t));
        std::vector<Place> shown;
        for (std::size_t di : members) shown.push_back(place(s, sim[di], t));
        const auto buckets = assign_buckets(part.local, w.grad_bytes, p_.bucket, p_.bucket);
        const int sh = std::min(shards, static_cast<int>(part.ranks.size()));
        const RoleAlgorithm& red = sh > 1 ? rsc : ar;
        OpId stream = kNone;
        for (std::size_t k = 0; k < buckets.size(); ++k) {
          std::vector<OpId> after{stream};
          for (std::size_t di : members) {
            const std::size_t layer = lo + buckets[k].layers.back();
            const auto it = layer_end[us][di].find(layer);
            after.push_back(it != layer_end[us][di].end() ? it->second : last[us][di]);
          }
          stream = b.collective(CollectiveCall{red, g, buckets[k].bytes, shown},
                                std::string(sh > 1 ? "grad reduce-scatter " : "grad allreduce ") + std::to_string(k) + " (" +
                                    fmt_bytes(Bytes(buckets[k].bytes)) + ", " + red.algorithm + ")",
                                after);
        }
        // Optimizer on this GPU's share, then (ZeRO-1) the updated parameters gathered back.
        const double params = total_params(part.local);
        std::vector<OpId> opt;
        for (std::size_t di : members)
          opt.push_back(b.compute(place(s, sim[di], t), Seconds(optimizer_time(w, gpu, params / sh)), "optimizer",
                                  {stream, last[us][di]}));
        if (sh > 1) b.collective(CollectiveCall{ag, g, params * w.param_bytes, shown}, "param allgather", opt);
      }
    }
  }

  // Accounting.
  plan.samples = static_cast<double>(spr) * dp;
  plan.model_flops = model_flops_per_sample(w, layers) * plan.samples;
  for (int s = 0; s < pp; ++s) {
    const auto [lo, hi] = ranges[static_cast<std::size_t>(s)];
    // ZeRO-1 shards each part's optimizer state over the ranks that reduce its gradients (above):
    // the dense part over all dp, a rank's routed experts over its expert group (d mod ep), of
    // dp / ep ranks at the fewest. Until 2026-12-01 the experts' state was divided by dp too:
    // DeepSeekMoE-16B at 20 GPUs with ep = 2 came out 22.1 GB instead of 25.9.
    double dense = 0, experts = 0, stored = 0;
    for (std::size_t k = lo; k < hi; ++k) {
      const double mine = ep > 1 ? layers[k].routed_params / ep / tp : 0.0;
      experts += mine;
      dense += local_params(layers[k], ep) / tp - mine;
      stored += p_.recompute ? (k > 0 ? layers[k - 1].output_elems : 0.0) : layers[k].memory_elems;
    }
    const int inflight = p_.schedule == "gpipe" ? m : std::min(pp - s, m);
    const int expert_shards = std::min(shards, std::max(1, dp / ep));
    const double bytes = dense * optimizer_state_bytes(w, shards) + experts * optimizer_state_bytes(w, expert_shards) +
                         inflight * stored * mb * act / tp;
    plan.memory_bytes = std::max(plan.memory_bytes, bytes);
  }
  plan.layout = "PP=" + std::to_string(pp) + " x DP=" + std::to_string(dp) + (tp > 1 ? " x TP=" + std::to_string(tp) : "") +
                (moe_ && ep > 1 ? ", EP=" + std::to_string(ep) : "") + ", " + std::to_string(m) + " micro-batches of " +
                std::to_string(mb);
  return plan;
}

}  // namespace

std::unique_ptr<Workload> make_pipeline_workload(const PipelineParams& p, bool moe) {
  return std::make_unique<Pipeline>(p, moe);
}

}  // namespace ffsim::train
