// SPDX-License-Identifier: MIT
// Facts of a row's source that the row itself does not repeat: how its training software behaves and the
// network of its system. Each is a documented property of a framework or a system (never of one row),
// and map_run writes the one it used into the row's notes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "validation/text_scan.h"
#include "validation/validation_detail.h"
#include "vtrain/scenario_json.h"

namespace vtrain::validation_detail {

namespace {

// Megatron-Bridge's performance presets for the MoE models (scripts/performance/configs/deepseek/
// deepseek_workload_base_configs.py @ 0426418 and configs/qwen/qwen3_workload_base_configs.py @ 01b2977):
// the parallel layout each one runs and the two settings the tables do not print, whether the expert
// all-to-all is overlapped (moe_a2a_overlap, WorkloadBaseConfig default False) and whether tokens go through
// the flex dispatcher (moe_flex_dispatcher_backend "hybridep"/"deepep" with dispatcher type "flex"; the
// Qwen3-235B B200/H100 presets set "alltoall"). A row is matched by its model, GPU and published layout.
//
// CUDA graphs per release (scoped: cuda_graph_impl "transformer_engine" with cuda_graph_scope attn /
// moe_router / moe_preprocess, as the Qwen3 GB200/B200 presets of qwen3_workload_base_configs.py @ 01b2977
// and DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_V1 of deepseek_workload_base_configs.py @ 0426418 set them; the
// DeepSeek-V3 B200/H100 and Qwen3 H100 FP8 / 235B B200 presets set none). From NeMo 26.06 the MXFP8 presets on GB200 run the
// "full-iteration" stack instead: cuda_graph_impl full_iteration with static, capacity-padded MoE shapes
// (moe_paged_stash, moe_expert_rank_capacity_factor 1.5), moe_a2a_overlap True, CuTeDSL fused grouped MLP
// and FP8 dot-product attention -- Megatron-Bridge PR #4249 "Enable Qwen3 GB200/GB300 MXFP8 CuTeDSL Fusion
// and Full-Iter CUDA Graphs for 26.06" and PR #4226 "DSV3 GB200 MXFP8 full-iter CG recipe" (merged
// 2026-06, both before the r26.06 cut); the Qwen3 B200 MXFP8 presets followed in 26.06.01 (PR #4606,
// release notes of Megatron-Bridge 0.5.1). full_graph_since is that first container as yymmpp (260600 =
// 26.06, 260601 = 26.06.01); 0 = not documented for the layout.
struct MoePreset {
    const char* model;  // "deepseek_v3", "qwen3_235b", "qwen3_30b"
    const char* gpu;    // "gb200", "b200", "h100"
    int tp, pp, vp, ep; // vp 0: none (no interleaving)
    int overlap;        // 1 on, 0 off, 2 on only under MXFP8 (the FP8_MX preset of the same layout)
    bool flex;
    bool scoped_graphs;   // the preset sets TE-scoped CUDA graphs (before its full-iteration release)
    int full_graph_since; // MXFP8: first container with the full-iteration stack (yymmpp), 0 none documented
    int mbs;              // the micro-batch of the preset version read: a row with another one ran another
                          // version, whose CUDA graphs are not known (WorkloadBaseConfig default 1)
};
constexpr MoePreset kMoePresets[] = {
    {"deepseek_v3", "gb200", 1, 4, 4, 64, 2, true, true, 260600, 1}, // GB200_V1/_BF16_V1 off; GB200_FP8_MX_V1 moe_a2a_overlap True
    {"deepseek_v3", "b200", 1, 16, 0, 8, 0, true, false, 0, 1},      // B200_V1 (hybridep, no CUDA graphs)
    {"deepseek_v3", "b200", 1, 8, 2, 32, 1, true, false, 0, 1},      // B200_FP8_MX_V2 (deepep, moe_a2a_overlap True)
    {"deepseek_v3", "h100", 2, 8, 4, 64, 0, true, false, 0, 1},      // H100_V1 (hybridep, no CUDA graphs)
    {"qwen3_235b", "gb200", 1, 8, 0, 8, 0, true, true, 0, 1},        // GB200_*_V1 (hybridep, flex)
    {"qwen3_235b", "gb200", 1, 8, 0, 32, 0, true, true, 0, 1},       // GB200_FP8_CS_V2
    {"qwen3_235b", "gb200", 1, 8, 3, 32, 0, true, true, 260600, 1},  // GB200_FP8_MX_V2
    {"qwen3_235b", "b200", 1, 8, 0, 8, 0, false, false, 0, 1},       // B200_*_V1 (alltoall)
    {"qwen3_235b", "b200", 1, 8, 4, 8, 0, false, false, 0, 1},       // B200_BF16_V1
    {"qwen3_235b", "h100", 2, 8, 4, 32, 1, false, false, 0, 1},      // H100_*_V1 (alltoall, moe_a2a_overlap True)
    {"qwen3_30b", "gb200", 1, 1, 0, 8, 0, true, true, 260600, 4},    // GB200_*_V1 (hybridep, flex)
    {"qwen3_30b", "b200", 1, 1, 0, 8, 0, true, true, 260601, 4},     // B200_*_V1
    {"qwen3_30b", "h100", 1, 1, 0, 16, 0, true, false, 0, 1},        // H100_FP8_CS_V1 (hybridep, moe_a2a_overlap False, no graphs)
};

// The NeMo container a row names ("... in NeMo 26.06.01 container") as yymmpp; 0 when it names none.
int nemo_container(const RunRow& r)
{
    if (!r.software || r.software->size() > 4096) {
        return 0;
    }
    return scan::nemo_version(*r.software).value_or(0);
}

// Regressions the framework's maintainers document, by model, GPU and NeMo container range (yymmpp). The
// simulator predicts the software as intended; a row measured inside such a window is not a measure of it.
struct DocumentedRegression {
    const char* model;   // as moe_preset names it
    const char* gpus[2]; // preset_gpu() values; {nullptr, nullptr}: every GPU
    int first_container, last_container;
    bool dropless_only;
    const char* what;
};
constexpr DocumentedRegression kDocumentedRegressions[] = {
    // NVIDIA-NeMo/Megatron-Bridge issue #1998 (2026-01-20, labels performance/release): "2X slower performance
    // in QWEN3 30B on H100 and B200 with the dropless schedule compared to the token-drop schedule ... the
    // perf in 25.11 is 2X slower than 25.09. We need to fix this in 26.02." The 26.02 tables keep the 25.11
    // layouts; 26.02.01 is the first release after it.
    {"qwen3_30b",
     {"h100", "b200"},
     251100,
     260200,
     true,
     "Megatron-Bridge issue #1998: Qwen3 30B dropless runs 2x slower on H100 and B200 from 25.11 (fix targeted at 26.02)"},
    // Megatron-Bridge docs/performance-summary-archive.md, 26.06.01 NeMo Container, footnote [^gpt-oss-note]:
    // "Performance regression in GPT-OSS 120B pre-training is a known issue
    // (https://github.com/NVIDIA/cudnn-frontend/issues/256). It will be resolved with the next container
    // release." It names no GPU: every GPU of that container.
    {"gpt_oss_120b",
     {nullptr, nullptr},
     260601,
     260601,
     false,
     "Megatron-Bridge 26.06.01 footnote: a known GPT-OSS 120B pre-training regression (cudnn-frontend issue 256), fixed in the next container"},
};

// The MoE model a row names, as the preset and regression tables key it; nullptr for another model.
const char* moe_model_key(const RunRow& r)
{
    return is_deepseek_v3(r) ? "deepseek_v3" : !is_qwen3_moe(r) ? nullptr : contains(r.model_name, "235b") ? "qwen3_235b" : "qwen3_30b";
}

const MoePreset* moe_preset(const RunRow& r)
{
    const char* model = moe_model_key(r);
    const char* gpu = preset_gpu(r);
    if (model == nullptr || gpu == nullptr) {
        return nullptr;
    }
    const int vp = r.virtual_pipeline_stages.value_or(1) > 1 ? *r.virtual_pipeline_stages : 0;
    for (const MoePreset& p : kMoePresets) {
        if (std::string(p.model) == model && std::string(p.gpu) == gpu && p.tp == r.tp.value_or(1) && p.pp == r.pp.value_or(1) && p.vp == vp &&
            p.ep == r.ep.value_or(1)) {
            return &p;
        }
    }
    return nullptr;
}

// Megatron-Core's DeepSeek-V3 GB200 optimization (Megatron Core dev blog "Optimizing DeepSeek-V3 Training
// Performance on NVIDIA GB200 NVL72", 2025, TP1 PP8 VPP4 EP32 on 256 GB200): its ladder turns on CUDA graphs
// (steps "CUDA Graphs", then "CUDA Graphs capture shared expert") and keeps them to the final configuration.
// The dropless-MoE scope (Megatron-Bridge docs, training/cuda-graphs: "dropless MoE: attn moe_router
// moe_preprocess"): the routed experts stay eager after the tokens-per-expert sync. Matched by software
// (Megatron-Core, not Bridge), model, GPU and layout.
bool mcore_dsv3_gb200_guide(const RunRow& r)
{
    const char* gpu = preset_gpu(r);
    return !contains(r.software, "megatron-bridge") && contains(r.software, "megatron-core") && is_deepseek_v3(r) && gpu != nullptr &&
           std::string(gpu) == "gb200" && r.tp.value_or(1) == 1 && r.pp.value_or(1) == 8 && r.virtual_pipeline_stages.value_or(1) == 4 &&
           r.ep.value_or(1) == 32;
}

// NeMo's recommended performance configuration of Qwen3-235B-A22B on GB200 in the 25.09 era (NVIDIA/NeMo
// scripts/performance/recommended_model_configs/model_configs_gb200.csv @ 06c0e70, row "pre_train,qwen3,235b_a22b":
// 64 GPUs, seq 4096, tp 2, pp 1, cp 1, ep 64, vp 1, mbs 1, gbs 1024, etp 1, cuda_graphs 1). cuda_graphs sets
// Megatron-Core's enable_cuda_graph (NeMo scripts/performance/helpers.py set_cuda_graph_configs; Megatron-Bridge's
// scripts/performance/utils/helpers.py set_cuda_graph_overrides of that era): the local CudaGraphManager, whose
// default scope "full" captures each transformer layer whole -- a MoE layer only with static expert shapes, which
// the "(tokendrop)" rows have (capacity 1.0, padded: apply_moe_token_drop). Matched by model, GPU, layout,
// micro-batch, token drop and a NeMo container up to 25.09.
bool nemo_whole_layer_graphs(const RunRow& r)
{
    const char* model = moe_model_key(r);
    const char* gpu = preset_gpu(r);
    const int container = nemo_container(r);
    return model != nullptr && gpu != nullptr && std::string(model) == "qwen3_235b" && std::string(gpu) == "gb200" && r.tp.value_or(1) == 2 &&
           r.pp.value_or(1) == 1 && r.ep.value_or(1) == 64 && r.micro_batch_size.value_or(0) == 1 && names_token_drop(r) && container > 0 &&
           container <= 250900;
}

// Megatron-Bridge's Nemotron 3 performance presets (scripts/performance/configs/nemotronh/
// nemotron_3_workload_base_configs.py @ f601ba9, whose Super layouts are the rows': GB200 tp 2 ep 64, B200
// ep 64; B200 NVFP4 at tp 2 from the later version that adds BASE_NEMOTRON_3_ULTRA_CONFIG, where
// NEMOTRON_3_SUPER_PRETRAIN_CONFIG_B200_NVFP4_V1 = BASE_..._B200 with tp 2, TE graphs, recompute_modules None).
// What each sets beyond the layout: cuda_graph_impl "transformer_engine" with its cuda_graph_scope or "none",
// recompute_modules (set_workload_base_configs makes them recompute_granularity "selective"; unset, the
// recipes' own None stays: no recompute), HybridEP on every one (moe_flex_dispatcher_backend "hybridep"),
// moe_a2a_overlap the WorkloadBaseConfig default False. A row is matched by model, GPU, tp, ep, micro-batch
// and precision.
struct NemotronPreset {
    const char* model; // "super", "nano"
    const char* gpu;   // "gb200", "b200", "h100"
    int tp, ep, mbs;
    const char* precision;       // "mxfp8", "nvfp4", "fp8" (any FP8 recipe), nullptr any
    unsigned graph_scope;        // CudaGraphScope bits of the TE graphs; 0 = cuda_graph_impl "none"
    unsigned recompute_modules;  // the kRecompute* bits of the preset's recompute_modules (core_attn: Recompute::Selective)
    const char* recompute_names; // the preset's recompute_modules as written; nullptr = none set (no recompute)
    const char* name;            // the preset and the version read
};
constexpr unsigned kNemotronGraphs = kGraphAttn | kGraphMamba | kGraphMoeRouter | kGraphMoePreprocess;
constexpr NemotronPreset kNemotronPresets[] = {
    // BASE_NEMOTRON_3_SUPER_CONFIG_GB200 = BASE (scope attn, mamba, moe_router, moe_preprocess) with tp 2.
    {"super", "gb200", 2, 64, 1, nullptr, kNemotronGraphs, 0, nullptr, "NEMOTRON_3_SUPER_PRETRAIN_CONFIG_GB200_*_V1 @ f601ba9"},
    // BASE_NEMOTRON_3_SUPER_CONFIG_B200: cuda_graph_impl "none", recompute_modules ["moe_act", "layernorm"].
    {"super", "b200", 1, 64, 1, "mxfp8", 0, kRecomputeMoeAct | kRecomputeLayernorm, "moe_act, layernorm",
     "NEMOTRON_3_SUPER_PRETRAIN_CONFIG_B200_FP8_MX_V1 @ f601ba9"},
    {"super", "b200", 2, 64, 1, "nvfp4", kNemotronGraphs, 0, nullptr,
     "NEMOTRON_3_SUPER_PRETRAIN_CONFIG_B200_NVFP4_V1 of the version adding BASE_NEMOTRON_3_ULTRA_CONFIG"},
    // NEMOTRON_3_NANO_PRETRAIN_CONFIG_{GB200,B200}_*_V1: BASE_NEMOTRON_3_NANO_CONFIG with micro_batch_size 2.
    {"nano", "gb200", 1, 8, 2, nullptr, kNemotronGraphs, 0, nullptr, "NEMOTRON_3_NANO_PRETRAIN_CONFIG_GB200_*_V1 @ f601ba9"},
    {"nano", "b200", 1, 8, 2, nullptr, kNemotronGraphs, 0, nullptr, "NEMOTRON_3_NANO_PRETRAIN_CONFIG_B200_*_V1 @ f601ba9"},
    // NEMOTRON_3_NANO_PRETRAIN_CONFIG_H100_FP8_CS_V1: 16 GPUs, ep 8, mbs 1, scope ["mamba"], recompute_modules
    // ["moe", "layernorm", "core_attn", "moe_act"] (core_attn: Recompute::Selective).
    {"nano", "h100", 1, 8, 1, "fp8", kGraphMamba, kRecomputeMoe | kRecomputeLayernorm | kRecomputeMoeAct, "moe, layernorm, core_attn, moe_act",
     "NEMOTRON_3_NANO_PRETRAIN_CONFIG_H100_FP8_CS_V1 @ f601ba9"},
};

const NemotronPreset* nemotron_preset(const RunRow& r)
{
    if (!contains(r.arch_family, "nemotron_h") || !contains(r.arch_family, "moe")) {
        return nullptr;
    }
    const char* model = contains(r.model_name, "super") ? "super" : contains(r.model_name, "nano") ? "nano" : nullptr;
    const char* gpu = preset_gpu(r);
    if (model == nullptr || gpu == nullptr) {
        return nullptr;
    }
    const PrecisionChoice pc = precision_of(r);
    const bool fp8 = pc.precision == Precision::Fp8;
    const bool mxfp8 = fp8 && pc.recipe == Fp8Recipe::Mxfp8;
    const bool nvfp4 = pc.precision == Precision::Nvfp4;
    for (const NemotronPreset& p : kNemotronPresets) {
        const std::string want = p.precision ? p.precision : "";
        const bool precision_ok = want.empty() || (want == "mxfp8" && mxfp8) || (want == "nvfp4" && nvfp4) || (want == "fp8" && fp8);
        if (std::string(p.model) == model && std::string(p.gpu) == gpu && p.tp == r.tp.value_or(1) && p.ep == r.ep.value_or(1) &&
            p.mbs == r.micro_batch_size.value_or(p.mbs) && precision_ok) {
            return &p;
        }
    }
    return nullptr;
}

} // namespace

std::string documented_regression(const RunRow& r)
{
    const char* model = is_gpt_oss(r) && contains(r.model_name, "120b") ? "gpt_oss_120b" : moe_model_key(r);
    const char* gpu = preset_gpu(r);
    const int container = nemo_container(r);
    if (model == nullptr || container == 0) {
        return {};
    }
    const bool dropless = !names_token_drop(r);
    for (const DocumentedRegression& d : kDocumentedRegressions) {
        auto names = [&](const char* listed) { return listed != nullptr && gpu != nullptr && std::string(listed) == gpu; };
        const bool gpu_ok = d.gpus[0] == nullptr || names(d.gpus[0]) || names(d.gpus[1]);
        if (std::string(model) == d.model && gpu_ok && container >= d.first_container && container <= d.last_container &&
            (dropless || !d.dropless_only)) {
            return d.what;
        }
    }
    return {};
}

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
        s.framework = Framework::MegatronDeepSpeed;
        s.has_sequence_parallel = false;   // sequence parallelism came with Megatron-LM 2022 (Korthikanti et al.)
        s.has_selective_recompute = false; // DeepSpeed's activation checkpointing recomputes whole layers
        s.description = "Megatron-DeepSpeed: gradient all-reduce after the backward (no overlap), unfused attention, fp16, "
                        "autograd gradient accumulation";
        return s;
    }
    if (contains(r.software, "megatron")) {
        const int y = scan::first_year(*r.software).value_or(0);
        if (y == 2021) {
            // Megatron-LM 2021 (SC'21): as below, and each micro-batch's fp16 weight gradients are added into
            // fp32 main_grad buffers by a separate kernel (10 bytes per parameter); the fused weight-gradient
            // accumulation came in 2022.
            s.overlap_grad_reduce = false;
            s.attention = AttentionKernel::Unfused;
            s.precision = Precision::Fp16;
            s.grad_accumulation_bytes = 10;
            s.framework = Framework::Megatron2021;
            s.has_sequence_parallel = false;
            s.has_selective_recompute = false; // --checkpoint-activations: whole layers (selective came in 2022)
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
            s.framework = Framework::Megatron2022;
            s.description = "Megatron-LM 2022: gradient all-reduce after the backward (no overlap), unfused attention, fp16, "
                            "fused gradient accumulation";
            return s;
        }
    }
    if (contains(r.software, "torchtitan")) {
        // torchtitan (PyTorch, 2024-25): FSDP2 prefetches and reduce-scatters during the passes; attention
        // through SDPA's flash kernel; bf16 mixed precision; its tensor-parallel plan shards the norms'
        // activations (SequenceParallel), so sequence parallelism is on whenever tp > 1; no gradient
        // accumulation unless configured (global batch = local batch x data-parallel degree); float8 through
        // torchao with tensorwise (dynamic per-tensor = current) scaling by default.
        s.framework = Framework::Torchtitan;
        s.overlap_grad_reduce = true;
        s.attention = AttentionKernel::Flash;
        s.precision = Precision::Bf16;
        s.fp8_recipe = Fp8Recipe::Current;
        s.sequence_parallel_with_tp = true;
        s.no_grad_accumulation = true;
        s.description = "torchtitan: FSDP2 overlapped with the passes, flash attention (SDPA), bf16, sequence parallelism with TP, "
                        "no gradient accumulation, torchao float8 tensorwise scaling";
        // Async TP: PyTorch reports up to ~29% (Llama3 8B) / ~20% (70B) forward-pass speedup but ~8% end to
        // end (discuss.pytorch.org/t/209487), and torchtitan's 2025-06 table 1.04-1.16x: what hiding the
        // forward passes' TP traffic alone gives, so the backward's stays exposed.
        s.tp_overlap_forward_only = true;
        // Pipelining without split points: 1 stage per rank for single-stage schedules, 2 for interleaved
        // ones ("this is the default if no pipeline split is specified", generate_split_points), and
        // pipeline_parallel_microbatches "will be the number of pipeline stages, if unspecified" (torchtitan
        // config_manager.py, 2024-12).
        s.default_interleaved_stages = 2;
        s.microbatches_are_stages = true;
        // Before torchtitan PR #781 (merged 2025-01-07, "fix num_microbatches input for PP": "PP is using the
        // pipeline_parallel_degree as the default number of microbatches when it should be
        // pipeline_parallel_degree * len(stages) for multi-stage schedules") an interleaved schedule ran
        // pp micro-batches, not one per virtual stage: releases dated 2024 keep that default.
        s.microbatches_are_pp_ranks = contains(r.software, "(2024/") || contains(r.software, "late 2024");
        // Its pipelines are torch.distributed.pipelining's schedules (torchtitan parallelize/pipeline_llama.py
        // build_pipeline_schedule), whose interleaved warm-up differs from Megatron-Core's (PipelineRuntime).
        s.pipeline_runtime = PipelineRuntime::PyTorch;
        // torch.compile fuses the norms, RoPE and SwiGLU; without it (training.compile defaults to false)
        // they run as eager op sequences (model/layer_builder.h, kEager*).
        s.eager_elementwise = !contains(r.software, "compile");
        s.description += s.eager_elementwise ? "; no torch.compile: eager elementwise kernels" : "; torch.compile: fused elementwise kernels";
        s.description += "; async TP hides forward TP traffic only";
        // torchtitan's attention is SDPA, whose flash backend is PyTorch's bundled FlashAttention-2
        // (FlashAttention-3 is a separate package torchtitan did not call in 2024-25; the 2025-06 nightly is
        // assumed to dispatch alike), which reaches 35% of H100 peak (Shah et al. 2024, arXiv 2407.08608,
        // abstract: "FlashAttention-2 achieving only 35% utilization on the H100 GPU").
        s.hopper_attention_peak_fraction = 0.35;
        s.description += "; SDPA flash attention = FlashAttention-2 (35% of H100 peak at best)";
        return s;
    }
    if (contains(r.software, "hai-llm")) {
        // DeepSeek's in-house framework (DeepSeek-V3 report Sec. 3.1-3.3): DualPipe, overlapped all-to-all,
        // fine-grained FP8 (blockwise), ZeRO-1.
        s.framework = Framework::DeepSeekHaiLlm;
        s.fp8_recipe = Fp8Recipe::Blockwise;
        s.distributed_optimizer = true;
        s.description = "HAI-LLM (DeepSeek-V3 report Sec. 3): DualPipe, overlapped expert all-to-all, blockwise FP8, ZeRO-1";
        return s;
    }
    if (contains(r.software, "megatron-bridge") || contains(r.software, "megatron-core") || contains(r.software, "mcore") ||
        contains(r.software, "nemo")) {
        // Megatron-Core as Megatron-Bridge's performance recipes run it (scripts/performance): distributed
        // optimizer, gradient reduce-scatter overlapped with the backward, fused gradient accumulation,
        // Transformer Engine fused (flash) attention, bf16. FP8 without a stated recipe: per-tensor current
        // scaling on every GPU. The pages' later tables label the same rows "FP8-CS (FP8-MX)", i.e. the main
        // value is current scaling and MXFP8 the parenthesised variant (or a row of its own, "MXFP8"); the
        // performance scripts' LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 (TP4 PP16 VP4) is the layout of
        // the unqualified "FP8" rows, FP8_MX_V2 (VP8) that of the "MXFP8" ones.
        s.framework = Framework::MegatronCore;
        s.overlap_grad_reduce = true;
        s.attention = AttentionKernel::Flash;
        s.precision = Precision::Bf16;
        s.fp8_recipe = Fp8Recipe::Current;
        s.distributed_optimizer = true;
        // Interleaved pipelines send asynchronously: Megatron-Bridge's CommOverlapConfig sets overlap_p2p_comm =
        // True and batch_p2p_comm = False whenever pp > 1 and vp > 1 (src/megatron/bridge/training/comm_overlap.py,
        // _get_model_comm_overlap_cfgs; NeMo's MegatronCommOverlapCallback the same), and Megatron-LM's own
        // default is the same (megatron/training/arguments.py: --no-overlap-p2p-communication, store_false into
        // overlap_p2p_comm), so Megatron-Core's interleaved schedule posts each send and waits for it only when
        // the buffer is needed again.
        s.overlap_p2p_interleaved = true;
        // What the performance recipes set and the tables do not print (Megatron-Bridge @ 067f987,
        // src/megatron/bridge/recipes/llama/llama3.py and scripts/performance/configs/llama/llama3(1)_llm_pretrain.py):
        // recompute_granularity None; sequence_parallel True with TP; ddp overlap_param_gather True;
        // CommOverlapConfig(tp_comm_overlap=True), turned off for NVFP4 (tp_comm_overlap = False if precision ==
        // "nvfp4"); grad_reduce_in_fp32 = False (bf16 gradients); the FP8 precision configs (delayed,
        // current scaling) set fp8_param_gather = True (training/mixed_precision.py).
        // These are the Llama 3 / 3.1 recipes' values: they apply to dense Llama-family models only (the
        // mixture-of-experts recipes set their own recompute modules and overlaps).
        s.description = "Megatron-Core (Megatron-Bridge performance recipes): distributed optimizer, overlapped gradient reduce-scatter, "
                        "fused gradient accumulation, TE fused attention, bf16";
        // Mamba-2's chunked scan runs as mamba_ssm's Triton SSD kernels (Megatron-Core ssm/mamba_mixer.py,
        // mamba_chunk_scan_combined). On Blackwell they are slower than the profile's batched-GEMM table says.
        // Evidence: Megatron-LM PR #5829 ("Introduce CuTe DSL kernel for Mamba2 SSD", 2026-07) measures the SSD
        // 1.44x faster with a fused CuTe DSL kernel (the Blackwell default it adds) and 5-7% faster Nemotron 3
        // Nano prefill at 2K-8K tokens: the Triton SSD is 16-21% of that forward pass (g = 1 - 1/1.05..1/1.07,
        // share = g / (1 - 1/1.44)). With the table's estimate this model gives it 4-6% of the same forward
        // (Nano in BF16 on one B200 or GB200, 2K and 8K tokens, the shipped profiles of 2026-11); 4x gives
        // 15-20%, and reproduces a 4.9-6.4% end-to-end gain from a 1.44x faster scan. No Hopper measurement:
        // there the table stands.
        s.blackwell_ssd_scan_time_factor = 4;
        if (contains(r.arch_family, "llama") && !r.num_experts && !contains(r.arch_family, "moe")) {
            s.bf16_gradients = true;
            s.fp8_param_gather = true;
            // bf16_with_fp8_current_scaling_mixed(): first_last_layers_bf16 = True, one layer at each end.
            s.current_scaling_bf16_edge_layers = 1;
            s.recipe_recompute = Recompute::None;
            s.recipe_sequence_parallel = true;
            s.recipe_overlap_param_gather = true;
            s.recipe_tp_overlap = !contains(r.precision, "nvfp4");
            // The Megatron-FSDP presets (use_megatron_fsdp=True) offload activations instead of recomputing:
            // cpu_offloading_num_layers 40 (GB200 FP8-CS), 20 (GB200 BF16), 5 (B200 FP8-CS) of Llama 3 70B's 80
            // (scripts/performance/configs/llama/llama3_workload_base_configs.py); the share is a range.
            s.fsdp_offloads_activations = true;
            // The loss: _llama3_common sets model_cfg.cross_entropy_fusion_impl = "te" (Megatron-Bridge
            // recipes/llama/llama3.py; the provider's cross_entropy_loss_fusion is True), as the Qwen3 and
            // DeepSeek-V3 recipes below do.
            if (contains(r.software, "megatron-bridge")) {
                s.te_cross_entropy = true;
                s.description += "; Transformer Engine's fused cross-entropy (cross_entropy_fusion_impl te)";
            }
            s.description += "; the Llama 3 recipes: bf16 gradients, FP8 weights gathered in FP8 (per-tensor recipes), FP8 current "
                             "scaling with the first and last layer in BF16, and as the "
                             "centre of a range where they fit no recompute, sequence parallelism, overlapped parameter gather, TP "
                             "communication overlap (not with NVFP4), and with Megatron-FSDP activation offload to host memory";
        }
        if (contains(r.software, "megatron-bridge") && is_deepseek_v3(r)) {
            // Megatron-Bridge's DeepSeek-V3 recipe (recipes/deepseek/deepseek_v3.py, ddp overlap_param_gather=True)
            // and performance scripts (scripts/performance/configs/deepseek/deepseek_llm_pretrain.py
            // set_deepseek_v3_common_configs: recompute_granularity "selective"; deepseek_workload_base_configs.py:
            // recompute_modules ["mla_up_proj"] in the GB200/B200/B300 presets, plus "mlp" (the 3 dense layers'
            // MLP, not modeled) on H100). The expert all-to-all overlap differs per GPU and precision: open.
            s.recipe_recompute = Recompute::Selective;
            s.recipe_recompute_modules = kRecomputeMlaUpProj;
            s.recipe_overlap_param_gather = true;
            s.description += "; the DeepSeek-V3 recipes: as the centre of a range where they fit selective recompute of the MLA "
                             "up-projections (recompute_modules mla_up_proj), overlapped parameter gather";
            // The loss: DeepSeekModelProvider sets cross_entropy_fusion_impl "te" with cross_entropy_loss_fusion True
            // (Megatron-Bridge models/deepseek/deepseek_provider.py; recipes/deepseek/deepseek_v3.py: "Default from
            // DeepSeekModelProvider"), as the 25.09-era configs/deepseek/deepseek_v3_llm_pretrain.yaml set explicitly.
            s.te_cross_entropy = true;
            s.description += ", Transformer Engine's fused cross-entropy (cross_entropy_fusion_impl te)";
        } else if (contains(r.software, "megatron-bridge") && is_qwen3_moe(r)) {
            // Megatron-Bridge's Qwen3 MoE recipes (recipes/qwen/qwen3_moe.py: ddp overlap_param_gather=True) as
            // the performance scripts run them (scripts/performance/configs/qwen/qwen3_llm_pretrain.py
            // set_qwen3_common_configs: recompute_granularity None, overriding the 30B-A3B recipe's full recompute).
            s.recipe_recompute = Recompute::None;
            s.recipe_overlap_param_gather = true;
            s.description += "; the Qwen3 MoE performance recipes: as the centre of a range where they fit no recompute, "
                             "overlapped parameter gather";
            // The loss: _qwen3_moe_common sets model_cfg.cross_entropy_fusion_impl = "te" on top of the provider's
            // cross_entropy_loss_fusion = True (Megatron-Bridge recipes/qwen/qwen3_moe.py, models/gpt_provider.py),
            // so Megatron-Core's compute_language_model_loss calls Transformer Engine's parallel_cross_entropy on the
            // bf16 logits (megatron/core/models/common/language_module/language_module.py).
            s.te_cross_entropy = true;
            s.description += ", Transformer Engine's fused cross-entropy (cross_entropy_fusion_impl te)";
        }
        if (const MoePreset* preset = contains(r.software, "megatron-bridge") ? moe_preset(r) : nullptr) {
            const bool mxfp8 = precision_of(r).recipe == Fp8Recipe::Mxfp8;
            const int container = nemo_container(r);
            const bool full_graph = mxfp8 && preset->full_graph_since > 0 && container >= preset->full_graph_since;
            s.recipe_moe_overlap = preset->overlap == 1 || (preset->overlap == 2 && mxfp8) || full_graph;
            s.recipe_flex_dispatcher = preset->flex;
            s.description += std::string("; the row's layout is a performance preset's: expert all-to-all ") +
                             (*s.recipe_moe_overlap ? "overlapped" : "not overlapped") + " (moe_a2a_overlap, the centre of its range), " +
                             (preset->flex ? "flex dispatcher (HybridEP/DeepEP)" : "alltoall dispatcher");
            if (!full_graph && r.micro_batch_size && *r.micro_batch_size != preset->mbs) {
                // Another version of the preset (its micro-batch differs from the one read): its CUDA graphs are
                // not documented here, so they are a range.
                s.cuda_graphs_open = true;
                s.description +=
                    "; the row's micro-batch is not the preset version's read (" + std::to_string(preset->mbs) + "): its CUDA graphs are open";
            } else if (full_graph) {
                s.recipe_cuda_graphs = CudaGraphs::FullIteration;
                s.recipe_fused_grouped_mlp = true; // cutedsl_fused_grouped_mlp=True, NVTE_CUTEDSL_FUSED_GROUPED_MLP=1
                s.description += "; NeMo " + std::to_string(container / 10000) + "." + (container / 100 % 100 < 10 ? "0" : "") +
                                 std::to_string(container / 100 % 100) +
                                 " runs the preset's MXFP8 full-iteration stack (Megatron-Bridge PR #4249 / #4226, from 26.06; "
                                 "PR #4606 B200 from 26.06.01): full-iteration CUDA graphs, expert all-to-all overlap, CuTeDSL "
                                 "fused grouped MLP (activation in the GEMM epilogue); its FP8 attention is not modeled";
            } else if (preset->scoped_graphs) {
                s.recipe_cuda_graphs = CudaGraphs::Scoped;
                s.description += "; Transformer Engine CUDA graphs of the preset's scopes (attn, moe_router, moe_preprocess)";
            }
        }
        if (mcore_dsv3_gb200_guide(r)) {
            s.recipe_cuda_graphs = CudaGraphs::Scoped;
            s.description += "; the Megatron-Core DeepSeek-V3 GB200 optimization's configuration: Transformer Engine CUDA graphs of "
                             "attn, moe_router, moe_preprocess (its ladder's \"CUDA Graphs\" steps)";
        }
        if (contains(r.software, "megatron-bridge") && nemo_whole_layer_graphs(r)) {
            s.recipe_cuda_graphs = CudaGraphs::Scoped;
            s.recipe_cuda_graph_scope = kGraphAttn | kGraphMoe;
            s.description += "; the row's layout is NeMo's recommended Qwen3-235B GB200 configuration of the 25.09 era "
                             "(scripts/performance/recommended_model_configs/model_configs_gb200.csv: cuda_graphs 1): Megatron-Core's "
                             "per-layer CUDA graphs (enable_cuda_graph, scope full) capture each layer whole, the padded MoE included";
        }
        gpt_oss_recipe(r, s);
        if (contains(r.arch_family, "nemotron_h") && contains(r.arch_family, "moe")) {
            // The Nemotron 3 (Nano, Super) performance configs dispatch experts with the flex dispatcher on
            // every GPU: BASE_NEMOTRON_3_NANO_CONFIG and BASE_NEMOTRON_3_SUPER_CONFIG set
            // moe_flex_dispatcher_backend="hybridep" (Megatron-Bridge
            // scripts/performance/configs/nemotronh/nemotron_3_workload_base_configs.py @ f601ba9, the version
            // whose Super layouts match the rows: GB200 tp 2 ep 64, B200 ep 64).
            s.flex_moe_dispatcher = true;
            s.description += "; the Nemotron 3 recipes: HybridEP flex expert dispatcher";
            if (const NemotronPreset* p = contains(r.software, "megatron-bridge") ? nemotron_preset(r) : nullptr) {
                // set_nemotron_3_{nano,super}_common_configs (configs/nemotronh/nemotron_3_llm_pretrain.py):
                // grad_reduce_in_fp32 False. The recipes (recipes/nemotronh/nemotron_3_{nano,super}.py): ddp
                // overlap_param_gather True; Super's comm_overlap stays _pretrain_common's None (no TP overlap),
                // Nano's CommOverlapConfig has tp_comm_overlap True. Sequence parallelism with tp > 1
                // (WorkloadBaseConfig.sequence_parallel).
                s.bf16_gradients = true;
                s.recipe_overlap_param_gather = true;
                s.recipe_sequence_parallel = true;
                s.recipe_tp_overlap = std::string(p->model) == "nano";
                s.recipe_moe_overlap = false;
                s.recipe_flex_dispatcher = true;
                // A recompute_modules list replaces Megatron's default (core_attn): the attention core is redone
                // only where the list names it (Recompute::Selective), the other modules by their bits.
                const bool core_attn = p->recompute_names && std::string(p->recompute_names).find("core_attn") != std::string::npos;
                s.recipe_recompute = core_attn ? Recompute::Selective : Recompute::None;
                s.recipe_recompute_modules = p->recompute_modules;
                s.recipe_recompute_known = true;
                s.recipe_cuda_graphs = p->graph_scope != 0 ? CudaGraphs::Scoped : CudaGraphs::None;
                s.recipe_cuda_graph_scope = p->graph_scope;
                std::string scope;
                for (const std::string& n : cuda_graph_scope_names(p->graph_scope)) {
                    scope += (scope.empty() ? "" : ", ") + n;
                }
                s.description += std::string("; the row's layout is Megatron-Bridge's ") + p->name +
                                 " (scripts/performance/configs/nemotronh/nemotron_3_workload_base_configs.py): " +
                                 (p->graph_scope ? "Transformer Engine CUDA graphs of " + scope : std::string("no CUDA graphs")) + ", " +
                                 (p->recompute_names ? std::string("selective recompute of ") + p->recompute_names : std::string("no recompute")) +
                                 ", bf16 gradient reduction, overlapped parameter gather, expert all-to-all not overlapped";
            }
        }
        return s;
    }
    s.description = "software not recognised: overlapped gradient reduction, flash attention, bf16 (today's Megatron-LM defaults)";
    return s;
}

