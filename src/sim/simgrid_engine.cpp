// The SimGrid engine.
// SPDX-License-Identifier: Apache-2.0
#include "sim/simgrid_engine.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>
#include <string>
#include <vector>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>

#include "core/error.hpp"
#include "core/progress.hpp"

namespace ffsim::sim {

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::NetZoneImpl;
using simgrid::kernel::routing::Route;

namespace {

// SimGrid's payloads are whole bytes: amounts are scaled (by a power of two, so that whole bytes
// stay exact) and capacities with them. Compute work (GPU-seconds) is scaled further.
constexpr double kByteScale = 1024.0;
constexpr double kComputeScale = 1099511627776.0;  // 2^40 units per GPU-second
// Latencies and delays are SimGrid kernel timers (simgrid/kernel/Timer.hpp), not activities: a
// host-to-host comm is detached into maestro's activity list, which CommImpl::finish() searches
// from end to end (std::list::remove), so every live comm costs every completion; timer comms were
// 2 of the 7 per GPU of a ring step, and the searches 39% of the 9,600-GPU ring's time.
// Rate caps are FATPIPE links: Comm::set_rate is not honoured by host-to-host comms in 3.32.

/// The root zone: every host belongs to one route, and its route to any peer is that route.
class RouteZone final : public NetZoneImpl {
public:
  RouteZone() : NetZoneImpl("ffsim") {}
  void get_local_route(const NetPoint* src, const NetPoint* /*dst*/, Route* into, double* latency) override {
    const auto& r = routes_[route_of_vertex_[src->id()]];
    for (const sg4::Link* l : r.links) {
      into->link_list_.push_back(l->get_impl());
      if (latency) *latency += l->get_latency();
    }
  }
  struct R {
    std::vector<const sg4::Link*> links;
  };
  std::vector<R> routes_;
  std::vector<std::size_t> route_of_vertex_;  // by netpoint id (ids are dense, from 0)
  void set_route(const NetPoint* v, std::size_t route) {
    if (v->id() >= route_of_vertex_.size()) route_of_vertex_.resize(v->id() + 1, 0);
    route_of_vertex_[v->id()] = route;
  }
};

struct Shared {
  bool report = false;        // progress::active() in the parent, where the meter is
  std::uint64_t started = 0;  // ops started (progress)
  const sched::Schedule* s = nullptr;
  const platform::Platform* p = nullptr;
  sched::Schedule::Graph g;
  std::vector<std::uint32_t> preds;
  std::vector<std::uint32_t> flows_left;
  std::vector<double> start, end;
  // A route (path, weight, rate cap) and its host pair; by path id, a path's routes.
  struct RouteHosts {
    double weight, cap;
    sg4::Host *a, *b;
    std::size_t route;  // index in the zone's routes (and in an export's)
  };
  std::vector<std::vector<RouteHosts>> hosts;
  // By path id, once known: the both-ways caps on the path and the direction it crosses each in
  // (0 up, 1 down).
  std::vector<std::vector<std::pair<std::uint32_t, int>>> bidir_of_path;
  std::vector<char> bidir_known;
  // A started comm's slot: its handle, op and path. SimGrid must keep a handle until the comm has
  // completed (dropped before, maestro crashes on it: simgrid-notes.md, pitfall 6); a handle is
  // released, and its slot reused, once the clock has moved past its completion, when SimGrid is
  // done with it. Until 2026-12-06 every handle lived to the end of the run: 872 MB for the flat
  // 512-GPU ring's 523,264 comms.
  std::vector<sg4::CommPtr> handle;  // activity slot -> handle (null once released)
  std::vector<std::uint32_t> free_slots;
  std::vector<std::pair<double, std::uint32_t>> finished;  // (completion time, slot), in time order
  std::vector<sched::OpId> ready;
  platform::Lowered lowered;
  std::vector<std::uint32_t> tag_op;    // activity slot -> op
  std::vector<std::uint32_t> tag_path;  // activity slot -> path of its flow
  // Conditional (bidirectional) caps: their links, and the flows crossing each direction. A link's
  // bandwidth is the cap while both directions carry flows, the sum of the two directions otherwise.
  std::vector<sg4::Link*> links;               // by resource id (null: on no route)
  std::vector<std::array<int, 2>> bidir_busy;  // by resource id
  bool debug = false;  // FFSIM_SIMGRID_DEBUG=1: one line per completion on stderr
  // FFSIM_SIMGRID_EXPORT=FILE: what the run gave SimGrid, for sg-replay (see export_replay).
  struct LinkSpec {
    double bandwidth, latency;
    bool fatpipe;
  };
  std::vector<LinkSpec> link_specs;                   // every link created, in creation order
  std::vector<std::vector<std::size_t>> route_links;  // by route: its links' indices in link_specs
  std::vector<bool> route_compute;                    // by route: a compute route (no both-ways caps)
  std::vector<std::size_t> link_index;                // by resource id: its link's index in link_specs
};

Shared* g_shared = nullptr;

void start_flows(Shared& sh, sched::OpId op, const platform::Lowered* lowered = nullptr);
void op_done(Shared& sh, sched::OpId op);

// The both-ways caps on a path, each with the direction the path crosses it in.
const std::vector<std::pair<std::uint32_t, int>>& bidir_of(Shared& sh, std::uint32_t path_id) {
  auto& known = sh.bidir_of_path[path_id];
  if (sh.bidir_known[path_id]) return known;
  sh.bidir_known[path_id] = 1;
  const platform::Path& path = sh.p->path(path_id);
  for (std::size_t i = 0; i < path.resources.size(); ++i) {
    const std::uint32_t res = path.resources[i];
    const platform::Resource& r = sh.p->resource(res);
    if (r.kind != platform::ResourceKind::PcieBidir) continue;
    bool up = false;  // the direction: the port resource just before it on the path
    for (std::size_t j = i; j-- > 0;)
      if (path.resources[j] == r.up || path.resources[j] == r.down) {
        up = path.resources[j] == r.up;
        break;
      }
    known.emplace_back(res, up ? 0 : 1);
  }
  return known;
}

// A flow on `path` starts (+1) or ends (-1): updates the bidirectional caps it crosses.
void bidir_update(Shared& sh, std::uint32_t path_id, int delta) {
  for (const auto& [res, dir] : bidir_of(sh, path_id)) {
    const platform::Resource& r = sh.p->resource(res);
    auto& busy = sh.bidir_busy[res];
    const double before = r.capacity_when(busy[0] > 0, busy[1] > 0);
    busy[static_cast<std::size_t>(dir)] += delta;
    const double after = r.capacity_when(busy[0] > 0, busy[1] > 0);
    if (after != before) sh.links[res]->set_bandwidth(after * kByteScale);
  }
}

// Ops whose flows all move nothing still cost their latency and arbitration delay: a timer.
bool moves_data(const Shared& sh, const platform::Lowered& low) {
  for (const auto& f : low.flows) {
    const platform::Path& path = sh.p->path(f.path);
    if (f.amount > 0 && !(path.resources.empty() && !std::isfinite(f.rate_cap))) return true;
  }
  return false;
}

void drain(Shared& sh);

// After `duration`, the op's flows start (`then_flows`) or the op ends (a delay, or an op whose flows
// move nothing).
void start_timer(Shared& sh, sched::OpId op, double duration, bool then_flows) {
  simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + duration, [&sh, op, then_flows] {
    if (sh.debug)
      std::fprintf(stderr, "t=%.12g op %u timer done\n", sg4::Engine::get_clock(), op);
    if (then_flows) start_flows(sh, op);
    else op_done(sh, op);
    drain(sh);
  });
}

// The single timer an op needs before or (`instead`) in place of its flows; 0 if none.
double timer_of(const Shared& sh, const platform::Lowered& low, bool& instead) {
  instead = !moves_data(sh, low);
  if (!instead) return low.latency;
  double d = 0;
  for (const auto& f : low.flows) d = std::max(d, f.start_delay);
  return low.latency + d;
}

void start_op(Shared& sh, sched::OpId op) {
  // Progress on a terminal (core/progress.hpp; the counters reach the parent's meter): in batches.
  if (sh.report && ++sh.started % 4096 == 0) progress::did_work(4096);
  sh.start[op] = sg4::Engine::get_clock();
  platform::Lowered low;
  sh.p->lower(*sh.s, op, low);
  bool instead = false;
  const double t = timer_of(sh, low, instead);
  if (t > 0) {
    start_timer(sh, op, t, !instead);
    return;
  }
  if (instead) {
    op_done(sh, op);
    return;
  }
  start_flows(sh, op, &low);
}

void op_done(Shared& sh, sched::OpId op) {
  sh.end[op] = sg4::Engine::get_clock();
  for (std::uint32_t j = sh.g.succ_begin[op]; j < sh.g.succ_begin[op + 1]; ++j)
    if (--sh.preds[sh.g.succ[j]] == 0) sh.ready.push_back(sh.g.succ[j]);
}

void start_flows(Shared& sh, sched::OpId op, const platform::Lowered* lowered) {
  platform::Lowered mine;  // local: callbacks during start() may lower other ops
  if (lowered == nullptr) sh.p->lower(*sh.s, op, mine);
  const platform::Lowered& low = lowered != nullptr ? *lowered : mine;
  // Work in seconds (a GPU's compute, the host's cores) is scaled as such, bytes as bytes.
  auto scale_of = [&](const platform::Flow& f) { return sh.p->path(f.path).time ? kComputeScale : kByteScale; };
  std::vector<const platform::Flow*> todo;
  for (const platform::Flow& f : low.flows) {
    const platform::Path& path = sh.p->path(f.path);
    const double scale = scale_of(f);
    if (f.amount <= 0 || (path.resources.empty() && !std::isfinite(f.rate_cap))) continue;
    // A flow below SimGrid's resolution (a payload that rounds to 0 units, such as the 1e-13 B left
    // where a 1-byte ring is cut into pieces) moves nothing: SimGrid 3.32 never completes a comm of
    // size 0, so until 2026-12-01 such ops "never finished" (exit 4). The fluid engine moves it in
    // about 1e-23 s.
    if (std::llround(f.amount * scale) == 0) continue;
    todo.push_back(&f);
  }
  // Count first: a comm may complete (and call back) while it is being started.
  sh.flows_left[op] = static_cast<std::uint32_t>(todo.size());
  if (todo.empty()) {
    op_done(sh, op);
    return;
  }
  for (const platform::Flow* f : todo) {
    const Shared::RouteHosts* hp = nullptr;
    if (f->path >= sh.hosts.size())
      throw SimulationError("simgrid engine: a flow on a path the platform was not built with");
    for (const auto& h : sh.hosts[f->path])
      if (h.weight == f->weight && h.cap == f->rate_cap) hp = &h;
    if (hp == nullptr) throw SimulationError("simgrid engine: a flow on a route the platform was not built with");
    sg4::CommPtr c = sg4::Comm::sendto_init();
    c->set_payload_size(static_cast<std::uint64_t>(std::llround(f->amount * scale_of(*f))));
    std::uint32_t slot;
    if (!sh.free_slots.empty()) {
      slot = sh.free_slots.back();
      sh.free_slots.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(sh.tag_op.size());
      sh.tag_op.push_back(0);
      sh.tag_path.push_back(0);
      sh.handle.emplace_back();
    }
    sh.tag_op[slot] = op;
    sh.tag_path[slot] = f->path;
    c->set_data(reinterpret_cast<void*>(static_cast<std::uintptr_t>(slot) + 1));
    if (!sh.p->path(f->path).time) bidir_update(sh, f->path, +1);
    sh.handle[slot] = c;
    c->set_source(hp->a)->set_destination(hp->b);
  }
}

void drain(Shared& sh) {
  while (!sh.ready.empty()) {
    const sched::OpId op = sh.ready.back();
    sh.ready.pop_back();
    start_op(sh, op);
  }
}

void on_complete(const sg4::Activity& a) {
  Shared& sh = *g_shared;
  auto* d = a.get_data<void>();
  if (!d) return;
  const auto slot = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(d) - 1);
  const sched::OpId op = sh.tag_op[slot];
  const double now = sg4::Engine::get_clock();
  // Comms that completed at an earlier time are behind SimGrid: release them, reuse their slots.
  std::size_t done = 0;
  while (done < sh.finished.size() && sh.finished[done].first < now) {
    const std::uint32_t old = sh.finished[done++].second;
    sh.handle[old].reset();
    sh.free_slots.push_back(old);
  }
  sh.finished.erase(sh.finished.begin(), sh.finished.begin() + static_cast<std::ptrdiff_t>(done));
  sh.finished.emplace_back(now, slot);
  if (sh.debug)
    std::fprintf(stderr, "t=%.12g op %u flow done (%s)\n", sg4::Engine::get_clock(), op, a.get_state_str());
  if (!sh.p->path(sh.tag_path[slot]).time) bidir_update(sh, sh.tag_path[slot], -1);
  if (--sh.flows_left[op] == 0) op_done(sh, op);
  drain(sh);
}

