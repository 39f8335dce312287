// Tests of the pipeline (Algorithm 1) on the host backend: 1..8 devices, every size, with and without nodes.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <sched.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ffsim/hfreduce/backend.hpp"
#include "ffsim/hfreduce/cpu.hpp"
#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/pipeline.hpp"
#include "ffsim/hfreduce/transport.hpp"
#include "test_util.hpp"

using namespace ffsim::hfreduce;
using namespace std::chrono_literals;

namespace {

struct Devices {
  std::vector<DeviceBuffer> src;
  std::vector<DeviceBuffer> dst;
  std::vector<DevicePtr<const std::byte>> src_ptrs;
  std::vector<DevicePtr<std::byte>> dst_ptrs;
};

// Device d holds pattern(first_contributor + d, i); in_place makes dst the same buffer as src.
Devices make_devices(CopyBackend& backend, DType dtype, std::size_t count, int first_contributor, bool in_place) {
  Devices devices;
  const std::size_t bytes = count * dtype_size(dtype);
  for (int d = 0; d < backend.device_count(); ++d) {
    devices.src.push_back(backend.allocate_device(d, bytes));
    const auto data = test::pattern_buffer(dtype, first_contributor + d, count);
    backend.upload(devices.src.back().ptr(), data.data(), bytes);
    devices.src_ptrs.push_back(devices.src.back().ptr());
    if (in_place) {
      devices.dst_ptrs.push_back(devices.src.back().ptr());
    } else {
      devices.dst.push_back(backend.allocate_device(d, bytes));
      devices.dst_ptrs.push_back(devices.dst.back().ptr());
    }
  }
  return devices;
}

std::size_t check_all(CopyBackend& backend, const Devices& devices, DType dtype, std::size_t count, int contributors) {
  std::vector<std::byte> host(count * dtype_size(dtype));
  for (std::size_t d = 0; d < devices.dst_ptrs.size(); ++d) {
    backend.download(host.data(), devices.dst_ptrs[d], host.size());
    const std::size_t wrong = test::first_wrong(dtype, host.data(), count, contributors);
    if (wrong != count) return wrong;
  }
  return count;
}

}  // namespace

TEST_CASE("pipeline: host backend with 1..8 devices for every size and dtype and chunk and depth variants") {
  // Device d contributes pattern(d, i); with D devices every device must end with exactly
  // pattern_sum(D, i) (integers, exact in every dtype).
  const std::size_t sizes[] = {0, 1, 2, 3, 7, 64, 100, 1000, 4097, 30011};
  struct Shape {
    std::size_t chunk_bytes;
    int depth;
  };
  // one chunk; tiny chunks (many, ragged last); depth 1 (no overlap) and 3
  const Shape shapes[] = {{std::size_t{1} << 20, 3}, {100, 1}, {256, 3}, {4096, 2}};
  for (int devices = 1; devices <= 8; ++devices) {
    auto backend = make_host_backend(devices);
    for (const Shape& shape : shapes) {
      PipelineOptions options;
      options.chunk_bytes = shape.chunk_bytes;
      options.depth = shape.depth;
      options.reducer.threads = 2;
      Pipeline pipeline(*backend, options);
      for (DType dtype : test::kAllDtypes) {
        for (std::size_t count : sizes) {
          if (shape.chunk_bytes < 1024 && count > 4097) continue;  // > 1000 chunks: slow, adds nothing
          for (bool in_place : {true, false}) {
            Devices buffers = make_devices(*backend, dtype, count, 0, in_place);
            pipeline.allreduce(dtype, buffers.src_ptrs, buffers.dst_ptrs, count);
            INFO("devices=", devices, " chunk=", shape.chunk_bytes, " depth=", shape.depth, " ", dtype_name(dtype),
                 " count=", count, " in_place=", in_place);
            REQUIRE(check_all(*backend, buffers, dtype, count, devices) == count);
          }
        }
      }
    }
  }
}

