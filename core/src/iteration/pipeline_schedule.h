// SPDX-License-Identifier: MIT
#pragma once
// Pipeline schedules as per-stage operation orders. A schedule only says in which order each stage
// runs its forward and backward passes; the dependencies between stages are the same for all:
// F(s, mb, c) needs F of the previous virtual stage, B(s, mb, c) needs B of the next one.
#include <cstdint>
#include <optional>
#include <vector>

#include "vtrain/scenario.h"

namespace vtrain {

struct PipelineOp {
    enum class Kind : std::uint8_t { Forward, Backward };
    Kind kind = Kind::Forward;
    int micro_batch = 0;
    int chunk = 0; // model chunk on this stage (virtual stage = chunk * stages + stage)
    bool operator==(const PipelineOp&) const = default;
};

using StageOrder = std::vector<PipelineOp>;

// GPipe: all forwards, then all backwards.
std::vector<StageOrder> gpipe_schedule(int stages, int micro_batches);
// 1F1B (PipeDream-flush): stage s warms up with p - s - 1 forwards, then alternates.
std::vector<StageOrder> one_f_one_b_schedule(int stages, int micro_batches);
// Interleaved 1F1B (Narayanan et al. SC'21): `chunks` model chunks per stage, micro-batches in groups of
// `stages`; needs micro_batches % stages == 0. With exactly `stages` micro-batches Megatron-Core runs every
// forward first; PyTorch's ScheduleInterleaved1F1B keeps its general warm-up (PipelineRuntime).
std::vector<StageOrder> interleaved_schedule(int stages, int micro_batches, int chunks, PipelineRuntime runtime = PipelineRuntime::Megatron);

// DualPipe's orders are 1F1B's (the same work per device); its bubble is taken in closed form
// (pipeline_schedule_dualpipe.cpp).
std::vector<StageOrder> build_schedule(Schedule schedule, int stages, int micro_batches, int chunks,
                                       PipelineRuntime runtime = PipelineRuntime::Megatron);

// DualPipe (DeepSeek-V3 report Table 2), per device: the bubble (PP/2 - 1)(F&B + B - 3W) for a chunk's
// forward F and full backward B, what it saves against 1F1B's (PP - 1)(F + B), and the activation sets
// held at the peak (PP + 1).
double dualpipe_bubble_s(int stages, double forward_s, double backward_s);
double dualpipe_bubble_saving_s(int stages, double forward_s, double backward_s);
int dualpipe_peak_in_flight(int stages, int micro_batches);
// The repeating middle of a schedule, which lets a simulation extend the steady state instead of walking
// it (fast_simulation.cpp). For micro_batches >= min_micro_batches, the schedule with `micro_batches`
// more micro-batches is this one with `ops` more operations on every stage, inserted at any cut k
// (0 < k <= last_cut()), that repeat the `ops` before the cut: same kinds and chunks, each fed by the
// operation `ops` later than its model on the same producing stage. Cut k of stage s lies at
// first_cut[s] + k * ops operations, and cuts are closed: nothing before a cut waits for an operation
// after another stage's cut. tst_schedules checks all three. None for GPipe: its phases are chains,
// whose stages need not settle into a common period.
struct SchedulePeriod {
    int micro_batches = 1;      // added per period (the interleaved schedule groups micro-batches by stages)
    int ops = 2;                // operations per stage per period
    int min_micro_batches = 1;  // the smallest count with the full warm-up, steady state and cool-down
    std::vector<int> first_cut; // per stage
    int stages = 1, chunks = 1;
    Schedule schedule = Schedule::OneFOneB;
    // The last cut still inside every stage's steady state, with `micro_batches` micro-batches.
    int last_cut(int micro_batches) const;
};
std::optional<SchedulePeriod> schedule_period(Schedule schedule, int stages, int chunks);

// For each stage, the most forward passes whose backward has not run yet, weighted by layers per chunk
// (all chunks of a stage have the same layer count): the activation sets the stage holds at its peak.
std::vector<double> peak_in_flight_chunks(const std::vector<StageOrder>& orders);

} // namespace vtrain

namespace vtrain {
// The same peak as peak_in_flight_chunks(build_schedule(...))[stage], in closed form.
int peak_in_flight_closed_form(Schedule schedule, int stages, int micro_batches, int chunks, int stage,
                               PipelineRuntime runtime = PipelineRuntime::Megatron);

// Megatron-Core's expert all-to-all overlap (--overlap-moe-expert-parallel-comm) runs one micro-batch's
// forward beside another's backward, layer by layer, so that each hides the other's dispatch and combine
// (megatron/core/pipeline_parallel/combined_1f1b.py). Only the steady state has such pairs: without a
// pipeline the first forward and the last backward run alone ("executed alone, no a2a overlapping"), and a
// pipeline warms up one forward more than its schedule's (schedules.py num_warmup_microbatches + 1 with the
// overlap) and cools down as many backwards alone. The forwards (= backwards) stage s runs unpaired, of its
// micro_batches x chunks; every one under GPipe, which never pairs them.
int unpaired_passes(Schedule schedule, int stages, int micro_batches, int chunks, int stage, PipelineRuntime runtime = PipelineRuntime::Megatron);
} // namespace vtrain
