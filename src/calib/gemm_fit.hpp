// Measured GEMM rates (a CSV such as shared/reference/compute/gemm_a100.csv) and the fit of the
// shape model of train/gemm_time.hpp to them: a ceiling per precision, a fixed cost per wave and
// per GEMM, and the tile (`ffsim calibrate --gemm CSV --gpu MODEL`).
// Lives in calib (the fit; config/gemm_reader.hpp reads the CSV); the model itself is train's, so
// that the step model can use it without depending on calibration.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <string>
#include <vector>

#include "train/gemm_time.hpp"

namespace ffsim::calib {

/// One measured GEMM (a row of the CSV).
struct GemmRow {
  int line = 0;         ///< 1-based line of the CSV, for messages
  std::string source;   ///< as written ("same figure" resolved to the row above's source)
  std::string dataset;  ///< the source's first word and the kind: the unit of leave-one-dataset-out
  std::string gpu, dtype, kind, stat;
  std::string precision;  ///< the peak it is measured against: "fp16" (fp16 and bf16), "tf32", "fp32"
  /// The card's form factor as the gpu column states it: "pcie" or "sxm"; "" when not stated (the
  /// fit then takes it as the --gpu model's, [I]).
  std::string form_factor;
  train::GemmShape shape;
  double tflops = 0;
  double uncertainty_tflops = 0;  ///< a chart read by eye: +-5 TFLOPS (the kind column says so); else 0
  std::string excluded;           ///< why the fit leaves the row out ("" if it uses it)
  [[nodiscard]] double time_s() const { return shape.flops() / (tflops * 1e12); }
};

struct GemmCsv {
  std::string file;
  std::vector<GemmRow> rows;
};

/// The facts of a GPU model the GEMM model needs (catalog kind "gpu": sms, compute.<p>.peak).
struct GemmGpu {
  std::string name;
  int sms = 0;
  std::map<std::string, double> peak;  ///< FLOP/s by precision
  std::string sms_source;
  std::string form_factor;  ///< the catalog's form_factor ("sxm", "pcie"): that of rows that state none
};

/// A GEMM ceiling, and how it was found: fitted on rows of its form factor and precision, or derived
/// from another form factor's by the ratio of the two cards' ceilings at a precision both have.
struct GemmCeiling {
  double value = 0;
  int rows = 0;         ///< the rows it was fitted on (0: derived)
  std::string derived;  ///< how it was derived ("" when fitted)
};

struct GemmFitValues {
  train::GemmTile tile;
  /// By form factor ("pcie", "sxm"), then precision. The two cards have the same SMs, peaks and
  /// kernels but not the same power limit (250-300 W against 400 W), which lowers the clocks the
  /// tensor cores hold on long GEMMs: each form factor gets its own ceiling; the wave and launch
  /// costs are shared.
  std::map<std::string, std::map<std::string, GemmCeiling>> ceiling;
  double wave_overhead_s = 0, launch_s = 0;
  /// Parameters held at a bound: "wave_overhead", "launch" at 0 (their free fit went negative);
  /// "ceiling FF P" at 1 (its free fit was above the peak).
  std::vector<std::string> at_bound;
  /// The ceiling of (form factor, precision), NaN when the fit has none.
  [[nodiscard]] double ceiling_of(const std::string& form_factor, const std::string& precision) const;
  [[nodiscard]] train::GemmParams params(const std::string& form_factor, const std::string& precision) const;
};

struct GemmErrors {
  int points = 0;
  double mape = 0, max_abs = 0;  ///< relative error of the time (= of the rate, to first order)
};
/// The mean and the largest absolute value of relative errors (0 points: zeros).
[[nodiscard]] GemmErrors relative_errors(const std::vector<double>& rel);

struct GemmDatasetResult {
  std::string dataset;
  int rows = 0, excluded = 0;
  GemmErrors in_fit;              ///< with the fit on every dataset
  GemmErrors held_out;            ///< with the fit on the other datasets only
  std::string held_out_note;      ///< why there is no held-out figure ("" if there is)
  double median_uncertainty = 0;  ///< median relative uncertainty of its rates (chart read-off)
};

struct GemmTileTrial {
  train::GemmTile tile;
  GemmErrors errors;
};

struct GemmFit {
  std::string file;
  GemmGpu gpu;
  GemmFitValues values;
  GemmErrors all;
  std::vector<double> model_s;              ///< per row of the CSV (0 for excluded rows)
  std::vector<GemmDatasetResult> datasets;  ///< in order of first appearance
  std::vector<GemmTileTrial> tiles;         ///< every tile tried, the chosen one first
};

/// Weighted (relative) linear least squares of the model's time on the rows not excluded, for each
/// tile of `tiles`; the tile with the smallest mean absolute relative error is kept. Then per
/// dataset: the errors in that fit, and those of a fit on the other datasets (leave one out).
[[nodiscard]] GemmFit fit_gemm(const GemmCsv& csv, const GemmGpu& gpu, const std::vector<train::GemmTile>& tiles);
/// The tiles fit_gemm tries by default: 128x128, 256x128, 128x256, 128x64, 64x128, 256x64, 64x64 ([I]
/// CUTLASS's sm80 tensor-op tile sizes).
[[nodiscard]] std::vector<train::GemmTile> default_gemm_tiles();

/// Fits one tile on the given rows: a ceiling per (form factor, precision) the rows have, the wave
/// and launch costs shared. A form factor with no row of a precision another form factor has gets
/// that one's ceiling times the ratio of the two form factors' ceilings at the precisions both have
/// (the geometric mean of the ratios; [I] the power limit slows every precision's tensor-core clock
/// alike). Exposed for tests.
[[nodiscard]] GemmFitValues fit_gemm_values(const std::vector<GemmRow>& rows, const GemmGpu& gpu,
                                            const train::GemmTile& tile);
/// The row's form factor: its own, or the --gpu model's when the row states none.
[[nodiscard]] std::string row_form_factor(const GemmRow& r, const GemmGpu& gpu);
[[nodiscard]] double gemm_model_time(const GemmRow& r, const GemmGpu& gpu, const GemmFitValues& v);

}  // namespace ffsim::calib
