// SPDX-License-Identifier: MIT
#pragma once
// Parameter and FLOP counts of a decoder-only model (Megatron's conventions: Narayanan et al. SC'21 Eq. 3
// and Korthikanti et al. 2022 App. A; attention scores counted over the full s x s matrix). Layers may
// differ: dense or mixture-of-experts FFNs, multi-head latent attention, windowed attention, Mamba-2
// mixers in hybrid stacks (docs/model-flops.md writes every formula down).
#include "vtrain/scenario.h"

namespace vtrain {

// What layer i is made of. Without a layer_pattern a layer is attention + FFN (dense, or MoE per `moe`);
// with one, each letter is a single sub-layer with its own pre-norm and residual.
enum class MixerKind { None, Attention, Mamba };
enum class FfnKind { None, Dense, Moe };
struct LayerKind {
    MixerKind mixer = MixerKind::Attention;
    FfnKind ffn = FfnKind::Dense;
    bool windowed = false; // attention over the last `sliding_window` tokens only
    bool operator==(const LayerKind&) const = default;
};
LayerKind layer_kind(const ModelSpec& m, int layer_index);
// The block a multi-token-prediction module carries: attention + the FFN kind of the last MoE/dense layer.
LayerKind mtp_block_kind(const ModelSpec& m);

// Widths used by costs and memory.
double routed_expert_ffn_hidden(const ModelSpec& m);       // one routed expert's width
double shared_expert_ffn_hidden_total(const ModelSpec& m); // all shared experts together, 0 = none
int mamba_heads(const ModelSpec& m);
double mamba_inner(const ModelSpec& m);  // heads x head_dim
double ffn_matrices(const ModelSpec& m); // 3 for gated (SwiGLU), 2 otherwise
// Keys one query attends to on average under the full-matrix convention (s for full attention).
double attention_keys_per_query(const ModelSpec& m, bool windowed);

// Parameters of layer 0 (unsharded), biases included for GELU (GPT-style) models; layer i with the index.
double layer_params(const ModelSpec& m);
double layer_params(const ModelSpec& m, int layer_index);
// Word embedding (+ learned positions for GELU/GPT-style models).
double embedding_params(const ModelSpec& m);
// Output projection to the vocabulary: 0 when tied to the input embedding.
double output_params(const ModelSpec& m);
// The main model: layers, embedding, output projection, final norm (MTP modules not included, as the
// DeepSeek-V3 report counts its 671B).
double total_params(const ModelSpec& m);
// One multi-token-prediction module's own parameters (norms, projection, its block; embedding and output
// head are shared with the main model).
double mtp_module_params(const ModelSpec& m);

// Layer i's parameters split by how they are sharded: `dense` ones (attention, norms, router, dense and
// shared-expert FFNs, Mamba mixers) are split by tp and replicated over cp x dp; `expert` ones (routed
// experts) are split by ep x etp and replicated over the expert data-parallel group.
struct LayerParamSplit {
    double dense = 0;
    double expert = 0;
    double total() const { return dense + expert; }
};
LayerParamSplit layer_param_split(const ModelSpec& m, int layer_index);
LayerParamSplit mtp_param_split(const ModelSpec& m); // one MTP module
// Parameters one token activates in the main model (routed experts counted top_k times, not `experts`
// times; embedding and output layer included).
double active_params(const ModelSpec& m);

// Forward FLOPs for one token: through layer 0 (or layer i), all layers, its attention core, the output
// layer, and one MTP module (its block, projection and own output head).
double layer_forward_flops_per_token(const ModelSpec& m);
double layer_forward_flops_per_token(const ModelSpec& m, int layer_index);
double layers_forward_flops_per_token(const ModelSpec& m);
double attention_core_forward_flops_per_token(const ModelSpec& m);
double attention_core_forward_flops_per_token(const ModelSpec& m, int layer_index);
double output_forward_flops_per_token(const ModelSpec& m);
double mtp_forward_flops_per_token(const ModelSpec& m);

// FLOPs per iteration: model FLOPs count forward + backward once (3 x forward) with active parameters only
// and MTP modules included; hardware FLOPs add the recomputed forward work.
double model_flops_per_iteration(const ModelSpec& m, int global_batch);
double hardware_flops_per_iteration(const ModelSpec& m, int global_batch, Recompute recompute);

} // namespace vtrain
