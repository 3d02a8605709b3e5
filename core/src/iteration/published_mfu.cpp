// SPDX-License-Identifier: MIT
// The best MFU published training runs reached per chip and precision (plausibility.h). Where a source
// publishes throughput, the MFU is in this tool's convention: the model FLOPs of docs/model-flops.md (all
// of the attention score matrix, routed experts top_k times, recompute not counted) per measured second,
// over the precision's dense datasheet peak of the profile (989.4 TFLOP/s BF16 and 1,978.9 FP8 on H100;
// 2,500 BF16, 5,000 FP8 and 10,000 FP4 on GB200; 312 BF16/FP16 on A100), worked out from the rows of the
// validation sets (../shared/validation, outside the repository) that report it. Where a source publishes
// only an MFU, its own figure (its own FLOP convention). Parts of one chip share an entry: the SXM, HBM2e
// and H800 variants of GH100 (and H200, the same chip with HBM3e), B200 and GB200 (one Blackwell die).
// A chip or precision without a published run has no entry, and is never flagged.
#include <algorithm>

#include "vtrain/plausibility.h"

namespace vtrain {
namespace {

const std::vector<PublishedMfu>& table()
{
    static const std::vector<PublishedMfu> rows{
        {"A100", "bf16", 0.564,
         "Korthikanti et al. 2022 (arXiv 2205.05198) Table 5 and Appendix C: GPT 530B and 1T on A100 80 GB with sequence parallelism and "
         "selective recompute"},
        {"H100/H800", "bf16", 0.493, "MoE Parallel Folding (arXiv 2504.14960) abstract: Mixtral 8x22B on H100 (its own MFU convention)"},
        {"H100/H800", "fp8", 0.435, "Megatron-Bridge performance summary (NeMo 26.04.01): Llama 3.1 405B pre-training on 1024 H100 in FP8"},
        {"B200/GB200", "bf16", 0.353, "Megatron-Bridge performance summary archive (NeMo 25.11): DeepSeek-V3 pre-training on 256 GB200 in BF16"},
        {"B200/GB200", "fp8", 0.454, "Megatron-Bridge performance summary (NeMo 26.04.01): Llama 3.1 405B pre-training on 256 GB200 in FP8"},
        {"B200/GB200", "nvfp4", 0.311, "Megatron-Bridge performance summary (NeMo 26.04.01): Llama 3.1 405B pre-training on 256 GB200 in NVFP4"},
    };
    return rows;
}

// The chip of a profile id (shipped ids and ids that start like them).
const char* chip_of(const std::string& gpu)
{
    auto starts = [&gpu](const char* prefix) { return gpu.rfind(prefix, 0) == 0; };
    if (starts("a100")) {
        return "A100";
    }
    if (starts("h100") || starts("h800") || starts("h200")) {
        return "H100/H800";
    }
    if (starts("b200") || starts("gb200")) {
        return "B200/GB200";
    }
    return nullptr;
}

const char* precision_key(Precision p)
{
    switch (p) {
    case Precision::Bf16:
    case Precision::Fp16: return "bf16"; // the same tensor cores and peak
    case Precision::Fp8: return "fp8";
    case Precision::Nvfp4: return "nvfp4";
    case Precision::Fp32: break;
    }
    return nullptr;
}

} // namespace

const std::vector<PublishedMfu>& published_mfu_table()
{
    return table();
}

std::optional<PublishedMfu> best_published_mfu(const std::string& gpu, Precision precision)
{
    const char* chip = chip_of(gpu);
    const char* key = precision_key(precision);
    if (chip == nullptr || key == nullptr) {
        return std::nullopt;
    }
    for (const PublishedMfu& e : table()) {
        if (std::string(e.chip) == chip && std::string(e.precision) == key) {
            return e;
        }
    }
    return std::nullopt;
}

} // namespace vtrain
