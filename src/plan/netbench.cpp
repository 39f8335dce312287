// `ffsim net` microbenchmarks.
// SPDX-License-Identifier: Apache-2.0
#include "plan/netbench.hpp"

#include <algorithm>
#include <cmath>

#include "coll/common.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"

namespace ffsim::plan {

using sched::Place;
using sched::Schedule;
using sched::TrafficClass;

const std::vector<std::string>& net_tests() {
  static const std::vector<std::string> t{"d2h", "h2d", "p2p", "host-mem", "pingpong", "bandwidth", "storage-read",
                                          "isolation"};
  return t;
}

namespace {

struct Ctx {
  const ScenarioSpec& sc;
  const platform::Platform& p;
  eval::Engine& engine;
  eval::Engine& limits;
  const NetOptions& opt;
};

std::string limiter_name(const platform::Platform& p, std::uint32_t lim) {
  if (lim == eval::kLimitNone) return "-";
  if (lim == eval::kLimitRateCap) return "per-flow cap (GPU peer-to-peer)";
  return p.resource_label(lim);
}

// The socket whose DRAM a GPU's copies use: its own.
int socket_of_gpu(const hw::NodeSpec& n, int g) {
  const auto& sk = n.socket_of_port(n.gpus[static_cast<std::size_t>(g)].port);
  for (std::size_t s = 0; s < n.sockets.size(); ++s)
    if (n.sockets[s].name == sk.name) return static_cast<int>(s);
  return 0;
}

// Limiters come from the engine that reports them (the SimGrid engine does not).
eval::Result explain(const Ctx& c, const Schedule& s) { return c.limits.run(s, c.p); }

NetReport copies(const Ctx& c, bool d2h) {
  NetReport r;
  const hw::NodeSpec& n = c.sc.cluster.node;
  const int G = static_cast<int>(n.gpus.size());
  const double S = c.opt.bytes;
  auto one = [&](Schedule& s, int g) {
    const Place gpu = Place::gpu(0, g), mem = Place::dram(0, socket_of_gpu(n, g));
    return d2h ? s.transfer(gpu, mem, Bytes(S), TrafficClass::Other) : s.transfer(mem, gpu, Bytes(S), TrafficClass::Other);
  };
  const double link = n.gpus.front().gpu.pcie_bandwidth.si();
  for (int g = 0; g < G; ++g) {
    Schedule s;
    one(s, g);
    const auto res = c.engine.run(s, c.p);
    const auto why = explain(c, s);
    r.rows.push_back({"1 GPU alone: " + n.gpus[static_cast<std::size_t>(g)].name, S, res.ops[0].end,
                      S / res.ops[0].end, link, "GPU PCIe link", limiter_name(c.p, why.ops[0].limiter)});
  }
  Schedule s;
  for (int g = 0; g < G; ++g) one(s, g);
  const auto res = c.engine.run(s, c.p);
  const auto why = explain(c, s);
  for (int g = 0; g < G; ++g) {
    const auto& o = res.ops[static_cast<std::size_t>(g)];
    r.rows.push_back({"all " + std::to_string(G) + " at once: " + n.gpus[static_cast<std::size_t>(g)].name, S, o.end,
                      S / o.end, link, "GPU PCIe link", limiter_name(c.p, why.ops[static_cast<std::size_t>(g)].limiter)});
  }
  r.note = std::string(d2h ? "GPU -> own socket's DRAM" : "own socket's DRAM -> GPU") +
           "; rate = size / time, time includes the PCIe latency";
  return r;
}

NetReport p2p(const Ctx& c) {
  NetReport r;
  const hw::NodeSpec& n = c.sc.cluster.node;
  const int G = static_cast<int>(n.gpus.size());
  const double S = c.opt.bytes;
  struct Case {
    std::string name;
    Place from, to;
    std::string cap_name;  // what the path's rate cap is, when that binds
  };
  std::vector<Case> cases;
  if (G >= 2) cases.push_back({"GPU->GPU " + n.gpus[0].name + "->" + n.gpus[1].name, Place::gpu(0, 0), Place::gpu(0, 1),
                               "GPU peer-to-peer cap"});
  if (G >= 8) {
    cases.push_back({"GPU->GPU across sockets " + n.gpus[0].name + "->" + n.gpus[4].name, Place::gpu(0, 0),
                     Place::gpu(0, 4), "GPU peer-to-peer cap"});
    cases.push_back({"GPU->GPU same root port " + n.gpus[5].name + "->" + n.gpus[6].name, Place::gpu(0, 5),
                     Place::gpu(0, 6), "GPU peer-to-peer cap"});
  }
  if (!n.nics.empty()) {
    const int j = c.p.nic_for(Place::gpu(0, G - 1));
    cases.push_back({"GPU->NIC " + n.gpus.back().name + "->" + n.nics[static_cast<std::size_t>(j)].name,
                     Place::gpu(0, G - 1), Place::nic(0, j), "GPU<->NIC peer-to-peer cap"});
    cases.push_back({"NIC->GPU " + n.nics[static_cast<std::size_t>(j)].name + "->" + n.gpus.back().name,
                     Place::nic(0, j), Place::gpu(0, G - 1), "GPU<->NIC peer-to-peer cap"});
  }
  for (const auto& k : cases) {
    Schedule s;
    s.transfer(k.from, k.to, Bytes(S), TrafficClass::Other);
    const auto res = c.engine.run(s, c.p);
    const auto why = explain(c, s);
    // The bound is the transfer's own path: its narrowest resource or its peer-to-peer cap. (Until
    // 2026-12-01 it was the node's PCIe peer-to-peer cap whatever the path, so NVLink and NVSwitch
    // transfers showed 1,498% of it.)
    const coll::Bound b = coll::bottleneck_bound(c.p, {{c.p.path_id(k.from, k.to), S}});
    r.rows.push_back({k.name, S, res.ops[0].end, S / res.ops[0].end, b.time > 0 ? S / b.time : 0.0,
                      b.resource == eval::kLimitRateCap ? k.cap_name : coll::bound_label(c.p, b.resource),
                      limiter_name(c.p, why.ops[0].limiter)});
  }
  r.note = "one transfer at a time; NVLink, when the node has it, carries GPU->GPU";
  return r;
}

NetReport host_mem(const Ctx& c) {
  NetReport r;
  const hw::NodeSpec& n = c.sc.cluster.node;
  const double S = c.opt.bytes;
  const int G = static_cast<int>(n.gpus.size());
  for (std::size_t sk = 0; sk < n.sockets.size(); ++sk) {
    const double dram = n.sockets[sk].dram_bandwidth.si();
    const Place m = Place::dram(0, static_cast<int>(sk));
    {
      Schedule s;
      s.transfer(m, m, Bytes(S), TrafficClass::Other);
      const auto res = c.engine.run(s, c.p);
      const auto why = explain(c, s);
      // A copy reads and writes each byte: it moves 2S through DRAM.
      r.rows.push_back({"memcpy alone, " + n.sockets[sk].name, S, res.ops[0].end, 2 * S / res.ops[0].end, dram,
                        "DRAM " + n.sockets[sk].name, limiter_name(c.p, why.ops[0].limiter)});
    }
    Schedule s;
    const auto cp = s.transfer(m, m, Bytes(S), TrafficClass::Other);
    for (int g = 0; g < G; ++g)
      if (socket_of_gpu(n, g) == static_cast<int>(sk)) s.transfer(Place::gpu(0, g), m, Bytes(S), TrafficClass::Other);
    const auto res = c.engine.run(s, c.p);
    const auto why = explain(c, s);
    r.rows.push_back({"memcpy during D2H of the socket's GPUs, " + n.sockets[sk].name, S, res.ops[cp].end,
                      2 * S / res.ops[cp].end, dram, "DRAM " + n.sockets[sk].name, limiter_name(c.p, why.ops[cp].limiter)});
  }
  r.note = "memcpy rate counts bytes read plus written";
  return r;
}

// Two GPU nodes: adjacent (same leaf), and the farthest pair (another zone when there is one).
std::vector<std::pair<std::string, std::pair<int, int>>> node_pairs(const Ctx& c) {
  std::vector<std::pair<std::string, std::pair<int, int>>> v;
  const int N = c.sc.cluster.nodes;
  if (N < 2) throw ValueError("the test needs at least 2 GPU nodes");
  v.push_back({"same leaf n0-n1", {0, 1}});
  const auto* f = c.p.fabric();
  const int e0 = c.p.endpoint_of(Place::nic(0, c.p.nic_for(Place::dram(0, 0))));
  const int zone0 = f->endpoints()[static_cast<std::size_t>(e0)].zone;
  for (int m = N - 1; m > 1; --m) {
    const int em = c.p.endpoint_of(Place::nic(m, c.p.nic_for(Place::dram(m, 0))));
    if (f->leaf_of(em) == f->leaf_of(e0)) continue;
    const bool other_zone = f->endpoints()[static_cast<std::size_t>(em)].zone != zone0;
    v.push_back({(other_zone ? "across zones n0-n" : "across the fabric n0-n") + std::to_string(m), {0, m}});
    break;
  }
  return v;
}

Place nic_socket_dram(const Ctx& c, int node) {
  const int j = c.p.nic_for(Place::dram(node, 0));
  const auto& n = c.sc.cluster.node;
  const auto& sk = n.socket_of_port(n.nics[static_cast<std::size_t>(j)].port);
  for (std::size_t s = 0; s < n.sockets.size(); ++s)
    if (n.sockets[s].name == sk.name) return Place::dram(node, static_cast<int>(s));
  return Place::dram(node, 0);
}

NetReport pingpong(const Ctx& c) {
  NetReport r;
  const int reps = 100;
  const double msg = 8;
  for (const auto& [name, pr] : node_pairs(c)) {
    Schedule s;
    const Place a = nic_socket_dram(c, pr.first), b = nic_socket_dram(c, pr.second);
    sched::OpId prev = 0;
    for (int i = 0; i < 2 * reps; ++i) {
      const auto op = i % 2 == 0 ? s.transfer(a, b, Bytes(msg), TrafficClass::Other)
                                 : s.transfer(b, a, Bytes(msg), TrafficClass::Other);
      if (i) s.depend(op, prev);
      prev = op;
    }
    const auto res = c.engine.run(s, c.p);
    r.rows.push_back({name, msg, res.makespan / (2 * reps), 0, 0, "", "latency"});
  }
  r.note = "one-way time of an 8-byte message, DRAM to DRAM on the NIC's socket, averaged over 100 round trips";
  return r;
}

NetReport bandwidth(const Ctx& c) {
  NetReport r;
  const double S = c.opt.bytes;
  for (const auto& [name, pr] : node_pairs(c)) {
    Schedule s;
    s.transfer(nic_socket_dram(c, pr.first), nic_socket_dram(c, pr.second), Bytes(S), TrafficClass::Other);
    const auto res = c.engine.run(s, c.p);
    const auto why = explain(c, s);
    const auto& nic = c.sc.cluster.node.nics.front().nic;
    r.rows.push_back({name, S, res.ops[0].end, S / res.ops[0].end, nic.port_bandwidth.si(), "NIC line rate",
                      limiter_name(c.p, why.ops[0].limiter)});
  }
  r.note = "one transfer, DRAM to DRAM on the NICs' sockets";
  return r;
}

NetReport storage_read(const Ctx& c) {
  NetReport r;
  if (!c.sc.cluster.storage || c.sc.cluster.storage->count == 0)
    throw ValueError("storage-read needs storage nodes (cluster.storage)");
  const int S = c.sc.cluster.storage->count;
  const int clients = c.opt.clients > 0 ? std::min(c.opt.clients, c.sc.cluster.nodes) : c.sc.cluster.nodes;
  const int senders = std::max(1, std::min(c.opt.senders_per_client, S));
  const double per_client = c.opt.bytes;
  Schedule s;
  // Client i reads from `senders` storage nodes at once (request-to-send caps concurrent senders),
  // spread round-robin so every storage node serves the same number of clients.
  const double chunk = per_client / senders;
  std::int64_t k = 0;
  for (int i = 0; i < clients; ++i)
    for (int j = 0; j < senders; ++j, ++k) {
      const int sn = static_cast<int>(k % S);
      s.transfer(Place::storage_disk(sn), nic_socket_dram(c, i), Bytes(chunk), TrafficClass::Storage);
    }
  const auto res = c.engine.run(s, c.p);
  const auto why = explain(c, s);
  double line = 0;
  for (const auto& x : c.sc.cluster.storage->node.nics) line += x.nic.port_bandwidth.si() * x.nic.ports;
  // The ceiling is the slower side: the storage nodes' NIC ports, or the clients' (each client
  // receives through the NIC nic_socket_dram's DRAM belongs to).
  const auto& cn = c.sc.cluster.node;
  const auto& client_nic = cn.nics[static_cast<std::size_t>(c.p.nic_for(Place::dram(0, 0)))].nic;
  const double client_line = client_nic.port_bandwidth.si() * client_nic.ports * clients;
  const bool clients_cap = client_line < line * S;
  const double bound = clients_cap ? client_line : line * S;
  const double total = per_client * clients;
  const std::uint32_t b = why.bottleneck();
  std::string binding = b == eval::kLimitNone ? "-" : c.p.resource_label(b);
  // Name the kind of resource rather than one instance of it.
  if (b != eval::kLimitNone && c.p.resource(b).kind == platform::ResourceKind::Nic)
    binding = (c.p.node_of_resource(b).first ? "storage NICs (" : "client NICs (") + binding + ")";
  r.rows.push_back({std::to_string(S) + " storage nodes -> " + std::to_string(clients) + " clients, " +
                        std::to_string(senders) + (senders == 1 ? " sender each" : " senders each"),
                    total, res.makespan, total / res.makespan, bound,
                    clients_cap ? std::to_string(clients * client_nic.ports) + " client NIC ports x line rate"
                                : std::to_string(S * static_cast<int>(c.sc.cluster.storage->node.nics.size())) +
                                      " storage NIC ports x line rate",
                    binding});
  r.note = "aggregate read rate = all bytes / time; the binding resource is the one saturated longest";
  return r;
}

NetReport isolation(const Ctx& c) {
  NetReport r;
  const int N = c.sc.cluster.nodes;
  if (N < 2) throw ValueError("isolation needs at least 2 GPU nodes");
  if (!c.sc.cluster.storage || c.sc.cluster.storage->count == 0)
    throw ValueError("isolation needs storage nodes (cluster.storage) for the checkpoint storm");
  const int job = std::min(N, 16);
  const double S = c.opt.bytes;
  const int SN = c.sc.cluster.storage->count;
  // An HFReduce-like job: node i sends S to node i+1 (a ring step), class hfreduce; the storm: the
  // same nodes write a 4S checkpoint each to storage, class storage, at the same time, one stream per
  // node (class weights apply per flow, so one flow per class and link is what VL arbitration does).
  auto build = [&](bool storm) {
    Schedule s;
    std::vector<sched::OpId> job_ops;
    for (int i = 0; i < job; ++i)
      job_ops.push_back(s.transfer(nic_socket_dram(c, i), nic_socket_dram(c, (i + 1) % job), Bytes(S), TrafficClass::HFReduce));
    if (storm)
      for (int i = 0; i < job; ++i)
        s.transfer(nic_socket_dram(c, i), Place::storage_disk(i % SN), Bytes(4 * S), TrafficClass::Storage);
    return std::make_pair(std::move(s), job_ops);
  };
  auto job_time = [&](const platform::Platform& p, bool storm) {
    auto [s, ops] = build(storm);
    const auto res = c.engine.run(s, p);
    double t = 0;
    for (auto o : ops) t = std::max(t, res.ops[o].end);
    const auto why = c.limits.run(s, p);
    return std::make_pair(t, limiter_name(p, why.ops[ops.front()].limiter));
  };
  platform::TrafficConfig off = c.sc.traffic;
  off.isolation = false;
  const platform::Platform p_off(c.sc.cluster, c.sc.built_fabric, off);
  const auto alone = job_time(p_off, false);
  const auto shared = job_time(p_off, true);
  r.rows.push_back({"job alone", S, alone.first, S / alone.first, 0, "", alone.second});
  r.rows.push_back({"job + checkpoint storm, no isolation", S, shared.first, S / shared.first, 0, "", shared.second});
  if (c.sc.traffic.isolation) {
    const auto iso = job_time(c.p, true);
    r.rows.push_back({"job + checkpoint storm, SL/VL isolation (hfreduce weight " +
                          fmt_g(c.sc.traffic.weight(TrafficClass::HFReduce)) + " : storage " +
                          fmt_g(c.sc.traffic.weight(TrafficClass::Storage)) + ")",
                      S, iso.first, S / iso.first, 0, "", iso.second});
    r.note = "the job loses " + fmt_f(100 * (1 - alone.first / shared.first), 1) + "% of its rate without isolation, " +
             fmt_f(100 * (1 - alone.first / iso.first), 1) + "% with it";
  } else {
    r.note = "the job loses " + fmt_f(100 * (1 - alone.first / shared.first), 1) +
             "% of its rate; the scenario configures no isolation (add a \"traffic\" section)";
  }
  return r;
}

}  // namespace

NetReport run_net_test(const std::string& name, const ScenarioSpec& sc, eval::Engine& engine, eval::Engine& limits,
                       const std::string& engine_name, const NetOptions& opt) {
  const auto p = make_platform(sc);
  Ctx c{sc, *p, engine, limits, opt};
  NetReport r;
  if (name == "d2h") r = copies(c, true);
  else if (name == "h2d") r = copies(c, false);
  else if (name == "p2p") r = p2p(c);
  else if (name == "host-mem") r = host_mem(c);
  else if (name == "pingpong") r = pingpong(c);
  else if (name == "bandwidth") r = bandwidth(c);
  else if (name == "storage-read") r = storage_read(c);
  else if (name == "isolation") r = isolation(c);
  else
    throw UsageError("unknown net test \"" + name + "\"" + did_you_mean(name, net_tests()) + "; valid: " + join(net_tests()));
  r.test = name;
  r.engine = engine_name;
  return r;
}

}  // namespace ffsim::plan
