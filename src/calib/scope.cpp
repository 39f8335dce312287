// Where a calibration holds: machine- and library-scoped values (applying them to the catalog:
// config/calibration_scope.cpp).
// SPDX-License-Identifier: Apache-2.0
#include "calib/scope.hpp"

#include <algorithm>

namespace ffsim::calib {

std::size_t CalibrationUse::applied() const {
  return static_cast<std::size_t>(std::count_if(values.begin(), values.end(), [](const ScopedOverride& s) { return s.applied; }));
}

}  // namespace ffsim::calib
