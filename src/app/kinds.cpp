// The kinds of catalog entries.
// SPDX-License-Identifier: Apache-2.0
#include "app/kinds.hpp"

#include "calib/calibration_file.hpp"
#include "config/calibration_reader.hpp"
#include "config/coll_reader.hpp"
#include "config/hw_reader.hpp"
#include "config/train_reader.hpp"
#include "hw/specs.hpp"
#include "plan/prices.hpp"

namespace ffsim::app {

void register_kinds(KindRegistry& r) {
  r.add(config::kGpu, "a GPU model", [](const config::CatalogEntry& e, const config::Catalog&) { (void)config::parse_gpu(e); });
  r.add(config::kCpu, "a CPU model", [](const config::CatalogEntry& e, const config::Catalog&) { (void)config::parse_cpu(e); });
  r.add(config::kNic, "a network adapter", [](const config::CatalogEntry& e, const config::Catalog&) { (void)config::parse_nic(e); });
  r.add(config::kSwitch, "a network switch",
        [](const config::CatalogEntry& e, const config::Catalog&) { (void)config::parse_switch(e); });
  r.add(config::kNode, "a server: sockets, PCIe tree, GPUs, NICs",
        [](const config::CatalogEntry& e, const config::Catalog& c) { (void)config::parse_node(e, c); });
  r.add("collective_library", "tuning constants of a collective library (nccl, hfreduce)",
        [](const config::CatalogEntry& e, const config::Catalog&) { config::check_library_entry(e); });
  r.add(calib::kCalibration, "fitted parameters of a node model (ffsim calibrate) and the facts they override",
        [](const config::CatalogEntry& e, const config::Catalog& c) { config::check_calibration_entry(e, c); });
  r.add(config::kNnModel, "a neural network: layers, widths, experts (the model zoo)",
        [](const config::CatalogEntry& e, const config::Catalog&) { (void)config::parse_nn_model(e); });
  r.add(config::kComputeModel, "kernel efficiencies of the training compute model (calibration hook)",
        [](const config::CatalogEntry& e, const config::Catalog&) { (void)config::parse_compute_model(e); });
  r.add(plan::kPriceBook, "per-unit prices of nodes, switches, chassis, cables and optics",
        [](const config::CatalogEntry& e, const config::Catalog& c) { (void)plan::parse_price_book(e, c); });
}

std::string node_kind() { return config::kNode; }

const std::vector<std::string>& precisions() { return hw::precisions(); }

}  // namespace ffsim::app
