// Ring collectives (reduce-scatter, allgather, allreduce).
// SPDX-License-Identifier: Apache-2.0
#include "coll/ring.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "coll/common.hpp"
#include "core/error.hpp"

namespace ffsim::coll {

using sched::DataRef;
using sched::OpId;
using sched::Place;

namespace {

// The latency every flow of a ring step pays: the mean over the ring's hops of each hop's latency
// (nccl_path_latency: NCCL's per-hop latency; between nodes the path's where that is longer). In
// NCCL's pipelined ring there is no barrier between steps: a piece of data crosses the hops one
// after another, so over its 2(n - 1) steps it pays the latencies along its way around the ring,
// the mean hop's per step (NCCL's own model, tuning.cc, charges the intra-node steps the
// intra-node latency and 2(nodes - 1) the network's). The schedule's barrier per step at the slowest hop would charge
// every step a network hop: until 2026-12-07 a network path's own latency (2.7 us on DGX-A100) on each step of an LL
// ring, whose NCCL hop latencies are below it, 64.2 us for 4 KiB on 12 GPUs against NCCL's predicted 18.7 us. Every
// flow of the step pays this latency instead of its path's (Schedule::set_latency), on every engine and in the closed
// form.
double step_latency(const platform::Platform& p, const LibraryParams& lib, const Group& g, const std::vector<int>& order) {
  const auto n = order.size();
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Place& a = g.ranks[static_cast<std::size_t>(order[i])];
    const Place& b = g.ranks[static_cast<std::size_t>(order[(i + 1) % n])];
    sum += nccl_path_latency(p, nccl_hop_latency(p, lib, a, b), a, b);
  }
  return sum / static_cast<double>(n);
}

}  // namespace

