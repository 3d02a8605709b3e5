// SPDX-License-Identifier: MIT
// Validation against published runs. The mapping from a row to a scenario uses only what the row says,
// documented facts about the software and the cluster of its source (see software_settings() and
// network_facts() below), and stated defaults for what the row leaves open; each default used is written
// into the row's notes. Nothing here looks at a row's id.
#include "vtrain/validation.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "vtrain/json_fields.h"
#include "vtrain/plan_check.h"
#include "vtrain/simulator.h"

namespace vtrain {
namespace {

using json_fields::Reader;

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

bool contains(const std::optional<std::string>& s, const char* what)
{
    return s && lower(*s).find(what) != std::string::npos;
}

const std::vector<std::string>& known_fields()
{
    static const std::vector<std::string> fields{
        "id", "source_id", "source_ref", "source_url", "transcribed_via", "trust", "subset", "model_name", "arch_family", "num_layers",
        "hidden_size", "num_attention_heads", "num_query_groups", "ffn_hidden_size", "seq_length", "vocab_size", "params_b_reported",
        "gpu_type", "gpu_memory_gb", "num_gpus", "gpus_per_node", "intra_node_interconnect", "inter_node_interconnect", "system_name", "tp",
        "pp", "dp", "cp", "ep", "model_parallel_size", "virtual_pipeline_stages", "pipeline_schedule", "sequence_parallel", "zero_stage",
        "distributed_optimizer", "fsdp", "micro_batch_size", "global_batch_size", "grad_accum_steps", "precision", "activation_recompute",
        "software", "iteration_time_s", "tflops_per_gpu", "tflops_kind", "pct_of_peak", "mfu_pct", "hfu_pct", "aggregate_pflops",
        "tokens_per_sec_per_gpu", "tokens_per_sec_total", "samples_per_sec", "peak_memory_gb_per_gpu", "observed_oom", "layer_forward_ms",
        "layer_backward_ms", "layer_total_ms", "training_days_reported", "primary_metric", "flops_definition", "peak_tflops_reference",
        "derived", "notes"};
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
    for (const char* key : {"source_ref", "source_url", "transcribed_via", "intra_node_interconnect"}) {
        rd.optional_string(key);
    }
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
    r.fsdp = rd.optional_bool("fsdp");
    r.observed_oom = rd.optional_bool("observed_oom");

    constexpr double huge = 1e18;
    rd.optional_number("params_b_reported", 0, huge);
    r.gpu_memory_gb = rd.optional_number("gpu_memory_gb", 0, huge);
    r.iteration_time_s = rd.optional_number("iteration_time_s", 1e-9, huge);
    r.tflops_per_gpu = rd.optional_number("tflops_per_gpu", 1e-9, huge);
    rd.optional_number("pct_of_peak", 0, 100);
    r.mfu_pct = rd.optional_number("mfu_pct", 1e-9, 100);
    r.hfu_pct = rd.optional_number("hfu_pct", 1e-9, 100);
    for (const char* key : {"aggregate_pflops", "tokens_per_sec_per_gpu", "tokens_per_sec_total", "samples_per_sec", "training_days_reported"}) {
        rd.optional_number(key, 0, huge);
    }
    r.peak_memory_gb_per_gpu = rd.optional_number("peak_memory_gb_per_gpu", 1e-9, huge);
    r.layer_forward_ms = rd.optional_number("layer_forward_ms", 1e-9, huge);
    r.layer_backward_ms = rd.optional_number("layer_backward_ms", 1e-9, huge);
    r.layer_total_ms = rd.optional_number("layer_total_ms", 1e-9, huge);
    r.peak_tflops_reference = rd.optional_number("peak_tflops_reference", 1e-9, huge);
    if (j.contains("derived") && !j["derived"].is_null() && !j["derived"].is_object()) {
        rd.error("derived", "must be an object or null, not " + std::string(j["derived"].type_name()));
    }
    if (j.contains("notes") && !j["notes"].is_null()) {
        const auto& notes = j["notes"];
        const bool ok = notes.is_string() || (notes.is_array() && std::all_of(notes.begin(), notes.end(), [](const auto& n) { return n.is_string(); }));
        if (!ok) {
            rd.error("notes", "must be a list of strings, a string or null");
        }
    }
    return r;
}

// --- documented facts of the sources -------------------------------------------------------------

// How the training software of a row behaves, where the row does not say.
struct SoftwareSettings {
    bool overlap_grad_reduce = true;
    double grad_accumulation_bytes = 0; // see TrainingSpec::grad_accumulation_bytes
    AttentionKernel attention = AttentionKernel::Flash;
    Precision precision = Precision::Bf16;
    const char* description = "";
};

SoftwareSettings software_settings(const RunRow& r)
{
    SoftwareSettings s;
    if (contains(r.software, "deepspeed")) {
        // Megatron-DeepSpeed as vTrain ran it (and DeepSpeed's pipeline engine for MT-NLG): the gradient
        // all-reduce runs after the backward pass (pipeline flush), not overlapped; attention is apex's
        // fused scaled-masked softmax around baddbmm/bmm (no FlashAttention); fp16 mixed precision.
        // The DeepSpeed engine keeps fp16 .grad and lets autograd add each micro-batch's gradients (6 bytes
        // per parameter per micro-batch).
        s.overlap_grad_reduce = false;
        s.attention = AttentionKernel::Unfused;
        s.precision = Precision::Fp16;
        s.grad_accumulation_bytes = 6;
        s.description = "Megatron-DeepSpeed: gradient all-reduce after the backward (no overlap), unfused attention, fp16, "
                        "autograd gradient accumulation";
        return s;
    }
    if (contains(r.software, "megatron")) {
        static const std::regex year("(20[0-9][0-9])");
        std::smatch m;
        const int y = std::regex_search(*r.software, m, year) ? std::stoi(m[1]) : 0;
        if (y == 2021) {
            // Megatron-LM 2021 (SC'21): as below, and each micro-batch's fp16 weight gradients are added into
            // fp32 main_grad buffers by a separate kernel (10 bytes per parameter); the fused weight-gradient
            // accumulation came in 2022.
            s.overlap_grad_reduce = false;
            s.attention = AttentionKernel::Unfused;
            s.precision = Precision::Fp16;
            s.grad_accumulation_bytes = 10;
            s.description = "Megatron-LM 2021: gradient all-reduce after the backward (no overlap), unfused attention, fp16, "
                            "main_grad accumulation kernel";
            return s;
        }
        if (y != 0 && y <= 2022) {
            // Megatron-LM 2021-22 (Narayanan et al. SC'21, Korthikanti et al. 2022): the data-parallel
            // all-reduce runs after the backward pass (Korthikanti Sec. 6.3: not overlapped), attention is the
            // fused softmax around batched GEMMs, fp16 mixed precision.
            s.overlap_grad_reduce = false;
            s.attention = AttentionKernel::Unfused;
            s.precision = Precision::Fp16;
            s.description = "Megatron-LM 2022: gradient all-reduce after the backward (no overlap), unfused attention, fp16, "
                            "fused gradient accumulation";
            return s;
        }
    }
    s.description = "software not recognised: overlapped gradient reduction, flash attention, bf16 (today's Megatron-LM defaults)";
    return s;
}

// The network of a row's cluster, from what its source documents.
struct NetworkFacts {
    std::optional<int> nics_per_node;
    std::optional<double> nic_gbit_per_s;
    std::string description;
};

NetworkFacts network_facts(const RunRow& r)
{
    NetworkFacts f;
    if (r.source_id && r.source_id->rfind("vtrain", 0) == 0) {
        // vTrain's validation cluster: 4 x 200 Gb/s InfiniBand per 8-GPU A100 node, 800 Gbps in all
        // (vTrain's default inter_node_bandwidth).
        f.nics_per_node = 4;
        f.nic_gbit_per_s = 200;
        f.description = "vTrain cluster: 4 x 200 Gb/s InfiniBand per node";
        return f;
    }
    if (contains(r.system_name, "selene")) {
        // NVIDIA Selene (DGX A100 SuperPOD): 8 x 200 Gb/s HDR InfiniBand HCAs per node for compute traffic.
        f.nics_per_node = 8;
        f.nic_gbit_per_s = 200;
        f.description = "Selene: 8 x 200 Gb/s HDR InfiniBand per node";
        return f;
    }
    if (r.inter_node_interconnect) {
        // "8x ... 200 Gbps ...": NIC count and line rate as the row states them.
        static const std::regex pattern(R"((\d+)\s*x\D*?(\d+)\s*G(b|bps|bit))", std::regex::icase);
        std::smatch m;
        if (std::regex_search(*r.inter_node_interconnect, m, pattern)) {
            f.nics_per_node = std::stoi(m[1]);
            f.nic_gbit_per_s = std::stod(m[2]);
            f.description = "inter_node_interconnect: " + m[1].str() + " x " + m[2].str() + " Gb/s per node";
        }
    }
    return f;
}

std::optional<FlopConvention> detect_convention(const RunRow& r, bool hardware)
{
    const std::string text = lower(r.flops_definition.value_or("") + " " + r.tflops_kind.value_or(""));
    if (text.find("sc21_eq3") != std::string::npos || text.find("sc'21 eq") != std::string::npos || text.find("eq.(3)") != std::string::npos ||
        text.find("96*b*s*l*h^2") != std::string::npos) {
        return FlopConvention::Sc21Eq3;
    }
    if (text.find("korthikanti_hardware") != std::string::npos) {
        return FlopConvention::KorthikantiHardware;
    }
    if (text.find("korthikanti") != std::string::npos || text.find("72*b*l*s*h^2") != std::string::npos) {
        return hardware ? FlopConvention::KorthikantiHardware : FlopConvention::KorthikantiModel;
    }
    return std::nullopt;
}

int round_up(int v, int multiple) { return (v + multiple - 1) / multiple * multiple; }

double convention_flops(FlopConvention c, const ModelSpec& m, const TrainingSpec& t, Recompute recompute)
{
    switch (c) {
    case FlopConvention::Sc21Eq3: return sc21_eq3_flops(t.global_batch, m.seq_len, m.layers, m.hidden, m.vocab);
    case FlopConvention::KorthikantiModel: return korthikanti_model_flops(t.global_batch, m.layers, m.seq_len, m.hidden, m.vocab);
    case FlopConvention::KorthikantiHardware:
        return korthikanti_hardware_flops(t.global_batch, m.layers, m.seq_len, m.hidden, m.vocab, recompute);
    }
    return 0;
}

} // namespace

Expected<std::vector<RunRow>> runs_from_json(const nlohmann::json& json)
{
    if (!json.is_array()) {
        return Diagnostic{"", std::string("RUNS.json must be a list of row objects, not ") + json.type_name()};
    }
    Diagnostics diags;
    std::vector<RunRow> rows;
    rows.reserve(json.size());
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < json.size(); ++i) {
        rows.push_back(parse_row(json[i], i, diags));
        const std::string& id = rows.back().id;
        if (!id.empty() && !seen.emplace(id, i).second) {
            diags.push_back({"row \"" + json_fields::bounded(id) + "\".id", "is used by rows " + std::to_string(seen[id]) + " and " + std::to_string(i)});
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

const char* to_string(FlopConvention c)
{
    switch (c) {
    case FlopConvention::Sc21Eq3: return "sc21_eq3";
    case FlopConvention::KorthikantiModel: return "korthikanti_model";
    case FlopConvention::KorthikantiHardware: return "korthikanti_hardware";
    }
    return "unknown";
}

const char* to_string(ValidationMetric m)
{
    switch (m) {
    case ValidationMetric::IterationTime: return "iteration_time_s";
    case ValidationMetric::TflopsPerGpu: return "tflops_per_gpu";
    case ValidationMetric::MfuPct: return "mfu_pct";
    case ValidationMetric::HfuPct: return "hfu_pct";
    case ValidationMetric::LayerTime: return "layer_total_ms";
    case ValidationMetric::PeakMemory: return "peak_memory_gb_per_gpu";
    case ValidationMetric::OutOfMemory: return "observed_oom";
    }
    return "unknown";
}

double sc21_eq3_flops(double B, double s, double l, double h, double V)
{
    return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

double korthikanti_model_flops(double B, double L, double s, double h, double v)
{
    return 72.0 * B * L * s * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * h * L));
}

double korthikanti_hardware_flops(double B, double L, double s, double h, double v, Recompute recompute)
{
    switch (recompute) {
    case Recompute::None: return korthikanti_model_flops(B, L, s, h, v);
    case Recompute::Selective: return 72.0 * B * L * s * h * h * (1.0 + s / (3.0 * h) + v / (12.0 * h * L));
    case Recompute::Full: return sc21_eq3_flops(B, s, L, h, v);
    }
    return 0;
}

std::string profile_for_gpu_type(const std::string& gpu_type, std::optional<double> memory_gb, bool& defaulted)
{
    defaulted = false;
    const std::string t = lower(gpu_type);
    if (t.find("a100") != std::string::npos) {
        if (t.find("40gb") != std::string::npos || t.find("40 gb") != std::string::npos || (memory_gb && *memory_gb <= 48)) {
            return "a100-sxm4-40gb";
        }
        if (t.find("80gb") != std::string::npos || t.find("80 gb") != std::string::npos || (memory_gb && *memory_gb > 48)) {
            return "a100-sxm4-80gb";
        }
        defaulted = true;
        return "a100-sxm4-80gb";
    }
    if (t.find("h100") != std::string::npos) {
        return "h100-sxm5-80gb";
    }
    if (t.find("h200") != std::string::npos) {
        return "h200-sxm-141gb";
    }
    return {};
}

RowMapping map_run(const RunRow& r)
{
    RowMapping out;
    auto skip = [&out](std::string reason) {
        out.skipped_reason = std::move(reason);
        return out;
    };
    MappedRun run;
    auto note = [&run](std::string text) { run.notes.push_back(std::move(text)); };

    // Model.
    if (r.arch_family && *r.arch_family != "gpt_dense_mha") {
        return skip("arch_family \"" + *r.arch_family + "\" is not modeled (only gpt_dense_mha)");
    }
    if (!r.arch_family) {
        note("arch_family not given: GPT (LayerNorm, GELU, learned positions, tied embeddings)");
    }
    for (const auto& [value, name] : {std::pair{&r.num_layers, "num_layers"}, {&r.hidden_size, "hidden_size"},
                                      {&r.num_attention_heads, "num_attention_heads"}, {&r.seq_length, "seq_length"}}) {
        if (!*value) {
            return skip(std::string(name) + " not given");
        }
    }
    ModelSpec& m = run.scenario.model;
    m.name = r.model_name.value_or(r.id);
    m.layers = *r.num_layers;
    m.hidden = *r.hidden_size;
    m.heads = *r.num_attention_heads;
    m.kv_heads = r.num_query_groups.value_or(0);
    m.seq_len = *r.seq_length;
    m.activation = FfnActivation::Gelu;
    m.tied_embeddings = true;
    if (m.hidden % m.heads != 0) {
        return skip("hidden_size " + std::to_string(m.hidden) + " is not a multiple of num_attention_heads " + std::to_string(m.heads));
    }
    if (r.ffn_hidden_size) {
        m.ffn_hidden = *r.ffn_hidden_size;
    } else {
        note("ffn_hidden_size not given: 4 x hidden (GPT)");
    }

    // Parallelism.
    if (r.cp.value_or(1) > 1) {
        return skip("context parallelism (cp = " + std::to_string(*r.cp) + ") is not modeled");
    }
    if (r.ep.value_or(1) > 1) {
        return skip("expert parallelism (ep = " + std::to_string(*r.ep) + ") is not modeled");
    }
    if (r.fsdp.value_or(false)) {
        return skip("FSDP is not modeled");
    }
    if (!r.tp || !r.pp) {
        return skip(std::string(!r.tp ? "tp" : "pp") + " not given");
    }
    Plan& p = run.plan;
    p.tp = *r.tp;
    p.pp = *r.pp;
    if (r.dp) {
        p.dp = *r.dp;
    } else if (r.num_gpus && *r.num_gpus % (p.tp * p.pp) == 0) {
        p.dp = *r.num_gpus / (p.tp * p.pp);
        note("dp not given: num_gpus / (tp x pp) = " + std::to_string(p.dp));
    } else {
        return skip("dp not given and num_gpus is not a multiple of tp x pp");
    }
    run.scenario.cluster.num_gpus = r.num_gpus.value_or(p.num_gpus());
    if (!r.num_gpus) {
        note("num_gpus not given: tp x pp x dp");
    }

    // Vocabulary: Megatron pads it to a multiple of 128 x tp (make-vocab-size-divisible-by).
    int vocab = r.vocab_size.value_or(50257);
    if (!r.vocab_size) {
        note("vocab_size not given: 50257 (GPT-2 BPE, vTrain's default)");
    }
    const int padded = round_up(vocab, 128 * p.tp);
    if (padded != vocab) {
        note("vocabulary padded to " + std::to_string(padded) + " (Megatron: a multiple of 128 x tp)");
    }
    m.vocab = padded;

    // GPU and network.
    if (!r.gpu_type) {
        return skip("gpu_type not given");
    }
    bool defaulted = false;
    run.profile_id = profile_for_gpu_type(*r.gpu_type, r.gpu_memory_gb, defaulted);
    if (run.profile_id.empty()) {
        return skip("no GPU profile for gpu_type \"" + *r.gpu_type + "\"");
    }
    if (defaulted) {
        note("A100 memory variant not stated: profile a100-sxm4-80gb");
    }
    ClusterSpec& c = run.scenario.cluster;
    c.gpu = run.profile_id;
    c.gpus_per_node = r.gpus_per_node.value_or(0);
    if (!r.gpus_per_node) {
        note("gpus_per_node not given: the profile's node size");
    }
    const NetworkFacts net = network_facts(r);
    c.links.nics_per_node = net.nics_per_node;
    c.links.nic_gbit_per_s = net.nic_gbit_per_s;
    if (!net.description.empty()) {
        note("network: " + net.description);
    } else if (c.num_gpus > std::max(1, c.gpus_per_node)) {
        note("network not documented: the profile's NICs");
    }

    // Software.
    const SoftwareSettings sw = software_settings(r);
    note("software: " + std::string(sw.description));
    TrainingSpec& t = run.scenario.training;
    t.attention = sw.attention;
    t.grad_accumulation_bytes = sw.grad_accumulation_bytes;
    p.overlap_grad_reduce = sw.overlap_grad_reduce;
    if (contains(r.precision, "bf16") && !contains(r.precision, "not specified")) {
        t.precision = Precision::Bf16;
    } else if (contains(r.precision, "fp16") && !contains(r.precision, "not specified")) {
        t.precision = Precision::Fp16;
    } else if (contains(r.precision, "fp32") || contains(r.precision, "tf32")) {
        t.precision = Precision::Fp32;
    } else {
        t.precision = sw.precision;
        note(std::string("precision not stated: ") + to_string(sw.precision) + " (the software's default)");
    }

    // Batch.
    if (!r.global_batch_size) {
        return skip("global_batch_size not given");
    }
    t.global_batch = *r.global_batch_size;
    if (r.micro_batch_size) {
        p.micro_batch = *r.micro_batch_size;
    } else if (r.grad_accum_steps && t.global_batch % (p.dp * *r.grad_accum_steps) == 0) {
        p.micro_batch = t.global_batch / (p.dp * *r.grad_accum_steps);
        note("micro_batch_size not given: global batch / (dp x grad_accum_steps) = " + std::to_string(p.micro_batch));
    } else {
        p.micro_batch = 1;
        note("micro_batch_size not given: 1");
    }

    // Recompute and sequence parallelism.
    const std::string rc = lower(r.activation_recompute.value_or(""));
    if (rc.rfind("full", 0) == 0) {
        p.recompute = Recompute::Full;
    } else if (rc.rfind("selective", 0) == 0) {
        p.recompute = Recompute::Selective;
        if (rc.find("microbatch-level") != std::string::npos) {
            note("micro-batch-level recompute (Korthikanti App. C) is not modeled: simulated as selective recompute");
        }
    } else if (rc.rfind("none", 0) == 0 || rc.rfind("no", 0) == 0) {
        p.recompute = Recompute::None;
    } else if (rc.empty()) {
        p.recompute = Recompute::Full;
        note("activation_recompute not given: full (Megatron's practice for models that need pipelining)");
    } else {
        return skip("activation_recompute \"" + *r.activation_recompute + "\" is not recognised");
    }
    if (r.sequence_parallel) {
        p.sequence_parallel = *r.sequence_parallel;
    } else {
        p.sequence_parallel = rc.find("sequence parallel") != std::string::npos || rc.find("+ sp") != std::string::npos;
        note(std::string("sequence_parallel not given: ") + (p.sequence_parallel ? "on (named in activation_recompute)" : "off"));
    }
    if (p.sequence_parallel && p.tp < 2) {
        p.sequence_parallel = false;
        note("sequence parallelism needs tp >= 2: off");
    }
    p.zero_stage = r.zero_stage.value_or(0);
    if (r.distributed_optimizer.value_or(false) && p.zero_stage == 0) {
        p.zero_stage = 1;
    }
    if (!r.zero_stage && contains(r.software, "3d parallelism")) {
        // DeepSpeed's "3D parallelism" is ZeRO-powered data parallelism with pipelining, which its pipeline
        // engine supports up to stage 1 (MT-NLG, Smith et al. 2022, Sec. 2).
        p.zero_stage = 1;
        note("zero_stage not given: 1 (DeepSpeed 3D parallelism: ZeRO stage 1 data parallelism)");
    }
    if (p.zero_stage > 2) {
        return skip("ZeRO stage 3 is not modeled");
    }

    // Pipeline schedule.
    const int micro_batches = t.global_batch % (p.dp * p.micro_batch) == 0 ? t.global_batch / (p.dp * p.micro_batch) : 0;
    const bool says_interleaved = contains(r.pipeline_schedule, "interleav") || r.virtual_pipeline_stages.value_or(1) > 1;
    if (p.pp == 1) {
        p.schedule = Schedule::OneFOneB;
        p.virtual_stages = 1;
    } else if (contains(r.pipeline_schedule, "gpipe")) {
        p.schedule = Schedule::GPipe;
    } else if (says_interleaved) {
        p.schedule = Schedule::Interleaved;
        if (r.virtual_pipeline_stages) {
            p.virtual_stages = *r.virtual_pipeline_stages;
        } else {
            // The least interleaving that is legal: the smallest v > 1 dividing the layers per stage.
            const int per_stage = m.layers % p.pp == 0 ? m.layers / p.pp : 0;
            int v = 0;
            for (int candidate = 2; candidate <= per_stage; ++candidate) {
                if (per_stage % candidate == 0) {
                    v = candidate;
                    break;
                }
            }
            if (v > 0 && micro_batches > 0 && micro_batches % p.pp == 0) {
                p.virtual_stages = v;
                note("virtual_pipeline_stages not given: " + std::to_string(v) + " (the smallest that divides the layers per stage)");
            } else {
                p.schedule = Schedule::OneFOneB;
                note("interleaving not possible for this shape: 1F1B");
            }
        }
        if (p.virtual_stages < 2) {
            p.schedule = Schedule::OneFOneB;
            p.virtual_stages = 1;
        }
    } else {
        p.schedule = Schedule::OneFOneB;
        if (!r.pipeline_schedule) {
            note("pipeline_schedule not given: 1F1B");
        }
    }

    // Metric.
    run.peak_tflops = r.peak_tflops_reference.value_or(312);
    if (r.iteration_time_s) {
        run.metric = ValidationMetric::IterationTime;
        run.measured = *r.iteration_time_s;
    } else if (r.tflops_per_gpu) {
        const auto conv = detect_convention(r, true);
        if (!conv) {
            return skip("tflops_per_gpu is given but its FLOP convention is not recognised (flops_definition)");
        }
        run.metric = ValidationMetric::TflopsPerGpu;
        run.convention = *conv;
        run.measured = *r.tflops_per_gpu;
    } else if (r.mfu_pct || r.hfu_pct) {
        const bool hardware = !r.mfu_pct;
        const auto conv = detect_convention(r, hardware);
        if (!conv) {
            return skip(std::string(hardware ? "hfu_pct" : "mfu_pct") + " is given but its FLOP convention is not recognised (flops_definition)");
        }
        run.metric = hardware ? ValidationMetric::HfuPct : ValidationMetric::MfuPct;
        run.convention = *conv;
        run.measured = hardware ? *r.hfu_pct : *r.mfu_pct;
    } else if (r.layer_total_ms) {
        run.metric = ValidationMetric::LayerTime;
        run.measured = *r.layer_total_ms;
    } else {
        return skip("no measured quantity (iteration_time_s, tflops_per_gpu, mfu_pct, hfu_pct or layer_total_ms)");
    }

    if (run.metric != ValidationMetric::LayerTime) {
        if (auto rejection = check_plan(m, t, p, c.num_gpus)) {
            return skip("plan refused: " + rejection->diagnostic.to_string());
        }
    }
    out.run = std::move(run);
    return out;
}

std::optional<double> predict_run(const MappedRun& run, const GpuProfile& profile, std::string& reason)
{
    const Scenario& s = run.scenario;
    if (run.metric == ValidationMetric::LayerTime) {
        const ResolvedCluster cluster = resolve_cluster(s.cluster, profile);
        const LayerCosts costs = plan_layer_costs(s.model, s.training, cluster, run.plan);
        return (costs.layer.forward.total_s() + costs.layer.backward.total_s() + costs.layer.recompute.total_s()) * 1e3;
    }
    SimulationOptions options;
    options.timeline = false;
    const auto result = simulate(s, run.plan, profile, options);
    if (!result.ok()) {
        reason = "plan refused: " + result.first_error();
        return std::nullopt;
    }
    const double T = result->iteration_time_s;
    const double n = result->num_gpus;
    switch (run.metric) {
    case ValidationMetric::IterationTime: return T;
    case ValidationMetric::TflopsPerGpu: return convention_flops(run.convention, s.model, s.training, run.plan.recompute) / (T * n) / 1e12;
    case ValidationMetric::MfuPct:
    case ValidationMetric::HfuPct:
        return 100.0 * convention_flops(run.convention, s.model, s.training, run.plan.recompute) / (T * n) / (run.peak_tflops * 1e12);
    case ValidationMetric::PeakMemory: return result->peak_memory_gib * 1024.0 * 1024.0 * 1024.0 / 1e9;
    case ValidationMetric::OutOfMemory: return result->fits_memory ? 0.0 : 1.0;
    case ValidationMetric::LayerTime: break;
    }
    return std::nullopt;
}

SubsetStats error_statistics(const std::vector<double>& errors, int skipped)
{
    SubsetStats s;
    s.used = static_cast<int>(errors.size());
    s.skipped = skipped;
    if (errors.empty()) {
        return s;
    }
    std::vector<double> abs_errors;
    abs_errors.reserve(errors.size());
    double sum_abs = 0, sum = 0;
    for (const double e : errors) {
        abs_errors.push_back(std::abs(e));
        sum_abs += std::abs(e);
        sum += e;
    }
    std::sort(abs_errors.begin(), abs_errors.end());
    const std::size_t n = abs_errors.size();
    s.mape_pct = sum_abs / n;
    s.bias_pct = sum / n;
    s.max_pct = abs_errors.back();
    s.median_pct = n % 2 == 1 ? abs_errors[n / 2] : 0.5 * (abs_errors[n / 2 - 1] + abs_errors[n / 2]);
    return s;
}

ValidationReport validate_runs(const std::vector<RunRow>& rows, const std::map<std::string, GpuProfile>& profiles, const ValidationOptions& options)
{
    std::vector<const RunRow*> selected;
    for (const RunRow& r : rows) {
        if (options.subset.empty() || r.subset == options.subset) {
            selected.push_back(&r);
        }
    }
    // Each row gives one time-like result and up to two memory results.
    std::vector<std::array<std::optional<RowResult>, 3>> results(selected.size());
    auto evaluate = [&](std::size_t i) {
        const RunRow& r = *selected[i];
        RowResult base;
        base.id = r.id;
        base.subset = r.subset;
        base.metric = r.primary_metric;
        const RowMapping mapping = map_run(r);
        if (!mapping.run) {
            base.skipped_reason = mapping.skipped_reason;
            results[i][0] = base;
            return;
        }
        MappedRun run = *mapping.run;
        base.profile_id = run.profile_id;
        base.metric = to_string(run.metric);
        base.measured = run.measured;
        const auto profile = profiles.find(run.profile_id);
        if (profile == profiles.end()) {
            base.notes = run.notes;
            base.skipped_reason = "GPU profile \"" + run.profile_id + "\" not found";
            results[i][0] = base;
            return;
        }
        base.notes = run.notes;
        std::string reason;
        base.predicted = predict_run(run, profile->second, reason);
        if (base.predicted) {
            base.error_pct = (*base.predicted - run.measured) / run.measured * 100.0;
        } else {
            base.skipped_reason = reason;
        }
        results[i][0] = base;

        // Memory: the model's peak (one GPU of the largest stage) against what the source reports.
        auto memory_row = [&](ValidationMetric metric, double measured) {
            RowResult m = base;
            m.memory = true;
            m.metric = to_string(metric);
            m.measured = measured;
            m.predicted.reset();
            m.error_pct.reset();
            m.skipped_reason.clear();
            MappedRun memory_run = run;
            memory_run.metric = metric;
            std::string why;
            m.predicted = predict_run(memory_run, profile->second, why);
            if (!m.predicted) {
                m.skipped_reason = why;
            } else if (metric == ValidationMetric::OutOfMemory) {
                m.error_pct = (*m.predicted - measured) * 100.0; // 0 agree, +100 false OOM, -100 missed OOM
            } else {
                m.error_pct = (*m.predicted - measured) / measured * 100.0;
            }
            return m;
        };
        if (r.peak_memory_gb_per_gpu) {
            results[i][1] = memory_row(ValidationMetric::PeakMemory, *r.peak_memory_gb_per_gpu);
        }
        if (r.observed_oom) {
            results[i][2] = memory_row(ValidationMetric::OutOfMemory, *r.observed_oom ? 1.0 : 0.0);
        }
    };
    const int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
    tbb::task_arena arena(threads);
    arena.execute([&] {
        tbb::parallel_for(std::size_t{0}, selected.size(), [&](std::size_t i) { evaluate(i); });
    });

    ValidationReport report;
    std::map<std::string, std::vector<double>> errors;
    std::map<std::string, int> skipped;
    for (auto& triple : results) {
        for (auto& result : triple) {
            if (!result) {
                continue;
            }
            const std::string key = result->memory ? result->subset + ":memory" : result->subset;
            if (result->error_pct) {
                errors[key].push_back(*result->error_pct);
            } else {
                ++skipped[key];
            }
            errors.try_emplace(key);
            report.rows.push_back(std::move(*result));
        }
    }
    for (const auto& [key, list] : errors) {
        report.subsets[key] = error_statistics(list, skipped[key]);
    }
    return report;
}

nlohmann::json validation_to_json(const ValidationReport& report)
{
    nlohmann::json rows = nlohmann::json::array();
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    for (const RowResult& r : report.rows) {
        rows.push_back({{"id", r.id},
                        {"subset", r.subset},
                        {"metric", r.metric},
                        {"measured", opt(r.measured)},
                        {"predicted", opt(r.predicted)},
                        {"error_pct", opt(r.error_pct)},
                        {"skipped_reason", r.skipped_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.skipped_reason)}});
    }
    nlohmann::json subsets = nlohmann::json::object();
    for (const auto& [name, s] : report.subsets) {
        subsets[name] = {{"used", s.used},       {"skipped", s.skipped},       {"mape_pct", s.mape_pct},
                         {"median_pct", s.median_pct}, {"max_pct", s.max_pct}, {"bias_pct", s.bias_pct}};
    }
    return {{"rows", rows}, {"subsets", subsets}};
}

} // namespace vtrain

namespace vtrain {

const std::map<std::string, double>& public_set_targets()
{
    static const std::map<std::string, double> targets{
        {"vtrain_multi_node", 7.0}, {"vtrain_single_node", 5.0}, {"korthikanti_recompute", 3.0}, {"sc21_weak_scaling", 5.0}, {"mtnlg", 5.0}};
    return targets;
}

} // namespace vtrain
