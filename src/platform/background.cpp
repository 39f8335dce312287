// Background traffic.
// SPDX-License-Identifier: Apache-2.0
#include "platform/background.hpp"

#include "core/error.hpp"

namespace ffsim::platform {

using sched::Place;

Place storage_client_dram(const Machine& m, int node) {
  const int nic = m.nic_for(Place::dram(node, 0));
  return Place::dram(node, m.socket_of(Place::nic(node, nic)));
}

BackgroundFit background_fit(const Machine& m, const BackgroundSpec& b) {
  const int nodes = m.cluster().nodes;
  const int storage = m.cluster().storage ? m.cluster().storage->count : 0;
  for (std::size_t i = 0; i < b.streams.size(); ++i) {
    const BackgroundStream& st = b.streams[i];
    const int k = static_cast<int>(i);
    if (storage == 0)
      return {k, "stream \"" + st.name +
                     "\" moves data to or from storage nodes, and the cluster has none; give the scenario "
                     "storage nodes (cluster.storage) or drop the stream"};
    if (static_cast<long long>(st.first_node) + st.nodes > nodes)
      return {k, "stream \"" + st.name + "\" needs compute nodes " + std::to_string(st.first_node) + " to " +
                     std::to_string(static_cast<long long>(st.first_node) + st.nodes - 1) + "; the cluster has " +
                     std::to_string(nodes) + " (0 to " + std::to_string(nodes - 1) + "); give at most " +
                     std::to_string(nodes - st.first_node > 0 ? nodes - st.first_node : 0) + " nodes from node " +
                     std::to_string(st.first_node)};
  }
  return {};
}

std::vector<sched::OpId> add_background(sched::Schedule& s, const Machine& m, const BackgroundSpec& b, double horizon) {
  const BackgroundFit fit = background_fit(m, b);
  if (fit.stream >= 0) throw ValueError(fit.message);
  if (!(horizon > 0)) throw ValueError("a background runs for a positive time");
  std::vector<sched::OpId> ops;
  const std::uint32_t tag = s.tag("background");
  for (const BackgroundStream& st : b.streams) {
    const double cap = st.rate_per_node / st.targets_per_node;
    std::vector<int> nodes(static_cast<std::size_t>(st.nodes));
    for (int j = 0; j < st.nodes; ++j) nodes[static_cast<std::size_t>(j)] = st.first_node + j;
    const std::vector<sched::OpId> o =
        add_storage_flows(s, m, nodes, st.targets_per_node, st.direction, cap * horizon, cap, st.cls, tag);
    ops.insert(ops.end(), o.begin(), o.end());
  }
  return ops;
}

std::vector<sched::OpId> add_storage_flows(sched::Schedule& s, const Machine& m, const std::vector<int>& nodes,
                                           int targets_per_node, BackgroundDirection direction, double bytes_per_flow,
                                           double cap, sched::TrafficClass cls, std::uint32_t tag) {
  if (!m.cluster().storage || m.cluster().storage->count == 0)
    throw ValueError("storage flows need storage nodes (cluster.storage)");
  if (targets_per_node < 1) throw ValueError("a node's storage flows go to at least one target");
  const int storage = m.cluster().storage->count;
  const bool write = direction == BackgroundDirection::Write;
  std::vector<sched::OpId> ops;
  // Node i's target t is storage node (i x targets + t) mod S: every storage node serves floor or
  // ceil of nodes x targets / S flows.
  std::int64_t k = 0;
  for (const int node : nodes) {
    const Place client = storage_client_dram(m, node);
    for (int t = 0; t < targets_per_node; ++t, ++k) {
      const Place disk = Place::storage_disk(static_cast<int>(k % storage));
      const sched::OpId op = s.transfer(write ? client : disk, write ? disk : client, Bytes(bytes_per_flow), cls, tag);
      s.set_rate_cap(op, cap);
      ops.push_back(op);
    }
  }
  return ops;
}

double background_rate(const BackgroundSpec& b) {
  double r = 0;
  for (const auto& st : b.streams) r += st.rate_per_node * st.nodes;
  return r;
}

}  // namespace ffsim::platform
