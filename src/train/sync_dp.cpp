// "sync_dp": plain synchronous data parallelism. Every GPU holds the whole model, runs forward and
// the whole backward, and only then reduces the gradients, in fusion buffers one after another
// (Horovod-style tensor fusion without overlap), then steps the optimizer.
// SPDX-License-Identifier: Apache-2.0
#include "train/sync_dp.hpp"

#include <limits>

#include "core/format.hpp"
#include "train/ddp.hpp"

namespace ffsim::train {

namespace {

class SyncDp final : public Workload {
public:
  explicit SyncDp(double fusion) : fusion_(fusion) {}

  std::string summary() const override {
    return "synchronous DP: the whole backward, then " +
           (fusion_ > 0 ? "the gradients in fusion buffers of " + fmt_bytes(Bytes(fusion_))
                        : std::string("one allreduce of the gradients")) +
           ", no overlap";
  }

  std::string check(const WorkloadSpec& w, int gpus, int cluster_gpus, int) const override {
    return check_data_parallel(w, gpus, cluster_gpus);  // as ddp: the same ranks and batches
  }

  StepPlan build(StepBuilder& b, const WorkloadSpec& w, int gpus, bool full) const override {
    const platform::Platform& p = b.platform();
    const hw::GpuSpec& gpu = p.cluster().node.gpus.front().gpu;
    const auto layers = layer_costs(w.model, w.seq, w.flash_attention);
    const int spr = samples_per_rank(w, gpus);
    const int mb = w.micro_batch > 0 ? w.micro_batch : spr;
    const int passes = spr / mb;
    const LayerTimes t = layer_times(w, gpu, layers, mb, false);
    const coll::Group group = w.group(p, gpus);
    StepPlan plan;
    plan.data_parallel = gpus;
    plan.layout = "DP=" + std::to_string(gpus) + ", " + std::to_string(spr) + " samples per GPU" +
                  (passes > 1 ? " in " + std::to_string(passes) + " micro-batches" : "");
    // Identical ranks (as in ddp): one rank's timeline is every rank's unless `full`.
    plan.simulated = full ? group.ranks : std::vector<sched::Place>{group.ranks.front()};
    std::vector<OpId> backward_done;
    for (const auto& place : plan.simulated) {
      OpId prev = kNone;
      for (int m = 0; m < passes; ++m) {
        for (std::size_t k = 0; k < layers.size(); ++k)
          prev = b.compute(place, Seconds(t.fwd[k]), "fwd " + layers[k].name, {prev});
        for (std::size_t k = layers.size(); k-- > 0;)
          prev = b.compute(place, Seconds(t.bwd[k]), "bwd " + layers[k].name, {prev});
      }
      backward_done.push_back(prev);
    }
    // The fusion buffers fill in the order gradients are produced (PyTorch's bucket rule with every
    // cap equal; fusion 0: one buffer of everything); none starts before every backward is done.
    const double cap = fusion_ > 0 ? fusion_ : std::numeric_limits<double>::infinity();
    const auto buffers = assign_buckets(layers, w.grad_bytes, cap, cap);
    const RoleAlgorithm alg = w.algorithm(Role::GradAllReduce);
    OpId stream = kNone;
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      auto after = backward_done;
      after.push_back(stream);
      stream = b.collective(
          CollectiveCall{alg, group, buffers[i].bytes, plan.simulated},
          "allreduce fusion buffer " + std::to_string(i) + " (" + fmt_bytes(Bytes(buffers[i].bytes)) + ")", after);
    }
    const double params = total_params(layers);
    for (std::size_t r = 0; r < plan.simulated.size(); ++r)
      b.compute(plan.simulated[r], Seconds(optimizer_time(w, gpu, params)), "optimizer", {backward_done[r], stream});
    plan.samples = static_cast<double>(spr) * gpus;
    plan.model_flops = model_flops_per_sample(w, layers) * plan.samples;
    double stored = 0;
    for (const auto& l : layers) stored += l.memory_elems;
    plan.memory_bytes = params * optimizer_state_bytes(w) + stored * mb * w.act_bytes();
    return plan;
  }

private:
  double fusion_;
};

}  // namespace

std::unique_ptr<Workload> make_sync_dp(const SyncDpParams& p) { return std::make_unique<SyncDp>(p.fusion); }

}  // namespace ffsim::train
