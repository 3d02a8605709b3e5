// SPDX-License-Identifier: MIT
// Evaluates the iteration that IterationBuilder (simulator.cpp) builds as a task graph, reading every
// duration from the same IterationCosts (iteration_costs.h), and accounts time as account_stages() does,
// in the same order of floating-point operations, so results agree with the event simulation to the
// last bits. Only the dependency structure is restated here (which task waits for which); a change to
// it there must be made here too, and tst_explorer_fast_sim fails otherwise.
#include "vtrain/explorer_fast_sim.h"

#include <algorithm>

namespace vtrain {
namespace {

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
    IterationCosts& ic = w.costs;
    build_iteration_costs(model, training, cluster, p, costs, ic);
    const int pp = p.pp;
    const int v = ic.chunks;
    const int m = ic.micro_batches;
    prepare_schedule(w, p.schedule, pp, m, v);
    const bool overlap = ic.bucket_overlap;

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
        const StageCosts& sc = ic.stage[static_cast<std::size_t>(s)];
        while (st.next_op < order.size()) {
            const PipelineOp& op = order[st.next_op];
            const int c = op.chunk;
            const std::size_t k = slot(s, c, op.micro_batch);
            const ChunkCosts& t = ic.at(s, c);
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
                const bool first_of_stage = st.next_op == 0;
                const double d = ic.forward_s(s, c, first_of_stage);
                const double comm = ic.forward_comm(s, c, first_of_stage).total_s();
                const double end = start + d;
                st.compute_s += d - comm;
                st.comm_s += comm;
                st.last_work_end = std::max(st.last_work_end, end);
                st.compute_free = end;
                st.block_until = 0;
                if (!last_virtual) {
                    const double send_end = send(st, end, sc.send_forward_s);
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
                    const double rc = ic.recompute_comm(s, c).total_s();
                    st.compute_s += r - rc;
                    st.comm_s += rc;
                    st.last_work_end = std::max(st.last_work_end, cur);
                }
                const bool split = overlap && w.split_here[s][st.next_op] != 0;
                const int parts = split ? t.buckets : 1;
                const double part_s = ic.backward_s(s, c, split) / parts;
                // Each part carries 1/parts of every communication share, as the task graph splits it.
                const TaskComm bc = ic.backward_comm(s, c, split);
                TaskComm pc;
                pc.tp_s = bc.tp_s / parts;
                pc.ep_s = bc.ep_s / parts;
                pc.cp_s = bc.cp_s / parts;
                pc.dp_s = bc.dp_s / parts;
                const double part_comm_s = pc.total_s();
                for (int part = 0; part < parts; ++part) {
                    cur = cur + part_s;
                    st.compute_s += part_s - part_comm_s;
                    st.comm_s += part_comm_s;
                    if (split) {
                        st.dp_free = std::max(cur, st.dp_free) + t.bucket_s;
                    }
                }
                st.last_work_end = std::max(st.last_work_end, cur);
                st.last_backward_end = cur;
                st.compute_free = cur;
                st.block_until = 0;
                if (!first_virtual) {
                    const double send_end = send(st, cur, sc.send_backward_s);
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
    // and (distributed optimizer) the parameter all-gather.
    if (ic.reduce_grads && !overlap) {
        for (int s = 0; s < pp; ++s) {
            FastSimScratch::Stage& st = w.stage[s];
            for (int c = 0; c < v; ++c) {
                const ChunkCosts& ch = ic.at(s, c);
                for (int part = 0; part < ch.buckets; ++part) {
                    st.dp_free = std::max(st.last_backward_end, st.dp_free) + ch.bucket_s;
                }
            }
        }
    }
    if (ic.embedding_sync) {
        const double ready_at = std::max(w.stage[0].last_backward_end, w.stage[pp - 1].last_backward_end);
        for (const int s : {0, pp - 1}) {
            w.stage[s].dp_free = std::max(w.stage[s].dp_free, ready_at) + ic.embedding_sync_s;
        }
    }
    double makespan = 0;
    for (int s = 0; s < pp; ++s) {
        FastSimScratch::Stage& st = w.stage[s];
        const StageCosts& sc = ic.stage[static_cast<std::size_t>(s)];
        const double opt_start = std::max({st.compute_free, st.dp_free, st.block_until});
        const double opt_end = opt_start + sc.optimizer_s;
        double end = std::max(opt_end, st.pipe_free);
        if (sc.param_gather_s > 0) {
            st.dp_free = std::max(opt_end, st.dp_free) + sc.param_gather_s;
        }
        end = std::max(end, st.dp_free);
        makespan = std::max(makespan, end);
        st.optimizer_start = opt_start;
        st.optimizer_s = sc.optimizer_s;
        st.gather_s = sc.param_gather_s;
    }

    const double T = makespan - ic.closed_form_bubble_saving_s; // as simulator.cpp: DualPipe's bubble in closed form
    double bubble_sum = 0;
    for (int s = 0; s < pp; ++s) {
        const FastSimScratch::Stage& st = w.stage[s];
        // As account_stages(): exposed data-parallel time is the wait before the optimizer plus the gather.
        const double dp_exposed = std::max(0.0, st.optimizer_start - st.last_work_end) + st.gather_s;
        const double busy = st.compute_s + st.comm_s + st.pp_comm_s + dp_exposed + st.optimizer_s;
        const double bubble = std::max(0.0, T - busy);
        bubble_sum += T > 0 ? bubble / T : 0;
    }
    out.iteration_time_s = T;
    out.bubble_fraction = bubble_sum / pp;
    return true;
}

} // namespace vtrain
