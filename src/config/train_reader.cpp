// JSON -> training parameters: the model zoo's entries, compute models, the "workload" section
// and each workload kind's own keys.
// SPDX-License-Identifier: Apache-2.0
#include "config/train_reader.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "coll/collective.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"
#include "train/ddp.hpp"
#include "train/fsdp.hpp"
#include "train/pipeline.hpp"
#include "train/sync_dp.hpp"
#include "train/transformer.hpp"

namespace ffsim::config {

using train::backend_names;
using train::element_bytes;
using train::make_pipeline_workload;
using train::rates_of;
using train::role_names;

namespace {

int fact_int(const Reader& r, std::string_view key, int min = 1, int max = 1 << 30) {
  return static_cast<int>(r.fact_integer(key, min, max));
}

train::CnnSpec parse_cnn(const Reader& r) {
  train::CnnSpec c;
  const Reader in = r.child("input", "the input image: channels, size");
  c.input_channels = fact_int(in, "channels");
  c.input_size = fact_int(in, "size");
  in.finish();
  c.kernel = fact_int(r, "conv_kernel", 1, 15);
  if (r.has("batch_norm")) c.batch_norm = r.fact("batch_norm").as_bool();
  const Reader list = r.fact("cnn_layers");
  double size = c.input_size;
  const std::vector<std::string> kinds{"bottleneck", "conv", "fc", "pool"};
  for (const Reader& l : list.elements("layer")) {
    if (!l.is_object())
      l.fail(
          "expected a layer {\"conv\": channels} | {\"pool\": window} | {\"fc\": features} | {\"bottleneck\": width}, "
          "got " +
          l.describe());
    std::string k;
    for (const std::string& key : l.keys())
      if (std::find(kinds.begin(), kinds.end(), key) != kinds.end()) {
        if (!k.empty())
          l.fail("expected exactly one of \"bottleneck\", \"conv\", \"fc\", \"pool\" in a layer, got \"" + k +
                 "\" and \"" + key + "\"");
        k = key;
      }
    if (k.empty()) {
      const std::string first = l.keys().empty() ? std::string() : l.keys().front();
      if (first.empty()) l.fail("expected exactly one of \"bottleneck\", \"conv\", \"fc\", \"pool\" in a layer");
      l.fail("unknown layer type \"" + first + "\"" + did_you_mean(first, kinds) + "; valid: " + join(kinds));
    }
    train::CnnLayer x;
    if (k == "conv") x.type = train::CnnLayer::Type::Conv;
    else if (k == "pool") x.type = train::CnnLayer::Type::Pool;
    else if (k == "fc") x.type = train::CnnLayer::Type::Fc;
    else
      x.type = train::CnnLayer::Type::Bottleneck;
    x.channels = static_cast<int>(l.integer(k, 1, 1 << 20));
    // The modifiers each kind takes (a modifier of another kind is an unknown key at finish()).
    const bool conv = k == "conv", pool = k == "pool", bneck = k == "bottleneck";
    if (conv && l.has("kernel")) x.kernel = static_cast<int>(l.integer("kernel", 1, 15));
    if ((conv || pool || bneck) && l.has("stride")) x.stride = static_cast<int>(l.integer("stride", 1, 64));
    if ((conv || pool) && l.has("padding")) {
      const std::string pad = l.string("padding");
      if (pad != "same" && pad != "valid") l.fail_at("padding", "expected \"same\" or \"valid\", got \"" + pad + "\"");
      x.valid = pad == "valid";
    }
    if (bneck && l.has("repeat")) x.repeat = static_cast<int>(l.integer("repeat", 1, 1000));
    if (bneck && l.has("stride_on")) {
      const std::string on = l.string("stride_on");
      if (on != "1x1" && on != "3x3")
        l.fail_at("stride_on", "expected \"3x3\" (ResNet v1.5) or \"1x1\" (ResNet v1), got \"" + on + "\"");
      x.stride_on_1x1 = on == "1x1";
    }
    l.finish();
    const int kernel = x.kernel > 0 ? x.kernel : c.kernel;
    if (x.type == train::CnnLayer::Type::Pool) {
      if (x.stride == 0) {
        if (static_cast<long long>(size) % x.channels != 0)
          l.fail_at(k, "a pool of window " + std::to_string(x.channels) + " does not divide the feature map of size " +
                           fmt_g(size));
        size /= x.channels;
      } else {
        size = x.valid ? std::floor((size - x.channels) / x.stride) + 1 : std::ceil(size / x.stride);
      }
    } else if (x.type == train::CnnLayer::Type::Conv) {
      const int st = x.stride > 0 ? x.stride : 1;
      size = x.valid ? std::floor((size - kernel) / st) + 1 : std::ceil(size / st);
    } else if (x.type == train::CnnLayer::Type::Bottleneck) {
      size = std::ceil(size / (x.stride > 0 ? x.stride : 1));
    }
    if (size < 1) l.fail("the feature map is empty after this layer (a window larger than its input)");
    c.layers.push_back(x);
  }
  if (c.layers.empty()) list.fail("expected at least one layer");
  return c;
}

train::TransformerSpec parse_transformer(const Reader& r) {
  train::TransformerSpec t;
  t.layers = fact_int(r, "layers");
  t.hidden = fact_int(r, "hidden");
  t.heads = fact_int(r, "heads");
  t.kv_heads = r.has("kv_heads") ? fact_int(r, "kv_heads") : t.heads;
  if (t.heads % t.kv_heads != 0)
    r.fail_at("kv_heads", "expected a divisor of heads (" + std::to_string(t.heads) + "), got " + std::to_string(t.kv_heads));
  if (!r.has("mla") && t.hidden % t.heads != 0)
    r.fail_at("heads", "expected a divisor of hidden (" + std::to_string(t.hidden) + "), got " + std::to_string(t.heads));
  t.ffn_hidden = fact_int(r, "ffn_hidden");
  {
    const Reader f = r.fact("ffn");
    const std::string v = f.as_string();
    if (v != "gelu" && v != "swiglu") f.fail("expected \"gelu\" (2 matrices) or \"swiglu\" (3 matrices), got \"" + v + "\"");
    t.gated_ffn = v == "swiglu";
  }
  t.bias = r.fact("bias").as_bool();
  {
    const Reader n = r.fact("norm");
    const std::string v = n.as_string();
    if (v != "layernorm" && v != "rmsnorm") n.fail("expected \"layernorm\" or \"rmsnorm\", got \"" + v + "\"");
    t.layernorm = v == "layernorm";
  }
  t.vocab = fact_int(r, "vocab");
  t.learned_positions = r.has("learned_positions") ? fact_int(r, "learned_positions", 0) : 0;
  t.tied_embeddings = r.fact("tied_embeddings").as_bool();
  t.max_sequence = fact_int(r, "max_sequence");
  if (r.has("causal")) t.causal = r.fact("causal").as_bool();
  if (r.has("lm_head")) t.lm_head = r.fact("lm_head").as_bool();
  if (auto m = r.optional_child("mla")) {
    train::MlaSpec a;
    a.q_lora_rank = fact_int(*m, "q_lora_rank", 0);
    a.kv_lora_rank = fact_int(*m, "kv_lora_rank");
    a.qk_nope_head_dim = fact_int(*m, "qk_nope_head_dim");
    a.qk_rope_head_dim = fact_int(*m, "qk_rope_head_dim", 0);
    a.v_head_dim = fact_int(*m, "v_head_dim");
    m->finish();
    t.mla = a;
  }
  if (auto m = r.optional_child("moe")) {
    train::MoeSpec e;
    e.first_dense_layers = fact_int(*m, "first_dense_layers", 0, t.layers);
    e.routed_experts = fact_int(*m, "routed_experts");
    e.shared_experts = fact_int(*m, "shared_experts", 0);
    e.top_k = fact_int(*m, "top_k", 1, e.routed_experts);
    e.expert_ffn_hidden = fact_int(*m, "expert_ffn_hidden");
    m->finish();
    t.moe = e;
  }
  return t;
}

}  // namespace

train::NnModelSpec parse_nn_model(const CatalogEntry& e) {
  const Reader r = e.document.root();
  r.allow({"kind", "name", "description", "extends"});
  train::NnModelSpec m;
  m.name = e.name;
  m.description = e.description;
  const Reader arch = r.fact("architecture");
  m.architecture = arch.as_string();
  if (m.architecture == "cnn") m.cnn = parse_cnn(r);
  else if (m.architecture == "transformer") m.transformer = parse_transformer(r);
  else arch.fail("expected \"cnn\" or \"transformer\", got \"" + m.architecture + "\"");
  if (r.has("published_parameters")) m.published_parameters = r.fact_number("published_parameters", 1, 1e15);
  r.finish();
  return m;
}

namespace {

// A compute_model's "shaped" block, written by `ffsim calibrate --throughput T --gemm G --gpu X -o F`
// (cli/cmd_calibrate.cpp): the GEMM model's parameters, the multipliers and the GPU models it was
// fitted on. "fit" records the measurements and errors (read by people, not by the model).
train::ShapedCalibration parse_shaped(const Reader& r) {
  r.allow({"fit"});
  train::ShapedCalibration c;
  {
    const Reader g = r.fact("gpus");
    for (const Reader& e : g.elements("GPU model names")) c.gpus.push_back(e.as_string());
    if (c.gpus.empty()) g.fail("expected the GPU models the calibration was fitted on, got an empty array");
  }
  const Reader gm = r.child("gemm",
                            "the GEMM model: ceiling (by form factor, then precision), wave_overhead, "
                            "launch, split_k_min");
  train::GemmParams base;
  base.wave_overhead_s = gm.fact_quantity<Seconds>("wave_overhead", true).si();
  base.launch_s = gm.fact_quantity<Seconds>("launch", true).si();
  base.split_k_min = gm.fact_integer("split_k_min", 0, 1 << 20);
  const Reader ceil = gm.child("ceiling",
                               "the fraction of peak a full wave reaches, by the card's form factor (pcie, sxm), then "
                               "precision (fp16, tf32, fp32)");
  for (const std::string& ff : ceil.keys()) {
    if (ff != "pcie" && ff != "sxm")
      ceil.fail_at(ff, "expected a GPU form factor (pcie, sxm) holding ceilings by precision, got \"" + ff + "\"" +
                           (ff == "fp16" || ff == "tf32" || ff == "fp32"
                                ? ": the ceilings are by the card's form factor, then precision ({\"sxm\": {\"" + ff +
                                      "\": ...}}); write the file again with ffsim calibrate --throughput ... -o"
                                : did_you_mean(ff, {"pcie", "sxm"})));
    const Reader byp = ceil.child(ff, "the " + ff + " card's ceilings by precision (fp16, tf32, fp32)");
    for (const std::string& p : byp.keys()) {
      if (p != "fp16" && p != "tf32" && p != "fp32")
        byp.fail_at(p, "expected a GEMM precision family (fp16: fp16 and bf16; tf32; fp32), got \"" + p + "\"");
      train::GemmParams q = base;
      q.ceiling = byp.fact_number(p, 1e-3, 1);
      c.gemm[ff].emplace(p, q);
    }
    if (c.gemm[ff].empty()) byp.fail("expected a ceiling for at least one precision (fp16, tf32, fp32)");
    byp.finish();
  }
  if (c.gemm.empty()) ceil.fail("expected the ceilings of at least one form factor (pcie, sxm)");
  ceil.finish();
  gm.finish();
  const Reader m = r.child("multipliers", "the fitted multipliers: conv, gemm (linear and attention), memory");
  c.multipliers.conv = m.fact_number("conv", 0, 100);
  c.multipliers.linear = c.multipliers.attention = m.fact_number("gemm", 0, 100);
  c.multipliers.memory = c.multipliers.score_memory = m.fact_number("memory", 0, 100);
  m.finish();
  r.finish();
  return c;
}

}  // namespace

train::ComputeModel parse_compute_model(const CatalogEntry& e) {
  const Reader r = e.document.root();
  r.allow({"kind", "name", "description", "extends", "command", "ffsim_version"});
  train::ComputeModel m;
  m.name = e.name;
  const Reader eff = r.child("efficiency", "efficiencies: gemm, conv, attention, memory");
  m.gemm_efficiency = eff.fact_number("gemm", 0.01, 1);
  m.conv_efficiency = eff.fact_number("conv", 0.01, 1);
  m.attention_efficiency = eff.fact_number("attention", 0.01, 1);
  m.memory_efficiency = eff.fact_number("memory", 0.01, 1);
  eff.finish();
  const Reader bw = r.child("backward_factor", "backward over forward work: gemm, attention, memory");
  m.backward_gemm = bw.fact_number("gemm", 0, 10);
  m.backward_attention = bw.fact_number("attention", 0, 10);
  m.backward_memory = bw.fact_number("memory", 0, 10);
  bw.finish();
  m.memory_passes = r.fact_number("memory_passes", 0, 100);
  if (auto sh = r.optional_child("shaped")) m.shaped = parse_shaped(*sh);
  r.finish();
  return m;
}

void apply_efficiency_overrides(train::ComputeModel& m, const Reader& r) {
  if (r.has("gemm")) m.gemm_efficiency = r.fact_number("gemm", 0.01, 1);
  if (r.has("conv")) m.conv_efficiency = r.fact_number("conv", 0.01, 1);
  if (r.has("attention")) m.attention_efficiency = r.fact_number("attention", 0.01, 1);
  if (r.has("memory")) m.memory_efficiency = r.fact_number("memory", 0.01, 1);
  r.finish();
}

namespace {

// The kind of collective a role needs (a gradient reduce-scatter may also be an allreduce of
// which each rank keeps its shard).
bool fits_role(coll::Kind k, train::Role r) {
  switch (r) {
    case train::Role::GradAllReduce: return k == coll::Kind::AllReduce;
    case train::Role::ParamAllGather: return k == coll::Kind::AllGather;
    case train::Role::GradReduceScatter: return k == coll::Kind::ReduceScatter || k == coll::Kind::AllReduce;
    case train::Role::ExpertAllToAll: return k == coll::Kind::AllToAll;
    case train::Role::TensorAllReduce: return k == coll::Kind::AllReduce;
  }
  return false;
}

std::string dtype_choice(const Reader& r, std::string_view key, const std::string& def) {
  if (!r.has(key)) return def;
  const Reader v = r.fact(key);
  const std::string s = v.as_string();
  const auto& valid = hw::precisions();
  if (std::find(valid.begin(), valid.end(), s) == valid.end())
    v.fail("expected one of " + join(valid) + "; got \"" + s + "\"" + did_you_mean(s, valid));
  return s;
}

}  // namespace

std::string fact_choice(const Reader& r, std::string_view key, const std::vector<std::string>& valid,
                          const std::string& def) {
  if (!r.has(key)) return def;
  const Reader v = r.fact(key);
  const std::string s = v.as_string();
  if (std::find(valid.begin(), valid.end(), s) == valid.end())
    v.fail("expected one of " + join(valid) + "; got \"" + s + "\"" + did_you_mean(s, valid));
  return s;
}

namespace {

// ---- each workload kind's own keys

std::unique_ptr<train::Workload> read_ddp(const Reader& r, const train::WorkloadSpec&) {
  train::DdpParams p;
  if (r.has("bucket")) p.bucket = r.fact_quantity<Bytes>("bucket").si();
  if (r.has("first_bucket")) p.first_bucket = r.fact_quantity<Bytes>("first_bucket").si();
  r.finish();
  return train::make_ddp(p);
}

std::unique_ptr<train::Workload> read_sync_dp(const Reader& r, const train::WorkloadSpec&) {
  train::SyncDpParams p;
  if (r.has("fusion")) p.fusion = r.fact_quantity<Bytes>("fusion").si();
  r.finish();
  return train::make_sync_dp(p);
}

std::unique_ptr<train::Workload> read_fsdp(const Reader& r, const train::WorkloadSpec&) {
  train::FsdpParams p;
  if (r.has("prefetch")) p.prefetch = static_cast<int>(r.fact_integer("prefetch", 0, 64));
  if (r.has("unit_layers")) p.unit_layers = static_cast<int>(r.fact_integer("unit_layers", 1, 1 << 16));
  r.finish();
  return train::make_fsdp(p);
}

// The pipeline keys of a "workload" section (and "ep" when `moe`); does not call finish().
train::PipelineParams parse_pipeline_params(const Reader& r, bool moe) {
  train::PipelineParams p;
  p.pp = static_cast<int>(r.fact_integer("pp", 1, 1 << 16));
  p.tp = r.has("tp") ? static_cast<int>(r.fact_integer("tp", 1, 1 << 10)) : 1;
  if (moe) p.ep = r.has("ep") ? static_cast<int>(r.fact_integer("ep", 1, 1 << 16)) : 1;
  p.schedule = fact_choice(r, "schedule", {"1f1b", "gpipe"}, p.schedule);
  p.layout = fact_choice(r, "layout", {"dp_inner", "pp_inner"}, p.layout);
  p.stagger = fact_choice(r, "stagger", {"none", "transfer"}, p.stagger);
  p.partition = fact_choice(r, "partition", {"balanced", "uniform"}, p.partition);
  p.zero_stage = r.has("zero_stage") ? static_cast<int>(r.fact_integer("zero_stage", 0, 1)) : 0;
  p.recompute = r.has("recompute") ? r.fact("recompute").as_bool() : false;
  p.overlap_grad_reduce = r.has("overlap_grad_reduce") ? r.fact("overlap_grad_reduce").as_bool() : true;
  if (r.has("bucket")) p.bucket = r.fact_quantity<Bytes>("bucket").si();
  return p;
}

std::unique_ptr<train::Workload> read_pipeline(const Reader& r, const train::WorkloadSpec&) {
  const train::PipelineParams p = parse_pipeline_params(r, false);
  r.finish();
  return make_pipeline_workload(p, false);
}

std::unique_ptr<train::Workload> read_moe(const Reader& r, const train::WorkloadSpec& common) {
  if (common.model.architecture != "transformer" || !common.model.transformer.moe)
    r.child("model").fail("workload kind \"moe\" needs a model with mixture-of-experts layers; \"" + common.model.name +
                          "\" has none (use kind \"pipeline\")");
  const train::PipelineParams p = parse_pipeline_params(r, true);
  // Expert parallelism places whole routed experts on each of its ranks (DeepSeekMoE, arXiv
  // 2401.06066 Sec. 4.1): an EP that does not divide the experts would put a fraction on each.
  const int experts = common.model.transformer.moe->routed_experts;
  if (experts % p.ep != 0) {
    std::string divisors;
    for (int d = 1; d <= experts; ++d)
      if (experts % d == 0) divisors += (divisors.empty() ? "" : ", ") + std::to_string(d);
    r.fail_at("ep", "EP=" + std::to_string(p.ep) + " does not divide the " + std::to_string(experts) + " routed experts of \"" +
                        common.model.name + "\" (" + fmt_f(static_cast<double>(experts) / p.ep, 2) +
                        " experts per rank); expert parallelism places whole experts: choose an EP among " + divisors);
  }
  r.finish();
  return make_pipeline_workload(p, true);
}

// The 3D-parallel transformer's keys (train/transformer.hpp). What a model's shape forbids is
// refused here, at the key that asks for it.
std::unique_ptr<train::Workload> read_transformer(const Reader& r, const train::WorkloadSpec& common) {
  if (common.model.architecture != "transformer")
    r.child("model").fail("workload kind \"transformer\" needs a transformer model; \"" + common.model.name +
                          "\" is a " + common.model.architecture);
  const auto& t = common.model.transformer;
  train::TransformerParams p;
  p.tp = r.has("tp") ? static_cast<int>(r.fact_integer("tp", 1, 1 << 10)) : 1;
  p.pp = r.has("pp") ? static_cast<int>(r.fact_integer("pp", 1, 1 << 16)) : 1;
  p.interleave = r.has("interleave") ? static_cast<int>(r.fact_integer("interleave", 1, 1 << 10)) : 1;
  p.sequence_parallel = r.has("sequence_parallel") ? r.fact("sequence_parallel").as_bool() : false;
  p.zero_stage = r.has("zero_stage") ? static_cast<int>(r.fact_integer("zero_stage", 0, 3)) : 0;
  p.recompute = fact_choice(r, "recompute", {"none", "selective", "full"}, "none");
  auto divisors = [](int n) {
    std::string d;
    for (int k = 1; k <= n; ++k)
      if (n % k == 0) d += (d.empty() ? "" : ", ") + std::to_string(k);
    return d;
  };
  // Megatron's column/row split gives each tensor rank whole heads (and whole key-value groups).
  if (t.heads % p.tp != 0 || t.kv_heads % p.tp != 0 || t.ffn_hidden % p.tp != 0)
    r.fail_at("tp", "TP=" + std::to_string(p.tp) + " does not divide the " + std::to_string(t.heads) +
                        " attention heads (" + std::to_string(t.kv_heads) + " key-value heads, FFN " +
                        std::to_string(t.ffn_hidden) + ") of \"" + common.model.name +
                        "\": each tensor rank holds whole heads; choose a TP among " +
                        divisors(std::gcd(std::gcd(t.heads, t.kv_heads), t.ffn_hidden)));
  // Every stage and chunk holds the same number of blocks (Megatron-LM's requirement).
  if (t.layers % (p.pp * p.interleave) != 0)
    r.fail_at(r.has("interleave") ? "interleave" : "pp",
              "PP=" + std::to_string(p.pp) + " x interleave=" + std::to_string(p.interleave) + " does not divide the " +
                  std::to_string(t.layers) + " layers of \"" + common.model.name + "\"; choose PP x interleave among " +
                  divisors(t.layers));
  r.finish();
  return train::make_transformer(p);
}

}  // namespace

const WorkloadRegistry& workloads() {
  static const WorkloadRegistry r = [] {
    WorkloadRegistry x("workload kind");
    x.add("ddp", "data parallel: gradient buckets reduced during backward (PyTorch DDP, HaiScale DDP)", read_ddp);
    x.add("fsdp", "fully sharded data parallel (ZeRO-3): per-unit allgather with prefetch, reduce-scatter in backward",
          read_fsdp);
    x.add("pipeline", "pipeline parallel (1F1B or GPipe micro-batches) x data parallel, TP inside a stage", read_pipeline);
    x.add("sync_dp", "data parallel without overlap: the whole backward, then the gradients in fusion buffers",
          read_sync_dp);
    x.add("moe", "mixture of experts on pipeline parallel, expert parallel with all-to-all per MoE layer", read_moe);
    x.add("transformer",
          "3D-parallel transformer (Megatron-LM): TP + SP, 1F1B/interleaved PP, DP with ZeRO 0-3; closed form",
          read_transformer);
    return x;
  }();
  return r;
}

train::WorkloadSpec parse_workload(const Reader& r, const Catalog& cat, const hw::ClusterSpec& cluster) {
  train::WorkloadSpec w;
  r.allow({"description"});
  const Reader kind = r.child("kind", "a workload kind (" + join(workloads().names()) + ")");
  w.kind = kind.as_string();
  const auto* entry = workloads().find(w.kind);
  if (!entry) kind.fail(workloads().unknown_message(w.kind));
  // A name in the catalog, or a model defined in place (Catalog::model_ref).
  w.model = parse_nn_model(cat.model_ref(kNnModel, r.child("model", "the name of an nn_model in models/"), "neural network"));
  if (r.has("compute_model")) {
    w.compute = parse_compute_model(cat.model_ref(kComputeModel, r.child("compute_model"), "compute model"));
  } else if (const auto* e = cat.find(kComputeModel, "default")) {
    w.compute = parse_compute_model(*e);
  } else {
    (void)r.child("compute_model", "the name of a compute_model in models/ (the catalog has no \"default\")");
  }
  if (auto eff = r.optional_child("efficiency")) {
    if (w.compute.shaped)
      eff->fail(
          "compute model \"" + w.compute.name +
          "\" is a calibrated shaped model: its per-kind efficiencies are not used, so overriding them would change "
          "nothing; remove \"efficiency\", or name an efficiency model (e.g. \"default\") in \"compute_model\"");
    apply_efficiency_overrides(w.compute, *eff);
  }
  w.precision = dtype_choice(r, "precision", "");
  if (w.precision.empty()) (void)r.child("precision", "the kernels' precision (" + join(hw::precisions()) + ")");
  try {
    (void)rates_of(cluster.node.gpus.front().gpu, w.precision);
  } catch (const ValueError& e) {
    r.fail_at("precision", e.what());
  }
  if (w.compute.shaped) {
    // A calibration holds for what it was fitted on: the GPU models and precisions of its
    // measurements. Outside them it is refused, never applied silently (issue 27's scoping rule).
    const train::ShapedCalibration& c = *w.compute.shaped;
    const hw::GpuSpec& gpu = cluster.node.gpus.front().gpu;
    const std::string suggest =
        "; name a compute model fitted on it (ffsim calibrate --throughput ... -o), or \"default\"";
    if (std::find(c.gpus.begin(), c.gpus.end(), gpu.name) == c.gpus.end())
      r.fail_at("compute_model", "compute model \"" + w.compute.name + "\" was fitted on GPU models " + join(c.gpus) +
                                     "; expected one of them, found " + gpu.name + " (the cluster's GPU)" + suggest);
    const auto ff = c.gemm.find(gpu.form_factor);
    if (ff == c.gemm.end()) {
      std::vector<std::string> ffs;
      for (const auto& [f, m] : c.gemm) ffs.push_back(f);
      r.fail_at("compute_model", "compute model \"" + w.compute.name + "\" has GEMM ceilings for form factors " +
                                     join(ffs) + "; expected one of them, found " + gpu.form_factor + " (GPU " +
                                     gpu.name + ")" + suggest);
    }
    std::vector<std::string> fams;
    for (const auto& [f, p] : ff->second) fams.push_back(f == "fp16" ? "fp16, bf16" : f);
    if (!c.gemm_of(gpu.form_factor, train::gemm_family(w.precision)))
      r.fail_at("compute_model", "compute model \"" + w.compute.name + "\" has " + gpu.form_factor +
                                     " GEMM ceilings at precisions " + join(fams) + "; expected one of them, found " +
                                     w.precision + " (/workload/precision)" + suggest);
    if (gpu.sms <= 0)
      r.fail_at("compute_model",
                "the shaped model needs the GPU's streaming multiprocessors; GPU " + gpu.name + " has no \"sms\" fact");
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
      const train::Role role = static_cast<train::Role>(it - roles.begin());
      const Reader v = a->child(key);
      const std::string name = v.as_string();
      const auto* alg = coll::algorithms().find(name);
      if (!alg) v.fail(coll::algorithms().unknown_message(name));
      if (!fits_role(alg->factory()->kind(), role))
        v.fail("algorithm \"" + name + "\" performs " + coll::kind_name(alg->factory()->kind()) + "; the " + key +
               " role needs " + (role == train::Role::GradReduceScatter ? "reduce_scatter or allreduce"
                                 : role == train::Role::TensorAllReduce ? "allreduce" : key));
      w.algorithm_overrides[role] = name;
    }
    a->finish();
  }
  // Every role's algorithm must exist (a backend whose table names an unregistered algorithm).
  const auto roles = role_names();
  for (std::size_t i = 0; i < roles.size(); ++i) {
    const std::string name = w.algorithm(static_cast<train::Role>(i)).algorithm;
    if (!coll::algorithms().find(name))
      r.fail_at("backend", "backend \"" + w.backend + "\" runs " + name + " for the " + roles[i] + " role: " +
                               coll::algorithms().unknown_message(name));
  }
  w.flash_attention = r.has("flash_attention") ? r.fact("flash_attention").as_bool() : true;
  w.grad_bytes = element_bytes(dtype_choice(r, "grad_dtype", "fp32"));
  w.param_bytes = element_bytes(dtype_choice(r, "param_dtype", w.precision));
  w.optimizer = fact_choice(r, "optimizer", {"sgd", "adamw"}, "adamw");
  const Reader list = r.child("gpus", "the GPU counts to run, e.g. [32, 64, 128]");
  const std::vector<Reader> counts = list.elements("GPU count");
  if (counts.empty()) list.fail("expected at least one GPU count");
  w.impl = entry->factory(r, w);
  // GPU counts, each checked against the cluster and the workload's parallelism.
  const int per_node = static_cast<int>(cluster.node.gpus.size());
  for (const Reader& g : counts) {
    const int n = static_cast<int>(g.as_integer(1, 1 << 24));
    if (std::find(w.gpus.begin(), w.gpus.end(), n) != w.gpus.end())
      g.fail(std::to_string(n) + " GPUs appears twice in the list (its rows would repeat); give each count once");
    const std::string why = w.impl->check(w, n, cluster.gpus(), per_node);
    if (!why.empty()) g.fail(why);
    w.gpus.push_back(n);
  }
  return w;
}

}  // namespace ffsim::config
