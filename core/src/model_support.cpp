// SPDX-License-Identifier: MIT
#include "vtrain/model_support.h"

namespace vtrain {

// Layer shapes (MoE, MLA, sliding window, Mamba-2 and hybrid patterns, MTP, relu/squared relu), FP8/NVFP4,
// context and expert parallelism and the tp/moe overlap flags are costed per layer by compute_layer_costs()
// (LayerCosts::layer_at(i), LayerCosts::mtp) and layer_activation_bytes_at(); what remains below is how
// layers compose into stages and iterations.
std::optional<std::string> not_modeled_reason(const ModelSpec& /*m*/, const TrainingSpec& /*t*/, const Plan& p)
{
    if (p.zero_stage >= 3) {
        return "fully sharded data parallelism (ZeRO-3 / FSDP) is not modeled";
    }
    if (p.overlap_param_gather) {
        return "overlapped parameter all-gather is not modeled";
    }
    if (p.first_stage_layers > 0 || p.last_stage_layers > 0 || !p.pipeline_layout.empty()) {
        return "uneven pipeline layouts are not modeled";
    }
    return std::nullopt;
}

} // namespace vtrain
