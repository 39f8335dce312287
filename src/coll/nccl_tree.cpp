// "nccl_tree": NCCL's tree allreduce (src/device/all_reduce.h runTreeUpDown): inside a node the
// GPUs form a chain whose head (the GPU nearest the NIC) joins NCCL's double binary tree between
// nodes; each tree carries half of the data, chunk-pipelined. Reduce flows up the chains and the
// tree to the root; the result flows back down the tree and the chains.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <limits>

#include "coll/common.hpp"
#include "coll/dbt.hpp"
#include "coll/ring.hpp"
#include "core/error.hpp"

namespace ffsim::coll {

using sched::DataRef;
using sched::OpId;
using sched::Place;

namespace {

double hop(const platform::Platform& p, const LibraryParams& lib, const Place& a, const Place& b) {
  return nccl_hop_latency(p, lib, a, b, true);
}

class NcclTree final : public Algorithm {
public:
  Kind kind() const override { return Kind::AllReduce; }

  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double S,
               const Options& o) const override {
    const auto cls = o.cls == sched::TrafficClass::Other ? sched::TrafficClass::NCCL : o.cls;
    // Per rail (one per compute NIC of a multi-NIC node, else one) a pair of trees over the rail's
    // chains: each node's ranks in the rail's ring order, reversed so that the head (index 0) is
    // the GPU nearest the rail's NIC (the ring leaves the node through it).
    const auto orders = ring_orders(p, g, lib.nccl.numa_restricted);
    const int R = static_cast<int>(orders.size());
    const int n = g.size();
    const std::size_t elems = o.with_data ? static_cast<std::size_t>(S / o.elem_size) : 0;
    Emitted e;
    std::vector<sched::BufferId> work, stage;  // per rank: the vector, and a staging area per child slot (3)
    if (o.with_data) {
      for (int r = 0; r < n; ++r) {
        work.push_back(s.buffer(g.ranks[static_cast<std::size_t>(r)], Bytes(S), "w" + std::to_string(r)));
        stage.push_back(s.buffer(g.ranks[static_cast<std::size_t>(r)], Bytes(3 * S), "st" + std::to_string(r)));
      }
      e.input = work;
      e.output = work;
      e.data_bytes = S;
    }
    const std::uint32_t t_up = s.tag("nccl tree up"), t_down = s.tag("nccl tree down");
    // The protocol's bytes on the wire per data byte (the data-movement check moves the data itself),
    // and its cap per flow: each tree of a rail's pair is half of the rail's channels.
    const double wire = o.with_data ? 1.0 : lib.nccl.active().wire_factor;
    const double cap =
        nccl_protocol_cap(lib, true, nccl_channels_per_ring(p, lib, R) / 2, R, static_cast<int>(g.nodes().size()));
    auto capped = [&](OpId x) { return with_protocol_cap(s, x, cap); };
    // NCCL's base latency of the protocol's tree (tuning.cc baseLat: the launch and the kernel's
    // setup), once per operation before any rank moves, as the ring's (emit_ring) and as the closed
    // form (estimate) charge it; Simple's is 0. Until 2026-12-07 the schedule left it out: an LL tree
    // ran 4.4 us below its closed form.
    std::vector<OpId> start(static_cast<std::size_t>(n), kNoOp);
    for (int r = 0; r < n; ++r) start[static_cast<std::size_t>(r)] = ready_of(o, r);
    if (n > 1 && lib.nccl.active().tree_base_latency > 0) {
      const OpId all = barrier(s, start);
      const OpId base = s.delay(Seconds(lib.nccl.active().tree_base_latency), s.tag("nccl base latency"));
      if (all != kNoOp) s.depend(base, all);
      std::fill(start.begin(), start.end(), base);
    }
    std::vector<std::vector<OpId>> finals(static_cast<std::size_t>(n));
    for (int rail = 0; rail < R; ++rail) {
      std::vector<std::vector<int>> chain;
      for (int r : orders[static_cast<std::size_t>(rail)]) {
        if (chain.empty() || g.ranks[static_cast<std::size_t>(r)].node !=
                                 g.ranks[static_cast<std::size_t>(chain.back().front())].node)
          chain.emplace_back();
        chain.back().push_back(r);
      }
      for (auto& c : chain) std::reverse(c.begin(), c.end());
      const int N = static_cast<int>(chain.size());
      const auto trees = double_binary_tree(N);
      // The rail carries part `rail` of the vector; its tree t (a channel in NCCL's terms) carries
      // half t of that, in chunks of NCCL's tree chunk for that channel's bytes (nccl_tree_chunk).
      struct Range {
        double off, len;
      };
      const auto [p0, p1] = o.with_data ? split(elems, R, rail) : std::make_pair<std::size_t, std::size_t>(0, 0);
      std::array<std::vector<Range>, 2> chunks;
      for (int t = 0; t < 2; ++t) {
        const auto [h0, h1] = o.with_data ? split(p1 - p0, 2, t) : std::make_pair<std::size_t, std::size_t>(0, 0);
        const double half = o.with_data ? static_cast<double>(h1 - h0) * o.elem_size : S / R / 2;
        const double base = o.with_data ? static_cast<double>(p0 + h0) * o.elem_size : (rail + t * 0.5) * S / R;
        // Whole chunks and a shorter last one, as NCCL's loop cuts them (all_reduce.h, runTreeUpDown:
        // nelem = min(chunkSize, size - offset)).
        const double C = nccl_tree_chunk(lib, S / R / 2, n, N);
        const Cut cu = cut(half, C, n);
        const auto K = static_cast<int>(cu.count);
        for (int c = 0; c < K; ++c) {
          if (o.with_data) {
            const auto [c0, c1] = cut_elems(h1 - h0, C, o.elem_size, K, c);
            chunks[static_cast<std::size_t>(t)].push_back(
                Range{base + static_cast<double>(c0) * o.elem_size, static_cast<double>(c1 - c0) * o.elem_size});
          } else {
            chunks[static_cast<std::size_t>(t)].push_back(Range{base + cu.off(c), cu.len(c)});
          }
        }
      }
      for (int t = 0; t < 2; ++t) {
        const auto& tr = trees[static_cast<std::size_t>(t)];
        // Rank-level tree: parent and children of every rank (chain + node tree at the heads).
        std::vector<int> parent(static_cast<std::size_t>(n), -1);
        std::vector<std::vector<int>> children(static_cast<std::size_t>(n));
        for (int v = 0; v < N; ++v) {
          const auto& ch = chain[static_cast<std::size_t>(v)];
          for (std::size_t i = 1; i < ch.size(); ++i) {
            parent[static_cast<std::size_t>(ch[i])] = ch[i - 1];
            children[static_cast<std::size_t>(ch[i - 1])].push_back(ch[i]);
          }
          if (tr[static_cast<std::size_t>(v)].parent >= 0)
            parent[static_cast<std::size_t>(ch[0])] = chain[static_cast<std::size_t>(tr[static_cast<std::size_t>(v)].parent)][0];
          for (int k : tr[static_cast<std::size_t>(v)].child)
            if (k >= 0) children[static_cast<std::size_t>(ch[0])].push_back(chain[static_cast<std::size_t>(k)][0]);
        }
        // Post-order over ranks (children first).
        int root = 0;
        for (int r = 0; r < n; ++r)
          if (parent[static_cast<std::size_t>(r)] < 0) root = r;
        std::vector<int> post;
        std::vector<std::pair<int, std::size_t>> st{{root, 0}};
        while (!st.empty()) {
          auto& [r, i] = st.back();
          if (i < children[static_cast<std::size_t>(r)].size()) {
            const int c = children[static_cast<std::size_t>(r)][i++];
            st.push_back({c, 0});
          } else {
            post.push_back(r);
            st.pop_back();
          }
        }
        FFSIM_ASSERT(static_cast<int>(post.size()) == n, "the NCCL tree does not span every rank");
        std::vector<OpId> up_last(static_cast<std::size_t>(n), kNoOp), down_last(static_cast<std::size_t>(n), kNoOp);
        std::vector<OpId> sent(static_cast<std::size_t>(n), kNoOp), fin(static_cast<std::size_t>(n), kNoOp);
        std::vector<std::vector<OpId>> down_now(static_cast<std::size_t>(n));  // a rank's sends of this chunk down
        for (const Range& rg : chunks[static_cast<std::size_t>(t)]) {
          // Up: each rank sums its children's partials into its vector, then sends it to its parent.
          for (int r : post) {
            const Place& me = g.ranks[static_cast<std::size_t>(r)];
            // The chunk's data is ready once the children's parts arrived and are added; its send
            // then waits only for this connection's previous chunk (several steps in flight).
            OpId ready = start[static_cast<std::size_t>(r)];
            const auto& kids = children[static_cast<std::size_t>(r)];
            if (!kids.empty()) {
              std::vector<DataRef> in;
              std::vector<OpId> got;
              for (std::size_t k = 0; k < kids.size(); ++k) {
                got.push_back(sent[static_cast<std::size_t>(kids[k])]);
                if (o.with_data) in.push_back(DataRef{stage[static_cast<std::size_t>(r)], static_cast<double>(k) * S + rg.off});
              }
              const double tt = gpu_reduce_time(p, me, rg.len) * static_cast<double>(kids.size()) / 1.0;
              OpId red;
              if (o.with_data) {
                const DataRef mine{work[static_cast<std::size_t>(r)], rg.off};
                in.insert(in.begin(), mine);
                red = s.gpu_reduce(me, in, mine, Bytes(rg.len), Seconds(tt), t_up);
              } else {
                red = s.compute(me, Seconds(tt), t_up);
              }
              for (OpId x : got) s.depend(red, x);
              if (ready != kNoOp) s.depend(red, ready);
              ready = red;
            }
            const int par = parent[static_cast<std::size_t>(r)];
            if (par < 0) {
              fin[static_cast<std::size_t>(r)] = ready;
              up_last[static_cast<std::size_t>(r)] = ready;
              continue;
            }
            const Place& pp = g.ranks[static_cast<std::size_t>(par)];
            const auto& pk = children[static_cast<std::size_t>(par)];
            const auto slot = static_cast<double>(std::find(pk.begin(), pk.end(), r) - pk.begin());
            OpId x;
            const OpId prev = up_last[static_cast<std::size_t>(r)];
            if (o.with_data) {
              const DataRef from{work[static_cast<std::size_t>(r)], rg.off}, to{stage[static_cast<std::size_t>(par)], slot * S + rg.off};
              x = capped(pipelined_hop_transfer(s, p, hop(p, lib, me, pp), ready, prev, me, pp, rg.len, cls, t_up,
                                                &from, &to));
            } else {
              x = capped(
                  pipelined_hop_transfer(s, p, hop(p, lib, me, pp), ready, prev, me, pp, rg.len * wire, cls, t_up));
            }
            sent[static_cast<std::size_t>(r)] = x;
            up_last[static_cast<std::size_t>(r)] = x;
          }
          // Down: the root's sum to every rank, parents before children.
          for (auto it = post.rbegin(); it != post.rend(); ++it) {
            const int r = *it;
            const int par = parent[static_cast<std::size_t>(r)];
            if (par < 0) continue;
            const Place& me = g.ranks[static_cast<std::size_t>(r)];
            const Place& pp = g.ranks[static_cast<std::size_t>(par)];
            // The parent has the chunk's result (and this rank's part of it went up): the hop's
            // latency runs from then, the bytes follow the parent's previous chunk down. NCCL's
            // Simple primitives copy a step to all of a rank's send peers at once (one pass, several
            // destinations), so the sends of one chunk to the two children run side by side, and the
            // next chunk's wait for both (a step waits for every peer's credit).
            const OpId before = barrier(s, {fin[static_cast<std::size_t>(par)], sent[static_cast<std::size_t>(r)]});
            const OpId prev = down_last[static_cast<std::size_t>(par)];
            OpId x;
            if (o.with_data) {
              const DataRef from{work[static_cast<std::size_t>(par)], rg.off}, to{work[static_cast<std::size_t>(r)], rg.off};
              x = capped(pipelined_hop_transfer(s, p, hop(p, lib, pp, me), before, prev, pp, me, rg.len, cls, t_down,
                                                &from, &to));
            } else {
              x = capped(
                  pipelined_hop_transfer(s, p, hop(p, lib, pp, me), before, prev, pp, me, rg.len * wire, cls, t_down));
            }
            fin[static_cast<std::size_t>(r)] = x;
            down_now[static_cast<std::size_t>(par)].push_back(x);
          }
          for (int r = 0; r < n; ++r) {
            auto& now = down_now[static_cast<std::size_t>(r)];
            if (now.empty()) continue;
            down_last[static_cast<std::size_t>(r)] = now.size() == 1 ? now.front() : barrier(s, now);
            now.clear();
          }
          for (int r = 0; r < n; ++r) finals[static_cast<std::size_t>(r)].push_back(fin[static_cast<std::size_t>(r)]);
        }
      }
    }
    for (int r = 0; r < n; ++r) {
      OpId d = barrier(s, finals[static_cast<std::size_t>(r)]);
      if (d == kNoOp) d = s.delay(Seconds(0));
      e.done.push_back(d);
    }
    return e;
  }

