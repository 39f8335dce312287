// The ffsim version string.
// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace ffsim {
/// "0.1.0" (from the CMake project version).
const char* version();
/// The commit built: `git describe --always --dirty` of the source tree at the last build
/// ("f12886c", "f12886c-dirty"), or "unknown" when it is not a git checkout.
const char* git_commit();
}  // namespace ffsim
