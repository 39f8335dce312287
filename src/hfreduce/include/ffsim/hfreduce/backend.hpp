// Copy backends of the pipeline: devices, in-order streams, events, device and pinned memory.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ffsim/hfreduce/memory.hpp"

namespace ffsim::hfreduce {

/// Marks a point in a stream's work (like cudaEvent_t). Move-only through unique_ptr.
class Event {
 public:
  virtual ~Event() = default;
  /// True when all work captured by the last record() has completed (true if never recorded).
  virtual bool query() = 0;
  /// Blocks the calling thread until that work has completed.
  virtual void synchronize() = 0;
};

/// An in-order queue of copies on one device (like cudaStream_t). Methods enqueue and return at
/// once; the queue runs them in order. Move-only through unique_ptr.
class Stream {
 public:
  virtual ~Stream() = default;
  /// Device (index into the backend's devices) the stream belongs to.
  virtual int device() const noexcept = 0;
  /// Device -> host copy of bytes.
  virtual void copy_d2h(HostPtr<std::byte> dst, DevicePtr<const std::byte> src, std::size_t bytes) = 0;
  /// Host -> device copy of bytes.
  virtual void copy_h2d(DevicePtr<std::byte> dst, HostPtr<const std::byte> src, std::size_t bytes) = 0;
  /// event captures all work enqueued so far. event must come from the same backend.
  virtual void record(Event& event) = 0;
  /// Later work of this stream waits until event's captured work has completed.
  virtual void wait(Event& event) = 0;
  /// Blocks the calling thread until all enqueued work has completed.
  virtual void synchronize() = 0;
};

/// A set of devices and the copy machinery between them and host memory.
class CopyBackend {
 public:
  virtual ~CopyBackend() = default;
  /// Registry name: "host" or "cuda".
  virtual std::string_view name() const noexcept = 0;
  /// Devices (local ranks) this backend drives; virtual ones may share a physical GPU.
  virtual int device_count() const noexcept = 0;
  /// One line about a device, e.g. "cuda:0 (NVIDIA H200)" or "host-emulated device 3".
  virtual std::string describe_device(int device) const = 0;
  /// bytes of device memory on device.
  virtual DeviceBuffer allocate_device(int device, std::size_t bytes) = 0;
  /// bytes of host memory the devices can copy at full speed (page-locked for CUDA).
  virtual HostBuffer allocate_pinned(std::size_t bytes) = 0;
  virtual std::unique_ptr<Stream> create_stream(int device) = 0;
  /// An event to be recorded on streams of device.
  virtual std::unique_ptr<Event> create_event(int device) = 0;
  /// Blocking host -> device copy for setup and checks (not for the hot path).
  virtual void upload(DevicePtr<std::byte> dst, const void* src, std::size_t bytes) = 0;
  /// Blocking device -> host copy for setup and checks (not for the hot path).
  virtual void download(void* dst, DevicePtr<const std::byte> src, std::size_t bytes) = 0;
};

/// Devices emulated by host buffers; each stream is a thread running its copies (memcpy) in order.
/// With the environment variable HFREDUCE_HOST_PIN=1 each stream's thread is pinned to a CPU of the
/// process's allowed set in turn (stream k on allowed CPU k mod n); unset or 0, the scheduler places
/// them. Another value is a KernelError.
std::unique_ptr<CopyBackend> make_host_backend(int devices);

/// Whether host-backend streams are pinned (HFREDUCE_HOST_PIN=1).
bool host_streams_pinned() noexcept;

/// True when this build has the CUDA backend.
bool cuda_backend_built() noexcept;

/// CUDA devices visible; 0 with the reason in *why_none (driver missing, no device, not built).
int cuda_device_count(std::string* why_none = nullptr);

/// CUDA backend: virtual device d lives on CUDA device physical_devices[d] (several virtual devices
/// may share one GPU, e.g. {0,0,0,0,0,0,0,0}). cudaMemcpyAsync on per-stream cudaStream_t, events,
/// page-locked host memory. Throws KernelError when built without CUDA or a device is missing.
std::unique_ptr<CopyBackend> make_cuda_backend(const std::vector<int>& physical_devices);

}  // namespace ffsim::hfreduce
