// SPDX-License-Identifier: MIT
// torchtitan job config (TOML) -> scenario. Keys follow torchtitan's JobConfig (torchtitan/config/job_config.py,
// 2025): [model] name/flavor/converters, [training] local_batch_size/global_batch_size/seq_len/steps/
// mixed_precision_*, [parallelism] data_parallel_replicate_degree/_shard_degree, tensor/context/pipeline/
// expert(_tensor)_parallel_degree, pipeline_parallel_schedule/_microbatch_size, fsdp_reshard_after_forward,
// enable_async_tensor_parallel, [activation_checkpoint] mode/selective_ac_option, [compile] enable,
// [float8] recipe_name/enable_fsdp_float8_all_gather. The inverse of `vtrain launch --framework torchtitan`;
// the table is docs/import.md's. torchtitan's model shapes live in its code, so [model] name and flavor
// are looked up among the models vTrain knows (or the model comes from --model).
#include <set>

#include "io/import_readers.h"
#include "io/toml_subset.h"
#include "vtrain/json_fields.h"

namespace vtrain::import_detail {
namespace {

using nlohmann::json;

// Sections whose keys have no bearing on time, memory or cost.
const std::set<std::string>& quiet_sections()
{
    static const std::set<std::string> s{"job",        "optimizer",       "lr_scheduler", "checkpoint",        "metrics",  "comm",       "profiling",
                                         "validation", "fault_tolerance", "experimental", "memory_estimation", "quantize", "dataloader", "tokenizer"};
    return s;
}

const std::set<std::string>& quiet_keys()
{
    static const std::set<std::string> s{"model.tokenizer_path",
                                         "model.hf_assets_path",
                                         "model.print_after_conversion",
                                         "training.dataset",
                                         "training.dataset_path",
                                         "training.max_norm",
                                         "training.gc_freq",
                                         "training.seed",
                                         "training.deterministic",
                                         "training.warmup_steps",
                                         "training.gc_debug",
                                         "parallelism.context_parallel_rotate_method",
                                         "parallelism.enable_compiled_autograd",
                                         "parallelism.pipeline_parallel_schedule_csv",
                                         "parallelism.module_fqns_per_model_part",
                                         "parallelism.fsdp_reshard_after_forward",
                                         "activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns",
                                         "activation_checkpoint.early_stop",
                                         "activation_checkpoint.memory_budget",
                                         "activation_checkpoint.visualize_memory_budget_pareto",
                                         "compile.components",
                                         "compile.backend",
                                         "float8.precompute_float8_dynamic_scale_for_fsdp",
                                         "float8.filter_fqns",
                                         "float8.emulate",
                                         "float8.force_recompute_fp8_weight_in_bwd",
                                         "float8.moe_fqns_prototype",
                                         "mx.filter_fqns",
                                         "mx.mxfp8_dim1_cast_kernel_choice",
                                         "mx.recipe_name"};
    return s;
}

class TitanReader {
public:
    TitanReader(const json& root, Draft& draft) : m_root(root), d(draft) {}

    void read()
    {
        model();
        if (!d.errors.empty()) {
            return;
        }
        parallelism();
        training();
        recompute();
        precision();
        leftovers();
    }

private:
    const json* take(const std::string& section, const std::string& key)
    {
        m_used.insert(section + "." + key);
        if (!m_root.contains(section) || !m_root[section].is_object() || !m_root[section].contains(key)) {
            return nullptr;
        }
        return &m_root[section][key];
    }
    std::optional<long long> integer(const std::string& section, const std::string& key, long long fallback, long long min = 1)
    {
        const json* v = take(section, key);
        if (v == nullptr) {
            return fallback;
        }
        const auto n = whole(*v, min, 1LL << 40);
        if (!n) {
            d.error(section + "." + key, "must be a whole number from " + std::to_string(min) + ", not " + json_fields::excerpt(*v));
        }
        return n;
    }
    std::optional<std::string> text(const std::string& section, const std::string& key)
    {
        const json* v = take(section, key);
        if (v == nullptr) {
            return std::nullopt;
        }
        if (!v->is_string()) {
            d.error(section + "." + key, "must be a string, not " + json_fields::excerpt(*v));
            return std::nullopt;
        }
        return v->get<std::string>();
    }
    std::optional<bool> flag(const std::string& section, const std::string& key)
    {
        const json* v = take(section, key);
        if (v == nullptr) {
            return std::nullopt;
        }
        if (!v->is_boolean()) {
            d.error(section + "." + key, "must be true or false, not " + json_fields::excerpt(*v));
            return std::nullopt;
        }
        return v->get<bool>();
    }

