// The built-in training workloads: one registration line each.
// SPDX-License-Identifier: Apache-2.0
#include "train/ddp.hpp"
#include "train/pipeline.hpp"
#include "train/workload.hpp"

namespace ffsim::train {

std::unique_ptr<Workload> make_fsdp(const config::Reader& r, const WorkloadSpec& common);

const WorkloadRegistry& workloads() {
  static const WorkloadRegistry r = [] {
    WorkloadRegistry x("workload kind");
    x.add("ddp", "data parallel: gradient buckets reduced during backward (PyTorch DDP, HaiScale DDP)", make_ddp);
    x.add("fsdp", "fully sharded data parallel (ZeRO-3): per-unit allgather with prefetch, reduce-scatter in backward",
          make_fsdp);
    x.add("pipeline", "pipeline parallel (1F1B or GPipe micro-batches) x data parallel, TP inside a stage", make_pipeline);
    x.add("moe", "mixture of experts on pipeline parallel, expert parallel with all-to-all per MoE layer", make_moe);
    return x;
  }();
  return r;
}

}  // namespace ffsim::train
