// Training workloads: what a scenario's "workload" section sets (the model, its batch, its
// parallelism and the unknowns of the paper as explicit parameters), and the workload kinds (DDP,
// FSDP, pipeline, MoE), each in its own file with a plain parameter struct, each building one
// training step as a Schedule. config/train_reader.hpp reads the section and names the kinds.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/specs.hpp"
#include "coll/placement.hpp"
#include "train/collectives.hpp"
#include "train/compute.hpp"
#include "train/nn_model.hpp"
#include "train/step.hpp"

namespace ffsim::train {

class Workload;

/// The parameters every workload kind shares.
struct WorkloadSpec {
  std::string kind;              ///< registry name: "ddp", "fsdp", "pipeline", "moe"
  NnModelSpec model;
  ComputeModel compute;
  std::string precision;         ///< the kernels' arithmetic: "tf32", "bf16", ...
  /// "weak": `batch` samples per data-parallel rank at every size; "strong": `batch` samples per step in all.
  std::string scaling;
  int batch = 0;
  /// Samples per forward/backward pass (gradient accumulation, pipeline micro-batches); 0: the
  /// kind's default (data parallel: the whole per-rank batch in one pass; pipelines: 1).
  int micro_batch = 0;
  int seq = 0;                   ///< tokens per sample (transformers; 1 for images)
  std::vector<int> gpus;         ///< the GPU counts to run
  std::string backend;           ///< "hfreduce" or "nccl"
  std::map<Role, std::string> algorithm_overrides;  ///< role -> coll algorithm, replacing the backend's
  bool flash_attention = true;
  double grad_bytes = 4;         ///< bytes per gradient element communicated
  double param_bytes = 4;        ///< bytes per parameter element communicated (allgathers)
  std::string optimizer;         ///< "sgd" (momentum) or "adamw"
  coll::Placement placement;     ///< where the job's nodes are (`train --placement`; packed: the first GPUs)
  /// The job's `count` GPUs in rank order under `placement` (messages name `--placement`).
  [[nodiscard]] coll::Group group(const platform::Platform& p, int count) const;
  std::shared_ptr<const Workload> impl;

  /// The algorithm of a role: an explicit override, else the backend's table entry.
  [[nodiscard]] RoleAlgorithm algorithm(Role r) const;
  /// Bytes per activation element (the precision's element size).
  [[nodiscard]] double act_bytes() const;
};

/// Staggered pipelines sharing a NIC (`"stagger": "transfer"`): their transfers stay apart only while
/// every middle stage's forward lasts `pipelines` bursts (docs/commands/train.md, "When staggered
/// pipelines collide"). Empty (pipelines 0) where there is no stagger, no middle stage, or tensor
/// parallelism (no edge is stated there: see src/train/pipeline.cpp).
struct StaggerEdge {
  int pipelines = 0;              ///< pipelines whose stages share a node's NIC
  double transfer_s = 0;          ///< a lone activation transfer across the first boundary: the stagger
  double shortest_forward_s = 0;  ///< the shortest forward pass of a middle stage
  [[nodiscard]] bool crossed() const { return pipelines > 1 && shortest_forward_s < pipelines * transfer_s; }
};

/// What a workload built for one GPU count.
struct StepPlan {
  std::string layout;            ///< "DP=512", "PP=4 x DP=16, 256 micro-batches of 1 (dp_inner, staggered)"
  int data_parallel = 0;
  double samples = 0;            ///< samples per step (whole job)
  double model_flops = 0;        ///< forward + backward FLOPs per step (whole job, no recomputation)
  double memory_bytes = 0;       ///< estimate for the fullest GPU: weights, gradients, optimizer, activations
  std::vector<sched::Place> simulated;  ///< GPUs whose ops the schedule holds
  StaggerEdge stagger;
};

/// A step evaluated on the closed form, without a schedule (what `--engine closed-form` reports).
struct ClosedFormStep {
  StepPlan plan;
  double step_s = 0;
  double compute_s = 0;       ///< kernels of the busiest GPU
  double bubble_s = 0;        ///< pipeline idle time with free communication
  double exposed_comm_s = 0;  ///< what communication adds on top
};

class Workload {
public:
  virtual ~Workload() = default;
  /// One line: "DDP, buckets of 25 MiB (first 1 MiB)".
  [[nodiscard]] virtual std::string summary() const = 0;
  /// Why `gpus` cannot run this workload on a cluster of `cluster_gpus` GPUs of `gpus_per_node`
  /// per node, or "" when it can.
  [[nodiscard]] virtual std::string check(const WorkloadSpec& w, int gpus, int cluster_gpus, int gpus_per_node) const = 0;
  /// Builds one step for `gpus` GPUs. With `full`, every GPU's ops; otherwise a representative set
  /// whose timing equals the full schedule's (proven on small cases by the tests).
  virtual StepPlan build(StepBuilder& b, const WorkloadSpec& w, int gpus, bool full) const = 0;
  /// Whether the kind evaluates a step on the closed form (estimate()), and whether build() makes
  /// schedules (false: the closed form only).
  [[nodiscard]] virtual bool has_closed_form() const { return false; }
  [[nodiscard]] virtual bool builds_schedules() const { return true; }
  /// One step on the closed form, collective times from `costs`. The default throws ValueError.
  [[nodiscard]] virtual ClosedFormStep estimate(const WorkloadSpec& w, const platform::Platform& p,
                                                CollectiveCosts& costs, int gpus) const;
};

/// Samples per data-parallel rank per step (weak: the batch; strong: the batch over `dp`), or 0
/// when a strong batch does not split evenly.
[[nodiscard]] int samples_per_rank(const WorkloadSpec& w, int dp);

/// Bytes of optimizer traffic per parameter (read and written in one step) and of weights,
/// gradients and optimizer state held per parameter, for the workload's optimizer and precision;
/// `shards` ranks split the optimizer state (fp32 master weights and moments: ZeRO stage 1).
[[nodiscard]] double optimizer_traffic_bytes(const WorkloadSpec& w);
[[nodiscard]] double optimizer_state_bytes(const WorkloadSpec& w, int shards = 1);

/// Seconds alone of each layer's forward and backward pass over `samples` samples on GPU `gpu`.
struct LayerTimes {
  std::vector<double> fwd, bwd;
};
[[nodiscard]] LayerTimes layer_times(const WorkloadSpec& w, const hw::GpuSpec& gpu, const std::vector<LayerCost>& layers,
                                     double samples, bool recompute);
/// The calibrated shaped model's seconds alone of one layer over `samples` samples on `gpu`:
/// forward, backward (no recomputation), and the forward's attention core (its products and score
/// traffic: what selective recomputation reruns). The workload's compute model must be shaped.
struct ShapedPassTimes {
  double fwd = 0, bwd = 0, fwd_attention = 0;
};
[[nodiscard]] ShapedPassTimes shaped_pass_times(const WorkloadSpec& w, const hw::GpuSpec& gpu, const LayerCost& l,
                                                double samples);
/// Seconds alone of an optimizer step over `params` parameters (memory-bound).
[[nodiscard]] double optimizer_time(const WorkloadSpec& w, const hw::GpuSpec& gpu, double params);
/// Forward + backward FLOPs of one sample through `layers` (no recomputation): the model FLOPs.
[[nodiscard]] double model_flops_per_sample(const WorkloadSpec& w, const std::vector<LayerCost>& layers);

}  // namespace ffsim::train
