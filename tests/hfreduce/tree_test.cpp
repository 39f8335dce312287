// Tests of the double binary tree: its shape, loopback allreduce for 1..8 ranks, timeouts, mismatches.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/transport.hpp"
#include "ffsim/hfreduce/tree.hpp"
#include "test_util.hpp"

using namespace ffsim::hfreduce;
using namespace std::chrono_literals;

namespace {

int depth_of(const std::vector<TreeLinks>& tree, int rank) {
  int depth = 0;
  for (int r = rank; tree[static_cast<std::size_t>(r)].parent >= 0; r = tree[static_cast<std::size_t>(r)].parent) {
    ++depth;
    REQUIRE(depth <= static_cast<int>(tree.size()));  // no cycle
  }
  return depth;
}

// Fails every isend after `budget` of them by throwing inside the rank: the rank dies mid-allreduce
// and stops answering.
class DyingTransport final : public Transport {
 public:
  DyingTransport(Transport& inner, int budget) : inner_(inner), budget_(budget) {}
  int rank() const noexcept override { return inner_.rank(); }
  int size() const noexcept override { return inner_.size(); }
  std::string_view name() const noexcept override { return "dying"; }
  std::int64_t max_tag() const noexcept override { return inner_.max_tag(); }
  std::unique_ptr<Request> isend(int peer, std::int64_t tag, const void* data, std::size_t bytes) override {
    if (budget_.fetch_sub(1) <= 0) throw std::runtime_error("rank died");
    return inner_.isend(peer, tag, data, bytes);
  }
  std::unique_ptr<Request> irecv(int peer, std::int64_t tag, void* data, std::size_t bytes) override {
    return inner_.irecv(peer, tag, data, bytes);
  }

 private:
  Transport& inner_;
  std::atomic<int> budget_;
};

// Passes every call on to another transport and records its kind in order: "send", "recv", or
// "test" (a request's test).
class RecordingTransport final : public Transport {
public:
  /// `shares`: what shares_memory_with answers for every other rank.
  explicit RecordingTransport(Transport& inner, bool shares = false) : inner_(inner), shares_(shares) {}
  bool shares_memory_with(int peer) const noexcept override { return shares_ && peer != rank(); }
  int rank() const noexcept override { return inner_.rank(); }
  int size() const noexcept override { return inner_.size(); }
  std::string_view name() const noexcept override { return "recording"; }
  std::int64_t max_tag() const noexcept override { return inner_.max_tag(); }
  std::unique_ptr<Request> isend(int peer, std::int64_t tag, const void* data, std::size_t bytes) override {
    note("send");
    return std::make_unique<Recorded>(*this, inner_.isend(peer, tag, data, bytes));
  }
  std::unique_ptr<Request> irecv(int peer, std::int64_t tag, void* data, std::size_t bytes) override {
    note("recv");
    // The tree's tags end in 3 channel bits: tree x 2 + (0 up, 1 down).
    const auto tree = static_cast<std::size_t>((tag & 7) / 2);
    {
      std::lock_guard lock(mutex_);
      peak_[tree] = std::max(peak_[tree], ++posted_[tree]);
    }
    return std::make_unique<Recorded>(*this, inner_.irecv(peer, tag, data, bytes), static_cast<int>(tree));
  }
  std::vector<std::string> calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  /// The most receives of tree t posted and not yet found complete at once.
  int peak_receives(std::size_t t) {
    std::lock_guard lock(mutex_);
    return peak_[t];
  }

private:
  class Recorded final : public Request {
  public:
    Recorded(RecordingTransport& owner, std::unique_ptr<Request> inner, int tree = -1)
        : owner_(owner), inner_(std::move(inner)), tree_(tree) {}
    ~Recorded() override { finish(); }
    bool test() override {
      owner_.note("test");
      const bool done = inner_->test();
      if (done) finish();
      return done;
    }

