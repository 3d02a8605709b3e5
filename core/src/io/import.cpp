// SPDX-License-Identifier: MIT
// vtrain::import_scenario_*: detects the format, runs its reader (import_*.cpp) and completes the draft into
// a scenario: what the file does not give is chosen and said (cluster, batch, tokens, precision, a starting
// plan), the scenario reader and the plan check then judge it, and each refusal names the file's own key.
#include "vtrain/import.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "io/import_readers.h"
#include "iteration/plan_costs.h"
#include "model/model_math.h"
#include "vtrain/json_fields.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/plan_check.h"
#include "vtrain/scenario_json.h"

namespace vtrain {

const char* to_string(ImportFormat format)
{
    switch (format) {
    case ImportFormat::Auto: return "auto";
    case ImportFormat::HfConfig: return "hf";
    case ImportFormat::MegatronArgs: return "megatron";
    case ImportFormat::TorchtitanToml: return "torchtitan";
    case ImportFormat::BridgeOverrides: return "bridge";
    }
    return "auto";
}

const char* describe(ImportFormat format)
{
    switch (format) {
    case ImportFormat::Auto: return "a format detected from the content";
    case ImportFormat::HfConfig: return "a Hugging Face config.json";
    case ImportFormat::MegatronArgs: return "Megatron-LM arguments";
    case ImportFormat::TorchtitanToml: return "a torchtitan job config (TOML)";
    case ImportFormat::BridgeOverrides: return "Megatron-Bridge recipe overrides";
    }
    return "?";
}

std::optional<ImportFormat> import_format_from_string(const std::string& name)
{
    for (const ImportFormat f :
         {ImportFormat::Auto, ImportFormat::HfConfig, ImportFormat::MegatronArgs, ImportFormat::TorchtitanToml, ImportFormat::BridgeOverrides}) {
        if (name == to_string(f)) {
            return f;
        }
    }
    if (name == "megatron-bridge") {
        return ImportFormat::BridgeOverrides;
    }
    if (name == "huggingface" || name == "hf-config") {
        return ImportFormat::HfConfig;
    }
    return std::nullopt;
}

namespace {

using import_detail::Draft;
using nlohmann::json;

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string extension_of(const std::string& file_name)
{
    const std::size_t dot = file_name.find_last_of('.');
    const std::size_t slash = file_name.find_last_of("/\\");
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
        return {};
    }
    return lower(file_name.substr(dot + 1));
}

std::string stem_of(const std::string& file_name)
{
    const std::size_t slash = file_name.find_last_of("/\\");
    std::string base = slash == std::string::npos ? file_name : file_name.substr(slash + 1);
    const std::size_t dot = base.find_last_of('.');
    return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

bool bridge_token(const std::string& t)
{
    static const char* groups[] = {"model.",     "train.",        "ddp.",        "optimizer.", "mixed_precision",
                                   "dataset.",   "comm_overlap.", "checkpoint.", "logger.",    "scheduler.",
                                   "tokenizer.", "rng.",          "dist.",       "profiling.", "validation."};
    std::size_t start = 0;
    while (start < t.size() && t[start] == '+') {
        ++start;
    }
    const std::size_t eq = t.find('=');
    if (eq == std::string::npos || eq <= start) {
        return false;
    }
    for (const char* g : groups) {
        const std::size_t n = std::char_traits<char>::length(g);
        if (t.compare(start, n, g) == 0 && (g[n - 1] == '.' || start + n == eq)) {
            return true;
        }
    }
    return false;
}

bool megatron_token(const std::string& t)
{
    static const char* flags[] = {"--num-layers",
                                  "--hidden-size",
                                  "--num-attention-heads",
                                  "--tensor-model-parallel-size",
                                  "--pipeline-model-parallel-size",
                                  "--micro-batch-size",
                                  "--global-batch-size",
                                  "--seq-length",
                                  "--ffn-hidden-size",
                                  "--num-query-groups",
                                  "--num-experts",
                                  "--use-distributed-optimizer"};
    for (const char* f : flags) {
        const std::size_t n = std::char_traits<char>::length(f);
        if (t.compare(0, n, f) == 0 && (t.size() == n || t[n] == '=')) {
            return true;
        }
    }
    return false;
}

// A TOML table header on its own line: [name] or [a.b] (not a shell test `[ -f x ]` or an array).
bool toml_header(const std::string& line)
{
    std::size_t a = line.find_first_not_of(" \t");
    if (a == std::string::npos || line[a] != '[') {
        return false;
    }
    std::size_t b = line.find_last_not_of(" \t\r");
    if (line[b] != ']' || b <= a + 1) {
        return false;
    }
    for (std::size_t i = a + 1; i < b; ++i) {
        const char c = line[i];
        if (!(std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-' || c == '[' || c == ']')) {
            return false;
        }
    }
    return true;
}

} // namespace

ImportFormat detect_import_format(const std::string& text, const std::string& file_name)
{
    std::size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start])) != 0) {
        ++start;
    }
    if (start < text.size() && text[start] == '{') {
        return ImportFormat::HfConfig;
    }
    bool bridge = false, megatron = false, toml_table = false, toml_pair = false;
    std::size_t line_start = start;
    std::size_t lines = 0;
    while (line_start < text.size() && lines < 200000) {
        std::size_t line_end = text.find('\n', line_start);
        if (line_end == std::string::npos) {
            line_end = text.size();
        }
        const std::string line = text.substr(line_start, std::min<std::size_t>(line_end - line_start, 4096));
        ++lines;
        const std::size_t first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line[first] != '#') {
            toml_table = toml_table || toml_header(line);
            const std::size_t eq = line.find(" = ");
            toml_pair = toml_pair || (eq != std::string::npos && line.find("--") == std::string::npos);
            std::istringstream words(line);
            std::string w;
            int count = 0;
            while (words >> w && count++ < 256) {
                if (!w.empty() && (w.front() == '"' || w.front() == '\'')) {
                    w = w.substr(1);
                }
                bridge = bridge || bridge_token(w);
                megatron = megatron || megatron_token(w);
            }
        }
        line_start = line_end + 1;
    }
    if (bridge) {
        return ImportFormat::BridgeOverrides;
    }
    if (megatron) {
        return ImportFormat::MegatronArgs;
    }
    if (toml_table && toml_pair) {
        return ImportFormat::TorchtitanToml;
    }
    const std::string ext = extension_of(file_name);
    if (ext == "json") {
        return ImportFormat::HfConfig;
    }
    if (ext == "toml") {
        return ImportFormat::TorchtitanToml;
    }
    if (ext == "sh" || ext == "args" || ext == "slurm" || ext == "sbatch") {
        return ImportFormat::MegatronArgs;
    }
    return ImportFormat::Auto;
}

