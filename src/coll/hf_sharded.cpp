// "hf_reduce_scatter" and "hf_allgather": the sharded collectives of FSDP run on HFReduce's host
// path [I] (HaiScale is built on HFReduce, arXiv 2408.14158 Sec. IV-V; how its FSDP moves data is
// not published). Both move a byte over a GPU's PCIe link at most once each way, reduce or stage on
// the CPUs, and cross the network once per node rather than once per GPU:
//   reduce-scatter: every GPU copies its whole vector down (D2H, pieces interleaved over the
//     sockets), the socket's cores sum the node's copies into the node's partial on the NIC's
//     socket, a ring between nodes over RDMA reduce-scatters the partials block by block (node v
//     ends with block v: the shards of its GPUs), and each GPU gets only its shard back (H2D);
//   allgather: each GPU copies its shard down, a ring between nodes passes every node's block
//     around, and every block (as it arrives) goes up to each GPU (GDRCopy: a socket's cores read
//     it once and write it to their GPUs; or cudaMemcpy per GPU).
// Blocks are cut into pieces of at most the HFReduce chunk, pipelined through the stages; each
// stage pays the library's software overhead per piece; the D2H staging slots are reused as in
// hfreduce (a piece's copies wait for the reduce of the piece `staging_buffers` earlier). With one
// GPU per node the reduce-scatter's copies land in the node's partial directly (nothing to sum).
// Two algorithms, one file: they share every piece of geometry and are each other's mirror image.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <cmath>

#include "coll/common.hpp"
#include "core/error.hpp"

namespace ffsim::coll {

using sched::DataRef;
using sched::OpId;
using sched::Place;

namespace {

struct Span {
  double off = 0;  // bytes into the full vector
  double len = 0;
};

Span intersect(const Span& a, const Span& b) {
  const double lo = std::max(a.off, b.off), hi = std::min(a.off + a.len, b.off + b.len);
  return hi > lo ? Span{lo, hi - lo} : Span{lo, 0};
}

/// Shards, blocks and pieces of a full vector of `full` bytes over the group's nodes.
struct Geometry {
  int N = 0, L = 0, n = 0;  // nodes, GPUs per node, ranks
  int sN = 0;               // the NIC's socket: host buffers of the ring live there
  int sockets = 1;
  std::vector<std::vector<int>> by_node;
  std::vector<int> gpu_socket;              // per local GPU index
  std::vector<Span> shard;                  // per position v * L + l
  std::vector<std::vector<Span>> pieces;    // per node's block
  int max_pieces = 1;
  /// A node's work in NCCL's loop order: piece j of every block (in the ring's block order
  /// `block_at(k)`, k = 0..N-1) before piece j + 1 of any, so that the first pieces finish their
  /// trip (and go up to the GPUs) while later ones are still coming down. Returns (k, block, j).
  template <class F>
  std::vector<std::array<int, 3>> loop_order(F block_at) const {
    std::vector<std::array<int, 3>> w;
    for (int j = 0; j < max_pieces; ++j)
      for (int k = 0; k < N; ++k) {
        const int b = block_at(k);
        if (j < static_cast<int>(pieces[static_cast<std::size_t>(b)].size())) w.push_back({k, b, j});
      }
    return w;
  }
  Span block(int v) const {
    const Span a = shard[static_cast<std::size_t>(v * L)], b = shard[static_cast<std::size_t>(v * L + L - 1)];
    return Span{a.off, b.off + b.len - a.off};
  }
  Place gpu(const Group& g, int v, int l) const {
    return g.ranks[static_cast<std::size_t>(by_node[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)])];
  }
  int rank(int v, int l) const { return by_node[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)]; }
};

Geometry geometry(const platform::Platform& p, const LibraryParams& lib, const Group& g, double full, const Options& o,
                  const char* name) {
  Geometry G;
  G.by_node = g.ranks_by_node();
  G.N = static_cast<int>(G.by_node.size());
  G.L = static_cast<int>(G.by_node.front().size());
  G.n = g.size();
  for (const auto& r : G.by_node)
    if (static_cast<int>(r.size()) != G.L)
      throw ValueError(std::string(name) + " needs the same number of GPUs on every node (whole nodes, or the same GPUs of each)");
  const hw::NodeSpec& node = p.cluster().node;
  G.sockets = static_cast<int>(node.sockets.size());
  const int nic = node.nics.empty() ? -1 : p.nic_for(Place::dram(g.ranks[0].node, 0));
  G.sN = nic < 0 ? 0 : socket_index(node, node.socket_of_port(node.nics[static_cast<std::size_t>(nic)].port).name);
  for (int l = 0; l < G.L; ++l)
    G.gpu_socket.push_back(socket_index(
        node, node.socket_of_port(node.gpus[static_cast<std::size_t>(G.gpu(g, 0, l).index)].port).name));
  // Shards in node-major order (position v * L + l); equal byte fractions without data, whole
  // elements (sizes differing by at most one) with data.
  const auto elems = o.with_data ? static_cast<std::size_t>(std::llround(full / o.elem_size)) : 0;
  for (int i = 0; i < G.n; ++i) {
    if (!o.with_data) {
      G.shard.push_back(Span{i * (full / G.n), full / G.n});
      continue;
    }
    const auto [a, b] = split(elems, G.n, i);
    G.shard.push_back(Span{static_cast<double>(a) * o.elem_size, static_cast<double>(b - a) * o.elem_size});
  }
  const double chunk = lib.hfreduce.chunk_bytes > 0 ? lib.hfreduce.chunk_bytes : full;
  for (int v = 0; v < G.N; ++v) {
    const Span bl = G.block(v);
    // Whole chunks and a shorter last one, as the library's pipeline cuts them.
    const Cut cu = cut(bl.len, chunk, G.n);
    const auto m = static_cast<int>(cu.count);
    std::vector<Span> ps;
    if (!o.with_data) {
      for (int j = 0; j < m; ++j) ps.push_back(Span{bl.off + cu.off(j), cu.len(j)});
    } else {
      const auto be = static_cast<std::size_t>(std::llround(bl.len / o.elem_size));
      for (int j = 0; j < m; ++j) {
        const auto [a, b] = cut_elems(be, chunk, o.elem_size, m, j);
        ps.push_back(Span{bl.off + static_cast<double>(a) * o.elem_size, static_cast<double>(b - a) * o.elem_size});
      }
    }
    G.max_pieces = std::max(G.max_pieces, static_cast<int>(ps.size()));
    G.pieces.push_back(ps);
  }
  return G;
}

