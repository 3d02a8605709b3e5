// SPDX-License-Identifier: MIT
#pragma once
// Parameter and FLOP counts of a decoder-only transformer (Megatron's conventions: Narayanan et al.
// SC'21 Eq. 3 and Korthikanti et al. 2022 App. A; attention scores counted over the full s x s matrix).
#include "vtrain/scenario.h"

namespace vtrain {

// Parameters of one transformer layer (unsharded), biases included for GELU (GPT-style) models.
double layer_params(const ModelSpec& m);
// Word embedding (+ learned positions for GELU/GPT-style models).
double embedding_params(const ModelSpec& m);
// Output projection to the vocabulary: 0 when tied to the input embedding.
double output_params(const ModelSpec& m);
double total_params(const ModelSpec& m);

// Layer i's parameters split by how they are sharded: `dense` ones (attention, norms, dense and shared-
// expert FFNs, Mamba mixers) are split by tp and replicated over cp x dp; `expert` ones (routed experts)
// are split by ep x etp and replicated over the expert data-parallel group.
struct LayerParamSplit {
    double dense = 0;
    double expert = 0;
    double total() const { return dense + expert; }
};
LayerParamSplit layer_param_split(const ModelSpec& m, int layer_index);
// Parameters one token activates (routed experts counted top_k times, not `experts` times).
double active_params(const ModelSpec& m);

// Forward FLOPs for one token through one transformer layer, and through the output layer.
double layer_forward_flops_per_token(const ModelSpec& m);
double attention_core_forward_flops_per_token(const ModelSpec& m);
double output_forward_flops_per_token(const ModelSpec& m);

// FLOPs per iteration: model FLOPs count forward + backward once (3 x forward); hardware FLOPs add the
// recomputed forward work.
double model_flops_per_iteration(const ModelSpec& m, int global_batch);
double hardware_flops_per_iteration(const ModelSpec& m, int global_batch, Recompute recompute);

} // namespace vtrain
