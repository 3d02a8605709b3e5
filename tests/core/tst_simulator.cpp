// SPDX-License-Identifier: MIT
// End-to-end properties of one simulated iteration on the shipped examples.
#include <QtTest>

#include <cmath>

#include <algorithm>
#include <map>

#include "model/model_math.h"
#include "test_support.h"
#include "vtrain/result_json.h"
#include "vtrain/scenario_json.h"
#include "vtrain/simulator.h"
#include "vtrain/uncertainty.h"

using namespace vtrain;

namespace {

Scenario example(const char* name)
{
    const auto s = load_scenario(std::string(VTRAIN_SOURCE_DIR) + "/examples/" + name);
    if (!s.ok()) {
        qFatal("%s", s.first_error().c_str());
    }
    return *s;
}

SimulationResult run(const Scenario& s, const Plan& plan, bool timeline = false)
{
    const GpuProfile profile = test::shipped_profile(s.cluster.gpu);
    const auto r = simulate(s, plan, profile, SimulationOptions{timeline, nullptr});
    if (!r.ok()) {
        qFatal("%s", r.first_error().c_str());
    }
    return *r;
}

} // namespace

class TestSimulator : public QObject {
    Q_OBJECT
private slots:
    void examples_simulate_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* f : {"mt-nlg-530b.json", "gpt3-175b.json", "llama3-70b-h100.json", "gpt-1.3b.json"}) {
            QTest::newRow(f) << QString::fromLatin1(f);
        }
    }
    void examples_simulate()
    {
        QFETCH(QString, file);
        const Scenario s = example(file.toLatin1().constData());
        const SimulationResult r = run(s, *s.plan);
        QVERIFY(r.iteration_time_s > 0);
        QVERIFY(r.fits_memory);
        QVERIFY(r.mfu > 0.05 && r.mfu < 1.0);
        const double tokens = double(s.training.global_batch) * s.model.seq_len;
        QCOMPARE(r.tokens_per_s, tokens / r.iteration_time_s);
        QCOMPARE(r.model_tflops_per_gpu, model_flops_per_iteration(s.model, s.training.global_batch) / r.iteration_time_s / r.num_gpus / 1e12);
        QVERIFY(r.hardware_tflops_per_gpu >= r.model_tflops_per_gpu);
        // Whole iterations: the last, partly filled one is counted in full.
        QCOMPARE(r.iterations, std::ceil(s.training.tokens / tokens));
        QCOMPARE(r.training_days, std::ceil(s.training.tokens / tokens) * r.iteration_time_s / 86400);
        QCOMPARE(r.cost_usd, r.training_days * 24 * r.num_gpus * r.price_per_gpu_hour);
        // Each stage's time adds up to the iteration.
        for (const auto& st : r.stages) {
            const StageBreakdown& b = st.breakdown;
            const double sum = b.compute_s + b.tp_comm_s + b.pp_comm_s + b.dp_comm_exposed_s + b.optimizer_s + b.bubble_s;
            QVERIFY2(std::abs(sum - r.iteration_time_s) < 1e-9 * r.iteration_time_s, qPrintable(QString::number(sum)));
        }
    }

    void timeline_is_consistent()
    {
        const Scenario s = example("gpt3-175b.json");
        const SimulationResult r = run(s, *s.plan, true);
        QCOMPARE(r.timeline.size(), r.task_count);
        std::map<std::pair<int, int>, double> lane_end; // tasks on one lane never overlap
        std::map<int, int> forwards;
        double latest = 0;
        for (const auto& t : r.timeline) {
            QVERIFY(t.end_s >= t.start_s);
            auto& end = lane_end[{t.stage, int(t.lane)}];
            QVERIFY(t.start_s >= end - 1e-12);
            end = t.end_s;
            latest = std::max(latest, t.end_s);
            if (t.kind == TaskKind::Forward) {
                ++forwards[t.stage];
            }
        }
        QCOMPARE(latest, r.iteration_time_s);
        QCOMPARE(int(forwards.size()), s.plan->pp);
        for (const auto& [stage, count] : forwards) {
            QCOMPARE(count, r.micro_batches * s.plan->virtual_stages);
        }
        const auto trace = timeline_to_chrome_trace(r);
        QVERIFY(trace["traceEvents"].size() > r.timeline.size());
    }

    void plan_choices_move_time_and_memory_the_right_way()
    {
        const Scenario s = example("mt-nlg-530b.json");
        const Plan base = *s.plan;
        const SimulationResult full = run(s, base);
        Plan none = base;
        none.recompute = Recompute::None;
        const SimulationResult no_recompute = run(s, none);
        QVERIFY(no_recompute.iteration_time_s < full.iteration_time_s);
        QVERIFY(no_recompute.peak_memory_gib > full.peak_memory_gib);

        Plan sp = base;
        sp.sequence_parallel = true;
        QVERIFY(run(s, sp).peak_memory_gib < full.peak_memory_gib);

        Plan zero = base;
        zero.zero_stage = 1;
        QVERIFY(run(s, zero).peak_memory_gib < full.peak_memory_gib);

        Plan serial = base;
        serial.overlap_grad_reduce = false;
        QVERIFY(run(s, serial).iteration_time_s > full.iteration_time_s);
    }

    void asynchronous_pipeline_sends_hold_only_the_receiver()
    {
        // Llama 3 70B's interleaved pipeline (pp 8, 5 chunks per rank) over a 1 Gb/s network: every send crosses
        // nodes and takes longer than a chunk. Blocking sends stall each sender; asynchronous ones (Megatron-Core
        // overlap_p2p_comm) only delay the receiver, so the iteration is shorter and no send counts as exposed.
        Scenario s = example("llama3-70b-h100.json");
        s.cluster.links.nic_gbit_per_s = 1;
        const Plan p = *s.plan;
        const SimulationResult blocking = run(s, p);
        QVERIFY(blocking.breakdown.pp_comm_s > 0);
        s.training.overlap_p2p = true;
        const SimulationResult async = run(s, p);
        QVERIFY(async.iteration_time_s < blocking.iteration_time_s);
        QCOMPARE(async.breakdown.pp_comm_s, 0.0);
        // The pipeline still waits for its data: the iteration is no shorter than with free sends.
        s.cluster.links.nic_gbit_per_s = 1e6;
        QVERIFY(async.iteration_time_s > run(s, p).iteration_time_s);
        // One chunk per rank keeps Megatron's batched, blocking sends.
        s.cluster.links.nic_gbit_per_s = 1;
        Plan one = *s.plan;
        one.schedule = Schedule::OneFOneB;
        one.virtual_stages = 1;
        const double with_flag = run(s, one).iteration_time_s;
        s.training.overlap_p2p = false;
        QCOMPARE(run(s, one).iteration_time_s, with_flag);
        // The field is read and written.
        s.training.overlap_p2p = true;
        QVERIFY(scenario_from_json(scenario_to_json(s))->training.overlap_p2p);
    }

    void results_are_deterministic()
    {
        const Scenario s = example("llama3-70b-h100.json");
        const auto a = result_to_json(run(s, *s.plan));
        const auto b = result_to_json(run(s, *s.plan));
        QVERIFY(a == b);
        for (const char* key : {"iteration_time_s", "tokens_per_s", "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "bubble_fraction",
                                "peak_memory_gib", "fits_memory", "training_days", "cost_usd", "breakdown"}) {
            QVERIFY2(a.contains(key), key);
        }
        QCOMPARE(int(a["peak_memory_gib"].size()), s.plan->pp);
    }

    // simulate() reuses its thread's buffers: a larger plan in between (more stages, more micro-batches)
    // and a timeline run must leave no trace in the next result.
    void reused_buffers_leave_no_trace()
    {
        const Scenario small = example("llama3-70b-h100.json");
        const Scenario big = example("mt-nlg-530b.json");
        const auto first = result_to_json(run(small, *small.plan));
        run(big, *big.plan, true);
        run(big, *big.plan);
        QVERIFY(result_to_json(run(small, *small.plan)) == first);
    }

    // host_term_range brackets the prediction; with the host terms at zero there is nothing to scale, and
    // scaling by f moves a time by at most f (only the host's share of it scales).
    void host_term_range_brackets_the_prediction()
    {
        const Scenario s = example("gpt-1.3b.json");
        const GpuProfile profile = test::shipped_profile(s.cluster.gpu);
        const SimulationResult r = run(s, *s.plan);
        const auto range = host_term_range(s, *s.plan, profile);
        QVERIFY(range.ok());
        QVERIFY(range->light_s <= r.iteration_time_s * (1 + 1e-12) && r.iteration_time_s <= range->heavy_s * (1 + 1e-12));
        QVERIFY(range->heavy_s <= r.iteration_time_s * kHostTermPriorWidth * (1 + 1e-9));
        QVERIFY(range->light_s >= r.iteration_time_s / kHostTermPriorWidth * (1 - 1e-9));
        GpuProfile no_host = profile;
        no_host.host_overhead_us = 0;
        no_host.moe_host_op_us = 0;
        const auto flat = host_term_range(s, *s.plan, no_host);
        QVERIFY(flat.ok());
        QCOMPARE(flat->light_s, flat->heavy_s);
        // attach_host_term_range writes the same range into a result; host_bound says whether it moves it by 5%.
        SimulationResult attached = r;
        attach_host_term_range(attached, s, *s.plan, profile);
        QCOMPARE(attached.host_light_s, range->light_s);
        QCOMPARE(attached.host_heavy_s, range->heavy_s);
        QCOMPARE(host_bound(attached), (range->heavy_s - range->light_s) / r.iteration_time_s > 0.05);
        attached.host_light_s = 0.5 * r.iteration_time_s;
        attached.host_heavy_s = 2.0 * r.iteration_time_s;
        QVERIFY(host_bound(attached));
        attached.host_heavy_s = attached.host_light_s = r.iteration_time_s;
        QVERIFY(!host_bound(attached));
        const GpuProfile scaled = with_host_terms_scaled(profile, 2);
        QCOMPARE(scaled.host_overhead_us, 2 * profile.host_overhead_us);
        QCOMPARE(scaled.moe_host_op_us, 2 * profile.moe_host_op_us);
        QCOMPARE(scaled.kernel_launch_overhead_us, profile.kernel_launch_overhead_us); // the GPU-side gap is not a host term
    }

    void impossible_plan_is_refused_not_simulated()
    {
        const Scenario s = example("mt-nlg-530b.json");
        Plan p = *s.plan;
        p.dp = 11;
        const auto r = simulate(s, p, test::shipped_profile("a100-sxm4-80gb"));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.errors().front().field), QStringLiteral("plan"));
    }
};

QTEST_APPLESS_MAIN(TestSimulator)
#include "tst_simulator.moc"
