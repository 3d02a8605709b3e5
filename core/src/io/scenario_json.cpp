// SPDX-License-Identifier: MIT
// A scenario file in: the cluster, training, plan and search blocks and the entry points (the model block is
// model_json.cpp; the names of enum values, scenario_vocabulary.cpp; the writer, scenario_json_write.cpp).
#include "vtrain/scenario_json.h"

#include <algorithm>
#include <utility>

#include "io/model_json.h"
#include "vtrain/json_fields.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/plan_check.h"
#include "vtrain/rank_layout.h"

namespace vtrain {
namespace {

using json_fields::lowercase;
using json_fields::Reader;

ClusterSpec read_cluster(Reader r)
{
    r.reject_unknown({"gpu", "num_gpus", "gpus_per_node", "nvlink_domain_gpus", "price_per_gpu_hour", "gpu_prices", "nvlink_bus_gbytes_per_s",
                      "nic_gbit_per_s", "nics_per_node", "inter_node_latency_us", "description"});
    ClusterSpec c;
    c.gpu = r.required_string("gpu");
    if (const auto why = json_fields::id_problem(c.gpu); why && !c.gpu.empty()) {
        // An id names a profile in the profile folders; "/etc/x" or "../x" would load any file as a profile.
        r.error("gpu", "\"" + json_fields::bounded(c.gpu) + "\" is not a GPU profile id: it " + *why +
                           " (ids are file names such as \"h100-sxm5-80gb\"; vtrain simulate --profile FILE takes a file)");
    }
    c.num_gpus = r.required_int("num_gpus", 1, 10'000'000);
    c.gpus_per_node = r.optional_int("gpus_per_node", 1, 1024).value_or(0);
    c.nvlink_domain_gpus = r.optional_int("nvlink_domain_gpus", 1, 1'000'000).value_or(0);
    c.price_per_gpu_hour = r.optional_number("price_per_gpu_hour", 0, 1000);
    if (r.has("gpu_prices")) {
        Reader prices = r.child("gpu_prices");
        for (const auto& [id, value] : prices.json().items()) {
            if (const auto why = json_fields::id_problem(id)) {
                // The key is quoted bounded and printable: a file may hold any text there.
                prices.error("", "\"" + json_fields::bounded(id) + "\" is not a GPU profile id: it " + *why);
            } else if (id == c.gpu) {
                prices.error(id, "is the cluster's own GPU: its price is cluster.price_per_gpu_hour");
            } else if (const auto price = prices.optional_number(id.c_str(), 0, 1000)) {
                c.gpu_prices[id] = *price;
            }
        }
    }
    c.links.nvlink_bus_gbytes_per_s = r.optional_number("nvlink_bus_gbytes_per_s", 1, 1e5);
    c.links.nic_gbit_per_s = r.optional_number("nic_gbit_per_s", 1, 1e5);
    c.links.nics_per_node = r.optional_int("nics_per_node", 1, 64);
    c.links.inter_node_latency_us = r.optional_number("inter_node_latency_us", 0, 1e4);
    return c;
}

// "mode" and what fine-tuning adds: the LoRA adapters (rank, alpha, target modules) and the data layout of
// samples (packed or padded, their mean length). A LoRA field without mode "lora" is refused: it would change
// nothing, which a reader of the file would not expect.
void read_fine_tuning(Reader& r, TrainingSpec& t)
{
    if (const auto m = r.optional_string("mode")) {
        if (const auto v = training_mode_from_string(*m)) {
            t.mode = *v;
        } else {
            r.error("mode", "must be \"pretrain\", \"sft\" or \"lora\", not \"" + json_fields::bounded(*m) + "\"");
        }
    }
    const bool lora = t.mode == TrainingMode::Lora;
    for (const char* key : {"lora_rank", "lora_alpha", "lora_targets"}) {
        if (r.has(key) && !lora) {
            r.error(key, "applies to mode \"lora\" only");
        }
    }
    for (const char* key : {"sequence_packing", "sample_tokens"}) {
        if (r.has(key) && t.mode == TrainingMode::Pretrain) {
            r.error(key, "applies to mode \"sft\" or \"lora\" only (pretraining sequences are full documents)");
        }
    }
    t.lora_rank = r.optional_int("lora_rank", 1, 65536).value_or(t.lora_rank);
    t.lora_alpha = r.optional_number("lora_alpha", 0, 1e6).value_or(t.lora_alpha);
    if (r.json().is_object() && r.json().contains("lora_targets")) {
        const nlohmann::json& list = r.json()["lora_targets"];
        if (!list.is_array() || list.empty() || list.size() > 16) {
            r.error("lora_targets", "must be a non-empty list of linear layers (\"qkv\", \"proj\", \"fc1\", \"fc2\")");
        } else {
            unsigned bits = 0;
            for (const nlohmann::json& item : list) {
                const unsigned bit = item.is_string() ? lora_target_bit(item.get<std::string>()) : 0u;
                if (bit == 0) {
                    r.error("lora_targets", "names \"qkv\", \"proj\", \"fc1\" or \"fc2\" (or linear_qkv, ...), not \"" +
                                                json_fields::bounded(item.is_string() ? item.get<std::string>() : item.dump()) + "\"");
                }
                bits |= bit;
            }
            t.lora_targets = bits;
        }
    }
    t.sequence_packing = r.optional_bool("sequence_packing").value_or(true);
    t.sample_tokens = r.optional_int("sample_tokens", 1, 100'000'000).value_or(0);
}

TrainingSpec read_training(Reader r)
{
    r.reject_unknown({"global_batch",
                      "tokens",
                      "precision",
                      "fp8_recipe",
                      "attention",
                      "grad_accumulation_bytes",
                      "optimizer_moments",
                      "bf16_gradients",
                      "fp8_param_gather",
                      "per_op_sac",
                      "tp_overlap_forward_only",
                      "eager_elementwise",
                      "bf16_edge_layers",
                      "moe_dispatcher",
                      "description",
                      "fp8_axiswise_casts",
                      "attention_peak_fraction",
                      "cp_ring_pytorch",
                      "loss_bytes_per_logit",
                      "loss_parallel",
                      "cuda_graphs",
                      "cuda_graph_scope",
                      "fused_grouped_mlp",
                      "ssd_scan_time_factor",
                      "te_cross_entropy",
                      "overlap_p2p",
                      "zero3_fetch",
                      "pipeline_runtime",
                      "mode",
                      "lora_rank",
                      "lora_alpha",
                      "lora_targets",
                      "sequence_packing",
                      "sample_tokens"});
    TrainingSpec t;
    t.global_batch = r.required_int("global_batch", 1, 1'000'000'000);
    t.tokens = r.optional_number("tokens", 0, 1e17).value_or(0);
    if (const auto p = r.optional_string("precision")) {
        if (const auto v = precision_from_string(*p)) {
            t.precision = *v;
        } else {
            r.error("precision", "must be \"bf16\", \"fp16\", \"fp32\", \"fp8\" or \"nvfp4\", not \"" + json_fields::bounded(*p) + "\"");
        }
    }
    // The recipe is read whatever the precision: a search over precisions uses it for its fp8 plans.
    if (const auto recipe = r.optional_string("fp8_recipe")) {
        if (const auto v = fp8_recipe_from_string(*recipe)) {
            t.fp8_recipe = *v;
        } else {
            r.error("fp8_recipe", "must be \"delayed\", \"current\", \"blockwise\" or \"mxfp8\", not \"" + json_fields::bounded(*recipe) + "\"");
        }
    }
    if (const auto a = r.optional_string("attention")) {
        const std::string s = lowercase(*a);
        if (s == "flash") {
            t.attention = AttentionKernel::Flash;
        } else if (s == "unfused") {
            t.attention = AttentionKernel::Unfused;
        } else {
            r.error("attention", "must be \"flash\" or \"unfused\", not \"" + json_fields::bounded(*a) + "\"");
        }
    }
    t.grad_accumulation_bytes = r.optional_number("grad_accumulation_bytes", 0, 64).value_or(0);
    if (const auto moments = r.optional_string("optimizer_moments")) {
        if (*moments == "bf16" || *moments == "fp32") {
            t.bf16_optimizer_moments = *moments == "bf16";
        } else {
            r.error("optimizer_moments", "must be \"fp32\" or \"bf16\", not \"" + json_fields::bounded(*moments) + "\"");
        }
    }
    t.bf16_gradients = r.optional_bool("bf16_gradients").value_or(false);
    t.fp8_param_gather = r.optional_bool("fp8_param_gather").value_or(false);
    t.per_op_sac = r.optional_bool("per_op_sac").value_or(false);
    t.tp_overlap_forward_only = r.optional_bool("tp_overlap_forward_only").value_or(false);
    t.eager_elementwise = r.optional_bool("eager_elementwise").value_or(false);
    t.bf16_edge_layers = r.optional_int("bf16_edge_layers", 0, 1'000'000).value_or(0);
    t.fp8_axiswise_casts = r.optional_bool("fp8_axiswise_casts").value_or(false);
    t.attention_peak_fraction = r.optional_number("attention_peak_fraction", 0, 1).value_or(0);
    t.cp_ring_pytorch = r.optional_bool("cp_ring_pytorch").value_or(false);
    t.loss_bytes_per_logit = r.optional_number("loss_bytes_per_logit", 0, 64).value_or(0);
    t.loss_parallel = r.optional_bool("loss_parallel").value_or(false);
    t.fused_grouped_mlp = r.optional_bool("fused_grouped_mlp").value_or(false);
    t.ssd_scan_time_factor = r.optional_number("ssd_scan_time_factor", 0.1, 100).value_or(1);
    t.te_cross_entropy = r.optional_bool("te_cross_entropy").value_or(false);
    t.overlap_p2p = r.optional_bool("overlap_p2p").value_or(false);
    if (const auto d = r.optional_string("moe_dispatcher")) {
        const std::string s = lowercase(*d);
        if (s == "alltoall") {
            t.moe_dispatcher = MoeDispatcher::AllToAll;
        } else if (s == "flex") {
            t.moe_dispatcher = MoeDispatcher::Flex;
        } else {
            r.error("moe_dispatcher", "must be \"alltoall\" (NCCL, one row per token and expert) or \"flex\" (DeepEP/HybridEP: once per "
                                      "destination NVLink domain), not \"" +
                                          json_fields::bounded(*d) + "\"");
        }
    }
    if (const auto f = r.optional_string("zero3_fetch")) {
        const std::string v = lowercase(*f);
        if (v == "layer" || v == "module") {
            t.zero3_fetch = v == "module" ? Zero3Fetch::Module : Zero3Fetch::Layer;
        } else {
            r.error("zero3_fetch", "must be \"layer\" (FSDP, Megatron-FSDP: one all-gather per layer) or \"module\" (DeepSpeed ZeRO-3: one per "
                                   "submodule), not \"" +
                                       json_fields::bounded(*f) + "\"");
        }
    }
    if (const auto f = r.optional_string("pipeline_runtime")) {
        if (const auto v = pipeline_runtime_from_string(*f)) {
            t.pipeline_runtime = *v;
        } else {
            r.error("pipeline_runtime", "must be \"megatron\" (Megatron-Core's schedules) or \"pytorch\" (torch.distributed.pipelining, "
                                        "torchtitan), not \"" +
                                            json_fields::bounded(*f) + "\"");
        }
    }
    if (const auto g = r.optional_string("cuda_graphs")) {
        if (const auto v = cuda_graphs_from_string(*g)) {
            t.cuda_graphs = *v;
        } else {
            r.error("cuda_graphs", "must be \"none\" (every kernel launched by the host), \"scoped\" (per-module graphs) or "
                                   "\"full_iteration\" (the whole forward and backward captured), not \"" +
                                       json_fields::bounded(*g) + "\"");
        }
    }
    if (r.json().contains("cuda_graph_scope")) {
        const nlohmann::json& list = r.json()["cuda_graph_scope"];
        if (!list.is_array() || list.size() > 16) {
            r.error("cuda_graph_scope", "must be a list of module names (\"attn\", \"mlp\", \"moe\", \"moe_router\", \"moe_preprocess\", \"mamba\")");
        } else {
            unsigned bits = 0;
            for (const nlohmann::json& item : list) {
                const unsigned bit = item.is_string() ? cuda_graph_scope_bit(item.get<std::string>()) : 0u;
                if (bit == 0) {
                    r.error("cuda_graph_scope", "names \"attn\", \"mlp\", \"moe\", \"moe_router\", \"moe_preprocess\" or \"mamba\", not \"" +
                                                    json_fields::bounded(item.is_string() ? item.get<std::string>() : item.dump()) + "\"");
                }
                bits |= bit;
            }
            t.cuda_graph_scope = bits;
        }
    }
    read_fine_tuning(r, t);
    return t;
}

Schedule read_schedule(Reader& r, const char* key, Schedule fallback)
{
    const auto s = r.optional_string(key);
    if (!s) {
        return fallback;
    }
    if (const auto v = schedule_from_string(*s)) {
        return *v;
    }
    r.error(key, "must be \"gpipe\", \"1f1b\" or \"interleaved\", not \"" + json_fields::bounded(*s) + "\"");
    return fallback;
}

Recompute read_recompute(Reader& r, const char* key, Recompute fallback)
{
    const nlohmann::json& j = r.json();
    if (j.is_object() && j.contains(key) && j[key].is_boolean()) {
        return j[key].get<bool>() ? Recompute::Full : Recompute::None;
    }
    const auto s = r.optional_string(key);
    if (!s) {
        return fallback;
    }
    if (const auto v = recompute_from_string(*s)) {
        return *v;
    }
    r.error(key, "must be \"none\", \"selective\" or \"full\", not \"" + json_fields::bounded(*s) + "\"");
    return fallback;
}

Plan read_plan(Reader r)
{
    r.reject_unknown({"tp",
                      "pp",
                      "dp",
                      "micro_batch",
                      "schedule",
                      "virtual_stages",
                      "recompute",
                      "sequence_parallel",
                      "zero_stage",
                      "shard_group",
                      "grad_bucket_mb",
                      "overlap_grad_reduce",
                      "overlap_param_gather",
                      "cp",
                      "cp_kind",
                      "ep",
                      "etp",
                      "moe_overlap",
                      "tp_overlap",
                      "first_stage_layers",
                      "last_stage_layers",
                      "pipeline_layout",
                      "rank_order",
                      "offload_optimizer",
                      "offload_activations",
                      "recompute_modules",
                      "description"});
    Plan p;
    p.tp = r.required_int("tp", 1, 1 << 16);
    p.pp = r.required_int("pp", 1, 1 << 16);
    p.dp = r.required_int("dp", 1, 10'000'000);
    p.micro_batch = r.required_int("micro_batch", 1, 1 << 20);
    p.schedule = read_schedule(r, "schedule", Schedule::OneFOneB);
    p.virtual_stages = r.optional_int("virtual_stages", 1, 1024).value_or(p.schedule == Schedule::Interleaved ? 2 : 1);
    p.recompute = read_recompute(r, "recompute", Recompute::None);
    p.sequence_parallel = r.optional_bool("sequence_parallel").value_or(false);
    p.zero_stage = r.optional_int("zero_stage", 0, 3).value_or(0);
    p.shard_group = r.optional_int("shard_group", 1, 10'000'000).value_or(0);
    p.grad_bucket_mb = r.optional_number("grad_bucket_mb", 0.01, 1e6).value_or(40);
    p.overlap_grad_reduce = r.optional_bool("overlap_grad_reduce").value_or(true);
    p.overlap_param_gather = r.optional_bool("overlap_param_gather").value_or(false);
    p.cp = r.optional_int("cp", 1, 1 << 16).value_or(1);
    if (const auto kind = r.optional_string("cp_kind")) {
        const std::string k = lowercase(*kind);
        if (k == "ring" || k == "p2p") {
            p.cp_kind = ContextParallelKind::Ring;
        } else if (k == "all_to_all" || k == "a2a" || k == "ulysses") {
            p.cp_kind = ContextParallelKind::AllToAll;
        } else {
            r.error("cp_kind", "must be \"ring\" or \"all_to_all\", not \"" + json_fields::bounded(*kind) + "\"");
        }
    }
    p.ep = r.optional_int("ep", 1, 1 << 16).value_or(1);
    p.etp = r.optional_int("etp", 1, 1 << 16).value_or(0);
    p.moe_overlap = r.optional_bool("moe_overlap").value_or(false);
    p.tp_overlap = r.optional_bool("tp_overlap").value_or(false);
    if (r.has("recompute_modules")) {
        const nlohmann::json& list = r.json().at("recompute_modules");
        if (!list.is_array()) {
            r.error("recompute_modules", "must be a list of \"layernorm\", \"mla_up_proj\", \"moe_act\", \"moe\"");
        } else {
            for (const auto& v : list) {
                const unsigned bit = v.is_string() ? recompute_module_bit(v.get<std::string>()) : 0u;
                if (bit != 0) {
                    p.recompute_modules |= bit;
                } else {
                    r.error("recompute_modules", "knows \"layernorm\", \"mla_up_proj\", \"moe_act\" and \"moe\", not " + json_fields::excerpt(v));
                }
            }
        }
    }
    p.first_stage_layers = r.optional_int("first_stage_layers", 1, 100000).value_or(0);
    p.last_stage_layers = r.optional_int("last_stage_layers", 1, 100000).value_or(0);
    p.pipeline_layout = r.optional_string("pipeline_layout").value_or("");
    if (const auto order = r.optional_string("rank_order")) {
        std::string why;
        if (const auto parsed = parse_rank_order(lowercase(*order), &why)) {
            p.rank_order = *parsed;
        } else {
            r.error("rank_order", "\"" + json_fields::bounded(*order) + "\" " + why);
        }
    }
    p.offload_optimizer = r.optional_bool("offload_optimizer").value_or(false);
    p.offload_activations = r.optional_number("offload_activations", 0, 1).value_or(0);
    if (!p.pipeline_layout.empty() && (p.first_stage_layers > 0 || p.last_stage_layers > 0)) {
        r.error("pipeline_layout", "give either pipeline_layout or first_stage_layers / last_stage_layers, not both");
    }
    if (!p.pipeline_layout.empty()) {
        std::vector<VirtualStage> stages;
        if (auto why = parse_pipeline_layout(p.pipeline_layout, stages)) {
            r.error("pipeline_layout", "does not parse: " + *why);
        }
    }
    return p;
}

template <typename T, typename ReadOne>
std::vector<T> read_list(Reader& r, const char* key, ReadOne read_one)
{
    std::vector<T> out;
    const nlohmann::json& j = r.json();
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
        return out;
    }
    const nlohmann::json& list = j[key];
    if (!list.is_array()) {
        r.error(key, "must be a list");
        return out;
    }
    if (list.size() > kMaxSearchListValues) {
        r.error(key, "holds " + std::to_string(list.size()) + " values, more than the " + std::to_string(kMaxSearchListValues) +
                         " a search list may hold");
        return out;
    }
    constexpr std::size_t kMaxItemErrors = 20; // then one line for the rest: the diagnostics stay small
    std::size_t bad = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (auto v = read_one(list[i])) {
            out.push_back(*v);
        } else if (++bad <= kMaxItemErrors) {
            r.error(key, "item " + std::to_string(i) + " (" + json_fields::excerpt(list[i]) + ") is not valid");
        }
    }
    if (bad > kMaxItemErrors) {
        r.error(key, std::to_string(bad - kMaxItemErrors) + " more items are not valid");
    }
    return out;
}

std::optional<int> positive_int(const nlohmann::json& j, int max)
{
    return json_fields::whole_number_in_range(j, 1, max);
}

SearchSpace read_search(Reader r)
{
    r.reject_unknown({"tp",
                      "pp",
                      "micro_batch",
                      "schedule",
                      "virtual_stages",
                      "recompute",
                      "sequence_parallel",
                      "zero_stage",
                      "num_gpus",
                      "gpu",
                      "cp",
                      "ep",
                      "etp",
                      "precision",
                      "tp_overlap",
                      "moe_overlap",
                      "overlap_grad_reduce",
                      "rank_order",
                      "offload_optimizer",
                      "offload_activations",
                      "description"});
    SearchSpace s;
    s.tp = read_list<int>(r, "tp", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.pp = read_list<int>(r, "pp", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.micro_batch = read_list<int>(r, "micro_batch", [](const nlohmann::json& j) { return positive_int(j, 1 << 20); });
    s.virtual_stages = read_list<int>(r, "virtual_stages", [](const nlohmann::json& j) { return positive_int(j, 1024); });
    s.num_gpus = read_list<int>(r, "num_gpus", [](const nlohmann::json& j) { return positive_int(j, 10'000'000); });
    s.zero_stage = read_list<int>(r, "zero_stage", [](const nlohmann::json& j) { return json_fields::whole_number_in_range(j, 0, 3); });
    s.cp = read_list<int>(r, "cp", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.ep = read_list<int>(r, "ep", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.etp = read_list<int>(r, "etp", [](const nlohmann::json& j) { return json_fields::whole_number_in_range(j, 0, 1 << 16); }); // 0 = the same as tp
    s.precision = read_list<Precision>(r, "precision", [](const nlohmann::json& j) -> std::optional<Precision> {
        if (!j.is_string()) {
            return std::nullopt;
        }
        for (const Precision p : {Precision::Bf16, Precision::Fp16, Precision::Fp8, Precision::Nvfp4}) {
            if (j.get<std::string>() == to_string(p)) {
                return p;
            }
        }
        return std::nullopt; // fp32 is no searched choice: nobody trains today's models in it
    });
    auto flag = [](const nlohmann::json& j) -> std::optional<bool> { return j.is_boolean() ? std::optional<bool>(j.get<bool>()) : std::nullopt; };
    s.tp_overlap = read_list<bool>(r, "tp_overlap", flag);
    s.moe_overlap = read_list<bool>(r, "moe_overlap", flag);
    s.overlap_grad_reduce = read_list<bool>(r, "overlap_grad_reduce", flag);
    s.offload_optimizer = read_list<bool>(r, "offload_optimizer", flag);
    s.offload_activations = read_list<double>(r, "offload_activations", [](const nlohmann::json& j) -> std::optional<double> {
        return j.is_number() && j.get<double>() >= 0 && j.get<double>() <= 1 ? std::optional<double>(j.get<double>()) : std::nullopt;
    });
    s.rank_order = read_list<RankOrder>(r, "rank_order", [](const nlohmann::json& j) -> std::optional<RankOrder> {
        return j.is_string() ? parse_rank_order(lowercase(j.get<std::string>())) : std::nullopt;
    });
    s.schedule = read_list<Schedule>(r, "schedule", [](const nlohmann::json& j) -> std::optional<Schedule> {
        return j.is_string() ? schedule_from_string(j.get<std::string>()) : std::nullopt;
    });
    s.recompute = read_list<Recompute>(r, "recompute", [](const nlohmann::json& j) -> std::optional<Recompute> {
        if (j.is_boolean()) {
            return j.get<bool>() ? Recompute::Full : Recompute::None;
        }
        return j.is_string() ? recompute_from_string(j.get<std::string>()) : std::nullopt;
    });
    s.sequence_parallel = read_list<bool>(r, "sequence_parallel", [](const nlohmann::json& j) -> std::optional<bool> {
        return j.is_boolean() ? std::optional<bool>(j.get<bool>()) : std::nullopt;
    });
    s.gpu = read_list<std::string>(r, "gpu", [](const nlohmann::json& j) -> std::optional<std::string> {
        // Profile ids, never paths (json_fields::id_problem).
        return j.is_string() && !json_fields::id_problem(j.get<std::string>()) ? std::optional<std::string>(j.get<std::string>()) : std::nullopt;
    });
    return s;
}

} // namespace

Expected<Scenario> scenario_from_json(const nlohmann::json& json)
{
    Diagnostics diags;
    if (!json.is_object()) {
        return Diagnostic{"", "a scenario must be a JSON object with \"model\", \"cluster\", \"training\" and \"plan\" or \"search\""};
    }
    Reader r(json, "", diags);
    r.reject_unknown({"model", "cluster", "training", "plan", "search", "description", "name", "schema_version"});
    Scenario s;
    s.name = r.optional_string("name").value_or(std::string{});
    s.description = r.optional_string("description").value_or(std::string{});
    s.model = read_model(r.child("model"));
    s.cluster = read_cluster(r.child("cluster"));
    s.training = read_training(r.child("training"));
    if (r.has("plan")) {
        s.plan = read_plan(r.child("plan"));
    }
    if (r.has("search")) {
        s.search = read_search(r.child("search"));
    }
    // Megatron-Core captures a whole MoE layer only when its expert shapes are static.
    if (const std::string why = cuda_graph_scope_refusal(s.model, s.training); !why.empty()) {
        diags.push_back({"training.cuda_graph_scope", why});
    }
    if (!diags.empty()) {
        return diags;
    }
    return s;
}

Expected<Scenario> scenario_from_text(const std::string& text)
{
    const auto json = json_fields::parse_json_text(text);
    if (!json.ok()) {
        return json.errors();
    }
    return scenario_from_json(*json);
}

Expected<Scenario> load_scenario(const std::filesystem::path& path)
{
    const auto text = json_fields::read_text_file(path);
    if (!text.ok()) {
        return text.errors();
    }
    return scenario_from_text(*text);
}

} // namespace vtrain