namespace {

// The file's key for a scenario field: the field's own source, else its nearest parent's.
std::string key_for(const Draft& d, std::string field)
{
    for (;;) {
        const auto it = d.source.find(field);
        if (it != d.source.end()) {
            return it->second;
        }
        const std::size_t dot = field.rfind('.');
        if (dot == std::string::npos) {
            return field;
        }
        field = field.substr(0, dot);
    }
}

Diagnostics in_file_terms(const Draft& d, const Diagnostics& errors)
{
    Diagnostics out;
    for (const Diagnostic& e : errors) {
        const std::string key = key_for(d, e.field);
        out.push_back({key, key == e.field || e.field.empty() ? e.message : e.message + " (" + e.field + ")"});
    }
    return out;
}

std::string sanitized_name(const std::string& raw)
{
    std::string out;
    for (const char c : raw) {
        const unsigned char u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u != 0x7f) {
            out.push_back(c);
        }
        if (out.size() >= 120) {
            break;
        }
    }
    // Trailing partial UTF-8 sequences from the cut are dropped.
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) {
        out.pop_back();
    }
    if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0xC0) {
        out.pop_back();
    }
    const json probe = out;
    try {
        (void)probe.dump();
    } catch (const std::exception&) {
        out = "imported model";
    }
    return out.empty() ? std::string("imported model") : out;
}

std::string round_figure(double v)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3g", v);
    return buffer;
}

struct PlanGuess {
    Plan plan;
    double estimate_gib = 0;
};

