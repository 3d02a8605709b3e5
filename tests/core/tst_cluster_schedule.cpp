// SPDX-License-Identifier: MIT
// The multi-tenant cluster study: the event simulation on tiny clusters whose answers are worked out by
// hand (synthetic throughput curves), job-list parsing errors, the seeded generator, and a small run with
// simulated curves.
#include <QtTest>

#include <cmath>

#include "test_support.h"
#include "vtrain/cluster_schedule.h"
#include "vtrain/cluster_schedule_curves.h"
#include "vtrain/cluster_schedule_json.h"
#include "vtrain/cluster_schedule_workload.h"

using namespace vtrain;

namespace {

bool near(double a, double b, double tolerance = 1e-9)
{
    return std::abs(a - b) <= tolerance * std::max(1.0, std::abs(b));
}

ClusterJob job(const char* name, double tokens, double arrival_h, double deadline_h, int requested = 0)
{
    ClusterJob j;
    j.name = name;
    j.model = test::gpt(2, 256, 2);
    j.global_batch = 8;
    j.tokens = tokens;
    j.arrival_h = arrival_h;
    j.deadline_h = deadline_h;
    j.requested_gpus = requested;
    return j;
}

// 8 GPUs: 1000 tokens/s, 16: 1600, 32: 2000 (sublinear); the same plans for dp scaling.
ThroughputCurve sublinear_curve(int max_gpus)
{
    ThroughputCurve c;
    const std::vector<std::pair<int, double>> points{{8, 1000}, {16, 1600}, {32, 2000}};
    for (const auto& [gpus, rate] : points) {
        if (gpus <= max_gpus) {
            Plan p;
            p.dp = gpus;
            c.best.push_back({gpus, p, rate, 0.5});
        }
    }
    c.dp_scaling = c.best;
    return c;
}

ScheduleOptions options(int gpus, double restart_s = 0)
{
    ScheduleOptions o;
    o.cluster_gpus = gpus;
    o.restart_overhead_s = restart_s;
    return o;
}

bool has_error(const Diagnostics& errors, const std::string& field, const std::string& words = {})
{
    for (const auto& e : errors) {
        if (e.field == field && e.message.find(words) != std::string::npos) {
            return true;
        }
    }
    return false;
}

} // namespace

class TestClusterSchedule : public QObject {
    Q_OBJECT
private slots:
    // Two 1-hour jobs (3.6M tokens at 1000 tokens/s on 8 GPUs) on 16 GPUs, each asking for 8: both run
    // side by side and finish at 1 h.
    void fixed_two_jobs_side_by_side()
    {
        const std::vector<ClusterJob> jobs{job("a", 3.6e6, 0, 2, 8), job("b", 3.6e6, 0, 2, 8)};
        const std::vector<ThroughputCurve> curves(2, sublinear_curve(16));
        const PolicyResult r = simulate_cluster(jobs, curves, SchedulePolicy::Fixed, options(16));
        QCOMPARE(r.completed, 2);
        QVERIFY(near(r.jobs[0].finish_h, 1.0));
        QVERIFY(near(r.jobs[1].finish_h, 1.0));
        QVERIFY(near(r.deadline_satisfaction, 1.0));
        QVERIFY(near(r.average_jct_h, 1.0));
        QVERIFY(near(r.makespan_h, 1.0));
        QVERIFY(near(r.gpu_utilization, 1.0));
        QCOMPARE(r.restarts, 0);
    }

    // Each asks for all 16 GPUs (1600 tokens/s): a runs 0 -> 0.625 h, b waits and runs 0.625 -> 1.25 h,
    // missing its 1 h deadline.
    void fixed_queues_in_arrival_order()
    {
        const std::vector<ClusterJob> jobs{job("a", 3.6e6, 0, 1, 16), job("b", 3.6e6, 0, 1, 16)};
        const std::vector<ThroughputCurve> curves(2, sublinear_curve(16));
        const PolicyResult r = simulate_cluster(jobs, curves, SchedulePolicy::Fixed, options(16));
        QVERIFY(near(r.jobs[0].finish_h, 0.625));
        QVERIFY(near(r.jobs[1].first_start_h, 0.625));
        QVERIFY(near(r.jobs[1].finish_h, 1.25));
        QVERIFY(r.jobs[0].met_deadline);
        QVERIFY(!r.jobs[1].met_deadline);
        QVERIFY(near(r.deadline_satisfaction, 0.5));
        QVERIFY(near(r.average_jct_h, (0.625 + 1.25) / 2));
        QVERIFY(near(r.makespan_h, 1.25));
        QVERIFY(near(r.gpu_utilization, 1.0));
    }

