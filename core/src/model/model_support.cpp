// SPDX-License-Identifier: MIT
#include "model/model_support.h"

#include "model/fine_tuning.h"

namespace vtrain {

// Layer shapes (MoE, MLA, sliding window, Mamba-2 and hybrid patterns, MTP, relu/squared relu), FP8/NVFP4,
// context and expert parallelism and the tp/moe overlap flags are costed per layer by compute_layer_costs()
// (LayerCosts::layer_at(i), LayerCosts::mtp) and layer_activation_bytes_at(); how layers compose into
// stages and iterations (uneven layouts, ZeRO-3 / FSDP and hybrid shards, the overlapped parameter
// all-gather) by iteration_costs.cpp. What is left: LoRA adapters on layers without an adapter path
// (fine_tuning.h); a new field whose cost is not modeled yet gets its line here.
std::optional<std::string> not_modeled_reason(const ModelSpec& m, const TrainingSpec& t, const Plan& /*p*/)
{
    // Fine-tuning: LoRA adapters on layers that have no adapter path in the cost model (fine_tuning.h).
    return fine_tuning_not_modeled(m, t);
}

} // namespace vtrain
