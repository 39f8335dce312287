// "hfreduce" and "hfreduce_nvlink": HFReduce (arXiv 2408.14158 Sec. IV, Algorithms 1 and 2).
// Per chunk: asynchronous D2H of every GPU into pinned host buffers interleaved over the sockets,
// a CPU reduce as soon as all copies of the chunk landed, the inter-node double binary tree (each
// tree carries half of the chunk: reduce up, broadcast down, one thread per tree, chunk-pipelined),
// and H2D of the result to every GPU: GDRCopy (each socket's cores read the result once and write it
// to their GPUs) or cudaMemcpy (each GPU's copy engine reads it). The NVLink variant reduces inside
// each NVLink pair first, sends half the data per GPU through the CPU, and allgathers the halves
// over NVLink on the way back.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "coll/common.hpp"
#include "coll/dbt.hpp"
#include "core/error.hpp"

namespace ffsim::coll {

using sched::DataRef;
using sched::OpId;
using sched::Place;

namespace {

struct Range {
  double off = 0;  // bytes into the vector
  double len = 0;
};

/// How the vector is split: chunks, each made of two tree parts.
struct Layout {
  int chunks = 0;
  std::vector<std::array<Range, 2>> part;  // [chunk][tree]
};

// Plain: chunk c is a contiguous piece of S; its two halves are the two trees' parts.
// NVLink: the vector's first half (A) is reduced by the first GPU of each pair, the second (B) by the
// second; chunk c is chunk c of A (tree 0) and chunk c of B (tree 1), each half a chunk, so that a
// chunk is `chunk` bytes of the vector either way (one 4 MiB tensor of the artifact's benchmark).
// Chunks are whole chunks and a shorter last one, as the library cuts them (src/hfreduce/pipeline.cpp;
// until 2026-12-07 the model cut equal parts, so that 4 MiB + 1 B went as two 2 MiB chunks, in less
// time than 4 MiB as one).
Layout make_layout(double S, double chunk, bool nvlink, bool data, int elem, int copies) {
  Layout L;
  const double span = nvlink ? S / 2 : S;
  const double piece = nvlink ? chunk / 2 : chunk;
  const Cut cu = cut(span, piece, copies);
  L.chunks = static_cast<int>(cu.count);
  const std::size_t elems = data ? static_cast<std::size_t>(S / elem) : 0;
  const std::size_t half_elems = elems / 2;
  for (int c = 0; c < L.chunks; ++c) {
    std::array<Range, 2> r;
    if (!data) {
      const double off = cu.off(c), cl = cu.len(c);
      if (nvlink)
        r = {Range{off, cl}, Range{S / 2 + off, cl}};
      else
        r = {Range{off, cl / 2}, Range{off + cl / 2, cl / 2}};
    } else if (nvlink) {
      const auto [a0, a1] = cut_elems(half_elems, piece, elem, L.chunks, c);
      const auto [b0, b1] = cut_elems(elems - half_elems, piece, elem, L.chunks, c);
      r = {Range{static_cast<double>(a0) * elem, static_cast<double>(a1 - a0) * elem},
           Range{static_cast<double>(half_elems + b0) * elem, static_cast<double>(b1 - b0) * elem}};
    } else {
      const auto [c0, c1] = cut_elems(elems, piece, elem, L.chunks, c);
      const std::size_t mid = c0 + (c1 - c0) / 2;
      r = {Range{static_cast<double>(c0) * elem, static_cast<double>(mid - c0) * elem},
           Range{static_cast<double>(mid) * elem, static_cast<double>(c1 - mid) * elem}};
    }
    L.part.push_back(r);
  }
  return L;
}

class HfReduce final : public Algorithm {
public:
  explicit HfReduce(bool nvlink) : nvlink_(nvlink) {}
  Kind kind() const override { return Kind::AllReduce; }

  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double S,
               const Options& o) const override {
    const auto& h = lib.hfreduce;
    const hw::NodeSpec& node = p.cluster().node;
    const auto by_node = g.ranks_by_node();
    const int N = static_cast<int>(by_node.size());
    const int L = static_cast<int>(by_node.front().size());
    check_group(p, g);
    // NVLink pairs among the node's GPUs (by local index): partner[l], and which half l reduces.
    std::vector<int> partner(static_cast<std::size_t>(L), -1);
    if (nvlink_) {
      if (node.nvlink.kind != "pairs")
        throw ValueError("hfreduce_nvlink needs a node with NVLink pairs; \"" + node.name + "\" has nvlink \"" +
                         node.nvlink.kind + "\"");
      for (const auto& [a, b] : node.nvlink.pairs)
        for (int x = 0; x < L; ++x)
          for (int y = 0; y < L; ++y)
            if (g.ranks[static_cast<std::size_t>(by_node[0][static_cast<std::size_t>(x)])].index == a &&
                g.ranks[static_cast<std::size_t>(by_node[0][static_cast<std::size_t>(y)])].index == b) {
              partner[static_cast<std::size_t>(x)] = y;
              partner[static_cast<std::size_t>(y)] = x;
            }
      for (int l = 0; l < L; ++l)
        if (partner[static_cast<std::size_t>(l)] < 0)
          throw ValueError("hfreduce_nvlink: every GPU of the group must have its NVLink partner in the group");
    }
    // Nothing to move: our library returns at once (src/hfreduce/pipeline.cpp returns at count 0).
    if (S <= 0) return no_traffic(s, g, S, o, Shards::None);
    auto half_of = [&](int l) {  // NVLink: the part (tree) GPU l reduces: 0 for the lower of the pair
      return l < partner[static_cast<std::size_t>(l)] ? 0 : 1;
    };
    const auto cls = o.cls == sched::TrafficClass::Other ? sched::TrafficClass::HFReduce : o.cls;
    const Layout lay = make_layout(S, h.chunk_bytes, nvlink_, o.with_data, o.elem_size, g.size());
    const int K = lay.chunks;
    const int sockets = static_cast<int>(node.sockets.size());
    // The result lives on the NIC's socket (socket 0 on a node without a NIC: one node, no tree).
    const int nic = node.nics.empty() ? -1 : p.nic_for(Place::dram(g.ranks[0].node, 0));
    const int sN = node.nics.empty() ? 0 : socket_index(node, node.socket_of_port(node.nics[static_cast<std::size_t>(nic)].port).name);
    std::vector<int> gpu_socket(static_cast<std::size_t>(L));
    for (int l = 0; l < L; ++l) {
      const auto& gp = g.ranks[static_cast<std::size_t>(by_node[0][static_cast<std::size_t>(l)])];
      gpu_socket[static_cast<std::size_t>(l)] =
          socket_index(node, node.socket_of_port(node.gpus[static_cast<std::size_t>(gp.index)].port).name);
    }
    const auto trees = double_binary_tree(N);
    const std::uint32_t t_d2h = s.tag("hfreduce D2H"), t_red = s.tag("hfreduce reduce"), t_up = s.tag("hfreduce tree up"),
                        t_down = s.tag("hfreduce tree down"), t_h2d = s.tag("hfreduce H2D"),
                        t_nvl = s.tag("hfreduce NVLink"), t_ovh = s.tag("hfreduce software");
    auto overhead = [&](OpId after) {
      if (h.chunk_overhead <= 0) return after;
      const OpId d = s.delay(Seconds(h.chunk_overhead), t_ovh);
      if (after != kNoOp) s.depend(d, after);
      return d;
    };
    auto dep = [&](OpId a, OpId b) {
      if (b != kNoOp) s.depend(a, b);
    };
    // A device copy's hand-off to its stream (HfreduceParams::copy_handoff): a delay after what the
    // copy waits for other than its stream's previous copy, which the copy waits for as well; so a
    // copy queued while its stream is busy starts as the one before ends. kNoOp where there is none.
    auto handoff = [&](OpId copy) {
      if (h.copy_handoff <= 0) return kNoOp;
      const OpId d = s.delay(Seconds(h.copy_handoff), t_ovh);
      s.depend(copy, d);
      return d;
    };

    // Pieces a GPU copies down per chunk: (range, socket). Plain: tree part t to socket t (interleaved)
    // or all to the GPU's socket; NVLink: its own part, split over the sockets.
    struct Piece {
      Range r;
      int socket;
      int part;
    };
    auto pieces = [&](int l, int c) {
      std::vector<Piece> v;
      const int own = gpu_socket[static_cast<std::size_t>(l)];
      if (!nvlink_) {
        // Interleaved over 2+ sockets, tree part t goes to socket t % Q, one copy each; else the
        // chunk is one copy to the GPU's socket, as the library copies it (src/hfreduce/pipeline.cpp:
        // one D2H per chunk and device; until 2026-12-06 the model copied the two parts one after
        // the other there, a device-copy latency per chunk too many).
        const auto& pr = lay.part[static_cast<std::size_t>(c)];
        if (!h.interleave_d2h || sockets == 1)
          return std::vector<Piece>{Piece{Range{pr[0].off, pr[0].len + pr[1].len}, own, 0}};
        for (int t = 0; t < 2; ++t) v.push_back(Piece{pr[static_cast<std::size_t>(t)], t % sockets, t});
        return v;
      }
      const int t = half_of(l);
      const Range r = lay.part[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)];
      if (!h.interleave_d2h || sockets == 1) return std::vector<Piece>{Piece{r, own, t}};
      double first = r.len / 2;
      if (o.with_data) first = std::floor(r.len / o.elem_size / 2) * o.elem_size;
      v.push_back(Piece{Range{r.off, first}, 0, t});
      v.push_back(Piece{Range{r.off + first, r.len - first}, 1 % sockets, t});
      return v;
    };
    // One GPU per node and every piece bound for the result's socket: there is nothing to sum, so
    // the D2H lands in the result directly (hfreduce's pipeline with one device: the result slot is
    // the staging slot, and it is reused once the chunk went back, depth chunks later).
    bool direct = L == 1 && !nvlink_;
    for (const Piece& pc : pieces(0, 0)) direct = direct && pc.socket == sN;
    // A GPU's pieces of chunk c start at base(l, c); a staging slot holds one chunk's pieces at their
    // offsets from that base (chunk 0 is the largest).
    auto base = [&](int l, int c) {
      double b = 1e300;
      for (const Piece& pc : pieces(l, c)) b = std::min(b, pc.r.off);
      return b;
    };
    double slot = 0;
    for (int l = 0; l < L; ++l)
      for (const Piece& pc : pieces(l, 0)) slot = std::max(slot, pc.r.off + pc.r.len - base(l, 0));
    const int B = h.staging_buffers;

