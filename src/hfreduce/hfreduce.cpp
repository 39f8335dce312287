// NodeGroup and HfReduce: tensor registry, per-rank queues, and the engine thread that runs operations.
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/hfreduce.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ffsim/hfreduce/error.hpp"
#include "hash.hpp"

namespace ffsim::hfreduce {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kFusedAlignment = 256;

struct Completion {
  bool done = false;
  std::exception_ptr error;
};

struct Contribution {
  DevicePtr<const std::byte> src;
  DevicePtr<std::byte> dst;
  std::unique_ptr<Event> ready;
  std::shared_ptr<Completion> completion;
  Clock::time_point submitted;
};

struct TensorInfo {
  std::string name;
  std::size_t count = 0;
  DType dtype = DType::F32;
  std::size_t offset = 0;  // in the fused destination (bytes)
};

struct LocalRank {
  bool attached = false;
  DevicePtr<std::byte> fused;
  std::size_t fused_bytes = 0;
  std::set<std::string, std::less<>> registered;
  std::map<std::string, std::deque<Contribution>, std::less<>> pending;
  std::map<const Stream*, std::vector<std::shared_ptr<Completion>>> by_stream;
};

std::string describe(const TensorInfo& tensor) {
  return detail::concat("tensor '", tensor.name, "': ", tensor.count, " x ", dtype_name(tensor.dtype));
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return text;
}

}  // namespace

struct NodeGroup::Impl {
  Impl(CopyBackend& backend_in, Transport* transport_in, NodeOptions options_in)
      : backend(backend_in), transport(transport_in), options(std::move(options_in)) {}

  CopyBackend& backend;
  Transport* transport;
  NodeOptions options;
  std::unique_ptr<TreeAllreduce> tree;
  std::unique_ptr<Pipeline> pipeline;

  std::mutex mutex;
  std::condition_variable cv;
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::size_t, std::less<>> index;
  std::size_t fused_end = 0;
  std::vector<LocalRank> ranks;
  std::deque<std::string> order;  // tensor names in the order local rank 0 submitted them
  Clock::time_point head_since;   // when order.front() became the next operation
  std::set<std::string, std::less<>> validated;  // names checked across nodes (engine thread only)
  std::exception_ptr failure;
  bool stop = false;
  std::thread engine;

  const TensorInfo& tensor(std::string_view name, int local_rank) const {
    auto found = index.find(name);
    if (found == index.end()) {
      FFSIM_KERNEL_THROW(KernelError, "local rank ", local_rank, ": tensor '", name, "' is not registered");
    }
    return tensors[found->second];
  }

  bool all_ranks_have(const std::string& name) const {
    return std::all_of(ranks.begin(), ranks.end(), [&](const LocalRank& rank) {
      auto found = rank.pending.find(name);
      return found != rank.pending.end() && !found->second.empty();
    });
  }

  // Contributions of local rank r (r > 0) for name that local rank 0 has not submitted yet.
  std::size_t claimed(const std::string& name) const {
    return static_cast<std::size_t>(std::count(order.begin(), order.end(), name));
  }

