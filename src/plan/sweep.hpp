// Sweeps of one numeric knob of a scenario: each value patches the scenario document (an RFC 7386
// merge patch) before it is parsed, so any number in a scenario can be swept.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/catalog.hpp"
#include "config/reader.hpp"
#include "plan/design.hpp"

namespace ffsim::plan {

/// A knob and its values, from "gpus=2000:32000:2000" (start:stop:step, stop included when hit)
/// or "fabric.oversubscription=1,2,3" (a list).
struct Knob {
  std::string name;                         ///< as written: "gpus", "fabric.oversubscription"
  std::vector<std::string> path;            ///< keys into the scenario: {"cluster", "gpus"}
  std::vector<std::vector<std::string>> clear;  ///< keys the patch deletes ("gpus" clears cluster.nodes)
  std::vector<double> values;
  [[nodiscard]] std::string pointer() const;  ///< "/cluster/gpus"
};

/// Parses "name=start:stop:step" or "name=v1,v2,...". Names: "gpus" (cluster.gpus), "nodes"
/// (cluster.nodes), "storage" (cluster.storage.count), a dotted path such as
/// "fabric.oversubscription", or a key of the scenario's "fabric" or "cluster" section.
/// `doc` resolves bare keys. Throws UsageError on bad syntax or an unknown knob.
[[nodiscard]] Knob parse_knob(const std::string& text, const config::Document& doc);

/// The document with the knob set to `value` (an integer when `value` is integral).
[[nodiscard]] config::Document patch(const config::Document& doc, const Knob& k, double value);

/// One value of a sweep: its plan, or why the design cannot take it.
struct SweepRow {
  double value = 0;
  std::optional<DesignPlan> plan;
  int gpus = 0;              ///< GPUs of the cluster at this value (also when it does not fit)
  bool fits = false;
  std::string note;          ///< "does not fit: <reason>", "invalid: <reason>", "now 3 layers", ""
};

/// Plans `doc` (which must parse on its own) at every value of the knob. A value the design cannot
/// hold becomes a row marked "does not fit: <the generator's reason>"; a value the scenario rejects
/// at the knob's own JSON pointer for this design (e.g. GPUs that are not a multiple of the node's)
/// a row marked "invalid: <reason>". A value the key never takes (the reader's "expected ..." type
/// and range errors: 0 or -16 GPUs, beyond the maximum) and a knob the scenario rejects elsewhere
/// (a key its fabric does not have) are UsageErrors naming --sweep.
/// Rows where the layers, zones or planes change from the previous fitting row say so in `note`.
[[nodiscard]] std::vector<SweepRow> sweep(const config::Document& doc, const config::Catalog& cat, const Knob& k,
                                          const PlanOptions& opt = {});

}  // namespace ffsim::plan
