// Least squares for calibration (Eigen lives in src/calib only).
// SPDX-License-Identifier: Apache-2.0
#include "calib/lsq.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

#include "core/error.hpp"

namespace ffsim::calib {

std::vector<double> linear_least_squares(const std::vector<std::vector<double>>& a, const std::vector<double>& b,
                                         const std::vector<double>& w) {
  FFSIM_ASSERT(a.size() == b.size() && b.size() == w.size(), "linear_least_squares: rows, targets and weights differ in number");
  if (a.empty()) return {};
  const auto m = static_cast<Eigen::Index>(a.size());
  const auto n = static_cast<Eigen::Index>(a.front().size());
  Eigen::MatrixXd A(m, n);
  Eigen::VectorXd y(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    const auto& row = a[static_cast<std::size_t>(i)];
    FFSIM_ASSERT(static_cast<Eigen::Index>(row.size()) == n, "linear_least_squares: ragged rows");
    const double wi = w[static_cast<std::size_t>(i)];
    for (Eigen::Index j = 0; j < n; ++j) A(i, j) = wi * row[static_cast<std::size_t>(j)];
    y(i) = wi * b[static_cast<std::size_t>(i)];
  }
  const Eigen::VectorXd x = A.completeOrthogonalDecomposition().solve(y);
  return std::vector<double>(x.data(), x.data() + n);
}

namespace {

Eigen::VectorXd to_eigen(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

}  // namespace

LmResult levenberg_marquardt(const std::function<std::vector<double>(const std::vector<double>&)>& r,
                             std::vector<double> x0, const std::vector<double>& lower, const LmOptions& o) {
  FFSIM_ASSERT(x0.size() == lower.size(), "levenberg_marquardt: bounds and start differ in size");
  const std::size_t n = x0.size();
  LmResult res;
  for (std::size_t j = 0; j < n; ++j) x0[j] = std::max(x0[j], lower[j]);
  auto eval = [&](const std::vector<double>& x) {
    ++res.evaluations;
    return to_eigen(r(x));
  };
  std::vector<double> x = x0;
  Eigen::VectorXd rx = eval(x);
  const Eigen::Index m = rx.size();
  double cost = rx.squaredNorm();
  auto jacobian = [&](const std::vector<double>& at) {
    Eigen::MatrixXd J(m, static_cast<Eigen::Index>(n));
    for (std::size_t j = 0; j < n; ++j) {
      const double h = o.fd_step * std::max(std::fabs(at[j]), o.fd_floor);
      std::vector<double> hi = at, lo = at;
      hi[j] += h;
      const bool central = at[j] - h >= lower[j];
      if (central) lo[j] -= h;
      const Eigen::VectorXd rh = eval(hi);
      const Eigen::VectorXd rl = central ? eval(lo) : rx;
      FFSIM_ASSERT(rh.size() == m && rl.size() == m, "levenberg_marquardt: the residual count changed");
      J.col(static_cast<Eigen::Index>(j)) = (rh - rl) / (central ? 2 * h : h);
    }
    return J;
  };
  if (n == 0) {
    res.x = x;
    res.cost = cost;
    return res;
  }
  double lambda = -1;
  Eigen::MatrixXd J = jacobian(x);
  for (res.iterations = 0; res.iterations < o.max_iterations && cost > 0; ++res.iterations) {
    const Eigen::MatrixXd A = J.transpose() * J;
    const Eigen::VectorXd g = J.transpose() * rx;
    const double dmax = A.diagonal().maxCoeff();
    if (!(dmax > 0)) break;  // nothing depends on any parameter
    if (lambda < 0) lambda = 1e-3;
    // Held where they are: a parameter no residual depends on, and one at its bound that the
    // gradient pushes further down (the step of the others is then the step of the problem
    // without it, not one that assumes it moves and is then cut back at the bound).
    std::vector<bool> held(n);
    for (std::size_t j = 0; j < n; ++j) {
      const auto e = static_cast<Eigen::Index>(j);
      held[j] = A(e, e) <= 1e-14 * dmax || (x[j] <= lower[j] && g(e) > 0);
    }
    bool accepted = false, done = false;
    while (!accepted && lambda < 1e16) {
      Eigen::MatrixXd M = A;
      for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(n); ++j) {
        if (held[static_cast<std::size_t>(j)]) {
          M.row(j).setZero();
          M.col(j).setZero();
          M(j, j) = 1;
        } else {
          M(j, j) += lambda * A(j, j);
        }
      }
      Eigen::VectorXd rhs = -g;
      for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(n); ++j)
        if (held[static_cast<std::size_t>(j)]) rhs(j) = 0;
      const Eigen::VectorXd step = M.ldlt().solve(rhs);
      std::vector<double> xn = x;
      double moved = 0;
      for (std::size_t j = 0; j < n; ++j) {
        xn[j] = std::max(x[j] + step(static_cast<Eigen::Index>(j)), lower[j]);
        moved = std::max(moved, std::fabs(xn[j] - x[j]) / std::max(std::fabs(x[j]), o.fd_floor));
      }
      if (moved == 0) {
        done = true;
        break;
      }
      const Eigen::VectorXd rn = eval(xn);
      const double cn = rn.squaredNorm();
      if (cn < cost) {
        accepted = true;
        const double gain = (cost - cn) / cost;
        x = xn;
        rx = rn;
        cost = cn;
        lambda = std::max(lambda / 3, 1e-12);
        if (gain <= o.tolerance || moved <= o.tolerance) done = true;
      } else {
        if (moved <= o.tolerance) {
          done = true;
          break;
        }
        lambda *= 4;
      }
    }
    if (!accepted || done) break;
    J = jacobian(x);
  }
  res.sensitivity_up.assign(n, 0);
  res.sensitivity_down.assign(n, 0);
  for (std::size_t j = 0; j < n; ++j) {
    const double h = 1e-4 * std::max(std::fabs(x[j]), o.fd_floor);  // wide enough to step over a kink at x
    std::vector<double> hi = x, lo = x;
    hi[j] += h;
    res.sensitivity_up[j] = (eval(hi) - rx).norm() / h;
    if (x[j] - h >= lower[j]) {
      lo[j] -= h;
      res.sensitivity_down[j] = (rx - eval(lo)).norm() / h;
    }
  }
  res.x = x;
  res.cost = cost;
  return res;
}

}  // namespace ffsim::calib
