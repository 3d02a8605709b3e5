// SPDX-License-Identifier: MIT
// Pipeline schedules: operation orders, and iteration times against closed forms with uniform stages
// and free communication: GPipe and 1F1B take (m + p - 1)(f + b); interleaving with v chunks shrinks
// the bubble to (p - 1)(f + b) / v.
#include <QtTest>

#include <map>
#include <set>

#include "iteration/event_simulation.h"
#include "iteration/pipeline_schedule.h"
#include "iteration/task_graph_simulation.h"
#include "test_support.h"

using namespace vtrain;

namespace {

// Forwards a stage runs before its first backward.
int leading_forwards(const StageOrder& order)
{
    int n = 0;
    while (n < static_cast<int>(order.size()) && order[n].kind == PipelineOp::Kind::Forward) {
        ++n;
    }
    return n;
}

// Uniform per-layer costs with nothing on the first or last stage.
LayerCosts uniform_costs(double f_per_layer, double b_per_layer)
{
    LayerCosts c;
    c.layer.forward.compute_s = f_per_layer;
    c.layer.backward.compute_s = b_per_layer;
    return c;
}

double simulate_uniform(Schedule schedule, int p, int m, int v, double f, double b)
{
    Scenario sc;
    sc.model = test::gpt(p * v * 2, 1024, 16);
    sc.cluster.gpu = "test-gpu";
    sc.cluster.num_gpus = p;
    sc.training.global_batch = m;
    Plan plan;
    plan.pp = p;
    plan.schedule = schedule;
    plan.virtual_stages = v;
    const LayerCosts costs = uniform_costs(f, b);
    static const GpuProfile profile = test::free_network_profile();
    const auto r = simulate(sc, plan, profile, SimulationOptions{true, &costs});
    if (!r.ok()) {
        qWarning() << QString::fromStdString(r.first_error());
        return -1;
    }
    // Leave out the optimizer step (the same for every schedule).
    double last_backward = 0;
    for (const auto& t : r->timeline) {
        if (t.kind == TaskKind::Backward) {
            last_backward = std::max(last_backward, t.end_s);
        }
    }
    return last_backward;
}

// Where each op's incoming message comes from: the (stage, op index) of the pass it waits for on another
// virtual stage, or (-1, -1) for the pipeline's first forward and last backward.
std::vector<std::vector<std::pair<int, int>>> producers(const std::vector<StageOrder>& orders, int chunks)
{
    const int p = static_cast<int>(orders.size());
    std::map<std::tuple<int, int, int, int>, int> where; // (stage, kind, chunk, micro-batch) -> index
    for (int s = 0; s < p; ++s) {
        for (int i = 0; i < static_cast<int>(orders[s].size()); ++i) {
            const PipelineOp& op = orders[s][i];
            where[{s, int(op.kind), op.chunk, op.micro_batch}] = i;
        }
    }
    std::vector<std::vector<std::pair<int, int>>> out(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
        for (const PipelineOp& op : orders[s]) {
            const int virtual_stage = op.chunk * p + s;
            const bool forward = op.kind == PipelineOp::Kind::Forward;
            const int from = forward ? virtual_stage - 1 : virtual_stage + 1;
            if (from < 0 || from >= p * chunks) {
                out[s].push_back({-1, -1});
                continue;
            }
            const int q = from % p;
            out[s].push_back({q, where.at({q, int(op.kind), from / p, op.micro_batch})});
        }
    }
    return out;
}

} // namespace

