// SPDX-License-Identifier: MIT
// Evaluates the iteration that IterationBuilder (task_graph_simulation.cpp) builds as a task graph, reading every
// duration from the same IterationCosts (iteration_costs.h), and accounts time as account_stages() does,
// so results agree with the event simulation to rounding. Only the dependency structure is restated
// here (which task waits for which); a change to it there must be made here too, and
// tst_explorer_fast_sim fails otherwise. The steady-state extension is described in the header.
#include "iteration/fast_simulation.h"

#include <algorithm>
#include <cmath>

namespace vtrain {
namespace {

constexpr int kMaxCycle = 4;              // periods a settled state may take to repeat itself (max-plus cyclicity)
constexpr double kExtensionError = 1e-12; // bound on an extended time's error, relative to it
constexpr int kWindowOps = 4;             // operations after a cut whose incoming messages a state holds
constexpr int kTimesPerStage = 5;         // clocks of a stage in a state (Walk::clocks)

void prepare_schedule(FastSimScratch& w, Schedule schedule, PipelineRuntime runtime, int stages, int micro_batches, int chunks)
{
    if (!w.orders.empty() && w.schedule == schedule && w.runtime == runtime && w.stages == stages && w.micro_batches == micro_batches &&
        w.chunks == chunks) {
        return;
    }
    w.schedule = schedule;
    w.runtime = runtime;
    w.stages = stages;
    w.micro_batches = micro_batches;
    w.chunks = chunks;
    w.orders = build_schedule(schedule, stages, micro_batches, chunks, runtime);
    w.period = schedule_period(schedule, stages, chunks);
    w.split_here.resize(static_cast<std::size_t>(stages));
    w.splits_before.resize(static_cast<std::size_t>(stages));
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
        auto& before = w.splits_before[s];
        before.assign(order.size() + 1, 0);
        for (std::size_t i = 0; i < order.size(); ++i) {
            before[i + 1] = before[i] + w.split_here[s][i];
        }
    }
}

// The micro-batch count to walk for `m`: the same modulo the period, with room to settle.
int reduced_micro_batches(const SchedulePeriod& period, int m, int settle_periods)
{
    const int need = period.min_micro_batches + (settle_periods + 1) * period.micro_batches;
    if (m < need + period.micro_batches) {
        return m;
    }
    return m - (m - need) / period.micro_batches * period.micro_batches;
}

// One walk of the schedule in `w` (built for w.micro_batches), stage by stage. The schedule may be
// lengthened part-way (lengthen()): up to any cut in the middle, a longer one runs the same ops.
class Walk {
public:
    Walk(FastSimScratch& scratch, const IterationCosts& costs) : w(scratch), ic(costs), pp(costs.stages), v(costs.chunks) {}

    void reset()
    {
        const std::size_t slots = static_cast<std::size_t>(pp) * v * w.micro_batches;
        w.forward_arrival.assign(slots, -1.0);
        w.backward_arrival.assign(slots, -1.0);
        w.stage.assign(static_cast<std::size_t>(pp), FastSimScratch::Stage{});
        w.queued.assign(static_cast<std::size_t>(pp), 0);
        w.ready.clear();
        w.pending = 0;
        m_cut_index = -1;
    }

    // After prepare_schedule() built a longer schedule: room for its messages (slots do not move).
    void lengthen()
    {
        const std::size_t slots = static_cast<std::size_t>(pp) * v * w.micro_batches;
        w.forward_arrival.resize(slots, -1.0);
        w.backward_arrival.resize(slots, -1.0);
    }

    // Lets every stage run up to its op `limit` (or to its end) and walks; false when a stage waits
    // forever short of it (a cycle, or a cut that is not closed).
    bool run_to(const std::vector<int>* limits)
    {
        for (int s = pp - 1; s >= 0; --s) {
            FastSimScratch::Stage& st = w.stage[s];
            st.limit = limits != nullptr ? static_cast<std::size_t>((*limits)[s]) : w.orders[s].size();
            wake(s);
        }
        while (!w.ready.empty()) {
            const int s = w.ready.back();
            w.ready.pop_back();
            w.queued[s] = 0;
            advance(s);
        }
        for (int s = 0; s < pp; ++s) {
            if (w.stage[s].next_op != w.stage[s].limit) {
                return false;
            }
        }
        return true;
    }

