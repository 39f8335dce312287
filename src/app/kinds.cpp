// The kinds of catalog entries.
// SPDX-License-Identifier: Apache-2.0
#include "app/kinds.hpp"

#include "calib/calibration_file.hpp"
#include "coll/collective.hpp"
#include "hw/parse.hpp"
#include "hw/specs.hpp"
#include "plan/prices.hpp"
#include "train/compute.hpp"
#include "train/nn_model.hpp"

namespace ffsim::app {

void register_kinds(KindRegistry& r) {
  r.add(hw::kGpu, "a GPU model", [](const config::CatalogEntry& e, const config::Catalog&) { (void)hw::parse_gpu(e); });
  r.add(hw::kCpu, "a CPU model", [](const config::CatalogEntry& e, const config::Catalog&) { (void)hw::parse_cpu(e); });
  r.add(hw::kNic, "a network adapter", [](const config::CatalogEntry& e, const config::Catalog&) { (void)hw::parse_nic(e); });
  r.add(hw::kSwitch, "a network switch",
        [](const config::CatalogEntry& e, const config::Catalog&) { (void)hw::parse_switch(e); });
  r.add(hw::kNode, "a server: sockets, PCIe tree, GPUs, NICs",
        [](const config::CatalogEntry& e, const config::Catalog& c) { (void)hw::parse_node(e, c); });
  r.add("collective_library", "tuning constants of a collective library (nccl, hfreduce)",
        [](const config::CatalogEntry& e, const config::Catalog&) { coll::check_library_entry(e); });
  r.add(calib::kCalibration, "fitted parameters of a node model (ffsim calibrate) and the facts they override",
        [](const config::CatalogEntry& e, const config::Catalog& c) { calib::check_calibration_entry(e, c); });
  r.add(train::kNnModel, "a neural network: layers, widths, experts (the model zoo)",
        [](const config::CatalogEntry& e, const config::Catalog&) { (void)train::parse_nn_model(e); });
  r.add(train::kComputeModel, "kernel efficiencies of the training compute model (calibration hook)",
        [](const config::CatalogEntry& e, const config::Catalog&) { (void)train::parse_compute_model(e); });
  r.add(plan::kPriceBook, "per-unit prices of nodes, switches, chassis, cables and optics",
        [](const config::CatalogEntry& e, const config::Catalog& c) { (void)plan::parse_price_book(e, c); });
}

std::string node_kind() { return hw::kNode; }

const std::vector<std::string>& precisions() { return hw::precisions(); }

}  // namespace ffsim::app
