// The discrete-event simulation of `ffsim ops` on SimGrid's s4u actors (docs/commands/ops.md).
//
// Actors (all on one host: the operations model has no network; SimGrid is its clock and its
// actor scheduler): the scheduler (woken through a condition variable whenever the pool or the
// queue changes), one actor per job run (sleeps for the run's failure-free length, then reports
// the end), one per failure process (sleeps exponential inter-arrival times, then fails a unit),
// one per repair (sleeps the repair time, then returns the node to the pool), one per link down
// (sleeps the down time, then brings the node's link up unless a later down extended it), the
// submitter, and
// the horizon actor (the only non-daemon actor: when it ends the horizon, the simulation ends).
// Actors run one at a time (SimGrid's maestro), so the state below needs no locking, but every
// simcall (creating, killing or waking an actor) lets the other actors run: a handler changes the
// state first, with no simcall, and only then performs the simcalls it collected (Actions). A job
// actor's run number tells it whether its run is still the job's current one when it wakes.
// SPDX-License-Identifier: Apache-2.0
#include "ops/simulate.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "ops/burst.hpp"
#include "ops/placement.hpp"
#include "ops/rng.hpp"

namespace ffsim::ops {

namespace sg4 = simgrid::s4u;

namespace {

/// Checkpoints a run of `work_s` writes: one per interval, none after the last piece of work.
long long checkpoints_before_end(double work_s, double interval_s) {
  if (interval_s <= 0 || work_s <= interval_s) return 0;
  return static_cast<long long>(std::ceil(work_s / interval_s)) - 1;
}

}  // namespace

double run_time(double work_s, double interval_s, double cost_s) {
  return work_s + static_cast<double>(checkpoints_before_end(work_s, interval_s)) * cost_s;
}

namespace {

int nodes_of(const ClusterShape& c, int gpus) { return (gpus + c.gpus_per_node - 1) / c.gpus_per_node; }

}  // namespace

double job_failure_rate(const OpsParams& p, const JobSpec& j) {
  // A unit failure ends the run of every job on the unit; one with a repair time takes the whole
  // node away, and so ends every job on the node (simulate.cpp, Sim::on_failure). A link failure
  // ends the runs of the jobs on more than one node.
  const double nodes = nodes_of(p.cluster, j.gpus);
  double rate = 0;
  for (const auto& f : p.failures) {
    double units = 0;
    if (f.unit == FailureUnit::Node)
      units = nodes;
    else if (f.unit == FailureUnit::Link)
      units = nodes > 1 ? nodes : 0;
    else
      units = f.repair_s > 0 ? nodes * p.cluster.gpus_per_node : j.gpus;
    rate += f.rate_per_hour / 3600.0 * units;
  }
  return rate;
}

void validate(const OpsParams& p) {
  const ClusterShape& c = p.cluster;
  if (c.nodes < 1) throw ValueError("the cluster has " + std::to_string(c.nodes) + " nodes; ops needs at least 1");
  if (c.gpus_per_node < 1) throw ValueError("the cluster's nodes have no GPU");
  if (c.zones < 1 || c.zones > c.nodes)
    throw ValueError("zones: " + std::to_string(c.zones) + " for " + std::to_string(c.nodes) +
                     " nodes; give 1 .. nodes");
  if (!(p.horizon_s > 0) || !std::isfinite(p.horizon_s)) throw ValueError("the horizon must be a positive time");
  if (p.jobs.empty()) throw ValueError("the job mix is empty");
  for (const auto& j : p.jobs) {
    const std::string w = "job \"" + j.name + "\": ";
    if (j.gpus < 1) throw ValueError(w + "needs at least 1 GPU");
    if (!j.workload.empty() && !(j.step_s > 0))
      throw ValueError(w + "the step time of its workload " + j.workload + " was not computed (app/ops.cpp does)");
    if (j.gpus > c.gpus())
      throw ValueError(w + std::to_string(j.gpus) + " GPUs, more than the cluster's " + std::to_string(c.gpus()) +
                       "; give at most " + std::to_string(c.gpus()));
    if (!(j.work_s > 0) || !std::isfinite(j.work_s)) throw ValueError(w + "its work must be a positive time");
    if (j.submit_s < 0 || j.checkpoint_interval_s < 0 || j.checkpoint_cost_s < 0 || j.restart_cost_s < 0)
      throw ValueError(w + "times must not be negative");
    if (j.count < 1) throw ValueError(w + "count must be at least 1");
    if (j.arrival_rate_per_hour < 0 || !std::isfinite(j.arrival_rate_per_hour))
      throw ValueError(w + "its arrival rate must be a non-negative number per hour");
    if (j.arrival_rate_per_hour > 0) {
      if (j.count != 1 || j.repeat)
        throw ValueError(w + "a job with arrivals has neither a count nor repeat (each arrival is one instance)");
      if (!(j.arrivals_until_s > j.submit_s)) throw ValueError(w + "its arrivals end before they begin");
    }
  }
  for (const auto& f : p.failures) {
    if (f.rate_per_hour < 0 || !std::isfinite(f.rate_per_hour))
      throw ValueError("failure \"" + f.name + "\": its rate must be a non-negative number per hour");
    if (f.repair_s < 0) throw ValueError("failure \"" + f.name + "\": its repair time must not be negative");
    if (f.down_s < 0 || !std::isfinite(f.down_s))
      throw ValueError("failure \"" + f.name + "\": its down time must be a non-negative time");
    if (f.unit == FailureUnit::Link && f.repair_s > 0)
      throw ValueError("failure \"" + f.name +
                       "\": a link failure has a down time, not a repair (the node stays in the pool)");
    if (f.unit != FailureUnit::Link && f.down_s > 0)
      throw ValueError("failure \"" + f.name +
                       "\": a down time is for link failures; a GPU or node failure has a repair");
    const long long units = f.unit == FailureUnit::Gpu ? c.gpus() : c.nodes;
    for (std::size_t i = 0; i < f.at.size(); ++i) {
      if (!(f.at[i].first >= 0) || !std::isfinite(f.at[i].first) || (i > 0 && f.at[i].first < f.at[i - 1].first))
        throw ValueError("failure \"" + f.name +
                         "\": its hand-placed failures' times must be ascending and non-negative");
      if (f.at[i].second >= static_cast<std::uint64_t>(units))
        throw ValueError("failure \"" + f.name + "\": a hand-placed failure's unit is out of 0 .. " +
                         std::to_string(units - 1));
    }
    if (f.burst_size < 0 || f.burst_size > units)
      throw ValueError("failure \"" + f.name + "\": a burst hits 1 .. " + std::to_string(units) + " distinct units");
    if (f.burst_size > 0 && f.burst_mean > 0)
      throw ValueError("failure \"" + f.name + "\": give a burst size or a mean burst size, not both");
    if (f.burst_mean != 0 && !(f.burst_mean >= 1 && f.burst_mean <= static_cast<double>(units)))
      throw ValueError("failure \"" + f.name + "\": a mean burst size lies in 1 .. " + std::to_string(units));
    if (f.burst_spread_s < 0 || !std::isfinite(f.burst_spread_s))
      throw ValueError("failure \"" + f.name + "\": a burst's spread must be a non-negative time");
  }
}

namespace {

struct Alloc {
  int node = 0;
  int gpus = 0;
};

enum class JobState { Queued, Running, Done };

struct Job {
  std::size_t spec = 0;
  int gpus = 0;
  double work_left = 0;  ///< compute not yet kept (checkpointed)
  double queued_at = 0;
  std::uint64_t order = 0;  ///< FIFO key (submission order); a restarted job keeps its place
  bool resumed = false;     ///< pays the restart cost on its next run
  bool started = false;
  JobState state = JobState::Queued;
  std::vector<Alloc> alloc;
  bool cross_zone = false;
  double run_start = 0, expected_end = 0;
  std::uint64_t run = 0;  ///< number of the current (or last) run
  sg4::ActorPtr actor;    ///< the current run's actor, once created
  long long instance = 0;    ///< among the job's instances, from 1 (the timeline's)
  double run_queued_at = 0;  ///< queued_at when the current run started
};

struct Node {
  int zone = 0;
  int free = 0;
  bool down = false;
  double up_at = 0;
  bool link_down = false;  ///< only jobs on this node alone may be placed on it
  double link_up_at = 0;
  std::vector<std::pair<std::size_t, int>> jobs;  ///< (job, GPUs) in allocation order
};

/// The simcalls a handler performs after its changes to the state.
struct Actions {
  struct Start {
    std::size_t job;
    std::uint64_t run;
    double d;
  };
  struct Repair {
    std::size_t node;
    double d;
  };
  struct LinkUp {
    std::size_t node;
    double at;
  };
  std::vector<Start> starts;
  std::vector<sg4::ActorPtr> kills;
  std::vector<Repair> repairs;
  std::vector<LinkUp> link_ups;
  bool notify = false;
};

class Sim {
public:
  Sim(const OpsParams& p, bool timeline) : p_(p), gpn_(p.cluster.gpus_per_node) {
    if (timeline) r_.timeline.emplace();
    const ClusterShape& c = p.cluster;
    nodes_.resize(static_cast<std::size_t>(c.nodes));
    zone_begin_.resize(static_cast<std::size_t>(c.zones) + 1);
    for (int z = 0; z <= c.zones; ++z)
      zone_begin_[static_cast<std::size_t>(z)] = static_cast<int>(static_cast<long long>(c.nodes) * z / c.zones);
    for (int z = 0; z < c.zones; ++z)
      for (int n = zone_begin_[static_cast<std::size_t>(z)]; n < zone_begin_[static_cast<std::size_t>(z) + 1]; ++n)
        nodes_[static_cast<std::size_t>(n)].zone = z;
    for (auto& n : nodes_) n.free = gpn_;
    idle_gpus_ = c.gpus();
    r_.horizon_s = p.horizon_s;
    r_.gpus = c.gpus();
    r_.gpu_s.lost.assign(p.failures.size(), 0.0);
    for (const auto& j : p.jobs) {
      JobStats s;
      s.name = j.name;
      s.gpus = j.gpus;
      s.gpu_s.lost.assign(p.failures.size(), 0.0);
      r_.jobs.push_back(std::move(s));
    }
    for (const auto& f : p.failures) r_.failures.push_back({f.name, 0, 0, 0, 0, 0});
  }

