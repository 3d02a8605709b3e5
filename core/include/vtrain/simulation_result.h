// SPDX-License-Identifier: MIT
#pragma once
// What one simulated training iteration reports: time, throughput, utilisation, memory per stage,
// training time and cost, and (optionally) the start and end of every task on every stage.
#include <cstdint>
#include <string>
#include <vector>

#include "vtrain/layer_costs.h"
#include "vtrain/memory_model.h"
#include "vtrain/physical_floors.h"
#include "vtrain/scenario.h"

namespace vtrain {

enum class TaskKind : std::uint8_t {
    Forward,
    Backward,
    Recompute,
    SendForward,   // activations to the next pipeline stage
    SendBackward,  // gradients to the previous pipeline stage
    GradReduce,    // a data-parallel gradient bucket (all-reduce or reduce-scatter)
    EmbeddingSync, // tied embedding gradients between the first and last stage
    OptimizerStep,
    ParamGather,       // ZeRO: all-gather of updated parameters
    FsdpGather,        // ZeRO-3: per-layer parameter all-gathers of one forward or backward (timeline only)
    FsdpReduceScatter, // ZeRO-3: per-layer gradient reduce-scatters of one backward (timeline only)
};
const char* to_string(TaskKind kind);

// Lanes of the timeline: one compute stream and two communication streams per stage; tensor-parallel,
// expert (dispatch/combine) and context-parallel traffic run inside compute tasks (their exposed shares are
// `tp_comm_s`, `ep_comm_s`, `cp_comm_s`). ZeRO-3 gathers and reduce-scatters are timed inside the compute
// tasks they feed (`dp_comm_s` is their exposed part); FsdpGather / FsdpReduceScatter entries on the
// data-parallel lane show their whole traffic, from the start of that compute task.
enum class Lane : std::uint8_t { Compute, Pipeline, DataParallel };

struct TimelineTask {
    int stage = 0;
    Lane lane = Lane::Compute;
    TaskKind kind = TaskKind::Forward;
    int micro_batch = -1;
    int chunk = 0;
    int layers = 0; // transformer layers covered (compute tasks)
    double start_s = 0;
    double end_s = 0;
    double tp_comm_s = 0; // tensor-parallel communication inside this task
    double ep_comm_s = 0; // expert dispatch + combine not hidden, inside this task
    double cp_comm_s = 0; // context-parallel exchange not hidden, inside this task
    double dp_comm_s = 0; // data-parallel (ZeRO-3 gather/scatter, overlapped param gather) not hidden, inside this task
};

struct StageBreakdown {
    double compute_s = 0;         // kernels, forward + backward + recompute
    double tp_comm_s = 0;         // tensor-parallel collectives (on the compute stream)
    double ep_comm_s = 0;         // expert dispatch/combine not hidden (on the compute stream)
    double cp_comm_s = 0;         // context-parallel exchange not hidden (on the compute stream)
    double pp_comm_s = 0;         // pipeline sends (blocking)
    double dp_comm_exposed_s = 0; // data-parallel communication not hidden behind compute
    double optimizer_s = 0;
    double bubble_s = 0; // idle: waiting for other stages
};

struct StageResult {
    int layers = 0;           // decoder layers (all chunks of the stage)
    int mtp_layers = 0;       // multi-token-prediction modules
    bool embedding = false;   // holds the input embedding
    bool loss = false;        // holds the output layer and loss
    double params = 0;        // parameters on one GPU of this stage
    double expert_params = 0; // of which routed-expert parameters
    StageMemory memory;
    double peak_memory_gib = 0;
    StageBreakdown breakdown;
};

struct SimulationResult {
    Plan plan;
    std::string gpu;
    int num_gpus = 0;
    int micro_batches = 0; // per data-parallel replica
    double iteration_time_s = 0;
    // How sure the prediction is: the range the measured iteration time falls in for `band_coverage` of
    // the profile's validation runs (its calibration band, see uncertainty.h); all 0 / empty when the
    // profile has no band.
    double iteration_time_low_s = 0;
    double iteration_time_high_s = 0;
    double band_coverage = 0;
    std::string band_source;
    // The iteration time with the host CPU terms at both ends of their prior (host_term_range, simulator.h):
    // how far the prediction rests on the framework's CPU time per operator. Not filled by simulate() (it
    // costs two more simulations); 0 until a caller that shows it (the CLI, the GUI's plan detail) sets it.
    double host_light_s = 0;
    double host_heavy_s = 0;
    double tokens_per_s = 0;
    bool tokens_useful_only = false;    // tokens_per_s counts the useful tokens of padded fine-tuning samples, not seq_len each
    double model_tflops_per_gpu = 0;    // no recompute counted
    double hardware_tflops_per_gpu = 0; // recompute counted
    double mfu = 0;
    double bubble_fraction = 0; // mean over stages of idle time / iteration time
    std::vector<StageResult> stages;
    double peak_memory_gib = 0;   // the largest stage
    double usable_memory_gib = 0; // capacity minus the profile's reserve
    bool fits_memory = true;
    double total_params = 0;
    double iterations = 0; // whole iterations: ceil(training tokens / (global batch x sequence length))
    double training_days = 0;
    double price_per_gpu_hour = 0;
    double cost_usd = 0;
    StageBreakdown breakdown; // mean over stages; its parts add up to the iteration time
    LayerCosts layer_costs;
    std::vector<TimelineTask> timeline; // empty unless asked for
    std::size_t task_count = 0;
    bool band_calibrated = false; // the band is measured (a calibrated profile), not the uncalibrated default
    // Lower bounds on the iteration from first principles (physical_floors.h) and the datasheet figures they
    // used, and the plausibility flags of the prediction (plausibility.h PlausibilityFlag bits). Filled by
    // simulate(); empty from simulate_checked().
    PhysicalFloors floors;
    FloorHardware floor_hardware;
    unsigned plausibility = 0;
    std::vector<std::string> plausibility_reasons; // one per flag (plausibility_reasons())
};

} // namespace vtrain
