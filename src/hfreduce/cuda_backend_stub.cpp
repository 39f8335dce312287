// Built without CUDA: the CUDA backend reports itself absent.
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/backend.hpp"
#include "ffsim/hfreduce/error.hpp"

namespace ffsim::hfreduce {

bool cuda_backend_built() noexcept { return false; }

int cuda_device_count(std::string* why_none) {
  if (why_none != nullptr) *why_none = "hfreduce was built without CUDA (FFSIM_CUDA=OFF or no nvcc)";
  return 0;
}

std::unique_ptr<CopyBackend> make_cuda_backend(const std::vector<int>& /*physical_devices*/) {
  FFSIM_KERNEL_THROW(KernelError, "the CUDA backend is not built (FFSIM_CUDA=OFF or no nvcc at configure time)");
}

}  // namespace ffsim::hfreduce
