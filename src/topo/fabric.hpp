// The fabric graph every topology generator yields: switches, endpoints (NIC ports), cables,
// deterministic up/down routes, and counts for the planner.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace ffsim::topo {

/// Switch tiers, bottom up. Inter-zone switches join the top tiers of several zones.
enum class Tier { Leaf, Spine, Core, InterZone };
[[nodiscard]] const char* tier_name(Tier t);  ///< "leaf", "spine", "core", "inter_zone"
[[nodiscard]] int tier_level(Tier t);         ///< 1, 2, 3, 3

/// What a cable joins. Backplane links inside a chassis (a director switch) are links, not cables.
enum class LinkKind { HostLeaf, LeafSpine, SpineCore, InterZone, Backplane };
[[nodiscard]] const char* link_kind_name(LinkKind k);  ///< "host_leaf", ..., "backplane"

struct Switch {
  std::string name;  ///< "z0.leaf3"
  Tier tier = Tier::Leaf;
  int zone = 0;      ///< -1 for switches that join zones
  int plane = 0;
  int pod = -1;      ///< three-layer fat-trees: the pod; -1 elsewhere
  int radix = 0;     ///< ports of the switch model
  std::string model; ///< catalog name of the switch model
  Seconds latency;   ///< port-to-port forwarding latency
};

/// A director (frame) chassis: switch chips packaged in one frame and joined by backplane links
/// instead of cables (the "800-port frame switch" of arXiv 2408.14158 Sec. III-B).
struct Chassis {
  std::string model;          ///< price-book name of the chassis ("cs8500")
  std::vector<int> switches;  ///< switch indices inside it
};

/// One NIC port attached to the fabric.
struct Endpoint {
  std::string name;   ///< "n17.nic0", "s3.nic1"
  bool storage = false;
  int node = 0;       ///< index among GPU nodes, or among storage nodes when `storage`
  int nic = 0;        ///< index of the NIC within its node
  int zone = 0;
  int plane = 0;
};

/// A full-duplex link between a lower vertex and an upper vertex (see Fabric::vertex ids).
struct Link {
  int lower = 0;
  int upper = 0;
  LinkKind kind = LinkKind::HostLeaf;
  BytesPerSecond bandwidth;  ///< per direction
  Seconds latency;           ///< propagation delay of the cable, one way (switch latency is apart)
  bool optical = false;      ///< needs two transceivers (switch-to-switch runs between racks)
};

/// One hop of a route: a link and its direction.
struct Hop {
  int link = 0;
  bool up = true;
  friend bool operator==(const Hop&, const Hop&) = default;
};

/// Counts for the capacity planner.
struct FabricCounts {
  int endpoints = 0;
  std::map<std::string, int> switches_by_tier;  ///< by tier_name
  int switches = 0;
  std::map<std::string, int> cables_by_kind;    ///< by link_kind_name (backplane links excluded)
  int cables = 0;
  int optics = 0;      ///< transceivers: two per optical cable
  int used_ports = 0;  ///< switch ports in use (one per link end on a switch)
  int total_ports = 0; ///< switch ports installed
  /// Host-facing leaf ports: per leaf, its radix less its links to spines or cores. Inter-zone
  /// links that hang off host ports use access points (Table III's "1,600 access points").
  int access_points = 0;
  int backplane_links = 0;                      ///< links inside a chassis (no cable, no optics)
  std::map<std::string, int> chassis_by_model;  ///< director chassis by model
  int chassis = 0;
  int switches_in_chassis = 0;                  ///< switch chips packaged in a chassis
  std::map<std::string, int> standalone_switches_by_model;  ///< switches not in a chassis, by model
  int layers = 0;  ///< highest tier level below the inter-zone bridges: 1 leaf, 2 leaf-spine, 3 with core
  int zones = 0;   ///< distinct zones among switches (inter-zone switches excluded)
  int planes = 0;  ///< distinct planes among switches
};

