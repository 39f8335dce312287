// The ffsim command line: subcommands, exit codes.
// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace ffsim::cli {

/// Exit codes (CLI11 ExitCodes style): 0 ok, 2 usage, 3 bad config, 4 simulation failure,
/// 1 internal error (a bug: the message asks for a report).
enum ExitCode : int { kOk = 0, kInternal = 1, kUsage = 2, kConfig = 3, kSimulation = 4 };

/// Runs ffsim with the given arguments; catches every error and maps it to an exit code.
int run(int argc, char** argv);

}  // namespace ffsim::cli
