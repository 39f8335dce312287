// The GEMM shape model (train/gemm_time.hpp) and its fit (calib/gemm_fit.hpp).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "calib/gemm_fit.hpp"
#include "config/gemm_reader.hpp"
#include "core/error.hpp"
#include "train/gemm_time.hpp"

using namespace ffsim;

namespace {

calib::GemmGpu test_gpu() {
  calib::GemmGpu g;
  g.name = "test_a100";
  g.sms = 108;
  g.peak = {{"fp16", 312e12}, {"tf32", 156e12}};
  g.form_factor = "sxm";  // the rows stating none are taken as this
  return g;
}

}  // namespace

TEST_CASE("train::gemm_waves: tiles over SMs, wave quantisation") {
  const train::GemmTile tile{128, 128};
  auto tiles = [&](long long b, long long m, long long n) { return train::gemm_tiles({b, m, n, 64}, tile); };
  CHECK(tiles(1, 1, 1) == 1);
  CHECK(tiles(1, 128, 128) == 1);
  CHECK(tiles(1, 129, 128) == 2);  // a partial tile is a whole tile
  CHECK(tiles(1, 128 * 108, 128) == 108);
  CHECK(tiles(1, 128 * 108 + 1, 128) == 109);
  CHECK(tiles(3, 128 * 6, 128 * 6) == 108);  // batch multiplies
  CHECK(train::gemm_waves(1, 108) == 1);
  CHECK(train::gemm_waves(108, 108) == 1);
  CHECK(train::gemm_waves(109, 108) == 2);  // SMs + 1 tiles take 2 waves
  CHECK(train::gemm_waves(216, 108) == 2);
  CHECK(train::gemm_waves(217, 108) == 3);
  CHECK(train::gemm_waves(7, 1) == 7);
  // Without fixed costs, 109 tiles take twice the time of 108: the 109th runs in a wave of its own.
  train::GemmParams p;
  p.ceiling = 0.8;
  const double t108 = train::gemm_time({1, 128 * 108, 128, 4096}, 108, 312e12, p);
  const double t109 = train::gemm_time({1, 128 * 108 + 1, 128, 4096}, 108, 312e12, p);
  CHECK(t109 == doctest::Approx(2 * t108));
  // One full wave: 108 tiles x 2 x 128 x 128 x 4096 FLOPs at 0.8 x 312 TFLOP/s.
  CHECK(t108 == doctest::Approx(108.0 * 2 * 128 * 128 * 4096 / (0.8 * 312e12)));
  p.wave_overhead_s = 2e-6;
  p.launch_s = 5e-6;
  CHECK(train::gemm_time({1, 128 * 108 + 1, 128, 4096}, 108, 312e12, p) == doctest::Approx(2 * t108 + 2 * 2e-6 + 5e-6));
}

