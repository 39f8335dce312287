// Loading scenario documents: one file, or a chain of files joined by "extends".
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "config/reader.hpp"

namespace ffsim::config {

/// Loads a scenario file. If it has "extends": "<file>" (a path relative to the scenario's
/// folder; ".json" may be omitted), the base is loaded first and this file is merged over it
/// (RFC 7386), recursively; circular and dangling chains are ConfigErrors at /extends.
/// Scenarios do not require sources: a bare value or a {"value", "source"} fact both work.
[[nodiscard]] Document load_scenario(const std::string& path);

}  // namespace ffsim::config
