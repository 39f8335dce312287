// Building one training step as a Schedule.
// SPDX-License-Identifier: Apache-2.0
#include "train/step.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace ffsim::train {

using sched::Place;

const char* category_name(OpCategory c) {
  switch (c) {
    case OpCategory::Compute: return "compute";
    case OpCategory::Transfer: return "transfer";
    case OpCategory::Collective: return "collective";
    case OpCategory::Sync: return "sync";
  }
  return "?";
}

std::string gpu_lane(const platform::Platform& p, const Place& gpu) {
  return p.cluster().node.gpus.at(static_cast<std::size_t>(gpu.index)).name;
}

namespace {

std::string nic_lane(const platform::Platform& p, const Place& gpu) {
  return p.cluster().node.nics.at(static_cast<std::size_t>(p.nic_for(gpu))).name;
}

void add_unique(std::vector<Track>& v, Track t) {
  if (std::find(v.begin(), v.end(), t) == v.end()) v.push_back(std::move(t));
}

}  // namespace

StepBuilder::StepBuilder(const platform::Platform& p, CollectiveCosts* costs, bool comm_free, bool emit_collectives)
    : p_(p), costs_(costs), comm_free_(comm_free), emit_(emit_collectives && !comm_free) {
  FFSIM_ASSERT(costs_ != nullptr || comm_free_, "a step with communication needs collective costs");
}

OpId StepBuilder::finish(OpId id, OpCategory c, std::string_view name, std::vector<Track> t,
                         const std::vector<OpId>& after) {
  for (OpId a : after)
    if (a != kNone) s_.depend(id, a);
  auto [it, added] = name_index_.try_emplace(std::string(name), static_cast<std::uint32_t>(names_.size()));
  if (added) names_.emplace_back(name);
  name_of_.push_back(it->second);
  cat_.push_back(c);
  tracks_.push_back(std::move(t));
  FFSIM_ASSERT(cat_.size() == s_.size(), "every op of a step goes through the builder");
  return id;
}

OpId StepBuilder::compute(const Place& gpu, Seconds alone, std::string_view name, const std::vector<OpId>& after) {
  const OpId id = s_.compute(gpu, alone, s_.tag("compute"));
  return finish(id, OpCategory::Compute, name, {Track{gpu.node, gpu_lane(p_, gpu)}}, after);
}

OpId StepBuilder::transfer(const Place& from, const Place& to, Bytes bytes, std::string_view name,
                           const std::vector<OpId>& after) {
  std::vector<Track> t;
  if (from.node != to.node) {
    t.push_back(Track{from.node, nic_lane(p_, from)});
    t.push_back(Track{to.node, nic_lane(p_, to)});
  } else {
    t.push_back(Track{from.node, gpu_lane(p_, from) + " comm"});
  }
  const OpId id = comm_free_ ? s_.delay(Seconds(0), s_.tag("transfer"))
                             : s_.transfer(from, to, bytes, sched::TrafficClass::NCCL, s_.tag("transfer"));
  return finish(id, OpCategory::Transfer, name, std::move(t), after);
}

OpId StepBuilder::collective(const CollectiveCall& c, std::string_view name, const std::vector<OpId>& after) {
  std::vector<Track> t;
  const bool multi_node = c.group.nodes().size() > 1;
  for (const Place& g : c.shown) {
    if (c.alg.host_reduce) add_unique(t, Track{g.node, "cpu reducer"});
    else add_unique(t, Track{g.node, gpu_lane(p_, g) + " comm"});
  }
  if (multi_node)
    for (const Place& g : c.shown) add_unique(t, Track{g.node, nic_lane(p_, g)});
  if (emit_ && c.group.size() > 1 && c.bytes > 0) {
    const double bytes = c.alg.per_rank_input ? c.bytes / c.group.size() : c.bytes;
    const auto alg = coll::algorithms().get(c.alg.algorithm).factory();
    OpId start = join(after);
    for (int k = 0; k < c.repeat; ++k) {
      coll::Options o;
      o.ready.assign(static_cast<std::size_t>(c.group.size()), start);
      const auto first = static_cast<OpId>(s_.size());
      const coll::Emitted e = alg->emit(s_, p_, costs_->lib(), c.group, bytes, o);
      adopt(first, name);
      start = join(e.done);
    }
    return start;
  }
  double seconds = 0;
  if (!comm_free_) {
    const double bytes = c.alg.per_rank_input ? c.bytes / c.group.size() : c.bytes;
    seconds = c.repeat * costs_->time(c.alg.algorithm, c.group, bytes);
  }
  const OpId id = s_.delay(Seconds(seconds), s_.tag("collective"));
  return finish(id, OpCategory::Collective, name, std::move(t), after);
}

OpId StepBuilder::delay(Seconds t, std::string_view name, const std::vector<OpId>& after) {
  return finish(s_.delay(t, s_.tag("sync")), OpCategory::Sync, name, {}, after);
}

void StepBuilder::adopt(OpId first, std::string_view name) {
  auto [it, added] = name_index_.try_emplace(std::string(name), static_cast<std::uint32_t>(names_.size()));
  if (added) names_.emplace_back(name);
  for (OpId id = first; id < s_.size(); ++id) {
    const sched::Op& op = s_.op(id);
    std::vector<Track> t;
    OpCategory c = OpCategory::Collective;
    switch (op.kind) {
      case sched::OpKind::Transfer: {
        // A GPU's copies show on its communication track, a NIC's traffic on the NIC's.
        for (const Place* x : {&op.at, &op.to})
          if (x->kind == sched::PlaceKind::Gpu && !x->storage) add_unique(t, Track{x->node, gpu_lane(p_, *x) + " comm"});
        if (op.at.node != op.to.node)
          for (const Place* x : {&op.at, &op.to}) add_unique(t, Track{x->node, p_.cluster().node.nics.at(static_cast<std::size_t>(p_.nic_for(*x))).name});
        break;
      }
      case sched::OpKind::Compute: t.push_back(Track{op.at.node, gpu_lane(p_, op.at) + " comm"}); break;
      case sched::OpKind::Reduce: t.push_back(Track{op.at.node, "cpu reducer"}); break;
      case sched::OpKind::Delay: c = OpCategory::Sync; break;
    }
    cat_.push_back(c);
    tracks_.push_back(std::move(t));
    name_of_.push_back(it->second);
  }
}

void StepBuilder::depend(OpId after, OpId before) {
  if (after != kNone && before != kNone) s_.depend(after, before);
}

OpId StepBuilder::join(const std::vector<OpId>& after) {
  if (std::none_of(after.begin(), after.end(), [](OpId a) { return a != kNone; })) return kNone;
  if (after.size() == 1) return after.front();
  return finish(s_.delay(Seconds(0)), OpCategory::Sync, "join", {}, after);
}

}  // namespace ffsim::train
