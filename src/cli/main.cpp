// ffsim: a thin main over the CLI library.
// SPDX-License-Identifier: Apache-2.0
#include "cli/app.hpp"

int main(int argc, char** argv) { return ffsim::cli::run(argc, argv); }
