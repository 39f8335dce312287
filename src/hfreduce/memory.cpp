// Owning buffers: aligned (optionally NUMA-interleaved, huge-page advised) host memory, device buffers.
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/memory.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <utility>

#include "ffsim/hfreduce/cpu.hpp"
#include "ffsim/hfreduce/error.hpp"

#ifdef FFSIM_HFREDUCE_HAS_NUMA
#include <numa.h>
#endif

namespace ffsim::hfreduce {
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kCacheLine = 64;
}  // namespace

HostBuffer::HostBuffer(std::byte* data, std::size_t bytes, Deleter deleter) noexcept
    : data_(data), bytes_(bytes), deleter_(std::move(deleter)) {}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      deleter_(std::move(other.deleter_)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    deleter_ = std::move(other.deleter_);
  }
  return *this;
}

HostBuffer::~HostBuffer() { release(); }

void HostBuffer::release() noexcept {
  if (data_ != nullptr && deleter_) deleter_(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

HostBuffer HostBuffer::allocate(std::size_t bytes, Placement placement) {
  if (bytes == 0) return HostBuffer();
#ifdef FFSIM_HFREDUCE_HAS_NUMA
  if (placement == Placement::Interleave && numa_node_count() > 1) {
    void* raw = numa_alloc_interleaved(bytes);
    if (raw == nullptr) FFSIM_KERNEL_THROW(KernelError, "numa_alloc_interleaved of ", bytes, " bytes failed");
    return HostBuffer(static_cast<std::byte*>(raw), bytes, [](std::byte* p, std::size_t n) { numa_free(p, n); });
  }
#else
  (void)placement;
#endif
  const std::size_t alignment = bytes >= kHugePage ? kHugePage : kCacheLine;
  const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* raw = std::aligned_alloc(alignment, rounded);
  if (raw == nullptr) FFSIM_KERNEL_THROW(KernelError, "allocating ", bytes, " bytes of host memory failed");
  if (alignment == kHugePage) {
    // Advice only: fewer TLB misses on streaming loops where transparent huge pages are on.
    (void)madvise(raw, rounded, MADV_HUGEPAGE);
  }
  return HostBuffer(static_cast<std::byte*>(raw), bytes, [](std::byte* p, std::size_t) { std::free(p); });
}

DeviceBuffer::DeviceBuffer(int device, std::byte* data, std::size_t bytes, Deleter deleter) noexcept
    : device_(device), data_(data), bytes_(bytes), deleter_(std::move(deleter)) {}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : device_(std::exchange(other.device_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      deleter_(std::move(other.deleter_)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::exchange(other.device_, -1);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    deleter_ = std::move(other.deleter_);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() noexcept {
  if (data_ != nullptr && deleter_) deleter_(data_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace ffsim::hfreduce
