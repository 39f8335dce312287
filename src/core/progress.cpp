// Progress of long simulations on a terminal.
// SPDX-License-Identifier: Apache-2.0
#include "core/progress.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include <sys/mman.h>

#include "core/error.hpp"
#include "core/format.hpp"

namespace ffsim::progress {

namespace {
std::atomic<bool> g_active{false};
// The counters, in memory shared with the processes this one forks (the SimGrid engine and ops
// simulate in a child: simgrid allows one engine per process), so that a child's reports reach the
// parent's meter. Mapped by the first meter, before any fork; lock-free atomics are address-free.
struct Counters {
  std::atomic<std::uint64_t> total{0}, done{0};
  std::atomic<std::uint64_t> fraction{0};  // of a run measured by its simulated time, in 1e-9
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "progress counters shared between processes");
Counters* g_c = nullptr;
Counters g_local;  // where shared memory cannot be mapped: this process's reports only
Counters& counters() {
  if (g_c == nullptr) {
    void* m = ::mmap(nullptr, sizeof(Counters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    g_c = m == MAP_FAILED ? &g_local : new (m) Counters;
  }
  return *g_c;
}

// 1234567 -> "1.23M"
std::string count(std::uint64_t n) {
  const double x = static_cast<double>(n);
  if (x >= 1e9) return fmt_f(x / 1e9, 2) + "G";
  if (x >= 1e6) return fmt_f(x / 1e6, 2) + "M";
  if (x >= 1e4) return fmt_f(x / 1e3, 1) + "k";
  return std::to_string(n);
}
}  // namespace

std::string bar(double done, double total, int width) {
  const double w = static_cast<double>(width);
  const auto fill = static_cast<std::size_t>(total > 0 ? std::clamp(w * done / total, 0.0, w) : w);
  return "[" + std::string(fill, '#') + std::string(static_cast<std::size_t>(width) - fill, '.') + "]";
}

std::string duration(double s) {
  if (!(s >= 0)) s = 0;
  if (s < 10) return fmt_f(s, 1) + " s";
  if (s < 120) return std::to_string(static_cast<long long>(s + 0.5)) + " s";
  const auto m = static_cast<long long>(s / 60);
  if (m < 120) return std::to_string(m) + " min " + std::to_string(static_cast<long long>(s) - 60 * m) + " s";
  return std::to_string(m / 60) + " h " + std::to_string(m % 60) + " min";
}

std::chrono::milliseconds delay_from_env(std::chrono::milliseconds fallback) {
  const char* v = std::getenv("FFSIM_PROGRESS_DELAY_MS");
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long ms = std::strtoll(v, &end, 10);
  return end != v && *end == '\0' && ms >= 0 ? std::chrono::milliseconds(ms) : fallback;
}

bool active() { return g_active.load(std::memory_order_relaxed); }
void add_work(std::uint64_t ops) { counters().total.fetch_add(ops, std::memory_order_relaxed); }
void did_work(std::uint64_t ops) { counters().done.fetch_add(ops, std::memory_order_relaxed); }
void set_fraction(double f) {
  f = std::clamp(f, 0.0, 1.0);
  counters().fraction.store(static_cast<std::uint64_t>(f * 1e9), std::memory_order_relaxed);
}

std::string line(const std::string& label, double elapsed, std::uint64_t done, std::uint64_t total, double fraction) {
  std::string s = "  " + label;
  constexpr int kWidth = 24;
  if (fraction > 0) {  // a run measured by its simulated time (ops' year, after its steps' simulations)
    fraction = std::min(fraction, 1.0);
    s += " " + bar(fraction, 1, kWidth) + " " + std::to_string(static_cast<int>(100 * fraction)) +
         "% of the simulated time";
    if (fraction < 1 && elapsed > 0) s += ", ETA " + duration(elapsed * (1 - fraction) / fraction);
    return s;
  }
  if (total == 0) return s + "... " + duration(elapsed);
  if (done > total) done = total;
  s += " " + bar(static_cast<double>(done), static_cast<double>(total), kWidth) + " " +
       std::to_string(100 * done / total) + "% of " + count(total) + " operations";
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  if (rate > 0) {
    s += ", " + count(static_cast<std::uint64_t>(rate)) + "/s";
    if (done < total) s += ", ETA " + duration(static_cast<double>(total - done) / rate);
  }
  return s;
}

Meter::Meter(bool on, std::string label, std::ostream& out, std::chrono::milliseconds delay)
    : on_(on),
      out_(out),
      delay_(delay_from_env(delay)),
      t0_(std::chrono::steady_clock::now()),
      label_(std::move(label)) {
  if (!on_) return;
  FFSIM_ASSERT(!g_active.exchange(true), "progress: one meter at a time");
  Counters& c = counters();
  c.total = 0;
  c.done = 0;
  c.fraction = 0;
  if (delay_.count() == 0) draw();  // at once (the thread may not run before a quick command ends)
  thread_ = std::thread([this] {
    std::unique_lock lock(m_);
    if (cv_.wait_for(lock, delay_, [this] { return stop_; })) return;
    while (!stop_) {
      draw();
      cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; });
    }
  });
}

Meter::~Meter() {
  if (!on_) return;
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (shown_) {  // the last state (all done), then the line cleared
    draw();
    out_ << "\r" << std::string(width_, ' ') << "\r" << std::flush;
  }
  g_active = false;
}

void Meter::set_label(std::string label) {
  if (!on_) return;
  std::lock_guard lock(m_);
  label_ = std::move(label);
}

void Meter::draw() {  // with m_ held
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  const Counters& c = counters();
  std::string s = line(label_, el, c.done.load(std::memory_order_relaxed), c.total.load(std::memory_order_relaxed),
                       static_cast<double>(c.fraction.load(std::memory_order_relaxed)) * 1e-9);
  const std::size_t n = s.size();
  if (n < width_) s += std::string(width_ - n, ' ');  // over a longer line drawn before
  width_ = std::max(width_, n);
  out_ << "\r" << s << std::flush;
  shown_ = true;
}

}  // namespace ffsim::progress
