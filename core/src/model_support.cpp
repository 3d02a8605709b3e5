// SPDX-License-Identifier: MIT
#include "vtrain/model_support.h"

namespace vtrain {

std::optional<std::string> not_modeled_reason(const ModelSpec& m, const TrainingSpec& t, const Plan& p)
{
    if (m.layer_pattern.find('M') != std::string::npos) {
        return "Mamba-2 layers are not modeled";
    }
    if (!m.layer_pattern.empty()) {
        return "hybrid layer patterns are not modeled";
    }
    if (m.moe.enabled()) {
        return "mixture-of-experts layers are not modeled";
    }
    if (m.attention == AttentionKind::Mla) {
        return "multi-head latent attention is not modeled";
    }
    if (m.sliding_window > 0) {
        return "sliding-window attention is not modeled";
    }
    if (m.mtp_layers > 0) {
        return "multi-token-prediction layers are not modeled";
    }
    if (m.activation == FfnActivation::SquaredRelu || m.activation == FfnActivation::Relu) {
        return std::string("the ") + to_string(m.activation) + " activation is not modeled";
    }
    if (t.precision == Precision::Fp8 || t.precision == Precision::Nvfp4) {
        return std::string(to_string(t.precision)) + " training is not modeled";
    }
    if (p.cp > 1) {
        return "context parallelism is not modeled";
    }
    if (p.ep > 1 || p.etp > 0) {
        return "expert parallelism is not modeled";
    }
    if (p.tp_overlap) {
        return "tensor-parallel communication overlap is not modeled";
    }
    if (p.moe_overlap) {
        return "expert communication overlap is not modeled";
    }
    return std::nullopt;
}

} // namespace vtrain
