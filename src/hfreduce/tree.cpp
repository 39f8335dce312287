// TreeAllreduce: one worker thread per tree drives a window of slices through up, down and done.
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/tree.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/memory.hpp"
#include "ffsim/hfreduce/reduce.hpp"
#include "hash.hpp"

namespace ffsim::hfreduce {
namespace {

// NCCL 2.4 ncclGetBtree: rank 0 is the root with one child; a rank's lowest set bit gives its
// level; the parent sets the next bit up (or clears this one when that is out of range).
TreeLinks binary_tree(int ranks, int rank) {
  TreeLinks links;
  if (ranks <= 1) return links;
  int bit = 1;
  while (bit < ranks && (bit & rank) == 0) bit <<= 1;
  if (rank == 0) {
    links.children[1] = bit >> 1;  // the root has a single (second) child
    return links;
  }
  int up = (rank ^ bit) | (bit << 1);
  if (up >= ranks) up = rank ^ bit;
  links.parent = up;
  int low = bit >> 1;
  if (low == 0) return links;  // odd ranks are leaves
  links.children[0] = rank - low;
  int second = rank + low;
  while (second >= ranks) {
    low >>= 1;
    second = low == 0 ? -1 : rank + low;
  }
  links.children[1] = second;
  return links;
}

TreeLinks map_links(const TreeLinks& links, auto&& map) {
  TreeLinks mapped;
  mapped.parent = links.parent < 0 ? -1 : map(links.parent);
  for (std::size_t c = 0; c < 2; ++c) mapped.children[c] = links.children[c] < 0 ? -1 : map(links.children[c]);
  return mapped;
}

using Clock = std::chrono::steady_clock;

// Waits with a growing pause: yields first (low latency), then sleeps up to 200 us, so that
// oversubscribed ranks (more ranks than cores) leave the cores to the ranks that can progress.
class Backoff {
 public:
  void reset() noexcept { idle_ = 0; }
  void pause() {
    ++idle_;
    if (idle_ < 200) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(200, (idle_ - 199) * 5)));
    }
  }

 private:
  int idle_ = 0;
};

constexpr int kChannelBits = 3;
constexpr int kFingerprintBits = 8;
constexpr int kMetaUp = 4;
constexpr int kMetaDown = 5;

// What one rank tells its parent (and the root tells everyone) in check_consistent.
struct Verdict {
  std::int32_t agree = 1;
  std::int32_t rank_a = -1;
  std::int32_t rank_b = -1;
  std::int32_t reserved = 0;
  std::uint64_t hash_a = 0;
  std::uint64_t hash_b = 0;
  char text_a[112] = {};
  char text_b[112] = {};
};