    // The restart overhead delays the start of progress: 60 s + 1 h.
    void restart_overhead_delays_progress()
    {
        const std::vector<ClusterJob> jobs{job("a", 3.6e6, 0, 2, 8)};
        const PolicyResult r = simulate_cluster(jobs, {sublinear_curve(8)}, SchedulePolicy::Fixed, options(8, 60));
        QVERIFY(near(r.jobs[0].finish_h, 1.0 + 60.0 / 3600));
        QCOMPARE(r.jobs[0].segments.size(), std::size_t{1});
        QVERIFY(near(r.jobs[0].segments[0].ready_h, 60.0 / 3600));
    }

    // vtrain: a alone gets all 16 GPUs; when b arrives at 0.5 h both get 8 (a has 0.72M tokens left, done
    // at 0.7 h); then b gets 16 and finishes at 1.2 h.
    void vtrain_replans_at_arrivals_and_finishes()
    {
        const std::vector<ClusterJob> jobs{job("a", 3.6e6, 0, 2), job("b", 3.6e6, 0.5, 2)};
        const std::vector<ThroughputCurve> curves(2, sublinear_curve(16));
        const PolicyResult r = simulate_cluster(jobs, curves, SchedulePolicy::SimulatorInformed, options(16));
        QVERIFY(near(r.jobs[0].finish_h, 0.7));
        QVERIFY(near(r.jobs[1].finish_h, 1.2));
        QCOMPARE(r.jobs[0].segments.size(), std::size_t{2}); // 16 GPUs, then 8
        QCOMPARE(r.jobs[0].segments[0].gpus, 16);
        QCOMPARE(r.jobs[0].segments[1].gpus, 8);
        QCOMPARE(r.jobs[1].segments.size(), std::size_t{2}); // 8 GPUs, then 16
        QVERIFY(near(r.average_jct_h, 0.7));
        QVERIFY(near(r.makespan_h, 1.2));
        QVERIFY(near(r.deadline_satisfaction, 1.0));
        QCOMPARE(r.restarts, 2);
    }

    // On 32 GPUs with sublinear scaling: a (7.2M tokens, deadline 1.05 h) needs all 32 GPUs (3600 s).
    // vtrain gives them to a, then b runs alone (32 GPUs, 1800 s): both meet their deadlines.
    // elasticflow believes 16 GPUs give 2000 tokens/s, gives a 16 and b 16; a gets 32 only when b is done
    // (0.625 h), too late: a finishes at 1.125 h.
    void elasticflow_linear_belief_misses_a_deadline()
    {
        const std::vector<ClusterJob> jobs{job("a", 7.2e6, 0, 1.05), job("b", 3.6e6, 0, 10)};
        const std::vector<ThroughputCurve> curves(2, sublinear_curve(32));
        const PolicyResult ours = simulate_cluster(jobs, curves, SchedulePolicy::SimulatorInformed, options(32));
        QVERIFY(near(ours.jobs[0].finish_h, 1.0));
        QVERIFY(near(ours.jobs[1].finish_h, 1.5));
        QVERIFY(near(ours.deadline_satisfaction, 1.0));
        QVERIFY(near(ours.average_jct_h, 1.25));

        const PolicyResult elastic = simulate_cluster(jobs, curves, SchedulePolicy::ElasticFlow, options(32));
        QVERIFY(near(elastic.jobs[1].finish_h, 0.625));
        QVERIFY(near(elastic.jobs[0].finish_h, 1.125));
        QVERIFY(!elastic.jobs[0].met_deadline);
        QVERIFY(near(elastic.deadline_satisfaction, 0.5));
        QVERIFY(near(elastic.average_jct_h, 0.875));
        QVERIFY(near(elastic.makespan_h, 1.125));
    }

    void job_without_a_plan_never_runs()
    {
        const std::vector<ClusterJob> jobs{job("a", 3.6e6, 0, 2, 8), job("b", 3.6e6, 0, 2, 8)};
        const std::vector<ThroughputCurve> curves{sublinear_curve(16), ThroughputCurve{}};
        for (const auto policy : {SchedulePolicy::SimulatorInformed, SchedulePolicy::Fixed, SchedulePolicy::ElasticFlow}) {
            const PolicyResult r = simulate_cluster(jobs, curves, policy, options(16));
            QCOMPARE(r.completed, 1);
            QCOMPARE(r.unschedulable, 1);
            QVERIFY(!r.jobs[1].completed);
            QVERIFY(near(r.deadline_satisfaction, 0.5));
        }
    }

