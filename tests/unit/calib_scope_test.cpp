// Calibration scope (machine / library) and nccl-tests logs.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "calib/calibration_file.hpp"
#include "calib/nccl_tests.hpp"
#include "calib/scope.hpp"
#include "coll/collective.hpp"
#include "config/calibration_reader.hpp"
#include "config/calibration_scope.hpp"
#include "config/catalog.hpp"
#include "config/coll_reader.hpp"
#include "config/hw_reader.hpp"
#include "config/nccl_tests_reader.hpp"
#include "core/error.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using namespace ffsim::calib;
using namespace ffsim::config;

namespace {

// A calibration of `node` with the given overrides (JSON objects, comma-separated).
CalibrationFile calibration(const std::string& node, const std::string& overrides) {
  const std::string text = R"({"kind": "calibration", "name": "t", "node": ")" + node + R"(",
    "measurements": [{"file": "m.json", "machine": "vm", "date": "d", "points": 1}],
    "regimes": {"last_level_cache": null, "rule": "r"}, "left_out": [], "predictions": [], "fits": [],
    "overrides": [)" + overrides + "]}";
  return parse_calibration(config::Document::parse(text, "t.json", false));
}

const std::string kDram = R"({"kind": "node", "name": "epyc_zen5_2c_vm", "pointer": "/sockets/0/dram_bandwidth",
  "value": "33GB/s", "source": "t.json: fitted", "parameter": "dram_bandwidth", "scope": "machine", "scope_reason": "DRAM"})";
const std::string kChunkMachine = R"({"kind": "collective_library", "name": "hfreduce", "pointer": "/chunk_overhead",
  "value": "141us", "source": "t.json: fitted", "parameter": "hfreduce_chunk_overhead", "scope": "machine",
  "scope_reason": "threads outnumber cores"})";
const std::string kChunkLibrary = R"({"kind": "collective_library", "name": "hfreduce", "pointer": "/chunk_overhead",
  "value": "20us", "source": "t.json: planted", "parameter": "hfreduce_chunk_overhead", "scope": "library",
  "scope_reason": "the library's own code"})";

double chunk_overhead(const config::Catalog& cat) { return config::load_library_params(cat).hfreduce.chunk_overhead; }
double dram(const config::Catalog& cat, const std::string& node) {
  return config::parse_node(*cat.find("node", node), cat).sockets[0].dram_bandwidth.si();
}

}  // namespace

TEST_CASE("calib: config::node_family: the node and the node models that extend it") {
  const config::Catalog& cat = ffsim::testing::catalog();
  CHECK(node_family(cat, "epyc_zen5_2c_vm") == std::vector<std::string>{"epyc_zen5_2c_vm"});
  // fire_flyer_pcie_nvlink extends fire_flyer_pcie; nothing extends the NVLink variant.
  CHECK(node_family(cat, "fire_flyer_pcie") == std::vector<std::string>{"fire_flyer_pcie", "fire_flyer_pcie_nvlink"});
  CHECK(node_family(cat, "fire_flyer_pcie_nvlink") == std::vector<std::string>{"fire_flyer_pcie_nvlink"});
}