void apply_precision(TrainingSpec& t, Precision precision, const SoftwareSettings& sw, const PrecisionChoice& pc)
{
    t.precision = precision;
    t.fp8_recipe = precision != Precision::Fp8 ? Fp8Recipe::Delayed : pc.recipe ? *pc.recipe : sw.fp8_recipe; // (the field's default off FP8)
    // torchao rowwise: axiswise scales computed per pass for input, weight and grad_output (model/low_precision.cpp).
    t.fp8_axiswise_casts = t.precision == Precision::Fp8 && pc.recipe && pc.recipe_approximated;
    t.bf16_gradients = sw.bf16_gradients && t.precision != Precision::Fp32;
    t.fp8_param_gather =
        sw.fp8_param_gather && t.precision == Precision::Fp8 && (t.fp8_recipe == Fp8Recipe::Current || t.fp8_recipe == Fp8Recipe::Delayed);
    t.bf16_edge_layers = t.precision == Precision::Fp8 && t.fp8_recipe == Fp8Recipe::Current ? sw.current_scaling_bf16_edge_layers : 0;
}

namespace {

// 400, 12.5, 3200: a rate as a reader writes it (no trailing zeros).
std::string number_text(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}
bool is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Whether `text` at `at` starts with `word` (exact case).
bool starts_with_at(const std::string& text, std::size_t at, std::string_view word)
{
    return text.size() >= at + word.size() && std::string_view(text).substr(at, word.size()) == word;
}

// The unit after a number at `at` ("Gb/s", "GB/s", "Gbps", "Gbit/s", "Tbps", "400G", ...): Gb/s per unit
// and the unit's length, or nothing when it is not a data rate (GT/s, GHz, a GPU count, ...).
std::optional<std::pair<double, std::size_t>> rate_unit(const std::string& text, std::size_t at, bool glued)
{
    if (at >= text.size()) {
        return std::nullopt;
    }
    double scale = 0;
    switch (text[at]) {
    case 'G':
    case 'g': scale = 1; break;
    case 'T':
    case 't': scale = 1000; break;
    case 'M': scale = 0.001; break;
    default: return std::nullopt;
    }
    std::size_t end = at + 1;
    const char kind = end < text.size() ? text[end] : ' ';
    if (kind == 'b') { // bits: Gb, Gb/s, Gbps, Gbit, Gbit/s, Gbits/s
        ++end;
    } else if (kind == 'B') { // bytes: GB, GB/s, GBps, GByte/s
        scale *= 8;
        ++end;
    } else if (!is_letter(kind) && glued && text[at] == 'G') {
        return std::make_pair(scale, std::size_t{1}); // "400G": port naming, gigabits
    } else {
        return std::nullopt; // GT/s (transfers), GHz, ...
    }
    for (const std::string_view tail : {"its/s", "it/s", "its", "it", "ytes/s", "yte/s", "ytes", "yte", "ps", "/s", "E"}) {
        if (starts_with_at(text, end, tail)) {
            end += tail.size();
            break;
        }
    }
    if (end < text.size() && is_letter(text[end])) {
        return std::nullopt; // part of a longer word
    }
    return std::make_pair(scale, end - at);
}

// The scope written after a rate: "per GPU" or "per node" (any case), whichever comes first.
void rate_scope(const std::string& text, std::size_t from, NetworkRate& out)
{
    const std::string rest = lowercase(text.substr(from, 200));
    const std::size_t gpu = rest.find("per gpu");
    const std::size_t node = rest.find("per node");
    out.per_gpu = gpu != std::string::npos && (node == std::string::npos || gpu < node);
    out.node_total = !out.per_gpu && node != std::string::npos;
}

} // namespace

