// SPDX-License-Identifier: Apache-2.0
#include "app/compute_calibration.hpp"

#include <algorithm>

#include "config/hw_reader.hpp"
#include "config/train_reader.hpp"
#include "train/compute.hpp"
#include "train/nn_model.hpp"
#include "train/shaped_compute.hpp"

namespace ffsim::app {

ThroughputCalibration calibrate_throughput(const config::Catalog& cat, calib::ThroughputCsv csv,
                                           const calib::GemmFitValues& gemm) {
  ThroughputCalibration out;
  // The memory-bound traffic per stored element of the default compute model: forward passes x
  // (1 + backward factor) (models/train/compute_default.json).
  double traffic = 6;
  if (const auto* e = cat.find(config::kComputeModel, "default")) {
    const auto m = config::parse_compute_model(*e);
    traffic = m.memory_passes * (1 + m.backward_memory);
  }
  for (auto& r : csv.rows) {
    calib::ThroughputCase c;
    const auto* me = cat.find(config::kNnModel, r.model);
    const auto* ge = cat.find(config::kGpu, r.gpu);
    const std::string family = r.precision == "bf16" ? "fp16" : r.precision;
    std::string why;
    if (r.precision.empty())
      why = "-";
    else if (!me)
      why = "network \"" + r.model + "\" not in the catalog";
    else if (!ge)
      why = "GPU \"" + r.gpu + "\" not in the catalog";
    if (why.empty()) {
      const auto net = config::parse_nn_model(*me);
      const auto gpu = config::parse_gpu(*ge);
      const auto rate = gpu.compute.find(r.precision);
      if (!(gemm.ceiling_of(gpu.form_factor, family) > 0))
        why = "the GEMM fit has no " + gpu.form_factor + " " + family + " ceiling (fitted or derived)";
      else if (gpu.sms <= 0)
        why = "GPU " + r.gpu + " has no \"sms\" fact";
      else if (rate == gpu.compute.end())
        why = "GPU " + r.gpu + " has no " + r.precision + " peak";
      else {
        const int seq = r.seq > 0 ? static_cast<int>(r.seq) : 1;
        const auto layers = train::layer_costs(net, seq, r.flash_attention);
        train::ShapedStep step;
        // Gradient accumulation: batch / micro_batch passes of micro_batch samples each (the
        // products at the micro-batch's shapes), one optimizer step.
        const double mb = r.micro_batch > 0 ? r.micro_batch : r.batch, passes = r.batch / mb;
        step.samples = mb;
        step.act_bytes = train::element_bytes(r.precision);
        // Sharded over `shards` ranks (FSDP / ZeRO), a GPU updates its share of the parameters.
        step.optimizer_bytes_per_param =
            train::optimizer_bytes_per_param(r.optimizer, r.precision == "fp16" || r.precision == "bf16") / r.shards;
        step.memory_traffic = traffic;
        train::GemmParams gp = gemm.params(gpu.form_factor, family);
        c.ceiling = gp.ceiling;
        c.form_factor = gpu.form_factor;
        gp.split_k_min = kSplitKMin;
        c.times = train::shaped_step(layers, step,
                                     train::ShapedGpu{gpu.sms, rate->second.peak.si(), gpu.memory_bandwidth.si()}, gp);
        for (double* t :
             {&c.times.conv_s, &c.times.linear_s, &c.times.attention_s, &c.times.memory_s, &c.times.score_memory_s})
          *t *= passes;
        c.times.gemms = static_cast<long long>(static_cast<double>(c.times.gemms) * passes);
        c.modelled = true;
      }
    }
    if (!c.modelled && r.excluded.empty()) r.excluded = why;
    out.cases.push_back(c);
  }
  // A product cannot run faster than the peak: the GEMM model reaches `ceiling` x peak on full
  // waves, so a multiplier below the ceiling would time large products above the peak. The
  // multipliers of GEMM-timed work are bounded below by the highest ceiling of the (form factor,
  // precision) pairs the fit's rows use (one multiplier serves them all).
  calib::ThroughputBounds bounds;
  {
    double ceiling = 0;
    for (std::size_t i = 0; i < csv.rows.size(); ++i)
      if (out.cases[i].modelled && csv.rows[i].excluded.empty()) ceiling = std::max(ceiling, out.cases[i].ceiling);
    const std::string why = "the GEMM ceiling: less would beat the peak";
    bounds.lower[0] = bounds.lower[1] = ceiling;
    bounds.why[0] = bounds.why[1] = why;
  }
  out.fit = calib::fit_throughput(csv, out.cases, bounds);
  out.csv = std::move(csv);
  return out;
}

}  // namespace ffsim::app