  private:
    void finish() {
      if (tree_ < 0) return;
      std::lock_guard lock(owner_.mutex_);
      --owner_.posted_[static_cast<std::size_t>(tree_)];
      tree_ = -1;
    }
    RecordingTransport& owner_;
    std::unique_ptr<Request> inner_;
    int tree_;  // a receive's tree until it is found complete (or dropped); -1 otherwise
  };
  void note(const char* call) {
    std::lock_guard lock(mutex_);
    calls_.emplace_back(call);
  }
  Transport& inner_;
  bool shares_;
  std::mutex mutex_;
  std::vector<std::string> calls_;
  std::array<int, 2> posted_{}, peak_{};
};

}  // namespace

TEST_CASE("tree: n = 14 matches the tree drawn in NCCL's ncclGetBtree comment") {
  // NCCL src/graph/trees.cc draws, for 14 ranks: 0 -> 8; 8 -> 4, 12; 4 -> 2, 6; 12 -> 10, 13;
  // 2 -> 1, 3; 6 -> 5, 7; 10 -> 9, 11; odd ranks are leaves.
  const int n = 14;
  auto links = [&](int r) { return double_binary_tree(n, r)[0]; };
  CHECK(links(0).parent == -1);
  CHECK(links(0).children == std::array<int, 2>{-1, 8});
  CHECK(links(8).parent == 0);
  CHECK(links(8).children == std::array<int, 2>{4, 12});
  CHECK(links(12).children == std::array<int, 2>{10, 13});
  CHECK(links(13).parent == 12);
  CHECK(links(10).children == std::array<int, 2>{9, 11});
  CHECK(links(6).children == std::array<int, 2>{5, 7});
  for (int r = 1; r < n; r += 2) CHECK(links(r).children == std::array<int, 2>{-1, -1});
}

TEST_CASE("tree: both trees span all ranks consistently for n = 1..64") {
  for (int n = 1; n <= 64; ++n) {
    std::array<std::vector<TreeLinks>, 2> trees;
    for (int r = 0; r < n; ++r) {
      const auto both = double_binary_tree(n, r);
      for (std::size_t t = 0; t < 2; ++t) trees[t].push_back(both[t]);
    }
    int interior_in_both = 0;
    for (std::size_t t = 0; t < 2; ++t) {
      const auto& tree = trees[t];
      int roots = 0;
      int max_depth = 0;
      for (int r = 0; r < n; ++r) {
        const TreeLinks& links = tree[static_cast<std::size_t>(r)];
        if (links.parent < 0) ++roots;
        if (links.parent >= 0) {
          // my parent lists me as a child
          const auto& siblings = tree[static_cast<std::size_t>(links.parent)].children;
          CHECK((siblings[0] == r || siblings[1] == r));
        }
        for (int child : links.children) {
          if (child >= 0) CHECK(tree[static_cast<std::size_t>(child)].parent == r);
        }
        max_depth = std::max(max_depth, depth_of(tree, r));  // reaches a root without cycles
      }
      CHECK(roots == 1);
      // a balanced in-order tree over n ranks plus the root's single-child link: depth <= ceil(log2 n) + 1
      int log2n = 0;
      while ((1 << log2n) < n) ++log2n;
      INFO("n=", n, " tree=", t);
      CHECK(max_depth <= log2n + 1);
    }
    for (int r = 0; r < n; ++r) {
      auto interior = [&](std::size_t t) {
        const auto& c = trees[t][static_cast<std::size_t>(r)].children;
        return c[0] >= 0 || c[1] >= 0;
      };
      if (interior(0) && interior(1)) ++interior_in_both;
    }
    // NCCL's point: a rank forwards (is interior) in at most one tree, so its links carry each
    // byte once; the mirror (even n) achieves it for all ranks, the shift (odd n) for all but one.
    INFO("n=", n);
    CHECK(interior_in_both <= (n % 2 == 0 ? 0 : 1));
  }
}