/// Emission helpers shared by both algorithms: transfers and reduces with or without data, and
/// the per-piece software overhead.
struct Emitter {
  sched::Schedule& s;
  const Options& o;
  sched::TrafficClass cls;
  double overhead_s;
  std::uint32_t t_ovh;

  OpId move(Place a, Place b, DataRef src, DataRef dst, double bytes, std::uint32_t tag) const {
    return o.with_data ? s.transfer(a, b, src, dst, Bytes(bytes), cls, tag) : s.transfer(a, b, Bytes(bytes), cls, tag);
  }
  void dep(OpId a, OpId b) const {
    if (b != kNoOp) s.depend(a, b);
  }
  OpId overhead(OpId after) const {
    if (overhead_s <= 0) return after;
    const OpId d = s.delay(Seconds(overhead_s), t_ovh);
    dep(d, after);
    return d;
  }
  /// An op that completes once all of `ops` did, or once `fallback` did when `ops` is empty (a
  /// zero-time op either way, so that every rank has a "done").
  OpId done(const std::vector<OpId>& ops, OpId fallback) const {
    const OpId b = barrier(s, ops);
    if (b != kNoOp) return b;
    const OpId d = s.delay(Seconds(0));
    dep(d, fallback);
    return d;
  }
};

// The host path's writes to GPUs: GDRCopy (the socket's cores read the range once and write it to
// each GPU that takes it, at the per-thread write cap) or cudaMemcpy (each GPU's copy engine reads
// it). `to[l]`: the ranges GPU l takes (empty: none). Returns per GPU its last write.
// Each GPU's writes are a chain of their own (`gpu_last`: a core per GPU, as the allreduce writes
// the socket's GPUs at once), and the socket's reads another (`socket_last`). Until 2026-12-01 one
// chain per socket took every piece in turn, so where consecutive pieces belong to one GPU (a
// reduce-scatter's shards, a one-node allgather's own block) the socket wrote one GPU at a time:
// 2 GPUs on one node took 14.6 ms for a 128 MiB reduce-scatter against the closed form's 7.6 ms.
std::vector<OpId> write_up(const Emitter& em, const LibraryParams& lib, const Group& g,
                           const Geometry& G, int v, sched::BufferId host, const std::vector<sched::BufferId>& gpu_buf,
                           const std::vector<std::vector<Span>>& to, OpId ready,
                           std::vector<OpId>& socket_last, std::vector<OpId>& gpu_last, std::uint32_t tag) {
  const int nd = G.gpu(g, v, 0).node;
  std::vector<OpId> landed(static_cast<std::size_t>(G.L), kNoOp);
  auto ref = [&](sched::BufferId b, double off) { return DataRef{b, off}; };
  if (lib.hfreduce.h2d == "gdrcopy") {
    for (int q = 0; q < G.sockets; ++q) {
      bool any = false;
      for (int l = 0; l < G.L; ++l) any = any || (G.gpu_socket[static_cast<std::size_t>(l)] == q && !to[static_cast<std::size_t>(l)].empty());
      if (!any) continue;
      const OpId start = em.overhead(socket_last[static_cast<std::size_t>(q)]);
      // The cores read the union of what their GPUs take once.
      std::vector<Span> want;
      for (int l = 0; l < G.L; ++l)
        if (G.gpu_socket[static_cast<std::size_t>(l)] == q) want.insert(want.end(), to[static_cast<std::size_t>(l)].begin(), to[static_cast<std::size_t>(l)].end());
      std::sort(want.begin(), want.end(), [](const Span& a, const Span& b) { return a.off < b.off; });
      double read = 0, reach = -1;
      for (const Span& x : want) {
        const double lo = std::max(x.off, reach);
        if (x.off + x.len > lo) read += x.off + x.len - lo;
        reach = std::max(reach, x.off + x.len);
      }
      const OpId rd = em.s.transfer(Place::dram(nd, G.sN), Place::cpu(nd, q), Bytes(read), em.cls, tag);
      em.dep(rd, start);
      em.dep(rd, ready);
      socket_last[static_cast<std::size_t>(q)] = rd;
      for (int l = 0; l < G.L; ++l) {
        if (G.gpu_socket[static_cast<std::size_t>(l)] != q) continue;
        for (const Span& x : to[static_cast<std::size_t>(l)]) {
          const OpId w = em.move(Place::cpu(nd, q), G.gpu(g, v, l), ref(host, x.off),
                                 ref(gpu_buf.empty() ? 0 : gpu_buf[static_cast<std::size_t>(l)], x.off), x.len, tag);
          em.s.set_rate_cap(w, lib.hfreduce.gdrcopy_write_bandwidth);
          em.dep(w, em.overhead(gpu_last[static_cast<std::size_t>(l)]));
          em.dep(w, ready);
          gpu_last[static_cast<std::size_t>(l)] = w;
          landed[static_cast<std::size_t>(l)] = w;
        }
      }
    }
  } else {
    for (int l = 0; l < G.L; ++l)
      for (const Span& x : to[static_cast<std::size_t>(l)]) {
        const OpId w = em.move(Place::dram(nd, G.sN), G.gpu(g, v, l), ref(host, x.off),
                               ref(gpu_buf.empty() ? 0 : gpu_buf[static_cast<std::size_t>(l)], x.off), x.len, tag);
        em.dep(w, em.overhead(gpu_last[static_cast<std::size_t>(l)]));
        em.dep(w, ready);
        gpu_last[static_cast<std::size_t>(l)] = w;
        landed[static_cast<std::size_t>(l)] = w;
      }
  }
  return landed;
}

