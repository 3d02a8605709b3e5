// SPDX-License-Identifier: MIT
#pragma once
// Memory per pipeline stage (one GPU): weights, gradients and optimizer states (sharded over the data-
// parallel group with ZeRO), and activations after Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", Sec. 4, Table 2), times the micro-batches the schedule
// keeps in flight on that stage.
#include <vector>

#include "vtrain/scenario.h"

namespace vtrain {

struct StageMemory {
    double weights_bytes = 0;
    double gradients_bytes = 0;
    double optimizer_bytes = 0;
    double activations_bytes = 0; // stored for the micro-batches in flight
    double working_bytes = 0;     // transient: one layer's full activations during its backward, logits
    double total_bytes() const { return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + working_bytes; }
};

// Activation bytes one transformer layer keeps for one micro-batch until its backward.
double layer_activation_bytes(const ModelSpec& m, const TrainingSpec& t, int micro_batch, int tp, bool sequence_parallel,
                              Recompute recompute);

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

// `in_flight_layers[s]`: the largest number of (micro-batch, layer) activation sets stage s holds at
// once, from the pipeline schedule.
std::vector<StageMemory> stage_memory(const ModelSpec& m, const TrainingSpec& t, const Plan& plan,
                                      const std::vector<double>& in_flight_layers);

} // namespace vtrain
