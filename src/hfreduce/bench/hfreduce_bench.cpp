// hfreduce-bench: sweeps the stages of hfreduce and measures, in the same run, the bounds they are judged by.
// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
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
#include "nccl_table.hpp"
#include "ranks.hpp"

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
  --sizes LIST       exactly these sizes instead (e.g. 8MiB,64MiB,256MiB), ascending
  --k LIST           buffers summed by the reduce stage (default 8)
  --threads LIST     reduce threads (default 1,<usable CPUs>)
  --isa LIST         reduce paths (default: every supported one)
  --dtypes LIST      fp32,bf16,fp16 (default all)
  --stores LIST      regular,nt (default both)
  --backend NAME     host or cuda (default host)
  --devices LIST     devices per node for pipeline/allreduce (default 1,8)
  --chunks LIST      pipeline chunk sizes (default 1MiB,4MiB)
  --slice SIZE       inter-node slice (default 512KiB)
  --tree-threads N   threads driving the two trees: 1, 2, or 0 = auto (default 0: 1 below 4 CPUs)
  --window N         slices each tree keeps in flight, 1 to 64 (default 4)
  --tree-receives N  slices of a tree with receives posted at a time: 1 to the window, or 0 = auto
                     (default 0: 1 where the tree's peers share this node's memory, else the window)
  --budget SECONDS   time spent per point, at least --reps repetitions (default 0.2)
  --reps N           minimum repetitions (default 5)
  --rounds N         sweep everything N times, interleaved; a point's median is the median of its
                     rounds' medians, each round's median is recorded, and a point whose rounds
                     spread more than 10% is warned about (default 3; 1 for a single sweep)
  --timeout SECONDS  deadline of every collective the bench runs under mpirun (barriers, MPI
                     baselines, the tree): a rank that waits longer exits 4 (default 120)
  --quick            a CI-sized run (under a minute on 2 cores): sizes 64KiB..1MiB, budget 0.01 s,
                     3 reps, best ISA, fp32 and bf16, 1 and 2 devices, 256KiB chunks and slices;
                     options given explicitly win
  --machine NAME     machine name for the JSON (default: hostname)
  --out FILE         JSON output (default hfreduce-bench.json); checked before measuring
Run under mpirun for the internode and allreduce stages (2+ ranks); every rank needs the same options.
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
  std::vector<std::size_t> size_list;  // --sizes: these instead of min..max by step
  std::vector<int> ks = {8};
  std::vector<int> threads;
  std::vector<Isa> isas;
  std::vector<DType> dtypes = {DType::F32, DType::BF16, DType::F16};
  std::vector<StorePolicy> stores = {StorePolicy::Regular, StorePolicy::NonTemporal};
  std::string backend = "host";
  std::vector<int> devices = {1, 8};
  std::vector<std::size_t> chunks = {1 * MiB, 4 * MiB};
  std::size_t slice = 512 * KiB;
  int tree_threads = 0;
  int window = TreeOptions{}.window;
  int tree_receives = TreeOptions{}.receives;
  double budget_s = 0.2;
  int reps = 5;
  int rounds = 3;
  double timeout_s = 120;
  bool quick = false;
  std::string machine;
  std::string out = "hfreduce-bench.json";
  std::string command;
  bool has(const std::string& stage) const { return std::find(stages.begin(), stages.end(), stage) != stages.end(); }
  std::vector<std::size_t> sizes() const {
    if (!size_list.empty()) return size_list;
    std::vector<std::size_t> result;
    for (std::size_t s = min_bytes; s <= max_bytes; s *= step) result.push_back(s);
    return result;
  }
};

// The output's folder, and a temporary file beside the output that the JSON is written to and
// renamed from, so that a run never leaves half a file or clobbers one it could not finish.
std::string out_folder(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
std::string temporary_of(const std::string& path) { return path + ".tmp-" + std::to_string(getpid()); }

// --out is checked before anything is measured (until 2026-12-01 an unwritable one failed with exit 1
// after the whole sweep): a folder that exists and takes a new file, and no folder by that name.
void check_out(const std::string& path) {
  struct stat st {};
  if (path.empty()) usage_error("--out: expected a file name");
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    usage_error("--out: " + path + " is a folder; give a file name");
  const std::string folder = out_folder(path);
  if (stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    usage_error("--out: cannot write " + path + ": folder " + folder + " does not exist");
  const std::string probe = temporary_of(path);
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) usage_error("--out: cannot write " + path + ": " + std::strerror(errno));
  close(fd);
  unlink(probe.c_str());
  if (stat(path.c_str(), &st) == 0 && access(path.c_str(), W_OK) != 0)
    usage_error("--out: cannot replace " + path + ": " + std::strerror(errno));
}

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
    if (flag == "--quick") {
      if (!given.insert(flag).second) usage_error("--quick is given twice; give it once");
      o.quick = true;
      continue;
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
      } else if (flag == "--sizes") {
        for (const std::string& part : split(value)) {
          o.size_list.push_back(parse_size(part));
          if (o.size_list.size() > 1 && o.size_list.back() <= o.size_list[o.size_list.size() - 2])
            usage_error("--sizes: expected ascending sizes, got " + value);
        }
        if (o.size_list.empty()) usage_error("--sizes: expected a comma-separated list, got \"" + value + "\"");
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
      } else if (flag == "--tree-threads") {
        o.tree_threads = parse_int(flag, value, 0, 2);
      } else if (flag == "--window") {
        o.window = parse_int(flag, value, 1, 64);
      } else if (flag == "--tree-receives") {
        o.tree_receives = parse_int(flag, value, 0, 64);
      } else if (flag == "--timeout") {
        std::size_t end = 0;
        try {
          o.timeout_s = std::stod(value, &end);
        } catch (const std::exception&) {
          end = 0;
        }
        if (end == 0 || end != value.size() || !std::isfinite(o.timeout_s) || o.timeout_s < 0.1 || o.timeout_s > 86400)
          usage_error("--timeout: expected seconds from 0.1 to 86400, got \"" + value + "\"");
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
  if (o.quick) {
    // CI-sized: every stage runs, each on a few small sizes, a few repetitions, three rounds
    if (!given.count("--min-bytes")) o.min_bytes = 64 * KiB;
    if (!given.count("--max-bytes")) o.max_bytes = 1 * MiB;
    if (!given.count("--budget")) o.budget_s = 0.01;
    if (!given.count("--reps")) o.reps = 3;
    if (!given.count("--isa")) o.isas = {best_isa()};
    if (!given.count("--dtypes")) o.dtypes = {DType::F32, DType::BF16};
    if (!given.count("--devices")) o.devices = {1, 2};
    if (!given.count("--chunks")) o.chunks = {256 * KiB};
    if (!given.count("--slice")) o.slice = 256 * KiB;
  }
  if (o.min_bytes == 0 || o.min_bytes > o.max_bytes) usage_error("need 0 < --min-bytes <= --max-bytes");
  if (!o.size_list.empty() && (given.count("--min-bytes") || given.count("--max-bytes") || given.count("--step")))
    usage_error("--sizes replaces --min-bytes, --max-bytes and --step; give one or the other");
  if (!o.size_list.empty()) {
    o.min_bytes = o.size_list.front();
    o.max_bytes = o.size_list.back();  // the arena and the MPI limit below use the largest
  }
  if (o.tree_receives > o.window)
    usage_error("--tree-receives: expected 0 (auto) or 1 to the window (" + std::to_string(o.window) + "), got " +
                std::to_string(o.tree_receives));
  // MPI counts are ints: the MPI stages move at most INT_MAX floats per call
  if ((o.has("internode") || o.has("allreduce")) && o.max_bytes / 4 > static_cast<std::size_t>(INT_MAX))
    usage_error("--max-bytes: the MPI stages take at most 8GiB (INT_MAX floats), got " + format_bytes(o.max_bytes));
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
  // Only rank 0 writes: under mpirun the others leave --out to it (it may be another node's path).
  const char* world_rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (world_rank == nullptr) world_rank = std::getenv("PMI_RANK");
  if (world_rank == nullptr || std::string(world_rank) == "0") check_out(o.out);
  return o;
}

// ---------------------------------------------------------------- timing and records

struct Timing {
  double min = 0;
  double median = 0;
  double max = 0;
  std::vector<double> samples;
  int calls = 1;  ///< calls timed together per sample (each sample is their mean)
  /// Core-seconds per call: the CPU time (user + system, every thread) of every rank's process over
  /// the timed calls, summed over the ranks, over the calls (measure: the repetitions' barriers and
  /// time exchanges included; measure_together and measure_interleaved: the timed calls alone);
  /// -1 where not measured.
  double cpu_s = -1;
};

/// This process's CPU time so far (user + system, all its threads), seconds.
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto sec = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// A sample of a call that takes less than this is the mean of enough calls timed together to
/// reach it. One call of a few hundred nanoseconds (an 18 KiB copy) is timed to the clock's
/// reading cost and the scheduler's jitter (the quiet 2026-12-02 run: its samples are multiples of
/// ~0.1 us), which pinned the fitted per-call latency of the memory model to noise.
constexpr double kMinSampleSeconds = 50e-6;

/// Calls per sample for a call whose single-call time is `first`: 1 from kMinSampleSeconds up.
int calls_per_sample(double first) {
  if (!(first > 0) || first >= kMinSampleSeconds) return 1;
  return static_cast<int>(std::min(1000.0, std::ceil(kMinSampleSeconds / first)));
}

/// Seconds per call of `calls` calls of `run` timed together.
double time_calls(const std::function<void()>& run, int calls) {
  const auto start = Clock::now();
  for (int c = 0; c < calls; ++c) run();
  return seconds_since(start) / calls;
}

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
  // One rank alone batches sub-kMinSampleSeconds calls; several ranks time each call between
  // barriers (a repetition is the slowest rank's).
  const int calls = ranks.size() > 1 ? 1 : calls_per_sample(first);
  std::vector<double> samples;
  const double cpu_begin = process_cpu_seconds();
  for (int r = 0; r < reps; ++r) {
    if (ranks.size() > 1) ranks.barrier();
    samples.push_back(ranks.max(time_calls(run, calls)));
  }
  const double cpu = ranks.sum(process_cpu_seconds() - cpu_begin);
  Timing t = summarize(samples);
  t.calls = calls;
  t.cpu_s = cpu / (static_cast<double>(reps) * calls);
  return t;
}

