// "sync_dp": plain synchronous data parallelism, no overlap (the baseline DDP's overlap is
// measured against).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>

#include "train/workload.hpp"

namespace ffsim::train {

/// The parameters of "sync_dp" (JSON: "fusion").
struct SyncDpParams {
  /// Bytes per fused gradient buffer (Horovod's tensor fusion); 0: one allreduce of the whole gradient.
  double fusion = 0;
};

/// The "sync_dp" workload: forward, the whole backward, then the gradients allreduced in fusion
/// buffers back to back, then the optimizer.
std::unique_ptr<Workload> make_sync_dp(const SyncDpParams& params);

}  // namespace ffsim::train
