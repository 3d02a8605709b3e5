// SPDX-License-Identifier: MIT
#pragma once
// What fine-tuning changes in an iteration (TrainingSpec::mode, issue 29).
//
// Sft trains every weight: per token it costs what pretraining costs. What differs is the data: packed
// samples attend within themselves only (Megatron-Bridge packed sequences, THD layout with cu_seqlens), and
// padded samples compute seq_len tokens of which sample_tokens are useful.
//
// Lora freezes the base model and trains rank-r adapters W + (alpha/r) B A on the linear layers it targets
// (Hu et al. 2021, arXiv 2106.09685). A frozen weight needs no weight gradient: its backward is the data
// gradient alone, and it has no gradient buffer, no optimizer state, no fp32 master copy and nothing to
// reduce across data-parallel ranks. Each adapter runs x A then (x A) B forward and four skinny GEMMs
// backward (dB, d(xA), dA, dx). Tensor parallelism as Megatron-Bridge's ParallelLinearAdapter
// (src/megatron/bridge/peft/utils.py): on a column-parallel layer (qkv, fc1) A is split by rank (r/t rows)
// with its output all-gathered, B by output (out/t); on a row-parallel layer (proj, fc2) A is split by input
// (in/t) with its output all-reduced, B by output with its output all-gathered back to the full width.
#include <optional>
#include <string>
#include <vector>

#include "model/model_math.h"
#include "vtrain/scenario.h"

namespace vtrain {

// One adapter: the base layer's full input and output widths and how the base layer is split over tensor
// parallelism (row-parallel: its input is split, column-parallel: its output).
struct LoraAdapter {
    LoraTarget target = kLoraQkv;
    double in = 0;
    double out = 0;
    bool row_parallel = false;
};

// The adapters a layer of this kind carries (none unless mode is lora).
std::vector<LoraAdapter> lora_adapters(const ModelSpec& m, const TrainingSpec& t, const LayerKind& kind);
// Their parameters, unsharded: r x (in + out) each (A and B, no bias).
double lora_adapter_params(const ModelSpec& m, const TrainingSpec& t, const LayerKind& kind);

// Why a fine-tuning setting cannot be expressed for this model, or none: LoRA adapters on layers the cost
// model has no adapter path for (MLA projections, routed experts, Mamba mixers) are refused, not approximated.
std::optional<std::string> fine_tuning_not_modeled(const ModelSpec& m, const TrainingSpec& t);

// Share of each sequence's causal attention work that packing leaves: samples of sample_tokens attend within
// themselves, sum_i l_i^2 / 2 over s^2 / 2 = sample_tokens / seq_len (1 when not packed or not given).
double packed_attention_share(const ModelSpec& m, const TrainingSpec& t);

// Tokens an iteration learns from: global batch x seq_len, or x sample_tokens for padded samples.
double useful_tokens_per_iteration(const ModelSpec& m, const TrainingSpec& t);

// Model FLOPs of one iteration under the training mode (recompute not counted). Pretrain and Sft: 3 x the
// forward. Lora: the frozen GEMMs run forward and data gradient (2 x), the attention core, which has no weight,
// its full backward (3 x), and the adapters 3 x their forward; as Megatron-Bridge counts a LoRA run
// (flop_utils.py: model_flops_frozen x 2/3 + the attention core). Packed attention counts sample_tokens keys.
double mode_model_flops_per_iteration(const ModelSpec& m, const TrainingSpec& t);

} // namespace vtrain