// Closed forms: one node's loads over the whole collective, as (path, bytes).
using Loads = std::vector<std::pair<std::uint32_t, double>>;

// The ring's `bytes` each way between node 0's and node 1's NIC sockets (none on one node); returns
// the hop's network latency.
double ring_loads(const platform::Platform& p, const Geometry& G, const Group& g, double bytes, Loads& flows) {
  if (G.N < 2) return 0;
  const int nd = G.gpu(g, 0, 0).node, peer = G.gpu(g, 1, 0).node;
  flows.emplace_back(p.path_id(Place::dram(nd, G.sN), Place::dram(peer, G.sN)), bytes);
  flows.emplace_back(p.path_id(Place::dram(peer, G.sN), Place::dram(nd, G.sN)), bytes);
  return p.path(p.path_id(Place::dram(nd, G.sN), Place::dram(peer, G.sN))).latency;
}

// The writes up to node 0's GPUs, `each` bytes per GPU: GDRCopy (the cores of each socket read
// `read(q)` bytes from the NIC's socket once, then write each GPU at the per-thread rate) or
// cudaMemcpy (each GPU's copy engine reads its bytes). Returns the GDRCopy write time (0 without).
template <class Read>
double h2d_loads(const platform::Platform& p, const LibraryParams& lib, const Geometry& G, const Group& g, double each,
                 Read read, Loads& flows) {
  const int nd = G.gpu(g, 0, 0).node;
  const bool gdr = lib.hfreduce.h2d == "gdrcopy";
  for (int q = 0; q < G.sockets && gdr; ++q)
    if (read(q) > 0) flows.emplace_back(p.path_id(Place::dram(nd, G.sN), Place::cpu(nd, q)), read(q));
  for (int l = 0; l < G.L; ++l) {
    const Place from = gdr ? Place::cpu(nd, G.gpu_socket[static_cast<std::size_t>(l)]) : Place::dram(nd, G.sN);
    flows.emplace_back(p.path_id(from, G.gpu(g, 0, l)), each);
  }
  return gdr ? each / lib.hfreduce.gdrcopy_write_bandwidth : 0.0;
}

// The two classes' schedule_ops (their comments derive them); `full`: the vector in node blocks.
double sharded_schedule_ops(const LibraryParams& lib, const GroupShape& g, double full, bool reduce_scatter) {
  if (g.ranks <= 1 || full <= 0) return g.ranks + 1.0;  // no_traffic: a zero-time op per rank
  const double N = g.nodes, L = g.ranks_per_node, Q = g.sockets;
  const double chunk = lib.hfreduce.chunk_bytes > 0 ? lib.hfreduce.chunk_bytes : full;
  const double m = piece_count_real(full / N, chunk);
  const double spans = m + L - 1;
  if (reduce_scatter) return N * (N * m * (L == 1 ? 2 : L + 2)) + 4 * m * N * (N - 1) + N * 4 * spans + N * (1 + L);
  return N * (2 * spans + m) + 2 * m * N * (N - 1) + N * (N * m * (2 * Q + 2 * L) + 4 * L) + N * (1 + L);
}

