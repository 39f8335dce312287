// The ffsim command line: subcommands, exit codes.
// SPDX-License-Identifier: Apache-2.0
#include "cli/app.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <sys/stat.h>

#include <CLI/CLI.hpp>

#include "app/kinds.hpp"
#include "calib/calibration_file.hpp"
#include "calib/scope.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "config/calibration_reader.hpp"
#include "config/calibration_scope.hpp"
#include "config/coll_reader.hpp"
#include "config/train_reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/size_guard.hpp"
#include "core/spell.hpp"
#include "core/unit_parse.hpp"
#include "core/version.hpp"

#ifndef FFSIM_INSTALL_MODELS_DIR
#define FFSIM_INSTALL_MODELS_DIR "share/ffsim/models"
#endif
#ifndef FFSIM_BINDIR
#define FFSIM_BINDIR "bin"
#endif

namespace ffsim::cli {

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> r;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == sep) {
      if (i > start) r.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  return r;
}

// The models folder relative to the running binary (docs/install.md): in a build tree, the folder
// named by the marker file ffsim-models.path beside it (relative to the binary's folder); in an
// installation, <prefix>/share/ffsim/models for <prefix>/bin/ffsim. Sets `origin`; empty if neither.
std::string models_beside_binary(std::string& origin) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path bin = exe.parent_path();
  if (std::ifstream marker(bin / "ffsim-models.path"); marker) {
    std::string rel;
    std::getline(marker, rel);
    const fs::path dir = (bin / rel).lexically_normal();
    if (!rel.empty() && fs::is_directory(dir, ec)) {
      origin = "the source tree of this build (named by " + (bin / "ffsim-models.path").string() + ")";
      return dir.string();
    }
  }
  fs::path prefix = bin;
  if (fs::path(FFSIM_BINDIR).is_relative())
    for (const auto& part : fs::path(FFSIM_BINDIR))
      if (part != ".") prefix = prefix.parent_path();
  const fs::path dir = fs::path(FFSIM_INSTALL_MODELS_DIR).is_absolute() ? fs::path(FFSIM_INSTALL_MODELS_DIR)
                                                                        : (prefix / FFSIM_INSTALL_MODELS_DIR).lexically_normal();
  if (!fs::is_directory(dir, ec)) return "";
  origin = "the installation of " + exe.string();
  return dir.string();
}

}  // namespace

const std::vector<std::string>& Context::models_folders() {
  if (!models_folders_.empty()) return models_folders_;
  for (const auto& v : models_option)
    for (auto& d : split(v, ',')) models_folders_.push_back(std::move(d));
  if (!models_folders_.empty()) {
    models_origin_ = "--models";
    return models_folders_;
  }
  const char* env = std::getenv("FFSIM_MODELS");
  if (env && *env) {
    models_folders_ = split(env, ':');
    models_origin_ = "$FFSIM_MODELS";
    if (!models_folders_.empty()) return models_folders_;
  }
  const std::string beside = models_beside_binary(models_origin_);
  if (beside.empty())
    throw ConfigError("models", "", std::string("no models folder: none beside the binary (a build tree's ffsim-models.path, or ") +
                                        FFSIM_INSTALL_MODELS_DIR + " in its installation); give --models DIR or set FFSIM_MODELS");
  models_folders_ = {beside};
  return models_folders_;
}

const config::Catalog& Context::published_catalog() {
  if (!published_) published_ = std::make_unique<config::Catalog>(config::Catalog::load(models_folders(), kind_names()));
  return *published_;
}

CLI::Option* Context::expects(CLI::Option* o, std::string what) {
  expected[o] = std::move(what);
  return o;
}

CLI::Validator one_of(std::vector<std::string> choices) {
  const std::string list = join(choices);
  return CLI::Validator(
      [choices, list](std::string& v) -> std::string {
        if (std::find(choices.begin(), choices.end(), v) != choices.end()) return "";
        return "expected one of " + list + "; got \"" + v + "\"" + did_you_mean(v, choices);
      },
      "one of " + list);
}

