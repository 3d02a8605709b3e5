// SPDX-License-Identifier: MIT
// bench_simulate: how long one simulate() of MT-NLG 530B (t=8, p=35, d=12, 160 micro-batches per replica,
// examples/mt-nlg-530b.json) takes, as the median over many runs: the public simulate() with and without
// the timeline, the explorer's reuse of costs and workspace, and the explorer's fast path.
//   usage: bench_simulate [RUNS]   (default 200)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.h"
#include "vtrain/explorer_fast_sim.h"
#include "vtrain/simulator.h"

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
        std::printf("%-44s median %9.1f us   p10 %9.1f us   p90 %9.1f us   (%d runs, checksum %.6g)\n", label, us[us.size() / 2],
                    us[us.size() / 10], us[us.size() * 9 / 10], runs, sink / runs);
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
    time_runs("fast_simulate() (the explorer's fast path)", [&] {
        FastSimResult fast;
        fast_simulate(scenario.model, scenario.training, cluster, plan, costs, scratch, fast);
        return fast.iteration_time_s;
    });
    const auto r = simulate(scenario, plan, profile, no_timeline).value();
    std::printf("iteration %.3f s, %zu tasks, %d micro-batches, MFU %.1f%%\n", r.iteration_time_s, r.task_count, r.micro_batches, 100 * r.mfu);
    return 0;
}
