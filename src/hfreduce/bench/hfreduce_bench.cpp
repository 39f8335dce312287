// hfreduce-bench: sweeps the stages of hfreduce and measures, in the same run, the bounds they are judged by.
// SPDX-License-Identifier: Apache-2.0
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ffsim/hfreduce/backend.hpp"
#include "ffsim/hfreduce/cpu.hpp"
#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/memory.hpp"
#include "ffsim/hfreduce/pipeline.hpp"
#include "ffsim/hfreduce/reduce.hpp"
#include "ffsim/hfreduce/thread_pool.hpp"
#include "ffsim/hfreduce/tree.hpp"
#include "json_writer.hpp"
#include "plain_loop.hpp"

#ifdef FFSIM_HFREDUCE_HAS_MPI
#include "ffsim/hfreduce/mpi_transport.hpp"
#endif

namespace ffsim::hfreduce::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t KiB = std::size_t{1} << 10;
constexpr std::size_t MiB = std::size_t{1} << 20;

const char* kUsage = R"(usage: hfreduce-bench [options]
  --stages LIST      copy,reduce,d2h,h2d,pipeline,internode,allreduce (default: all that apply)
  --min-bytes SIZE   smallest tensor (default 4KiB); SIZE takes B, KiB, MiB, GiB
  --max-bytes SIZE   largest tensor (default 256MiB)
  --step N           size multiplier between points (default 4)
  --k LIST           buffers summed by the reduce stage (default 8)
  --threads LIST     reduce threads (default 1,<usable CPUs>)
  --isa LIST         reduce paths (default: every supported one)
  --dtypes LIST      fp32,bf16,fp16 (default all)
  --stores LIST      regular,nt (default both)
  --backend NAME     host or cuda (default host)
  --devices LIST     devices per node for pipeline/allreduce (default 1,8)
  --chunks LIST      pipeline chunk sizes (default 1MiB,4MiB)
  --slice SIZE       inter-node slice (default 512KiB)
  --budget SECONDS   time spent per point, at least --reps repetitions (default 0.2)
  --reps N           minimum repetitions (default 5)
  --rounds N         sweep everything N times; a point's median is the median of its rounds'
                     medians, each round's median is recorded (default 1; on a shared machine
                     the rounds' spread is its noise)
  --machine NAME     machine name for the JSON (default: hostname)
  --out FILE         JSON output (default hfreduce-bench.json)
