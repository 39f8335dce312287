// The built-in training workloads: one registration line each.
// SPDX-License-Identifier: Apache-2.0
#include "train/ddp.hpp"
#include "train/workload.hpp"

namespace ffsim::train {

const WorkloadRegistry& workloads() {
  static const WorkloadRegistry r = [] {
    WorkloadRegistry x("workload kind");
    x.add("ddp", "data parallel: gradient buckets reduced during backward (PyTorch DDP, HaiScale DDP)", make_ddp);
    return x;
  }();
  return r;
}

}  // namespace ffsim::train
