// The catalog of models/ with every kind the ffsim command registers, for unit tests.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "cli/context.hpp"
#include "config/catalog.hpp"

namespace ffsim::testing {

inline const config::Catalog& catalog() {
  static const config::Catalog c = [] {
    cli::Context ctx;
    cli::register_kinds(ctx);
    return config::Catalog::load(FFSIM_MODELS_DIR, ctx.kind_names());
  }();
  return c;
}

}  // namespace ffsim::testing