CLI::Validator input_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
          if (errno == ENOENT || errno == ENOTDIR) return "File does not exist: " + path;
          return "cannot read " + path + ": " + std::strerror(errno);
        }
        if (S_ISREG(st.st_mode)) return "";
        if (S_ISDIR(st.st_mode)) return "File is actually a directory: " + path;
        const char* what = S_ISFIFO(st.st_mode)  ? "a named pipe (FIFO)"
                           : S_ISCHR(st.st_mode) ? "a character device"
                           : S_ISBLK(st.st_mode) ? "a block device"
                                                 : "a socket";
        return path + " is " + what + ", not a regular file: ffsim reads only regular files (a pipe or device could " +
               "block or never end); save it to a file first";
      },
      "FILE");
}

CLI::Validator int_in(long long lo, long long hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& v) -> std::string {
        std::size_t used = 0;
        long long x = 0;
        try {
          x = std::stoll(v, &used);
        } catch (const std::out_of_range&) {
          return "expected an integer in " + range + ", got " + v + " (too large)";
        } catch (const std::exception&) {
          used = 0;
        }
        if (v.empty() || used != v.size()) return "expected an integer in " + range + ", got \"" + v + "\"";
        if (x < lo || x > hi) return "expected an integer in " + range + ", got " + v;
        return "";
      },
      "INT in " + range);
}

namespace {

// "1K", "4M": a decimal or binary prefix without the B; the suggestion names both.
std::string size_unit_hint(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0 || i + 1 != text.size()) return "";
  const std::string num = text.substr(0, i);
  const char p = text[i];
  const std::string bin = std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(p)))) + "iB";
  const std::string dec = std::string(1, p == 'K' ? 'k' : static_cast<char>(std::toupper(static_cast<unsigned char>(p)))) + "B";
  if (std::string("kKMGTP").find(p) == std::string::npos) return "";
  return "; sizes need a unit: did you mean " + num + bin + " (binary) or " + num + dec + " (decimal)?";
}

}  // namespace

double size_option(const std::string& text, const std::string& option) {
  double bytes = 0;
  if (text.find(':') != std::string::npos || text.find(',') != std::string::npos)
    throw UsageError(option + ": expected one size (e.g. 184MiB), got \"" + text +
                     "\" (ranges and lists are for ffsim collective --size)");
  try {
    bytes = parse_size(text).si();
  } catch (const ValueError& e) {
    const std::string hint = size_unit_hint(text);
    if (!hint.empty()) throw UsageError(option + ": unknown size unit in \"" + text + "\"" + hint);
    throw UsageError(option + ": " + e.what());
  }
  if (bytes < 0) throw UsageError(option + " must not be negative");
  if (bytes != std::floor(bytes))
    throw UsageError(option + ": " + text + " is not a whole number of bytes (" + fmt_f(bytes, 3) + " B)");
  return bytes;
}

Context::Context() = default;
Context::~Context() = default;

const config::Catalog& Context::catalog() {
  if (!catalog_) {
    catalog_ = std::make_unique<config::Catalog>(published_catalog());
    if (!calibration.empty())
      use_ = std::make_unique<calib::CalibrationUse>(
          config::apply_scoped(*catalog_, config::load_calibration(calibration), scenario_nodes_, scenarios_given_));
  }
  return *catalog_;
}

void Context::use_scenarios(const std::vector<std::string>& paths) {
  FFSIM_ASSERT(!catalog_, "use_scenarios after the catalog was built");
  scenarios_given_ = true;
  for (const auto& p : paths)
    if (!p.empty()) scenario_nodes_.push_back(config::scenario_node(p));
}

const calib::CalibrationUse* Context::calibration_use() {
  if (calibration.empty()) return nullptr;
  if (!use_) (void)catalog();
  return use_.get();
}