TEST_CASE("calib: config::apply_scoped: machine-scoped values hold only on the measured node model") {
  const config::Catalog published = ffsim::testing::catalog();
  const CalibrationFile c = calibration("epyc_zen5_2c_vm", kDram + "," + kChunkMachine);
  const double chunk0 = chunk_overhead(published), dram0 = dram(published, "epyc_zen5_2c_vm");
  REQUIRE(chunk0 != doctest::Approx(141e-6));

  SUBCASE("a scenario on another node model: nothing applies, and each value says why") {
    config::Catalog cat = published;
    const CalibrationUse u = apply_scoped(cat, c, {"fire_flyer_pcie"}, true);
    CHECK(u.applied() == 0);
    REQUIRE(u.values.size() == 2);
    for (const auto& v : u.values)
      CHECK(v.reason == "machine scope: the scenario's node model fire_flyer_pcie is not epyc_zen5_2c_vm and does not extend it");
    CHECK(chunk_overhead(cat) == chunk0);  // the Fire-Flyer run keeps the published overhead
    CHECK(dram(cat, "epyc_zen5_2c_vm") == dram0);
  }
  SUBCASE("a scenario on the measured node model: everything applies") {
    config::Catalog cat = published;
    const CalibrationUse u = apply_scoped(cat, c, {"epyc_zen5_2c_vm"}, true);
    CHECK(u.applied() == 2);
    CHECK(chunk_overhead(cat) == doctest::Approx(141e-6));
    CHECK(dram(cat, "epyc_zen5_2c_vm") == doctest::Approx(33e9));
  }
  SUBCASE("two scenarios, one on another node: the shared library entry is skipped, the node's own facts apply") {
    config::Catalog cat = published;
    const CalibrationUse u = apply_scoped(cat, c, {"epyc_zen5_2c_vm", "dgx_a100"}, true);
    CHECK(u.applied() == 1);
    CHECK(u.values[0].applied);
    CHECK_FALSE(u.values[1].applied);
    CHECK(u.values[1].reason.find("and this command also runs node model dgx_a100") != std::string::npos);
    CHECK(chunk_overhead(cat) == chunk0);
    CHECK(dram(cat, "epyc_zen5_2c_vm") == doctest::Approx(33e9));
  }
  SUBCASE("no scenario (ffsim models): facts only the node family uses apply, shared entries do not") {
    config::Catalog cat = published;
    const CalibrationUse u = apply_scoped(cat, c, {}, false);
    CHECK(u.values[0].applied);
    CHECK_FALSE(u.values[1].applied);
    CHECK(chunk_overhead(cat) == chunk0);
  }
  SUBCASE("a library-scoped value applies everywhere, with its reason") {
    config::Catalog cat = published;
    const CalibrationUse u = apply_scoped(cat, calibration("epyc_zen5_2c_vm", kChunkLibrary), {"fire_flyer_pcie"}, true);
    CHECK(u.applied() == 1);
    CHECK(u.values[0].reason == "library scope: the library's own code");
    CHECK(chunk_overhead(cat) == doctest::Approx(20e-6));
  }
}

TEST_CASE("calib: config::apply_scoped: a node fact goes to the node models that extend it and inherit the value") {
  config::Catalog cat = ffsim::testing::catalog();
  // fire_flyer_pcie_nvlink inherits pcie_latency (1 us) from fire_flyer_pcie.
  const CalibrationFile c = calibration("fire_flyer_pcie", R"({"kind": "node", "name": "fire_flyer_pcie", "pointer": "/pcie_latency",
    "value": "2.5us", "source": "t.json: fitted", "parameter": "device_copy_latency", "scope": "machine", "scope_reason": "copies"})");
  const CalibrationUse u = apply_scoped(cat, c, {"fire_flyer_pcie_nvlink"}, true);
  CHECK(u.applied() == 1);
  CHECK(u.values[0].reason == "machine scope: the scenario's node model fire_flyer_pcie_nvlink is fire_flyer_pcie or a node model "
                              "extending it (fire_flyer_pcie, fire_flyer_pcie_nvlink)");
  for (const char* n : {"fire_flyer_pcie", "fire_flyer_pcie_nvlink"})
    CHECK(config::parse_node(*cat.find("node", n), cat).pcie_latency.si() == doctest::Approx(2.5e-6));
}

TEST_CASE("calib: a calibration file's scope must be machine or library, with a reason") {
  CHECK_THROWS_WITH_AS(calibration("epyc_zen5_2c_vm", R"({"kind": "node", "name": "epyc_zen5_2c_vm", "pointer": "/pcie_latency",
    "value": "2us", "source": "s", "parameter": "p", "scope": "everywhere", "scope_reason": "r"})"),
                       doctest::Contains("t.json:/overrides/0/scope: expected one of library, machine"), ConfigError);
  CHECK_THROWS_WITH_AS(calibration("epyc_zen5_2c_vm", R"({"kind": "node", "name": "epyc_zen5_2c_vm", "pointer": "/pcie_latency",
    "value": "2us", "source": "s", "parameter": "p", "scope": "library", "scope_reason": ""})"),
                       doctest::Contains("t.json:/overrides/0/scope_reason: expected why the value has scope \"library\""), ConfigError);
}