/// Runs `point` and `bound` alternately, repetition by repetition (single rank), so that both see
/// the same machine: on a shared machine bandwidth drifts by 2x within minutes.
std::pair<Timing, Timing> measure_interleaved(const Options& o, const std::function<void()>& point,
                                              const std::function<void()>& bound) {
  point();
  bound();
  const double point_first = time_calls(point, 1), bound_first = time_calls(bound, 1);
  const double first = point_first + bound_first;
  const int reps = std::clamp(static_cast<int>(2 * o.budget_s / std::max(first, 1e-7)), o.reps, 500);
  const int point_calls = calls_per_sample(point_first), bound_calls = calls_per_sample(bound_first);
  std::vector<double> point_samples;
  std::vector<double> bound_samples;
  double point_cpu = 0, bound_cpu = 0;
  for (int r = 0; r < reps; ++r) {
    const double before = process_cpu_seconds();
    bound_samples.push_back(time_calls(bound, bound_calls));
    const double between = process_cpu_seconds();
    bound_cpu += between - before;
    point_samples.push_back(time_calls(point, point_calls));
    point_cpu += process_cpu_seconds() - between;
  }
  Timing p = summarize(point_samples), b = summarize(bound_samples);
  p.calls = point_calls;
  b.calls = bound_calls;
  p.cpu_s = point_cpu / (static_cast<double>(reps) * point_calls);
  b.cpu_s = bound_cpu / (static_cast<double>(reps) * bound_calls);
  return {p, b};
}

/// Several things measured side by side on every rank (e.g. the tree and the MPI baselines): each
/// runs once to warm up and once to size the repetitions, then repetition by repetition in turn
/// (each timed run right after an untimed one of its own),
/// the order rotating so that none always runs first. `setup` runs before each of its repetitions
/// (outside the timing: e.g. the allocator setting of an MPI baseline); `scale` multiplies its
/// times (0.5 for a ping-pong's round trip: one message).
struct Contender {
  std::function<void()> run;
  std::function<void()> setup;
  double scale = 1.0;
};
std::vector<Timing> measure_together(const Options& o, Ranks& ranks, const std::vector<Contender>& contenders) {
  // Each timed run follows an untimed one of the same contender: a tree allreduce right after
  // another large MPI transfer of the process runs several times slower (8 MiB, 2 ranks: 0.56 vs
  // 6.4 GB/s; docs/hfreduce.md), and each is measured in its steady state, as in a training loop
  // that repeats the same collective.
  double cpu_of_run = 0;  // this process's CPU time over the last timed run
  auto timed = [&](const Contender& c) {
    if (c.setup) c.setup();
    ranks.barrier();
    c.run();
    ranks.barrier();
    const double cpu_begin = process_cpu_seconds();
    const auto begin = Clock::now();
    c.run();
    const double t = seconds_since(begin);
    cpu_of_run = process_cpu_seconds() - cpu_begin;
    return ranks.max(t) * c.scale;
  };
  double first = 0;
  for (const Contender& c : contenders) (void)timed(c);
  for (const Contender& c : contenders) first += timed(c);
  const int reps = ranks.broadcast(std::clamp(static_cast<int>(o.budget_s / std::max(first, 1e-7)), o.reps, 500));
  std::vector<std::vector<double>> samples(contenders.size());
  std::vector<double> cpu(contenders.size(), 0.0);
  for (int r = 0; r < reps; ++r) {
    ranks.heartbeat();
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      const std::size_t c = (i + static_cast<std::size_t>(r)) % contenders.size();
      samples[c].push_back(timed(contenders[c]));
      cpu[c] += cpu_of_run;
    }
  }
  std::vector<Timing> result;
  for (std::size_t c = 0; c < samples.size(); ++c) {
    result.push_back(summarize(samples[c]));
    // Core-seconds per call over every rank (the timed runs only; a ping-pong's scale as its time's).
    result.back().cpu_s = ranks.sum(cpu[c]) / reps * contenders[c].scale;
  }
  return result;
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
  std::string placement;          // "in_place" or "out_of_place" for the allreduce stages, else empty
  int busbw_ranks = 0;            // n of busbw = algbw x 2(n - 1)/n (allreduce stages), else 0
  long long wrong = -1;           // allreduce stages: elements that differed from the exact sum in the check run
  std::size_t bytes = 0;          // tensor size S
  double traffic_bytes = 0;       // host memory bytes read + written (or link bytes), per the stage's model
  Timing time;
  std::vector<double> rounds;     // --rounds N >= 2: the median time of each round
  std::vector<BoundRef> bounds;   // first one is the primary bound
  double algbw() const { return static_cast<double>(bytes) / time.median; }
  double traffic_rate() const { return traffic_bytes / time.median; }
  double rate(const std::string& metric) const { return metric == "traffic_Bps" ? traffic_rate() : algbw(); }
  double busbw() const { return allreduce_busbw(algbw(), busbw_ranks); }
  /// Spread of the rounds' medians: (max - min) / median; 0 with one round.
  double spread() const {
    if (rounds.size() < 2) return 0;
    const auto [lo, hi] = std::minmax_element(rounds.begin(), rounds.end());
    return (*hi - *lo) / time.median;
  }
};

