// SPDX-License-Identifier: MIT
#pragma once
// Per-micro-batch operator costs of one GPU: a transformer layer split into its operators (QKV,
// attention core, projection, FFN GEMMs, norms, activation, dropout/residual), the embedding of the
// first stage and the output layer + loss of the last. Tensor-parallel collectives run on the compute
// stream between operators (Megatron does not overlap them), so each phase is a sum of compute and
// tensor-communication seconds.
#include <string>
#include <vector>

#include "vtrain/comm_model.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/scenario.h"

namespace vtrain {

// Seconds of one phase on the compute stream: kernels, plus the communication that is not hidden behind
// them (tensor-parallel collectives, expert dispatch/combine, context-parallel exchange).
struct PhaseTime {
    double compute_s = 0;
    double tp_comm_s = 0;
    double ep_comm_s = 0; // expert-parallel dispatch + combine (all-to-all or all-gather), exposed part
    double cp_comm_s = 0; // context-parallel KV exchange (ring) or all-to-all, exposed part
    double comm_s() const { return tp_comm_s + ep_comm_s + cp_comm_s; }
    double total_s() const { return compute_s + comm_s(); }
    PhaseTime& operator+=(const PhaseTime& o)
    {
        compute_s += o.compute_s;
        tp_comm_s += o.tp_comm_s;
        ep_comm_s += o.ep_comm_s;
        cp_comm_s += o.cp_comm_s;
        return *this;
    }
};

struct BlockCost {
    PhaseTime forward;
    PhaseTime backward;
    PhaseTime recompute; // forward work redone before the backward (selective or full)
};

enum class Phase { Forward, Backward, Recompute };

struct OperatorTime {
    std::string name;
    Phase phase = Phase::Forward;
    double seconds = 0;
    bool communication = false;
};

struct LayerCosts {
    BlockCost layer;     // one transformer layer (the first; all of them when `layers` is empty)
    // Layer i's cost when layers differ (dense and MoE FFNs, Mamba-2 mixers, windowed attention); empty
    // when every layer costs `layer`.
    std::vector<BlockCost> layers;
    BlockCost mtp;       // one multi-token-prediction module, last stage only
    const BlockCost& layer_at(int i) const { return layers.empty() ? layer : layers[static_cast<std::size_t>(i)]; }
    BlockCost embedding; // first stage only
    BlockCost head;      // last stage only: final norm, output projection, cross-entropy
    std::vector<OperatorTime> layer_operators; // one layer, for reports and the timeline's tooltips
};

struct LayerCostInput {
    const ModelSpec* model = nullptr;
    const TrainingSpec* training = nullptr;
    const GpuProfile* profile = nullptr;
    const CommModel* comm = nullptr;
    int tp = 1;
    int micro_batch = 1;
    bool sequence_parallel = false;
    Recompute recompute = Recompute::None;
    GroupPlacement tp_group;
};

LayerCosts compute_layer_costs(const LayerCostInput& in);

} // namespace vtrain
