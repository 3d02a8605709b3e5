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

// Parameters held by one GPU of each stage (tensor-parallel shard), embedding and output layer included.
std::vector<double> stage_params(const ModelSpec& m, int tp, int pp);

// `in_flight_layers[s]`: the largest number of (micro-batch, layer) activation sets stage s holds at
// once, from the pipeline schedule.
std::vector<StageMemory> stage_memory(const ModelSpec& m, const TrainingSpec& t, const Plan& plan,
                                      const std::vector<double>& in_flight_layers);

} // namespace vtrain