/// A fabric: vertices are endpoints [0, E) followed by switches [E, E + S).
/// Build it with add_*/connect, then finalize(); routes are deterministic up/down (D-mod-k).
class Fabric {
public:
  /// Bounds on what a design may generate (a ValueError beyond them, not an out-of-memory crash:
  /// 20,000-port switches once asked a full fat-tree for 2e8 links). 2^22 links hold a full
  /// two-layer fat-tree of 2,896-port switches; Fire-Flyer 2's two 800-port zones have 640,000.
  static constexpr std::size_t kMaxLinks = std::size_t{1} << 22;
  static constexpr std::size_t kMaxSwitches = std::size_t{1} << 20;
  int add_endpoint(Endpoint e);   ///< returns the endpoint index; all endpoints come before any switch
  int add_switch(Switch s);       ///< returns the switch index
  /// Packages switches (already added) into one chassis; a switch sits in one chassis at most.
  int add_chassis(Chassis c);
  /// Placement fields (zone, plane) of an endpoint may be set until finalize().
  Endpoint& endpoint(int i) { return endpoints_[static_cast<std::size_t>(i)]; }
  /// Placement fields of a switch (pod, zone) may be set until finalize().
  Switch& switch_at(int i) { return switches_[static_cast<std::size_t>(i)]; }
  /// Joins two vertices; `upper` must be a switch of a higher level than `lower`
  /// (or the same level for inter-zone joins is not allowed). Returns the link index.
  int connect(int lower_vertex, int upper_vertex, LinkKind kind, BytesPerSecond bw, Seconds latency, bool optical);
  [[nodiscard]] int switch_vertex(int switch_index) const { return static_cast<int>(endpoints_.size()) + switch_index; }
  [[nodiscard]] int endpoint_vertex(int endpoint_index) const { return endpoint_index; }
  [[nodiscard]] bool is_switch_vertex(int v) const { return v >= static_cast<int>(endpoints_.size()); }

  /// Builds adjacency and reachability; call once after the last connect().
  void finalize();

  /// The up/down route from endpoint `src` to endpoint `dst` (empty if src == dst).
  /// Deterministic: at each level up, the link is chosen among those that still reach `dst`
  /// (preferring parents that reach it downwards) by D-mod-k on dst's index; down links likewise.
  /// Zones joined by inter-zone switches that hang off leaves (Fire-Flyer 2's "limited number of
  /// links") are crossed as: up/down to a bridge leaf, up to the inter-zone switch, down to a
  /// leaf of the other zone, up/down to dst; the bridge is chosen by dst's index, the bridge
  /// leaves by D-mod-k. Throws ValueError if `dst` cannot be reached: another plane (planes are
  /// separate fabrics) or zones without a bridge.
  [[nodiscard]] std::vector<Hop> route(int src, int dst) const;
  /// Latency of one hop: the cable's propagation plus the forwarding latency of the switch
  /// the hop enters (none when it enters an endpoint).
  [[nodiscard]] Seconds hop_latency(const Hop& h) const;
  /// One-way latency of a route: the sum of its hops' latencies.
  [[nodiscard]] Seconds route_latency(const std::vector<Hop>& r) const;

  [[nodiscard]] FabricCounts counts() const;

  [[nodiscard]] const std::vector<Switch>& switches() const { return switches_; }
  [[nodiscard]] const std::vector<Endpoint>& endpoints() const { return endpoints_; }
  [[nodiscard]] const std::vector<Link>& links() const { return links_; }
  [[nodiscard]] const std::vector<Chassis>& chassis() const { return chassis_; }
  /// The leaf (switch index) an endpoint hangs off.
  [[nodiscard]] int leaf_of(int endpoint) const;
  /// An endpoint's link to its leaf: the first hop of every route from it (up) and the last of
  /// every route to it (down). The hops between depend on the source only through its leaf.
  [[nodiscard]] int host_link(int endpoint) const { return host_link_[static_cast<std::size_t>(endpoint)]; }

private:
  // Appends the up/down hops from switch `from` to leaf switch `to_leaf`; false if unreachable.
  bool updown(int from, int to_leaf, std::size_t& selector, std::vector<Hop>& hops) const;
  [[nodiscard]] bool reaches_down(int sw, int leaf_bit) const;
  [[nodiscard]] bool reaches(int sw, int leaf_bit) const;

  std::vector<Switch> switches_;
  std::vector<Endpoint> endpoints_;
  std::vector<Link> links_;
  std::vector<Chassis> chassis_;
  bool finalized_ = false;
  // Per vertex: links going up / down, in creation order.
  std::vector<std::vector<int>> up_, down_;
  std::vector<int> host_link_;    // per endpoint: its link to a leaf
  std::vector<int> lid_;          // per endpoint: its number within its plane (D-mod-k's selector)
  std::vector<int> leaf_bit_;     // per switch: bit index if it is a leaf, else -1
  int leaf_count_ = 0;
  std::size_t words_ = 0;         // 64-bit words per leaf bitset
  std::vector<std::uint64_t> down_reach_;  // per switch: leaves reachable going down only
  std::vector<std::uint64_t> reach_;       // per switch: leaves reachable by up* then down*
};

}  // namespace ffsim::topo
