// sg-ring-bench: a plain SimGrid simulation, with nothing of ffsim in it, of a flat ring allreduce:
// N hosts on one switch (a split-duplex 25 GB/s, 0.5 us link each), one actor per host, 2(N - 1)
// steps in each of which every rank sends S / N bytes to the next and receives as much from the
// previous one. It is the yardstick of issue 31's speed goals ("HFReduce at 9,600 GPUs in <= 4x the
// time of a plain SimGrid flat ring of 512 ranks, measured in the same run": scripts/bench-sim.sh),
// the cost of SimGrid itself on this machine for about N x 2(N - 1) point-to-point comms.
// Usage: sg-ring-bench [RANKS [BYTES]]   (defaults 512 and 184 MiB). Prints one line:
//   ranks 512 bytes 192937984 comms 523264 simulated_s ... expected_s ... wall_s ...
// expected_s = 2(N - 1)(S / N / B + latency), exact under CM02 without cross-traffic
// (../shared/reference/simgrid-notes.md, section 0); the program exits 1 if they differ by > 1e-6.
// SPDX-License-Identifier: Apache-2.0
#include <simgrid/s4u.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

constexpr double kBandwidth = 25e9;  // bytes per second: a 200 Gb/s port, as in the fabric's scenarios
constexpr double kLatency = 5e-7;    // seconds per link (one up, one down per comm)

bool parse(const char* text, double& out) {
  char* end = nullptr;
  out = std::strtod(text, &end);
  return end != text && *end == '\0' && std::isfinite(out) && out >= 1;
}

}  // namespace

int main(int argc, char** argv) {
  double ranks_d = 512, bytes_d = 184.0 * 1024 * 1024;
  if (argc > 3 || (argc > 1 && !parse(argv[1], ranks_d)) || (argc > 2 && !parse(argv[2], bytes_d)) || ranks_d < 2) {
    std::fprintf(stderr, "usage: sg-ring-bench [RANKS >= 2 [BYTES >= 1]]\n");
    return 2;
  }
  const auto n = static_cast<int>(ranks_d);
  const auto chunk = static_cast<std::uint64_t>(bytes_d / n);  // whole bytes per step
  const auto wall0 = std::chrono::steady_clock::now();
  // SimGrid's own options: only its configuration notices silenced (the output is one line)
  char name[] = "sg-ring-bench";
  char quiet[] = "--log=xbt_cfg.thres:warning";
  char* args[] = {name, quiet, nullptr};
  int count = 2;
  sg4::Engine e(&count, args);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  auto* zone = sg4::create_star_zone("switch");
  std::vector<sg4::Host*> hosts;
  for (int i = 0; i < n; ++i) {
    auto* h = zone->create_host("h" + std::to_string(i), 1e15)->seal();
    auto* link = zone->create_split_duplex_link("l" + std::to_string(i), kBandwidth)->set_latency(kLatency)->seal();
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
    hosts.push_back(h);
  }
  zone->seal();
  std::vector<sg4::Mailbox*> boxes;
  for (int i = 0; i < n; ++i) boxes.push_back(sg4::Mailbox::by_name("m" + std::to_string(i)));
  static int token = 0;
  for (int i = 0; i < n; ++i) {
    sg4::Actor::create("r" + std::to_string(i), hosts[static_cast<std::size_t>(i)], [i, n, chunk, &boxes] {
      sg4::Mailbox* next = boxes[static_cast<std::size_t>((i + 1) % n)];
      sg4::Mailbox* mine = boxes[static_cast<std::size_t>(i)];
      for (int step = 0; step < 2 * (n - 1); ++step) {
        sg4::CommPtr send = next->put_async(&token, chunk);
        int* got = nullptr;
        sg4::CommPtr recv = mine->get_async(&got);
        send->wait();
        recv->wait();
      }
    });
  }
  e.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double simulated = sg4::Engine::get_clock();
  // each step: a comm crosses two links (two latencies) at the link's bandwidth
  const double expected = 2.0 * (n - 1) * (static_cast<double>(chunk) / kBandwidth + 2 * kLatency);
  std::printf("ranks %d bytes %.0f comms %lld simulated_s %.9g expected_s %.9g wall_s %.3f\n", n, bytes_d,
              2LL * (n - 1) * n, simulated, expected, wall);
  if (std::abs(simulated - expected) > 1e-6 * expected) {
    std::fprintf(stderr, "sg-ring-bench: the simulated time is not the ring's closed form\n");
    return 1;
  }
  return 0;
}