    // Walks on from cut to cut and, once the state repeats, extends the steady state by `periods`
    // periods and walks to the end. Otherwise it stops at the last cut reached and says why: the state
    // did not settle before the schedule's middle ended, or it repeats after `cycle` periods, which do
    // not divide `periods`. Called again after lengthen(), it goes on from there.
    enum class Outcome { Extended, NotSettled, OtherCycle, Stalled };
    int settled_at = -1; // the cut at which the state repeated
    Outcome run_extended(const SchedulePeriod& period, long periods, int& cycle)
    {
        auto& ring = w.snapshots;
        ring.resize(kMaxCycle + 1);
        for (;;) {
            if (!m_compare_again) {
                const int k = m_cut_index + 1;
                if (k > period.last_cut(w.micro_batches)) {
                    return Outcome::NotSettled; // out of the middle
                }
                for (int s = 0; s < pp; ++s) {
                    m_cut[s] = period.first_cut[s] + k * period.ops;
                    if (m_cut[s] + kWindowOps > static_cast<int>(w.orders[s].size())) {
                        return Outcome::NotSettled; // too near the end to hold a state
                    }
                }
                if (!run_to(&m_cut)) {
                    return Outcome::Stalled;
                }
                m_cut_index = k;
                const std::size_t at = static_cast<std::size_t>(k % (kMaxCycle + 1));
                m_held[at] = snapshot(m_cut, ring[at]);
            }
            m_compare_again = false;
            const int k = m_cut_index;
            const std::size_t at = static_cast<std::size_t>(k % (kMaxCycle + 1));
            const std::vector<double>& now = ring[at];
            for (int c = 1; m_held[at] && c <= std::min(k, kMaxCycle); ++c) {
                const std::size_t before = static_cast<std::size_t>((k - c) % (kMaxCycle + 1));
                if (!plain(m_cut, c * period.ops)) {
                    break; // the ops since then hold a chunk's last backward
                }
                if (!m_held[before]) {
                    continue;
                }
                const std::vector<double>& then = ring[before];
                if (periods % c != 0) {
                    if (settled(then, now, periods / c + 1) > 0) {
                        cycle = c;
                        m_compare_again = true; // once lengthened to fit the cycle
                        return Outcome::OtherCycle;
                    }
                    continue;
                }
                const double shift = settled(then, now, periods / c);
                if (shift > 0) {
                    settled_at = k;
                    cycle = c;
                    extend(m_cut, then, now, periods / c, shift);
                    return run_to(nullptr) ? Outcome::Extended : Outcome::Stalled;
                }
            }
        }
    }

private:
    // Micro-batch major, so that a longer schedule keeps every slot where it was.
    std::size_t slot(int s, int c, int mb) const { return (static_cast<std::size_t>(mb) * pp + s) * v + c; }

    void wake(int s)
    {
        if (!w.queued[s]) {
            w.queued[s] = 1;
            w.ready.push_back(s);
        }
    }

    // Walks stage s's schedule until it waits for another stage, reaches its limit or ends. A send
    // queues behind the stage's previous send and is blocking (the stage computes nothing more until it
    // is done) unless the sends are asynchronous (IterationCosts::async_sends). The busy sums are not
    // kept here: every stage runs each chunk's passes once per micro-batch, so fast_simulate() counts them.
    void advance(int s)
    {
        FastSimScratch::Stage& st = w.stage[s];
        const PipelineOp* order = w.orders[s].data();
        const char* split = w.split_here[s].data();
        const FastSimScratch::ChunkStep* steps = &w.steps[static_cast<std::size_t>(s) * v];
        const StageCosts& sc = ic.stage[static_cast<std::size_t>(s)];
        const int next_stage = (s + 1) % pp;
        const int prev_stage = (s + pp - 1) % pp;
        double compute_free = st.compute_free, block_until = st.block_until, pipe_free = st.pipe_free;
        std::size_t i = st.next_op;
        for (; i < st.limit; ++i) {
            const PipelineOp& op = order[i];
            const int c = op.chunk;
            const FastSimScratch::ChunkStep& t = steps[c];
            double start = std::max(compute_free, block_until);
            if (op.kind == PipelineOp::Kind::Forward) {
                if (t.receives_forward) {
                    const double arrival = w.forward_arrival[slot(s, c, op.micro_batch)];
                    if (arrival < 0) {
                        break;
                    }
                    start = std::max(start, arrival);
                    --w.pending;
                }
                const double end = start + (i == 0 ? t.first_forward_s : t.forward_s);
                compute_free = end;
                block_until = 0;
                if (t.sends_forward) {
                    const double send_end = std::max(end, pipe_free) + sc.send_forward_s;
                    pipe_free = send_end;
                    block_until = ic.async_sends ? 0 : send_end;
                    w.forward_arrival[slot(next_stage, s + 1 == pp ? c + 1 : c, op.micro_batch)] = send_end;
                    ++w.pending;
                    wake(next_stage);
                }
                continue;
            }
            if (t.receives_backward) {
                const double arrival = w.backward_arrival[slot(s, c, op.micro_batch)];
                if (arrival < 0) {
                    break;
                }
                start = std::max(start, arrival);
                --w.pending;
            }
            double cur = t.recompute_s > 0 ? start + t.recompute_s : start;
            if (split[i] != 0 && t.bucket_parts > 0) {
                // The chunk's last backward, in parts: each hands a gradient bucket to the data-parallel stream.
                for (int part = 0; part < t.bucket_parts; ++part) {
                    cur = cur + t.bucket_part_s;
                    st.dp_free = std::max(cur, st.dp_free) + t.bucket_s;
                }
            } else {
                cur = cur + t.backward_s;
            }
            st.last_backward_end = cur;
            compute_free = cur;
            block_until = 0;
            if (t.sends_backward) {
                const double send_end = std::max(cur, pipe_free) + sc.send_backward_s;
                pipe_free = send_end;
                block_until = ic.async_sends ? 0 : send_end;
                w.backward_arrival[slot(prev_stage, s == 0 ? c - 1 : c, op.micro_batch)] = send_end;
                ++w.pending;
                wake(prev_stage);
            }
        }
        st.next_op = i;
        st.compute_free = compute_free;
        st.block_until = block_until;
        st.pipe_free = pipe_free;
    }