// Writes all of buf to fd.
void write_all(int fd, const void* buf, std::size_t n) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(3);
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

bool read_all(int fd, void* buf, std::size_t n) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// FFSIM_SIMGRID_EXPORT=FILE: writes what this run gave SimGrid, as a plain SimGrid program takes it
// (src/sim/replay_bench.cpp, sg-replay: issue 31's yardstick of the engine's overhead): the links
// (bandwidth in SimGrid's units, latency, shared or fatpipe), the routes (their links; the
// both-ways caps each crosses, with the direction and the bandwidth when both directions are busy
// and when not), and every op (its timer, whether the timer replaces its flows, its flows as
// (route, payload) and its successors), then the simulated end. Text, one record per line.
void export_replay(Shared& sh, const char* file) {
  std::FILE* f = std::fopen(file, "w");
  if (f == nullptr) throw SimulationError(std::string("cannot write ") + file + ": " + std::strerror(errno));
  std::fprintf(f, "sg-replay 1\nlinks %zu\n", sh.link_specs.size());
  for (const auto& l : sh.link_specs) std::fprintf(f, "%.17g %.17g %d\n", l.bandwidth, l.latency, l.fatpipe ? 1 : 0);
  std::fprintf(f, "routes %zu\n", sh.route_links.size());
  std::vector<std::uint32_t> path_of_route(sh.route_links.size(), 0);
  for (std::uint32_t path = 0; path < sh.hosts.size(); ++path)
    for (const auto& h : sh.hosts[path]) path_of_route[h.route] = path;
  for (std::size_t r = 0; r < sh.route_links.size(); ++r) {
    std::fprintf(f, "%zu", sh.route_links[r].size());
    for (std::size_t id : sh.route_links[r]) std::fprintf(f, " %zu", id);
    // Both-ways caps (transfers only): link, direction (0 up, 1 down), one-way and both-ways bandwidth.
    const auto* caps = sh.route_compute[r] ? nullptr : &bidir_of(sh, path_of_route[r]);
    std::fprintf(f, " %zu", caps ? caps->size() : 0);
    if (caps)
      for (const auto& [res, dir] : *caps) {
        const platform::Resource& rr = sh.p->resource(res);
        std::fprintf(f, " %zu %d %.17g %.17g", sh.link_index[res], dir, rr.capacity_when(true, false) * kByteScale,
                     rr.capacity_when(true, true) * kByteScale);
      }
    std::fprintf(f, "\n");
  }
  std::fprintf(f, "ops %zu\n", sh.s->size());
  platform::Lowered low;
  for (sched::OpId op = 0; op < sh.s->size(); ++op) {
    sh.p->lower(*sh.s, op, low);
    bool instead = false;
    const double t = timer_of(sh, low, instead);
    std::vector<std::pair<std::size_t, long long>> flows;
    if (!instead)
      for (const platform::Flow& fl : low.flows) {
        const platform::Path& path = sh.p->path(fl.path);
        if (fl.amount <= 0 || (path.resources.empty() && !std::isfinite(fl.rate_cap))) continue;
        const long long units = std::llround(fl.amount * (path.time ? kComputeScale : kByteScale));
        if (units == 0) continue;
        for (const auto& h : sh.hosts[fl.path])
          if (h.weight == fl.weight && h.cap == fl.rate_cap) flows.emplace_back(h.route, units);
      }
    std::fprintf(f, "%.17g %d %zu", t, instead ? 1 : 0, flows.size());
    for (const auto& [route, units] : flows) std::fprintf(f, " %zu %lld", route, units);
    std::fprintf(f, " %u", sh.g.succ_begin[op + 1] - sh.g.succ_begin[op]);
    for (std::uint32_t j = sh.g.succ_begin[op]; j < sh.g.succ_begin[op + 1]; ++j) std::fprintf(f, " %u", sh.g.succ[j]);
    std::fprintf(f, "\n");
  }
  std::fprintf(f, "end %.17g\n", sg4::Engine::get_clock());
  if (std::fclose(f) != 0) throw SimulationError(std::string("cannot write ") + file + ": " + std::strerror(errno));
}

