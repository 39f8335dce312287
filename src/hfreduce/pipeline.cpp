// Pipeline: the chunk loop of Algorithm 1 with reused pinned slots and per-device copy streams.
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/pipeline.hpp"

#include <algorithm>

#include "ffsim/hfreduce/error.hpp"

namespace ffsim::hfreduce {

Pipeline::Pipeline(CopyBackend& backend, PipelineOptions options, TreeAllreduce* inter_node)
    : backend_(backend),
      options_(options),
      inter_node_(inter_node),
      devices_(backend.device_count()),
      depth_(static_cast<std::size_t>(std::max(options.depth, 1))),
      reducer_(options.reducer) {
  FFSIM_KERNEL_CHECK(options_.depth >= 1, "pipeline depth must be >= 1, got ", options_.depth);
  FFSIM_KERNEL_CHECK(options_.chunk_bytes >= 4, "pipeline chunks must hold an element, got ", options_.chunk_bytes,
                     " bytes");
  FFSIM_KERNEL_CHECK(devices_ >= 1 && devices_ <= kMaxReduceInputs, "a node has 1..", kMaxReduceInputs,
                     " devices, the backend has ", devices_);
  for (int d = 0; d < devices_; ++d) {
    d2h_.push_back(backend_.create_stream(d));
    h2d_.push_back(backend_.create_stream(d));
  }
  for (std::size_t slot = 0; slot < depth_; ++slot) {
    result_.push_back(backend_.allocate_pinned(options_.chunk_bytes));
    reducer_.first_touch(result_.back().data(), result_.back().bytes());
    for (int d = 0; d < devices_; ++d) {
      if (devices_ > 1) {
        staging_.push_back(backend_.allocate_pinned(options_.chunk_bytes));
        reducer_.first_touch(staging_.back().data(), staging_.back().bytes());
      }
      d2h_done_.push_back(backend_.create_event(d));
      h2d_done_.push_back(backend_.create_event(d));
    }
  }
}

Pipeline::~Pipeline() {
  for (auto& stream : d2h_) stream->synchronize();
  for (auto& stream : h2d_) stream->synchronize();
}

void Pipeline::allreduce(DType dtype, std::span<const DevicePtr<const std::byte>> src,
                         std::span<const DevicePtr<std::byte>> dst, std::size_t count, std::span<Event* const> ready,
                         std::uint32_t fingerprint) {
  const auto devices = static_cast<std::size_t>(devices_);
  if (src.size() != devices || dst.size() != devices) {
    FFSIM_KERNEL_THROW(KernelError, "pipeline over ", devices_, " devices got ", src.size(), " sources and ", dst.size(),
                       " destinations");
  }
  if (!ready.empty() && ready.size() != devices) {
    FFSIM_KERNEL_THROW(KernelError, "pipeline over ", devices_, " devices got ", ready.size(), " ready events");
  }
  for (std::size_t d = 0; d < devices && count > 0; ++d) {
    if (!src[d] || !dst[d]) FFSIM_KERNEL_THROW(KernelError, "device ", d, " has a null buffer for ", count, " elements");
  }
  if (count == 0) return;

  const std::size_t element = dtype_size(dtype);
  const std::size_t chunk = std::max<std::size_t>(1, options_.chunk_bytes / element);
  const std::size_t chunks = (count + chunk - 1) / chunk;
  const auto offset_of = [&](std::size_t c) { return c * chunk * element; };
  const auto elements_of = [&](std::size_t c) { return std::min(chunk, count - c * chunk); };
  std::vector<TreeAllreduce::Ticket> tickets(depth_, 0);
  std::size_t next_h2d = 0;  // first chunk whose H2D is not issued yet

  const auto issue_d2h = [&](std::size_t c) {
    const std::size_t slot = c % depth_;
    for (int d = 0; d < devices_; ++d) {
      Stream& stream = *d2h_[static_cast<std::size_t>(d)];
      std::byte* landing = devices_ == 1 ? result_[slot].data() : staging_[index(slot, d)].data();
      // one device: the result slot is reused, so wait until chunk c - depth has gone back
      if (devices_ == 1 && c >= depth_) stream.wait(*h2d_done_[index(slot, d)]);
      stream.copy_d2h(HostPtr<std::byte>(landing), src[static_cast<std::size_t>(d)] + offset_of(c),
                      elements_of(c) * element);
      stream.record(*d2h_done_[index(slot, d)]);
    }
  };
  const auto issue_h2d = [&](std::size_t c) {
    const std::size_t slot = c % depth_;
    for (int d = 0; d < devices_; ++d) {
      Stream& stream = *h2d_[static_cast<std::size_t>(d)];
      stream.copy_h2d(dst[static_cast<std::size_t>(d)] + offset_of(c), HostPtr<const std::byte>(result_[slot].data()),
                      elements_of(c) * element);
      stream.record(*h2d_done_[index(slot, d)]);
    }
    if (devices_ == 1 && c + depth_ < chunks) issue_d2h(c + depth_);
  };
  // Issues H2D of every chunk up to `last` (inclusive), waiting for the inter-node stage of each.
  const auto issue_h2d_through = [&](std::size_t last) {
    for (; next_h2d <= last; ++next_h2d) {
      if (inter_node_ != nullptr) inter_node_->wait(tickets[next_h2d % depth_]);
      issue_h2d(next_h2d);
    }
  };
  // Issues H2D of the chunks up to `last` whose inter-node stage is done, in order, without blocking.
  const auto issue_ready_h2d = [&](std::size_t last) {
    for (; next_h2d <= last; ++next_h2d) {
      if (inter_node_ != nullptr && !inter_node_->done(tickets[next_h2d % depth_])) return;
      issue_h2d(next_h2d);
    }
  };
  const auto wait_h2d = [&](std::size_t c) {
    for (int d = 0; d < devices_; ++d) h2d_done_[index(c % depth_, d)]->synchronize();
  };

  try {
    for (std::size_t d = 0; d < ready.size(); ++d) {
      if (ready[d] == nullptr) continue;
      d2h_[d]->wait(*ready[d]);  // the producer has finished writing src[d]
      h2d_[d]->wait(*ready[d]);  // and whatever it queued before on dst[d]
    }
    for (std::size_t c = 0; c < std::min(depth_, chunks); ++c) issue_d2h(c);
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t slot = c % depth_;
      // one device: D2H of chunk c is issued together with H2D of chunk c - depth
      if (devices_ == 1 && c >= depth_) issue_h2d_through(c - depth_);
      for (int d = 0; d < devices_; ++d) d2h_done_[index(slot, d)]->synchronize();
      if (devices_ > 1) {
        if (c >= depth_) {
          // the result slot is reused: chunk c - depth must have gone back to every device
          issue_h2d_through(c - depth_);
          wait_h2d(c - depth_);
        }
        const void* inputs[kMaxReduceInputs];
        for (int d = 0; d < devices_; ++d) inputs[d] = staging_[index(slot, d)].data();
        reducer_.sum(dtype, result_[slot].data(), std::span<const void* const>(inputs, devices), elements_of(c));
        // the staging slot is free again: start copying chunk c + depth
        if (c + depth_ < chunks) issue_d2h(c + depth_);
      }
      if (inter_node_ != nullptr) {
        tickets[slot] = inter_node_->submit(result_[slot].data(), elements_of(c), dtype, fingerprint);
      }
      issue_ready_h2d(c);
    }
    issue_h2d_through(chunks - 1);
    for (std::size_t c = chunks - std::min(depth_, chunks); c < chunks; ++c) wait_h2d(c);
  } catch (...) {
    // Never return with copies or tree threads still writing into or reading from the caller's or
    // our buffers.
    if (inter_node_ != nullptr) inter_node_->quiesce();
    for (auto& stream : d2h_) stream->synchronize();
    for (auto& stream : h2d_) stream->synchronize();
    throw;
  }
}

}  // namespace ffsim::hfreduce
