// Memory spaces in the type (HostPtr, DevicePtr) and move-only owning buffers (HostBuffer, DeviceBuffer).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <functional>
#include <type_traits>

namespace ffsim::hfreduce {

/// A non-owning pointer into host memory (pageable or pinned). Arithmetic is in elements.
template <class T>
class HostPtr {
 public:
  constexpr HostPtr() noexcept = default;
  constexpr explicit HostPtr(T* raw) noexcept : raw_(raw) {}
  template <class U>
    requires std::is_convertible_v<U*, T*>
  constexpr HostPtr(HostPtr<U> other) noexcept : raw_(other.get()) {}  // NOLINT: like T* -> const T*
  constexpr T* get() const noexcept { return raw_; }
  constexpr HostPtr operator+(std::size_t elements) const noexcept { return HostPtr(raw_ + elements); }
  constexpr explicit operator bool() const noexcept { return raw_ != nullptr; }
  friend constexpr bool operator==(HostPtr, HostPtr) = default;

 private:
  T* raw_ = nullptr;
};

/// A non-owning pointer into the memory of a device (a GPU, or an emulated device of the host
/// backend). Never dereferenced on the host. Arithmetic is in elements.
template <class T>
class DevicePtr {
 public:
  constexpr DevicePtr() noexcept = default;
  constexpr explicit DevicePtr(T* raw) noexcept : raw_(raw) {}
  template <class U>
    requires std::is_convertible_v<U*, T*>
  constexpr DevicePtr(DevicePtr<U> other) noexcept : raw_(other.get()) {}  // NOLINT: like T* -> const T*
  constexpr T* get() const noexcept { return raw_; }
  constexpr DevicePtr operator+(std::size_t elements) const noexcept { return DevicePtr(raw_ + elements); }
  constexpr explicit operator bool() const noexcept { return raw_ != nullptr; }
  friend constexpr bool operator==(DevicePtr, DevicePtr) = default;

 private:
  T* raw_ = nullptr;
};

/// Where a host allocation's pages go.
enum class Placement {
  Default,     ///< first touch (the thread that writes a page first owns it)
  Interleave,  ///< round-robin over NUMA nodes when libnuma reports more than one, else Default
};

/// Owning host allocation, move-only. Plain ones are 64-byte aligned (2 MiB for 2 MiB and more,
/// with transparent huge pages requested); pinned ones come from a backend.
class HostBuffer {
 public:
  using Deleter = std::function<void(std::byte*, std::size_t)>;

  HostBuffer() noexcept = default;
  /// Takes ownership of bytes at data; deleter(data, bytes) releases them.
  HostBuffer(std::byte* data, std::size_t bytes, Deleter deleter) noexcept;
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();

  /// Allocates bytes of pageable host memory (not zeroed). Throws KernelError when out of memory.
  static HostBuffer allocate(std::size_t bytes, Placement placement = Placement::Default);

  std::byte* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  HostPtr<std::byte> ptr() const noexcept { return HostPtr<std::byte>(data_); }
  template <class T>
  T* as() const noexcept {
    return reinterpret_cast<T*>(data_);
  }

 private:
  void release() noexcept;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  Deleter deleter_;
};

/// Owning allocation on one device of a backend, move-only.
class DeviceBuffer {
 public:
  using Deleter = std::function<void(std::byte*)>;

  DeviceBuffer() noexcept = default;
  DeviceBuffer(int device, std::byte* data, std::size_t bytes, Deleter deleter) noexcept;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  int device() const noexcept { return device_; }
  std::size_t bytes() const noexcept { return bytes_; }
  DevicePtr<std::byte> ptr() const noexcept { return DevicePtr<std::byte>(data_); }

 private:
  void release() noexcept;
  int device_ = -1;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  Deleter deleter_;
};

}  // namespace ffsim::hfreduce
