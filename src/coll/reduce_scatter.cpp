// "reduce_scatter": NCCL's ring reduce-scatter (each rank ends with 1/n of the sum).
// SPDX-License-Identifier: Apache-2.0
#include "coll/ring.hpp"

namespace ffsim::coll {
namespace {
class RingReduceScatter final : public Algorithm {
public:
  Kind kind() const override { return Kind::ReduceScatter; }
  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes,
               const Options& o) const override {
    return emit_ring(s, p, lib, g, bytes, o, {true, false});
  }
  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes) const override {
    return estimate_ring(p, lib, g, bytes, {true, false});
  }
  double simulate(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                  double bytes) const override {
    return simulate_ring(e, p, lib, g, bytes, {true, false});
  }
  double schedule_ops(const LibraryParams&, const GroupShape& g, double, bool full) const override {
    return ring_schedule_ops(g, {true, false}, full);
  }
};
}  // namespace
std::unique_ptr<Algorithm> make_reduce_scatter() { return std::make_unique<RingReduceScatter>(); }
}  // namespace ffsim::coll