    void model()
    {
        const auto name = text("model", "name");
        const auto flavor = text("model", "flavor");
        if (!d.errors.empty()) {
            return;
        }
        const KnownModel* known = known_model_for_torchtitan(name.value_or(""), flavor.value_or(""));
        if (!d.model.empty()) {
            if (known != nullptr) {
                d.note("model.flavor", "the model comes from --model, not from the flavor " + clipped(flavor.value_or("")));
            }
        } else if (known != nullptr) {
            apply_known_model(*known, "model.flavor", d);
            d.default_chosen("model: " + std::string(known->id) + "'s shape ([model] name " + clipped(name.value_or("")) + ", flavor " +
                             clipped(flavor.value_or("")) + ")");
        } else {
            d.error("model.flavor", "\"" + clipped(name.value_or("?")) + "\" \"" + clipped(flavor.value_or("?")) +
                                        "\" is not a model vTrain knows (llama3 8B, 70B, 405B; deepseek_v3 671B): give its config.json with --model");
            return;
        }
        if (const json* converters = take("model", "converters")) {
            if (!converters->is_array()) {
                d.error("model.converters", "must be a list of converter names");
                return;
            }
            for (const json& c : *converters) {
                const std::string n = c.is_string() ? c.get<std::string>() : c.dump();
                if (n == "float8") {
                    m_float8 = true;
                } else if (n == "mx") {
                    m_mx = true;
                } else {
                    d.note("model.converters", "\"" + clipped(n) + "\" is not simulated: the model trains as converted by the others");
                }
            }
        }
    }

