// JSON -> collective library parameters: models/libraries/*.json.
// SPDX-License-Identifier: Apache-2.0
#include "config/coll_reader.hpp"

#include "core/error.hpp"
#include "core/format.hpp"

namespace ffsim::config {

namespace {

void allow_entry(const Reader& r) { r.allow({"kind", "name", "description", "extends"}); }

// tuning.cc's tree correction factors of one protocol: an array of factors, index log2(bytes / 64).
std::vector<double> parse_tree_correction(const Reader& r) {
  const Reader f = r.fact("tree_correction");
  std::vector<double> out;
  for (const Reader& e : f.elements("tree correction factors")) {
    if (!e.is_number()) e.fail("expected a factor (a number in (0, 1]); got " + e.describe());
    const double x = e.as_number();
    if (!(x > 0 && x <= 1)) e.fail("expected a factor in (0, 1]; got " + fmt_g(x));
    out.push_back(x);
  }
  if (out.empty() || out.size() > 40)
    f.fail("expected 1 to 40 factors (one per power of two from 64 B on); got " + std::to_string(out.size()));
  return out;
}

// One protocol's base and per-hop latencies (tuning.cc baseLat and hwLat) at `r`.
void parse_latencies(const Reader& r, coll::NcclProtocolLatencies& l) {
  l.ring_base_latency = r.fact_quantity<Seconds>("ring_base_latency", true).si();
  l.tree_base_latency = r.fact_quantity<Seconds>("tree_base_latency", true).si();
  const auto ring = r.child("ring_hop_latency", "latencies by hop type: nvlink, pci, net");
  l.ring_hop_latency_nvlink = ring.fact_quantity<Seconds>("nvlink", true).si();
  l.ring_hop_latency_pci = ring.fact_quantity<Seconds>("pci", true).si();
  l.ring_hop_latency_net = ring.fact_quantity<Seconds>("net", true).si();
  ring.finish();
  const auto tree = r.child("tree_hop_latency", "latencies by hop type: nvlink, pci, net");
  l.tree_hop_latency_nvlink = tree.fact_quantity<Seconds>("nvlink", true).si();
  l.tree_hop_latency_pci = tree.fact_quantity<Seconds>("pci", true).si();
  l.tree_hop_latency_net = tree.fact_quantity<Seconds>("net", true).si();
  tree.finish();
}

coll::NcclParams parse_nccl(const Reader& r) {
  coll::NcclParams n;
  allow_entry(r);
  // The Simple protocol's latencies sit at the top level (the simulated schedules use them).
  parse_latencies(r, n.simple);
  n.channels = static_cast<int>(r.fact_integer("channels", 1, 64));
  n.max_bus_bw = r.fact_quantity<BytesPerSecond>("max_bus_bw").si();
  n.step_size = r.fact_quantity<Bytes>("step_size").si();
  {
    const Reader chunk = r.fact("tree_chunk");
    if (chunk.is_string() && chunk.as_string() == "nccl") {
      n.tree_chunk_bytes = 0;  // NCCL's own rule (coll::nccl_tree_chunk)
    } else {
      try {
        n.tree_chunk_bytes = chunk.as_quantity_si(Dimension::Size);
      } catch (const ConfigError&) {
        n.tree_chunk_bytes = -1;
      }
      if (!(n.tree_chunk_bytes > 0))
        chunk.fail("expected a positive size such as \"4MiB\", or \"nccl\" for NCCL's own chunk rule; got " +
                   (chunk.is_string()   ? "\"" + chunk.as_string() + "\""
                    : chunk.is_number() ? "the bare number " + fmt_g(chunk.as_number()) + " (a size needs a unit)"
                                        : std::string("another JSON type")));
    }
  }
  n.pci_speed = r.fact_quantity<BytesPerSecond>("pci_speed").si();
  n.net_speed = r.fact_quantity<BytesPerSecond>("net_speed").si();
  n.tree_bw_factor = r.fact_number("tree_bw_factor", 0.01, 1.0);
  {
    const auto plateau = r.child("ring_plateau", "the ring's plateau: latency_factor and min_bytes_per_rank");
    n.ring_plateau_factor = plateau.fact_number("latency_factor", 1.0, 100.0);
    n.ring_plateau_bytes_per_rank = plateau.fact_quantity<Bytes>("min_bytes_per_rank", true).si();
    plateau.finish();
  }
  n.numa_restricted = r.fact("numa_restricted").as_bool();
  n.simple.tree_correction = parse_tree_correction(r);
  {
    const auto ll = r.child("ll", "the LL protocol's latencies, tree correction factors and bandwidth factors");
    parse_latencies(ll, n.ll);
    n.ll.tree_correction = parse_tree_correction(ll);
    n.ll_ring_bw_factor = ll.fact_number("ring_bw_factor", 0.01, 1.0);
    n.ll_tree_bw_divisor = ll.fact_number("tree_bw_divisor", 1.0, 100.0);
    const auto cap =
        ll.child("max_bus_bw", "the ring LL bus bandwidth cap by node count: one_node, two_nodes, more_nodes");
    n.ll_max_bus_bw_one_node = cap.fact_quantity<BytesPerSecond>("one_node").si();
    n.ll_max_bus_bw_two_nodes = cap.fact_quantity<BytesPerSecond>("two_nodes").si();
    n.ll_max_bus_bw_more_nodes = cap.fact_quantity<BytesPerSecond>("more_nodes").si();
    cap.finish();
    n.ll.step_size = ll.fact_quantity<Bytes>("step_size").si();
    n.ll.wire_factor = ll.fact_number("wire_factor", 1.0, 16.0);
    ll.finish();
  }
  {
    const auto ll128 =
        r.child("ll128", "the LL128 protocol's latencies, tree correction factors and bandwidth factors");
    parse_latencies(ll128, n.ll128);
    n.ll128.tree_correction = parse_tree_correction(ll128);
    n.ll128_bw_factor = ll128.fact_number("bw_factor", 0.01, 1.0);
    n.ll128_bw_factor_one_gpu_per_node = ll128.fact_number("bw_factor_one_gpu_per_node", 0.01, 1.0);
    n.ll128_max_bw_per_channel = ll128.fact_quantity<BytesPerSecond>("max_bw_per_channel").si();
    n.ll128.step_size = ll128.fact_quantity<Bytes>("step_size").si();
    n.ll128.wire_factor = ll128.fact_number("wire_factor", 1.0, 16.0);
    ll128.finish();
  }
  r.finish();
  return n;
}

coll::HfreduceParams parse_hfreduce(const Reader& r) {
  coll::HfreduceParams h;
  allow_entry(r);
  h.chunk_bytes = r.fact_quantity<Bytes>("chunk").si();
  h.tree_slice_bytes = r.fact_quantity<Bytes>("tree_slice").si();
  h.staging_buffers = static_cast<int>(r.fact_integer("staging_buffers", 1, 1024));
  h.chunk_overhead = r.fact_quantity<Seconds>("chunk_overhead", true).si();
  const Reader mode = r.fact("h2d");
  h.h2d = mode.as_string();
  if (h.h2d != "gdrcopy" && h.h2d != "memcpy") mode.fail("expected \"gdrcopy\" or \"memcpy\", got \"" + h.h2d + "\"");
  h.gdrcopy_write_bandwidth = r.fact_quantity<BytesPerSecond>("gdrcopy_write_bandwidth").si();
  h.interleave_d2h = r.fact("interleave_d2h").as_bool();
  r.finish();
  return h;
}

}  // namespace

void check_library_entry(const CatalogEntry& e) {
  const Reader r = e.document.root();
  if (e.name == "nccl") (void)parse_nccl(r);
  else if (e.name == "hfreduce") (void)parse_hfreduce(r);
  else r.child("name").fail("unknown collective library \"" + e.name + "\"; valid: hfreduce, nccl");
}

coll::LibraryParams load_library_params(const Catalog& cat) {
  coll::LibraryParams l;
  // An entry of another name (a misspelt "hfreduce") is an error in its own file, not a missing library.
  for (const CatalogEntry* e : cat.of_kind("collective_library"))
    if (e->name != "nccl" && e->name != "hfreduce") check_library_entry(*e);
  for (const char* name : {"nccl", "hfreduce"})
    if (!cat.find("collective_library", name))
      throw ConfigError(cat.dir(), "", std::string("missing collective_library \"") + name + "\" in the models folder");
  l.nccl = parse_nccl(cat.find("collective_library", "nccl")->document.root());
  l.hfreduce = parse_hfreduce(cat.find("collective_library", "hfreduce")->document.root());
  return l;
}

}  // namespace ffsim::config
