// The MPI transport of `ffsim sweep` (sweep_mpi.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "cli/sweep_mpi.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#ifdef FFSIM_SWEEP_HAS_MPI
#include <dlfcn.h>
#include <mpi.h>

#include <iostream>
#endif

namespace ffsim::cli::sweep_mpi {

namespace {
int g_rank = 0, g_size = 1;
bool g_started = false;
constexpr int kTagIndex = 1, kTagText = 2;

#ifdef FFSIM_SWEEP_HAS_MPI
// The MPI library is opened at run time, not linked: libsimgrid (the SimGrid engine) defines the
// MPI_* functions of its own SMPI, which a linked libmpi's would meet first or lose to. Opened with
// RTLD_DEEPBIND, libmpi binds its own calls to itself, and ffsim calls it through these pointers.
struct Mpi {
  decltype(&::MPI_Init_thread) init_thread = nullptr;
  decltype(&::MPI_Comm_rank) comm_rank = nullptr;
  decltype(&::MPI_Comm_size) comm_size = nullptr;
  decltype(&::MPI_Bcast) bcast = nullptr;
  decltype(&::MPI_Send) send = nullptr;
  decltype(&::MPI_Recv) recv = nullptr;
  decltype(&::MPI_Probe) probe = nullptr;
  decltype(&::MPI_Iprobe) iprobe = nullptr;
  decltype(&::MPI_Get_count) get_count = nullptr;
  decltype(&::MPI_Finalize) finalize = nullptr;
  decltype(&::MPI_Abort) abort = nullptr;
  MPI_Comm world{};
  MPI_Datatype long_long{}, chr{};
};
Mpi g_mpi;

template <class F>
void bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) {
    std::cerr << "ffsim sweep: " << FFSIM_SWEEP_MPI_LIB << " has no " << name << "\n";
    std::_Exit(1);
  }
}

void open_mpi() {
  void* lib = dlopen(FFSIM_SWEEP_MPI_LIB, RTLD_NOW | RTLD_GLOBAL | RTLD_DEEPBIND);
  if (!lib) {
    std::cerr << "ffsim sweep: started by mpirun, but the MPI library cannot be opened: " << dlerror()
              << "\n(this ffsim was built with " << FFSIM_SWEEP_MPI_LIB << ")\n";
    std::_Exit(2);
  }
  bind(lib, "MPI_Init_thread", g_mpi.init_thread);
  bind(lib, "MPI_Comm_rank", g_mpi.comm_rank);
  bind(lib, "MPI_Comm_size", g_mpi.comm_size);
  bind(lib, "MPI_Bcast", g_mpi.bcast);
  bind(lib, "MPI_Send", g_mpi.send);
  bind(lib, "MPI_Recv", g_mpi.recv);
  bind(lib, "MPI_Probe", g_mpi.probe);
  bind(lib, "MPI_Iprobe", g_mpi.iprobe);
  bind(lib, "MPI_Get_count", g_mpi.get_count);
  bind(lib, "MPI_Finalize", g_mpi.finalize);
  bind(lib, "MPI_Abort", g_mpi.abort);
#ifdef OPEN_MPI
  // OpenMPI's handles are addresses of its predefined objects.
  auto object = [&](const char* name) {
    void* p = dlsym(lib, name);
    if (!p) {
      std::cerr << "ffsim sweep: " << FFSIM_SWEEP_MPI_LIB << " has no " << name << "\n";
      std::_Exit(1);
    }
    return p;
  };
  g_mpi.world = static_cast<MPI_Comm>(object("ompi_mpi_comm_world"));
  g_mpi.long_long = static_cast<MPI_Datatype>(object("ompi_mpi_long_long_int"));
  g_mpi.chr = static_cast<MPI_Datatype>(object("ompi_mpi_char"));
#else
  g_mpi.world = MPI_COMM_WORLD;  // MPICH: compile-time constants
  g_mpi.long_long = MPI_LONG_LONG;
  g_mpi.chr = MPI_CHAR;
#endif
}
#endif

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return end && *end == '\0' && x >= 0 ? static_cast<int>(x) : -1;
}
}  // namespace

int launched_size() {
  for (const char* n : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    const int s = env_int(n);
    if (s > 0) return s;
  }
  return 1;
}

bool launched() {
  for (const char* n : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (env_int(n) >= 0) return true;
  return false;
}

bool built_with_mpi() {
#ifdef FFSIM_SWEEP_HAS_MPI
  return true;
#else
  return false;
#endif
}

void start() {
#ifdef FFSIM_SWEEP_HAS_MPI
  if (!launched() || g_started) return;
  open_mpi();
  int provided = 0;
  g_mpi.init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  g_mpi.comm_rank(g_mpi.world, &g_rank);
  g_mpi.comm_size(g_mpi.world, &g_size);
  g_started = true;
#endif
}

void finish() {
#ifdef FFSIM_SWEEP_HAS_MPI
  if (g_started) g_mpi.finalize();
  g_started = false;
#endif
}

int rank() { return g_rank; }
int size() { return g_size; }

long long broadcast(long long value) {
#ifdef FFSIM_SWEEP_HAS_MPI
  if (g_started) g_mpi.bcast(&value, 1, g_mpi.long_long, 0, g_mpi.world);
#endif
  return value;
}

void send(long long index, const std::string& text) {
#ifdef FFSIM_SWEEP_HAS_MPI
  if (!g_started) return;
  g_mpi.send(&index, 1, g_mpi.long_long, 0, kTagIndex, g_mpi.world);
  g_mpi.send(text.data(), static_cast<int>(text.size()), g_mpi.chr, 0, kTagText, g_mpi.world);
#else
  (void)index;
  (void)text;
#endif
}

bool receive(long long& index, std::string& text, bool wait) {
#ifdef FFSIM_SWEEP_HAS_MPI
  if (!g_started) return false;
  MPI_Status st;
  int flag = 0;
  if (wait) {
    g_mpi.probe(MPI_ANY_SOURCE, kTagIndex, g_mpi.world, &st);
    flag = 1;
  } else {
    g_mpi.iprobe(MPI_ANY_SOURCE, kTagIndex, g_mpi.world, &flag, &st);
  }
  if (!flag) return false;
  const int from = st.MPI_SOURCE;
  g_mpi.recv(&index, 1, g_mpi.long_long, from, kTagIndex, g_mpi.world, MPI_STATUS_IGNORE);
  g_mpi.probe(from, kTagText, g_mpi.world, &st);  // messages from one rank arrive in order
  int n = 0;
  g_mpi.get_count(&st, g_mpi.chr, &n);
  std::vector<char> buf(static_cast<std::size_t>(n));
  g_mpi.recv(buf.data(), n, g_mpi.chr, from, kTagText, g_mpi.world, MPI_STATUS_IGNORE);
  text.assign(buf.begin(), buf.end());
  return true;
#else
  (void)index;
  (void)text;
  (void)wait;
  return false;
#endif
}

void abort_all(int code) {
#ifdef FFSIM_SWEEP_HAS_MPI
  if (g_started) g_mpi.abort(g_mpi.world, code);
#endif
  std::_Exit(code);
}

}  // namespace ffsim::cli::sweep_mpi
