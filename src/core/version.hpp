// The ffsim version string.
// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace ffsim {
/// "0.1.0" (from the CMake project version).
const char* version();
}  // namespace ffsim
