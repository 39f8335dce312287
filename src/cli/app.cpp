// The ffsim command line: subcommands, exit codes.
// SPDX-License-Identifier: Apache-2.0
#include "cli/app.hpp"

#include <cmath>
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "calib/calibration_file.hpp"
#include "cli/context.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/unit_parse.hpp"
#include "core/version.hpp"
#include "coll/collective.hpp"
#include "hw/parse.hpp"
#include "sim/simgrid_engine.hpp"
#include "plan/prices.hpp"
#include "train/compute.hpp"
#include "train/nn_model.hpp"

#ifndef FFSIM_DEFAULT_MODELS_DIR
#define FFSIM_DEFAULT_MODELS_DIR "models"
#endif

namespace ffsim::cli {

const config::Catalog& Context::published_catalog() {
  if (!published_) published_ = std::make_unique<config::Catalog>(config::Catalog::load(models_dir, kind_names()));
  return *published_;
}

double size_option(const std::string& text, const std::string& option) {
  double bytes = 0;
  try {
    bytes = parse_size(text).si();
  } catch (const ValueError& e) {
    throw UsageError(option + ": " + e.what());
  }
  if (bytes < 0) throw UsageError(option + " must not be negative");
  if (bytes != std::floor(bytes))
    throw UsageError(option + ": " + text + " is not a whole number of bytes (" + fmt_f(bytes, 3) + " B)");
  return bytes;
}

const config::Catalog& Context::catalog() {
  if (!catalog_) {
    catalog_ = std::make_unique<config::Catalog>(published_catalog());
    if (!calibration.empty()) calib::apply_calibration(*catalog_, calib::load_calibration(calibration));
  }
  return *catalog_;
}

std::vector<std::string> Context::kind_names() const { return kinds.names(); }

void register_kinds(Context& ctx) {
  ctx.kinds.add(hw::kGpu, "a GPU model", [](const config::CatalogEntry& e, const config::Catalog&) {
    (void)hw::parse_gpu(e);
  });
  ctx.kinds.add(hw::kCpu, "a CPU model", [](const config::CatalogEntry& e, const config::Catalog&) {
    (void)hw::parse_cpu(e);
  });
  ctx.kinds.add(hw::kNic, "a network adapter", [](const config::CatalogEntry& e, const config::Catalog&) {
    (void)hw::parse_nic(e);
  });
  ctx.kinds.add(hw::kSwitch, "a network switch", [](const config::CatalogEntry& e, const config::Catalog&) {
    (void)hw::parse_switch(e);
  });
  ctx.kinds.add(hw::kNode, "a server: sockets, PCIe tree, GPUs, NICs",
                [](const config::CatalogEntry& e, const config::Catalog& c) { (void)hw::parse_node(e, c); });
  ctx.kinds.add("collective_library", "tuning constants of a collective library (nccl, hfreduce)",
                [](const config::CatalogEntry& e, const config::Catalog&) { coll::check_library_entry(e); });
  ctx.kinds.add(calib::kCalibration, "fitted parameters of a node model (ffsim calibrate) and the facts they override",
                [](const config::CatalogEntry& e, const config::Catalog& c) { calib::check_calibration_entry(e, c); });
  ctx.kinds.add(train::kNnModel, "a neural network: layers, widths, experts (the model zoo)",
                [](const config::CatalogEntry& e, const config::Catalog&) { (void)train::parse_nn_model(e); });
  ctx.kinds.add(train::kComputeModel, "kernel efficiencies of the training compute model (calibration hook)",
                [](const config::CatalogEntry& e, const config::Catalog&) { (void)train::parse_compute_model(e); });
  ctx.kinds.add(plan::kPriceBook, "per-unit prices of nodes, switches, chassis, cables and optics",
                [](const config::CatalogEntry& e, const config::Catalog& c) { (void)plan::parse_price_book(e, c); });
}

int run(int argc, char** argv) {
  Context ctx;
  register_kinds(ctx);
  sim::register_simgrid_engine(eval::engines());
  CLI::App app{"ffsim: what-if simulator and capacity planner for GPU training clusters", "ffsim"};
  app.set_version_flag("--version", std::string("ffsim ") + version());
  app.require_subcommand(1);
  app.fallthrough();  // global options (--models, --calibration) may also follow the subcommand
  const char* env = std::getenv("FFSIM_MODELS");
  ctx.models_dir = env && *env ? env : FFSIM_DEFAULT_MODELS_DIR;
  app.add_option("--models", ctx.models_dir, "Folder of the hardware catalog (default: $FFSIM_MODELS or the source tree's models/)");
  app.add_option("--calibration", ctx.calibration,
                 "Calibration file (ffsim calibrate): run with its fitted values instead of the published ones")
      ->check(CLI::ExistingFile);

  setup_models(app, ctx);
  setup_check(app, ctx);
  setup_summary(app, ctx);
  setup_net(app, ctx);
  setup_collective(app, ctx);
  setup_plan(app, ctx);
  setup_calibrate(app, ctx);
  setup_validate(app, ctx);
  setup_train(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  }
  try {
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

}  // namespace ffsim::cli
