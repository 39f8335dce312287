// JSON -> background traffic (platform/background.hpp): a document of kind "background" given to
// `ffsim collective --background FILE` (and validated by `ffsim check`).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "config/reader.hpp"
#include "platform/background.hpp"
#include "platform/machine.hpp"

namespace ffsim::config {

/// The value of "kind" that marks a background document.
inline constexpr const char* kBackground = "background";

/// Whether `root` is a background document: an object whose "kind" is "background".
[[nodiscard]] bool is_background(const Reader& root);

/// Parses a background document:
/// {"kind": "background", "name": "...", "description": "...",
///  "streams": [{"name": "checkpoint", "class": "storage", "direction": "write",
///               "first_node": {"value": 0, "source": "..."}, "nodes": {"value": 128, "source": "..."},
///               "targets_per_node": {"value": 1, "source": "..."},
///               "rate_per_node": {"value": "10GiB/s", "source": "..."}}]}
/// Every number is a fact with its source (as in models/). "class" defaults to "storage",
/// "direction" to "write", "first_node" to 0, "targets_per_node" to 1.
[[nodiscard]] platform::BackgroundSpec parse_background(const Reader& root);

/// Loads and parses a background file (sources required).
[[nodiscard]] platform::BackgroundSpec load_background(const std::string& path);

/// ConfigError at the offending stream's "nodes" when `b` cannot run on `m` (platform::background_fit).
void check_background_fits(const platform::BackgroundSpec& b, const platform::Machine& m);

}  // namespace ffsim::config