void copy_text(char (&out)[112], std::string_view text) {
  const std::size_t n = std::min(text.size(), sizeof(out) - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

std::array<TreeLinks, 2> double_binary_tree(int ranks, int rank) {
  FFSIM_KERNEL_CHECK(ranks >= 1 && rank >= 0 && rank < ranks, "rank ", rank, " of ", ranks);
  std::array<TreeLinks, 2> trees;
  trees[0] = binary_tree(ranks, rank);
  if (ranks % 2 == 1) {
    const int shifted = (rank - 1 + ranks) % ranks;
    trees[1] = map_links(binary_tree(ranks, shifted), [ranks](int r) { return (r + 1) % ranks; });
  } else {
    trees[1] = map_links(binary_tree(ranks, ranks - 1 - rank), [ranks](int r) { return ranks - 1 - r; });
  }
  return trees;
}

// The thread that drives one or both trees (TreeOptions::threads): it sleeps while no tree it
// drives has work, and otherwise polls each tree in turn.
class TreeAllreduce::Engine {
 public:
  explicit Engine(TreeAllreduce& owner) : owner_(owner) {}
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine() { stop(); }
  void add(Worker* worker) { workers_.push_back(worker); }
  void start() { thread_ = std::thread([this] { run(); }); }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void wake() { cv_.notify_all(); }
  std::mutex& mutex() noexcept { return mutex_; }

 private:
  void run();

  TreeAllreduce& owner_;
  std::vector<Worker*> workers_;
  std::mutex mutex_;  // guards every queue of the workers this engine drives, and stop_
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
  friend class Worker;
};

// One tree: its half of every job, cut into slices, a window of them in flight. Driven by an
// Engine (its own thread, or one thread shared with the other tree).
class TreeAllreduce::Worker {
 public:
  Worker(TreeAllreduce& owner, Engine& engine, int tree)
      : owner_(owner), engine_(engine), tree_(tree), links_(owner.links_[static_cast<std::size_t>(tree)]) {
    const auto window = static_cast<std::size_t>(owner_.options_.window);
    buffers_ = HostBuffer::allocate(window * 2 * owner_.options_.slice_bytes);
    receives_ =
        owner_.options_.receives != 0 ? owner_.options_.receives : (shares_memory() ? 1 : owner_.options_.window);
  }
  int receives() const noexcept { return receives_; }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void enqueue(Ticket ticket, const std::byte* src, std::byte* data, std::size_t count, DType dtype,
               std::uint32_t fingerprint) {
    {
      std::lock_guard lock(engine_.mutex());
      items_.push_back(Item{ticket, src, data, count, dtype, fingerprint, 0});
      open_.push_back(ticket);
    }
  }
  Engine& engine() noexcept { return engine_; }

  // Called with the engine's mutex held.
  bool has_work() const {
    return !active_.empty() || std::any_of(items_.begin(), items_.end(), [](const Item& i) { return i.next < i.count; });
  }
  bool busy() const noexcept { return !active_.empty(); }
  void restart_clock() { last_progress_ = Clock::now(); }

  // Opens slices up to the window and moves the new ones as far as they go without a sum or a
  // test: a leaf's contribution leaves at once (and receives are posted only where the whole
  // window may be: see post_children). True when it opened any. Called for every tree
  // before any tree's poll in an engine's pass: a test enters the transport's progress, which may
  // copy every message that has arrived (with Open MPI's shared-memory single copy the receiver
  // copies), and a tree's sums take tens of microseconds each, so a tree polled first would hold
  // back what the other tree can send (2 ranks, 8 MiB: a rank's contributions to the other tree
  // left 0.7 ms into the call, after it had copied and summed its children's slices, and the
  // other rank idled meanwhile).
  bool open() {
    std::size_t first = 0;
    {
      std::lock_guard lock(engine_.mutex());
      first = active_.size();
      while (active_.size() < static_cast<std::size_t>(owner_.options_.window)) {
        Slice slice;
        if (!next_slice(slice)) break;
        active_.push_back(std::move(slice));
      }
    }
    if (active_.size() == first) return false;
    if (first == 0) last_progress_ = Clock::now();  // work that arrives starts the clock
    for (std::size_t i = first; i < active_.size(); ++i) advance(active_[i], /*tests=*/false);
    return true;
  }

  // One pass: moves every active slice as far as its messages allow, retires finished ones. True
  // when anything moved. Throws TimeoutError when this tree has seen no progress for the timeout
  // while slices are in flight.
  bool poll() {
    bool moved = false;
    for (Slice& slice : active_) moved = advance(slice, /*tests=*/true) || moved;
    while (!active_.empty() && active_.front().step == Step::Done) {
      if (active_.front().last) {
        {
          std::lock_guard lock(engine_.mutex());
          open_.pop_front();
        }
        owner_.finish_half(active_.front().ticket, nullptr);
      }
      active_.pop_front();
      moved = true;
    }
    if (moved) {
      last_progress_ = Clock::now();
    } else if (!active_.empty() && Clock::now() - last_progress_ > owner_.options_.timeout) {
      const Slice& stuck = active_.front();
      FFSIM_KERNEL_THROW(TimeoutError, "rank ", owner_.rank_, " of ", owner_.size_, ", tree ", tree_,
                         ": no progress for ", owner_.options_.timeout.count(), " ms; slice ", stuck.sequence,
                         " of operation ", stuck.ticket, " waits for ", waiting_for(stuck));
    }
    return moved;
  }

  // Drops every slice and queued half and hands the halves back with error, so that no caller
  // waits for them and none of their buffers is touched again.
  void abandon(const std::exception_ptr& error) {
    active_.clear();  // cancels what is still posted
    holding_ = {0, 0};
    std::deque<Ticket> open;
    {
      std::lock_guard lock(engine_.mutex());
      items_.clear();
      open.swap(open_);
    }
    for (Ticket ticket : open) owner_.finish_half(ticket, error);
  }

 private:
  struct Item {
    Ticket ticket;
    const std::byte* src;  // == data when in place
    std::byte* data;
    std::size_t count;
    DType dtype;
    std::uint32_t fingerprint;
    std::size_t next;  // first element not yet in a slice
  };
  enum class Step { Children, Up, Down, Broadcast, Done };
  struct Slice {
    Ticket ticket = 0;
    bool last = false;  // last slice of its item
    const std::byte* src = nullptr;  // this rank's contribution (== data when in place)
    std::byte* data = nullptr;       // where the sum goes
    std::size_t count = 0;
    DType dtype = DType::F32;
    std::uint32_t fingerprint = 0;
    std::uint64_t sequence = 0;
    Step step = Step::Children;
    std::array<std::unique_ptr<Request>, 2> from_child;
    std::unique_ptr<Request> to_parent;
    std::unique_ptr<Request> from_parent;
    std::array<std::unique_ptr<Request>, 2> to_child;
    bool children_posted = false;  // its children's receives are posted (or it has none)
    std::array<bool, 2> holds{};   // it holds a receive credit: up (children), down (parent); see acquire
    std::size_t bytes() const noexcept { return count * dtype_size(dtype); }
  };

  std::byte* child_buffer(std::uint64_t sequence, std::size_t child) const noexcept {
    const std::size_t slot = sequence % static_cast<std::uint64_t>(owner_.options_.window);
    return buffers_.data() + (slot * 2 + child) * owner_.options_.slice_bytes;
  }
  int up_channel() const noexcept { return tree_ * 2; }
  int down_channel() const noexcept { return tree_ * 2 + 1; }

  // Takes the next slice of the front item; false when there is none. Called with the engine's mutex held.
  bool next_slice(Slice& slice) {
    while (!items_.empty() && items_.front().next >= items_.front().count) items_.pop_front();
    if (items_.empty()) return false;
    Item& item = items_.front();
    const std::size_t per_slice = std::max<std::size_t>(1, owner_.options_.slice_bytes / dtype_size(item.dtype));
    slice.ticket = item.ticket;
    slice.dtype = item.dtype;
    slice.fingerprint = item.fingerprint;
    slice.count = std::min(per_slice, item.count - item.next);
    slice.src = item.src + item.next * dtype_size(item.dtype);
    slice.data = item.data + item.next * dtype_size(item.dtype);
    item.next += slice.count;
    slice.last = item.next == item.count;
    slice.sequence = sequence_++;
    return true;
  }

  // Whether a peer of this tree shares this rank's memory (see TreeOptions::receives).
  bool shares_memory() const noexcept {
    const Transport& transport = owner_.transport_;
    if (links_.parent >= 0 && transport.shares_memory_with(links_.parent)) return true;
    return std::any_of(links_.children.begin(), links_.children.end(),
                       [&](int c) { return c >= 0 && transport.shares_memory_with(c); });
  }

  // Receive credits, two kinds: at most receives_ slices of this tree wait for their children's
  // partial sums (up) and at most receives_ for their final sums (down) with receives posted.
  // The slices take each kind in order (advance runs over the window oldest first), so a slice's
  // receive waits only for older slices' receives of its kind, which wait only for older slices
  // elsewhere in the tree: no cycle. (One kind shared by both deadlocked on 7 ranks: an interior
  // rank's newer slice held the credit for its children's receives while its older slice waited
  // for it to receive its final sum, and a child's credit was held the other way round.)
  static constexpr std::size_t kUp = 0, kDown = 1;
  bool acquire(Slice& slice, std::size_t kind) {
    if (holding_[kind] >= receives_) return false;
    ++holding_[kind];
    slice.holds[kind] = true;
    return true;
  }
  void release(Slice& slice, std::size_t kind) {
    if (!slice.holds[kind]) return;
    --holding_[kind];
    slice.holds[kind] = false;
  }

  // Receives are posted from open() (tests false) only where the whole window may be: posting may
  // copy a message that has arrived (Open MPI matches it in the irecv), and open() is for sends first.
  bool may_post(bool tests) const noexcept { return tests || receives_ == owner_.options_.window; }

  // Whether the slice's partial sum leaves from data, where its final sum lands: all but a leaf out
  // of place (which sends from src), so the final sum's receive waits for the send to complete.
  bool sends_from_data(const Slice& slice) const noexcept {
    return slice.src == slice.data || links_.children[0] >= 0 || links_.children[1] >= 0;
  }

  // Posts the receives of the slice's children's partial sums, with a credit; false when none is
  // free or from open() (may_post).
  bool post_children(Slice& slice, bool tests) {
    if (slice.children_posted) return true;
    if (links_.children[0] < 0 && links_.children[1] < 0) {
      slice.children_posted = true;
      return true;
    }
    if (!may_post(tests) || !acquire(slice, kUp)) return false;
    slice.children_posted = true;
    Transport& transport = owner_.transport_;
    for (std::size_t c = 0; c < 2; ++c) {
      if (links_.children[c] < 0) continue;
      slice.from_child[c] = transport.irecv(links_.children[c], owner_.tag(slice.sequence, slice.fingerprint, up_channel()),
                                            child_buffer(slice.sequence, c), slice.bytes());
    }
    return true;
  }

  // Posts the final sum's receive from the parent, with a credit; false when none is free or from
  // open() (may_post).
  bool post_parent(Slice& slice, bool tests) {
    if (slice.from_parent) return true;
    if (!may_post(tests) || !acquire(slice, kDown)) return false;
    slice.from_parent = owner_.transport_.irecv(
        links_.parent, owner_.tag(slice.sequence, slice.fingerprint, down_channel()), slice.data, slice.bytes());
    return true;
  }

  void broadcast(Slice& slice) {
    for (std::size_t c = 0; c < 2; ++c) {
      if (links_.children[c] < 0) continue;
      slice.to_child[c] = owner_.transport_.isend(
          links_.children[c], owner_.tag(slice.sequence, slice.fingerprint, down_channel()), slice.data, slice.bytes());
    }
    slice.step = Step::Broadcast;
  }

  // Whether a request is complete; without `tests` only an absent one (the transport is not entered).
  static bool complete(std::unique_ptr<Request>& request, bool tests) { return !request || (tests && request->test()); }

  // Moves a slice as far as its messages allow, testing them only where `tests`; true when it
  // moved at all.
  bool advance(Slice& slice, bool tests) {
    bool moved = false;
    while (true) {
      switch (slice.step) {
        case Step::Children: {
          if (!post_children(slice, tests)) return moved;
          if (!complete(slice.from_child[0], tests) || !complete(slice.from_child[1], tests)) return moved;
          release(slice, kUp);
          const void* inputs[3] = {slice.src, nullptr, nullptr};
          std::size_t k = 1;
          for (std::size_t c = 0; c < 2; ++c) {
            if (links_.children[c] >= 0) inputs[k++] = child_buffer(slice.sequence, c);
          }
          // The partial sum goes to data; a leaf out of place sends its contribution from src.
          const std::byte* partial = slice.src;
          if (k > 1) {
            reduce_sum(owner_.isa_, slice.dtype, slice.data, std::span<const void* const>(inputs, k), slice.count);
            partial = slice.data;
          }
          if (links_.parent < 0) {
            if (k == 1 && slice.src != slice.data) std::memcpy(slice.data, slice.src, slice.bytes());
            broadcast(slice);
          } else {
            slice.to_parent = owner_.transport_.isend(
                links_.parent, owner_.tag(slice.sequence, slice.fingerprint, up_channel()), partial, slice.bytes());
            slice.step = Step::Up;
          }
          break;
        }
        case Step::Up:
          if (!slice.from_parent) {
            if (sends_from_data(slice) && !complete(slice.to_parent, tests)) return moved;
            if (!post_parent(slice, tests)) return moved;
          }
          if (!complete(slice.to_parent, tests)) return moved;
          slice.to_parent.reset();  // complete: not tested again
          slice.step = Step::Down;
          break;
        case Step::Down:
          if (!complete(slice.from_parent, tests)) return moved;
          release(slice, kDown);
          broadcast(slice);
          break;
        case Step::Broadcast:
          if (!complete(slice.to_child[0], tests) || !complete(slice.to_child[1], tests)) return moved;
          slice.step = Step::Done;
          break;
        case Step::Done:
          return moved;
      }
      moved = true;
    }
  }

  std::string waiting_for(const Slice& slice) const {
    auto peer = [&](const char* role, int rank, const char* what) {
      return detail::concat(what, " ", role, " rank ", rank);
    };
    std::string pending;
    switch (slice.step) {
      case Step::Children:
        if (!slice.children_posted) pending = "a receive credit (the earlier slices' receives to complete)";
        for (std::size_t c = 0; c < 2; ++c) {
          if (slice.from_child[c] && !pending.empty()) pending += " and ";
          if (slice.from_child[c]) pending += peer("child", links_.children[c], "the partial sum of");
        }
        break;
      case Step::Up:
        pending = peer("parent", links_.parent, "delivery of the partial sum to");
        break;
      case Step::Down:
        pending = peer("parent", links_.parent, "the final sum from");
        break;
      case Step::Broadcast:
        pending = "delivery of the final sum to the children";
        break;
      case Step::Done:
        pending = "nothing";
        break;
    }
    return pending;
  }

  TreeAllreduce& owner_;
  Engine& engine_;
  int tree_;
  TreeLinks links_;
  HostBuffer buffers_;
  std::uint64_t sequence_ = 0;
  std::deque<Item> items_;   // guarded by the engine's mutex
  std::deque<Ticket> open_;  // tickets whose half this tree holds, in order (engine's mutex)
  std::deque<Slice> active_;  // the engine's thread only
  int receives_ = 1;          // slices with receives posted at a time (TreeOptions::receives resolved)
  std::array<int, 2> holding_{};  // slices holding a receive credit now, by kind (see acquire)
  Clock::time_point last_progress_ = Clock::now();
};

void TreeAllreduce::Engine::run() {
  Backoff backoff;
  try {
    while (true) {
      {
        std::unique_lock lock(mutex_);
        const bool busy = std::any_of(workers_.begin(), workers_.end(), [](const Worker* w) { return w->busy(); });
        if (!busy) {
          cv_.wait(lock, [this] {
            return stop_ || owner_.failed_.load() ||
                   std::any_of(workers_.begin(), workers_.end(), [](const Worker* w) { return w->has_work(); });
          });
          for (Worker* w : workers_) w->restart_clock();  // an idle tree starts its clock with new work
        }
        if (stop_) {
          lock.unlock();
          const auto error = std::make_exception_ptr(
              KernelError(__FILE__, __LINE__, "the tree allreduce was destroyed while the operation ran"));
          for (Worker* w : workers_) w->abandon(error);
          return;
        }
      }
      if (owner_.failed_.load()) {
        // the other tree (engine) failed: give up too, with its error
        std::exception_ptr failure;
        {
          std::lock_guard lock(owner_.mutex_);
          failure = owner_.failure_;
        }
        for (Worker* w : workers_) w->abandon(failure);
        return;
      }
      bool moved = false;
      for (Worker* w : workers_) moved = w->open() || moved;
      for (Worker* w : workers_) moved = w->poll() || moved;
      if (moved) {
        backoff.reset();
        continue;
      }
      backoff.pause();
    }
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    owner_.fail(error);
    for (Worker* w : workers_) w->abandon(error);
  }
}

TreeAllreduce::TreeAllreduce(Transport& transport, TreeOptions options)
    : transport_(transport),
      options_(options),
      isa_(options.isa ? *options.isa : default_isa()),
      rank_(transport.rank()),
      size_(transport.size()),
      links_(double_binary_tree(transport.size(), transport.rank())) {
  FFSIM_KERNEL_CHECK(options_.window >= 1, "tree window must be >= 1, got ", options_.window);
  FFSIM_KERNEL_CHECK(options_.slice_bytes >= 64, "tree slices must be >= 64 bytes, got ", options_.slice_bytes);
  FFSIM_KERNEL_CHECK(options_.timeout.count() > 0, "tree timeout must be positive, got ", options_.timeout.count(), " ms");
  // Tag = sequence | fingerprint | channel, or sequence | channel when the tag space is small.
  const auto tags = static_cast<std::uint64_t>(transport_.max_tag()) + 1;
  use_fingerprint_ = (tags >> (kChannelBits + kFingerprintBits)) >= 1024;
  sequence_space_ = tags >> (kChannelBits + (use_fingerprint_ ? kFingerprintBits : 0));
  FFSIM_KERNEL_CHECK(sequence_space_ > static_cast<std::uint64_t>(options_.window) + 1,
                     "transport tag space (max tag ", transport_.max_tag(), ") too small for a window of ",
                     options_.window);
  FFSIM_KERNEL_CHECK(options_.receives >= 0 && options_.receives <= options_.window,
                     "tree receives must be 0 (auto) or 1 to the window (", options_.window, "), got ",
                     options_.receives);
  FFSIM_KERNEL_CHECK(options_.threads >= 0 && options_.threads <= 2, "tree threads must be 0 (auto), 1 or 2, got ",
                     options_.threads);
  threads_ = options_.threads != 0 ? options_.threads : (usable_cpu_count() >= 4 ? 2 : 1);
  if (size_ > 1) {
    for (int e = 0; e < threads_; ++e) engines_[static_cast<std::size_t>(e)] = std::make_unique<Engine>(*this);
    for (int tree = 0; tree < 2; ++tree) {
      Engine& engine = *engines_[static_cast<std::size_t>(threads_ == 2 ? tree : 0)];
      workers_[static_cast<std::size_t>(tree)] = std::make_unique<Worker>(*this, engine, tree);
      engine.add(workers_[static_cast<std::size_t>(tree)].get());
    }
    for (int e = 0; e < threads_; ++e) engines_[static_cast<std::size_t>(e)]->start();
  }
}

TreeAllreduce::~TreeAllreduce() {
  for (auto& engine : engines_) engine.reset();  // stops the threads first: they use the workers
  for (auto& worker : workers_) worker.reset();
}

int TreeAllreduce::receives(int tree) const noexcept {
  if (size_ <= 1 || tree < 0 || tree > 1) return 0;
  return workers_[static_cast<std::size_t>(tree)]->receives();
}

std::int64_t TreeAllreduce::tag(std::uint64_t sequence, std::uint32_t fingerprint, int channel) const noexcept {
  std::uint64_t tag = sequence % sequence_space_;
  if (use_fingerprint_) tag = (tag << kFingerprintBits) | (fingerprint & ((1u << kFingerprintBits) - 1u));
  return static_cast<std::int64_t>((tag << kChannelBits) | static_cast<std::uint64_t>(channel));
}

TreeAllreduce::Ticket TreeAllreduce::submit(void* data, std::size_t count, DType dtype, std::uint32_t fingerprint) {
  return submit(data, data, count, dtype, fingerprint);
}

TreeAllreduce::Ticket TreeAllreduce::submit(const void* src, void* data, std::size_t count, DType dtype,
                                            std::uint32_t fingerprint) {
  if (count > 0 && (data == nullptr || src == nullptr))
    FFSIM_KERNEL_THROW(KernelError, "tree allreduce of ", count, " elements at null");
  if (src != data && count > 0) {
    const auto* a = static_cast<const std::byte*>(src);
    const auto* b = static_cast<const std::byte*>(data);
    const std::size_t bytes = count * dtype_size(dtype);
    if (a < b + bytes && b < a + bytes)
      FFSIM_KERNEL_THROW(KernelError, "tree allreduce out of place with overlapping source and destination");
  }
  std::lock_guard lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
  const Ticket ticket = next_ticket_++;
  const std::size_t first_half = count / 2;
  const std::array<std::size_t, 2> halves{first_half, count - first_half};
  if (size_ == 1) {  // the sum over one rank is the data itself
    if (src != data && count > 0) std::memcpy(data, src, count * dtype_size(dtype));
    return ticket;
  }
  Job& job = jobs_[ticket];
  auto* bytes = static_cast<std::byte*>(data);
  const auto* in = static_cast<const std::byte*>(src);
  for (std::size_t tree = 0; tree < 2; ++tree) {
    if (halves[tree] == 0) {
      --job.halves_left;
      continue;
    }
    const std::size_t offset = tree == 0 ? 0 : first_half * dtype_size(dtype);
    workers_[tree]->enqueue(ticket, in + offset, bytes + offset, halves[tree], dtype, fingerprint);
  }
  // Woken once both halves are queued: an engine that drives both trees opens them in one pass.
  for (auto& worker : workers_) worker->engine().wake();
  if (job.halves_left == 0) jobs_.erase(ticket);
  return ticket;
}

bool TreeAllreduce::done(Ticket ticket) {
  std::lock_guard lock(mutex_);
  if (ticket >= next_ticket_) FFSIM_KERNEL_THROW(KernelError, "unknown tree ticket ", ticket);
  auto job = jobs_.find(ticket);
  if (job == jobs_.end()) return true;
  if (job->second.halves_left > 0) return false;
  std::rethrow_exception(job->second.error);
}

void TreeAllreduce::wait(Ticket ticket) {
  std::unique_lock lock(mutex_);
  if (ticket >= next_ticket_) FFSIM_KERNEL_THROW(KernelError, "unknown tree ticket ", ticket);
  done_cv_.wait(lock, [&] {
    auto job = jobs_.find(ticket);
    return job == jobs_.end() || job->second.halves_left == 0;
  });
  auto job = jobs_.find(ticket);
  if (job != jobs_.end()) std::rethrow_exception(job->second.error);
}

void TreeAllreduce::quiesce() {
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] {
    return std::all_of(jobs_.begin(), jobs_.end(), [](const auto& job) { return job.second.halves_left == 0; });
  });
}

