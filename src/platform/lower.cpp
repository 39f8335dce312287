// Lowering of schedule operations into flows.
// SPDX-License-Identifier: Apache-2.0
#include "platform/lower.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace ffsim::platform {

using sched::Place;

void lower(const Machine& m, const Router& r, const sched::Schedule& s, sched::OpId id, Lowered& out) {
  const sched::Op& o = s.op(id);
  out.latency = 0;
  out.flows.clear();
  switch (o.kind) {
    case sched::OpKind::Delay: out.latency = o.amount; return;
    case sched::OpKind::Compute: {
      // A compute op is a flow of `amount` GPU-seconds through the GPU's compute resource
      // (capacity 1): alone it takes exactly `amount`; two at once share the GPU.
      const Place& g = o.at;
      const std::uint32_t pid = r.compute_path_id(g);
      out.flows.push_back(Flow{pid, o.amount, 1.0, sched::TrafficClass::Other, 0.0, r.path(pid).rate_cap});
      return;
    }
    case sched::OpKind::Transfer: {
      // A flow carries its class's lane weight on its whole path (CM02 max-min, and SimGrid, give a
      // flow one weight), and every flow of a class carries it, inside a node too: a collective
      // alone then runs as with no classes at all (its flows all weigh the same). Until 2026-12-01
      // only transfers between nodes carried it, so a lone HFReduce's sends outweighed its own
      // copies 4:1 in host memory: 1.8% faster at 72 GPUs, the host-path reduce-scatter 6-8%.
      // What remains: service levels arbitrate only the NIC and switch ports, but here another
      // class's flows in the same DRAM or PCIe link meet the weights too.
      std::uint32_t pid = r.path_id(o.at, o.to);
      // Copies that run as one flow (Schedule::replicate): one copy's flow on their replica path.
      if (o.replicated) {
        if (out.replica_schedule != &s || out.replica_paths.size() < s.replica_places_count()) {
          if (out.replica_schedule != &s) {
            out.replica_paths.clear();
            out.replica_paths_more.clear();
          }
          out.replica_paths.resize(s.replica_places_count(), {kNoResource, 0});
          out.replica_schedule = &s;
        }
        auto make = [&] {
          std::vector<std::uint32_t> ids{pid};
          for (const auto& [from, to] : s.replicas(id)) ids.push_back(r.path_id(from, to));
          return r.replica_path_id(ids);
        };
        auto& [first, made] = out.replica_paths[o.inputs_begin];
        if (first == kNoResource) {
          first = pid;
          made = make();
        }
        if (first == pid) {
          pid = made;
        } else {
          const std::uint64_t key = (std::uint64_t{o.inputs_begin} << 32) | pid;
          const auto [it, fresh] = out.replica_paths_more.try_emplace(key, 0);
          if (fresh) it->second = make();
          pid = it->second;
        }
      }
      const double w = m.traffic().weight(o.cls);
      out.latency = o.own_latency ? s.latency(id) : r.path(pid).latency;
      // A zero-byte transfer still costs its latency and arbitration, as a flow of nothing.
      out.flows.push_back(Flow{pid, o.amount, w, o.cls, m.options().arbitration_latency / w,
                               o.capped ? std::min(r.path(pid).rate_cap, s.rate_cap(id)) : r.path(pid).rate_cap});
      // A host thread's core-seconds beside the bytes (PlatformOptions::host_cpu): one core at most.
      // (Copies as one flow: a thread each, one core each at most.)
      if (const double c = r.path(pid).cpu_s_per_byte; c > 0 && o.amount > 0) {
        std::uint32_t cores = r.cores_path_id();
        if (o.replicated) cores = r.replica_path_id(std::vector<std::uint32_t>(s.replicas(id).size() + 1, cores));
        out.flows.push_back(Flow{cores, o.amount * c, w, o.cls, m.options().arbitration_latency / w, 1.0});
      }
      return;
    }
    case sched::OpKind::Reduce: {
      // k reads of `amount` from the inputs into the cores, one write of `amount` to the output.
      // An accumulating reduce keeps its output (the last input) in cache: it reads only the others.
      // Its memory traffic carries its class's weight (Schedule::set_class), as the copies beside it.
      const double w = m.traffic().weight(o.cls), d = m.options().arbitration_latency / w;
      const std::uint32_t end = o.accumulate ? o.inputs_end - 1 : o.inputs_end;
      double cpu = 0;  // the reducer's core-seconds (PlatformOptions::host_cpu), over its reads
      auto add = [&](std::uint32_t pid) {
        out.flows.push_back(Flow{pid, o.amount, w, o.cls, d, r.path(pid).rate_cap});
        cpu += o.amount * r.path(pid).cpu_s_per_byte;
      };
      // (Inputs in one place, as a node's staging buffers in one socket's DRAM: one path lookup.)
      const auto& in = s.reduce_inputs();
      std::uint32_t pid = 0;
      for (std::uint32_t i = o.inputs_begin; i < end; ++i) {
        if (i == o.inputs_begin || !(in[i] == in[i - 1])) pid = r.path_id(in[i], o.at);
        add(pid);
      }
      if (!o.accumulate) add(r.path_id(o.at, o.to));
      // One thread adds into an accumulator (HFReduce's tree, a thread per tree); a plain reduce
      // runs on the reducer's threads.
      if (cpu > 0)
        out.flows.push_back(Flow{r.cores_path_id(), cpu, w, o.cls, d,
                                 o.accumulate ? 1.0 : static_cast<double>(m.options().host_cpu.reduce_threads)});
      return;
    }
  }
}

}  // namespace ffsim::platform
