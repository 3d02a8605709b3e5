// SPDX-License-Identifier: MIT
// Plans as Megatron-LM launch flags (torchtitan: launch_torchtitan.cpp; Megatron-DeepSpeed: launch_deepspeed.cpp;
// Megatron-Bridge: launch_bridge.cpp), and the helpers they share (io/launch_detail.h).
//
// Megatron-LM flag names follow megatron/training/arguments.py on NVIDIA/Megatron-LM main as of late 2025
// (commit 000c4ac, Megatron-Core 0.14/0.15 era): --attention-backend, --ddp-bucket-size (elements),
// --num-layers-per-virtual-pipeline-stage, --recompute-granularity/-method/-num-layers, --recompute-modules
// (core_attn, layernorm, mla_up_proj, moe_act), --train-samples.
// Today's Megatron-LM flags (checked against Megatron-LM's arguments.py and NVIDIA's published launch
// scripts): --context-parallel-size, --cp-comm-type p2p|a2a; --fp8-format e4m3|hybrid with --fp8-recipe
// delayed|tensorwise|blockwise|mxfp8, --fp4-format e2m1 --fp4-recipe nvfp4; --use-megatron-fsdp
// --data-parallel-sharding-strategy optim_grads_params (ZeRO-3), --num-distributed-optimizer-instances with
// --outer-dp-sharding-strategy for hybrid shards; --overlap-param-gather, --tp-comm-overlap;
// --decoder-first/last-pipeline-num-layers, --num-virtual-stages-per-pipeline-rank,
// --pipeline-model-parallel-layout; --num-experts, --moe-router-topk, --moe-ffn-hidden-size,
// --moe-shared-expert-intermediate-size, --moe-layer-freq, --expert-model-parallel-size,
// --expert-tensor-parallel-size, --overlap-moe-expert-parallel-comm --delay-wgrad-compute;
// --multi-latent-attention with --q-lora-rank, --kv-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim,
// --v-head-dim; --mtp-num-layers; --use-tp-pp-dp-mapping; --optimizer-cpu-offload, --optimizer-offload-fraction;
// --cpu-offloading, --cpu-offloading-num-layers.
#include "vtrain/launch_config.h"

#include "io/launch_detail.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string_view>

#include "vtrain/json_fields.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/plan_check.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"