Emitted emit_ring(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                  double full, const Options& o, RingPhases phases, const std::vector<int>& steps) {
  const int n = g.size();
  const sched::TrafficClass cls = o.cls == sched::TrafficClass::Other ? sched::TrafficClass::NCCL : o.cls;
  const std::vector<std::vector<int>> orders = ring_orders(p, g, lib.nccl.numa_restricted);
  const int R = static_cast<int>(orders.size());
  Emitted e;
  e.done.assign(static_cast<std::size_t>(n), kNoOp);
  // The vector is n chunks (elements when checking data; equal byte fractions otherwise); rank X
  // ends the reduce-scatter with chunk (its position in ring 0 + 1) mod n, whole. Each ring
  // carries its own part of every chunk: in ring r, the segment that position i - 1 ends up owning
  // (positional segment i) is part r of its owner's chunk. One ring: segment j is chunk j.
  std::vector<int> pos0(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) pos0[static_cast<std::size_t>(orders[0][static_cast<std::size_t>(i)])] = i;
  auto chunk_of = [&](int r, int seg) {
    const int owner = orders[static_cast<std::size_t>(r)][static_cast<std::size_t>((seg - 1 + n) % n)];
    return (pos0[static_cast<std::size_t>(owner)] + 1) % n;
  };
  const std::size_t elems = o.with_data ? static_cast<std::size_t>(full / o.elem_size) : 0;
  auto part = [&](int r, int seg) {  // [begin, end) in elements
    const auto [cb, ce] = split(elems, n, chunk_of(r, seg));
    const auto [pb, pe] = split(ce - cb, R, r);
    return std::make_pair(cb + pb, cb + pe);
  };
  auto seg_bytes = [&](int r, int seg) {
    if (!o.with_data) return full / n / R;
    const auto [b, en] = part(r, seg);
    return static_cast<double>(en - b) * o.elem_size;
  };
  auto seg_off = [&](int r, int seg) { return o.with_data ? static_cast<double>(part(r, seg).first) * o.elem_size : 0.0; };
  // Buffers: each rank's working vector (the full vector) and a staging buffer for received segments.
  std::vector<sched::BufferId> work, stage;
  if (o.with_data) {
    for (int r = 0; r < n; ++r) {
      work.push_back(s.buffer(g.ranks[static_cast<std::size_t>(r)], Bytes(full), "work" + std::to_string(r)));
      stage.push_back(s.buffer(g.ranks[static_cast<std::size_t>(r)], Bytes(full), "stage" + std::to_string(r)));
    }
    e.input = work;
    e.output = work;
    e.data_bytes = full;
  }
  if (n == 1) {
    e.done[0] = barrier(s, {ready_of(o, 0)});
    if (e.done[0] == kNoOp) e.done[0] = s.delay(Seconds(0));
    return e;  // one rank: its vector is already the result (and its own segment is all of it)
  }
  const std::uint32_t tag_rs = s.tag("ring reduce-scatter"), tag_ag = s.tag("ring allgather");
  std::vector<double> lat_of;  // per ring
  for (const auto& order : orders) lat_of.push_back(step_latency(p, lib, g, order));
  // The protocol's bytes on the wire per data byte (the data-movement check moves the data itself)
  // and its cap per ring flow (each ring carries a rail's channels).
  const double wire = o.with_data ? 1.0 : lib.nccl.active().wire_factor;
  const double cap =
      nccl_protocol_cap(lib, false, nccl_channels_per_ring(p, lib, R), R, static_cast<int>(g.nodes().size()));
  // The position in the ring that owns segment j after reduce-scatter is the one that received it
  // last. prev[r * n + i]: the last op of position i of ring r.
  std::vector<OpId> prev(static_cast<std::size_t>(R * n), kNoOp);
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < n; ++i)
      prev[static_cast<std::size_t>(r * n + i)] = ready_of(o, orders[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)]);
  if (steps.empty() && lib.nccl.active().ring_base_latency > 0) {
    const OpId start = barrier(s, prev);
    const OpId base = s.delay(Seconds(lib.nccl.active().ring_base_latency), s.tag("nccl base latency"));
    if (start != kNoOp) s.depend(base, start);
    std::fill(prev.begin(), prev.end(), base);
  }
  int step = 0;
  auto want = [&](int k) { return steps.empty() || std::find(steps.begin(), steps.end(), k) != steps.end(); };
  for (int phase = 0; phase < 2; ++phase) {
    const bool rs = phase == 0;
    if (rs ? !phases.reduce_scatter : !phases.allgather) continue;
    for (int k = 0; k < n - 1; ++k, ++step) {
      if (!want(step)) continue;
      const OpId bar = steps.empty() ? barrier(s, prev) : kNoOp;
      std::vector<OpId> now(static_cast<std::size_t>(R * n), kNoOp);
      for (int r = 0; r < R; ++r)
      for (int i = 0; i < n; ++i) {
        const auto& order = orders[static_cast<std::size_t>(r)];
        const int src = order[static_cast<std::size_t>(i)], dst = order[static_cast<std::size_t>((i + 1) % n)];
        const auto next = static_cast<std::size_t>(r * n + (i + 1) % n);
        // Reduce-scatter step k: position i sends segment (i - k) mod n. Allgather step k: position i
        // sends segment (i + 1 - k) mod n, which it owns (reduced) or received in the step before.
        const int seg = rs ? ((i - k) % n + n) % n : ((i + 1 - k) % n + n) % n;
        const double b = seg_bytes(r, seg);
        const Place& a = g.ranks[static_cast<std::size_t>(src)];
        const Place& c = g.ranks[static_cast<std::size_t>(dst)];
        const double lat = lat_of[static_cast<std::size_t>(r)];
        if (!o.with_data) {
          const OpId t = with_protocol_cap(
              s, transfer_after(s, bar, a, c, b * wire, cls, rs ? tag_rs : tag_ag, nullptr, nullptr, lat), cap);
          now[next] =
              rs ? [&] { const OpId red = s.compute(c, Seconds(gpu_reduce_time(p, c, b)), tag_rs); s.depend(red, t); return red; }()
                 : t;
          continue;
        }
        const DataRef from{work[static_cast<std::size_t>(src)], seg_off(r, seg)};
        const DataRef into{rs ? stage[static_cast<std::size_t>(dst)] : work[static_cast<std::size_t>(dst)], seg_off(r, seg)};
        const OpId t =
            with_protocol_cap(s, transfer_after(s, bar, a, c, b, cls, rs ? tag_rs : tag_ag, &from, &into, lat), cap);
        OpId last = t;
        if (rs) {
          const DataRef mine{work[static_cast<std::size_t>(dst)], seg_off(r, seg)};
          last = s.gpu_reduce(c, {mine, into}, mine, Bytes(b), Seconds(gpu_reduce_time(p, c, b)), tag_rs);
          s.depend(last, t);
        }
        now[next] = last;
      }
      prev = now;
    }
  }
  const OpId end = barrier(s, prev);
  for (int r = 0; r < n; ++r) e.done[static_cast<std::size_t>(r)] = end;
  if (o.with_data && (phases.reduce_scatter != phases.allgather)) {
    // Rank X owns chunk (its position in ring 0 + 1) mod n after reduce-scatter (all of its parts),
    // and contributes it to allgather.
    auto& ranges = phases.reduce_scatter ? e.out_range : e.in_range;
    ranges.assign(static_cast<std::size_t>(n), {0.0, 0.0});
    for (int x = 0; x < n; ++x) {
      const auto [cb, ce] = split(elems, n, (pos0[static_cast<std::size_t>(x)] + 1) % n);
      ranges[static_cast<std::size_t>(x)] = {static_cast<double>(cb) * o.elem_size, static_cast<double>(ce - cb) * o.elem_size};
    }
  }
  return e;
}