    // GPUs whose copies run as one replicated transfer (Options::replicas): per distinct list of the
    // node's GPU indices, the classes alike_gpus finds among the GPUs of one socket, over their D2H
    // copies to every socket and their H2D copy, with the node's other transfers (the reducer's, the
    // tree's) beside them. Without replicas (or with NVLink, whose pair transfers tell GPUs apart),
    // every GPU is a class of its own.
    auto place_of = [&](int v, int l) {
      return g.ranks[static_cast<std::size_t>(by_node[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)])];
    };
    auto nd_of = [&](int v) { return place_of(v, 0).node; };
    const bool replicas = o.replicas && !o.with_data && o.ready.empty() && !nvlink_ && L > 1;
    auto make_classes = [&](int v) {
      std::vector<std::vector<int>> all;
      if (!replicas) {
        for (int l = 0; l < L; ++l) all.push_back({l});
        return all;
      }
      const int nd = nd_of(v);
      std::vector<std::pair<Place, Place>> others;
      for (int q = 0; q < sockets; ++q) {
        others.emplace_back(Place::dram(nd, q), Place::cpu(nd, q));   // the reducer's reads
        others.emplace_back(Place::cpu(nd, q), Place::dram(nd, sN));  // its writes
        others.emplace_back(Place::dram(nd, sN), Place::cpu(nd, q));  // GDRCopy's reads
      }
      if (N > 1) {  // the tree's messages, to and from another node
        const int nd2 = nd_of(v == 0 ? 1 : 0);
        others.emplace_back(Place::dram(nd, sN), Place::dram(nd2, sN));
        others.emplace_back(Place::dram(nd2, sN), Place::dram(nd, sN));
      }
      for (int q = 0; q < sockets; ++q) {
        std::vector<int> mine;
        std::vector<std::vector<std::pair<Place, Place>>> copies;
        for (int l = 0; l < L; ++l) {
          if (gpu_socket[static_cast<std::size_t>(l)] != q) continue;
          mine.push_back(l);
          const Place gl = place_of(v, l);
          copies.emplace_back();
          for (int d = 0; d < sockets; ++d) copies.back().emplace_back(gl, Place::dram(nd, d));
          copies.back().emplace_back(h.h2d == "gdrcopy" ? Place::cpu(nd, q) : Place::dram(nd, sN), gl);
        }
        for (const auto& alike : alike_gpus(p, copies, others)) {
          all.emplace_back();
          for (int i : alike) all.back().push_back(mine[static_cast<std::size_t>(i)]);
        }
      }
      std::sort(all.begin(), all.end());
      return all;
    };
    // Each node's classes, made once per distinct list of the node's GPU indices.
    std::map<std::vector<int>, std::vector<std::vector<int>>> classes_by_list;
    std::vector<const std::vector<std::vector<int>>*> node_classes(static_cast<std::size_t>(N));
    for (int v = 0; v < N; ++v) {
      std::vector<int> idx;
      for (int l = 0; l < L; ++l) idx.push_back(place_of(v, l).index);
      auto [it, fresh] = classes_by_list.try_emplace(idx);
      if (fresh) it->second = make_classes(v);
      node_classes[static_cast<std::size_t>(v)] = &it->second;
    }
    auto classes_of = [&](int v) -> const std::vector<std::vector<int>>& {
      return *node_classes[static_cast<std::size_t>(v)];
    };
    // Marks `t` (the class's first GPU's copy, from `from(v, l)` to `to(v, l)` for GPU l) as standing
    // for the same copy of every other GPU of its class; `kind` names the copy (a socket its D2H
    // lands on, or -1 for the H2D), whose list of copies is made once per node.
    std::map<std::tuple<int, int, int>, sched::Schedule::ReplicaList> lists;
    auto replicate = [&](OpId t, int v, const std::vector<int>& alike, int kind, auto&& from, auto&& to) {
      if (alike.size() < 2) return;
      auto [it, fresh] = lists.try_emplace({v, alike.front(), kind});
      if (fresh) {
        std::vector<std::pair<Place, Place>> rest;
        for (std::size_t i = 1; i < alike.size(); ++i) rest.emplace_back(from(v, alike[i]), to(v, alike[i]));
        it->second = s.replica_list(rest);
      }
      s.replicate(t, it->second);
    };