std::optional<NetworkRate> parse_network_rate(const std::string& text_in)
{
    const std::string text = text_in.substr(0, 4096);
    std::optional<int> count;    // "8x" seen before the rate
    std::size_t after_count = 0; // where the text after that "x" starts
    for (std::size_t i = 0; i < text.size();) {
        const bool glued_to_word = i > 0 && i != after_count && (is_letter(text[i - 1]) || is_digit(text[i - 1]) || text[i - 1] == '.');
        if (!is_digit(text[i]) || glued_to_word) {
            ++i; // not a number's start (a model name such as CX7 or H100 ends in digits)
            continue;
        }
        const std::size_t start = i;
        while (i < text.size() && (is_digit(text[i]) || (text[i] == '.' && i + 1 < text.size() && is_digit(text[i + 1])))) {
            ++i;
        }
        if (i - start > 12) {
            continue;
        }
        const double value = std::stod(text.substr(start, i - start));
        const bool glued = i < text.size() && is_letter(text[i]);
        std::size_t j = i;
        while (j < text.size() && text[j] == ' ') {
            ++j;
        }
        // A count: "8x400", "8 x 50", "8x NVIDIA ...", "8×" (UTF-8 multiplication sign).
        const bool times_sign = starts_with_at(text, j, "\xc3\x97");
        if ((j < text.size() && (text[j] == 'x' || text[j] == 'X') && (j + 1 >= text.size() || !is_letter(text[j + 1]))) || times_sign) {
            if (value >= 1 && value <= 64 && value == std::floor(value)) {
                count = static_cast<int>(value);
            }
            i = j + (times_sign ? 2 : 1);
            after_count = i;
            continue;
        }
        const std::optional<std::pair<double, std::size_t>> unit = rate_unit(text, j, glued && j == i);
        if (!unit || value <= 0) {
            continue; // a number that is no rate ("+2 for storage", "16 GT/s") leaves an earlier count in place
        }
        NetworkRate out;
        out.count = count;
        out.gbit_per_s = value * unit->first;
        out.as_written = text.substr(start, j + unit->second - start);
        rate_scope(text, j + unit->second, out);
        return out;
    }
    // No rate written: the InfiniBand generation names its 4x port rate (InfiniBand Trade Association roadmap:
    // EDR 100, HDR 200, NDR 400, XDR 800 Gb/s), with any count before it.
    static constexpr std::pair<std::string_view, double> kGenerations[] = {{"EDR", 100}, {"HDR", 200}, {"NDR", 400}, {"XDR", 800}};
    for (const auto& [name, gbit] : kGenerations) {
        const std::size_t at = text.find(name);
        if (at != std::string::npos && (at == 0 || !is_letter(text[at - 1])) &&
            (at + name.size() >= text.size() || !is_letter(text[at + name.size()]))) {
            NetworkRate out;
            out.count = count;
            out.gbit_per_s = gbit;
            out.as_written = std::string(name) + " (" + number_text(gbit) + " Gb/s)";
            rate_scope(text, at + name.size(), out);
            return out;
        }
    }
    return std::nullopt;
}

