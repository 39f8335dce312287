// Tests of the HfReduce API: local ranks as threads, nodes over loopback, fused destination, errors.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/hfreduce.hpp"
#include "test_util.hpp"

using namespace ffsim::hfreduce;
using namespace std::chrono_literals;

namespace {

NodeOptions node_options(int local_size, int node_rank = 0, int node_count = 1) {
  NodeOptions options;
  options.local_size = local_size;
  options.node_rank = node_rank;
  options.node_count = node_count;
  options.pipeline.chunk_bytes = 4096;
  options.pipeline.reducer.threads = 1;
  options.tree.slice_bytes = 2048;
  options.tree.timeout = 20s;
  options.timeout = 20s;
  return options;
}

struct Tensor {
  const char* name;
  std::size_t count;
  DType dtype;
};

const Tensor kTensors[] = {{"embedding", 10007, DType::F32}, {"bias", 1, DType::BF16}, {"empty", 0, DType::F32},
                           {"layer.0.w", 4096, DType::F16}, {"layer.0.b", 33, DType::F32}};

}  // namespace

TEST_CASE("api: 4 local ranks as threads reduce 5 tensors twice in place to exact sums") {
  // Local rank r contributes pattern(r + 10 * round, i) to every tensor; after synchronize each
  // tensor holds pattern sums over the 4 ranks of that round. The two rounds check that names
  // can be reduced again and that queued operations keep their order.
  const int local_size = 4;
  auto backend = make_host_backend(local_size);
  NodeGroup group(*backend, nullptr, node_options(local_size));
  test::run_ranks(local_size, [&](int local_rank) {
    HfReduce hf(group, local_rank, local_size, 0, 1);
    auto stream = backend->create_stream(local_rank);
    for (const Tensor& t : kTensors) hf.register_tensor(t.name, t.count, t.dtype);
    for (int round = 0; round < 2; ++round) {
      std::vector<DeviceBuffer> buffers;
      for (const Tensor& t : kTensors) {
        buffers.push_back(backend->allocate_device(local_rank, t.count * dtype_size(t.dtype)));
        const auto data = test::pattern_buffer(t.dtype, local_rank * 10 + round, t.count);
        backend->upload(buffers.back().ptr(), data.data(), data.size());
        hf.async_reduce(*stream, t.name, buffers.back().ptr(), t.count);
      }
      hf.synchronize(*stream);
      for (std::size_t j = 0; j < buffers.size(); ++j) {
        const Tensor& t = kTensors[j];
        std::vector<std::byte> host(t.count * dtype_size(t.dtype));
        backend->download(host.data(), buffers[j].ptr(), host.size());
        // the contributors of this round are pattern indices round, 10 + round, 20 + round, 30 + round
        for (std::size_t i = 0; i < t.count; ++i) {
          int expected = 0;
          for (int r = 0; r < local_size; ++r) expected += test::pattern(r * 10 + round, i);
          INFO("rank ", local_rank, " round ", round, " tensor ", t.name, " element ", i);
          REQUIRE(test::get(t.dtype, host.data(), i) == static_cast<float>(expected));
        }
      }
    }
  });
}