    void parallelism()
    {
        const auto replicate = integer("parallelism", "data_parallel_replicate_degree", 1);
        const auto shard = integer("parallelism", "data_parallel_shard_degree", -1, -1);
        const auto tp = integer("parallelism", "tensor_parallel_degree", 1);
        const auto cp = integer("parallelism", "context_parallel_degree", 1);
        const auto pp = integer("parallelism", "pipeline_parallel_degree", 1);
        const auto ep = integer("parallelism", "expert_parallel_degree", 1);
        const auto etp = integer("parallelism", "expert_tensor_parallel_degree", 1);
        if (!replicate || !shard || !tp || !cp || !pp || !ep || !etp) {
            return;
        }
        if (*shard == 0) {
            d.error("parallelism.data_parallel_shard_degree", "must be -1 (the rest) or at least 1, not 0");
            return;
        }
        d.set("plan.tp", *tp, "parallelism.tensor_parallel_degree");
        d.set("plan.pp", *pp, "parallelism.pipeline_parallel_degree");
        d.set("plan.cp", *cp, "parallelism.context_parallel_degree");
        d.set("plan.ep", *ep, "parallelism.expert_parallel_degree");
        if (d.has("model.moe.experts")) {
            d.set("plan.etp", *etp, "parallelism.expert_tensor_parallel_degree");
        }
        if (*tp > 1) {
            d.set("plan.sequence_parallel", true, "parallelism.tensor_parallel_degree");
        }
        // torchtitan's output layer and loss under TP (parallelize_llama: ColwiseParallel "output",
        // loss_parallel unless parallelism.disable_loss_parallel); without loss parallelism the logits are
        // replicated over the TP group, which the simulator does not model: it says so.
        const auto no_loss_parallel = flag("parallelism", "disable_loss_parallel");
        d.set("training.loss_parallel", !(no_loss_parallel && *no_loss_parallel),
              no_loss_parallel ? "parallelism.disable_loss_parallel" : "parallelism.tensor_parallel_degree");
        if (no_loss_parallel && *no_loss_parallel && *tp > 1) {
            d.note("parallelism.disable_loss_parallel", "replicated logits over the TP group are not modeled: the loss's memory is that of "
                                                        "vocabulary-sharded logits");
        }
        if (*cp > 1) {
            d.set("training.cp_ring_pytorch", true, "parallelism.context_parallel_degree");
        }
        // FSDP2 shards over data_parallel_shard_degree (-1: what the other degrees leave) and replicates
        // over data_parallel_replicate_degree (HSDP); shard 1 is plain DDP.
        const std::string reshard = text("parallelism", "fsdp_reshard_after_forward").value_or("default");
        const bool sharded = *shard != 1;
        if (*shard > 0) {
            d.set("plan.dp", *replicate * *shard, "parallelism.data_parallel_shard_degree");
            d.world_size = *replicate * *shard * *tp * *cp * *pp;
            d.world_size_key = "parallelism degrees";
        } else {
            d.source["plan.dp"] = "parallelism.data_parallel_shard_degree";
        }
        if (sharded) {
            int stage = 3;
            if (reshard == "never") {
                stage = 2;
            } else if (reshard == "default" && *pp > 1) {
                stage = 2; // torchtitan keeps gathered weights between micro-batches when pipelining
            } else if (reshard != "always" && reshard != "default") {
                d.error("parallelism.fsdp_reshard_after_forward", "must be \"default\", \"always\" or \"never\", not \"" + clipped(reshard) + "\"");
            }
            d.set("plan.zero_stage", stage, "parallelism.fsdp_reshard_after_forward");
            if (*replicate > 1 && *shard > 0) {
                d.set("plan.shard_group", *shard * *cp, "parallelism.data_parallel_shard_degree"); // counted in dp x cp ranks
            } else if (*replicate > 1) {
                d.optimizer_instances = *replicate;
                d.optimizer_instances_key = "parallelism.data_parallel_replicate_degree";
            }
        } else {
            d.set("plan.zero_stage", 0, "parallelism.data_parallel_shard_degree");
        }
        d.set("plan.overlap_grad_reduce", true, "parallelism.data_parallel_shard_degree");
        m_pp = *pp;
        if (*pp > 1) {
            // torch.distributed.pipelining's schedules, not Megatron-Core's (TrainingSpec::pipeline_runtime).
            d.set("training.pipeline_runtime", to_string(PipelineRuntime::PyTorch), "parallelism.pipeline_parallel_degree");
            const std::string schedule = text("parallelism", "pipeline_parallel_schedule").value_or("1F1B");
            const auto per_stage = integer("parallelism", "pipeline_parallel_layers_per_stage", 0, 0);
            if (schedule == "1F1B") {
                d.set("plan.schedule", "1f1b", "parallelism.pipeline_parallel_schedule");
            } else if (schedule == "GPipe") {
                d.set("plan.schedule", "gpipe", "parallelism.pipeline_parallel_schedule");
            } else {
                const bool known = schedule == "Interleaved1F1B" || schedule == "InterleavedZeroBubble" || schedule == "ZBVZeroBubble" ||
                                   schedule == "LoopedBFS" || schedule == "DualPipeV" || schedule == "InterleavedGPipe";
                if (!known) {
                    d.error("parallelism.pipeline_parallel_schedule", "\"" + clipped(schedule) +
                                                                          "\" is not a torchtitan schedule (1F1B, GPipe, Interleaved1F1B, "
                                                                          "InterleavedZeroBubble, ZBVZeroBubble, LoopedBFS, DualPipeV)");
                    return;
                }
                d.set("plan.schedule", "interleaved", "parallelism.pipeline_parallel_schedule");
                if (schedule != "Interleaved1F1B") {
                    d.note("parallelism.pipeline_parallel_schedule", clipped(schedule) + " is simulated as interleaved 1F1B");
                }
                long long v = 2; // torchtitan's default: two stages per rank for multi-stage schedules
                const json* layers = d.get("model.layers");
                if (per_stage && *per_stage > 0 && layers != nullptr) {
                    if (const auto l = whole(*layers, 1, 100000); l && *l % (*per_stage * *pp) == 0) {
                        v = *l / (*per_stage * *pp);
                    } else {
                        d.note("parallelism.pipeline_parallel_layers_per_stage",
                               "does not split the layers evenly over the ranks: 2 stages per rank assumed");
                    }
                }
                d.set("plan.virtual_stages", v,
                      per_stage && *per_stage > 0 ? "parallelism.pipeline_parallel_layers_per_stage" : "parallelism.pipeline_parallel_schedule");
            }
            d.source["plan.micro_batch"] = "parallelism.pipeline_parallel_microbatch_size";
            if (const auto mb = integer("parallelism", "pipeline_parallel_microbatch_size", 1)) {
                d.set("plan.micro_batch", *mb, "parallelism.pipeline_parallel_microbatch_size");
            }
            for (const char* k :
                 {"pipeline_parallel_split_points", "pipeline_parallel_first_stage_less_layers", "pipeline_parallel_last_stage_less_layers"}) {
                if (take("parallelism", k) != nullptr) {
                    d.note(std::string("parallelism.") + k, "uneven stages are not simulated from torchtitan's settings: the layers split evenly");
                }
            }
        } else {
            for (const char* k : {"pipeline_parallel_schedule", "pipeline_parallel_microbatch_size", "pipeline_parallel_layers_per_stage"}) {
                if (take("parallelism", k) != nullptr) {
                    d.ignore(std::string("parallelism.") + k);
                }
            }
        }
        if (const auto async = flag("parallelism", "enable_async_tensor_parallel"); async && *async) {
            d.set("plan.tp_overlap", true, "parallelism.enable_async_tensor_parallel");
            d.set("training.tp_overlap_forward_only", true, "parallelism.enable_async_tensor_parallel");
        }
    }