  OpsResult run() {
    report_ = progress::active();
    sg4::NetZone* zone = sg4::create_full_zone("ops");
    host_ = zone->create_host("pool", 1.0)->seal();
    zone->seal();
    mutex_ = sg4::Mutex::create();
    cv_ = sg4::ConditionVariable::create();

    sg4::Actor::create("scheduler", host_, [this] { scheduler(); })->daemonize();
    sg4::Actor::create("submitter", host_, [this] { submitter(); })->daemonize();
    for (std::size_t f = 0; f < p_.failures.size(); ++f)
      if (p_.failures[f].rate_per_hour > 0 || !p_.failures[f].at.empty())
        sg4::Actor::create("failure-" + std::to_string(f), host_, [this, f] { failure_process(f); })->daemonize();
    for (std::size_t s = 0; s < p_.jobs.size(); ++s)
      if (p_.jobs[s].arrival_rate_per_hour > 0)
        sg4::Actor::create("arrivals-" + std::to_string(s), host_, [this, s] { arrivals(s); })->daemonize();
    sg4::Actor::create("horizon", host_, [this] {
      sg4::this_actor::sleep_until(p_.horizon_s);
      end_horizon();
    });
    sg4::Engine::get_instance()->run();
    return r_;
  }

private:
  // ---- time accounting of the GPUs outside jobs
  void advance(double t) {
    if (report_) progress::set_fraction(t / p_.horizon_s);  // the parent's meter (core/progress.hpp)
    const double dt = t - last_t_;
    r_.gpu_s.idle += static_cast<double>(idle_gpus_ - link_idle_gpus_) * dt;
    r_.gpu_s.down += static_cast<double>(down_gpus_) * dt;
    if (link_idle_gpus_ > 0) r_.gpu_s.link_down += static_cast<double>(link_idle_gpus_) * dt;
    last_t_ = t;
  }

