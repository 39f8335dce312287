// Parsing a scenario's "workload" section.
// SPDX-License-Identifier: Apache-2.0
#include "train/workload.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::train {

namespace {

// The kind of collective a role needs (a gradient reduce-scatter may also be an allreduce of
// which each rank keeps its shard).
bool fits_role(coll::Kind k, Role r) {
  switch (r) {
    case Role::GradAllReduce: return k == coll::Kind::AllReduce;
    case Role::ParamAllGather: return k == coll::Kind::AllGather;
    case Role::GradReduceScatter: return k == coll::Kind::ReduceScatter || k == coll::Kind::AllReduce;
    case Role::ExpertAllToAll: return k == coll::Kind::AllToAll;
    case Role::TensorAllReduce: return k == coll::Kind::AllReduce;
  }
  return false;
}

std::string dtype_choice(const config::Reader& r, std::string_view key, const std::string& def) {
  if (!r.has(key)) return def;
  const config::Reader v = r.fact(key);
  const std::string s = v.as_string();
  const auto& valid = hw::precisions();
  if (std::find(valid.begin(), valid.end(), s) == valid.end())
    v.fail("expected one of " + join(valid) + "; got \"" + s + "\"" + did_you_mean(s, valid));
  return s;
}

}  // namespace

std::string fact_choice(const config::Reader& r, std::string_view key, const std::vector<std::string>& valid,
                          const std::string& def) {
  if (!r.has(key)) return def;
  const config::Reader v = r.fact(key);
  const std::string s = v.as_string();
  if (std::find(valid.begin(), valid.end(), s) == valid.end())
    v.fail("expected one of " + join(valid) + "; got \"" + s + "\"" + did_you_mean(s, valid));
  return s;
}

RoleAlgorithm WorkloadSpec::algorithm(Role r) const {
  if (auto it = algorithm_overrides.find(r); it != algorithm_overrides.end())
    return RoleAlgorithm{it->second, r == Role::ParamAllGather, it->second.rfind("hf", 0) == 0};
  return algorithm_for(backend, r);
}

double WorkloadSpec::act_bytes() const { return element_bytes(precision); }

int samples_per_rank(const WorkloadSpec& w, int dp) {
  if (w.scaling == "weak") return w.batch;
  if (dp <= 0 || w.batch % dp != 0) return 0;
  return w.batch / dp;
}

// Bytes read and written per parameter by one optimizer step, over fp32 state:
//   SGD with momentum:  read w, g, m; write w, m                     (4 x 4 + g)
//   AdamW:              read w, g, m, v; write w, m, v               (6 x 4 + g)
// with mixed precision the fp32 master weights are those w, plus one 16-bit copy written.
double optimizer_traffic_bytes(const WorkloadSpec& w) {
  const bool mixed = element_bytes(w.precision) < 4;
  const double state = w.optimizer == "sgd" ? 4 * 4 : 6 * 4;
  return state + w.grad_bytes + (mixed ? w.act_bytes() : 0.0);
}

// Bytes held per parameter: weights and gradients, plus the optimizer state (moments, and fp32
// master weights with mixed precision), split over `shards` ranks.
double optimizer_state_bytes(const WorkloadSpec& w, int shards) {
  const bool mixed = element_bytes(w.precision) < 4;
  const double moments = w.optimizer == "sgd" ? 4 : 8;
  const double weights = mixed ? w.act_bytes() : 4.0;
  return weights + w.grad_bytes + (moments + (mixed ? 4.0 : 0.0)) / shards;
}

LayerTimes layer_times(const WorkloadSpec& w, const hw::GpuSpec& gpu, const std::vector<LayerCost>& layers,
                       double samples, bool recompute) {
  const GpuRates rates = rates_of(gpu, w.precision);
  LayerTimes t;
  for (const auto& l : layers) {
    t.fwd.push_back(kernel_time(w.compute, rates, forward_work(l, samples, w.act_bytes(), w.compute)).si());
    t.bwd.push_back(kernel_time(w.compute, rates, backward_work(l, samples, w.act_bytes(), w.compute, recompute)).si());
  }
  return t;
}

double optimizer_time(const WorkloadSpec& w, const hw::GpuSpec& gpu, double params) {
  return params * optimizer_traffic_bytes(w) / (gpu.memory_bandwidth.si() * w.compute.memory_efficiency);
}

double model_flops_per_sample(const WorkloadSpec& w, const std::vector<LayerCost>& layers) {
  // Model FLOPs count what the model needs, not what its kernels run (PaLM's MFU, arXiv 2204.02311
  // App. B: rematerialization excluded): the attention backward's four products (dV, dP, dQ, dK),
  // 2x the forward's two, without the recomputation of QK^T that the compute model's attention
  // backward factor (2.5, FlashAttention-2) times. Until 2026-12-01 MFU counted it: 0.5% high for
  // LLaMA-13B, 0.3% for GPT2-medium, 1.4% for DeepSeekMoE-16B.
  double f = 0;
  for (const auto& l : layers) {
    const Work fwd = forward_work(l, 1, w.act_bytes(), w.compute);
    Work bwd = backward_work(l, 1, w.act_bytes(), w.compute, false);
    bwd.attention_flops = 2 * fwd.attention_flops;
    f += fwd.flops() + bwd.flops();
  }
  return f;
}

