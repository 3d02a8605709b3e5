// SPDX-License-Identifier: MIT
// The names of a scenario's enum values, both ways (files, launch flags and reports use the same words).
#include <string>
#include <utility>
#include <vector>

#include "vtrain/json_fields.h"
#include "vtrain/scenario_json.h"

namespace vtrain {

using json_fields::lowercase;

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
const char* to_string(Normalization v)
{
    return v == Normalization::LayerNorm ? "layernorm" : "rmsnorm";
}
const char* to_string(AttentionKernel v)
{
    return v == AttentionKernel::Flash ? "flash" : "unfused";
}
const char* to_string(MoeDispatcher v)
{
    return v == MoeDispatcher::Flex ? "flex" : "alltoall";
}
const char* to_string(CudaGraphs v)
{
    return v == CudaGraphs::FullIteration ? "full_iteration" : v == CudaGraphs::Scoped ? "scoped" : "none";
}
const char* to_string(TrainingMode v)
{
    return v == TrainingMode::Lora ? "lora" : v == TrainingMode::Sft ? "sft" : "pretrain";
}
const char* to_string(PipelineRuntime v)
{
    return v == PipelineRuntime::PyTorch ? "pytorch" : "megatron";
}
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
const char* to_string(ContextParallelKind v)
{
    return v == ContextParallelKind::Ring ? "ring" : "all_to_all";
}
const char* to_string(Schedule v)
{
    switch (v) {
    case Schedule::GPipe: return "gpipe";
    case Schedule::OneFOneB: return "1f1b";
    case Schedule::Interleaved: return "interleaved";
    case Schedule::DualPipe: return "dualpipe";
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
    const std::string v = lowercase(s);
    if (v == "gpipe") {
        return Schedule::GPipe;
    }
    if (v == "1f1b" || v == "pipedream-flush") {
        return Schedule::OneFOneB;
    }
    if (v == "interleaved" || v == "interleaved-1f1b") {
        return Schedule::Interleaved;
    }
    if (v == "dualpipe") {
        return Schedule::DualPipe;
    }
    return std::nullopt;
}

std::optional<Recompute> recompute_from_string(const std::string& s)
{
    const std::string v = lowercase(s);
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

std::optional<Precision> precision_from_string(const std::string& s)
{
    const std::string v = lowercase(s);
    if (v == "bf16") {
        return Precision::Bf16;
    }
    if (v == "fp16") {
        return Precision::Fp16;
    }
    if (v == "fp32") {
        return Precision::Fp32;
    }
    if (v == "fp8") {
        return Precision::Fp8;
    }
    if (v == "nvfp4" || v == "fp4") {
        return Precision::Nvfp4;
    }
    return std::nullopt;
}

std::optional<TrainingMode> training_mode_from_string(const std::string& s)
{
    const std::string v = lowercase(s);
    if (v == "pretrain") {
        return TrainingMode::Pretrain;
    }
    if (v == "sft") {
        return TrainingMode::Sft;
    }
    if (v == "lora") {
        return TrainingMode::Lora;
    }
    return std::nullopt;
}

namespace {

using BitNames = std::pair<unsigned, const char*>;

// The bit of `name` in a table of (bit, name) pairs, 0 when it is none of them.
template <std::size_t N>
unsigned bit_named(const BitNames (&table)[N], const std::string& name)
{
    for (const auto& [bit, known] : table) {
        if (name == known) {
            return bit;
        }
    }
    return 0;
}

// The names of the bits set in `bits`, in the table's order.
template <std::size_t N>
std::vector<std::string> names_of_bits(const BitNames (&table)[N], unsigned bits)
{
    std::vector<std::string> names;
    for (const auto& [bit, name] : table) {
        if ((bits & bit) != 0) {
            names.emplace_back(name);
        }
    }
    return names;
}

constexpr BitNames kRecomputeModuleNames[] = {
    {kRecomputeLayernorm, "layernorm"}, {kRecomputeMlaUpProj, "mla_up_proj"}, {kRecomputeMoeAct, "moe_act"}, {kRecomputeMoe, "moe"}};

// Short names, as written in scenario files and shown in the GUI.
constexpr BitNames kLoraTargetNames[] = {{kLoraQkv, "qkv"}, {kLoraProj, "proj"}, {kLoraFc1, "fc1"}, {kLoraFc2, "fc2"}};

constexpr BitNames kGraphScopeNames[] = {
    {kGraphAttn, "attn"},   {kGraphMlp, "mlp"}, {kGraphMoeRouter, "moe_router"}, {kGraphMoePreprocess, "moe_preprocess"},
    {kGraphMamba, "mamba"}, {kGraphMoe, "moe"}};

} // namespace

std::optional<CudaGraphs> cuda_graphs_from_string(const std::string& s)
{
    const std::string v = lowercase(s);
    if (v == "none") {
        return CudaGraphs::None;
    }
    if (v == "scoped") {
        return CudaGraphs::Scoped;
    }
    if (v == "full_iteration") {
        return CudaGraphs::FullIteration;
    }
    return std::nullopt;
}

std::optional<PipelineRuntime> pipeline_runtime_from_string(const std::string& s)
{
    const std::string v = lowercase(s);
    if (v == "megatron") {
        return PipelineRuntime::Megatron;
    }
    if (v == "pytorch") {
        return PipelineRuntime::PyTorch;
    }
    return std::nullopt;
}

unsigned cuda_graph_scope_bit(const std::string& name)
{
    return bit_named(kGraphScopeNames, lowercase(name));
}

std::vector<std::string> cuda_graph_scope_names(unsigned scope)
{
    return names_of_bits(kGraphScopeNames, scope);
}

unsigned lora_target_bit(const std::string& name)
{
    // Megatron-Bridge's target_modules spell them linear_qkv, linear_proj, linear_fc1, linear_fc2.
    std::string v = lowercase(name);
    if (v.rfind("linear_", 0) == 0) {
        v = v.substr(7);
    }
    return bit_named(kLoraTargetNames, v);
}

std::vector<std::string> lora_target_names(unsigned targets)
{
    return names_of_bits(kLoraTargetNames, targets);
}

unsigned recompute_module_bit(const std::string& name)
{
    return bit_named(kRecomputeModuleNames, name);
}

std::vector<std::string> recompute_module_names(unsigned modules)
{
    return names_of_bits(kRecomputeModuleNames, modules);
}

std::optional<Fp8Recipe> fp8_recipe_from_string(const std::string& s)
{
    const std::string v = lowercase(s);
    if (v == "delayed") {
        return Fp8Recipe::Delayed;
    }
    if (v == "current" || v == "tensorwise") {
        return Fp8Recipe::Current;
    }
    if (v == "blockwise") {
        return Fp8Recipe::Blockwise;
    }
    if (v == "mxfp8") {
        return Fp8Recipe::Mxfp8;
    }
    return std::nullopt;
}

} // namespace vtrain