    static double* clocks(FastSimScratch::Stage& st, int i)
    {
        double* const c[kTimesPerStage] = {&st.compute_free, &st.block_until, &st.pipe_free, &st.dp_free, &st.last_backward_end};
        return c[i];
    }

    // The incoming message of stage s's op `i`, if it needs one: its arrival time (< 0: not yet sent).
    double* message(int s, int i)
    {
        const PipelineOp& op = w.orders[s][static_cast<std::size_t>(i)];
        const FastSimScratch::ChunkStep& t = w.steps[static_cast<std::size_t>(s) * v + op.chunk];
        const std::size_t k = slot(s, op.chunk, op.micro_batch);
        if (op.kind == PipelineOp::Kind::Forward) {
            return t.receives_forward ? &w.forward_arrival[k] : nullptr;
        }
        return t.receives_backward ? &w.backward_arrival[k] : nullptr;
    }

    // The state at a cut: per stage its clocks and the arrival of the messages waiting for the ops right
    // after the cut (-1: none). False when messages wait further ahead (then not all are held).
    bool snapshot(const std::vector<int>& cut, std::vector<double>& out)
    {
        out.clear();
        long held = 0;
        for (int s = 0; s < pp; ++s) {
            FastSimScratch::Stage& st = w.stage[s];
            for (int i = 0; i < kTimesPerStage; ++i) {
                out.push_back(*clocks(st, i));
            }
            for (int i = 0; i < kWindowOps; ++i) {
                const double* a = message(s, cut[s] + i);
                const double t = a != nullptr && *a >= 0 ? *a : -1.0;
                held += t >= 0;
                out.push_back(t);
            }
        }
        return held == w.pending;
    }

    // True when the ops of the last `ops` before each cut are all like the ones they stand for in the
    // longer schedule: none is a stage's first op or a chunk's last backward.
    bool plain(const std::vector<int>& cut, int ops) const
    {
        for (int s = 0; s < pp; ++s) {
            const int from = cut[s] - ops;
            if (from < 1 || w.splits_before[s][static_cast<std::size_t>(cut[s])] != w.splits_before[s][static_cast<std::size_t>(from)]) {
                return false;
            }
        }
        return true;
    }

    // The common shift from `then` to `now` when every clock and message moved by it (or, a clock, not at
    // all) closely enough that `repeats` more repetitions keep every time within kExtensionError of
    // exact; else 0.
    double settled(const std::vector<double>& then, const std::vector<double>& now, long repeats) const
    {
        const double shift = now[0] - then[0];
        if (!(shift > 0)) {
            return 0;
        }
        double largest = 0;
        for (const double t : now) {
            largest = std::max(largest, std::abs(t));
        }
        // A state off by e from a repeating one stays within e of it for every later op, so after
        // `repeats` repetitions each time is off by at most repeats x e; the times then exceed
        // repeats x shift.
        const double tolerance = kExtensionError * (largest / static_cast<double>(repeats) + shift);
        for (std::size_t j = 0; j < now.size(); ++j) {
            const double a = then[j], b = now[j];
            const bool message = static_cast<int>(j % (kTimesPerStage + kWindowOps)) >= kTimesPerStage;
            if (message && (a < 0) != (b < 0)) {
                return 0;
            }
            if (a == b && (!message || a < 0)) {
                continue; // a clock the period does not touch (or no message either time)
            }
            if (!(std::abs(b - a - shift) <= tolerance)) {
                return 0;
            }
        }
        return shift;
    }

