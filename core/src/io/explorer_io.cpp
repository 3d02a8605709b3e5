// SPDX-License-Identifier: MIT
#include "vtrain/explorer_io.h"

#include <cstdio>
#include <numeric>

#include "vtrain/plausibility.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"

namespace vtrain {
namespace {

void append_number(std::string& out, double v)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", v);
    out += buffer;
}

std::string joined(const std::vector<std::string>& parts)
{
    std::string out;
    for (const std::string& p : parts) {
        out += (out.empty() ? "" : ";") + p;
    }
    return out;
}

std::vector<std::string> row_reasons(const PlanRow& r)
{
    if (r.plausibility == 0) {
        return {};
    }
    return plausibility_reasons(r.plausibility, r.gpu, r.precision, r.mfu, r.iteration_time_s, r.floor_s, r.floor_resource);
}

nlohmann::json rows_to_json(const std::vector<PlanRow>& rows)
{
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : rows) {
        list.push_back(plan_row_to_json(r));
    }
    return list;
}

} // namespace

std::string plan_label(const Plan& p)
{
    std::string s = "t=" + std::to_string(p.tp);
    if (p.cp != 1) {
        s += " c=" + std::to_string(p.cp);
    }
    s += " p=" + std::to_string(p.pp) + " d=" + std::to_string(p.dp);
    if (p.ep != 1) {
        s += " e=" + std::to_string(p.ep);
    }
    if (p.etp > 0 && p.etp != p.tp) {
        s += " et=" + std::to_string(p.etp);
    }
    s += " mb=" + std::to_string(p.micro_batch) + " " + to_string(p.schedule);
    if (p.schedule == Schedule::Interleaved || p.virtual_stages != 1) {
        s += " v=" + std::to_string(p.virtual_stages);
    }
    s += std::string(" ") + to_string(p.recompute);
    if (p.sequence_parallel) {
        s += " sp";
    }
    if (p.zero_stage > 0) {
        s += " zero" + std::to_string(p.zero_stage);
    }
    if (p.tp_overlap) {
        s += " tp-overlap";
    }
    if (p.moe_overlap) {
        s += " moe-overlap";
    }
    if (!p.overlap_grad_reduce) {
        s += " no-dp-overlap";
    }
    if (p.rank_order != RankOrder{}) {
        s += " order=" + to_string(p.rank_order);
    }
    if (p.offload_optimizer) {
        s += " offload-opt";
    }
    if (p.offload_activations > 0) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, " offload-act=%g", p.offload_activations);
        s += buffer;
    }
    if (!p.pipeline_layout.empty()) {
        s += " layout=" + p.pipeline_layout;
    }
    return s;
}

std::string plan_row_label(const PlanRow& row)
{
    std::string s = plan_label(row.plan);
    if (row.precision != Precision::Bf16) {
        s += std::string(" ") + to_string(row.precision);
    }
    return s;
}

std::string plan_row_csv_header()
{
    return "index,gpu,num_gpus,tp,pp,dp,micro_batch,schedule,virtual_stages,recompute,sequence_parallel,zero_stage,cp,ep,etp,precision,tp_overlap,"
           "moe_overlap,"
           "iteration_time_s,iteration_time_low_s,iteration_time_high_s,tokens_per_s,mfu,bubble_fraction,peak_memory_gib,training_days,cost_usd,"
           "overlap_grad_reduce,rank_order,offload_optimizer,offload_activations,pipeline_layout,band,floor_s,floor_resource,flags,flag_reasons,on_"
           "front";
}

