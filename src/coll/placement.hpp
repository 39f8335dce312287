// Where a job's nodes are: the `--placement` knob of `collective` and `train` (issue 30).
// packed (the first nodes, node by node: today's default, and the paper's rule that a job that
// fits one zone stays in it), spread (evenly over the nodes of the first zone, or of the cluster
// when the job does not fit one zone), cross-zone with the share of nodes in the first zone, and
// random with a seed. Ranks fill the chosen nodes in order of their index, as a scheduler's sorted
// host list gives them to NCCL and HFReduce. Routing stays the fabric's static D-mod-k.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coll/collective.hpp"

namespace ffsim::coll {

struct Placement {
  enum class Kind { Packed, Spread, CrossZone, Random };
  Kind kind = Kind::Packed;
  double share = 0.5;       ///< CrossZone: fraction of the job's nodes in the first zone, (0, 1)
  std::uint64_t seed = 1;   ///< Random
  /// "packed", "spread", "cross-zone:0.5", "random:7" (what parse_placement reads back).
  [[nodiscard]] std::string name() const;
  [[nodiscard]] bool packed() const { return kind == Kind::Packed; }
};

/// Reads "packed", "spread", "cross-zone[:SHARE]" (SHARE in (0, 1), default 0.5) or
/// "random[:SEED]" (default 1). UsageError with the valid forms (and a did-you-mean) otherwise.
[[nodiscard]] Placement parse_placement(const std::string& text);

/// The zone of each node's first compute NIC (all 0 without a fabric).
[[nodiscard]] std::vector<int> node_zones(const platform::Platform& p);

/// The nodes of a job of `gpus` GPUs under `pl`, ascending. UsageError when it cannot be placed
/// (more GPUs than the cluster has, a cross-zone job on one node or on a one-zone fabric, a zone
/// too small for its share). Messages begin with `what` ("--placement cross-zone:0.3", "--cross-zone").
[[nodiscard]] std::vector<int> place_nodes(const platform::Platform& p, int gpus, const Placement& pl,
                                           const std::string& what);

/// The group of `gpus` GPUs on the nodes of place_nodes, node by node (the last node may be
/// partly used, as in Group::first_gpus, which `packed` equals).
[[nodiscard]] Group place_group(const platform::Platform& p, int gpus, const Placement& pl, const std::string& what);

}  // namespace ffsim::coll