  /// The free GPUs of `n` counted as link down (not idle): its link is down and it is not under repair.
  static long long link_idle(const Node& n) { return n.link_down && !n.down ? n.free : 0; }

  /// Changes node `n` by `f`, keeping link_idle_gpus_ (the sum of link_idle over the nodes) in step.
  template <class F>
  void change(Node& n, F f) {
    link_idle_gpus_ -= link_idle(n);
    f();
    link_idle_gpus_ += link_idle(n);
  }

  void kick(Actions& a) {
    dirty_ = true;
    a.notify = true;
  }

  void perform(Actions& a) {
    for (auto& k : a.kills) k->kill();
    for (const auto& st : a.starts) {
      const std::size_t id = st.job;
      const std::uint64_t run = st.run;
      const double d = st.d;
      sg4::ActorPtr actor = sg4::Actor::create("job", host_, [this, id, run, d] {
        sg4::this_actor::sleep_for(d);
        on_finish(id, run, sg4::Engine::get_clock());
      });
      actor->daemonize();
      Job& j = jobs_[id];
      if (j.state == JobState::Running && j.run == run) j.actor = std::move(actor);
    }
    for (const auto& r : a.repairs) {
      const std::size_t node = r.node;
      const double d = r.d;
      sg4::Actor::create("repair", host_, [this, node, d] {
        sg4::this_actor::sleep_for(d);
        on_repair(node, sg4::Engine::get_clock());
      })->daemonize();
    }
    for (const auto& l : a.link_ups) {
      const std::size_t node = l.node;
      const double at = l.at;
      sg4::Actor::create("link-up", host_, [this, node, at] {
        sg4::this_actor::sleep_until(at);
        on_link_up(node, at, sg4::Engine::get_clock());
      })->daemonize();
    }
    if (a.notify) cv_->notify_one();
    a = Actions{};
  }

  // ---- actors
  void scheduler() {
    std::unique_lock<sg4::Mutex> lock(*mutex_);
    for (;;) {
      while (!dirty_) cv_->wait(lock);
      dirty_ = false;
      Actions a;
      schedule(sg4::Engine::get_clock(), a);
      perform(a);
    }
  }