TEST_CASE("api: the fused destination receives every tensor at its offset and sources stay unchanged") {
  const int local_size = 2;
  auto backend = make_host_backend(local_size);
  NodeGroup group(*backend, nullptr, node_options(local_size));
  test::run_ranks(local_size, [&](int local_rank) {
    HfReduce hf(group, local_rank, local_size, 0, 1);
    auto stream = backend->create_stream(local_rank);
    for (const Tensor& t : kTensors) hf.register_tensor(t.name, t.count, t.dtype);
    // offsets: registration order, each on a 256-byte boundary: embedding at 0 (40028 bytes),
    // bias at 40192 (2 bytes), empty at 40448, layer.0.w at 40448 (8192 bytes), layer.0.b at 48640
    CHECK(hf.fused_offset("embedding") == 0);
    CHECK(hf.fused_offset("bias") == 40192);
    CHECK(hf.fused_offset("layer.0.w") == 40448);
    CHECK(hf.fused_offset("layer.0.b") == 48640);
    CHECK(hf.fused_bytes() == 48640 + 33 * 4);
    DeviceBuffer fused = backend->allocate_device(local_rank, hf.fused_bytes());
    hf.set_fused_destination(fused.ptr(), fused.bytes());
    std::vector<DeviceBuffer> sources;
    for (const Tensor& t : kTensors) {
      sources.push_back(backend->allocate_device(local_rank, t.count * dtype_size(t.dtype)));
      const auto data = test::pattern_buffer(t.dtype, local_rank, t.count);
      backend->upload(sources.back().ptr(), data.data(), data.size());
      hf.async_reduce(*stream, t.name, sources.back().ptr(), t.count);
    }
    hf.synchronize(*stream);
    for (std::size_t j = 0; j < sources.size(); ++j) {
      const Tensor& t = kTensors[j];
      std::vector<std::byte> host(t.count * dtype_size(t.dtype));
      backend->download(host.data(), fused.ptr() + hf.fused_offset(t.name), host.size());
      CHECK(test::first_wrong(t.dtype, host.data(), t.count, local_size) == t.count);
      backend->download(host.data(), sources[j].ptr(), host.size());
      const auto original = test::pattern_buffer(t.dtype, local_rank, t.count);
      CHECK(host == original);
    }
  });
}

TEST_CASE("api: 3 nodes x 2 local ranks over loopback give every rank the sum over all 6") {
  const int nodes = 3;
  const int local_size = 2;
  LoopbackHub hub(nodes);
  test::run_ranks(nodes, [&](int node) {
    auto transport = hub.connect(node);
    auto backend = make_host_backend(local_size);
    NodeGroup group(*backend, transport.get(), node_options(local_size, node, nodes));
    test::run_ranks(local_size, [&](int local_rank) {
      HfReduce hf(group, local_rank, local_size, node, nodes);
      auto stream = backend->create_stream(local_rank);
      for (const Tensor& t : kTensors) hf.register_tensor(t.name, t.count, t.dtype);
      std::vector<DeviceBuffer> buffers;
      for (const Tensor& t : kTensors) {
        buffers.push_back(backend->allocate_device(local_rank, t.count * dtype_size(t.dtype)));
        const auto data = test::pattern_buffer(t.dtype, node * local_size + local_rank, t.count);
        backend->upload(buffers.back().ptr(), data.data(), data.size());
        hf.async_reduce(*stream, t.name, buffers.back().ptr(), t.count);
      }
      hf.synchronize(*stream);
      for (std::size_t j = 0; j < buffers.size(); ++j) {
        const Tensor& t = kTensors[j];
        std::vector<std::byte> host(t.count * dtype_size(t.dtype));
        backend->download(host.data(), buffers[j].ptr(), host.size());
        INFO("node ", node, " rank ", local_rank, " tensor ", t.name);
        CHECK(test::first_wrong(t.dtype, host.data(), t.count, nodes * local_size) == t.count);
      }
    });
  });
}

TEST_CASE("api: a tensor registered differently on another node is a MismatchError on every rank") {
  const int nodes = 3;
  LoopbackHub hub(nodes);
  std::vector<std::string> messages(nodes);
  test::run_ranks(nodes, [&](int node) {
    auto transport = hub.connect(node);
    auto backend = make_host_backend(1);
    NodeGroup group(*backend, transport.get(), node_options(1, node, nodes));
    HfReduce hf(group, 0, 1, node, nodes);
    auto stream = backend->create_stream(0);
    const std::size_t count = node == 2 ? 99 : 100;
    hf.register_tensor("w", count, DType::F32);
    DeviceBuffer buffer = backend->allocate_device(0, count * 4);
    hf.async_reduce(*stream, "w", buffer.ptr(), count);
    try {
      hf.synchronize(*stream);
      messages[static_cast<std::size_t>(node)] = "no error";
    } catch (const MismatchError& e) {
      messages[static_cast<std::size_t>(node)] = e.message();
    }
  });
  // tree 0 for 3 ranks: 0 -> 2 -> 1; node 2 compares node 1's description with its own first
  CHECK(messages[0] == "ranks disagree: rank 2 has tensor 'w': 99 x fp32, rank 1 has tensor 'w': 100 x fp32");
  CHECK(messages[1] == messages[0]);
  CHECK(messages[2] == messages[0]);
}

