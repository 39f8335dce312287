// MPI integration test of hfreduce, run under mpirun: exact sums, a killed rank, mismatches.
// SPDX-License-Identifier: Apache-2.0
//
// Usage: mpirun -np N hfreduce_mpi_test allreduce|kill|mismatch [--serialize] [--np N]
// Each rank prints "hfreduce-mpi: rank R <verdict>" lines; allreduce and mismatch exit non-zero
// on any failure, kill is judged by run_mpi_kill_test.cmake from the lines of the survivors.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/hfreduce.hpp"
#include "ffsim/hfreduce/mpi_transport.hpp"
#include "ffsim/hfreduce/tree.hpp"
#include "test_util.hpp"

using namespace ffsim::hfreduce;
using namespace std::chrono_literals;

namespace {

int failures = 0;

void report(int rank, bool ok, const std::string& what) {
  std::printf("hfreduce-mpi: rank %d %s %s\n", rank, ok ? "ok" : "FAILED", what.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

// Every rank holds pattern(rank, i); every rank must end with pattern_sum(ranks, i), exactly.
// With `threads` tree threads (1: one polls both trees; 2: one per tree); the large size out of place too.
void test_tree(MpiTransport& transport, int threads) {
  TreeOptions options;
  options.slice_bytes = 64 << 10;
  options.timeout = 60s;
  options.threads = threads;
  TreeAllreduce tree(transport, options);
  {
    const std::size_t count = (std::size_t{1} << 20) + 3;
    const auto src = test::pattern_buffer(DType::F32, transport.rank(), count);
    std::vector<std::byte> dst(src.size());
    tree.allreduce(src.data(), dst.data(), count, DType::F32);
    const std::size_t wrong = test::first_wrong(DType::F32, dst.data(), count, transport.size());
    report(transport.rank(), wrong == count && src == test::pattern_buffer(DType::F32, transport.rank(), count),
           detail::concat("tree out of place, ", threads, " thread(s), fp32 count ", count,
                          wrong == count ? std::string(" exact") : detail::concat(" wrong from element ", wrong)));
  }
  for (DType dtype : test::kAllDtypes) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{4097},
                              (std::size_t{1} << 20) + 3}) {
      auto data = test::pattern_buffer(dtype, transport.rank(), count);
      tree.allreduce(data.data(), count, dtype);
      const std::size_t wrong = test::first_wrong(dtype, data.data(), count, transport.size());
      report(transport.rank(), wrong == count,
             detail::concat("tree ", threads, " thread(s) ", dtype_name(dtype), " count ", count,
                            wrong == count ? std::string(" exact") : detail::concat(" wrong from element ", wrong)));
    }
  }
}

// 2 local ranks (host backend) per MPI rank: every device ends with the sum over 2 x ranks.
void test_node_group(MpiTransport& transport) {
  const int local_size = 2;
  auto backend = make_host_backend(local_size);
  NodeOptions options;
  options.local_size = local_size;
  options.node_rank = transport.rank();
  options.node_count = transport.size();
  options.pipeline.chunk_bytes = 256 << 10;
  options.pipeline.reducer.threads = 1;
  options.tree.slice_bytes = 64 << 10;
  options.tree.timeout = 60s;
  options.timeout = 60s;
  NodeGroup group(*backend, &transport, options);
  const std::size_t count = 300007;
  test::run_ranks(local_size, [&](int local_rank) {
    HfReduce hf(group, local_rank, local_size, transport.rank(), transport.size());
    auto stream = backend->create_stream(local_rank);
    hf.register_tensor("grad", count, DType::BF16);
    DeviceBuffer buffer = backend->allocate_device(local_rank, count * 2);
    const auto data = test::pattern_buffer(DType::BF16, transport.rank() * local_size + local_rank, count);
    backend->upload(buffer.ptr(), data.data(), data.size());
    hf.async_reduce(*stream, "grad", buffer.ptr(), count);
    hf.synchronize(*stream);
    std::vector<std::byte> host(data.size());
    backend->download(host.data(), buffer.ptr(), host.size());
    const std::size_t wrong = test::first_wrong(DType::BF16, host.data(), count, transport.size() * local_size);
    report(transport.rank(), wrong == count,
           detail::concat("node group local rank ", local_rank, " bf16 count ", count,
                          wrong == count ? std::string(" exact") : detail::concat(" wrong from element ", wrong)));
  });
}

