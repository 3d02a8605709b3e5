// SPDX-License-Identifier: MIT
// The iteration graph: per stage, compute tasks in schedule order (with recompute before backward),
// blocking pipeline sends, data-parallel gradient buckets that overlap the last backward of each model
// chunk, and the optimizer step. Then the event simulation (event_simulation.cpp) runs it.
#include "iteration/task_graph_simulation.h"

#include <algorithm>
#include <cmath>

#include "iteration/fast_simulation.h"
#include "iteration/iteration_costs.h"
#include "iteration/iteration_metrics.h"
#include "iteration/pipeline_schedule.h"
#include "model/model_math.h"
#include "profile/operator_timer.h"
#include "vtrain/memory_model.h"
#include "vtrain/physical_floors.h"
#include "vtrain/plan_check.h"
#include "vtrain/plausibility.h"
#include "vtrain/rank_layout.h"
#include "vtrain/uncertainty.h"

namespace vtrain {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Bookkeeping for each task, parallel to the graph's arrays.
struct TaskInfo {
    int stage;
    Lane lane;
    TaskKind kind;
    int micro_batch;
    int chunk;
    int layers;
    TaskComm comm; // communication inside a compute task
};

int stream_id(int stage, Lane lane)
{
    return stage * 3 + static_cast<int>(lane);
}

// Builds the task graph of one iteration; every duration comes from IterationCosts (iteration_costs.h),
// which the explorer's fast path reads too.
class IterationBuilder {
public:
    // Reused across calls (one per thread): its buffers keep their capacity, as the graph's do.
    void reset(const IterationCosts& costs, TaskGraph& graph, std::vector<TaskInfo>* info)
    {
        m_costs = &costs;
        m_graph = &graph;
        m_info = info;
    }

    int micro_batches() const { return m_micro_batches; }

    void build(Schedule schedule)
    {
        const int pp = m_costs->stages;
        m_micro_batches = m_costs->micro_batches;
        m_chunks = m_costs->chunks;
        const auto orders = build_schedule(schedule, pp, m_micro_batches, m_chunks, m_costs->runtime);

        // Index of every (stage, chunk, micro-batch) forward and backward task, for cross-stage edges.
        const std::size_t slots = static_cast<std::size_t>(pp) * m_chunks * m_micro_batches;
        m_forward.assign(slots, -1);
        m_backward_first.assign(slots, -1);
        m_backward_last.assign(slots, -1);
        m_send_forward.assign(slots, -1);
        m_send_backward.assign(slots, -1);
        m_stage_last_compute.assign(static_cast<std::size_t>(pp), -1);
        m_stage_last_backward.assign(static_cast<std::size_t>(pp), -1);
        m_bucket_tasks.resize(static_cast<std::size_t>(pp));
        for (auto& tasks : m_bucket_tasks) {
            tasks.clear();
        }
        m_stage_trailing_sends.clear();

        m_next_compute.clear();
        for (int s = 0; s < pp; ++s) {
            m_previous_compute = -1;
            add_stage_compute(s, orders[s]);
        }
        m_previous_compute = -1;
        add_pipeline_edges();
        add_embedding_sync();
        for (int s = 0; s < pp; ++s) {
            add_optimizer(s);
        }
    }

private:
    std::size_t slot(int stage, int chunk, int mb) const { return (static_cast<std::size_t>(stage) * m_chunks + chunk) * m_micro_batches + mb; }

    std::int32_t add(int stage, Lane lane, TaskKind kind, int mb, int chunk, int layers, double seconds, const TaskComm& comm = {})
    {
        const std::int32_t id = m_graph->add_task(stream_id(stage, lane), seconds);
        m_next_compute.push_back(-1);
        if (lane == Lane::Compute) {
            if (m_previous_compute >= 0) {
                m_next_compute[m_previous_compute] = id;
            }
            m_previous_compute = id;
        }
        if (m_info != nullptr) {
            m_info->push_back({stage, lane, kind, mb, chunk, layers, comm});
        }
        return id;
    }

