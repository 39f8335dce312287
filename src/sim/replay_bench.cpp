// sg-replay: a plain SimGrid simulation, with nothing of ffsim in it, of the flows a run of ffsim's
// SimGrid engine gave SimGrid (written with FFSIM_SIMGRID_EXPORT=FILE): the same links, routes,
// payloads, timers and dependencies, driven as the engine drives SimGrid (comms started from
// maestro, completions by callback, one kernel timer per op that waits, both-ways caps re-rated as
// their directions go busy or idle). It is issue 31's yardstick for "the SimGrid engine within 2x a
// plain SimGrid simulation of the same flows, in time and memory" (scripts/bench-sim.sh): what is
// left between the two is ffsim's own cost (schedule, lowering, bookkeeping, the fork). Its driving
// of SimGrid repeats the engine's (simgrid_engine.cpp: start_flows, on_complete, bidir_update) on
// purpose, line for line where it can: a yardstick that shared the engine's code would measure it
// against itself.
// Usage: sg-replay FILE   Prints one line:
//   ops N comms M simulated_s ... expected_s ... load_s ... wall_s ...
// expected_s is the engine's simulated end, written in FILE; the program exits 1 if they differ by
// more than 1e-9 relative (then it did not replay the same flows), 2 on a bad file.
// SPDX-License-Identifier: Apache-2.0
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::NetZoneImpl;
using simgrid::kernel::routing::Route;

namespace {

[[noreturn]] void bad(const char* file, const char* what) {
  std::fprintf(stderr, "sg-replay: %s: %s (expected a file written with FFSIM_SIMGRID_EXPORT)\n", file, what);
  std::exit(2);
}

// A whitespace-separated reader of the export, streamed through a small buffer (the file is tens
// of MB; holding it whole would count against the replay's memory).
class Reader {
public:
  explicit Reader(const char* file) : file_(file), f_(std::fopen(file, "rb")) {
    if (f_ == nullptr) bad(file, std::strerror(errno));
  }
  ~Reader() { std::fclose(f_); }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  void word(const char* expected) {
    if (token() != expected) bad(file_, (std::string("expected '") + expected + "'").c_str());
  }
  std::uint64_t u() {
    const std::string& t = token();
    char* end = nullptr;
    const auto v = std::strtoull(t.c_str(), &end, 10);
    if (t.empty() || *end != '\0') bad(file_, "expected a whole number");
    return v;
  }
  double d() {
    const std::string& t = token();
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0') bad(file_, "expected a number");
    return v;
  }

private:
  int get() {
    if (at_ == len_) {
      len_ = std::fread(buf_, 1, sizeof buf_, f_);
      at_ = 0;
      if (len_ == 0) return EOF;
    }
    return static_cast<unsigned char>(buf_[at_++]);
  }
  const std::string& token() {
    tok_.clear();
    int c = get();
    while (c == ' ' || c == '\n') c = get();
    while (c != EOF && c != ' ' && c != '\n') {
      tok_.push_back(static_cast<char>(c));
      c = get();
    }
    return tok_;
  }
  const char* file_;
  std::FILE* f_;
  char buf_[1 << 16];
  std::size_t at_ = 0, len_ = 0;
  std::string tok_;
};

// The root zone: a host pair per route, whose route is that route's links (as in the engine).
class RouteZone final : public NetZoneImpl {
public:
  RouteZone() : NetZoneImpl("replay") {}
  void get_local_route(const NetPoint* src, const NetPoint* /*dst*/, Route* into, double* latency) override {
    for (const sg4::Link* l : routes_[route_of_vertex_[src->id()]]) {
      into->link_list_.push_back(l->get_impl());
      if (latency) *latency += l->get_latency();
    }
  }
  std::vector<std::vector<const sg4::Link*>> routes_;
  std::vector<std::size_t> route_of_vertex_;
  void set_route(const NetPoint* v, std::size_t route) {
    if (v->id() >= route_of_vertex_.size()) route_of_vertex_.resize(v->id() + 1, 0);
    route_of_vertex_[v->id()] = route;
  }
};

struct BothWays {
  std::uint32_t link;
  int dir;
  double one_way, both;
};

// The run's state, compact: per op its timer, flows and successors (CSR arrays).
struct Replay {
  std::vector<sg4::Link*> links;
  std::vector<std::pair<sg4::Host*, sg4::Host*>> hosts;  // by route
  std::vector<std::uint32_t> caps_begin;                 // by route: its both-ways caps in caps
  std::vector<BothWays> caps;
  std::vector<std::array<int, 2>> busy;  // by link: flows in each direction (both-ways caps)
  std::vector<double> timer;
  std::vector<char> instead;
  std::vector<std::uint32_t> flow_begin, succ_begin, preds, left;
  std::vector<std::uint32_t> flow_route;
  std::vector<std::uint64_t> flow_units;
  std::vector<std::uint32_t> succ;
  // Started comms: a handle is kept until the clock has passed its completion (as the engine does).
  std::vector<sg4::CommPtr> handle;
  std::vector<std::uint32_t> slot_op, slot_route, free_slots;
  std::vector<std::pair<double, std::uint32_t>> finished;
  std::vector<std::uint32_t> ready;
  std::uint64_t comms = 0;
};
Replay* g = nullptr;

void both_ways(Replay& r, std::uint32_t route, int delta) {
  for (std::uint32_t k = r.caps_begin[route]; k < r.caps_begin[route + 1]; ++k) {
    const BothWays& c = r.caps[k];
    auto& b = r.busy[c.link];
    const double before = b[0] > 0 && b[1] > 0 ? c.both : c.one_way;
    b[static_cast<std::size_t>(c.dir)] += delta;
    const double after = b[0] > 0 && b[1] > 0 ? c.both : c.one_way;
    if (after != before) r.links[c.link]->set_bandwidth(after);
  }
}

void done(Replay& r, std::uint32_t op) {
  for (std::uint32_t j = r.succ_begin[op]; j < r.succ_begin[op + 1]; ++j)
    if (--r.preds[r.succ[j]] == 0) r.ready.push_back(r.succ[j]);
}

void flows(Replay& r, std::uint32_t op) {
  const std::uint32_t n = r.flow_begin[op + 1] - r.flow_begin[op];
  r.left[op] = n;
  if (n == 0) {
    done(r, op);
    return;
  }
  for (std::uint32_t k = r.flow_begin[op]; k < r.flow_begin[op + 1]; ++k) {
    const std::uint32_t route = r.flow_route[k];
    sg4::CommPtr c = sg4::Comm::sendto_init();
    c->set_payload_size(r.flow_units[k]);
    std::uint32_t slot;
    if (!r.free_slots.empty()) {
      slot = r.free_slots.back();
      r.free_slots.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(r.slot_op.size());
      r.slot_op.push_back(0);
      r.slot_route.push_back(0);
      r.handle.emplace_back();
    }
    r.slot_op[slot] = op;
    r.slot_route[slot] = route;
    c->set_data(reinterpret_cast<void*>(static_cast<std::uintptr_t>(slot) + 1));
    both_ways(r, route, +1);
    r.handle[slot] = c;
    ++r.comms;
    c->set_source(r.hosts[route].first)->set_destination(r.hosts[route].second);
  }
}

void drain(Replay& r);

void start(Replay& r, std::uint32_t op) {
  if (r.timer[op] > 0) {
    simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + r.timer[op], [&r, op] {
      if (r.instead[op])
        done(r, op);
      else
        flows(r, op);
      drain(r);
    });
    return;
  }
  if (r.instead[op])
    done(r, op);
  else
    flows(r, op);
}