// The middle rank kills itself (SIGKILL) after sending a few slices; every survivor must throw
// TimeoutError within the 2 s timeout (plus slack for an oversubscribed machine).
int test_kill(MpiTransport& transport) {
  const int victim = transport.size() / 2;
  const auto timeout = 2000ms;
  TreeOptions options;
  options.slice_bytes = 16 << 10;
  options.timeout = timeout;
  const std::size_t count = std::size_t{4} << 20;
  auto data = test::pattern_buffer(DType::F32, transport.rank(), count);

  class Killer final : public Transport {
   public:
    Killer(Transport& inner, bool victim) : inner_(inner), victim_(victim) {}
    int rank() const noexcept override { return inner_.rank(); }
    int size() const noexcept override { return inner_.size(); }
    std::string_view name() const noexcept override { return "mpi"; }
    std::int64_t max_tag() const noexcept override { return inner_.max_tag(); }
    std::unique_ptr<Request> isend(int peer, std::int64_t tag, const void* bytes, std::size_t n) override {
      if (victim_ && ++sent_ == 20) std::raise(SIGKILL);
      return inner_.isend(peer, tag, bytes, n);
    }
    std::unique_ptr<Request> irecv(int peer, std::int64_t tag, void* bytes, std::size_t n) override {
      return inner_.irecv(peer, tag, bytes, n);
    }

   private:
    Transport& inner_;
    bool victim_;
    std::atomic<int> sent_{0};
  };
  Killer killer(transport, transport.rank() == victim);
  TreeAllreduce tree(killer, options);
  const auto start = std::chrono::steady_clock::now();
  try {
    tree.allreduce(data.data(), count, DType::F32);
    std::printf("hfreduce-mpi: rank %d completed without error (victim %d)\n", transport.rank(), victim);
  } catch (const TimeoutError& e) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // the kill comes within the first slices; a survivor notices at most one timeout after its
    // last progress: 2 s, plus 3 s of slack for 8 ranks sharing 2 cores
    const bool in_time = seconds < 2.0 + 3.0;
    std::printf("hfreduce-mpi: rank %d %s after %.2f s: %s\n", transport.rank(), in_time ? "timeout-ok" : "timeout-late",
                seconds, e.message().c_str());
  } catch (const std::exception& e) {
    std::printf("hfreduce-mpi: rank %d other error: %s\n", transport.rank(), e.what());
  }
  std::fflush(stdout);
  // MPI_Finalize would wait for the dead rank: leave at once.
  std::_Exit(0);
}

void test_mismatch(MpiTransport& transport) {
  TreeAllreduce tree(transport, TreeOptions{});
  const int odd_one = transport.size() - 1;
  try {
    tree.check_consistent(transport.rank() == odd_one ? "tensor 'w': 7 x bf16" : "tensor 'w': 8 x bf16");
    report(transport.rank(), false, "mismatch not detected");
  } catch (const MismatchError& e) {
    const std::string expected_part = "rank " + std::to_string(odd_one) + " has tensor 'w': 7 x bf16";
    const bool names_it = e.message().find(expected_part) != std::string::npos;
    report(transport.rank(), names_it, "mismatch: " + e.message());
  }
}

}  // namespace

int main(int argc, char** argv) {
  MpiSession session(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "allreduce";
  // --np N: the world must have N ranks (a launcher that does not match the linked MPI starts N
  // singletons, each of which would pass the sums on its own).
  bool serialize = false;
  int expect_np = 0;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--serialize") == 0) serialize = true;
    else if (std::strcmp(argv[i], "--np") == 0 && i + 1 < argc) expect_np = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "unknown argument %s; valid: --serialize, --np N\n", argv[i]);
      return 2;
    }
  }
  try {
    MpiTransport transport(MPI_COMM_WORLD, serialize);
    if (transport.rank() == 0) {
      std::printf("hfreduce-mpi: %s on %d ranks, MPI thread level %d, calls %s, max tag %lld\n", mode.c_str(),
                  transport.size(), session.provided(), transport.serialized() ? "serialized" : "concurrent",
                  static_cast<long long>(transport.max_tag()));
    }
    if (expect_np > 0 && transport.size() != expect_np) {
      report(transport.rank(), false, detail::concat("world of ", transport.size(), " ranks, expected ", expect_np));
      return 1;
    }
    if (mode == "allreduce") {
      for (int threads : {1, 2}) test_tree(transport, threads);
      test_node_group(transport);
    } else if (mode == "kill") {
      return test_kill(transport);
    } else if (mode == "mismatch") {
      test_mismatch(transport);
    } else {
      std::fprintf(stderr, "unknown mode %s; valid: allreduce, kill, mismatch\n", mode.c_str());
      return 2;
    }
    MPI_Barrier(transport.comm());
  } catch (const std::exception& e) {
    std::printf("hfreduce-mpi: FAILED with %s\n", e.what());
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return failures == 0 ? 0 : 1;
}
