// Tests of did-you-mean suggestions and the registry.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "core/registry.hpp"
#include "core/spell.hpp"

using namespace ffsim;

TEST_CASE("core::spell: edit distance") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);  // k->s, e->i, +g
  CHECK(edit_distance("fattree", "fat_tree") == 1);
}

TEST_CASE("core::spell: suggestions") {
  const std::vector<std::string> c{"fat_tree", "multi_zone", "three_layer"};
  CHECK(suggest("fattree", c) == std::optional<std::string>("fat_tree"));
  CHECK(suggest("FAT_TREE", c) == std::optional<std::string>("fat_tree"));  // case-insensitive match wins
  CHECK_FALSE(suggest("torus", c).has_value());                              // too far from everything
  CHECK(did_you_mean("multizone", c) == " (did you mean \"multi_zone\"?)");
  CHECK(did_you_mean("zzz", c).empty());
  CHECK(join({"a", "b", "c"}) == "a, b, c");
  CHECK(join({}) == "");
}

TEST_CASE("core::Registry: lookup, listing and errors") {
  Registry<int> r("topology");
  r.add("two_layer", "two-layer fat-tree", 2);
  r.add("fat_tree", "k-ary fat-tree", 1);
  CHECK(r.get("fat_tree").factory == 1);
  CHECK(r.names() == std::vector<std::string>{"fat_tree", "two_layer"});  // sorted
  CHECK(r.entries().front().name == "two_layer");                         // registration order
  CHECK(r.find("nope") == nullptr);
  CHECK_THROWS_WITH_AS((void)r.get("fattree"),
                       "unknown topology \"fattree\" (did you mean \"fat_tree\"?); valid: fat_tree, two_layer",
                       ValueError);
  CHECK_THROWS_WITH_AS((void)r.get("x"), "unknown topology \"x\"; valid: fat_tree, two_layer", ValueError);
  CHECK_THROWS_AS(r.add("fat_tree", "again", 3), InternalError);
}

TEST_CASE("core::FFSIM_ASSERT: stays on and names the condition") {
  CHECK_NOTHROW(FFSIM_ASSERT(1 + 1 == 2, "math"));
  CHECK_THROWS_AS(FFSIM_ASSERT(1 + 1 == 3, "math"), InternalError);
}
