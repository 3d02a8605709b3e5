// SPDX-License-Identifier: MIT
// Reading RUNS.json rows, strictly: both formats (public_runs.json's 63 keys and modern_runs.json's 86;
// an absent extra key means null), every documented key with its type, and an undocumented key is an
// error naming the row and the key.
#include <algorithm>

#include "validation/validation_detail.h"
#include "vtrain/json_fields.h"

namespace vtrain {
namespace {

using json_fields::Reader;

const std::vector<std::string>& known_fields()
{
    static const std::vector<std::string> fields{
        "id", "source_id", "source_ref", "source_url", "transcribed_via", "trust", "subset", "model_name", "arch_family", "num_layers", "hidden_size",
        "num_attention_heads", "num_query_groups", "ffn_hidden_size", "seq_length", "vocab_size", "params_b_reported", "gpu_type", "gpu_memory_gb",
        "num_gpus", "gpus_per_node", "intra_node_interconnect", "inter_node_interconnect", "system_name", "tp", "pp", "dp", "cp", "ep",
        "model_parallel_size", "virtual_pipeline_stages", "pipeline_schedule", "sequence_parallel", "zero_stage", "distributed_optimizer", "fsdp",
        "micro_batch_size", "global_batch_size", "grad_accum_steps", "precision", "activation_recompute", "software", "iteration_time_s",
        "tflops_per_gpu", "tflops_kind", "pct_of_peak", "mfu_pct", "hfu_pct", "aggregate_pflops", "tokens_per_sec_per_gpu", "tokens_per_sec_total",
        "samples_per_sec", "peak_memory_gb_per_gpu", "observed_oom", "layer_forward_ms", "layer_backward_ms", "layer_total_ms",
        "training_days_reported", "primary_metric", "flops_definition", "peak_tflops_reference", "derived", "notes",
        // modern_runs.json's extra keys (README "The extra keys"); a file without them means null
        "num_experts", "moe_top_k", "moe_ffn_hidden_size", "num_shared_experts", "moe_shared_expert_ffn_hidden_size", "moe_first_dense_layers",
        "moe_layer_freq", "expert_tensor_parallel", "kv_channels", "mla_q_lora_rank", "mla_kv_lora_rank", "mla_qk_head_dim", "mla_qk_rope_head_dim",
        "mla_v_head_dim", "attention_window", "attention_window_every", "layer_pattern", "qkv_bias", "qk_layernorm", "normalization",
        "ffn_activation", "position_embedding", "tied_embeddings"};
    return fields;
}

RunRow parse_row(const nlohmann::json& j, std::size_t index, Diagnostics& diags)
{
    RunRow r;
    r.index = index;
    std::string label = "row " + std::to_string(index);
    if (j.is_object() && j.contains("id") && j["id"].is_string() && !j["id"].get<std::string>().empty()) {
        label = "row \"" + json_fields::bounded(j["id"].get<std::string>()) + "\"";
    }
    if (!j.is_object()) {
        diags.push_back({label, "must be an object, not " + std::string(j.type_name())});
        return r;
    }
    Reader rd(j, label, diags);
    rd.reject_unknown(known_fields());
    r.id = rd.required_string("id");
    r.subset = rd.required_string("subset");
    r.primary_metric = rd.required_string("primary_metric");
    if (r.primary_metric.rfind("derived.", 0) == 0) {
        // A derived value: it must exist under "derived" and be a number.
        const std::string key = r.primary_metric.substr(8);
        if (!j.contains("derived") || !j["derived"].is_object() || !j["derived"].contains(key) || !j["derived"][key].is_number()) {
            rd.error("primary_metric", "names " + r.primary_metric + ", which the row's derived object does not hold as a number");
        }
    }
    r.source_ref = rd.optional_string("source_ref"); // the table or figure a row comes from (fine-tuning reads it)
    for (const char* key : {"source_url", "transcribed_via"}) {
        rd.optional_string(key);
    }
    r.intra_node_interconnect = rd.optional_string("intra_node_interconnect");
    r.trust = rd.optional_string("trust");
    if (r.trust && *r.trust != "high" && *r.trust != "medium" && *r.trust != "low") {
        rd.error("trust", "must be \"high\", \"medium\" or \"low\", not \"" + json_fields::bounded(*r.trust) + "\"");
    }
    r.source_id = rd.optional_string("source_id");
    r.arch_family = rd.optional_string("arch_family");
    r.model_name = rd.optional_string("model_name");
    r.gpu_type = rd.optional_string("gpu_type");
    r.system_name = rd.optional_string("system_name");
    r.inter_node_interconnect = rd.optional_string("inter_node_interconnect");
    r.pipeline_schedule = rd.optional_string("pipeline_schedule");
    r.precision = rd.optional_string("precision");
    r.activation_recompute = rd.optional_string("activation_recompute");
    r.software = rd.optional_string("software");
    r.tflops_kind = rd.optional_string("tflops_kind");
    r.flops_definition = rd.optional_string("flops_definition");

    constexpr long long big = 1LL << 30;
    r.num_layers = rd.optional_int("num_layers", 1, 100000);
    r.hidden_size = rd.optional_int("hidden_size", 1, 10000000);
    r.num_attention_heads = rd.optional_int("num_attention_heads", 1, 100000);
    r.num_query_groups = rd.optional_int("num_query_groups", 1, 100000);
    r.ffn_hidden_size = rd.optional_int("ffn_hidden_size", 1, 100000000);
    r.seq_length = rd.optional_int("seq_length", 1, 100000000);
    r.vocab_size = rd.optional_int("vocab_size", 1, 100000000);
    r.num_gpus = rd.optional_int("num_gpus", 1, 10000000);
    r.gpus_per_node = rd.optional_int("gpus_per_node", 1, 1024);
    r.tp = rd.optional_int("tp", 1, 100000);
    r.pp = rd.optional_int("pp", 1, 100000);
    r.dp = rd.optional_int("dp", 1, 10000000);
    r.cp = rd.optional_int("cp", 1, 100000);
    r.ep = rd.optional_int("ep", 1, 100000);
    rd.optional_int("model_parallel_size", 1, 10000000);
    r.virtual_pipeline_stages = rd.optional_int("virtual_pipeline_stages", 1, 100000);
    r.micro_batch_size = rd.optional_int("micro_batch_size", 1, big);
    r.global_batch_size = rd.optional_int("global_batch_size", 1, big);
    r.grad_accum_steps = rd.optional_int("grad_accum_steps", 1, big);
    r.zero_stage = rd.optional_int("zero_stage", 0, 3);
    r.sequence_parallel = rd.optional_bool("sequence_parallel");
    r.distributed_optimizer = rd.optional_bool("distributed_optimizer");
    // fsdp: a bool, or an integer (0 none, 1 full shard, > 1 the sharding-group size as printed).
    if (j.contains("fsdp") && j["fsdp"].is_boolean()) {
        r.fsdp = j["fsdp"].get<bool>() ? 1 : 0;
    } else if (j.contains("fsdp") && !j["fsdp"].is_null()) {
        r.fsdp = rd.optional_int("fsdp", 0, 10000000);
    }
    r.observed_oom = rd.optional_bool("observed_oom");

    constexpr double huge = 1e18;
    rd.optional_number("params_b_reported", 0, huge);
    r.gpu_memory_gb = rd.optional_number("gpu_memory_gb", 0, huge);
    r.iteration_time_s = rd.optional_number("iteration_time_s", 1e-9, huge);
    r.tflops_per_gpu = rd.optional_number("tflops_per_gpu", 1e-9, huge);
    rd.optional_number("pct_of_peak", 0, 100);
    r.mfu_pct = rd.optional_number("mfu_pct", 1e-9, 100);
    r.hfu_pct = rd.optional_number("hfu_pct", 1e-9, 100);
    for (const char* key : {"aggregate_pflops", "training_days_reported"}) {
        rd.optional_number(key, 0, huge);
    }
    r.tokens_per_sec_per_gpu = rd.optional_number("tokens_per_sec_per_gpu", 1e-9, huge);
    r.tokens_per_sec_total = rd.optional_number("tokens_per_sec_total", 1e-9, huge);
    r.samples_per_sec = rd.optional_number("samples_per_sec", 1e-9, huge);

    // The modern set's extra keys.
    r.num_experts = rd.optional_int("num_experts", 1, 1000000);
    r.moe_top_k = rd.optional_int("moe_top_k", 1, 1000000);
    r.moe_ffn_hidden_size = rd.optional_int("moe_ffn_hidden_size", 1, 100000000);
    r.num_shared_experts = rd.optional_int("num_shared_experts", 0, 1000000);
    r.moe_shared_expert_ffn_hidden_size = rd.optional_int("moe_shared_expert_ffn_hidden_size", 1, 100000000);
    r.moe_first_dense_layers = rd.optional_int("moe_first_dense_layers", 0, 100000);
    if (j.contains("moe_layer_freq") && j["moe_layer_freq"].is_number_integer()) {
        r.moe_layer_freq = std::to_string(j["moe_layer_freq"].get<long long>());
    } else {
        r.moe_layer_freq = rd.optional_string("moe_layer_freq");
    }
    r.expert_tensor_parallel = rd.optional_int("expert_tensor_parallel", 1, 100000);
    r.kv_channels = rd.optional_int("kv_channels", 1, 1000000);
    r.mla_q_lora_rank = rd.optional_int("mla_q_lora_rank", 0, 1000000);
    r.mla_kv_lora_rank = rd.optional_int("mla_kv_lora_rank", 1, 1000000);
    r.mla_qk_head_dim = rd.optional_int("mla_qk_head_dim", 1, 1000000);
    r.mla_qk_rope_head_dim = rd.optional_int("mla_qk_rope_head_dim", 0, 1000000);
    r.mla_v_head_dim = rd.optional_int("mla_v_head_dim", 1, 1000000);
    r.attention_window = rd.optional_int("attention_window", 1, 100000000);
    r.attention_window_every = rd.optional_int("attention_window_every", 1, 100000);
    r.layer_pattern = rd.optional_string("layer_pattern");
    if (r.layer_pattern && r.layer_pattern->find_first_not_of("ME*-") != std::string::npos) {
        rd.error("layer_pattern", "must use only the letters M, E, * and - (README \"The extra keys\")");
    }
    r.qkv_bias = rd.optional_bool("qkv_bias");
    r.qk_layernorm = rd.optional_bool("qk_layernorm");
    r.tied_embeddings = rd.optional_bool("tied_embeddings");
    r.normalization = rd.optional_string("normalization");
    if (r.normalization && *r.normalization != "rmsnorm" && *r.normalization != "layernorm") {
        rd.error("normalization", "must be \"rmsnorm\" or \"layernorm\", not \"" + json_fields::bounded(*r.normalization) + "\"");
    }
    r.ffn_activation = rd.optional_string("ffn_activation");
    if (r.ffn_activation && *r.ffn_activation != "swiglu" && *r.ffn_activation != "gelu" && *r.ffn_activation != "squared_relu" &&
        *r.ffn_activation != "relu") {
        rd.error("ffn_activation", "must be swiglu, gelu, squared_relu or relu, not \"" + json_fields::bounded(*r.ffn_activation) + "\"");
    }
    r.position_embedding = rd.optional_string("position_embedding");
    r.peak_memory_gb_per_gpu = rd.optional_number("peak_memory_gb_per_gpu", 1e-9, huge);
    r.layer_forward_ms = rd.optional_number("layer_forward_ms", 1e-9, huge);
    r.layer_backward_ms = rd.optional_number("layer_backward_ms", 1e-9, huge);
    r.layer_total_ms = rd.optional_number("layer_total_ms", 1e-9, huge);
    r.peak_tflops_reference = rd.optional_number("peak_tflops_reference", 1e-9, huge);
    if (j.contains("derived") && !j["derived"].is_null() && !j["derived"].is_object()) {
        rd.error("derived", "must be an object or null, not " + std::string(j["derived"].type_name()));
    } else if (j.contains("derived") && j["derived"].is_object()) {
        r.derived = j["derived"];
    }
    if (j.contains("notes") && !j["notes"].is_null()) {
        const auto& notes = j["notes"];
        const bool ok =
            notes.is_string() || (notes.is_array() && std::all_of(notes.begin(), notes.end(), [](const auto& n) { return n.is_string(); }));
        if (!ok) {
            rd.error("notes", "must be a list of strings, a string or null");
        } else if (notes.is_string()) {
            r.notes.push_back(notes.get<std::string>());
        } else {
            for (const auto& n : notes) {
                r.notes.push_back(n.get<std::string>());
            }
        }
    }
    return r;
}

} // namespace

Expected<std::vector<RunRow>> runs_from_json(const nlohmann::json& json)
{
    if (!json.is_array()) {
        return Diagnostic{"", std::string("RUNS.json must be a list of row objects, not ") + json.type_name()};
    }
    if (json.empty()) {
        return Diagnostic{"", "RUNS.json holds no rows (a list of row objects is expected): nothing to validate or fit"};
    }
    Diagnostics diags;
    std::vector<RunRow> rows;
    rows.reserve(json.size());
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < json.size(); ++i) {
        rows.push_back(parse_row(json[i], i, diags));
        const std::string& id = rows.back().id;
        if (!id.empty() && !seen.emplace(id, i).second) {
            diags.push_back(
                {"row \"" + json_fields::bounded(id) + "\".id", "is used by rows " + std::to_string(seen[id]) + " and " + std::to_string(i)});
        }
    }
    if (!diags.empty()) {
        return diags;
    }
    return rows;
}

Expected<std::vector<RunRow>> load_runs(const std::filesystem::path& path)
{
    const auto json = json_fields::read_json_file(path);
    if (!json.ok()) {
        return json.errors();
    }
    return runs_from_json(*json);
}

} // namespace vtrain
