// SPDX-License-Identifier: MIT
// bench_simulate: how long one simulate() of MT-NLG 530B (t=8, p=35, d=12, 160 micro-batches per replica,
// examples/mt-nlg-530b.json) takes, as the median over many runs: the public simulate() with and without
// the timeline, the explorer's reuse of costs and workspace, and the explorer's fast path. Then the
// fast path's cost per plan against the micro-batch count per replica (16 to 1,000, issue 17: at most
// 2x from 16 to 1,000): GPT-3 13B on 64 A100-80GB (bench/gpt3-13b-a100-64.json's model and cluster),
// t=2 p=4 d=8 micro-batch 1, 1F1B and interleaved (v=2), global batch = micro-batches x 8; beside it the
// same walk without the steady-state extension (every micro-batch walked).
//   usage: bench_simulate [RUNS]   (default 200)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.h"
#include "iteration/fast_simulation.h"
#include "iteration/task_graph_simulation.h"
#include "vtrain/scenario_json.h"

int main(int argc, char** argv)
{
    using namespace vtrain;
    const int runs = argc > 1 ? std::max(1, std::stoi(argv[1])) : 200;
    const Scenario scenario = bench::load_example("mt-nlg-530b.json");
    const GpuProfile profile = bench::load_gpu(scenario.cluster.gpu);
    const Plan plan = *scenario.plan;

    auto time_runs = [&](const char* label, auto&& body) {
        std::vector<double> us;
        us.reserve(static_cast<std::size_t>(runs));
        double sink = 0;
        for (int i = 0; i < runs; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            sink += body();
            us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(us.begin(), us.end());
        std::printf("%-44s median %9.1f us   p10 %9.1f us   p90 %9.1f us   (%d runs, checksum %.6g)\n", label, us[us.size() / 2], us[us.size() / 10],
                    us[us.size() * 9 / 10], runs, sink / runs);
    };

    std::printf("MT-NLG 530B, %s, t=%d p=%d d=%d micro_batch=%d (%s, recompute %s)\n", profile.id.c_str(), plan.tp, plan.pp, plan.dp,
                plan.micro_batch, to_string(plan.schedule), to_string(plan.recompute));
    SimulationOptions no_timeline;
    no_timeline.timeline = false;
    time_runs("simulate() (no timeline)", [&] { return simulate(scenario, plan, profile, no_timeline).value().iteration_time_s; });
    time_runs("simulate() (with timeline)", [&] { return simulate(scenario, plan, profile).value().iteration_time_s; });

    // The explorer's path: costs computed once, workspace reused.
    const ResolvedCluster cluster = resolve_cluster(scenario.cluster, profile);
    LayerCosts costs = plan_layer_costs(scenario.model, scenario.training, cluster, plan);
    SimulationOptions cached;
    cached.timeline = false;
    cached.cached_costs = &costs;
    SimulationWorkspace ws;
    time_runs("simulate_checked() (cached costs, workspace)",
              [&] { return simulate_checked(scenario.model, scenario.training, cluster, plan, cached, ws).iteration_time_s; });
    time_runs("plan_layer_costs() (what the explorer caches)",
              [&] { return plan_layer_costs(scenario.model, scenario.training, cluster, plan).layer.forward.compute_s; });
    FastSimScratch scratch;
    std::vector<StageBreakdown> stages;
    time_runs("fast_simulate() (the explorer's fast path)", [&] {
        FastSimResult fast;
        fast_simulate(scenario.model, scenario.training, cluster, plan, costs, scratch, fast, stages);
        return fast.iteration_time_s;
    });
    const auto r = simulate(scenario, plan, profile, no_timeline).value();
    std::printf("iteration %.3f s, %zu tasks, %d micro-batches, MFU %.1f%%\n", r.iteration_time_s, r.task_count, r.micro_batches, 100 * r.mfu);

    // Issue 14's target: simulate() of DeepSeek-V3 as trained (2,048 H800, PP16 EP64, FP8, DualPipe-like
    // overlap) under 5 ms.
    {
        const Scenario dsv3 = bench::load_example("deepseek-v3-671b-h800.json");
        const GpuProfile h800 = bench::load_gpu(dsv3.cluster.gpu);
        const Plan dplan = *dsv3.plan;
        std::printf("\nDeepSeek-V3 671B, %s, t=%d p=%d d=%d ep=%d micro_batch=%d (%s)\n", h800.id.c_str(), dplan.tp, dplan.pp, dplan.dp, dplan.ep,
                    dplan.micro_batch, to_string(dplan.schedule));
        time_runs("simulate() (no timeline)", [&] { return simulate(dsv3, dplan, h800, no_timeline).value().iteration_time_s; });
        time_runs("simulate() (with timeline)", [&] { return simulate(dsv3, dplan, h800).value().iteration_time_s; });
        const auto d = simulate(dsv3, dplan, h800, no_timeline).value();
        std::printf("iteration %.3f s, %zu tasks, %d micro-batches, MFU %.1f%%\n", d.iteration_time_s, d.task_count, d.micro_batches, 100 * d.mfu);
    }

    auto gpt3 = load_scenario(std::string(VTRAIN_SOURCE_DIR) + "/bench/gpt3-13b-a100-64.json");
    if (!gpt3.ok()) {
        std::fprintf(stderr, "%s\n", gpt3.first_error().c_str());
        return 1;
    }
    const GpuProfile a100 = bench::load_gpu(gpt3->cluster.gpu);
    const ResolvedCluster cluster64 = resolve_cluster(gpt3->cluster, a100);
    for (const Schedule schedule : {Schedule::OneFOneB, Schedule::Interleaved}) {
        Plan p;
        p.tp = 2;
        p.pp = 4;
        p.dp = 8;
        p.micro_batch = 1;
        p.schedule = schedule;
        p.virtual_stages = schedule == Schedule::Interleaved ? 2 : 1;
        std::printf("\nGPT-3 13B, 64 A100-80GB, t=2 p=4 d=8 micro_batch=1 %s%s: fast_simulate() by micro-batches per replica\n", to_string(schedule),
                    schedule == Schedule::Interleaved ? " v=2" : "");
        double base_us = 0;
        for (const int m : {16, 64, 256, 1000}) {
            TrainingSpec training = gpt3->training;
            training.global_batch = m * p.dp * p.micro_batch;
            const LayerCosts layer_costs = plan_layer_costs(gpt3->model, training, cluster64, p);
            for (const bool extend : {true, false}) {
                FastSimScratch fast_scratch;
                fast_scratch.extend_steady_state = extend;
                std::vector<StageBreakdown> fast_stages;
                std::vector<double> us;
                double t = 0;
                for (int i = 0; i < runs; ++i) {
                    FastSimResult fast;
                    const auto t0 = std::chrono::steady_clock::now();
                    fast_simulate(gpt3->model, training, cluster64, p, layer_costs, fast_scratch, fast, fast_stages);
                    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
                    t = fast.iteration_time_s;
                }
                std::sort(us.begin(), us.end());
                const double median = us[us.size() / 2];
                if (extend && m == 16) {
                    base_us = median;
                }
                std::printf("  %4d micro-batches  %-26s median %8.1f us  (%5.2fx the 16-micro-batch plan)   iteration %.6f s\n", m,
                            extend ? "steady state extended" : "every micro-batch walked", median, base_us > 0 ? median / base_us : 0.0, t);
            }
        }
    }
    return 0;
}