Run under mpirun for the internode and allreduce stages (2+ ranks).
)";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "hfreduce-bench: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::size_t parse_size(const std::string& text) {
  std::size_t end = 0;
  double number = 0;
  try {
    number = std::stod(text, &end);
  } catch (const std::exception&) {
    usage_error("bad size \"" + text + "\"");
  }
  const std::string unit = text.substr(end);
  const std::map<std::string, double> units = {{"", 1}, {"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0},
                                               {"GiB", 1073741824.0}};
  auto found = units.find(unit);
  if (found == units.end()) usage_error("bad size unit in \"" + text + "\"; use B, KiB, MiB or GiB");
  const double bytes = number * found->second;
  // Whole bytes from 1 B to 1 TiB (a negative or fractional size was cast as it came).
  if (!std::isfinite(bytes) || bytes < 1 || bytes > 1099511627776.0 || bytes != std::floor(bytes))
    usage_error("bad size \"" + text + "\": expected a whole number of bytes from 1B to 1024GiB");
  return static_cast<std::size_t>(bytes);
}

std::string format_bytes(std::size_t bytes) {
  char buffer[32];
  if (bytes >= MiB && bytes % MiB == 0) {
    std::snprintf(buffer, sizeof(buffer), "%zuMiB", bytes / MiB);
  } else if (bytes >= KiB && bytes % KiB == 0) {
    std::snprintf(buffer, sizeof(buffer), "%zuKiB", bytes / KiB);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%zuB", bytes);
  }
  return buffer;
}

const std::vector<std::string> kStages = {"copy", "reduce", "d2h", "h2d", "pipeline", "internode", "allreduce"};

struct Options {
  std::vector<std::string> stages = kStages;
  std::size_t min_bytes = 4 * KiB;
  std::size_t max_bytes = 256 * MiB;
  std::size_t step = 4;
  std::vector<int> ks = {8};
  std::vector<int> threads;
  std::vector<Isa> isas;
  std::vector<DType> dtypes = {DType::F32, DType::BF16, DType::F16};
  std::vector<StorePolicy> stores = {StorePolicy::Regular, StorePolicy::NonTemporal};
  std::string backend = "host";
  std::vector<int> devices = {1, 8};
  std::vector<std::size_t> chunks = {1 * MiB, 4 * MiB};
  std::size_t slice = 512 * KiB;
  double budget_s = 0.2;
  int reps = 5;
  int rounds = 1;
  std::string machine;
  std::string out = "hfreduce-bench.json";
  std::string command;
  bool has(const std::string& stage) const { return std::find(stages.begin(), stages.end(), stage) != stages.end(); }
  std::vector<std::size_t> sizes() const {
    std::vector<std::size_t> result;
    for (std::size_t s = min_bytes; s <= max_bytes; s *= step) result.push_back(s);
    return result;
  }
};

// A whole number in [lo, hi], all of `text` (stoi took "4x" as 4), or a usage error naming `flag`.
int parse_int(const std::string& flag, const std::string& text, int lo, int hi) {
  std::size_t end = 0;
  long value = 0;
  try {
    value = std::stol(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  if (end == 0 || end != text.size())
    usage_error(flag + ": expected a whole number, got \"" + text + "\"");
  if (value < lo || value > hi)
    usage_error(flag + ": expected " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + text);
  return static_cast<int>(value);
}

// A comma-separated list of such numbers; an empty list is an error (it would measure nothing).
std::vector<int> parse_ints(const std::string& flag, const std::string& text, int lo, int hi) {
  std::vector<int> values;
  for (const std::string& part : split(text)) values.push_back(parse_int(flag, part, lo, hi));
  if (values.empty()) usage_error(flag + ": expected a comma-separated list, got \"" + text + "\"");
  return values;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) o.command += (i == 0 ? "" : " ") + std::string(argv[i]);
  std::set<std::string> given;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    }
    if (i + 1 >= argc) usage_error("missing value after " + flag);
    if (!given.insert(flag).second)
      usage_error(flag + " is given twice; give it once (a list is one comma-separated value)");
    const std::string value = argv[++i];
    try {
      if (flag == "--stages") {
        o.stages = split(value);
        if (o.stages.empty()) usage_error("--stages: expected a comma-separated list, got \"" + value + "\"");
        for (const std::string& st : o.stages)
          if (std::find(kStages.begin(), kStages.end(), st) == kStages.end()) {
            std::string valid;
            for (const std::string& k : kStages) valid += (valid.empty() ? "" : ", ") + k;
            usage_error("--stages: unknown stage \"" + st + "\"; valid: " + valid);
          }
      } else if (flag == "--min-bytes") {
        o.min_bytes = parse_size(value);
      } else if (flag == "--max-bytes") {
        o.max_bytes = parse_size(value);
      } else if (flag == "--step") {
        o.step = static_cast<std::size_t>(parse_int(flag, value, 2, 1024));
      } else if (flag == "--k") {
        o.ks = parse_ints(flag, value, 1, kMaxReduceInputs);
      } else if (flag == "--threads") {
        o.threads = parse_ints(flag, value, 1, 4096);
      } else if (flag == "--isa") {
        o.isas.clear();
        for (const std::string& name : split(value)) o.isas.push_back(parse_isa(name));
      } else if (flag == "--dtypes") {
        o.dtypes.clear();
        for (const std::string& name : split(value)) o.dtypes.push_back(parse_dtype(name));
      } else if (flag == "--stores") {
        o.stores.clear();
        for (const std::string& name : split(value)) {
          if (name != "regular" && name != "nt") usage_error("bad store kind \"" + name + "\"; valid: regular, nt");
          o.stores.push_back(name == "nt" ? StorePolicy::NonTemporal : StorePolicy::Regular);
        }
      } else if (flag == "--backend") {
        if (value != "host" && value != "cuda") usage_error("bad backend \"" + value + "\"; valid: host, cuda");
        o.backend = value;
      } else if (flag == "--devices") {
        o.devices = parse_ints(flag, value, 1, kMaxReduceInputs);  // the pipeline's limit (Pipeline)
      } else if (flag == "--chunks") {
        o.chunks.clear();
        for (const std::string& part : split(value)) {
          o.chunks.push_back(parse_size(part));
          if (o.chunks.back() < 4) usage_error("--chunks: a chunk must hold an element (4 bytes), got " + part);
        }
        if (o.chunks.empty()) usage_error("--chunks: expected a comma-separated list, got \"" + value + "\"");
      } else if (flag == "--slice") {
        o.slice = parse_size(value);
        if (o.slice < 64) usage_error("--slice: the tree's slices are at least 64 bytes, got " + value);
      } else if (flag == "--budget") {
        std::size_t end = 0;
        try {
          o.budget_s = std::stod(value, &end);
        } catch (const std::exception&) {
          end = 0;
        }
        if (end == 0 || end != value.size() || !std::isfinite(o.budget_s) || o.budget_s <= 0 || o.budget_s > 3600)
          usage_error("--budget: expected seconds above 0 and at most 3600, got \"" + value + "\"");
      } else if (flag == "--reps") {
        o.reps = parse_int(flag, value, 1, 1000000);
      } else if (flag == "--rounds") {
        o.rounds = parse_int(flag, value, 1, 100);
      } else if (flag == "--machine") {
        o.machine = value;
      } else if (flag == "--out") {
        o.out = value;
      } else {
        usage_error("unknown option " + flag);
      }
    } catch (const KernelError& e) {
      usage_error(e.message());
    }
  }
  if (o.min_bytes == 0 || o.min_bytes > o.max_bytes) usage_error("need 0 < --min-bytes <= --max-bytes");
  if (o.isas.empty()) o.isas = supported_isas();
  for (Isa isa : o.isas) {
    if (!isa_supported(isa)) usage_error(std::string("this CPU cannot run ") + std::string(isa_name(isa)));
  }
  if (o.threads.empty()) o.threads = usable_cpu_count() > 1 ? std::vector<int>{1, usable_cpu_count()} : std::vector<int>{1};
  if (o.machine.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    o.machine = host;
  }
  return o;
}

// ---------------------------------------------------------------- ranks (MPI or a single process)

class Ranks {
 public:
  virtual ~Ranks() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Barrier that sleeps while it waits, so that idle ranks leave the cores to the measured one.
  virtual void barrier() = 0;
  virtual double max(double value) = 0;
  virtual int broadcast(int value) = 0;
};

class SingleRank final : public Ranks {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void barrier() override {}
  double max(double value) override { return value; }
  int broadcast(int value) override { return value; }
};

