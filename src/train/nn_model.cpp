// The model zoo: deriving per-layer costs.
// SPDX-License-Identifier: Apache-2.0
#include "train/nn_model.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::train {

namespace {

// Weights of one linear map (no FLOPs for biases and norms: they are memory-bound).
struct Linear {
  double weights = 0;  // multiply-accumulate weights: 2 FLOPs each per token
  double other = 0;    // biases and norm parameters
};

}  // namespace

namespace {

// Output size of a window of `k` moved by `stride` over `size` pixels.
double out_size(double size, int k, int stride, bool valid) {
  return valid ? std::floor((size - k) / stride) + 1 : std::ceil(size / stride);
}

// A convolution of `k` x `k` from `ch` to `co` channels on a `size` square input.
LayerCost conv_cost(const CnnSpec& c, std::string name, double ch, double co, int k, int stride, bool valid,
                    double& size) {
  LayerCost x;
  x.name = std::move(name);
  const double k2 = static_cast<double>(k) * k, out = out_size(size, k, stride, valid);
  // Weights k^2 Cin Cout, and Cout biases or (batch norm) a scale and a shift per channel;
  // 2 k^2 Cin Cout Hout Wout FLOPs per image: an implicit GEMM of Hout Wout rows, Cout columns and
  // k^2 Cin terms.
  x.params = k2 * ch * co + (c.batch_norm ? 2 * co : co);
  x.conv_flops = 2 * k2 * ch * co * out * out;
  x.gemms.push_back(GemmOp{GemmOp::Kind::Conv, out * out, co, k2 * ch, 1});
  x.output_elems = co * out * out;
  // [I] batch norm stores its input and ReLU its output: two elements per output element.
  x.memory_elems = c.batch_norm ? 2 * x.output_elems : x.output_elems;
  size = out;
  return x;
}

std::vector<LayerCost> cnn_costs(const CnnSpec& c) {
  std::vector<LayerCost> out;
  double ch = c.input_channels, size = c.input_size;
  int block = 1, in_block = 0, fc = 0, stage = 1;
  bool flat = false;
  double features = 0;
  const auto push = [&](LayerCost x) {
    x.active_params = x.params;
    out.push_back(std::move(x));
  };
  for (const CnnLayer& l : c.layers) {
    switch (l.type) {
      case CnnLayer::Type::Conv: {
        const int k = l.kernel > 0 ? l.kernel : c.kernel, st = l.stride > 0 ? l.stride : 1;
        push(conv_cost(c, "conv" + std::to_string(block) + "_" + std::to_string(++in_block), ch, l.channels, k, st,
                       l.valid, size));
        ch = l.channels;
        break;
      }
      case CnnLayer::Type::Pool: {
        LayerCost x;
        x.name = "pool" + std::to_string(block);
        x.memory_elems = ch * size * size;  // reads its input once
        if (l.stride > 0)
          size = out_size(size, l.channels, l.stride, l.valid);
        else
          size /= l.channels;
        x.output_elems = ch * size * size;
        ++block;
        in_block = 0;
        push(x);
        break;
      }
      case CnnLayer::Type::Bottleneck: {
        ++stage;
        const double w = l.channels, wide = 4.0 * l.channels;
        for (int b = 0; b < l.repeat; ++b) {
          const int st = b == 0 && l.stride > 0 ? l.stride : 1;
          const std::string name = "res" + std::to_string(stage) + "." + std::to_string(b + 1);
          const double in_size = size;
          push(conv_cost(c, name + "a", ch, w, 1, l.stride_on_1x1 ? st : 1, false, size));
          push(conv_cost(c, name + "b", w, w, 3, l.stride_on_1x1 ? 1 : st, false, size));
          push(conv_cost(c, name + "c", w, wide, 1, 1, false, size));
          if (b == 0) {
            double s2 = in_size;
            push(conv_cost(c, name + "proj", ch, wide, 1, st, false, s2));
          }
          // The residual sum and its ReLU: one stored element per output element.
          LayerCost add;
          add.name = name + "add";
          add.output_elems = wide * size * size;
          add.memory_elems = add.output_elems;
          push(add);
          ch = wide;
        }
        break;
      }
      case CnnLayer::Type::Fc: {
        if (!flat) {
          features = ch * size * size;
          flat = true;
        }
        // in x out weights + out biases; 2 in out FLOPs per image.
        LayerCost x;
        const double fo = l.channels;
        x.name = "fc" + std::to_string(block - 1 + (++fc));  // after 5 conv blocks: fc6, fc7, fc8
        x.params = features * fo + fo;
        x.gemm_flops = 2 * features * fo;
        x.gemms.push_back(GemmOp{GemmOp::Kind::Linear, 1, fo, features, 1});
        x.output_elems = fo;
        x.memory_elems = fo;
        features = fo;
        push(x);
        break;
      }
    }
  }
  // The first layer's input is data: no input gradient.
  if (!out.empty()) out.front().needs_input_grad = false;
  return out;
}

std::vector<LayerCost> transformer_costs(const TransformerSpec& t, int seq, bool flash) {
  std::vector<LayerCost> out;
  const double h = t.hidden, s = seq, heads = t.heads;
  const double norm = t.layernorm ? 2 * h : h;  // weight (+ bias) per norm
  {
    LayerCost e;
    e.name = "embedding";
    e.params = (static_cast<double>(t.vocab) + t.learned_positions) * h;
    e.active_params = e.params;
    e.memory_elems = s * h;
    e.output_elems = s * h;
    e.needs_input_grad = false;
    out.push_back(e);
  }
  // Attention: projections and the dimensions of scores (q.k) and values.
  Linear attn;
  double d_qk = 0, d_v = 0;
  if (t.mla) {
    const MlaSpec& a = *t.mla;
    const double qk = static_cast<double>(a.qk_nope_head_dim) + a.qk_rope_head_dim;
    // DeepSeek-V2 (arXiv 2405.04434 Sec. 2.1): q = W_UQ (norm(W_DQ x)), [c_kv, k_rope] = W_DKV x,
    // [k_nope, v] = W_UKV norm(c_kv), out = W_O v.
    if (a.q_lora_rank > 0) {
      attn.weights += h * a.q_lora_rank + a.q_lora_rank * heads * qk;
      attn.other += a.q_lora_rank;
    } else {
      attn.weights += h * heads * qk;
    }
    attn.weights += h * (static_cast<double>(a.kv_lora_rank) + a.qk_rope_head_dim) +
                    a.kv_lora_rank * heads * (static_cast<double>(a.qk_nope_head_dim) + a.v_head_dim) +
                    heads * a.v_head_dim * h;
    attn.other += a.kv_lora_rank;
    d_qk = qk;
    d_v = a.v_head_dim;
  } else {
    const double hd = h / heads, kv = static_cast<double>(t.kv_heads) * hd;
    // q and o are h x h; k and v are h x (kv_heads x head_dim) (grouped-query attention).
    attn.weights = 2 * h * h + 2 * h * kv;
    if (t.bias) attn.other = 2 * h + 2 * kv;
    d_qk = d_v = hd;
  }
  const double mats = t.gated_ffn ? 3 : 2;
  // Causal attention: blockwise kernels skip the blocks above the diagonal (half the score
  // matrix); a materialised implementation computes all of it and masks.
  // Encoder attention (not causal) always computes the whole matrix.
  const double ctx = flash && t.causal ? s / 2 : s;
  using K = GemmOp::Kind;
  // The attention's projections by shape (per sample: s rows each).
  std::vector<GemmOp> attn_ops;
  if (t.mla) {
    const MlaSpec& a = *t.mla;
    const double qk = static_cast<double>(a.qk_nope_head_dim) + a.qk_rope_head_dim;
    if (a.q_lora_rank > 0) {
      attn_ops.push_back(GemmOp{K::Linear, s, static_cast<double>(a.q_lora_rank), h, 1});
      attn_ops.push_back(GemmOp{K::Linear, s, heads * qk, static_cast<double>(a.q_lora_rank), 1});
    } else {
      attn_ops.push_back(GemmOp{K::Linear, s, heads * qk, h, 1});
    }
    attn_ops.push_back(GemmOp{K::Linear, s, static_cast<double>(a.kv_lora_rank) + a.qk_rope_head_dim, h, 1});
    attn_ops.push_back(GemmOp{K::Linear, s, heads * (static_cast<double>(a.qk_nope_head_dim) + a.v_head_dim),
                              static_cast<double>(a.kv_lora_rank), 1});
    attn_ops.push_back(GemmOp{K::Linear, s, h, heads * a.v_head_dim, 1});
  } else {
    const double kv = static_cast<double>(t.kv_heads) * (h / heads);
    attn_ops.push_back(GemmOp{K::Linear, s, h + 2 * kv, h, 1});  // q, k, v fused
    attn_ops.push_back(GemmOp{K::Linear, s, h, h, 1});           // o
  }
  for (int i = 0; i < t.layers; ++i) {
    LayerCost b;
    b.name = "block " + std::to_string(i);
    Linear ffn;
    double f_active = 0;
    if (t.moe && i >= t.moe->first_dense_layers) {
      const MoeSpec& m = *t.moe;
      const double expert = mats * h * m.expert_ffn_hidden;
      const double router = static_cast<double>(m.routed_experts) * h;
      b.moe = true;
      b.routed_params = m.routed_experts * expert;
      b.params = (static_cast<double>(m.routed_experts) + m.shared_experts) * expert + router;
      ffn.weights = (static_cast<double>(m.top_k) + m.shared_experts) * expert + router;
      f_active = (static_cast<double>(m.top_k) + m.shared_experts) * m.expert_ffn_hidden;
      b.dispatch_elems = s * m.top_k * h;
      // The router, then each token's top_k routed and the shared experts (one GEMM per matrix kind).
      const double rows = s * (static_cast<double>(m.top_k) + m.shared_experts), ef = m.expert_ffn_hidden;
      b.gemms.push_back(GemmOp{K::Linear, s, static_cast<double>(m.routed_experts), h, 1});
      b.gemms.push_back(GemmOp{K::Linear, rows, (mats - 1) * ef, h, 1});
      b.gemms.push_back(GemmOp{K::Linear, rows, h, ef, 1});
    } else {
      const double f = t.ffn_hidden;
      b.gemms.push_back(GemmOp{K::Linear, s, (mats - 1) * f, h, 1});  // up (and gate)
      b.gemms.push_back(GemmOp{K::Linear, s, h, f, 1});               // down
      ffn.weights = mats * h * t.ffn_hidden;
      if (t.bias) ffn.other = t.ffn_hidden + h;
      b.params = ffn.weights + ffn.other;
      f_active = t.ffn_hidden;
    }
    b.params += attn.weights + attn.other + 2 * norm;
    b.active_params = attn.weights + attn.other + 2 * norm + ffn.weights + ffn.other;
    b.gemm_flops = 2 * s * (attn.weights + ffn.weights);
    // q.k^T over `ctx` keys and the weighted sum of values, per head: 2 FLOPs per multiply-add.
    b.attention_flops = 2 * s * ctx * heads * (d_qk + d_v);
    b.gemms.insert(b.gemms.begin(), attn_ops.begin(), attn_ops.end());
    b.gemms.push_back(GemmOp{K::Attention, s, ctx, d_qk, heads});  // scores q.k
    b.gemms.push_back(GemmOp{K::Attention, s, d_v, ctx, heads});   // weighted values
    // Stored activations, after Korthikanti et al. 2022 (arXiv 2205.05198) Sec. 4.1: 34 s h bytes of
    // 16-bit activations per layer = 9 h elements per token outside the MLP's hidden units plus
    // 2 per hidden unit (GELU: its input and output; 3 with a gate); 5 a s bytes (2.5 a s elements)
    // per token of scores, softmax and dropout when attention is materialised.
    b.score_elems = flash ? 0.0 : 2.5 * heads * s * s;
    b.memory_elems = s * (9 * h + mats * f_active) + b.score_elems;
    b.output_elems = s * h;
    out.push_back(b);
  }
  {
    LayerCost o;
    o.name = "head";
    o.params = norm + (t.tied_embeddings ? 0.0 : static_cast<double>(t.vocab) * h);
    o.active_params = o.params;  // a tied head is the embedding's matrix, counted there
    if (t.lm_head) {
      o.gemm_flops = 2 * s * h * t.vocab;
      o.gemms.push_back(GemmOp{GemmOp::Kind::Linear, s, static_cast<double>(t.vocab), h, 1});
      // The final norm's output, the logits and their softmax for the loss.
      o.memory_elems = s * (h + 2.0 * t.vocab);
    } else {
      o.memory_elems = s * h;  // [I] the task head (a few outputs per token) is negligible
    }
    o.output_elems = 0;
    out.push_back(o);
  }
  return out;
}

}  // namespace

std::vector<LayerCost> layer_costs(const NnModelSpec& m, int seq, bool flash_attention) {
  if (m.architecture == "cnn") return cnn_costs(m.cnn);
  return transformer_costs(m.transformer, seq, flash_attention);
}

double total_params(const std::vector<LayerCost>& layers) {
  double p = 0;
  for (const auto& l : layers) p += l.params;
  return p;
}

double forward_flops(const std::vector<LayerCost>& layers) {
  double f = 0;
  for (const auto& l : layers) f += l.gemm_flops + l.conv_flops + l.attention_flops;
  return f;
}

}  // namespace ffsim::train
