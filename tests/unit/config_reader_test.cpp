// Tests of the JSON reader: pointers, unknown keys, types, units, facts and sources.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "config/reader.hpp"
#include "core/error.hpp"

using namespace ffsim;
using ffsim::config::Document;

namespace {
// The message of the ConfigError that `f` throws, as "pointer|message".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.pointer() + "|" + e.message();
  }
  return "no error";
}
}  // namespace

TEST_CASE("config::Reader: typed access with JSON pointers") {
  const Document d = Document::parse(R"({"a": {"b": [1, "x", 2.5, true]}, "bw": "200Gbps", "n": 0})", "t.json", false);
  const auto r = d.root();
  const auto arr = r.child("a").child("b");
  CHECK(arr.pointer() == "/a/b");
  CHECK(arr.size() == 4);
  CHECK(arr.at(0).as_integer() == 1);
  CHECK(arr.at(1).as_string() == "x");
  CHECK(arr.at(2).as_number() == 2.5);
  CHECK(arr.at(3).as_bool());
  CHECK(r.quantity<BytesPerSecond>("bw").si() == 25e9);
  CHECK(r.integer("n", 0, 10) == 0);
  CHECK(error_of([&] { (void)arr.at(1).as_integer(); }) == "/a/b/1|expected an integer, got string \"x\"");
  CHECK(error_of([&] { (void)arr.at(2).as_integer(0, 5); }) == "/a/b/2|expected an integer in [0, 5], got number 2.5");
  CHECK(error_of([&] { (void)arr.at(9); }) == "/a/b|index 9 out of range (array has 4)");
  CHECK(error_of([&] { (void)r.child("zz", "a bandwidth"); }) == "|missing required key \"zz\" (expected a bandwidth)");
  CHECK(error_of([&] { (void)r.integer("n", 1); }) == "/n|expected a positive integer, got number 0");
}

TEST_CASE("config::Reader: unknown keys get a did-you-mean") {
  const Document d = Document::parse(R"({"tensor_paralel": 2, "pipeline": 4})", "s.json", false);
  const auto r = d.root();
  (void)r.integer_or("tensor_parallel", 1);
  (void)r.integer("pipeline");
  CHECK(error_of([&] { r.finish(); }) ==
        "|unknown key \"tensor_paralel\" (did you mean \"tensor_parallel\"?); valid keys: pipeline, tensor_parallel");
}

TEST_CASE("config::Reader: quantities reject bare numbers, negatives and zero") {
  const Document d = Document::parse(R"({"a": 400, "b": "-5GB/s", "c": "0GB/s", "d": 0, "e": "5GB"})", "q.json", false);
  const auto r = d.root();
  CHECK(error_of([&] { (void)r.quantity<BytesPerSecond>("a"); }) ==
        "/a|expected a bandwidth with unit (e.g. \"200Gbps\"), got number 400");
  CHECK(error_of([&] { (void)r.quantity<BytesPerSecond>("b"); }) == "/b|expected a positive bandwidth, got string \"-5GB/s\"");
  CHECK(error_of([&] { (void)r.quantity<BytesPerSecond>("c"); }) == "/c|expected a positive bandwidth, got string \"0GB/s\"");
  CHECK(r.quantity<BytesPerSecond>("c", /*allow_zero=*/true).si() == 0.0);
  CHECK(r.quantity<BytesPerSecond>("d", true).si() == 0.0);
  CHECK(error_of([&] { (void)r.quantity<BytesPerSecond>("e"); }) ==
        "/e|expected a bandwidth with unit (e.g. \"200Gbps\"), got \"5GB\", which is a size");
}

TEST_CASE("config::Reader: facts carry sources") {
  const Document models = Document::parse(
      R"({"bw": {"value": "25GB/s", "source": "datasheet"}, "bare": "1GB/s", "nosrc": {"value": "1GB/s"},
          "empty": {"value": "1GB/s", "source": ""}, "extra": {"value": "1GB/s", "source": "x", "sorce": 1}})",
      "m.json", true);
  const auto r = models.root();
  CHECK(r.fact_quantity<BytesPerSecond>("bw").si() == 25e9);
  CHECK(r.source_of("bw") == std::optional<std::string>("datasheet"));
  REQUIRE(models.sources().size() == 1);
  CHECK(models.sources()[0].pointer == "/bw");
  CHECK(error_of([&] { (void)r.fact("bare"); }) ==
        "/bare|expected a fact {\"value\": ..., \"source\": \"...\"}, got string \"1GB/s\"");
  CHECK(error_of([&] { (void)r.fact("nosrc"); }) ==
        "/nosrc|missing required key \"source\" (every fact in models/ names where it comes from)");
  CHECK(error_of([&] { (void)r.fact("empty"); }) ==
        "/empty/source|expected a non-empty source (paper section, datasheet, measurement file)");
  CHECK(error_of([&] { (void)r.fact("extra"); }) ==
        "/extra|unknown key \"sorce\" (did you mean \"source\"?); valid keys: note, source, value");
  // Scenarios accept bare values.
  const Document scen = Document::parse(R"({"bw": "1GB/s"})", "s.json", false);
  CHECK(scen.root().fact_quantity<BytesPerSecond>("bw").si() == 1e9);
}

