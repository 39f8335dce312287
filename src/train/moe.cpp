// "moe": a mixture-of-experts model on pipeline parallelism, with expert parallelism: the routed
// experts of each MoE layer split over `ep` data-parallel ranks of a stage, tokens dispatched to
// them and combined back by an all-to-all per MoE layer, in forward and in backward.
// SPDX-License-Identifier: Apache-2.0
#include "core/error.hpp"
#include "core/format.hpp"
#include "train/pipeline.hpp"

namespace ffsim::train {

double local_params(const LayerCost& l, int ep) {
  // Routed experts are split evenly over the expert-parallel ranks; everything else is replicated.
  return l.params - l.routed_params + l.routed_params / ep;
}

double alltoall_bytes(const LayerCost& l, double samples, double act_bytes) {
  // With uniform routing a rank's tokens go to every expert-parallel rank alike; the all-to-all
  // buffer holds every (token, chosen expert) pair at hidden width (DeepSeekMoE, arXiv 2401.06066).
  return l.dispatch_elems * samples * act_bytes;
}

}  // namespace ffsim::train
