// hfreduce errors: KernelError with file:line, its timeout and mismatch kinds, and the check macros.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace ffsim::hfreduce {

/// Any failure of the kernel library. what() reads "file:line: message"; the parts stay apart.
class KernelError : public std::runtime_error {
 public:
  KernelError(const char* file, int line, const std::string& message);
  /// Source file that raised the error (basename).
  const std::string& file() const noexcept { return file_; }
  /// Source line that raised the error.
  int line() const noexcept { return line_; }
  /// The message without the file:line prefix.
  const std::string& message() const noexcept { return message_; }

 private:
  std::string file_;
  int line_;
  std::string message_;
};

/// A peer (another node, or a local rank) did not answer within the configured timeout.
class TimeoutError : public KernelError {
 public:
  using KernelError::KernelError;
};

/// Ranks disagree on what is reduced: tensor size, dtype or name differ across ranks.
class MismatchError : public KernelError {
 public:
  using KernelError::KernelError;
};

namespace detail {
/// Builds a message from stream-insertable parts: concat("got ", n, " bytes").
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

}  // namespace ffsim::hfreduce

/// Throws ErrorType (a KernelError) with the current file:line and the concatenated message parts.
#define FFSIM_KERNEL_THROW(ErrorType, ...) \
  throw ErrorType(__FILE__, __LINE__, ::ffsim::hfreduce::detail::concat(__VA_ARGS__))

/// Throws KernelError with file:line when cond is false (Gloo's GLOO_ENFORCE).
#define FFSIM_KERNEL_CHECK(cond, ...)                                                             \
  do {                                                                                            \
    if (!(cond)) FFSIM_KERNEL_THROW(::ffsim::hfreduce::KernelError, "check failed: " #cond ": ", \
                                    __VA_ARGS__);                                                 \
  } while (false)
