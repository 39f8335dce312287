// NCCL's double binary tree.
// SPDX-License-Identifier: Apache-2.0
#include "coll/dbt.hpp"

#include <algorithm>
#include <functional>

#include "core/error.hpp"

namespace ffsim::coll {

namespace {

// ncclGetBtree: the lowest set bit of rank decides its level; parent and children by bit arithmetic.
TreeLinks btree(int n, int rank) {
  TreeLinks t;
  int bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  if (rank == 0) {
    t.child[1] = n > 1 ? bit >> 1 : -1;
    if (t.child[1] == 0) t.child[1] = -1;
    return t;
  }
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  t.parent = up;
  int lowbit = bit >> 1;
  t.child[0] = lowbit == 0 ? -1 : rank - lowbit;
  int down1 = lowbit == 0 ? -1 : rank + lowbit;
  while (down1 >= n) {
    lowbit >>= 1;
    down1 = lowbit == 0 ? -1 : rank + lowbit;
  }
  t.child[1] = down1;
  return t;
}

}  // namespace

std::array<std::vector<TreeLinks>, 2> double_binary_tree(int n) {
  FFSIM_ASSERT(n >= 1, "a tree needs at least one rank");
  std::array<std::vector<TreeLinks>, 2> t;
  for (int r = 0; r < n; ++r) t[0].push_back(btree(n, r));
  // The root's single child: the highest power of two below n (ncclGetBtree gives bit >> 1 with
  // bit the first power of two >= n).
  for (int r = 0; r < n; ++r) {
    TreeLinks x;
    auto map = [&](int v, bool mirror) {
      if (v < 0) return -1;
      return mirror ? n - 1 - v : (v + 1) % n;
    };
    const bool mirror = n % 2 == 0;
    const int src = mirror ? n - 1 - r : (r - 1 + n) % n;
    const TreeLinks b = t[0][static_cast<std::size_t>(src)];
    x.parent = map(b.parent, mirror);
    x.child = {map(b.child[0], mirror), map(b.child[1], mirror)};
    t[1].push_back(x);
  }
  return t;
}

std::vector<int> post_order(const std::vector<TreeLinks>& t) {
  int root = 0;
  for (std::size_t v = 0; v < t.size(); ++v)
    if (t[v].parent < 0) root = static_cast<int>(v);
  std::vector<int> post;
  std::vector<std::pair<int, int>> st{{root, 0}};
  while (!st.empty()) {
    auto& [v, i] = st.back();
    if (i < 2) {
      const int ch = t[static_cast<std::size_t>(v)].child[static_cast<std::size_t>(i++)];
      if (ch >= 0) st.push_back({ch, 0});
    } else {
      post.push_back(v);
      st.pop_back();
    }
  }
  FFSIM_ASSERT(post.size() == t.size(), "a tree does not span every rank");
  return post;
}

int tree_depth(const std::vector<TreeLinks>& t) {
  int best = 0;
  for (std::size_t r = 0; r < t.size(); ++r) {
    int d = 0;
    for (int v = static_cast<int>(r); t[static_cast<std::size_t>(v)].parent >= 0; v = t[static_cast<std::size_t>(v)].parent) {
      ++d;
      FFSIM_ASSERT(d <= static_cast<int>(t.size()), "cycle in a tree");
    }
    best = std::max(best, d);
  }
  return best;
}

}  // namespace ffsim::coll