TEST_CASE("tree: loopback allreduce gives every rank the exact sum for 1..8 ranks and sizes 0..large") {
  // Integer-valued inputs: pattern(rank, i) in [-8, 8]; the sum over <= 8 ranks is exact in every
  // dtype, so each rank must hold exactly pattern_sum(ranks, i).
  const std::size_t sizes[] = {0, 1, 2, 3, 5, 17, 127, 1000, 4097, 100003};
  for (int ranks = 1; ranks <= 8; ++ranks) {
    LoopbackHub hub(ranks);
    // small slices and window: many slices per tree, so the pipelining is exercised
    TreeOptions options;
    options.slice_bytes = 1024;
    options.window = 3;
    options.timeout = 20s;
    test::run_ranks(ranks, [&](int rank) {
      auto transport = hub.connect(rank);
      TreeAllreduce tree(*transport, options);
      for (DType dtype : test::kAllDtypes) {
        for (std::size_t count : sizes) {
          auto data = test::pattern_buffer(dtype, rank, count);
          tree.allreduce(data.data(), count, dtype);
          INFO("ranks=", ranks, " rank=", rank, " ", dtype_name(dtype), " count=", count);
          REQUIRE(test::first_wrong(dtype, data.data(), count, ranks) == count);
        }
      }
    });
  }
}

TEST_CASE("tree: out of place and with one or two threads, every rank gets the exact sum and src is untouched") {
  // As above (integer-valued patterns, exact sums), for threads = 1 (one thread polls both trees)
  // and 2, in place and out of place; out of place, src must still hold the rank's own pattern.
  // 1 rank: out of place is a copy. Odd sizes put a one-element half in one tree.
  const std::size_t sizes[] = {0, 1, 2, 3, 1000, 4097};
  // Receives posted one slice at a time (1), or the whole window (2 = the window), the same.
  for (int threads : {1, 2}) {
    for (int receives : {1, 2}) {
      for (int ranks : {1, 2, 3, 4, 7}) {
        LoopbackHub hub(ranks);
        TreeOptions options;
        options.slice_bytes = 1024;
        options.window = 2;
        options.threads = threads;
        options.receives = receives;
        options.timeout = 20s;
        test::run_ranks(ranks, [&](int rank) {
          auto transport = hub.connect(rank);
          TreeAllreduce tree(*transport, options);
          CHECK(tree.threads() == (ranks > 1 ? threads : 0));
          for (DType dtype : test::kAllDtypes) {
            for (std::size_t count : sizes) {
              const auto src = test::pattern_buffer(dtype, rank, count);
              std::vector<std::byte> dst(src.size(), std::byte{0x7F});
              tree.allreduce(src.data(), dst.data(), count, dtype);
              INFO("threads=", threads, " receives=", receives, " ranks=", ranks, " rank=", rank, " ",
                   dtype_name(dtype), " count=", count);
              REQUIRE(test::first_wrong(dtype, dst.data(), count, ranks) == count);
              REQUIRE(src == test::pattern_buffer(dtype, rank, count));
              auto in_place = test::pattern_buffer(dtype, rank, count);
              tree.allreduce(in_place.data(), count, dtype);
              REQUIRE(in_place == dst);
            }
          }
        });
      }
    }
  }
}

