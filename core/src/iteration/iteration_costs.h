// SPDX-License-Identifier: MIT
#pragma once
// One description of what a training iteration costs, shared by the task-graph simulation
// (task_graph_simulation.cpp) and the explorer's fast path (fast_simulation.cpp), so the two never restate the
// rules: what each (stage, chunk) computes per phase with the communication it cannot hide, the
// gradient buckets it hands to the data-parallel stream, the sends between stages, and each stage's
// optimizer step and parameter all-gather. The two evaluate these figures differently (a task graph, a
// direct walk of the schedule) but read every duration from here.
//
// Data-parallel traffic under Megatron-Core's parallel folding (arXiv 2504.14960): dense gradients are
// reduced over the dp x cp group (CP ranks fold into data parallelism for weights), routed-expert
// gradients over the expert data-parallel group edp = tp x cp x dp / (ep x etp). Ranks are ordered
// tp-cp-ep-dp-pp (Megatron's default --rank-order), so the dense group has stride tp and the expert one
// stride ep x etp.
//   zero_stage 0: all-reduce once per iteration, in buckets overlapping the last backward of each chunk.
//   zero_stage 1/2 (Megatron's distributed optimizer): reduce-scatter instead, and an all-gather of the
//     updated parameters after the optimizer step, or hidden behind the next forward with
//     overlap_param_gather (then only what outlasts the stage's first forward, or at least one bucket,
//     is exposed). shard_group < dp x cp adds an all-reduce of the shard across replicas (HSDP-like,
//     Megatron's --num-distributed-optimizer-instances).
//   zero_stage 3 (FSDP full shard; hybrid with shard_group): every layer's parameters are all-gathered
//     before its forward and again before its backward, and its gradients reduce-scattered after, every
//     micro-batch. The next layer's gather is prefetched behind this layer's compute, so a pass exposes
//     the first gather plus whatever each later gather outlasts the layer before it; in the backward a
//     layer's window carries a gather and a reduce-scatter over the same links, and what the two outlast
//     shows. The last micro-batch's reduce-scatter (and the replica all-reduce) runs as buckets behind
//     the chunk's last backward.
//   Overlapped traffic is not free: NCCL's kernels hold SMs while they run, so the compute beside them
//   takes longer (ChunkCosts::dp_contention_*, StageCosts::first_forward_dp_s).
#include <vector>

#include "iteration/plan_costs.h"
#include "vtrain/layer_costs.h"
#include "vtrain/memory_model.h"
#include "vtrain/pipeline_layout.h"

namespace vtrain {

// Communication inside a compute task that the timeline and the breakdown show apart from kernels.
struct TaskComm {
    double tp_s = 0;
    double ep_s = 0;
    double cp_s = 0;
    double dp_s = 0; // exposed ZeRO-3 gathers / reduce-scatters, or the exposed part of an overlapped gather
    double total_s() const { return tp_s + ep_s + cp_s + dp_s; }
};

struct ChunkCosts {
    PhaseTime forward, backward, recompute;
    int layers = 0;     // decoder layers (+ MTP modules)
    ParamShare params;  // on one GPU
    ParamShare trained; // of those (plus LoRA adapters), what has gradients: all of them unless the base is frozen
    // ZeRO-3: exposed seconds added to the forward and to the backward (gather; reduce-scatter excess,
    // which the bucketed last backward of the chunk leaves to its buckets), and the traffic of one pass.
    double fsdp_forward_s = 0, fsdp_backward_gather_s = 0, fsdp_backward_scatter_s = 0;
    double fsdp_gather_traffic_s = 0, fsdp_scatter_traffic_s = 0;
    // Compute slowed by the NCCL kernels of overlapped data-parallel traffic (they hold SMs while they run):
    // added to the forward, to an ordinary backward and to the chunk's last, bucketed backward.
    double dp_contention_forward_s = 0, dp_contention_backward_s = 0, dp_contention_bucketed_backward_s = 0;
    int buckets = 1;     // parts the last backward of the chunk is split into, one gradient bucket each
    double bucket_s = 0; // seconds of one bucket on the data-parallel stream

    // Task durations and their communication parts, summed once (finish()) for the hot loops:
    // [0] an ordinary backward, [1] the chunk's last, bucketed backward.
    double forward_total_s = 0, recompute_total_s = 0;
    double backward_total_s[2] = {0, 0};
    TaskComm forward_parts, recompute_parts;
    TaskComm backward_parts[2];
    void finish();
};

struct StageCosts {
    ParamShare params;  // on one GPU of the stage
    ParamShare trained; // what the optimizer updates (ChunkCosts::trained summed)
    double optimizer_s = 0;
    double param_gather_s = 0;     // distributed optimizer: all-gather after the step (0 when overlapped or none)
    double first_forward_dp_s = 0; // overlap_param_gather: exposed part, added to the stage's first forward
    double send_forward_s = 0, send_backward_s = 0;
};

struct IterationCosts {
    int stages = 1, chunks = 1, micro_batches = 1;
    bool reduce_grads = false;   // any data-parallel gradient traffic at all
    bool bucket_overlap = false; // buckets ride the last backward of each chunk (else after the stage's last)
    bool embedding_sync = false;
    // Pipeline sends run beside the sender's compute (TrainingSpec::overlap_p2p with an interleaved schedule):
    // they still gate the receiver, but neither hold the sender nor count as its exposed time.
    bool async_sends = false;
    PipelineRuntime runtime = PipelineRuntime::Megatron; // whose interleaved warm-up orders the passes (TrainingSpec)
    double embedding_sync_s = 0;
    PipelineLayout layout;
    std::vector<ChunkCosts> chunk; // index stage * chunks + chunk
    std::vector<StageCosts> stage;
    double closed_form_bubble_saving_s = 0; // DualPipe: 1F1B's bubble minus DualPipe's, subtracted from the graph's makespan
    // DualPipe: the busiest device's own work, which no bubble saving can go below. Device d runs half the
    // micro-batches through stage d and half through stage pp - 1 - d, so a heavy last stage (the LM head)
    // is shared with the first; the 1F1B task graph charges it all to one device.
    double closed_form_min_makespan_s = 0;

    const ChunkCosts& at(int s, int c) const { return chunk[static_cast<std::size_t>(s) * chunks + c]; }
    // A phase's duration and its communication parts; `first_of_stage`: the stage's first forward (which
    // carries the exposed part of an overlapped parameter gather); `bucketed`: the chunk's last backward,
    // whose reduce-scatter rides the buckets instead.
    double forward_s(int s, int c, bool first_of_stage) const
    {
        return at(s, c).forward_total_s + (first_of_stage ? stage[static_cast<std::size_t>(s)].first_forward_dp_s : 0.0);
    }
    double backward_s(int s, int c, bool bucketed) const { return at(s, c).backward_total_s[bucketed ? 1 : 0]; }
    TaskComm forward_comm(int s, int c, bool first_of_stage) const
    {
        TaskComm t = at(s, c).forward_parts;
        t.dp_s = t.dp_s + (first_of_stage ? stage[static_cast<std::size_t>(s)].first_forward_dp_s : 0.0);
        return t;
    }
    const TaskComm& backward_comm(int s, int c, bool bucketed) const { return at(s, c).backward_parts[bucketed ? 1 : 0]; }
    const TaskComm& recompute_comm(int s, int c) const { return at(s, c).recompute_parts; }
};

// Fills `out` (reusing its vectors) for a plan that check_plan accepted.
void build_iteration_costs(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan,
                           const LayerCosts& costs, IterationCosts& out);

} // namespace vtrain
