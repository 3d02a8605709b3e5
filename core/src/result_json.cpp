// SPDX-License-Identifier: MIT
#include "vtrain/result_json.h"

#include <string>

#include "vtrain/scenario_json.h"

namespace vtrain {
namespace {

nlohmann::json breakdown_to_json(const StageBreakdown& b)
{
    return {{"compute_s", b.compute_s},
            {"tp_comm_s", b.tp_comm_s},
            {"ep_comm_s", b.ep_comm_s},
            {"cp_comm_s", b.cp_comm_s},
            {"pp_comm_s", b.pp_comm_s},
            {"dp_comm_exposed_s", b.dp_comm_exposed_s},
            {"exposed_comm_s", b.tp_comm_s + b.ep_comm_s + b.cp_comm_s + b.pp_comm_s + b.dp_comm_exposed_s},
            {"optimizer_s", b.optimizer_s},
            {"bubble_s", b.bubble_s}};
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

} // namespace

nlohmann::json result_to_json(const SimulationResult& r)
{
    nlohmann::json j;
    j["plan"] = plan_to_json(r.plan);
    j["gpu"] = r.gpu;
    j["num_gpus"] = r.num_gpus;
    j["micro_batches"] = r.micro_batches;
    j["iteration_time_s"] = r.iteration_time_s;
    if (r.band_coverage > 0) {
        j["iteration_time_band_s"] = {r.iteration_time_low_s, r.iteration_time_high_s};
        j["iteration_time_band"] = {{"coverage", r.band_coverage}, {"source", r.band_source}};
    }
    j["tokens_per_s"] = r.tokens_per_s;
    j["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
    j["hardware_tflops_per_gpu"] = r.hardware_tflops_per_gpu;
    j["mfu"] = r.mfu;
    j["bubble_fraction"] = r.bubble_fraction;
    nlohmann::json peaks = nlohmann::json::array();
    nlohmann::json stages = nlohmann::json::array();
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
        const StageResult& st = r.stages[s];
        peaks.push_back(st.peak_memory_gib);
        stages.push_back({{"stage", s},
                          {"layers", st.layers},
                          {"mtp_layers", st.mtp_layers},
                          {"embedding", st.embedding},
                          {"loss", st.loss},
                          {"params", st.params},
                          {"expert_params", st.expert_params},
                          {"memory_gib",
                           {{"weights", st.memory.weights_bytes / kGiB},
                            {"gradients", st.memory.gradients_bytes / kGiB},
                            {"optimizer", st.memory.optimizer_bytes / kGiB},
                            {"activations", st.memory.activations_bytes / kGiB},
                            {"working", st.memory.working_bytes / kGiB},
                            {"total", st.peak_memory_gib}}},
                          {"breakdown", breakdown_to_json(st.breakdown)}});
    }
    j["peak_memory_gib"] = peaks;
    j["max_peak_memory_gib"] = r.peak_memory_gib;
    j["usable_memory_gib"] = r.usable_memory_gib;
    j["fits_memory"] = r.fits_memory;
    j["total_params"] = r.total_params;
    j["iterations"] = r.iterations;
    j["training_days"] = r.training_days;
    j["price_per_gpu_hour"] = r.price_per_gpu_hour;
    j["cost_usd"] = r.cost_usd;
    j["breakdown"] = breakdown_to_json(r.breakdown);
    j["stages"] = stages;
    j["task_count"] = r.task_count;
    return j;
}

nlohmann::json timeline_to_chrome_trace(const SimulationResult& r)
{
    nlohmann::json events = nlohmann::json::array();
    const char* lanes[] = {"compute", "tensor parallel", "pipeline", "data parallel"};
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
        events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", s}, {"args", {{"name", "stage " + std::to_string(s)}}}});
        events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", s}, {"args", {{"sort_index", s}}}});
        for (int lane = 0; lane < 4; ++lane) {
            events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", s}, {"tid", lane}, {"args", {{"name", lanes[lane]}}}});
        }
    }
    auto complete = [&](const std::string& name, const char* category, int pid, int tid, double start_s, double dur_s, nlohmann::json args) {
        events.push_back({{"name", name}, {"cat", category}, {"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", start_s * 1e6}, {"dur", dur_s * 1e6},
                          {"args", std::move(args)}});
    };
    for (const TimelineTask& t : r.timeline) {
        std::string name = to_string(t.kind);
        if (t.micro_batch >= 0) {
            name += " mb " + std::to_string(t.micro_batch);
        }
        if (r.plan.virtual_stages > 1 && t.micro_batch >= 0) {
            name += " chunk " + std::to_string(t.chunk);
        }
        const int tid = t.lane == Lane::Compute ? 0 : t.lane == Lane::Pipeline ? 2 : 3;
        const double dur = t.end_s - t.start_s;
        complete(name, to_string(t.kind), t.stage, tid, t.start_s, dur,
                 {{"micro_batch", t.micro_batch},
                  {"chunk", t.chunk},
                  {"tp_comm_ms", t.tp_comm_s * 1e3},
                  {"ep_comm_ms", t.ep_comm_s * 1e3},
                  {"cp_comm_ms", t.cp_comm_s * 1e3},
                  {"dp_comm_ms", t.dp_comm_s * 1e3}});
        if (t.tp_comm_s > 0 && dur > 0) {
            const int layers = std::max(1, t.layers);
            const double slice = dur / layers;
            const double comm = t.tp_comm_s / layers;
            for (int l = 0; l < layers; ++l) {
                complete("tp collectives", "tensor", t.stage, 1, t.start_s + (l + 1) * slice - comm, comm, {{"layer", l}});
            }
        }
    }
    return {{"traceEvents", events}, {"displayTimeUnit", "ms"},
            {"otherData", {{"iteration_time_s", r.iteration_time_s}, {"plan", plan_to_json(r.plan)}, {"gpu", r.gpu}}}};
}

} // namespace vtrain