namespace vtrain {
namespace launch_detail {

std::string str(long long v)
{
    return std::to_string(v);
}

std::string join_lines(const std::string& head, const std::vector<std::string>& lines)
{
    std::string text = head;
    for (const std::string& line : lines) {
        text += " \\\n    " + line;
    }
    return text + '\n';
}

NodeLayout node_layout(int num_gpus, int gpus_per_node, std::vector<std::string>& warnings)
{
    if (num_gpus <= gpus_per_node) {
        return {1, num_gpus};
    }
    if (num_gpus % gpus_per_node != 0) {
        warnings.push_back(str(num_gpus) + " GPUs do not fill whole nodes of " + str(gpus_per_node) +
                           ": launchers start the same number of processes on every node, so adjust the node count by hand");
    }
    return {(num_gpus + gpus_per_node - 1) / gpus_per_node, gpus_per_node};
}

// Shared refusals: the plan must pass the core's checks, and the node size must be known.
std::optional<Diagnostic> refuse(const Scenario& scenario, const Plan& plan, int gpus_per_node)
{
    if (gpus_per_node < 1) {
        return Diagnostic{"cluster.gpus_per_node", "must be known (>= 1) to write a launch line"};
    }
    if (const auto rejection = check_plan(scenario.model, scenario.training, plan, scenario.cluster.num_gpus)) {
        return rejection->diagnostic;
    }
    return std::nullopt;
}

// Flags that describe the model, identical in Megatron-LM and Megatron-DeepSpeed.
void add_model_arguments(const ModelSpec& m, std::vector<std::string>& args)
{
    args.push_back("--num-layers " + str(m.layers));
    args.push_back("--hidden-size " + str(m.hidden));
    args.push_back("--ffn-hidden-size " + str(m.effective_ffn_hidden()));
    args.push_back("--num-attention-heads " + str(m.heads));
    if (m.effective_kv_heads() != m.heads) {
        args.emplace_back("--group-query-attention");
        args.push_back("--num-query-groups " + str(m.effective_kv_heads()));
    }
    if (m.activation == FfnActivation::SwiGlu) {
        args.emplace_back("--swiglu");
    }
    if (!m.tied_embeddings) {
        args.emplace_back("--untie-embeddings-and-output-weights");
    }
    args.push_back("--seq-length " + str(m.seq_len));
    args.push_back("--max-position-embeddings " + str(m.seq_len));
}

// Layer options the simulated model states, as Megatron-LM names them (its defaults are LayerNorm, no
// QK norm and biases on every linear layer): the launched run builds the layers that were simulated.
void add_layer_option_arguments(const ModelSpec& m, std::vector<std::string>& args)
{
    if (m.normalization == Normalization::RmsNorm) {
        args.emplace_back("--normalization RMSNorm");
    }
    if (m.qk_norm) {
        args.emplace_back("--qk-layernorm");
    }
    if (m.activation == FfnActivation::SwiGlu && !m.linear_bias) {
        args.emplace_back("--disable-bias-linear"); // Llama-style layers; GPT-style ones keep Megatron's biases
        if (m.qkv_bias) {
            args.emplace_back("--add-qkv-bias");
        }
    }
}

// Mixture-of-experts, latent attention and multi-token prediction (Megatron-Core).
void add_moe_mla_arguments(const ModelSpec& m, const Plan& p, std::vector<std::string>& args)
{
    if (m.attention == AttentionKind::Mla) {
        args.emplace_back("--multi-latent-attention");
        args.push_back("--q-lora-rank " + str(m.mla.q_lora_rank));
        args.push_back("--kv-lora-rank " + str(m.mla.kv_lora_rank));
        args.push_back("--qk-head-dim " + str(m.mla.qk_head_dim));
        args.push_back("--qk-pos-emb-head-dim " + str(m.mla.qk_rope_head_dim));
        args.push_back("--v-head-dim " + str(m.mla.v_head_dim));
    }
    if (m.mtp_layers > 0) {
        args.push_back("--mtp-num-layers " + str(m.mtp_layers));
    }
    if (!m.moe.enabled()) {
        return;
    }
    const MoeSpec& e = m.moe;
    args.push_back("--num-experts " + str(e.experts));
    args.push_back("--moe-router-topk " + str(e.top_k));
    args.push_back("--moe-ffn-hidden-size " + str(e.expert_ffn_hidden > 0 ? e.expert_ffn_hidden : m.effective_ffn_hidden()));
    if (e.shared_experts > 0) {
        const int shared = e.shared_expert_ffn_hidden > 0
                               ? e.shared_expert_ffn_hidden
                               : e.shared_experts * (e.expert_ffn_hidden > 0 ? e.expert_ffn_hidden : m.effective_ffn_hidden());
        args.push_back("--moe-shared-expert-intermediate-size " + str(shared));
    }
    if (e.first_dense_layers > 0 || e.layer_freq > 1) {
        // A Python list expression, one entry per layer: 0 dense, 1 MoE.
        std::string pattern = "([0]*" + str(e.first_dense_layers);
        if (e.layer_freq > 1) {
            const int rest = m.layers - e.first_dense_layers;
            pattern += "+([1]+[0]*" + str(e.layer_freq - 1) + ")*" + str(rest / e.layer_freq);
            if (rest % e.layer_freq != 0) {
                pattern += "+[1]+[0]*" + str(rest % e.layer_freq - 1);
            }
        } else {
            pattern += "+[1]*" + str(m.layers - e.first_dense_layers);
        }
        args.push_back("--moe-layer-freq \"" + pattern + ")\"");
    }
    args.emplace_back("--moe-grouped-gemm");
    args.emplace_back("--moe-token-dispatcher-type alltoall");
    if (!e.dropless && e.capacity_factor > 0) {
        char factor[32];
        std::snprintf(factor, sizeof factor, "%g", e.capacity_factor);
        args.push_back(std::string("--moe-expert-capacity-factor ") + factor);
        if (e.pad_to_capacity) {
            args.emplace_back("--moe-pad-expert-input-to-capacity");
        }
    }
    args.push_back("--expert-model-parallel-size " + str(p.ep));
    args.push_back("--expert-tensor-parallel-size " + str(p.effective_etp()));
    if (p.moe_overlap) {
        // Batch-level overlap of dispatch/combine with the other micro-batch's compute (MCore v0.14).
        args.emplace_back("--overlap-moe-expert-parallel-comm");
        args.emplace_back("--delay-wgrad-compute");
    }
}

// Context parallelism and uneven pipeline stages.
void add_layout_arguments(const ModelSpec& m, const Plan& p, std::vector<std::string>& args)
{
    if (p.cp > 1) {
        args.push_back("--context-parallel-size " + str(p.cp));
        args.push_back(std::string("--cp-comm-type ") + (p.cp_kind == ContextParallelKind::Ring ? "p2p" : "a2a"));
    }
    if (!p.pipeline_layout.empty()) {
        // The layout fixes the virtual stages too (their count is its stages / pp).
        args.push_back("--pipeline-model-parallel-layout " + shell_quoted(p.pipeline_layout));
        return;
    }
    if (p.first_stage_layers > 0) {
        args.push_back("--decoder-first-pipeline-num-layers " + str(p.first_stage_layers));
    }
    if (p.last_stage_layers > 0) {
        args.push_back("--decoder-last-pipeline-num-layers " + str(p.last_stage_layers));
    }
    if (p.schedule == Schedule::Interleaved) {
        if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
            args.push_back("--num-virtual-stages-per-pipeline-rank " + str(p.virtual_stages));
        } else {
            args.push_back("--num-layers-per-virtual-pipeline-stage " + str(m.layers / (p.pp * p.virtual_stages)));
        }
    }
}

void add_precision_arguments(const TrainingSpec& t, std::vector<std::string>& args)
{
    if (t.precision == Precision::Fp8) {
        // Delayed scaling runs E4M3 forward and E5M2 gradients ("hybrid", TE's default); the block-scaled
        // recipes and current scaling (DeepSeek-V3, NVIDIA's recipes) run E4M3 throughout.
        const bool hybrid = t.fp8_recipe == Fp8Recipe::Delayed;
        args.push_back(std::string("--fp8-format ") + (hybrid ? "hybrid" : "e4m3"));
        const char* recipe = t.fp8_recipe == Fp8Recipe::Delayed     ? "delayed"
                             : t.fp8_recipe == Fp8Recipe::Current   ? "tensorwise"
                             : t.fp8_recipe == Fp8Recipe::Blockwise ? "blockwise"
                                                                    : "mxfp8";
        args.push_back(std::string("--fp8-recipe ") + recipe);
    } else if (t.precision == Precision::Nvfp4) {
        args.emplace_back("--fp4-format e2m1");
        args.emplace_back("--fp4-recipe nvfp4");
    }
}

void add_batch_arguments(const Scenario& s, const Plan& p, std::vector<std::string>& args, std::vector<std::string>& warnings)
{
    args.push_back("--micro-batch-size " + str(p.micro_batch));
    args.push_back("--global-batch-size " + str(s.training.global_batch));
    if (s.training.tokens > 0) {
        // Megatron counts training length in sequences; round up so the run sees every token budgeted.
        const auto samples = static_cast<long long>(std::ceil(s.training.tokens / s.model.seq_len));
        args.push_back("--train-samples " + str(samples));
    } else {
        warnings.emplace_back("training.tokens is not given: set --train-samples (or --train-iters) yourself");
    }
    // FP8 and FP4 recipes run on top of bf16 (master weights, attention, norms stay in high precision).
    if (s.training.precision == Precision::Bf16 || s.training.precision == Precision::Fp8 || s.training.precision == Precision::Nvfp4) {
        args.emplace_back("--bf16");
    } else if (s.training.precision == Precision::Fp16) {
        args.emplace_back("--fp16");
    }
    // CUDA graphs (Megatron-LM arguments.py: --cuda-graph-impl none|local|transformer_engine; "local" with
    // --cuda-graph-scope full_iteration captures the whole iteration, "transformer_engine" the listed modules).
    if (s.training.cuda_graphs == CudaGraphs::FullIteration) {
        args.emplace_back("--cuda-graph-impl local");
        args.emplace_back("--cuda-graph-scope full_iteration");
    } else if (s.training.cuda_graphs == CudaGraphs::Scoped) {
        std::string scope;
        for (const std::string& name : cuda_graph_scope_names(s.training.cuda_graph_scope)) {
            scope += " " + name;
        }
        if (!scope.empty()) {
            args.emplace_back("--cuda-graph-impl transformer_engine");
            args.push_back("--cuda-graph-scope" + scope);
        }
    }
}

void add_recompute_arguments(Recompute recompute, std::vector<std::string>& args)
{
    if (recompute == Recompute::Selective) {
        args.emplace_back("--recompute-granularity selective");
    } else if (recompute == Recompute::Full) {
        // Every layer recomputed from its input: Megatron's "uniform" method over 1-layer units.
        args.emplace_back("--recompute-granularity full");
        args.emplace_back("--recompute-method uniform");
        args.emplace_back("--recompute-num-layers 1");
    }
}

// Megatron-LM's names for Plan::recompute_modules, in its --recompute-modules spelling (arguments.py:
// nargs='*', choices "core_attn", "moe_act", "layernorm", "mla_up_proj", ...; default ["core_attn"]).
std::string recompute_modules_flag_value(unsigned modules)
{
    std::string out;
    for (const std::string& name : recompute_module_names(modules)) {
        out += (out.empty() ? "" : " ") + name;
    }
    return out;
}

// Megatron-LM's recomputation flags. Selective recomputation is core attention ("core_attn", Megatron's
// default module); the plan's recompute_modules join it, or go alone under --recompute-granularity selective
// when the plan recomputes nothing else. Full recomputation already recomputes every module.
void add_recompute_arguments(const Plan& p, std::vector<std::string>& args, std::vector<std::string>& warnings)
{
    const std::string modules = recompute_modules_flag_value(p.recompute_modules);
    add_recompute_arguments(p.recompute == Recompute::None && !modules.empty() ? Recompute::Selective : p.recompute, args);
    if (modules.empty()) {
        return;
    }
    if (p.recompute == Recompute::Full) {
        warnings.push_back("recompute_modules (" + modules +
                           ") are not written: full recomputation (--recompute-granularity full) "
                           "already recomputes every module, and Megatron-LM reads --recompute-modules with selective only");
        return;
    }
    args.push_back("--recompute-modules " + std::string(p.recompute == Recompute::Selective ? "core_attn " : "") + modules);
}

std::string vocabulary_warning(const ModelSpec& m)
{
    return "the vocabulary comes from the tokenizer (--tokenizer-type with --vocab-file/--merge-file or --tokenizer-model), "
           "padded to a multiple of --make-vocab-size-divisible-by (128) x tp; the plan was simulated with " +
           str(m.vocab) + " entries";
}

const char* const kStillToSet = "still to set: --data-path (or --mock-data), the optimizer and schedule (--lr, --min-lr, "
                                "--lr-decay-style, --lr-warmup-samples, --lr-decay-samples, --weight-decay, --clip-grad), "
                                "--save/--load with --save-interval";

std::string environment_prefix(const Plan& p)
{
    // Tensor and sequence parallelism overlap their collectives with GEMMs only with one CUDA connection
    // (Megatron-LM refuses to start without it before Blackwell).
    return p.tp > 1 ? "CUDA_DEVICE_MAX_CONNECTIONS=1 " : "";
}

} // namespace launch_detail

