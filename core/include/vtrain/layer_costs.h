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
    // Expert dispatch/combine that moe_overlap hid behind the compute of the micro-batch paired with this one
    // (not part of the phase's time): a pass that runs unpaired exposes it (iteration_costs.cpp).
    double ep_hidden_s = 0;
    double comm_s() const { return tp_comm_s + ep_comm_s + cp_comm_s; }
    double total_s() const { return compute_s + comm_s(); }
    PhaseTime& operator+=(const PhaseTime& o)
    {
        compute_s += o.compute_s;
        tp_comm_s += o.tp_comm_s;
        ep_comm_s += o.ep_comm_s;
        cp_comm_s += o.cp_comm_s;
        ep_hidden_s += o.ep_hidden_s;
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
    // Which traffic a communication operator is (for the timeline's lanes): tensor-parallel collectives,
    // expert dispatch/combine (+ ETP gather/scatter), or the context-parallel exchange.
    enum class Stream { Compute, Tensor, Expert, Context };
    Stream stream = Stream::Compute;
};

struct LayerCosts {
    BlockCost layer; // one transformer layer (the first; all of them when `layers` is empty)
    // Layer i's cost when layers differ (dense and MoE FFNs, Mamba-2 mixers, windowed attention); empty
    // when every layer costs `layer`.
    std::vector<BlockCost> layers;
    BlockCost mtp; // one multi-token-prediction module, last stage only
    const BlockCost& layer_at(int i) const { return layers.empty() ? layer : layers[static_cast<std::size_t>(i)]; }
    BlockCost embedding; // first stage only
    BlockCost head;      // last stage only: final norm, output projection, cross-entropy
    // One layer, for reports and the timeline's tooltips: the most common layer kind (the MoE layer of
    // DeepSeek-V3, layer 0 of a dense model).
    std::vector<OperatorTime> layer_operators;
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
    unsigned recompute_modules = 0; // Plan::recompute_modules: parts redone on top of `recompute`
    GroupPlacement tp_group;

    // Context parallelism: each rank holds seq_len / cp tokens (causal load balancing); ring attention
    // passes KV blocks around cp_group, the all-to-all variant splits heads.
    int cp = 1;
    ContextParallelKind cp_kind = ContextParallelKind::Ring;
    GroupPlacement cp_group;
    // Expert layers: experts split over ep ranks (ep_group, all-to-all dispatch/combine), each expert's
    // width over etp ranks (etp_group; 0 = tp, Megatron's default). Groups left unplaced (size 1 while the
    // degree is larger) are placed in Megatron's default rank order inside the NVLink domain.
    int ep = 1;
    int etp = 0;
    GroupPlacement ep_group;
    GroupPlacement etp_group;
    bool moe_overlap = false; // dispatch/combine hidden behind the layer's compute (max instead of sum)
    bool tp_overlap = false;  // tensor-parallel collectives overlapped with the GEMMs they feed
    // Share of tensor-parallel traffic hidden when tp_overlap is on. Default 0.75: Megatron/TE pipeline a
    // GEMM's reduce-scatter in 4 chunks and the last chunk stays exposed (MB performance-guide.md, TE
    // userbuffers defaults; shared/research/modern-training.md Sec. 7). Never more than the GEMM time.
    double tp_overlap_hidden_fraction = 0.75;
};

LayerCosts compute_layer_costs(const LayerCostInput& in);

// Whether torchao's rowwise FP8 speeds up a Linear of this (per-rank) shape on H100: torchao's rowwise
// auto-filter thresholds (model/low_precision.cpp); below them the GEMM runs at the BF16 rate.
bool rowwise_gains(double out_features, double in_features);

} // namespace vtrain
