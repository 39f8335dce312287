// A name -> (description, factory) registry whose failed lookups list the valid names
// and suggest the nearest (SimGrid's ModuleGroup).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim {

template <class Factory>
class Registry {
public:
  struct Entry {
    std::string name;         ///< snake_case name used in JSON and on the command line
    std::string description;  ///< one line for `--help` and listings
    Factory factory;
  };

  /// `what` names the kind of thing registered, for messages: "topology", "collective algorithm".
  explicit Registry(std::string what) : what_(std::move(what)) {}

  /// Registers an entry; a duplicate name is a programming error.
  void add(std::string name, std::string description, Factory factory) {
    FFSIM_ASSERT(find(name) == nullptr, "duplicate " + what_ + " \"" + name + "\" in registry");
    entries_.push_back(Entry{std::move(name), std::move(description), std::move(factory)});
  }

  [[nodiscard]] const Entry* find(std::string_view name) const {
    for (const auto& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }

  /// The entry called `name`, or a ValueError: unknown <what> "x" (did you mean "y"?); valid: a, b
  [[nodiscard]] const Entry& get(std::string_view name) const {
    if (const Entry* e = find(name)) return *e;
    throw ValueError(unknown_message(name));
  }

  [[nodiscard]] std::string unknown_message(std::string_view name) const {
    const auto valid = names();
    return "unknown " + what_ + " \"" + std::string(name) + "\"" + did_you_mean(name, valid) + "; valid: " + join(valid);
  }

  /// Registered names, sorted.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> r;
    for (const auto& e : entries_) r.push_back(e.name);
    std::sort(r.begin(), r.end());
    return r;
  }

  /// Entries in registration order.
  [[nodiscard]] const std::vector<Entry>& entries() const { return entries_; }
  [[nodiscard]] const std::string& what() const { return what_; }

private:
  std::string what_;
  std::vector<Entry> entries_;
};

}  // namespace ffsim
