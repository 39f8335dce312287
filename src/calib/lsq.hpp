// Least squares for calibration: weighted linear least squares and Levenberg-Marquardt (Eigen).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <vector>

namespace ffsim::calib {

/// Minimizes sum_i (w_i (A_i . x - b_i))^2 over x. `a` holds the rows of A. Rank-deficient
/// systems get the minimum-norm solution (complete orthogonal decomposition).
[[nodiscard]] std::vector<double> linear_least_squares(const std::vector<std::vector<double>>& a,
                                                       const std::vector<double>& b, const std::vector<double>& w);

struct LmOptions {
  int max_iterations = 60;
  /// Stops when a step changes the cost by less than this fraction, or no x moves by more than it.
  double tolerance = 1e-13;
  /// Central differences with step fd_step x max(|x_j|, fd_floor).
  double fd_step = 1e-6;
  double fd_floor = 1e-3;
};

struct LmResult {
  std::vector<double> x;
  double cost = 0;         ///< sum of squared residuals at x
  int iterations = 0;
  int evaluations = 0;     ///< calls of the residual function
  /// Per parameter: the norms of the one-sided difference quotients of r at x, raising it (up)
  /// and lowering it (down; 0 at its bound). Both 0: no residual depends on it (the data do not
  /// pin it down). One of them 0: x sits on a kink beyond which the parameter stops mattering (for
  /// example an overhead hidden behind other work), so x is only a bound.
  std::vector<double> sensitivity_up, sensitivity_down;
};

/// Levenberg-Marquardt on r(x) with a central-difference Jacobian, each x_j kept >= lower[j]: an
/// x_j at its bound that the gradient pushes further down is held there for the step (an active
/// set), the others take the step of the problem without it. `r` must return the same number of
/// residuals for every x.
[[nodiscard]] LmResult levenberg_marquardt(const std::function<std::vector<double>(const std::vector<double>&)>& r,
                                           std::vector<double> x0, const std::vector<double>& lower,
                                           const LmOptions& o = {});

}  // namespace ffsim::calib
