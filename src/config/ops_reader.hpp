// JSON -> the parameters of `ffsim ops` (ops/params.hpp): a scenario's "ops" section, or a job mix
// file given with --jobs.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include "config/reader.hpp"
#include "ops/params.hpp"

namespace ffsim::config {

/// Parses the "ops" section of a scenario whose cluster has `nodes` nodes of `gpus_per_node` GPUs.
/// A missing "zones" leaves cluster.zones 0 (the caller takes the fabric's zones).
[[nodiscard]] ops::OpsParams parse_ops(const Reader& r, int nodes, int gpus_per_node);

/// Parses an array of jobs (the "jobs" of an ops section) for `cluster`.
[[nodiscard]] std::vector<ops::JobSpec> parse_ops_jobs(const Reader& r, const ops::ClusterShape& cluster);

/// Parses a job mix file: {"jobs": [...]} (and an optional "description").
[[nodiscard]] std::vector<ops::JobSpec> load_ops_jobs(const std::string& path, const ops::ClusterShape& cluster);

}  // namespace ffsim::config
