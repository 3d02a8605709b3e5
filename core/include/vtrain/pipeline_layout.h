// SPDX-License-Identifier: MIT
#pragma once
// Which layers each pipeline stage (and each of its virtual chunks) holds: an even split, Megatron's
// uneven first/last-stage counts (--decoder-first/last-pipeline-num-layers), or an explicit layout in
// Megatron's --pipeline-model-parallel-layout syntax (megatron/core/transformer/
// pipeline_parallel_layer_layout.py, MCore v0.13): virtual stages separated by '|', 'E' embedding,
// 't' decoder layer, 'm' multi-token-prediction layer, 'L' loss (output layer), "x*n" repeats a symbol,
// "(...)*n" a group; commas and spaces are cosmetic; empty stages are allowed. Virtual stage i runs on
// pipeline rank i % pp as its chunk i / pp.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "vtrain/scenario.h"

namespace vtrain {

// Bounds of a layout string (checked before it is expanded): its length, and the nesting of its groups,
// which the expander follows by recursion. A layout may expand to at most kMaxPipelineLayoutSymbols
// symbols, so no longer text can be a layout.
constexpr std::size_t kMaxPipelineLayoutSymbols = std::size_t{1} << 20;
constexpr int kMaxPipelineLayoutDepth = 32;

struct VirtualStage {
    int first_layer = 0; // index of its first decoder layer
    int layers = 0;      // decoder layers it holds
    int mtp_layers = 0;  // multi-token-prediction modules it holds
    bool embedding = false;
    bool loss = false; // final norm, output layer and cross-entropy
};

struct PipelineLayout {
    int stages = 1;                           // pipeline ranks (pp)
    int chunks = 1;                           // virtual stages per rank
    std::vector<VirtualStage> virtual_stages; // index chunk * stages + stage

    const VirtualStage& at(int stage, int chunk) const { return virtual_stages[static_cast<std::size_t>(chunk) * stages + stage]; }
    int stage_layers(int stage) const;
    int stage_mtp_layers(int stage) const;
};

// Chunks per rank the plan's schedule runs (virtual_stages with the interleaved schedule, else 1).
inline int plan_chunks(const Plan& p)
{
    return p.schedule == Schedule::Interleaved ? p.virtual_stages : 1;
}

// The plan's layout, written into `out` (its vectors are reused: no allocation once warm). Returns why
// the plan's layout fields cannot hold the model ("layout has 30 't' but the model has 32 layers"), or
// nothing when they can.
std::optional<std::string> resolve_pipeline_layout(const ModelSpec& model, const Plan& plan, PipelineLayout& out);

// The layout Megatron-Bridge uses when pp x v virtual stages do not divide the decoder layers but do divide
// layers + 2 (the embedding and the loss each take a layer's place: first stage E + (n - 1) layers, last
// (n - 1) layers + L, n in every other) or layers + 1 (only the loss counts: last stage n - 1 layers + L),
// in --pipeline-model-parallel-layout syntax; MTP modules ride in the last stage. Empty when the layers
// split evenly (no layout needed) or neither count divides. Qwen3-235B-A22B's 94 layers on pp 8 x v 3:
// "Et*3|(t*4|)*22t*3L" (Megatron-Bridge qwen3 performance recipe).
std::string balanced_pipeline_layout(int layers, int mtp_layers, int pp, int virtual_stages);

// The layouts the explorer tries when pp x v virtual stages do not divide the decoder layers (issue 15
// allows "a few standard layouts"), distinct and in this order: balanced_pipeline_layout() where it
// fits; the most even split with the one-layer-lighter stages taken from the ends inwards (last, first,
// second to last, ...); and DeepSeek-V3's shape, the heavier count on every stage but the last, which
// holds the rest (its PP16 layout for 61 layers is Et*4|(t*4|)*14t*1mL). Empty when the layers split
// evenly, or when there are more virtual stages than layers.
std::vector<std::string> standard_pipeline_layouts(int layers, int mtp_layers, int pp, int virtual_stages);

// A layout string with the given decoder layers per virtual stage (E on the first, MTP modules and L on
// the last), equal neighbours written as a repeat: {4, 4, 4, 1} with one MTP module is
// "Et*4|(t*4|)*1t*4|tmL".
std::string pipeline_layout_from_stage_layers(const std::vector<int>& layers, int mtp_layers);

// The virtual stages a layout string describes, in order (before mapping to ranks); why not when it
// does not parse.
std::optional<std::string> parse_pipeline_layout(const std::string& text, std::vector<VirtualStage>& out);

} // namespace vtrain