    bool is_last_virtual_stage(int stage, int chunk) const { return stage == m_costs->stages - 1 && chunk == m_chunks - 1; }
    bool is_first_virtual_stage(int stage, int chunk) const { return stage == 0 && chunk == 0; }

    void add_stage_compute(int s, const StageOrder& order)
    {
        // The last backward of each chunk on this stage carries the gradient buckets.
        std::vector<int> last_backward_index(static_cast<std::size_t>(m_chunks), -1);
        for (std::size_t i = 0; i < order.size(); ++i) {
            if (order[i].kind == PipelineOp::Kind::Backward) {
                last_backward_index[order[i].chunk] = static_cast<int>(i);
            }
        }
        const bool overlap = m_costs->bucket_overlap;
        const StageCosts& stage = m_costs->stage[static_cast<std::size_t>(s)];
        for (std::size_t i = 0; i < order.size(); ++i) {
            const PipelineOp& op = order[i];
            const std::size_t k = slot(s, op.chunk, op.micro_batch);
            const ChunkCosts& ch = m_costs->at(s, op.chunk);
            if (op.kind == PipelineOp::Kind::Forward) {
                const bool first = i == 0;
                m_forward[k] = add(s, Lane::Compute, TaskKind::Forward, op.micro_batch, op.chunk, ch.layers, m_costs->forward_s(s, op.chunk, first),
                                   m_costs->forward_comm(s, op.chunk, first));
                m_stage_last_compute[s] = m_forward[k];
                if (!is_last_virtual_stage(s, op.chunk)) {
                    // Sends go on the stage's pipeline stream in the order the stage produces them.
                    m_send_forward[k] = add(s, Lane::Pipeline, TaskKind::SendForward, op.micro_batch, op.chunk, 0, stage.send_forward_s);
                    m_graph->add_dependency(m_forward[k], m_send_forward[k]);
                }
                continue;
            }
            const PhaseTime& r = ch.recompute;
            std::int32_t first = -1;
            if (r.total_s() > 0) {
                first = add(s, Lane::Compute, TaskKind::Recompute, op.micro_batch, op.chunk, ch.layers, r.total_s(),
                            m_costs->recompute_comm(s, op.chunk));
            }
            const bool split = overlap && static_cast<int>(i) == last_backward_index[op.chunk];
            const int parts = split ? ch.buckets : 1;
            const double b = m_costs->backward_s(s, op.chunk, split);
            const TaskComm bc = m_costs->backward_comm(s, op.chunk, split);
            TaskComm part_comm;
            part_comm.tp_s = bc.tp_s / parts;
            part_comm.ep_s = bc.ep_s / parts;
            part_comm.cp_s = bc.cp_s / parts;
            part_comm.dp_s = bc.dp_s / parts;
            std::int32_t last = -1;
            for (int part = 0; part < parts; ++part) {
                last = add(s, Lane::Compute, TaskKind::Backward, op.micro_batch, op.chunk, part == 0 ? ch.layers : 0, b / parts, part_comm);
                if (first < 0) {
                    first = last;
                }
                if (split) {
                    m_bucket_tasks[s].push_back(add_bucket(s, last, ch.bucket_s));
                }
            }
            m_backward_first[k] = first;
            m_backward_last[k] = last;
            if (!is_first_virtual_stage(s, op.chunk)) {
                m_send_backward[k] = add(s, Lane::Pipeline, TaskKind::SendBackward, op.micro_batch, op.chunk, 0, stage.send_backward_s);
                m_graph->add_dependency(last, m_send_backward[k]);
            }
            m_stage_last_compute[s] = last;
            m_stage_last_backward[s] = last;
        }
        if (m_costs->reduce_grads && !overlap) {
            // All buckets reduce after the last backward of the stage.
            for (int c = 0; c < m_chunks; ++c) {
                const ChunkCosts& ch = m_costs->at(s, c);
                for (int part = 0; part < ch.buckets; ++part) {
                    m_bucket_tasks[s].push_back(add_bucket(s, m_stage_last_backward[s], ch.bucket_s));
                }
            }
        }
    }

