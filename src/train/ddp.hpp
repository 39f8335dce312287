// "ddp": data parallelism with gradient buckets (PyTorch DDP; HaiScale DDP on HFReduce).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "train/workload.hpp"

namespace ffsim::train {

/// A gradient bucket: layer indices in the order they were added (reverse of definition; the
/// last one's backward completes the bucket) and its size in bytes.
struct Bucket {
  std::vector<std::size_t> layers;
  double bytes = 0;
};

/// PyTorch's bucket assignment over layers: reverse order, each bucket closed once it reaches its
/// limit (`first_cap` for the first, `cap` for the rest).
[[nodiscard]] std::vector<Bucket> assign_buckets(const std::vector<LayerCost>& layers, double bytes_per_param,
                                                 double cap, double first_cap);

/// The checks every data-parallel workload without sharding makes ("" when `gpus` can run it): the
/// cluster holds them, the batch splits over them, the per-rank batch is whole micro-batches.
[[nodiscard]] std::string check_data_parallel(const WorkloadSpec& w, int gpus, int cluster_gpus);

/// The parameters of "ddp" (JSON: "bucket", "first_bucket"): PyTorch DDP's defaults, bucket_cap_mb
/// = 25 and a first bucket of 1 MiB (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES).
struct DdpParams {
  double bucket = 25.0 * 1048576;  ///< bytes
  double first_bucket = 1048576.0;
};

/// The "ddp" workload.
std::unique_ptr<Workload> make_ddp(const DdpParams& params);

}  // namespace ffsim::train