using namespace launch_detail;

std::string toml_escaped(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = json_fields::utf8_char_length(text, i);
        if (n == 0) {
            out += "\\uFFFD"; // not UTF-8, which TOML files are
            ++i;
            continue;
        }
        if (n > 1) {
            out.append(text.substr(i, n));
            i += n;
            continue;
        }
        const char c = text[i++];
        switch (c) {
        case '\\': out += "\\\\"; break;
        case '"': out += "\\\""; break;
        case '\b': out += "\\b"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        case '\f': out += "\\f"; break;
        case '\r': out += "\\r"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
                char code[8];
                std::snprintf(code, sizeof code, "\\u%04X", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += code;
            } else {
                out += c;
            }
        }
    }
    return out;
}

std::string shell_quoted(std::string_view text)
{
    const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view(" -_.,:/=+*|()[]{}<>;&#%@~^").find(c) != std::string_view::npos;
    });
    if (plain) {
        return "\"" + std::string(text) + "\"";
    }
    std::string out = "'";
    for (const char c : text) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    return out + "'";
}

long long grad_bucket_elements(const Plan& plan, Precision precision)
{
    const double bytes_per_gradient = precision == Precision::Fp16 ? 2.0 : 4.0;
    return std::llround(plan.grad_bucket_mb * 1024.0 * 1024.0 / bytes_per_gradient);
}