  // Per rail (R rings' orders) and tree (2), the half's K chunks; per chunk and rank: going up the
  // reduce of its children's data (at most every rank), the send to its parent (n - 1: a software
  // delay and the transfer); going down a barrier, the delay and the transfer (n - 1 again) and a
  // barrier over a parent's sends down (at most one per node: only a chain head has two or more
  // children); every rank's done at the end:
  //   ops <= R x 2 x K x (n + 2 (n - 1) + 3 (n - 1) + N) + n, and NCCL's base latency where its
  // protocol has one: a barrier and a delay (2).
  double schedule_ops(const LibraryParams& lib, const GroupShape& g, double S, bool) const override {
    if (g.ranks <= 1) return 1;  // one rank: its done, a zero-time op
    const double n = g.ranks, N = g.nodes, R = ring_count(g);
    const double K = piece_count_real(S / R / 2, nccl_tree_chunk(lib, S / R / 2, g.ranks, g.nodes));
    return R * 2 * K * (n + 5 * (n - 1) + N) + n + 2;
  }

  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) const override {
    // Steady state per chunk: every hop of one node busy at once (chain transfers both ways, the
    // head's network sends and receives for an interior node, every rail's trees); the hop
    // latencies run beside the previous chunks' sends. Fill: the first chunk's trip up the chain and
    // the tree and down again, each hop at its latency plus the two trees' chunks (which cross it
    // together) at its path's own rate.
    Estimate est;
    const auto orders = ring_orders(p, g, lib.nccl.numa_restricted);
    const int R = static_cast<int>(orders.size());
    const auto nodes = g.ranks_by_node();
    const int N = static_cast<int>(nodes.size());
    const double C = nccl_tree_chunk(lib, S / R / 2, g.size(), N);
    const Cut cu = cut(S / R / 2, C);  // whole chunks and a shorter last one, as emit cuts them
    const double K = cu.count;
    const double c = cu.piece * lib.nccl.active().wire_factor;  // a whole chunk's bytes on the wire
    const double cap = nccl_protocol_cap(lib, true, nccl_channels_per_ring(p, lib, R) / 2, R, N);
    std::vector<std::pair<std::uint32_t, double>> flows;
    double chain_hops = 0, net_hop = 0;
    // Per chunk of each tree a node's head sends (and receives) one chunk per tree link it has: up
    // to its parent, down to each child. The busiest node counts: 4 links over both trees from 4
    // nodes on (interior in one tree: a parent and 2 children; a leaf in the other), 2 on 2 nodes.
    const auto trees = double_binary_tree(N);
    int links = 0;
    for (int v = 0; v < N; ++v) {
      int l = 0;
      for (const auto& tr : trees) {
        const auto& t = tr[static_cast<std::size_t>(v)];
        l += (t.parent >= 0) + (t.child[0] >= 0) + (t.child[1] >= 0);
      }
      links = std::max(links, l);
    }
    auto alone = [&](const Place& a, const Place& x) {
      return nccl_path_latency(p, hop(p, lib, a, x), a, x) +
             std::max(bottleneck_bound(p, {{p.path_id(a, x), 2 * c}}).time, c / cap);
    };
    for (const auto& order : orders) {  // every rail's trees at once
      std::vector<int> ch, next;
      for (int r : order) {
        if (g.ranks[static_cast<std::size_t>(r)].node == g.ranks[0].node) ch.push_back(r);
        else if (N > 1 && g.ranks[static_cast<std::size_t>(r)].node == g.ranks[static_cast<std::size_t>(nodes[1].front())].node)
          next.push_back(r);
      }
      std::reverse(ch.begin(), ch.end());
      std::reverse(next.begin(), next.end());
      for (std::size_t i = 1; i < ch.size(); ++i) {
        const Place& a = g.ranks[static_cast<std::size_t>(ch[i])];
        const Place& b = g.ranks[static_cast<std::size_t>(ch[i - 1])];
        // Both trees use the chain both ways: 2 trees x (up + down) per chunk time.
        flows.emplace_back(p.path_id(a, b), 2 * c);
        flows.emplace_back(p.path_id(b, a), 2 * c);
        if (&order == &orders.front()) chain_hops += alone(a, b);  // the rails' chains are alike
      }
      if (N > 1) {
        const Place head = g.ranks[static_cast<std::size_t>(ch.front())];
        const Place peer = g.ranks[static_cast<std::size_t>(next.front())];
        flows.emplace_back(p.path_id(head, peer), links * c);
        flows.emplace_back(p.path_id(peer, head), links * c);
        net_hop = std::max(net_hop, alone(head, peer));
      }
    }
    Bound b = bottleneck_bound(p, flows);
    if (c / cap > b.time) {  // the protocol's cap on each tree's flow binds before the links
      b.time = c / cap;
      b.resource = eval::kLimitRateCap;
      b.cap_what = nccl_protocol_cap_what(lib);
    }
    const int depth = std::max(tree_depth(trees[0]), tree_depth(trees[1]));
    const double per = b.time;  // the hop latencies overlap the previous chunks' sends: in the fill only
    // K - 1 periods after the first chunk's trip, the last one the shorter chunk's.
    est.time = (K > 1 ? K - 2 + cu.last_share() : 0.0) * per + 2 * (chain_hops + depth * net_hop) +
               lib.nccl.active().tree_base_latency;
    est.bottleneck = bound_label(p, b);
    return est;
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_nccl_tree() { return std::make_unique<NcclTree>(); }

}  // namespace ffsim::coll
