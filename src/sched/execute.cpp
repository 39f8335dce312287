// The data-movement check.
// SPDX-License-Identifier: Apache-2.0
#include "sched/execute.hpp"

#include <cmath>
#include <deque>

#include "core/error.hpp"

namespace ffsim::sched {

Memory allocate(const Schedule& s, int elem_size) {
  Memory m;
  for (const Buffer& b : s.buffers()) {
    const double n = b.bytes / elem_size;
    FFSIM_ASSERT(n == std::floor(n), "buffer " + b.name + " is not a whole number of elements");
    m.emplace_back(static_cast<std::size_t>(n), 0.0);
  }
  return m;
}

namespace {
std::size_t elems(double bytes, int elem_size, const std::string& what) {
  const double n = bytes / elem_size;
  FFSIM_ASSERT(n >= 0 && n == std::floor(n), what + ": " + std::to_string(bytes) + " bytes is not a whole number of elements");
  return static_cast<std::size_t>(n);
}
}  // namespace

void execute(const Schedule& s, Memory& mem, int elem_size, bool lifo) {
  s.check_acyclic();
  const auto g = s.graph();
  std::vector<std::uint32_t> preds = g.preds;
  std::deque<OpId> ready;
  for (OpId i = 0; i < s.size(); ++i)
    if (preds[i] == 0) ready.push_back(i);
  auto span = [&](const DataRef& r, std::size_t n) {
    std::vector<double>& buf = mem.at(r.buffer);
    const std::size_t off = elems(r.offset, elem_size, "offset in " + s.buffers()[r.buffer].name);
    FFSIM_ASSERT(off + n <= buf.size(), "data ref past the end of buffer " + s.buffers()[r.buffer].name);
    return buf.data() + off;
  };
  while (!ready.empty()) {
    OpId id;
    if (lifo) {
      id = ready.back();
      ready.pop_back();
    } else {
      id = ready.front();
      ready.pop_front();
    }
    const Op& o = s.op(id);
    const auto [data_begin, data_end] = s.data_refs(id);
    if (data_end > data_begin) {
      const std::size_t n = elems(s.data_bytes(id), elem_size, "op " + std::to_string(id));
      const auto& refs = s.refs();
      if (o.kind == OpKind::Transfer) {
        const double* src = span(refs[data_begin], n);
        double* dst = span(refs[data_begin + 1], n);
        std::vector<double> tmp(src, src + n);  // tolerate overlapping refs
        std::copy(tmp.begin(), tmp.end(), dst);
      } else {
        const std::uint32_t k = data_end - data_begin - 1;
        std::vector<double> acc(n, 0.0);
        for (std::uint32_t j = 0; j < k; ++j) {
          const double* in = span(refs[data_begin + j], n);
          for (std::size_t e = 0; e < n; ++e) acc[e] += in[e];
        }
        double* out = span(refs[data_end - 1], n);
        std::copy(acc.begin(), acc.end(), out);
      }
    }
    for (std::uint32_t k = g.succ_begin[id]; k < g.succ_begin[id + 1]; ++k)
      if (--preds[g.succ[k]] == 0) ready.push_back(g.succ[k]);
  }
}

}  // namespace ffsim::sched