  // The earliest moment something times out, and the error it would be.
  std::pair<Clock::time_point, std::string> next_timeout() const {
    auto earliest = Clock::time_point::max();
    std::string message;
    const auto limit = options.timeout;
    const std::string node = detail::concat(" of node ", options.node_rank);
    if (!order.empty()) {
      std::vector<int> missing;
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        auto found = ranks[r].pending.find(order.front());
        if (found == ranks[r].pending.end() || found->second.empty()) missing.push_back(static_cast<int>(r));
      }
      if (!missing.empty()) {
        earliest = head_since + limit;
        message = detail::concat("local rank", missing.size() > 1 ? "s " : " ", rank_list(missing), node,
                                 " did not call async_reduce for tensor '", order.front(), "' within ", limit.count(),
                                 " ms (local rank 0 did)");
      }
    }
    for (std::size_t r = 1; r < ranks.size(); ++r) {
      for (const auto& [name, queue] : ranks[r].pending) {
        const std::size_t taken = claimed(name);
        if (queue.size() <= taken) continue;
        const auto deadline = queue[taken].submitted + limit;
        if (deadline < earliest) {
          earliest = deadline;
          message = detail::concat("local rank 0", node, " did not call async_reduce for tensor '", name, "' within ",
                                   limit.count(), " ms (local rank ", r, " did)");
        }
      }
    }
    return {earliest, message};
  }

  // Fails every queued contribution with error (mutex held).
  void fail_pending(const std::exception_ptr& error) {
    for (LocalRank& rank : ranks) {
      for (auto& [name, queue] : rank.pending) {
        for (Contribution& part : queue) {
          part.completion->done = true;
          part.completion->error = error;
        }
      }
      rank.pending.clear();
    }
    order.clear();
    cv.notify_all();
  }

  void run() {
    std::unique_lock lock(mutex);
    while (!stop) {
      if (!order.empty() && all_ranks_have(order.front())) {
        run_head(lock);
        continue;
      }
      const auto [deadline, message] = next_timeout();
      if (deadline != Clock::time_point::max() && Clock::now() >= deadline) {
        if (!failure) failure = std::make_exception_ptr(TimeoutError(__FILE__, __LINE__, message));
        fail_pending(failure);
        continue;
      }
      if (deadline == Clock::time_point::max()) {
        cv.wait(lock);
      } else {
        cv.wait_until(lock, deadline);
      }
    }
    fail_pending(std::make_exception_ptr(
        KernelError(__FILE__, __LINE__, "the node group was destroyed before the operation ran")));
  }

  void run_head(std::unique_lock<std::mutex>& lock) {
    const std::string name = order.front();
    order.pop_front();
    head_since = Clock::now();
    std::vector<Contribution> parts;
    for (LocalRank& rank : ranks) {
      auto found = rank.pending.find(name);
      parts.push_back(std::move(found->second.front()));
      found->second.pop_front();
      if (found->second.empty()) rank.pending.erase(found);
    }
    const TensorInfo info = tensors[index.find(name)->second];
    lock.unlock();

    std::exception_ptr error;
    bool breaks_group = false;
    try {
      if (tree && validated.insert(name).second) tree->check_consistent(describe(info));
      std::vector<DevicePtr<const std::byte>> src;
      std::vector<DevicePtr<std::byte>> dst;
      std::vector<Event*> ready;
      for (Contribution& part : parts) {
        src.push_back(part.src);
        dst.push_back(part.dst);
        ready.push_back(part.ready.get());
      }
      pipeline->allreduce(info.dtype, src, dst, info.count, ready, static_cast<std::uint32_t>(detail::fnv1a(name)));
    } catch (const MismatchError&) {
      // every node saw the same verdict, so the group stays in step; check again next time
      error = std::current_exception();
      validated.erase(name);
    } catch (...) {
      error = std::current_exception();
      breaks_group = true;
    }

    lock.lock();
    for (Contribution& part : parts) {
      part.completion->done = true;
      part.completion->error = error;
    }
    if (breaks_group) {
      if (!failure) failure = error;
      fail_pending(failure);
    }
    cv.notify_all();
  }
};

NodeGroup::NodeGroup(CopyBackend& backend, Transport* transport, NodeOptions options)
    : impl_(std::make_unique<Impl>(backend, transport, std::move(options))) {
  const NodeOptions& o = impl_->options;
  if (o.local_size < 1 || o.local_size != backend.device_count()) {
    FFSIM_KERNEL_THROW(KernelError, "local_size ", o.local_size, " but the ", backend.name(), " backend has ",
                       backend.device_count(), " devices");
  }
  if (o.node_count < 1 || o.node_rank < 0 || o.node_rank >= o.node_count) {
    FFSIM_KERNEL_THROW(KernelError, "node rank ", o.node_rank, " outside [0, ", o.node_count, ")");
  }
  if (transport == nullptr && o.node_count > 1) {
    FFSIM_KERNEL_THROW(KernelError, "node_count ", o.node_count, " needs a transport");
  }
  if (transport != nullptr && (transport->rank() != o.node_rank || transport->size() != o.node_count)) {
    FFSIM_KERNEL_THROW(KernelError, "node rank ", o.node_rank, " of ", o.node_count, " but the ", transport->name(),
                       " transport is rank ", transport->rank(), " of ", transport->size());
  }
  if (o.node_count > 1) impl_->tree = std::make_unique<TreeAllreduce>(*transport, o.tree);
  impl_->pipeline = std::make_unique<Pipeline>(backend, o.pipeline, impl_->tree.get());
  impl_->ranks.resize(static_cast<std::size_t>(o.local_size));
  impl_->engine = std::thread([impl = impl_.get()] { impl->run(); });
}

NodeGroup::~NodeGroup() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  impl_->engine.join();
}

CopyBackend& NodeGroup::backend() noexcept { return impl_->backend; }

const NodeOptions& NodeGroup::options() const noexcept { return impl_->options; }

HfReduce::HfReduce(NodeGroup& group, int local_rank, int local_size, int node_rank, int node_count)
    : group_(*group.impl_), local_rank_(local_rank) {
  const NodeOptions& o = group_.options;
  if (local_size != o.local_size || node_rank != o.node_rank || node_count != o.node_count) {
    FFSIM_KERNEL_THROW(KernelError, "HfReduce(local_rank ", local_rank, ", local_size ", local_size, ", node_rank ",
                       node_rank, ", node_count ", node_count, ") does not match its node group (local_size ",
                       o.local_size, ", node_rank ", o.node_rank, ", node_count ", o.node_count, ")");
  }
  if (local_rank < 0 || local_rank >= local_size) {
    FFSIM_KERNEL_THROW(KernelError, "local rank ", local_rank, " outside [0, ", local_size, ")");
  }
  std::lock_guard lock(group_.mutex);
  LocalRank& rank = group_.ranks[static_cast<std::size_t>(local_rank)];
  if (rank.attached) FFSIM_KERNEL_THROW(KernelError, "local rank ", local_rank, " already has an HfReduce handle");
  rank.attached = true;
}