TEST_CASE("config::Document: syntax errors, empty files, duplicate keys, pointer escapes") {
  CHECK(error_of([] { (void)Document::parse("", "e.json", false); }) == "|empty file: expected a JSON object");
  CHECK(error_of([] { (void)Document::parse(" \n ", "e.json", false); }) == "|empty file: expected a JSON object");
  CHECK(error_of([] { (void)Document::parse(R"({"a": [1, {"b": 1, "b": 2}]})", "d.json", false); }) ==
        "/a/1|duplicate key \"b\" (JSON objects must not repeat a key)");
  CHECK(error_of([] { (void)Document::parse(R"({"a": 1,})", "s.json", false); }).rfind("|invalid JSON: parse error at line 1", 0) == 0);
  const Document d = Document::parse(R"({"a/b": {"c~d": 1}})", "p.json", false);
  CHECK(d.root().child("a/b").child("c~d").pointer() == "/a~1b/c~0d");
  // Merge patch: keys of the child win, null deletes.
  const Document base = Document::parse(R"({"x": 1, "y": {"z": 2, "w": 3}})", "b.json", false);
  const Document over = Document::parse(R"({"y": {"z": 5, "w": null}})", "o.json", false);
  const auto m = over.merged_over(base).root();
  CHECK(m.integer("x") == 1);
  CHECK(m.child("y").integer("z") == 5);
  CHECK_FALSE(m.child("y").has("w"));
}

TEST_CASE("config::Document: a number no double holds and pathological nesting are errors at their pointer") {
  // nlohmann throws out_of_range (not parse_error) for these: it was exit 1, "a bug in ffsim".
  CHECK(error_of([] { (void)Document::parse(R"({"a": [1, 1e999]})", "n.json", false); }) ==
        "/a/1|number out of range: expected a finite number (at most about 1.8e308), got 1e999");
  CHECK(error_of([] { (void)Document::parse(R"({"b": {"c": -1e400}})", "n.json", false); }) ==
        "/b/c|number out of range: expected a finite number (at most about 1.8e308), got -1e400");
  // 64 levels parse; 100,000 took minutes and gigabytes in the pointers kept for messages.
  (void)Document::parse(std::string(64, '[') + std::string(64, ']'), "d.json", false);
  CHECK(error_of([] { (void)Document::parse(std::string(65, '[') + std::string(65, ']'), "d.json", false); })
            .find("|nested too deep: expected at most 64 levels") != std::string::npos);
  CHECK(error_of([] { (void)Document::parse(std::string(100000, '[') + std::string(100000, ']'), "d.json", false); })
            .find("|nested too deep") != std::string::npos);
}

TEST_CASE("Document::with_value: a bare value at a pointer the document has, a fact keeps its source") {
  const Document d = Document::parse(
      R"({"cluster": {"nodes": 4, "node": "n"}, "lanes": [{"w": 1}, {"w": 2}], "f": {"value": 3, "source": "Sec. 1"}})",
      "s.json", false);
  const Document e = d.with_value("/cluster/nodes", "16");
  CHECK(e.root().child("cluster").integer("nodes") == 16);
  CHECK(d.root().child("cluster").integer("nodes") == 4);  // the original is untouched
  CHECK(d.with_value("/lanes/1/w", "7").root().child("lanes").at(1).integer("w") == 7);
  CHECK(d.with_value("/lanes/0/w", "7").root().child("lanes").at(1).integer("w") == 2);
  CHECK(d.with_value("/cluster/node", "\"m\"").root().child("cluster").string("node") == "m");
  const Document f = d.with_value("/f", "5");
  CHECK(f.root().child("f").integer("value") == 5);
  CHECK(f.root().child("f").string("source") == "Sec. 1");
  // What is missing, named with what is there.
  CHECK_THROWS_WITH_AS(d.with_value("/cluster/nodez", "1"),
                       "no member \"nodez\" at /cluster (its keys: node, nodes) (did you mean \"node\"?)", ValueError);
  CHECK_THROWS_WITH_AS(d.with_value("/lanes/2/w", "1"), "no element \"2\" in the array at /lanes (indices 0 to 2 - 1)",
                       ValueError);
  CHECK_THROWS_WITH_AS(d.with_value("/lanes/01/w", "1"),
                       "no element \"01\" in the array at /lanes (indices 0 to 2 - 1)", ValueError);
  CHECK_THROWS_WITH_AS(d.with_value("/cluster/nodes/x", "1"),
                       "the value at /cluster/nodes is a number, with no member \"x\"", ValueError);
  CHECK_THROWS_AS(d.with_value("cluster", "1"), ValueError);
  CHECK_THROWS_AS(d.with_value("/cluster/nodes", "{"), ValueError);
}