    std::int32_t add_bucket(int s, std::int32_t ready_after, double seconds)
    {
        const std::int32_t id = add(s, Lane::DataParallel, TaskKind::GradReduce, -1, 0, 0, seconds);
        m_graph->add_dependency(ready_after, id);
        return id;
    }

    void add_pipeline_edges()
    {
        const int pp = m_costs->stages;
        if (pp == 1 && m_chunks == 1) {
            for (int mb = 0; mb < m_micro_batches; ++mb) {
                const std::size_t k = slot(0, 0, mb);
                m_graph->add_dependency(m_forward[k], m_backward_first[k]); // the loss joins F and B
            }
            return;
        }
        for (int s = 0; s < pp; ++s) {
            for (int c = 0; c < m_chunks; ++c) {
                const int next_stage = (s + 1) % pp;
                const int next_chunk = s + 1 == pp ? c + 1 : c;
                const int prev_stage = (s + pp - 1) % pp;
                const int prev_chunk = s == 0 ? c - 1 : c;
                for (int mb = 0; mb < m_micro_batches; ++mb) {
                    const std::size_t k = slot(s, c, mb);
                    if (is_last_virtual_stage(s, c)) {
                        m_graph->add_dependency(m_forward[k], m_backward_first[k]);
                    } else {
                        m_graph->add_dependency(m_send_forward[k], m_forward[slot(next_stage, next_chunk, mb)]);
                    }
                    if (!is_first_virtual_stage(s, c)) {
                        m_graph->add_dependency(m_send_backward[k], m_backward_first[slot(prev_stage, prev_chunk, mb)]);
                    }
                }
            }
        }
        // Sends block the sender (Megatron's p2p is synchronous): its next compute task waits for them.
        // With overlap_p2p_comm they are posted asynchronously and only the receiver waits.
        for (std::size_t k = 0; k < m_forward.size() && !m_costs->async_sends; ++k) {
            block_next_compute(m_forward[k], m_send_forward[k]);
            block_next_compute(m_backward_last[k], m_send_backward[k]);
        }
    }

    void block_next_compute(std::int32_t task, std::int32_t send)
    {
        if (task < 0 || send < 0) {
            return;
        }
        const std::int32_t next = m_next_compute[task];
        if (next >= 0) {
            m_graph->add_dependency(send, next);
        } else {
            m_stage_trailing_sends.push_back(send);
        }
    }

    void add_embedding_sync()
    {
        if (!m_costs->embedding_sync) {
            return;
        }
        const int pp = m_costs->stages;
        for (const int s : {0, pp - 1}) {
            const std::int32_t id = add(s, Lane::DataParallel, TaskKind::EmbeddingSync, -1, 0, 0, m_costs->embedding_sync_s);
            m_graph->add_dependency(m_stage_last_backward[0], id);
            m_graph->add_dependency(m_stage_last_backward[pp - 1], id);
            m_bucket_tasks[s].push_back(id);
        }
    }

    void add_optimizer(int s)
    {
        const StageCosts& stage = m_costs->stage[static_cast<std::size_t>(s)];
        const std::int32_t opt = add(s, Lane::Compute, TaskKind::OptimizerStep, -1, 0, 0, stage.optimizer_s);
        for (const auto bucket : m_bucket_tasks[s]) {
            m_graph->add_dependency(bucket, opt);
        }
        for (const auto send : m_stage_trailing_sends) {
            if (m_graph->stream[send] == stream_id(s, Lane::Pipeline)) {
                m_graph->add_dependency(send, opt);
            }
        }
        if (stage.param_gather_s > 0) {
            const std::int32_t gather = add(s, Lane::DataParallel, TaskKind::ParamGather, -1, 0, 0, stage.param_gather_s);
            m_graph->add_dependency(opt, gather);
        }
    }

