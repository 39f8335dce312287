// KernelError: keeps file, line and message apart and joins them for what().
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/error.hpp"

#include <cstring>

namespace ffsim::hfreduce {
namespace {
std::string basename_of(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? std::string(slash + 1) : std::string(path);
}
}  // namespace

KernelError::KernelError(const char* file, int line, const std::string& message)
    : std::runtime_error(basename_of(file) + ":" + std::to_string(line) + ": " + message),
      file_(basename_of(file)),
      line_(line),
      message_(message) {}

}  // namespace ffsim::hfreduce