std::string MegatronLaunch::command_text() const
{
    return join_lines(launch_command, arguments);
}

void add_rank_order_and_offload(const ModelSpec& m, const Plan& p, std::vector<std::string>& args, std::vector<std::string>& warnings)
{
    RankOrder pp_dp;
    pp_dp.dims = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp, ParallelDim::Dp};
    if (p.rank_order == pp_dp) {
        args.emplace_back("--use-tp-pp-dp-mapping");
    } else if (p.rank_order != RankOrder{}) {
        warnings.push_back("rank order " + to_string(p.rank_order) +
                           " has no Megatron-LM flag (only --use-tp-pp-dp-mapping, for tp-cp-ep-pp-dp): pass it as "
                           "initialize_model_parallel(order=...) in your own launcher, or the run uses tp-cp-ep-dp-pp");
    }
    if (p.offload_optimizer) {
        args.emplace_back("--optimizer-cpu-offload");
        args.emplace_back("--optimizer-offload-fraction 1.0");
    }
    if (p.offload_activations > 0) {
        const int per_chunk = m.layers / std::max(1, p.pp * plan_chunks(p));
        const int layers = std::max(1, static_cast<int>(std::lround(p.offload_activations * per_chunk)));
        args.emplace_back("--cpu-offloading");
        args.push_back("--cpu-offloading-num-layers " + str(layers));
        warnings.push_back("Transformer Engine offloads whole layers' activations: " + str(layers) + " of " + str(per_chunk) +
                           " layers per model chunk stand for the simulated share of " +
                           std::to_string(static_cast<int>(std::lround(p.offload_activations * 100))) + "% of each layer's");
        if (p.pp > 1 || p.recompute != Recompute::None || p.recompute_modules != 0) {
            warnings.emplace_back("Megatron-LM refuses --cpu-offloading with pipeline parallelism or activation recomputation: "
                                  "the plan's activation offload cannot run as written");
        }
    }
}

