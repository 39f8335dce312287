// "fsdp": fully sharded data parallelism (ZeRO-3; PyTorch FSDP, HaiScale FSDP). Each layer with
// parameters is a unit whose parameters are sharded over all ranks: allgathered before its forward
// (prefetched while the unit before computes), freed, allgathered again before its backward, its
// gradients reduce-scattered after it, and the optimizer step on the local shard run right then
// (folded into backward, as HaiScale does).
// SPDX-License-Identifier: Apache-2.0
#include <memory>

#include "core/format.hpp"
#include "train/fsdp.hpp"

namespace ffsim::train {

namespace {

class Fsdp final : public Workload {
public:
  Fsdp(int prefetch, int unit_layers) : prefetch_(prefetch), unit_layers_(unit_layers) {}

  std::string summary() const override {
    return "FSDP (ZeRO-3): units of " + std::to_string(unit_layers_) + " layer(s), allgather " +
           std::to_string(prefetch_) + " unit(s) ahead in forward and backward, reduce-scatter and optimizer per unit in backward";
  }

  std::string check(const WorkloadSpec& w, int gpus, int cluster_gpus, int) const override {
    if (gpus > cluster_gpus)
      return "the cluster has " + std::to_string(cluster_gpus) + " GPUs; cannot run " + std::to_string(gpus);
    const int spr = samples_per_rank(w, gpus);
    if (spr == 0)
      return "a batch of " + std::to_string(w.batch) + " samples per step does not split over " + std::to_string(gpus) +
             " data-parallel ranks";
    if (w.micro_batch > 0 && spr != w.micro_batch)
      return "FSDP runs the per-rank batch in one pass (no gradient accumulation); micro_batch must equal " +
             std::to_string(spr) + " or be left out";
    return "";
  }

