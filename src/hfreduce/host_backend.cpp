// Host backend: devices emulated by host buffers, each stream a copy thread with an in-order queue.
// SPDX-License-Identifier: Apache-2.0
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>

#include "ffsim/hfreduce/backend.hpp"
#include "ffsim/hfreduce/cpu.hpp"
#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/thread_pool.hpp"
#include "poll.hpp"

namespace ffsim::hfreduce {
namespace {

// How a host thread that synchronizes with a stream or an event waits. A copy thread that finds
// its queue empty sleeps at once; the thread that waits for it (the caller's synchronize) polls
// first, as ThreadPool's caller does, and for the same reason: one that sleeps pays a second
// wake-up, its own, after the copy thread's (docs/hfreduce.md, "The streams' waits"). But only
// while the process's busy copy threads are no more than its CPUs, the rule of CUDA's
// cudaDeviceScheduleAuto (spin while the active contexts are no more than the logical processors):
// with more, a poller takes a core the copies need (an 8-device pipeline of 1-4 MiB, 16 copy
// threads on 2 vCPUs, ran 7-11% slower in the medians of six alternated runs when its thread
// always polled, the ranges overlapping). A stream that waits for another stream's event
// (Stream::wait) does it on its copy thread, which sleeps.
constexpr std::chrono::microseconds kSynchronizeSpin = ThreadPool::kDefaultSpin;
// Copy threads of this process with queued work (one blocked in Stream::wait counts too: the rule is
// a heuristic of how many threads want the cores, not a count of running ones).
std::atomic<int> busy_copy_threads{0};

bool poll_before_sleeping() {
  static const int cpus = usable_cpu_count();
  return busy_copy_threads.load(std::memory_order_relaxed) <= cpus;
}

// One recorded point: done once the stream reached it.
struct Marker {
  std::mutex mutex;
  std::condition_variable cv;
  std::atomic<bool> done{false};
  void complete() {
    {
      std::lock_guard lock(mutex);  // a sleeper checks done under the mutex: it cannot miss this
      done.store(true, std::memory_order_release);
    }
    cv.notify_all();
  }
  bool reached() const noexcept { return done.load(std::memory_order_acquire); }
  // a copy thread's wait (Stream::wait): sleep at once
  void wait() {
    std::unique_lock lock(mutex);
    cv.wait(lock, [this] { return reached(); });
  }
  // a host thread's wait (synchronize): poll, then sleep
  void synchronize() {
    if (poll_before_sleeping() && detail::poll([this] { return reached(); }, kSynchronizeSpin)) return;
    wait();
  }
};

class HostEvent final : public Event {
 public:
  bool query() override {
    const std::shared_ptr<Marker> marker = current();
    return !marker || marker->reached();
  }
  void synchronize() override {
    const std::shared_ptr<Marker> marker = current();
    if (marker) marker->synchronize();
  }
  std::shared_ptr<Marker> rearm() {
    auto marker = std::make_shared<Marker>();
    std::lock_guard lock(mutex_);
    marker_ = marker;
    return marker;
  }
  std::shared_ptr<Marker> current() {
    std::lock_guard lock(mutex_);
    return marker_;
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<Marker> marker_;
};

HostEvent& host_event(Event& event) {
  auto* host = dynamic_cast<HostEvent*>(&event);
  if (host == nullptr) FFSIM_KERNEL_THROW(KernelError, "an event of another backend was used on a host stream");
  return *host;
}

class HostStream final : public Stream {
 public:
  explicit HostStream(int device) : device_(device), worker_([this] { run(); }) {
    if (!host_streams_pinned()) return;
    try {
      pin(worker_);
    } catch (...) {
      stop();  // no destructor runs for a constructor that throws: end the thread here
      throw;
    }
  }
  ~HostStream() override { stop(); }
  int device() const noexcept override { return device_; }
  void copy_d2h(HostPtr<std::byte> dst, DevicePtr<const std::byte> src, std::size_t bytes) override {
    enqueue([d = dst.get(), s = src.get(), bytes] { copy(d, s, bytes); });
  }
  void copy_h2d(DevicePtr<std::byte> dst, HostPtr<const std::byte> src, std::size_t bytes) override {
    enqueue([d = dst.get(), s = src.get(), bytes] { copy(d, s, bytes); });
  }
  void record(Event& event) override {
    enqueue([marker = host_event(event).rearm()] { marker->complete(); });
  }
  void wait(Event& event) override {
    std::shared_ptr<Marker> marker = host_event(event).current();
    if (marker) enqueue([marker] { marker->wait(); });
  }
  void synchronize() override {
    auto marker = std::make_shared<Marker>();
    enqueue([marker] { marker->complete(); });
    marker->synchronize();
  }

