// The model zoo: neural-network architectures (catalog kind "nn_model", read by
// config/train_reader.hpp) and the per-layer parameters, FLOPs and activation sizes derived from them.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ffsim::train {

/// One layer of a convolutional network. By default a convolution has the model's kernel, stride 1
/// and "same" padding (it keeps the spatial size: VGG's config D), a pool's stride is its window, and
/// fully connected layers flatten what comes before them. A bottleneck is ResNet's residual block
/// (He et al., arXiv 1512.03385 Table 1): 1x1 to `channels`, 3x3, 1x1 to 4 x `channels`, plus a 1x1
/// projection of the block's input in the first of `repeat` blocks, whose stride is `stride`.
struct CnnLayer {
  enum class Type { Conv, Pool, Fc, Bottleneck } type = Type::Conv;
  int channels = 0;  ///< Conv: output channels; Fc: output features; Pool: window; Bottleneck: width
  int kernel = 0;    ///< Conv: 0 = the model's conv_kernel
  int stride = 0;    ///< Conv: 0 = 1; Pool: 0 = its window; Bottleneck: the first block's stride (0 = 1)
  /// "valid" padding: output floor((size - kernel) / stride) + 1; else "same": ceil(size / stride).
  bool valid = false;
  int repeat = 1;              ///< Bottleneck: blocks
  bool stride_on_1x1 = false;  ///< Bottleneck: ResNet v1 strides the first 1x1; v1.5 the 3x3
};

/// One matrix product of a layer's forward pass, for one sample: rows x n outputs, each a sum over
/// k (FLOPs 2 batch rows n k). Linear and convolution products have weights (n x k: a weight
/// gradient in the backward pass); attention's score and value products do not.
struct GemmOp {
  enum class Kind { Linear, Conv, Attention } kind = Kind::Linear;
  double rows = 0;  ///< per sample: tokens, output pixels (convolution as implicit GEMM), queries
  double n = 0, k = 0;
  double batch = 1;  ///< per sample: independent products of this shape (attention: heads)
};

/// Multi-head latent attention (DeepSeek-V2): low-rank query and key-value projections.
struct MlaSpec {
  int q_lora_rank = 0;   ///< 0: a full-rank query projection
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

/// Mixture-of-experts feed-forward layers (DeepSeekMoE): shared experts every token uses, routed
/// experts of which each token uses top_k.
struct MoeSpec {
  int first_dense_layers = 0;  ///< leading layers with a dense feed-forward of ffn_hidden
  int routed_experts = 0;
  int shared_experts = 0;
  int top_k = 0;
  int expert_ffn_hidden = 0;   ///< hidden width of one expert
};

struct TransformerSpec {
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;            ///< grouped-query attention; = heads for multi-head attention
  int ffn_hidden = 0;          ///< dense feed-forward width
  bool gated_ffn = false;      ///< SwiGLU (3 matrices) rather than GELU (2 matrices)
  bool bias = false;           ///< linear layers carry biases
  bool layernorm = true;       ///< LayerNorm (weight + bias) rather than RMSNorm (weight)
  int vocab = 0;
  int learned_positions = 0;   ///< rows of a learned position embedding (0: rotary)
  bool tied_embeddings = false;
  int max_sequence = 0;
  /// Decoder attention (each token attends to those before it); false for encoders (BERT).
  bool causal = true;
  /// The vocabulary projection at the end; false for encoders fine-tuned with a small task head.
  bool lm_head = true;
  std::optional<MlaSpec> mla;
  std::optional<MoeSpec> moe;
};

struct CnnSpec {
  int input_channels = 0;
  int input_size = 0;          ///< square images
  int kernel = 3;
  /// Batch normalisation after every convolution (convolutions then carry no bias).
  bool batch_norm = false;
  std::vector<CnnLayer> layers;
};

/// A catalog "nn_model" entry.
struct NnModelSpec {
  std::string name;
  std::string description;
  std::string architecture;    ///< "cnn" or "transformer"
  CnnSpec cnn;
  TransformerSpec transformer;
  /// The parameter count its authors publish: a validation target for the derivation, never an input.
  std::optional<double> published_parameters;
};

/// Work of one layer for one sample (an image, or a sequence of `seq` tokens), forward pass.
struct LayerCost {
  std::string name;             ///< "conv3_2", "fc6", "block 7", "embedding", "head"
  double params = 0;            ///< parameters stored
  double active_params = 0;     ///< parameters one token uses (MoE: shared + top_k routed experts)
  double gemm_flops = 0;        ///< dense matrix products (linear layers)
  double conv_flops = 0;        ///< convolutions (implicit GEMM)
  double attention_flops = 0;   ///< score and value products of attention
  double memory_elems = 0;      ///< activation elements stored for backward (drives memory-bound work)
  double score_elems = 0;       ///< of memory_elems: attention's materialised scores, softmax and dropout
  double output_elems = 0;      ///< elements of the layer's output (what a pipeline stage sends on)
  bool needs_input_grad = true; ///< false for the first layer: backward computes weight gradients only
  bool moe = false;             ///< a mixture-of-experts layer
  double routed_params = 0;     ///< MoE: parameters of the routed experts (split over expert-parallel ranks)
  double dispatch_elems = 0;    ///< MoE: elements sent to routed experts per sample (tokens x top_k x hidden)
  /// The forward pass's matrix products by shape (their FLOPs sum to gemm + conv + attention FLOPs).
  std::vector<GemmOp> gemms;
};

/// The layers of `m` for one sample of `seq` tokens (ignored by CNNs). Causal attention computed
/// blockwise (FlashAttention) costs half the full score matrix and stores no scores when
/// `flash_attention`; otherwise the full matrix and its softmax are materialised. Encoder
/// (non-causal) attention always computes the full matrix.
[[nodiscard]] std::vector<LayerCost> layer_costs(const NnModelSpec& m, int seq, bool flash_attention);

/// Sum of parameters over layers.
[[nodiscard]] double total_params(const std::vector<LayerCost>& layers);
/// Forward FLOPs of all kinds over layers, per sample.
[[nodiscard]] double forward_flops(const std::vector<LayerCost>& layers);

}  // namespace ffsim::train