    void job_list_parses_catalog_and_object_models()
    {
        const auto jobs = jobs_from_text(R"({"jobs": [
            {"name": "small", "model": "gpt-1.3b", "tokens": 1e9, "arrival_h": 0, "deadline_h": 5, "requested_gpus": 8},
            {"model": {"layers": 4, "hidden": 512, "heads": 8, "seq_len": 1024, "vocab": 32000}, "global_batch": 64,
             "tokens": 2e8, "arrival_h": 1.5, "deadline_h": 3}]})");
        QVERIFY2(jobs.ok(), jobs.first_error().c_str());
        QCOMPARE(jobs->size(), std::size_t{2});
        QCOMPARE((*jobs)[0].model.hidden, 2048);
        QCOMPARE((*jobs)[0].global_batch, 512); // the catalog's batch
        QCOMPARE((*jobs)[1].name, std::string("job-1"));
        QCOMPARE((*jobs)[1].model.layers, 4);
        QCOMPARE((*jobs)[1].requested_gpus, 0);
        // Written and read back: the same jobs.
        const auto again = jobs_from_json(jobs_to_json(*jobs));
        QVERIFY2(again.ok(), again.first_error().c_str());
        QCOMPARE((*again)[0].model.layers, 24);
        QCOMPARE((*again)[1].deadline_h, 3.0);
    }

    void bad_job_lists_name_the_job_and_field()
    {
        const auto errors = [](const char* text) {
            const auto r = jobs_from_text(text);
            return r.ok() ? Diagnostics{} : r.errors();
        };
        QVERIFY(has_error(errors(R"({"jobs": []})"), "jobs", "empty"));
        QVERIFY(has_error(errors(R"({"jobs": {}})"), "jobs", "list"));
        QVERIFY(has_error(errors(R"([1, 2])"), "jobs"));
        QVERIFY(has_error(errors(R"({"jobs": [3]})"), "jobs[0]", "job object"));
        QVERIFY(!errors(R"({"jobs": [)").empty());
        const auto e = errors(R"({"jobs": [
            {"model": "gpt-1.3b", "tokens": 1e9, "arrival_h": 0, "deadline_h": 5},
            {"model": "gpt-1.3b", "tokens": 1e9, "arrival_h": 4, "deadline_h": 2},
            {"model": "gpt-9b", "tokens": 1e9, "arrival_h": 0, "deadline_h": 5},
            {"model": {"layers": 4, "hidden": 500, "heads": 8, "seq_len": 1024, "vocab": 32000}, "global_batch": 8,
             "tokens": 1e9, "arrival_h": 0, "deadline_h": 5},
            {"model": "gpt-1.3b", "arrival_h": 0, "deadline_h": 5, "requested_gpus": 0},
            {"model": {"layers": 4, "hidden": 512, "heads": 8, "seq_len": 1024, "vocab": 32000}, "tokens": 1e9,
             "arrival_h": 0, "deadline_h": 5, "deadlin_h": 6}]})");
        QVERIFY(has_error(e, "jobs[1].deadline_h", "later than arrival_h"));
        QVERIFY(has_error(e, "jobs[2].model", "not a catalog model"));
        QVERIFY(has_error(e, "jobs[3].model.heads", "must divide hidden"));
        QVERIFY(has_error(e, "jobs[4].tokens", "missing"));
        QVERIFY(has_error(e, "jobs[4].requested_gpus"));
        QVERIFY(has_error(e, "jobs[5].global_batch", "missing"));
        QVERIFY(has_error(e, "jobs[5].deadlin_h"));
        QVERIFY(!has_error(e, "jobs[0].model"));
    }

    void request_checks_jobs_against_the_cluster()
    {
        ScheduleRequest r;
        r.gpu = "a100-sxm4-80gb";
        r.num_gpus = 16;
        r.jobs = {job("a", 1e6, 0, 1, 32), job("b", 1e6, 2, 1)};
        const Diagnostics d = check_schedule_request(r);
        QVERIFY(has_error(d, "jobs[0].requested_gpus", "16 GPUs"));
        QVERIFY(has_error(d, "jobs[1].deadline_h"));
        r.jobs.clear();
        QVERIFY(has_error(check_schedule_request(r), "jobs", "empty"));
    }

    void generator_is_seeded_and_plausible()
    {
        WorkloadOptions o;
        o.jobs = 40;
        o.seed = 7;
        o.cluster_gpus = 256;
        const auto a = generate_workload(o);
        const auto b = generate_workload(o);
        QCOMPARE(a.size(), std::size_t{40});
        for (std::size_t i = 0; i < a.size(); ++i) {
            QCOMPARE(a[i].tokens, b[i].tokens);
            QCOMPARE(a[i].arrival_h, b[i].arrival_h);
            QVERIFY(a[i].arrival_h >= 0 && a[i].arrival_h <= o.window_hours);
            QVERIFY(a[i].deadline_h > a[i].arrival_h);
            QVERIFY(a[i].requested_gpus >= 8 && a[i].requested_gpus <= 256);
            QVERIFY(a[i].tokens > 0);
            QVERIFY(i == 0 || a[i - 1].arrival_h <= a[i].arrival_h);
        }
        o.seed = 8;
        QVERIFY(generate_workload(o)[0].arrival_h != a[0].arrival_h);
        QVERIFY(offered_load(a, o) > 0);
        QVERIFY(check_workload_options(o).empty());
        o.slack_min = 3;
        o.slack_max = 2;
        QVERIFY(has_error(check_workload_options(o), "slack_min"));
    }

    // Real curves for a small model on up to 16 A100s, and the whole study on two jobs.
    void study_with_simulated_curves()
    {
        const GpuProfile profile = test::shipped_profile("a100-sxm4-80gb");
        QVERIFY(!profile.id.empty());
        ScheduleRequest r;
        r.gpu = profile.id;
        r.num_gpus = 16;
        r.threads = 2;
        ClusterJob a = job("a", 2e9, 0, 24, 8);
        a.model = find_catalog_model("gpt-1.3b")->model;
        a.global_batch = 512;
        a.tokens = 2e9;
        a.arrival_h = 0;
        a.deadline_h = 24;
        a.requested_gpus = 8;
        ClusterJob b = a;
        b.name.assign(1, 'b');
        b.arrival_h = 1;
        b.requested_gpus = 0; // derived
        r.jobs = {a, b};
        StudyControl control;
        CurveCache cache;
        const auto study = run_schedule_study(r, profile, control, &cache);
        QVERIFY2(study.ok(), study.first_error().c_str());
        QCOMPARE(study->curves.size(), std::size_t{1}); // one distinct model
        QCOMPARE(cache.size(), std::size_t{1});
        const ThroughputCurve& curve = study->curves.begin()->second;
        QCOMPARE(curve.best.size(), std::size_t{5}); // 1, 2, 4, 8, 16 GPUs
        for (std::size_t i = 1; i < curve.best.size(); ++i) {
            QVERIFY(curve.best[i].tokens_per_s > curve.best[i - 1].tokens_per_s);
            QVERIFY(curve.best[i].tokens_per_s <= 2.0 * curve.best[i - 1].tokens_per_s * 1.0001);
        }
        for (const auto& p : curve.dp_scaling) {
            QCOMPARE(p.plan.tp * p.plan.pp, curve.dp_scaling.front().plan.tp * curve.dp_scaling.front().plan.pp);
        }
        QVERIFY(study->request.jobs[1].requested_gpus >= 1); // derived from the curve
        QCOMPARE(study->results.size(), std::size_t{3});
        for (const auto& p : study->results) {
            QCOMPARE(p.completed, 2);
            QVERIFY(p.gpu_utilization > 0 && p.gpu_utilization <= 1.0 + 1e-9);
            QVERIFY(p.cluster_mfu > 0 && p.cluster_mfu < 1);
            QVERIFY(p.makespan_h > 1);
        }
        const auto j = schedule_study_to_json(*study);
        QCOMPARE(j["policies"].size(), std::size_t{3});
        QVERIFY(j["policies"][0]["jobs"][0]["segments"].size() >= 1);
    }

    void cancelled_study_is_marked()
    {
        const GpuProfile profile = test::shipped_profile("a100-sxm4-80gb");
        ScheduleRequest r;
        r.gpu = profile.id;
        r.num_gpus = 8;
        r.jobs = {job("a", 1e6, 0, 1, 8)};
        StudyControl control;
        control.sweep.cancel = true;
        const auto study = run_schedule_study(r, profile, control);
        QVERIFY(study.ok());
        QVERIFY(study->cancelled);
        QVERIFY(study->results.empty());
    }
};

QTEST_APPLESS_MAIN(TestClusterSchedule)
#include "tst_cluster_schedule.moc"