void Context::calibration_not_applied(const std::string& why) {
  if (calibration.empty()) return;
  const calib::CalibrationFile cf = config::load_calibration(calibration);
  use_ = std::make_unique<calib::CalibrationUse>();
  use_->file = cf.file;
  use_->name = cf.name;
  use_->node = cf.node;
  use_->note = why;
  for (const auto& o : cf.overrides) use_->values.push_back(calib::ScopedOverride{o, false, why});
}

std::vector<std::string> Context::kind_names() const { return kinds.names(); }

void register_kinds(Context& ctx) { app::register_kinds(ctx.kinds); }

namespace {

bool is_flag(const CLI::Option* o) { return o->get_items_expected_max() == 0; }

// Checks CLI11 leaves to the commands, or words badly, made on the arguments before it parses
// them: an unknown subcommand (with did-you-mean), an empty value ("--holdout ''", which would
// read as unset or 0), an option given twice (the first value would be dropped), a flag given twice.
void check_arguments(const CLI::App& app, const Context& ctx, int argc, char** argv) {
  const CLI::App* cur = &app;
  std::map<const CLI::Option*, std::vector<std::string>> seen;
  std::map<const CLI::Option*, int> seen_flags;
  std::size_t positional = 0;
  auto expectation = [&](const CLI::Option* o) {
    const auto it = ctx.expected.find(o);
    if (it != ctx.expected.end()) return it->second;
    const std::string t = o->get_type_name();
    if (t.rfind("INT", 0) == 0 || t.rfind("UINT", 0) == 0) return std::string("an integer");
    if (t.rfind("FLOAT", 0) == 0) return std::string("a number");
    return std::string("a value");
  };
  for (int i = 1; i < argc; ++i) {
    const std::string t = argv[i];
    if (t == "--") break;  // the rest is positional: CLI11's own checks
    if (t.size() > 1 && t[0] == '-' && !std::isdigit(static_cast<unsigned char>(t[1]))) {
      const auto eq = t.find('=');
      const std::string name = t.substr(0, eq);
      const CLI::Option* o = cur->get_option_no_throw(name);
      if (!o && cur != &app) o = app.get_option_no_throw(name);  // global options may follow the subcommand
      if (!o) continue;  // an unknown option: CLI11 names it
      if (is_flag(o)) {
        if (++seen_flags[o] == 2) throw UsageError(name + " is given twice; give it once");
        continue;
      }
      std::string v;
      if (eq != std::string::npos) v = t.substr(eq + 1);
      else if (i + 1 < argc) v = argv[++i];
      else continue;  // a missing value: CLI11 says so
      if (v.empty()) throw UsageError(name + ": expected " + expectation(o) + ", got an empty value");
      auto& vs = seen[o];
      vs.push_back(v);
      if (vs.size() == 2 && o->get_items_expected_max() == 1 && o->get_multi_option_policy() != CLI::MultiOptionPolicy::TakeAll)
        throw UsageError(name + " is given twice (" + vs[0] + " and " + vs[1] + "); give it once" +
                         (expectation(o).find("list") == std::string::npos
                              ? ""
                              : " (a list is one comma-separated value: " + name + " " + vs[0] + "," + vs[1] + ")"));
      continue;
    }
    if (cur == &app) {  // the root takes no positionals: this is the subcommand
      const auto subs = app.get_subcommands([](const CLI::App*) { return true; });
      std::vector<std::string> names;
      for (const auto* s : subs) {
        names.push_back(s->get_name());
        if (s->get_name() == t) cur = s;
      }
      if (cur == &app)
        throw UsageError("unknown subcommand \"" + t + "\"" + did_you_mean(t, names) + "; subcommands: " + join(names));
      continue;
    }
    const auto pos = cur->get_options([](const CLI::Option* o) { return !o->nonpositional(); });
    const CLI::Option* p = pos.empty() ? nullptr : pos[std::min(positional, pos.size() - 1)];
    ++positional;
    if (t.empty() && p)
      throw UsageError(cur->get_name() + " " + p->get_name() + ": expected " + expectation(p) + ", got an empty argument");
  }
}

}  // namespace

