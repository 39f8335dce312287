// "allgather": NCCL's ring allgather (each rank contributes `bytes`, all end with n x bytes).
// SPDX-License-Identifier: Apache-2.0
#include "coll/ring.hpp"

namespace ffsim::coll {
namespace {
class RingAllGather final : public Algorithm {
public:
  Kind kind() const override { return Kind::AllGather; }
  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes,
               const Options& o) const override {
    return emit_ring(s, p, lib, g, bytes * g.size(), o, {false, true});
  }
  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes) const override {
    return estimate_ring(p, lib, g, bytes * g.size(), {false, true});
  }
  double simulate(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                  double bytes) const override {
    return simulate_ring(e, p, lib, g, bytes * g.size(), {false, true});
  }
  double schedule_ops(const LibraryParams&, const GroupShape& g, double, bool full) const override {
    return ring_schedule_ops(g, {false, true}, full);
  }
};
}  // namespace
std::unique_ptr<Algorithm> make_allgather() { return std::make_unique<RingAllGather>(); }
}  // namespace ffsim::coll
