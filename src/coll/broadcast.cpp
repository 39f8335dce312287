// "broadcast": NCCL's pipelined ring broadcast from the root: chunks flow down the ring, chunk c
// crossing hop h once chunk c crossed hop h-1 and chunk c-1 crossed hop h.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>

#include "coll/common.hpp"

namespace ffsim::coll {
namespace {
class RingBroadcast final : public Algorithm {
public:
  Kind kind() const override { return Kind::Broadcast; }
  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes,
               const Options& o) const override {
    const int n = g.size();
    const auto cls = o.cls == sched::TrafficClass::Other ? sched::TrafficClass::NCCL : o.cls;
    // Ring order rotated to start at the root.
    std::vector<int> order = ring_order(p, g, lib.nccl.numa_restricted);
    std::rotate(order.begin(), std::find(order.begin(), order.end(), o.root), order.end());
    const double chunk = lib.nccl.tree_chunk_bytes;
    const auto elems = o.with_data ? static_cast<std::size_t>(bytes / o.elem_size) : 0;
    const int chunks = std::max(1, static_cast<int>(std::ceil(bytes / chunk)));
    Emitted e;
    std::vector<sched::BufferId> buf;
    if (o.with_data) {
      for (int r = 0; r < n; ++r)
        buf.push_back(s.buffer(g.ranks[static_cast<std::size_t>(r)], Bytes(bytes), "buf" + std::to_string(r)));
      e.input = buf;
      e.output = buf;
      e.data_bytes = bytes;
    }
    std::vector<sched::OpId> last_at(static_cast<std::size_t>(n), kNoOp);  // last chunk received at position
    for (int i = 0; i < n; ++i) last_at[static_cast<std::size_t>(i)] = ready_of(o, order[static_cast<std::size_t>(i)]);
    const std::uint32_t tag = s.tag("broadcast");
    for (int c = 0; c < chunks; ++c) {
      const auto [b0, b1] = split(o.with_data ? elems : static_cast<std::size_t>(chunks), chunks, c);
      const double cb = o.with_data ? static_cast<double>(b1 - b0) * o.elem_size : bytes / chunks;
      const double off = o.with_data ? static_cast<double>(b0) * o.elem_size : 0;
      sched::OpId arrived = last_at[0];
      for (int h = 0; h + 1 < n; ++h) {
        const auto src = static_cast<std::size_t>(order[static_cast<std::size_t>(h)]);
        const auto dst = static_cast<std::size_t>(order[static_cast<std::size_t>(h + 1)]);
        const double hop = hop_type(p, g.ranks[src], g.ranks[dst]) == HopType::Net ? lib.nccl.ring_hop_latency_net
                                                                                    : lib.nccl.ring_hop_latency_pci;
        const sched::OpId before = barrier(s, {arrived, last_at[static_cast<std::size_t>(h + 1)]});
        sched::OpId t;
        if (o.with_data) {
          const sched::DataRef from{buf[src], off}, to{buf[dst], off};
          t = hop_transfer(s, p, hop, before, g.ranks[src], g.ranks[dst], cb, cls, tag, &from, &to);
        } else {
          t = hop_transfer(s, p, hop, before, g.ranks[src], g.ranks[dst], cb, cls, tag);
        }
        last_at[static_cast<std::size_t>(h + 1)] = t;
        arrived = t;
      }
    }
    e.done.assign(static_cast<std::size_t>(n), kNoOp);
    for (int i = 0; i < n; ++i) {
      sched::OpId d = last_at[static_cast<std::size_t>(i)];
      if (d == kNoOp) d = s.delay(Seconds(0));
      e.done[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = d;
    }
    return e;
  }
  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes) const override {
    Estimate est;
    const int n = g.size();
    if (n == 1) return est;
    const std::vector<int> order = ring_order(p, g, lib.nccl.numa_restricted);
    const int chunks = std::max(1, static_cast<int>(std::ceil(bytes / lib.nccl.tree_chunk_bytes)));
    // Pipeline: (chunks + hops - 1) x the slowest hop's chunk time.
    double worst = 0;
    std::uint32_t why = eval::kLimitNone;
    for (int h = 0; h + 1 < n; ++h) {
      const auto& a = g.ranks[static_cast<std::size_t>(order[static_cast<std::size_t>(h)])];
      const auto& b = g.ranks[static_cast<std::size_t>(order[static_cast<std::size_t>(h + 1)])];
      const auto pid = p.path_id(a, b);
      const Bound bd = bottleneck_bound(p, {{pid, bytes / chunks}});
      const double hop = hop_type(p, a, b) == HopType::Net ? lib.nccl.ring_hop_latency_net : lib.nccl.ring_hop_latency_pci;
      const double t = bd.time + std::max(hop, p.path(pid).latency) + p.options().arbitration_latency;
      if (t > worst) {
        worst = t;
        why = bd.resource;
      }
    }
    est.time = (chunks + n - 2) * worst;
    est.bottleneck = bound_label(p, why);
    return est;
  }
};
}  // namespace
std::unique_ptr<Algorithm> make_broadcast() { return std::make_unique<RingBroadcast>(); }
}  // namespace ffsim::coll