    const IterationCosts* m_costs = nullptr;
    TaskGraph* m_graph = nullptr;
    std::vector<TaskInfo>* m_info = nullptr;
    int m_micro_batches = 0;
    int m_chunks = 1;
    std::vector<std::int32_t> m_forward, m_backward_first, m_backward_last, m_send_forward, m_send_backward;
    std::vector<std::int32_t> m_stage_last_compute, m_stage_last_backward, m_stage_trailing_sends;
    std::vector<std::int32_t> m_next_compute; // per task: the next compute task of its stage, or -1
    std::int32_t m_previous_compute = -1;
    std::vector<std::vector<std::int32_t>> m_bucket_tasks;
};

// Per-stage time accounting from the simulated task times: every busy part (iteration_metrics() adds the
// idle rest, so that the parts add up to the iteration time).
std::vector<StageBreakdown> account_stages(const TaskGraph& g, const TaskTimes& times, const std::vector<TaskInfo>& info, int stages,
                                           bool async_sends)
{
    std::vector<StageBreakdown> out(static_cast<std::size_t>(stages));
    std::vector<double> last_work_end(static_cast<std::size_t>(stages), 0.0);
    std::vector<double> optimizer_start(static_cast<std::size_t>(stages), 0.0);
    std::vector<double> gather_s(static_cast<std::size_t>(stages), 0.0);
    std::vector<double> inline_dp_s(static_cast<std::size_t>(stages), 0.0);
    for (std::size_t i = 0; i < g.size(); ++i) {
        const TaskInfo& t = info[i];
        StageBreakdown& b = out[t.stage];
        const double d = g.duration[i];
        switch (t.kind) {
        case TaskKind::Forward:
        case TaskKind::Backward:
        case TaskKind::Recompute:
            b.compute_s += d - t.comm.total_s();
            b.tp_comm_s += t.comm.tp_s;
            b.ep_comm_s += t.comm.ep_s;
            b.cp_comm_s += t.comm.cp_s;
            inline_dp_s[t.stage] += t.comm.dp_s;
            last_work_end[t.stage] = std::max(last_work_end[t.stage], times.end[i]);
            break;
        case TaskKind::SendForward:
        case TaskKind::SendBackward:
            b.pp_comm_s += async_sends ? 0.0 : d; // asynchronous sends run beside compute: not exposed time
            last_work_end[t.stage] = std::max(last_work_end[t.stage], times.end[i]);
            break;
        case TaskKind::OptimizerStep:
            b.optimizer_s += d;
            optimizer_start[t.stage] = times.start[i];
            break;
        case TaskKind::ParamGather: gather_s[t.stage] += d; break;
        case TaskKind::GradReduce:
        case TaskKind::EmbeddingSync:
        case TaskKind::FsdpGather:
        case TaskKind::FsdpReduceScatter: break;
        }
    }
    for (int s = 0; s < stages; ++s) {
        StageBreakdown& b = out[s];
        b.dp_comm_exposed_s = std::max(0.0, optimizer_start[s] - last_work_end[s]) + gather_s[s] + inline_dp_s[s];
    }
    return out;
}

} // namespace

const char* to_string(TaskKind kind)
{
    switch (kind) {
    case TaskKind::Forward: return "forward";
    case TaskKind::Backward: return "backward";
    case TaskKind::Recompute: return "recompute";
    case TaskKind::SendForward: return "send activations";
    case TaskKind::SendBackward: return "send gradients";
    case TaskKind::GradReduce: return "gradient reduce";
    case TaskKind::EmbeddingSync: return "embedding sync";
    case TaskKind::OptimizerStep: return "optimizer step";
    case TaskKind::ParamGather: return "parameter all-gather";
    case TaskKind::FsdpGather: return "FSDP parameter all-gather";
    case TaskKind::FsdpReduceScatter: return "FSDP gradient reduce-scatter";
    }
    return "task";
}

