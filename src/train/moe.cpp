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

std::unique_ptr<Workload> make_moe(const config::Reader& r, const WorkloadSpec& common) {
  if (common.model.architecture != "transformer" || !common.model.transformer.moe)
    r.child("model").fail("workload kind \"moe\" needs a model with mixture-of-experts layers; \"" + common.model.name +
                          "\" has none (use kind \"pipeline\")");
  const PipelineParams p = parse_pipeline_params(r, true);
  // Expert parallelism places whole routed experts on each of its ranks (DeepSeekMoE, arXiv
  // 2401.06066 Sec. 4.1): an EP that does not divide the experts would put a fraction on each.
  const int experts = common.model.transformer.moe->routed_experts;
  if (experts % p.ep != 0) {
    std::string divisors;
    for (int d = 1; d <= experts; ++d)
      if (experts % d == 0) divisors += (divisors.empty() ? "" : ", ") + std::to_string(d);
    r.fail_at("ep", "EP=" + std::to_string(p.ep) + " does not divide the " + std::to_string(experts) + " routed experts of \"" +
                        common.model.name + "\" (" + fmt_f(static_cast<double>(experts) / p.ep, 2) +
                        " experts per rank); expert parallelism places whole experts: choose an EP among " + divisors);
  }
  r.finish();
  return make_pipeline_workload(p, true);
}

}  // namespace ffsim::train
