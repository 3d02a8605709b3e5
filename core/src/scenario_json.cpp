// SPDX-License-Identifier: MIT
#include "vtrain/scenario_json.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "vtrain/json_fields.h"

namespace vtrain {
namespace {

using json_fields::Reader;

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

ModelSpec read_model(Reader r)
{
    r.reject_unknown({"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq_len", "vocab", "activation",
                      "tied_embeddings", "description"});
    ModelSpec m;
    m.name = r.optional_string("name").value_or("model");
    m.layers = r.required_int("layers", 1, 100000);
    m.hidden = r.required_int("hidden", 1, 1 << 20);
    m.heads = r.required_int("heads", 1, 1 << 16);
    m.kv_heads = r.optional_int("kv_heads", 1, 1 << 16).value_or(0);
    m.ffn_hidden = r.optional_int("ffn_hidden", 1, 1 << 24).value_or(0);
    m.seq_len = r.required_int("seq_len", 1, 1 << 24);
    m.vocab = r.required_int("vocab", 1, 1 << 26);
    m.tied_embeddings = r.optional_bool("tied_embeddings").value_or(true);
    if (const auto act = r.optional_string("activation")) {
        const std::string a = lower(*act);
        if (a == "gelu") {
            m.activation = FfnActivation::Gelu;
        } else if (a == "swiglu") {
            m.activation = FfnActivation::SwiGlu;
        } else {
            r.error("activation", "must be \"gelu\" or \"swiglu\", not \"" + *act + "\"");
        }
    }
    if (m.heads > 0 && m.hidden > 0 && m.hidden % m.heads != 0) {
        r.error("heads", "must divide hidden (" + std::to_string(m.hidden) + " is not a multiple of " + std::to_string(m.heads) + ")");
    }
    if (m.kv_heads > 0 && m.heads > 0 && m.heads % m.kv_heads != 0) {
        r.error("kv_heads", "must divide heads (" + std::to_string(m.heads) + " is not a multiple of " + std::to_string(m.kv_heads) + ")");
    }
    return m;
}

ClusterSpec read_cluster(Reader r)
{
    r.reject_unknown({"gpu", "num_gpus", "gpus_per_node", "price_per_gpu_hour", "nvlink_bus_gbytes_per_s", "nic_gbit_per_s",
                      "nics_per_node", "inter_node_latency_us", "description"});
    ClusterSpec c;
    c.gpu = r.required_string("gpu");
    c.num_gpus = r.required_int("num_gpus", 1, 10'000'000);
    c.gpus_per_node = r.optional_int("gpus_per_node", 1, 1024).value_or(0);
    c.price_per_gpu_hour = r.optional_number("price_per_gpu_hour", 0, 1000);
    c.links.nvlink_bus_gbytes_per_s = r.optional_number("nvlink_bus_gbytes_per_s", 1, 1e5);
    c.links.nic_gbit_per_s = r.optional_number("nic_gbit_per_s", 1, 1e5);
    c.links.nics_per_node = r.optional_int("nics_per_node", 1, 64);
    c.links.inter_node_latency_us = r.optional_number("inter_node_latency_us", 0, 1e4);
    return c;
}

TrainingSpec read_training(Reader r)
{
    r.reject_unknown({"global_batch", "tokens", "precision", "attention", "grad_accumulation_bytes", "description"});
    TrainingSpec t;
    t.global_batch = r.required_int("global_batch", 1, 1'000'000'000);
    t.tokens = r.optional_number("tokens", 0, 1e17).value_or(0);
    if (const auto p = r.optional_string("precision")) {
        const std::string s = lower(*p);
        if (s == "bf16") {
            t.precision = Precision::Bf16;
        } else if (s == "fp16") {
            t.precision = Precision::Fp16;
        } else if (s == "fp32") {
            t.precision = Precision::Fp32;
        } else {
            r.error("precision", "must be \"bf16\", \"fp16\" or \"fp32\", not \"" + *p + "\"");
        }
    }
    if (const auto a = r.optional_string("attention")) {
        const std::string s = lower(*a);
        if (s == "flash") {
            t.attention = AttentionKernel::Flash;
        } else if (s == "unfused") {
            t.attention = AttentionKernel::Unfused;
        } else {
            r.error("attention", "must be \"flash\" or \"unfused\", not \"" + *a + "\"");
        }
    }
    t.grad_accumulation_bytes = r.optional_number("grad_accumulation_bytes", 0, 64).value_or(0);
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
    r.error(key, "must be \"gpipe\", \"1f1b\" or \"interleaved\", not \"" + *s + "\"");
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
    r.error(key, "must be \"none\", \"selective\" or \"full\", not \"" + *s + "\"");
    return fallback;
}

Plan read_plan(Reader r)
{
    r.reject_unknown({"tp", "pp", "dp", "micro_batch", "schedule", "virtual_stages", "recompute", "sequence_parallel", "zero_stage",
                      "grad_bucket_mb", "overlap_grad_reduce", "description"});
    Plan p;
    p.tp = r.required_int("tp", 1, 1 << 16);
    p.pp = r.required_int("pp", 1, 1 << 16);
    p.dp = r.required_int("dp", 1, 10'000'000);
    p.micro_batch = r.required_int("micro_batch", 1, 1 << 20);
    p.schedule = read_schedule(r, "schedule", Schedule::OneFOneB);
    p.virtual_stages = r.optional_int("virtual_stages", 1, 1024).value_or(p.schedule == Schedule::Interleaved ? 2 : 1);
    p.recompute = read_recompute(r, "recompute", Recompute::None);
    p.sequence_parallel = r.optional_bool("sequence_parallel").value_or(false);
    p.zero_stage = r.optional_int("zero_stage", 0, 2).value_or(0);
    p.grad_bucket_mb = r.optional_number("grad_bucket_mb", 0.01, 1e6).value_or(40);
    p.overlap_grad_reduce = r.optional_bool("overlap_grad_reduce").value_or(true);
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
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (auto v = read_one(list[i])) {
            out.push_back(*v);
        } else {
            r.error(key, "item " + std::to_string(i) + " (" + list[i].dump() + ") is not valid");
        }
    }
    return out;
}

std::optional<int> positive_int(const nlohmann::json& j, long long max)
{
    if (!j.is_number_integer() || j.get<long long>() < 1 || j.get<long long>() > max) {
        return std::nullopt;
    }
    return j.get<int>();
}

SearchSpace read_search(Reader r)
{
    r.reject_unknown({"tp", "pp", "micro_batch", "schedule", "virtual_stages", "recompute", "sequence_parallel", "zero_stage",
                      "num_gpus", "gpu", "cp", "ep", "etp", "precision", "tp_overlap", "moe_overlap", "description"});
    SearchSpace s;
    s.tp = read_list<int>(r, "tp", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.pp = read_list<int>(r, "pp", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.micro_batch = read_list<int>(r, "micro_batch", [](const nlohmann::json& j) { return positive_int(j, 1 << 20); });
    s.virtual_stages = read_list<int>(r, "virtual_stages", [](const nlohmann::json& j) { return positive_int(j, 1024); });
    s.num_gpus = read_list<int>(r, "num_gpus", [](const nlohmann::json& j) { return positive_int(j, 10'000'000); });
    // Range-checked as 64-bit values before narrowing (4294967297 must not wrap to 1).
    auto whole_in = [](const nlohmann::json& j, long long low, long long high) -> std::optional<int> {
        if (!j.is_number_integer() || j.get<long long>() < low || j.get<long long>() > high) {
            return std::nullopt;
        }
        return static_cast<int>(j.get<long long>());
    };
    s.zero_stage = read_list<int>(r, "zero_stage", [&](const nlohmann::json& j) { return whole_in(j, 0, 3); });
    s.cp = read_list<int>(r, "cp", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.ep = read_list<int>(r, "ep", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.etp = read_list<int>(r, "etp", [&](const nlohmann::json& j) { return whole_in(j, 0, 1 << 16); }); // 0 = the same as tp
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
        return j.is_string() && !j.get<std::string>().empty() ? std::optional<std::string>(j.get<std::string>()) : std::nullopt;
    });
    return s;
}

} // namespace

const char* to_string(FfnActivation v)
{
    switch (v) {
    case FfnActivation::Gelu: return "gelu";
    case FfnActivation::SwiGlu: return "swiglu";
    case FfnActivation::SquaredRelu: return "squared_relu";
    case FfnActivation::Relu: return "relu";
    }
    return "gelu";
}
const char* to_string(Normalization v) { return v == Normalization::LayerNorm ? "layernorm" : "rmsnorm"; }
const char* to_string(AttentionKernel v) { return v == AttentionKernel::Flash ? "flash" : "unfused"; }
const char* to_string(Precision v)
{
    switch (v) {
    case Precision::Bf16: return "bf16";
    case Precision::Fp16: return "fp16";
    case Precision::Fp32: return "fp32";
    case Precision::Fp8: return "fp8";
    case Precision::Nvfp4: return "nvfp4";
    }
    return "bf16";
}
const char* to_string(Fp8Recipe v)
{
    switch (v) {
    case Fp8Recipe::Delayed: return "delayed";
    case Fp8Recipe::Current: return "current";
    case Fp8Recipe::Blockwise: return "blockwise";
    case Fp8Recipe::Mxfp8: return "mxfp8";
    }
    return "delayed";
}
const char* to_string(AttentionKind v)
{
    switch (v) {
    case AttentionKind::Mha: return "mha";
    case AttentionKind::Gqa: return "gqa";
    case AttentionKind::Mla: return "mla";
    }
    return "mha";
}
const char* to_string(ContextParallelKind v) { return v == ContextParallelKind::Ring ? "ring" : "all_to_all"; }
const char* to_string(Schedule v)
{
    switch (v) {
    case Schedule::GPipe: return "gpipe";
    case Schedule::OneFOneB: return "1f1b";
    case Schedule::Interleaved: return "interleaved";
    }
    return "1f1b";
}
const char* to_string(Recompute v)
{
    switch (v) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    }
    return "none";
}

std::optional<Schedule> schedule_from_string(const std::string& s)
{
    const std::string v = lower(s);
    if (v == "gpipe") {
        return Schedule::GPipe;
    }
    if (v == "1f1b" || v == "pipedream-flush") {
        return Schedule::OneFOneB;
    }
    if (v == "interleaved" || v == "interleaved-1f1b") {
        return Schedule::Interleaved;
    }
    return std::nullopt;
}

std::optional<Recompute> recompute_from_string(const std::string& s)
{
    const std::string v = lower(s);
    if (v == "none" || v == "off") {
        return Recompute::None;
    }
    if (v == "selective") {
        return Recompute::Selective;
    }
    if (v == "full") {
        return Recompute::Full;
    }
    return std::nullopt;
}

Expected<Scenario> scenario_from_json(const nlohmann::json& json)
{
    Diagnostics diags;
    if (!json.is_object()) {
        return Diagnostic{"", "a scenario must be a JSON object with \"model\", \"cluster\", \"training\" and \"plan\" or \"search\""};
    }
    Reader r(json, "", diags);
    r.reject_unknown({"model", "cluster", "training", "plan", "search", "description", "name", "schema_version"});
    Scenario s;
    s.model = read_model(r.child("model"));
    s.cluster = read_cluster(r.child("cluster"));
    s.training = read_training(r.child("training"));
    if (r.has("plan")) {
        s.plan = read_plan(r.child("plan"));
    }
    if (r.has("search")) {
        s.search = read_search(r.child("search"));
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
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Diagnostic{path.string(), "cannot be opened"};
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    return scenario_from_text(buffer.str());
}

nlohmann::json plan_to_json(const Plan& p)
{
    return {{"tp", p.tp},
            {"pp", p.pp},
            {"dp", p.dp},
            {"micro_batch", p.micro_batch},
            {"schedule", to_string(p.schedule)},
            {"virtual_stages", p.virtual_stages},
            {"recompute", to_string(p.recompute)},
            {"sequence_parallel", p.sequence_parallel},
            {"zero_stage", p.zero_stage},
            {"grad_bucket_mb", p.grad_bucket_mb},
            {"overlap_grad_reduce", p.overlap_grad_reduce}};
}

nlohmann::json scenario_to_json(const Scenario& s)
{
    nlohmann::json j;
    const ModelSpec& m = s.model;
    j["model"] = {{"name", m.name}, {"layers", m.layers}, {"hidden", m.hidden}, {"heads", m.heads}, {"seq_len", m.seq_len},
                  {"vocab", m.vocab}, {"activation", to_string(m.activation)}};
    if (m.kv_heads > 0) {
        j["model"]["kv_heads"] = m.kv_heads;
    }
    if (m.ffn_hidden > 0) {
        j["model"]["ffn_hidden"] = m.ffn_hidden;
    }
    j["model"]["tied_embeddings"] = m.tied_embeddings;
    const ClusterSpec& c = s.cluster;
    j["cluster"] = {{"gpu", c.gpu}, {"num_gpus", c.num_gpus}};
    if (c.gpus_per_node > 0) {
        j["cluster"]["gpus_per_node"] = c.gpus_per_node;
    }
    if (c.price_per_gpu_hour) {
        j["cluster"]["price_per_gpu_hour"] = *c.price_per_gpu_hour;
    }
    if (c.links.nvlink_bus_gbytes_per_s) {
        j["cluster"]["nvlink_bus_gbytes_per_s"] = *c.links.nvlink_bus_gbytes_per_s;
    }
    if (c.links.nic_gbit_per_s) {
        j["cluster"]["nic_gbit_per_s"] = *c.links.nic_gbit_per_s;
    }
    if (c.links.nics_per_node) {
        j["cluster"]["nics_per_node"] = *c.links.nics_per_node;
    }
    if (c.links.inter_node_latency_us) {
        j["cluster"]["inter_node_latency_us"] = *c.links.inter_node_latency_us;
    }
    j["training"] = {{"global_batch", s.training.global_batch}, {"precision", to_string(s.training.precision)},
                     {"attention", to_string(s.training.attention)}};
    if (s.training.tokens > 0) {
        j["training"]["tokens"] = s.training.tokens;
    }
    if (s.training.grad_accumulation_bytes > 0) {
        j["training"]["grad_accumulation_bytes"] = s.training.grad_accumulation_bytes;
    }
    if (s.plan) {
        j["plan"] = plan_to_json(*s.plan);
    }
    if (s.search) {
        const SearchSpace& q = *s.search;
        nlohmann::json sj = nlohmann::json::object();
        auto put = [&](const char* key, const auto& list) {
            if (!list.empty()) {
                sj[key] = list;
            }
        };
        put("tp", q.tp);
        put("pp", q.pp);
        put("micro_batch", q.micro_batch);
        put("virtual_stages", q.virtual_stages);
        put("zero_stage", q.zero_stage);
        put("num_gpus", q.num_gpus);
        put("gpu", q.gpu);
        put("cp", q.cp);
        put("ep", q.ep);
        put("etp", q.etp);
        std::vector<bool> sp(q.sequence_parallel.begin(), q.sequence_parallel.end());
        put("sequence_parallel", sp);
        put("tp_overlap", std::vector<bool>(q.tp_overlap.begin(), q.tp_overlap.end()));
        put("moe_overlap", std::vector<bool>(q.moe_overlap.begin(), q.moe_overlap.end()));
        std::vector<std::string> precisions;
        for (auto v : q.precision) {
            precisions.emplace_back(to_string(v));
        }
        put("precision", precisions);
        std::vector<std::string> names;
        for (auto v : q.schedule) {
            names.emplace_back(to_string(v));
        }
        put("schedule", names);
        names.clear();
        for (auto v : q.recompute) {
            names.emplace_back(to_string(v));
        }
        put("recompute", names);
        j["search"] = sj;
    }
    return j;
}

} // namespace vtrain
