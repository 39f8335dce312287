// Closed-form loads: all pairs of ranks at once, a node's parts counted once.
// SPDX-License-Identifier: Apache-2.0
#include "platform/loads.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <map>

#include "core/error.hpp"

namespace ffsim::platform {

using sched::Place;

PairLoads all_pairs_loads(const Machine& mc, const Router& rt, const std::vector<Place>& ranks, double bytes) {
  const topo::Fabric* fabric = mc.fabric();
  PairLoads out;
  out.load.assign(mc.resource_count(), 0.0);
  const std::size_t n = ranks.size();
  auto add = [&](const Path& path, double amount) {
    for (std::uint32_t r : path.resources) out.load[r] += amount;
    out.min_rate_cap = std::min(out.min_rate_cap, path.rate_cap);
  };
  auto note = [&](double latency, bool net) {
    (net ? out.any_net : out.any_local) = true;
    if (net) out.max_net_latency = std::max(out.max_net_latency, latency);
  };
  const bool storage = std::any_of(ranks.begin(), ranks.end(), [](const Place& x) { return x.storage; });
  if (storage || fabric == nullptr) {
    // Storage ranks pick their NIC by the peer's zone: one path per pair.
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b) {
        if (a == b) continue;
        const Path q = rt.route(ranks[a], ranks[b]);
        add(q, bytes);
        note(q.latency, ranks[a].node != ranks[b].node || ranks[a].storage != ranks[b].storage);
      }
    return out;
  }
  // A node's part of a path (a local path, a sending or a receiving side) depends on the node
  // model alone, not on which node: each is built once, kept relative to the node's first
  // resource, and shifted by each node's base (every GPU node has the same template).
  struct Part {
    std::vector<std::uint32_t> rel;
    double latency = 0, rate_cap = 0;
  };
  std::map<std::array<int, 5>, Part> parts;
  auto cached = [&](const std::array<int, 5>& key, const Place& at,
                    const std::function<void(Path&)>& build) -> const Part& {
    auto it = parts.find(key);
    if (it == parts.end()) {
      Path p;
      build(p);
      Part part;
      const std::uint32_t b0 = mc.base(at);
      // (Relative to the node: a machine the ranks share, PlatformOptions::host_pool, is not.)
      FFSIM_ASSERT(!mc.options().host_pool, "pair loads: a platform whose nodes share a host (calibration only)");
      for (std::uint32_t r : p.resources) part.rel.push_back(r - b0);
      part.latency = p.latency;
      part.rate_cap = p.rate_cap;
      it = parts.emplace(key, std::move(part)).first;
    }
    return it->second;
  };
  auto add_part = [&](const Part& part, const Place& at, double amount) {
    const std::uint32_t b0 = mc.base(at);
    for (std::uint32_t r : part.rel) out.load[b0 + r] += amount;
    out.min_rate_cap = std::min(out.min_rate_cap, part.rate_cap);
  };
  auto kind = [](const Place& x) { return static_cast<int>(x.kind); };
  // Pairs inside a node: one local path each (a node holds a few ranks).
  std::map<int, std::vector<std::size_t>> by_node;
  for (std::size_t i = 0; i < n; ++i) by_node[ranks[i].node].push_back(i);
  for (const auto& [node, members] : by_node)
    for (std::size_t a : members)
      for (std::size_t b : members) {
        if (a == b) continue;
        const Place &x = ranks[a], &y = ranks[b];
        const Part& q = cached({0, kind(x), x.index, kind(y), y.index}, x, [&](Path& p) { p = rt.route(x, y); });
        add_part(q, x, bytes);
        note(q.latency, false);
      }
  if (by_node.size() < 2) return out;

