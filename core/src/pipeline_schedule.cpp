// SPDX-License-Identifier: MIT
#include "vtrain/pipeline_schedule.h"

#include <algorithm>

namespace vtrain {
namespace {

PipelineOp forward(int mb, int chunk = 0) { return {PipelineOp::Kind::Forward, mb, chunk}; }
PipelineOp backward(int mb, int chunk = 0) { return {PipelineOp::Kind::Backward, mb, chunk}; }

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

std::vector<StageOrder> interleaved_schedule(int stages, int micro_batches, int chunks)
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
        // Megatron-LM's warm-up: every forward up front when there are only p micro-batches.
        const int warmup = micro_batches == p ? total : std::min((p - s - 1) * 2 + (v - 1) * p, total);
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

std::vector<StageOrder> build_schedule(Schedule schedule, int stages, int micro_batches, int chunks)
{
    switch (schedule) {
    case Schedule::GPipe:
        return gpipe_schedule(stages, micro_batches);
    case Schedule::OneFOneB:
    case Schedule::DualPipe:
        return one_f_one_b_schedule(stages, micro_batches);
    case Schedule::Interleaved:
        return interleaved_schedule(stages, micro_batches, chunks);
    }
    return {};
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
int peak_in_flight_closed_form(Schedule schedule, int stages, int micro_batches, int chunks, int stage)
{
    switch (schedule) {
    case Schedule::GPipe:
        return micro_batches;
    case Schedule::OneFOneB:
        return std::min(stages - stage, micro_batches);
    case Schedule::Interleaved: {
        const int total = micro_batches * chunks;
        if (micro_batches == stages) {
            return total;
        }
        const int warmup = std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
        return std::min(warmup + 1, total);
    }
    case Schedule::DualPipe:
        return dualpipe_peak_in_flight(stages, micro_batches);
    }
    return micro_batches;
}
} // namespace vtrain