// Fine-tuning (TrainingSpec::mode): Megatron-LM's --sft switches pretrain_gpt.py to its SFT dataset
// (megatron/training/arguments.py, _add_sft_args); LoRA has no Megatron-LM flag, so the warning gives the
// Megatron-Bridge PEFT settings of its finetuning recipes (src/megatron/bridge/peft/lora.py: LoRA.dim, alpha,
// target_modules linear_qkv/linear_proj/linear_fc1/linear_fc2; packed sequences need micro_batch_size 1,
// docs/training/peft.md).
std::string bridge_peft_overrides(const Scenario& s, const Plan& p)
{
    const TrainingSpec& t = s.training;
    std::string targets;
    for (const std::string& name : lora_target_names(t.lora_targets)) {
        targets += (targets.empty() ? "" : ",") + std::string("linear_") + name;
    }
    char alpha[32];
    std::snprintf(alpha, sizeof alpha, "%g", t.lora_alpha);
    std::string out = "peft=lora peft.dim=" + str(t.lora_rank) + " peft.alpha=" + alpha + " peft.target_modules=[" + targets + "]";
    if (t.sequence_packing) {
        out += " dataset.packed_sequence_specs.packed_sequence_size=" + str(s.model.seq_len);
        if (p.micro_batch != 1) {
            out += " (packed sequences need train.micro_batch_size=1 in Megatron-Bridge; the plan's micro-batch is " + str(p.micro_batch) + ")";
        }
    }
    return out;
}

