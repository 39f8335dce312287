// Text and JSON of `ffsim calibrate --kineto` (a profiler trace's kernel time by class and step)
// and `ffsim calibrate --gemm` (the GEMM shape model's fit).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ostream>

#include "app/compute_calibration.hpp"
#include "calib/gemm_fit.hpp"
#include "calib/kineto.hpp"

namespace ffsim::report {
class JsonWriter;
}

namespace ffsim::cli {

/// `fit` (may be null): the GEMM model's prediction for each shaped GEMM, with its error.
void print_kineto(std::ostream& os, const calib::KinetoTrace& t, const calib::GemmFit* fit);
/// The members of the "kineto" object (call between begin_object and end_object).
void write_kineto_json(report::JsonWriter& w, const calib::KinetoTrace& t, const calib::GemmFit* fit);

void print_gemm_fit(std::ostream& os, const calib::GemmCsv& csv, const calib::GemmFit& fit);
void write_gemm_fit_json(report::JsonWriter& w, const calib::GemmCsv& csv, const calib::GemmFit& fit);
/// The fit's "datasets" key: per dataset its rows, in-fit and held-out errors (also `validate --compute`).
void write_gemm_datasets_json(report::JsonWriter& w, const calib::GemmFit& fit);
/// `calibrate --throughput`: the fitted multipliers, the error per dataset (in the fit and held out),
/// and every row (excluded ones with their reason and, where modelled, their error).
void print_throughput_fit(std::ostream& os, const app::ThroughputCalibration& t);
void write_throughput_fit_json(report::JsonWriter& w, const app::ThroughputCalibration& t);
/// Of the above, the multipliers held at a bound ("held"), the errors of all rows ("all") and per
/// dataset ("datasets"); also the record of a written shaped compute model.
void write_throughput_errors_json(report::JsonWriter& w, const calib::ThroughputFit& fit);

}  // namespace ffsim::cli
