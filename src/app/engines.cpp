// The engine registry and the decoding of --engine.
// SPDX-License-Identifier: Apache-2.0
#include "app/engines.hpp"

#include "core/error.hpp"
#include "core/spell.hpp"
#include "sim/simgrid_engine.hpp"

namespace ffsim::app {

namespace {

// Memory per schedule operation while an engine runs it (EngineCaps::bytes_per_op), measured
// 2026-12-02 on branch guard (Release, the 2-core VM of docs/bench-sim.txt) as
//   (peak RSS of the run - peak RSS of the closed form, same scenario and GPUs) / the estimate's ops
// (coll::Algorithm::schedule_ops, printed by the refusal under --max-memory 1MiB), with
//   /usr/bin/time -f %M build/ffsim collective scenarios/fire-flyer-2.json --algo hfreduce --gpus N --engine E
// (the SimGrid child's pages count: wait4 reports the largest of the process and its children).
// fluid --threads 1: 1,440 GPUs 192,664 KB against 41,228 KB closed form, 3.82e5 ops: 406 B/op;
// 9,600 GPUs 771,296 KB, 2.55e6 ops: 293 B/op. The larger is taken (an estimate that errs high).
constexpr double kFluidBytesPerOp = 406;
// simgrid: 128 GPUs 52,412 KB against 41,140 KB closed form, 3.34e4 ops: 346 B/op (larger runs
// take minutes on SimGrid; not measured).
constexpr double kSimGridBytesPerOp = 346;

}  // namespace

const EngineRegistry& engines() {
  static const EngineRegistry r = [] {
    EngineRegistry x("engine");
    x.add("closed-form", "each algorithm's own closed form (no schedule, no timeline); microseconds per evaluation",
          EngineKind{EngineCaps{false, false, false, true}, [](const EngineOptions&) { return std::unique_ptr<eval::Engine>(); }, {}});
    x.add("fluid", "max-min fluid model solved event by event (no SimGrid); microseconds to seconds",
          EngineKind{
              EngineCaps{true, true, true, true, kFluidBytesPerOp},
              [](const EngineOptions& o) -> std::unique_ptr<eval::Engine> {
                return std::make_unique<eval::FluidEngine>(o.lazy_constraints, o.merge_identical, o.partial_solves);
              },
              // For comparisons: the same max-min allocation solved over whole components
              // (fluid-full), and also without lazy constraints (fluid-eager, the plain solve).
              {EngineVariant{"fluid-full", "each solve over a whole component", EngineOptions{true, true, false}},
               EngineVariant{"fluid-eager", "also without lazy constraints: the plain solve",
                             EngineOptions{false, true, false}}}});
    // SimGrid allows one engine per process (each run forks a child): one simulation at a time.
    x.add("simgrid", "flow-level replay on SimGrid 3.32 (CM02, max-min sharing), in a child process",
          EngineKind{EngineCaps{true, true, false, false, kSimGridBytesPerOp},
                     [](const EngineOptions&) -> std::unique_ptr<eval::Engine> {
                       return std::make_unique<sim::SimGridEngine>();
                     },
                     {}});
    return x;
  }();
  return r;
}

std::unique_ptr<eval::Engine> EngineChoice::make() const { return engines().get(engine).factory.make(options); }

eval::EngineFactory EngineChoice::factory() const {
  return [engine = engine, options = options] { return engines().get(engine).factory.make(options); };
}

std::vector<std::string> engine_spellings() {
  std::vector<std::string> r;
  for (const auto& e : engines().entries()) {
    r.push_back(e.name);
    for (const auto& v : e.factory.variants) r.push_back(v.name);
  }
  r.emplace_back("analytic");
  return r;
}

EngineChoice choose_engine(std::string_view text, Analytic analytic) {
  EngineChoice c;
  c.label = std::string(text);
  const std::string_view name = text == "analytic" ? (analytic == Analytic::ClosedForm ? "closed-form" : "fluid") : text;
  for (const auto& e : engines().entries()) {
    if (e.name == name) {
      c.engine = e.name;
      c.caps = e.factory.caps;
      return c;
    }
    for (const auto& v : e.factory.variants)
      if (v.name == name) {
        c.engine = e.name;
        c.options = v.options;
        c.caps = e.factory.caps;
        return c;
      }
  }
  std::vector<std::string> names = engine_spellings();
  names.pop_back();
  throw UsageError("--engine: expected one of " + join(names) + " (or analytic, the former name of " +
                   (analytic == Analytic::ClosedForm ? "closed-form" : "fluid") + " here); got \"" + std::string(text) + "\"" +
                   did_you_mean(text, engine_spellings()));
}

EngineChoice choose_simulating_engine(std::string_view text, Analytic analytic, const std::string& what) {
  EngineChoice c = choose_engine(text, analytic);
  if (!c.caps.simulates)
    throw UsageError("--engine " + c.label + ": " + what + " runs schedules, and the closed form evaluates none; use fluid or simgrid");
  return c;
}

std::unique_ptr<eval::Engine> make_engine(std::string_view name) { return choose_engine(name, Analytic::Fluid).make(); }

}  // namespace ffsim::app
