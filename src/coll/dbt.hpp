// NCCL 2.4's double binary tree (src/graph/trees.cc): two binary trees over the nodes, in which
// most interior nodes of one tree are leaves of the other.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <vector>

namespace ffsim::coll {

struct TreeLinks {
  int parent = -1;                  ///< -1 at the root
  std::array<int, 2> child{-1, -1};  ///< -1 where absent
};

/// Tree 0 (an in-order binary tree on ranks 0..n-1) and tree 1 (tree 0 mirrored when n is even,
/// shifted by one when n is odd), as NCCL builds them. Result: [tree][rank].
[[nodiscard]] std::array<std::vector<TreeLinks>, 2> double_binary_tree(int n);

/// The ranks of a tree in post-order (children before parents; the root last).
[[nodiscard]] std::vector<int> post_order(const std::vector<TreeLinks>& t);

/// Depth of a tree (edges on the longest root-to-leaf path).
[[nodiscard]] int tree_depth(const std::vector<TreeLinks>& t);

}  // namespace ffsim::coll