void add_fine_tuning_arguments(const Scenario& s, const Plan& p, std::vector<std::string>& args, std::vector<std::string>& warnings)
{
    const TrainingSpec& t = s.training;
    if (t.mode == TrainingMode::Sft) {
        args.emplace_back("--sft");
        warnings.emplace_back(std::string("--sft reads Megatron-LM's SFT dataset format (--data-path to its JSONL); ") +
                              (t.sequence_packing ? "packing samples into sequences is the dataset's to do (Megatron-Bridge's finetuning recipes "
                                                    "pack with dataset.packed_sequence_specs)"
                                                  : "samples are padded to --seq-length"));
    } else if (t.mode == TrainingMode::Lora) {
        warnings.push_back("Megatron-LM's pretrain_gpt.py has no LoRA (the flags above train every weight): run LoRA with Megatron-Bridge's "
                           "finetuning recipe and " +
                           bridge_peft_overrides(s, p) + ", with checkpoint.pretrained_checkpoint set to the base model");
    }
}

Expected<MegatronLaunch> megatron_launch(const Scenario& s, const Plan& p, int gpus_per_node)
{
    if (const auto refusal = refuse(s, p, gpus_per_node)) {
        return *refusal;
    }
    MegatronLaunch out;
    auto& args = out.arguments;
    auto& warnings = out.warnings;
    const NodeLayout layout = node_layout(s.cluster.num_gpus, gpus_per_node, warnings);
    out.launch_command = environment_prefix(p) + "torchrun --nproc_per_node " + str(layout.processes_per_node) + " --nnodes " + str(layout.nodes);
    if (layout.nodes > 1) {
        out.launch_command += " --node_rank $NODE_RANK --master_addr $MASTER_ADDR --master_port 6000";
        warnings.push_back("run the torchrun line on each of the " + str(layout.nodes) + " nodes with NODE_RANK = 0.." + str(layout.nodes - 1) +
                           " and MASTER_ADDR = the first node's address");
    }
    out.launch_command += " pretrain_gpt.py";

    add_model_arguments(s.model, args);
    add_layer_option_arguments(s.model, args);
    args.push_back(std::string("--attention-backend ") + (s.training.attention == AttentionKernel::Flash ? "flash" : "unfused"));
    // Data parallelism is implied: Megatron-LM sets d = world size / (t x p).
    args.push_back("--tensor-model-parallel-size " + str(p.tp));
    args.push_back("--pipeline-model-parallel-size " + str(p.pp));
    add_layout_arguments(s.model, p, args);
    if (p.pp > 1 && p.schedule == Schedule::Interleaved && s.training.pipeline_runtime == PipelineRuntime::PyTorch) {
        warnings.emplace_back("simulated with PyTorch's interleaved warm-up (training.pipeline_runtime \"pytorch\"); with as many "
                              "micro-batches as pipeline ranks Megatron-LM runs every forward first and holds more activations: "
                              "simulate with \"megatron\" for this launch");
    }
    if (p.sequence_parallel) {
        args.emplace_back("--sequence-parallel");
    }
    if (p.tp_overlap) {
        args.emplace_back("--tp-comm-overlap");
    }
    add_moe_mla_arguments(s.model, p, args);
    add_batch_arguments(s, p, args, warnings);
    add_precision_arguments(s.training, args);
    add_recompute_arguments(p, args, warnings);
    if (s.training.te_cross_entropy) {
        args.emplace_back("--cross-entropy-loss-fusion");
        args.emplace_back("--cross-entropy-fusion-impl te");
    }
    // Megatron-LM overlaps an interleaved schedule's pipeline sends by default (arguments.py:
    // --no-overlap-p2p-communication, store_false); the plan as simulated blocks on them unless overlap_p2p.
    if (p.schedule == Schedule::Interleaved && p.pp > 1 && !s.training.overlap_p2p) {
        args.emplace_back("--no-overlap-p2p-communication");
    }
    if (p.zero_stage >= 1) {
        args.emplace_back("--use-distributed-optimizer");
    }
    if (p.zero_stage >= 3) {
        // Megatron-FSDP: parameters, gradients and optimizer states sharded, per-layer gathers (NVIDIA's scripts).
        args.emplace_back("--use-megatron-fsdp");
        args.emplace_back("--data-parallel-sharding-strategy optim_grads_params");
        args.emplace_back("--no-gradient-accumulation-fusion");
        args.emplace_back("--ckpt-format fsdp_dtensor");
        warnings.emplace_back("ZeRO-3 is written as Megatron-FSDP; PyTorch FSDP2 is the other choice (--use-torch-fsdp2 "
                              "instead of --use-megatron-fsdp and its sharding strategy)");
    }
    if (p.shard_group > 0 && p.shard_group < p.dp * p.cp) {
        // Shard inside groups, replicate across them (HSDP-like).
        args.push_back("--num-distributed-optimizer-instances " + str(p.dp * p.cp / p.shard_group));
        if (p.zero_stage >= 3) {
            args.emplace_back("--outer-dp-sharding-strategy optim");
        }
    }
    if (p.overlap_grad_reduce && (p.dp > 1 || p.cp > 1)) {
        args.emplace_back("--overlap-grad-reduce");
        args.push_back("--ddp-bucket-size " + str(grad_bucket_elements(p, s.training.precision)));
    }
    if (p.overlap_param_gather && p.zero_stage >= 1) { // Megatron needs the distributed optimizer for it
        args.emplace_back("--overlap-param-gather");
    }
    add_rank_order_and_offload(s.model, p, args, warnings);
    add_fine_tuning_arguments(s, p, args, warnings);

    if (p.schedule == Schedule::DualPipe && p.pp > 1) {
        warnings.emplace_back("DualPipe is DeepSeek's own schedule (github.com/deepseek-ai/DualPipe): the exported plan runs 1F1B, "
                              "whose bubble is larger than simulated");
    }
    if (const std::string why = moe_overlap_refusal(p); !why.empty()) {
        warnings.push_back("--overlap-moe-expert-parallel-comm " + why);
    }
    if (p.schedule == Schedule::GPipe && p.pp > 1) {
        warnings.emplace_back("Megatron-LM has no GPipe schedule: it runs pipeline plans with 1F1B, which keeps fewer "
                              "micro-batches' activations in flight than the simulated GPipe");
    }
    if (p.zero_stage >= 2) {
        warnings.emplace_back("ZeRO-2 (sharded gradients) has no Megatron-LM flag: --use-distributed-optimizer shards the "
                              "optimizer states only (ZeRO-1) and keeps a full gradient buffer per GPU, so memory per GPU "
                              "exceeds the simulation; Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy "
                              "optim_grads) is the nearest equivalent");
    }
    if (s.model.activation == FfnActivation::SwiGlu) {
        warnings.emplace_back("position embeddings are not part of the plan: Megatron-LM defaults to learned absolute "
                              "positions (Llama-style models add --position-embedding-type rope)");
    }
    warnings.push_back(vocabulary_warning(s.model));
    warnings.emplace_back(kStillToSet);
    return out;
}

} // namespace vtrain
