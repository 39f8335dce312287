// The Schedule DAG.
// SPDX-License-Identifier: Apache-2.0
#include "sched/schedule.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::sched {

const char* class_name(TrafficClass c) {
  switch (c) {
    case TrafficClass::Other: return "other";
    case TrafficClass::HFReduce: return "hfreduce";
    case TrafficClass::NCCL: return "nccl";
    case TrafficClass::Storage: return "storage";
  }
  return "?";
}

std::vector<std::string> class_names() { return {"hfreduce", "nccl", "other", "storage"}; }

TrafficClass class_from_name(std::string_view n) {
  for (int i = 0; i < kTrafficClasses; ++i) {
    const auto c = static_cast<TrafficClass>(i);
    if (n == class_name(c)) return c;
  }
  throw ValueError("unknown traffic class \"" + std::string(n) + "\"" + did_you_mean(n, class_names()) +
                   "; valid: " + join(class_names()));
}

std::string place_name(const Place& p) {
  std::string s = (p.storage ? "s" : "n") + std::to_string(p.node) + ".";
  switch (p.kind) {
    case PlaceKind::Gpu: return s + "gpu" + std::to_string(p.index);
    case PlaceKind::Dram: return s + "cpu" + std::to_string(p.index) + ".dram";
    case PlaceKind::Cpu: return s + "cpu" + std::to_string(p.index);
    case PlaceKind::Nic: return s + "nic" + std::to_string(p.index);
    case PlaceKind::Disk: return s + "disk";
  }
  return s + "?";
}

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::Compute: return "compute";
    case OpKind::Transfer: return "transfer";
    case OpKind::Reduce: return "reduce";
    case OpKind::Delay: return "delay";
  }
  return "?";
}

namespace {
void check_amount(double v, const char* what) {
  FFSIM_ASSERT(v >= 0 && std::isfinite(v), std::string("negative or non-finite ") + what + " in a schedule op");
}
}  // namespace

OpId Schedule::push(const Op& o) {
  // The simulated engines hold every operation and its flows in memory (0.5-1.2 KB each, measured
  // on 1M- and 16M-operation HFReduce schedules, 2026-12-01), and ids are 32 bits: a request that would build more (a petabyte allreduce in 4 MiB
  // chunks, an alltoall over 9,600 GPUs) stops here with the way out, not out of memory.
  if (ops_.size() >= kMaxOps)
    throw SimulationError("the schedule exceeds " + std::to_string(kMaxOps) +
                          " operations (about 1 KB each in a simulated engine): simulate a smaller size or fewer "
                          "GPUs, or use the closed form (--engine analytic)");
  ops_.push_back(o);
  return static_cast<OpId>(ops_.size() - 1);
}

OpId Schedule::compute(Place gpu, Seconds alone, std::uint32_t tag) {
  FFSIM_ASSERT(gpu.kind == PlaceKind::Gpu, "compute on a non-GPU place " + place_name(gpu));
  check_amount(alone.si(), "compute time");
  Op o;
  o.kind = OpKind::Compute;
  o.at = gpu;
  o.to = gpu;
  o.amount = alone.si();
  o.tag = tag;
  return push(o);
}

OpId Schedule::transfer(Place from, Place to, Bytes bytes, TrafficClass cls, std::uint32_t tag) {
  check_amount(bytes.si(), "transfer size");
  FFSIM_ASSERT(to.kind != PlaceKind::Cpu || from.kind == PlaceKind::Dram, "only DRAM is read into CPU cores");
  FFSIM_ASSERT(from.kind != PlaceKind::Cpu || to.kind == PlaceKind::Gpu, "CPU cores write only into GPUs (GDRCopy)");
  Op o;
  o.kind = OpKind::Transfer;
  o.cls = cls;
  o.at = from;
  o.to = to;
  o.amount = bytes.si();
  o.tag = tag;
  return push(o);
}

OpId Schedule::reduce(Place cpu, const std::vector<Place>& inputs, Place out, Bytes bytes_each, std::uint32_t tag) {
  FFSIM_ASSERT(cpu.kind == PlaceKind::Cpu, "reduce on a non-CPU place " + place_name(cpu));
  FFSIM_ASSERT(out.kind == PlaceKind::Dram, "reduce output must be host memory");
  FFSIM_ASSERT(!inputs.empty(), "reduce without inputs");
  check_amount(bytes_each.si(), "reduce size");
  Op o;
  o.kind = OpKind::Reduce;
  o.at = cpu;
  o.to = out;
  o.amount = bytes_each.si();
  o.tag = tag;
  o.inputs_begin = static_cast<std::uint32_t>(inputs_.size());
  for (const Place& p : inputs) {
    FFSIM_ASSERT(p.kind == PlaceKind::Dram && p.node == cpu.node && p.storage == cpu.storage,
                 "reduce inputs must be host memory of the reducing node");
    inputs_.push_back(p);
  }
  o.inputs_end = static_cast<std::uint32_t>(inputs_.size());
  return push(o);
}

