// "alltoall": every rank sends bytes/n to every other rank at once (NCCL's grouped send/recv), the
// MoE dispatch and combine.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>

#include "coll/common.hpp"

namespace ffsim::coll {
namespace {
class AllToAll final : public Algorithm {
public:
  Kind kind() const override { return Kind::AllToAll; }
  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes,
               const Options& o) const override {
    const int n = g.size();
    check_schedule_size(static_cast<double>(n) * (n - 1),
                        "an alltoall over " + std::to_string(n) + " ranks (a transfer per pair of ranks)");
    const auto cls = o.cls == sched::TrafficClass::Other ? sched::TrafficClass::NCCL : o.cls;
    Emitted e;
    const std::size_t elems = o.with_data ? static_cast<std::size_t>(bytes / o.elem_size) : 0;
    std::vector<sched::BufferId> in, out;
    if (o.with_data) {
      for (int r = 0; r < n; ++r) {
        in.push_back(s.buffer(g.ranks[static_cast<std::size_t>(r)], Bytes(bytes), "in" + std::to_string(r)));
        out.push_back(s.buffer(g.ranks[static_cast<std::size_t>(r)], Bytes(bytes), "out" + std::to_string(r)));
      }
      e.input = in;
      e.output = out;
      e.data_bytes = bytes;
    }
    std::vector<std::vector<sched::OpId>> arrivals(static_cast<std::size_t>(n));
    const std::uint32_t tag = s.tag("alltoall");
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        // Block b of rank a's input goes to block a of rank b's output; blocks are bytes/n (whole
        // elements when checking data: floor(elements / n), the remainder is not exchanged).
        const std::size_t per = elems / static_cast<std::size_t>(n);
        const std::size_t s0 = static_cast<std::size_t>(b) * per, d0 = static_cast<std::size_t>(a) * per;
        const double blk = o.with_data ? static_cast<double>(per) * o.elem_size : bytes / n;
        const sched::Place& pa = g.ranks[static_cast<std::size_t>(a)];
        const sched::Place& pb = g.ranks[static_cast<std::size_t>(b)];
        const double hop = a == b ? 0.0 : hop_type(p, pa, pb) == HopType::Net ? lib.nccl.simple.ring_hop_latency_net
                                                                              : lib.nccl.simple.ring_hop_latency_pci;
        const sched::OpId before = barrier(s, {ready_of(o, a), ready_of(o, b)});
        sched::OpId t;
        if (o.with_data) {
          const sched::DataRef from{in[static_cast<std::size_t>(a)], static_cast<double>(s0) * o.elem_size};
          const sched::DataRef to{out[static_cast<std::size_t>(b)], static_cast<double>(d0) * o.elem_size};
          t = hop_transfer(s, p, hop, before, pa, pb, blk, cls, tag, &from, &to);
        } else {
          if (a == b) continue;  // a rank's own block stays in place
          t = hop_transfer(s, p, hop, before, pa, pb, blk, cls, tag);
        }
        arrivals[static_cast<std::size_t>(b)].push_back(t);
      }
    for (int r = 0; r < n; ++r) {
      sched::OpId d = barrier(s, arrivals[static_cast<std::size_t>(r)]);
      if (d == kNoOp) d = s.delay(Seconds(0));
      e.done.push_back(d);
    }
    return e;
  }
  // A transfer per ordered pair of distinct ranks, each after a software delay (counted always: an
  // upper bound), and a barrier per rank over its arrivals: ops <= 2 n (n - 1) + n.
  double schedule_ops(const LibraryParams&, const GroupShape& g, double, bool) const override {
    const double n = g.ranks;
    return 2 * n * (n - 1) + n;
  }

  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes) const override {
    // Every pair at once: the bottleneck bound of all n(n-1) transfers of bytes/n, plus the
    // longest pair's latency (nccl_path_latency: inside a node its hop's, between nodes its hop's
    // or its path's if longer) and the arbitration delay.
    // Platform::all_pairs_loads gives the loads without a path per pair (an alltoall over 9,600
    // GPUs is 92 million pairs).
    Estimate est;
    const int n = g.size();
    const double per = bytes / n;
    const auto loads = p.all_pairs_loads(g.ranks, per);
    double lat = 0;
    if (loads.any_local) lat = std::max(lat, lib.nccl.simple.ring_hop_latency_pci + p.options().arbitration_latency);
    if (loads.any_net)
      lat = std::max(lat, std::max(lib.nccl.simple.ring_hop_latency_net, loads.max_net_latency) + p.options().arbitration_latency);
    const double cap_time = std::isfinite(loads.min_rate_cap) ? per / loads.min_rate_cap : 0.0;
    const Bound b = bottleneck_bound(p, loads.load, cap_time);
    est.time = b.time + lat;
    est.bottleneck = bound_label(p, b.resource);
    return est;
  }
};
}  // namespace
std::unique_ptr<Algorithm> make_alltoall() { return std::make_unique<AllToAll>(); }
}  // namespace ffsim::coll