    // Adds `repeats` repetitions of the span from `then` to `now` (the current state) at this cut.
    void extend(const std::vector<int>& cut, const std::vector<double>& then, const std::vector<double>& now, long repeats, double shift)
    {
        const double by = static_cast<double>(repeats) * shift;
        const int per_stage = kTimesPerStage + kWindowOps;
        for (int s = 0; s < pp; ++s) {
            FastSimScratch::Stage& st = w.stage[s];
            const std::size_t base = static_cast<std::size_t>(s) * per_stage;
            for (int i = 0; i < kTimesPerStage; ++i) {
                if (then[base + i] != now[base + i]) {
                    *clocks(st, i) += by;
                }
            }
            for (int i = 0; i < kWindowOps; ++i) {
                double* a = message(s, cut[s] + i);
                if (a != nullptr && *a >= 0) {
                    *a += by;
                }
            }
        }
    }

    FastSimScratch& w;
    const IterationCosts& ic;
    int pp, v;
    int m_cut_index = -1; // the last cut reached
    std::vector<int> m_cut = std::vector<int>(static_cast<std::size_t>(pp));
    bool m_held[kMaxCycle + 1] = {}; // per ring entry: whether that state holds every message in flight
    bool m_compare_again = false;    // compare at the last cut again (after lengthening for a cycle)
};

// Each chunk's durations as the walk adds them, in the task graph's order of operations.
void fill_steps(const IterationCosts& ic, std::vector<FastSimScratch::ChunkStep>& steps)
{
    const int pp = ic.stages, v = ic.chunks;
    steps.resize(static_cast<std::size_t>(pp) * v);
    for (int s = 0; s < pp; ++s) {
        for (int c = 0; c < v; ++c) {
            FastSimScratch::ChunkStep& t = steps[static_cast<std::size_t>(s) * v + c];
            const ChunkCosts& ch = ic.at(s, c);
            t.forward_s = ic.forward_s(s, c, false);
            t.first_forward_s = ic.forward_s(s, c, true);
            t.recompute_s = ch.recompute_total_s;
            t.backward_s = ic.backward_s(s, c, false);
            t.bucket_parts = ic.bucket_overlap ? ch.buckets : 0;
            t.bucket_part_s = ic.bucket_overlap ? ic.backward_s(s, c, true) / ch.buckets : 0;
            t.bucket_s = ch.bucket_s;
            t.receives_forward = !(s == 0 && c == 0);
            t.sends_backward = t.receives_forward;
            t.receives_backward = !(s == pp - 1 && c == v - 1);
            t.sends_forward = t.receives_backward;
        }
    }
}

// Stage s's busy time by kind, as account_stages() sums it over the task graph: every chunk runs m
// forwards (the stage's first op carries the exposed parameter gather), m recomputes and m backwards (with
// bucket overlap, the chunk's last in parts), and sends after each pass but the pipeline's ends.
StageBreakdown busy_sums(const IterationCosts& ic, int s, int first_chunk)
{
    StageBreakdown b;
    double dp_s = 0;
    auto add = [&](double seconds, const TaskComm& comm, double times) {
        b.compute_s += times * (seconds - comm.total_s());
        b.tp_comm_s += times * comm.tp_s;
        b.ep_comm_s += times * comm.ep_s;
        b.cp_comm_s += times * comm.cp_s;
        dp_s += times * comm.dp_s;
    };
    const int pp = ic.stages, v = ic.chunks;
    const double m = ic.micro_batches;
    const StageCosts& sc = ic.stage[static_cast<std::size_t>(s)];
    for (int c = 0; c < v; ++c) {
        const ChunkCosts& ch = ic.at(s, c);
        const double first = c == first_chunk ? 1 : 0;
        add(ic.forward_s(s, c, false), ic.forward_comm(s, c, false), m - first);
        add(ic.forward_s(s, c, true), ic.forward_comm(s, c, true), first);
        if (ch.recompute_total_s > 0) {
            add(ch.recompute_total_s, ic.recompute_comm(s, c), m);
        }
        const double split = ic.bucket_overlap ? 1 : 0;
        add(ic.backward_s(s, c, false), ic.backward_comm(s, c, false), m - split);
        if (split > 0) {
            const int parts = ch.buckets;
            const TaskComm& bc = ic.backward_comm(s, c, true);
            TaskComm pc;
            pc.tp_s = bc.tp_s / parts;
            pc.ep_s = bc.ep_s / parts;
            pc.cp_s = bc.cp_s / parts;
            pc.dp_s = bc.dp_s / parts;
            add(ic.backward_s(s, c, true) / parts, pc, parts);
        }
        const bool first_virtual = s == 0 && c == 0, last_virtual = s == pp - 1 && c == v - 1;
        if (!ic.async_sends) { // asynchronous sends are not the stage's exposed time (account_stages())
            b.pp_comm_s += (last_virtual ? 0 : m * sc.send_forward_s) + (first_virtual ? 0 : m * sc.send_backward_s);
        }
    }
    b.dp_comm_exposed_s = dp_s; // the inline part; fast_simulate() adds the wait and the gather
    return b;
}

} // namespace