// Rows written from planted values (ceiling fp16 0.81, tf32 0.73, 3.5 us a wave, 6 us a GEMM, tile
// 128x128) over shapes of 1 to 60 waves and K from 256 to 16384; the fit recovers them. The rows
// state no form factor: they are the --gpu model's (sxm).
TEST_CASE("calib::fit_gemm: planted parameters are recovered") {
  const auto gpu = test_gpu();
  calib::GemmFitValues planted;
  planted.tile = {128, 128};
  planted.ceiling = {{"sxm", {{"fp16", {0.81, 0, ""}}, {"tf32", {0.73, 0, ""}}}}};
  planted.wave_overhead_s = 3.5e-6;
  planted.launch_s = 6e-6;
  calib::GemmCsv csv;
  csv.file = "planted";
  const long long sizes[][3] = {{256, 256, 256},    {1000, 1000, 1000},  {1536, 1536, 1536}, {2048, 2048, 512},
                                {4096, 4096, 4096}, {8192, 1024, 16384}, {3000, 5000, 700},  {128, 13952, 2048}};
  int line = 2;
  for (const char* prec : {"fp16", "tf32"})
    for (const auto& s : sizes)
      for (const char* ds : {"a", "b"}) {
        calib::GemmRow r;
        r.line = line++;
        r.dataset = std::string(ds) + (ds[0] == 'b' ? "x" : "");
        r.precision = prec;
        r.shape = {1, s[0], s[1], s[2] * (ds[0] == 'b' ? 2 : 1)};
        r.tflops = r.shape.flops() / calib::gemm_model_time(r, gpu, planted) / 1e12;
        csv.rows.push_back(r);
      }
  const auto v = calib::fit_gemm_values(csv.rows, gpu, {128, 128});
  CHECK(v.ceiling_of("sxm", "fp16") == doctest::Approx(0.81).epsilon(1e-6));
  CHECK(v.ceiling_of("sxm", "tf32") == doctest::Approx(0.73).epsilon(1e-6));
  CHECK(v.ceiling.size() == 1);                      // one form factor: nothing to derive
  CHECK(v.ceiling.at("sxm").at("fp16").rows == 16);  // 8 shapes x 2 datasets
  CHECK(v.ceiling.at("sxm").at("fp16").derived.empty());
  CHECK(v.wave_overhead_s == doctest::Approx(3.5e-6).epsilon(1e-6));
  CHECK(v.launch_s == doctest::Approx(6e-6).epsilon(1e-6));
  CHECK(v.at_bound.empty());
  const auto fit = calib::fit_gemm(csv, gpu, calib::default_gemm_tiles());
  CHECK(fit.values.tile.m == 128);
  CHECK(fit.values.tile.n == 128);
  CHECK(fit.all.max_abs < 1e-9);
  REQUIRE(fit.datasets.size() == 2);
  for (const auto& d : fit.datasets) {
    CHECK(d.held_out_note.empty());
    CHECK(d.held_out.max_abs < 1e-9);  // the other dataset pins the same values
  }
  // A tile other than the planted one fits worse.
  REQUIRE(fit.tiles.size() == calib::default_gemm_tiles().size());
  CHECK(fit.tiles[1].errors.mape > 1e-4);
}

// A ceiling per form factor: sxm rows at fp16 0.81 and tf32 0.73, pcie rows at fp16 only, 0.70,
// with the same wave (3.5 us) and launch (6 us) costs; datasets a and b each have both sxm
// precisions (b at twice the K), c the pcie rows. The fit recovers the three; pcie tf32 has no row
// and is derived: sxm tf32 x (pcie fp16 / sxm fp16) = 0.73 x 0.70 / 0.81 = 0.630864... Held out,
// the pcie dataset cannot be predicted (no other dataset has a pcie row); a and b can (the other
// pins the sxm values, c the costs).
TEST_CASE("calib::fit_gemm: a ceiling per form factor, a missing one derived by the shared ratio") {
  const auto gpu = test_gpu();
  calib::GemmFitValues planted;
  planted.tile = {128, 128};
  planted.ceiling = {{"sxm", {{"fp16", {0.81, 0, ""}}, {"tf32", {0.73, 0, ""}}}}, {"pcie", {{"fp16", {0.70, 0, ""}}}}};
  planted.wave_overhead_s = 3.5e-6;
  planted.launch_s = 6e-6;
  calib::GemmCsv csv;
  csv.file = "planted";
  const long long sizes[][3] = {{256, 256, 256},    {1000, 1000, 1000}, {1536, 1536, 1536},
                                {4096, 4096, 4096}, {3000, 5000, 700},  {128, 13952, 2048}};
  int line = 2;
  auto add = [&](const std::string& ds, const std::string& ff, const std::string& prec, const long long* s,
                 long long kmul) {
    calib::GemmRow r;
    r.line = line++;
    r.dataset = ds;
    r.form_factor = ff;
    r.precision = prec;
    r.shape = {1, s[0], s[1], s[2] * kmul};
    r.tflops = r.shape.flops() / calib::gemm_model_time(r, gpu, planted) / 1e12;
    REQUIRE(std::isfinite(r.tflops));
    csv.rows.push_back(r);
  };
  for (const auto& s : sizes) {
    add("a", "", "fp16", s, 1);  // stated none: the --gpu model's (sxm)
    add("a", "sxm", "tf32", s, 1);
    add("b", "sxm", "fp16", s, 2);
    add("b", "", "tf32", s, 2);
    add("c", "pcie", "fp16", s, 1);
  }
  const auto v = calib::fit_gemm_values(csv.rows, gpu, {128, 128});
  CHECK(v.ceiling_of("sxm", "fp16") == doctest::Approx(0.81).epsilon(1e-6));
  CHECK(v.ceiling_of("sxm", "tf32") == doctest::Approx(0.73).epsilon(1e-6));
  CHECK(v.ceiling_of("pcie", "fp16") == doctest::Approx(0.70).epsilon(1e-6));
  CHECK(v.ceiling.at("pcie").at("fp16").rows == 6);
  REQUIRE(v.ceiling.at("pcie").count("tf32"));
  const auto& d = v.ceiling.at("pcie").at("tf32");
  CHECK(d.value == doctest::Approx(0.73 * 0.70 / 0.81).epsilon(1e-6));
  CHECK(d.rows == 0);
  CHECK(d.derived.find("sxm tf32") != std::string::npos);
  CHECK(std::isnan(v.ceiling_of("pcie", "fp32")));  // no form factor has fp32: nothing to derive from
  CHECK(std::isnan(v.ceiling_of("emulated", "fp16")));
  CHECK(v.wave_overhead_s == doctest::Approx(3.5e-6).epsilon(1e-6));
  CHECK(v.launch_s == doctest::Approx(6e-6).epsilon(1e-6));
  const auto fit = calib::fit_gemm(csv, gpu, calib::default_gemm_tiles());
  REQUIRE(fit.datasets.size() == 3);
  for (const auto& ds : fit.datasets) {
    CAPTURE(ds.dataset);
    if (ds.dataset == "c") {
      CHECK(ds.held_out_note == "the other datasets have no pcie fp16 rows");
    } else {
      CHECK(ds.held_out_note.empty());
      CHECK(ds.held_out.max_abs < 1e-6);
    }
  }
}