// Peak memory of the plan's fullest stage, by the core's memory model (no GPU profile needed).
double peak_memory_gib(const Scenario& s, const Plan& p)
{
    double peak = 0;
    for (const StageMemory& stage : plan_memory(s.model, s.training, p)) {
        peak = std::max(peak, stage.total_bytes());
    }
    return peak / (1024.0 * 1024.0 * 1024.0);
}

// A plan that divides the model and fits the GPU's memory: the least model parallelism (tensor within a
// node first, then pipeline stages), expert parallelism as far as the memory needs.
std::optional<PlanGuess> starting_plan(const Scenario& s, int node, double memory_gib, bool& fits)
{
    const ModelSpec& m = s.model;
    const int gpus = s.cluster.num_gpus;
    std::vector<PlanGuess> candidates;
    for (int tp = 1; tp <= std::min(node, 8); tp *= 2) {
        for (int pp = 1; pp <= std::min(m.layers, 128); ++pp) {
            if (m.layers % pp != 0 || gpus % (tp * pp) != 0) {
                continue;
            }
            std::vector<int> eps{1};
            if (m.moe.enabled()) {
                eps.clear();
                for (int ep = 1; ep <= std::min(m.moe.experts, gpus); ep *= 2) {
                    if (m.moe.experts % ep == 0) {
                        eps.push_back(ep);
                    }
                }
            }
            for (const int ep : eps) {
                PlanGuess g;
                Plan& p = g.plan;
                p.tp = tp;
                p.pp = pp;
                p.dp = gpus / (tp * pp);
                p.ep = ep;
                p.etp = m.moe.enabled() ? 1 : 0;
                p.micro_batch = 1;
                p.recompute = Recompute::Selective;
                p.sequence_parallel = tp > 1;
                p.zero_stage = p.dp > 1 ? 1 : 0;
                if (check_plan(m, s.training, p, gpus)) {
                    continue;
                }
                g.estimate_gib = peak_memory_gib(s, p);
                candidates.push_back(g);
            }
        }
    }
    if (candidates.empty()) {
        return std::nullopt;
    }
    // Least model parallelism first; among equals, tensor before pipeline, then the least expert parallelism.
    std::stable_sort(candidates.begin(), candidates.end(), [](const PlanGuess& a, const PlanGuess& b) {
        const int ma = a.plan.tp * a.plan.pp, mb = b.plan.tp * b.plan.pp;
        if (ma != mb) {
            return ma < mb;
        }
        if (a.plan.pp != b.plan.pp) {
            return a.plan.pp < b.plan.pp;
        }
        return a.plan.ep < b.plan.ep;
    });
    for (const PlanGuess& g : candidates) {
        if (g.estimate_gib <= memory_gib) {
            fits = true;
            return g;
        }
    }
    fits = false;
    return *std::min_element(candidates.begin(), candidates.end(),
                             [](const PlanGuess& a, const PlanGuess& b) { return a.estimate_gib < b.estimate_gib; });
}

std::string plan_text(const Plan& p)
{
    std::string t = "tp " + std::to_string(p.tp) + ", pp " + std::to_string(p.pp) + ", dp " + std::to_string(p.dp);
    if (p.ep > 1) {
        t += ", ep " + std::to_string(p.ep) + " (etp " + std::to_string(p.effective_etp()) + ")";
    }
    t += ", micro-batch " + std::to_string(p.micro_batch) + ", 1F1B, selective recomputation";
    t += p.sequence_parallel ? ", sequence parallelism" : "";
    t += p.zero_stage == 1 ? ", distributed optimizer (ZeRO-1)" : "";
    return t;
}

long long json_int(const json* v, long long fallback)
{
    if (v == nullptr) {
        return fallback;
    }
    return import_detail::whole(*v, -(1LL << 40), 1LL << 40).value_or(fallback);
}