bool fast_simulate(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& p, const LayerCosts& costs,
                   FastSimScratch& w, FastSimResult& out, std::vector<StageBreakdown>& stages)
{
    IterationCosts& ic = w.costs;
    build_iteration_costs(model, training, cluster, p, costs, ic);
    const int pp = p.pp;
    const int v = ic.chunks;
    const int m = ic.micro_batches;
    fill_steps(ic, w.steps);

    // Walk a shorter schedule and extend its steady state. Until the state settles, lengthen the
    // schedule (to every micro-batch at worst) and walk on; lengthen it to fit a cycle of several periods.
    const auto period = schedule_period(p.schedule, pp, v);
    int budget = std::max(0, w.settle_periods);
    int walked = period && w.extend_steady_state ? reduced_micro_batches(*period, m, budget) : m;
    out.walks = 1;
    out.extended_micro_batches = 0;
    out.settled_at_cut = -1;
    out.cycle = 0;
    prepare_schedule(w, p.schedule, ic.runtime, pp, walked, v);
    Walk walk(w, ic);
    walk.reset();
    while (walked < m) {
        const long periods = (m - walked) / period->micro_batches;
        int cycle = 1;
        const auto outcome = walk.run_extended(*period, periods, cycle);
        if (outcome == Walk::Outcome::Extended) {
            out.extended_micro_batches = static_cast<std::int64_t>(m) - walked;
            out.settled_at_cut = walk.settled_at;
            out.cycle = cycle;
            break;
        }
        ++out.walks;
        if (outcome == Walk::Outcome::Stalled) {
            walked = m; // a cut that is not closed: a bug in schedule_period(); walk everything afresh
            prepare_schedule(w, p.schedule, ic.runtime, pp, walked, v);
            walk.reset();
            break;
        }
        budget = std::max(4, 4 * budget);
        walked = outcome == Walk::Outcome::OtherCycle ? walked + static_cast<int>(periods % cycle) * period->micro_batches
                                                      : std::max(walked, reduced_micro_batches(*period, m, budget));
        prepare_schedule(w, p.schedule, ic.runtime, pp, walked, v);
        walk.lengthen();
    }
    if (out.extended_micro_batches == 0 && !walk.run_to(nullptr)) {
        return false; // a stage waits forever: the schedule has a cycle
    }

    // After the last backward: remaining gradient buckets, the tied-embedding sync, the optimizer step
    // and (distributed optimizer) the parameter all-gather.
    const bool overlap = ic.bucket_overlap;
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
    }

    out.iteration_time_s = std::max(makespan - ic.closed_form_bubble_saving_s, ic.closed_form_min_makespan_s); // as task_graph_simulation.cpp
    stages.resize(static_cast<std::size_t>(pp));
    for (int s = 0; s < pp; ++s) {
        const FastSimScratch::Stage& st = w.stage[s];
        const StageCosts& sc = ic.stage[static_cast<std::size_t>(s)];
        StageBreakdown b = busy_sums(ic, s, w.orders[s].front().chunk);
        // As account_stages(): exposed data-parallel time is the wait before the optimizer after the
        // stage's last work (compute ends rise, and so do send ends), the gather and what compute exposes inline.
        const double last_work_end = std::max(st.compute_free, st.pipe_free);
        b.dp_comm_exposed_s += std::max(0.0, st.optimizer_start - last_work_end) + sc.param_gather_s;
        b.optimizer_s = sc.optimizer_s;
        stages[static_cast<std::size_t>(s)] = b;
    }
    return true;
}

} // namespace vtrain