TEST_CASE("calib::fit_gemm: a negative fixed cost is held at 0") {
  // Rows of a pure rate (no fixed cost) minus a little: the free fit's launch goes negative.
  const auto gpu = test_gpu();
  calib::GemmFitValues planted;
  planted.ceiling = {{"sxm", {{"fp16", {0.9, 0, ""}}}}};
  std::vector<calib::GemmRow> rows;
  for (long long n : {512LL, 1024LL, 2048LL, 4096LL}) {
    calib::GemmRow r;
    r.precision = "fp16";
    r.shape = {1, n, n, n};
    r.tflops = r.shape.flops() / (calib::gemm_model_time(r, gpu, planted) - 1e-6) / 1e12;
    rows.push_back(r);
  }
  const auto v = calib::fit_gemm_values(rows, gpu, {128, 128});
  CHECK(!v.at_bound.empty());
  CHECK(v.launch_s >= 0);
  CHECK(v.wave_overhead_s >= 0);
}

TEST_CASE("calib: config::parse_gemm_csv: columns, quoting, \"same figure\", exclusions, errors") {
  const std::string text =
      "source,gpu,dtype,M,N,K,tflops,pct_peak,stat,software,kind\n"
      "\"Vendor \"\"X\"\" blog, Fig. 6\",A100,fp16/bf16 (curves overlap),256,256,256,3,1.0,s,sw,\"CHART READ-OFF, +/-5 "
      "TFLOPS\"\n"
      "same figure,A100,tf32,512,512,512,17,10.9,s,sw,\"CHART READ-OFF, +/-5 TFLOPS\"\n"
      "lab/bench README.md,A100 SXM,bf16,1024,10240,5120,271.2,86.9,mean,torch,measured (max over search)\n"
      "other/copy README.md,A100 PCIe,bf16,2304,5120,1536,256.4,82.2,copy,n/a,secondary copy\n"
      "x/y,A100 80GB,\"fp32 (TF32 likely, NGC 22.07)\",8192,8192,8192,116,74,best,ngc,measured (summary)\n";
  const auto csv = config::parse_gemm_csv(text, "t.csv");
  REQUIRE(csv.rows.size() == 5);
  CHECK(csv.rows[0].source == "Vendor \"X\" blog, Fig. 6");
  CHECK(csv.rows[0].precision == "fp16");
  CHECK(csv.rows[0].uncertainty_tflops == 5);
  CHECK(csv.rows[0].dataset == "Vendor (chart read-off)");
  CHECK(csv.rows[1].source == csv.rows[0].source);  // "same figure"
  CHECK(csv.rows[1].dataset == csv.rows[0].dataset);
  CHECK(csv.rows[1].precision == "tf32");
  CHECK(csv.rows[1].line == 3);
  CHECK(csv.rows[2].precision == "fp16");
  CHECK(csv.rows[2].uncertainty_tflops == 0);
  CHECK(csv.rows[2].excluded.empty());
  CHECK(csv.rows[2].time_s() == doctest::Approx(2.0 * 1024 * 10240 * 5120 / 271.2e12));
  CHECK(!csv.rows[3].excluded.empty());
  CHECK(csv.rows[4].precision == "tf32");  // "fp32 (TF32 likely)"
  // The form factor as the gpu column states it, else "" (the fit takes the --gpu model's).
  CHECK(csv.rows[0].form_factor.empty());    // "A100"
  CHECK(csv.rows[2].form_factor == "sxm");   // "A100 SXM"
  CHECK(csv.rows[3].form_factor == "pcie");  // "A100 PCIe"
  CHECK(csv.rows[4].form_factor.empty());    // "A100 80GB"
  auto fails = [](const std::string& t, const std::string& part) {
    try {
      (void)config::parse_gemm_csv(t, "bad.csv");
      FAIL("no error");
    } catch (const ConfigError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(part) != std::string::npos, e.what());
    }
  };
  fails("source,gpu,dtype,M,N,K\n", "no column \"tflops\"");
  fails("source,gpu,dtype,M,N,K,tflops,kind\nx,A100,int8,1,1,1,1,m\n",
        "line 2: column dtype: expected fp16, bf16, tf32 or fp32");
  fails("source,gpu,dtype,M,N,K,tflops,kind\nx,A100,fp16,0,1,1,1,m\n", "line 2: column m: expected a positive number");
  fails("source,gpu,dtype,M,N,K,tflops,kind\n", "no rows");
  fails("source,gpu,dtype,M,N,K,tflops,kind\nx,A100 PCIe/SXM,fp16,1,1,1,1,m\n",
        "line 2: column gpu: \"A100 PCIe/SXM\" names both PCIe and SXM");
}