Expected<ImportResult> finish(Draft& d, ImportFormat format, const ImportOptions& options)
{
    const std::string file = options.file_name.empty() ? std::string("the file") : stem_of(options.file_name);
    // Model name: the file's own, else the file name.
    std::string name = sanitized_name(!d.name.empty() ? d.name : !options.file_name.empty() ? stem_of(options.file_name) : "imported model");
    if (!d.model.contains("name") || options.model) {
        d.model["name"] = name;
    }
    if (!d.has("model.seq_len")) {
        d.set("model.seq_len", 4096, "model.seq_len");
        d.default_chosen("model.seq_len: 4096 tokens (the file gives no sequence length)");
    }

    // The model alone first: its errors are the file's, before any default is derived from it.
    json probe = {{"model", d.model}, {"cluster", {{"gpu", "probe"}, {"num_gpus", 1}}}, {"training", {{"global_batch", 1}}}};
    const auto model_only = scenario_from_json(probe);
    if (!model_only.ok()) {
        return in_file_terms(d, model_only.errors());
    }
    const ModelSpec& m = model_only->model;
    const bool plan_given = !d.plan.empty();

    // Cluster.
    const std::string gpu = options.gpu.empty() ? std::string("h100-sxm5-80gb") : options.gpu;
    d.cluster["gpu"] = gpu;
    if (options.gpu.empty()) {
        d.default_chosen("cluster.gpu: h100-sxm5-80gb (no --gpu given; the file names no GPU)");
    }
    long long gpus = 0;
    const long long tp = json_int(d.get("plan.tp"), 1), pp = json_int(d.get("plan.pp"), 1), cp = json_int(d.get("plan.cp"), 1);
    const auto degree_ok = [](long long v) { return v >= 1 && v <= (1 << 16); };
    const bool degrees_ok = degree_ok(tp) && degree_ok(pp) && degree_ok(cp);
    // Degrees out of range are the scenario reader's to name (below): counts derive from valid ones only.
    const long long model_parallel = degrees_ok ? tp * pp * cp : 1;
    if (options.num_gpus > 0) {
        gpus = options.num_gpus;
        if (d.world_size && *d.world_size != gpus) {
            d.note(d.world_size_key, "gives " + std::to_string(*d.world_size) + " GPUs; --gpus " + std::to_string(gpus) + " replaces it");
        }
        d.source["cluster.num_gpus"] = "--gpus";
    } else if (d.world_size) {
        gpus = *d.world_size;
        d.source["cluster.num_gpus"] = d.world_size_key;
    } else if (plan_given && d.has("plan.dp")) {
        gpus = model_parallel * json_int(d.get("plan.dp"), 1);
        d.source["cluster.num_gpus"] = key_for(d, "plan.dp");
    } else if (plan_given) {
        // The smallest world the plan runs on: expert layers need ep x etp to divide tp x cp x dp, and the
        // global batch must split into dp x micro-batch.
        const long long ep = json_int(d.get("plan.ep"), 1), etp = json_int(d.get("plan.etp"), tp);
        const long long micro = json_int(d.get("plan.micro_batch"), 1);
        const long long batch = json_int(d.get("training.global_batch"), 0);
        long long dp = 1;
        while (dp < (1LL << 20) && ((tp * cp * dp) % std::max(1LL, ep * etp) != 0 || (batch > 0 && batch % std::max(1LL, dp * micro) != 0))) {
            ++dp;
        }
        gpus = std::max(1LL, model_parallel) * (dp < (1LL << 20) ? dp : 1);
        d.default_chosen("cluster.num_gpus: " + std::to_string(gpus) + " (the file states no world size: the fewest GPUs its plan runs on, dp " +
                         std::to_string(gpus / std::max(1LL, model_parallel)) + "; give --gpus N)");
        d.source["cluster.num_gpus"] = "--gpus";
    } else {
        gpus = 8;
        d.default_chosen("cluster.num_gpus: 8 (no --gpus given)");
        d.source["cluster.num_gpus"] = "--gpus";
    }
    d.cluster["num_gpus"] = gpus;
    if (d.gpus_per_node && !options.gpus_per_node) {
        d.cluster["gpus_per_node"] = *d.gpus_per_node;
        d.source["cluster.gpus_per_node"] = "--nproc_per_node";
    } else if (options.gpus_per_node > 0) {
        d.cluster["gpus_per_node"] = options.gpus_per_node;
    }

    // Precision.
    if (!d.has("training.precision")) {
        d.set("training.precision", "bf16", "training.precision");
        d.default_chosen("training.precision: bf16 (the file states none)");
    }
    if (!d.has("training.attention")) {
        d.set("training.attention", "flash", "training.attention");
    }

    // Plan.
    json search; // the explorer's axes beyond its defaults (expert parallelism of a model-only import)
    if (plan_given) {
        if (degrees_ok && gpus % model_parallel != 0) {
            return Diagnostics{{key_for(d, "cluster.num_gpus"), std::to_string(gpus) + " GPUs do not divide into tp x pp x cp = " +
                                                                    std::to_string(tp) + " x " + std::to_string(pp) + " x " + std::to_string(cp)}};
        }
        const long long dp = degrees_ok ? gpus / model_parallel : 1;
        if (d.has("plan.dp") && json_int(d.get("plan.dp"), dp) != dp) {
            d.note(key_for(d, "plan.dp"), "data parallelism " + std::to_string(json_int(d.get("plan.dp"), dp)) + " becomes " + std::to_string(dp) +
                                              " on " + std::to_string(gpus) + " GPUs");
        }
        d.plan["dp"] = dp;
        for (const char* k : {"tp", "pp"}) {
            if (!d.plan.contains(k)) {
                d.plan[k] = 1;
            }
        }
        if (!d.plan.contains("micro_batch")) {
            d.plan["micro_batch"] = 1;
            d.default_chosen("plan.micro_batch: 1 (the file states none)");
        }
        const long long micro = json_int(d.get("plan.micro_batch"), 1);
        if (!d.has("training.global_batch")) {
            if (d.local_batch) {
                d.set("training.global_batch", *d.local_batch * dp, "training.local_batch_size");
                d.default_chosen("training.global_batch: " + std::to_string(*d.local_batch * dp) + " (local batch x dp, no gradient accumulation)");
            } else {
                d.set("training.global_batch", micro * dp, "--global-batch-size");
                d.default_chosen("training.global_batch: " + std::to_string(micro * dp) + " (micro-batch x dp: the file states no global batch)");
            }
        }
        // Derived settings.
        const std::string precision = d.get("training.precision")->get<std::string>();
        if (d.bucket_elements) {
            const double bytes = precision == "fp16" ? 2.0 : 4.0;
            d.plan["grad_bucket_mb"] = *d.bucket_elements * bytes / (1024.0 * 1024.0);
            d.source["plan.grad_bucket_mb"] = d.bucket_key;
        }
        if (d.optimizer_instances) {
            const long long group = dp * cp;
            if (group % *d.optimizer_instances != 0) {
                return Diagnostics{{d.optimizer_instances_key, std::to_string(*d.optimizer_instances) + " instances do not divide the " +
                                                                   std::to_string(group) + " data-parallel ranks"}};
            }
            if (group / *d.optimizer_instances < group) {
                d.plan["shard_group"] = group / *d.optimizer_instances;
                d.source["plan.shard_group"] = d.optimizer_instances_key;
            }
        }
        if (d.layers_per_virtual_stage) {
            const long long per = *d.layers_per_virtual_stage;
            if (pp < 2 || m.layers % (pp * per) != 0) {
                return Diagnostics{{d.layers_per_virtual_stage_key, std::to_string(per) + " layers per virtual stage do not split the " +
                                                                        std::to_string(m.layers) + " layers over " + std::to_string(pp) +
                                                                        " pipeline stages"}};
            }
            const long long v = m.layers / (pp * per);
            if (v > 1) {
                d.set("plan.schedule", "interleaved", d.layers_per_virtual_stage_key);
                d.set("plan.virtual_stages", v, d.layers_per_virtual_stage_key);
            }
        }
        if (d.has("plan.pipeline_layout") && d.get("plan.pipeline_layout")->is_string()) {
            std::vector<VirtualStage> stages;
            if (!parse_pipeline_layout(d.get("plan.pipeline_layout")->get<std::string>(), stages) && pp > 0 &&
                stages.size() % static_cast<std::size_t>(pp) == 0 && stages.size() / static_cast<std::size_t>(pp) > 1) {
                d.set("plan.schedule", "interleaved", key_for(d, "plan.pipeline_layout"));
                d.set("plan.virtual_stages", static_cast<long long>(stages.size() / static_cast<std::size_t>(pp)),
                      key_for(d, "plan.pipeline_layout"));
            }
        }
        const bool interleaved = d.has("plan.schedule") && *d.get("plan.schedule") == "interleaved";
        if (interleaved && pp > 1 && d.overlap_p2p_default) {
            d.training["overlap_p2p"] = true;
        }
        if (d.offload_layers) {
            const long long chunks = interleaved ? json_int(d.get("plan.virtual_stages"), 2) : 1;
            const double per_chunk = static_cast<double>(m.layers) / static_cast<double>(std::max(1LL, pp * chunks));
            d.plan["offload_activations"] = std::min(1.0, static_cast<double>(*d.offload_layers) / std::max(1.0, per_chunk));
            d.source["plan.offload_activations"] = d.offload_key;
        }
    } else {
        const double memory = options.gpu_memory_gib > 0 ? options.gpu_memory_gib : 75.0;
        const int node = options.gpus_per_node > 0 ? options.gpus_per_node : d.gpus_per_node ? static_cast<int>(*d.gpus_per_node) : 8;
        // The global batch: about 4M tokens per iteration, a multiple of the data-parallel width.
        const long long target = std::max(1LL, std::llround(4.0 * 1024 * 1024 / m.seq_len));
        Scenario s;
        s.model = m;
        s.cluster.num_gpus = static_cast<int>(gpus);
        s.training.precision = precision_from_string(d.training["precision"].get<std::string>()).value_or(Precision::Bf16);
        // Plans are judged with a batch every data-parallel width divides; the batch then follows the plan.
        s.training.global_batch = static_cast<int>(std::min<long long>(gpus * target, 1'000'000'000LL));
        bool fits = false;
        const auto guess = starting_plan(s, node, memory, fits);
        if (!guess) {
            return Diagnostics{{"--gpus", "no plan of tp 1-8, pp dividing the " + std::to_string(m.layers) + " layers fits " + std::to_string(gpus) +
                                              " GPUs for this model (heads, key/value heads and FFN must divide by tp): give another --gpus"}};
        }
        const Plan& p = guess->plan;
        const long long batch = (target + p.dp - 1) / p.dp * p.dp;
        d.set("training.global_batch", batch, "training.global_batch");
        d.default_chosen("training.global_batch: " + std::to_string(batch) + " sequences (about 4M tokens of " + std::to_string(m.seq_len) +
                         " per iteration, a multiple of dp)");
        d.plan = plan_to_json(p);
        d.default_chosen("plan: " + plan_text(p) + (fits ? " (the least model parallelism whose peak, " : " (NO plan fits: its peak, ") +
                         round_figure(guess->estimate_gib) + " GiB," + (fits ? " fits " : " exceeds ") + round_figure(memory) +
                         " GiB per GPU; a starting point: vtrain explore finds the best)");
        if (m.moe.enabled()) {
            json ep = json::array();
            for (int e = 1; e <= std::min(m.moe.experts, 64); e *= 2) {
                if (m.moe.experts % e == 0 && e <= gpus) {
                    ep.push_back(e);
                }
            }
            if (p.ep > 64) {
                ep.push_back(p.ep);
            }
            d.default_chosen("search.ep: " + ep.dump() + " (expert parallelism to explore beside the defaults)");
            search = {{"ep", ep}, {"etp", {1}}};
        }
    }

    // Training length.
    if (!d.has("training.tokens")) {
        const double seq = m.seq_len;
        const double batch = static_cast<double>(json_int(d.get("training.global_batch"), 1));
        if (d.train_samples) {
            d.set("training.tokens", *d.train_samples * seq, d.train_length_key);
        } else if (d.train_iters) {
            d.set("training.tokens", *d.train_iters * batch * seq, d.train_length_key);
        } else {
            const double tokens = std::stod(round_figure(20 * total_params(m)));
            d.set("training.tokens", tokens, "training.tokens");
            d.default_chosen("training.tokens: " + round_figure(tokens) +
                             " (20 tokens per parameter, Hoffmann et al. 2022; the file states no length)");
        }
    }

    // The scenario, judged as a file would be.
    json scenario = {{"name", name}, {"description", "Imported by vtrain import from " + file + " (" + describe(format) + ")."}};
    scenario["model"] = d.model;
    scenario["cluster"] = d.cluster;
    scenario["training"] = d.training;
    scenario["plan"] = d.plan;
    if (!search.is_null()) {
        scenario["search"] = search;
    }
    auto parsed = scenario_from_json(scenario);
    if (!parsed.ok()) {
        return in_file_terms(d, parsed.errors());
    }
    Scenario out = std::move(parsed).value();
    if (const auto rejection = check_plan(out.model, out.training, *out.plan, out.cluster.num_gpus)) {
        return in_file_terms(d, {rejection->diagnostic});
    }

    ImportResult result;
    result.scenario = std::move(out);
    result.format = format;
    result.plan_from_file = plan_given;
    result.notes = d.notes;
    for (const std::string& k : d.unknown) {
        result.notes.push_back({k, "is not a key vTrain knows: not read (assumed it changes nothing vTrain simulates)"});
    }
    if (d.unknown_count > d.unknown.size()) {
        result.notes.push_back({"", "and " + std::to_string(d.unknown_count - d.unknown.size()) + " more unknown keys, not read"});
    }
    result.defaults = d.defaults;
    result.ignored = d.ignored;
    return result;
}

} // namespace

Expected<ImportResult> import_scenario_text(const std::string& text, const ImportOptions& options)
{
    if (text.size() > kMaxImportBytes) {
        return Diagnostic{"", "is " + std::to_string(text.size() >> 20) + " MiB; import reads files of at most " +
                                  std::to_string(kMaxImportBytes >> 20) + " MiB"};
    }
    ImportFormat format = options.format;
    if (format == ImportFormat::Auto) {
        format = detect_import_format(text, options.file_name);
    }
    if (format == ImportFormat::Auto) {
        const std::string ext = extension_of(options.file_name);
        if (ext == "yaml" || ext == "yml") {
            return Diagnostic{"", "YAML configs are not read: give Megatron-Bridge settings as key=value overrides, Megatron-LM ones as --flags"};
        }
        return Diagnostic{"", "is none of the formats vTrain imports (a Hugging Face config.json, Megatron-LM arguments, a torchtitan TOML, "
                              "Megatron-Bridge key=value overrides): no JSON object, --num-layers, [table] or model.key=value found"};
    }
    Draft d;
    if (options.model) {
        Scenario base;
        base.model = *options.model;
        d.model = scenario_to_json(base)["model"];
        d.model.erase("name");
        d.name = options.model->name;
        for (auto it = d.model.begin(); it != d.model.end(); ++it) {
            d.source["model." + it.key()] = "--model";
        }
    }
    switch (format) {
    case ImportFormat::HfConfig: import_detail::read_hf_config(text, d); break;
    case ImportFormat::MegatronArgs: import_detail::read_megatron_args(text, d); break;
    case ImportFormat::TorchtitanToml: import_detail::read_torchtitan_toml(text, d); break;
    case ImportFormat::BridgeOverrides: import_detail::read_bridge_overrides(text, d); break;
    case ImportFormat::Auto: break;
    }
    if (!d.errors.empty()) {
        return d.errors;
    }
    try {
        return finish(d, format, options);
    } catch (const std::exception& e) {
        // JSON type errors from a value of an unexpected type: refused, never thrown at the caller.
        return Diagnostic{"", std::string("cannot be imported: ") + json_fields::bounded(e.what(), 200)};
    }
}

Expected<ImportResult> import_scenario_file(const std::filesystem::path& path, ImportOptions options)
{
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) {
        return Diagnostic{path.string(), "cannot be opened (" + ec.message() + ")"};
    }
    if (size > kMaxImportBytes) {
        return Diagnostic{path.string(), "is " + std::to_string(size >> 20) + " MiB; import reads files of at most " +
                                             std::to_string(kMaxImportBytes >> 20) + " MiB"};
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Diagnostic{path.string(), "cannot be opened"};
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    if (options.file_name.empty()) {
        options.file_name = path.filename().string();
    }
    return import_scenario_text(buffer.str(), options);
}

} // namespace vtrain
