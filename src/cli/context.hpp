// What every subcommand shares: the models folder, the catalog, output options.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/kinds.hpp"
#include "cli/output.hpp"
#include "config/catalog.hpp"
#include "core/registry.hpp"

namespace ffsim::calib {
struct CalibrationUse;
}

namespace CLI {
class App;
class Option;
class Validator;
}

namespace ffsim::cli {

/// Validates one catalog entry of a kind (app/kinds.hpp; used by `ffsim check` and `ffsim models`).
using KindValidator = app::KindValidator;

/// A --size argument in bytes ("184MiB", "4096B"): a unit is required, and the value must be a
/// whole, non-negative number of bytes; anything else is a UsageError naming the option.
double size_option(const std::string& text, const std::string& option = "--size");

/// A CLI11 check that the value is an integer in [lo, hi]; its message is "expected an integer in
/// [lo, hi], got "abc"" (CLI11 puts the option's name in front).
CLI::Validator int_in(long long lo, long long hi);

/// A CLI11 check that the value is one of `choices`: "expected one of a, b; got "x" (did you mean
/// "y"?)" (CLI11 puts the option's name in front).
CLI::Validator one_of(std::vector<std::string> choices);

/// A CLI11 check that the value names an existing regular file: a folder, a named pipe (which
/// would block until a writer appears) or a device is refused with what it is (exit 2).
CLI::Validator input_file();

/// Checks, before any work, that `path` can take the output of `option` by the rules of
/// docs/outputs.md ("Writing files"): not empty, not a folder, a block device, a socket, a
/// dangling symbolic link or a FIFO no process reads, in a folder that exists, and not the same
/// file as one of `inputs` (the files the command reads), which the output would destroy. A
/// UsageError naming the option otherwise.
void check_output_path(const std::string& option, const std::string& path, const std::vector<std::string>& inputs);

/// Writes the output of `option` whole or not at all. Absent or a regular file (also through
/// symbolic links, which stay): `write` fills a temporary file beside it, flushed to disk, that
/// then replaces it (with its permissions), so an error leaves whatever was there as it was. A
/// character device (/dev/null), a FIFO with a reader, /dev/stdout, /dev/stderr and /dev/fd/N are
/// written in place, never replaced. A UsageError with the system's reason ("No space left on
/// device") when it cannot be written whole.
void write_output(const std::string& option, const std::string& path, const std::function<void(std::ostream&)>& write);

struct Context;

/// What a command that `ffsim sweep` can run gives for one point of the grid, set by its callback
/// next to Context::action: `rows` evaluates the command, as parsed, on a scenario document (the
/// scenario file with the point's values) and returns its CSV/JSON records without wall-clock
/// columns; `columns` names their keys, the same for every point (also for points that fail).
/// `threads`: the command's own threads for the point (the sweep runs points side by side).
struct SweepHook {
  std::function<std::vector<Record>(Context& ctx, const config::Document& doc, int threads)> rows;
  std::function<std::vector<std::string>()> columns;
  /// The checks of the command's options that hold for every point (a UsageError before any runs).
  std::function<void()> check;
};

struct Context {
  /// --models (repeatable, or a comma-separated list), in order: later folders override earlier
  /// ones by model name. Empty: $FFSIM_MODELS (colon-separated), else the folder found relative to
  /// the binary (models_folders()).
  std::vector<std::string> models_option;
  /// The models folders the catalog is read from, in order, and where they came from ("--models",
  /// "$FFSIM_MODELS", "beside the binary: ..."); a ConfigError when none is found.
  const std::vector<std::string>& models_folders();
  [[nodiscard]] const std::string& models_origin() const { return models_origin_; }
  /// --calibration: a calibration file whose fitted facts override the catalog's published ones.
  std::string calibration;
  /// --max-memory: the size guard's limit (core/size_guard.hpp), a size; empty: its default.
  std::string max_memory;
  /// Kinds of catalog entries and how to validate them (filled by register_kinds(): app/kinds.hpp).
  Registry<KindValidator> kinds{"model kind"};
  /// The subcommand to run once parsing succeeded; returns the exit code.
  std::function<int()> action;
  /// Set by the commands `ffsim sweep` runs (collective, net, ops, plan, train): SweepHook.
  std::shared_ptr<SweepHook> sweep;
  /// What each option's value is expected to be ("a number in [0, 1)"), for the messages of the
  /// checks that run before CLI11 parses (an empty value); options without one are "a value".
  std::map<const CLI::Option*, std::string> expected;
  /// Records what `o` expects and returns it (for chaining in setup functions).
  CLI::Option* expects(CLI::Option* o, std::string what);

  /// The catalog, loaded on first use, with the --calibration file's overrides that hold for the
  /// command's scenarios applied (use_scenarios; calib/scope.hpp, config/calibration_scope.hpp).
  const config::Catalog& catalog();
  /// Names the scenario files the command simulates; call it before the first catalog(). A
  /// calibration's machine-scoped values hold only where a scenario runs on its node model (or one
  /// that extends it); without this call the command runs no scenario (`ffsim models`).
  void use_scenarios(const std::vector<std::string>& paths);
  /// What --calibration did: every value applied or skipped, with the reason (nullptr without
  /// --calibration). Builds the catalog when it is not built yet.
  const calib::CalibrationUse* calibration_use();
  /// For a command that reads the --calibration file but applies none of its values (validate,
  /// calibrate): records every value as skipped, for `why`.
  void calibration_not_applied(const std::string& why);
  Context();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  /// The catalog as published in the models folder (no calibration applied).
  const config::Catalog& published_catalog();
  [[nodiscard]] std::vector<std::string> kind_names() const;

private:
  std::unique_ptr<config::Catalog> catalog_, published_;
  std::vector<std::string> scenario_nodes_;
  bool scenarios_given_ = false;
  std::unique_ptr<calib::CalibrationUse> use_;
  std::vector<std::string> models_folders_;
  std::string models_origin_;
};

/// Registers every kind of catalog entry the layers define (app::register_kinds).
void register_kinds(Context& ctx);

// One setup function per subcommand, each in its own file (cmd_<name>.cpp).
void setup_models(CLI::App& app, Context& ctx);
void setup_check(CLI::App& app, Context& ctx);
void setup_summary(CLI::App& app, Context& ctx);
void setup_net(CLI::App& app, Context& ctx);
void setup_collective(CLI::App& app, Context& ctx);
void setup_plan(CLI::App& app, Context& ctx);
void setup_calibrate(CLI::App& app, Context& ctx);
void setup_validate(CLI::App& app, Context& ctx);
void setup_train(CLI::App& app, Context& ctx);
void setup_schema(CLI::App& app, Context& ctx);
void setup_ops(CLI::App& app, Context& ctx);
void setup_sweep(CLI::App& app, Context& ctx);
/// The arguments with the first "--" after "sweep" doubled (cmd_sweep.cpp says why); empty when
/// there is none to double (then the arguments are parsed as given).
std::vector<std::string> sweep_separator(int argc, char** argv);

}  // namespace ffsim::cli
