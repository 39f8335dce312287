// The engine registry: every evaluator ffsim has, what each can do, and the one decoding of
// --engine that every command shares.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry.hpp"
#include "eval/engine.hpp"

namespace ffsim::app {

/// What an engine can do. Commands check these, never an engine's name.
struct EngineCaps {
  bool simulates = false;      ///< runs schedules (false: the closed form, each algorithm's own bound)
  bool timeline = false;       ///< gives every op's start and end (what a trace draws)
  bool limiters = false;       ///< names the resource that limited each op
  bool parallel_safe = false;  ///< instances may run side by side on threads of one process
  /// Memory per schedule operation while the engine runs it (the schedule, its flows and the
  /// engine's state; measured, src/app/engines.cpp): the size guard's estimate.
  double bytes_per_op = 0;
};

/// An engine's options: the fluid engine's solve variants (the other engines take none).
struct EngineOptions {
  bool lazy_constraints = true;  ///< drop unsaturated resources from the constraint set
  bool merge_identical = true;   ///< run identical flows of an op as one
  bool partial_solves = true;    ///< solve again only the groups an instant can change
};

/// A spelling of an engine with options set ("fluid-full": the fluid engine without partial solves).
struct EngineVariant {
  std::string name;
  std::string description;
  EngineOptions options;
};

struct EngineKind {
  EngineCaps caps;
  /// A new evaluator with these options; nullptr for the closed form, which evaluates no schedule.
  std::function<std::unique_ptr<eval::Engine>(const EngineOptions&)> make;
  std::vector<EngineVariant> variants;
};

using EngineRegistry = Registry<EngineKind>;

/// The engines, registered here (src/app/engines.cpp) and nowhere else: "closed-form", "fluid"
/// (variants "fluid-full", "fluid-eager") and "simgrid".
[[nodiscard]] const EngineRegistry& engines();

/// What "analytic", the deprecated name of --engine, means in a command: the closed form in
/// `collective`, the fluid engine in `net`, `train` and `validate` (their meanings before the
/// registry, kept so that every command line and output stays as it was).
enum class Analytic { ClosedForm, Fluid };

/// A decoded --engine.
struct EngineChoice {
  std::string label;   ///< as given (outputs name the engine in the user's words: "analytic engine")
  std::string engine;  ///< the registered engine: closed-form, fluid or simgrid
  EngineOptions options;
  EngineCaps caps;
  /// A new evaluator; nullptr for the closed form.
  [[nodiscard]] std::unique_ptr<eval::Engine> make() const;
  /// make() as a factory (for threads that each need their own engine).
  [[nodiscard]] eval::EngineFactory factory() const;
};

/// Decodes --engine: a registered engine, one of its variants, or "analytic" (as `analytic` says).
/// A UsageError otherwise: "--engine: expected one of closed-form, fluid, fluid-full, fluid-eager,
/// simgrid (or analytic); got "x" (did you mean "y"?)".
[[nodiscard]] EngineChoice choose_engine(std::string_view text, Analytic analytic);

/// choose_engine for a command that runs schedules (`what`: "net", "train"): an engine that
/// simulates nothing (the closed form) is a UsageError that says so.
[[nodiscard]] EngineChoice choose_simulating_engine(std::string_view text, Analytic analytic, const std::string& what);

/// Every spelling choose_engine accepts, registered engines and variants first, then "analytic".
[[nodiscard]] std::vector<std::string> engine_spellings();

/// A registered engine (or variant) with its options: choose_engine(name, Analytic::Fluid).make().
/// The engine of reference runs (limiters, compute-only steps) is make_engine("fluid").
[[nodiscard]] std::unique_ptr<eval::Engine> make_engine(std::string_view name);

}  // namespace ffsim::app
