// "sendrecv": one rank sends `bytes` to another (pipeline-parallel activations, point-to-point).
// SPDX-License-Identifier: Apache-2.0
#include "coll/common.hpp"
#include "core/error.hpp"

namespace ffsim::coll {
namespace {
class SendRecv final : public Algorithm {
public:
  Kind kind() const override { return Kind::SendRecv; }
  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes,
               const Options& o) const override {
    if (g.size() != 2) throw ValueError("sendrecv needs a group of exactly 2 ranks (sender, receiver)");
    const auto cls = o.cls == sched::TrafficClass::Other ? sched::TrafficClass::NCCL : o.cls;
    Emitted e;
    const sched::Place& a = g.ranks[0];
    const sched::Place& b = g.ranks[1];
    const double hop = hop_type(p, a, b) == HopType::Net ? lib.nccl.simple.ring_hop_latency_net : lib.nccl.simple.ring_hop_latency_pci;
    const sched::OpId before = barrier(s, {ready_of(o, 0), ready_of(o, 1)});
    sched::OpId t;
    if (o.with_data) {
      const auto in = s.buffer(a, Bytes(bytes), "send");
      const auto out = s.buffer(b, Bytes(bytes), "recv");
      const sched::DataRef src{in, 0}, dst{out, 0};
      t = hop_transfer(s, p, hop, before, a, b, bytes, cls, s.tag("sendrecv"), &src, &dst);
      e.input = {in, out};  // the receiver's input is its receive buffer (overwritten)
      e.output = {in, out};
      e.data_bytes = bytes;
    } else {
      t = hop_transfer(s, p, hop, before, a, b, bytes, cls, s.tag("sendrecv"));
    }
    e.done = {t, t};
    return e;
  }
  // A software delay (when NCCL's hop latency exceeds the physical one) and the transfer.
  double schedule_ops(const LibraryParams&, const GroupShape&, double, bool) const override { return 2; }

  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes) const override {
    Estimate est;
    if (g.size() != 2) throw ValueError("sendrecv needs a group of exactly 2 ranks (sender, receiver)");
    const auto pid = p.path_id(g.ranks[0], g.ranks[1]);
    const Bound b = bottleneck_bound(p, {{pid, bytes}});
    const double hop = hop_type(p, g.ranks[0], g.ranks[1]) == HopType::Net ? lib.nccl.simple.ring_hop_latency_net
                                                                            : lib.nccl.simple.ring_hop_latency_pci;
    est.time = b.time + nccl_path_latency(p, hop, g.ranks[0], g.ranks[1]) + p.options().arbitration_latency;
    est.bottleneck = bound_label(p, b);
    return est;
  }
};
}  // namespace
std::unique_ptr<Algorithm> make_sendrecv() { return std::make_unique<SendRecv>(); }
}  // namespace ffsim::coll