SimulationResult simulate_checked(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan,
                                  const SimulationOptions& options, SimulationWorkspace& ws)
{
    SimulationResult r;
    r.plan = plan;
    r.gpu = cluster.profile->id;
    r.num_gpus = plan.num_gpus();
    r.layer_costs = options.cached_costs != nullptr ? *options.cached_costs : plan_layer_costs(model, training, cluster, plan);

    // Per-thread buffers, as the workspace's: allocating ~30k tasks' bookkeeping afresh each call costs
    // more than filling it.
    thread_local std::vector<TaskInfo> info;
    thread_local IterationBuilder builder;
    thread_local IterationCosts graph_costs;
    info.clear();
    ws.graph.clear();
    double T = 0;
    std::vector<StageBreakdown> breakdown;
    // An iteration of many passes is computed in closed form (the explorer's fast path: the same times to
    // rounding, in memory that does not grow with the micro-batches), not as a graph of a task per pass.
    FastSimScratch fast_scratch;
    FastSimResult fast;
    const bool closed_form = !options.timeline && iteration_passes(training, plan) > kMaxTaskGraphPasses &&
                             fast_simulate(model, training, cluster, plan, r.layer_costs, fast_scratch, fast, breakdown);
    const IterationCosts& costs = closed_form ? fast_scratch.costs : graph_costs;
    if (closed_form) {
        r.task_count = 0;
        r.micro_batches = costs.micro_batches;
        T = fast.iteration_time_s;
    } else {
        build_iteration_costs(model, training, cluster, plan, r.layer_costs, graph_costs);
        builder.reset(graph_costs, ws.graph, &info);
        builder.build(plan.schedule);
        simulate_events(ws.graph, ws.times, ws.scratch);
        r.task_count = ws.graph.size();
        r.micro_batches = builder.micro_batches();
        // DualPipe's bubble in closed form, never below the busiest device's own work
        T = std::max(ws.times.makespan - costs.closed_form_bubble_saving_s, costs.closed_form_min_makespan_s);
        breakdown = account_stages(ws.graph, ws.times, info, plan.pp, costs.async_sends);
    }
    const MetricsBasis basis = metrics_basis(model, training);
    const GpuTerms gpu = gpu_terms(cluster, training.precision);
    // Hardware FLOPs: the mode's model FLOPs plus the recomputed forward work.
    const double recomputed_flops =
        hardware_flops_per_iteration(model, training.global_batch, plan.recompute) - model_flops_per_iteration(model, training.global_batch);
    const IterationMetrics metrics = iteration_metrics(basis, gpu, r.num_gpus, T, breakdown, basis.model_flops + recomputed_flops);
    r.iteration_time_s = T;
    if (gpu.band) {
        r.iteration_time_low_s = metrics.iteration_time_low_s;
        r.iteration_time_high_s = metrics.iteration_time_high_s;
        r.band_coverage = gpu.band->coverage;
        r.band_source = gpu.band->source;
        r.band_calibrated = gpu.band->calibrated;
    }
    r.tokens_per_s = metrics.tokens_per_s;
    r.tokens_useful_only = basis.tokens_useful_only;
    r.model_tflops_per_gpu = metrics.model_tflops_per_gpu;
    r.hardware_tflops_per_gpu = metrics.hardware_tflops_per_gpu;
    r.mfu = metrics.mfu;
    r.bubble_fraction = metrics.bubble_fraction;
    r.breakdown = metrics.mean_stage;
    r.total_params = total_params(model);

    // Memory and time per stage.
    const auto memory = plan_memory(model, training, plan);
    r.usable_memory_gib = gpu.usable_memory_gib;
    r.peak_memory_gib = peak_memory(memory).gib;
    r.fits_memory = r.peak_memory_gib <= r.usable_memory_gib;
    r.stages.resize(static_cast<std::size_t>(plan.pp));
    for (int s = 0; s < plan.pp; ++s) {
        StageResult& st = r.stages[s];
        st.layers = costs.layout.stage_layers(s);
        st.mtp_layers = costs.layout.stage_mtp_layers(s);
        for (int c = 0; c < costs.chunks; ++c) {
            st.embedding = st.embedding || costs.layout.at(s, c).embedding;
            st.loss = st.loss || costs.layout.at(s, c).loss;
        }
        st.params = costs.stage[static_cast<std::size_t>(s)].params.total();
        st.expert_params = costs.stage[static_cast<std::size_t>(s)].params.expert;
        st.memory = memory[s];
        st.peak_memory_gib = memory[s].total_bytes() / kGiB;
        st.breakdown = breakdown[s];
    }

    // Training time and money.
    r.price_per_gpu_hour = gpu.price_per_gpu_hour;
    r.iterations = basis.iterations;
    r.training_days = metrics.training_days;
    r.cost_usd = metrics.cost_usd;

    if (options.timeline) {
        r.timeline.reserve(info.size());
        for (std::size_t i = 0; i < info.size(); ++i) {
            const TaskInfo& t = info[i];
            const double start = ws.times.start[i];
            r.timeline.push_back({t.stage, t.lane, t.kind, t.micro_batch, t.chunk, t.layers, start, ws.times.end[i], t.comm.tp_s, t.comm.ep_s,
                                  t.comm.cp_s, t.comm.dp_s});
            // ZeRO-3 traffic behind this compute task (its exposed part is already inside the task).
            if (plan.zero_stage >= 3 && t.layers > 0 && (t.kind == TaskKind::Forward || t.kind == TaskKind::Backward)) {
                const ChunkCosts& ch = costs.at(t.stage, t.chunk);
                r.timeline.push_back(
                    {t.stage, Lane::DataParallel, TaskKind::FsdpGather, t.micro_batch, t.chunk, t.layers, start, start + ch.fsdp_gather_traffic_s});
                if (t.kind == TaskKind::Backward) {
                    r.timeline.push_back({t.stage, Lane::DataParallel, TaskKind::FsdpReduceScatter, t.micro_batch, t.chunk, t.layers,
                                          start + ch.fsdp_gather_traffic_s, start + ch.fsdp_gather_traffic_s + ch.fsdp_scatter_traffic_s});
                }
            }
        }
    }
    return r;
}

