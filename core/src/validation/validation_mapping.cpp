// SPDX-License-Identifier: MIT
// map_run: one row of RUNS.json -> a scenario and plan (and the candidates over what the row leaves
// open). It composes the vocabularies (validation_vocabulary.cpp), the facts of the row's source
// (validation_sources.cpp), the metric (validation_metrics.cpp) and the ranges (validation_ranges.cpp);
// every default it takes is written into the row's notes. Nothing here looks at a row's id or subset.
#include <algorithm>
#include <cstdio>

#include "model/model_support.h"
#include "validation/validation_detail.h"
#include "vtrain/json_fields.h"
#include "vtrain/plan_check.h"

namespace vtrain {

using namespace validation_detail;

namespace {

// An integer the file's "derived" object holds, within [min, max]; nullopt otherwise.
std::optional<int> derived_int(const RunRow& r, const char* key, long long min, long long max)
{
    const auto it = r.derived.find(key);
    if (it == r.derived.end() || !it->is_number_integer()) {
        return std::nullopt;
    }
    const long long v = it->get<long long>();
    return v >= min && v <= max ? std::optional<int>(static_cast<int>(v)) : std::nullopt;
}

// --- the steps of map_run, in order; each returns why the row cannot be mapped, or nothing -----------------

// What the steps share: the row, the run being built (its notes say every default taken), the settings the
// row leaves open, what its software implies, and its recompute text in lower case.
struct RowMapper {
    const RunRow& r;
    MappedRun run;
    OpenSettings open;
    SoftwareSettings sw;
    std::string rc;
    void note(std::string text) { run.notes.push_back(std::move(text)); }
};
using Skip = std::optional<std::string>;

// The parallel degrees; dp from the GPU count when not given.
Skip map_parallelism(RowMapper& x)
{
    const RunRow& r = x.r;
    Plan& p = x.run.plan;
    if (!r.tp || !r.pp) {
        return std::string(!r.tp ? "tp" : "pp") + " not given";
    }
    p.tp = *r.tp;
    p.pp = *r.pp;
    p.cp = r.cp.value_or(1);
    p.ep = r.ep.value_or(1);
    if (r.dp) {
        p.dp = *r.dp;
    } else if (r.num_gpus && *r.num_gpus % (p.tp * p.pp * p.cp) == 0) {
        p.dp = *r.num_gpus / (p.tp * p.pp * p.cp);
        x.note("dp not given: num_gpus / (tp x pp x cp) = " + std::to_string(p.dp));
    } else {
        return "dp not given and num_gpus is not a multiple of tp x pp x cp";
    }
    x.run.scenario.cluster.num_gpus = r.num_gpus.value_or(p.num_gpus());
    if (!r.num_gpus) {
        x.note("num_gpus not given: tp x pp x cp x dp");
    }
    return std::nullopt;
}

// Megatron pads the vocabulary to a multiple of 128 x tp (make-vocab-size-divisible-by); torchtitan keeps the
// tokenizer's size (its Llama configs: vocab_size from the tokenizer, the output layer sharded as is).
void map_vocabulary(RowMapper& x)
{
    const RunRow& r = x.r;
    ModelSpec& m = x.run.scenario.model;
    const Plan& p = x.run.plan;
    const int vocab = r.vocab_size.value_or(m.vocab > 0 ? m.vocab : 50257);
    if (!r.vocab_size && m.vocab <= 0) {
        x.note("vocab_size not given: 50257 (GPT-2 BPE, vTrain's default)");
    }
    const bool pads = x.sw.framework != Framework::Torchtitan;
    const int padded = pads ? round_up(vocab, 128 * p.tp) : vocab;
    if (padded != vocab) {
        x.note("vocabulary padded to " + std::to_string(padded) + " (Megatron: a multiple of 128 x tp)");
    }
    m.vocab = padded;
}

// The GPU profile and the network of the row's system.
Skip map_cluster(RowMapper& x)
{
    const RunRow& r = x.r;
    MappedRun& run = x.run;
    Notes& notes = run.notes;
    if (!r.gpu_type) {
        return "gpu_type not given";
    }
    run.profile_id = gpu_profile_id(r, notes);
    if (run.profile_id.empty()) {
        return "no GPU profile for gpu_type \"" + json_fields::bounded(*r.gpu_type) + "\"";
    }
    ClusterSpec& c = run.scenario.cluster;
    c.gpu = run.profile_id;
    c.gpus_per_node = r.gpus_per_node.value_or(0);
    if (!r.gpus_per_node) {
        x.note("gpus_per_node not given: the profile's node size");
    }
    const NetworkFacts net = network_facts(r, c.gpus_per_node);
    c.links.nics_per_node = net.nics_per_node;
    c.links.nic_gbit_per_s = net.nic_gbit_per_s;
    c.nvlink_domain_gpus = net.nvlink_domain_gpus;
    if (!net.description.empty()) {
        x.note("network: " + net.description);
    } else if (c.num_gpus > std::max(1, c.gpus_per_node)) {
        x.note("network not documented: the profile's NICs");
    }
    return std::nullopt;
}

// The software's defaults and the precision (with its FP8 recipe).
void map_software_and_precision(RowMapper& x)
{
    const RunRow& r = x.r;
    Plan& p = x.run.plan;
    x.sw = software_settings(r);
    const SoftwareSettings& sw = x.sw;
    x.note("software: " + sw.description);
    TrainingSpec& t = x.run.scenario.training;
    t.attention = sw.attention;
    t.grad_accumulation_bytes = sw.grad_accumulation_bytes;
    p.overlap_grad_reduce = sw.overlap_grad_reduce;
    const PrecisionChoice pc = precision_of(r);
    if (pc.precision) {
        apply_precision(t, *pc.precision, sw, pc);
    } else {
        // Not stated: a range over the precisions the GPU has a rate for (validation_ranges.cpp; candidates of a
        // precision the profile lacks are dropped when predicted), centred on the software's documented default.
        apply_precision(t, sw.precision, sw, pc);
        x.open.precision = true;
        x.run.precision_open = true;
    }
    if (t.precision == Precision::Fp8) {
        if (pc.recipe) {
            x.note(std::string("FP8 recipe ") + to_string(*pc.recipe) + " from notes[0]" +
                   (pc.recipe_approximated ? " (torchao per-row scaling: the blockwise recipe's memory, every operand cast along both axes)" : "") +
                   (pc.recipe_on_hopper ? " (MXFP8 needs Blackwell: the blockwise recipe the page names for Hopper)" : ""));
        } else {
            x.note(std::string("FP8 recipe not stated: ") + to_string(sw.fp8_recipe) + " (the software's default)");
        }
    }
}

// Supervised fine-tuning or LoRA, when the row's model name, software, table or notes say so (a row is
// pretraining otherwise): the mode, LoRA's rank and target modules, and how samples fill a sequence
// (validation_vocabulary.cpp, fine_tuning_of). A fine-tuning method the simulator lacks is a skip reason.
Skip map_training_mode(RowMapper& x)
{
    const FineTuningChoice f = fine_tuning_of(x.r);
    if (!f.skip_reason.empty()) {
        return f.skip_reason;
    }
    if (f.mode == TrainingMode::Pretrain) {
        return std::nullopt;
    }
    TrainingSpec& t = x.run.scenario.training;
    t.mode = f.mode;
    const bool bridge = x.sw.framework == Framework::MegatronCore;
    std::string note = std::string("training mode ") + to_string(f.mode) + " (" + f.evidence + ")";
    if (f.mode == TrainingMode::Lora) {
        if (f.rank) {
            t.lora_rank = *f.rank;
            note += "; LoRA rank " + std::to_string(t.lora_rank) + " as stated";
        } else {
            // Megatron-Bridge's LoRA.dim default (src/megatron/bridge/peft/lora.py), as NeMo 2's: the adapters are
            // a small share of the step at any rank of 8-64.
            t.lora_rank = 32;
            note += "; LoRA rank not stated: 32 (Megatron-Bridge/NeMo LoRA default dim)";
        }
        if (f.targets != 0) {
            t.lora_targets = f.targets;
            note += "; target modules as stated";
        } else {
            t.lora_targets = kLoraAllLinear;
            x.open.lora_targets = true;
            x.open.lora_targets_preferred_qkv = bridge;
        }
    }
    if (f.packing) {
        t.sequence_packing = *f.packing;
        note += std::string("; ") + (t.sequence_packing ? "packed" : "padded") + " samples as stated";
    } else {
        // Megatron-Bridge's finetuning performance recipes pack samples into seq_length
        // (scripts/performance/configs/llama/llama3_llm_finetune.py: packed_sequence_specs.packed_sequence_size).
        t.sequence_packing = true;
        note += bridge ? "; packing not stated: packed (Megatron-Bridge's finetuning recipes pack samples into seq_length)"
                       : "; packing not stated: samples fill the sequence";
    }
    note += "; sample length not stated: every sequence counts seq_length tokens, attention over the whole sequence";
    x.note(note);
    return std::nullopt;
}

// Global batch and micro-batch (open when neither it nor the accumulation steps are given).
Skip map_batch(RowMapper& x)
{
    const RunRow& r = x.r;
    Plan& p = x.run.plan;
    TrainingSpec& t = x.run.scenario.training;
    const SoftwareSettings& sw = x.sw;
    OpenSettings& open = x.open;
    if (r.global_batch_size) {
        t.global_batch = *r.global_batch_size;
    } else if (const auto gbs = derived_int(r, "global_batch_size", 1, 1 << 30)) {
        t.global_batch = *gbs;
        x.note("global_batch_size: derived.global_batch_size = " + std::to_string(t.global_batch));
    } else if (sw.no_grad_accumulation && r.micro_batch_size && !r.grad_accum_steps) {
        t.global_batch = *r.micro_batch_size * p.dp;
        x.note("global_batch_size not given: local batch x dp = " + std::to_string(t.global_batch) +
               " (no gradient accumulation: the software's default)");
    } else {
        return "global_batch_size not given";
    }
    if (r.micro_batch_size) {
        p.micro_batch = *r.micro_batch_size;
    } else if (r.grad_accum_steps && t.global_batch % (p.dp * *r.grad_accum_steps) == 0) {
        p.micro_batch = t.global_batch / (p.dp * *r.grad_accum_steps);
        x.note("micro_batch_size not given: global batch / (dp x grad_accum_steps) = " + std::to_string(p.micro_batch));
    } else if (t.mode != TrainingMode::Pretrain && t.sequence_packing && sw.framework == Framework::MegatronCore) {
        // Megatron-Bridge's packed sequences (THD with cu_seqlens) take one packed sequence per micro-batch
        // (docs/training/peft.md: "micro_batch_size=1  # Required for packed sequences").
        p.micro_batch = 1;
        x.note("micro_batch_size not given: 1 (Megatron-Bridge's packed fine-tuning sequences need micro-batch 1)");
    } else {
        p.micro_batch = 1;
        open.micro_batch = true;
    }
    return std::nullopt;
}

// Activation recompute (a module list, a preset's, or open) and the framework's training-step details.
Skip map_recompute(RowMapper& x)
{
    const RunRow& r = x.r;
    ModelSpec& m = x.run.scenario.model;
    Plan& p = x.run.plan;
    TrainingSpec& t = x.run.scenario.training;
    const ClusterSpec& c = x.run.scenario.cluster;
    const SoftwareSettings& sw = x.sw;
    OpenSettings& open = x.open;
    x.rc = lowercase(r.activation_recompute.value_or(""));
    const std::string& rc = x.rc;
    if (rc.rfind("full", 0) == 0) {
        p.recompute = Recompute::Full;
    } else if (rc.rfind("selective", 0) == 0) {
        p.recompute = Recompute::Selective;
        if (rc.find("microbatch-level") != std::string::npos) {
            x.note("micro-batch-level recompute (Korthikanti App. C) is not modeled: simulated as selective recompute");
        } else if (const auto named = selective_modules(rc)) {
            // A module list replaces Megatron's default (the attention core): only what it names is redone.
            p.recompute = named->core_attn ? Recompute::Selective : Recompute::None;
            p.recompute_modules |= named->bits;
            std::string list;
            for (const std::string& n : named->names) {
                list += (list.empty() ? "" : ", ") + n;
            }
            std::string text = "recompute \"" + json_fields::bounded(*r.activation_recompute) + "\": the modules it names (" + list + ")";
            text += named->core_attn ? "" : ", not the attention core";
            for (const std::string& n : named->unmodeled) {
                text += "; " + n + " recompute not modeled";
            }
            x.note(text);
        } else if (rc != "selective") {
            x.note("recompute \"" + json_fields::bounded(*r.activation_recompute) + "\": simulated as selective (the attention core recomputed)");
        }
    } else if (rc.rfind("none", 0) == 0 || rc.rfind("no", 0) == 0) {
        p.recompute = Recompute::None;
    } else if (rc.empty() && sw.recipe_recompute_known && sw.recipe_recompute) {
        // The preset of the row's layout states it (validation_sources.cpp): that run is the published one.
        p.recompute = *sw.recipe_recompute;
        p.recompute_modules |= sw.recipe_recompute_modules;
        x.note(std::string("activation_recompute not given: the matching performance preset's (") + to_string(p.recompute) +
               (sw.recipe_recompute_modules != 0 ? " with its recompute modules)" : ")"));
    } else if (rc.empty()) {
        p.recompute = Recompute::None;
        open.recompute = true;
    } else {
        return "activation_recompute \"" + json_fields::bounded(*r.activation_recompute) + "\" is not recognised";
    }
    if (sw.framework == Framework::Torchtitan && p.recompute == Recompute::Selective &&
        (rc.find("per-op") != std::string::npos || rc.find("per op") != std::string::npos || rc.find("selective op") != std::string::npos)) {
        t.per_op_sac = true;
        x.note("torchtitan per-op selective checkpointing: every second matmul of a layer and the elementwise ops recomputed");
    }
    t.eager_elementwise = sw.eager_elementwise;
    t.pipeline_runtime = sw.pipeline_runtime;
    t.te_cross_entropy = sw.te_cross_entropy;
    t.overlap_p2p = sw.overlap_p2p_interleaved;
    t.cp_ring_pytorch = sw.framework == Framework::Torchtitan && p.cp > 1;
    if (sw.framework == Framework::Torchtitan) {
        // torchtitan's loss (train.py @ 9dec370: cross_entropy(pred.flatten(0, 1).float(), ...)): bf16 logits
        // and their fp32 copy feed log_softmax, whose fp32 output is saved; its backward holds that output,
        // the fp32 incoming gradient and the fp32 input gradient at once: 4 + 4 + 4 bytes per logit.
        t.loss_bytes_per_logit = 12;
        // torchtitan's default (parallelism.disable_loss_parallel false): with tp > 1 the output layer is
        // ColwiseParallel on the gathered final-norm output and the loss is loss_parallel.
        t.loss_parallel = true;
        if (p.tp > 1) {
            x.note("torchtitan output layer under TP: all-gathered final-norm output saved, loss_parallel cross-entropy (16 bytes per logit)");
        }
    }
    if (t.cp_ring_pytorch) {
        x.note("torchtitan context parallelism: PyTorch's ring attention (torch context_parallel, load-balanced, all-gather "
               "rotation): repeated K/V exchanged, per-step fp32 merges as separate ops, dK/dV passed in fp32");
    }
    t.tp_overlap_forward_only = sw.tp_overlap_forward_only;
    if (sw.hopper_attention_peak_fraction > 0 && (contains(c.gpu, "h100") || contains(c.gpu, "h800") || contains(c.gpu, "h200"))) {
        t.attention_peak_fraction = sw.hopper_attention_peak_fraction;
    }
    if (sw.blackwell_ssd_scan_time_factor != 1 && (contains(c.gpu, "b200") || contains(c.gpu, "b300")) &&
        m.layer_pattern.find('M') != std::string::npos) {
        t.ssd_scan_time_factor = sw.blackwell_ssd_scan_time_factor;
        char factor[32];
        std::snprintf(factor, sizeof factor, "%g", t.ssd_scan_time_factor);
        x.note(std::string("Mamba-2 scan: the software's Triton SSD kernels on Blackwell, ") + factor +
               "x the batched-GEMM estimate (Megatron-LM PR #5829: the Triton SSD is 16-21% of Nemotron 3 Nano's prefill on Blackwell)");
    }
    return std::nullopt;
}

// Sequence parallelism: stated, named in the recompute text, implied by the software, or open.
void map_sequence_parallel(RowMapper& x)
{
    const RunRow& r = x.r;
    Plan& p = x.run.plan;
    const SoftwareSettings& sw = x.sw;
    const std::string& rc = x.rc;
    if (r.sequence_parallel) {
        p.sequence_parallel = *r.sequence_parallel;
    } else if (rc.find("sequence parallel") != std::string::npos || rc.find("+ sp") != std::string::npos) {
        p.sequence_parallel = true;
        x.note("sequence_parallel not given: on (named in activation_recompute)");
    } else if (p.tp > 1 && sw.sequence_parallel_with_tp) {
        p.sequence_parallel = true;
        x.note("sequence_parallel not given: on (the software shards norms' activations with TP)");
    } else if (p.tp > 1 && sw.has_sequence_parallel && sw.framework == Framework::MegatronCore) {
        p.sequence_parallel = false;
        x.open.sequence_parallel = true;
    } else {
        p.sequence_parallel = false;
        if (p.tp > 1) {
            x.note(std::string("sequence_parallel not given: off") + (sw.has_sequence_parallel ? "" : " (the software predates it)"));
        }
    }
    if (p.sequence_parallel && p.tp < 2) {
        p.sequence_parallel = false;
        x.note("sequence parallelism needs tp >= 2: off");
    }
}

// Data-parallel sharding: ZeRO stage, distributed optimizer, FSDP (bool or sharding-group size).
void map_sharding(RowMapper& x)
{
    const RunRow& r = x.r;
    Plan& p = x.run.plan;
    const SoftwareSettings& sw = x.sw;
    OpenSettings& open = x.open;
    p.zero_stage = r.zero_stage.value_or(0);
    if (r.distributed_optimizer.value_or(false) && p.zero_stage == 0) {
        p.zero_stage = 1;
    }
    const int fsdp = fsdp_degree(r).value_or(0);
    if (fsdp >= 1) {
        p.zero_stage = 3;
        if (fsdp > 1 && fsdp < p.dp) {
            p.shard_group = fsdp;
            x.note("fsdp " + std::to_string(fsdp) + ": parameters sharded in groups of " + std::to_string(fsdp) +
                   " data-parallel ranks, replicated across");
        } else {
            x.note("fsdp: parameters, gradients and optimizer states sharded over the data-parallel group (ZeRO-3)");
        }
        open.activation_offload = sw.fsdp_offloads_activations && !r.activation_recompute;
    } else if (!r.zero_stage && !r.distributed_optimizer && (sw.distributed_optimizer || contains(r.software, "3d parallelism"))) {
        // DeepSpeed's "3D parallelism" is ZeRO-powered data parallelism with pipelining, which its pipeline
        // engine supports up to stage 1 (MT-NLG, Smith et al. 2022, Sec. 2); Megatron-Core recipes use the
        // distributed optimizer (the same sharding).
        p.zero_stage = std::max(p.zero_stage, 1);
        x.note("zero_stage not given: 1 (" +
               std::string(sw.distributed_optimizer ? "the software's distributed optimizer"
                                                    : "DeepSpeed 3D parallelism: ZeRO stage 1 data parallelism") +
               ")");
    }
    if (sw.framework == Framework::MegatronCore && p.zero_stage >= 1 && p.dp > 1) {
        open.overlap_param_gather = true;
    }
    if (p.zero_stage >= 3 && p.dp > 1) {
        // The fetch granularity is the framework's: DeepSpeed ZeRO-3 gathers submodule by submodule, PyTorch FSDP
        // (FSDP1 per wrapped block, FSDP2), torchtitan and Megatron-FSDP a layer at a time.
        if (sw.framework == Framework::MegatronDeepSpeed) {
            x.run.scenario.training.zero3_fetch = Zero3Fetch::Module;
            x.note("ZeRO-3 fetch: DeepSpeed's, one all-gather per submodule with weights (4 per layer), gradients reduce-scattered in 5e8-element "
                   "buckets (deepspeed/runtime/zero/config.py defaults)");
        } else {
            x.note(std::string("ZeRO-3 fetch: one all-gather per layer and pass (") +
                   (sw.framework == Framework::Unknown ? "framework not recognised: PyTorch FSDP's per-block unit taken"
                                                       : "the framework's per-layer unit") +
                   ")");
        }
    }
}

// The row's own words (software and notes), lowercased, for settings it names in prose.
std::string row_prose(const RunRow& r)
{
    std::string text = lowercase(r.software.value_or("").substr(0, 1000));
    for (const std::string& n : r.notes) {
        text += " | " + lowercase(n.substr(0, 1000));
    }
    return text;
}

// The expert dispatcher a row names: DeepEP or HybridEP (Megatron-Core's "flex" dispatcher), or the
// all-to-all dispatcher ("A2A", "alltoall").
std::optional<MoeDispatcher> dispatcher_named(const RunRow& r)
{
    const std::string text = row_prose(r);
    if (text.find("deepep") != std::string::npos || text.find("hybridep") != std::string::npos || text.find("hybrid-ep") != std::string::npos ||
        text.find("flex dispatcher") != std::string::npos) {
        return MoeDispatcher::Flex;
    }
    if (text.find("alltoall dispatcher") != std::string::npos || text.find("all-to-all dispatcher") != std::string::npos ||
        text.find("a2a dispatcher") != std::string::npos) {
        return MoeDispatcher::AllToAll;
    }
    return std::nullopt;
}

// Whether a row names the expert all-to-all overlap (Megatron-Core's merged 1F1B step), not negated.
bool names_a2a_overlap(const RunRow& r)
{
    const std::string text = row_prose(r);
    for (const char* phrase :
         {"1f1b overlap", "a2a overlap", "a2a_overlap", "overlap-moe-expert-parallel-comm", "overlap_moe_expert_parallel_comm"}) {
        const std::size_t at = text.find(phrase);
        if (at == std::string::npos) {
            continue;
        }
        const std::string before = text.substr(at >= 12 ? at - 12 : 0, at >= 12 ? 12 : at);
        if (before.find("no ") == std::string::npos && before.find("without") == std::string::npos && before.find("not ") == std::string::npos) {
            return true;
        }
    }
    return false;
}

// Expert parallelism, the recipe's MoE settings, and DeepSeek-V3's and async TP's overlaps.
void map_experts_and_overlap(RowMapper& x)
{
    const RunRow& r = x.r;
    const ModelSpec& m = x.run.scenario.model;
    Plan& p = x.run.plan;
    TrainingSpec& t = x.run.scenario.training;
    const SoftwareSettings& sw = x.sw;
    OpenSettings& open = x.open;
    if (m.moe.enabled()) {
        if (r.expert_tensor_parallel) {
            p.etp = *r.expert_tensor_parallel;
        } else if (const auto etp = derived_int(r, "expert_tensor_parallel_from_recipe", 1, 100000)) {
            p.etp = *etp;
            x.note("expert_tensor_parallel not printed: " + std::to_string(p.etp) + " (derived.expert_tensor_parallel_from_recipe)");
        } else if (p.tp > 1) {
            p.etp = 0;
            open.etp = true;
        }
        if (p.ep > 1 && sw.framework == Framework::MegatronCore) {
            open.moe_overlap = true;
        }
        if (sw.recipe_cuda_graphs) {
            t.cuda_graphs = *sw.recipe_cuda_graphs;
            if (sw.recipe_cuda_graph_scope != 0) {
                t.cuda_graph_scope = sw.recipe_cuda_graph_scope;
            }
        }
        open.cuda_graphs = sw.cuda_graphs_open;
        t.fused_grouped_mlp = sw.recipe_fused_grouped_mlp;
        if (sw.recipe_flex_dispatcher || sw.flex_moe_dispatcher) {
            t.moe_dispatcher = MoeDispatcher::Flex;
            x.note("expert dispatch through the performance preset's flex dispatcher (HybridEP/DeepEP): permutation fused, "
                   "one copy per remote NVLink domain");
        } else if (const auto named = dispatcher_named(r)) {
            // The row names its dispatcher (Megatron-Core --moe-token-dispatcher-type flex with
            // --moe-flex-dispatcher-backend deepep/hybridep, or alltoall).
            t.moe_dispatcher = *named;
            x.note(*named == MoeDispatcher::Flex ? "expert dispatch: the row names DeepEP/HybridEP (Megatron-Core's flex dispatcher): permutation "
                                                   "fused, one copy per remote NVLink domain"
                                                 : "expert dispatch: the row names the all-to-all dispatcher");
        }
        if (p.ep > 1 && names_a2a_overlap(r)) {
            // Megatron-Core --overlap-moe-expert-parallel-comm (Megatron-Bridge moe_a2a_overlap): the all-to-all of one
            // micro-batch runs beside another's compute in the merged 1F1B step.
            p.moe_overlap = true;
            open.moe_overlap = false;
            x.note("expert all-to-all overlapped: the row names the 1F1B all-to-all overlap");
        }
    }
    if (sw.framework == Framework::DeepSeekHaiLlm) {
        p.moe_overlap = true; // DeepSeek-V3 report Sec. 3.2.1: all-to-all hidden behind computation
        // Sec. 3.2.3: every RMSNorm and the MLA up-projections recomputed; Sec. 3.3.2: the MoE SwiGLU's input
        // cached in FP8, its output recomputed; AdamW moments in BF16 (master weights, gradients FP32).
        p.recompute_modules = kRecomputeLayernorm | kRecomputeMlaUpProj | kRecomputeMoeAct;
        t.bf16_optimizer_moments = true;
        x.note("HAI-LLM (DeepSeek-V3 Sec. 3.2.3, 3.3.2): RMSNorm, MLA up-projection and MoE SwiGLU recomputed, SwiGLU input in FP8, "
               "BF16 AdamW moments");
        // Sec. 3.2.2: each token crosses IB once per destination node, then NVLink forwards it.
        t.moe_dispatcher = MoeDispatcher::Flex;
        if (m.moe.enabled()) {
            x.note("expert dispatch deduplicated per node (DeepSeek-V3 report Sec. 3.2.2): flex dispatcher");
        }
    }
    if (contains(r.software, "async tp") || contains(r.software, "asynctp")) {
        p.tp_overlap = true;
        x.note("software names async TP: tensor-parallel communication overlapped with the GEMMs");
    } else if (sw.framework == Framework::MegatronCore && p.tp > 1) {
        open.tp_overlap = true;
    }
}

// The pipeline schedule, virtual stages, micro-batches per stage, and the layout.
Skip map_schedule(RowMapper& x)
{
    const RunRow& r = x.r;
    const ModelSpec& m = x.run.scenario.model;
    Plan& p = x.run.plan;
    const TrainingSpec& t = x.run.scenario.training;
    const SoftwareSettings& sw = x.sw;
    OpenSettings& open = x.open;
    Notes& notes = x.run.notes;
    const int micro_batches = t.global_batch % (p.dp * p.micro_batch) == 0 ? t.global_batch / (p.dp * p.micro_batch) : 0;
    (void)micro_batches;
    // ("1F1B non-interleaved" names the plain schedule.)
    const bool says_interleaved =
        (contains(r.pipeline_schedule, "interleav") && !contains(r.pipeline_schedule, "non-interleav")) || r.virtual_pipeline_stages.value_or(1) > 1;
    if (contains(r.pipeline_schedule, "dualpipe") && p.pp > 1) {
        // DeepSeek-V3 Sec. 3.2.1: bidirectional pipeline, bubble and memory in closed form (pipeline_schedule_dualpipe.cpp).
        p.schedule = Schedule::DualPipe;
        p.virtual_stages = 1;
        x.note("pipeline_schedule DualPipe: bubble (pp/2 - 1)(F&B + B - 3W), two parameter copies, pp + 1 activation sets (report Table 2)");
    } else if (p.pp == 1) {
        p.schedule = Schedule::OneFOneB;
        p.virtual_stages = 1;
    } else if (contains(r.pipeline_schedule, "gpipe")) {
        p.schedule = Schedule::GPipe;
    } else if (says_interleaved) {
        p.schedule = Schedule::Interleaved;
        if (r.virtual_pipeline_stages) {
            p.virtual_stages = *r.virtual_pipeline_stages;
        } else if (sw.default_interleaved_stages > 1) {
            p.virtual_stages = sw.default_interleaved_stages;
            x.note("virtual_pipeline_stages not given: " + std::to_string(p.virtual_stages) + " stages per rank (the software's default split)");
        } else {
            // Open: the candidates are every v > 1 dividing the layers per stage (validation_ranges.cpp).
            const int per_stage = m.layers % p.pp == 0 ? m.layers / p.pp : 0;
            int smallest = 0;
            for (int v = 2; v <= per_stage && smallest == 0; ++v) {
                smallest = per_stage % v == 0 ? v : 0;
            }
            if (smallest > 0) {
                p.virtual_stages = smallest;
                open.virtual_stages = true;
            } else {
                p.virtual_stages = 1;
                x.note("interleaving not possible for this shape: 1F1B");
            }
        }
        if (p.virtual_stages < 2) {
            p.schedule = Schedule::OneFOneB;
            p.virtual_stages = 1;
        }
    } else {
        p.schedule = Schedule::OneFOneB;
        if (!r.pipeline_schedule) {
            x.note("pipeline_schedule not given: 1F1B");
        }
    }
    if (open.micro_batch && sw.microbatches_are_stages && p.pp > 1) {
        const int stages = sw.microbatches_are_pp_ranks ? p.pp : p.pp * std::max(1, p.virtual_stages);
        const int per_replica = p.dp > 0 && t.global_batch % p.dp == 0 ? t.global_batch / p.dp : 0;
        if (per_replica > 0 && per_replica % stages == 0) {
            p.micro_batch = per_replica / stages;
            open.micro_batch = false;
            x.note("micro_batch_size not given: " + std::to_string(p.micro_batch) + " (the software splits the " + std::to_string(per_replica) +
                   " sequences per replica into one micro-batch per pipeline " + (sw.microbatches_are_pp_ranks ? "rank" : "stage") + ", " +
                   std::to_string(stages) + ")");
        }
    }
    // A layout the row states ("custom layout Et|(tt|)*30L") wins; else an even split or the frameworks' rule.
    if (r.pipeline_schedule) {
        const std::string& s = *r.pipeline_schedule;
        const auto at = lowercase(s).find("layout ");
        if (at != std::string::npos) {
            const auto begin = at + 7;
            const auto end = s.find(' ', begin);
            p.pipeline_layout = s.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
            x.note("pipeline layout " + p.pipeline_layout + " (as published)");
        }
    }
    if (p.pipeline_layout.empty()) {
        if (auto why = pipeline_split(m, p, notes)) {
            return *why;
        }
    }
    return std::nullopt;
}

// The candidates over what the row leaves open, then what the simulator cannot express: a row is skipped
// when no candidate is expressible, with the first candidate's reason.
Skip expand_and_check_candidates(RowMapper& x)
{
    MappedRun& run = x.run;
    const ClusterSpec& c = run.scenario.cluster;
    expand_candidates(run, x.open, x.sw);
    if (auto why = not_modeled_reason(run.scenario.model, run.scenario.training, run.plan)) {
        bool any = false;
        for (const auto& cand : run.candidates) {
            any = any || !not_modeled_reason(cand.scenario.model, cand.scenario.training, cand.plan);
        }
        if (!any) {
            return *why;
        }
    }
    if (run.metric != ValidationMetric::LayerTime) {
        std::optional<PlanRejection> first;
        bool any = false;
        for (const auto& cand : run.candidates) {
            auto rejection = check_plan(cand.scenario.model, cand.scenario.training, cand.plan, c.num_gpus);
            any = any || !rejection;
            if (rejection && !first) {
                first = rejection;
            }
        }
        if (!any) {
            return "plan refused: " + first->diagnostic.to_string();
        }
    }
    run.unscored_reason = documented_regression(x.r);
    if (!run.unscored_reason.empty()) {
        x.note("not scored or fitted, a documented software regression: " + run.unscored_reason);
    }
    return std::nullopt;
}

} // namespace

// One row -> a scenario and plan: the steps above in order, the model and the metric from the files named
// in validation_detail.h. Nothing here looks at a row's id or subset.
RowMapping map_run(const RunRow& r)
{
    RowMapper x{r, {}, {}, {}, {}};
    Skip why = model_of(r, x.run.scenario.model, x.run.notes);
    if (!why) {
        why = map_parallelism(x);
    }
    if (!why) {
        why = map_cluster(x);
    }
    if (!why) {
        map_software_and_precision(x);
        map_vocabulary(x); // after the software: whether the framework pads it
        why = map_training_mode(x);
    }
    if (!why) {
        why = map_batch(x);
    }
    if (!why) {
        why = map_recompute(x);
    }
    if (!why) {
        map_sequence_parallel(x);
        map_sharding(x);
        map_experts_and_overlap(x);
        why = map_schedule(x);
    }
    if (!why) {
        why = choose_metric(r, x.run);
    }
    if (!why) {
        why = expand_and_check_candidates(x);
    }
    RowMapping out;
    if (why) {
        out.skipped_reason = std::move(*why);
        return out;
    }
    out.run = std::move(x.run);
    return out;
}

} // namespace vtrain
