// "ddp": data parallelism with gradient buckets (PyTorch DDP; HaiScale DDP on HFReduce).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
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

/// The registry factory: keys "bucket" (default 25 MiB) and "first_bucket" (default 1 MiB).
std::unique_ptr<Workload> make_ddp(const config::Reader& r, const WorkloadSpec& common);

}  // namespace ffsim::train