    Emitted e;
    e.done.assign(static_cast<std::size_t>(g.size()), kNoOp);
    // Per node state.
    struct NodeBufs {
      std::vector<sched::BufferId> gpu, nvrecv;
      std::vector<std::vector<sched::BufferId>> stage;  // [gpu][socket]
      sched::BufferId result = 0;
      std::array<std::array<sched::BufferId, 2>, 2> recv{};  // [tree][child slot]
    };
    std::vector<NodeBufs> bufs(static_cast<std::size_t>(N));
    if (o.with_data) {
      e.input.assign(static_cast<std::size_t>(g.size()), 0);
      e.output.assign(static_cast<std::size_t>(g.size()), 0);
      e.data_bytes = S;
      for (int v = 0; v < N; ++v) {
        NodeBufs& nb = bufs[static_cast<std::size_t>(v)];
        const int nd = g.ranks[static_cast<std::size_t>(by_node[static_cast<std::size_t>(v)][0])].node;
        for (int l = 0; l < L; ++l) {
          const int rank = by_node[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)];
          const Place gp = g.ranks[static_cast<std::size_t>(rank)];
          nb.gpu.push_back(s.buffer(gp, Bytes(S), "g" + std::to_string(rank)));
          e.input[static_cast<std::size_t>(rank)] = e.output[static_cast<std::size_t>(rank)] = nb.gpu.back();
          if (nvlink_) nb.nvrecv.push_back(s.buffer(gp, Bytes(S), "nv" + std::to_string(rank)));
          nb.stage.emplace_back();
          for (int q = 0; q < sockets; ++q)
            nb.stage.back().push_back(s.buffer(Place::dram(nd, q), Bytes(slot * B), "stage" + std::to_string(rank) + "." + std::to_string(q)));
        }
        nb.result = s.buffer(Place::dram(nd, sN), Bytes(S), "result" + std::to_string(v));
        for (int t = 0; t < 2; ++t)
          for (int k = 0; k < 2; ++k)
            nb.recv[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)] =
                s.buffer(Place::dram(nd, sN), Bytes(S), "recv" + std::to_string(v) + "." + std::to_string(t) + "." + std::to_string(k));
      }
    }
    auto ref = [&](sched::BufferId b, double off) { return DataRef{b, off}; };

    // Chains that order each engine's work: D2H per GPU, the reducer, tree threads, H2D per socket.
    std::vector<std::vector<OpId>> d2h_last(static_cast<std::size_t>(N), std::vector<OpId>(static_cast<std::size_t>(L), kNoOp));
    std::vector<std::vector<OpId>> reduce_done(static_cast<std::size_t>(N), std::vector<OpId>(static_cast<std::size_t>(K), kNoOp));
    std::vector<OpId> reducer_last(static_cast<std::size_t>(N), kNoOp);
    // up_ready[v][t][c]: the node's partial of (c, t) is complete; final_[v][t][c]: the result landed.
    std::vector<std::array<std::vector<OpId>, 2>> up_ready(static_cast<std::size_t>(N)), final_(static_cast<std::size_t>(N));
    for (auto& a : up_ready) a = {std::vector<OpId>(static_cast<std::size_t>(K), kNoOp), std::vector<OpId>(static_cast<std::size_t>(K), kNoOp)};
    for (auto& a : final_) a = up_ready.front();
    std::vector<std::vector<OpId>> h2d_last(static_cast<std::size_t>(N), std::vector<OpId>(static_cast<std::size_t>(sockets), kNoOp));
    std::vector<std::vector<OpId>> gpu_last(static_cast<std::size_t>(N), std::vector<OpId>(static_cast<std::size_t>(L), kNoOp));
    std::vector<std::vector<OpId>> nv_last(static_cast<std::size_t>(N), std::vector<OpId>(static_cast<std::size_t>(L), kNoOp));
    // The reduces of each chunk (result_slots: they wait for the H2D of chunk c - result_slots).
    const int R = nvlink_ ? 0 : std::max(0, h.result_slots);
    std::vector<std::vector<std::vector<OpId>>> reduces_of(
        static_cast<std::size_t>(N), std::vector<std::vector<OpId>>(static_cast<std::size_t>(R > 0 ? K : 0)));
    // Direct (one GPU): what waits for the H2D of chunk c - B (slot reuse) in each chunk's D2H: the
    // D2H ops, or their hand-offs where the copies have one.
    std::vector<std::vector<std::vector<OpId>>> direct_d2h(
        static_cast<std::size_t>(N), std::vector<std::vector<OpId>>(static_cast<std::size_t>(direct ? K : 0)));

    // Stage 1-2 for every chunk: (NVLink pair reduce), D2H, CPU reduce.
    for (int c = 0; c < K; ++c) {
      for (int v = 0; v < N; ++v) {
        const int nd = nd_of(v);
        NodeBufs& nb = bufs[static_cast<std::size_t>(v)];
        // NVLink: each GPU first receives its partner's copy of the part it reduces and adds it.
        std::vector<OpId> nv_ready(static_cast<std::size_t>(L), kNoOp);
        if (nvlink_) {
          for (int l = 0; l < L; ++l) {
            const int m = partner[static_cast<std::size_t>(l)];
            const Range r = lay.part[static_cast<std::size_t>(c)][static_cast<std::size_t>(half_of(l))];
            // m sends l's part to l.
            OpId t;
            if (o.with_data) {
              t = s.transfer(ref(nb.gpu[static_cast<std::size_t>(m)], r.off), ref(nb.nvrecv[static_cast<std::size_t>(l)], r.off),
                             Bytes(r.len), cls, t_nvl);
            } else {
              t = s.transfer(place_of(v, m), place_of(v, l), Bytes(r.len), cls, t_nvl);
            }
            dep(t, ready_of(o, by_node[static_cast<std::size_t>(v)][static_cast<std::size_t>(m)]));
            dep(t, nv_last[static_cast<std::size_t>(v)][static_cast<std::size_t>(m)]);
            nv_last[static_cast<std::size_t>(v)][static_cast<std::size_t>(m)] = t;
            const Place gl = place_of(v, l);
            const double rt = gpu_reduce_time(p, gl, r.len);
            OpId red;
            if (o.with_data) {
              const DataRef mine = ref(nb.gpu[static_cast<std::size_t>(l)], r.off);
              red = s.gpu_reduce(gl, {mine, ref(nb.nvrecv[static_cast<std::size_t>(l)], r.off)}, mine, Bytes(r.len), Seconds(rt), t_nvl);
            } else {
              red = s.compute(gl, Seconds(rt), t_nvl);
            }
            s.depend(red, t);
            dep(red, ready_of(o, by_node[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)]));
            nv_ready[static_cast<std::size_t>(l)] = red;
          }
        }
        // D2H of every piece; a staging slot is reused once the reduce of its previous chunk is done.
        // (part, offset, socket) -> (gpu, its D2H): the copies one reduce sums.
        std::map<std::tuple<int, double, int>, std::vector<std::pair<int, OpId>>> by_piece;
        // (A class of alike GPUs copies as one replicated transfer: its first GPU's, standing for all.)
        for (const auto& alike : classes_of(v)) {
          const int l = alike.front();
          const Place gl = place_of(v, l);
          for (const Piece& pc : pieces(l, c)) {
            const double soff = (c % B) * slot + (pc.r.off - base(l, c));
            OpId t;
            if (o.with_data) {
              t = s.transfer(ref(nb.gpu[static_cast<std::size_t>(l)], pc.r.off),
                             direct ? ref(nb.result, pc.r.off)
                                    : ref(nb.stage[static_cast<std::size_t>(l)][static_cast<std::size_t>(pc.socket)], soff),
                             Bytes(pc.r.len), cls, t_d2h);
            } else {
              t = s.transfer(gl, Place::dram(nd, pc.socket), Bytes(pc.r.len), cls, t_d2h);
              replicate(t, v, alike, pc.socket, place_of, [&](int, int) { return Place::dram(nd, pc.socket); });
            }
            dep(t, d2h_last[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)]);
            const OpId hand = handoff(t);
            const OpId gate = hand == kNoOp ? t : hand;  // what waits for the copy's other inputs
            for (int m : alike) {
              dep(gate, ready_of(o, by_node[static_cast<std::size_t>(v)][static_cast<std::size_t>(m)]));
              dep(gate, nv_ready[static_cast<std::size_t>(m)]);
            }
            if (c >= B) dep(gate, reduce_done[static_cast<std::size_t>(v)][static_cast<std::size_t>(c - B)]);
            for (int m : alike) {
              d2h_last[static_cast<std::size_t>(v)][static_cast<std::size_t>(m)] = t;
              by_piece[{pc.part, pc.r.off, pc.socket}].push_back({m, t});
            }
            if (direct) direct_d2h[static_cast<std::size_t>(v)][static_cast<std::size_t>(c)].push_back(gate);
          }
        }
        if (direct) {  // no reducer: the chunk is complete once its copies landed
          std::vector<OpId> landed_here;
          for (const auto& [part, list] : by_piece)
            for (const auto& [l, t] : list) landed_here.push_back(t);
          const OpId rd = barrier(s, landed_here);
          reduce_done[static_cast<std::size_t>(v)][static_cast<std::size_t>(c)] = rd;
          for (int t = 0; t < 2; ++t) up_ready[static_cast<std::size_t>(v)][static_cast<std::size_t>(t)][static_cast<std::size_t>(c)] = rd;
          continue;
        }
        // The reducer: one pass per chunk, after the previous chunk, once all copies of this chunk landed.
        const OpId start = overhead(reducer_last[static_cast<std::size_t>(v)]);
        std::vector<OpId> reds;
        for (const auto& [key, list] : by_piece) {
          const auto& [part, off, q] = key;
          double len = 0;
          for (const Piece& pc : pieces(list.front().first, c))
            if (pc.part == part && pc.r.off == off && pc.socket == q) len = pc.r.len;
          OpId red;
          if (o.with_data) {
            std::vector<DataRef> in;
            for (const auto& [l, d] : list)
              in.push_back(ref(nb.stage[static_cast<std::size_t>(l)][static_cast<std::size_t>(q)], (c % B) * slot + (off - base(l, c))));
            red = s.reduce(Place::cpu(nd, q), in, ref(nb.result, off), Bytes(len), t_red);
          } else {
            std::vector<Place> in(list.size(), Place::dram(nd, q));
            red = s.reduce(Place::cpu(nd, q), in, Place::dram(nd, sN), Bytes(len), t_red);
          }
          s.set_class(red, cls);
          dep(red, start);
          for (std::size_t i = 0; i < list.size(); ++i)  // (a replicated copy once: its GPUs are adjacent)
            if (i == 0 || list[i].second != list[i - 1].second) s.depend(red, list[i].second);
          reds.push_back(red);
        }
        if (R > 0) reduces_of[static_cast<std::size_t>(v)][static_cast<std::size_t>(c)] = reds;
        const OpId rd = barrier(s, reds);
        reduce_done[static_cast<std::size_t>(v)][static_cast<std::size_t>(c)] = rd;
        reducer_last[static_cast<std::size_t>(v)] = rd;
        // Both tree parts of this chunk are ready locally once the reduce is done.
        for (int t = 0; t < 2; ++t) up_ready[static_cast<std::size_t>(v)][static_cast<std::size_t>(t)][static_cast<std::size_t>(c)] = rd;
      }
    }

    // Stage 3: the double binary tree, chunk by chunk and slice by slice (each chunk's tree part is
    // pipelined in slices of tree_slice_bytes), one thread per tree and node. Going up, a node adds
    // its children's partials into its own (the partial stays in cache: only the received data is
    // read, the paper's "add: 1 read") and sends the sum to its parent; the root's sum comes back
    // down, each node forwarding it to its children. The software overhead is paid once per chunk
    // and stage (before its first slice).
    for (int v = 0; v < N; ++v)
      for (int t = 0; t < 2; ++t) final_[static_cast<std::size_t>(v)][static_cast<std::size_t>(t)] =
                                    up_ready[static_cast<std::size_t>(v)][static_cast<std::size_t>(t)];
    auto slices_of = [&](const Range& r) {  // whole slices and a shorter last one, as the library's tree cuts
      const double sl = h.tree_slice_bytes > 0 ? h.tree_slice_bytes : r.len;
      const Cut cu = cut(r.len, sl, 1);
      const auto m = static_cast<int>(cu.count);
      std::vector<Range> v;
      if (!o.with_data) {
        for (int k = 0; k < m; ++k) v.push_back(Range{r.off + cu.off(k), cu.len(k)});
        return v;
      }
      const auto elems = static_cast<std::size_t>(std::llround(r.len / o.elem_size));
      for (int k = 0; k < m; ++k) {
        const auto [a, b] = cut_elems(elems, sl, o.elem_size, m, k);
        v.push_back(Range{r.off + static_cast<double>(a) * o.elem_size, static_cast<double>(b - a) * o.elem_size});
      }
      return v;
    };
    if (N > 1) {
      for (int t = 0; t < 2; ++t) {
        const auto& tr = trees[static_cast<std::size_t>(t)];
        // Post-order (children before parents) and its reverse (parents before children).
        const std::vector<int> post = post_order(tr);
        std::vector<std::vector<Range>> sl(static_cast<std::size_t>(K));
        for (int c = 0; c < K; ++c) sl[static_cast<std::size_t>(c)] = slices_of(lay.part[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)]);
        // [node][chunk][slice]: the node's send of the slice up, and the op after which it holds the result.
        std::vector<std::vector<std::vector<OpId>>> sent(static_cast<std::size_t>(N)), fin(static_cast<std::size_t>(N));
        for (int v = 0; v < N; ++v) {
          sent[static_cast<std::size_t>(v)].resize(static_cast<std::size_t>(K));
          fin[static_cast<std::size_t>(v)].resize(static_cast<std::size_t>(K));
          for (int c = 0; c < K; ++c) {
            sent[static_cast<std::size_t>(v)][static_cast<std::size_t>(c)].assign(sl[static_cast<std::size_t>(c)].size(), kNoOp);
            fin[static_cast<std::size_t>(v)][static_cast<std::size_t>(c)].assign(sl[static_cast<std::size_t>(c)].size(), kNoOp);
          }
        }
        // Per node: the tree thread's adds run in order; its sends (RDMA writes, posted and left to
        // the NIC) leave in order on the node's queue to its parent, each once its slice is summed.
        std::vector<OpId> thread(static_cast<std::size_t>(N), kNoOp), sendq(static_cast<std::size_t>(N), kNoOp);
        for (int c = 0; c < K; ++c) {
          const auto& slices = sl[static_cast<std::size_t>(c)];
          for (std::size_t j = 0; j < slices.size(); ++j) {
            const Range r = slices[j];
            for (int v : post) {
              const auto& tl = tr[static_cast<std::size_t>(v)];
              const auto uv = static_cast<std::size_t>(v);
              const int nd = nd_of(v);
              NodeBufs& nb = bufs[uv];
              OpId ready = up_ready[uv][static_cast<std::size_t>(t)][static_cast<std::size_t>(c)];
              std::vector<OpId> got;
              std::vector<DataRef> in;
              std::vector<Place> inp;
              for (int k = 0; k < 2; ++k) {
                const int ch = tl.child[static_cast<std::size_t>(k)];
                if (ch < 0) continue;
                got.push_back(sent[static_cast<std::size_t>(ch)][static_cast<std::size_t>(c)][j]);
                if (o.with_data) in.push_back(ref(nb.recv[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)], r.off));
                inp.push_back(Place::dram(nd, sN));
              }
              if (!got.empty()) {
                const OpId add = o.with_data
                                     ? s.reduce_accumulate(Place::cpu(nd, sN), in, ref(nb.result, r.off), Bytes(r.len), t_up)
                                     : s.reduce_accumulate(Place::cpu(nd, sN), inp, Place::dram(nd, sN), Bytes(r.len), t_up);
                s.set_class(add, cls);
                dep(add, ready);
                dep(add, thread[uv]);
                for (OpId x : got) s.depend(add, x);
                ready = add;
                thread[uv] = add;
              }
              if (tl.parent < 0) {
                fin[uv][static_cast<std::size_t>(c)][j] = ready;
                continue;
              }
              const int par = tl.parent;
              const int slot_k = tr[static_cast<std::size_t>(par)].child[0] == v ? 0 : 1;
              const OpId before = j == 0 ? overhead(sendq[uv]) : sendq[uv];
              OpId send;
              if (o.with_data)
                send = s.transfer(ref(nb.result, r.off),
                                  ref(bufs[static_cast<std::size_t>(par)].recv[static_cast<std::size_t>(t)][static_cast<std::size_t>(slot_k)], r.off),
                                  Bytes(r.len), cls, t_up);
              else
                send = s.transfer(Place::dram(nd, sN), Place::dram(nd_of(par), sN), Bytes(r.len), cls, t_up);
              dep(send, before);
              dep(send, ready);
              sendq[uv] = send;
              sent[uv][static_cast<std::size_t>(c)][j] = send;
            }
          }
        }
        // Down: parents before children, slice by slice; a parent's sends of a slice wait for its
        // sends of the previous one (its down thread).
        std::vector<OpId> down(static_cast<std::size_t>(N), kNoOp);
        for (int c = 0; c < K; ++c) {
          const auto& slices = sl[static_cast<std::size_t>(c)];
          for (std::size_t j = 0; j < slices.size(); ++j) {
            const Range r = slices[j];
            std::vector<std::vector<OpId>> sends(static_cast<std::size_t>(N));
            for (auto it = post.rbegin(); it != post.rend(); ++it) {
              const int v = *it;
              const auto& tl = tr[static_cast<std::size_t>(v)];
              if (tl.parent < 0) continue;
              const auto par = static_cast<std::size_t>(tl.parent);
              const auto uv = static_cast<std::size_t>(v);
              const OpId before = j == 0 ? overhead(down[par]) : down[par];
              OpId recv;
              if (o.with_data)
                recv = s.transfer(ref(bufs[par].result, r.off), ref(bufs[uv].result, r.off), Bytes(r.len), cls, t_down);
              else
                recv = s.transfer(Place::dram(nd_of(tl.parent), sN), Place::dram(nd_of(v), sN), Bytes(r.len), cls, t_down);
              dep(recv, before);
              s.depend(recv, fin[par][static_cast<std::size_t>(c)][j]);
              // The child's own send of this slice must be out of its buffer before the result lands there.
              dep(recv, sent[uv][static_cast<std::size_t>(c)][j]);
              fin[uv][static_cast<std::size_t>(c)][j] = recv;
              sends[par].push_back(recv);
            }
            for (int v = 0; v < N; ++v)
              if (!sends[static_cast<std::size_t>(v)].empty()) down[static_cast<std::size_t>(v)] = barrier(s, sends[static_cast<std::size_t>(v)]);
          }
        }
        // The chunk's part is final once its last slice is (a node's slices arrive in order: each
        // waits for the parent's sends of the one before).
        for (int v = 0; v < N; ++v)
          for (int c = 0; c < K; ++c)
            final_[static_cast<std::size_t>(v)][static_cast<std::size_t>(t)][static_cast<std::size_t>(c)] =
                fin[static_cast<std::size_t>(v)][static_cast<std::size_t>(c)].back();
      }
    }

    // Stage 4: H2D of each chunk once both of its parts are final; NVLink: each GPU gets its part,
    // then the pair swaps parts over NVLink.
    std::vector<std::vector<std::vector<OpId>>> finals_of(static_cast<std::size_t>(N),
                                                          std::vector<std::vector<OpId>>(static_cast<std::size_t>(L)));
    for (int v = 0; v < N; ++v) {
      const int nd = nd_of(v);
      NodeBufs& nb = bufs[static_cast<std::size_t>(v)];
      for (int c = 0; c < K; ++c) {
        const auto& parts = lay.part[static_cast<std::size_t>(c)];
        auto needs = [&](int l) {  // the range GPU l receives from the host, and the finals it waits for
          if (!nvlink_)
            return std::make_pair(Range{parts[0].off, parts[0].len + parts[1].len},
                                  std::vector<OpId>{final_[static_cast<std::size_t>(v)][0][static_cast<std::size_t>(c)],
                                                    final_[static_cast<std::size_t>(v)][1][static_cast<std::size_t>(c)]});
          const int t = half_of(l);
          return std::make_pair(parts[static_cast<std::size_t>(t)],
                                std::vector<OpId>{final_[static_cast<std::size_t>(v)][static_cast<std::size_t>(t)][static_cast<std::size_t>(c)]});
        };
        std::vector<OpId> landed(static_cast<std::size_t>(L), kNoOp);
        if (h.h2d == "gdrcopy") {
          for (int q = 0; q < sockets; ++q) {
            std::vector<int> mine;
            for (int l = 0; l < L; ++l)
              if (gpu_socket[static_cast<std::size_t>(l)] == q) mine.push_back(l);
            if (mine.empty()) continue;
            const OpId start = overhead(h2d_last[static_cast<std::size_t>(v)][static_cast<std::size_t>(q)]);
            std::vector<OpId> ops;
            // The socket's cores read each distinct range once, then write it to each GPU that needs it.
            std::map<double, std::pair<Range, std::vector<OpId>>> ranges;
            for (int l : mine) {
              auto [r, fin] = needs(l);
              ranges[r.off] = {r, fin};
            }
            for (const auto& [off, rf] : ranges) {
              const OpId rd = s.transfer(Place::dram(nd, sN), Place::cpu(nd, q), Bytes(rf.first.len), cls, t_h2d);
              dep(rd, start);
              for (OpId f : rf.second) s.depend(rd, f);
              ops.push_back(rd);
            }
            for (const auto& alike : classes_of(v)) {
              const int l = alike.front();
              if (gpu_socket[static_cast<std::size_t>(l)] != q) continue;
              auto [r, fin] = needs(l);
              const Place gl = place_of(v, l);
              OpId w;
              if (o.with_data) {
                w = s.transfer(Place::cpu(nd, q), gl, ref(nb.result, r.off), ref(nb.gpu[static_cast<std::size_t>(l)], r.off),
                               Bytes(r.len), cls, t_h2d);
              } else {
                w = s.transfer(Place::cpu(nd, q), gl, Bytes(r.len), cls, t_h2d);
                replicate(
                    w, v, alike, -1, [&](int, int) { return Place::cpu(nd, q); }, place_of);
              }
              s.set_rate_cap(w, h.gdrcopy_write_bandwidth);
              dep(w, start);
              for (OpId f : fin) s.depend(w, f);
              ops.push_back(w);
              for (int m : alike) landed[static_cast<std::size_t>(m)] = w;
            }
            h2d_last[static_cast<std::size_t>(v)][static_cast<std::size_t>(q)] = barrier(s, ops);
          }
        } else {
          for (const auto& alike : classes_of(v)) {
            const int l = alike.front();
            auto [r, fin] = needs(l);
            OpId w;
            if (o.with_data) {
              w = s.transfer(ref(nb.result, r.off), ref(nb.gpu[static_cast<std::size_t>(l)], r.off), Bytes(r.len), cls, t_h2d);
            } else {
              w = s.transfer(Place::dram(nd, sN), place_of(v, l), Bytes(r.len), cls, t_h2d);
              replicate(
                  w, v, alike, -1, [&](int, int) { return Place::dram(nd, sN); }, place_of);
            }
            dep(w, gpu_last[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)]);
            const OpId hand = handoff(w);
            for (OpId f : fin) s.depend(hand == kNoOp ? w : hand, f);
            for (int m : alike) {
              gpu_last[static_cast<std::size_t>(v)][static_cast<std::size_t>(m)] = w;
              landed[static_cast<std::size_t>(m)] = w;
            }
          }
        }
        // Slots: the result slot of chunk c takes chunk c + R's reduce once chunk c went back to every GPU.
        if (R > 0 && !direct && c + R < K)
          for (OpId red : reduces_of[static_cast<std::size_t>(v)][static_cast<std::size_t>(c + R)])
            for (int l = 0; l < L; ++l)  // (a replicated copy once)
              if (std::find(landed.begin(), landed.begin() + l, landed[static_cast<std::size_t>(l)]) ==
                  landed.begin() + l)
                s.depend(red, landed[static_cast<std::size_t>(l)]);
        // Direct: the result slot of chunk c takes chunk c + B once chunk c went back to the GPU
        // (the D2H's hand-off waits for it: the stream waits on the H2D's event, then is woken).
        if (direct && c + B < K)
          for (OpId d : direct_d2h[static_cast<std::size_t>(v)][static_cast<std::size_t>(c + B)]) s.depend(d, landed[0]);
        for (int l = 0; l < L; ++l) {
          finals_of[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)].push_back(landed[static_cast<std::size_t>(l)]);
          if (!nvlink_) continue;
          // Give the partner this GPU's part of the result over NVLink.
          const int m = partner[static_cast<std::size_t>(l)];
          const Range r = parts[static_cast<std::size_t>(half_of(l))];
          OpId x;
          if (o.with_data)
            x = s.transfer(ref(nb.gpu[static_cast<std::size_t>(l)], r.off), ref(nb.gpu[static_cast<std::size_t>(m)], r.off), Bytes(r.len), cls, t_nvl);
          else
            x = s.transfer(place_of(v, l), place_of(v, m), Bytes(r.len), cls, t_nvl);
          s.depend(x, landed[static_cast<std::size_t>(l)]);
          finals_of[static_cast<std::size_t>(v)][static_cast<std::size_t>(m)].push_back(x);
        }
      }
      for (int l = 0; l < L; ++l)
        e.done[static_cast<std::size_t>(by_node[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)])] =
            barrier(s, finals_of[static_cast<std::size_t>(v)][static_cast<std::size_t>(l)]);
    }
    return e;
  }

  // The schedule emit() builds, op by op, for K chunks (S, or NVLink S / 2, in chunks of chunk_bytes,
  // or its half), N nodes of L GPUs and Q sockets; ovh = 1 where chunk_overhead adds a software
  // delay. Per chunk and node:
  //   NVLink: per GPU the partner's transfer and the GPU's add (2 L);
  //   D2H: per GPU its P pieces (interleaved over 2+ sockets: P = 2, the 2 tree parts, or with
  //   NVLink its half split over the sockets; else P = 1, the chunk or the half);
  //   reduce: ovh + one reduce per distinct (part, offset, socket) + a barrier (interleaved over 2+
  //   sockets 2, with NVLink 2 x P; else min(Q, L): each GPU's socket); one GPU whose pieces land in
  //   the result directly: only the barrier;
  //   H2D (GDRCopy): per socket with GPUs, ovh + a read per distinct range (1; NVLink 2) + a
  //   barrier, and L writes (memcpy: L writes); NVLink: L swaps over the pair.
  // Per tree (2) and chunk on 2+ nodes, m = ceil(part / tree_slice_bytes) slices (a whole chunk's
  // part, and the last chunk's: whole chunks and a shorter last one); per slice at
  // most N - 1 adds, N - 1 sends up, N - 1 sends down and N - 1 barriers over a parent's sends;
  // ovh per send up and down on the chunk's first slice (2 (N - 1)). A done per rank at the end.
  // E.g. 2 GPUs on 1 node, 1 socket, no interleave, 1 chunk, no overhead, GDRCopy: D2H 2 x 1 = 2,
  // reduce 1 + 1 = 2, H2D 1 read + 1 barrier + 2 writes = 4, dones 2: 10 ops (built: 10, tests/unit/
  // coll_size_test.cpp).
  // Alone on an engine that runs replicas, a node's alike GPUs copy as one replicated transfer
  // (Options::replicas: the same times as the copies apart, tests/unit/coll_replicas_test.cpp).
  double simulate(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                  double S) const override {
    sched::Schedule s;
    Options o;
    o.replicas = e.runs_replicas();
    (void)emit(s, p, lib, g, S, o);
    return e.run(s, p).makespan;
  }

  double schedule_ops(const LibraryParams& lib, const GroupShape& q, double S, bool) const override {
    const auto& h = lib.hfreduce;
    if (S <= 0) return q.ranks + 1.0;  // no_traffic: a zero-time op per rank
    const double N = q.nodes, L = q.ranks_per_node, Q = q.sockets;
    const double span = nvlink_ ? S / 2 : S;
    const Cut cu = cut(span, nvlink_ ? h.chunk_bytes / 2 : h.chunk_bytes);
    const double K = cu.count;
    const double ovh = h.chunk_overhead > 0 ? 1 : 0;
    const bool inter = h.interleave_d2h;
    const bool spread = inter && Q > 1;
    const double P = spread ? 2 : 1;
    const double keys = nvlink_ ? (spread ? 2 * P : 2 * std::min(Q, L)) : spread ? 2 : std::min(Q, L);
    const bool direct = q.ranks_per_node == 1 && !nvlink_ && Q == 1;  // else maybe not: count the reducer
    const double reduce = direct ? 1 : ovh + keys + 1;
    const double Qg = std::min(Q, L);
    const double h2d = h.h2d == "gdrcopy" ? Qg * (ovh + (nvlink_ ? 2 : 1) + 1) + L : L;
    const double per_node = (nvlink_ ? 2 * L : 0) + L * P + reduce + h2d + (nvlink_ ? L : 0);
    double tree = 0;
    if (q.nodes > 1) {
      auto slices = [&](double chunk) {
        const double part = nvlink_ ? chunk : chunk / 2;
        return h.tree_slice_bytes > 0 ? piece_count_real(part, h.tree_slice_bytes) : 1;
      };
      const double m = (K - 1) * slices(cu.piece) + slices(cu.last);
      tree = 2 * (m * 4 * (N - 1) + K * ovh * 2 * (N - 1));
    }
    return K * N * per_node + tree + q.ranks;
  }

  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) const override {
    // One representative node, one chunk of every stage at once (the pipeline's steady state):
    // the bottleneck bound of those flows is the time per chunk; the first chunk's trip through
    // every stage (down and up the trees) is the fill. Loads are counted from the same paths the
    // schedule uses, so the host-memory traffic per byte comes out of them.
    const auto& h = lib.hfreduce;
    const hw::NodeSpec& node = p.cluster().node;
    check_group(p, g);
    if (S <= 0) {  // as the schedule: nothing to move, nothing to wait for
      Estimate est;
      est.bottleneck = "-";
      return est;
    }
    const auto by_node = g.ranks_by_node();
    const int N = static_cast<int>(by_node.size());
    const int L = static_cast<int>(by_node.front().size());
    const Cut cu = cut(nvlink_ ? S / 2 : S, nvlink_ ? h.chunk_bytes / 2 : h.chunk_bytes);
    const double K = cu.count;
    const double C = cu.piece;                    // bytes per GPU per whole chunk (NVLink: of its half)
    const double chunk = nvlink_ ? 2 * C : C;     // bytes of the node's result per chunk
    const int nd = g.ranks[0].node;
    const int sockets = static_cast<int>(node.sockets.size());
    const int nic = node.nics.empty() ? -1 : p.nic_for(Place::dram(nd, 0));
    const int sN = node.nics.empty() ? 0 : socket_index(node, node.socket_of_port(node.nics[static_cast<std::size_t>(nic)].port).name);
    std::vector<std::pair<std::uint32_t, double>> flows;
    auto add = [&](const Place& a, const Place& b, double bytes) { flows.emplace_back(p.path_id(a, b), bytes); };
    std::vector<int> sock(static_cast<std::size_t>(L));
    for (int l = 0; l < L; ++l)
      sock[static_cast<std::size_t>(l)] = socket_index(
          node, node.socket_of_port(node.gpus[static_cast<std::size_t>(g.ranks[static_cast<std::size_t>(by_node[0][static_cast<std::size_t>(l)])].index)].port).name);
    const int parts = sockets > 1 && h.interleave_d2h ? sockets : 1;
    for (int l = 0; l < L; ++l) {
      const Place gl = g.ranks[static_cast<std::size_t>(by_node[0][static_cast<std::size_t>(l)])];
      if (nvlink_) {
        const auto pr = node.nvlink.pairs;
        for (const auto& [a, b] : pr)
          if (a == gl.index) {
            add(Place::gpu(nd, b), gl, C);  // pair reduce, each way
            add(gl, Place::gpu(nd, b), C);
            add(gl, Place::gpu(nd, b), C);  // allgather back, each way
            add(Place::gpu(nd, b), gl, C);
          }
      }
      for (int q = 0; q < parts; ++q) add(gl, Place::dram(nd, parts > 1 ? q : sock[static_cast<std::size_t>(l)]), C / parts);
    }
    // The CPU reduce: every piece read once on its socket's cores, the sum written to the NIC's socket.
    // With one GPU whose copies land on the result's socket there is nothing to sum (see emit).
    const bool direct = L == 1 && !nvlink_ && (parts > 1 ? sockets == 1 : sock[0] == sN);
    for (int q = 0; q < parts && !direct; ++q) {
      const int qs = parts > 1 ? q : sock[0];
      for (int l = 0; l < L; ++l) add(Place::dram(nd, qs), Place::cpu(nd, qs), C / parts);
      add(Place::cpu(nd, qs), Place::dram(nd, sN), chunk / parts);
    }
    int depth = 0;
    int edges = 0, children = 0;  // the busiest node's tree edges up (parents) and down (children)
    double tree_bytes = 0;        // bytes the busiest node sends per chunk
    if (N > 1) {
      // Per chunk a node sends one part (half a chunk) per tree edge it has, up to its parent and
      // down to each child, receives as many, and reads its children's parts once when adding: 2 x
      // chunk each way for a node interior in one tree and a leaf in the other (the paper's 24 S), 1 x
      // chunk on two nodes. The busiest node of the two trees stands for all. Peers: other nodes.
      const auto trees = double_binary_tree(N);
      depth = std::max(tree_depth(trees[0]), tree_depth(trees[1]));
      for (int v = 0; v < N; ++v) {
        int e = 0, c = 0;
        for (const auto& tr : trees) {
          const auto& tl = tr[static_cast<std::size_t>(v)];
          e += tl.parent >= 0 ? 1 : 0;
          for (int ch : tl.child) c += ch >= 0 ? 1 : 0;
        }
        if (e + c > edges + children || (e + c == edges + children && c > children)) {
          edges = e;
          children = c;
        }
      }
      const int peer = by_node.size() > 1 ? g.ranks[static_cast<std::size_t>(by_node[1][0])].node : nd;
      add(Place::dram(nd, sN), Place::dram(peer, sN), (edges + children) * chunk / 2);
      add(Place::dram(peer, sN), Place::dram(nd, sN), (edges + children) * chunk / 2);
      add(Place::dram(nd, sN), Place::cpu(nd, sN), children * chunk / 2);
      tree_bytes = (edges + children) * chunk / 2;
    }
    for (int q = 0; q < sockets; ++q) {
      bool any = false;
      for (int l = 0; l < L; ++l) any = any || sock[static_cast<std::size_t>(l)] == q;
      if (!any) continue;
      if (h.h2d == "gdrcopy") add(Place::dram(nd, sN), Place::cpu(nd, q), chunk);
    }
    double gdr_time = 0;
    for (int l = 0; l < L; ++l) {
      const Place gl = g.ranks[static_cast<std::size_t>(by_node[0][static_cast<std::size_t>(l)])];
      const double got = nvlink_ ? C : chunk;
      if (h.h2d == "gdrcopy") {
        add(Place::cpu(nd, sock[static_cast<std::size_t>(l)]), gl, got);
        gdr_time = std::max(gdr_time, got / h.gdrcopy_write_bandwidth);
      } else {
        add(Place::dram(nd, sN), gl, got);
      }
    }
    Bound b = bottleneck_bound(p, flows);
    Estimate est;
    std::string why = bound_label(p, b);
    double t_chunk = b.time;
    if (gdr_time > t_chunk) {
      t_chunk = gdr_time;
      why = "GDRCopy write rate";
    }
    t_chunk += h.chunk_overhead;
    // Host-memory traffic per byte of S: every DRAM resource's load, summed, over the chunk.
    est.host_traffic_per_byte = host_memory_bytes(p, flows, nd) / chunk;
    // Fill (a pipeline's time is its stages' latencies for the first chunk plus K - 1 periods of
    // the slowest stage): a chunk spends one period in the node's own stages (the D2H, reduce and
    // H2D overlap with the chunks around it) and, per tree level, one hop of its first slice on the
    // way up and one on the way down. Up, the slice shares the NIC with the up traffic only (no
    // result has come down yet: per chunk a node sends a part to each parent and receives one from
    // each child) and the receiver adds it; down, every part of the steady state is in flight (2 x
    // chunk each way per chunk, see above) and the receiver only forwards it. Each hop also pays the
    // network latency and the software overhead, and never takes longer than a period (a stage
    // slower than the period would be the bottleneck). Until 2026-11-30 both directions were
    // charged the steady-state share and the add, 1.9-4.9% slower than the fluid simulation at
    // 32-512 GPUs; now within 1.1% at 16-1,440 GPUs (tests/unit/coll_engine_test.cpp).
    double hop_up = 0, hop_down = 0;
    if (N > 1) {
      const int peer = g.ranks[static_cast<std::size_t>(by_node[1][0])].node;
      const double part = chunk / 2;
      const double slice = h.tree_slice_bytes > 0 ? std::min(part, h.tree_slice_bytes) : part;
      const std::uint32_t net = p.path_id(Place::dram(nd, sN), Place::dram(peer, sN));
      const double lat_net = p.path(net).latency;
      // Up: the larger of the node's parts sent up (parents) and received (children) per chunk.
      const double up_bytes = std::max(edges, children) * part;
      const double send_up = bottleneck_bound(p, {{net, up_bytes * slice / part}}).time;
      const double send_down = bottleneck_bound(p, {{net, tree_bytes * slice / part}}).time;
      const double sum = bottleneck_bound(p, {{p.path_id(Place::dram(nd, sN), Place::cpu(nd, sN)), slice}}).time;
      hop_up = std::min(t_chunk, send_up + sum + h.chunk_overhead) + lat_net;
      hop_down = std::min(t_chunk, send_down + h.chunk_overhead) + lat_net;
    }
    const double fill = t_chunk + depth * (hop_up + hop_down);
    // The last chunk is shorter (whole chunks and the remainder, as emit cuts them): its period's
    // transfer part scales with its bytes, its software overhead does not.
    est.time = fill + (K - 1) * t_chunk - (K > 1 ? (1 - cu.last_share()) * (t_chunk - h.chunk_overhead) : 0.0);
    est.bottleneck = why;
    est.note = "per chunk " + std::to_string(static_cast<long long>(chunk)) + " B, " + std::to_string(K) +
               " chunks, tree depth " + std::to_string(depth);
    return est;
  }

