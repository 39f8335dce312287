// "multi_plane": one NIC per GPU, one two-layer fat-tree per plane (arXiv 2408.14158 Sec. IX).
// SPDX-License-Identifier: Apache-2.0
#include "topo/multi_plane.hpp"

#include "core/error.hpp"
#include "core/format.hpp"
#include "topo/two_layer.hpp"

namespace ffsim::topo {

namespace {

//   plane 0                  plane 1                  ...   plane P-1
//   spines (up)              spines (up)                    spines (up)
//   leaves (<= k)            leaves (<= k)                  leaves (<= k)
//     | nic0, nic(P)...        | nic1, nic(P+1)...            | nic(P-1), ...
//   node n: gpu0-nic0  gpu1-nic1  ...  gpu7-nic7         (one NIC per GPU; NIC i -> plane i mod P)
// Each plane is a two-layer fat-tree of its own switches: P planes of radix-k switches at 1:1
// hold P k^2/2 NIC ports (4 x 128^2/2 = 32,768; 8 x 64^2/2 = 16,384) without a third layer.
class MultiPlane final : public Topology {
public:
  MultiPlane(const hw::SwitchSpec& sw, const CableLatencies& c, int planes, double oversub, bool full)
      : sw_(sw), cables_(c), planes_(planes), oversub_(oversub), full_(full) {}

  Fabric build(const FabricDemand& d) const override {
    if (d.gpus_per_node > 0 && d.nics_per_gpu_node != d.gpus_per_node)
      throw ValueError("a multi-plane fabric gives every GPU its own NIC, but the GPU node has " +
                       std::to_string(d.gpus_per_node) + " GPUs and " + std::to_string(d.nics_per_gpu_node) +
                       " compute NIC" + (d.nics_per_gpu_node == 1 ? "" : "s"));
    if (d.nics_per_gpu_node % planes_ != 0)
      throw ValueError(std::to_string(d.nics_per_gpu_node) + " compute NICs per node do not split evenly over " +
                       std::to_string(planes_) + " planes (NIC i joins plane i mod " + std::to_string(planes_) + ")");
    if (d.storage_nodes > 0 && d.nics_per_storage_node % planes_ != 0)
      throw ValueError("storage nodes have " + std::to_string(d.nics_per_storage_node) +
                       (d.nics_per_storage_node == 1 ? " NIC; " : " NICs; ") +
                       std::to_string(planes_) + " planes need a multiple of " + std::to_string(planes_) +
                       " so that every plane reaches every storage node");
    Fabric f;
    const auto ids = add_demand_endpoints(f, d);
    std::vector<std::vector<int>> per_plane(static_cast<std::size_t>(planes_));
    for (int id : ids) per_plane[static_cast<std::size_t>(f.endpoint(id).nic % planes_)].push_back(id);
    const TwoLayerShape most = two_layer_shape(sw_.ports, oversub_, 0, true);
    long long largest = 0;
    for (const auto& p : per_plane) largest = std::max<long long>(largest, static_cast<long long>(p.size()));
    if (largest > most.capacity())
      throw ValueError(std::to_string(planes_) + " planes of two-layer fat-trees of " + std::to_string(sw_.ports) +
                       "-port switches at " + std::to_string(most.down) + ":" + std::to_string(most.up) +
                       " hold at most " + fmt_int(planes_ * most.capacity()) + " endpoints (" +
                       std::to_string(planes_) + " planes x " + std::to_string(most.leaves) + " leaves x " +
                       std::to_string(most.down) + " hosts); the cluster needs " + fmt_int(d.endpoints()) + " (" +
                       fmt_int(largest) + " in one plane)");
    for (int p = 0; p < planes_; ++p) {
      const auto& members = per_plane[static_cast<std::size_t>(p)];
      const TwoLayerShape shape =
          two_layer_shape(sw_.ports, oversub_, static_cast<long long>(members.size()), full_);
      add_two_layer_zone(f, shape, sw_, cables_, d.host_bandwidth, members, 0, p, "plane" + std::to_string(p) + ".");
    }
    f.finalize();
    return f;
  }

  FabricSize size_of(const FabricDemand& d) const override {
    // NIC i of a node joins plane i mod P: each plane takes nics / P ports of every node.
    const long long per_plane = static_cast<long long>(d.gpu_nodes) * (d.nics_per_gpu_node / planes_) +
                                static_cast<long long>(d.storage_nodes) * (d.nics_per_storage_node / planes_);
    const FabricSize one = two_layer_size(two_layer_shape(sw_.ports, oversub_, per_plane, full_), per_plane);
    FabricSize z;
    z.endpoints = d.endpoints();
    z.switches = planes_ * one.switches;
    z.leaves = planes_ * one.leaves;
    z.links = planes_ * one.links;
    return z;
  }

  long long capacity() const override { return planes_ * two_layer_shape(sw_.ports, oversub_, 0, true).capacity(); }

  std::string summary() const override {
    const auto s = two_layer_shape(sw_.ports, oversub_, 0, true);
    return std::to_string(planes_) + " planes of two-layer fat-trees (" + std::to_string(sw_.ports) + "-port " +
           sw_.name + ", " + std::to_string(s.down) + ":" + std::to_string(s.up) + (full_ ? ", full build" : "") +
           "), one NIC per GPU";
  }

private:
  hw::SwitchSpec sw_;
  CableLatencies cables_;
  int planes_;
  double oversub_;
  bool full_;
};

}  // namespace

std::unique_ptr<Topology> make_multi_plane(const MultiPlaneParams& p, const hw::SwitchSpec& sw, const CableLatencies& c) {
  (void)two_layer_shape(sw.ports, p.oversubscription, 0, true);
  return std::make_unique<MultiPlane>(sw, c, p.planes, p.oversubscription, p.full);
}

}  // namespace ffsim::topo
