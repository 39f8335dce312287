// The built-in collective algorithms: one registration line each.
// SPDX-License-Identifier: Apache-2.0
#include "coll/collective.hpp"

namespace ffsim::coll {

std::unique_ptr<Algorithm> make_nccl_ring();
std::unique_ptr<Algorithm> make_reduce_scatter();
std::unique_ptr<Algorithm> make_allgather();
std::unique_ptr<Algorithm> make_broadcast();
std::unique_ptr<Algorithm> make_sendrecv();
std::unique_ptr<Algorithm> make_alltoall();
std::unique_ptr<Algorithm> make_hfreduce();
std::unique_ptr<Algorithm> make_hfreduce_nvlink();
std::unique_ptr<Algorithm> make_nccl_tree();
std::unique_ptr<Algorithm> make_nccl();
std::unique_ptr<Algorithm> make_hf_reduce_scatter();
std::unique_ptr<Algorithm> make_hf_allgather();

const AlgorithmRegistry& algorithms() {
  static const AlgorithmRegistry r = [] {
    AlgorithmRegistry x("collective algorithm");
    x.add("hfreduce", "allreduce: HFReduce (D2H, CPU reduce, double binary tree between nodes, H2D)", make_hfreduce);
    x.add("hfreduce_nvlink", "allreduce: HFReduce reducing inside NVLink pairs first, half the data per GPU via the CPU",
          make_hfreduce_nvlink);
    x.add("nccl", "allreduce: what NCCL picks between ring and tree by its own tuning model, then that algorithm", make_nccl);
    x.add("nccl_ring", "allreduce: NCCL's ring over the PCIe node (reduce-scatter + allgather steps)", make_nccl_ring);
    x.add("nccl_tree", "allreduce: NCCL's double binary tree between nodes, a chain inside each node", make_nccl_tree);
    x.add("reduce_scatter", "reduce-scatter: NCCL's ring", make_reduce_scatter);
    x.add("allgather", "allgather: NCCL's ring", make_allgather);
    x.add("hf_reduce_scatter",
          "reduce-scatter on HFReduce's host path [I]: D2H, CPU reduce, ring of nodes over RDMA, each GPU's shard H2D",
          make_hf_reduce_scatter);
    x.add("hf_allgather", "allgather on HFReduce's host path [I]: shards D2H, ring of nodes over RDMA, every block H2D",
          make_hf_allgather);
    x.add("broadcast", "broadcast: NCCL's pipelined ring from the root", make_broadcast);
    x.add("sendrecv", "point-to-point send from rank 0 to rank 1", make_sendrecv);
    x.add("alltoall", "all-to-all: every rank sends 1/n of its buffer to every rank at once", make_alltoall);
    return x;
  }();
  return r;
}

}  // namespace ffsim::coll