namespace {

int run_command(int argc, char** argv) {
  Context ctx;
  register_kinds(ctx);
  CLI::App app{"ffsim: what-if simulator and capacity planner for GPU training clusters", "ffsim"};
  // CLI11's messages in ffsim's form (before the subcommands are added: they copy it).
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string msg = e.what();
    if (msg == "A subcommand is required") {
      std::vector<std::string> names;
      for (const auto* s : a->get_subcommands([](const CLI::App*) { return true; })) names.push_back(s->get_name());
      msg += ": one of " + join(names);
    }
    return "ffsim: " + msg + "\nRun with --help for more information.\n";
  });
  app.set_version_flag("--version", std::string("ffsim ") + version() + " (commit " + git_commit() + ")");
  app.require_subcommand(1);
  app.fallthrough();  // global options (--models, --calibration) may also follow the subcommand
  ctx.expects(app.add_option("--models", ctx.models_option,
                             "Folders of the hardware catalog, repeatable or comma-separated; later ones override earlier "
                             "ones by model name (default: $FFSIM_MODELS, colon-separated, else the catalog beside the "
                             "binary: the source tree's models/ in a build, share/ffsim/models installed)")
                  ->expected(1)
                  ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll),
              "a folder (or a comma-separated list of folders)");
  ctx.expects(app.add_option("--calibration", ctx.calibration,
                             "Calibration file (ffsim calibrate): run with its fitted values instead of the published ones")
                  ->check(input_file()),
              "a calibration file");
  ctx.expects(app.add_option("--max-memory", ctx.max_memory,
                             "The size guard's limit (default 4GiB): a request whose estimate (platform, schedules) "
                             "needs more memory is refused at once, before anything is built (exit 4)"),
              "a size with a unit, e.g. 4GiB");

  setup_models(app, ctx);
  setup_check(app, ctx);
  setup_summary(app, ctx);
  setup_net(app, ctx);
  setup_collective(app, ctx);
  setup_plan(app, ctx);
  setup_calibrate(app, ctx);
  setup_validate(app, ctx);
  setup_train(app, ctx);
  setup_ops(app, ctx);
  setup_schema(app, ctx);
  setup_sweep(app, ctx);

  try {
    check_arguments(app, ctx, argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "ffsim: " << e.what() << "\nRun with --help for more information.\n";
    return kUsage;
  }
  try {
    std::vector<std::string> args = sweep_separator(argc, argv);
    if (args.empty()) {
      app.parse(argc, argv);
    } else {
      args.erase(args.begin());  // the program's name
      std::reverse(args.begin(), args.end());
      app.parse(args);
    }
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  }
  try {
    if (!ctx.max_memory.empty()) {
      const double limit = size_option(ctx.max_memory, "--max-memory");
      if (!(limit > 0))
        throw UsageError("--max-memory: expected a size above 0 (e.g. 4GiB), got \"" + ctx.max_memory + "\"");
      set_memory_limit(limit);
    }
    return ctx.action ? ctx.action() : kOk;
  } catch (const ConfigError& e) {
    std::cerr << e.what() << '\n';
    return kConfig;
  } catch (const ValueError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kConfig;
  } catch (const UsageError& e) {
    std::cerr << "ffsim: " << e.what() << "\nRun with --help for more information.\n";
    return kUsage;
  } catch (const SimulationError& e) {
    std::cerr << "simulation failed: " << e.what() << '\n';
    return kSimulation;
  } catch (const std::exception& e) {
    std::cerr << "ffsim: " << e.what() << "\n(this is a bug in ffsim; please report it with the command line)\n";
    return kInternal;
  }
}

}  // namespace

int run(int argc, char** argv) {
  // Every command's stdout, --help and --version included, is flushed and checked here, once.
  StdoutGuard out;
  const int rc = run_command(argc, argv);
  return out.finish(rc);
}

}  // namespace ffsim::cli