NetworkFacts network_facts(const RunRow& r, int gpus_per_node)
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
    if (contains(r.gpu_type, "nvl72") || contains(r.system_name, "gb200") || contains(r.system_name, "nvl72")) {
        // GB200 NVL72 (README vocabulary; NVIDIA DGX GB200 datasheet): 72 GPUs in one NVLink domain, 4 per
        // compute tray, one 400 Gb/s ConnectX-7 per GPU for the scale-out fabric.
        f.nvlink_domain_gpus = 72;
        f.nics_per_node = std::max(1, gpus_per_node);
        f.nic_gbit_per_s = 400;
        f.description = "GB200 NVL72: 72-GPU NVLink domain, 1 x 400 Gb/s per GPU scale-out";
        return f;
    }
    if (contains(r.system_name, "dgx-h100") || contains(r.system_name, "dgx-b200") || contains(r.system_name, "dgx h100") ||
        contains(r.system_name, "dgx b200")) {
        // DGX H100 / DGX B200 user guides: 8 single-port 400 Gb/s ConnectX-7 for the compute fabric.
        f.nics_per_node = 8;
        f.nic_gbit_per_s = 400;
        f.description = "DGX H100/B200: 8 x 400 Gb/s ConnectX-7 per node";
        return f;
    }
    if (r.inter_node_interconnect) {
        const std::optional<NetworkRate> rate = parse_network_rate(*r.inter_node_interconnect);
        if (!rate) {
            return f;
        }
        std::string how;
        if (rate->per_gpu && gpus_per_node > 0) {
            f.nics_per_node = rate->count.value_or(1) * gpus_per_node;
            f.nic_gbit_per_s = rate->gbit_per_s;
            how = rate->count ? "per GPU" : "one per GPU";
        } else if (rate->count && !rate->per_gpu) {
            f.nics_per_node = *rate->count;
            f.nic_gbit_per_s = rate->gbit_per_s;
        } else if (rate->node_total && gpus_per_node > 0) {
            // A node's aggregate: one NIC per GPU (the DGX/HGX layout), the total split evenly.
            f.nics_per_node = gpus_per_node;
            f.nic_gbit_per_s = rate->gbit_per_s / gpus_per_node;
            how = "the node's total over one NIC per GPU";
        } else {
            // One NIC's rate without a count: the profile's NICs per node at that rate.
            f.nic_gbit_per_s = rate->gbit_per_s;
            how = "the profile's NIC count";
        }
        f.description = "inter_node_interconnect \"" + rate->as_written + "\" read as " +
                        (f.nics_per_node ? std::to_string(*f.nics_per_node) + " x " : std::string("NICs of ")) + number_text(*f.nic_gbit_per_s) +
                        " Gb/s per node" +
                        (f.nics_per_node ? " = " + number_text(*f.nics_per_node * *f.nic_gbit_per_s / 8) + " GB/s" : std::string()) +
                        (how.empty() ? std::string() : " (" + how + ")");
    }
    return f;
}

} // namespace vtrain::validation_detail
