// A doctest main that fails when a --test-case filter matches no test case.
// SPDX-License-Identifier: Apache-2.0
//
// ctest runs each test case through doctest_discover_tests as `--test-case=<name>`. A name that
// CMake splits (a ';' in it is a list separator) becomes filters that match nothing, and doctest
// exits 0 for an empty run: until 2026-12-01 five test cases with a ';' in their names never ran in
// CI while ctest reported ten passes. With this main an empty filtered run is a failure.
// Include it from exactly one source file of a test binary.
#pragma once
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

namespace ffsim_test {

inline unsigned& cases_run() {
  static unsigned n = 0;
  return n;
}

struct RunCounter : doctest::IReporter {
  explicit RunCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& s) override { cases_run() = s.numTestCasesPassingFilters; }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace ffsim_test

REGISTER_LISTENER("ffsim_run_counter", 1, ffsim_test::RunCounter);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;  // --list-test-cases, --help, ...
  bool filtered = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a(argv[i]);
    filtered = filtered || a.starts_with("--test-case=") || a.starts_with("-tc=");
  }
  if (rc == 0 && filtered && ffsim_test::cases_run() == 0) {
    std::fprintf(stderr,
                 "no test case matches the --test-case filter: a name that CMake split (a ';' in a test "
                 "case's name) or a filter that names no test. Rename the test case without ';'.\n");
    return 1;
  }
  return rc;
}