  StepPlan build(StepBuilder& b, const WorkloadSpec& w, int gpus, bool full) const override {
    const platform::Platform& p = b.platform();
    const hw::GpuSpec& gpu = p.cluster().node.gpus.front().gpu;
    const auto layers = layer_costs(w.model, w.seq, w.flash_attention);
    const int spr = samples_per_rank(w, gpus);
    const LayerTimes t = layer_times(w, gpu, layers, spr, false);
    const coll::Group group = w.group(p, gpus);
    StepPlan plan;
    plan.data_parallel = gpus;
    plan.layout = "DP=" + std::to_string(gpus) + " (fully sharded), " + std::to_string(spr) + " samples per GPU";
    plan.simulated = full ? group.ranks : std::vector<sched::Place>{group.ranks.front()};
    // Units: `unit_layers` consecutive layers with parameters each (the wrap policy); a layer
    // without parameters runs with the unit before it.
    std::vector<std::size_t> unit_of(layers.size(), 0);
    std::vector<double> unit_params;
    int in_unit = unit_layers_;
    for (std::size_t k = 0; k < layers.size(); ++k) {
      if (unit_params.empty() || (layers[k].params > 0 && in_unit == unit_layers_)) {
        unit_params.push_back(0);
        in_unit = 0;
      }
      if (layers[k].params > 0) ++in_unit;
      unit_params.back() += layers[k].params;
      unit_of[k] = unit_params.size() - 1;
    }
    const std::size_t U = unit_params.size();
    const RoleAlgorithm ag = w.algorithm(Role::ParamAllGather), rs = w.algorithm(Role::GradReduceScatter);
    const std::size_t R = plan.simulated.size();
    // Per rank: the compute chain, and when each unit's forward and backward kernels start and end.
    std::vector<OpId> chain(R, kNone);
    std::vector<std::vector<OpId>> fwd_first(R, std::vector<OpId>(U, kNone)), fwd_last(R, std::vector<OpId>(U, kNone));
    std::vector<std::vector<OpId>> bwd_first(R, std::vector<OpId>(U, kNone)), bwd_last(R, std::vector<OpId>(U, kNone));
    for (std::size_t r = 0; r < R; ++r) {
      for (std::size_t k = 0; k < layers.size(); ++k) {
        const OpId op = b.compute(plan.simulated[r], Seconds(t.fwd[k]), "fwd " + layers[k].name, {chain[r]});
        if (fwd_first[r][unit_of[k]] == kNone) fwd_first[r][unit_of[k]] = op;
        fwd_last[r][unit_of[k]] = chain[r] = op;
      }
      for (std::size_t k = layers.size(); k-- > 0;) {
        const OpId op = b.compute(plan.simulated[r], Seconds(t.bwd[k]), "bwd " + layers[k].name, {chain[r]});
        if (bwd_first[r][unit_of[k]] == kNone) bwd_first[r][unit_of[k]] = op;
        bwd_last[r][unit_of[k]] = chain[r] = op;
      }
    }
    // The allgathers and reduce-scatters share the node's network: one stream, in the order the
    // program issues them ([I] one at a time finishes the last of them when fair sharing would,
    // the bytes over the bottleneck being the same).
    OpId stream = kNone;
    auto gather = [&](std::size_t u, const std::string& name, const std::vector<OpId>& gate) {
      std::vector<OpId> after = gate;
      after.push_back(stream);
      stream = b.collective(CollectiveCall{ag, group, unit_params[u] * w.param_bytes, plan.simulated}, name, after);
      return stream;
    };
    // Forward: unit u's parameters are gathered once unit u - 1 - prefetch has finished (memory),
    // and unit u's kernels wait for them.
    for (std::size_t u = 0; u < U; ++u) {
      std::vector<OpId> gate;
      if (u >= static_cast<std::size_t>(prefetch_) + 1)
        for (std::size_t r = 0; r < R; ++r) gate.push_back(fwd_last[r][u - 1 - static_cast<std::size_t>(prefetch_)]);
      const OpId g = gather(u, "allgather " + layers[first_layer(unit_of, u)].name, gate);
      for (std::size_t r = 0; r < R; ++r) b.depend(fwd_first[r][u], g);
    }
    // Backward, last unit first: the last unit's parameters are still gathered after forward
    // (PyTorch keeps the root's), the others are gathered again `prefetch` units ahead; after each
    // unit's backward its gradients are reduce-scattered and the optimizer updates the shard.
    std::size_t gathered = U - 1;  // units at and above this are gathered for backward
    for (std::size_t u = U; u-- > 0;) {
      // Before unit u's backward the program issues the gathers down to unit u - prefetch.
      const std::size_t lowest = u >= static_cast<std::size_t>(prefetch_) ? u - static_cast<std::size_t>(prefetch_) : 0;
      while (gathered > lowest) {
        const std::size_t v = --gathered;
        // At most 1 + prefetch units gathered at once: wait until unit v + 1 + prefetch is done.
        const std::size_t ahead = v + 1 + static_cast<std::size_t>(prefetch_);
        std::vector<OpId> gate;
        for (std::size_t r = 0; r < R; ++r) gate.push_back(ahead < U ? bwd_last[r][ahead] : fwd_last[r][U - 1]);
        const OpId g = gather(v, "allgather again " + layers[first_layer(unit_of, v)].name, gate);
        for (std::size_t r = 0; r < R; ++r) b.depend(bwd_first[r][v], g);
      }
      std::vector<OpId> after{stream};
      for (std::size_t r = 0; r < R; ++r) after.push_back(bwd_last[r][u]);
      stream = b.collective(CollectiveCall{rs, group, unit_params[u] * w.grad_bytes, plan.simulated},
                            "reduce-scatter " + layers[first_layer(unit_of, u)].name, after);
      for (std::size_t r = 0; r < R; ++r)
        b.compute(plan.simulated[r], Seconds(optimizer_time(w, gpu, unit_params[u] / gpus)), "optimizer shard", {stream});
    }
    const double params = total_params(layers);
    plan.samples = static_cast<double>(spr) * gpus;
    plan.model_flops = model_flops_per_sample(w, layers) * plan.samples;
    double stored = 0, largest = 0;
    for (const auto& l : layers) stored += l.memory_elems;
    for (double u : unit_params) largest = std::max(largest, u);
    // Shards of weights, gradients and optimizer state; up to 1 + prefetch gathered units at once,
    // each with its whole gradient before the reduce-scatter (2 x (1 + prefetch) of the largest
    // unit); and the activations.
    plan.memory_bytes = params / gpus * optimizer_state_bytes(w) + 2 * (1 + prefetch_) * largest * w.param_bytes +
                        stored * spr * w.act_bytes();
    return plan;
  }

private:
  static std::size_t first_layer(const std::vector<std::size_t>& unit_of, std::size_t u) {
    for (std::size_t k = 0; k < unit_of.size(); ++k)
      if (unit_of[k] == u) return k;
    return 0;
  }
  int prefetch_;
  int unit_layers_;
};

}  // namespace

std::unique_ptr<Workload> make_fsdp(const FsdpParams& p) { return std::make_unique<Fsdp>(p.prefetch, p.unit_layers); }

}  // namespace ffsim::train
