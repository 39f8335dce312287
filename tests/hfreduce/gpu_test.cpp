// CUDA backend test: the pipeline with 1 and 8 virtual devices on GPU 0; exits 77 (skip) without a GPU.
// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ffsim/hfreduce/backend.hpp"
#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/hfreduce.hpp"
#include "ffsim/hfreduce/pipeline.hpp"
#include "test_util.hpp"

using namespace ffsim::hfreduce;

namespace {

constexpr int kSkip = 77;  // ctest SKIP_RETURN_CODE

// Virtual device d holds pattern(d, i); every device must end with pattern_sum(devices, i).
bool check_pipeline(int devices, std::size_t count, DType dtype, std::size_t chunk_bytes) {
  auto backend = make_cuda_backend(std::vector<int>(static_cast<std::size_t>(devices), 0));
  PipelineOptions options;
  options.chunk_bytes = chunk_bytes;
  Pipeline pipeline(*backend, options);
  std::vector<DeviceBuffer> buffers;
  std::vector<DevicePtr<const std::byte>> src;
  std::vector<DevicePtr<std::byte>> dst;
  const std::size_t bytes = count * dtype_size(dtype);
  for (int d = 0; d < devices; ++d) {
    buffers.push_back(backend->allocate_device(d, bytes));
    const auto data = test::pattern_buffer(dtype, d, count);
    backend->upload(buffers.back().ptr(), data.data(), bytes);
    src.push_back(buffers.back().ptr());
    dst.push_back(buffers.back().ptr());
  }
  pipeline.allreduce(dtype, src, dst, count);
  std::vector<std::byte> host(bytes);
  for (int d = 0; d < devices; ++d) {
    backend->download(host.data(), buffers[static_cast<std::size_t>(d)].ptr(), bytes);
    const std::size_t wrong = test::first_wrong(dtype, host.data(), count, devices);
    if (wrong != count) {
      std::printf("FAILED: %d devices, %s, %zu elements, chunk %zu: device %d wrong from element %zu\n", devices,
                  std::string(dtype_name(dtype)).c_str(), count, chunk_bytes, d, wrong);
      return false;
    }
  }
  std::printf("ok: %d virtual devices on GPU 0, %s, %zu elements, chunk %zu bytes\n", devices,
              std::string(dtype_name(dtype)).c_str(), count, chunk_bytes);
  return true;
}

}  // namespace

int main() {
  std::string why;
  if (cuda_device_count(&why) == 0) {
    // FFSIM_REQUIRE_GPU=1 (scripts/device-hfreduce.sh sets it): on a machine that should have a GPU,
    // a missing or broken one (driver too old, no device node) is a failure, not a skip.
    if (const char* req = std::getenv("FFSIM_REQUIRE_GPU"); req != nullptr && std::string(req) == "1") {
      std::printf("FAILED: FFSIM_REQUIRE_GPU=1 but no usable CUDA device: %s\n", why.c_str());
      return 1;
    }
    std::printf("SKIP: no CUDA device: %s\n", why.c_str());
    return kSkip;
  }
  try {
    auto probe = make_cuda_backend({0});
    std::printf("GPU 0: %s\n", probe->describe_device(0).c_str());
    bool ok = true;
    for (int devices : {1, 2, 8}) {
      for (DType dtype : test::kAllDtypes) {
        for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{4097}, std::size_t{3000017}}) {
          ok = check_pipeline(devices, count, dtype, std::size_t{1} << 20) && ok;
        }
      }
      ok = check_pipeline(devices, (std::size_t{64} << 20) / 4 + 5, DType::F32, std::size_t{4} << 20) && ok;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
}