 private:
  // HFREDUCE_HOST_PIN=1: each stream's copy thread runs on its own CPU of the process's allowed
  // set, in turn (stream k of the process on allowed CPU k mod n), as a GPU's copy engines run side
  // by side. Not the default: left to the scheduler, a D2H and an H2D issued together took turns on
  // 2-CPU VMs (up to 16 MiB; pinned apart they overlap, so both apparently ran on the issuing
  // thread's CPU), but pinned, every hand-off crosses CPUs: small copies, pipelines of many devices
  // and several ranks per machine ran slower (docs/hfreduce.md, "Copy threads pinned or not").
  static void pin(std::thread& t) {
    static std::atomic<unsigned> next{0};
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    const int n = CPU_COUNT(&allowed);
    if (n < 2) return;
    int want = static_cast<int>(next++ % static_cast<unsigned>(n));
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &allowed) && want-- == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        // Asked for and not done is an error, not a silent fallback: the benchmark records the
        // setting as the condition of its measurements.
        if (const int rc = pthread_setaffinity_np(t.native_handle(), sizeof one, &one); rc != 0)
          FFSIM_KERNEL_THROW(KernelError, "HFREDUCE_HOST_PIN=1: cannot pin a copy thread to CPU ", cpu, " (error ", rc, ")");
        return;
      }
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  static void copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  void enqueue(std::function<void()> work) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(work));
    }
    cv_.notify_one();
  }
  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      busy_copy_threads.fetch_add(1, std::memory_order_relaxed);
      while (!queue_.empty()) {
        std::function<void()> work = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        work();
        lock.lock();
      }
      busy_copy_threads.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  int device_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  std::thread worker_;
};

class HostBackend final : public CopyBackend {
 public:
  explicit HostBackend(int devices) : devices_(devices) {
    FFSIM_KERNEL_CHECK(devices >= 1, "the host backend needs at least 1 device, got ", devices);
  }
  std::string_view name() const noexcept override { return "host"; }
  int device_count() const noexcept override { return devices_; }
  std::string describe_device(int device) const override {
    check_device(device);
    return "host-emulated device " + std::to_string(device);
  }
  DeviceBuffer allocate_device(int device, std::size_t bytes) override {
    check_device(device);
    if (bytes == 0) return DeviceBuffer();  // nothing to own (a null buffer would never be released)
    HostBuffer host = HostBuffer::allocate(bytes);
    auto* owner = new HostBuffer(std::move(host));
    return DeviceBuffer(device, owner->data(), bytes, [owner](std::byte*) { delete owner; });
  }
  HostBuffer allocate_pinned(std::size_t bytes) override { return HostBuffer::allocate(bytes, Placement::Interleave); }
  std::unique_ptr<Stream> create_stream(int device) override {
    check_device(device);
    return std::make_unique<HostStream>(device);
  }
  std::unique_ptr<Event> create_event(int device) override {
    check_device(device);
    return std::make_unique<HostEvent>();
  }
  void upload(DevicePtr<std::byte> dst, const void* src, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(dst.get(), src, bytes);
  }
  void download(void* dst, DevicePtr<const std::byte> src, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src.get(), bytes);
  }

 private:
  void check_device(int device) const {
    if (device < 0 || device >= devices_) {
      FFSIM_KERNEL_THROW(KernelError, "device ", device, " out of range: the host backend has ", devices_, " devices");
    }
  }
  int devices_;
};

}  // namespace

bool host_streams_pinned() noexcept {
  const char* v = std::getenv("HFREDUCE_HOST_PIN");
  return v != nullptr && std::string_view(v) == "1";
}

std::unique_ptr<CopyBackend> make_host_backend(int devices) {
  if (const char* v = std::getenv("HFREDUCE_HOST_PIN"); v != nullptr && std::string_view(v) != "0" && std::string_view(v) != "1")
    FFSIM_KERNEL_THROW(KernelError, "HFREDUCE_HOST_PIN=", v, ": expected 1 (pin each stream's copy thread to a CPU) or 0 (leave them to the scheduler, the default)");
  return std::make_unique<HostBackend>(devices);
}

}  // namespace ffsim::hfreduce
