// FFSIM_CUDA_CHECK: turns a failed CUDA runtime call into a KernelError with file:line (CUDA builds only).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include "ffsim/hfreduce/error.hpp"

/// Evaluates a cudaError_t expression; on failure throws KernelError naming the call and the error.
#define FFSIM_CUDA_CHECK(call)                                                                        \
  do {                                                                                                \
    const cudaError_t ffsim_cuda_status = (call);                                                     \
    if (ffsim_cuda_status != cudaSuccess) {                                                           \
      FFSIM_KERNEL_THROW(::ffsim::hfreduce::KernelError, #call, " failed: ",                          \
                         cudaGetErrorName(ffsim_cuda_status), " (", cudaGetErrorString(ffsim_cuda_status), \
                         ")");                                                                        \
    }                                                                                                 \
  } while (false)