std::string plan_row_to_csv(const PlanRow& r)
{
    const Plan& p = r.plan;
    std::string s;
    s.reserve(200);
    s += std::to_string(r.index) + ',' + r.gpu + ',' + std::to_string(r.num_gpus) + ',' + std::to_string(p.tp) + ',' + std::to_string(p.pp) + ',' +
         std::to_string(p.dp) + ',' + std::to_string(p.micro_batch) + ',' + to_string(p.schedule) + ',' + std::to_string(p.virtual_stages) + ',' +
         to_string(p.recompute) + ',' + (p.sequence_parallel ? "true" : "false") + ',' + std::to_string(p.zero_stage) + ',' + std::to_string(p.cp) +
         ',' + std::to_string(p.ep) + ',' + std::to_string(p.effective_etp()) + ',' + to_string(r.precision) + ',' +
         (p.tp_overlap ? "true" : "false") + ',' + (p.moe_overlap ? "true" : "false");
    for (const double v : {r.iteration_time_s, r.iteration_time_low_s, r.iteration_time_high_s, r.tokens_per_s, r.mfu, r.bubble_fraction,
                           r.peak_memory_gib, r.training_days, r.cost_usd}) {
        s += ',';
        append_number(s, v);
    }
    s += p.overlap_grad_reduce ? ",true," : ",false,";
    s += to_string(p.rank_order);
    s += p.offload_optimizer ? ",true," : ",false,";
    append_number(s, p.offload_activations);
    s += ',';
    // A layout's commas are cosmetic (pipeline_layout.h): drop them so the column stays one field.
    for (const char c : p.pipeline_layout) {
        if (c != ',') {
            s += c;
        }
    }
    s += r.band_calibrated ? ",calibrated" : ",uncalibrated"; // whether the band was measured or is the default
    // The binding physical floor and the plausibility flags, codes and reasons each joined by ';' (no commas).
    s += ',';
    append_number(s, r.floor_s);
    s += ',';
    s += to_string(r.floor_resource);
    s += ',';
    s += joined(plausibility_codes(r.plausibility));
    s += ',';
    s += joined(row_reasons(r));
    s += r.on_front ? ",true" : ",false"; // last: the CLI's spool strips it and marks the front at the end
    return s;
}

nlohmann::json plan_row_to_json(const PlanRow& r)
{
    nlohmann::json j = {{"index", r.index},
                        {"gpu", r.gpu},
                        {"num_gpus", r.num_gpus},
                        {"plan", plan_to_json(r.plan)},
                        {"precision", to_string(r.precision)},
                        {"iteration_time_s", r.iteration_time_s},
                        {"iteration_time_band_s", {r.iteration_time_low_s, r.iteration_time_high_s}},
                        {"tokens_per_s", r.tokens_per_s},
                        {"mfu", r.mfu},
                        {"bubble_fraction", r.bubble_fraction},
                        {"peak_memory_gib", r.peak_memory_gib},
                        {"training_days", r.training_days},
                        {"cost_usd", r.cost_usd},
                        {"on_front", r.on_front},
                        {"band_calibrated", r.band_calibrated},
                        {"floor", {{"binding", to_string(r.floor_resource)}, {"binding_s", r.floor_s}}},
                        {"plausibility", {{"flags", plausibility_codes(r.plausibility)}, {"reasons", row_reasons(r)}}}};
    // The search axes, whether or not plan_to_json() writes them.
    nlohmann::json& plan = j["plan"];
    plan["cp"] = r.plan.cp;
    plan["ep"] = r.plan.ep;
    plan["etp"] = r.plan.effective_etp();
    plan["tp_overlap"] = r.plan.tp_overlap;
    plan["moe_overlap"] = r.plan.moe_overlap;
    plan["zero_stage"] = r.plan.zero_stage;
    plan["rank_order"] = to_string(r.plan.rank_order);
    plan["offload_optimizer"] = r.plan.offload_optimizer;
    plan["offload_activations"] = r.plan.offload_activations;
    return j;
}

nlohmann::json explore_result_to_json(const ExploreResult& result)
{
    nlohmann::json rejected = nlohmann::json::object();
    for (std::size_t i = 0; i < result.rejected.size(); ++i) {
        if (result.rejected[i] > 0) {
            rejected[to_string(static_cast<RejectReason>(i))] = {{"count", result.rejected[i]}, {"example", result.example[i].to_string()}};
        }
    }
    return {{"total", result.total},
            {"evaluated", result.evaluated},
            {"feasible", result.feasible},
            {"simulated", result.feasible},
            {"bounded", result.bounded},
            {"rejected", rejected},
            {"rejected_total", std::accumulate(result.rejected.begin(), result.rejected.end(), std::uint64_t{0})},
            {"cancelled", result.cancelled},
            {"elapsed_s", result.elapsed_s},
            {"front", rows_to_json(result.front)},
            {"fastest", rows_to_json(result.fastest)},
            {"cheapest", rows_to_json(result.cheapest)},
            {"best_mfu", rows_to_json(result.best_mfu)}};
}

} // namespace vtrain
