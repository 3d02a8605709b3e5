// SPDX-License-Identifier: MIT
#pragma once
// Internals of the validation mapping, one concern per file so that a reader finds where a row's default
// came from in one place:
//   validation_rows.cpp        reading rows (both formats, strict)
//   validation_vocabulary.cpp  gpu_type, precision + FP8 recipe, arch_family tokens and structured keys, fsdp
//   validation_sources.cpp     facts of a source's system and software (fabric, framework defaults)
//   validation_metrics.cpp     the measured quantity and its FLOP convention
//   validation_ranges.cpp      settings a row leaves open -> the candidates predicted over
//   validation_mapping.cpp     map_run: a row -> scenario + plan, composing the above
//   validate_runs.cpp          prediction over the candidates, scoring and the report
// Nothing here looks at a row's id or subset.
#include <optional>
#include <string>
#include <vector>

#include "vtrain/json_fields.h"
#include "vtrain/scenario.h"
#include "vtrain/validation.h"

namespace vtrain::validation_detail {

using json_fields::lowercase;
bool contains(const std::optional<std::string>& s, const char* what);
// The source a row belongs to for leave-one-source-out folds (`calibrate --folds source`, `validate --cv
// source`): its source_id, "unstated" when it has none.
inline std::string source_group_of(const RunRow& r)
{
    return r.source_id && !r.source_id->empty() ? *r.source_id : std::string("unstated");
}
int round_up(int v, int multiple);

using Notes = std::vector<std::string>;

// --- vocabularies (validation_vocabulary.cpp) ---------------------------------------------------------
// The profile id of a row's gpu_type: a canonical id as is, free text by its model name.
std::string gpu_profile_id(const RunRow& r, Notes& notes);

// Precision and FP8 recipe: `precision` (canonical or free text), the recipe from notes[0]. nullopt =
// not stated (the software's default applies).
struct PrecisionChoice {
    std::optional<Precision> precision;
    std::optional<Fp8Recipe> recipe;  // stated recipe (fp8 only)
    std::string recipe_text;          // how notes[0] names it
    bool recipe_approximated = false; // a recipe the simulator has no exact counterpart for
    bool recipe_on_hopper = false;    // MXFP8 named for a pre-Blackwell GPU: blockwise there
};
PrecisionChoice precision_of(const RunRow& r);

// The modules a "selective: ..." activation_recompute names (Megatron-Core's --recompute-modules, or a
// report's prose for them): nullopt when it names none, which is Megatron's default list, the attention
// core alone. A list without the attention core replaces that default.
struct SelectiveModules {
    bool core_attn = false;             // the attention core (Recompute::Selective)
    unsigned bits = 0;                  // kRecompute* modules the simulator costs
    std::vector<std::string> unmodeled; // named modules it does not cost (the dense layers' MLP, ...)
    std::vector<std::string> names;     // every module recognised, in the row's order
};
std::optional<SelectiveModules> selective_modules(const std::string& activation_recompute);

// The model of a row: dimensions, then arch_family tokens, overridden by the structured keys where set.
// Returns a skip reason when the row's model cannot be expressed.
std::optional<std::string> model_of(const RunRow& r, ModelSpec& m, Notes& notes);

// A published configuration for a row that names its model but gives no dimensions
// (validation_model_configs.cpp); false when the row has dimensions or the model is not known.
bool published_model_config(const RunRow& r, ModelSpec& m, Notes& notes);
// Published dimensions a row with its own dimensions has no key for (Mamba-2 widths, the tokenizer's
// vocabulary), for a model named in validation_model_configs.cpp; nothing for other models.
void published_model_details(const RunRow& r, ModelSpec& m, Notes& notes);

// Multi-token-prediction modules a row's model trains (validation_model_configs.cpp): what its name says
// ("w/ MTP", "w/o MTP", "no MTP"), else its family's published configuration (DeepSeek-V3: one module).
int published_mtp_layers(const RunRow& r, const ModelSpec& m, Notes& notes);
// The GPU a Megatron-Bridge performance preset is named for ("gb200", "b200", "h100"), by gpu_type; nullptr
// for another part (validation_vocabulary.cpp).
const char* preset_gpu(const RunRow& r);
// The row names a DeepSeek-V3 model (DeepSeek's own or Megatron-Bridge's "DeepSeekV3"), by model_name.
bool is_deepseek_v3(const RunRow& r);
// The row names a Qwen3 mixture-of-experts model (235B-A22B, 30B-A3B), by model_name.
bool is_qwen3_moe(const RunRow& r);
// The README's convention: vendor MoE benchmarks are dropless unless the model name says "tokendrop".
bool names_token_drop(const RunRow& r);

// GPT-OSS (validation_gpt_oss.cpp): the row names a GPT-OSS model; its provider's linear biases and activation
// clamp; the Megatron-Bridge performance preset its layout matches, written into the software settings.
bool is_gpt_oss(const RunRow& r);
void gpt_oss_model_details(const RunRow& r, ModelSpec& m, Notes& notes);
struct SoftwareSettings;
void gpt_oss_recipe(const RunRow& r, SoftwareSettings& s);

// What a row says about fine-tuning (model_name, software, source_ref and notes): the mode, LoRA's rank and
// target modules where stated, whether samples are packed; a skip reason for a method the simulator lacks
// (QLoRA's quantized base, DoRA, PEFT without a method named).
struct FineTuningChoice {
    TrainingMode mode = TrainingMode::Pretrain;
    std::optional<int> rank;
    unsigned targets = 0; // LoraTarget bits named, 0 = none named
    std::optional<bool> packing;
    std::string evidence; // the words that decided it, for the notes
    std::string skip_reason;
};
FineTuningChoice fine_tuning_of(const RunRow& r);

// fsdp as bool or integer: 0 none, 1 the whole data-parallel group, k > 1 a sharding group of k.
std::optional<int> fsdp_degree(const RunRow& r);

// A software regression its maintainers document for the row's model, GPU and release (validation_sources.cpp):
// the row is still predicted and listed, but it is neither scored nor fitted, since the simulator predicts
// the software working as intended. Empty when none applies.
std::string documented_regression(const RunRow& r);

// --- source and software facts (validation_sources.cpp) -----------------------------------------------
enum class Framework { MegatronDeepSpeed, Megatron2021, Megatron2022, MegatronCore, Torchtitan, DeepSeekHaiLlm, Unknown };

struct SoftwareSettings {
    Framework framework = Framework::Unknown;
    bool overlap_grad_reduce = true;
    double grad_accumulation_bytes = 0; // see TrainingSpec::grad_accumulation_bytes
    AttentionKernel attention = AttentionKernel::Flash;
    Precision precision = Precision::Bf16;
    Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;                    // the framework's FP8 default when the row names none
    bool has_sequence_parallel = true;                            // the framework has Megatron-style sequence parallelism
    bool has_selective_recompute = true;                          // it can recompute the attention core alone (Megatron-LM >= 2022)
    bool sequence_parallel_with_tp = false;                       // it is always on with tp > 1 (torchtitan's TP plan)
    bool distributed_optimizer = false;                           // optimizer states sharded over data parallelism by default
    bool no_grad_accumulation = false;                            // the global batch is local batch x dp (torchtitan 2024-25)
    bool bf16_gradients = false;                                  // gradients kept and reduced in bf16 (TrainingSpec::bf16_gradients)
    bool fp8_param_gather = false;                                // per-tensor FP8 recipes keep and gather FP8 weights only (TrainingSpec)
    int current_scaling_bf16_edge_layers = 0;                     // FP8 current scaling keeps the first/last n layers in BF16 (TrainingSpec)
    bool eager_elementwise = false;                               // elementwise ops as eager PyTorch sequences (TrainingSpec)
    PipelineRuntime pipeline_runtime = PipelineRuntime::Megatron; // whose schedules order the pipeline (TrainingSpec)
    bool tp_overlap_forward_only = false;                         // its TP overlap (async TP) hides forward traffic only (TrainingSpec)
    double hopper_attention_peak_fraction = 0; // its attention kernel's best fraction of peak on Hopper (TrainingSpec::attention_peak_fraction)
    double blackwell_ssd_scan_time_factor =
        1; // its Mamba-2 SSD kernels on Blackwell over the batched-GEMM table (TrainingSpec::ssd_scan_time_factor)
    // Pipeline defaults where a row leaves them out: stages per rank of an interleaved schedule (0 = not
    // documented), and micro-batches per iteration = the number of pipeline stages (pp x stages per rank).
    int default_interleaved_stages = 0;
    bool microbatches_are_stages = false;
    bool microbatches_are_pp_ranks = false; // ... counting pipeline ranks only, not virtual stages (torchtitan before 2025-01)
    // The values a framework's documented recipes use for settings the rows leave out: the centre of a
    // row's range where they fit in memory (the other values stay in the range). nullopt = not documented.
    std::optional<Recompute> recipe_recompute;
    std::optional<bool> recipe_sequence_parallel;
    std::optional<bool> recipe_overlap_param_gather;
    std::optional<bool> recipe_tp_overlap;
    // Its FSDP recipes offload some layers' activations to host memory instead of recomputing them.
    bool fsdp_offloads_activations = false;
    unsigned recipe_recompute_modules = 0;  // kRecompute* bits the recipe's selective recompute names
    std::optional<bool> recipe_moe_overlap; // expert all-to-all overlap of the recipe preset the row's layout matches
    bool recipe_flex_dispatcher = false;    // that preset dispatches through DeepEP / HybridEP (flex dispatcher)
    std::string description;
    bool flex_moe_dispatcher = false;             // the recipes dispatch experts with DeepEP/HybridEP (TrainingSpec::moe_dispatcher)
    std::optional<CudaGraphs> recipe_cuda_graphs; // the CUDA graphs of the row's preset in the row's release (TrainingSpec::cuda_graphs)
    bool cuda_graphs_open = false;                // the row's preset version (and so its CUDA graphs) is not the one documented: a range
    bool recipe_fused_grouped_mlp = false;        // the release's preset runs TE's CuTeDSL fused grouped MLP (TrainingSpec::fused_grouped_mlp)
    bool overlap_p2p_interleaved = false;         // its interleaved schedules post pipeline sends asynchronously (TrainingSpec::overlap_p2p)
    bool te_cross_entropy = false;                // its recipe's loss is Transformer Engine's fused cross-entropy (TrainingSpec::te_cross_entropy)
    unsigned recipe_cuda_graph_scope = 0;         // with recipe_cuda_graphs Scoped: the preset's CudaGraphScope bits (0 = the default scope)
    bool recipe_recompute_known = false;          // the row's layout is a preset that states its recompute: recipe_recompute, not a range
};
SoftwareSettings software_settings(const RunRow& r);
// Sets a run's precision and what follows from it under the software's recipes: the FP8 recipe (the row's,
// else the software's), torchao's axiswise casts, bf16 gradients, FP8 parameter gather, BF16 edge layers
// (validation_mapping.cpp; the precision range of validation_ranges.cpp applies it per candidate).
void apply_precision(TrainingSpec& t, Precision precision, const SoftwareSettings& sw, const PrecisionChoice& pc);

struct NetworkFacts {
    std::optional<int> nics_per_node;
    std::optional<double> nic_gbit_per_s;
    int nvlink_domain_gpus = 0;
    std::string description;
};
NetworkFacts network_facts(const RunRow& r, int gpus_per_node);

// A scale-out rate as a row writes it ("8x400Gb/s", "InfiniBand 8x50 GB/s per node", "IB (50 GB/s) per
// GPU", "3.2 Tbps per node", "400G"). Units are read case-sensitively: b = bits, B = bytes (GB/s is 8 x
// Gb/s); G = 1e9, T = 1e12, M = 1e6; a bare "400G" is Ethernet/InfiniBand port naming (Gb/s). GT/s is a
// signalling rate (PCIe lanes), not a NIC's, and is not read. Without a number, the InfiniBand generation
// names its 4x port rate (EDR 100, HDR 200, NDR 400, XDR 800 Gb/s).
struct NetworkRate {
    std::optional<int> count; // "8x" / "8 x" / "8 ×" before the rate: NICs per node
    double gbit_per_s = 0;    // one NIC's line rate (a node's total when node_total)
    bool per_gpu = false;     // "per GPU": one NIC per GPU at that rate
    bool node_total = false;  // "per node" without a count: the node's aggregate
    std::string as_written;   // the number and unit read, e.g. "50 GB/s"
};
std::optional<NetworkRate> parse_network_rate(const std::string& text);

// --- metrics (validation_metrics.cpp) ------------------------------------------------------------------
// Chooses the measured quantity: iteration time, else tokens/s per GPU (a derived. value where
// primary_metric names one), else TFLOP/s, MFU or HFU under a convention the tool reproduces, else one
// layer's time. Returns a skip reason when none can be scored.
std::optional<std::string> choose_metric(const RunRow& r, MappedRun& run);
std::optional<FlopConvention> detect_convention(const RunRow& r, bool hardware);
double convention_flops(FlopConvention c, const ModelSpec& m, const TrainingSpec& t, Recompute recompute);
// Why a row's FLOP convention cannot be reproduced for its model and training mode, or none.
std::optional<std::string> convention_not_reproduced(FlopConvention c, const ModelSpec& m, const TrainingSpec& t);

// --- ranges (validation_ranges.cpp) ---------------------------------------------------------------------
// What the mapping knows about each open setting before it expands the candidates.
struct OpenSettings {
    bool micro_batch = false; // not stated and not derivable
    bool recompute = false;
    bool sequence_parallel = false;
    bool etp = false;
    bool virtual_stages = false; // interleaved, v not stated
    bool overlap_param_gather = false;
    bool tp_overlap = false;
    bool moe_overlap = false;
    bool activation_offload = false;         // share of layers whose activations go to host memory
    bool cuda_graphs = false;                // none or the preset's scoped graphs (TrainingSpec::cuda_graphs)
    bool precision = false;                  // not stated: every training precision the GPU has a rate for
    bool lora_targets = false;               // LoRA without named target modules: qkv only or every linear layer
    bool lora_targets_preferred_qkv = false; // ... the performance recipes' qkv-only is the documented value
};
// Expands run.scenario/run.plan into run.candidates over the open settings (each value legal for the
// row's shape), and writes one line per open setting into run.open_settings and the notes.
void expand_candidates(MappedRun& run, const OpenSettings& open, const SoftwareSettings& sw);

// An even split, or the layout Megatron-Core / torchtitan use when layers do not divide into pp x v
// chunks (embedding and loss counted as one layer each). Returns a skip reason when neither fits.
std::optional<std::string> pipeline_split(const ModelSpec& m, Plan& p, Notes& notes);

} // namespace vtrain::validation_detail
