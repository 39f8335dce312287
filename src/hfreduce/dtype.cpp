// DType names.
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/dtype.hpp"

#include "ffsim/hfreduce/error.hpp"

namespace ffsim::hfreduce {

std::string_view dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::F32:
      return "fp32";
    case DType::BF16:
      return "bf16";
    case DType::F16:
      return "fp16";
  }
  return "unknown";
}

DType parse_dtype(std::string_view name) {
  for (DType dtype : {DType::F32, DType::BF16, DType::F16}) {
    if (name == dtype_name(dtype)) return dtype;
  }
  FFSIM_KERNEL_THROW(KernelError, "unknown dtype \"", name, "\"; valid: fp32, bf16, fp16");
}

}  // namespace ffsim::hfreduce