namespace {

// An all_reduce_perf log of `ranks` ranks on `hosts` hosts from the ring's model, times printed
// with enough digits that the fit sees the model itself.
std::string ring_log(int hosts, int per_host, double bus, double lat, int decimals = 9) {
  const int n = hosts * per_host;
  std::string s = "# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 4(factor) warmup iters: 5 iters: 20\n#\n# Using devices\n";
  char b[256];
  for (int r = 0; r < n; ++r) {
    std::snprintf(b, sizeof b, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] NVIDIA H800\n", r, 1000 + r,
                  ("host" + std::to_string(r / per_host)).c_str(), r % per_host, 7 + r % per_host);
    s += b;
  }
  s += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  for (double size = 8; size <= 1073741824.0; size *= 4) {
    const double t = nccl_ring_time(n, size, bus, lat);
    const double alg = size / t / 1e9, busbw = alg * 2 * (n - 1) / n;
    char tm[64];
    std::snprintf(tm, sizeof tm, "%7.*f", decimals, t * 1e6);
    std::snprintf(b, sizeof b, "%12.0f  %12.0f  %8s  %6s  %6d  %s  %6.2f  %6.2f  %5s  %s  %6.2f  %6.2f  %5s\n", size, size / 2,
                  "bfloat16", "sum", -1, tm, alg, busbw, "N/A", tm, alg, busbw, "N/A");
    s += b;
  }
  s += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.3456 \n#\n";
  return s;
}

}  // namespace

TEST_CASE("calib::fit_nccl_ring: planted bus bandwidth and step latency come back (1e-6 relative)") {
  // Edges: 2 ranks on one host (2(n-1)/n = 1), 8 on one, 3 x 5 = 15 (not a power of two), 2 x 8.
  for (auto [hosts, per] : {std::pair{1, 2}, {1, 8}, {3, 5}, {2, 8}}) {
    CAPTURE(hosts);
    CAPTURE(per);
    const NcclTestsLog log = parse_nccl_tests(ring_log(hosts, per, 171.3e9, 3.7e-6), "t.log");
    CHECK(log.ranks == hosts * per);
    CHECK(log.hosts.size() == static_cast<std::size_t>(hosts));
    CHECK(log.ranks_per_host.front() == per);
    CHECK(log.devices.front() == "NVIDIA H800");
    CHECK(log.rows.size() == 14);  // 8 B = 2^3 to 512 MiB = 2^29 by factors of 4 (the next, 2 GiB, is past 1 GiB)
    CHECK(log.avg_busbw_Bps == doctest::Approx(12.3456e9));
    const NcclRingFit f = fit_nccl_ring(log);
    CHECK(f.points == 28);  // out-of-place and in-place
    CHECK(f.bus_bandwidth == doctest::Approx(171.3e9).epsilon(1e-6));
    CHECK(f.step_latency == doctest::Approx(3.7e-6).epsilon(1e-6));
    CHECK(f.rms < 1e-6);
    CHECK(f.bandwidth_status == "fitted");
    CHECK(f.latency_status == "fitted");
  }
}

TEST_CASE("calib: config::parse_nccl_tests: malformed logs name the line and what was expected") {
  const std::string good = ring_log(2, 4, 100e9, 5e-6, 2);
  CHECK_NOTHROW((void)parse_nccl_tests(good, "t.log"));
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    return s;
  };
  // Line 13 is the table's first row (the header, 2 comments, 8 device lines, the column titles).
  CHECK_THROWS_WITH_AS((void)parse_nccl_tests(with("bfloat16", "complex"), "t.log"),
                       doctest::Contains("t.log:13: expected a data type (bfloat16, double"), ConfigError);
  CHECK_THROWS_WITH_AS((void)parse_nccl_tests(with("     -1  ", "      0  "), "t.log"),
                       doctest::Contains("t.log:13: expected root -1 (an allreduce has no root), got 0"), ConfigError);
  CHECK_THROWS_WITH_AS((void)parse_nccl_tests(with("#  Rank  7", "#  Rank  9"), "t.log"),
                       doctest::Contains("t.log:11: expected the device line of rank 7"), ConfigError);
  CHECK_THROWS_WITH_AS((void)parse_nccl_tests(with("# nThread 1 nGpus 1", "# nThread 1 nGPUs 1"), "t.log"),
                       doctest::Contains("t.log:1: expected \"# nThread N nGpus G ...\""), ConfigError);
  CHECK_THROWS_WITH_AS((void)parse_nccl_tests("# nThread 1 nGpus 1\n", "t.log"),
                       "t.log: expected at least 2 sizes in the table (a latency and a bandwidth need two), got 0", ConfigError);
  CHECK_FALSE(is_nccl_tests_log("{\"schema\": \"ffsim.hfreduce-bench/1\"}"));
  CHECK(is_nccl_tests_log(good));
}
