// SPDX-License-Identifier: MIT
#include "iteration/plan_costs.h"

#include "iteration/pipeline_schedule.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/rank_layout.h"

namespace vtrain {
namespace {

// The (micro-batch, chunk) activation sets each stage holds at its peak, from the schedule.
std::vector<int> in_flight_chunks(const TrainingSpec& t, const Plan& p)
{
    const int v = plan_chunks(p);
    const int micro_batches = t.global_batch / (p.dp * p.micro_batch);
    std::vector<int> out(static_cast<std::size_t>(p.pp));
    for (int s = 0; s < p.pp; ++s) {
        out[s] = peak_in_flight_closed_form(p.schedule, p.pp, micro_batches, v, s, t.pipeline_runtime);
    }
    return out;
}

} // namespace

ResolvedCluster resolve_cluster(const ClusterSpec& c, const GpuProfile& profile)
{
    ResolvedCluster r;
    r.profile = &profile;
    r.num_gpus = c.num_gpus;
    r.links = profile.links;
    if (c.gpus_per_node > 0) {
        r.links.gpus_per_node = c.gpus_per_node;
    }
    if (c.nvlink_domain_gpus > 0) {
        r.links.nvlink_domain_gpus = c.nvlink_domain_gpus;
    }
    if (c.links.nvlink_bus_gbytes_per_s) {
        r.links.nvlink_bus_gbytes_per_s = *c.links.nvlink_bus_gbytes_per_s;
    }
    if (c.links.nic_gbit_per_s) {
        r.links.nic_gbit_per_s = *c.links.nic_gbit_per_s;
    }
    if (c.links.nics_per_node) {
        r.links.nics_per_node = *c.links.nics_per_node;
    }
    if (c.links.inter_node_latency_us) {
        r.links.inter_node_latency_us = *c.links.inter_node_latency_us;
    }
    r.price_per_gpu_hour = c.price_per_gpu_hour.value_or(profile.price_usd_per_gpu_hour);
    return r;
}

LayerCosts plan_layer_costs(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan)
{
    CommModel comm;
    comm.links = cluster.links;
    comm.measured_all_reduce = &cluster.profile->all_reduce;
    LayerCostInput in;
    in.model = &model;
    in.training = &training;
    in.profile = cluster.profile;
    in.comm = &comm;
    in.tp = plan.tp;
    in.micro_batch = plan.micro_batch;
    in.sequence_parallel = plan.sequence_parallel;
    in.recompute = plan.recompute;
    in.recompute_modules = plan.recompute_modules;
    // The plan's rank order (Megatron's by default: tp innermost, then cp; expert layers etp, then ep).
    const PlanGroups groups = place_plan_groups(plan, cluster.links);
    in.tp_group = groups.tp;
    in.cp = plan.cp;
    in.cp_kind = plan.cp_kind;
    in.cp_group = groups.cp;
    in.ep = plan.ep;
    in.etp = plan.etp;
    in.ep_group = groups.ep;
    in.etp_group = groups.etp;
    in.moe_overlap = plan.moe_overlap;
    in.tp_overlap = plan.tp_overlap;
    return compute_layer_costs(in);
}

std::vector<StageMemory> plan_memory(const ModelSpec& model, const TrainingSpec& training, const Plan& plan)
{
    thread_local PipelineLayout layout; // reused: the explorer sizes every plan's memory
    resolve_pipeline_layout(model, plan, layout);
    return stage_memory(model, training, plan, layout, in_flight_chunks(training, plan));
}

} // namespace vtrain
