// Error types shared by every layer, and the always-on assertion.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stdexcept>
#include <string>

namespace ffsim {

/// Base of every error ffsim reports to a user.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A bad scenario, model or measurement file. `file`, `pointer` (a JSON Pointer, "" for the
/// whole document) and `message` are kept apart so that tests can match each exactly;
/// what() is "file:pointer: message" (ninja/SimGrid style), or "file: message" for the whole document.
class ConfigError : public Error {
public:
  ConfigError(std::string file, std::string pointer, std::string message);
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] const std::string& message() const { return message_; }

private:
  std::string file_;
  std::string pointer_;
  std::string message_;
};

/// A value that is not what its context expects (a unit string, a name); it carries only the
/// message. The config layer adds the file and JSON pointer and rethrows it as a ConfigError.
class ValueError : public Error {
public:
  using Error::Error;
};

/// Misuse of the command line (exit code 2).
class UsageError : public Error {
public:
  using Error::Error;
};

/// A simulation that cannot complete (exit code 4): an engine failure, a deadlocked schedule.
class SimulationError : public Error {
public:
  using Error::Error;
};

/// A broken internal invariant: a bug in ffsim, never the user's fault.
class InternalError : public Error {
public:
  using Error::Error;
};

[[noreturn]] void assertion_failed(const char* cond, const char* file, int line, const std::string& msg);

}  // namespace ffsim

/// Always-on assertion (also in Release), as SimGrid's xbt_assert: throws ffsim::InternalError
/// with the condition, file and line.
#define FFSIM_ASSERT(cond, msg)                                       \
  do {                                                                \
    if (!(cond)) ::ffsim::assertion_failed(#cond, __FILE__, __LINE__, (msg)); \
  } while (false)