// Runs in the child process.
void simulate(const sched::Schedule& s, const platform::Platform& p, int out_fd) {
  std::vector<std::string> args{"ffsim",
                                "--cfg=network/model:CM02",
                                "--cfg=network/crosstraffic:0",
                                "--cfg=network/TCP-gamma:0",
                                // Full (not Lazy) updates of the LMM system: with lazy updates SimGrid 3.32
                                // leaves a flow's rate stale when a flow joins a link it crosses but is
                                // not bound by (measured: a NIC->GPU flow ran at twice its 9.66 GB/s
                                // peer-to-peer link while a NIC->DRAM flow shared its root port; whole
                                // HFReduce schedules 4e-4 off the fluid engine, 7e-11 with Full). The
                                // fault is in the selective update (re-solving only the modified part):
                                // Full with maxmin-selective-update:yes fails the same random test.
                                "--cfg=network/optim:Full",
                                "--cfg=maxmin/precision:1e-12",
                                "--cfg=surf/precision:1e-15",
                                "--log=root.thresh:critical"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg4::Engine engine(&argc, argv.data());

  Shared sh;
  sh.report = progress::active();
  sh.s = &s;
  sh.p = &p;
  sh.g = s.graph();
  if (const char* dbg = std::getenv("FFSIM_SIMGRID_DEBUG"); dbg && *dbg == '1') sh.debug = true;
  sh.preds = sh.g.preds;
  sh.flows_left.assign(s.size(), 0);
  sh.start.assign(s.size(), -1);
  sh.end.assign(s.size(), -1);

  // Every (path, weight) the schedule uses, and every resource on those paths.
  std::map<std::tuple<std::uint32_t, double, double>, bool> used;
  for (sched::OpId i = 0; i < s.size(); ++i) {
    p.lower(s, i, sh.lowered);
    for (const auto& f : sh.lowered.flows) used[{f.path, f.weight, f.rate_cap}] = p.path(f.path).time;
  }
  auto* zone = new RouteZone();  // the first zone is the root; the engine owns it
  sg4::NetZone* iz = zone->get_iface();
  std::vector<sg4::Link*>& links = sh.links;
  links.assign(p.resource_count(), nullptr);
  sh.bidir_busy.assign(p.resource_count(), {0, 0});
  sh.hosts.assign(p.path_count(), {});
  sh.bidir_of_path.assign(p.path_count(), {});
  sh.bidir_known.assign(p.path_count(), 0);
  std::size_t k = 0;
  sh.link_index.assign(p.resource_count(), 0);
  // Every link is recorded as it is made (for an export: see export_replay).
  auto make_link = [&](const std::string& name, double bandwidth, double latency, bool fatpipe) {
    sh.link_specs.push_back(Shared::LinkSpec{bandwidth, latency, fatpipe});
    return iz->create_link(name, bandwidth)
        ->set_latency(latency)
        ->set_sharing_policy(fatpipe ? sg4::Link::SharingPolicy::FATPIPE : sg4::Link::SharingPolicy::SHARED)
        ->seal();
  };
  for (const auto& [key, compute] : used) {
    const auto& [path_index, weight, cap] = key;
    const platform::Path& path = p.path(path_index);
    const double scale = compute ? kComputeScale : kByteScale;
    RouteZone::R route;
    std::vector<std::size_t> ids;
    for (std::uint32_t res : path.resources) {
      if (links[res] == nullptr) {
        // A bidirectional cap starts idle (one direction's traffic never reaches it).
        sh.link_index[res] = sh.link_specs.size();
        links[res] =
            make_link("r" + std::to_string(res), p.resource(res).capacity_when(false, false) * scale, 0, false);
      }
      route.links.push_back(links[res]);
      ids.push_back(sh.link_index[res]);
    }
    if (std::isfinite(cap)) {
      ids.push_back(sh.link_specs.size());
      route.links.push_back(make_link("cap" + std::to_string(k), cap * scale, 0, true));
    }
    if (!compute) {
      // One penalty link per route: a link shared by every route of a class would join all their
      // flows into one LMM system and make every solve global.
      ids.push_back(sh.link_specs.size());
      route.links.push_back(
          make_link("penalty" + std::to_string(k), 1e30, p.options().arbitration_latency / weight, true));
    }
    sg4::Host* a = iz->create_host("h" + std::to_string(k) + "a", 1.0)->seal();
    sg4::Host* b = iz->create_host("h" + std::to_string(k) + "b", 1.0)->seal();
    zone->set_route(a->get_netpoint(), zone->routes_.size());
    zone->set_route(b->get_netpoint(), zone->routes_.size());
    sh.hosts[path_index].push_back(Shared::RouteHosts{weight, cap, a, b, zone->routes_.size()});
    zone->routes_.push_back(std::move(route));
    sh.route_links.push_back(std::move(ids));
    sh.route_compute.push_back(compute);
    ++k;
  }
  iz->seal();

  g_shared = &sh;
  sg4::Activity::on_completion_cb(on_complete);
  for (sched::OpId i = 0; i < s.size(); ++i)
    if (sh.preds[i] == 0) sh.ready.push_back(i);
  // Start in OpId order (the ready list is a stack).
  std::reverse(sh.ready.begin(), sh.ready.end());
  drain(sh);
  engine.run();
  if (sh.report) progress::did_work(sh.started % 4096);  // the last batch (start_op)
  if (const char* out = std::getenv("FFSIM_SIMGRID_EXPORT"); out && *out) export_replay(sh, out);

  const std::uint64_t n = s.size();
  write_all(out_fd, &n, sizeof n);
  write_all(out_fd, sh.start.data(), n * sizeof(double));
  write_all(out_fd, sh.end.data(), n * sizeof(double));
  const double clock = sg4::Engine::get_clock();
  write_all(out_fd, &clock, sizeof clock);
}

}  // namespace

