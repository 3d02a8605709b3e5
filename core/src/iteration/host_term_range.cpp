// SPDX-License-Identifier: MIT
// The iteration time at both ends of the host CPU terms' prior (simulator.h, host_term_range).
#include "vtrain/simulator.h"
#include "vtrain/uncertainty.h"

namespace vtrain {

Expected<HostTermRange> host_term_range(const Scenario& scenario, const Plan& plan, const GpuProfile& profile)
{
    SimulationOptions options;
    options.timeline = false;
    const auto light = simulate(scenario, plan, with_host_terms_scaled(profile, 1 / kHostTermPriorWidth), options);
    if (!light.ok()) {
        return light.errors();
    }
    const auto heavy = simulate(scenario, plan, with_host_terms_scaled(profile, kHostTermPriorWidth), options);
    if (!heavy.ok()) {
        return heavy.errors();
    }
    return HostTermRange{light->iteration_time_s, heavy->iteration_time_s};
}

void attach_host_term_range(SimulationResult& result, const Scenario& scenario, const Plan& plan, const GpuProfile& profile)
{
    if (const auto host = host_term_range(scenario, plan, profile); host.ok()) {
        result.host_light_s = host->light_s;
        result.host_heavy_s = host->heavy_s;
    }
}

bool host_bound(const SimulationResult& result)
{
    constexpr double kHostBoundSpread = 0.05;
    return result.iteration_time_s > 0 && (result.host_heavy_s - result.host_light_s) / result.iteration_time_s > kHostBoundSpread;
}

} // namespace vtrain
