// SPDX-License-Identifier: MIT
// Mirrors IterationBuilder (simulator.cpp) and account_stages() term by term, in the same order of
// floating-point operations, so that results agree with the event simulation to the last bits. Any
// change to the iteration model there must be made here too; tst_explorer_fast_sim fails otherwise.
#include "vtrain/explorer_fast_sim.h"

#include <algorithm>
#include <cmath>

#include "vtrain/comm_model.h"
#include "vtrain/memory_model.h"
#include "vtrain/operator_timer.h"

namespace vtrain {
namespace {

constexpr int kMaxBucketsPerChunk = 32; // as simulator.cpp

int node_of_stage(int stage, const Plan& p, int gpus_per_node)
{
    return static_cast<int>((static_cast<long long>(stage) * p.tp * p.dp) / gpus_per_node);
}

// Forward, backward and recompute seconds of one chunk (whole, and its tensor-parallel share).
struct ChunkTimes {
    PhaseTime forward, backward, recompute;
};

ChunkTimes chunk_times(const LayerCosts& costs, int layers_per_chunk, bool first, bool last)
{
    auto phase = [&](PhaseTime BlockCost::*member) {
        PhaseTime t;
        const PhaseTime layer = costs.layer.*member;
        t.compute_s = layer.compute_s * layers_per_chunk;
        t.tp_comm_s = layer.tp_comm_s * layers_per_chunk;
        if (first) {
            t += costs.embedding.*member;
        }
        if (last) {
            t += costs.head.*member;
        }
        return t;
    };
    return {phase(&BlockCost::forward), phase(&BlockCost::backward), phase(&BlockCost::recompute)};
}

void prepare_schedule(FastSimScratch& w, Schedule schedule, int stages, int micro_batches, int chunks)
{
    if (!w.orders.empty() && w.schedule == schedule && w.stages == stages && w.micro_batches == micro_batches && w.chunks == chunks) {
        return;
    }
    w.schedule = schedule;
    w.stages = stages;
    w.micro_batches = micro_batches;
    w.chunks = chunks;
    w.orders = build_schedule(schedule, stages, micro_batches, chunks);
    w.split_here.resize(static_cast<std::size_t>(stages));
    std::vector<int> last(static_cast<std::size_t>(chunks));
    for (int s = 0; s < stages; ++s) {
        const StageOrder& order = w.orders[s];
        std::fill(last.begin(), last.end(), -1);
        for (std::size_t i = 0; i < order.size(); ++i) {
            if (order[i].kind == PipelineOp::Kind::Backward) {
                last[order[i].chunk] = static_cast<int>(i);
            }
        }
        w.split_here[s].assign(order.size(), 0);
        for (const int i : last) {
            if (i >= 0) {
                w.split_here[s][static_cast<std::size_t>(i)] = 1;
            }
        }
    }
}

} // namespace

bool fast_simulate(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& p, const LayerCosts& costs,
                   FastSimScratch& w, FastSimResult& out)
{
    const int pp = p.pp;
    const int v = p.schedule == Schedule::Interleaved ? p.virtual_stages : 1;
    const int m = training.global_batch / (p.dp * p.micro_batch);
    const int layers_per_chunk = model.layers / (pp * v);
    const int gpn = nvlink_domain_size(cluster.links); // sends inside a domain use NVLink
    prepare_schedule(w, p.schedule, pp, m, v);

    CommModel comm;
    comm.links = cluster.links;
    comm.measured_all_reduce = &cluster.profile->all_reduce;
    const double grad_bytes = training.precision == Precision::Fp16 ? 2.0 : 4.0;
    const double weight_bytes = training.precision == Precision::Fp32 ? 4.0 : 2.0;
    const bool overlap = p.overlap_grad_reduce && p.dp > 1;
    w.stage_params = stage_params(model, p.tp, pp);

    // Chunk times: index (first virtual stage ? 1 : 0) + (last virtual stage ? 2 : 0).
    ChunkTimes times[4];
    for (int k = 0; k < 4; ++k) {
        times[k] = chunk_times(costs, layers_per_chunk, (k & 1) != 0, (k & 2) != 0);
    }
    auto kind_of = [&](int s, int c) { return (s == 0 && c == 0 ? 1 : 0) + (s == pp - 1 && c == v - 1 ? 2 : 0); };

    const double p2p_bytes = static_cast<double>(p.micro_batch) * model.seq_len * model.hidden * (training.precision == Precision::Fp32 ? 4 : 2) / p.tp;
    // A send costs one of two figures: inside a node or across nodes.
    const double p2p_within_s = comm.p2p_seconds(p2p_bytes, false);
    const double p2p_across_s = comm.p2p_seconds(p2p_bytes, true);
    auto p2p = [&](int from, int to) { return node_of_stage(from, p, gpn) != node_of_stage(to, p, gpn) ? p2p_across_s : p2p_within_s; };

    // Gradient buckets per stage: how many per chunk and the seconds of one.
    const GroupPlacement dp_group = place_group(p.dp, p.tp, cluster.links);
    const Collective reduce_kind = p.zero_stage >= 1 ? Collective::ReduceScatter : Collective::AllReduce;
    auto buckets_for_chunk = [&](int s) {
        if (p.dp <= 1) {
            return 1;
        }
        const double chunk_grad_bytes = w.stage_params[s] / v * grad_bytes;
        const double bucket_bytes = p.grad_bucket_mb * 1024.0 * 1024.0;
        return std::clamp(static_cast<int>(std::ceil(chunk_grad_bytes / bucket_bytes)), 1, kMaxBucketsPerChunk);
    };
    // Per-stage figures repeat for all middle stages: compute them for distinct parameter counts only.
    struct StageFigures {
        double params = -1;
        int parts = 1;
        double bucket_s = 0, optimizer_s = 0, gather_s = 0;
    };
    StageFigures memo[3];
    const OperatorTimer timer(*cluster.profile, training.precision);
    auto figures = [&](int s) -> const StageFigures& {
        StageFigures& f = memo[s == 0 ? 0 : s == pp - 1 ? 2 : 1];
        if (f.params != w.stage_params[s]) {
            f.params = w.stage_params[s];
            f.parts = buckets_for_chunk(s);
            f.bucket_s = comm.collective_seconds(reduce_kind, w.stage_params[s] / v * grad_bytes / f.parts, dp_group);
            f.optimizer_s = timer.adam_seconds(w.stage_params[s] / (p.zero_stage >= 1 ? p.dp : 1));
            f.gather_s = p.zero_stage >= 1 && p.dp > 1
                             ? comm.collective_seconds(Collective::AllGather, w.stage_params[s] * weight_bytes, dp_group)
                             : 0;
        }
        return f;
    };

    w.send_forward_s.resize(static_cast<std::size_t>(pp));
    w.send_backward_s.resize(static_cast<std::size_t>(pp));
    for (int s = 0; s < pp; ++s) {
        w.send_forward_s[s] = p2p(s, (s + 1) % pp);
        w.send_backward_s[s] = p2p(s, (s + pp - 1) % pp);
    }
    const std::size_t slots = static_cast<std::size_t>(pp) * v * m;
    w.forward_arrival.assign(slots, -1.0);
    w.backward_arrival.assign(slots, -1.0);
    w.stage.assign(static_cast<std::size_t>(pp), FastSimScratch::Stage{});
    w.queued.assign(static_cast<std::size_t>(pp), 1);
    w.ready.clear();
    for (int s = pp - 1; s >= 0; --s) {
        w.ready.push_back(s);
    }
    auto slot = [&](int s, int c, int mb) { return (static_cast<std::size_t>(s) * v + c) * m + mb; };
    auto wake = [&](int s) {
        if (!w.queued[s]) {
            w.queued[s] = 1;
            w.ready.push_back(s);
        }
    };

    // A blocking send to a neighbouring stage, ready at `ready`: it queues behind the stage's previous
    // send, and the stage computes nothing more until it is done. Returns when it arrives.
    auto send = [](FastSimScratch::Stage& st, double ready, double seconds) {
        const double send_end = std::max(ready, st.pipe_free) + seconds;
        st.pipe_free = send_end;
        st.pp_comm_s += seconds;
        st.last_work_end = std::max(st.last_work_end, send_end);
        st.block_until = send_end;
        return send_end;
    };

    // Walks stage s's schedule until it waits for another stage or ends.
    auto advance = [&](int s) {
        FastSimScratch::Stage& st = w.stage[s];
        const StageOrder& order = w.orders[s];
        const double send_forward_s = w.send_forward_s[s];
        const double send_backward_s = w.send_backward_s[s];
        while (st.next_op < order.size()) {
            const PipelineOp& op = order[st.next_op];
            const int c = op.chunk;
            const std::size_t k = slot(s, c, op.micro_batch);
            const ChunkTimes& t = times[kind_of(s, c)];
            const bool first_virtual = s == 0 && c == 0;
            const bool last_virtual = s == pp - 1 && c == v - 1;
            if (op.kind == PipelineOp::Kind::Forward) {
                double start = std::max(st.compute_free, st.block_until);
                if (!first_virtual) {
                    if (w.forward_arrival[k] < 0) {
                        break;
                    }
                    start = std::max(start, w.forward_arrival[k]);
                }
                const double d = t.forward.total_s();
                const double end = start + d;
                st.compute_s += d - t.forward.tp_comm_s;
                st.tp_comm_s += t.forward.tp_comm_s;
                st.last_work_end = std::max(st.last_work_end, end);
                st.compute_free = end;
                st.block_until = 0;
                if (!last_virtual) {
                    const double send_end = send(st, end, send_forward_s);
                    const int next_stage = (s + 1) % pp;
                    w.forward_arrival[slot(next_stage, s + 1 == pp ? c + 1 : c, op.micro_batch)] = send_end;
                    wake(next_stage);
                }
            } else {
                double start = std::max(st.compute_free, st.block_until);
                if (!last_virtual) {
                    if (w.backward_arrival[k] < 0) {
                        break;
                    }
                    start = std::max(start, w.backward_arrival[k]);
                }
                double cur = start;
                const double r = t.recompute.total_s();
                if (r > 0) {
                    cur = start + r;
                    st.compute_s += r - t.recompute.tp_comm_s;
                    st.tp_comm_s += t.recompute.tp_comm_s;
                    st.last_work_end = std::max(st.last_work_end, cur);
                }
                const bool split = overlap && w.split_here[s][st.next_op] != 0;
                const StageFigures* f = split ? &figures(s) : nullptr;
                const int parts = split ? f->parts : 1;
                const double part_s = t.backward.total_s() / parts;
                const double part_tp_s = t.backward.tp_comm_s / parts;
                for (int part = 0; part < parts; ++part) {
                    cur = cur + part_s;
                    st.compute_s += part_s - part_tp_s;
                    st.tp_comm_s += part_tp_s;
                    if (split) {
                        st.dp_free = std::max(cur, st.dp_free) + f->bucket_s;
                    }
                }
                st.last_work_end = std::max(st.last_work_end, cur);
                st.last_backward_end = cur;
                st.compute_free = cur;
                st.block_until = 0;
                if (!first_virtual) {
                    const double send_end = send(st, cur, send_backward_s);
                    const int prev_stage = (s + pp - 1) % pp;
                    w.backward_arrival[slot(prev_stage, s == 0 ? c - 1 : c, op.micro_batch)] = send_end;
                    wake(prev_stage);
                }
            }
            ++st.next_op;
        }
    };

    while (!w.ready.empty()) {
        const int s = w.ready.back();
        w.ready.pop_back();
        w.queued[s] = 0;
        advance(s);
    }
    for (int s = 0; s < pp; ++s) {
        if (w.stage[s].next_op != w.orders[s].size()) {
            return false; // a stage waits forever: the schedule has a cycle
        }
    }

    // After the last backward: remaining gradient buckets, the tied-embedding sync, the optimizer step
    // and (ZeRO) the parameter all-gather.
    if (p.dp > 1 && !overlap) {
        for (int s = 0; s < pp; ++s) {
            FastSimScratch::Stage& st = w.stage[s];
            const StageFigures& f = figures(s);
            for (int c = 0; c < v; ++c) {
                for (int part = 0; part < f.parts; ++part) {
                    st.dp_free = std::max(st.last_backward_end, st.dp_free) + f.bucket_s;
                }
            }
        }
    }
    if (pp >= 2 && model.tied_embeddings) {
        const bool crosses = node_of_stage(0, p, gpn) != node_of_stage(pp - 1, p, gpn);
        const double bytes = static_cast<double>(model.vocab) * model.hidden / p.tp * grad_bytes;
        const GroupPlacement pair = crosses ? GroupPlacement{2, 1, 2} : GroupPlacement{2, 2, 1};
        const double seconds = comm.collective_seconds(Collective::AllReduce, bytes, pair);
        const double ready_at = std::max(w.stage[0].last_backward_end, w.stage[pp - 1].last_backward_end);
        for (const int s : {0, pp - 1}) {
            w.stage[s].dp_free = std::max(w.stage[s].dp_free, ready_at) + seconds;
        }
    }
    double makespan = 0;
    for (int s = 0; s < pp; ++s) {
        FastSimScratch::Stage& st = w.stage[s];
        const StageFigures& f = figures(s);
        const double opt_start = std::max({st.compute_free, st.dp_free, st.block_until});
        const double opt_end = opt_start + f.optimizer_s;
        double end = std::max(opt_end, st.pipe_free);
        if (p.zero_stage >= 1 && p.dp > 1) {
            st.dp_free = std::max(opt_end, st.dp_free) + f.gather_s;
        }
        end = std::max(end, st.dp_free);
        makespan = std::max(makespan, end);
        st.optimizer_start = opt_start;
        st.optimizer_s = f.optimizer_s;
        st.gather_s = p.zero_stage >= 1 && p.dp > 1 ? f.gather_s : 0.0;
    }

    const double T = makespan;
    double bubble_sum = 0;
    for (int s = 0; s < pp; ++s) {
        const FastSimScratch::Stage& st = w.stage[s];
        // As account_stages(): exposed data-parallel time is the wait before the optimizer plus the gather.
        const double dp_exposed = std::max(0.0, st.optimizer_start - st.last_work_end) + st.gather_s;
        const double busy = st.compute_s + st.tp_comm_s + st.pp_comm_s + dp_exposed + st.optimizer_s;
        const double bubble = std::max(0.0, T - busy);
        bubble_sum += T > 0 ? bubble / T : 0;
    }
    out.iteration_time_s = T;
    out.bubble_fraction = bubble_sum / pp;
    return true;
}

} // namespace vtrain