eval::Result SimGridEngine::run(const sched::Schedule& s, const platform::Platform& p) {
  s.check_acyclic();
  // Copies as one flow are the fluid engine's (runs_replicas): SimGrid is given them apart.
  FFSIM_ASSERT(!s.has_replicas(), "the SimGrid engine runs no replicated transfers");
  if (const char* nf = std::getenv("FFSIM_SIMGRID_NO_FORK"); nf && *nf == '1') {
    // Debugging aid: simulate in this process (only once per process).
    int fds0[2];
    if (::pipe(fds0) != 0) throw SimulationError("pipe");
    simulate(s, p, fds0[1]);
  }
  int fds[2];
  if (::pipe(fds) != 0) throw SimulationError(std::string("pipe: ") + std::strerror(errno));
  if (progress::active()) progress::add_work(s.size());  // the child reports the ops it starts
  const pid_t pid = ::fork();
  if (pid < 0) throw SimulationError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    try {
      simulate(s, p, fds[1]);
    } catch (const std::exception& e) {
      const std::string msg = std::string("simgrid engine: ") + e.what() + "\n";
      write_all(2, msg.data(), msg.size());
      _exit(2);
    }
    ::close(fds[1]);
    _exit(0);
  }
  ::close(fds[1]);
  eval::Result r;
  r.engine = "simgrid";
  std::uint64_t n = 0;
  bool ok = read_all(fds[0], &n, sizeof n) && n == s.size();
  // The starts, then the ends, straight into the result in blocks (two arrays of them beside it
  // were 21 MB of a 1.3-million-op run's peak).
  if (ok) r.ops.resize(s.size());
  std::vector<double> block(std::size_t{1} << 16);
  for (int which = 0; which < 2 && ok; ++which)
    for (std::size_t at = 0; at < n && ok; at += block.size()) {
      const std::size_t m = std::min<std::size_t>(block.size(), n - at);
      ok = read_all(fds[0], block.data(), m * sizeof(double));
      for (std::size_t i = 0; i < m && ok; ++i) (which == 0 ? r.ops[at + i].start : r.ops[at + i].end) = block[i];
    }
  double clock = 0;
  if (ok) ok = read_all(fds[0], &clock, sizeof clock);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw SimulationError("the SimGrid replay failed (child exit status " + std::to_string(status) + ")");
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (r.ops[i].end < 0) throw SimulationError("operation " + std::to_string(i) + " never finished in SimGrid");
    r.makespan = std::max(r.makespan, r.ops[i].end);
  }
  (void)clock;
  return r;
}

}  // namespace ffsim::sim