int ring_count(const GroupShape& g) { return g.rails >= 2 && g.nodes >= 2 ? g.rails : 1; }

double ring_schedule_ops(const GroupShape& g, RingPhases phases, bool full) {
  const double n = g.ranks, R = ring_count(g);
  if (g.ranks <= 1) return 1;
  const double rs_step = R * n * 2, ag_step = R * n;  // per link: a transfer (and a reduce)
  if (!full) return std::max(phases.reduce_scatter ? rs_step + 1 : 0.0, phases.allgather ? ag_step + 1 : 0.0);
  return 2 + (phases.reduce_scatter ? (n - 1) * (1 + rs_step) : 0.0) +
         (phases.allgather ? (n - 1) * (1 + ag_step) : 0.0);
}

double simulate_ring(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                     double full, RingPhases phases) {
  const int n = g.size();
  if (n == 1) return 0;
  double t = lib.nccl.active().ring_base_latency;
  const Options o;
  for (int phase = 0; phase < 2; ++phase) {
    if (phase == 0 ? !phases.reduce_scatter : !phases.allgather) continue;
    sched::Schedule s;
    emit_ring(s, p, lib, g, full, o, {phase == 0, phase == 1}, {0});
    t += (n - 1) * e.run(s, p).makespan;
  }
  return t;
}

