// The doctest main of ffsim_unit_tests (an empty filtered run fails: see the header).
// SPDX-License-Identifier: Apache-2.0
#include "doctest_guarded_main.hpp"
