// SPDX-License-Identifier: MIT
#include "vtrain/plan_check.h"

#include "model/fine_tuning.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/rank_layout.h"

namespace vtrain {
namespace {

PlanRejection reject(RejectReason reason, const char* field, std::string message)
{
    return {reason, Diagnostic{field, std::move(message)}};
}

std::string str(long long v)
{
    return std::to_string(v);
}

// Context and expert parallelism, folded over a stage's tp x cp x dp GPUs as Megatron-Core does
// (parallel_state.py initialize_model_parallel; MoE README "MoE Parallel Folding").
std::optional<PlanRejection> check_folding(const ModelSpec& m, const Plan& p)
{
    if (p.cp > 1) {
        // Causal load balancing splits each sequence into 2 x cp chunks (TE context_parallel.py, "DualChunkSwap").
        if (m.seq_len % (2 * p.cp) != 0) {
            return reject(RejectReason::ContextParallelInvalid, "plan.cp",
                          "cp = " + str(p.cp) + ": the sequence of " + str(m.seq_len) + " tokens does not split into 2 x cp = " + str(2 * p.cp) +
                              " equal chunks (causal load balancing)");
        }
        if (p.cp_kind == ContextParallelKind::AllToAll && (m.heads % (p.tp * p.cp) != 0)) {
            return reject(RejectReason::ContextParallelInvalid, "plan.cp_kind",
                          "the all-to-all kind splits the " + str(m.heads) + " heads over tp x cp = " + str(p.tp * p.cp) +
                              " GPUs, which does not divide them");
        }
        if (p.sequence_parallel && (m.seq_len / p.cp) % p.tp != 0) {
            return reject(RejectReason::ContextParallelInvalid, "plan.cp",
                          "the " + str(m.seq_len / p.cp) + " tokens per context-parallel rank do not split over tp = " + str(p.tp) +
                              " (sequence parallelism)");
        }
    }
    const int etp = p.effective_etp();
    if (!m.moe.enabled()) {
        if (p.ep > 1 || p.etp > 0) {
            return reject(RejectReason::ExpertParallelInvalid, p.ep > 1 ? "plan.ep" : "plan.etp",
                          "expert parallelism needs a mixture-of-experts model (model.moe.experts is 0)");
        }
        if (p.moe_overlap) {
            return reject(RejectReason::OverlapInvalid, "plan.moe_overlap", "expert communication overlap needs a mixture-of-experts model");
        }
        return std::nullopt;
    }
    if (m.moe.experts % p.ep != 0) {
        return reject(RejectReason::ExpertParallelInvalid, "plan.ep",
                      "ep = " + str(p.ep) + " does not divide the " + str(m.moe.experts) + " experts");
    }
    const long long stage_gpus = static_cast<long long>(p.tp) * p.cp * p.dp;
    if (stage_gpus % (static_cast<long long>(p.ep) * etp) != 0) {
        return reject(RejectReason::ExpertParallelInvalid, "plan.ep",
                      "ep x etp = " + str(p.ep) + " x " + str(etp) + " does not divide the " + str(stage_gpus) +
                          " GPUs of a pipeline stage (tp x cp x dp), so the expert data-parallel size is not whole");
    }
    const int expert_ffn = m.moe.expert_ffn_hidden > 0 ? m.moe.expert_ffn_hidden : m.effective_ffn_hidden();
    if (expert_ffn % etp != 0) {
        return reject(RejectReason::ExpertParallelInvalid, "plan.etp",
                      "etp = " + str(etp) + " does not divide the expert FFN width " + str(expert_ffn));
    }
    // Megatron-Core: "During training, performance may degrade if MoE and tensor parallelism are enabled
    // without also enabling sequence parallelism" is an error in moe_layer.py.
    if (p.tp > 1 && !p.sequence_parallel) {
        return reject(RejectReason::ExpertParallelInvalid, "plan.sequence_parallel",
                      "Megatron-Core trains mixture-of-experts layers with tp > 1 only with sequence parallelism");
    }
    if (p.moe_overlap && p.ep < 2) {
        return reject(RejectReason::OverlapInvalid, "plan.moe_overlap", "expert communication overlap needs ep >= 2");
    }
    // The overlap pairs a forward with another micro-batch's backward layer by layer (combined_1f1b.py);
    // Megatron-Core refuses it with the whole layer recomputed: "disable full recomputation when enabling
    // overlap_moe_expert_parallel_comm", and with the "moe" recompute module (transformer_config.py).
    if (p.moe_overlap && p.recompute == Recompute::Full) {
        return reject(RejectReason::OverlapInvalid, "plan.moe_overlap",
                      "expert communication overlap does not run with full recomputation (Megatron-Core refuses the pair); use selective or none");
    }
    if (p.moe_overlap && (p.recompute_modules & kRecomputeMoe) != 0) {
        return reject(RejectReason::OverlapInvalid, "plan.moe_overlap",
                      "expert communication overlap does not run with the \"moe\" recompute module");
    }
    if (auto why = rank_order_problem(m, p)) {
        return reject(RejectReason::ExpertParallelInvalid, "plan.rank_order", *why);
    }
    return std::nullopt;
}

std::optional<PlanRejection> check_sharding_and_overlap(const Plan& p)
{
    const int dense_dp = p.dp * p.cp;
    if (p.shard_group > 0) {
        if (p.zero_stage < 1) {
            return reject(RejectReason::ShardingInvalid, "plan.shard_group", "a shard group needs zero_stage >= 1");
        }
        if (dense_dp % p.shard_group != 0) {
            return reject(RejectReason::ShardingInvalid, "plan.shard_group",
                          "shard_group = " + str(p.shard_group) + " does not divide the data-parallel group of dp x cp = " + str(dense_dp) + " GPUs");
        }
    }
    // overlap_param_gather is accepted with every ZeRO stage: it hides the distributed optimizer's gather
    // (1, 2); ZeRO-3's per-layer gathers are prefetched anyway and stage 0 has none, so it changes nothing
    // there (the explorer carries it from the scenario's plan into every stage it searches).
    // Megatron's --tp-comm-overlap needs sequence parallelism (arguments.py); PyTorch async TP too.
    if (p.tp_overlap && (p.tp < 2 || !p.sequence_parallel)) {
        return reject(RejectReason::OverlapInvalid, "plan.tp_overlap", "tensor-parallel overlap needs tp >= 2 and sequence parallelism");
    }
    return std::nullopt;
}

} // namespace

std::string moe_overlap_refusal(const Plan& p)
{
    if (!p.moe_overlap || p.pp < 2 || p.schedule == Schedule::Interleaved) {
        return {};
    }
    return "needs virtual pipeline stages when pp > 1 (Megatron-Core's combined 1F1B step): Megatron-Core refuses this plan as "
           "written; use the interleaved schedule";
}

const char* to_string(RejectReason r)
{
    switch (r) {
    case RejectReason::GpuCountMismatch: return "gpu count mismatch";
    case RejectReason::TpNotDividingHeads: return "tp does not divide heads";
    case RejectReason::TpNotDividingFfn: return "tp does not divide ffn_hidden";
    case RejectReason::PpNotDividingLayers: return "pp does not divide layers";
    case RejectReason::BatchNotDivisible: return "batch not divisible";
    case RejectReason::InterleavedNeedsPipeline: return "interleaving not applicable";
    case RejectReason::SequenceParallelNeedsTp: return "sequence parallel needs tp > 1";
    case RejectReason::TpSpansNodes: return "tp spans nodes";
    case RejectReason::OutOfMemory: return "out of memory";
    case RejectReason::ContextParallelInvalid: return "context parallelism not applicable";
    case RejectReason::ExpertParallelInvalid: return "expert parallelism not applicable";
    case RejectReason::PipelineLayoutInvalid: return "pipeline layout does not fit";
    case RejectReason::ShardingInvalid: return "data-parallel sharding not applicable";
    case RejectReason::OverlapInvalid: return "overlap not applicable";
    case RejectReason::NotModeled: return "not modeled";
    case RejectReason::TooLargeToSimulate: return "too many micro-batches to simulate";
    case RejectReason::CudaGraphInvalid: return "CUDA graph scope not applicable";
    case RejectReason::Count: break;
    }
    return "unknown";
}

std::string cuda_graph_scope_refusal(const ModelSpec& m, const TrainingSpec& t)
{
    if (t.cuda_graphs == CudaGraphs::Scoped && (t.cuda_graph_scope & kGraphMoe) != 0 && m.moe.experts > 0 &&
        !(m.moe.pad_to_capacity && !m.moe.dropless)) {
        return "\"moe\" captures the whole MoE layer, which needs static expert shapes: give model.moe a \"capacity_factor\" with "
               "\"pad_to_capacity\": true, or graph \"moe_router\" and \"moe_preprocess\" instead";
    }
    return {};
}

std::optional<PlanRejection> check_plan(const ModelSpec& m, const TrainingSpec& t, const Plan& p, int num_gpus)
{
    if (const std::string why = cuda_graph_scope_refusal(m, t); !why.empty()) {
        return reject(RejectReason::CudaGraphInvalid, "training.cuda_graph_scope", why);
    }
    if (p.num_gpus() != num_gpus) {
        return reject(RejectReason::GpuCountMismatch, "plan",
                      (p.cp > 1 ? "tp x cp x pp x dp = " + str(p.tp) + " x " + str(p.cp) + " x " : "tp x pp x dp = " + str(p.tp) + " x ") +
                          str(p.pp) + " x " + str(p.dp) + " = " + str(static_cast<long long>(p.tp) * p.cp * p.pp * p.dp) + " but the cluster has " +
                          str(num_gpus) + " GPUs");
    }
    if (m.heads % p.tp != 0) {
        return reject(RejectReason::TpNotDividingHeads, "plan.tp", "tp = " + str(p.tp) + " does not divide the " + str(m.heads) + " attention heads");
    }
    if (m.effective_kv_heads() % p.tp != 0 && p.tp % m.effective_kv_heads() != 0) {
        return reject(RejectReason::TpNotDividingHeads, "plan.tp",
                      "tp = " + str(p.tp) + " and the " + str(m.effective_kv_heads()) + " key/value heads do not divide one another");
    }
    if (m.effective_ffn_hidden() % p.tp != 0) {
        return reject(RejectReason::TpNotDividingFfn, "plan.tp",
                      "tp = " + str(p.tp) + " does not divide ffn_hidden = " + str(m.effective_ffn_hidden()));
    }
    const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0 || !p.pipeline_layout.empty();
    if (!uneven && m.layers % p.pp != 0) {
        return reject(RejectReason::PpNotDividingLayers, "plan.pp", "pp = " + str(p.pp) + " does not divide the " + str(m.layers) + " layers");
    }
    const long long per_step = static_cast<long long>(p.dp) * p.micro_batch;
    if (t.global_batch % per_step != 0) {
        return reject(RejectReason::BatchNotDivisible, "plan.micro_batch",
                      "global batch " + str(t.global_batch) + " is not a multiple of dp x micro_batch = " + str(p.dp) + " x " + str(p.micro_batch));
    }
    const int micro_batches = static_cast<int>(t.global_batch / per_step);
    if (p.schedule == Schedule::Interleaved) {
        if (p.pp < 2 || p.virtual_stages < 2) {
            return reject(RejectReason::InterleavedNeedsPipeline, "plan.virtual_stages",
                          "the interleaved schedule needs pp >= 2 and virtual_stages >= 2 (pp = " + str(p.pp) +
                              ", virtual_stages = " + str(p.virtual_stages) + ")");
        }
        if (!uneven && m.layers % (p.pp * p.virtual_stages) != 0) {
            return reject(RejectReason::PpNotDividingLayers, "plan.virtual_stages",
                          "pp x virtual_stages = " + str(p.pp * p.virtual_stages) + " does not divide the " + str(m.layers) + " layers");
        }
        if (micro_batches % p.pp != 0) {
            return reject(RejectReason::InterleavedNeedsPipeline, "plan.micro_batch",
                          "the interleaved schedule needs the " + str(micro_batches) +
                              " micro-batches per replica to be a multiple of pp = " + str(p.pp));
        }
    } else if (p.schedule == Schedule::DualPipe && (p.pp < 2 || p.pp % 2 != 0 || micro_batches < p.pp || micro_batches % 2 != 0)) {
        // DualPipe feeds half the micro-batches from each end of an even pipeline (DeepSeek-V3 Sec. 3.2.1).
        return reject(RejectReason::InterleavedNeedsPipeline, "plan.schedule",
                      "DualPipe needs an even pp >= 2 and an even number of micro-batches per replica of at least pp (pp = " + str(p.pp) +
                          ", micro-batches = " + str(micro_batches) + ")");
    } else if (p.virtual_stages != 1) {
        return reject(RejectReason::InterleavedNeedsPipeline, "plan.virtual_stages",
                      "virtual_stages = " + str(p.virtual_stages) + " needs the interleaved schedule");
    }
    if (p.sequence_parallel && p.tp < 2) {
        return reject(RejectReason::SequenceParallelNeedsTp, "plan.sequence_parallel", "sequence parallelism needs tp >= 2");
    }
    if (uneven) {
        // The layout's vectors are reused per thread: the explorer checks many plans.
        thread_local PipelineLayout layout;
        if (auto why = resolve_pipeline_layout(m, p, layout)) {
            const char* field = !p.pipeline_layout.empty() ? "plan.pipeline_layout" : "plan.first_stage_layers";
            return reject(RejectReason::PipelineLayoutInvalid, field, (!p.pipeline_layout.empty() ? "the layout " : "") + *why);
        }
    }
    if (auto r = check_folding(m, p)) {
        return r;
    }
    // What the cost model cannot express (LoRA adapters on layers without an adapter path) is refused with its
    // reason, never simulated without it.
    if (auto why = fine_tuning_not_modeled(m, t)) {
        return reject(RejectReason::NotModeled, "training.lora_targets", *why);
    }
    return check_sharding_and_overlap(p);
}

long long iteration_passes(const TrainingSpec& t, const Plan& p)
{
    const long long per_step = static_cast<long long>(p.dp) * p.micro_batch;
    const long long micro_batches = per_step > 0 ? t.global_batch / per_step : 0;
    return micro_batches * p.pp * plan_chunks(p);
}

std::optional<PlanRejection> check_simulation_size(const TrainingSpec& t, const Plan& p)
{
    const long long passes = iteration_passes(t, p);
    if (passes <= kMaxSimulatedPasses) {
        return std::nullopt;
    }
    const long long micro_batches = t.global_batch / (static_cast<long long>(p.dp) * p.micro_batch);
    return reject(RejectReason::TooLargeToSimulate, "training.global_batch",
                  "global batch " + str(t.global_batch) + " is " + str(micro_batches) + " micro-batches per replica (dp x micro_batch = " +
                      str(p.dp) + " x " + str(p.micro_batch) + ") on " + str(static_cast<long long>(p.pp) * plan_chunks(p)) +
                      " pipeline stages: " + str(passes) + " passes per iteration, more than the " + str(kMaxSimulatedPasses) +
                      " the simulator steps through (raise micro_batch or dp, or lower global_batch)");
}

} // namespace vtrain