class TestSchedules : public QObject {
    Q_OBJECT
private slots:
    void every_stage_runs_every_pass_once_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("chunks");
        QTest::newRow("gpipe") << int(Schedule::GPipe) << 1;
        QTest::newRow("1f1b") << int(Schedule::OneFOneB) << 1;
        QTest::newRow("interleaved") << int(Schedule::Interleaved) << 3;
    }
    void every_stage_runs_every_pass_once()
    {
        QFETCH(int, schedule);
        QFETCH(int, chunks);
        const int p = 4, m = 8;
        const auto orders = build_schedule(static_cast<Schedule>(schedule), p, m, chunks);
        QCOMPARE(int(orders.size()), p);
        for (const auto& order : orders) {
            QCOMPARE(int(order.size()), 2 * m * chunks);
            std::set<std::tuple<int, int, int>> seen;
            std::set<std::pair<int, int>> forwarded;
            for (const auto& op : order) {
                QVERIFY(seen.insert({int(op.kind), op.micro_batch, op.chunk}).second);
                if (op.kind == PipelineOp::Kind::Forward) {
                    forwarded.insert({op.micro_batch, op.chunk});
                } else {
                    QVERIFY(forwarded.count({op.micro_batch, op.chunk}) == 1); // backward after its forward
                }
            }
        }
    }

    void one_f_one_b_warms_up_with_p_minus_s_minus_1_forwards()
    {
        const auto orders = one_f_one_b_schedule(4, 8);
        for (int s = 0; s < 4; ++s) {
            int leading = 0;
            while (orders[s][leading].kind == PipelineOp::Kind::Forward) {
                ++leading;
            }
            QCOMPARE(leading, 4 - s); // warm-up forwards plus the first steady-state forward
        }
    }

    // With exactly p micro-batches, Megatron-Core's interleaved schedule runs every forward first; PyTorch's
    // ScheduleInterleaved1F1B keeps its general warm-up, (v - 1) p + 2 (p - 1 - s) forwards (capped at v m), and
    // then alternates. p = 8, v = 2, m = 8 (torchtitan's 405B interleaved run): the last rank starts its
    // backwards after 8 + 1 forwards and holds 9 activation sets, the first rank all 16; with 2p micro-batches
    // the two runtimes order the passes alike.
    void interleaved_warmup_depends_on_the_runtime()
    {
        const auto megatron = interleaved_schedule(8, 8, 2, PipelineRuntime::Megatron);
        const auto pytorch = interleaved_schedule(8, 8, 2, PipelineRuntime::PyTorch);
        for (int s = 0; s < 8; ++s) {
            QCOMPARE(leading_forwards(megatron[s]), 16);
            QCOMPARE(leading_forwards(pytorch[s]), std::min(16, 8 + 2 * (8 - 1 - s) + 1));
            QCOMPARE(peak_in_flight_closed_form(Schedule::Interleaved, 8, 8, 2, s, PipelineRuntime::PyTorch), int(peak_in_flight_chunks(pytorch)[s]));
        }
        QCOMPARE(peak_in_flight_closed_form(Schedule::Interleaved, 8, 8, 2, 7, PipelineRuntime::PyTorch), 9);
        QCOMPARE(peak_in_flight_closed_form(Schedule::Interleaved, 8, 8, 2, 7, PipelineRuntime::Megatron), 16);
        QVERIFY(interleaved_schedule(4, 8, 2, PipelineRuntime::PyTorch) == interleaved_schedule(4, 8, 2, PipelineRuntime::Megatron));
        QVERIFY(build_schedule(Schedule::Interleaved, 8, 8, 2, PipelineRuntime::PyTorch) == pytorch);
    }

    // Under the expert all-to-all overlap a stage's passes pair up only after its warm-up, which is one
    // forward longer than the schedule's (Megatron-Core's combined 1F1B): as many forwards as the schedule's
    // own order runs before its first backward run alone, and as many backwards at the end.
    void unpaired_passes_are_the_warmup_plus_one()
    {
        // Without a pipeline: the first forward and the last backward run alone (combined_1f1b.py).
        QCOMPARE(unpaired_passes(Schedule::OneFOneB, 1, 5, 1, 0), 1);
        QCOMPARE(unpaired_passes(Schedule::OneFOneB, 1, 1, 1, 0), 1);
        // 1F1B, p 4, m 8: warm-up p - s - 1, one more (the steady forward runs beside the next backward).
        const auto ofob = one_f_one_b_schedule(4, 8);
        for (int s = 0; s < 4; ++s) {
            QCOMPARE(unpaired_passes(Schedule::OneFOneB, 4, 8, 1, s), leading_forwards(ofob[s]));
            QCOMPARE(unpaired_passes(Schedule::OneFOneB, 4, 8, 1, s), 4 - s);
        }
        // Interleaved, p 4, m 16, v 2: 2 (p - s - 1) + (v - 1) p + 1; stage 0 has 11 of its 32 forwards alone.
        const auto inter = interleaved_schedule(4, 16, 2);
        for (int s = 0; s < 4; ++s) {
            QCOMPARE(unpaired_passes(Schedule::Interleaved, 4, 16, 2, s), leading_forwards(inter[s]));
        }
        QCOMPARE(unpaired_passes(Schedule::Interleaved, 4, 16, 2, 0), 11);
        // Never more than the stage has: Megatron runs every forward first with m == p; GPipe pairs nothing.
        QCOMPARE(unpaired_passes(Schedule::Interleaved, 8, 8, 2, 3), 16);
        QCOMPARE(unpaired_passes(Schedule::GPipe, 4, 8, 1, 2), 8);
    }

    void closed_forms_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("p");
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("v");
        QTest::newRow("gpipe p4 m8") << int(Schedule::GPipe) << 4 << 8 << 1;
        QTest::newRow("gpipe p8 m3") << int(Schedule::GPipe) << 8 << 3 << 1;
        QTest::newRow("1f1b p4 m8") << int(Schedule::OneFOneB) << 4 << 8 << 1;
        QTest::newRow("1f1b p8 m32") << int(Schedule::OneFOneB) << 8 << 32 << 1;
        QTest::newRow("1f1b p1 m4") << int(Schedule::OneFOneB) << 1 << 4 << 1;
        QTest::newRow("interleaved p4 m8 v2") << int(Schedule::Interleaved) << 4 << 8 << 2;
        QTest::newRow("interleaved p4 m16 v4") << int(Schedule::Interleaved) << 4 << 16 << 4;
    }
    void closed_forms()
    {
        QFETCH(int, schedule);
        QFETCH(int, p);
        QFETCH(int, m);
        QFETCH(int, v);
        const double f_layer = 1e-3, b_layer = 2e-3;
        const int layers_per_stage = 2 * v; // the helper builds p * v * 2 layers
        const double f = f_layer * layers_per_stage, b = b_layer * layers_per_stage;
        const double t = simulate_uniform(static_cast<Schedule>(schedule), p, m, v, f_layer, b_layer);
        const double expected =
            static_cast<Schedule>(schedule) == Schedule::Interleaved ? m * (f + b) + (p - 1) * (f + b) / v : (m + p - 1) * (f + b);
        QVERIFY2(std::abs(t - expected) < 1e-9, qPrintable(QStringLiteral("got %1, expected %2").arg(t).arg(expected)));
    }

    // DeepSeek-V3 report Table 2 by hand: pp 8, F = 1, B = 2 (W = B / 2 = 1): DualPipe's bubble
    // (8/2 - 1)(F&B + B - 3W) = 3 x (3 + 2 - 3) = 6 against 1F1B's (8 - 1)(F + B) = 21.
    void dualpipe_bubble_follows_table_2()
    {
        QCOMPARE(dualpipe_bubble_s(8, 1.0, 2.0), 6.0);
        QCOMPARE(dualpipe_bubble_saving_s(8, 1.0, 2.0), 15.0);
        QCOMPARE(dualpipe_bubble_s(2, 1.0, 2.0), 0.0); // pp 2: the two directions fill each other's bubble
        for (int s = 0; s < 8; ++s) {
            QCOMPARE(peak_in_flight_closed_form(Schedule::DualPipe, 8, 32, 1, s), 9); // PP + 1 on every device
        }
    }

    // The simulated iteration is 1F1B's minus the closed-form saving of the stages' F and B.
    void dualpipe_iteration_is_1f1b_minus_the_saving()
    {
        const int p = 4, m = 8;
        const double f_layer = 1e-3, b_layer = 2e-3;
        Scenario sc;
        sc.model = test::gpt(p * 2, 1024, 16);
        sc.cluster.gpu = "test-gpu";
        sc.cluster.num_gpus = p;
        sc.training.global_batch = m;
        Plan plan;
        plan.pp = p;
        const LayerCosts costs = uniform_costs(f_layer, b_layer);
        static const GpuProfile profile = test::free_network_profile();
        const auto one_f_one_b = simulate(sc, plan, profile, SimulationOptions{false, &costs});
        plan.schedule = Schedule::DualPipe;
        const auto dualpipe = simulate(sc, plan, profile, SimulationOptions{false, &costs});
        QVERIFY(one_f_one_b.ok() && dualpipe.ok());
        const double saving = dualpipe_bubble_saving_s(p, 2 * f_layer, 2 * b_layer); // two layers per stage
        QVERIFY(saving > 0);
        QCOMPARE(one_f_one_b->iteration_time_s - dualpipe->iteration_time_s, saving);
        plan.pp = 3; // odd: refused with the reason
        sc.cluster.num_gpus = 3;
        sc.model = test::gpt(6, 1024, 16);
        QVERIFY(!simulate(sc, plan, profile, SimulationOptions{false, &costs}).ok());
    }

    // What the fast path's steady-state extension relies on (pipeline_schedule.h, SchedulePeriod): at every
    // cut up to last_cut() (and before any chunk's last backward), the schedule with one period more is this one
    // with the period before the cut repeated there, every op after the cut fed by the op one period
    // later than before on the same stage, and nothing before a cut fed from after another stage's cut.
    // Up to the cut, both run the very same ops (micro-batches included), so a walk can lengthen its
    // schedule part-way.
    void schedule_period_repeats_the_middle_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("chunks");
        QTest::newRow("1f1b") << int(Schedule::OneFOneB) << 1;
        QTest::newRow("interleaved v2") << int(Schedule::Interleaved) << 2;
        QTest::newRow("interleaved v3") << int(Schedule::Interleaved) << 3;
        QTest::newRow("interleaved v5") << int(Schedule::Interleaved) << 5;
    }
    void schedule_period_repeats_the_middle()
    {
        QFETCH(int, schedule);
        QFETCH(int, chunks);
        const auto kind = static_cast<Schedule>(schedule);
        int cuts_checked = 0;
        for (const int p : {1, 2, 3, 4, 6, 8}) {
            if (kind == Schedule::Interleaved && p < 2) {
                continue;
            }
            const auto period = schedule_period(kind, p, chunks);
            QVERIFY(period.has_value());
            QCOMPARE(int(period->first_cut.size()), p);
            for (int m = period->min_micro_batches; m <= period->min_micro_batches + 4 * period->micro_batches; m += period->micro_batches) {
                const auto a = build_schedule(kind, p, m, chunks);
                const auto b = build_schedule(kind, p, m + period->micro_batches, chunks);
                const auto from_a = producers(a, chunks);
                const auto from_b = producers(b, chunks);
                for (int k = 1; k <= period->last_cut(m); ++k) {
                    std::vector<int> cut(static_cast<std::size_t>(p));
                    bool middle = true;
                    for (int s = 0; s < p; ++s) {
                        cut[s] = period->first_cut[s] + k * period->ops;
                        // In the middle: no chunk's last backward before the cut.
                        std::set<int> backward_chunks_after;
                        for (int i = cut[s]; i < int(a[s].size()); ++i) {
                            if (a[s][i].kind == PipelineOp::Kind::Backward) {
                                backward_chunks_after.insert(a[s][i].chunk);
                            }
                        }
                        middle = middle && cut[s] <= int(a[s].size()) && int(backward_chunks_after.size()) == chunks;
                    }
                    QVERIFY2(middle || (chunks == 1 && p == 1), qPrintable(QStringLiteral("p %1 m %2 cut %3 past the middle").arg(p).arg(m).arg(k)));
                    if (!middle) {
                        continue; // a single stage's last backward closes every steady step
                    }
                    ++cuts_checked;
                    const QString where = QStringLiteral("p %1 m %2 cut %3").arg(p).arg(m).arg(k);
                    for (int s = 0; s < p; ++s) {
                        QCOMPARE(b[s].size(), a[s].size() + std::size_t(period->ops));
                        for (int j = 0; j < int(b[s].size()); ++j) {
                            const int was = j < cut[s] ? j : j - period->ops; // the op of `a` it repeats
                            if (j < cut[s]) {
                                QVERIFY2(b[s][j] == a[s][j], qPrintable(where)); // the same op, micro-batch included
                            }
                            QVERIFY2(b[s][j].kind == a[s][was].kind && b[s][j].chunk == a[s][was].chunk, qPrintable(where));
                            auto [q, i] = from_a[s][was];
                            if (j >= cut[s] && q >= 0) {
                                i += period->ops;
                            }
                            QVERIFY2(from_b[s][j] == std::make_pair(q, i), qPrintable(where + QStringLiteral(" stage %1 op %2").arg(s).arg(j)));
                            if (j < cut[s] && q >= 0) {
                                QVERIFY2(from_a[s][j].second < cut[q], qPrintable(where + QStringLiteral(" cut not closed at stage %1").arg(s)));
                            }
                        }
                    }
                }
            }
        }
        QVERIFY(cuts_checked >= 20);
        QVERIFY(!schedule_period(Schedule::GPipe, 4, 1).has_value());
    }

    void event_simulation_follows_streams_and_dependencies()
    {
        TaskGraph g;
        const auto a = g.add_task(0, 1.0);
        const auto b = g.add_task(0, 2.0); // after a on stream 0
        const auto c = g.add_task(1, 0.5); // waits for a
        const auto d = g.add_task(1, 1.0); // after c on stream 1, and waits for b
        g.add_dependency(a, c);
        g.add_dependency(b, d);
        const TaskTimes t = simulate_events(g);
        QVERIFY(t.complete);
        QCOMPARE(t.start[b], 1.0);
        QCOMPARE(t.start[c], 1.0);
        QCOMPARE(t.start[d], 3.0);
        QCOMPARE(t.makespan, 4.0);
    }

    void event_simulation_reports_cycles()
    {
        TaskGraph g;
        const auto a = g.add_task(0, 1.0);
        const auto b = g.add_task(1, 1.0);
        g.add_dependency(a, b);
        g.add_dependency(b, a);
        QVERIFY(!simulate_events(g).complete);
    }
};

QTEST_APPLESS_MAIN(TestSchedules)
#include "tst_schedules.moc"