#ifdef FFSIM_HFREDUCE_HAS_MPI
class MpiRanks final : public Ranks {
 public:
  explicit MpiRanks(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override {
    MPI_Request request = MPI_REQUEST_NULL;
    FFSIM_MPI_CHECK(MPI_Ibarrier(comm_, &request));
    int done = 0;
    while (true) {
      FFSIM_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
      if (done != 0) return;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  double max(double value) override {
    double result = 0;
    FFSIM_MPI_CHECK(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, comm_));
    return result;
  }
  int broadcast(int value) override {
    FFSIM_MPI_CHECK(MPI_Bcast(&value, 1, MPI_INT, 0, comm_));
    return value;
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};
#endif

// ---------------------------------------------------------------- timing and records

struct Timing {
  double min = 0;
  double median = 0;
  double max = 0;
  std::vector<double> samples;
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

Timing summarize(std::vector<double> samples) {
  Timing t;
  t.samples = samples;
  std::sort(samples.begin(), samples.end());
  t.min = samples.front();
  t.max = samples.back();
  t.median = samples[samples.size() / 2];
  return t;
}

/// Runs once to warm up, then enough repetitions to fill the budget (at least o.reps). With
/// several ranks every rank runs the same repetitions and a repetition takes the slowest rank's time.
Timing measure(const Options& o, Ranks& ranks, const std::function<void()>& run) {
  ranks.barrier();
  run();
  ranks.barrier();
  const auto start = Clock::now();
  run();
  const double first = ranks.max(seconds_since(start));
  const int reps = ranks.broadcast(std::clamp(static_cast<int>(o.budget_s / std::max(first, 1e-7)), o.reps, 500));
  std::vector<double> samples;
  for (int r = 0; r < reps; ++r) {
    if (ranks.size() > 1) ranks.barrier();
    const auto begin = Clock::now();
    run();
    samples.push_back(ranks.max(seconds_since(begin)));
  }
  return summarize(samples);
}

/// Runs `point` and `bound` alternately, repetition by repetition (single rank), so that both see
/// the same machine: on a shared machine bandwidth drifts by 2x within minutes.
std::pair<Timing, Timing> measure_interleaved(const Options& o, const std::function<void()>& point,
                                              const std::function<void()>& bound) {
  point();
  bound();
  auto time = [](const std::function<void()>& run) {
    const auto start = Clock::now();
    run();
    return seconds_since(start);
  };
  const double first = time(point) + time(bound);
  const int reps = std::clamp(static_cast<int>(2 * o.budget_s / std::max(first, 1e-7)), o.reps, 500);
  std::vector<double> point_samples;
  std::vector<double> bound_samples;
  for (int r = 0; r < reps; ++r) {
    bound_samples.push_back(time(bound));
    point_samples.push_back(time(point));
  }
  return {summarize(point_samples), summarize(bound_samples)};
}

struct BoundRef {
  std::string name;    // what was measured, e.g. "memcpy_bw" or "mpi_allreduce"
  std::string metric;  // which rate of the point it is compared with: "traffic_Bps" or "algbw_Bps"
  double value_Bps = 0;
};

struct Point {
  std::string stage;
  std::string backend = "cpu";
  std::string variant;  // isa, copy kind, transport
  std::string dtype = "fp32";
  std::string store;
  int k = 0;
  int devices = 0;
  int ranks = 1;
  int threads = 0;
  std::size_t chunk_bytes = 0;
  std::size_t bytes = 0;          // tensor size S
  double traffic_bytes = 0;       // host memory bytes read + written (or link bytes), per the stage's model
  Timing time;
  std::vector<double> rounds;     // --rounds N >= 2: the median time of each round
  std::vector<BoundRef> bounds;   // first one is the primary bound
  double algbw() const { return static_cast<double>(bytes) / time.median; }
  double traffic_rate() const { return traffic_bytes / time.median; }
  double rate(const std::string& metric) const { return metric == "traffic_Bps" ? traffic_rate() : algbw(); }
};

std::vector<Point> points;

void print_header() {
  std::printf("%-10s %-8s %-14s %-5s %-7s %3s %3s %5s %3s %7s %9s %11s %9s  %-22s %9s %6s\n", "stage", "backend",
              "variant", "dtype", "store", "k", "dev", "ranks", "thr", "chunk", "bytes", "median_us", "GB/s",
              "bound", "GB/s", "ratio");
}

void record(Point p) {
  const char* metric_note = p.bounds.empty() ? "" : (p.bounds[0].metric == "traffic_Bps" ? "" : "*");
  const double rate = p.bounds.empty() ? p.traffic_rate() : p.rate(p.bounds[0].metric);
  std::printf("%-10s %-8s %-14s %-5s %-7s %3d %3d %5d %3d %7s %9s %11.1f %8.2f%s", p.stage.c_str(), p.backend.c_str(),
              p.variant.c_str(), p.dtype.c_str(), p.store.c_str(), p.k, p.devices, p.ranks, p.threads,
              p.chunk_bytes ? format_bytes(p.chunk_bytes).c_str() : "-", format_bytes(p.bytes).c_str(),
              p.time.median * 1e6, rate / 1e9, metric_note);
  for (const BoundRef& b : p.bounds) {
    std::printf("  %-22s %9.2f %6.3f", b.name.c_str(), b.value_Bps / 1e9, p.rate(b.metric) / b.value_Bps);
  }
  std::printf("\n");
  std::fflush(stdout);
  points.push_back(std::move(p));
}

/// --rounds: the points of every round, merged per configuration (in the order of the first round):
/// the median of the rounds' medians, min and max over all samples; the bounds of the round whose
/// median is nearest to it (a bound measured beside the point, in the same round).
std::vector<Point> merge_rounds(const std::vector<std::vector<Point>>& rounds) {
  auto key = [](const Point& p) {
    return p.stage + "|" + p.backend + "|" + p.variant + "|" + p.dtype + "|" + p.store + "|" + std::to_string(p.k) +
           "|" + std::to_string(p.devices) + "|" + std::to_string(p.ranks) + "|" + std::to_string(p.threads) + "|" +
           std::to_string(p.chunk_bytes) + "|" + std::to_string(p.bytes);
  };
  std::vector<Point> merged;
  std::map<std::string, std::vector<const Point*>> of;
  for (const auto& round : rounds)
    for (const Point& p : round) {
      auto& v = of[key(p)];
      if (v.empty()) merged.push_back(p);
      v.push_back(&p);
    }
  for (Point& m : merged) {
    const auto& v = of[key(m)];
    if (v.size() < 2) continue;
    std::vector<double> medians, samples;
    for (const Point* p : v) {
      medians.push_back(p->time.median);
      samples.insert(samples.end(), p->time.samples.begin(), p->time.samples.end());
    }
    std::vector<double> sorted = medians;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    const Point* nearest = v.front();
    for (const Point* p : v)
      if (std::fabs(p->time.median - median) < std::fabs(nearest->time.median - median)) nearest = p;
    m.bounds = nearest->bounds;
    m.time = summarize(samples);
    m.time.median = median;
    m.rounds = medians;
  }
  return merged;
}

// ---------------------------------------------------------------- memory copy bound

/// Host memory buffers shared by the copy and reduce stages: (k_max + 1) x max_bytes, first
/// touched by the pool threads that use them.
class Arena {
 public:
  explicit Arena(std::size_t bytes) : buffer_(HostBuffer::allocate(bytes)) {
    std::memset(buffer_.data(), 0x3C, bytes);  // 0x3C3C... is a normal number in fp32, bf16 and fp16
  }
  std::byte* at(std::size_t offset) const { return buffer_.data() + offset; }
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  HostBuffer buffer_;
};

/// A STREAM-copy-like copy with `threads` threads: dst = src over `bytes`, counted as bytes read
/// plus bytes written (2 x bytes). Three copies compete once per (threads, bytes): the vector
/// kernel with ordinary stores, with streaming stores, and glibc memcpy split over the threads;
/// the fastest is kept and re-run beside every point it bounds (measure_interleaved).
class CopyBound {
 public:
  CopyBound(const Options& o, Arena& arena, int threads, std::size_t bytes, bool print)
      : bytes_(bytes), src_(arena.at(0)), dst_(arena.at(bytes)), pool_(threads) {
    for (StorePolicy stores : {StorePolicy::Regular, StorePolicy::NonTemporal}) {
      copiers_.push_back(std::make_unique<Reducer>(ReducerOptions{threads, best_isa(), stores, 0, 64 * KiB}));
    }
    const char* names[] = {"kernel_regular", "kernel_nt", "memcpy"};
    double best = 0;
    SingleRank local;
    for (int variant = 0; variant < 3; ++variant) {
      Point p;
      p.stage = "copy";
      p.variant = names[variant];
      p.threads = threads;
      p.bytes = bytes;
      p.traffic_bytes = 2.0 * static_cast<double>(bytes);
      p.time = measure(o, local, [&] { run(variant); });
      if (p.traffic_rate() > best) {
        best = p.traffic_rate();
        variant_ = variant;
      }
      if (print) record(std::move(p));
    }
  }
  void run() { run(variant_); }
  double traffic() const { return 2.0 * static_cast<double>(bytes_); }

 private:
  void run(int variant) {
    if (variant < 2) {
      const void* in[] = {src_};
      copiers_[static_cast<std::size_t>(variant)]->sum(DType::F32, dst_, in, bytes_ / 4);
      return;
    }
    const auto threads = static_cast<std::size_t>(pool_.size());
    const std::size_t share = (bytes_ / threads + 63) / 64 * 64;
    pool_.run(pool_.size(), [&](int part) {
      const std::size_t begin = std::min(bytes_, share * static_cast<std::size_t>(part));
      const std::size_t end = std::min(bytes_, begin + share);
      std::memcpy(dst_ + begin, src_ + begin, end - begin);
    });
  }
  std::size_t bytes_;
  std::byte* src_;
  std::byte* dst_;
  ThreadPool pool_;
  std::vector<std::unique_ptr<Reducer>> copiers_;
  int variant_ = 0;
};

// The copy bounds of one sweep, by (threads, bytes): measured once and shared by every point of the
// sweep that needs them. Each sweep starts afresh (reset_copy_bounds), so that under --rounds the
// copy points are measured, and merged, in every round like the others (until 2026-12-01 they were
// measured in the first round only and carried no rounds).
std::map<std::pair<int, std::size_t>, std::unique_ptr<CopyBound>>& copy_bounds() {
  static std::map<std::pair<int, std::size_t>, std::unique_ptr<CopyBound>> cache;
  return cache;
}
void reset_copy_bounds() { copy_bounds().clear(); }

CopyBound& copy_bound(const Options& o, Arena& arena, int threads, std::size_t bytes, bool print) {
  auto& slot = copy_bounds()[{threads, bytes}];
  if (!slot) slot = std::make_unique<CopyBound>(o, arena, threads, bytes, print);
  return *slot;
}

/// Measures `point` interleaved with the copy bound and records it with that bound.
void record_with_copy(const Options& o, Point p, CopyBound& copy, const std::function<void()>& run,
                      const std::string& bound_name) {
  auto [point_time, copy_time] = measure_interleaved(o, run, [&] { copy.run(); });
  p.time = point_time;
  p.bounds.insert(p.bounds.begin(), BoundRef{bound_name, "traffic_Bps", copy.traffic() / copy_time.median});
  record(std::move(p));
}

// ---------------------------------------------------------------- stages

/// The reduce stage's three runs in turn, repetition by repetition: the copy bound, then the
/// kernel and the plain loop in alternating order (so neither always finds the other's data
/// warm); returns the kernel's, the plain loop's and the copy's timings.
std::array<Timing, 3> measure_reduce_side_by_side(const Options& o, const std::function<void()>& kernel,
                                                  const std::function<void()>& plain, const std::function<void()>& copy) {
  const std::function<void()>* runs[] = {&kernel, &plain, &copy};
  auto time = [](const std::function<void()>& run) {
    const auto start = Clock::now();
    run();
    return seconds_since(start);
  };
  for (const auto* run : runs) (*run)();
  double first = 0;
  for (const auto* run : runs) first += time(*run);
  const int reps = std::clamp(static_cast<int>(3 * o.budget_s / std::max(first, 1e-7)), o.reps, 500);
  std::array<std::vector<double>, 3> samples;
  for (int r = 0; r < reps; ++r) {
    samples[2].push_back(time(copy));
    const int a = r % 2;  // kernel first on even repetitions, the plain loop first on odd ones
    samples[static_cast<std::size_t>(a)].push_back(time(*runs[a]));
    samples[static_cast<std::size_t>(1 - a)].push_back(time(*runs[1 - a]));
  }
  return {summarize(samples[0]), summarize(samples[1]), summarize(samples[2])};
}

void reduce_stage(const Options& o, Arena& arena) {
  for (int threads : o.threads) {
    // the reference: a plain fixed-k loop (-O3 -march=native) split over the same threads
    PlainLoop plain(threads, 64 * KiB);
    for (int k : o.ks) {
      for (std::size_t bytes : o.sizes()) {
        // the copy bound with the same threads over the same footprint ((k + 1) x bytes)
        const std::size_t copy_bytes = (static_cast<std::size_t>(k) + 1) * bytes / 2 / 64 * 64;
        CopyBound& copy = copy_bound(o, arena, threads, copy_bytes, o.has("copy"));
        if (!o.has("reduce")) continue;
        for (Isa isa : o.isas) {
          for (DType dtype : o.dtypes) {
            for (StorePolicy stores : o.stores) {
              Reducer reducer(ReducerOptions{threads, isa, stores, 0, 64 * KiB});
              std::vector<const void*> in;
              for (int j = 0; j < k; ++j) in.push_back(arena.at(static_cast<std::size_t>(j) * bytes));
              void* out = arena.at(static_cast<std::size_t>(k) * bytes);
              const std::size_t count = bytes / dtype_size(dtype);
              Point p;
              p.stage = "reduce";
              p.variant = std::string(isa_name(isa));
              p.dtype = std::string(dtype_name(dtype));
              p.store = stores == StorePolicy::NonTemporal ? "nt" : "regular";
              p.k = k;
              p.threads = threads;
              p.bytes = bytes;
              p.traffic_bytes = static_cast<double>((static_cast<std::size_t>(k) + 1) * bytes);
              // bounds: the copy rate over the same footprint, then the plain loop's rate on the same
              // buffers (ratio = kernel / plain loop), all three measured in turn
              const auto times = measure_reduce_side_by_side(
                  o, [&] { reducer.sum(dtype, out, in, count); }, [&] { plain.sum(dtype, out, in, count); },
                  [&] { copy.run(); });
              p.time = times[0];
              p.bounds.push_back({"memcpy_bw", "traffic_Bps", copy.traffic() / times[2].median});
              p.bounds.push_back({"plain_loop", "traffic_Bps", p.traffic_bytes / times[1].median});
              record(std::move(p));
            }
          }
        }
      }
    }
  }
}

std::unique_ptr<CopyBackend> make_backend(const Options& o, int devices) {
  if (o.backend == "cuda") return make_cuda_backend(std::vector<int>(static_cast<std::size_t>(devices), 0));
  return make_host_backend(devices);
}

struct LinkBounds {
  double d2h = 0;
  double h2d = 0;
  double bidirectional = 0;  // both directions at once, total bytes per second
};

// Plain copies of one device: D2H, H2D and both at once (two streams), S bytes each way.
LinkBounds copy_stages(const Options& o, Arena& arena, std::size_t bytes) {
  auto backend = make_backend(o, 1);
  DeviceBuffer device_a = backend->allocate_device(0, bytes);
  DeviceBuffer device_b = backend->allocate_device(0, bytes);
  HostBuffer host_a = backend->allocate_pinned(bytes);
  HostBuffer host_b = backend->allocate_pinned(bytes);
  std::memset(host_a.data(), 0x3C, bytes);
  std::memset(host_b.data(), 0x3C, bytes);
  backend->upload(device_a.ptr(), host_a.data(), bytes);
  backend->upload(device_b.ptr(), host_b.data(), bytes);
  auto down = backend->create_stream(0);
  auto up = backend->create_stream(0);
  SingleRank local;
  LinkBounds link;
  auto stage = [&](const char* name, const std::function<void()>& run, double traffic) {
    Point p;
    p.stage = name;
    p.backend = o.backend;
    p.devices = 1;
    p.bytes = bytes;
    p.traffic_bytes = traffic;
    if (o.backend == "host") {
      // a host stream is a thread running memcpy: its bound is the 1-thread host copy
      auto [point_time, copy_time] = measure_interleaved(o, run, [&] { copy_bound(o, arena, 1, bytes, false).run(); });
      p.time = point_time;
      p.bounds.push_back({"memcpy_bw_1thread", "traffic_Bps", 2.0 * static_cast<double>(bytes) / copy_time.median});
    } else {
      p.time = measure(o, local, run);
    }
    const double rate = p.traffic_rate();
    record(std::move(p));
    return rate;
  };
  const double host_traffic = o.backend == "host" ? 2.0 : 1.0;  // host: read + write; cuda: link bytes
  if (o.has("d2h")) {
    link.d2h = stage("d2h", [&] {
      down->copy_d2h(host_a.ptr(), device_a.ptr(), bytes);
      down->synchronize();
    }, host_traffic * static_cast<double>(bytes));
  }
  if (o.has("h2d")) {
    link.h2d = stage("h2d", [&] {
      up->copy_h2d(device_b.ptr(), host_b.ptr(), bytes);
      up->synchronize();
    }, host_traffic * static_cast<double>(bytes));
  }
  if (o.has("d2h") && o.has("h2d")) {
    link.bidirectional = stage("bidir", [&] {
      down->copy_d2h(host_a.ptr(), device_a.ptr(), bytes);
      up->copy_h2d(device_b.ptr(), host_b.ptr(), bytes);
      down->synchronize();
      up->synchronize();
    }, host_traffic * 2.0 * static_cast<double>(bytes));
  }
  return link;
}

// Bytes of host memory the double binary tree reads and writes over all ranks for S bytes, with
// single-copy messages: every message of h bytes is read once and written once (2h), and a rank
// with c children reads its partial and c received halves and writes the sum ((c + 2) h).
double tree_traffic(int ranks, std::size_t bytes) {
  double traffic = 0;
  const double half = static_cast<double>(bytes) / 2;
  for (int r = 0; r < ranks; ++r) {
    const auto links = double_binary_tree(ranks, r);
    for (const TreeLinks& tree : links) {
      const int children = (tree.children[0] >= 0 ? 1 : 0) + (tree.children[1] >= 0 ? 1 : 0);
      if (children > 0) traffic += (children + 2) * half;
      if (tree.parent >= 0) traffic += 2 * (2 * half);  // one message up, one down
    }
  }
  return traffic;
}

// Host bytes the pipeline moves on one node for S bytes per device: D2H (D reads + D writes),
// the sum (D reads + 1 write), H2D (D reads + D writes); one device skips the sum.
double pipeline_traffic(int devices, std::size_t bytes) {
  const double s = static_cast<double>(bytes);
  return devices == 1 ? 4 * s : (5.0 * devices + 1) * s;
}

void pipeline_stage(const Options& o, Ranks& ranks, Arena& arena, const LinkBounds* link_for_size,
                    std::size_t bytes, int devices, TreeAllreduce* tree, const std::string& stage) {
  auto backend = make_backend(o, devices);
  std::vector<DeviceBuffer> buffers;
  std::vector<DevicePtr<const std::byte>> src;
  std::vector<DevicePtr<std::byte>> dst;
  std::vector<std::byte> zeros(std::min(bytes, 64 * MiB), std::byte{0});
  for (int d = 0; d < devices; ++d) {
    buffers.push_back(backend->allocate_device(d, bytes));
    for (std::size_t off = 0; off < bytes; off += zeros.size()) {
      backend->upload(buffers.back().ptr() + off, zeros.data(), std::min(zeros.size(), bytes - off));
    }
    src.push_back(buffers.back().ptr());
    dst.push_back(buffers.back().ptr());
  }
  for (std::size_t chunk : o.chunks) {
    PipelineOptions options;
    options.chunk_bytes = chunk;
    options.reducer.threads = 0;
    Pipeline pipeline(*backend, options, tree);
    Point p;
    p.stage = stage;
    p.backend = o.backend;
    p.variant = tree != nullptr ? "tree" : "";
    p.devices = devices;
    p.ranks = ranks.size();
    p.threads = pipeline.reducer().threads();
    p.chunk_bytes = chunk;
    p.bytes = bytes;
    p.traffic_bytes = pipeline_traffic(devices, bytes) * ranks.size() + (tree ? tree_traffic(ranks.size(), bytes) : 0);
    const auto run = [&] { pipeline.allreduce(DType::F32, src, dst, bytes / 4); };
    if (o.backend == "host" && ranks.size() == 1) {
      // copy bandwidth with every CPU over the pipeline's footprint (its traffic / 2; DRAM-sized
      // beyond 512 MiB), run beside the pipeline
      const auto footprint = std::min({static_cast<std::size_t>(p.traffic_bytes / 2), arena.bytes() / 2, 512 * MiB}) / 64 * 64;
      record_with_copy(o, std::move(p), copy_bound(o, arena, usable_cpu_count(), footprint, false), run,
                       "host_memory_traffic");
      continue;
    }
    p.time = measure(o, ranks, run);
    if (o.backend == "cuda" && link_for_size != nullptr && tree == nullptr) {
      // D devices share one PCIe link: D x S down and D x S up. algbw can be at most
      // min(D2H, H2D) / D, and bidirectional / (2 D) when both directions run at once.
      const double d = devices;
      const double bound = std::min(std::min(link_for_size->d2h, link_for_size->h2d) / d, link_for_size->bidirectional / (2 * d));
      p.bounds.push_back({devices == 1 ? "min_d2h_h2d" : "bidir_over_2x_devices", "algbw_Bps", bound});
    } else if (o.backend == "host" && ranks.rank() == 0) {
      // several ranks: the leader measures the copy bound right after (the others wait)
      const auto footprint = std::min({static_cast<std::size_t>(p.traffic_bytes / 2), arena.bytes() / 2, 512 * MiB}) / 64 * 64;
      CopyBound& copy = copy_bound(o, arena, usable_cpu_count(), footprint, false);
      SingleRank local;
      p.bounds.push_back({"host_memory_traffic", "traffic_Bps", copy.traffic() / measure(o, local, [&] { copy.run(); }).median});
    }
    ranks.barrier();
    if (ranks.rank() != 0) continue;
    record(std::move(p));
  }
}

#ifdef FFSIM_HFREDUCE_HAS_MPI
void internode_stage(const Options& o, MpiRanks& ranks, MpiTransport& transport, Arena& arena) {
  TreeOptions tree_options;
  tree_options.slice_bytes = o.slice;
  TreeAllreduce tree(transport, tree_options);
  for (std::size_t bytes : o.sizes()) {
    const std::size_t count = bytes / 4;
    HostBuffer data = HostBuffer::allocate(bytes);
    // correctness once: integer values, exact in any order, so tree and MPI_Allreduce must agree
    auto* values = data.as<float>();
    for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>((static_cast<std::size_t>(ranks.rank()) + i) % 7);
    std::vector<float> reference(values, values + count);
    tree.allreduce(values, count, DType::F32);
    FFSIM_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, reference.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, transport.comm()));
    if (std::memcmp(values, reference.data(), bytes) != 0) {
      FFSIM_KERNEL_THROW(KernelError, "tree allreduce differs from MPI_Allreduce at ", bytes, " bytes");
    }
    std::memset(data.data(), 0, bytes);  // zeros stay zeros over repetitions
    // MPI_Allreduce and the tree alternate in pairs of repetitions, so both see the same machine
    std::vector<double> mpi_samples;
    std::vector<double> our_samples;
    for (int round = 0; round < 3; ++round) {
      const Timing m = measure(o, ranks, [&] {
        FFSIM_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_FLOAT, MPI_SUM, transport.comm()));
      });
      const Timing t = measure(o, ranks, [&] { tree.allreduce(values, count, DType::F32); });
      mpi_samples.insert(mpi_samples.end(), m.samples.begin(), m.samples.end());
      our_samples.insert(our_samples.end(), t.samples.begin(), t.samples.end());
    }
    const Timing mpi = summarize(mpi_samples);
    const Timing ours = summarize(our_samples);
    double copy = 0;
    if (ranks.rank() == 0) {
      const auto footprint =
          std::min({static_cast<std::size_t>(tree_traffic(ranks.size(), bytes) / 2), arena.bytes() / 2, 512 * MiB}) / 64 * 64;
      CopyBound& bound = copy_bound(o, arena, usable_cpu_count(), footprint, false);
      SingleRank local;
      copy = bound.traffic() / measure(o, local, [&] { bound.run(); }).median;
    }
    ranks.barrier();
    for (const bool is_mpi : {true, false}) {
      Point p;
      p.stage = is_mpi ? "mpi_allreduce" : "internode";
      p.backend = "mpi";
      p.variant = is_mpi ? "MPI_Allreduce" : "double_tree";
      p.ranks = ranks.size();
      p.chunk_bytes = is_mpi ? 0 : o.slice;
      p.bytes = bytes;
      p.traffic_bytes = tree_traffic(ranks.size(), bytes);
      p.time = is_mpi ? mpi : ours;
      if (!is_mpi) {
        p.bounds.push_back({"host_memory_traffic", "traffic_Bps", copy});
        p.bounds.push_back({"mpi_allreduce", "algbw_Bps", static_cast<double>(bytes) / mpi.median});
      }
      if (ranks.rank() == 0) record(std::move(p));
    }
  }
}
#endif

