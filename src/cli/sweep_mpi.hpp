// The MPI transport of `ffsim sweep`: ranks, and the rows the other ranks send to rank 0. Without
// MPI at build time (FFSIM_SWEEP_HAS_MPI unset) every call is a one-rank stand-in.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>

namespace ffsim::cli::sweep_mpi {

/// Whether this process was started by mpirun/mpiexec (OpenMPI's, MPICH's or a PMIx launcher's
/// environment), and the world size it was given (1 when not launched).
[[nodiscard]] bool launched();
[[nodiscard]] int launched_size();
/// Whether this ffsim was built with MPI.
[[nodiscard]] bool built_with_mpi();

/// Starts MPI when launched (a no-op otherwise); finish() ends it. rank() and size() after start().
void start();
void finish();
[[nodiscard]] int rank();
[[nodiscard]] int size();

/// Rank 0 tells the others a number (the points already done, or -1: stop).
[[nodiscard]] long long broadcast(long long value);
/// A rank other than 0 sends the text of point `index` to rank 0.
void send(long long index, const std::string& text);
/// Rank 0: the next text another rank sent, if one is there (`wait`: blocks until one is).
bool receive(long long& index, std::string& text, bool wait);
/// Ends every rank at once (an internal error on one rank).
[[noreturn]] void abort_all(int code);

}  // namespace ffsim::cli::sweep_mpi