// ---------------------------------------------------------------------------------------------
class HostReduceScatter final : public Algorithm {
public:
  Kind kind() const override { return Kind::ReduceScatter; }

  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double S,
               const Options& o) const override {
    if (g.size() == 1) return no_traffic(s, g, S, o, Shards::Results);  // its vector is the result
    const Geometry G = geometry(p, lib, g, S, o, "hf_reduce_scatter");  // (checks the group)
    if (S <= 0) return no_traffic(s, g, S, o, Shards::Results);  // the library returns at once
    const auto cls = o.cls == sched::TrafficClass::Other ? sched::TrafficClass::HFReduce : o.cls;
    const Emitter em{s, o, cls, lib.hfreduce.chunk_overhead, s.tag("hf_reduce_scatter software")};
    const std::uint32_t t_d2h = s.tag("hf_reduce_scatter D2H"), t_red = s.tag("hf_reduce_scatter reduce"),
                        t_ring = s.tag("hf_reduce_scatter ring"), t_h2d = s.tag("hf_reduce_scatter H2D");
    const int N = G.N, L = G.L, B = std::max(1, lib.hfreduce.staging_buffers);
    auto nd_of = [&](int v) { return G.gpu(g, v, 0).node; };
    auto ref = [&](sched::BufferId b, double off) { return DataRef{b, off}; };

    Emitted e;
    e.done.assign(static_cast<std::size_t>(g.size()), kNoOp);
    // Buffers: each GPU's vector; per node a staging buffer per GPU and socket, the node's partial
    // (acc) and the ring's receive buffer on the NIC's socket.
    std::vector<std::vector<sched::BufferId>> gpu(static_cast<std::size_t>(N));
    std::vector<std::vector<std::vector<sched::BufferId>>> stage(static_cast<std::size_t>(N));
    std::vector<sched::BufferId> acc(static_cast<std::size_t>(N), 0), recv(static_cast<std::size_t>(N), 0);
    if (o.with_data) {
      e.input.assign(static_cast<std::size_t>(g.size()), 0);
      e.output.assign(static_cast<std::size_t>(g.size()), 0);
      e.out_range.assign(static_cast<std::size_t>(g.size()), {0.0, 0.0});
      e.data_bytes = S;
      for (int v = 0; v < N; ++v) {
        const int nd = nd_of(v);
        for (int l = 0; l < L; ++l) {
          const int r = G.rank(v, l);
          gpu[static_cast<std::size_t>(v)].push_back(s.buffer(G.gpu(g, v, l), Bytes(S), "g" + std::to_string(r)));
          e.input[static_cast<std::size_t>(r)] = e.output[static_cast<std::size_t>(r)] = gpu[static_cast<std::size_t>(v)].back();
          const Span sh = G.shard[static_cast<std::size_t>(v * L + l)];
          e.out_range[static_cast<std::size_t>(r)] = {sh.off, sh.len};
          stage[static_cast<std::size_t>(v)].emplace_back();
          for (int q = 0; q < G.sockets; ++q)
            stage[static_cast<std::size_t>(v)].back().push_back(
                s.buffer(Place::dram(nd, q), Bytes(S), "stage" + std::to_string(r) + "." + std::to_string(q)));
        }
        acc[static_cast<std::size_t>(v)] = s.buffer(Place::dram(nd, G.sN), Bytes(S), "acc" + std::to_string(v));
        recv[static_cast<std::size_t>(v)] = s.buffer(Place::dram(nd, G.sN), Bytes(S), "recv" + std::to_string(v));
      }
    }
    // Ring order: at step k a node sends its partial of block v - k - 1, so that its own block v
    // comes last (the ring's final step brings the rest of its sum); pieces go in NCCL's loop
    // order (piece j of every block in ring order, then piece j + 1).
    auto block_at = [&](int v, int k) { return ((v - k - 1) % N + N) % N; };
    // [node][block][piece]: the local reduce of the piece, and the op after which the node's partial
    // of it includes every node before it in the block's chain.
    std::vector<std::vector<std::vector<OpId>>> reduced(static_cast<std::size_t>(N)), partial(static_cast<std::size_t>(N));
    for (int v = 0; v < N; ++v) {
      reduced[static_cast<std::size_t>(v)].resize(static_cast<std::size_t>(N));
      partial[static_cast<std::size_t>(v)].resize(static_cast<std::size_t>(N));
    }
    // Stage 1-2: D2H and the CPU reduce, piece by piece in the node's order.
    for (int v = 0; v < N; ++v) {
      const int nd = nd_of(v);
      std::vector<OpId> d2h_last(static_cast<std::size_t>(L), kNoOp), reduces;
      OpId reducer_last = kNoOp;
      int x = 0;  // running piece count: the staging slot and the socket
      for (const auto& [k, b, j] : G.loop_order([&](int kk) { return block_at(v, kk); })) {
        {
          const Span pc = G.pieces[static_cast<std::size_t>(b)][static_cast<std::size_t>(j)];
          const int q = lib.hfreduce.interleave_d2h ? x % G.sockets : -1;
          if (L == 1) {
            // One GPU per node (a data-parallel group of one GPU per node): nothing to sum, the
            // copy lands in the node's partial on the NIC's socket directly, as hfreduce's
            // pipeline does with one device.
            const OpId t = em.move(G.gpu(g, v, 0), Place::dram(nd, G.sN),
                                   ref(o.with_data ? gpu[static_cast<std::size_t>(v)][0] : 0, pc.off),
                                   ref(acc[static_cast<std::size_t>(v)], pc.off), pc.len, t_d2h);
            em.dep(t, em.overhead(d2h_last[0]));
            em.dep(t, ready_of(o, G.rank(v, 0)));
            d2h_last[0] = t;
            reduced[static_cast<std::size_t>(v)][static_cast<std::size_t>(b)].push_back(t);
            ++x;
            continue;
          }
          std::vector<OpId> copies;
          std::vector<DataRef> in;
          int rq = q;
          for (int l = 0; l < L; ++l) {
            const int ql = q >= 0 ? q : G.gpu_socket[static_cast<std::size_t>(l)];
            rq = ql;
            const OpId t = em.move(G.gpu(g, v, l), Place::dram(nd, ql),
                                   ref(o.with_data ? gpu[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)] : 0, pc.off),
                                   ref(o.with_data ? stage[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)][static_cast<std::size_t>(ql)] : 0, pc.off),
                                   pc.len, t_d2h);
            em.dep(t, d2h_last[static_cast<std::size_t>(l)]);
            em.dep(t, ready_of(o, G.rank(v, l)));
            if (x >= B) em.dep(t, reduces[static_cast<std::size_t>(x - B)]);
            d2h_last[static_cast<std::size_t>(l)] = t;
            copies.push_back(t);
            if (o.with_data) in.push_back(ref(stage[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)][static_cast<std::size_t>(ql)], pc.off));
          }
          // Without interleaving each GPU's copy lands on its own socket; the reduce then runs on
          // the cores of the last GPU's socket and reads the other socket's copies across the link.
          const OpId start = em.overhead(reducer_last);
          OpId red;
          if (o.with_data) {
            red = s.reduce(Place::cpu(nd, rq), in, ref(acc[static_cast<std::size_t>(v)], pc.off), Bytes(pc.len), t_red);
          } else {
            std::vector<Place> inp;
            for (int l = 0; l < L; ++l) inp.push_back(Place::dram(nd, q >= 0 ? q : G.gpu_socket[static_cast<std::size_t>(l)]));
            red = s.reduce(Place::cpu(nd, rq), inp, Place::dram(nd, G.sN), Bytes(pc.len), t_red);
          }
          s.set_class(red, em.cls);
          em.dep(red, start);
          for (OpId c : copies) s.depend(red, c);
          reducer_last = red;
          reduces.push_back(red);
          reduced[static_cast<std::size_t>(v)][static_cast<std::size_t>(b)].push_back(red);
          ++x;
        }
      }
    }
    // Stage 3: the ring between nodes. Block b's chain starts at node b + 1 and ends at node b; at
    // each node after the first the received partial is added into the node's own (the paper's
    // "add: 1 read": the node's partial stays in the reducer's cache), then sent on (posted RDMA
    // writes, in order on the node's queue).
    std::vector<OpId> thread(static_cast<std::size_t>(N), kNoOp), sendq(static_cast<std::size_t>(N), kNoOp);
    // sent[v][b][j]: node v's send of piece j of block b.
    std::vector<std::vector<std::vector<OpId>>> sent(static_cast<std::size_t>(N), std::vector<std::vector<OpId>>(static_cast<std::size_t>(N)));
    for (std::size_t j = 0; j < static_cast<std::size_t>(G.max_pieces); ++j)
      for (int k = 0; k < N; ++k) {
      for (int v = 0; v < N; ++v) {
        const int b = block_at(v, k);
        const int nd = nd_of(v);
        const int prev = (v - 1 + N) % N, next = (v + 1) % N;
        const auto& ps = G.pieces[static_cast<std::size_t>(b)];
        if (j < ps.size()) {
          const Span pc = ps[j];
          OpId ready = reduced[static_cast<std::size_t>(v)][static_cast<std::size_t>(b)][j];
          if (k > 0) {
            const OpId got = sent[static_cast<std::size_t>(prev)][static_cast<std::size_t>(b)][j];
            const OpId start = em.overhead(thread[static_cast<std::size_t>(v)]);
            const OpId add = o.with_data
                                 ? s.reduce_accumulate(Place::cpu(nd, G.sN), {ref(recv[static_cast<std::size_t>(v)], pc.off)},
                                                       ref(acc[static_cast<std::size_t>(v)], pc.off), Bytes(pc.len), t_ring)
                                 : s.reduce_accumulate(Place::cpu(nd, G.sN), {Place::dram(nd, G.sN)}, Place::dram(nd, G.sN),
                                                       Bytes(pc.len), t_ring);
            s.set_class(add, em.cls);
            em.dep(add, start);
            em.dep(add, ready);
            em.dep(add, got);
            thread[static_cast<std::size_t>(v)] = add;
            ready = add;
          }
          partial[static_cast<std::size_t>(v)][static_cast<std::size_t>(b)].push_back(ready);
          if (k == N - 1) continue;  // b == v: the node's own block is complete
          const OpId before = em.overhead(sendq[static_cast<std::size_t>(v)]);
          const OpId snd = em.move(Place::dram(nd, G.sN), Place::dram(nd_of(next), G.sN), ref(acc[static_cast<std::size_t>(v)], pc.off),
                                   ref(recv[static_cast<std::size_t>(next)], pc.off), pc.len, t_ring);
          em.dep(snd, before);
          em.dep(snd, ready);
          sendq[static_cast<std::size_t>(v)] = snd;
          sent[static_cast<std::size_t>(v)][static_cast<std::size_t>(b)].push_back(snd);
        }
      }
    }
    // Stage 4: each GPU gets its shard of the node's block, piece by piece.
    for (int v = 0; v < N; ++v) {
      std::vector<OpId> socket_last(static_cast<std::size_t>(G.sockets), kNoOp), gpu_last(static_cast<std::size_t>(L), kNoOp);
      std::vector<std::vector<OpId>> mine(static_cast<std::size_t>(L));
      const auto& ps = G.pieces[static_cast<std::size_t>(v)];
      for (std::size_t j = 0; j < ps.size(); ++j) {
        std::vector<std::vector<Span>> to(static_cast<std::size_t>(L));
        bool any = false;
        for (int l = 0; l < L; ++l) {
          const Span x = intersect(ps[j], G.shard[static_cast<std::size_t>(v * L + l)]);
          if (x.len > 0) {
            to[static_cast<std::size_t>(l)].push_back(x);
            any = true;
          }
        }
        if (!any) continue;
        const auto landed = write_up(em, lib, g, G, v, acc[static_cast<std::size_t>(v)], gpu[static_cast<std::size_t>(v)], to,
                                     partial[static_cast<std::size_t>(v)][static_cast<std::size_t>(v)][j], socket_last, gpu_last, t_h2d);
        for (int l = 0; l < L; ++l)
          if (landed[static_cast<std::size_t>(l)] != kNoOp) mine[static_cast<std::size_t>(l)].push_back(landed[static_cast<std::size_t>(l)]);
      }
      const OpId node_end = barrier(s, partial[static_cast<std::size_t>(v)][static_cast<std::size_t>(v)]);
      for (int l = 0; l < L; ++l) e.done[static_cast<std::size_t>(G.rank(v, l))] = em.done(mine[static_cast<std::size_t>(l)], node_end);
    }
    return e;
  }

  // The vector S in N node blocks of m = ceil(S / N / chunk) pieces. D2H and the reduce: per node,
  // every block's pieces, each L copies, a software delay and the reduce (one GPU: a delay and
  // the copy); the ring: per piece, step and node, an add (after its delay) from the second step
  // on and a send (after its delay) until the last; H2D: per node its block's pieces to the GPUs
  // whose shards they cover (m + L - 1 spans at most; GDRCopy: per span a delay and the read, a
  // delay and the write), and per node a barrier and L dones:
  //   ops <= N (N m (L + 2)) + 4 m N (N - 1) + N 4 (m + L - 1) + N (1 + L).
  double schedule_ops(const LibraryParams& lib, const GroupShape& g, double S, bool) const override {
    return sharded_schedule_ops(lib, g, S, true);
  }

  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) const override {
    Estimate est;
    est.bottleneck = "-";
    if (g.size() == 1) return est;
    const Geometry G = geometry(p, lib, g, S, Options{}, "hf_reduce_scatter");  // (checks the group)
    if (S <= 0) return est;  // as the schedule
    const int N = G.N, L = G.L, nd = g.ranks[0].node;
    const int parts = G.sockets > 1 && lib.hfreduce.interleave_d2h ? G.sockets : 1;
    // Whole-collective loads of one node (nodes are alike: each sends and receives one block per
    // ring step): every GPU's vector down, the cores' reads of the copies and the sum written to
    // the NIC's socket, the ring's N - 1 blocks each way and their adds, and each shard back up.
    std::vector<std::pair<std::uint32_t, double>> flows;
    auto add = [&](const Place& a, const Place& b, double bytes) { flows.emplace_back(p.path_id(a, b), bytes); };
    if (L == 1) add(G.gpu(g, 0, 0), Place::dram(nd, G.sN), S);  // straight into the node's partial
    for (int l = 0; l < L && L > 1; ++l)
      for (int q = 0; q < parts; ++q) add(G.gpu(g, 0, l), Place::dram(nd, parts > 1 ? q : G.gpu_socket[static_cast<std::size_t>(l)]), S / parts);
    for (int q = 0; q < parts && L > 1; ++q) {
      const int qs = parts > 1 ? q : G.gpu_socket[static_cast<std::size_t>(L - 1)];
      for (int l = 0; l < L; ++l) add(Place::dram(nd, parts > 1 ? q : G.gpu_socket[static_cast<std::size_t>(l)]), Place::cpu(nd, qs), S / parts);
      add(Place::cpu(nd, qs), Place::dram(nd, G.sN), S / parts);
    }
    const double hop_lat = ring_loads(p, G, g, S * (N - 1) / N, flows);
    if (N > 1) add(Place::dram(nd, G.sN), Place::cpu(nd, G.sN), S * (N - 1) / N);  // the ring's adds
    // Up: each GPU its shard; a socket's cores read the shards of their GPUs.
    const double sh = S / G.n;
    const Loads front = flows;  // everything before the writes up
    const double gdr = h2d_loads(p, lib, G, g, sh, [&](int q) {
      return sh * static_cast<double>(std::count(G.gpu_socket.begin(), G.gpu_socket.end(), q));
    }, flows);
    const Bound b = bottleneck_bound(p, flows);
    // Pipeline: the busiest stage's bytes at the bound, plus the reducer's overhead per piece (the
    // stage that handles every piece), plus the fill: the first piece's copies and reduce and the
    // last piece's trip through the ring's final hop and up to the GPUs, one period each, with the
    // hops' network latency and overhead on the chain of the last block.
    const int pieces = static_cast<int>(G.pieces.front().size());
    // A whole piece's share of a block: 1 / pieces when they are equal. Pieces are whole chunks and
    // a shorter last one (geometry), and a whole one sets the period before the bound and after it
    // (the first piece's copies, and a whole piece's trip after the bound: a short last piece
    // finishes behind the whole one before it), and each hop's latency share. (With the pieces'
    // mean instead, one byte over a whole block took 23% less time: 16 GPUs, 8 MiB.)
    const double share = G.pieces.front().front().len / G.block(0).len;
    const double period = b.time / N * share;
    est.time = std::max(b.time, gdr) + N * pieces * lib.hfreduce.chunk_overhead + 2 * period +
               (N > 1 ? (N - 1) * (hop_lat + lib.hfreduce.chunk_overhead) * share + hop_lat : 0.0);
    est.bottleneck = gdr > b.time ? "GDRCopy write rate" : bound_label(p, b);
    if (N == 1 && L > 1) {
      // One node: the sum is final piece by piece in the vector's order, so the last GPU's shard
      // starts up only after (L - 1) / L of the D2H and reduce stages, then takes its own write
      // time (GDRCopy's per-core rate, or its copy engine's path). Measured against the fluid
      // simulation (2026-12-01, 128 MiB): 2 GPUs 7.62 ms closed form against 9.90 simulated
      // without this term, 9.96 with it (0.5% above).
      const double t_front = bottleneck_bound(p, front).time;
      const double t_up = gdr > 0 ? gdr : bottleneck_bound(p, {{p.path_id(Place::dram(nd, G.sN), G.gpu(g, 0, L - 1)), sh}}).time;
      const double last = (L - 1) * t_front / L + t_up + (pieces + std::ceil(pieces / static_cast<double>(L))) * lib.hfreduce.chunk_overhead;
      if (last > est.time) {
        est.time = last;
        est.bottleneck = "last GPU's shard (H2D after the reduce reaches it)";
      }
    }
    est.host_traffic_per_byte = host_memory_bytes(p, flows, nd) / S;
    est.note = std::to_string(N) + "-node ring, " + std::to_string(pieces) + " piece(s) per block";
    return est;
  }
};