// shared/reference/compute/gemm_a100.csv where shared/ is at hand: 74 rows, one a secondary copy
// (excluded), four datasets; the fit's values are fractions of the peak and costs >= 0.
TEST_CASE("calib::fit_gemm: the shared A100 GEMM measurements") {
  const std::string path = std::string(FFSIM_SOURCE_DIR) + "/../shared/reference/compute/gemm_a100.csv";
  if (!std::filesystem::exists(path)) {
    MESSAGE("shared/reference/compute not found beside the source tree: skipped");
    return;
  }
  const auto csv = config::load_gemm_csv(path);
  CHECK(csv.rows.size() == 74);
  int excluded = 0;
  for (const auto& r : csv.rows) excluded += r.excluded.empty() ? 0 : 1;
  CHECK(excluded == 1);
  const auto fit = calib::fit_gemm(csv, test_gpu(), calib::default_gemm_tiles());
  CHECK(fit.all.points == 73);
  CHECK(fit.datasets.size() == 4);
  // Five PCIe rows (stas00's bf16 best shapes; mag-'s sixth is a copy, excluded), two SXM rows, the
  // others stating none (taken as test_gpu's sxm): a fitted pcie fp16 ceiling, a derived pcie tf32.
  REQUIRE(fit.values.ceiling.count("pcie"));
  CHECK(fit.values.ceiling.at("pcie").at("fp16").rows == 5);
  CHECK(fit.values.ceiling.at("pcie").at("tf32").rows == 0);
  CHECK(fit.values.ceiling.at("sxm").at("fp16").rows == 2 + 32 + 1);  // 2 stated, 32 chart (256..8192), mli
  CHECK(fit.values.ceiling.at("sxm").at("tf32").rows == 32 + 1);
  for (const auto& [ff, m] : fit.values.ceiling)
    for (const auto& [p, c] : m) {
      CAPTURE(ff);
      CAPTURE(p);
      CHECK(c.value > 0);
      CHECK(c.value <= 1.0);
    }
  CHECK(fit.values.wave_overhead_s >= 0);
  CHECK(fit.values.launch_s >= 0);
}