void drain(Replay& r) {
  while (!r.ready.empty()) {
    const std::uint32_t op = r.ready.back();
    r.ready.pop_back();
    start(r, op);
  }
}

void on_complete(const sg4::Activity& a) {
  Replay& r = *g;
  auto* d = a.get_data<void>();
  if (!d) return;
  const auto slot = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(d) - 1);
  const double now = sg4::Engine::get_clock();
  std::size_t n = 0;
  while (n < r.finished.size() && r.finished[n].first < now) {
    const std::uint32_t old = r.finished[n++].second;
    r.handle[old].reset();
    r.free_slots.push_back(old);
  }
  r.finished.erase(r.finished.begin(), r.finished.begin() + static_cast<std::ptrdiff_t>(n));
  r.finished.emplace_back(now, slot);
  both_ways(r, r.slot_route[slot], -1);
  const std::uint32_t op = r.slot_op[slot];
  if (--r.left[op] == 0) done(r, op);
  drain(r);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr,
                 "usage: sg-replay FILE   (FILE: written by ffsim's SimGrid engine with FFSIM_SIMGRID_EXPORT=FILE)\n");
    return 2;
  }
  const char* file = argv[1];
  const auto wall0 = std::chrono::steady_clock::now();
  // The engine's own configuration (src/sim/simgrid_engine.cpp explains each), logs silenced.
  std::vector<std::string> args{"sg-replay",
                                "--cfg=network/model:CM02",
                                "--cfg=network/crosstraffic:0",
                                "--cfg=network/TCP-gamma:0",
                                "--cfg=network/optim:Full",
                                "--cfg=maxmin/precision:1e-12",
                                "--cfg=surf/precision:1e-15",
                                "--log=root.thresh:critical"};
  std::vector<char*> av;
  for (auto& a : args) av.push_back(a.data());
  int ac = static_cast<int>(av.size());
  sg4::Engine engine(&ac, av.data());

  Replay r;
  double expected = 0;
  {
    Reader in(file);
    in.word("sg-replay");
    if (in.u() != 1) bad(file, "unknown version");
    auto* zone = new RouteZone();
    sg4::NetZone* iz = zone->get_iface();
    in.word("links");
    const std::uint64_t nl = in.u();
    for (std::uint64_t i = 0; i < nl; ++i) {
      const double bw = in.d(), lat = in.d();
      const bool fatpipe = in.u() != 0;
      r.links.push_back(
          iz->create_link("l" + std::to_string(i), bw)
              ->set_latency(lat)
              ->set_sharing_policy(fatpipe ? sg4::Link::SharingPolicy::FATPIPE : sg4::Link::SharingPolicy::SHARED)
              ->seal());
    }
    r.busy.assign(nl, {0, 0});
    in.word("routes");
    const std::uint64_t nr = in.u();
    r.caps_begin.push_back(0);
    for (std::uint64_t i = 0; i < nr; ++i) {
      std::vector<const sg4::Link*> route;
      for (std::uint64_t k = in.u(); k > 0; --k) {
        const std::uint64_t l = in.u();
        if (l >= nl) bad(file, "a route names a link that is not there");
        route.push_back(r.links[l]);
      }
      for (std::uint64_t k = in.u(); k > 0; --k) {
        BothWays c{};
        c.link = static_cast<std::uint32_t>(in.u());
        c.dir = static_cast<int>(in.u());
        c.one_way = in.d();
        c.both = in.d();
        if (c.link >= nl || c.dir > 1) bad(file, "a both-ways cap that is not there");
        r.caps.push_back(c);
      }
      r.caps_begin.push_back(static_cast<std::uint32_t>(r.caps.size()));
      sg4::Host* a = iz->create_host("h" + std::to_string(i) + "a", 1.0)->seal();
      sg4::Host* b = iz->create_host("h" + std::to_string(i) + "b", 1.0)->seal();
      zone->set_route(a->get_netpoint(), zone->routes_.size());
      zone->set_route(b->get_netpoint(), zone->routes_.size());
      zone->routes_.push_back(std::move(route));
      r.hosts.emplace_back(a, b);
    }
    iz->seal();
    in.word("ops");
    const std::uint64_t n = in.u();
    r.timer.resize(n);
    r.instead.resize(n);
    r.flow_begin.push_back(0);
    r.succ_begin.push_back(0);
    r.preds.assign(n, 0);
    r.left.assign(n, 0);
    for (std::uint64_t i = 0; i < n; ++i) {
      r.timer[i] = in.d();
      r.instead[i] = static_cast<char>(in.u() != 0);
      for (std::uint64_t k = in.u(); k > 0; --k) {
        const std::uint64_t route = in.u();
        if (route >= nr) bad(file, "a flow on a route that is not there");
        r.flow_route.push_back(static_cast<std::uint32_t>(route));
        r.flow_units.push_back(in.u());
      }
      r.flow_begin.push_back(static_cast<std::uint32_t>(r.flow_route.size()));
      for (std::uint64_t k = in.u(); k > 0; --k) {
        const std::uint64_t s = in.u();
        if (s >= n) bad(file, "a successor that is not there");
        r.succ.push_back(static_cast<std::uint32_t>(s));
        ++r.preds[s];
      }
      r.succ_begin.push_back(static_cast<std::uint32_t>(r.succ.size()));
    }
    in.word("end");
    expected = in.d();
  }
  const double load = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  g = &r;
  sg4::Activity::on_completion_cb(on_complete);
  const auto n = static_cast<std::uint32_t>(r.timer.size());
  for (std::uint32_t i = n; i-- > 0;)  // started in op order (the ready list is a stack)
    if (r.preds[i] == 0) r.ready.push_back(i);
  drain(r);
  engine.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double simulated = sg4::Engine::get_clock();
  std::printf("ops %u comms %llu simulated_s %.12g expected_s %.12g load_s %.3f wall_s %.3f\n", n,
              static_cast<unsigned long long>(r.comms), simulated, expected, load, wall);
  if (std::abs(simulated - expected) > 1e-9 * std::max(expected, 1e-300)) {
    std::fprintf(stderr, "sg-replay: the simulated end differs from the engine's: not the same flows\n");
    return 1;
  }
  return 0;
}