  // Between nodes, a pair's path is rt.send_side(a, NIC for b's plane) + fabric + rt.recv_side(b).
  const auto& eps = fabric->endpoints();
  const std::size_t E = eps.size();
  const auto K = static_cast<std::size_t>(mc.nics_per_gpu_node());
  auto node_of_ep = [&](std::size_t e) { return static_cast<int>(e / K); };
  auto nic_place = [&](int node, int nic) { return Place::nic(node, nic); };
  std::vector<int> planes;  // distinct planes of the receivers' NICs, in order of first use
  std::vector<int> plane_ix(E, -1);
  std::vector<std::size_t> recv_count(E, 0);  // ranks receiving through each endpoint
  std::vector<double> recv_lat(E, 0.0);
  std::vector<std::size_t> plane_total;                   // receivers per plane
  std::map<std::pair<int, int>, std::size_t> node_plane;  // receivers per (node, plane index)
  for (std::size_t b = 0; b < n; ++b) {
    const Place& to = ranks[b];
    const int nb = mc.nic_for(to);
    const auto e = static_cast<std::size_t>(mc.endpoint_of(nic_place(to.node, nb)));
    const int pl = eps[e].plane;
    auto it = std::find(planes.begin(), planes.end(), pl);
    if (it == planes.end()) {
      planes.push_back(pl);
      plane_total.push_back(0);
      it = planes.end() - 1;
    }
    const auto pi = static_cast<std::size_t>(it - planes.begin());
    plane_ix[e] = static_cast<int>(pi);
    ++plane_total[pi];
    ++node_plane[{to.node, static_cast<int>(pi)}];
    // Every rank off b's node sends to b.
    const std::size_t senders = n - by_node[to.node].size();
    const Part& q = cached({2, kind(to), to.index, nb, 0}, to, [&](Path& p) { rt.recv_side(nb, to, p); });
    add_part(q, to, static_cast<double>(senders) * bytes);
    const bool first = recv_count[e] == 0;
    ++recv_count[e];
    recv_lat[e] = first ? q.latency : std::max(recv_lat[e], q.latency);
  }
  // Senders: per rank and receivers' plane, the NIC it leaves by and its side of the path.
  const std::size_t P = planes.size();
  std::vector<std::size_t> send_count(P * E, 0);
  std::vector<double> send_lat(P * E, 0.0);
  std::vector<int> send_nic_of(E, -1);
  for (std::size_t a = 0; a < n; ++a) {
    const Place& from = ranks[a];
    for (std::size_t pi = 0; pi < P; ++pi) {
      const auto own = node_plane.find({from.node, static_cast<int>(pi)});
      const std::size_t peers = plane_total[pi] - (own == node_plane.end() ? 0 : own->second);
      if (peers == 0) continue;
      const int na = rt.send_nic(from, planes[pi]);
      const auto e = static_cast<std::size_t>(mc.endpoint_of(nic_place(from.node, na)));
      send_nic_of[e] = na;
      const Part& q = cached({1, kind(from), from.index, na, 0}, from, [&](Path& p) { rt.send_side(from, na, p); });
      add_part(q, from, static_cast<double>(peers) * bytes);
      const bool first = send_count[pi * E + e] == 0;
      ++send_count[pi * E + e];
      send_lat[pi * E + e] = first ? q.latency : std::max(send_lat[pi * E + e], q.latency);
    }
  }
  // The fabric: a route is the sender's link up to its leaf, hops that depend on the sender only
  // through that leaf (Fabric::host_link), then the receiver's link down. Per receiving endpoint,
  // the senders of one leaf share those hops.
  auto hop_resource = [&](const topo::Hop& h) { return mc.fabric_resource(h); };
  // Per leaf, its senders grouped by node (a node's endpoints are consecutive): the count, the
  // largest latency (its side + its link up + its NIC), and the two nodes of largest latency, so
  // that a receiver finds the senders off its own node without visiting them.
  struct NodeSenders {
    int node;
    std::size_t count;
    double lat;
    std::size_t ep;  // one of its endpoints: a route's source
  };
  struct LeafGroup {
    int leaf;
    std::size_t total = 0;
    std::vector<NodeSenders> nodes;
    int best = -1, second = -1;  // indices into nodes: largest latency, largest on another node
  };
  const auto switch_count = fabric->switches().size();
  for (std::size_t pi = 0; pi < P; ++pi) {
    std::vector<LeafGroup> groups;
    std::vector<int> group_of_leaf(switch_count, -1);
    std::size_t receivers = 0;
    for (std::size_t e = 0; e < E; ++e)
      if (plane_ix[e] == static_cast<int>(pi)) receivers += recv_count[e];
    for (std::size_t e = 0; e < E; ++e) {
      const std::size_t c = send_count[pi * E + e];
      if (c == 0) continue;
      const int node = node_of_ep(e);
      const auto own = node_plane.find({node, static_cast<int>(pi)});
      const std::size_t peers = receivers - (own == node_plane.end() ? 0 : own->second);
      const topo::Hop up{fabric->host_link(static_cast<int>(e)), true};
      out.load[hop_resource(up)] += static_cast<double>(c * peers) * bytes;
      const int na = send_nic_of[e];
      const double lat = send_lat[pi * E + e] + fabric->hop_latency(up).si() +
                         mc.model(nic_place(node, na)).spec->nics[static_cast<std::size_t>(na)].nic.latency.si();
      const auto leaf = static_cast<std::size_t>(fabric->leaf_of(static_cast<int>(e)));
      if (group_of_leaf[leaf] < 0) {
        group_of_leaf[leaf] = static_cast<int>(groups.size());
        groups.emplace_back();
        groups.back().leaf = static_cast<int>(leaf);
      }
      LeafGroup& g = groups[static_cast<std::size_t>(group_of_leaf[leaf])];
      g.total += c;
      if (!g.nodes.empty() && g.nodes.back().node == node) {
        g.nodes.back().count += c;
        g.nodes.back().lat = std::max(g.nodes.back().lat, lat);
      } else {
        g.nodes.push_back(NodeSenders{node, c, lat, e});
      }
    }
    for (LeafGroup& g : groups)
      for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
        const double l = g.nodes[static_cast<std::size_t>(i)].lat;
        if (g.best < 0 || l > g.nodes[static_cast<std::size_t>(g.best)].lat) {
          g.second = g.best;
          g.best = i;
        } else if (g.second < 0 || l > g.nodes[static_cast<std::size_t>(g.second)].lat) {
          g.second = i;
        }
      }
    for (std::size_t eb = 0; eb < E; ++eb) {
      if (plane_ix[eb] != static_cast<int>(pi) || recv_count[eb] == 0) continue;
      const int node_b = node_of_ep(eb);
      for (const LeafGroup& g : groups) {
        // The senders of this leaf on other nodes than the receiver's.
        const auto it = std::lower_bound(g.nodes.begin(), g.nodes.end(), node_b,
                                         [](const NodeSenders& ns, int node) { return ns.node < node; });
        const std::size_t m = g.total - (it != g.nodes.end() && it->node == node_b ? it->count : 0);
        if (m == 0) continue;
        const NodeSenders& top = g.nodes[static_cast<std::size_t>(g.best)];
        const NodeSenders& other = top.node != node_b ? top : g.nodes[static_cast<std::size_t>(g.second)];
        const auto hops = fabric->route(static_cast<int>(other.ep), static_cast<int>(eb));
        const double amount = static_cast<double>(m * recv_count[eb]) * bytes;
        double rest = 0;
        for (std::size_t h = 1; h < hops.size(); ++h) {
          out.load[hop_resource(hops[h])] += amount;
          rest += fabric->hop_latency(hops[h]).si();
        }
        note(other.lat + rest + recv_lat[eb], true);
      }
    }
  }
  return out;
}

}  // namespace ffsim::platform
