// Tests of models defined in place (inline, "extends"), plausibility ranges, ambiguous units and
// the negotiation of a host link's rate.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/reader.hpp"
#include "core/error.hpp"
#include "core/unit_parse.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"
#include "topo/topology.hpp"

using namespace ffsim;

namespace {

// A scenario of 8 Fire-Flyer PCIe nodes on a two-layer fat-tree; `node` and `sw` are JSON values.
plan::ScenarioSpec scenario(const std::string& node, const std::string& sw = "\"qm8700\"") {
  const std::string text = R"({"name": "t", "cluster": {"node": )" + node + R"(, "nodes": 8},
    "fabric": {"topology": "two_layer", "switch": )" + sw + "}}";
  return plan::parse_scenario(config::Document::parse(text, "t.json", false), testing::catalog());
}

// The ConfigError `f` throws (pointer and message), or a failed check.
template <class F>
std::pair<std::string, std::string> error_of(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return {e.pointer(), e.message()};
  }
  FAIL("no ConfigError");
  return {};
}

// Captures the notes a scope reports.
struct Notes {
  std::vector<std::string> lines;
  config::NoteSink old;
  Notes() : old(config::set_note_sink([this](const std::string& l) { lines.push_back(l); })) {}
  ~Notes() { config::set_note_sink(old); }
};

const std::string kNdrNode = R"({"extends": "fire_flyer_pcie", "nics": [{"name": "nic0", "port": "cpu1.rp3",
    "model": {"extends": "cx6_hdr", "port_bandwidth": "400Gbps", "effective_bandwidth": "48GB/s"}}]})";

}  // namespace

TEST_CASE("config::Catalog::model_ref: a name, an inline model extending an entry, a whole inline model") {
  SUBCASE("a name is the catalog's entry") {
    const auto s = scenario(R"("fire_flyer_pcie")");
    CHECK(s.cluster.node.name == "fire_flyer_pcie");
    CHECK(s.cluster.node.nics.front().nic.name == "cx6_hdr");
  }
  SUBCASE("extends: the entry with the keys given changed, the rest inherited") {
    // The inline GPU doubles the A100's memory; its bandwidth, compute and name are the A100's. With
    // one GPU left the node has no GPU<->GPU path: null deletes the inherited fact (RFC 7386).
    const std::string node = R"({"extends": "fire_flyer_pcie", "gpu_gpu_p2p_bandwidth": null, "gpus": [
        {"name": "gpu0", "port": "cpu0.rp0", "model": {"extends": "a100_pcie_40gb", "memory": "80GB"}}]})";
    const auto s = scenario(node);
    REQUIRE(s.cluster.node.gpus.size() == 1);  // merge patch: the array is replaced whole
    const hw::GpuSpec& g = s.cluster.node.gpus.front().gpu;
    CHECK(g.memory.si() == 80e9);
    CHECK(g.name == "a100_pcie_40gb");
    CHECK(g.memory_bandwidth.si() == testing::cluster(1).cluster.node.gpus.front().gpu.memory_bandwidth.si());
    CHECK(g.description.find("(changed inline in t.json: memory)") != std::string::npos);
    CHECK(s.cluster.node.name == "fire_flyer_pcie");
  }
  SUBCASE("a whole inline switch with a name, no sources needed in a scenario") {
    const auto s = scenario(R"("fire_flyer_pcie")", R"({"name": "my_switch", "ports": 64, "port_bandwidth": "200Gbps",
        "latency": "130ns", "power": "300W"})");
    CHECK(s.fabric.sw.name == "my_switch");
    CHECK(s.fabric.sw.ports == 64);
    CHECK(s.fabric.sw.description == "(defined inline in t.json)");
  }
}