  void submitter() {
    struct Sub {
      double t;
      std::size_t spec;
    };
    std::vector<Sub> subs;
    for (std::size_t s = 0; s < p_.jobs.size(); ++s)
      if (!(p_.jobs[s].arrival_rate_per_hour > 0))
        for (int k = 0; k < p_.jobs[s].count; ++k) subs.push_back({p_.jobs[s].submit_s, s});
    std::stable_sort(subs.begin(), subs.end(), [](const Sub& a, const Sub& b) { return a.t < b.t; });
    for (const auto& s : subs) {
      if (s.t >= p_.horizon_s) break;
      if (s.t > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(s.t);
      if (ended_) return;
      Actions a;
      submit(s.spec, sg4::Engine::get_clock(), a);
      perform(a);
    }
  }

  /// Job `s`'s Poisson arrivals: exponential gaps from its submit time, up to its end or the horizon.
  void arrivals(std::size_t s) {
    const JobSpec& spec = p_.jobs[s];
    Rng rng(p_.seed, kArrivalStream + s);
    const double rate = spec.arrival_rate_per_hour / 3600.0;
    const double until = std::min(spec.arrivals_until_s, p_.horizon_s);
    double t = spec.submit_s;
    for (;;) {
      t += rng.exponential(rate);
      if (t >= until) return;
      sg4::this_actor::sleep_until(t);
      if (ended_) return;
      Actions a;
      submit(s, sg4::Engine::get_clock(), a);
      perform(a);
    }
  }

  void failure_process(std::size_t f) {
    const FailureSpec& spec = p_.failures[f];
    Rng rng(p_.seed, f);
    if (!spec.at.empty()) {  // hand-placed: no draws
      for (const auto& [t, unit] : spec.at) {
        if (t >= p_.horizon_s) return;
        sg4::this_actor::sleep_until(t);
        if (ended_) return;
        Actions a;
        on_failure(f, unit, sg4::Engine::get_clock(), a);
        perform(a);
      }
      return;
    }
    const std::uint64_t units =
        static_cast<std::uint64_t>(spec.unit == FailureUnit::Gpu ? p_.cluster.gpus() : p_.cluster.nodes);
    const double rate = spec.rate_per_hour / 3600.0 * static_cast<double>(units);
    if (spec.bursty()) {
      bursts(f, rng, units, rate);
      return;
    }
    for (;;) {
      const double dt = rng.exponential(rate);
      const std::uint64_t unit = rng.index(units);
      sg4::this_actor::sleep_for(dt);
      if (ended_) return;
      Actions a;
      on_failure(f, unit, sg4::Engine::get_clock(), a);
      perform(a);
    }
  }

  /// A bursty failure process: bursts arrive at `rate` / (mean burst size); each one's hits
  /// (ops/burst.hpp) wait in `pending` with later bursts' until their time, as bursts may overlap.
  void bursts(std::size_t f, Rng& rng, std::uint64_t units, double rate) {
    const FailureSpec& spec = p_.failures[f];
    const double burst_rate = rate / burst_mean_size(spec, units);
    struct Hit {
      double t;
      std::uint64_t seq;
      std::uint64_t unit;
    };
    const auto later = [](const Hit& a, const Hit& b) { return a.t != b.t ? a.t > b.t : a.seq > b.seq; };
    std::vector<Hit> pending;  // a min-heap by (time, draw order)
    std::uint64_t seq = 0;
    double next = rng.exponential(burst_rate);
    for (;;) {
      while (pending.empty() || next <= pending.front().t) {
        for (const BurstHit& h : draw_burst(rng, spec, units)) {
          pending.push_back({next + h.offset_s, seq++, h.unit});
          std::push_heap(pending.begin(), pending.end(), later);
        }
        next += rng.exponential(burst_rate);
      }
      std::pop_heap(pending.begin(), pending.end(), later);
      const Hit h = pending.back();
      pending.pop_back();
      sg4::this_actor::sleep_until(h.t);
      if (ended_) return;
      Actions a;
      on_failure(f, h.unit, sg4::Engine::get_clock(), a);
      perform(a);
    }
  }

  // ---- events
  void submit(std::size_t spec, double now, Actions& a) {
    Job j;
    j.spec = spec;
    j.gpus = p_.jobs[spec].gpus;
    j.work_left = p_.jobs[spec].work_s;
    j.queued_at = now;
    j.order = next_order_++;
    j.instance = ++r_.jobs[spec].submitted;
    jobs_.push_back(std::move(j));
    queue_.push_back(jobs_.size() - 1);
    kick(a);
  }

  void start(std::size_t id, double now, Actions& act) {
    advance(now);
    Job& j = jobs_[id];
    const JobSpec& s = p_.jobs[j.spec];
    JobStats& st = r_.jobs[j.spec];
    for (const auto& a : j.alloc) {
      Node& n = nodes_[static_cast<std::size_t>(a.node)];
      change(n, [&] { n.free -= a.gpus; });
      n.jobs.emplace_back(id, a.gpus);
      idle_gpus_ -= a.gpus;
    }
    if (j.cross_zone) cross_zone_running_ = true;
    if (!j.started) ++st.started;
    j.started = true;
    ++st.waits;
    st.wait_s += now - j.queued_at;
    st.max_wait_s = std::max(st.max_wait_s, now - j.queued_at);
    j.state = JobState::Running;
    running_.push_back(id);
    j.run_start = now;
    j.run_queued_at = j.queued_at;
    const double d =
        (j.resumed ? s.restart_cost_s : 0.0) + run_time(j.work_left, s.checkpoint_interval_s, s.checkpoint_cost_s);
    j.expected_end = now + d;
    ++j.run;
    j.actor = nullptr;
    act.starts.push_back({id, j.run, d});
  }

  void release(Job& j, std::size_t id) {
    for (const auto& a : j.alloc) {
      Node& n = nodes_[static_cast<std::size_t>(a.node)];
      change(n, [&] { n.free += a.gpus; });
      n.jobs.erase(std::find_if(n.jobs.begin(), n.jobs.end(), [id](const auto& x) { return x.first == id; }));
      idle_gpus_ += a.gpus;
    }
    j.alloc.clear();
    running_.erase(std::find(running_.begin(), running_.end(), id));
    if (j.cross_zone) cross_zone_running_ = false;
    j.cross_zone = false;
    j.actor = nullptr;
  }

  void on_finish(std::size_t id, std::uint64_t run, double now) {
    if (ended_) return;
    Job& j = jobs_[id];
    if (j.state != JobState::Running || j.run != run) return;  // a run a failure ended (its actor not yet killed)
    advance(now);
    Actions a;
    account(j, now, RunEnd::Finished, 0);
    ++r_.jobs[j.spec].completed;
    j.state = JobState::Done;
    release(j, id);
    const std::size_t spec = j.spec;
    if (p_.jobs[spec].repeat) submit(spec, now, a);
    kick(a);
    perform(a);
  }

  void fail_job(std::size_t id, double now, std::size_t cause, Actions& a) {
    Job& j = jobs_[id];
    account(j, now, RunEnd::Failed, cause);
    ++r_.jobs[j.spec].interrupted;
    if (j.actor) a.kills.push_back(j.actor);
    release(j, id);
    j.state = JobState::Queued;
    j.resumed = true;
    j.queued_at = now;
    const auto at = std::lower_bound(queue_.begin(), queue_.end(), j.order,
                                     [this](std::size_t q, std::uint64_t o) { return jobs_[q].order < o; });
    queue_.insert(at, id);
  }

  void on_failure(std::size_t f, std::uint64_t unit, double now, Actions& a) {
    advance(now);
    const FailureSpec& spec = p_.failures[f];
    FailureStats& fs = r_.failures[f];
    ++fs.events;
    const auto node =
        static_cast<std::size_t>(spec.unit == FailureUnit::Gpu ? unit / static_cast<std::uint64_t>(gpn_) : unit);
    Node& n = nodes_[node];
    if (n.down) {
      ++fs.on_down;
      if (r_.timeline) r_.timeline->failures.push_back({now, f, unit, static_cast<int>(node), true, 0.0, {}, 0.0});
      return;
    }
    std::vector<std::size_t> victims;
    if (spec.unit == FailureUnit::Link) {
      // The jobs that reach other nodes through this link; a job on this node alone runs on.
      for (const auto& x : n.jobs)
        if (jobs_[x.first].alloc.size() > 1) victims.push_back(x.first);
    } else if (spec.unit == FailureUnit::Node || spec.repair_s > 0) {
      for (const auto& x : n.jobs) victims.push_back(x.first);
    } else {
      // The GPU's slot: a node's used GPUs are its first slots, in allocation order.
      int slot = static_cast<int>(unit % static_cast<std::uint64_t>(gpn_));
      for (const auto& x : n.jobs) {
        if (slot < x.second) {
          victims.push_back(x.first);
          break;
        }
        slot -= x.second;
      }
    }
    if (r_.timeline) {
      FailureRecord rec{now, f, unit, static_cast<int>(node), false, spec.repair_s, {}, spec.down_s};
      for (std::size_t id : victims) rec.ended.emplace_back(jobs_[id].spec, jobs_[id].instance);
      r_.timeline->failures.push_back(std::move(rec));
    }
    for (std::size_t id : victims) {
      fail_job(id, now, f, a);
      ++fs.jobs_hit;
    }
    if (spec.repair_s > 0) {
      change(n, [&] {
        n.down = true;
        n.up_at = now + spec.repair_s;
      });
      idle_gpus_ -= gpn_;  // every job on it has just released its GPUs
      down_gpus_ += gpn_;
      ++fs.repairs;
      a.repairs.push_back({node, spec.repair_s});
    }
    const bool link_down = spec.unit == FailureUnit::Link && spec.down_s > 0;
    if (link_down) {
      // Down until the later of its ends: an earlier down that ends later stands.
      const double until = now + spec.down_s;
      if (!n.link_down || until > n.link_up_at) {
        change(n, [&] {
          n.link_down = true;
          n.link_up_at = until;
        });
        a.link_ups.push_back({node, until});
      }
      ++fs.links_down;
    }
    if (!victims.empty() || spec.repair_s > 0 || link_down) kick(a);
  }

  void on_repair(std::size_t node, double now) {
    if (ended_) return;
    advance(now);
    Node& n = nodes_[node];
    change(n, [&] { n.down = false; });
    down_gpus_ -= gpn_;
    idle_gpus_ += gpn_;
    Actions a;
    kick(a);
    perform(a);
  }

  /// The end `at` of a link down of `node`: its link is up unless a later down moved its end.
  void on_link_up(std::size_t node, double at, double now) {
    if (ended_) return;
    Node& n = nodes_[node];
    if (!n.link_down || n.link_up_at != at) return;
    advance(now);
    change(n, [&] { n.link_down = false; });
    Actions a;
    kick(a);
    perform(a);
  }

  void end_horizon() {
    const double now = p_.horizon_s;
    advance(now);
    for (auto& j : jobs_)
      if (j.state == JobState::Running) {
        account(j, now, RunEnd::Horizon, 0);
        ++r_.running_at_end;
      } else if (j.state == JobState::Queued) {
        ++r_.queued_at_end;
      }
    ended_ = true;
  }

  // ---- the GPU-time of one run of a job, from its start to `now`, by state
  void account(Job& j, double now, RunEnd end, std::size_t cause) {
    const JobSpec& s = p_.jobs[j.spec];
    JobStats& st = r_.jobs[j.spec];
    const double g = j.gpus;
    auto add = [g](double& total, double& mine, double seconds) {
      total += g * seconds;
      mine += g * seconds;
    };
    double e = now - j.run_start;
    const double rs = std::min(e, j.resumed ? s.restart_cost_s : 0.0);
    add(r_.gpu_s.restart, st.gpu_s.restart, rs);
    e -= rs;
    RunRecord* rec = nullptr;
    if (r_.timeline) {
      r_.timeline->runs.push_back({j.spec, j.instance, static_cast<long long>(j.run), j.run_queued_at, j.run_start, now,
                                   rs, s.checkpoint_interval_s, s.checkpoint_cost_s, 0, 0.0, end,
                                   end == RunEnd::Failed ? cause : 0});
      rec = &r_.timeline->runs.back();
    }
    if (e <= 0) return;
    const double tau = s.checkpoint_interval_s, c = s.checkpoint_cost_s;
    const long long before_end = checkpoints_before_end(j.work_left, tau);
    long long k = 0;
    if (before_end > 0) k = std::min(before_end, static_cast<long long>(std::floor(e / (tau + c))));
    const double kept = static_cast<double>(k) * tau;
    const double written = static_cast<double>(k) * c;
    const double rest = std::max(0.0, e - kept - written);
    add(r_.gpu_s.useful, st.gpu_s.useful, kept);
    add(r_.gpu_s.checkpoint, st.gpu_s.checkpoint, written);
    st.checkpoints += k;
    j.work_left -= kept;
    if (rec) {
      rec->checkpoints = k;
      if (end == RunEnd::Failed) rec->tail_s = rest;
    }
    switch (end) {
      case RunEnd::Finished:
        add(r_.gpu_s.useful, st.gpu_s.useful, rest);
        j.work_left = 0;
        break;
      case RunEnd::Failed:  // the work since the last checkpoint, and any checkpoint under way
        add(r_.gpu_s.lost[cause], st.gpu_s.lost[cause], rest);
        break;
      case RunEnd::Horizon: {  // work done by the horizon is kept; a checkpoint under way counts as one
        const double w = k == before_end ? rest : std::min(rest, tau);
        add(r_.gpu_s.useful, st.gpu_s.useful, w);
        add(r_.gpu_s.checkpoint, st.gpu_s.checkpoint, rest - w);
        if (rec) rec->tail_s = rest - w;
        break;
      }
    }
  }

  // ---- placement: FIFO with EASY backfill
  /// Chooses nodes among [b, e) for `j`: whole free nodes by the job's placement (packed: lowest
  /// index first; spread: evenly over the free ones; random: a uniform draw of them), then the
  /// best-fitting node for the remainder; false if they are not there. A job on more than one node
  /// gets no node whose link is down.
  bool place_in(Job& j, int b, int e) const {
    std::vector<Alloc> a;
    const int full = j.gpus / gpn_, rem = j.gpus % gpn_;
    const bool multi = j.gpus > gpn_;
    const JobSpec& spec = p_.jobs[j.spec];
    // The whole free nodes, ascending (packed needs only the first `full` of them).
    const bool packed = spec.placement == JobSpec::Placement::Packed;
    std::vector<int> idle;
    for (int n = b; n < e && !(packed && static_cast<int>(idle.size()) == full); ++n) {
      const Node& x = nodes_[static_cast<std::size_t>(n)];
      if (!x.down && !(multi && x.link_down) && x.free == gpn_) idle.push_back(n);
    }
    if (static_cast<int>(idle.size()) < full) return false;
    for (int n :
         choose_whole_nodes(std::move(idle), full, spec.placement, spec.placement_seed, j.spec, j.instance, j.run))
      a.push_back({n, gpn_});
    if (rem > 0) {
      int best = -1;
      for (int n = b; n < e; ++n) {
        const Node& x = nodes_[static_cast<std::size_t>(n)];
        if (x.down || (multi && x.link_down) || x.free < rem) continue;
        if (std::any_of(a.begin(), a.end(), [n](const Alloc& y) { return y.node == n; })) continue;
        if (best < 0 || x.free < nodes_[static_cast<std::size_t>(best)].free) best = n;
      }
      if (best < 0) return false;
      a.push_back({best, rem});
    }
    j.alloc = std::move(a);
    return true;
  }

  bool place(Job& j) const {
    const int zones = p_.cluster.zones;
    for (int z = 0; z < zones; ++z)
      if (place_in(j, zone_begin_[static_cast<std::size_t>(z)], zone_begin_[static_cast<std::size_t>(z) + 1])) {
        j.cross_zone = false;
        return true;
      }
    if (zones > 1 && j.gpus >= p_.cluster.cross_zone_min_gpus && !cross_zone_running_ &&
        place_in(j, 0, p_.cluster.nodes)) {
      j.cross_zone = true;
      return true;
    }
    return false;
  }

  /// When the head job `need` GPUs could start if running jobs end as expected and nodes come back
  /// when repaired (counting GPUs only), and how many GPUs would be spare then. For a job on more
  /// than one node, a node whose link is down gives its GPUs when the link is up, and not before.
  std::pair<double, long long> reservation(int need) const {
    const bool multi = need > gpn_;
    auto link_up = [&](const Node& n, double t) { return multi && n.link_down ? std::max(t, n.link_up_at) : t; };
    std::vector<std::pair<double, long long>> frees;
    for (std::size_t id : running_) {
      const Job& j = jobs_[id];
      // A job on a node whose link is down is on that node alone (no other is placed there).
      const Node& n = nodes_[static_cast<std::size_t>(j.alloc.front().node)];
      frees.emplace_back(link_up(n, j.expected_end), j.gpus);
    }
    long long have = idle_gpus_;
    for (const auto& n : nodes_) {
      if (n.down) {
        frees.emplace_back(link_up(n, n.up_at), gpn_);
      } else if (multi && n.link_down && n.free > 0) {
        frees.emplace_back(n.link_up_at, n.free);
        have -= n.free;
      }
    }
    std::sort(frees.begin(), frees.end());
    for (const auto& [t, g] : frees) {
      have += g;
      if (have >= need) return {t, have - need};
    }
    return {std::numeric_limits<double>::infinity(), 0};
  }

  void schedule(double now, Actions& a) {
    if (ended_) return;
    std::vector<std::size_t> waiting;
    bool blocked = false;
    double shadow = 0;
    long long extra = 0;
    for (std::size_t id : queue_) {
      Job& j = jobs_[id];
      if (!blocked) {
        if (place(j)) {
          start(id, now, a);
          continue;
        }
        blocked = true;
        std::tie(shadow, extra) = reservation(j.gpus);
        waiting.push_back(id);
        continue;
      }
      const JobSpec& s = p_.jobs[j.spec];
      const double d =
          (j.resumed ? s.restart_cost_s : 0.0) + run_time(j.work_left, s.checkpoint_interval_s, s.checkpoint_cost_s);
      const bool before = now + d <= shadow;
      if ((before || j.gpus <= extra) && place(j)) {
        if (!before) extra -= j.gpus;
        start(id, now, a);
        continue;
      }
      waiting.push_back(id);
    }
    queue_ = std::move(waiting);
  }

  const OpsParams& p_;
  const int gpn_;
  OpsResult r_;
  std::vector<Node> nodes_;
  std::vector<int> zone_begin_;
  std::deque<Job> jobs_;  ///< a deque: references stay valid as jobs are added
  std::vector<std::size_t> queue_;
  std::vector<std::size_t> running_;  ///< jobs running, in start order
  long long idle_gpus_ = 0, down_gpus_ = 0;  ///< free GPUs of the nodes not under repair; those under repair
  long long link_idle_gpus_ = 0;             ///< of idle_gpus_, those on nodes whose link is down
  double last_t_ = 0;
  bool report_ = false;  // progress::active() (run)
  bool cross_zone_running_ = false;
  bool dirty_ = false, ended_ = false;
  std::uint64_t next_order_ = 0;
  sg4::Host* host_ = nullptr;
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr cv_;
};

// ---- the result through a pipe from the forked child
class Out {
public:
  void num(double v) { raw(&v, sizeof v); }
  void i64(long long v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    i64(static_cast<long long>(s.size()));
    raw(s.data(), s.size());
  }
  void gpu_s(const GpuSeconds& g) {
    for (double v : {g.useful, g.checkpoint, g.restart, g.idle, g.down, g.link_down}) num(v);
    i64(static_cast<long long>(g.lost.size()));
    for (double v : g.lost) num(v);
  }
  std::string bytes;

private:
  void raw(const void* p, std::size_t n) { bytes.append(static_cast<const char*>(p), n); }
};

class In {
public:
  explicit In(const std::string& b) : b_(b) {}
  double num() {
    double v = 0;
    raw(&v, sizeof v);
    return v;
  }
  long long i64() {
    long long v = 0;
    raw(&v, sizeof v);
    return v;
  }
  /// A count of items of at least `bytes_each` bytes still to come (a bad count would be a huge resize).
  std::size_t count(std::size_t bytes_each) {
    const long long n = i64();
    if (n < 0 || static_cast<unsigned long long>(n) > (b_.size() - at_) / bytes_each)
      throw SimulationError("ops: truncated result from the simulation");
    return static_cast<std::size_t>(n);
  }
  std::string str() {
    const auto n = static_cast<std::size_t>(i64());
    if (n > b_.size() - at_) throw SimulationError("ops: truncated result from the simulation");
    std::string s = b_.substr(at_, n);
    at_ += n;
    return s;
  }
  GpuSeconds gpu_s() {
    GpuSeconds g;
    g.useful = num();
    g.checkpoint = num();
    g.restart = num();
    g.idle = num();
    g.down = num();
    g.link_down = num();
    g.lost.resize(static_cast<std::size_t>(i64()));
    for (double& v : g.lost) v = num();
    return g;
  }

private:
  void raw(void* p, std::size_t n) {
    if (n > b_.size() - at_) throw SimulationError("ops: truncated result from the simulation");
    std::memcpy(p, b_.data() + at_, n);
    at_ += n;
  }
  const std::string& b_;
  std::size_t at_ = 0;
};

std::string encode(const OpsResult& r) {
  Out o;
  o.num(r.horizon_s);
  o.i64(r.gpus);
  o.gpu_s(r.gpu_s);
  o.i64(r.queued_at_end);
  o.i64(r.running_at_end);
  o.i64(static_cast<long long>(r.jobs.size()));
  for (const auto& j : r.jobs) {
    o.str(j.name);
    o.i64(j.gpus);
    for (long long v : {j.submitted, j.started, j.completed, j.interrupted, j.checkpoints, j.waits}) o.i64(v);
    o.num(j.wait_s);
    o.num(j.max_wait_s);
    o.gpu_s(j.gpu_s);
  }
  o.i64(static_cast<long long>(r.failures.size()));
  for (const auto& f : r.failures) {
    o.str(f.name);
    for (long long v : {f.events, f.on_down, f.jobs_hit, f.repairs, f.links_down}) o.i64(v);
  }
  o.i64(r.timeline ? 1 : 0);
  if (r.timeline) {
    o.i64(static_cast<long long>(r.timeline->runs.size()));
    for (const auto& x : r.timeline->runs) {
      for (long long v : {static_cast<long long>(x.job), x.instance, x.run, x.checkpoints,
                          static_cast<long long>(x.how), static_cast<long long>(x.cause)})
        o.i64(v);
      for (double v : {x.queued_at, x.start, x.end, x.restart_s, x.interval_s, x.checkpoint_s, x.tail_s}) o.num(v);
    }
    o.i64(static_cast<long long>(r.timeline->failures.size()));
    for (const auto& x : r.timeline->failures) {
      o.num(x.t);
      o.num(x.repair_s);
      o.num(x.down_s);
      for (long long v : {static_cast<long long>(x.process), static_cast<long long>(x.unit),
                          static_cast<long long>(x.node), x.on_down ? 1LL : 0LL})
        o.i64(v);
      o.i64(static_cast<long long>(x.ended.size()));
      for (const auto& [job, inst] : x.ended) {
        o.i64(static_cast<long long>(job));
        o.i64(inst);
      }
    }
  }
  return o.bytes;
}

OpsResult decode(const std::string& b) {
  In in(b);
  OpsResult r;
  r.horizon_s = in.num();
  r.gpus = in.i64();
  r.gpu_s = in.gpu_s();
  r.queued_at_end = in.i64();
  r.running_at_end = in.i64();
  r.jobs.resize(static_cast<std::size_t>(in.i64()));
  for (auto& j : r.jobs) {
    j.name = in.str();
    j.gpus = static_cast<int>(in.i64());
    for (long long* v : {&j.submitted, &j.started, &j.completed, &j.interrupted, &j.checkpoints, &j.waits})
      *v = in.i64();
    j.wait_s = in.num();
    j.max_wait_s = in.num();
    j.gpu_s = in.gpu_s();
  }
  r.failures.resize(static_cast<std::size_t>(in.i64()));
  for (auto& f : r.failures) {
    f.name = in.str();
    for (long long* v : {&f.events, &f.on_down, &f.jobs_hit, &f.repairs, &f.links_down}) *v = in.i64();
  }
  if (in.i64() != 0) {
    Timeline& t = r.timeline.emplace();
    t.runs.resize(in.count(13 * 8));
    for (auto& x : t.runs) {
      x.job = static_cast<std::size_t>(in.i64());
      x.instance = in.i64();
      x.run = in.i64();
      x.checkpoints = in.i64();
      x.how = static_cast<RunEnd>(in.i64());
      x.cause = static_cast<std::size_t>(in.i64());
      for (double* v : {&x.queued_at, &x.start, &x.end, &x.restart_s, &x.interval_s, &x.checkpoint_s, &x.tail_s})
        *v = in.num();
    }
    t.failures.resize(in.count(8 * 8));
    for (auto& x : t.failures) {
      x.t = in.num();
      x.repair_s = in.num();
      x.down_s = in.num();
      x.process = static_cast<std::size_t>(in.i64());
      x.unit = static_cast<std::uint64_t>(in.i64());
      x.node = static_cast<int>(in.i64());
      x.on_down = in.i64() != 0;
      x.ended.resize(in.count(2 * 8));
      for (auto& [job, inst] : x.ended) {
        job = static_cast<std::size_t>(in.i64());
        inst = in.i64();
      }
    }
  }
  return r;
}

void write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(3);
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void run_child(const OpsParams& p, bool timeline, int fd) {
  // Small actor stacks without guard pages: a year creates tens of thousands of actors, and the
  // default 8 MiB stacks with a guard page made the stacks' mmap/mprotect most of the run (a 120-day
  // Fire-Flyer 2 run: 6.5 s, 2.7 s with 256 KiB stacks, 0.8 s without guard pages). The actors'
  // code is shallow (no recursion but std::sort's, logarithmic): 256 KiB is ample.
  std::vector<std::string> args{"ffsim-ops", "--log=root.thresh:critical", "--cfg=contexts/stack-size:256",
                                "--cfg=contexts/guard-size:0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg4::Engine engine(&argc, argv.data());
  Sim sim(p, timeline);
  const std::string b = encode(sim.run());
  const auto n = static_cast<long long>(b.size());
  write_all(fd, reinterpret_cast<const char*>(&n), sizeof n);
  write_all(fd, b.data(), b.size());
}

}  // namespace

OpsResult simulate(const OpsParams& p, bool timeline) {
  validate(p);
  if (const char* nf = std::getenv("FFSIM_OPS_NO_FORK"); nf && *nf == '1') {
    // Debugging aid: simulate in this process (only once per process: SimGrid runs once).
    std::vector<std::string> args{"ffsim-ops", "--log=root.thresh:critical", "--cfg=contexts/stack-size:256",
                                  "--cfg=contexts/guard-size:0"};  // as in run_child
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    sg4::Engine engine(&argc, argv.data());
    return Sim(p, timeline).run();
  }
  int fds[2];
  if (::pipe(fds) != 0) throw SimulationError(std::string("ops: pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw SimulationError(std::string("ops: fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    try {
      run_child(p, timeline, fds[1]);
    } catch (const std::exception& e) {
      const std::string msg = std::string("ops simulation: ") + e.what() + "\n";
      write_all(2, msg.data(), msg.size());
      _exit(2);
    }
    ::close(fds[1]);
    _exit(0);
  }
  ::close(fds[1]);
  std::string bytes;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bytes.size() < sizeof(long long))
    throw SimulationError("ops: the SimGrid simulation failed (child exit status " + std::to_string(status) + ")");
  long long n = 0;
  std::memcpy(&n, bytes.data(), sizeof n);
  if (n != static_cast<long long>(bytes.size() - sizeof n))
    throw SimulationError("ops: truncated result from the simulation");
  return decode(bytes.substr(sizeof n));
}

}  // namespace ffsim::ops