void TreeAllreduce::allreduce(void* data, std::size_t count, DType dtype, std::uint32_t fingerprint) {
  wait(submit(data, count, dtype, fingerprint));
}

void TreeAllreduce::allreduce(const void* src, void* data, std::size_t count, DType dtype, std::uint32_t fingerprint) {
  wait(submit(src, data, count, dtype, fingerprint));
}

// A half is handed back: done (error null) or abandoned after a failure. A job whose halves are
// all back is erased when it succeeded and kept, with its error, when it failed.
void TreeAllreduce::finish_half(Ticket ticket, std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    auto job = jobs_.find(ticket);
    if (job == jobs_.end()) return;
    if (error && !job->second.error) job->second.error = error;
    if (--job->second.halves_left == 0 && !job->second.error) jobs_.erase(job);
  }
  done_cv_.notify_all();
}

void TreeAllreduce::fail(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = error;
    failed_.store(true);
  }
  for (auto& engine : engines_) {
    if (engine) engine->wake();
  }
  done_cv_.notify_all();
}

void TreeAllreduce::check_consistent(std::string_view description) {
  {
    std::lock_guard lock(mutex_);
    if (failure_) std::rethrow_exception(failure_);
  }
  if (size_ == 1) return;
  const TreeLinks& tree = links_[0];
  const std::uint64_t sequence = meta_sequence_++;
  const auto deadline_after = [this] { return Clock::now() + options_.timeout; };
  auto wait_for = [&](Request& request, const char* what, int peer) {
    const auto deadline = deadline_after();
    Backoff backoff;
    while (!request.test()) {
      if (Clock::now() > deadline) {
        FFSIM_KERNEL_THROW(TimeoutError, "rank ", rank_, " of ", size_, ": no ", what, " from rank ", peer, " within ",
                           options_.timeout.count(), " ms (consistency check ", sequence, ": ", description, ")");
      }
      backoff.pause();
    }
  };

  Verdict mine;
  mine.rank_a = rank_;
  mine.hash_a = detail::fnv1a(description);
  copy_text(mine.text_a, description);
  std::array<Verdict, 2> from_children;
  std::array<std::unique_ptr<Request>, 2> receives;
  for (std::size_t c = 0; c < 2; ++c) {
    if (tree.children[c] >= 0) {
      receives[c] = transport_.irecv(tree.children[c], tag(sequence, 0, kMetaUp), &from_children[c], sizeof(Verdict));
    }
  }
  for (std::size_t c = 0; c < 2; ++c) {
    if (!receives[c]) continue;
    wait_for(*receives[c], "description", tree.children[c]);
    const Verdict& child = from_children[c];
    if (mine.agree == 0) continue;
    if (child.agree == 0) {
      mine = child;
    } else if (child.hash_a != mine.hash_a) {
      mine.agree = 0;
      mine.rank_b = child.rank_a;
      mine.hash_b = child.hash_a;
      std::memcpy(mine.text_b, child.text_a, sizeof(mine.text_b));
    }
  }
  if (tree.parent >= 0) {
    auto send = transport_.isend(tree.parent, tag(sequence, 0, kMetaUp), &mine, sizeof(Verdict));
    wait_for(*send, "delivery of the description", tree.parent);
    auto receive = transport_.irecv(tree.parent, tag(sequence, 0, kMetaDown), &mine, sizeof(Verdict));
    wait_for(*receive, "verdict", tree.parent);
  }
  std::array<std::unique_ptr<Request>, 2> sends;
  for (std::size_t c = 0; c < 2; ++c) {
    if (tree.children[c] >= 0) sends[c] = transport_.isend(tree.children[c], tag(sequence, 0, kMetaDown), &mine, sizeof(Verdict));
  }
  for (std::size_t c = 0; c < 2; ++c) {
    if (sends[c]) wait_for(*sends[c], "delivery of the verdict", tree.children[c]);
  }
  if (mine.agree == 0) {
    FFSIM_KERNEL_THROW(MismatchError, "ranks disagree: rank ", mine.rank_a, " has ", mine.text_a, ", rank ", mine.rank_b,
                       " has ", mine.text_b);
  }
}

}  // namespace ffsim::hfreduce