TEST_CASE("tree: one thread driving both trees sends every contribution it can before it tests a request") {
  // 2 ranks: each is the root of one tree and a leaf of the other. A leaf's slice needs no sum,
  // so its contribution can leave as soon as the slice opens; a test may enter the transport's
  // progress, which (Open MPI over shared memory) copies whatever has arrived for this rank. So
  // before its first test, each rank must have sent the leaf's whole window (4 slices) and posted
  // the root's 4 receives: 4 "send" and 4 "recv". Polling the root's tree first would test before
  // sending (0 sends before the first test on the root's side). 8 slices per tree (1 KiB slices,
  // 2 x 8 x 256 floats), so the window is full; the sum must still be exact.
  constexpr int kRanks = 2;
  constexpr std::size_t kCount = 2 * 8 * 256;
  LoopbackHub hub(kRanks);
  TreeOptions options;
  options.slice_bytes = 1024;
  options.window = 4;
  options.threads = 1;
  options.timeout = 20s;
  std::vector<std::vector<std::string>> calls(kRanks);
  test::run_ranks(kRanks, [&](int rank) {
    auto loopback = hub.connect(rank);
    RecordingTransport transport(*loopback);
    {
      TreeAllreduce tree(transport, options);
      auto data = test::pattern_buffer(DType::F32, rank, kCount);
      tree.allreduce(data.data(), kCount, DType::F32);
      REQUIRE(test::first_wrong(DType::F32, data.data(), kCount, kRanks) == kCount);
    }
    calls[static_cast<std::size_t>(rank)] = transport.calls();
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    const auto& log = calls[static_cast<std::size_t>(rank)];
    const auto first_test = std::find(log.begin(), log.end(), "test");
    REQUIRE(first_test != log.end());
    INFO("rank ", rank);
    CHECK(std::count(log.begin(), first_test, "send") == 4);
    CHECK(std::count(log.begin(), first_test, "recv") == 4);
  }
}

TEST_CASE("tree: where the peers share memory, one slice of each tree has receives posted at a time") {
  // A posted receive is a copy the transport may make in any test (Open MPI over shared memory:
  // the receiver copies every message that has arrived for a posted receive), so where a tree's
  // peers share this rank's memory (auto: TreeOptions::receives 0) its slices post their receives
  // one slice at a time, per kind (one slice's children's partial sums, one slice's final sum):
  // at most 1 receive outstanding per tree on 2 ranks (a rank is the root of one tree, waiting for
  // one child, and a leaf of the other, waiting for its parent), at most 3 on 5 ranks (an interior
  // rank: two children of one slice and the parent of another). Without shared memory the whole
  // window is posted: the root of 2 ranks
  // posts its 4 slices' receives at once (4 > 1: the count can fail). The sums stay exact, in
  // place and out of place, with 1 and 2 threads. 8 slices per tree (1 KiB slices).
  for (bool shares : {true, false}) {
    for (int threads : {1, 2}) {
      for (int ranks : {2, 5}) {
        const std::size_t count = 2 * 8 * 256;
        LoopbackHub hub(ranks);
        TreeOptions options;
        options.slice_bytes = 1024;
        options.window = 4;
        options.threads = threads;
        options.timeout = 20s;
        std::vector<std::array<int, 2>> peaks(static_cast<std::size_t>(ranks));
        test::run_ranks(ranks, [&](int rank) {
          auto loopback = hub.connect(rank);
          RecordingTransport transport(*loopback, shares);
          {
            TreeAllreduce tree(transport, options);
            CHECK(tree.receives(0) == (shares ? 1 : 4));
            CHECK(tree.receives(1) == (shares ? 1 : 4));
            for (int rep = 0; rep < 2; ++rep) {
              const auto src = test::pattern_buffer(DType::F32, rank, count);
              std::vector<std::byte> dst(src.size());
              tree.allreduce(src.data(), dst.data(), count, DType::F32);
              REQUIRE(test::first_wrong(DType::F32, dst.data(), count, ranks) == count);
              auto data = test::pattern_buffer(DType::F32, rank, count);
              tree.allreduce(data.data(), count, DType::F32);
              REQUIRE(data == dst);
            }
          }
          peaks[static_cast<std::size_t>(rank)] = {transport.peak_receives(0), transport.peak_receives(1)};
        });
        int most = 0;
        for (const auto& p : peaks) most = std::max({most, p[0], p[1]});
        INFO("shares=", shares, " threads=", threads, " ranks=", ranks);
        if (shares && ranks == 2) {
          CHECK(most == 1);
        } else if (shares) {
          CHECK(most >= 2);  // an interior slice's two children
          CHECK(most <= 3);
        } else {
          CHECK(most >= 4);
        }
      }
    }
  }
}

TEST_CASE("tree: overlapping out-of-place buffers and a bad thread count are errors") {
  LoopbackHub hub(1);
  auto transport = hub.connect(0);
  TreeOptions options;
  options.threads = 3;
  CHECK_THROWS_AS(TreeAllreduce(*transport, options), KernelError);
  options.threads = 0;
  options.receives = -1;
  CHECK_THROWS_AS(TreeAllreduce(*transport, options), KernelError);
  options.receives = options.window + 1;  // more slices posted than there are in flight
  CHECK_THROWS_AS(TreeAllreduce(*transport, options), KernelError);
  TreeAllreduce tree(*transport, TreeOptions{});
  std::vector<float> data(16, 1.0f);
  CHECK_THROWS_AS(tree.submit(data.data(), data.data() + 4, 8, DType::F32), KernelError);
}

TEST_CASE("tree: several operations in flight at once complete in order with exact sums") {
  const int ranks = 5;
  LoopbackHub hub(ranks);
  TreeOptions options;
  options.slice_bytes = 4096;
  options.timeout = 20s;
  test::run_ranks(ranks, [&](int rank) {
    auto transport = hub.connect(rank);
    TreeAllreduce tree(*transport, options);
    std::vector<std::vector<std::byte>> buffers;
    std::vector<TreeAllreduce::Ticket> tickets;
    for (std::size_t op = 0; op < 6; ++op) {
      const std::size_t count = 3000 + 1001 * op;
      buffers.push_back(test::pattern_buffer(DType::F32, rank, count));
      tickets.push_back(tree.submit(buffers.back().data(), count, DType::F32, static_cast<std::uint32_t>(op)));
    }
    for (std::size_t op = 0; op < 6; ++op) {
      tree.wait(tickets[op]);
      const std::size_t count = 3000 + 1001 * op;
      CHECK(test::first_wrong(DType::F32, buffers[op].data(), count, ranks) == count);
    }
  });
}

TEST_CASE("tree: a rank that dies mid-allreduce makes every other rank time out in time") {
  // Rank 2 of 4 sends 3 messages and then dies. Every other rank waits, directly or through a
  // neighbour, on data that never comes; each must throw TimeoutError no later than about one
  // timeout after its last progress: allow the timeout plus 2 s of scheduling slack.
  const int ranks = 4;
  const auto timeout = 500ms;
  LoopbackHub hub(ranks);
  std::vector<std::string> outcome(ranks);
  std::vector<double> seconds(ranks, 0.0);
  test::run_ranks(ranks, [&](int rank) {
    auto inner = hub.connect(rank);
    DyingTransport dying(*inner, rank == 2 ? 3 : 1 << 30);
    TreeOptions options;
    options.slice_bytes = 1024;
    options.timeout = timeout;
    TreeAllreduce tree(dying, options);
    auto data = test::pattern_buffer(DType::F32, rank, 100000);
    const auto start = std::chrono::steady_clock::now();
    try {
      tree.allreduce(data.data(), 100000, DType::F32);
      outcome[static_cast<std::size_t>(rank)] = "completed";
    } catch (const TimeoutError& e) {
      outcome[static_cast<std::size_t>(rank)] = "timeout";
      MESSAGE("rank ", rank, ": ", e.message());
    } catch (const std::exception& e) {
      outcome[static_cast<std::size_t>(rank)] = std::string("error: ") + e.what();
    }
    seconds[static_cast<std::size_t>(rank)] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  CHECK(outcome[2] == "error: rank died");
  for (int rank : {0, 1, 3}) {
    INFO("rank ", rank, " took ", seconds[static_cast<std::size_t>(rank)], " s");
    CHECK(outcome[static_cast<std::size_t>(rank)] == "timeout");
    CHECK(seconds[static_cast<std::size_t>(rank)] < 0.5 + 2.0);
  }
}

TEST_CASE("tree: a rank that never joins makes the others time out and the tree stays broken") {
  const int ranks = 3;
  LoopbackHub hub(ranks);
  std::vector<std::string> outcome(ranks);
  test::run_ranks(ranks, [&](int rank) {
    if (rank == 1) return;  // stops answering before it starts
    auto transport = hub.connect(rank);
    TreeOptions options;
    options.timeout = 300ms;
    TreeAllreduce tree(*transport, options);
    std::vector<float> data(64, 1.0f);
    CHECK_THROWS_AS(tree.allreduce(data.data(), data.size(), DType::F32), TimeoutError);
    // broken for good: the next operation fails at once with the same error
    CHECK_THROWS_AS(tree.submit(data.data(), data.size(), DType::F32), TimeoutError);
    outcome[static_cast<std::size_t>(rank)] = "ok";
  });
  CHECK(outcome[0] == "ok");
  CHECK(outcome[2] == "ok");
}

TEST_CASE("tree: check_consistent names the two ranks that differ on every rank") {
  const int ranks = 5;
  LoopbackHub hub(ranks);
  std::vector<std::string> messages(ranks);
  test::run_ranks(ranks, [&](int rank) {
    auto transport = hub.connect(rank);
    TreeAllreduce tree(*transport, TreeOptions{});
    tree.check_consistent("tensor 'w': 10 x fp32");  // all agree: no error
    try {
      tree.check_consistent(rank == 3 ? "tensor 'w': 12 x fp32" : "tensor 'w': 10 x fp32");
      messages[static_cast<std::size_t>(rank)] = "no error";
    } catch (const MismatchError& e) {
      messages[static_cast<std::size_t>(rank)] = e.message();
    }
  });
  // Tree 0 for 5 ranks: 0 -> 4 -> 2 -> (1, 3); rank 3's parent (2) finds it first; every rank gets the
  // root's verdict, so all five messages are the same and name rank 3.
  for (int rank = 0; rank < ranks; ++rank) {
    INFO("rank ", rank);
    CHECK(messages[static_cast<std::size_t>(rank)] == messages[0]);
  }
  CHECK(messages[0].find("rank 3 has tensor 'w': 12 x fp32") != std::string::npos);
  CHECK(messages[0].find("has tensor 'w': 10 x fp32") != std::string::npos);
}

TEST_CASE("tree: ranks with different sizes get errors and no hang") {
  // Rank 1 has 90 floats, the others 100. Rank 1's messages are 360 bytes where its peers expect
  // 400 (or the reverse): a rank that receives a message of the wrong size reports the size
  // mismatch itself; a rank that only waits for a partner that gave up times out (500 ms here).
  // Every rank throws, none hangs, and the mismatch is named by at least one of them: a
  // TimeoutError everywhere would mean the sizes were never compared.
  const int ranks = 3;
  LoopbackHub hub(ranks);
  std::vector<std::string> what(ranks);
  std::vector<int> timed_out(ranks, 0);
  std::vector<double> seconds(ranks, 0);
  test::run_ranks(ranks, [&](int rank) {
    auto transport = hub.connect(rank);
    TreeOptions options;
    options.timeout = 500ms;
    TreeAllreduce tree(*transport, options);
    const std::size_t count = rank == 1 ? 90 : 100;
    std::vector<float> data(count, 1.0f);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      tree.allreduce(data.data(), count, DType::F32);
      what[static_cast<std::size_t>(rank)] = "(no error)";
    } catch (const TimeoutError& e) {
      timed_out[static_cast<std::size_t>(rank)] = 1;
      what[static_cast<std::size_t>(rank)] = e.what();
    } catch (const KernelError& e) {
      what[static_cast<std::size_t>(rank)] = e.what();
    }
    seconds[static_cast<std::size_t>(rank)] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  int named = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    INFO("rank ", rank, ": ", what[static_cast<std::size_t>(rank)]);
    CHECK(what[static_cast<std::size_t>(rank)] != "(no error)");
    CHECK(seconds[static_cast<std::size_t>(rank)] < 10.0);  // a few timeouts at most, not a hang
    if (!timed_out[static_cast<std::size_t>(rank)] &&
        what[static_cast<std::size_t>(rank)].find("the receive expects") != std::string::npos)
      ++named;
  }
  CHECK(named >= 1);
}
