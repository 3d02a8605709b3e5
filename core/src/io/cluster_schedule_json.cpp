// SPDX-License-Identifier: MIT
// Job lists in, cluster study results out.
#include "vtrain/cluster_schedule_json.h"

#include <sstream>

#include "vtrain/cluster_schedule_workload.h"
#include "vtrain/explorer_io.h"
#include "vtrain/json_fields.h"
#include "vtrain/scenario_json.h"

namespace vtrain {
namespace {

using json_fields::Reader;

std::string catalog_ids()
{
    std::string ids;
    for (const auto& c : workload_catalog()) {
        ids += (ids.empty() ? "\"" : ", \"") + c.id + "\"";
    }
    return ids;
}

// A model object is read with the scenario reader (same fields, same checks); its errors are re-rooted.
std::optional<ModelSpec> read_model_object(const nlohmann::json& model, const std::string& path, Diagnostics& diags)
{
    const nlohmann::json scenario{{"model", model}, {"cluster", {{"gpu", "any"}, {"num_gpus", 1}}}, {"training", {{"global_batch", 1}}}};
    const auto parsed = scenario_from_json(scenario);
    if (parsed.ok()) {
        return parsed->model;
    }
    for (const auto& e : parsed.errors()) {
        const std::string rest = e.field.rfind("model", 0) == 0 ? e.field.substr(5) : "." + e.field;
        diags.push_back({path + rest, e.message});
    }
    return std::nullopt;
}

ClusterJob read_job(Reader r, std::size_t index, Diagnostics& diags)
{
    r.reject_unknown({"name", "model", "global_batch", "tokens", "arrival_h", "deadline_h", "requested_gpus", "description"});
    ClusterJob job;
    job.name = r.optional_string("name").value_or("job-" + std::to_string(index));
    const CatalogModel* preset = nullptr;
    const nlohmann::json& j = r.json();
    if (!j.contains("model") || j["model"].is_null()) {
        r.error("model", "is missing (a catalog id such as \"gpt-6.7b\" or a model object)");
    } else if (j["model"].is_string()) {
        preset = find_catalog_model(j["model"].get<std::string>());
        if (preset == nullptr) {
            r.error("model", "\"" + json_fields::bounded(j["model"].get<std::string>()) + "\" is not a catalog model (" + catalog_ids() + ")");
        } else {
            job.model = preset->model;
        }
    } else if (j["model"].is_object()) {
        if (auto m = read_model_object(j["model"], r.field("model"), diags)) {
            job.model = *m;
        }
    } else {
        r.error("model", "must be a catalog id or a model object, not " + json_fields::excerpt(j["model"]));
    }
    const auto batch = r.optional_int("global_batch", 1, 1'000'000'000);
    if (batch) {
        job.global_batch = *batch;
    } else if (preset != nullptr) {
        job.global_batch = preset->global_batch;
    } else if (!r.has("global_batch") && j.contains("model") && j["model"].is_object()) {
        r.error("global_batch", "is missing (required with a model object)");
    }
    job.tokens = r.required_number("tokens", 1, 1e17);
    job.arrival_h = r.required_number("arrival_h", 0, 1e7);
    job.deadline_h = r.required_number("deadline_h", 0, 1e7);
    if (r.has("arrival_h") && r.has("deadline_h") && job.deadline_h <= job.arrival_h && j["deadline_h"].is_number() && j["arrival_h"].is_number()) {
        std::ostringstream message;
        message << "must be later than arrival_h (" << job.deadline_h << " <= " << job.arrival_h << ")";
        r.error("deadline_h", message.str());
    }
    job.requested_gpus = r.optional_int("requested_gpus", 1, 10'000'000).value_or(0);
    return job;
}

nlohmann::json model_json(const ModelSpec& m)
{
    nlohmann::json j{{"name", m.name}, {"layers", m.layers}, {"hidden", m.hidden}, {"heads", m.heads}, {"seq_len", m.seq_len}, {"vocab", m.vocab}};
    if (m.kv_heads > 0) {
        j["kv_heads"] = m.kv_heads;
    }
    if (m.ffn_hidden > 0) {
        j["ffn_hidden"] = m.ffn_hidden;
    }
    if (m.activation != FfnActivation::Gelu) {
        j["activation"] = to_string(m.activation);
    }
    if (!m.tied_embeddings) {
        j["tied_embeddings"] = false;
    }
    return j;
}

nlohmann::json point_json(const CurvePoint& p)
{
    return {{"gpus", p.gpus}, {"plan", plan_label(p.plan)}, {"tokens_per_s", p.tokens_per_s}, {"mfu", p.mfu}};
}

} // namespace

Expected<std::vector<ClusterJob>> jobs_from_json(const nlohmann::json& json)
{
    if (!json.is_object() || !json.contains("jobs")) {
        return Diagnostic{"jobs", "a job list must be a JSON object {\"jobs\": [ ... ]}"};
    }
    if (!json["jobs"].is_array()) {
        return Diagnostic{"jobs", "must be a list of jobs, not " + std::string(json["jobs"].type_name())};
    }
    if (json["jobs"].empty()) {
        return Diagnostic{"jobs", "the job list is empty"};
    }
    Diagnostics diags;
    Reader top(json, "", diags);
    top.reject_unknown({"jobs", "description"});
    std::vector<ClusterJob> jobs;
    const auto& list = json["jobs"];
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = "jobs[" + std::to_string(i) + "]";
        if (!list[i].is_object()) {
            diags.push_back({path, "must be a job object, not " + json_fields::excerpt(list[i])});
            continue;
        }
        jobs.push_back(read_job(Reader(list[i], path, diags), i, diags));
    }
    if (!diags.empty()) {
        return diags;
    }
    return jobs;
}

Expected<std::vector<ClusterJob>> jobs_from_text(const std::string& text)
{
    const auto json = json_fields::parse_json_text(text);
    if (!json.ok()) {
        return json.errors();
    }
    return jobs_from_json(*json);
}

Expected<std::vector<ClusterJob>> load_jobs(const std::filesystem::path& path)
{
    const auto text = json_fields::read_text_file(path);
    if (!text.ok()) {
        // The caller names the file: the diagnostic says what is wrong with it.
        return Diagnostic{"", text.errors().front().message};
    }
    return jobs_from_text(*text);
}

nlohmann::json jobs_to_json(const std::vector<ClusterJob>& jobs)
{
    nlohmann::json list = nlohmann::json::array();
    for (const auto& j : jobs) {
        nlohmann::json o{{"name", j.name},     {"model", model_json(j.model)}, {"global_batch", j.global_batch},
                         {"tokens", j.tokens}, {"arrival_h", j.arrival_h},     {"deadline_h", j.deadline_h}};
        if (j.requested_gpus > 0) {
            o["requested_gpus"] = j.requested_gpus;
        }
        list.push_back(o);
    }
    return {{"jobs", list}};
}

nlohmann::json policy_result_to_json(const PolicyResult& r, const std::vector<ClusterJob>& jobs)
{
    nlohmann::json j{{"policy", to_string(r.policy)},
                     {"deadline_satisfaction", r.deadline_satisfaction},
                     {"average_jct_h", r.average_jct_h},
                     {"makespan_h", r.makespan_h},
                     {"gpu_utilization", r.gpu_utilization},
                     {"cluster_mfu", r.cluster_mfu},
                     {"completed", r.completed},
                     {"unschedulable", r.unschedulable},
                     {"replans", r.replans},
                     {"restarts", r.restarts},
                     {"cancelled", r.cancelled}};
    nlohmann::json list = nlohmann::json::array();
    for (std::size_t i = 0; i < r.jobs.size() && i < jobs.size(); ++i) {
        const JobOutcome& o = r.jobs[i];
        nlohmann::json segments = nlohmann::json::array();
        for (const auto& s : o.segments) {
            segments.push_back({{"start_h", s.start_h},
                                {"ready_h", s.ready_h},
                                {"end_h", s.end_h},
                                {"gpus", s.gpus},
                                {"plan", plan_label(s.plan)},
                                {"tokens_per_s", s.tokens_per_s}});
        }
        list.push_back({{"name", jobs[i].name},
                        {"arrival_h", jobs[i].arrival_h},
                        {"deadline_h", jobs[i].deadline_h},
                        {"completed", o.completed},
                        {"schedulable", o.schedulable},
                        {"first_start_h", o.first_start_h >= 0 ? nlohmann::json(o.first_start_h) : nlohmann::json()},
                        {"finish_h", o.completed ? nlohmann::json(o.finish_h) : nlohmann::json()},
                        {"met_deadline", o.met_deadline},
                        {"restarts", o.restarts},
                        {"segments", segments}});
    }
    j["jobs"] = list;
    return j;
}

nlohmann::json schedule_study_to_json(const ScheduleStudy& study)
{
    const ScheduleRequest& r = study.request;
    nlohmann::json j{{"gpu", r.gpu},
                     {"num_gpus", r.num_gpus},
                     {"restart_overhead_s", r.restart_overhead_s},
                     {"cancelled", study.cancelled},
                     {"curves_elapsed_s", study.curves_elapsed_s},
                     {"elapsed_s", study.elapsed_s},
                     {"plans_enumerated", study.plans_enumerated}};
    j["jobs"] = jobs_to_json(r.jobs)["jobs"];
    nlohmann::json curves = nlohmann::json::array();
    for (const auto& key : study.curve_keys) {
        const auto it = study.curves.find(key);
        if (it == study.curves.end()) {
            continue;
        }
        nlohmann::json best = nlohmann::json::array();
        nlohmann::json dp = nlohmann::json::array();
        for (const auto& p : it->second.best) {
            best.push_back(point_json(p));
        }
        for (const auto& p : it->second.dp_scaling) {
            dp.push_back(point_json(p));
        }
        curves.push_back({{"key", key}, {"best", best}, {"dp_scaling", dp}});
    }
    j["curves"] = curves;
    j["job_curve"] = study.job_curve;
    nlohmann::json results = nlohmann::json::array();
    for (const auto& p : study.results) {
        results.push_back(policy_result_to_json(p, r.jobs));
    }
    j["policies"] = results;
    return j;
}

} // namespace vtrain