    void training()
    {
        const json* local = take("training", "local_batch_size");
        const char* local_key = "training.local_batch_size";
        if (local == nullptr) {
            local = take("training", "batch_size"); // the name before 2025
            local_key = "training.batch_size";
        }
        const auto local_batch = local != nullptr ? whole(*local, 1, 1 << 30) : std::optional<long long>(8);
        if (local != nullptr && !local_batch) {
            d.error(local_key, "must be a whole number from 1, not " + json_fields::excerpt(*local));
            return;
        }
        if (local == nullptr) {
            d.default_chosen("training.local_batch_size: 8 (torchtitan's default)");
        }
        if (m_pp <= 1) {
            d.set("plan.micro_batch", *local_batch, local_key);
        }
        const auto global = integer("training", "global_batch_size", -1, -1);
        d.source["training.global_batch"] = "training.global_batch_size";
        if (global && *global > 0) {
            d.set("training.global_batch", *global, "training.global_batch_size");
        } else {
            m_local_batch = *local_batch; // global = local x dp, once dp is known
        }
        if (const json* seq = take("training", "seq_len")) {
            d.set("model.seq_len", *seq, "training.seq_len");
        } else {
            d.set("model.seq_len", 2048, "training.seq_len");
            d.default_chosen("model.seq_len: 2048 (torchtitan's default seq_len)");
        }
        if (const auto steps = integer("training", "steps", 10000)) {
            d.train_iters = static_cast<double>(*steps);
            d.train_length_key = "training.steps";
        }
        const auto param = text("training", "mixed_precision_param").value_or("bfloat16");
        if (param == "float32") {
            m_precision = "fp32";
        } else if (param == "float16") {
            m_precision = "fp16";
        } else if (param != "bfloat16") {
            d.error("training.mixed_precision_param", "must be \"bfloat16\", \"float16\" or \"float32\", not \"" + clipped(param) + "\"");
        }
        const auto reduce = text("training", "mixed_precision_reduce").value_or("float32");
        if (reduce == "bfloat16") {
            d.set("training.bf16_gradients", true, "training.mixed_precision_reduce");
        }
        if (const auto offload = flag("training", "enable_cpu_offload"); offload && *offload) {
            d.set("plan.offload_optimizer", true, "training.enable_cpu_offload");
            d.note("training.enable_cpu_offload", "FSDP2's CPU offload (parameters, gradients and optimizer states) is simulated as the "
                                                  "optimizer on the CPU");
        }
        // torchtitan's loss: bf16 logits cast to fp32 for log_softmax, its fp32 output and gradients held at
        // the peak (12 bytes per logit, as vTrain's validation of torchtitan runs counts it).
        d.set("training.loss_bytes_per_logit", 12, "training");
    }