HfReduce::~HfReduce() {
  std::lock_guard lock(group_.mutex);
  group_.ranks[static_cast<std::size_t>(local_rank_)].attached = false;
}

void HfReduce::register_tensor(std::string_view name, std::size_t count, DType dtype) {
  if (name.empty()) FFSIM_KERNEL_THROW(KernelError, "local rank ", local_rank_, ": a tensor needs a name");
  std::lock_guard lock(group_.mutex);
  auto found = group_.index.find(name);
  if (found != group_.index.end()) {
    const TensorInfo& known = group_.tensors[found->second];
    if (known.count != count || known.dtype != dtype) {
      FFSIM_KERNEL_THROW(MismatchError, "local rank ", local_rank_, " registers tensor '", name, "' as ", count, " x ",
                         dtype_name(dtype), " but it is registered as ", known.count, " x ", dtype_name(known.dtype));
    }
  } else {
    const std::size_t offset = (group_.fused_end + kFusedAlignment - 1) / kFusedAlignment * kFusedAlignment;
    group_.tensors.push_back(TensorInfo{std::string(name), count, dtype, offset});
    group_.index.emplace(std::string(name), group_.tensors.size() - 1);
    group_.fused_end = offset + count * dtype_size(dtype);
  }
  group_.ranks[static_cast<std::size_t>(local_rank_)].registered.emplace(name);
}

void HfReduce::set_fused_destination(DevicePtr<std::byte> destination, std::size_t bytes) {
  std::lock_guard lock(group_.mutex);
  LocalRank& rank = group_.ranks[static_cast<std::size_t>(local_rank_)];
  rank.fused = destination;
  rank.fused_bytes = destination ? bytes : 0;
}

std::size_t HfReduce::fused_offset(std::string_view name) const {
  std::lock_guard lock(group_.mutex);
  return group_.tensor(name, local_rank_).offset;
}

std::size_t HfReduce::fused_bytes() const {
  std::lock_guard lock(group_.mutex);
  return group_.fused_end;
}

void HfReduce::async_reduce(Stream& stream, std::string_view name, DevicePtr<std::byte> data, std::size_t count) {
  DevicePtr<std::byte> destination = data;
  {
    std::lock_guard lock(group_.mutex);
    if (group_.failure) std::rethrow_exception(group_.failure);
    const TensorInfo& info = group_.tensor(name, local_rank_);
    const LocalRank& rank = group_.ranks[static_cast<std::size_t>(local_rank_)];
    if (rank.registered.find(name) == rank.registered.end()) {
      FFSIM_KERNEL_THROW(KernelError, "local rank ", local_rank_, " did not register tensor '", name, "'");
    }
    if (count != info.count) {
      FFSIM_KERNEL_THROW(KernelError, "local rank ", local_rank_, ": async_reduce of tensor '", name, "' with ", count,
                         " elements; it is registered with ", info.count);
    }
    if (stream.device() != local_rank_) {
      FFSIM_KERNEL_THROW(KernelError, "local rank ", local_rank_, ": async_reduce on a stream of device ",
                         stream.device());
    }
    if (count > 0 && !data) FFSIM_KERNEL_THROW(KernelError, "local rank ", local_rank_, ": tensor '", name, "' at null");
    if (rank.fused) {
      const std::size_t end = info.offset + count * dtype_size(info.dtype);
      if (end > rank.fused_bytes) {
        FFSIM_KERNEL_THROW(KernelError, "local rank ", local_rank_, ": tensor '", name, "' ends at byte ", end,
                           " of the fused destination, which has ", rank.fused_bytes);
      }
      destination = rank.fused + info.offset;
    }
  }
  std::unique_ptr<Event> ready = group_.backend.create_event(local_rank_);
  stream.record(*ready);
  auto completion = std::make_shared<Completion>();
  {
    std::lock_guard lock(group_.mutex);
    if (group_.failure) std::rethrow_exception(group_.failure);
    LocalRank& rank = group_.ranks[static_cast<std::size_t>(local_rank_)];
    rank.pending[std::string(name)].push_back(
        Contribution{data, destination, std::move(ready), completion, Clock::now()});
    rank.by_stream[&stream].push_back(completion);
    if (local_rank_ == 0) {
      if (group_.order.empty()) group_.head_since = Clock::now();
      group_.order.emplace_back(name);
    }
  }
  group_.cv.notify_all();
}

void HfReduce::synchronize(Stream& stream) {
  std::unique_lock lock(group_.mutex);
  LocalRank& rank = group_.ranks[static_cast<std::size_t>(local_rank_)];
  auto found = rank.by_stream.find(&stream);
  if (found == rank.by_stream.end()) return;
  std::vector<std::shared_ptr<Completion>> waiting = std::move(found->second);
  rank.by_stream.erase(found);
  group_.cv.wait(lock, [&] {
    return std::all_of(waiting.begin(), waiting.end(), [](const auto& c) { return c->done; });
  });
  for (const auto& completion : waiting) {
    if (completion->error) std::rethrow_exception(completion->error);
  }
}

}  // namespace ffsim::hfreduce
