// SPDX-License-Identifier: MIT
#include "vtrain/plan_check.h"

namespace vtrain {
namespace {

PlanRejection reject(RejectReason reason, const char* field, std::string message)
{
    return {reason, Diagnostic{field, std::move(message)}};
}

std::string str(long long v) { return std::to_string(v); }

} // namespace

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
    case RejectReason::NotModeled: return "not modeled";
    case RejectReason::Count: break;
    }
    return "unknown";
}

std::optional<PlanRejection> check_plan(const ModelSpec& m, const TrainingSpec& t, const Plan& p, int num_gpus)
{
    if (p.num_gpus() != num_gpus) {
        return reject(RejectReason::GpuCountMismatch, "plan",
                      "tp x pp x dp = " + str(p.tp) + " x " + str(p.pp) + " x " + str(p.dp) + " = " + str(static_cast<long long>(p.tp) * p.pp * p.dp) +
                          " but the cluster has " + str(num_gpus) + " GPUs");
    }
    if (m.heads % p.tp != 0) {
        return reject(RejectReason::TpNotDividingHeads, "plan.tp", "tp = " + str(p.tp) + " does not divide the " + str(m.heads) + " attention heads");
    }
    if (m.effective_kv_heads() % p.tp != 0 && p.tp % m.effective_kv_heads() != 0) {
        return reject(RejectReason::TpNotDividingHeads, "plan.tp",
                      "tp = " + str(p.tp) + " and the " + str(m.effective_kv_heads()) + " key/value heads do not divide one another");
    }
    if (m.effective_ffn_hidden() % p.tp != 0) {
        return reject(RejectReason::TpNotDividingFfn, "plan.tp", "tp = " + str(p.tp) + " does not divide ffn_hidden = " + str(m.effective_ffn_hidden()));
    }
    if (m.layers % p.pp != 0) {
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
                          "the interleaved schedule needs pp >= 2 and virtual_stages >= 2 (pp = " + str(p.pp) + ", virtual_stages = " +
                              str(p.virtual_stages) + ")");
        }
        if (m.layers % (p.pp * p.virtual_stages) != 0) {
            return reject(RejectReason::PpNotDividingLayers, "plan.virtual_stages",
                          "pp x virtual_stages = " + str(p.pp * p.virtual_stages) + " does not divide the " + str(m.layers) + " layers");
        }
        if (micro_batches % p.pp != 0) {
            return reject(RejectReason::InterleavedNeedsPipeline, "plan.micro_batch",
                          "the interleaved schedule needs the " + str(micro_batches) + " micro-batches per replica to be a multiple of pp = " + str(p.pp));
        }
    } else if (p.virtual_stages != 1) {
        return reject(RejectReason::InterleavedNeedsPipeline, "plan.virtual_stages",
                      "virtual_stages = " + str(p.virtual_stages) + " needs the interleaved schedule");
    }
    if (p.sequence_parallel && p.tp < 2) {
        return reject(RejectReason::SequenceParallelNeedsTp, "plan.sequence_parallel", "sequence parallelism needs tp >= 2");
    }
    return std::nullopt;
}

} // namespace vtrain
