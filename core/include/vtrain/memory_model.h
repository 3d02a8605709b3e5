// SPDX-License-Identifier: MIT
#pragma once
// Memory per pipeline stage (one GPU): weights, gradients and optimizer states (sharded over the data-
// parallel group with ZeRO), and activations after Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", Sec. 4, Table 2), times the micro-batches the schedule
// keeps in flight on that stage.
#include <vector>

#include "vtrain/pipeline_layout.h"
#include "vtrain/scenario.h"

namespace vtrain {

struct StageMemory {
    double weights_bytes = 0;
    double gradients_bytes = 0;
    double optimizer_bytes = 0;
    double activations_bytes = 0; // stored for the micro-batches in flight
    double working_bytes = 0;     // transient: one layer's full activations during its backward, logits
    // Of the three model-state parts above, what the routed experts take (sharded over ep x etp, and over
    // the expert data-parallel group where the optimizer shards); the rest is dense. Not added to the total.
    double expert_weights_bytes = 0;
    double expert_gradients_bytes = 0;
    double expert_optimizer_bytes = 0;
    double total_bytes() const { return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + working_bytes; }
};

// Activation bytes one transformer layer keeps for one micro-batch until its backward.
double layer_activation_bytes(const ModelSpec& m, const TrainingSpec& t, int micro_batch, int tp, bool sequence_parallel, Recompute recompute);

// Activation bytes layer `layer_index` keeps for one micro-batch until its backward, on one GPU of the plan,
// for every layer kind: attention (MHA/GQA, MLA with its compressed latents), Mamba-2 mixers (states of
// each chunk), dense and MoE FFNs (router scores, the dispatched rows this rank's experts process with
// the busiest rank's imbalance, expert intermediates, shared experts). Tokens are split by cp; tensors of
// width h are split by tp only with sequence parallelism, head/FFN-width tensors always by tp, expert
// widths by etp. Korthikanti's 34 s b h (+ 5 a s^2 b unfused) for a GPT layer. FP8/FP4 GEMM inputs are kept
// in 1 byte (Transformer Engine saves the quantized copy).
double layer_activation_bytes_at(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, int layer_index);
double layer_activation_bytes_at(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, int layer_index, Recompute recompute);
// One multi-token-prediction module (its block, the two norms and the 2h -> h projection's input).
double mtp_activation_bytes(const ModelSpec& m, const TrainingSpec& t, const Plan& plan);

// Parameters held by one GPU of each stage (tensor-parallel shard), embedding and output layer included.
std::vector<double> stage_params(const ModelSpec& m, int tp, int pp);

// Parameters one GPU holds, by how they are sharded (Megatron-Core parallel folding): `dense` ones
// (attention, norms, dense and shared-expert FFNs) split by tp and replicated over dp x cp; routed
// `expert` ones split by ep x etp and replicated over the expert data-parallel group; the `vocab`
// tables (embedding, output layer) split by tp and kept in high precision by every low-precision recipe.
struct ParamShare {
    double dense = 0;
    double expert = 0;
    double vocab = 0;
    double total() const { return dense + expert + vocab; }
    ParamShare& operator+=(const ParamShare& o)
    {
        dense += o.dense;
        expert += o.expert;
        vocab += o.vocab;
        return *this;
    }
};

// What one GPU of a virtual stage holds: its layers, MTP modules, embedding and output layer.
ParamShare virtual_stage_params(const ModelSpec& m, const Plan& plan, const VirtualStage& stage);
// LoRA adapters one GPU of a virtual stage holds on top of its base weights (split by tp like their layers;
// 0 unless TrainingSpec::mode is lora).
double adapter_stage_params(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, const VirtualStage& stage);
// What one GPU of a virtual stage trains, with gradients, optimizer state and data-parallel reduction: every
// parameter (virtual_stage_params), or under LoRA only its adapters (dense: replicated over dp x cp).
ParamShare trainable_stage_params(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, const VirtualStage& stage);
// The largest single layer on one GPU (the unit ZeRO-3 gathers).
double largest_layer_params(const ModelSpec& m, const Plan& plan);

// Bytes per parameter of each kind of state, per training precision (see memory_model.cpp for sources).
struct ParamBytes {
    double weight = 2;        // compute copy (bf16/fp16; fp32 for fp32 training)
    double low_precision = 0; // FP8/FP4 copies of decoder weights (row- and column-wise) kept by the recipe
    double gradient = 4;      // main gradients (fp32 unless fp16 training)
    double optimizer = 12;    // fp32 master copy + Adam moments (moments only for fp32 training)
    double gather = 2;        // bytes per parameter a ZeRO-3 all-gather moves
    double layer_weight = 2;  // high-precision copy of the decoder weights: 0 when only their FP8 copies are kept
    double layer_gather = 2;  // bytes per decoder parameter the distributed optimizer's all-gather moves
};
ParamBytes param_bytes(const TrainingSpec& t, const Plan& plan);

// How many GPUs share one copy of the optimizer state (and, by stage, gradients and parameters).
struct ShardDegrees {
    int dense = 1;    // dp x cp, or shard_group (hybrid shard)
    int expert = 1;   // the expert data-parallel group (its share of replicas removed under hybrid shard)
    int replicas = 1; // dense copies across shard groups
};
int expert_data_parallel(const Plan& plan);   // tp x cp x dp / (ep x etp)
ShardDegrees shard_degrees(const Plan& plan); // all 1 with zero_stage 0

// GPU memory with the plan's offload applied to one stage: no optimizer states with offload_optimizer;
// stashed activations reduced by the offloaded share, keeping two copy buffers of `one_layer_bytes` (one
// micro-batch through the stage's largest layer) for the offloaded layers (Transformer Engine's double
// buffering; model/host_offload.h times the copies).
void apply_host_offload(const Plan& plan, double one_layer_bytes, StageMemory& memory);

// `in_flight_chunks[s]`: the largest number of (micro-batch, chunk) activation sets stage s holds at
// once, from the pipeline schedule.
std::vector<StageMemory> stage_memory(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, const PipelineLayout& layout,
                                      const std::vector<int>& in_flight_chunks);

} // namespace vtrain