private:
  /// The same number of GPUs on every node; for the NVLink variant, NVLink pairs with both GPUs in the group.
  void check_group(const platform::Platform& p, const Group& g) const {
    const auto by_node = g.ranks_by_node();
    const auto L = by_node.front().size();
    for (const auto& r : by_node)
      if (r.size() != L)
        throw ValueError(std::string(nvlink_ ? "hfreduce_nvlink" : "hfreduce") +
                         " needs the same number of GPUs on every node (whole nodes, or the same GPUs of each)");
    if (!nvlink_) return;
    const hw::NodeSpec& node = p.cluster().node;
    if (node.nvlink.kind != "pairs")
      throw ValueError("hfreduce_nvlink needs a node with NVLink pairs; \"" + node.name + "\" has nvlink \"" +
                       node.nvlink.kind + "\"");
    for (int r : by_node.front()) {
      const int gi = g.ranks[static_cast<std::size_t>(r)].index;
      bool paired = false;
      for (const auto& [a, b] : node.nvlink.pairs) {
        const int other = a == gi ? b : b == gi ? a : -1;
        if (other < 0) continue;
        for (int q : by_node.front())
          if (g.ranks[static_cast<std::size_t>(q)].index == other) paired = true;
      }
      if (!paired) throw ValueError("hfreduce_nvlink: every GPU of the group must have its NVLink partner in the group");
    }
  }

  bool nvlink_;
};

}  // namespace

std::unique_ptr<Algorithm> make_hfreduce() { return std::make_unique<HfReduce>(false); }
std::unique_ptr<Algorithm> make_hfreduce_nvlink() { return std::make_unique<HfReduce>(true); }

}  // namespace ffsim::coll
