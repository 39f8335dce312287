// Hardware specifications: helpers on the node graph.
// SPDX-License-Identifier: Apache-2.0
#include "hw/specs.hpp"

#include "core/error.hpp"

namespace ffsim::hw {

const PciePortSpec* NodeSpec::port(const std::string& n) const {
  for (const auto& p : ports)
    if (p.name == n) return &p;
  return nullptr;
}

const SocketSpec* NodeSpec::socket(const std::string& n) const {
  for (const auto& s : sockets)
    if (s.name == n) return &s;
  return nullptr;
}

const PciePortSpec& NodeSpec::root_port_of(const std::string& port_name) const {
  const PciePortSpec* p = port(port_name);
  FFSIM_ASSERT(p != nullptr, "unknown port " + port_name);
  for (std::size_t guard = 0; p->kind != "root_port"; ++guard) {
    FFSIM_ASSERT(guard < ports.size(), "port chain too deep at " + port_name);
    p = port(p->parent);
    FFSIM_ASSERT(p != nullptr, "dangling port parent below " + port_name);
  }
  return *p;
}

const SocketSpec& NodeSpec::socket_of_port(const std::string& port_name) const {
  const SocketSpec* s = socket(root_port_of(port_name).parent);
  FFSIM_ASSERT(s != nullptr, "root port without socket: " + port_name);
  return *s;
}

int NodeSpec::compute_nics() const {
  int n = 0;
  for (const auto& x : nics)
    if (x.role != "storage") ++n;
  return n;
}

}  // namespace ffsim::hw
