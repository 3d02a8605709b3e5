// SPDX-License-Identifier: MIT
#pragma once
// Structural rules a plan must satisfy before it can be simulated (the constraints Megatron-LM imposes),
// each with a reason code the explorer counts and a message that names the field.
#include <optional>
#include <string>

#include "vtrain/diagnostic.h"
#include "vtrain/scenario.h"

namespace vtrain {

enum class RejectReason {
    GpuCountMismatch,         // tp x cp x pp x dp != number of GPUs
    TpNotDividingHeads,       // tp must divide attention (and key/value) heads
    TpNotDividingFfn,         // tp must divide the FFN width
    PpNotDividingLayers,      // layers split evenly over pipeline stages (and virtual stages)
    BatchNotDivisible,        // global batch must be a multiple of dp x micro-batch
    InterleavedNeedsPipeline, // interleaving needs pp >= 2, virtual_stages >= 2, micro-batches % pp == 0
    SequenceParallelNeedsTp,  // sequence parallelism needs tp >= 2
    TpSpansNodes,             // tensor parallelism wider than a node (explorer default only)
    OutOfMemory,              // a stage's peak memory exceeds the usable capacity
    ContextParallelInvalid,   // cp: sequence not divisible by 2 x cp, heads not divisible for the all-to-all kind
    ExpertParallelInvalid,    // ep / etp: no experts, experts % ep, ep x etp not dividing a stage's GPUs, ...
    PipelineLayoutInvalid,    // first/last stage layers or the explicit layout do not fit the model and pp
    ShardingInvalid,          // zero_stage / shard_group / overlap_param_gather do not go together
    OverlapInvalid,           // tp_overlap without tp >= 2 and SP; moe_overlap without ep > 1 or with full recompute
    NotModeled,               // uses a feature the simulator does not model yet (model_support.h)
    TooLargeToSimulate,       // more forward passes per iteration than kMaxSimulatedPasses
    CudaGraphInvalid,         // a CUDA-graph scope the model cannot be captured with (the whole MoE layer needs static shapes)
    Count
};

const char* to_string(RejectReason reason);

struct PlanRejection {
    RejectReason reason;
    Diagnostic diagnostic;
};

// Why Megatron-Core cannot capture the training's CUDA-graph scope for this model, or "" when it can: the
// "moe" scope (the whole MoE layer) needs static expert shapes, token dropping padded to capacity.
std::string cuda_graph_scope_refusal(const ModelSpec& model, const TrainingSpec& training);

// Checks divisibility and schedule rules (not memory: that needs the simulation's memory model).
std::optional<PlanRejection> check_plan(const ModelSpec& model, const TrainingSpec& training, const Plan& plan, int num_gpus);

// Why Megatron-Core (and so Megatron-Bridge) refuses the plan's expert all-to-all overlap as written, or ""
// when it runs it: the combined 1F1B step that pairs the micro-batches exists without a pipeline and for the
// interleaved schedule only (combined_1f1b.py; transformer_config.py asks for virtual stages when pp > 1).
// Not a check_plan rule: the simulator models the overlap on any schedule (DualPipe's own pairing, a
// 1F1B pipeline's warm-up and cool-down exposed), the launch exports warn and validation ranges skip it.
std::string moe_overlap_refusal(const Plan& plan);

// Forward passes of one iteration, which the simulator steps through one by one: micro-batches per
// data-parallel replica (global batch / (dp x micro-batch)) x pipeline stages x model chunks per stage.
// For a plan check_plan() accepts.
long long iteration_passes(const TrainingSpec& training, const Plan& plan);

// The most passes an iteration may have: time and memory grow with them (the explorer's walk of a GPipe or
// DualPipe schedule visits every pass: a tenth of a second per plan at this bound, so that a sweep still
// stops within half a second of a cancel), and a global batch of 10^9 sequences once took gigabytes.
// 2^18 is 46 times the largest shipped example (MT-NLG 530B: 160 micro-batches x 35 stages).
constexpr long long kMaxSimulatedPasses = 1LL << 18;
// The most passes the task graph is built for (about 1 KB and 10 us each): above it simulate() computes
// the iteration in closed form, as the explorer does (fast_simulation.h), and keeps no timeline.
constexpr long long kMaxTaskGraphPasses = 1LL << 16;

// A plan check_plan() accepts whose iteration has more than kMaxSimulatedPasses passes: refused, naming
// training.global_batch and what to change.
std::optional<PlanRejection> check_simulation_size(const TrainingSpec& training, const Plan& plan);

} // namespace vtrain