    void recompute()
    {
        const std::string mode = text("activation_checkpoint", "mode").value_or("selective");
        if (mode == "none" || mode == "full") {
            d.set("plan.recompute", mode, "activation_checkpoint.mode");
            take("activation_checkpoint", "selective_ac_option");
        } else if (mode == "selective") {
            const json* option = take("activation_checkpoint", "selective_ac_option");
            const std::string o = option == nullptr ? "2" : option->is_string() ? option->get<std::string>() : option->dump();
            if (o == "op") {
                d.set("plan.recompute", "selective", "activation_checkpoint.selective_ac_option");
                d.set("training.per_op_sac", true, "activation_checkpoint.selective_ac_option");
            } else if (o == "1") {
                d.set("plan.recompute", "full", "activation_checkpoint.selective_ac_option");
            } else {
                d.set("plan.recompute", "selective", "activation_checkpoint.selective_ac_option");
                d.note("activation_checkpoint.selective_ac_option", "\"" + clipped(o) + "\" checkpoints every " + clipped(o) +
                                                                        "th layer whole: simulated as selective recomputation (the attention core)");
            }
            if (option == nullptr) {
                d.default_chosen("activation_checkpoint: selective, every 2nd layer (torchtitan's default)");
            }
        } else {
            d.error("activation_checkpoint.mode", "must be \"none\", \"selective\" or \"full\", not \"" + clipped(mode) + "\"");
        }
        const auto compile = flag("compile", "enable").value_or(false);
        if (!compile) {
            d.set("training.eager_elementwise", true, "compile.enable");
        }
        if (d.has("plan.tp_overlap") && !compile) {
            d.note("parallelism.enable_async_tensor_parallel", "needs torch.compile ([compile] enable = true) in torchtitan");
        }
    }

    void precision()
    {
        std::string p = m_precision;
        if (m_float8) {
            p = "fp8";
            const std::string recipe = text("float8", "recipe_name").value_or("tensorwise");
            if (recipe == "tensorwise") {
                d.set("training.fp8_recipe", "current", "float8.recipe_name");
            } else if (recipe == "rowwise" || recipe == "rowwise_with_gw_hp") {
                // torchao rowwise: per-row scales cast on the fly (vTrain's validation maps it alike).
                d.set("training.fp8_recipe", "blockwise", "float8.recipe_name");
                d.set("training.fp8_axiswise_casts", true, "float8.recipe_name");
            } else {
                d.error("float8.recipe_name", "must be \"tensorwise\", \"rowwise\" or \"rowwise_with_gw_hp\", not \"" + clipped(recipe) + "\"");
            }
            if (const auto gather = flag("float8", "enable_fsdp_float8_all_gather"); gather && *gather) {
                d.set("training.fp8_param_gather", true, "float8.enable_fsdp_float8_all_gather");
            }
        } else if (m_mx) {
            p = "fp8";
            d.set("training.fp8_recipe", "mxfp8", "model.converters");
        }
        if (!m_float8) {
            for (const char* k : {"recipe_name", "enable_fsdp_float8_all_gather"}) {
                if (take("float8", k) != nullptr) {
                    d.note(std::string("float8.") + k, "has no effect without \"float8\" in [model] converters");
                }
            }
        }
        d.set("training.precision", p, m_float8 || m_mx ? "model.converters" : "training.mixed_precision_param");
    }

    void leftovers()
    {
        for (auto section = m_root.begin(); section != m_root.end(); ++section) {
            if (!section->is_object()) {
                d.unknown_key(section.key());
                continue;
            }
            for (auto it = section->begin(); it != section->end(); ++it) {
                const std::string key = section.key() + "." + it.key();
                if (m_used.count(key) != 0) {
                    continue;
                }
                if (quiet_sections().count(section.key()) != 0 || quiet_keys().count(key) != 0) {
                    d.ignore(key);
                } else {
                    d.unknown_key(key);
                }
            }
        }
    }

public:
    long long m_local_batch = 0; // global batch = local x dp when it is not given

private:
    const json& m_root;
    Draft& d;
    std::set<std::string> m_used;
    bool m_float8 = false;
    bool m_mx = false;
    long long m_pp = 1;
    std::string m_precision = "bf16";
};

} // namespace

void read_torchtitan_toml(const std::string& text, Draft& d)
{
    const auto parsed = parse_toml(text);
    if (!parsed.ok()) {
        for (const Diagnostic& e : parsed.errors()) {
            d.error(e.field, e.message);
        }
        return;
    }
    const json& root = *parsed;
    if (!root.contains("parallelism") && !root.contains("training") && !root.contains("model")) {
        d.error("parallelism", "is missing: this is not a torchtitan job config (no [model], [training] or [parallelism])");
        return;
    }
    TitanReader reader(root, d);
    reader.read();
    if (reader.m_local_batch > 0) {
        d.local_batch = reader.m_local_batch;
    }
}

} // namespace vtrain::import_detail
