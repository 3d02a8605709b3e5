// SPDX-License-Identifier: MIT
#include "iteration/pipeline_schedule.h"

#include <algorithm>

namespace vtrain {
namespace {

PipelineOp forward(int mb, int chunk = 0)
{
    return {PipelineOp::Kind::Forward, mb, chunk};
}
PipelineOp backward(int mb, int chunk = 0)
{
    return {PipelineOp::Kind::Backward, mb, chunk};
}

} // namespace

std::vector<StageOrder> gpipe_schedule(int stages, int micro_batches)
{
    std::vector<StageOrder> orders(static_cast<std::size_t>(stages));
    for (auto& order : orders) {
        order.reserve(2 * static_cast<std::size_t>(micro_batches));
        for (int mb = 0; mb < micro_batches; ++mb) {
            order.push_back(forward(mb));
        }
        for (int mb = 0; mb < micro_batches; ++mb) {
            order.push_back(backward(mb));
        }
    }
    return orders;
}

std::vector<StageOrder> one_f_one_b_schedule(int stages, int micro_batches)
{
    std::vector<StageOrder> orders(static_cast<std::size_t>(stages));
    for (int s = 0; s < stages; ++s) {
        StageOrder& order = orders[s];
        order.reserve(2 * static_cast<std::size_t>(micro_batches));
        const int warmup = std::min(stages - s - 1, micro_batches);
        for (int mb = 0; mb < warmup; ++mb) {
            order.push_back(forward(mb));
        }
        for (int i = 0; i < micro_batches - warmup; ++i) {
            order.push_back(forward(warmup + i));
            order.push_back(backward(i));
        }
        for (int mb = micro_batches - warmup; mb < micro_batches; ++mb) {
            order.push_back(backward(mb));
        }
    }
    return orders;
}

namespace {

// Forwards stage s runs before its first backward in an interleaved schedule: the general warm-up of both
// runtimes, 2 (p - s - 1) + (v - 1) p (Megatron-Core's num_warmup_microbatches; PyTorch's
// get_rank_warmup_ops with p micro-batches per round), or every forward where Megatron-Core has only p
// micro-batches.
int interleaved_warmup(int stages, int micro_batches, int chunks, int stage, PipelineRuntime runtime)
{
    const int total = micro_batches * chunks;
    if (micro_batches == stages && runtime == PipelineRuntime::Megatron) {
        return total;
    }
    return std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
}

} // namespace

std::vector<StageOrder> interleaved_schedule(int stages, int micro_batches, int chunks, PipelineRuntime runtime)
{
    const int p = stages;
    const int v = chunks;
    const int total = micro_batches * v;
    // The k-th forward (backward) of a stage: chunks advance every p passes; micro-batches go in groups of p.
    auto chunk_of = [&](int k, bool is_forward) {
        const int c = (k % (p * v)) / p;
        return is_forward ? c : v - 1 - c;
    };
    auto micro_batch_of = [&](int k) { return (k / (p * v)) * p + k % p; };

    std::vector<StageOrder> orders(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
        StageOrder& order = orders[s];
        order.reserve(2 * static_cast<std::size_t>(total));
        const int warmup = interleaved_warmup(p, micro_batches, v, s, runtime);
        for (int k = 0; k < warmup; ++k) {
            order.push_back(forward(micro_batch_of(k), chunk_of(k, true)));
        }
        for (int i = 0; i < total - warmup; ++i) {
            const int k = warmup + i;
            order.push_back(forward(micro_batch_of(k), chunk_of(k, true)));
            order.push_back(backward(micro_batch_of(i), chunk_of(i, false)));
        }
        for (int k = std::max(0, total - warmup); k < total; ++k) {
            order.push_back(backward(micro_batch_of(k), chunk_of(k, false)));
        }
    }
    return orders;
}

std::vector<StageOrder> build_schedule(Schedule schedule, int stages, int micro_batches, int chunks, PipelineRuntime runtime)
{
    switch (schedule) {
    case Schedule::GPipe: return gpipe_schedule(stages, micro_batches);
    case Schedule::OneFOneB:
    case Schedule::DualPipe: return one_f_one_b_schedule(stages, micro_batches);
    case Schedule::Interleaved: return interleaved_schedule(stages, micro_batches, chunks, runtime);
    }
    return {};
}

std::optional<SchedulePeriod> schedule_period(Schedule schedule, int stages, int chunks)
{
    const int p = stages;
    SchedulePeriod period;
    period.first_cut.resize(static_cast<std::size_t>(p));
    period.stages = p;
    period.chunks = chunks;
    period.schedule = schedule;
    switch (schedule) {
    case Schedule::DualPipe: // its orders are 1F1B's (the bubble saving is closed form on top)
    case Schedule::OneFOneB:
        // Steady step i of stage s: F(p - s - 1 + i), B(i). F waits for step i - 1 of stage s - 1, B for
        // step i of stage s + 1: cutting every stage after the same step is closed. Cut 0 follows step
        // 0, whose forwards wait for warm-up ones: from there on every period waits for steady steps only.
        period.micro_batches = 1;
        period.ops = 2;
        period.min_micro_batches = p;
        for (int s = 0; s < p; ++s) {
            period.first_cut[s] = p - s - 1 + 2;
        }
        return period;
    case Schedule::Interleaved:
        // Steady step i of stage s: the (w_s + i)-th forward, the i-th backward, w_s = 2(p - s - 1) + (v - 1)p.
        // A forward waits for step i - 2 of stage s - 1, or (stage 0) step i + p - 2 of stage p - 1; a
        // backward for step i of stage s + 1, or (stage p - 1) step i - p of stage 0. Cutting stage s
        // after step k + s satisfies all four; from k = 2 on, every period waits for steady steps only.
        // Chunks and micro-batch groups repeat every p x v steps.
        period.micro_batches = p;
        period.ops = 2 * p * chunks;
        period.min_micro_batches = 2 * p; // more than p (else every forward goes first), whole groups
        for (int s = 0; s < p; ++s) {
            period.first_cut[s] = 2 * (p - s - 1) + (chunks - 1) * p + 2 * (s + 2);
        }
        return period;
    case Schedule::GPipe: break;
    }
    return std::nullopt;
}

int SchedulePeriod::last_cut(int m) const
{
    const int p = stages, v = chunks;
    if (schedule == Schedule::Interleaved) {
        // Cut k of stage s follows step k p v + s + 2 of m v - w_s; stage 0 has the fewest to spare.
        return (m * v - p - v * p) / (p * v);
    }
    return m - p; // cut k follows step k + 1 of m - p + 1 on stage 0
}

std::vector<double> peak_in_flight_chunks(const std::vector<StageOrder>& orders)
{
    std::vector<double> peaks;
    peaks.reserve(orders.size());
    for (const auto& order : orders) {
        int live = 0;
        int peak = 0;
        for (const auto& op : order) {
            live += op.kind == PipelineOp::Kind::Forward ? 1 : -1;
            peak = std::max(peak, live);
        }
        peaks.push_back(peak);
    }
    return peaks;
}

} // namespace vtrain

namespace vtrain {
int peak_in_flight_closed_form(Schedule schedule, int stages, int micro_batches, int chunks, int stage, PipelineRuntime runtime)
{
    switch (schedule) {
    case Schedule::GPipe: return micro_batches;
    case Schedule::OneFOneB: return std::min(stages - stage, micro_batches);
    case Schedule::Interleaved: {
        const int total = micro_batches * chunks;
        return std::min(interleaved_warmup(stages, micro_batches, chunks, stage, runtime) + 1, total);
    }
    case Schedule::DualPipe: return dualpipe_peak_in_flight(stages, micro_batches);
    }
    return micro_batches;
}
} // namespace vtrain

namespace vtrain {
int unpaired_passes(Schedule schedule, int stages, int micro_batches, int chunks, int stage, PipelineRuntime runtime)
{
    const int total = micro_batches * std::max(1, chunks);
    switch (schedule) {
    case Schedule::GPipe: return total;
    case Schedule::OneFOneB:
    case Schedule::DualPipe: return std::min(std::min(stages - stage - 1, micro_batches) + 1, total);
    case Schedule::Interleaved: return std::min(interleaved_warmup(stages, micro_batches, chunks, stage, runtime) + 1, total);
    }
    return total;
}
} // namespace vtrain