// ---------------------------------------------------------------- machine description and JSON

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

void write_json(const Options& o, const std::string& date, const std::string& mpi_version) {
  std::ofstream file(o.out);
  if (!file) FFSIM_KERNEL_THROW(KernelError, "cannot write ", o.out);
  JsonWriter json(file);
  json.begin_object();
  json.field("schema", "ffsim.hfreduce-bench/1");
  json.field("date", date);
  json.field("command", o.command);
  json.key("machine");
  json.begin_object();
  json.field("name", o.machine);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  json.field("hostname", std::string(host));
  utsname names{};
  uname(&names);
  json.field("kernel", std::string(names.sysname) + " " + names.release);
  json.field("cpu_model", cpu_model_name());
  json.field("usable_cpus", usable_cpu_count());
  json.field("cpu_features", cpu_feature_summary());
  json.key("isa");
  json.begin_array();
  for (Isa isa : supported_isas()) json.value(isa_name(isa));
  json.end_array();
  json.field("numa_nodes", numa_node_count());
  json.field("memory_bytes", static_cast<long long>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE));
  json.key("gpus");
  json.begin_array();
  std::string why;
  if (o.backend == "cuda" && cuda_device_count(&why) > 0) json.value(make_cuda_backend({0})->describe_device(0));
  json.end_array();
  json.field("mpi", mpi_version);
  if (o.backend == "host") json.field("host_streams", host_streams_pinned() ? "pinned" : "unpinned");
  json.field("compiler", std::string("g++ ") + __VERSION__);
  json.end_object();
  json.key("points");
  json.begin_array();
  for (const Point& p : points) {
    json.begin_object();
    json.field("stage", p.stage);
    json.field("backend", p.backend);
    json.field("variant", p.variant);
    json.field("dtype", p.dtype);
    json.field("store", p.store);
    json.field("k", p.k);
    json.field("devices", p.devices);
    json.field("ranks", p.ranks);
    json.field("threads", p.threads);
    json.field("chunk_bytes", p.chunk_bytes);
    json.field("bytes", p.bytes);
    json.field("traffic_bytes", p.traffic_bytes);
    json.key("time_s");
    json.begin_object();
    json.field("min", p.time.min);
    json.field("median", p.time.median);
    json.field("max", p.time.max);
    json.field("reps", p.time.samples.size());
    json.key("samples");
    json.begin_array();
    for (std::size_t i = 0; i < std::min<std::size_t>(p.time.samples.size(), 50); ++i) json.value(p.time.samples[i]);
    json.end_array();
    if (!p.rounds.empty()) {
      json.key("rounds");
      json.begin_array();
      for (double r : p.rounds) json.value(r);
      json.end_array();
    }
    json.end_object();
    json.field("algbw_Bps", p.algbw());
    json.field("traffic_Bps", p.traffic_rate());
    json.key("bounds");
    json.begin_array();
    for (const BoundRef& b : p.bounds) {
      json.begin_object();
      json.field("name", b.name);
      json.field("metric", b.metric);
      json.field("value_Bps", b.value_Bps);
      json.field("ratio", p.rate(b.metric) / b.value_Bps);
      json.end_object();
    }
    json.end_array();
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

int run(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  const std::string date = utc_now();
  std::unique_ptr<Ranks> ranks = std::make_unique<SingleRank>();
  std::string mpi_version = "none";
#ifdef FFSIM_HFREDUCE_HAS_MPI
  const bool under_mpirun = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
                            std::getenv("PMIX_RANK") != nullptr;
  std::unique_ptr<MpiSession> session;
  std::unique_ptr<MpiTransport> transport;
  if (under_mpirun) {
    session = std::make_unique<MpiSession>(&argc, &argv);
    transport = std::make_unique<MpiTransport>(MPI_COMM_WORLD);
    ranks = std::make_unique<MpiRanks>(transport->comm());
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(version, &length);
    mpi_version = std::string(version, static_cast<std::size_t>(length));
    if (const auto newline = mpi_version.find('\n'); newline != std::string::npos) mpi_version.resize(newline);
    if (const auto comma = mpi_version.find(','); comma != std::string::npos) mpi_version.resize(comma);
  }
#endif
  const bool leader = ranks->rank() == 0;
  if (leader) {
    std::printf("hfreduce-bench on %s: %s, %d usable CPUs, ISA %s, %d NUMA node(s), %d rank(s)\n", o.machine.c_str(),
                cpu_model_name().c_str(), usable_cpu_count(), std::string(isa_name(best_isa())).c_str(),
                numa_node_count(), ranks->size());
    std::printf("ratio = the point's rate / the bound (traffic GB/s vs copy GB/s, or algbw marked *)\n");
    print_header();
  }
  int k_max = 1;
  for (int k : o.ks) k_max = std::max(k_max, k);
  // only the leader measures copies and reduces; the other ranks need no arena
  Arena arena(leader ? (static_cast<std::size_t>(k_max) + 1) * o.max_bytes : 64);

  // One sweep of every stage. With --rounds N it runs N times and each point is merged over them.
  auto sweep = [&] {
    reset_copy_bounds();
    // single-node stages: the leader measures, the other ranks sleep in a barrier
    if (leader) {
      if (o.has("copy") || o.has("reduce")) reduce_stage(o, arena);
      std::map<std::size_t, LinkBounds> links;
      const bool link_stages = o.has("d2h") || o.has("h2d") || o.has("pipeline");
      std::string why;
      if (o.backend == "cuda" && cuda_device_count(&why) == 0) {
        std::printf("note: cuda backend stages skipped: %s\n", why.c_str());
      } else if (link_stages) {
        for (std::size_t bytes : o.sizes()) {
          if (o.has("d2h") || o.has("h2d")) links[bytes] = copy_stages(o, arena, bytes);
          if (!o.has("pipeline")) continue;
          SingleRank local;
          for (int devices : o.devices) {
            auto found = links.find(bytes);
            pipeline_stage(o, local, arena, found == links.end() ? nullptr : &found->second, bytes, devices, nullptr,
                           "pipeline");
          }
        }
      }
    }
    ranks->barrier();

#ifdef FFSIM_HFREDUCE_HAS_MPI
    if (transport && ranks->size() > 1) {
      auto& mpi_ranks = static_cast<MpiRanks&>(*ranks);
      if (o.has("internode")) internode_stage(o, mpi_ranks, *transport, arena);
      if (o.has("allreduce") && o.backend == "host") {
        TreeOptions tree_options;
        tree_options.slice_bytes = o.slice;
        TreeAllreduce tree(*transport, tree_options);
        for (std::size_t bytes : o.sizes()) {
          for (int devices : o.devices) pipeline_stage(o, *ranks, arena, nullptr, bytes, devices, &tree, "allreduce");
        }
      }
    }
#endif
  };
  std::vector<std::vector<Point>> rounds;
  for (int round = 0; round < o.rounds; ++round) {
    if (leader && o.rounds > 1) std::printf("round %d of %d\n", round + 1, o.rounds);
    sweep();
    rounds.push_back(std::move(points));
    points.clear();
  }
  points = merge_rounds(rounds);
  if (leader && ranks->size() == 1 && (o.has("internode") || o.has("allreduce"))) {
    std::printf("note: internode and allreduce stages need mpirun with 2 or more ranks\n");
  }
  if (leader) {
    write_json(o, date, mpi_version);
    std::printf("wrote %s (%zu points)\n", o.out.c_str(), points.size());
  }
  ranks->barrier();
  return 0;
}

}  // namespace
}  // namespace ffsim::hfreduce::bench

int main(int argc, char** argv) {
  try {
    return ffsim::hfreduce::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hfreduce-bench: %s\n", e.what());
    return 1;
  }
}