Estimate estimate_ring(const platform::Platform& p, const LibraryParams& lib, const Group& g, double full,
                       RingPhases phases) {
  Estimate est;
  const int n = g.size();
  if (n == 1) {
    est.bottleneck = "-";
    return est;
  }
  const std::vector<std::vector<int>> orders = ring_orders(p, g, lib.nccl.numa_restricted);
  const double seg =
      full / n / static_cast<double>(orders.size()) * lib.nccl.active().wire_factor;  // per ring, on the wire
  const int R = static_cast<int>(orders.size());
  const double cap =
      nccl_protocol_cap(lib, false, nccl_channels_per_ring(p, lib, R), R, static_cast<int>(g.nodes().size()));
  // One step's flows (every ring's). Nodes repeat the same pattern, so two nodes (and the hops
  // that join them) carry every distinct load: the rings' own structure makes the bound exact per node.
  std::vector<std::pair<std::uint32_t, double>> flows;
  std::vector<double> lat;  // per flow: the ring's step latency (see step_latency) and arbitration
  std::vector<Place> dst;   // per flow: the GPU that receives (and, in a reduce-scatter step, adds) it
  const auto nodes = g.nodes();
  for (const auto& order : orders) {
    const double step = step_latency(p, lib, g, order);
    for (int i = 0; i < n; ++i) {
      const Place& a = g.ranks[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])];
      const Place& c = g.ranks[static_cast<std::size_t>(order[static_cast<std::size_t>((i + 1) % n)])];
      if (nodes.size() > 2 && a.node != nodes[0] && a.node != nodes[1]) continue;
      flows.emplace_back(p.path_id(a, c), seg);
      lat.push_back(step + p.options().arbitration_latency);
      dst.push_back(c);
    }
  }
  Bound b = bottleneck_bound(p, flows);
  if (seg / cap > b.time) {  // the protocol's cap on one ring's flow binds before the links
    b.time = seg / cap;
    b.resource = eval::kLimitRateCap;
    b.cap_what = nccl_protocol_cap_what(lib);
  }
  // A step as the schedule runs it: each flow ends at its hop's latency plus its bound (its own
  // bottleneck, or the protocol's cap), and in a reduce-scatter step each GPU then adds what each
  // ring brought it, one reduce per incoming flow on its compute, which runs them as they come: a
  // GPU's last reduce ends at max over k of (the k-th arrival + the work of the reduces arriving
  // from then on) (a work-conserving server). The step ends with the slowest GPU. Until 2026-12-07
  // the closed form charged every step the bottleneck flow and then a GPU's whole reduce, which on
  // multi-rail nodes (DGX-A100: 8 rings; the NVLink hops end long before the NIC hops, and most
  // reduces run meanwhile) put it 13% above the simulation at 16 GPUs.
  const std::vector<double> bound = flow_bound_times(p, flows);
  std::vector<double> end(flows.size());
  for (std::size_t f = 0; f < flows.size(); ++f) end[f] = lat[f] + std::max(bound[f], seg / cap);
  double ag_step = 0;
  for (double t : end) ag_step = std::max(ag_step, t);
  double rs_step = 0;
  if (phases.reduce_scatter) {
    const double work = gpu_reduce_time(p, g.ranks[0], full / n / R);  // one ring's part, data bytes
    std::map<std::pair<int, int>, std::vector<double>> arrivals;       // by (node, GPU)
    for (std::size_t f = 0; f < flows.size(); ++f) arrivals[{dst[f].node, dst[f].index}].push_back(end[f]);
    for (auto& [gpu, t] : arrivals) {
      std::sort(t.begin(), t.end());
      for (std::size_t k = 0; k < t.size(); ++k)
        rs_step = std::max(rs_step, t[k] + static_cast<double>(t.size() - k) * work);
    }
  }
  est.time = (phases.reduce_scatter ? (n - 1) * rs_step : 0.0) + (phases.allgather ? (n - 1) * ag_step : 0.0) +
             lib.nccl.active().ring_base_latency;
  est.bottleneck = bound_label(p, b);
  return est;
}

namespace {

class RingAllReduce final : public Algorithm {
public:
  Kind kind() const override { return Kind::AllReduce; }
  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes,
               const Options& o) const override {
    return emit_ring(s, p, lib, g, bytes, o, {true, true});
  }
  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes) const override {
    return estimate_ring(p, lib, g, bytes, {true, true});
  }
  double simulate(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                  double bytes) const override {
    return simulate_ring(e, p, lib, g, bytes, {true, true});
  }
  double schedule_ops(const LibraryParams&, const GroupShape& g, double, bool full) const override {
    return ring_schedule_ops(g, {true, true}, full);
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_nccl_ring() { return std::make_unique<RingAllReduce>(); }

}  // namespace ffsim::coll