Expected<SimulationResult> simulate(const Scenario& scenario, const Plan& plan, const GpuProfile& profile, const SimulationOptions& options)
{
    if (auto rejection = check_plan(scenario.model, scenario.training, plan, scenario.cluster.num_gpus)) {
        return rejection->diagnostic;
    }
    if (auto rejection = check_simulation_size(scenario.training, plan)) {
        return rejection->diagnostic;
    }
    SimulationOptions bounded = options;
    bounded.timeline = options.timeline && iteration_passes(scenario.training, plan) <= kMaxTaskGraphPasses; // see SimulationOptions
    const ResolvedCluster cluster = resolve_cluster(scenario.cluster, profile);
    // The task graph's buffers are most of a call's cost when allocated afresh; each thread keeps one set
    // (rebuilt from scratch every call, as the explorer's per-thread workspaces are).
    thread_local SimulationWorkspace ws;
    SimulationResult result = simulate_checked(scenario.model, scenario.training, cluster, plan, bounded, ws);
    // Every prediction carries its physical floors and plausibility flags (computed apart from the cost model).
    result.floor_hardware = floor_hardware(scenario.cluster, profile, scenario.training.precision);
    PipelineLayout layout;
    if (!resolve_pipeline_layout(scenario.model, plan, layout)) {
        result.floors = FloorModel(scenario.model, scenario.training).floors(plan, layout, result.floor_hardware);
    }
    const Precision precision = scenario.training.precision;
    const double floor_s = result.floors.binding_s();
    result.plausibility = plausibility_flags(profile.id, precision, result.mfu, result.iteration_time_s, floor_s);
    if (result.plausibility != 0) {
        result.plausibility_reasons =
            plausibility_reasons(result.plausibility, profile.id, precision, result.mfu, result.iteration_time_s, floor_s, result.floors.binding);
    }
    return result;
}

} // namespace vtrain
