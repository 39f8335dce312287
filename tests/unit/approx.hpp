// Relative tolerances with doctest's Approx.
// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace ffsim::testing {

/// doctest's Approx(x).epsilon(e) accepts |a - x| < e * (scale + max(|a|, |x|)) with scale 1 by
/// default: for values below one (seconds, latencies) that is an absolute tolerance of about e, far
/// looser than e relative (1e-9 on 20 ms allows 5e-8 relative; 1e-6 on a 10 us latency, 10%).
/// Tests write Approx(x).epsilon(e).scale(kRelative) so that e is relative; the tiny scale keeps
/// 0 == Approx(0) true (with scale 0 it fails: the comparison is strict).
inline constexpr double kRelative = 1e-300;

}  // namespace ffsim::testing
