// "fsdp": fully sharded data parallelism (ZeRO-3).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>

#include "train/workload.hpp"

namespace ffsim::train {

/// The parameters of "fsdp" (JSON: "prefetch", "unit_layers"): PyTorch FSDP prefetches one unit
/// ahead (forward_prefetch, BackwardPrefetch.BACKWARD_PRE), and its transformer_auto_wrap_policy
/// wraps each block (one layer per unit).
struct FsdpParams {
  int prefetch = 1;
  int unit_layers = 1;
};

/// The "fsdp" workload.
std::unique_ptr<Workload> make_fsdp(const FsdpParams& params);

}  // namespace ffsim::train
