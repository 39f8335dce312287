// What hfreduce-bench ran, rebuilt for the simulator.
// SPDX-License-Identifier: Apache-2.0
#include "calib/bench_model.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "coll/common.hpp"
#include "coll/dbt.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"
#include "platform/platform.hpp"
#include "topo/fabric.hpp"

namespace ffsim::calib {

using sched::Place;
using sched::Schedule;
using sched::TrafficClass;

const char* param_name(Param p) {
  switch (p) {
    case Param::DramBandwidth: return "dram_bandwidth";
    case Param::DeviceLink: return "device_link_bandwidth";
    case Param::DeviceLatency: return "device_copy_latency";
    case Param::Duplex: return "device_port_duplex_bandwidth";
    case Param::ReducePerCore: return "reduce_bandwidth_per_core";
    case Param::ChunkOverhead: return "hfreduce_chunk_overhead";
    case Param::NicBandwidth: return "transport_bandwidth";
    case Param::NicLatency: return "transport_latency";
  }
  return "?";
}

bool is_bandwidth(Param p) {
  return p == Param::DramBandwidth || p == Param::DeviceLink || p == Param::Duplex || p == Param::ReducePerCore ||
         p == Param::NicBandwidth;
}

ParamSet unset_params() {
  ParamSet s;
  s.fill(std::numeric_limits<double>::quiet_NaN());
  return s;
}

const char* regime_name(Regime r) { return r == Regime::Cache ? "cache" : "dram"; }

const char* level_name(Level l) {
  switch (l) {
    case Level::L1: return "l1";
    case Level::L2: return "l2";
    case Level::Llc: return "llc";
    case Level::Dram: return "dram";
  }
  return "?";
}

MemoryModel unset_memory_model() {
  MemoryModel mm;
  mm.call_latency = mm.fork_cost = mm.sharpness = std::numeric_limits<double>::quiet_NaN();
  mm.shared.fill(std::numeric_limits<double>::quiet_NaN());
  return mm;
}

std::string kernel_kind(const Point& pt) {
  if (pt.stage == "copy") return "copy " + pt.variant;
  if (pt.stage == "reduce") return "reduce " + pt.variant + " " + pt.dtype + " " + pt.store;
  return "";
}

namespace {
// Whether the machine's memcpy streams a call of `call_bytes` (the one rule memcpy_kind and
// model_kind share): from the threshold the run recorded, else the node model's, on. From, not
// above: glibc 2.36's memmove for ERMS machines (the AVX and EVEX variants these VMs run) goes to its
// streaming loop when a copy of at least rep_movsb_stop_threshold is not below the threshold
// (`cmp non_temporal_threshold, size; jb regular`, read off Debian 12's libc.so.6).
bool memcpy_streams(const BenchModel& m, double recorded, double call_bytes) {
  const double t = recorded > 0 ? recorded : m.memcpy_streaming;
  return t > 0 && call_bytes >= t;
}
}  // namespace

std::string memcpy_kind(const BenchModel& m, const MemoryModel& mm, double call_bytes, double recorded) {
  if (!memcpy_streams(m, recorded, call_bytes)) return "copy memcpy";
  for (const char* k : {kStreamingMemcpy, "copy kernel_nt"})
    if (mm.kinds.count(k)) return k;
  return "copy memcpy";
}

std::string model_kind(const BenchModel& m, const Point& pt) {
  const bool memcpy = pt.stage == "copy" && pt.variant == "memcpy";
  return memcpy && memcpy_streams(m, pt.memcpy_streaming, pt.bytes / kernel_threads(pt)) ? kStreamingMemcpy
                                                                                         : kernel_kind(pt);
}

bool streaming_copy(const std::string& kind) { return kind == "copy kernel_nt" || kind == kStreamingMemcpy; }

bool streams_by_its_record(const Point& pt) {
  if (pt.memcpy_streaming <= 0) return false;
  double call = 0;
  if (pt.stage == "copy" && pt.variant == "memcpy")
    call = pt.bytes / kernel_threads(pt);
  else if (pt.stage == "d2h" || pt.stage == "h2d" || pt.stage == "bidir")
    call = pt.bytes;
  else if ((pt.stage == "pipeline" || pt.stage == "allreduce") && pt.chunk_bytes > 0)
    call = std::min(pt.bytes, pt.chunk_bytes);
  return call >= pt.memcpy_streaming;
}

int kernel_threads(const Point& pt) {
  const int t = std::max(1, pt.threads);
  if (pt.stage == "copy" && pt.variant == "memcpy") return t;
  const double parts = std::max(1.0, std::floor(pt.bytes / kMinBytesPerThread));
  return static_cast<int>(std::min<double>(t, parts));
}

namespace {
bool is_set(double v) { return !std::isnan(v); }
// Fraction of a working set of x bytes a cache of C bytes serves (C = 0: no such cache).
double served(double x, double C, double s) {
  if (C <= 0) return 0;
  if (!is_set(s)) return x <= C ? 1.0 : 0.0;  // a step
  return 1 / (1 + std::pow(x / C, s));
}
}  // namespace

std::array<double, kLevels> level_fractions(const BenchModel& m, double sharpness, double W, int n) {
  const double w = W / std::max(1, n);
  const double h1 = served(w, m.l1, sharpness), h2 = served(w, m.l2, sharpness), h3 = served(W, m.llc, sharpness);
  return {h1, (1 - h1) * h2, (1 - h1) * (1 - h2) * h3, (1 - h1) * (1 - h2) * (1 - h3)};
}

double kind_rate(const KindRates& k, Level l) {
  const int i = static_cast<int>(l);
  // The fastest of this level's rate and the slower levels' (a level never serves slower than the
  // levels behind it), else the nearest faster level's.
  double r = std::numeric_limits<double>::quiet_NaN();
  for (int j = i; j < kLevels; ++j)
    if (const double v = k.rate[static_cast<std::size_t>(j)]; is_set(v)) r = is_set(r) ? std::max(r, v) : v;
  if (is_set(r)) return r;
  for (int j = i - 1; j >= 0; --j)
    if (is_set(k.rate[static_cast<std::size_t>(j)])) return k.rate[static_cast<std::size_t>(j)];
  return std::numeric_limits<double>::quiet_NaN();
}

double level_rate(const MemoryModel& mm, const KindRates& k, Level l, int n, double share) {
  const double g = is_set(k.gain) ? std::clamp(k.gain, 0.0, 1.0) : 1.0;
  double r = (1 + (std::max(1, n) - 1) * g) * kind_rate(k, l);
  const double cap = mm.shared[static_cast<std::size_t>(l)];
  if (is_set(cap) && cap > 0) r = std::min(r, cap * share);
  return r;
}

double counted_share(const std::string& kind, int k) {
  const auto ends_with = [&](std::string_view tail) {
    return kind.size() >= tail.size() && kind.compare(kind.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (kind == "copy memcpy" || kind == "copy kernel_regular") return 2.0 / 3.0;
  if (kind.rfind("reduce ", 0) == 0 && ends_with(" regular")) {
    const double inputs = std::max(1, k);
    return (inputs + 1) / (inputs + 2);
  }
  return 1;
}

namespace {
// Seconds per traffic byte over the levels' fractions (the harmonic mix of their rates).
double per_byte(const MemoryModel& mm, const KindRates& k, const std::array<double, kLevels>& f, int n, double share) {
  double t = 0;
  for (int l = 0; l < kLevels; ++l) {
    const double fl = f[static_cast<std::size_t>(l)];
    if (fl > 0) t += fl / level_rate(mm, k, static_cast<Level>(l), n, share);
  }
  return t;
}
double value_or(double v, double fallback) { return is_set(v) ? v : fallback; }
}  // namespace

double mixed_rate(const BenchModel& m, const MemoryModel& mm, const std::string& kind, double W, int n, int k) {
  const auto it = mm.kinds.find(kind);
  if (it == mm.kinds.end()) return std::numeric_limits<double>::quiet_NaN();
  const double share = counted_share(kind, k);
  const double mixed = per_byte(mm, it->second, level_fractions(m, mm.sharpness, W, n), n, share);
  // A streaming copy's written half goes to DRAM whatever the working set (as kernel_seconds).
  if (streaming_copy(kind)) return 1 / (0.5 * mixed + 0.5 / level_rate(mm, it->second, Level::Dram, n, share));
  return 1 / mixed;
}

double cached_bytes(const BenchModel& m, const Point& pt) {
  const double S = pt.bytes;
  const double W = pt.stage == "copy" ? 2 * S : (pt.k + 1.0) * S;
  const bool streaming = pt.stage == "copy" ? streaming_copy(model_kind(m, pt)) : pt.store == "nt";
  return streaming ? W - S : W;
}

double kernel_seconds(const BenchModel& m, const MemoryModel& mm, const Point& pt) {
  const std::string kind = model_kind(m, pt);
  const auto it = mm.kinds.find(kind);
  if (it == mm.kinds.end()) return std::numeric_limits<double>::quiet_NaN();
  const KindRates& k = it->second;
  const int n = kernel_threads(pt);
  const double W = pt.stage == "copy" ? 2 * pt.bytes : (pt.k + 1.0) * pt.bytes;
  // Streaming stores write around the caches: the written bytes always go to DRAM, and the caches
  // hold the bytes read only (cached_bytes).
  const double cached = cached_bytes(m, pt);
  const double written = W - cached;
  const auto f = level_fractions(m, mm.sharpness, cached, n);
  const double share = counted_share(kind, pt.k);
  double t = (W - written) * per_byte(mm, k, f, n, share);
  if (written > 0) t += written / level_rate(mm, k, Level::Dram, n, share);
  return value_or(mm.call_latency, 0) + (n - 1) * value_or(mm.fork_cost, 0) + t;
}

bool port_cap_is_bidirectional(const hw::PciePortSpec& port) {
  return port.bidirectional_bandwidth.has_value() && !port.duplex_bandwidth.has_value();
}

BenchModel make_bench_model(hw::NodeSpec node, coll::LibraryParams lib) {
  BenchModel m;
  m.node = std::move(node);
  m.lib = std::move(lib);
  const hw::CpuSpec& cpu = m.node.sockets.front().cpu;
  if (cpu.last_level_cache) m.llc = cpu.last_level_cache->si();
  if (cpu.l1d_cache_per_core) m.l1 = cpu.l1d_cache_per_core->si();
  if (cpu.l2_cache_per_core) m.l2 = cpu.l2_cache_per_core->si();
  if (cpu.memcpy_streaming_threshold) m.memcpy_streaming = cpu.memcpy_streaming_threshold->si();
  return m;
}

namespace {

// Ports with a GPU attached directly (their duplex cap is what overlapping copies share).
std::vector<std::size_t> device_ports(const hw::NodeSpec& n) {
  std::vector<std::size_t> r;
  for (std::size_t i = 0; i < n.ports.size(); ++i)
    for (const auto& g : n.gpus)
      if (g.port == n.ports[i].name) {
        r.push_back(i);
        break;
      }
  return r;
}

int socket_index(const hw::NodeSpec& n, const std::string& name) {
  for (std::size_t i = 0; i < n.sockets.size(); ++i)
    if (n.sockets[i].name == name) return static_cast<int>(i);
  return 0;
}

int gpu_socket(const hw::NodeSpec& n, int g) {
  return socket_index(n, n.socket_of_port(n.gpus[static_cast<std::size_t>(g)].port).name);
}

int total_cores(const hw::NodeSpec& n) {
  int c = 0;
  for (const auto& s : n.sockets) c += s.cpu.cores;
  return c;
}

bool set(double v) { return !std::isnan(v); }

void apply(hw::NodeSpec& n, coll::LibraryParams& lib, const ParamSet& p) {
  if (set(at(p, Param::DramBandwidth)))
    for (auto& s : n.sockets) s.dram_bandwidth = BytesPerSecond(at(p, Param::DramBandwidth));
  if (set(at(p, Param::DeviceLink)))
    for (auto& g : n.gpus) g.gpu.pcie_bandwidth = BytesPerSecond(at(p, Param::DeviceLink));
  if (set(at(p, Param::DeviceLatency))) n.pcie_latency = Seconds(at(p, Param::DeviceLatency));
  if (set(at(p, Param::Duplex)))
    for (std::size_t i : device_ports(n)) {
      auto& port = n.ports[i];
      auto& cap = port_cap_is_bidirectional(port) ? port.bidirectional_bandwidth : port.duplex_bandwidth;
      cap = BytesPerSecond(at(p, Param::Duplex));
    }
  if (set(at(p, Param::ReducePerCore)))
    for (auto& s : n.sockets) s.cpu.reduce_bandwidth_per_core = BytesPerSecond(at(p, Param::ReducePerCore));
  if (set(at(p, Param::ChunkOverhead))) lib.hfreduce.chunk_overhead = at(p, Param::ChunkOverhead);
  for (auto& x : n.nics) {
    if (set(at(p, Param::NicBandwidth)))
      x.nic.effective_bandwidth = x.nic.port_bandwidth = BytesPerSecond(at(p, Param::NicBandwidth));
    if (set(at(p, Param::NicLatency))) x.nic.latency = Seconds(at(p, Param::NicLatency));
  }
}

}  // namespace

// What `threads` threads (summed over the sockets; 0: all the cores) can use of the machine: each
// socket's reduce rate becomes one "core" of min(threads, its cores). DRAM and ports stay the
// machine's. Ranks of one machine are each limited so (a rank's own threads), and together by the
// machine (PlatformOptions::host_pool), not by a fixed 1/N share each: see simulate().
void thread_limits(hw::NodeSpec& n, int threads) {
  const double S = static_cast<double>(n.sockets.size());
  const double want = threads > 0 ? threads : static_cast<double>(total_cores(n));
  for (auto& s : n.sockets) {
    const double cores = std::min(want / S, static_cast<double>(s.cpu.cores));
    if (s.cpu.reduce_bandwidth_per_core) s.cpu.reduce_bandwidth_per_core = *s.cpu.reduce_bandwidth_per_core * cores;
    s.cpu.cores = 1;
  }
}

namespace {

// Ranks of one machine exchange messages through shared memory: a single switch without latency
// whose links carry the transport's rate, so that the transport (the NIC model) is what binds.
std::shared_ptr<const topo::Fabric> shared_memory_fabric(const hw::NodeSpec& n, int nodes) {
  auto f = std::make_shared<topo::Fabric>();
  const int per = n.compute_nics();
  double bw = 0;
  for (const auto& x : n.nics) bw = std::max(bw, x.nic.effective_bandwidth.si() * x.nic.ports);
  for (int v = 0; v < nodes; ++v)
    for (int j = 0; j < per; ++j) {
      topo::Endpoint e;
      e.name = "n" + std::to_string(v) + ".nic" + std::to_string(j);
      e.node = v;
      e.nic = j;
      f->add_endpoint(e);
    }
  topo::Switch sw;
  sw.name = "shared_memory";
  sw.radix = nodes * per;
  sw.model = "shared_memory";
  sw.latency = Seconds(0);
  const int s = f->add_switch(sw);
  for (int i = 0; i < nodes * per; ++i)
    f->connect(f->endpoint_vertex(i), f->switch_vertex(s), topo::LinkKind::HostLeaf, BytesPerSecond(bw), Seconds(0), false);
  f->finalize();
  return f;
}

// hfreduce's TreeAllreduce alone (the benchmark's "internode" stage): each of the two trees
// carries half of the buffer in slices of `slice` bytes with kTreeWindow slices in flight; a rank
// adds its children's slices to its own (reads own + children, writes own), sends the sum up, gets
// the root's sum back and forwards it to its children. One thread per tree and rank does the adds.
void emit_tree(Schedule& s, const platform::Platform& p, int N, double S, double slice, bool out_of_place) {
  const hw::NodeSpec& n = p.cluster().node;
  const int nic = p.nic_for(Place::dram(0, 0));
  const int sN = socket_index(n, n.socket_of_port(n.nics[static_cast<std::size_t>(nic)].port).name);
  const auto trees = coll::double_binary_tree(N);
  const std::uint32_t t_up = s.tag("tree up"), t_down = s.tag("tree down"), t_add = s.tag("tree add");
  const auto none = coll::kNoOp;
  auto dep = [&](sched::OpId a, sched::OpId b) {
    if (b != none) s.depend(a, b);
  };
  for (int t = 0; t < 2; ++t) {
    const auto& tr = trees[static_cast<std::size_t>(t)];
    const double part = t == 0 ? S / 2 : S - S / 2;
    const int M = std::max(1, static_cast<int>(std::ceil(part / slice)));
    const std::vector<int> post = coll::post_order(tr);  // children before parents
    const auto U = static_cast<std::size_t>(N);
    std::vector<std::vector<sched::OpId>> done(U, std::vector<sched::OpId>(static_cast<std::size_t>(M), none));
    std::vector<sched::OpId> up(U, none), fin(U, none), act(U, none), adder(U, none);
    for (int j = 0; j < M; ++j) {
      const double len = j < M - 1 ? slice : part - slice * (M - 1);
      for (int v = 0; v < N; ++v) act[static_cast<std::size_t>(v)] = j >= kTreeWindow ? done[static_cast<std::size_t>(v)][static_cast<std::size_t>(j - kTreeWindow)] : none;
      for (int v : post) {
        const auto& tl = tr[static_cast<std::size_t>(v)];
        const auto uv = static_cast<std::size_t>(v);
        sched::OpId ready = act[uv];
        std::vector<Place> in{Place::dram(v, sN)};
        for (int c : tl.child)
          if (c >= 0) in.push_back(Place::dram(v, sN));
        if (in.size() > 1) {
          // Out of place the sum goes to another buffer than the rank's own contribution, whose lines
          // the store first reads from memory (write-allocate): one more read of the slice. In place
          // the sum overwrites the contribution the add has just read.
          if (out_of_place) in.push_back(Place::dram(v, sN));
          const sched::OpId add = s.reduce(Place::cpu(v, sN), in, Place::dram(v, sN), Bytes(len), t_add);
          dep(add, act[uv]);
          dep(add, adder[uv]);
          for (int c : tl.child)
            if (c >= 0) s.depend(add, up[static_cast<std::size_t>(c)]);
          adder[uv] = ready = add;
        }
        if (tl.parent >= 0) {
          up[uv] = s.transfer(Place::dram(v, sN), Place::dram(tl.parent, sN), Bytes(len), TrafficClass::HFReduce, t_up);
          dep(up[uv], ready);
          dep(up[uv], act[static_cast<std::size_t>(tl.parent)]);
        } else {
          fin[uv] = ready;
        }
      }
      for (auto it = post.rbegin(); it != post.rend(); ++it) {
        const int v = *it;
        const auto uv = static_cast<std::size_t>(v);
        std::vector<sched::OpId> sends;
        for (int c : tr[uv].child) {
          if (c < 0) continue;
          const sched::OpId d = s.transfer(Place::dram(v, sN), Place::dram(c, sN), Bytes(len), TrafficClass::HFReduce, t_down);
          dep(d, fin[uv]);
          dep(d, up[static_cast<std::size_t>(c)]);  // the child's slice went up before the sum lands in it
          fin[static_cast<std::size_t>(c)] = d;
          sends.push_back(d);
        }
        done[uv][static_cast<std::size_t>(j)] = sends.empty() ? fin[uv] : coll::barrier(s, sends);
      }
    }
  }
}

}  // namespace

ParamSet published(const BenchModel& m) {
  ParamSet p = unset_params();
  const hw::NodeSpec& n = m.node;
  at(p, Param::DramBandwidth) = n.sockets.front().dram_bandwidth.si();
  if (!n.gpus.empty()) at(p, Param::DeviceLink) = n.gpus.front().gpu.pcie_bandwidth.si();
  at(p, Param::DeviceLatency) = n.pcie_latency.si();
  for (std::size_t i : device_ports(n)) {
    const auto& port = n.ports[i];
    at(p, Param::Duplex) = port_cap_is_bidirectional(port) ? port.bidirectional_bandwidth->si()
                           : port.duplex_bandwidth         ? port.duplex_bandwidth->si()
                                                           : 2 * port.bandwidth.si();
    break;
  }
  if (n.sockets.front().cpu.reduce_bandwidth_per_core)
    at(p, Param::ReducePerCore) = n.sockets.front().cpu.reduce_bandwidth_per_core->si();
  at(p, Param::ChunkOverhead) = m.lib.hfreduce.chunk_overhead;
  if (!n.nics.empty()) {
    at(p, Param::NicBandwidth) = n.nics.front().nic.effective_bandwidth.si();
    at(p, Param::NicLatency) = n.nics.front().nic.latency.si();
  }
  return p;
}

double working_set(const Point& pt) {
  const double S = pt.bytes;
  const bool host = pt.backend == "host";
  // Staging: the slots in use (at most depth, at most the chunks there are), each as full as a chunk gets.
  const double chunks = pt.chunk_bytes > 0 ? std::ceil(S / pt.chunk_bytes) : 0;
  const double staging = std::min<double>(kPipelineDepth, chunks) * std::min(pt.chunk_bytes, S) * (pt.devices + 1.0);
  const double pipeline = (host ? pt.devices * S : 0) + staging;
  if (pt.stage == "copy") return 2 * S;
  if (pt.stage == "reduce") return (pt.k + 1.0) * S;
  if (pt.stage == "d2h" || pt.stage == "h2d") return host ? 2 * S : S;
  if (pt.stage == "bidir") return host ? 4 * S : 2 * S;
  if (pt.stage == "pipeline") return pipeline;
  if (pt.stage == "allreduce") return pt.ranks * pipeline;
  return pt.ranks * S;  // internode, mpi_allreduce
}

double between_repetitions(const Point& pt) {
  if (pt.backend != "host") return 0;
  const double S = pt.bytes;
  if (pt.stage == "d2h" || pt.stage == "h2d" || pt.stage == "bidir") return 2 * S;
  if (pt.stage == "pipeline" && pt.ranks <= 1) return 2 * std::min(pt.traffic_bytes / 2, 512.0 * 1024 * 1024);
  return 0;
}

Regime regime_of(const BenchModel& m, const Point& pt) {
  // With a working set W above the cache's size C, a cache that keeps what is reused serves about
  // C / W of the bytes: half of them at W = 2C. (Where C is measured as the size at which a sweep's
  // copies take half their bytes from the cache, the Zen 5 VM's 54 MiB, the cache serves about a
  // fifth at 2C: docs/calibration.md, "The last-level cache, measured".)
  return m.llc > 0 && working_set(pt) <= 2 * m.llc ? Regime::Cache : Regime::Dram;
}

std::string not_simulated(const Point& pt) {
  if (pt.stage == "mpi_allreduce")
    return "MPI_Allreduce is Open MPI's own algorithm, which the simulator does not model (it is the bound the tree is "
           "compared with)";
  if (pt.stage == "mpi_p2p")
    return "MPI point-to-point rates and a sum on every rank, measured as the bound of the tree (hfreduce-bench), "
           "not a stage the simulator models";
  if ((pt.stage == "internode" || pt.stage == "allreduce") && pt.ranks < 2) return "an inter-node stage of one rank";
  return "";
}

void check_machine(const BenchModel& m, const MeasurementFile& f) {
  const hw::NodeSpec& n = m.node;
  const int cores = total_cores(n);
  const std::string of = " (node model " + n.name + " has ";
  auto fail = [&](const std::string& pointer, const std::string& msg) { throw ConfigError(f.file, pointer, msg); };
  if (f.machine.usable_cpus > cores)
    fail("/machine/usable_cpus", "expected at most " + std::to_string(cores) + " CPUs" + of + std::to_string(cores) +
                                     " cores), got " + std::to_string(f.machine.usable_cpus));
  if (f.machine.numa_nodes != static_cast<int>(n.sockets.size()))
    fail("/machine/numa_nodes", "expected " + std::to_string(n.sockets.size()) + " NUMA node" +
                                    (n.sockets.size() == 1 ? "" : "s") + of + std::to_string(n.sockets.size()) + " socket" +
                                    (n.sockets.size() == 1 ? "" : "s") + "), got " + std::to_string(f.machine.numa_nodes));
  const bool emulated = !n.gpus.empty() && n.gpus.front().gpu.emulated();
  // The machine record against the node model: the CPU it was measured on, its GPUs, its memory.
  if (!n.measured_cpu_model.empty() && f.machine.cpu_model != n.measured_cpu_model)
    fail("/machine/cpu_model", "expected \"" + n.measured_cpu_model + "\" (the CPU node model " + n.name +
                                   " was measured on), got \"" + f.machine.cpu_model +
                                   "\"; a run of another machine under this name needs a node model of its own");
  // The memcpy streaming threshold the run recorded against the one the node model's CPU states.
  if (const auto& t = n.sockets.front().cpu.memcpy_streaming_threshold;
      t && f.machine.memcpy_streaming_threshold > 0 && std::fabs(f.machine.memcpy_streaming_threshold - t->si()) > 0.5)
    fail("/machine/memcpy_streaming_threshold_bytes",
         "expected " + fmt_g(t->si(), 12) + " (node model " + n.name + "'s CPU " + n.sockets.front().cpu.name +
             ": memcpy streams from " + fmt_bytes(*t) + " per call), got " +
             fmt_g(f.machine.memcpy_streaming_threshold, 12) +
             "; the run's C library or caches differ from the ones the model states: calibrate it with a node model "
             "whose CPU states what the run recorded");
  if (emulated && !f.machine.gpus.empty())
    fail("/machine/gpus", "expected no GPUs: node model " + n.name + "'s devices are emulated in host memory, got " +
                              std::to_string(f.machine.gpus.size()) + " (\"" + f.machine.gpus.front() + "\")");
  double memory = 0;
  for (const auto& s : n.sockets) memory += s.memory.si();
  if (memory > 0 && (f.machine.memory_bytes < memory / 2 || f.machine.memory_bytes > memory * 2))
    fail("/machine/memory_bytes", "expected about " + fmt_bytes(Bytes(memory)) + " (node model " + n.name +
                                      "'s memory; within a factor of 2), got " + fmt_g(f.machine.memory_bytes, 6) +
                                      " bytes; the field counts bytes");
  const std::vector<std::string> isas{"scalar", "avx2", "avx512"};
  const auto widest = std::find(isas.begin(), isas.end(), n.sockets.front().cpu.simd);
  for (const Point& pt : f.points) {
    const std::string& p = pt.pointer;
    if (pt.threads > cores)
      fail(p + "/threads", "expected at most " + std::to_string(cores) + " threads" + of + std::to_string(cores) +
                               " cores), got " + std::to_string(pt.threads));
    // CUDA runs may put several virtual devices on one GPU (device d on GPU d mod G); emulated
    // devices are each their own host buffers and copy threads.
    if (pt.devices > static_cast<int>(n.gpus.size()) && !(pt.backend == "cuda" && !n.gpus.empty()))
      fail(p + "/devices", "expected at most " + std::to_string(n.gpus.size()) + " devices" + of +
                               std::to_string(n.gpus.size()) + " GPUs), got " + std::to_string(pt.devices));
    if (pt.backend == "host" && !emulated)
      fail(p + "/backend", "the host backend emulates devices in host memory, but node model " + n.name +
                               (n.gpus.empty() ? " has no GPUs" : "'s GPUs are " + n.gpus.front().gpu.name + " (form factor " +
                                                                      n.gpus.front().gpu.form_factor + ")") +
                               "; use a node model whose GPUs have form factor \"emulated\"");
    if (pt.backend == "cuda" && (n.gpus.empty() || emulated))
      fail(p + "/backend", "CUDA copies need a GPU, but node model " + n.name +
                               (n.gpus.empty() ? " has none" : "'s devices are emulated in host memory"));
    if (pt.stage == "reduce") {
      const auto isa = std::find(isas.begin(), isas.end(), pt.variant);
      if (isa == isas.end())
        fail(p + "/variant", "expected a reduce path (" + join(isas) + "), got \"" + pt.variant + "\"");
      if (std::find(f.machine.isa.begin(), f.machine.isa.end(), pt.variant) == f.machine.isa.end())
        fail(p + "/variant", "the point ran the " + pt.variant + " path, which the file's machine record " +
                                 "(/machine/isa: " + join(f.machine.isa) + ") says this CPU cannot run");
      if (widest != isas.end() && isa > widest)
        fail(p + "/variant", "node model " + n.name + "'s CPU " + n.sockets.front().cpu.name + " has SIMD up to " +
                                 *widest + ", but the point ran the " + pt.variant + " path");
      if (pt.k < 1) fail(p + "/k", "expected a reduce of at least 1 buffer, got k = " + std::to_string(pt.k));
    }
    if ((pt.stage == "internode" || pt.stage == "allreduce") && n.compute_nics() == 0)
      fail(p + "/stage", "an inter-node stage needs a node model with a NIC (or transport); " + n.name + " has none");
    if ((pt.stage == "pipeline" || pt.stage == "allreduce" || pt.stage == "d2h" || pt.stage == "h2d" ||
         pt.stage == "bidir") && pt.devices < 1)
      fail(p + "/devices", "expected at least 1 device for a " + pt.stage + " point, got 0");
    if ((pt.stage == "pipeline" || pt.stage == "allreduce" || pt.stage == "internode") && pt.chunk_bytes <= 0)
      fail(p + "/chunk_bytes", "expected a positive chunk (pipeline) or slice (tree) size for a " + pt.stage + " point, got 0");
    if (pt.chunk_bytes > 0 && pt.chunk_bytes < 4)
      fail(p + "/chunk_bytes", "expected a chunk of at least one element (4 bytes; hfreduce-bench --chunks refuses less), got " +
                                   fmt_g(pt.chunk_bytes) + " B");
    // Each chunk of each device is a few operations of the simulated schedule, which holds 2^23.
    if (pt.chunk_bytes > 0 && pt.bytes / pt.chunk_bytes * std::max(pt.devices, 1) > 1 << 20)
      fail(p + "/chunk_bytes", "expected at most 2^20 chunks over the point's devices (the simulated schedule holds 2^23 "
                                   "operations), got " + fmt_g(std::ceil(pt.bytes / pt.chunk_bytes)) + " chunks of " +
                                   fmt_g(pt.chunk_bytes) + " B for " + fmt_g(pt.bytes) + " B on " +
                                   std::to_string(std::max(pt.devices, 1)) + " device(s)");
  }
}

double slot_copy_gain(const BenchModel& m, const MemoryModel& mm, const std::string& copy, const Point& pt) {
  // The staging slots (hfreduce's Pipeline: depth chunk-sized slots per device, and as many result
  // slots; one device copies straight into its result slots) are reused every depth chunks, so a
  // chunk's copy reads or writes DRAM on its device's side only, and its slot's side wherever the
  // slot still is: in the last-level cache if what the pipeline touches between two uses of it (the
  // slots, and the device bytes read and written meanwhile: devices x depth chunks each way, or one
  // way in place, where the H2D writes the lines the D2H read) fits, by the memory model's own rule
  // (`served`, the copies' fitted sharpness). Half of a chunk's copy traffic, its device side, goes
  // to DRAM: the D2H's reads, and the H2D's writes, in place too, where it writes the lines the D2H
  // read depth chunks before and finds them in the cache but leaves them dirty, to be written back.
  // (Until 2026-12-07 in place counted a quarter, the write-backs left out: held out in 5 folds the
  // pipeline stage's error was 13.6 -> 15.8% on the Xeon 480 MiB VM, 8.0 -> 9.4 on the Zen 3 VM, 16.7
  // -> 17.9 on the Zen 5 VM, 15.1 -> 15.5 on the Xeon VM, with a half against a quarter.) The copy then
  // runs at the harmonic mix of the DRAM rate and the cached side's. Measured:
  // the Zen 5 VM's one-device pipeline moved 40-47 GB/s of copies with 3-24 MiB of slots and 22 GB/s
  // with 96 MiB, about the 20.8 GB/s of two whole-buffer copies at once
  // (models/measured/epyc-zen5-2c-vm-2026-12-06-chunks.json).
  if ((pt.stage != "pipeline" && pt.stage != "allreduce") || pt.chunk_bytes <= 0 || m.llc <= 0) return 1;
  const auto it = mm.kinds.find(copy);
  if (it == mm.kinds.end()) return 1;
  const double c = std::min(pt.chunk_bytes, pt.bytes);
  const double slots = std::min<double>(kPipelineDepth, std::ceil(pt.bytes / pt.chunk_bytes)) * c;
  const double D = std::max(1, pt.devices);
  const double staging = D == 1 ? slots : slots * (D + 1);      // one device: the result slots are its slots
  const double ranks = pt.stage == "allreduce" ? pt.ranks : 1;  // an mpirun's ranks share the cache
  const bool in_place = pt.placement != "out_of_place";
  const double h = served(ranks * (staging + (in_place ? 1 : 2) * D * slots), m.llc, mm.sharpness);
  const double share = counted_share(copy, 0);
  const double dram = level_rate(mm, it->second, Level::Dram, 1, share),
               llc = level_rate(mm, it->second, Level::Llc, 1, share);
  const double chunk_copy = 1 / (0.5 / dram + 0.5 * (h / llc + (1 - h) / dram));
  // what the whole working set gives, with what the bench touches between two calls
  const double over_w = mixed_rate(m, mm, copy, working_set(pt) + between_repetitions(pt), 1, 0);
  if (!is_set(chunk_copy) || !is_set(over_w) || over_w <= 0) return 1;
  return std::max(1.0, chunk_copy / over_w);
}

namespace {

// The composed stages on the memory model: the node's DRAM rate is what every core's memcpy reaches
// over the stage's working set, an emulated device's link what one copy thread's memcpy reaches
// (payload: half its traffic), and the per-core reduce rate the node's reduce group's over the same
// working set (input bytes: k / (k + 1) of its traffic for k inputs). Values the model lacks keep p's.
// The memcpy is the one each call makes: a whole D2H or H2D, or a pipeline's chunk (memcpy_kind:
// from the machine's streaming threshold on, glibc streams).
void apply_memory(const BenchModel& m, const MemoryModel& mm, const std::string& reduce_kind, const Point& pt,
                  hw::NodeSpec& n) {
  const double W = working_set(pt) + between_repetitions(pt);
  const int cores = total_cores(m.node);
  const bool whole = pt.stage == "d2h" || pt.stage == "h2d" || pt.stage == "bidir";
  const double call = whole || pt.chunk_bytes <= 0 ? pt.bytes : std::min(pt.bytes, pt.chunk_bytes);
  const std::string copy = memcpy_kind(m, mm, call, pt.memcpy_streaming);
  // An emulated device's copies into and out of cache-resident staging slots run faster than the
  // whole working set says (slot_copy_gain); the DRAM, the link and the port's cap (on the host
  // backend both directions' copies contend in memory) scale by that gain.
  const bool emulated = !n.gpus.empty() && n.gpus.front().gpu.emulated();
  const double factor = emulated ? slot_copy_gain(m, mm, copy, pt) : 1.0;
  if (const double dram = mixed_rate(m, mm, copy, W, cores, 0); is_set(dram) && dram > 0)
    for (auto& s : n.sockets) s.dram_bandwidth = BytesPerSecond(dram * factor);
  if (emulated)
    if (const double link = mixed_rate(m, mm, copy, W, 1, 0); is_set(link) && link > 0)
      for (auto& g : n.gpus) g.gpu.pcie_bandwidth = BytesPerSecond(link * factor / 2);
  if (factor != 1)
    for (std::size_t i : device_ports(n)) {
      auto& port = n.ports[i];
      auto& cap = port_cap_is_bidirectional(port) ? port.bidirectional_bandwidth : port.duplex_bandwidth;
      if (cap) cap = BytesPerSecond(cap->si() * factor);
    }
  const int k = std::max(2, pt.devices);  // the reduce's inputs: a chunk of each device
  if (const double red = mixed_rate(m, mm, reduce_kind, W, 1, k); is_set(red) && red > 0) {
    for (auto& s : n.sockets) s.cpu.reduce_bandwidth_per_core = BytesPerSecond(red * k / (k + 1));
  }
}

}  // namespace

double simulate(const BenchModel& m, const ModelParams& mp, const Point& pt, eval::Engine& engine) {
  const std::string why = not_simulated(pt);
  FFSIM_ASSERT(why.empty(), "simulate: " + why);
  hw::NodeSpec node = m.node;
  coll::LibraryParams lib = m.lib;
  apply(node, lib, mp.node);
  const double S = pt.bytes;
  Schedule s;
  if ((pt.stage == "copy" || pt.stage == "reduce") && !std::isnan(kernel_seconds(m, mp.memory, pt))) {
    // The memory model: a delay of the call's fixed time, then the op at the traffic rate its levels
    // give (DRAM's resource carries it; a reduce's cores are set not to bind before it).
    const int n = kernel_threads(pt);
    const double fixed = value_or(mp.memory.call_latency, 0) + (n - 1) * value_or(mp.memory.fork_cost, 0);
    const double W = pt.stage == "copy" ? 2 * S : (pt.k + 1.0) * S;
    const double rate = W / (kernel_seconds(m, mp.memory, pt) - fixed);
    for (auto& sk : node.sockets) {
      sk.dram_bandwidth = BytesPerSecond(rate);
      sk.cpu.reduce_bandwidth_per_core = BytesPerSecond(2 * rate);
      sk.cpu.cores = 1;
    }
    // Only socket 0's DRAM and cores take part: the devices, their ports, the NICs and the drives
    // are left out of the platform (the op's path and capacities are the same; building the whole
    // node for every evaluation of every fit was most of calibrate's and validate's time).
    node.gpus.clear();
    node.nics.clear();
    node.ports.clear();
    node.drives = hw::DriveSpec{};
    const platform::Platform plat(hw::ClusterSpec{node, 1, {}}, nullptr, {});
    const sched::OpId d = s.delay(Seconds(fixed));
    const sched::OpId op =
        pt.stage == "copy"
            ? s.transfer(Place::dram(0, 0), Place::dram(0, 0), Bytes(S), TrafficClass::Other)
            : s.reduce(Place::cpu(0, 0), std::vector<Place>(static_cast<std::size_t>(pt.k), Place::dram(0, 0)),
                       Place::dram(0, 0), Bytes(S));
    s.depend(op, d);
    return engine.run(s, plat).makespan;
  }
  if (pt.stage == "copy" || pt.stage == "reduce") {  // no rates of its kind: the node model's DRAM view
    if (pt.stage == "reduce") thread_limits(node, pt.threads);
    const platform::Platform plat(hw::ClusterSpec{node, 1, {}}, nullptr, {});
    if (pt.stage == "copy") s.transfer(Place::dram(0, 0), Place::dram(0, 0), Bytes(S), TrafficClass::Other);
    else
      s.reduce(Place::cpu(0, 0), std::vector<Place>(static_cast<std::size_t>(pt.k), Place::dram(0, 0)), Place::dram(0, 0),
               Bytes(S));
    return engine.run(s, plat).makespan;
  }
  apply_memory(m, mp.memory, mp.reduce_kind, pt, node);
  // The pipeline's device copies run on its streams: a copy's latency is its hand-off to the stream,
  // paid only where the stream's queue ran empty (HfreduceParams::copy_handoff); a lone copy (d2h,
  // h2d, bidir) pays it whole, as its path's latency.
  if (pt.stage == "pipeline" || pt.stage == "allreduce") {
    lib.hfreduce.copy_handoff = node.pcie_latency.si();
    node.pcie_latency = Seconds(0);
  }
  const bool multi = pt.stage == "internode" || pt.stage == "allreduce";
  const int ranks = multi ? pt.ranks : 1;
  // The N ranks of an MPI stage run on one machine: each is a simulated node limited by its own
  // threads, and every path through a node's DRAM, reduce cores or device ports also crosses the
  // machine's (PlatformOptions::host_pool), which all of them share as they use it. (Until
  // 2026-12-07 each rank had a fixed 1/N of the machine, so the tree's interior ranks, which move
  // about twice a leaf's bytes, could not take what the idle leaves left: 4 ranks over-predicted by
  // 12-30% on the Zen 3 and Zen 5 VMs; docs/calibration.md, "The ranks share one machine".)
  //
  // And the host threads (an emulated device's copy threads, the reducer's, the tree's, MPI's
  // copies between ranks) take turns on the machine's cores whatever they do: each copy, reducer
  // read and message also runs its bytes' core-seconds at that thread's rate alone on one resource
  // of the machine's cores (PlatformOptions::host_cpu). Until 2026-12-07 each kind of work had a
  // resource of its own, so that on 2 cores they could together use several times the cores there
  // are (docs/calibration.md, "The host threads share the cores").
  platform::PlatformOptions opts;
  if (multi || pt.stage == "pipeline") {
    auto machine = std::make_shared<hw::NodeSpec>(node);
    thread_limits(*machine, 0);
    opts.host_pool = std::move(machine);
    auto& hc = opts.host_cpu;
    hc.cores = total_cores(node);
    if (!node.gpus.empty() && node.gpus.front().gpu.emulated() && node.gpus.front().gpu.pcie_bandwidth.si() > 0)
      hc.copy_s_per_byte = 1 / node.gpus.front().gpu.pcie_bandwidth.si();
    if (const auto& r = node.sockets.front().cpu.reduce_bandwidth_per_core; r && r->si() > 0)
      hc.reduce_s_per_byte = 1 / r->si();
    double t = 0;
    for (const auto& x : node.nics) t = std::max(t, x.nic.effective_bandwidth.si());
    if (t > 0) hc.transport_s_per_byte = 1 / t;
    hc.reduce_threads = pt.threads > 0 ? pt.threads : hc.cores;
  }
  if (pt.stage == "pipeline" || multi) thread_limits(node, pt.threads);
  if (!multi) {
    const platform::Platform plat(hw::ClusterSpec{node, 1, {}}, nullptr, {}, opts);
    const Place mem = Place::dram(0, node.gpus.empty() ? 0 : gpu_socket(node, 0));
    if (pt.stage == "d2h" || pt.stage == "h2d" || pt.stage == "bidir") {
      std::vector<sched::OpId> copies;
      if (pt.stage != "h2d") copies.push_back(s.transfer(Place::gpu(0, 0), mem, Bytes(S), TrafficClass::Other));
      if (pt.stage != "d2h") copies.push_back(s.transfer(mem, Place::gpu(0, 0), Bytes(S), TrafficClass::Other));
      // The bench's "bidir" synchronizes the D2H stream, then the H2D one. On the host backend a
      // stream is a copy thread that sleeps once its queue is empty (src/hfreduce/host_backend.cpp),
      // so the second synchronize wakes that thread again and waits to be woken in turn: one more
      // round trip of the two wake-ups a lone copy's latency holds. The committed VMs show it where
      // latency dominates: at 4-64 KiB bidir takes about twice the slower lone copy (docs/calibration.md).
      if (pt.stage == "bidir" && pt.backend == "host") {
        const sched::OpId sync = s.delay(node.pcie_latency);
        for (const sched::OpId c : copies) s.depend(sync, c);
      }
    } else {
      FFSIM_ASSERT(pt.stage == "pipeline", "simulate: unknown stage " + pt.stage);
      lib.hfreduce.chunk_bytes = pt.chunk_bytes;
      lib.hfreduce.staging_buffers = kPipelineDepth;
      lib.hfreduce.result_slots = kPipelineDepth;
      lib.hfreduce.h2d = "memcpy";
      coll::Group g;  // virtual devices of a CUDA run share GPU l mod G (its link and port)
      for (int l = 0; l < pt.devices; ++l) g.ranks.push_back(Place::gpu(0, l % static_cast<int>(node.gpus.size())));
      (void)coll::algorithms().get("hfreduce").factory()->emit(s, plat, lib, g, S, coll::Options{});
    }
    return engine.run(s, plat).makespan;
  }
  const platform::Platform plat(hw::ClusterSpec{node, ranks, {}}, shared_memory_fabric(node, ranks), {}, opts);
  if (pt.stage == "internode") {
    emit_tree(s, plat, ranks, S, pt.chunk_bytes, pt.placement == "out_of_place");
  } else {
    lib.hfreduce.chunk_bytes = pt.chunk_bytes;
    lib.hfreduce.staging_buffers = kPipelineDepth;
    lib.hfreduce.result_slots = kPipelineDepth;
    lib.hfreduce.h2d = "memcpy";
    coll::Group g;
    for (int v = 0; v < ranks; ++v)
      for (int l = 0; l < pt.devices; ++l) g.ranks.push_back(Place::gpu(v, l % static_cast<int>(node.gpus.size())));
    (void)coll::algorithms().get("hfreduce").factory()->emit(s, plat, lib, g, S, coll::Options{});
  }
  return engine.run(s, plat).makespan;
}

}  // namespace ffsim::calib
