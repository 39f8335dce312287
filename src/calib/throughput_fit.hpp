// Measured training throughputs of one GPU (or per GPU of a one-node FSDP run) (a CSV such as
// models/measured/a100-public-throughputs.csv) and the fit of the shaped compute model (train/shaped_compute.hpp) to
// them: a multiplier for the convolutions, one for the matrix products of linear layers and attention, and one for the
// memory-bound work, with the GEMM model's parameters from `--gemm` held fixed
// (`ffsim calibrate --throughput CSV --gemm CSV`).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <string>
#include <vector>

#include "calib/gemm_fit.hpp"
#include "train/shaped_compute.hpp"

namespace ffsim::calib {

/// One measured throughput (a row of the CSV).
struct ThroughputRow {
  int line = 0;           ///< 1-based line of the CSV, for messages
  std::string dataset;    ///< the unit of leave-one-dataset-out
  std::string source;     ///< the measurement's origin, as written
  std::string model;      ///< catalog nn_model
  std::string gpu;        ///< catalog gpu
  std::string precision;  ///< "fp16" (mixed precision: fp16 or bf16 tensor cores) or "tf32" or "fp32"
  std::string optimizer;  ///< "sgd" or "adam" (empty for an excluded row)
  bool flash_attention = false;
  double batch = 0, seq = 0, throughput = 0;
  /// Data-parallel ranks the optimizer state is sharded over (a one-node FSDP / ZeRO run, measured
  /// per GPU; the optional column "shards", default 1: a single GPU).
  int shards = 1;
  /// Samples per forward and backward pass (the optional column "micro_batch"; 0: the whole batch
  /// at once): a step of gradient accumulation runs batch / micro_batch of them, one optimizer step.
  double micro_batch = 0;
  bool tokens = false;   ///< throughput in tokens/s (else samples/s)
  std::string excluded;  ///< why the fit leaves the row out ("" if it uses it)
  std::string note;
  /// The measured seconds of one step: batch samples at the throughput.
  [[nodiscard]] double step_s() const { return (tokens ? batch * seq : batch) / throughput; }
};

struct ThroughputCsv {
  std::string file;
  std::vector<ThroughputRow> rows;
};

/// Each row's step by kind (ShapedTimes), computed from the catalog's network and GPU; rows the
/// fit leaves out may have none (`modelled` false, with the reason in the row's `excluded`).
struct ThroughputCase {
  bool modelled = false;
  train::ShapedTimes times;
  double ceiling = 0;       ///< the GEMM ceiling its card's form factor and precision were timed with
  std::string form_factor;  ///< its card's ("pcie", "sxm")
};

/// Relative errors of the step time (model / measured - 1).
using ThroughputErrors = GemmErrors;

struct ThroughputDataset {
  std::string dataset;
  int rows = 0, excluded = 0;
  ThroughputErrors in_fit, held_out;
  train::ShapedMultipliers held_out_values;  ///< the fit on the other datasets
  std::vector<std::string> held_out_fixed;   ///< multipliers that fit could not determine (held at 1)
  /// Within the dataset, each network predicted by a fit on its other networks only (a user who
  /// calibrates on some networks of their own stack and predicts another); 0 points when the
  /// dataset has one network.
  ThroughputErrors network_out;
  int networks = 0;
  /// Networks whose within-dataset fit held a multiplier (no other network depends on it).
  std::vector<std::string> network_out_fixed;
};

struct ThroughputFit {
  std::string file;
  train::ShapedMultipliers values;
  std::vector<std::string> fixed;  ///< multipliers no used row depends on (held at 1)
  ThroughputErrors all;
  std::vector<double> model_s;              ///< per row (NaN where not modelled)
  std::vector<ThroughputDataset> datasets;  ///< in order of first appearance
};

/// Lower bounds of the multipliers, in the order conv, gemm, memory, and why each is there (empty:
/// 0, a time cannot be negative). A free fit below a bound is held at it.
struct ThroughputBounds {
  std::array<double, 3> lower{0, 0, 0};
  std::array<std::string, 3> why{};
};

/// Weighted (relative) linear least squares of the step time on the used rows: time =
/// conv x conv_s + gemm x (linear_s + attention_s) + memory x memory_s + optimizer_s. A multiplier
/// no row depends on is held at 1. Then per dataset, the errors in that fit and in a fit on the
/// other datasets (leave one out), and leaving one network out within the dataset. `cases` is
/// parallel to csv.rows.
[[nodiscard]] ThroughputFit fit_throughput(const ThroughputCsv& csv, const std::vector<ThroughputCase>& cases,
                                           const ThroughputBounds& bounds = {});

}  // namespace ffsim::calib