TEST_CASE("config::Catalog::model_ref: errors point into the scenario") {
  SUBCASE("a misspelt key of an inline NIC two levels down") {
    const auto [p, m] = error_of([] {
      (void)scenario(R"({"extends": "fire_flyer_pcie", "nics": [{"name": "nic0", "port": "cpu1.rp3",
          "model": {"extends": "cx6_hdr", "port_bandwith": "400Gbps"}}]})");
    });
    CHECK(p == "/cluster/node/nics/0/model");
    CHECK(m.rfind("unknown key \"port_bandwith\" (did you mean \"port_bandwidth\"?)", 0) == 0);
  }
  SUBCASE("an unknown entry to extend") {
    const auto [p, m] = error_of([] { (void)scenario(R"("fire_flyer_pcie")", R"({"extends": "qm8800"})"); });
    CHECK(p == "/fabric/switch/extends");
    CHECK(m == "unknown switch \"qm8800\" to extend (did you mean \"qm8700\"?); valid: qm8700, qm9700, switch_128x400g");
  }
  SUBCASE("an inherited value that no longer fits says where it came from") {
    // A 100 Gb/s port (12.5 GB/s) under cx6_hdr's inherited 24 GB/s effective rate.
    const auto [p, m] = error_of([] {
      (void)scenario(R"({"extends": "fire_flyer_pcie", "nics": [{"name": "nic0", "port": "cpu1.rp3",
          "model": {"extends": "cx6_hdr", "port_bandwidth": "100Gbps"}}]})");
    });
    CHECK(p == "/cluster/node/nics/0/model/effective_bandwidth");
    // (the catalog's folder is an absolute path in the unit tests)
    CHECK(m.rfind("effective bandwidth exceeds the port's line rate (a value inherited from cx6_hdr (", 0) == 0);
    const std::string tail = "/models/nics/cx6_hdr.json))";
    REQUIRE(m.size() > tail.size());
    CHECK(m.substr(m.size() - tail.size()) == tail);
  }
  SUBCASE("another kind, neither extends nor name, not an object") {
    CHECK(error_of([] { (void)scenario(R"({"kind": "gpu", "extends": "fire_flyer_pcie"})"); }).first == "/cluster/node/kind");
    CHECK(error_of([] { (void)scenario(R"("fire_flyer_pcie")", R"({"ports": 40})"); }).second ==
          "an inline switch model needs \"extends\" (the catalog entry it changes) or a \"name\" (a whole definition)");
    CHECK(error_of([] { (void)scenario("42"); }).second ==
          "expected the name of a node model or an inline node object ({\"extends\": \"<name>\", ...}), got number 42");
    CHECK(error_of([] { (void)scenario(R"("")"); }).second.rfind("expected the name of a node model (or an inline model object), got an empty string", 0) == 0);
  }
}

TEST_CASE("topo::negotiate_link_rates: a NIC faster than the switch's ports trains at their rate") {
  Notes notes;
  const auto s = scenario(kNdrNode);
  // 400 Gb/s NIC, 200 Gb/s qm8700 ports: the link trains at 200 Gb/s = 25 GB/s, and the payload rate
  // scales by 200/400: 48 GB/s x 0.5 = 24 GB/s (cx6_hdr's own 24 GB/s at HDR, as it should be).
  const hw::NicSpec& n = s.cluster.node.nics.front().nic;
  CHECK(n.port_bandwidth.si() == doctest::Approx(25e9).epsilon(1e-12));
  CHECK(n.effective_bandwidth.si() == doctest::Approx(24e9).epsilon(1e-12));
  // The fabric's host links are built at the negotiated rate too (demand_of reads the NIC).
  CHECK(topo::demand_of(s.cluster).host_bandwidth.si() == doctest::Approx(25e9).epsilon(1e-12));
  REQUIRE(notes.lines.size() == 1);
  CHECK(notes.lines[0] ==
        "t.json:/cluster: note: NIC nic0 of node \"fire_flyer_pcie\" (cx6_hdr, 400 Gb/s) is faster than the 200 Gb/s ports of "
        "switch \"qm8700\": its links train at the common rate, 200 Gb/s, and carry 24.0 GB/s of payload instead of 48.0 GB/s");
  SUBCASE("a NIC at or below the switch's rate is left as it is, without a note") {
    notes.lines.clear();
    const auto same = scenario(R"("fire_flyer_pcie")");
    CHECK(same.cluster.node.nics.front().nic.port_bandwidth.si() == 25e9);
    CHECK(notes.lines.empty());
    // The same 400 Gb/s NIC on a 400 Gb/s qm9700 keeps its 50 GB/s line rate and 48 GB/s payload.
    const auto ndr = scenario(kNdrNode, "\"qm9700\"");
    CHECK(ndr.cluster.node.nics.front().nic.effective_bandwidth.si() == doctest::Approx(48e9).epsilon(1e-12));
    CHECK(notes.lines.empty());
  }
}

