// The max-min fluid evaluator.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <bit>
#include <cmath>
#include <queue>
#include <span>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/progress.hpp"
#include "eval/engine.hpp"

namespace ffsim::eval {

std::uint32_t Result::bottleneck() const {
  std::uint32_t best = kLimitNone;
  double t = 0;
  for (std::size_t i = 0; i < usage.size(); ++i)
    if (usage[i].saturated_time > t * (1 + 1e-12) + 1e-15) {
      t = usage[i].saturated_time;
      best = static_cast<std::uint32_t>(i);
    }
  return best;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// (x, i) before (y, j), for times and levels, which are never negative (nor NaN): their bit
// patterns order as the values do, so this is two integer comparisons without a data-dependent
// branch (the branches of the plain comparison were mispredicted in the queues and the filling).
bool before(double x, std::uint64_t i, double y, std::uint64_t j) {
  const auto a = std::bit_cast<std::uint64_t>(x), b = std::bit_cast<std::uint64_t>(y);
  return (a < b) | ((a == b) & (i < j));
}

// An op whose latency is over (its flows begin), or one that starts.
struct Event {
  double time;
  std::uint64_t seq;  // scheduling order (shared with flow ends): ties resolve deterministically
  std::uint32_t op;
  bool start = false;  // the op starts then (it waited for a delay: see start_op), else its flows begin
  bool operator>(const Event& o) const { return before(o.time, o.seq, time, seq); }
};

struct FlowEnd {
  double time;
  std::uint64_t seq;  // scheduling order: ties resolve deterministically
  std::uint32_t flow;
};

struct FlowState {
  std::uint32_t op = 0;
  std::uint32_t len = 0;  // its path's length: entries_[at, at + len) (see Entry)
  double remaining = 0;  // at t_last
  double weight = 1;
  double cap = kInf;
  double rate = 0;
  double t_last = 0;
  bool rated = false;  // a solve has set its rate (its first solve always does)
  bool active = false;
  std::uint32_t limiter = kLimitNone;
  double limiter_since = 0;
  std::uint32_t best_limiter = kLimitNone;
  double best_time = -1;
  std::uint32_t group = kLimitNone;  // its group (see Group)
  std::uint32_t qpos = kLimitNone;   // its end's place in the queue of flow ends
  std::uint32_t member = 0;          // its index in the group's members
  std::uint32_t at = 0;              // its first entry in entries_
};

// A flow's path entry k: the resource, and the entry's index in that resource's list of flows (see
// remove_from_resources). A flow's entries are one block of the engine's own array, so that its
// resources are one cache line away rather than behind the path table and the path's vector; the
// blocks and the flows' slots are reused once their flows end (see retire), which keeps both as
// small as the flows alive at once (28,046 of the 1,931,816 a 9,600-GPU HFReduce starts).
struct Entry {
  std::uint32_t res;
  std::uint32_t pos;
};

// Flows that a solve cannot tell apart: the same active resources on their paths (in path order)
// and the same cap over weight. Progressive filling freezes such flows together at one level (each
// at its weight times the level, or its cap), so the solve runs on groups. Groups are kept between
// solves: a flow joins one when it starts, leaves it when it ends, and moves when a resource on its
// path joins or leaves the constraint set (lazy constraints). Within a node the copies of several
// GPUs often differ only in resources that are not saturated (their own links): one group.
struct alignas(64) Group {
  // What a solve touches for every group of its component (one cache line).
  std::uint32_t mark = 0;
  bool frozen = false;
  bool by_cap = false;
  bool dirty = true;   // members changed since the group's last solve
  bool settled = false;  // every member runs at last_level (see kept)
  bool stale = true;     // weight and cap_sum need summing again (see refresh)
  double weight = 0;   // the members' weights summed (recomputed when stale)
  double level = 0;
  double cap_sum = 0;  // the members' caps summed
  double cap_level = kInf;         // cap / weight of every member
  std::vector<std::uint32_t> sig;  // active resources (with multiplicity), in path order
  // The rest.
  std::uint32_t lim = kLimitNone;
  std::vector<std::uint32_t> members;
  std::uint64_t hash = 0;
  bool dying = false;  // empty, still in its resources' lists until compact()
  std::uint32_t stamp_forced = 0;  // settled_solution: added to forced_ in the solve of this mark
  // The last solve's result, which the members' rates follow.
  double last_level = -1;
  bool last_by_cap = false;
  std::uint32_t last_lim = kLimitNone;
};

struct Level {
  double level;
  std::uint32_t id;       // resource id, or for a cap the group's index in the solve
  std::uint32_t version;  // resources: must match; caps: 0
};

// A resource's state in three cache lines by use (cachegrind at 1,440 GPUs with a 4 MiB last level:
// 13% fewer first-level misses than one solve line and the rest beside it).
struct alignas(64) ResState {
  // Line 1: what a change of a flow's rate touches on every resource of its path, the dropped ones
  // included (the load, its accounting, the checks), and the flags.
  double load = 0;    // current total rate x multiplicity
  double cap = 0;     // the platform's capacity (of a both-ways cap: see cap_of)
  double t_mark = 0;  // last accounting time
  ResourceUse use;    // accounted up to t_mark (the result's usage)
  std::uint32_t comp_stamp = 0;
  std::uint32_t check_stamp = 0;
  std::uint32_t touch_stamp = 0;
  std::uint32_t version = 0;
  bool active = true;  // a constraint of the solve (see resolve: lazy constraints)
  bool saturated = false;
  bool bidir = false;  // a both-ways cap (PcieBidir)
  // Replicas (Router::replica_path_id): crossed by a replica flow as a copy's own resource that
  // stands for the others' (rep), mirrored by one (mirrored), crossed by any other flow (plain). A
  // plain flow on one of the first two would tell the copies apart: refused.
  bool rep = false, mirrored = false, plain = false;
  // Line 2: what a solve touches on the resources in it.
  alignas(64) double cap_rem = 0;
  double wsum = 0;
  std::vector<std::uint32_t> groups;  // while active: groups with it in their signature (multiplicity)
  std::uint32_t order_stamp = 0;      // solve_once: taken into the order of first levels
  std::uint32_t bound_stamp = 0;      // unchanged_level: bounded already
  std::uint32_t compact_stamp = 0;    // kill_group: in compact_res_ already
  // Line 3: the flows, which their starts and ends touch.
  alignas(64) std::vector<std::uint32_t> flows;  // active flows (with multiplicity per path entry)
  std::uint32_t mirror_of = kLimitNone;          // mirrored: the resource that stands for it
};
static_assert(sizeof(ResState) == 192, "a resource's state in three cache lines");

// Groups by the hash of their key (signature, cap level): open addressing with linear probing in
// one array, a slot per group, so that a lookup is one or two cache lines (the node-based
// std::unordered_multimap it replaces chased a pointer per entry: 10% of a 10,000-GPU HFReduce's
// time). Which group a key finds does not depend on the table: keys are unique, the match is
// checked on the group itself.
class GroupTable {
public:
  /// The group whose hash is h and that `same` accepts, or kLimitNone.
  template <class Same>
  std::uint32_t find(std::uint64_t h, Same same) const {
    if (slots_.empty()) return kLimitNone;
    for (std::size_t i = spot(h) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.gid == kEmpty) return kLimitNone;
      if (s.gid != kTomb && s.hash == h && same(s.gid)) return s.gid;
    }
  }
  void insert(std::uint64_t h, std::uint32_t gid) {
    if (2 * (live_ + tombs_ + 1) > slots_.size()) rehash();
    std::size_t i = spot(h) & mask_;
    while (slots_[i].gid != kEmpty && slots_[i].gid != kTomb) i = (i + 1) & mask_;
    if (slots_[i].gid == kTomb) --tombs_;
    slots_[i] = Slot{h, gid};
    ++live_;
  }
  void erase(std::uint64_t h, std::uint32_t gid) {
    for (std::size_t i = spot(h) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      FFSIM_ASSERT(s.gid != kEmpty, "group missing from the table");
      if (s.gid == gid) {
        s.gid = kTomb;
        --live_;
        ++tombs_;
        return;
      }
    }
  }

private:
  static constexpr std::uint32_t kEmpty = kLimitNone, kTomb = kLimitNone - 1;
  // The key's hash is built by multiplications, whose low bits see only the inputs' low bits: mixed
  // before it picks a slot.
  static std::size_t spot(std::uint64_t h) { return static_cast<std::size_t>(core::mix64(h)); }
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t gid = kEmpty;
  };
  // At most half full, tombstones counted; grows (or just sweeps the tombstones) when it would not be.
  void rehash() {
    std::size_t n = 64;
    while (n < 4 * (live_ + 1)) n *= 2;
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    tombs_ = 0;
    for (const Slot& s : old)
      if (s.gid != kEmpty && s.gid != kTomb) {
        std::size_t i = spot(s.hash) & mask_;
        while (slots_[i].gid != kEmpty) i = (i + 1) & mask_;
        slots_[i] = s;
      }
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, live_ = 0, tombs_ = 0;
};

class Fluid {
public:
  Fluid(const sched::Schedule& s, const platform::Platform& p, bool lazy, bool merge, bool partial)
      : s_(s), p_(p), lazy_(lazy), merge_(merge), partial_(partial) {}

