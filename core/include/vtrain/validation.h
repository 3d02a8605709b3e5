// SPDX-License-Identifier: MIT
#pragma once
// Validation against published training runs (RUNS.json, the format of ../shared/validation/README.md):
// strict row parsing, the mapping of each row to a scenario and plan (with every default it had to use
// written into the row's notes), the row's FLOP convention, the prediction and its signed error, and the
// per-subset statistics. Rows that cannot be modeled are kept with the reason, never dropped.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/scenario.h"

namespace vtrain {

// One row of RUNS.json as published (null and absent fields are empty optionals). Both formats: the
// 63 keys of public_runs.json, and the 23 extra keys of modern_runs.json (absent = null).
struct RunRow {
    std::size_t index = 0; // position in the file
    std::string id;
    std::string subset;
    std::string primary_metric;
    std::optional<std::string> source_id, source_ref, trust, arch_family, model_name, gpu_type, system_name, intra_node_interconnect,
        inter_node_interconnect, pipeline_schedule, precision, activation_recompute, software, tflops_kind, flops_definition;
    std::optional<int> num_layers, hidden_size, num_attention_heads, num_query_groups, ffn_hidden_size, seq_length, vocab_size;
    std::optional<int> num_gpus, gpus_per_node, tp, pp, dp, cp, ep, virtual_pipeline_stages, micro_batch_size, global_batch_size, grad_accum_steps,
        zero_stage;
    std::optional<bool> sequence_parallel, distributed_optimizer, observed_oom;
    // fsdp: false/0 plain data parallelism, true/1 fully sharded over the data-parallel group, an integer > 1
    // the sharding-group size as the source prints it.
    std::optional<int> fsdp;
    std::optional<double> gpu_memory_gb, iteration_time_s, tflops_per_gpu, mfu_pct, hfu_pct, peak_memory_gb_per_gpu, layer_forward_ms,
        layer_backward_ms, layer_total_ms, peak_tflops_reference, tokens_per_sec_per_gpu, tokens_per_sec_total, samples_per_sec;
    // The modern set's extra keys (README "The extra keys").
    std::optional<int> num_experts, moe_top_k, moe_ffn_hidden_size, num_shared_experts, moe_shared_expert_ffn_hidden_size, moe_first_dense_layers,
        expert_tensor_parallel, kv_channels, mla_q_lora_rank, mla_kv_lora_rank, mla_qk_head_dim, mla_qk_rope_head_dim, mla_v_head_dim,
        attention_window, attention_window_every;
    std::optional<std::string> moe_layer_freq; // an int, or text such as "every layer is MoE (1)"
    std::optional<std::string> layer_pattern, normalization, ffn_activation, position_embedding;
    std::optional<bool> qkv_bias, qk_layernorm, tied_embeddings;
    nlohmann::json derived = nlohmann::json::object(); // our own arithmetic, as published in the file
    std::vector<std::string> notes;                    // notes[0] carries the FP8 recipe as published
};

// Strict: every row must be an object with a string "id", "subset" and "primary_metric"; every known
// field must have its type (or be null); unknown fields are refused (typos). Errors name the row's id
// (or its index) and the field.
Expected<std::vector<RunRow>> runs_from_json(const nlohmann::json& json);
Expected<std::vector<RunRow>> load_runs(const std::filesystem::path& path);

// --- FLOP conventions (per iteration) ------------------------------------------------------------
enum class FlopConvention { Sc21Eq3, KorthikantiModel, KorthikantiHardware, MegatronLmModel, MegatronLm2024Model, NemoFormulas, MegatronBridge };
const char* to_string(FlopConvention c);

// Narayanan et al. SC'21 Eq.(3): 96 B s l h^2 (1 + s/6h + V/16lh); GEMMs only, recompute forward included.
double sc21_eq3_flops(double batch, double seq, double layers, double hidden, double vocab);
// Korthikanti et al. 2022 Eq.(7): model FLOPs 72 B L s h^2 (1 + s/6h + v/12hL).
double korthikanti_model_flops(double batch, double layers, double seq, double hidden, double vocab);
// Korthikanti Eq.(8) hardware FLOPs: selective recompute adds the attention core (s/3h); full recompute
// adds a whole forward (which is SC'21 Eq.3); no recompute equals the model FLOPs.
double korthikanti_hardware_flops(double batch, double layers, double seq, double hidden, double vocab, Recompute recompute);

// Megatron-LM's --log-throughput model FLOPs (megatron/training/training.py, num_floating_point_operations,
// the transformer branch): 3 x 2 x GEMM FLOPs of dense and MoE MLPs (routed top-k + shared experts), GQA or
// MLA attention with the causal half of the core, MTP modules and the logits; recompute not counted.
// nullopt for hybrid (Mamba) stacks, which Megatron counts with another formula.
std::optional<double> megatron_lm_model_flops(const ModelSpec& m, double batch);

// The same function as Megatron-LM released it in 2024 (core_r0.5 to core_r0.10): the attention core counted
// over the full s x s matrix (s/h, not s/2h), every layer's MLP as top-k routed experts (+ shared experts):
// 12 B s L h^2 [(1 + g/a + s/h) q/h + (f/h) k glu + (f_shared/h) glu + V / (2 L h)]. nullopt for MLA and
// hybrid stacks, which that release counts another way.
std::optional<double> megatron_lm_2024_model_flops(const ModelSpec& m, double batch);

// NeMo 2's FLOPsMeasurementCallback formulas (nemo/utils/flops_formulas.py @ 034b17b, NeMo 24.12-25.07), by
// model family, each with the family's vocabulary from LLM_VOCAB_SIZE_MAP (not the model's): gpt3 (GPT,
// 51200), llama2 (32000) and llama3 (128256): B s L h^2 (12 + 12 g/a + 18 f/h + 12 s/h + 6 V/(L h)), nemotron
// (12 f/h, 256000), mixtral (18 k f/h, 32000). nullopt for a family it has no formula for (its deepseekv3
// does not run: it reads a field FLOPSConfig lacks).
std::optional<double> nemo_formula_model_flops(const std::string& model_name, const ModelSpec& m, double batch);

// Megatron-Bridge's num_floating_point_operations (src/megatron/bridge/training/utils/flop_utils.py, NeMo
// 25.09-26.08): Megatron-LM's transformer branch for transformer stacks, and for hybrid (Mamba) stacks its
// hybrid_flops: 3 x [attention 4 B s h p (h + h g/a + s/2), MLP 4 (f/h) glu B s h^2, MoE routed 4 B s h f k glu
// (LatentMoE: 4 B s l f k glu + 4 B s h l) + shared 4 B s h f_s glu, Mamba 2 B s h (4h + 2 G N + heads) +
// 7 B s 2h N + 4 B s h^2, logits 2 B s h V (1 + mtp)]. nullopt for sliding-window models (the window's count
// changed between releases: GPT-OSS 27.2 -> 32.6 GFLOP per token at 26.06).
std::optional<double> megatron_bridge_model_flops(const ModelSpec& m, double batch);

// --- Mapping a row to a scenario ------------------------------------------------------------------
enum class ValidationMetric { IterationTime, TokensPerSecPerGpu, TflopsPerGpu, MfuPct, HfuPct, LayerTime, PeakMemory, OutOfMemory };
const char* to_string(ValidationMetric m); // "iteration_time_s", "tflops_per_gpu", ...

// One value of the settings a row leaves open (see validation_ranges.cpp).
struct RunCandidate {
    Scenario scenario;
    Plan plan;
    std::string label;  // "micro_batch 2, recompute selective"; empty when nothing is open
    int departures = 0; // open settings away from the framework's documented value (0 = the recipe's own)
};

struct MappedRun {
    Scenario scenario; // model, cluster (with the source's network facts), training
    Plan plan;         // the first candidate (the documented default where there is one)
    // Every plausible value of the settings the row leaves open (the product of the open settings),
    // scenario/plan above included; one entry when the row states everything that changes the answer.
    std::vector<RunCandidate> candidates;
    std::vector<std::string> open_settings; // "micro_batch_size not given: {1, 2, 4, 8}"
    std::string profile_id;                 // e.g. "a100-sxm4-80gb"
    ValidationMetric metric = ValidationMetric::IterationTime;
    FlopConvention convention = FlopConvention::Sc21Eq3; // for TFLOP/s and MFU/HFU metrics
    double measured = 0;                                 // in the metric's unit (s, TFLOP/s, %, ms)
    double peak_tflops = 312;                            // the peak the row's percentages refer to
    std::vector<std::string> notes;                      // every default used for a setting the row leaves open
    bool memory_in_gib = false;                          // the source reports peak memory in GiB (its notes say so): compared in GiB, not GB
    // The row states no precision: its candidates span bf16, fp16, fp8 and nvfp4, and those the GPU profile
    // has no dense rate for are dropped when predicted (predict_candidate).
    bool precision_open = false;
    // Set when the row was measured inside a software regression its maintainers document: predicted and
    // listed, but neither scored nor used by calibrate.
    std::string unscored_reason;
};

// A mapped run, or why the row cannot be modeled.
struct RowMapping {
    std::optional<MappedRun> run;
    std::string skipped_reason;
};

// The GPU profile a row's gpu_type maps to ("" when none does). A100 rows whose memory variant is not
// stated map to a100-sxm4-80gb (the variant of Selene and of vTrain's reported cluster).
std::string profile_for_gpu_type(const std::string& gpu_type, std::optional<double> gpu_memory_gb, bool& defaulted);

RowMapping map_run(const RunRow& row);

// The prediction of a row over its candidates. Rule for the centre: the median of the candidates'
// predictions (the mean of the two middle ones for an even count), over the candidates the memory model
// says fit (all of them when none fits); low and high are the extremes of the same set. Candidates the
// simulator cannot express yet (not_modeled_reason) are dropped, each with its reason in `dropped`.
struct RangePrediction {
    double central = 0;
    double low = 0;
    double high = 0;
    int candidates = 0;                       // predicted and kept
    std::vector<std::string> dropped;         // "N of M candidates: reason", one line per reason
    std::vector<std::size_t> central_indices; // the candidate(s) at the centre: one, or the two middle ones
    // When a setting does not fit by the memory model: which were set aside, or that the centre itself does
    // not fit (predicted anyway, never moved to a setting the row does not state without saying so). Empty
    // when every setting fits.
    std::string memory_note;
    unsigned plausibility_flags = 0;       // the centre's plausibility flags (plausibility.h PlausibilityFlag bits)
    std::vector<std::string> plausibility; // ... and their reasons
};
std::optional<RangePrediction> predict_range(const MappedRun& run, const GpuProfile& profile, std::string& reason);

// --- Predicting and scoring -------------------------------------------------------------------------
struct RowResult {
    std::string id;
    std::string subset;
    std::string metric; // to_string(ValidationMetric), or the row's primary metric when skipped
    std::optional<double> measured;
    std::optional<double> predicted;
    std::optional<double> error_pct;                     // signed: (predicted - measured) / measured x 100
    std::optional<double> predicted_low, predicted_high; // the range over the row's open settings
    int candidates = 0;                                  // settings predicted (1 = nothing open)
    // The honest range (issue 28): the open-settings range widened by the profile's 80% band (a time x
    // [band low, band high], a throughput / [band high, band low]), and whether the measured value lies in
    // it. Time-like and throughput rows only (not memory).
    std::optional<double> range_low, range_high;
    std::optional<bool> in_range;
    // The centre's prediction with the profile's host CPU terms at both ends of their documented prior
    // (x/÷ kHostTermPriorWidth, uncertainty.h), low <= high; the honest range spans these too. Time-like and
    // throughput rows only.
    std::optional<double> host_low, host_high;
    std::string skipped_reason;  // empty when used
    std::string unscored_reason; // predicted but not scored (MappedRun::unscored_reason)
    std::string profile_id;
    std::vector<std::string> notes;
    bool memory = false; // a memory comparison (reported under "SUBSET:memory")
    // Plausibility flags of the prediction at the centre (plausibility.h PlausibilityFlag bits: MFU above
    // the best published run of the GPU and precision, far above or below its physical floors) and reasons.
    unsigned plausibility_flags = 0;
    std::vector<std::string> plausibility;
};

struct SubsetStats {
    int used = 0;
    int skipped = 0;
    int unscored = 0;      // predicted, not scored (RowResult::unscored_reason)
    double mape_pct = 0;   // mean |error|
    double median_pct = 0; // median |error|
    double max_pct = 0;    // largest |error|
    double bias_pct = 0;   // mean signed error
    int within_10pct = 0;  // rows with |error| <= 10%
    int off_by_2x = 0;     // rows predicted at least twice or at most half the measured value
    int range_rows = 0;    // scored rows with a range (RowResult::in_range set)
    int in_range = 0;      // of those, rows whose measured value lies in the band-widened range
};

struct ValidationOptions {
    std::string subset; // only rows of this subset; empty = all
    int threads = 0;    // 0 = all cores
};

struct ValidationReport {
    std::vector<RowResult> rows;                // one per row (and one more per memory or OOM observation)
    std::map<std::string, SubsetStats> subsets; // time metrics by subset; memory ones under "SUBSET:memory"
    SubsetStats overall;                        // every scored row of a time-like metric (memory left out)
    int rows_in_file = 0;                       // rows selected (time-like results)
    int rows_modeled = 0;                       // of those, predicted (scored, or listed as unscored)
    int rows_unscored = 0;                      // of the modeled, predicted but not scored (a documented regression)
    int rows_flagged = 0;                       // of the modeled, with a plausibility flag (RowResult::plausibility)
    std::map<std::string, int> skip_reasons;    // reason (row-specific numbers removed) -> rows
};

// A skip reason with the row-specific parts (numbers, quoted values) folded, for counting.
std::string skip_reason_class(const std::string& reason);

// `profiles` maps profile id to profile; rows whose profile is missing are skipped with that reason.
ValidationReport validate_runs(const std::vector<RunRow>& rows, const std::map<std::string, GpuProfile>& profiles,
                               const ValidationOptions& options = {});
// The same with the profile each row is predicted with chosen per row (the held-out fits of grouped
// validation): `profile_for(row, profile id)`, null to skip the row for want of a profile. Called from
// several threads at once.
using ProfileForRow = std::function<const GpuProfile*(const RunRow& row, const std::string& profile_id)>;
ValidationReport validate_runs(const std::vector<RunRow>& rows, const ProfileForRow& profile_for, const ValidationOptions& options = {});

// Predicts one mapped run's metric with a profile (its scenario and plan, the first candidate); nullopt
// with `reason` set when the plan is refused or not modeled.
std::optional<double> predict_run(const MappedRun& run, const GpuProfile& profile, std::string& reason);
// The same for one candidate (scenario + plan) of the run; `fits_memory` says whether it fits.
// `plausibility`, when given, receives the prediction's plausibility flags (simulate()'s).
struct PredictionPlausibility {
    unsigned flags = 0; // PlausibilityFlag bits
    std::vector<std::string> reasons;
};
// `peak_memory_gib` / `usable_memory_gib`: the largest stage's peak and the GPU's usable memory.
std::optional<double> predict_candidate(const MappedRun& run, const RunCandidate& candidate, const GpuProfile& profile, std::string& reason,
                                        bool* fits_memory = nullptr, double* peak_memory_gib = nullptr, double* usable_memory_gib = nullptr,
                                        PredictionPlausibility* plausibility = nullptr);

// The centre of `range` predicted with the profile's host CPU terms at ÷ and x kHostTermPriorWidth
// (uncertainty.h), as (low, high); nullopt for memory metrics or when either prediction fails.
std::optional<std::pair<double, double>> host_term_range(const MappedRun& run, const RangePrediction& range, const GpuProfile& profile);

// A row's range [low, high] of its metric widened by the profile's band (prediction_band): times scale by
// [band low, band high], throughputs by [1 / band high, 1 / band low]; nullopt for memory metrics.
std::optional<std::pair<double, double>> band_widened_range(ValidationMetric metric, double low, double high, const GpuProfile& profile);

// Statistics of signed errors in percent.
SubsetStats error_statistics(const std::vector<double>& errors_pct, int skipped = 0);

// {"rows": [...], "subsets": {...}} as `vtrain validate --json` prints it.
nlohmann::json validation_to_json(const ValidationReport& report);

// The MAPE targets (percent) of the subsets of the public validation sets (../shared/validation,
// issue 13 for the modern set), keyed by subset name or by a name prefix ending in '*'.
const std::map<std::string, double>& public_set_targets();
// The target for a subset (prefix entries included), or nullopt.
std::optional<double> target_for_subset(const std::string& subset);

} // namespace vtrain