TEST_CASE("config::Reader: implausible quantities name the range") {
  const auto doc = config::Document::parse(
      R"({"bw": "1e-30GB/s", "mem": "1B", "ok": "400Gbps", "lat": "130s", "zero": 0, "big": "200TB/s"})", "q.json", false);
  const config::Reader r = doc.root();
  CHECK(r.quantity<BytesPerSecond>("ok").si() == 50e9);
  // 1e-30 GB/s is 1e-21 B/s: parsed (within 1e-30..1e30), below 1 MB/s.
  CHECK_THROWS_WITH_AS((void)r.quantity<BytesPerSecond>("bw"),
                       "q.json:/bw: implausible bandwidth \"1e-30GB/s\" (1e-21 B/s): expected 1 MB/s to 100 TB/s; any link, "
                       "bus or memory lies between 1 Gb/s Ethernet (125 MB/s) and HBM (4.8 TB/s). Check the number and its unit",
                       ConfigError);
  CHECK_THROWS_WITH_AS((void)r.quantity<BytesPerSecond>("big"),
                       "q.json:/big: implausible bandwidth \"200TB/s\" (2e+14 B/s): expected 1 MB/s to 100 TB/s; any link, "
                       "bus or memory lies between 1 Gb/s Ethernet (125 MB/s) and HBM (4.8 TB/s). Check the number and its unit",
                       ConfigError);
  // A generic size of 1 B is plausible (a message); as a memory it is not.
  CHECK(r.quantity<Bytes>("mem").si() == 1.0);
  CHECK_THROWS_AS((void)r.quantity<Bytes>("mem", false, &plausible::kMemory), ConfigError);
  CHECK_THROWS_AS((void)r.quantity<Seconds>("lat"), ConfigError);
  // 0 is not checked against the range where it is allowed (a software transport's power).
  CHECK(r.quantity<BytesPerSecond>("zero", true).si() == 0.0);
  // The edges are inside.
  const auto edges = config::Document::parse(R"({"lo": "1MB/s", "hi": "100TB/s", "m": "1MiB"})", "e.json", false);
  CHECK(edges.root().quantity<BytesPerSecond>("lo").si() == 1e6);
  CHECK(edges.root().quantity<BytesPerSecond>("hi").si() == 1e14);
  CHECK(edges.root().quantity<Bytes>("m", false, &plausible::kMemory).si() == 1048576.0);
}

TEST_CASE("core::unit_parse: ambiguous spellings offer both readings") {
  // "400GBps" read as bytes was 400 GB/s, 8x the 400 Gb/s NIC it was meant for.
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("400GBps"),
                       "ambiguous bandwidth unit \"GBps\" in \"400GBps\": did you mean \"400GB/s\" (bytes per second) or "
                       "\"400Gbps\" (bits per second)? (\"B/s\" is bytes, \"bps\" and \"b/s\" bits)",
                       ValueError);
  // No bits spelling with a binary prefix: one reading.
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("9GiBps"),
                       "ambiguous bandwidth unit \"GiBps\" in \"9GiBps\": did you mean \"9GiB/s\" (bytes per second)? "
                       "(\"B/s\" is bytes, \"bps\" and \"b/s\" bits)",
                       ValueError);
  CHECK_THROWS_WITH_AS((void)parse_size("40Gb"),
                       "ambiguous size unit \"Gb\" in \"40Gb\": did you mean \"40GB\" or \"40GiB\"? (\"b\" is a bit; sizes "
                       "are written in bytes: \"B\", \"GB\" = 1e9 B, \"GiB\" = 2^30 B)",
                       ValueError);
  CHECK_THROWS_WITH_AS((void)parse_size("8b"),
                       "ambiguous size unit \"b\" in \"8b\": did you mean \"8B\"? (\"b\" is a bit; sizes are written in "
                       "bytes: \"B\", \"GB\" = 1e9 B, \"GiB\" = 2^30 B)",
                       ValueError);
  // Case slips name every unit with the same letters; a missing "/s" is suggested.
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("25gb/s"),
                       "unknown bandwidth unit \"gb/s\" in \"25gb/s\" (did you mean \"GB/s\" or \"Gb/s\"? units are "
                       "case-sensitive); valid: B/s, kB/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, bps, kbps, "
                       "Kbps, Mbps, Gbps, Tbps, b/s, kb/s, Mb/s, Gb/s, Tb/s",
                       ValueError);
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("400Gb"),
                       "unknown bandwidth unit \"Gb\" in \"400Gb\" (did you mean \"Gb/s\" or \"Gbps\"?); valid: B/s, kB/s, "
                       "KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, bps, kbps, Kbps, Mbps, Gbps, Tbps, b/s, kb/s, "
                       "Mb/s, Gb/s, Tb/s",
                       ValueError);
}

TEST_CASE("config::Reader::name: empty and blank names are errors") {
  const auto doc = config::Document::parse(R"({"a": "", "b": "  ", "c": "ok"})", "n.json", false);
  CHECK(doc.root().name("c") == "ok");
  CHECK_THROWS_WITH_AS((void)doc.root().name("a"),
                       "n.json:/a: expected a non-empty name, got string \"\" (names label results, tables and errors)",
                       ConfigError);
  CHECK_THROWS_AS((void)doc.root().name("b"), ConfigError);
}
