// SPDX-License-Identifier: MIT
#include "vtrain/memory_model.h"

#include <algorithm>

#include "vtrain/model_math.h"

namespace vtrain {

double layer_activation_bytes(const ModelSpec& m, const TrainingSpec& t, int micro_batch, int tp, bool sp, Recompute recompute)
{
    const double s = m.seq_len;
    const double b = micro_batch;
    const double h = m.hidden;
    const double a = m.heads;
    const double sbh = s * b * h;
    // Korthikanti's constants assume 2-byte activations and a 4h GELU FFN; scale the FFN part
    // (16 of the 34 bytes per element) with the real FFN width, and the whole by the element size.
    const double element_scale = t.precision == Precision::Fp32 ? 2.0 : 1.0;
    const double ffn_scale = static_cast<double>(m.effective_ffn_hidden()) / (4.0 * h) * (m.activation == FfnActivation::SwiGlu ? 1.5 : 1.0);
    const double per_element = 18.0 + 16.0 * ffn_scale; // 34 for GPT
    // Of the 34: 10 bytes are replicated across tensor-parallel ranks unless sequence parallelism shards them.
    const double replicated = 10.0;
    const double sharded = per_element - replicated;
    const double scores = t.attention == AttentionKernel::Flash ? 0.0 : 5.0 * a * s / h; // softmax, dropout mask, scores

    switch (recompute) {
    case Recompute::Full:
        // Only the layer input survives: 2 bytes per element, sharded with sequence parallelism.
        return element_scale * 2.0 * sbh / (sp ? tp : 1);
    case Recompute::Selective:
        return element_scale * sbh * (sp ? per_element / tp : replicated + sharded / tp);
    case Recompute::None:
        break;
    }
    return element_scale * sbh * (sp ? (per_element + scores) / tp : replicated + (sharded + scores) / tp);
}

std::vector<double> stage_params(const ModelSpec& m, int tp, int pp)
{
    std::vector<double> params(static_cast<std::size_t>(pp), 0.0);
    const double per_layer = layer_params(m) / tp;
    const int layers_per_stage = m.layers / pp;
    const double vocab_table = static_cast<double>(m.vocab) * m.hidden / tp;
    for (int s = 0; s < pp; ++s) {
        params[s] = per_layer * layers_per_stage;
    }
    params.front() += embedding_params(m) / tp;
    // The last stage holds the output projection: its own copy of the embedding when tied and pp > 1.
    if (!m.tied_embeddings || pp > 1) {
        params.back() += vocab_table;
    }
    params.back() += 2.0 * m.hidden; // final norm
    return params;
}

std::vector<StageMemory> stage_memory(const ModelSpec& m, const TrainingSpec& t, const Plan& plan,
                                      const std::vector<double>& in_flight_layers)
{
    const auto params = stage_params(m, plan.tp, plan.pp);
    const double weight_bytes = t.precision == Precision::Fp32 ? 4 : 2;
    // Megatron keeps fp32 main gradients for bf16 (accumulate-allreduce-grads-in-fp32) and fp32 training.
    const double grad_bytes = t.precision == Precision::Fp16 ? 2 : 4;
    // Adam: fp32 master weights (not needed when training in fp32), first and second moments.
    const double optimizer_bytes = t.precision == Precision::Fp32 ? 8 : 12;
    const double dp = plan.dp;
    const double per_layer = layer_activation_bytes(m, t, plan.micro_batch, plan.tp, plan.sequence_parallel, plan.recompute);
    const double e = t.precision == Precision::Fp32 ? 4 : 2;
    const double sbh = static_cast<double>(m.seq_len) * plan.micro_batch * m.hidden;
    // During one layer's backward its full activations exist again when recomputed.
    const double full_layer = plan.recompute == Recompute::None
                                  ? 0.0
                                  : layer_activation_bytes(m, t, plan.micro_batch, plan.tp, plan.sequence_parallel, Recompute::None);

    std::vector<StageMemory> out(static_cast<std::size_t>(plan.pp));
    for (int s = 0; s < plan.pp; ++s) {
        StageMemory& mem = out[s];
        mem.weights_bytes = params[s] * weight_bytes;
        mem.gradients_bytes = params[s] * grad_bytes / (plan.zero_stage >= 2 ? dp : 1.0);
        mem.optimizer_bytes = params[s] * optimizer_bytes / (plan.zero_stage >= 1 ? dp : 1.0);
        const double in_flight = s < static_cast<int>(in_flight_layers.size()) ? in_flight_layers[s] : 0.0;
        mem.activations_bytes = per_layer * in_flight;
        mem.working_bytes = full_layer;
        if (s == 0) {
            // Embedding output and its dropout mask for each micro-batch in flight (Korthikanti Sec. 4.3).
            const double layers_per_stage = std::max(1, m.layers / plan.pp);
            mem.activations_bytes += (in_flight / layers_per_stage) * sbh * (e + 1) / (plan.sequence_parallel ? plan.tp : 1);
        }
        if (s == plan.pp - 1) {
            // fp32 logits and their gradient for the micro-batch in the loss.
            mem.working_bytes += 2.0 * 4.0 * m.seq_len * plan.micro_batch * (static_cast<double>(m.vocab) / plan.tp);
        }
    }
    return out;
}

} // namespace vtrain
