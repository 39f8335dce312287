// Error types shared by every layer.
// SPDX-License-Identifier: Apache-2.0
#include "core/error.hpp"

#include <utility>

namespace ffsim {

ConfigError::ConfigError(std::string file, std::string pointer, std::string message)
    : Error(file + (pointer.empty() ? "" : ":" + pointer) + ": " + message),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      message_(std::move(message)) {}

void assertion_failed(const char* cond, const char* file, int line, const std::string& msg) {
  throw InternalError(std::string("internal error: assertion '") + cond + "' failed at " + file + ":" +
                      std::to_string(line) + ": " + msg);
}

}  // namespace ffsim