TEST_CASE("pipeline: waits for each device's ready event before reading") {
  // A user stream on every device copies the data in first (H2D from host); the pipeline gets that
  // stream's event and must see the copied data, not what was there before. Each stream first
  // copies 64 MiB elsewhere (milliseconds), so the fresh data lands well after the pipeline starts:
  // a pipeline that did not wait would read the stale contents every time (without this, one that
  // skipped the waits passed 145 of 200 runs).
  const int devices = 3;
  const std::size_t busy_bytes = std::size_t{64} << 20;
  const std::vector<std::byte> busy_src(busy_bytes, std::byte{1});
  const std::size_t count = 5000;
  auto backend = make_host_backend(devices);
  PipelineOptions options;
  options.chunk_bytes = 4096;
  Pipeline pipeline(*backend, options);
  Devices buffers = make_devices(*backend, DType::F32, count, 100, true);  // stale contents
  std::vector<std::vector<std::byte>> fresh;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<std::unique_ptr<Event>> events;
  std::vector<Event*> ready;
  std::vector<DeviceBuffer> busy;
  for (int d = 0; d < devices; ++d) {
    fresh.push_back(test::pattern_buffer(DType::F32, d, count));
    streams.push_back(backend->create_stream(d));
    events.push_back(backend->create_event(d));
    busy.push_back(backend->allocate_device(d, busy_bytes));
    streams.back()->copy_h2d(busy.back().ptr(), HostPtr<const std::byte>(busy_src.data()), busy_bytes);
    streams.back()->copy_h2d(buffers.dst_ptrs[static_cast<std::size_t>(d)], HostPtr<const std::byte>(fresh.back().data()),
                             count * 4);
    streams.back()->record(*events.back());
    ready.push_back(events.back().get());
  }
  pipeline.allreduce(DType::F32, buffers.src_ptrs, buffers.dst_ptrs, count, ready);
  // A no-op when the pipeline waited; otherwise the late fresh copies land on the results here.
  for (auto& s : streams) s->synchronize();
  CHECK(check_all(*backend, buffers, DType::F32, count, devices) == count);
}

TEST_CASE("pipeline: with the inter-node stage 3 nodes x 2 devices sum over all 6 devices") {
  // Node n's device d contributes pattern(2n + d, i): the result on every device of every node is
  // pattern_sum(6, i).
  const int nodes = 3;
  LoopbackHub hub(nodes);
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{999}, std::size_t{70001}}) {
    test::run_ranks(nodes, [&](int node) {
      auto transport = hub.connect(node);
      TreeOptions tree_options;
      tree_options.slice_bytes = 2048;
      tree_options.timeout = 20s;
      TreeAllreduce tree(*transport, tree_options);
      auto backend = make_host_backend(2);
      PipelineOptions options;
      options.chunk_bytes = 8192;
      options.reducer.threads = 1;
      Pipeline pipeline(*backend, options, &tree);
      for (DType dtype : test::kAllDtypes) {
        Devices buffers = make_devices(*backend, dtype, count, 2 * node, node == 1);
        pipeline.allreduce(dtype, buffers.src_ptrs, buffers.dst_ptrs, count);
        INFO("node=", node, " ", dtype_name(dtype), " count=", count);
        REQUIRE(check_all(*backend, buffers, dtype, count, 2 * nodes) == count);
      }
    });
  }
}

TEST_CASE("pipeline: an inter-node timeout surfaces as TimeoutError") {
  // (The pipeline also drains its copies before rethrowing; nothing is in flight here when the tree
  // times out, so that part is checked only by reading pipeline.cpp's catch.)
  const int nodes = 2;
  LoopbackHub hub(nodes);
  auto transport = hub.connect(0);  // node 1 never shows up
  TreeOptions tree_options;
  tree_options.timeout = 300ms;
  TreeAllreduce tree(*transport, tree_options);
  auto backend = make_host_backend(2);
  PipelineOptions options;
  options.chunk_bytes = 1024;
  Pipeline pipeline(*backend, options, &tree);
  Devices buffers = make_devices(*backend, DType::F32, 10000, 0, true);
  CHECK_THROWS_AS(pipeline.allreduce(DType::F32, buffers.src_ptrs, buffers.dst_ptrs, 10000), TimeoutError);
}

TEST_CASE("pipeline: wrong device counts are errors with context") {
  auto backend = make_host_backend(2);
  Pipeline pipeline(*backend);
  std::vector<DevicePtr<const std::byte>> src(1);
  std::vector<DevicePtr<std::byte>> dst(1);
  try {
    pipeline.allreduce(DType::F32, src, dst, 10);
    FAIL("accepted one buffer for two devices");
  } catch (const KernelError& e) {
    CHECK(e.message() == "pipeline over 2 devices got 1 sources and 1 destinations");
  }
}

namespace {
// Threads of this process whose affinity is a single CPU: thread id -> that CPU.
std::map<long, int> single_cpu_threads() {
  std::map<long, int> r;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    const long tid = std::stol(entry.path().filename().string());
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(static_cast<pid_t>(tid), sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) continue;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) r[tid] = cpu;
  }
  return r;
}
}  // namespace