// ---------------------------------------------------------------------------------------------
class HostAllGather final : public Algorithm {
public:
  Kind kind() const override { return Kind::AllGather; }

  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes,
               const Options& o) const override {
    const double full = bytes * g.size();
    if (g.size() == 1) return no_traffic(s, g, full, o, Shards::Contributions);
    const Geometry G = geometry(p, lib, g, full, o, "hf_allgather");  // (checks the group)
    if (full <= 0) return no_traffic(s, g, full, o, Shards::Contributions);  // the library returns at once
    const auto cls = o.cls == sched::TrafficClass::Other ? sched::TrafficClass::HFReduce : o.cls;
    const Emitter em{s, o, cls, lib.hfreduce.chunk_overhead, s.tag("hf_allgather software")};
    const std::uint32_t t_d2h = s.tag("hf_allgather D2H"), t_ring = s.tag("hf_allgather ring"), t_h2d = s.tag("hf_allgather H2D");
    const int N = G.N, L = G.L;
    auto nd_of = [&](int v) { return G.gpu(g, v, 0).node; };
    auto ref = [&](sched::BufferId b, double off) { return DataRef{b, off}; };

    Emitted e;
    e.done.assign(static_cast<std::size_t>(g.size()), kNoOp);
    std::vector<std::vector<sched::BufferId>> gpu(static_cast<std::size_t>(N));
    std::vector<sched::BufferId> host(static_cast<std::size_t>(N), 0);
    if (o.with_data) {
      e.input.assign(static_cast<std::size_t>(g.size()), 0);
      e.output.assign(static_cast<std::size_t>(g.size()), 0);
      e.in_range.assign(static_cast<std::size_t>(g.size()), {0.0, 0.0});
      e.data_bytes = full;
      for (int v = 0; v < N; ++v) {
        for (int l = 0; l < L; ++l) {
          const int r = G.rank(v, l);
          gpu[static_cast<std::size_t>(v)].push_back(s.buffer(G.gpu(g, v, l), Bytes(full), "g" + std::to_string(r)));
          e.input[static_cast<std::size_t>(r)] = e.output[static_cast<std::size_t>(r)] = gpu[static_cast<std::size_t>(v)].back();
          const Span sh = G.shard[static_cast<std::size_t>(v * L + l)];
          e.in_range[static_cast<std::size_t>(r)] = {sh.off, sh.len};
        }
        host[static_cast<std::size_t>(v)] = s.buffer(Place::dram(nd_of(v), G.sN), Bytes(full), "host" + std::to_string(v));
      }
    }
    // [node][block][piece]: the op after which the node's host buffer holds the piece.
    std::vector<std::vector<std::vector<OpId>>> have(static_cast<std::size_t>(N), std::vector<std::vector<OpId>>(static_cast<std::size_t>(N)));
    // Stage 1: each GPU's shard down into the node's block on the NIC's socket, piece by piece.
    for (int v = 0; v < N; ++v) {
      const int nd = nd_of(v);
      std::vector<OpId> d2h_last(static_cast<std::size_t>(L), kNoOp);
      for (const Span& pc : G.pieces[static_cast<std::size_t>(v)]) {
        std::vector<OpId> copies;
        for (int l = 0; l < L; ++l) {
          const Span x = intersect(pc, G.shard[static_cast<std::size_t>(v * L + l)]);
          if (x.len <= 0) continue;
          const OpId t = em.move(G.gpu(g, v, l), Place::dram(nd, G.sN),
                                 ref(o.with_data ? gpu[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)] : 0, x.off),
                                 ref(host[static_cast<std::size_t>(v)], x.off), x.len, t_d2h);
          em.dep(t, em.overhead(d2h_last[static_cast<std::size_t>(l)]));
          em.dep(t, ready_of(o, G.rank(v, l)));
          d2h_last[static_cast<std::size_t>(l)] = t;
          copies.push_back(t);
        }
        // A piece no GPU contributes to (an empty one) is there once the node's GPUs are ready.
        if (copies.empty())
          for (int l = 0; l < L; ++l) copies.push_back(ready_of(o, G.rank(v, l)));
        have[static_cast<std::size_t>(v)][static_cast<std::size_t>(v)].push_back(em.done(copies, kNoOp));
      }
    }
    // Stage 2: the ring. Block b starts at node b and travels b -> b + 1 -> ... -> b + N - 1; at
    // step k node v forwards block v - k (posted RDMA writes, in order on its queue).
    std::vector<OpId> sendq(static_cast<std::size_t>(N), kNoOp);
    for (std::size_t j = 0; j < static_cast<std::size_t>(G.max_pieces); ++j)
      for (int k = 0; k + 1 < N; ++k)
      for (int v = 0; v < N; ++v) {
        const int b = ((v - k) % N + N) % N, next = (v + 1) % N;
        const auto& ps = G.pieces[static_cast<std::size_t>(b)];
        if (j < ps.size()) {
          const OpId before = em.overhead(sendq[static_cast<std::size_t>(v)]);
          const OpId snd = em.move(Place::dram(nd_of(v), G.sN), Place::dram(nd_of(next), G.sN), ref(host[static_cast<std::size_t>(v)], ps[j].off),
                                   ref(host[static_cast<std::size_t>(next)], ps[j].off), ps[j].len, t_ring);
          em.dep(snd, before);
          em.dep(snd, have[static_cast<std::size_t>(v)][static_cast<std::size_t>(b)][j]);
          sendq[static_cast<std::size_t>(v)] = snd;
          have[static_cast<std::size_t>(next)][static_cast<std::size_t>(b)].push_back(snd);
        }
      }
    // Stage 3: every piece up to every GPU, in the order the blocks arrive (own block first; a
    // GPU does not take its own shard back).
    for (int v = 0; v < N; ++v) {
      std::vector<OpId> socket_last(static_cast<std::size_t>(G.sockets), kNoOp), gpu_last(static_cast<std::size_t>(L), kNoOp);
      std::vector<std::vector<OpId>> mine(static_cast<std::size_t>(L));
      for (const auto& [k, b, jj] : G.loop_order([&](int kk) { return ((v - kk) % N + N) % N; })) {
        const auto& ps = G.pieces[static_cast<std::size_t>(b)];
        const auto j = static_cast<std::size_t>(jj);
        {
          if (ps[j].len <= 0) continue;
          std::vector<std::vector<Span>> to(static_cast<std::size_t>(L));
          for (int l = 0; l < L; ++l) {
            if (b != v) {
              to[static_cast<std::size_t>(l)].push_back(ps[j]);
              continue;
            }
            const Span own = intersect(ps[j], G.shard[static_cast<std::size_t>(v * L + l)]);
            if (own.len <= 0) {
              to[static_cast<std::size_t>(l)].push_back(ps[j]);
              continue;
            }
            const Span before{ps[j].off, own.off - ps[j].off}, after{own.off + own.len, ps[j].off + ps[j].len - own.off - own.len};
            if (before.len > 0) to[static_cast<std::size_t>(l)].push_back(before);
            if (after.len > 0) to[static_cast<std::size_t>(l)].push_back(after);
          }
          const auto landed = write_up(em, lib, g, G, v, host[static_cast<std::size_t>(v)], gpu[static_cast<std::size_t>(v)], to,
                                       have[static_cast<std::size_t>(v)][static_cast<std::size_t>(b)][j], socket_last, gpu_last, t_h2d);
          for (int l = 0; l < L; ++l)
            if (landed[static_cast<std::size_t>(l)] != kNoOp) mine[static_cast<std::size_t>(l)].push_back(landed[static_cast<std::size_t>(l)]);
        }
      }
      std::vector<OpId> all;
      for (const auto& bl : have[static_cast<std::size_t>(v)]) all.insert(all.end(), bl.begin(), bl.end());
      const OpId node_end = barrier(s, all);
      for (int l = 0; l < L; ++l) e.done[static_cast<std::size_t>(G.rank(v, l))] = em.done(mine[static_cast<std::size_t>(l)], node_end);
    }
    return e;
  }

  // The gathered vector (n x bytes) in N node blocks of m = ceil(block / chunk) pieces. D2H: per
  // node, its own block's pieces, each copied by the GPUs whose shards it covers (m + L - 1 copies
  // at most, each after a software delay) and a done per piece; the ring: per piece, step (N - 1)
  // and node a delay and the send; H2D: per node, every block's pieces to each of its L GPUs
  // (GDRCopy: per socket a delay and the read, per GPU a delay and the write; the own block's
  // pieces skip the GPU's own shard: at most 2 L extra spans where a piece straddles shards), and
  // per node a barrier and L dones:
  //   ops <= N (2 (m + L - 1) + m) + 2 m N (N - 1) + N (N m (2 Q + 2 L) + 4 L) + N (1 + L).
  double schedule_ops(const LibraryParams& lib, const GroupShape& g, double bytes, bool) const override {
    return sharded_schedule_ops(lib, g, bytes * g.ranks, false);
  }

  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes) const override {
    Estimate est;
    est.bottleneck = "-";
    const double S = bytes * g.size();
    if (g.size() == 1) return est;
    const Geometry G = geometry(p, lib, g, S, Options{}, "hf_allgather");  // (checks the group)
    if (S <= 0) return est;  // as the schedule
    const int N = G.N, L = G.L, nd = g.ranks[0].node;
    // One node's loads: its shards down, the ring's N - 1 blocks each way, and the whole vector
    // (less each GPU's own shard) up to every GPU.
    std::vector<std::pair<std::uint32_t, double>> flows;
    auto add = [&](const Place& a, const Place& b, double x) { flows.emplace_back(p.path_id(a, b), x); };
    const double sh = S / G.n, up = S - sh;
    for (int l = 0; l < L; ++l) add(G.gpu(g, 0, l), Place::dram(nd, G.sN), sh);
    const double hop_lat = ring_loads(p, G, g, S * (N - 1) / N, flows);
    // Up: every GPU all but its own shard; a socket's cores read the whole vector once.
    const double gdr = h2d_loads(p, lib, G, g, up, [&](int q) {
      return std::count(G.gpu_socket.begin(), G.gpu_socket.end(), q) > 0 ? S : 0.0;
    }, flows);
    const Bound b = bottleneck_bound(p, flows);
    const int pieces = static_cast<int>(G.pieces.front().size());
    // The H2D stage is one chain per GPU (a core each) that takes every piece of every block in
    // turn: its software overhead, then the piece written at the per-core GDRCopy rate; the GPUs'
    // chains run at once. The ring delivers blocks faster than that chain takes them,
    // so the chain (or the bottleneck bound, if that is longer) is the time, after the first
    // piece's D2H (a period of the bound).
    const double chain = (lib.hfreduce.h2d == "gdrcopy" ? gdr : 0.0) + N * pieces * lib.hfreduce.chunk_overhead;
    // After the first piece's D2H: a whole piece (geometry cuts whole chunks and a shorter last one).
    est.time = std::max(b.time, chain) + b.time / N * G.pieces.front().front().len / G.block(0).len + hop_lat;
    est.bottleneck = chain > b.time ? (lib.hfreduce.h2d == "gdrcopy" ? "GDRCopy write rate (H2D chain)" : "H2D chain (software overhead)")
                                    : bound_label(p, b);
    est.host_traffic_per_byte = host_memory_bytes(p, flows, nd) / S;
    est.note = std::to_string(N) + "-node ring, " + std::to_string(pieces) + " piece(s) per block";
    return est;
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_hf_reduce_scatter() { return std::make_unique<HostReduceScatter>(); }
std::unique_ptr<Algorithm> make_hf_allgather() { return std::make_unique<HostAllGather>(); }

}  // namespace ffsim::coll