OpId Schedule::delay(Seconds t, std::uint32_t tag) {
  check_amount(t.si(), "delay");
  Op o;
  o.kind = OpKind::Delay;
  o.amount = t.si();
  o.tag = tag;
  return push(o);
}

BufferId Schedule::buffer(Place at, Bytes size, std::string name) {
  FFSIM_ASSERT(size.si() >= 0, "negative buffer size");
  buffers_.push_back(Buffer{at, size.si(), std::move(name)});
  return static_cast<BufferId>(buffers_.size() - 1);
}

std::uint32_t Schedule::add_refs(const std::vector<DataRef>& r) {
  const auto b = static_cast<std::uint32_t>(refs_.size());
  for (const DataRef& d : r) {
    FFSIM_ASSERT(d.buffer < buffers_.size(), "data ref to an unknown buffer");
    refs_.push_back(d);
  }
  return b;
}

OpId Schedule::transfer(DataRef from, DataRef to, Bytes bytes, TrafficClass cls, std::uint32_t tag) {
  const OpId id = transfer(buffers_.at(from.buffer).place, buffers_.at(to.buffer).place, bytes, cls, tag);
  const std::uint32_t b = add_refs({from, to});
  data_refs_[id] = {b, static_cast<std::uint32_t>(refs_.size())};
  return id;
}

OpId Schedule::transfer(Place from, Place to, DataRef src, DataRef dst, Bytes bytes, TrafficClass cls, std::uint32_t tag) {
  const OpId id = transfer(from, to, bytes, cls, tag);
  const std::uint32_t b = add_refs({src, dst});
  data_refs_[id] = {b, static_cast<std::uint32_t>(refs_.size())};
  return id;
}

OpId Schedule::reduce_accumulate(Place cpu, const std::vector<DataRef>& inputs, DataRef inout, Bytes bytes,
                                 std::uint32_t tag) {
  std::vector<DataRef> all = inputs;
  all.push_back(inout);  // the accumulator is also an input of the sum
  const OpId id = reduce(cpu, all, inout, bytes, tag);
  ops_[id].accumulate = true;
  return id;
}

OpId Schedule::reduce_accumulate(Place cpu, const std::vector<Place>& inputs, Place inout, Bytes bytes, std::uint32_t tag) {
  std::vector<Place> all = inputs;
  all.push_back(inout);
  const OpId id = reduce(cpu, all, inout, bytes, tag);
  ops_[id].accumulate = true;
  return id;
}

void Schedule::set_class(OpId id, TrafficClass cls) {
  FFSIM_ASSERT(id < ops_.size() && ops_[id].kind == OpKind::Reduce,
               "set_class applies to reduces (transfers take their class when made)");
  ops_[id].cls = cls;
}

void Schedule::set_rate_cap(OpId id, double bps) {
  FFSIM_ASSERT(id < ops_.size() && ops_[id].kind == OpKind::Transfer && bps > 0, "rate caps apply to transfers");
  ops_[id].capped = true;
  rate_caps_[id] = bps;
}

double Schedule::rate_cap(OpId id) const {
  return ops_[id].capped ? rate_caps_.at(id) : std::numeric_limits<double>::infinity();
}

Schedule::ReplicaList Schedule::replica_list(const std::vector<std::pair<Place, Place>>& places) {
  for (std::size_t i = 0; i < places.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) FFSIM_ASSERT(places[i] != places[j], "a replica given twice");
  const auto first = static_cast<std::uint32_t>(replica_places_.size());
  replica_places_.insert(replica_places_.end(), places.begin(), places.end());
  return {first, static_cast<std::uint32_t>(replica_places_.size())};
}

void Schedule::replicate(OpId id, ReplicaList others) {
  FFSIM_ASSERT(id < ops_.size() && ops_[id].kind == OpKind::Transfer && !ops_[id].replicated,
               "replicas apply to a transfer, once");
  FFSIM_ASSERT(!data_refs_.contains(id), "a replicated transfer has no data semantics");
  FFSIM_ASSERT(others.begin <= others.end && others.end <= replica_places_.size(),
               "replicate: not a list of this schedule");
  if (others.begin == others.end) return;
  Op& o = ops_[id];
  for (std::uint32_t i = others.begin; i < others.end; ++i)
    FFSIM_ASSERT(!(replica_places_[i].first == o.at && replica_places_[i].second == o.to),
                 "a replica repeats the op's own places");
  o.replicated = true;
  o.inputs_begin = others.begin;
  o.inputs_end = others.end;
  ++replicated_;
}

std::span<const std::pair<Place, Place>> Schedule::replicas(OpId id) const {
  const Op& o = ops_[id];
  if (!o.replicated) return {};
  return {replica_places_.data() + o.inputs_begin, o.inputs_end - o.inputs_begin};
}

