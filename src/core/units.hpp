// Strong, zero-cost unit types: every internal quantity is in SI base units.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cmath>
#include <compare>

namespace ffsim {

/// A physical quantity in SI base units with its dimension in the type: exponents of
/// bytes (B), seconds (T), floating-point operations (F) and joules (E).
/// Only same-dimension addition and comparison are allowed; products and quotients
/// yield the matching dimension, and a dimensionless result is a plain double.
template <int B, int T, int F, int E>
class Quantity {
public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double si) : v_(si) {}
  /// The value in SI base units (bytes, seconds, flop, joules and their ratios).
  [[nodiscard]] constexpr double si() const { return v_; }

  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  constexpr Quantity& operator*=(double k) { v_ *= k; return *this; }
  constexpr Quantity& operator/=(double k) { v_ /= k; return *this; }
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.v_ + b.v_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.v_ - b.v_); }
  friend constexpr Quantity operator-(Quantity a) { return Quantity(-a.v_); }
  friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.v_ * k); }
  friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.v_ * k); }
  friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.v_ / k); }
  friend constexpr auto operator<=>(Quantity a, Quantity b) = default;
  friend constexpr bool operator==(Quantity a, Quantity b) = default;

private:
  double v_ = 0.0;
};

namespace detail {
template <int B, int T, int F, int E>
struct QuantityOf { using type = Quantity<B, T, F, E>; };
template <>
struct QuantityOf<0, 0, 0, 0> { using type = double; };
template <int B, int T, int F, int E>
using QuantityOfT = typename QuantityOf<B, T, F, E>::type;
}  // namespace detail

template <int B1, int T1, int F1, int E1, int B2, int T2, int F2, int E2>
constexpr detail::QuantityOfT<B1 + B2, T1 + T2, F1 + F2, E1 + E2> operator*(Quantity<B1, T1, F1, E1> a,
                                                                           Quantity<B2, T2, F2, E2> b) {
  return detail::QuantityOfT<B1 + B2, T1 + T2, F1 + F2, E1 + E2>(a.si() * b.si());
}
template <int B1, int T1, int F1, int E1, int B2, int T2, int F2, int E2>
constexpr detail::QuantityOfT<B1 - B2, T1 - T2, F1 - F2, E1 - E2> operator/(Quantity<B1, T1, F1, E1> a,
                                                                           Quantity<B2, T2, F2, E2> b) {
  return detail::QuantityOfT<B1 - B2, T1 - T2, F1 - F2, E1 - E2>(a.si() / b.si());
}
template <int B, int T, int F, int E>
constexpr Quantity<-B, -T, -F, -E> operator/(double k, Quantity<B, T, F, E> a) {
  return Quantity<-B, -T, -F, -E>(k / a.si());
}

using Bytes = Quantity<1, 0, 0, 0>;            ///< bytes
using Seconds = Quantity<0, 1, 0, 0>;          ///< seconds
using BytesPerSecond = Quantity<1, -1, 0, 0>;  ///< bytes per second
using Flops = Quantity<0, 0, 1, 0>;            ///< floating-point operations (a count)
using FlopsPerSecond = Quantity<0, -1, 1, 0>;  ///< floating-point operations per second
using Joules = Quantity<0, 0, 0, 1>;           ///< joules
using Watts = Quantity<0, -1, 0, 1>;           ///< joules per second
using Hertz = Quantity<0, -1, 0, 0>;           ///< per second

template <int B, int T, int F, int E>
constexpr bool isfinite(Quantity<B, T, F, E> q) { return std::isfinite(q.si()); }
template <int B, int T, int F, int E>
constexpr Quantity<B, T, F, E> min(Quantity<B, T, F, E> a, Quantity<B, T, F, E> b) { return b < a ? b : a; }
template <int B, int T, int F, int E>
constexpr Quantity<B, T, F, E> max(Quantity<B, T, F, E> a, Quantity<B, T, F, E> b) { return a < b ? b : a; }

namespace literals {
// NOLINTBEGIN(google-runtime-int)
constexpr Bytes operator""_B(unsigned long long v) { return Bytes(static_cast<double>(v)); }
constexpr Bytes operator""_KiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1024.0); }
constexpr Bytes operator""_MiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1048576.0); }
constexpr Bytes operator""_GiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1073741824.0); }
constexpr Bytes operator""_kB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e3); }
constexpr Bytes operator""_MB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e6); }
constexpr Bytes operator""_GB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e9); }
constexpr Seconds operator""_s(long double v) { return Seconds(static_cast<double>(v)); }
constexpr Seconds operator""_s(unsigned long long v) { return Seconds(static_cast<double>(v)); }
constexpr Seconds operator""_ms(unsigned long long v) { return Seconds(static_cast<double>(v) * 1e-3); }
constexpr Seconds operator""_us(unsigned long long v) { return Seconds(static_cast<double>(v) * 1e-6); }
constexpr Seconds operator""_us(long double v) { return Seconds(static_cast<double>(v) * 1e-6); }
constexpr Seconds operator""_ns(unsigned long long v) { return Seconds(static_cast<double>(v) * 1e-9); }
constexpr BytesPerSecond operator""_GBps(unsigned long long v) { return BytesPerSecond(static_cast<double>(v) * 1e9); }
constexpr BytesPerSecond operator""_GBps(long double v) { return BytesPerSecond(static_cast<double>(v) * 1e9); }
constexpr BytesPerSecond operator""_GiBps(unsigned long long v) {
  return BytesPerSecond(static_cast<double>(v) * 1073741824.0);
}
constexpr BytesPerSecond operator""_Gbps(unsigned long long v) { return BytesPerSecond(static_cast<double>(v) * 1e9 / 8); }
constexpr FlopsPerSecond operator""_TFLOPS(unsigned long long v) {
  return FlopsPerSecond(static_cast<double>(v) * 1e12);
}
constexpr Watts operator""_W(unsigned long long v) { return Watts(static_cast<double>(v)); }
constexpr Watts operator""_kW(long double v) { return Watts(static_cast<double>(v) * 1e3); }
// NOLINTEND(google-runtime-int)
}  // namespace literals

}  // namespace ffsim