TEST_CASE("api: a local rank that never calls async_reduce is a TimeoutError naming it") {
  const int local_size = 3;
  auto backend = make_host_backend(local_size);
  NodeOptions options = node_options(local_size);
  options.timeout = 300ms;
  NodeGroup group(*backend, nullptr, options);
  HfReduce rank0(group, 0, local_size, 0, 1);
  HfReduce rank1(group, 1, local_size, 0, 1);
  HfReduce rank2(group, 2, local_size, 0, 1);
  for (HfReduce* hf : {&rank0, &rank1, &rank2}) hf->register_tensor("w", 8, DType::F32);
  auto stream0 = backend->create_stream(0);
  auto stream2 = backend->create_stream(2);
  DeviceBuffer b0 = backend->allocate_device(0, 32);
  DeviceBuffer b2 = backend->allocate_device(2, 32);
  rank0.async_reduce(*stream0, "w", b0.ptr(), 8);
  rank2.async_reduce(*stream2, "w", b2.ptr(), 8);
  const auto start = std::chrono::steady_clock::now();
  try {
    rank0.synchronize(*stream0);
    FAIL("no timeout");
  } catch (const TimeoutError& e) {
    CHECK(e.message() == "local rank 1 of node 0 did not call async_reduce for tensor 'w' within 300 ms (local rank 0 did)");
  }
  CHECK(std::chrono::steady_clock::now() - start < 2300ms);
  CHECK_THROWS_AS(rank2.synchronize(*stream2), TimeoutError);
  // the group is broken now
  CHECK_THROWS_AS(rank0.async_reduce(*stream0, "w", b0.ptr(), 8), TimeoutError);
}

TEST_CASE("api: misuse is reported with context") {
  auto backend = make_host_backend(2);
  NodeGroup group(*backend, nullptr, node_options(2));
  HfReduce rank0(group, 0, 2, 0, 1);
  auto stream0 = backend->create_stream(0);
  auto stream1 = backend->create_stream(1);
  DeviceBuffer buffer = backend->allocate_device(0, 400);
  auto message_of = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const KernelError& e) {
      return e.message();
    }
    return "no error";
  };
  CHECK(message_of([&] { rank0.async_reduce(*stream0, "w", buffer.ptr(), 100); }) ==
        "local rank 0: tensor 'w' is not registered");
  rank0.register_tensor("w", 100, DType::F32);
  CHECK(message_of([&] { rank0.async_reduce(*stream0, "w", buffer.ptr(), 99); }) ==
        "local rank 0: async_reduce of tensor 'w' with 99 elements; it is registered with 100");
  CHECK(message_of([&] { rank0.async_reduce(*stream1, "w", buffer.ptr(), 100); }) ==
        "local rank 0: async_reduce on a stream of device 1");
  CHECK(message_of([&] { rank0.register_tensor("w", 100, DType::BF16); }) ==
        "local rank 0 registers tensor 'w' as 100 x bf16 but it is registered as 100 x fp32");
  CHECK(message_of([&] { HfReduce again(group, 0, 2, 0, 1); }) == "local rank 0 already has an HfReduce handle");
  CHECK(message_of([&] { HfReduce wrong(group, 1, 4, 0, 1); }) ==
        "HfReduce(local_rank 1, local_size 4, node_rank 0, node_count 1) does not match its node group "
        "(local_size 2, node_rank 0, node_count 1)");
  HfReduce rank1(group, 1, 2, 0, 1);
  CHECK(message_of([&] { rank1.async_reduce(*stream1, "w", buffer.ptr(), 100); }) ==
        "local rank 1 did not register tensor 'w'");
  rank0.set_fused_destination(buffer.ptr(), 100);
  CHECK(message_of([&] { rank0.async_reduce(*stream0, "w", buffer.ptr(), 100); }) ==
        "local rank 0: tensor 'w' ends at byte 400 of the fused destination, which has 100");
}
