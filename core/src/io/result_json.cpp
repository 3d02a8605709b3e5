// SPDX-License-Identifier: MIT
#include "vtrain/result_json.h"

#include <algorithm>
#include <ostream>

#include <string>

#include "vtrain/plausibility.h"
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

nlohmann::json floors_to_json(const PhysicalFloors& f, const FloorHardware& hw, double iteration_s)
{
    nlohmann::json seconds = nlohmann::json::object();
    nlohmann::json terms = nlohmann::json::array();
    for (std::size_t r = 0; r < kFloorResources; ++r) {
        seconds[to_string(static_cast<FloorResource>(r))] = f.seconds[r];
        for (std::size_t t = 0; t < kFloorTerms; ++t) {
            if (f.term_s[t][r] > 0) {
                terms.push_back({{"resource", to_string(static_cast<FloorResource>(r))},
                                 {"term", to_string(static_cast<FloorTerm>(t))},
                                 {"seconds", f.term_s[t][r]}});
            }
        }
    }
    return {{"binding", to_string(f.binding)},
            {"binding_s", f.binding_s()},
            {"binding_share", iteration_s > 0 ? f.binding_s() / iteration_s : 0.0},
            {"binding_term", to_string(f.largest_term(f.binding))},
            {"summary", floor_summary(f, hw, iteration_s)},
            {"seconds", seconds},
            {"terms", terms},
            {"hardware",
             {{"peak_dtype", hw.peak_dtype},
              {"peak_tflops", hw.peak_flops / 1e12},
              {"hbm_gbytes_per_s", hw.hbm_bytes_per_s / 1e9},
              {"scale_up_gbytes_per_s_per_direction", hw.nvlink_bytes_per_s / 1e9},
              {"nic_gbytes_per_s_per_gpu", hw.nic_bytes_per_s_per_gpu / 1e9},
              {"host_link_gbytes_per_s", hw.host_link_bytes_per_s / 1e9},
              {"nvlink_domain_gpus", hw.nvlink_domain_gpus},
              {"gpus_per_node", hw.gpus_per_node}}}};
}

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
        j["iteration_time_band"] = {{"coverage", r.band_coverage}, {"source", r.band_source}, {"calibrated", r.band_calibrated}};
    }
    if (r.host_heavy_s > 0) {
        j["host_term_range_s"] = {r.host_light_s, r.host_heavy_s};
    }
    j["tokens_per_s"] = r.tokens_per_s;
    if (r.tokens_useful_only) {
        j["tokens_per_s_counts"] = "useful tokens of padded samples (training.sample_tokens each), not seq_len";
    }
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
                            {"total", st.peak_memory_gib},
                            {"expert_weights", st.memory.expert_weights_bytes / kGiB},
                            {"expert_gradients", st.memory.expert_gradients_bytes / kGiB},
                            {"expert_optimizer", st.memory.expert_optimizer_bytes / kGiB}}},
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
    if (r.floors.binding_s() > 0) {
        j["floors"] = floors_to_json(r.floors, r.floor_hardware, r.iteration_time_s);
    }
    j["plausibility"] = {{"flags", plausibility_codes(r.plausibility)}, {"reasons", r.plausibility_reasons}};
    return j;
}

namespace {

// Calls `emit` with every trace event in order; the one generator behind the in-memory document and the
// streamed file, so both hold the same events.
template <typename Emit>
void for_each_trace_event(const SimulationResult& r, Emit&& emit)
{
    const char* lanes[] = {"compute", "tensor parallel", "pipeline", "data parallel"};
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
        emit(nlohmann::json{{"name", "process_name"}, {"ph", "M"}, {"pid", s}, {"args", {{"name", "stage " + std::to_string(s)}}}});
        emit(nlohmann::json{{"name", "process_sort_index"}, {"ph", "M"}, {"pid", s}, {"args", {{"sort_index", s}}}});
        for (int lane = 0; lane < 4; ++lane) {
            emit(nlohmann::json{{"name", "thread_name"}, {"ph", "M"}, {"pid", s}, {"tid", lane}, {"args", {{"name", lanes[lane]}}}});
        }
    }
    auto complete = [&](const std::string& name, const char* category, int pid, int tid, double start_s, double dur_s, nlohmann::json args) {
        emit(nlohmann::json{{"name", name},
                            {"cat", category},
                            {"ph", "X"},
                            {"pid", pid},
                            {"tid", tid},
                            {"ts", start_s * 1e6},
                            {"dur", dur_s * 1e6},
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
}

nlohmann::json trace_other_data(const SimulationResult& r)
{
    return {{"iteration_time_s", r.iteration_time_s}, {"plan", plan_to_json(r.plan)}, {"gpu", r.gpu}};
}

} // namespace

nlohmann::json timeline_to_chrome_trace(const SimulationResult& r)
{
    nlohmann::json events = nlohmann::json::array();
    for_each_trace_event(r, [&](nlohmann::json&& event) { events.push_back(std::move(event)); });
    return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", trace_other_data(r)}};
}

std::uint64_t chrome_trace_event_count(const SimulationResult& r)
{
    std::uint64_t count = 6 * static_cast<std::uint64_t>(r.stages.size());
    for (const TimelineTask& t : r.timeline) {
        count += 1;
        if (t.tp_comm_s > 0 && t.end_s - t.start_s > 0) {
            count += static_cast<std::uint64_t>(std::max(1, t.layers));
        }
    }
    return count;
}

std::uint64_t chrome_trace_estimated_bytes(const SimulationResult& r)
{
    return chrome_trace_event_count(r) * kChromeTraceBytesPerEvent;
}

void write_chrome_trace(std::ostream& out, const SimulationResult& r)
{
    // Same document as timeline_to_chrome_trace(r).dump(), written event by event: memory stays at one
    // event however long the trace. (Keys in nlohmann's sorted order, as dump() writes them.)
    out << "{\"displayTimeUnit\":\"ms\",\"otherData\":" << trace_other_data(r).dump() << ",\"traceEvents\":[";
    bool first = true;
    for_each_trace_event(r, [&](nlohmann::json&& event) {
        if (!first) {
            out << ',';
        }
        first = false;
        out << event.dump();
    });
    out << "]}";
}

} // namespace vtrain