  Result run() {
    // (A cycle leaves its ops waiting: found at the end, where an op never finished, rather than by
    // a search of the whole graph before the run, which built it twice.)
    graph_ = s_.graph();
    const auto& g = graph_;
    const std::size_t n = s_.size();
    Result r;
    r.engine = "analytic";
    res_.assign(p_.resource_count(), ResState{});
    for (std::size_t i = 0; i < res_.size(); ++i) {
      const platform::Resource& pr = p_.resource(static_cast<std::uint32_t>(i));
      res_[i].cap = pr.capacity;
      res_[i].bidir = pr.kind == platform::ResourceKind::PcieBidir;
    }
    ops_.assign(n, OpState{});
    std::vector<sched::OpId> first;
    for (sched::OpId i = 0; i < n; ++i) {
      ops_[i].preds = g.preds[i];
      if (g.preds[i] == 0) first.push_back(i);
    }
    // Progress on a terminal (core/progress.hpp): the ops started, in batches.
    const bool report = progress::active();
    if (report) progress::add_work(n);
    std::uint64_t reported = 0;
    for (const sched::OpId i : first) start_op(i, 0.0);
    double now = 0;
    while (!events_.empty() || !fq_.empty()) {
      if (report && started_ - reported >= 4096) {
        progress::did_work(started_ - reported);
        reported = started_;
      }
      now = events_.empty() ? fq_[0].time : fq_.empty() ? events_.top().time : std::min(events_.top().time, fq_[0].time);
      // Take every event at this instant in the order they were scheduled, then re-solve the
      // touched components once.
      for (;;) {
        const bool op = !events_.empty() && events_.top().time == now;
        const bool flow = !fq_.empty() && fq_[0].time == now;
        if (!op && !flow) break;
        if (op && (!flow || events_.top().seq < fq_[0].seq)) {
          const Event e = events_.top();
          events_.pop();
          if (e.start)
            start_op(e.op, now, true);
          else
            begin_flows(e.op, now);
        } else {
          const std::uint32_t fid = fq_[0].flow;
          fq_erase(fid);
          finish_flow(fid, now);
        }
      }
      // The successors of the ops that complete at this instant are read after the solve below:
      // their records (indexed by operation: 2.4 million at 9,600 GPUs) are fetched meanwhile.
      for (const sched::OpId op : done_ops_)
        for (std::uint32_t j = g.succ_begin[op]; j < g.succ_begin[op + 1]; ++j) {
          __builtin_prefetch(&ops_[g.succ[j]]);
          __builtin_prefetch(&s_.op(g.succ[j]));
        }
      resolve(now);
      // Ops whose flows all ended at this instant complete, releasing successors.
      for (std::size_t k = 0; k < done_ops_.size(); ++k) {
        const sched::OpId op = done_ops_[k];
        ops_[op].end = now;
        for (std::uint32_t j = g.succ_begin[op]; j < g.succ_begin[op + 1]; ++j)
          if (--ops_[g.succ[j]].preds == 0) release(g.succ[j], now);
      }
      done_ops_.clear();
      resolve(now);
      retire();
    }
    if (report) progress::did_work(started_ - reported);
    for (std::size_t i = 0; i < res_.size(); ++i) account(static_cast<std::uint32_t>(i), now);
    for (sched::OpId i = 0; i < n; ++i)
      if (ops_[i].end < 0) {
        s_.check_acyclic();  // throws where a cycle is the reason
        throw SimulationError("operation " + std::to_string(i) + " never finished");
      }
    r.ops.resize(n);
    for (sched::OpId i = 0; i < n; ++i) r.ops[i] = OpTiming{ops_[i].start, ops_[i].end, ops_[i].limiter};
    r.makespan = std::max(now, delays_end_);  // a delay at the end ends without an event
    r.usage.resize(res_.size());
    for (std::size_t i = 0; i < res_.size(); ++i) r.usage[i] = res_[i].use;
    // A mirrored resource carried what the one that stood for it carried.
    for (const std::uint32_t other : mirrored_) r.usage[other] = r.usage[res_[other].mirror_of];
    return r;
  }

private:
  // A resource's capacity now: a conditional (bidirectional) cap holds only while both of its
  // directions carry flows. Flows that start or end in either direction cross it, so a change of
  // state always touches it.
  double cap_of(std::uint32_t res) const {
    if (!res_[res].bidir) return res_[res].cap;  // beside the state a solve reads (no lookup)
    const platform::Resource& r = p_.resource(res);
    return r.capacity_when(!res_[r.up].flows.empty(), !res_[r.down].flows.empty());
  }

  void push(double t, sched::OpId op) { events_.push(Event{t, seq_++, op}); }