std::vector<Point> points;

void print_header() {
  std::printf("%-10s %-8s %-14s %-5s %-7s %3s %3s %5s %3s %7s %9s %11s %9s  %-22s %9s %6s\n", "stage", "backend",
              "variant", "dtype", "store", "k", "dev", "ranks", "thr", "chunk", "bytes", "median_us", "GB/s",
              "bound", "GB/s", "ratio");
}

Ranks* heartbeat_ranks = nullptr;  // the leader's single-node stages renew the others' deadline

void record(Point p) {
  if (heartbeat_ranks != nullptr) heartbeat_ranks->heartbeat();
  // a bound that is 0 or not finite would give an infinite or undefined ratio: it is left out
  p.bounds.erase(std::remove_if(p.bounds.begin(), p.bounds.end(),
                                [](const BoundRef& b) { return !(b.value_Bps > 0) || !std::isfinite(b.value_Bps); }),
                 p.bounds.end());
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
    return p.stage + "|" + p.backend + "|" + p.variant + "|" + p.placement + "|" + p.dtype + "|" + p.store + "|" + std::to_string(p.k) +
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
    double cpu = 0;
    for (const Point* p : v) {
      medians.push_back(p->time.median);
      samples.insert(samples.end(), p->time.samples.begin(), p->time.samples.end());
      cpu = cpu >= 0 && p->time.cpu_s >= 0 ? cpu + p->time.cpu_s / static_cast<double>(v.size()) : -1;
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
    m.time.calls = nearest->time.calls;  // the rounds size their batches alike (within 2x: the first call's time)
    m.time.cpu_s = cpu;                  // the rounds' mean (-1 if one was not measured)
    m.rounds = medians;
  }
  return merged;
}

// ---------------------------------------------------------------- memory copy bound

