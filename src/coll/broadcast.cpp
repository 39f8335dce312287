// "broadcast": NCCL's pipelined ring broadcast from the root: chunks flow down the ring, chunk c
// crossing hop h once chunk c crossed hop h-1 and chunk c-1 crossed hop h. On nodes with several
// compute NICs one ring per NIC (ring_orders), each carrying its part of the buffer.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>

#include "coll/common.hpp"
#include "coll/ring.hpp"

namespace ffsim::coll {
namespace {

// NCCL's rings (one per compute NIC on multi-NIC nodes), each rotated to start at the root.
std::vector<std::vector<int>> rings_from(const platform::Platform& p, const LibraryParams& lib, const Group& g, int root) {
  auto orders = ring_orders(p, g, lib.nccl.numa_restricted);
  for (auto& order : orders) std::rotate(order.begin(), std::find(order.begin(), order.end(), root), order.end());
  return orders;
}

// The pipeline chunk: the library's tree chunk, or with NCCL's own rule one step (BROADCAST_CHUNKSTEPS 1).
double broadcast_chunk(const LibraryParams& lib) {
  return lib.nccl.tree_chunk_bytes > 0 ? lib.nccl.tree_chunk_bytes : lib.nccl.step_size;
}

class RingBroadcast final : public Algorithm {
public:
  Kind kind() const override { return Kind::Broadcast; }
  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes,
               const Options& o) const override {
    const int n = g.size();
    const auto cls = o.cls == sched::TrafficClass::Other ? sched::TrafficClass::NCCL : o.cls;
    const auto orders = rings_from(p, lib, g, o.root);
    const int R = static_cast<int>(orders.size());
    const double chunk = broadcast_chunk(lib);
    const auto elems = o.with_data ? static_cast<std::size_t>(bytes / o.elem_size) : 0;
    Emitted e;
    std::vector<sched::BufferId> buf;
    if (o.with_data) {
      for (int r = 0; r < n; ++r)
        buf.push_back(s.buffer(g.ranks[static_cast<std::size_t>(r)], Bytes(bytes), "buf" + std::to_string(r)));
      e.input = buf;
      e.output = buf;
      e.data_bytes = bytes;
    }
    // done_at[rank]: the last chunk a rank receives, over all rings.
    std::vector<std::vector<sched::OpId>> done_at(static_cast<std::size_t>(n));
    const std::uint32_t tag = s.tag("broadcast");
    for (int r = 0; r < R; ++r) {
      // Ring r carries part r of the buffer (NCCL splits a broadcast over its channels), in chunks.
      const auto& order = orders[static_cast<std::size_t>(r)];
      const auto [e0, e1] = split(elems, R, r);
      const double part = o.with_data ? static_cast<double>(e1 - e0) * o.elem_size : bytes / R;
      // Whole chunks and a shorter last one, as NCCL's broadcast loop cuts a channel's share
      // (broadcast.h, runRing: nelem = min(realChunkSize, size - offset)).
      const Cut cu = cut(part, chunk, n);
      const auto chunks = static_cast<int>(cu.count);
      std::vector<sched::OpId> last_at(static_cast<std::size_t>(n), kNoOp);  // last chunk received at position
      for (int i = 0; i < n; ++i) last_at[static_cast<std::size_t>(i)] = ready_of(o, order[static_cast<std::size_t>(i)]);
      for (int c = 0; c < chunks; ++c) {
        const auto [b0, b1] =
            o.with_data ? cut_elems(e1 - e0, chunk, o.elem_size, chunks, c) : std::pair<std::size_t, std::size_t>{0, 0};
        const double cb = o.with_data ? static_cast<double>(b1 - b0) * o.elem_size : cu.len(c);
        const double off = o.with_data ? static_cast<double>(e0 + b0) * o.elem_size : 0;
        sched::OpId arrived = last_at[0];
        for (int h = 0; h + 1 < n; ++h) {
          const auto src = static_cast<std::size_t>(order[static_cast<std::size_t>(h)]);
          const auto dst = static_cast<std::size_t>(order[static_cast<std::size_t>(h + 1)]);
          const double hop = nccl_hop_latency(p, lib, g.ranks[src], g.ranks[dst]);
          // The hop's latency runs from the chunk's arrival, beside the previous chunk's send on
          // this connection (NCCL keeps several steps in flight; its latency model charges a
          // broadcast n - 1 hop latencies per operation, not per chunk).
          const sched::OpId prev = last_at[static_cast<std::size_t>(h + 1)];
          sched::OpId t;
          if (o.with_data) {
            const sched::DataRef from{buf[src], off}, to{buf[dst], off};
            t = pipelined_hop_transfer(s, p, hop, arrived, prev, g.ranks[src], g.ranks[dst], cb, cls, tag, &from, &to);
          } else {
            t = pipelined_hop_transfer(s, p, hop, arrived, prev, g.ranks[src], g.ranks[dst], cb, cls, tag);
          }
          last_at[static_cast<std::size_t>(h + 1)] = t;
          arrived = t;
        }
      }
      for (int i = 0; i < n; ++i)
        if (last_at[static_cast<std::size_t>(i)] != kNoOp)
          done_at[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])].push_back(last_at[static_cast<std::size_t>(i)]);
    }
    e.done.assign(static_cast<std::size_t>(n), kNoOp);
    for (int i = 0; i < n; ++i) {
      const auto& d = done_at[static_cast<std::size_t>(i)];
      sched::OpId op = d.size() == 1 ? d.front() : barrier(s, d);
      if (op == kNoOp) op = s.delay(Seconds(0));
      e.done[static_cast<std::size_t>(i)] = op;
    }
    return e;
  }
  // Per ring (R), the part's chunks K = ceil(bytes / R / chunk); per chunk the n - 1 hops down the
  // ring, each a software delay (counted always: an upper bound) and the transfer; a done per rank
  // (a barrier over the rings, or a zero-time op at the root): ops <= R K 2 (n - 1) + n.
  double schedule_ops(const LibraryParams& lib, const GroupShape& g, double bytes, bool) const override {
    const double n = g.ranks, R = ring_count(g);
    return R * piece_count_real(bytes / R, broadcast_chunk(lib)) * 2 * (n - 1) + n;
  }

  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes) const override {
    Estimate est;
    const int n = g.size();
    if (n == 1) return est;
    const auto orders = rings_from(p, lib, g, 0);
    const int R = static_cast<int>(orders.size());
    const Cut cu = cut(bytes / R, broadcast_chunk(lib));  // whole chunks and a shorter last one, as emit cuts them
    const double chunks = cu.count;
    // Pipeline: in each ring the first chunk crosses the hops one after another, each at its own
    // pace (the fill: the slowest ring's); the other chunks follow one period apart, the period
    // being the bottleneck bound of every ring's every hop moving a chunk at once (the steady state,
    // where the hops share the node's links; the latencies run beside the previous chunks' sends,
    // so only the fill pays them). One ring: within 3% of
    // the fluid simulation on Fire-Flyer 2 at 16-64 GPUs. Several rings: about 30% below it (their
    // first chunks meet on the GPUs' links, which the fill leaves out); charging the fill each
    // ring's share of every link it crosses overshoots by 17-83% instead (tried 2026-11-30).
    double fill = 0;
    std::vector<std::pair<std::uint32_t, double>> all;
    for (const auto& order : orders) {
      double ring_fill = 0;
      for (int h = 0; h + 1 < n; ++h) {
        const auto& a = g.ranks[static_cast<std::size_t>(order[static_cast<std::size_t>(h)])];
        const auto& b = g.ranks[static_cast<std::size_t>(order[static_cast<std::size_t>(h + 1)])];
        const auto pid = p.path_id(a, b);
        const double lat_h = nccl_path_latency(p, nccl_hop_latency(p, lib, a, b), a, b);
        ring_fill += bottleneck_bound(p, {{pid, cu.piece}}).time + lat_h + p.options().arbitration_latency;
        all.emplace_back(pid, cu.piece);
      }
      fill = std::max(fill, ring_fill);
    }
    const Bound bd = bottleneck_bound(p, all);
    const double period = bd.time + p.options().arbitration_latency;  // the latencies overlap the previous sends
    const std::uint32_t why = bd.resource;
    // chunks - 1 periods after the first chunk's trip, the last one the shorter chunk's transfer.
    est.time = fill + (chunks - 1) * period - (chunks > 1 ? (1 - cu.last_share()) * bd.time : 0.0);
    est.bottleneck = bound_label(p, why);
    return est;
  }
};
}  // namespace
std::unique_ptr<Algorithm> make_broadcast() { return std::make_unique<RingBroadcast>(); }
}  // namespace ffsim::coll
