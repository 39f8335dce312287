// CUDA backend: cudaMemcpyAsync on per-device non-blocking streams, events, page-locked host memory.
// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime_api.h>

#include <string>
#include <utility>
#include <vector>

#include "ffsim/hfreduce/backend.hpp"
#include "ffsim/hfreduce/cuda_check.hpp"

namespace ffsim::hfreduce {
namespace {

class CudaEvent final : public Event {
 public:
  explicit CudaEvent(int physical) : physical_(physical) {
    FFSIM_CUDA_CHECK(cudaSetDevice(physical_));
    FFSIM_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent() override { (void)cudaEventDestroy(event_); }
  bool query() override {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return false;
    FFSIM_CUDA_CHECK(status);
    return true;
  }
  void synchronize() override { FFSIM_CUDA_CHECK(cudaEventSynchronize(event_)); }
  cudaEvent_t handle() const noexcept { return event_; }
  int physical() const noexcept { return physical_; }

 private:
  int physical_;
  cudaEvent_t event_ = nullptr;
};

CudaEvent& cuda_event(Event& event) {
  auto* cuda = dynamic_cast<CudaEvent*>(&event);
  if (cuda == nullptr) FFSIM_KERNEL_THROW(KernelError, "an event of another backend was used on a CUDA stream");
  return *cuda;
}

class CudaStream final : public Stream {
 public:
  CudaStream(int device, int physical) : device_(device), physical_(physical) {
    FFSIM_CUDA_CHECK(cudaSetDevice(physical_));
    FFSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  ~CudaStream() override { (void)cudaStreamDestroy(stream_); }
  int device() const noexcept override { return device_; }
  void copy_d2h(HostPtr<std::byte> dst, DevicePtr<const std::byte> src, std::size_t bytes) override {
    if (bytes == 0) return;
    FFSIM_CUDA_CHECK(cudaSetDevice(physical_));
    FFSIM_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToHost, stream_));
  }
  void copy_h2d(DevicePtr<std::byte> dst, HostPtr<const std::byte> src, std::size_t bytes) override {
    if (bytes == 0) return;
    FFSIM_CUDA_CHECK(cudaSetDevice(physical_));
    FFSIM_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyHostToDevice, stream_));
  }
  void record(Event& event) override {
    CudaEvent& cuda = cuda_event(event);
    if (cuda.physical() != physical_) {
      FFSIM_KERNEL_THROW(KernelError, "event of CUDA device ", cuda.physical(), " recorded on a stream of CUDA device ",
                         physical_);
    }
    FFSIM_CUDA_CHECK(cudaSetDevice(physical_));
    FFSIM_CUDA_CHECK(cudaEventRecord(cuda.handle(), stream_));
  }
  void wait(Event& event) override {
    FFSIM_CUDA_CHECK(cudaSetDevice(physical_));
    FFSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, cuda_event(event).handle(), 0));
  }
  void synchronize() override { FFSIM_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  int device_;
  int physical_;
  cudaStream_t stream_ = nullptr;
};

class CudaBackend final : public CopyBackend {
 public:
  explicit CudaBackend(std::vector<int> physical) : physical_(std::move(physical)) {
    if (physical_.empty()) FFSIM_KERNEL_THROW(KernelError, "the CUDA backend needs at least 1 device");
    std::string why;
    const int visible = cuda_device_count(&why);
    for (std::size_t d = 0; d < physical_.size(); ++d) {
      if (physical_[d] < 0 || physical_[d] >= visible) {
        FFSIM_KERNEL_THROW(KernelError, "virtual device ", d, " maps to CUDA device ", physical_[d], " but ", visible,
                           " CUDA devices are visible", why.empty() ? "" : ": ", why);
      }
    }
  }
  std::string_view name() const noexcept override { return "cuda"; }
  int device_count() const noexcept override { return static_cast<int>(physical_.size()); }
  std::string describe_device(int device) const override {
    const int physical = physical_of(device);
    cudaDeviceProp properties{};
    FFSIM_CUDA_CHECK(cudaGetDeviceProperties(&properties, physical));
    return "cuda:" + std::to_string(physical) + " (" + properties.name + ")";
  }
  DeviceBuffer allocate_device(int device, std::size_t bytes) override {
    const int physical = physical_of(device);
    if (bytes == 0) return DeviceBuffer();
    FFSIM_CUDA_CHECK(cudaSetDevice(physical));
    void* raw = nullptr;
    FFSIM_CUDA_CHECK(cudaMalloc(&raw, bytes));
    return DeviceBuffer(device, static_cast<std::byte*>(raw), bytes, [](std::byte* p) { (void)cudaFree(p); });
  }
  HostBuffer allocate_pinned(std::size_t bytes) override {
    if (bytes == 0) return HostBuffer();
    void* raw = nullptr;
    FFSIM_CUDA_CHECK(cudaHostAlloc(&raw, bytes, cudaHostAllocPortable));
    return HostBuffer(static_cast<std::byte*>(raw), bytes, [](std::byte* p, std::size_t) { (void)cudaFreeHost(p); });
  }
  std::unique_ptr<Stream> create_stream(int device) override {
    return std::make_unique<CudaStream>(device, physical_of(device));
  }
  std::unique_ptr<Event> create_event(int device) override { return std::make_unique<CudaEvent>(physical_of(device)); }
  void upload(DevicePtr<std::byte> dst, const void* src, std::size_t bytes) override {
    if (bytes > 0) FFSIM_CUDA_CHECK(cudaMemcpy(dst.get(), src, bytes, cudaMemcpyHostToDevice));
  }
  void download(void* dst, DevicePtr<const std::byte> src, std::size_t bytes) override {
    if (bytes > 0) FFSIM_CUDA_CHECK(cudaMemcpy(dst, src.get(), bytes, cudaMemcpyDeviceToHost));
  }

 private:
  int physical_of(int device) const {
    if (device < 0 || device >= device_count()) {
      FFSIM_KERNEL_THROW(KernelError, "device ", device, " out of range: the CUDA backend has ", device_count(),
                         " devices");
    }
    return physical_[static_cast<std::size_t>(device)];
  }
  std::vector<int> physical_;
};

}  // namespace

bool cuda_backend_built() noexcept { return true; }

int cuda_device_count(std::string* why_none) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (why_none != nullptr) *why_none = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
    (void)cudaGetLastError();  // reset the last-error state so later calls start clean
    return 0;
  }
  if (count == 0 && why_none != nullptr) *why_none = "no CUDA device visible";
  return count;
}

std::unique_ptr<CopyBackend> make_cuda_backend(const std::vector<int>& physical_devices) {
  return std::make_unique<CudaBackend>(physical_devices);
}

}  // namespace ffsim::hfreduce