WorkloadSpec parse_workload(const config::Reader& r, const config::Catalog& cat, const hw::ClusterSpec& cluster) {
  WorkloadSpec w;
  r.allow({"description"});
  const config::Reader kind = r.child("kind", "a workload kind (" + join(workloads().names()) + ")");
  w.kind = kind.as_string();
  const auto* entry = workloads().find(w.kind);
  if (!entry) kind.fail(workloads().unknown_message(w.kind));
  // A name in the catalog, or a model defined in place (config::Catalog::model_ref).
  w.model = parse_nn_model(cat.model_ref(kNnModel, r.child("model", "the name of an nn_model in models/"), "neural network"));
  if (r.has("compute_model")) {
    w.compute = parse_compute_model(cat.model_ref(kComputeModel, r.child("compute_model"), "compute model"));
  } else if (const auto* e = cat.find(kComputeModel, "default")) {
    w.compute = parse_compute_model(*e);
  } else {
    (void)r.child("compute_model", "the name of a compute_model in models/ (the catalog has no \"default\")");
  }
  if (auto eff = r.optional_child("efficiency")) apply_efficiency_overrides(w.compute, *eff);
  w.precision = dtype_choice(r, "precision", "");
  if (w.precision.empty()) (void)r.child("precision", "the kernels' precision (" + join(hw::precisions()) + ")");
  try {
    (void)rates_of(cluster.node.gpus.front().gpu, w.precision);
  } catch (const ValueError& e) {
    r.fail_at("precision", e.what());
  }
  w.scaling = fact_choice(r, "scaling", {"weak", "strong"}, "");
  if (w.scaling.empty()) (void)r.child("scaling", "\"weak\" (batch per data-parallel rank) or \"strong\" (batch per step)");
  w.batch = static_cast<int>(r.fact_integer("batch", 1, 1 << 30));
  w.micro_batch = r.has("micro_batch") ? static_cast<int>(r.fact_integer("micro_batch", 1, 1 << 20)) : 0;
  if (w.model.architecture == "transformer") {
    w.seq = r.has("seq") ? static_cast<int>(r.fact_integer("seq", 1, w.model.transformer.max_sequence))
                         : w.model.transformer.max_sequence;
  } else {
    w.seq = 1;
  }
  w.backend = fact_choice(r, "backend", backend_names(), "hfreduce");
  if (auto a = r.optional_child("algorithms")) {
    const auto roles = role_names();
    for (const auto& key : a->keys()) {
      const auto it = std::find(roles.begin(), roles.end(), key);
      if (it == roles.end()) a->fail("unknown key \"" + key + "\"" + did_you_mean(key, roles) + "; valid keys: " + join(roles));
      const Role role = static_cast<Role>(it - roles.begin());
      const config::Reader v = a->child(key);
      const std::string name = v.as_string();
      const auto* alg = coll::algorithms().find(name);
      if (!alg) v.fail(coll::algorithms().unknown_message(name));
      if (!fits_role(alg->factory()->kind(), role))
        v.fail("algorithm \"" + name + "\" performs " + coll::kind_name(alg->factory()->kind()) + "; the " + key +
               " role needs " + (role == Role::GradReduceScatter ? "reduce_scatter or allreduce"
                                 : role == Role::TensorAllReduce ? "allreduce" : key));
      w.algorithm_overrides[role] = name;
    }
    a->finish();
  }
  // Every role's algorithm must exist (a backend whose table names an unregistered algorithm).
  const auto roles = role_names();
  for (std::size_t i = 0; i < roles.size(); ++i) {
    const std::string name = w.algorithm(static_cast<Role>(i)).algorithm;
    if (!coll::algorithms().find(name))
      r.fail_at("backend", "backend \"" + w.backend + "\" runs " + name + " for the " + roles[i] + " role: " +
                               coll::algorithms().unknown_message(name));
  }
  w.flash_attention = r.has("flash_attention") ? r.fact("flash_attention").as_bool() : true;
  w.grad_bytes = element_bytes(dtype_choice(r, "grad_dtype", "fp32"));
  w.param_bytes = element_bytes(dtype_choice(r, "param_dtype", w.precision));
  w.optimizer = fact_choice(r, "optimizer", {"sgd", "adamw"}, "adamw");
  const config::Reader list = r.child("gpus", "the GPU counts to run, e.g. [32, 64, 128]");
  const std::vector<config::Reader> counts = list.elements("GPU count");
  if (counts.empty()) list.fail("expected at least one GPU count");
  w.impl = entry->factory(r, w);
  // GPU counts, each checked against the cluster and the workload's parallelism.
  const int per_node = static_cast<int>(cluster.node.gpus.size());
  for (const config::Reader& g : counts) {
    const int n = static_cast<int>(g.as_integer(1, 1 << 24));
    if (std::find(w.gpus.begin(), w.gpus.end(), n) != w.gpus.end())
      g.fail(std::to_string(n) + " GPUs appears twice in the list (its rows would repeat); give each count once");
    const std::string why = w.impl->check(w, n, cluster.gpus(), per_node);
    if (!why.empty()) g.fail(why);
    w.gpus.push_back(n);
  }
  return w;
}

}  // namespace ffsim::train
