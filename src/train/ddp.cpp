// "ddp": data parallelism with gradient buckets reduced while backward continues (PyTorch DDP;
// HaiScale DDP on HFReduce). Every GPU holds the whole model and runs the same step.
// SPDX-License-Identifier: Apache-2.0
#include "train/ddp.hpp"

#include "core/format.hpp"

namespace ffsim::train {

std::vector<Bucket> assign_buckets(const std::vector<LayerCost>& layers, double bytes_per_param, double cap,
                                   double first_cap) {
  // PyTorch's Reducer (_compute_bucket_assignment_by_size): parameters in reverse order of
  // definition fill a bucket until it reaches its limit (the first bucket's limit is smaller, so
  // that the first allreduce starts early); a layer's parameters stay together here.
  std::vector<Bucket> out;
  Bucket cur;
  for (std::size_t k = layers.size(); k-- > 0;) {
    if (layers[k].params <= 0) continue;
    cur.layers.push_back(k);
    cur.bytes += layers[k].params * bytes_per_param;
    const double limit = out.empty() ? first_cap : cap;
    if (cur.bytes >= limit) {
      out.push_back(cur);
      cur = Bucket{};
    }
  }
  if (!cur.layers.empty()) out.push_back(cur);
  return out;
}

std::string check_data_parallel(const WorkloadSpec& w, int gpus, int cluster_gpus) {
  if (gpus > cluster_gpus)
    return "the cluster has " + std::to_string(cluster_gpus) + " GPUs; cannot run " + std::to_string(gpus);
  const int spr = samples_per_rank(w, gpus);
  if (spr == 0)
    return "a batch of " + std::to_string(w.batch) + " samples per step does not split over " + std::to_string(gpus) +
           " data-parallel ranks";
  if (w.micro_batch > 0 && spr % w.micro_batch != 0)
    return std::to_string(spr) + " samples per rank are not a whole number of micro-batches of " +
           std::to_string(w.micro_batch);
  return "";
}

namespace {

class Ddp final : public Workload {
public:
  Ddp(double cap, double first_cap) : cap_(cap), first_cap_(first_cap) {}

  std::string summary() const override {
    return "DDP: gradient buckets of " + fmt_bytes(Bytes(cap_)) + " (the first " + fmt_bytes(Bytes(first_cap_)) +
           ") reduced during backward";
  }

  std::string check(const WorkloadSpec& w, int gpus, int cluster_gpus, int) const override {
    return check_data_parallel(w, gpus, cluster_gpus);
  }

  StepPlan build(StepBuilder& b, const WorkloadSpec& w, int gpus, bool full) const override {
    const platform::Platform& p = b.platform();
    const hw::GpuSpec& gpu = p.cluster().node.gpus.front().gpu;
    const auto layers = layer_costs(w.model, w.seq, w.flash_attention);
    const int spr = samples_per_rank(w, gpus);
    const int mb = w.micro_batch > 0 ? w.micro_batch : spr;
    const int passes = spr / mb;  // gradient accumulation: only the last pass reduces
    const LayerTimes t = layer_times(w, gpu, layers, mb, false);
    const coll::Group group = w.group(p, gpus);
    StepPlan plan;
    plan.data_parallel = gpus;
    plan.layout = "DP=" + std::to_string(gpus) + ", " + std::to_string(spr) + " samples per GPU" +
                  (passes > 1 ? " in " + std::to_string(passes) + " micro-batches" : "");
    plan.simulated = full ? group.ranks : std::vector<sched::Place>{group.ranks.front()};
    // Identical ranks: each starts at 0, runs the same kernels and waits for the same collectives,
    // so one rank's timeline is every rank's (the tests prove it against all ranks).
    const auto buckets = assign_buckets(layers, w.grad_bytes, cap_, first_cap_);
    std::vector<std::vector<OpId>> ready(buckets.size());
    std::vector<OpId> last_op;
    for (const auto& gpu_place : plan.simulated) {
      OpId prev = kNone;
      std::vector<OpId> bwd_op(layers.size(), kNone);
      for (int m = 0; m < passes; ++m) {
        for (std::size_t k = 0; k < layers.size(); ++k)
          prev = b.compute(gpu_place, Seconds(t.fwd[k]), "fwd " + layers[k].name, {prev});
        for (std::size_t k = layers.size(); k-- > 0;)
          prev = bwd_op[k] = b.compute(gpu_place, Seconds(t.bwd[k]), "bwd " + layers[k].name, {prev});
      }
      for (std::size_t i = 0; i < buckets.size(); ++i) ready[i].push_back(bwd_op[buckets[i].layers.back()]);
      last_op.push_back(prev);
    }
    // One communication stream: buckets in order, each once every rank has its gradients.
    const RoleAlgorithm alg = w.algorithm(Role::GradAllReduce);
    OpId stream = kNone;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      auto after = ready[i];
      after.push_back(stream);
      stream = b.collective(CollectiveCall{alg, group, buckets[i].bytes, plan.simulated},
                            "allreduce bucket " + std::to_string(i) + " (" + fmt_bytes(Bytes(buckets[i].bytes)) + ")",
                            after);
    }
    const double params = total_params(layers);
    for (std::size_t r = 0; r < plan.simulated.size(); ++r)
      b.compute(plan.simulated[r], Seconds(optimizer_time(w, gpu, params)), "optimizer", {last_op[r], stream});
    plan.samples = static_cast<double>(spr) * gpus;
    plan.model_flops = model_flops_per_sample(w, layers) * plan.samples;
    double stored = 0;
    for (const auto& l : layers) stored += l.memory_elems;
    plan.memory_bytes = params * optimizer_state_bytes(w) + stored * mb * w.act_bytes();
    return plan;
  }

private:
  double cap_, first_cap_;
};

}  // namespace

std::unique_ptr<Workload> make_ddp(const DdpParams& p) { return std::make_unique<Ddp>(p.bucket, p.first_bucket); }

}  // namespace ffsim::train
