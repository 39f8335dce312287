// ffsim: a thin main over the CLI library.
// SPDX-License-Identifier: Apache-2.0
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <unistd.h>
#endif

#include "cli/app.hpp"

namespace {

// glibc's malloc on transparent huge pages (the tunable glibc.malloc.hugetlb=1: its heap and large
// blocks advised with madvise(MADV_HUGEPAGE)). A simulation at scale reads its many small blocks
// (each resource's and group's lists, the paths) at random, and with 4 KiB pages most of those reads
// also miss the TLB: measured 2026-12-06 on a Zen 3 VM (THP "madvise"), HFReduce 184 MiB at 9,600
// GPUs on the fluid engine 10.9-12.6 s against 12.9-13.5 s, the 10,000-GPU VGG16 DDP step 30.6
// against 37.1 s, 1-2% more memory (docs/engines.md, "Huge pages"). The dynamic loader reads the
// tunable when a process starts, so ffsim adds it to GLIBC_TUNABLES and re-executes itself once,
// for the commands that simulate (a start costs 30-40 ms here, loading SimGrid's libraries again),
// unless the tunable is there already, FFSIM_HUGE_PAGES=0, or valgrind runs it (its tools would not
// follow). Nothing else changes: the same arguments, process id, descriptors and results; if the
// re-execution fails, ffsim runs as it is.
void huge_pages(int argc, char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
  bool simulates = false;
  for (int i = 1; i < argc && !simulates; ++i)
    for (const char* c : {"collective", "train", "net", "ops", "sweep"})
      simulates = simulates || std::strcmp(argv[i], c) == 0;
  if (!simulates) return;
  if (const char* off = std::getenv("FFSIM_HUGE_PAGES"); off != nullptr && std::strcmp(off, "0") == 0) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.hugetlb") != nullptr) return;
  if (const char* pre = std::getenv("LD_PRELOAD"); pre != nullptr && std::strstr(pre, "vgpreload") != nullptr) return;
  const std::string value = tunables != nullptr && *tunables != '\0' ? std::string(tunables) + ":glibc.malloc.hugetlb=1"
                                                                     : "glibc.malloc.hugetlb=1";
  if (::setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
#else
  (void)argc;
  (void)argv;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  huge_pages(argc, argv);
  return ffsim::cli::run(argc, argv);
}
