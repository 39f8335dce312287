// The collective figures of `ffsim summary`.
// SPDX-License-Identifier: Apache-2.0
#include "app/summary.hpp"
#include "config/coll_reader.hpp"

#include "coll/collective.hpp"

namespace ffsim::app {

AllreduceSummary allreduce_summary(const plan::ScenarioSpec& s, const config::Catalog& cat) {
  const auto p = plan::make_platform(s);
  const coll::LibraryParams lib = config::load_library_params(cat);
  AllreduceSummary r;
  const double S = 184.0 * 1048576;
  r.bytes = S;
  r.tree_chunk_bytes = lib.nccl.tree_chunk_bytes;
  r.step_size = lib.nccl.step_size;
  const auto hf = coll::algorithms().get("hfreduce").factory();
  const auto nc = coll::algorithms().get("nccl").factory();
  for (int n : {16, 128, 1440}) {
    if (n > s.cluster.gpus()) continue;
    const coll::Group g = coll::Group::first_gpus(*p, n);
    const auto eh = hf->estimate(*p, lib, g, S), en = nc->estimate(*p, lib, g, S);
    r.rows.push_back({n, eh.time, en.time, eh.host_traffic_per_byte, eh.bottleneck});
  }
  // The nccl column rests on one assumption that matters at scale: a fixed tree chunk (the
  // shipped 4 MiB, [I]) where NCCL's own source moves 512 KiB steps: what NCCL's own rule gives.
  if (lib.nccl.tree_chunk_bytes > 0 && !r.rows.empty()) {
    coll::LibraryParams own = lib;
    own.nccl.tree_chunk_bytes = 0;  // coll::nccl_tree_chunk: NCCL's step, halved for small messages
    const coll::Group g = coll::Group::first_gpus(*p, r.rows.back().gpus);
    r.nccl_own_rule_time = nc->estimate(*p, own, g, S).time;
    r.nccl_shipped_time = nc->estimate(*p, lib, g, S).time;
  }
  return r;
}

}  // namespace ffsim::app