/// Host memory buffers shared by the copy and reduce stages: (k_max + 1) x max_bytes, first
/// touched by the pool threads that use them.
/// The measured buffers (at(): `bytes` of them) and, after them, a region of `copy_bytes` of its
/// own for the copy bound (copy_at()). A copy bound that ran over the measured buffers on 2 threads
/// left half of them in the other core's cache, dirty, so that a one-thread reduce of a cache-sized
/// tensor measured cross-core transfers instead of the kernel (2026-12-02: kernel and plain loop
/// both 108 GB/s at 64 KiB fp32 with 2 threads, 190 with 1). Copies too large for the region fall
/// back onto the measured buffers: from DRAM, nothing stays in a cache between the two.
class Arena {
 public:
  Arena(std::size_t bytes, std::size_t copy_bytes)
      : bytes_(bytes), copy_bytes_(copy_bytes), buffer_(HostBuffer::allocate(bytes + copy_bytes)) {
    std::memset(buffer_.data(), 0x3C, bytes + copy_bytes);  // 0x3C3C... is a normal number in fp32, bf16 and fp16
  }
  std::byte* at(std::size_t offset) const { return buffer_.data() + offset; }
  /// The reduce stage's buffer j (inputs 0..k-1, then the output) of `bytes`: one every bytes +
  /// kSlotPad. At a stride of exactly `bytes` the k + 1 streams of a 256 MiB reduce agree in
  /// every address bit below 2^28 and contend for the same DRAM banks and channels: on 2026-12-06
  /// (AMD EPYC Zen 3 VM, 2 cores; a k = 8 fp32 sum with streaming stores, one thread, in a
  /// throwaway harness laid out as this arena) 14.6-15.3 GB/s of traffic at a 256 MiB stride,
  /// 19.3 at 128 MiB, and 26.3-30.9 with the stride padded by any of 1 KiB to 6 MiB tried, where a
  /// memcpy of 256 MiB moved 32-33 GB/s. HFReduce's own slots are separate chunk-sized
  /// allocations (no such stride), so the padded layout is the one that measures the kernel.
  static constexpr std::size_t kSlotPad = std::size_t{64} << 10;
  std::byte* slot(int j, std::size_t bytes) const { return at(static_cast<std::size_t>(j) * (bytes + kSlotPad)); }
  /// The copy bound's source (offset 0) and destination (offset = its size) for a copy of `copy`
  /// bytes: in the copy region when both fit there, else on the measured buffers.
  std::byte* copy_at(std::size_t offset, std::size_t copy) const {
    return 2 * copy <= copy_bytes_ ? buffer_.data() + bytes_ + offset : at(offset);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  std::size_t copy_bytes_;
  HostBuffer buffer_;
};

/// A STREAM-copy-like copy with `threads` threads: dst = src over `bytes`, counted as bytes read
/// plus bytes written (2 x bytes). Three copies compete once per (threads, bytes): the vector
/// kernel with ordinary stores, with streaming stores, and glibc memcpy split over the threads;
/// the fastest is kept and re-run beside every point it bounds (measure_interleaved).
class CopyBound {
 public:
  CopyBound(const Options& o, Arena& arena, int threads, std::size_t bytes, bool print)
      : bytes_(bytes), src_(arena.copy_at(0, bytes)), dst_(arena.copy_at(bytes, bytes)), pool_(threads) {
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
  // at least a cache line: the footprint of a 4-byte tensor rounds to 0 bytes, whose copy rate is
  // 0 and whose ratio was printed as inf
  bytes = std::max<std::size_t>(bytes, 64);
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

// What the read bound's reads add up to, kept so that no compiler drops them.
volatile std::uint64_t read_bound_sink = 0;

/// The reduce stage's four runs in turn, repetition by repetition: the copy bound and the read
/// bound, then the kernel and the plain loop in alternating order (so neither always finds the
/// other's data warm); returns the kernel's, the plain loop's, the copy's and the read's timings.
std::array<Timing, 4> measure_reduce_side_by_side(const Options& o, const std::function<void()>& kernel,
                                                  const std::function<void()>& plain, const std::function<void()>& copy,
                                                  const std::function<void()>& read) {
  const std::function<void()>* runs[] = {&kernel, &plain, &copy, &read};
  for (const auto* run : runs) (*run)();
  double first = 0;
  std::array<int, 4> calls{};
  for (std::size_t i = 0; i < 4; ++i) {
    const double t = time_calls(*runs[i], 1);
    first += t;
    calls[i] = calls_per_sample(t);
  }
  const int reps = std::clamp(static_cast<int>(4 * o.budget_s / std::max(first, 1e-7)), o.reps, 500);
  std::array<std::vector<double>, 4> samples;
  for (int r = 0; r < reps; ++r) {
    for (std::size_t b : {std::size_t{2}, std::size_t{3}}) samples[b].push_back(time_calls(*runs[b], calls[b]));
    const int a = r % 2;  // kernel first on even repetitions, the plain loop first on odd ones
    samples[static_cast<std::size_t>(a)].push_back(time_calls(*runs[a], calls[static_cast<std::size_t>(a)]));
    samples[static_cast<std::size_t>(1 - a)].push_back(time_calls(*runs[1 - a], calls[static_cast<std::size_t>(1 - a)]));
  }
  std::array<Timing, 4> t{summarize(samples[0]), summarize(samples[1]), summarize(samples[2]), summarize(samples[3])};
  for (std::size_t i = 0; i < 4; ++i) t[i].calls = calls[i];
  return t;
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
              for (int j = 0; j < k; ++j) in.push_back(arena.slot(j, bytes));
              void* out = arena.slot(k, bytes);
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
              // bounds: the copy rate over the same footprint, the plain loop's rate on the same
              // buffers (ratio = kernel / plain loop), and the read bound: the traffic over the time
              // the same threads take to read the k inputs and nothing else; all four in turn
              std::uint64_t read_sink = 0;
              const auto times = measure_reduce_side_by_side(
                  o, [&] { reducer.sum(dtype, out, in, count); }, [&] { plain.sum(dtype, out, in, count); },
                  [&] { copy.run(); }, [&] { read_sink ^= plain.read(in, bytes); });
              read_bound_sink = read_sink;  // the reads have a use
              p.time = times[0];
              p.bounds.push_back({"memcpy_bw", "traffic_Bps", copy.traffic() / times[2].median});
              p.bounds.push_back({"plain_loop", "traffic_Bps", p.traffic_bytes / times[1].median});
              p.bounds.push_back({"read_bound", "traffic_Bps", p.traffic_bytes / times[3].median});
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

// Integer-valued fp32 inputs, exact in any summation order: contributor r holds (r + i) mod 7 at
// i, so the sum over `contributors` depends on i mod 7 only.
float pattern_value(int contributor, std::size_t i) {
  return static_cast<float>((static_cast<std::size_t>(contributor) + i) % 7);
}
std::size_t count_wrong(const float* values, std::size_t count, int contributors) {
  float expect[7] = {};
  for (std::size_t j = 0; j < 7; ++j)
    for (int r = 0; r < contributors; ++r) expect[j] += pattern_value(r, j);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) wrong += values[i] != expect[i % 7] ? 1 : 0;
  return wrong;
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
  // the whole allreduce, out of place too: results into a second buffer per device
  std::vector<DeviceBuffer> out_buffers;
  std::vector<DevicePtr<std::byte>> out;
  if (tree != nullptr) {
    for (int d = 0; d < devices; ++d) {
      out_buffers.push_back(backend->allocate_device(d, bytes));
      out.push_back(out_buffers.back().ptr());
    }
  }
  for (std::size_t chunk : o.chunks) {
    PipelineOptions options;
    options.chunk_bytes = chunk;
    options.reducer.threads = 0;
    Pipeline pipeline(*backend, options, tree);
    if (tree != nullptr) {
      // Checked once per placement (device d of rank r contributes pattern r x D + d; every device
      // must end with the exact sum over all n x D), then both measured side by side.
      const std::size_t count = bytes / 4;
      const int contributors = ranks.size() * devices;
      std::array<std::size_t, 2> wrong{0, 0};
      std::vector<float> host(count);
      std::vector<DevicePtr<std::byte>> same(dst);
      for (const bool in_place : {false, true}) {
        for (int d = 0; d < devices; ++d) {
          for (std::size_t i = 0; i < count; ++i) host[i] = pattern_value(ranks.rank() * devices + d, i);
          backend->upload(buffers[static_cast<std::size_t>(d)].ptr(), host.data(), count * 4);
        }
        pipeline.allreduce(DType::F32, src, in_place ? same : out, count);
        for (int d = 0; d < devices; ++d) {
          backend->download(host.data(), (in_place ? dst : out)[static_cast<std::size_t>(d)], count * 4);
          wrong[in_place ? 1 : 0] += count_wrong(host.data(), count, contributors);
        }
      }
      for (int d = 0; d < devices; ++d) {
        for (std::size_t off = 0; off < bytes; off += zeros.size()) {
          backend->upload(buffers[static_cast<std::size_t>(d)].ptr() + off, zeros.data(), std::min(zeros.size(), bytes - off));
        }
      }
      const std::vector<Timing> times = measure_together(
          o, ranks,
          {{[&] { pipeline.allreduce(DType::F32, src, out, count); }, nullptr, 1.0},
           {[&] { pipeline.allreduce(DType::F32, src, same, count); }, nullptr, 1.0}});
      ranks.barrier();
      if (ranks.rank() != 0) continue;
      for (const bool in_place : {false, true}) {
        Point p;
        p.stage = stage;
        p.backend = o.backend;
        p.variant = "tree";
        p.placement = in_place ? "in_place" : "out_of_place";
        p.busbw_ranks = contributors;
        p.devices = devices;
        p.ranks = ranks.size();
        p.threads = pipeline.reducer().threads();
        p.chunk_bytes = chunk;
        p.bytes = bytes;
        p.traffic_bytes = pipeline_traffic(devices, bytes) * ranks.size() + tree_traffic(ranks.size(), bytes);
        p.time = times[in_place ? 1 : 0];
        p.wrong = static_cast<long long>(wrong[in_place ? 1 : 0]);
        record(std::move(p));
      }
      continue;
    }
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
// ---------------------------------------------------------------- inter-node stage and its baselines

// glibc's allocator as shipped and raised. Open MPI 4.1's MPI_Allreduce mallocs a temporary
// buffer of up to the message size on every call; glibc maps one above its mmap threshold (128 KiB
// at start, raised by every mapped block freed, to at most 32 MiB = DEFAULT_MMAP_THRESHOLD_MAX on
// 64-bit) and unmaps it on free, so from 32 MiB up every call maps, page-faults and zeroes it
// anew. Raised: mmap threshold and trim threshold at INT_MAX, what
// GLIBC_TUNABLES=glibc.malloc.mmap_threshold=2147483647 gives a fresh process: the buffer comes
// from the heap and stays there. glibc cannot be put back (mallopt switches its dynamic rule off
// for good, and a heap grown by the raised setting would serve the shipped one), so the shipped
// baseline is measured first, in the first round, before the allocator is raised for the rest of
// the process; both beside the tree.
// Under AddressSanitizer malloc is the sanitizer's, not glibc's: mallopt refuses, and there is no
// threshold to raise, so the fair baseline is left out (said on stderr) and everything else runs.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGlibcAllocator = false;
#else
constexpr bool kGlibcAllocator = true;
#endif
bool allocator_raised = false;
void raise_allocator() {
  if (mallopt(M_MMAP_THRESHOLD, INT_MAX) != 1 || mallopt(M_TRIM_THRESHOLD, INT_MAX) != 1)
    FFSIM_KERNEL_THROW(KernelError, "mallopt refused to raise glibc's mmap threshold");
  allocator_raised = true;
}
// The shipped baseline's median time by (ranks, bytes, in place), from the first round.
std::map<std::tuple<int, std::size_t, bool>, double> shipped_medians;

// The bound an allreduce can reach over this transport, from two rates measured in the same run
// with every rank active at once (so that ranks sharing cores share them as in the allreduce):
//   t_ring: MPI_Sendrecv of S bytes to the next rank and from the previous one, all ranks at once
//           (each rank receives S: per-rank transport rate S / t_ring);
//   t_sum:  a 2-input fp32 sum of S bytes (out += in) on every rank at once, one thread each.
// A bandwidth-optimal allreduce (reduce-scatter then allgather, the schedule nccl-tests' busbw
// refers to) makes every rank receive 2(n-1)/n S and add (n-1)/n S, so
//   t_bound = 2(n-1)/n x t_ring + (n-1)/n x t_sum,   bound algbw = S / t_bound.
// The two terms add: over shared memory the receiver's CPU copies every message (Open MPI's CMA
// single copy), and the adds run on the same cores, so on a machine with fewer cores than busy
// threads neither hides behind the other. The double binary tree moves as many bytes in all
// (every tree edge carries its half once up and once down: 2(n-1) S over the ranks), though less
// evenly. The bound is not strict: a sum of 3 inputs (own + two children) costs less than two
// 2-input sums, and slices that stay in cache copy faster than S-sized messages, so a ratio a
// little above 1 is possible.
double allreduce_bound_time(int n, double t_ring, double t_sum) {
  const double f = static_cast<double>(n - 1) / n;
  return 2 * f * t_ring + f * t_sum;
}

void internode_stage(const Options& o, MpiRanks& ranks, MpiTransport& transport, Arena& arena) {
  TreeOptions tree_options;
  tree_options.slice_bytes = o.slice;
  tree_options.threads = o.tree_threads;
  tree_options.window = o.window;
  tree_options.receives = o.tree_receives;
  tree_options.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  TreeAllreduce tree(transport, tree_options);
  const int n = ranks.size();
  const int me = ranks.rank();
  MPI_Comm comm = transport.comm();
  Watchdog& dog = ranks.watchdog();
  // Phase shipped (first round only): the tree beside MPI_Allreduce with glibc as shipped. Phase
  // fair: the tree beside MPI_Allreduce with the threshold raised and the transport's rates.
  auto one_size = [&](std::size_t size, bool shipped_phase) {
    const std::size_t count = size / 4;
    if (count == 0) return;  // the MPI stages move whole floats
    const std::size_t bytes = count * 4;
    HostBuffer src = HostBuffer::allocate(bytes);
    HostBuffer dst = HostBuffer::allocate(bytes);
    auto* in = src.as<float>();
    auto* out = dst.as<float>();
    const int icount = static_cast<int>(count);
    auto tree_run = [&](bool in_place) {
      fault_point("tree", me);
      try {
        if (in_place) {
          tree.allreduce(out, count, DType::F32);
        } else {
          tree.allreduce(in, out, count, DType::F32);
        }
      } catch (const TimeoutError& e) {
        leave(kExitFault, e.message() + " (exit 4)");
      }
    };
    auto mpi_run = [&](bool in_place) {
      fault_point("mpi_allreduce", me);
      auto guard = dog.arm("MPI_Allreduce");
      FFSIM_MPI_CHECK(MPI_Allreduce(in_place ? MPI_IN_PLACE : static_cast<const void*>(in), out, icount, MPI_FLOAT,
                                    MPI_SUM, comm));
    };
    // The variants, each in and out of place. Names: stage, variant (stage mpi_allreduce with
    // variant MPI_Allreduce is what the files before 2026-12-01 hold: the shipped allocator).
    struct Variant {
      std::string stage, variant, title;
      std::function<void(bool)> run;
      std::function<void()> setup;
    };
    std::vector<Variant> variants = {{"internode", "double_tree", "hfreduce double binary tree", tree_run, nullptr}};
    if (shipped_phase) {
      variants.push_back({"mpi_allreduce", "MPI_Allreduce", "MPI_Allreduce, glibc allocator as shipped", mpi_run, nullptr});
    } else if (kGlibcAllocator) {
      variants.push_back(
          {"mpi_allreduce", "MPI_Allreduce_heap", "MPI_Allreduce, glibc mmap threshold raised (fair)", mpi_run, nullptr});
    }
    // correctness once per variant and placement: every rank's pattern in, the exact sum out
    std::vector<std::array<std::size_t, 2>> wrong(variants.size());
    for (std::size_t v = 0; v < variants.size(); ++v) {
      for (const bool in_place : {false, true}) {
        if (variants[v].setup) variants[v].setup();
        for (std::size_t i = 0; i < count; ++i) in[i] = pattern_value(me, i);
        if (in_place) {
          std::memcpy(out, in, bytes);
        } else {
          std::memset(out, 0, bytes);
        }
        variants[v].run(in_place);
        wrong[v][in_place ? 1 : 0] = count_wrong(out, count, n);
      }
    }
    std::memset(in, 0, bytes);  // zeros stay zeros over repetitions
    std::memset(out, 0, bytes);
    std::vector<Contender> contenders;
    for (const Variant& v : variants) {
      for (const bool in_place : {false, true}) contenders.push_back({[&v, in_place] { v.run(in_place); }, v.setup, 1.0});
    }
    // the transport: ring sendrecv (all ranks), ping-pong (ranks 0 and 1), and the 2-input sum on every rank
    const int next = (me + 1) % n;
    const int previous = (me + n - 1) % n;
    if (!shipped_phase) contenders.push_back({[&] {
                            fault_point("sendrecv", me);
                            auto guard = dog.arm("MPI_Sendrecv");
                            FFSIM_MPI_CHECK(MPI_Sendrecv(in, icount, MPI_FLOAT, next, 11, out, icount, MPI_FLOAT,
                                                         previous, 11, comm, MPI_STATUS_IGNORE));
                          },
                          nullptr, 1.0});
    if (!shipped_phase) contenders.push_back({[&] {
                            fault_point("sendrecv", me);
                            auto guard = dog.arm("the MPI ping-pong of ranks 0 and 1");
                            if (me == 0) {
                              FFSIM_MPI_CHECK(MPI_Send(in, icount, MPI_FLOAT, 1, 12, comm));
                              FFSIM_MPI_CHECK(MPI_Recv(out, icount, MPI_FLOAT, 1, 12, comm, MPI_STATUS_IGNORE));
                            } else if (me == 1) {
                              FFSIM_MPI_CHECK(MPI_Recv(out, icount, MPI_FLOAT, 0, 12, comm, MPI_STATUS_IGNORE));
                              FFSIM_MPI_CHECK(MPI_Send(in, icount, MPI_FLOAT, 0, 12, comm));
                            }
                          },
                          nullptr, 0.5});
    const Isa isa = default_isa();
    if (!shipped_phase) contenders.push_back({[&] {
                            const void* inputs[2] = {out, in};
                            reduce_sum(isa, DType::F32, out, std::span<const void* const>(inputs, 2), count);
                          },
                          nullptr, 1.0});
    const std::vector<Timing> times = measure_together(o, ranks, contenders);
    const std::size_t first_transport = variants.size() * 2;
    if (shipped_phase) {
      for (const bool in_place : {false, true}) shipped_medians[{n, bytes, in_place}] = times[2 + (in_place ? 1 : 0)].median;
      if (me != 0) return;
      for (const bool in_place : {false, true}) {
        Point p;
        p.stage = "mpi_allreduce";
        p.backend = "mpi";
        p.variant = "MPI_Allreduce";
        p.placement = in_place ? "in_place" : "out_of_place";
        p.busbw_ranks = n;
        p.ranks = n;
        p.bytes = bytes;
        p.traffic_bytes = tree_traffic(n, bytes);
        p.time = times[2 + (in_place ? 1 : 0)];
        p.wrong = static_cast<long long>(wrong[1][in_place ? 1 : 0]);
        record(std::move(p));
      }
      return;
    }
    const Timing& ring = times[first_transport];
    const Timing& sum = times[first_transport + 2];
    const double bound_algbw = static_cast<double>(bytes) / allreduce_bound_time(n, ring.median, sum.median);

    double copy = 0;  // host memory traffic bound, measured by rank 0 alone
    if (me == 0) {
      const auto footprint =
          std::min({static_cast<std::size_t>(tree_traffic(n, bytes) / 2), arena.bytes() / 2, 512 * MiB}) / 64 * 64;
      CopyBound& bound = copy_bound(o, arena, usable_cpu_count(), footprint, false);
      SingleRank local;
      copy = bound.traffic() / measure(o, local, [&] { bound.run(); }).median;
    }
    ranks.barrier();
    if (me != 0) return;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      for (const bool in_place : {false, true}) {
        const Timing& t = times[v * 2 + (in_place ? 1 : 0)];
        Point p;
        p.stage = variants[v].stage;
        p.backend = "mpi";
        p.variant = variants[v].variant;
        p.placement = in_place ? "in_place" : "out_of_place";
        p.busbw_ranks = n;
        p.ranks = n;
        p.threads = p.stage == "internode" ? tree.threads() : 0;
        p.chunk_bytes = p.stage == "internode" ? o.slice : 0;
        p.bytes = bytes;
        p.traffic_bytes = tree_traffic(n, bytes);
        p.time = t;
        p.wrong = static_cast<long long>(wrong[v][in_place ? 1 : 0]);
        if (p.stage == "internode") {
          p.bounds.push_back({"host_memory_traffic", "traffic_Bps", copy});
          const auto shipped = shipped_medians.find({n, bytes, in_place});
          if (shipped != shipped_medians.end())
            p.bounds.push_back({"mpi_allreduce", "algbw_Bps", static_cast<double>(bytes) / shipped->second});
          if (variants.size() > 1) {
            const Timing& fair = times[2 + (in_place ? 1 : 0)];
            p.bounds.push_back({"mpi_allreduce_fair", "algbw_Bps", static_cast<double>(bytes) / fair.median});
          }
          p.bounds.push_back({"allreduce_bound_sendrecv", "algbw_Bps", bound_algbw});
        }
        record(std::move(p));
      }
    }
    const char* transport_variants[] = {"sendrecv_ring", "pingpong", "sum2_every_rank"};
    for (int k = 0; k < 3; ++k) {
      Point p;
      p.stage = "mpi_p2p";
      p.backend = "mpi";
      p.variant = transport_variants[k];
      p.ranks = n;
      p.threads = 1;
      p.bytes = bytes;
      // bytes received per rank (copied by the receiver), or read + written by the sum
      p.traffic_bytes = k == 2 ? 3.0 * static_cast<double>(bytes) : static_cast<double>(bytes);
      p.time = times[first_transport + static_cast<std::size_t>(k)];
      record(std::move(p));
    }
  };
  if (!allocator_raised) {
    for (std::size_t size : o.sizes()) one_size(size, true);
    if (kGlibcAllocator) {
      raise_allocator();
    } else {
      allocator_raised = true;  // nothing to raise: the fair phase runs without its MPI_Allreduce
      if (me == 0)
        std::fprintf(stderr,
                     "hfreduce-bench: built with AddressSanitizer, whose allocator replaces glibc's: the fair "
                     "MPI_Allreduce baseline (glibc mmap threshold raised) is not measured\n");
    }
  }
  for (std::size_t size : o.sizes()) one_size(size, false);
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

// glibc's memcpy writes with non-temporal stores from glibc.cpu.x86_non_temporal_threshold bytes
// per call on, a value it derives from the caches it detects; its loader prints it (`ld.so
// --list-tunables`, glibc 2.33 and later). A fact of the measured machine that ffsim's memory model
// takes (models/cpus: memcpy_streaming_threshold). 0 where it cannot be read (another C library or
// loader path). Read before MPI starts (it runs the loader as a child process).
long long memcpy_streaming_threshold() {
  static const char key[] = "glibc.cpu.x86_non_temporal_threshold: ";
  for (const char* loader : {"/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"}) {
    if (access(loader, X_OK) != 0) continue;
    FILE* pipe = popen((std::string(loader) + " --list-tunables 2>/dev/null").c_str(), "r");
    if (pipe == nullptr) continue;
    long long value = 0;
    char line[512];
    while (std::fgets(line, sizeof(line), pipe) != nullptr)
      if (std::strncmp(line, key, sizeof(key) - 1) == 0) value = std::strtoll(line + sizeof(key) - 1, nullptr, 0);
    pclose(pipe);
    if (value > 0) return value;
  }
  return 0;
}

void write_json(const Options& o, const std::string& date, const std::string& mpi_version, long long streaming) {
  // written to a temporary file beside --out and renamed: whole or not at all
  const std::string temporary = temporary_of(o.out);
  std::ofstream file(temporary);
  if (!file) FFSIM_KERNEL_THROW(KernelError, "cannot write ", temporary, ": ", std::strerror(errno));
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
  if (streaming > 0) json.field("memcpy_streaming_threshold_bytes", streaming);
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
    if (!p.placement.empty()) json.field("placement", p.placement);
    json.field("bytes", p.bytes);
    json.field("traffic_bytes", p.traffic_bytes);
    json.key("time_s");
    json.begin_object();
    json.field("min", p.time.min);
    json.field("median", p.time.median);
    json.field("max", p.time.max);
    json.field("reps", p.time.samples.size());
    if (p.time.calls > 1) json.field("calls_per_sample", p.time.calls);
    if (p.time.cpu_s >= 0) json.field("cpu_s", p.time.cpu_s);
    json.key("samples");
    json.begin_array();
    for (std::size_t i = 0; i < std::min<std::size_t>(p.time.samples.size(), 50); ++i) json.value(p.time.samples[i]);
    json.end_array();
    if (!p.rounds.empty()) {
      json.key("rounds");
      json.begin_array();
      for (double r : p.rounds) json.value(r);
      json.end_array();
      json.field("spread", p.spread());
    }
    json.end_object();
    json.field("algbw_Bps", p.algbw());
    if (p.busbw_ranks > 0) json.field("busbw_Bps", p.busbw());
    if (p.wrong >= 0) json.field("wrong_elements", p.wrong);
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
  file << "\n";
  file.close();
  if (!file) FFSIM_KERNEL_THROW(KernelError, "cannot write ", temporary, ": ", std::strerror(errno));
  if (std::rename(temporary.c_str(), o.out.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    FFSIM_KERNEL_THROW(KernelError, "cannot write ", o.out, ": ", std::strerror(error));
  }
}

// nccl-tests' table for every allreduce-like series of the run (after the rounds are merged).
void print_nccl_tables() {
  struct Series {
    std::string title;
    int n = 0;
    std::map<std::size_t, NcclRow> rows;
  };
  std::vector<std::string> order;
  std::map<std::string, Series> series;
  for (const Point& p : points) {
    if (p.placement.empty()) continue;
    std::string key = p.stage + " " + p.variant + ", " + std::to_string(p.ranks) + " ranks";
    if (p.stage == "allreduce") key += " x " + std::to_string(p.devices) + " devices, " + format_bytes(p.chunk_bytes) + " chunks";
    if (p.stage == "internode") key += ", " + format_bytes(p.chunk_bytes) + " slices";
    auto [it, fresh] = series.try_emplace(key);
    if (fresh) {
      order.push_back(key);
      it->second.title = "hfreduce-bench " + key + " (busbw over " + std::to_string(p.busbw_ranks) + " ranks)";
      it->second.n = p.busbw_ranks;
    }
    NcclRow& row = it->second.rows[p.bytes];
    row.bytes = p.bytes;
    row.count = p.bytes / 4;
    const std::size_t wrong = p.wrong > 0 ? static_cast<std::size_t>(p.wrong) : 0;
    if (p.placement == "in_place") {
      row.in_place_s = p.time.median;
      row.in_place_wrong = wrong;
    } else {
      row.out_of_place_s = p.time.median;
      row.out_of_place_wrong = wrong;
    }
  }
  for (const std::string& key : order) {
    std::vector<NcclRow> rows;
    for (const auto& [bytes, row] : series[key].rows) rows.push_back(row);
    std::printf("\n%s", nccl_table(series[key].title, series[key].n, rows).c_str());
  }
}

// The tree against its baselines, per size: the ratios the issue asks for, in one place.
void print_tree_summary() {
  bool header = false;
  for (const Point& p : points) {
    if (p.stage != "internode") continue;
    auto ratio = [&](const char* name) {
      for (const BoundRef& b : p.bounds)
        if (b.name == name) return p.rate(b.metric) / b.value_Bps;
      return 0.0;
    };
    // a ratio this run did not measure (the fair baseline under AddressSanitizer) prints "-"
    auto text = [](double r) {
      char out[32];
      if (r > 0) {
        std::snprintf(out, sizeof(out), "%.2f", r);
      } else {
        std::snprintf(out, sizeof(out), "-");
      }
      return std::string(out);
    };
    auto cell = [&](const char* name) { return text(ratio(name)); };
    // MPI at its best: the faster of the two allocator settings at this size (the smaller ratio).
    // The shipped one is measured in the first round only (glibc's raise cannot be undone), so
    // where it is the faster the comparison crosses rounds.
    auto best = [&] {
      const double shipped = ratio("mpi_allreduce");
      const double fair = ratio("mpi_allreduce_fair");
      return text(shipped > 0 && fair > 0 ? std::min(shipped, fair) : std::max(shipped, fair));
    };
    if (!header) {
      std::printf(
          "\ntree vs baselines (algbw ratios; fair = glibc mmap threshold raised, best = the faster of shipped and "
          "fair, bound = sendrecv + sum, see docs)\n");
      std::printf("%5s %-12s %9s %9s %16s %13s %13s %13s\n", "ranks", "placement", "bytes", "tree GB/s",
                  "/ MPI shipped", "/ MPI fair", "/ MPI best", "/ bound");
      header = true;
    }
    std::printf("%5d %-12s %9s %9.2f %16s %13s %13s %13s\n", p.ranks, p.placement.c_str(),
                format_bytes(p.bytes).c_str(), p.algbw() / 1e9, cell("mpi_allreduce").c_str(),
                cell("mpi_allreduce_fair").c_str(), best().c_str(), cell("allreduce_bound_sendrecv").c_str());
  }
}

// The reduce kernel as the library runs it by default (StorePolicy::Auto: streaming stores from
// ReducerOptions::nontemporal_min_bytes of traffic up), against the plain loop and the copy bound
// and the read bound measured beside it: per (ISA, dtype, k, threads, size), the measured row of the
// store kind that Auto picks. Sizes without that row (--stores left it out) are skipped.
void print_reduce_summary() {
  const double nt_from = static_cast<double>(ReducerOptions{}.nontemporal_min_bytes);
  bool header = false;
  for (const Point& p : points) {
    if (p.stage != "reduce") continue;
    const std::string picked = p.traffic_bytes >= nt_from ? "nt" : "regular";
    if (p.store != picked) continue;
    auto ratio = [&](const char* name) {
      for (const BoundRef& b : p.bounds)
        if (b.name == name) return p.rate(b.metric) / b.value_Bps;
      return 0.0;
    };
    if (!header) {
      std::printf(
          "\nreduce (default stores: nt from %s of traffic) vs the plain loop, the copy bound and the read bound "
          "(traffic ratios; the read bound: (k + 1) x bytes over the time the same threads take to read the k "
          "inputs alone)\n",
          format_bytes(ReducerOptions{}.nontemporal_min_bytes).c_str());
      std::printf("%-7s %-5s %3s %7s %9s %-7s %9s %12s %12s %12s\n", "isa", "dtype", "k", "threads", "bytes", "stores",
                  "GB/s", "/ plain loop", "/ copy bound", "/ read bound");
      header = true;
    }
    std::printf("%-7s %-5s %3d %7d %9s %-7s %9.2f %12.2f %12.2f %12.2f\n", p.variant.c_str(), p.dtype.c_str(), p.k,
                p.threads, format_bytes(p.bytes).c_str(), p.store.c_str(), p.traffic_rate() / 1e9, ratio("plain_loop"),
                ratio("memcpy_bw"), ratio("read_bound"));
  }
}

// Points whose rounds lie more than 10% apart: the machine was disturbed while they ran.
void warn_spread(const Options& o) {
  if (o.rounds < 2) return;
  std::vector<const Point*> wide;
  for (const Point& p : points)
    if (p.spread() > 0.10) wide.push_back(&p);
  if (wide.empty()) return;
  std::printf("\nwarning: %zu of %zu points spread more than 10%% over their %d rounds (max - min of the round medians over "
              "the median); the machine was busy or drifting, rerun them where it is quieter:\n",
              wide.size(), points.size(), o.rounds);
  for (std::size_t i = 0; i < wide.size() && i < 20; ++i) {
    const Point& p = *wide[i];
    std::printf("  %s %s %s %s %s: %.0f%%\n", p.stage.c_str(), p.variant.c_str(), p.dtype.c_str(), p.placement.c_str(),
                format_bytes(p.bytes).c_str(), p.spread() * 100);
  }
  if (wide.size() > 20) std::printf("  ... and %zu more\n", wide.size() - 20);
}

// What every rank must agree on under mpirun: the options that decide the collectives it runs.
std::string plan_of(const Options& o) {
  std::string plan = "--stages ";
  for (std::size_t i = 0; i < o.stages.size(); ++i) plan += (i ? "," : "") + o.stages[i];
  plan += " --min-bytes " + format_bytes(o.min_bytes) + " --max-bytes " + format_bytes(o.max_bytes) + " --step " +
          std::to_string(o.step);
  if (!o.size_list.empty()) {
    plan += " --sizes ";
    for (std::size_t i = 0; i < o.size_list.size(); ++i) plan += (i ? "," : "") + format_bytes(o.size_list[i]);
  }
  plan += " --devices ";
  for (std::size_t i = 0; i < o.devices.size(); ++i) plan += (i ? "," : "") + std::to_string(o.devices[i]);
  plan += " --chunks ";
  for (std::size_t i = 0; i < o.chunks.size(); ++i) plan += (i ? "," : "") + format_bytes(o.chunks[i]);
  char numbers[224];
  std::snprintf(numbers, sizeof(numbers),
                " --slice %s --tree-threads %d --window %d --tree-receives %d --rounds %d --reps %d --budget %g "
                "--timeout %g --backend %s",
                format_bytes(o.slice).c_str(), o.tree_threads, o.window, o.tree_receives, o.rounds, o.reps, o.budget_s,
                o.timeout_s, o.backend.c_str());
  return plan + numbers;
}

int run(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  const std::string date = utc_now();
  const long long streaming = memcpy_streaming_threshold();
  std::unique_ptr<Ranks> ranks = std::make_unique<SingleRank>();
  std::string mpi_version = "none";
#ifdef FFSIM_HFREDUCE_HAS_MPI
  const bool under_mpirun = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
                            std::getenv("PMIX_RANK") != nullptr;
  std::unique_ptr<MpiSession> session;
  std::unique_ptr<MpiTransport> transport;
  std::unique_ptr<Watchdog> watchdog;
  if (under_mpirun) {
    session = std::make_unique<MpiSession>(&argc, &argv);
    transport = std::make_unique<MpiTransport>(MPI_COMM_WORLD);
    watchdog = std::make_unique<Watchdog>(std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000)),
                                          "rank " + std::to_string(transport->rank()) + " of " +
                                              std::to_string(transport->size()));
    ranks = std::make_unique<MpiRanks>(transport->comm(), *watchdog);
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(version, &length);
    mpi_version = std::string(version, static_cast<std::size_t>(length));
    if (const auto newline = mpi_version.find('\n'); newline != std::string::npos) mpi_version.resize(newline);
    if (const auto comma = mpi_version.find(','); comma != std::string::npos) mpi_version.resize(comma);
    // before anything is measured: ranks given different stages or sizes would wait on each other's
    // collectives for ever; they are a usage error, exit 2, naming two ranks
    ranks->agree(plan_of(o));
  }
#endif
  const bool leader = ranks->rank() == 0;
  if (leader) {
    std::printf("hfreduce-bench on %s: %s, %d usable CPUs, ISA %s, %d NUMA node(s), %d rank(s), %d round(s)\n",
                o.machine.c_str(), cpu_model_name().c_str(), usable_cpu_count(), std::string(isa_name(best_isa())).c_str(),
                numa_node_count(), ranks->size(), o.rounds);
    std::printf("ratio = the point's rate / the bound (traffic GB/s vs copy GB/s, or algbw marked *)\n");
    print_header();
  }
  int k_max = 1;
  for (int k : o.ks) k_max = std::max(k_max, k);
  // only the leader measures copies and reduces; the other ranks need no arena
  // the copy region: twice the largest copy footprint up to 128 MiB ((k + 1) x 16 MiB at k = 8:
  // every footprint a cache of today can hold), so the arena grows by at most 256 MiB
  // (k + 1) reduce buffers at their padded stride (Arena::slot)
  const std::size_t measured =
      std::max<std::size_t>((static_cast<std::size_t>(k_max) + 1) * (o.max_bytes + Arena::kSlotPad), 4096);
  Arena arena(leader ? measured : 64, leader ? std::min<std::size_t>(2 * measured, std::size_t{256} << 20) : 0);

  // One sweep of every stage. With --rounds N it runs N times and each point is merged over them.
  auto sweep = [&] {
    reset_copy_bounds();
    // single-node stages: the leader measures, the other ranks wait for it (its heartbeats renew
    // their deadline)
    const bool single_node = o.has("copy") || o.has("reduce") || o.has("d2h") || o.has("h2d") || o.has("pipeline");
    if (leader && single_node) {
      heartbeat_ranks = ranks.get();
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
      heartbeat_ranks = nullptr;
    }
    if (single_node) {
      ranks->done();
      ranks->wait_for_leader();
    }
    ranks->barrier();

#ifdef FFSIM_HFREDUCE_HAS_MPI
    if (transport && ranks->size() > 1) {
      auto& mpi_ranks = static_cast<MpiRanks&>(*ranks);
      if (o.has("internode")) internode_stage(o, mpi_ranks, *transport, arena);
      if (o.has("allreduce")) {  // host or cuda backend (virtual devices share GPU 0)
        TreeOptions tree_options;
        tree_options.slice_bytes = o.slice;
        tree_options.threads = o.tree_threads;
        tree_options.window = o.window;
        tree_options.receives = o.tree_receives;
        tree_options.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
        TreeAllreduce tree(*transport, tree_options);
        for (std::size_t bytes : o.sizes()) {
          if (bytes < 4) continue;
          for (int devices : o.devices)
            pipeline_stage(o, *ranks, arena, nullptr, bytes / 4 * 4, devices, &tree, "allreduce");
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
    print_nccl_tables();
    print_reduce_summary();
    print_tree_summary();
    warn_spread(o);
    write_json(o, date, mpi_version, streaming);
    std::printf("wrote %s (%zu points)\n", o.out.c_str(), points.size());
    std::fflush(stdout);
  }
  ranks->barrier();
  return 0;
}

}  // namespace
}  // namespace ffsim::hfreduce::bench

int main(int argc, char** argv) {
  try {
    return ffsim::hfreduce::bench::run(argc, argv);
  } catch (const ffsim::hfreduce::TimeoutError& e) {
    ffsim::hfreduce::bench::leave(ffsim::hfreduce::bench::kExitFault, e.what());
  } catch (const std::exception& e) {
    // Under mpirun the other ranks may wait for this one: leave at once (MPI_Finalize would wait
    // for them); mpirun ends the job.
    ffsim::hfreduce::bench::leave(1, e.what());
  }
}