  // Flow ends: an indexed binary heap with one entry per flow, moved in place when the flow's
  // rate changes (a re-scheduled end takes the next sequence number, as a new event would, so the
  // order of events at one instant is the order they were scheduled in).
  static bool ends_before(const FlowEnd& a, const FlowEnd& b) { return before(a.time, a.seq, b.time, b.seq); }
  void fq_place(std::size_t i, const FlowEnd& e) {
    fq_[i] = e;
    flows_[e.flow].qpos = static_cast<std::uint32_t>(i);
  }
  // A 4-ary heap: half the levels of a binary one, and a node's children in adjacent entries (the
  // levels near the leaves are cache misses at 28,046 flows). The order of ends is the same with
  // any arity: (time, sequence) is a total order.
  static constexpr std::size_t kArity = 4;
  void fq_up(std::size_t i) {
    const FlowEnd e = fq_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!ends_before(e, fq_[parent])) break;
      fq_place(i, fq_[parent]);
      i = parent;
    }
    fq_place(i, e);
  }
  void fq_down(std::size_t i) {
    const FlowEnd e = fq_[i];
    const std::size_t n = fq_.size();
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      std::size_t c = first;
      const std::size_t last = std::min(first + kArity, n);
      for (std::size_t k = first + 1; k < last; ++k)
        if (ends_before(fq_[k], fq_[c])) c = k;
      if (!ends_before(fq_[c], e)) break;
      fq_place(i, fq_[c]);
      i = c;
    }
    fq_place(i, e);
  }
  void fq_set(std::uint32_t fid, double t) {
    FlowState& f = flows_[fid];
    if (f.qpos == kLimitNone) {
      fq_.push_back(FlowEnd{t, seq_++, fid});
      fq_up(fq_.size() - 1);
    } else {
      const std::size_t i = f.qpos;
      fq_[i].time = t;
      fq_[i].seq = seq_++;
      fq_up(i);
      fq_down(flows_[fid].qpos);
    }
  }
  void fq_erase(std::uint32_t fid) {
    FlowState& f = flows_[fid];
    if (f.qpos == kLimitNone) return;
    const std::size_t i = f.qpos;
    f.qpos = kLimitNone;
    const FlowEnd last = fq_.back();
    fq_.pop_back();
    if (i == fq_.size()) return;
    fq_place(i, last);
    fq_up(i);
    fq_down(flows_[last.flow].qpos);
  }

  // `at_once`: an op with nothing to wait for (no flows, no latency: a barrier) completes at once,
  // its successors released in the same pass over the instant's completed ops, without an event.
  // A delay (a latency and no flows) changes nothing until it ends, so it releases its successors
  // as it starts, each to start no earlier than its end (OpState::start holds that bound until the
  // op starts): its end is an instant of its own only where an op waits for it last, not where (as
  // HFReduce's software costs mostly do) it ends while its successors still wait for data. The
  // same start times as releasing them at its end; 16% of the instants of a 1,440-GPU HFReduce
  // were such ends.
  void start_op(sched::OpId op, double now, bool at_once = false) {
    ++started_;
    ops_[op].start = now;
    p_.lower(s_, op, lowered_);
    if (at_once && lowered_.flows.empty() && lowered_.latency == 0) {
      done_ops_.push_back(op);
      return;
    }
    if (lowered_.flows.empty() && lowered_.latency > 0) {
      const double end = now + lowered_.latency;
      ops_[op].end = end;
      delays_end_ = std::max(delays_end_, end);
      for (std::uint32_t j = graph_.succ_begin[op]; j < graph_.succ_begin[op + 1]; ++j) {
        OpState& o = ops_[graph_.succ[j]];
        o.start = std::max(o.start, end);
        if (--o.preds == 0) release(graph_.succ[j], now);
      }
      return;
    }
    // Flows start after the op's latency plus their arbitration delay (one value per op).
    double delay = 0;
    for (const auto& f : lowered_.flows) delay = std::max(delay, f.start_delay);
    // Its flows wait in a slot of their own, which begin_flows frees (the slots keep their storage).
    const std::uint32_t slot = take_slot(pending_, free_pending_);
    pending_[slot].assign(lowered_.flows.begin(), lowered_.flows.end());
    ops_[op].pending = slot;
    push(now + lowered_.latency + delay, op);
  }

  // An op whose predecessors are all done starts now, or at the end of a delay it waits for.
  void release(sched::OpId op, double now) {
    if (ops_[op].start > now)
      events_.push(Event{ops_[op].start, seq_++, op, true});
    else
      start_op(op, now, true);
  }

  // A free slot of `v` (the last one freed), or a new one at its end (default-constructed).
  template <class T>
  static std::uint32_t take_slot(std::vector<T>& v, std::vector<std::uint32_t>& free) {
    if (free.empty()) {
      v.emplace_back();
      return static_cast<std::uint32_t>(v.size() - 1);
    }
    const std::uint32_t id = free.back();
    free.pop_back();
    return id;
  }

  // --- Groups -----------------------------------------------------------------------------------

  void leave_group(std::uint32_t fid) {
    FlowState& f = flows_[fid];
    if (f.group == kLimitNone) return;
    Group& g = groups_[f.group];
    const std::uint32_t last = g.members.back();
    g.members[f.member] = last;
    flows_[last].member = f.member;
    g.members.pop_back();
    g.dirty = true;
    g.stale = true;
    if (g.members.empty()) kill_group(f.group);
    f.group = kLimitNone;
  }

  // An empty group leaves the lookup table at once and its resources' lists at the next solve
  // (compact): a NIC that leaves the constraint set regroups thousands of flows at once, and
  // finding and erasing each of their groups in the lists of thousands was quadratic. Its id is
  // reused only after that.
  void kill_group(std::uint32_t gid) {
    Group& g = groups_[gid];
    FFSIM_ASSERT(!g.dying, "group killed twice");
    g.dying = true;
    for (std::uint32_t res : g.sig)
      if (res_[res].compact_stamp != compact_gen_) {
        res_[res].compact_stamp = compact_gen_;
        compact_res_.push_back(res);
      }
    table_.erase(g.hash, gid);
    dying_.push_back(gid);
  }

  // Takes the killed groups out of their resources' lists, keeping the others' order (the order
  // of the solve; the same lists as erasing each group when it died), and frees their ids in the
  // order they died.
  void compact() {
    if (dying_.empty()) return;
    for (std::uint32_t res : compact_res_) {
      auto& v = res_[res].groups;
      v.erase(std::remove_if(v.begin(), v.end(), [&](std::uint32_t gid) { return groups_[gid].dying; }), v.end());
    }
    for (std::uint32_t gid : dying_) {
      groups_[gid].dying = false;
      groups_[gid].sig.clear();
      free_groups_.push_back(gid);
    }
    dying_.clear();
    compact_res_.clear();
    ++compact_gen_;
  }

  void join_group(std::uint32_t fid) {
    FlowState& f = flows_[fid];
    sig_.clear();
    for (const Entry& e : entries(f))
      if (res_[e.res].active) sig_.push_back(e.res);
    const double cap_level = f.cap / f.weight;
    std::uint64_t h = std::bit_cast<std::uint64_t>(cap_level) * 0x9e3779b97f4a7c15ULL;
    for (std::uint32_t res : sig_) h = (h ^ res) * 0x100000001b3ULL;
    std::uint32_t gid = table_.find(h, [&](std::uint32_t id) {
      const Group& g = groups_[id];
      return g.cap_level == cap_level && g.sig == sig_;
    });
    if (gid == kLimitNone) {
      gid = take_slot(groups_, free_groups_);
      Group& g = groups_[gid];
      // A reused group starts afresh but keeps its vectors' storage (allocations were a tenth of
      // the time when groups were rebuilt from scratch).
      auto sig = std::move(g.sig);
      auto members = std::move(g.members);
      g = Group{};
      g.sig = std::move(sig);
      g.sig.assign(sig_.begin(), sig_.end());
      g.members = std::move(members);
      g.members.clear();
      g.cap_level = cap_level;
      g.hash = h;
      for (std::uint32_t res : g.sig) res_[res].groups.push_back(gid);
      table_.insert(h, gid);
      // A flow that moves (its resource left or joined the constraint set) keeps its rate: a new
      // group of it is settled at the flow's level, as if a solve had made it.
      if (f.rated) {
        g.level = g.last_level = f.rate / f.weight;
        g.by_cap = g.last_by_cap = f.limiter == kLimitRateCap;
        g.lim = g.last_lim = f.limiter;
        g.settled = true;
      }
    } else if (!f.rated || groups_[gid].last_level != f.rate / f.weight) {
      groups_[gid].settled = false;  // a new flow, or one at another level
    }
    Group& g = groups_[gid];
    f.group = gid;
    f.member = static_cast<std::uint32_t>(g.members.size());
    g.members.push_back(fid);
    g.dirty = true;
    g.stale = true;
  }

  // A resource joins or leaves the constraint set: the flows through it change groups.
  void set_active(std::uint32_t res, bool on) {
    if (res_[res].active == on) return;
    res_[res].active = on;
    changed_.push_back(res);
    move_flows();
  }

  // The flows through the resources in changed_ (which joined or left the constraint set) move to
  // their new groups, each flow once, after all of them changed: flagging and moving them one
  // resource at a time moved a flow once per resource (a send between nodes crosses two NICs and
  // two fabric links, which often leave together), and the check after a solve re-activates
  // several at once: HFReduce at 512 GPUs, 1.720 -> 1.628 billion instructions (callgrind); at
  // 1,440 GPUs, 4 alternated pairs: median 0.715 -> 0.67 s; the same times to 1e-13 (members join
  // groups in another order, so sums run in another order).
  void move_flows() {
    ++moved_gen_;
    moved_.clear();
    if (moved_stamp_.size() < flows_.size()) moved_stamp_.resize(flows_.size(), 0);
    for (const std::uint32_t res : changed_)
      for (const std::uint32_t fid : res_[res].flows) {
        if (flows_[fid].group != kLimitNone && moved_stamp_[fid] != moved_gen_) {
          moved_stamp_[fid] = moved_gen_;
          moved_.push_back(fid);
        }
      }
    changed_.clear();
    for (const std::uint32_t fid : moved_) {  // regrouping changes groups, not the resources' lists
      leave_group(fid);
      join_group(fid);
    }
    compact();  // the groups they emptied are free again
  }

  // --- Flows ------------------------------------------------------------------------------------

  void begin_flows(sched::OpId op, double now) {
    const std::uint32_t slot = ops_[op].pending;
    auto& fl = pending_[slot];
    // Identical flows of one op (same path, weight and amount, no cap, started together: a reduce's
    // reads of k inputs in one buffer) run as one flow of k times the weight and amount. In
    // weighted max-min that flow gets exactly k times each one's rate, loads every resource as the
    // k flows together and ends when each of them would: the same allocation with fewer flows in
    // every solve (tests/unit/eval_fluid_merge_test.cpp compares it against the unmerged flows).
    merged_of_.clear();
    merged_flow_.clear();
    merged_count_.clear();
    begun_.clear();
    for (const platform::Flow& f : fl) {
      const platform::Path& path = p_.path(f.path);
      if (f.amount <= 0 || (path.resources.empty() && !std::isfinite(f.rate_cap))) continue;
      if (merge_ && !std::isfinite(f.rate_cap)) {
        bool merged = false;
        for (std::size_t j = 0; j < merged_of_.size(); ++j) {
          const platform::Flow& o = fl[merged_of_[j]];
          if (o.path == f.path && o.weight == f.weight && o.amount == f.amount) {
            FlowState& g = flows_[merged_flow_[j]];
            const double k = ++merged_count_[j];
            g.weight = k * o.weight;
            g.remaining = k * o.amount;
            merged = true;
            break;
          }
        }
        if (merged) continue;
        merged_of_.push_back(static_cast<std::uint32_t>(&f - fl.data()));
        merged_flow_.push_back(next_flow_id());
        merged_count_.push_back(1);
      }
      // Each path once (the marks stay, so a clash shows when the second of two paths comes).
      if (f.path >= noted_.size()) noted_.resize(std::max<std::size_t>(f.path + 1, p_.path_count()), 0);
      if (!noted_[f.path]) {
        noted_[f.path] = 1;
        if (path.mirrors.empty() ? note_plain(path) : note_replica(path)) {
          std::string names;
          for (const auto& [other, own] : path.mirrors) names += " " + p_.resource_name(own);
          throw SimulationError("operation " + std::to_string(op) + " (" + s_.tags()[s_.op(op).tag] +
                                "): copies run as one flow share a resource of their own (" +
                                (names.empty() ? std::string("a path") : names.substr(1)) +
                                ") with other flows: they are not alike; run them apart");
        }
      }
      FlowState st;
      st.op = op;
      st.len = static_cast<std::uint32_t>(path.resources.size());
      st.remaining = f.amount;
      st.weight = f.weight;
      st.cap = f.rate_cap;
      st.t_last = now;
      st.active = true;
      st.limiter_since = now;
      st.at = take_block(st.len);
      const std::uint32_t id = new_flow(st);
      begun_.push_back(id);
      bool any_active = false;
      std::uint32_t narrow = kLimitNone;
      for (std::size_t k = 0; k < path.resources.size(); ++k) {
        const std::uint32_t res = path.resources[k];
        entries_[st.at + k] = Entry{res, static_cast<std::uint32_t>(res_[res].flows.size())};
        res_[res].flows.push_back(id);
        touch(res);
        // A bidirectional cap can tighten when a flow starts in its other direction: it joins the
        // solve (its state changed), whatever a rate check would find.
        if (res_[res].bidir) set_active(res, true);
        any_active = any_active || res_[res].active;
        if (narrow == kLimitNone || cap_of(res) < cap_of(narrow)) narrow = res;
      }
      if (!any_active && narrow != kLimitNone) set_active(narrow, true);
      if (path.resources.empty()) touched_flows_.push_back(id);
      ++ops_[op].flows_left;
    }
    // The op's flows join their groups with their final weights (merged flows grew above).
    for (const std::uint32_t id : begun_) {
      join_group(id);
      new_flows_.push_back(id);
    }
    fl.clear();
    free_pending_.push_back(slot);
    ops_[op].pending = kLimitNone;
    if (ops_[op].flows_left == 0) done_ops_.push_back(op);
  }

  // Marks a plain path's resources; true if one is a replica's own or mirrored (see ResState::rep).
  bool note_plain(const platform::Path& path) {
    bool clash = false;
    for (const std::uint32_t res : path.resources) {
      ResState& st = res_[res];
      st.plain = true;
      clash = clash || st.rep || st.mirrored;
    }
    return clash;
  }
  // Marks a replica path's own and mirrored resources; true if a plain flow crossed one.
  bool note_replica(const platform::Path& path) {
    bool clash = false;
    for (const auto& [other, own] : path.mirrors) {
      ResState& o = res_[other];
      if (!o.mirrored) mirrored_.push_back(other);
      clash = clash || o.plain || res_[own].plain || o.rep || res_[own].mirrored ||
              (o.mirrored && o.mirror_of != own);  // one resource mirrors one other
      o.mirrored = res_[own].rep = true;
      o.mirror_of = own;
    }
    return clash;
  }

  void finish_flow(std::uint32_t id, double now) {
    FlowState& f = flows_[id];
    close_limiter(f, now);
    // Nothing below the ended flow's level changes (see unchanged_level).
    unchanged_below_ = std::min(unchanged_below_, f.rated ? f.rate / f.weight : 0.0);
    for (const Entry& e : entries(f))
      if (const std::uint32_t res = e.res; !res_[res].active) {
        account(res, now);
        res_[res].load -= f.rate;
        if (res_[res].flows.size() == 1) res_[res].load = 0;
        res_[res].saturated = res_[res].load >= cap_of(res) * (1 - 1e-9);
      }
    leave_group(id);
    f.active = false;
    f.remaining = 0;
    remove_from_resources(id);
    OpState& o = ops_[f.op];
    if (f.best_time > o.best) {
      o.best = f.best_time;
      o.limiter = f.best_limiter;
    }
    if (--o.flows_left == 0) done_ops_.push_back(f.op);
    retired_.push_back(id);
  }

  // Takes an ended flow out of its resources' lists as a search for its first entry in each list
  // and a swap with the last entry would (the lists' order is the order set_active regroups them
  // in), without the search: each path entry knows its index (pos_), which a swap updates. A
  // search per end was quadratic: an alltoall over 256 GPUs puts 2,040 flows on each NIC.
  void remove_from_resources(std::uint32_t id) {
    Entry* const path = entries_.data() + flows_[id].at;
    const std::size_t m = flows_[id].len;
    for (std::size_t k = 0; k < m; ++k) {
      const std::uint32_t res = path[k].res;
      auto& v = res_[res].flows;
      // The search found the entry nearest the front among this flow's entries still in the list.
      std::size_t best = m;
      for (std::size_t j = 0; j < m; ++j)
        if (path[j].res == res && path[j].pos != kLimitNone && (best == m || path[j].pos < path[best].pos)) best = j;
      FFSIM_ASSERT(best < m && v[path[best].pos] == id, "flow missing from its resource");
      const std::uint32_t i = path[best].pos;
      path[best].pos = kLimitNone;
      const auto last = static_cast<std::uint32_t>(v.size() - 1);
      if (i != last) {
        const std::uint32_t moved = v[last];
        v[i] = moved;
        Entry* const mp = entries_.data() + flows_[moved].at;
        for (std::size_t j = 0; j < flows_[moved].len; ++j)
          if (mp[j].res == res && mp[j].pos == last) {
            mp[j].pos = i;
            break;
          }
      }
      v.pop_back();
      touch(res);
    }
  }

  // --- Flow slots and entry blocks ---------------------------------------------------------------

  std::span<const Entry> entries(const FlowState& f) const { return {entries_.data() + f.at, f.len}; }

  // The id the next new_flow returns.
  std::uint32_t next_flow_id() const {
    return free_flows_.empty() ? static_cast<std::uint32_t>(flows_.size()) : free_flows_.back();
  }
  std::uint32_t new_flow(const FlowState& st) {
    const std::uint32_t id = take_slot(flows_, free_flows_);
    flows_[id] = st;
    return id;
  }
  // A block of `len` entries: one an ended flow of that length left, or a new one.
  std::uint32_t take_block(std::uint32_t len) {
    if (len < free_blocks_.size() && !free_blocks_[len].empty()) {
      const std::uint32_t at = free_blocks_[len].back();
      free_blocks_[len].pop_back();
      return at;
    }
    const auto at = static_cast<std::uint32_t>(entries_.size());
    FFSIM_ASSERT(entries_.size() + len < kLimitNone, "too many flow path entries at once");
    entries_.resize(entries_.size() + len);
    return at;
  }
  // The flows that ended at this instant free their slots and blocks once the instant's solves
  // are over (until then a list of the solve may still name them). Which slot a flow gets changes
  // no result: ties resolve by sequence numbers, lists keep the order flows joined them, and
  // nothing compares flow ids.
  void retire() {
    for (const std::uint32_t id : retired_) {
      const FlowState& f = flows_[id];
      if (f.len >= free_blocks_.size()) free_blocks_.resize(f.len + 1);
      free_blocks_[f.len].push_back(f.at);
      free_flows_.push_back(id);
    }
    retired_.clear();
  }

  void touch(std::uint32_t res) {
    if (res_[res].touch_stamp != touch_gen_) {
      res_[res].touch_stamp = touch_gen_;
      touched_res_.push_back(res);
    }
  }

  void close_limiter(FlowState& f, double now) {
    const double d = now - f.limiter_since;
    if (d > f.best_time) {
      f.best_time = d;
      f.best_limiter = f.limiter;
    }
    f.limiter_since = now;
  }

  void account(std::uint32_t res, double now) {
    ResState& s = res_[res];
    const double dt = now - s.t_mark;
    if (dt > 0) {
      s.use.bytes += s.load * dt;
      if (s.saturated) s.use.saturated_time += dt;
    }
    s.t_mark = now;
  }

  // Weighted max-min (progressive filling) over the component of every touched resource.
  // Lazy constraints: a resource that is not saturated after a solve leaves the constraint set
  // (it bounds nothing, and the max-min allocation is unique, so dropping it changes no rate), which
  // keeps components small: otherwise a node's host memory and its NIC join every node's flows
  // into one component. After each solve the loads of the dropped resources on the paths of flows
  // whose rates changed are checked; one that would be over capacity rejoins and the component is
  // solved again. The result is the max-min allocation of all resources (a feasible allocation in
  // which every flow has a saturated bottleneck is the max-min one), up to rounding.
  void resolve(double now) {
    for (int round = 0;; ++round) {
      FFSIM_ASSERT(round < 1000000, "fluid solve does not settle");
      solve_once(now);
      if (!verify()) break;
    }
  }

  // Checks the dropped resources whose loads changed; re-activates (and touches) any over capacity.
  bool verify() {
    bool again = false;
    for (std::uint32_t res : check_) {
      ResState& st = res_[res];
      if (st.load > cap_of(res) * (1 + 1e-12)) {
        if (!st.active) {
          st.active = true;
          changed_.push_back(res);
        }
        touch(res);
        new_constraints_.push_back(res);
        again = true;
      }
    }
    check_.clear();
    if (!changed_.empty()) move_flows();
    return again;
  }

  // A group's members' summed weight and cap, brought up to date after members joined or left.
  void refresh(Group& g) {
    if (!g.stale) return;
    g.stale = false;
    g.weight = 0;
    g.cap_sum = 0;
    for (std::uint32_t fid : g.members) {
      g.weight += flows_[fid].weight;
      g.cap_sum += flows_[fid].cap;
    }
  }

  // A group that keeps its rate in a partial solve: settled (every member runs at the level it was
  // last solved at: no new flow joined it since) at a level below `below`. A member that ended
  // left it, but an end bounds the levels from its own up, which is the group's level. (A group
  // frozen at its cap was solved at its cap's level.)
  bool kept(const Group& g, double below) const { return g.settled && g.last_level >= 0 && g.last_level < below; }

  // Partial solves. Progressive filling freezes groups in increasing order of level, and a group's
  // final level is the one it froze at. An event leaves the filling below some level L exactly as
  // it was, so every group last solved below L keeps its level and rate:
  //  - an end: L is the ended flow's level. Below it the flow's resources did not saturate (it
  //    would have frozen there) and now carry less; the rest is unchanged. A both-ways cap that
  //    lifts as a direction goes idle is one of those resources: it only binds above L.
  //  - a start or a new constraint: L is the lowest capacity over total weight (the new flow's
  //    included) of the resources on its path. Below that level none of them saturates, with the
  //    new flow or without it (a flow's rate is at most its weight times the level), which holds
  //    for a capacity that falls as both directions of a port get busy. (The new flow's own cap
  //    freezes only the new flow.)
  //  - several at one instant: the lowest of their levels.
  // The solve then starts from the groups at or above L on the touched resources (the groups below
  // L keep their rates, taken off the capacities of the resources in the solve; a group with a new
  // flow in it always takes part: see kept), with the groups that the solved groups' other
  // resources limited, and grows only where settled_solution finds a group without a bottleneck;
  // until 2026-12-01 it took every group at or above L that the touched resources reached (17.6 per
  // solve against 116.8 for the whole component, 411 MB HFReduce at 512 GPUs; then about 5 per round
  // and 1.3-1.5 rounds per solve, 1.01 since 2026-12-07). The allocation is the same max-min
  // one, up to rounding (tests/unit/eval_fluid_partial_test.cpp compares every op against the
  // full solve).
  double unchanged_level() {
    double low = unchanged_below_;
    // Each resource once (a min is the same however often a resource comes up): the flows that
    // start at one instant share their resources (an alltoall's 65,280 flows at 256 GPUs cross a
    // few hundred), and summing a resource's groups once per flow through it was quadratic.
    const std::uint32_t stamp = ++bound_gen_;
    auto bound = [&](std::uint32_t res) {
      if (!res_[res].active || res_[res].bound_stamp == stamp) return;
      res_[res].bound_stamp = stamp;
      double w = 0;
      for (std::uint32_t gid : res_[res].groups) {
        refresh(groups_[gid]);
        w += groups_[gid].weight;
      }
      if (w > 0) low = std::min(low, cap_of(res) / w);
    };
    for (std::uint32_t fid : new_flows_) {
      const FlowState& f = flows_[fid];
      if (!f.active) continue;
      for (const Entry& e : entries(f)) bound(e.res);
    }
    for (std::uint32_t res : new_constraints_) bound(res);
    forget_events();
    return std::isfinite(low) ? low : 0.0;  // touched for no known reason: solve it all
  }

  // The events since the last solve are taken into it.
  void forget_events() {
    new_flows_.clear();
    new_constraints_.clear();
    unchanged_below_ = kInf;
  }

  // A partial solve's allocation is the max-min one when every group has a bottleneck: a resource
  // it saturates where no group runs at a higher level (or its cap). The unique max-min allocation
  // is the one feasible allocation with that property. The groups in the solve have one among
  // themselves (progressive filling); this checks them against the groups that kept their rates,
  // and those against the new rates, on every resource in the solve (elsewhere nothing changed).
  // A group found without a bottleneck, or one whose bottleneck lost it, joins the solve, which
  // runs again (forced_); false then. Levels compare to 1e-9 relative.
  bool settled_solution(std::uint32_t mark) {
    const std::size_t before = forced_.size();
    auto level_of = [](const Group& g) { return g.last_level; };  // of a group that kept its rate
    for (std::uint32_t res : comp_res_) {
      ResState& st = res_[res];
      const double cap = cap_of(res);
      const bool over = st.load > cap * (1 + 1e-9);
      const bool sat = st.load >= cap * (1 - 1e-9);
      double solved_max = -1, solved_min_bottleneck = kInf, kept_max = -1;
      for (std::uint32_t gid : st.groups) {
        const Group& g = groups_[gid];
        if (g.mark == mark) {
          solved_max = std::max(solved_max, g.level);
          if (!g.by_cap && g.lim == res) solved_min_bottleneck = std::min(solved_min_bottleneck, g.level);
        } else {
          kept_max = std::max(kept_max, level_of(g));
        }
      }
      if (kept_max < 0) continue;  // every group here is in the solve
      for (std::uint32_t gid : st.groups) {
        const Group& g = groups_[gid];
        if (g.mark == mark || g.stamp_forced == mark) continue;
        const double lv = level_of(g);
        bool join_it = over || !g.settled;  // over capacity, or a group of flows at other levels
        // A group in the solve that froze here lacks its bottleneck if a kept group runs higher.
        if (lv > solved_min_bottleneck * (1 + 1e-9)) join_it = true;
        // A kept group limited here keeps its bottleneck if this stays saturated and nothing runs higher.
        if (!g.last_by_cap && g.last_lim == res && (!sat || solved_max > lv * (1 + 1e-9))) join_it = true;
        if (join_it) {
          groups_[gid].stamp_forced = mark;
          forced_.push_back(gid);
        }
      }
    }
    return forced_.size() == before;
  }

  // Everything it calls is inlined into it (flatten): GCC left the vectors' push_back, cap_of and
  // account as calls here, 8% of the instructions of a 512-GPU HFReduce (callgrind: 1.867 ->
  // 1.720 billion); at 9,600 GPUs, 4 alternated pairs on 2 cores: median 5.42 -> 5.26 s, the same
  // output byte for byte. (Flattening run() or the group functions too gave nothing or more.)
  [[gnu::flatten]] void solve_once(double now) {
    compact();
    if (touched_res_.empty() && touched_flows_.empty()) return;
    // Groups last solved below this level keep their rates (see unchanged_level).
    double keep_below = 0;
    if (partial_)
      keep_below = unchanged_level() * (1 - 1e-9);
    else
      forget_events();
    // The touched resources seed the solve (kept for the rounds below).
    seed_res_.clear();
    for (std::uint32_t res : touched_res_)
      if (res_[res].active) seed_res_.push_back(res);
    touched_res_.clear();
    forced_.clear();
    for (std::uint32_t fid : touched_flows_)  // flows on no resource (only a cap)
      if (flows_[fid].active) forced_.push_back(flows_[fid].group);
    touched_flows_.clear();
    ++touch_gen_;
    std::uint32_t mark = 0;
    for (int round = 0;; ++round) {
      FFSIM_ASSERT(round < 1000000, "fluid partial solve does not settle");
      mark = ++comp_gen_;
      comp_res_.clear();
      comp_groups_.clear();
      // Breadth-first over resources and groups. Progressive filling (below) runs on a heap of
      // fair-share levels: a resource's level is its remaining capacity over the weight of the
      // unfrozen groups through it (a group's cap over its weight is a level too). A group freezes as
      // one: each member at its weight times the level (or its cap), the group's weight times the
      // level off every resource it crosses. Freezing at the lowest level only raises the other
      // levels, so an entry whose resource changed since it was queued is a lower bound of its level:
      // taken, it is re-queued at the current level; a current entry at the top is the minimum.
      // The search prepares the filling as it goes: a resource is brought to `now` and reset when it
      // joins, a group's weight is added to its resources when it joins.
      auto join_res = [&](std::uint32_t res) {
        ResState& st = res_[res];
        st.comp_stamp = mark;
        account(res, now);
        st.cap_rem = cap_of(res);
        st.wsum = 0;
        st.load = 0;
        st.saturated = false;
        ++st.version;
      };
      auto join = [&](std::uint32_t gid) {
        Group& g = groups_[gid];
        g.mark = mark;
        comp_groups_.push_back(gid);
        refresh(g);
        g.frozen = false;
      };
      // Full solves search the whole component. Partial ones (partial_) take the groups on the
      // touched resources that may move (not kept) and the groups the check below adds (forced_),
      // and only their own resources: the rest keep their rates, which come off the capacities.
      std::vector<std::uint32_t>& queue = queue_;
      queue.assign(seed_res_.begin(), seed_res_.end());
      auto take_group = [&](std::uint32_t gid) {
        Group& g = groups_[gid];
        join(gid);
        for (std::uint32_t r2 : g.sig) {
          if (res_[r2].comp_stamp != mark) {
            join_res(r2);
            queue.push_back(r2);
          }
          res_[r2].wsum += g.weight;
        }
      };
      for (std::uint32_t res : queue) join_res(res);
      const std::size_t seeds = seed_res_.size();
      for (std::size_t qi = 0; qi < queue.size(); ++qi) {
        const std::uint32_t res = queue[qi];
        comp_res_.push_back(res);
        // A resource of a group in the solve is not searched, but the groups it limited join: its
        // load moves with the solved group's level, so whether it stays their bottleneck (and
        // saturated) is what the check below would find out only after a second round. Taking
        // them at once made 1.5 rounds per solve 1.01 (HFReduce 184 MiB, 1,440 GPUs: 409,185
        // rounds -> 276,794, resources in solves 2.49 -> 1.52 million, groups 3.25 -> 2.77 million;
        // 9,600 GPUs, 5 alternated pairs: median 6.24 -> 5.77 s; the same times to 7e-12 on seven
        // algorithms at 16-1,440 GPUs).
        if (partial_ && qi >= seeds) {
          for (std::uint32_t gid : res_[res].groups) {
            const Group& g = groups_[gid];
            if (g.mark != mark && !g.last_by_cap && g.last_lim == res) take_group(gid);
          }
          continue;
        }
        for (std::uint32_t gid : res_[res].groups) {
          Group& g = groups_[gid];
          if (g.mark == mark) continue;
          if (kept(g, keep_below)) continue;
          take_group(gid);
        }
      }
      // Then the flows on no resource and the groups the check added, with their resources.
      const std::size_t searched = queue.size();
      for (std::uint32_t gid : forced_)
        if (groups_[gid].mark != mark) take_group(gid);
      for (std::size_t qi = searched; qi < queue.size(); ++qi) comp_res_.push_back(queue[qi]);
      // The other groups' rates come off the capacities of the resources in the solve.
      if (partial_)
        for (std::uint32_t res : comp_res_) {
          ResState& st = res_[res];
          for (std::uint32_t gid : st.groups) {
            Group& g = groups_[gid];
            if (g.mark == mark) continue;
            refresh(g);  // a member may have moved to another group
            const double rate = g.last_by_cap ? g.cap_sum : g.weight * g.last_level;
            st.cap_rem -= rate;
            st.load += rate;
          }
        }

      // Resource levels and group caps are taken in increasing order, merged: at equal levels a
      // resource comes before a cap, and caps go in group order (as one queue ordered by (level,
      // resource before cap, id) would give them). `later`: by level, then id (see before()).
      auto later = [](const Level& a, const Level& b) { return before(b.level, b.id, a.level, a.id); };
      // The resources' first levels sorted; an entry found stale (a lower bound) is re-queued at its
      // current level in a small heap beside them. The lowest live entry is the lower of the next
      // sorted one and the heap's top (a resource has one live entry at a time).
      // A resource's first level (its capacity over its groups' weights) changes only when flows
      // start or end on it, so the last solve's order is nearly right: the entries go in that order
      // (new ones after) and an insertion sort finishes the job, falling back to a full sort when
      // too much moves.
      order_.clear();
      const std::uint32_t taken = ++order_gen_;
      auto take = [&](std::uint32_t res) {
        ResState& st = res_[res];
        if (st.comp_stamp != mark || st.order_stamp == taken) return;
        st.order_stamp = taken;
        if (st.wsum > 0) order_.push_back(Level{st.cap_rem / st.wsum, res, st.version});
      };
      for (std::uint32_t res : last_order_) take(res);
      for (std::uint32_t res : comp_res_) take(res);
      {
        const std::size_t n = order_.size();
        std::size_t moves = 0;
        bool sorted = true;
        for (std::size_t i = 1; i < n && sorted; ++i) {
          const Level x = order_[i];
          std::size_t j = i;
          while (j > 0 && later(order_[j - 1], x)) {
            order_[j] = order_[j - 1];
            --j;
          }
          order_[j] = x;
          moves += i - j;
          if (moves > 8 * n) sorted = false;
        }
        if (!sorted)
          std::sort(order_.begin(), order_.end(), [&](const Level& a, const Level& b) { return later(b, a); });
      }
      last_order_.clear();
      for (const Level& l : order_) last_order_.push_back(l.id);
      heap_.clear();
      std::size_t next = 0;
      caps_.clear();
      for (std::size_t k = 0; k < comp_groups_.size(); ++k) {
        const Group& g = groups_[comp_groups_[k]];
        if (std::isfinite(g.cap_level)) caps_.push_back(Level{g.cap_level, static_cast<std::uint32_t>(k), 0});
      }
      std::sort(caps_.begin(), caps_.end(), [&](const Level& a, const Level& b) { return later(b, a); });
      std::size_t next_cap = 0;
      std::size_t unfrozen = comp_groups_.size();
      auto freeze = [&](Group& g, double level, std::uint32_t lim, bool by_cap) {
        g.frozen = true;
        g.level = level;
        g.lim = lim;
        g.by_cap = by_cap;
        --unfrozen;
        const double rate = by_cap ? g.cap_sum : g.weight * level;
        for (std::uint32_t res : g.sig) {
          ResState& st = res_[res];
          st.cap_rem -= rate;
          st.wsum -= g.weight;
          if (st.wsum < 1e-12) st.wsum = 0;
          // No re-queue here: a freeze at the lowest level only raises this resource's level, so its
          // entry stays a lower bound; it is refreshed when it comes up (below).
          ++st.version;
        }
      };
      while (unfrozen > 0) {
        const bool from_heap = !heap_.empty() && (next == order_.size() || later(order_[next], heap_.front()));
        const Level* low = from_heap ? &heap_.front() : next < order_.size() ? &order_[next] : nullptr;
        FFSIM_ASSERT(low || next_cap < caps_.size(), "unbounded flow rate in a schedule");
        if (!low || (next_cap < caps_.size() && caps_[next_cap].level < low->level)) {
          const Level c = caps_[next_cap++];
          Group& g = groups_[comp_groups_[c.id]];
          if (!g.frozen) freeze(g, c.level, kLimitRateCap, true);
          continue;
        }
        Level top = *low;
        if (from_heap) {
          std::pop_heap(heap_.begin(), heap_.end(), later);
          heap_.pop_back();
        } else {
          ++next;
        }
        ResState& st = res_[top.id];
        if (st.wsum <= 0) continue;
        if (top.version != st.version) {  // stale (a lower bound): re-queue at its current level
          top = Level{std::max(0.0, st.cap_rem) / st.wsum, top.id, st.version};
          // Unless it is still the lowest (before the next entries and the next cap): then the
          // re-queued entry would be the next one taken, so it is taken now.
          const bool first = (next == order_.size() || !later(top, order_[next])) &&
                             (heap_.empty() || !later(top, heap_.front())) &&
                             (next_cap == caps_.size() || !(caps_[next_cap].level < top.level));
          if (!first) {
            heap_.push_back(top);
            std::push_heap(heap_.begin(), heap_.end(), later);
            continue;
          }
        }
        // Every unfrozen group through this resource stops at this level.
        for (std::uint32_t gid : st.groups)
          if (groups_[gid].mark == mark && !groups_[gid].frozen) freeze(groups_[gid], top.level, top.id, false);
      }
      // Loads of the resources in the solve: each group's members' rates summed.
      for (std::uint32_t gid : comp_groups_) {
        const Group& g = groups_[gid];
        const double rate = g.by_cap ? g.cap_sum : g.weight * g.level;
        for (std::uint32_t res : g.sig) res_[res].load += rate;
      }
      if (!partial_ || settled_solution(mark)) break;
    }  // rounds
    // Members of groups whose level, limiter or membership changed take their new rates; the
    // loads of the dropped resources on their paths follow, and they get new end events.
    // The members to re-rate are listed first, in their groups' order, so that the loop over them
    // can prefetch: each member is a chain of dependent cache misses (its state, its path's entries,
    // their resources), which at 9,600 GPUs (69,100 resources) mostly miss every level. Prefetched a
    // few members ahead, the whole run takes 0.90x the time at 9,600 GPUs, 0.99-1.00x at 1,440-2,880
    // (side by side on 2 cores, 8-10 pairs each; the same results bit for bit).
    rerate_.clear();
    for (std::uint32_t gid : comp_groups_) {
      Group& g = groups_[gid];
      g.settled = true;
      if (!g.dirty && g.level == g.last_level && g.by_cap == g.last_by_cap && g.lim == g.last_lim) continue;
      g.dirty = false;
      g.last_level = g.level;
      g.last_by_cap = g.by_cap;
      g.last_lim = g.lim;
      for (std::uint32_t fid : g.members) rerate_.push_back(Rerate{fid, gid});
    }
    {
      const std::size_t n = rerate_.size();
      for (std::size_t i = 0; i < n; ++i) {
        if (i + 4 < n) __builtin_prefetch(&flows_[rerate_[i + 4].fid]);
        if (i + 2 < n) __builtin_prefetch(entries_.data() + flows_[rerate_[i + 2].fid].at);
        if (i + 1 < n)
          for (const Entry& e : entries(flows_[rerate_[i + 1].fid])) __builtin_prefetch(&res_[e.res]);
        const std::uint32_t fid = rerate_[i].fid;
        const Group& g = groups_[rerate_[i].gid];
        FlowState& f = flows_[fid];
        const double rate = g.by_cap ? f.cap : f.weight * g.level;
        if (g.lim != f.limiter) {
          close_limiter(f, now);
          f.limiter = g.lim;
        }
        if (rate == f.rate && f.rated) continue;
        for (const Entry& e : entries(f)) {
          const std::uint32_t res = e.res;
          ResState& st = res_[res];
          if (st.comp_stamp != mark) {  // a dropped resource: its load follows the change
            account(res, now);
            st.load += rate - f.rate;
            st.saturated = st.load >= cap_of(res) * (1 - 1e-9);
            if (rate > f.rate && st.check_stamp != mark) {
              st.check_stamp = mark;
              check_.push_back(res);
            }
          }
        }
        f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.t_last));
        f.t_last = now;
        f.rate = rate;
        f.rated = true;
        if (f.rate > 0)
          fq_set(fid, now + f.remaining / f.rate);
        else
          fq_erase(fid);
      }
    }
    for (std::uint32_t res : comp_res_) {
      ResState& st = res_[res];
      st.saturated = st.load >= cap_of(res) * (1 - 1e-9);
      if (lazy_ && st.active && st.load < cap_of(res) * (1 - 1e-6)) {
        st.active = false;
        changed_.push_back(res);
      }
    }
    if (!changed_.empty()) move_flows();
  }

  const sched::Schedule& s_;
  const platform::Platform& p_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;  // op starts (latency over)
  std::vector<FlowEnd> fq_;                                                // flow ends (see fq_set)
  std::uint64_t seq_ = 0;
  std::vector<FlowState> flows_;
  std::vector<ResState> res_;
  // What the run keeps of an op, in one place (one cache line or two, not one per array): its times
  // and limiter (the result's OpTiming, copied out at the end), the predecessors it waits for, its
  // flows still running, its best limiter's time, and its slot in pending_ while in its latency.
  struct OpState {
    double start = -1;  // until it starts: the end of the latest delay it waits for (see start_op)
    double end = -1;
    double best = -1;
    std::uint32_t preds = 0;
    std::uint32_t flows_left = 0;
    std::uint32_t limiter = kLimitNone;
    std::uint32_t pending = kLimitNone;
  };
  std::vector<OpState> ops_;
  std::uint64_t started_ = 0;  // ops started (progress)
  sched::Schedule::Graph graph_;
  double delays_end_ = 0;                             // the latest end of a delay (see start_op)
  std::vector<std::vector<platform::Flow>> pending_;  // the flows of ops in their latency, by slot
  std::vector<std::uint32_t> free_pending_;
  std::vector<sched::OpId> done_ops_;
  std::vector<std::uint32_t> touched_res_, touched_flows_, comp_res_, comp_groups_;
  std::uint32_t touch_gen_ = 1, comp_gen_ = 0;
  std::vector<std::uint32_t> check_;
  std::vector<Level> order_, heap_, caps_;
  std::vector<std::uint32_t> last_order_;  // the resources of the last solve by first level
  std::uint32_t order_gen_ = 0;
  std::uint32_t bound_gen_ = 0;
  std::vector<std::uint32_t> dying_, compact_res_;  // see kill_group
  std::vector<Entry> entries_;  // the flows' path entries (see Entry)
  std::vector<std::uint32_t> free_flows_, retired_, begun_;  // see retire; begin_flows: the op's new flows
  std::vector<std::vector<std::uint32_t>> free_blocks_;  // by length: blocks of ended flows
  std::vector<std::uint32_t> seed_res_, forced_, queue_;  // see solve_once and settled_solution
  struct Rerate {
    std::uint32_t fid, gid;
  };
  std::vector<Rerate> rerate_;  // solve_once: the members of the groups whose rates changed
  std::uint32_t compact_gen_ = 1;
  std::vector<Group> groups_;
  std::vector<std::uint32_t> free_groups_, sig_;
  GroupTable table_;  // hash of (signature, cap level) -> group
  bool lazy_ = true;
  bool merge_ = true;
  bool partial_ = true;
  // What the next solve may leave as it is (see unchanged_level): the lowest level an event bounds
  // so far, the flows started and the constraints added since the last solve.
  double unchanged_below_ = kInf;
  std::vector<std::uint32_t> new_flows_, new_constraints_;
  // begin_flows: the op's uncapped flows kept (index in its lowering), their ids, and how many
  // identical flows each stands for.
  std::vector<std::uint32_t> merged_of_, merged_flow_;
  std::vector<double> merged_count_;
  platform::Lowered lowered_;
  // move_flows: the resources that joined or left the constraint set, the flows through them (each
  // once: its stamp is moved_gen_)
  std::vector<std::uint32_t> changed_, moved_, moved_stamp_;
  std::uint32_t moved_gen_ = 0;
  std::vector<std::uint32_t> mirrored_;  // the resources replicas mirrored, in the order met (see ResState::rep)
  std::vector<std::uint8_t> noted_;      // by path id: its resources marked (see note_plain)
};

}  // namespace

Result FluidEngine::run(const sched::Schedule& s, const platform::Platform& p) { return Fluid(s, p, lazy_, merge_, partial_).run(); }

}  // namespace ffsim::eval
