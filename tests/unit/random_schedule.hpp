// Random draws for the engine tests: a seeded xorshift64 generator and random endpoints of a
// cluster's nodes, the same on every run.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include "sched/schedule.hpp"

namespace ffsim::testing {

/// Random integers in [0, n) from a fixed seed (xorshift64): the same draws on every run.
struct Rng {
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  int operator()(int n) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return static_cast<int>(x % static_cast<std::uint64_t>(n));
  }
};

/// A GPU (of 8), a socket's DRAM (of 2) or the NIC of one of `nodes` nodes, a third each.
inline sched::Place random_place(Rng& rnd, int nodes) {
  const int node = rnd(nodes);
  switch (rnd(3)) {
    case 0: return sched::Place::gpu(node, rnd(8));
    case 1: return sched::Place::dram(node, rnd(2));
    default: return sched::Place::nic(node, 0);
  }
}

/// A transfer between two random, different places of `nodes` nodes, of either traffic class.
inline sched::OpId random_transfer(sched::Schedule& s, Rng& rnd, int nodes, double bytes) {
  sched::Place a = random_place(rnd, nodes), b = random_place(rnd, nodes);
  while (b == a) b = random_place(rnd, nodes);
  return s.transfer(a, b, Bytes(bytes), rnd(2) == 0 ? sched::TrafficClass::HFReduce : sched::TrafficClass::Other);
}

}  // namespace ffsim::testing