TEST_CASE("host backend: HFREDUCE_HOST_PIN=1 runs each stream's copy thread on its own CPU in turn - unset or 0 leaves it free") {
  if (usable_cpu_count() < 2) {
    MESSAGE("one usable CPU: nothing to pin apart");
    return;
  }
  const auto before = single_cpu_threads();
  auto new_pinned = [&] {
    std::vector<int> cpus;
    for (const auto& [tid, cpu] : single_cpu_threads())
      if (!before.count(tid)) cpus.push_back(cpu);
    return cpus;
  };
  for (const char* off : {static_cast<const char*>(nullptr), "0"}) {
    if (off) ::setenv("HFREDUCE_HOST_PIN", off, 1);
    else ::unsetenv("HFREDUCE_HOST_PIN");
    CHECK_FALSE(host_streams_pinned());
    auto backend = make_host_backend(1);
    auto down = backend->create_stream(0);
    auto up = backend->create_stream(0);
    CHECK(new_pinned().empty());  // the new threads inherit the process's mask of 2 or more CPUs
  }
  ::setenv("HFREDUCE_HOST_PIN", "1", 1);
  CHECK(host_streams_pinned());
  {
    auto backend = make_host_backend(1);
    auto down = backend->create_stream(0);
    auto up = backend->create_stream(0);
    // Two new threads, each bound to one CPU, and not the same one (consecutive streams take
    // consecutive CPUs of the allowed set, which has at least 2).
    const auto cpus = new_pinned();
    REQUIRE(cpus.size() == 2);
    CHECK(cpus[0] != cpus[1]);
  }
  ::setenv("HFREDUCE_HOST_PIN", "yes", 1);
  CHECK_THROWS_WITH_AS(make_host_backend(1), doctest::Contains("HFREDUCE_HOST_PIN=yes: expected 1"), KernelError);
  ::unsetenv("HFREDUCE_HOST_PIN");
}

TEST_CASE(
    "host backend: synchronize returns after the stream's work, whether it polled, slept or found many copy threads "
    "busy") {
  // A host-side synchronize polls for up to ThreadPool::kDefaultSpin (100 us) and then sleeps, and
  // sleeps at once while more copy threads are busy than the process has CPUs. Whichever way it
  // waited, the bytes its stream copied must be there when it returns (the copy thread's
  // completion publishes them). One stream: 4 KiB (done within the polling on any machine), 16 and
  // 64 MiB (milliseconds: past the polling, the sleeping path). CPUs + 1 and 3 x CPUs + 1 streams
  // copying 4 KiB or 16 MiB at once: more busy copy threads than CPUs, so the first waits sleep at
  // once, and the last ones, with fewer streams left busy, poll again.
  const int cpus = usable_cpu_count();
  for (const int streams_n : {1, cpus + 1, 3 * cpus + 1}) {
    for (const std::size_t bytes : {std::size_t{4096}, std::size_t{16} << 20, std::size_t{64} << 20}) {
      if (streams_n > 1 && bytes > (std::size_t{16} << 20)) continue;  // the many-stream case at 16 MiB
      CAPTURE(streams_n);
      CAPTURE(bytes);
      auto backend = make_host_backend(streams_n);
      std::vector<std::vector<std::byte>> host;
      std::vector<DeviceBuffer> device;
      std::vector<std::unique_ptr<Stream>> streams;
      std::vector<std::unique_ptr<Event>> events;
      for (int s = 0; s < streams_n; ++s) {
        host.emplace_back(bytes, std::byte{static_cast<unsigned char>(s + 1)});
        device.push_back(backend->allocate_device(s, bytes));
        streams.push_back(backend->create_stream(s));
        events.push_back(backend->create_event(s));
      }
      // every stream: H2D of its pattern, an event, then D2H back into a zeroed host buffer
      std::vector<std::vector<std::byte>> back(static_cast<std::size_t>(streams_n), std::vector<std::byte>(bytes));
      for (int s = 0; s < streams_n; ++s) {
        const auto i = static_cast<std::size_t>(s);
        streams[i]->copy_h2d(device[i].ptr(), HostPtr<const std::byte>(host[i].data()), bytes);
        streams[i]->record(*events[i]);
        streams[i]->copy_d2h(HostPtr<std::byte>(back[i].data()), DevicePtr<const std::byte>(device[i].ptr().get()),
                             bytes);
      }
      for (int s = 0; s < streams_n; ++s) {
        const auto i = static_cast<std::size_t>(s);
        events[i]->synchronize();
        CHECK(events[i]->query());
        streams[i]->synchronize();
        CHECK(back[i] == host[i]);
      }
    }
  }
}