void Schedule::set_latency(OpId id, double seconds) {
  FFSIM_ASSERT(id < ops_.size() && ops_[id].kind == OpKind::Transfer && seconds >= 0 && std::isfinite(seconds),
               "latencies set apart from the path apply to transfers (finite, not negative)");
  // Kept sorted by op id in one array (16 bytes each; a flat ring of 512 GPUs sets 523,264): a
  // transfer's latency is set as it is made, so each goes at the end.
  const auto at = std::lower_bound(latencies_.begin(), latencies_.end(), id,
                                   [](const std::pair<OpId, double>& e, OpId k) { return e.first < k; });
  if (at != latencies_.end() && at->first == id)
    at->second = seconds;
  else
    latencies_.insert(at, {id, seconds});
  ops_[id].own_latency = true;
}

double Schedule::latency(OpId id) const {
  if (!ops_[id].own_latency) return std::numeric_limits<double>::quiet_NaN();
  const auto at = std::lower_bound(latencies_.begin(), latencies_.end(), id,
                                   [](const std::pair<OpId, double>& e, OpId k) { return e.first < k; });
  return at->second;
}

std::pair<std::uint32_t, std::uint32_t> Schedule::data_refs(OpId id) const {
  const auto it = data_refs_.find(id);
  return it == data_refs_.end() ? std::pair<std::uint32_t, std::uint32_t>{0, 0} : it->second;
}

OpId Schedule::reduce(Place cpu, const std::vector<DataRef>& inputs, DataRef out, Bytes bytes, std::uint32_t tag) {
  std::vector<Place> places;
  for (const DataRef& d : inputs) places.push_back(buffers_.at(d.buffer).place);
  const OpId id = reduce(cpu, places, buffers_.at(out.buffer).place, bytes, tag);
  std::vector<DataRef> all = inputs;
  all.push_back(out);
  const std::uint32_t b = add_refs(all);
  data_refs_[id] = {b, static_cast<std::uint32_t>(refs_.size())};
  return id;
}

OpId Schedule::gpu_reduce(Place gpu, const std::vector<DataRef>& inputs, DataRef out, Bytes bytes, Seconds alone,
                          std::uint32_t tag) {
  const OpId id = compute(gpu, alone, tag);
  for (const DataRef& d : inputs)
    FFSIM_ASSERT(buffers_.at(d.buffer).place == gpu, "GPU reduce inputs must be in the GPU's memory");
  FFSIM_ASSERT(buffers_.at(out.buffer).place == gpu, "GPU reduce output must be in the GPU's memory");
  std::vector<DataRef> all = inputs;
  all.push_back(out);
  const std::uint32_t b = add_refs(all);
  data_refs_[id] = {b, static_cast<std::uint32_t>(refs_.size())};
  ops_[id].to.index = gpu.index;
  data_amount_[id] = bytes.si();
  return id;
}

double Schedule::data_bytes(OpId id) const {
  auto it = data_amount_.find(id);
  return it == data_amount_.end() ? ops_[id].amount : it->second;
}

void Schedule::depend(OpId after, OpId before) {
  FFSIM_ASSERT(after < ops_.size() && before < ops_.size() && after != before, "bad dependency");
  edges_.emplace_back(after, before);
}

std::uint32_t Schedule::tag(std::string_view name) {
  for (std::size_t i = 0; i < tags_.size(); ++i)
    if (tags_[i] == name) return static_cast<std::uint32_t>(i);
  tags_.emplace_back(name);
  return static_cast<std::uint32_t>(tags_.size() - 1);
}

Schedule::Graph Schedule::graph() const {
  Graph g;
  const std::size_t n = ops_.size();
  g.succ_begin.assign(n + 1, 0);
  g.preds.assign(n, 0);
  edges_.for_each([&](const std::pair<OpId, OpId>& e) {
    ++g.succ_begin[e.second + 1];
    ++g.preds[e.first];
  });
  for (std::size_t i = 0; i < n; ++i) g.succ_begin[i + 1] += g.succ_begin[i];
  g.succ.resize(edges_.size());
  std::vector<std::uint32_t> fill(g.succ_begin.begin(), g.succ_begin.end() - 1);
  edges_.for_each([&](const std::pair<OpId, OpId>& e) { g.succ[fill[e.second]++] = e.first; });
  return g;
}

void Schedule::check_acyclic() const {
  const Graph g = graph();
  std::vector<std::uint32_t> preds = g.preds;
  std::vector<OpId> ready;
  for (OpId i = 0; i < ops_.size(); ++i)
    if (preds[i] == 0) ready.push_back(i);
  std::size_t done = 0;
  while (!ready.empty()) {
    const OpId i = ready.back();
    ready.pop_back();
    ++done;
    for (std::uint32_t k = g.succ_begin[i]; k < g.succ_begin[i + 1]; ++k)
      if (--preds[g.succ[k]] == 0) ready.push_back(g.succ[k]);
  }
  if (done != ops_.size())
    throw SimulationError("the schedule's dependencies contain a cycle: " + std::to_string(ops_.size() - done) +
                          " operations can never start");
}

}  // namespace ffsim::sched
