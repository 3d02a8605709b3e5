// SPDX-License-Identifier: MIT
#include "iteration/iteration_costs.h"

#include <algorithm>
#include <cmath>

#include "iteration/pipeline_schedule.h"
#include "model/fine_tuning.h"
#include "model/host_offload.h"
#include "model/model_math.h"
#include "model/nccl_tuning.h"
#include "profile/operator_timer.h"
#include "vtrain/comm_model.h"
#include "vtrain/rank_layout.h"

namespace vtrain {
namespace {

constexpr int kMaxBucketsPerChunk = 32;

// Seconds that compute of `work_s` (at the whole GPU) gains when `comm_s` of data-parallel traffic runs
// beside it on a `sm_fraction` of the SMs: the compute runs at (1 - f) while they overlap, so it ends
// f x min(comm, work / (1 - f)) later.
double overlap_contention_seconds(double comm_s, double work_s, double sm_fraction)
{
    if (comm_s <= 0 || work_s <= 0 || sm_fraction <= 0) {
        return 0;
    }
    const double f = std::min(sm_fraction, 0.9);
    return f * std::min(comm_s, work_s / (1 - f));
}

// Which NVLink domain the first rank of a stage sits on (the plan's rank order sets the stride).
long long node_of_stage(int stage, long long pp_stride, const LinkSpec& links)
{
    return domain_of_stage(stage, pp_stride, links);
}

PhaseTime scaled(const PhaseTime& t, double n)
{
    PhaseTime out;
    out.compute_s = t.compute_s * n;
    out.tp_comm_s = t.tp_comm_s * n;
    out.ep_comm_s = t.ep_comm_s * n;
    out.cp_comm_s = t.cp_comm_s * n;
    out.ep_hidden_s = t.ep_hidden_s * n;
    return out;
}

// The groups data-parallel traffic runs over (see iteration_costs.h).
struct DataParallelGroups {
    GroupPlacement dense;   // dp x cp, for all-reduce (zero 0)
    GroupPlacement shard;   // the dense shard group (zero >= 1)
    GroupPlacement replica; // across shard groups (hybrid shard)
    GroupPlacement expert;  // expert data-parallel (shards of zero >= 1 use it too)
};

DataParallelGroups dp_groups(const PlanGroups& placed)
{
    DataParallelGroups g;
    g.dense = placed.dense_dp;
    g.shard = placed.shard;
    g.replica = placed.replica;
    g.expert = placed.expert_dp;
    return g;
}

class Builder {
public:
    Builder(const ModelSpec& m, const TrainingSpec& t, const ResolvedCluster& cluster, const Plan& p, const LayerCosts& costs, IterationCosts& out)
        : m_model(m), m_training(t), m_plan(p), m_costs(costs), m_out(out), m_timer(*cluster.profile, t.precision), m_bytes(param_bytes(t, p)),
          m_shard(shard_degrees(p))
    {
        m_comm.links = cluster.links;
        m_comm.measured_all_reduce = &cluster.profile->all_reduce;
        const PlanGroups placed = place_plan_groups(p, cluster.links); // the plan's rank order
        m_links = cluster.links;                                       // sends inside one NVLink domain use NVLink
        m_pp_stride = placed.pp_stride;
        m_groups = dp_groups(placed);
        const int sms = cluster.profile->sm_count;
        m_nccl_sm_fraction = sms > 0 ? std::min(1.0, kNcclOverlapSms / sms) : 0.0;
    }

    void build()
    {
        const Plan& p = m_plan;
        IterationCosts& o = m_out;
        resolve_pipeline_layout(m_model, p, o.layout); // check_plan accepted the plan
        o.stages = p.pp;
        o.chunks = o.layout.chunks;
        o.micro_batches = m_training.global_batch / (p.dp * p.micro_batch);
        o.reduce_grads = p.dp * p.cp > 1 || expert_data_parallel(p) > 1;
        // ZeRO-3 reduces gradients as the backward goes, whatever overlap_grad_reduce says.
        o.bucket_overlap = (p.overlap_grad_reduce || p.zero_stage >= 3) && o.reduce_grads;
        o.chunk.resize(static_cast<std::size_t>(p.pp) * o.chunks);
        o.stage.resize(static_cast<std::size_t>(p.pp));

        const double p2p_bytes =
            static_cast<double>(p.micro_batch) * m_model.seq_len * m_model.hidden * (m_training.precision == Precision::Fp32 ? 4 : 2) / p.tp / p.cp;
        const double p2p_within_s = m_comm.p2p_seconds(p2p_bytes, false);
        const double p2p_across_s = m_comm.p2p_seconds(p2p_bytes, true);
        auto p2p = [&](int from, int to) {
            return node_of_stage(from, m_pp_stride, m_links) != node_of_stage(to, m_pp_stride, m_links) ? p2p_across_s : p2p_within_s;
        };

        // In a stack of identical layers, chunks with the same layer count and no embedding, loss or MTP
        // cost the same wherever they sit: compute one and copy it (the explorer evaluates many plans).
        const bool identical_layers = m_costs.layers.empty() && !m_model.moe.enabled() && m_model.layer_pattern.empty();
        const ChunkCosts* plain = nullptr;
        int plain_layers = -1;
        for (int s = 0; s < p.pp; ++s) {
            m_buckets_beside_compute = s == 0 || o.chunks > 1;
            m_unpaired_fraction = unpaired_fraction(s);
            StageCosts& st = o.stage[s];
            st.params = ParamShare{};
            st.trained = ParamShare{};
            for (int c = 0; c < o.chunks; ++c) {
                ChunkCosts& ch = o.chunk[static_cast<std::size_t>(s) * o.chunks + c];
                const VirtualStage& v = o.layout.at(s, c);
                const bool is_plain = identical_layers && !v.embedding && !v.loss && v.mtp_layers == 0;
                if (is_plain && plain != nullptr && plain_layers == v.layers) {
                    ch = *plain;
                } else {
                    fill_chunk(v, ch);
                    if (is_plain) {
                        plain = &ch;
                        plain_layers = v.layers;
                    }
                }
                st.params += ch.params;
                st.trained += ch.trained;
            }
            // A stage like the one before it (same parameters, same first chunk) has its figures.
            const StageCosts* before = s > 0 ? &o.stage[static_cast<std::size_t>(s) - 1] : nullptr;
            if (before != nullptr && before->params.dense == st.params.dense && before->params.expert == st.params.expert &&
                before->params.vocab == st.params.vocab && o.at(s - 1, 0).forward.total_s() == o.at(s, 0).forward.total_s() &&
                o.at(s - 1, 0).buckets == o.at(s, 0).buckets) {
                st.optimizer_s = before->optimizer_s;
                st.param_gather_s = before->param_gather_s;
                st.first_forward_dp_s = before->first_forward_dp_s;
            } else {
                fill_stage_dp(s, st);
            }
            st.send_forward_s = p2p(s, (s + 1) % p.pp);
            st.send_backward_s = p2p(s, (s + p.pp - 1) % p.pp);
        }

        // Megatron-Core's overlap_p2p_comm exists for the interleaved schedule only (one chunk per rank keeps batch_p2p_comm).
        o.async_sends = m_training.overlap_p2p && p.schedule == Schedule::Interleaved && p.pp > 1;
        o.runtime = m_training.pipeline_runtime;
        o.embedding_sync = p.pp >= 2 && m_model.tied_embeddings && !m_training.frozen_base(); // a frozen table has no gradient
        o.embedding_sync_s = 0;
        if (o.embedding_sync) {
            const bool crosses = node_of_stage(0, m_pp_stride, m_links) != node_of_stage(p.pp - 1, m_pp_stride, m_links);
            const double bytes = static_cast<double>(m_model.vocab) * m_model.hidden / p.tp * m_bytes.gradient;
            const GroupPlacement pair = crosses ? GroupPlacement{2, 1, 2} : GroupPlacement{2, 2, 1};
            o.embedding_sync_s = m_comm.collective_seconds(Collective::AllReduce, bytes, pair);
        }
    }

private:
    PhaseTime pick(const BlockCost& b, Phase phase) const
    {
        return phase == Phase::Forward ? b.forward : phase == Phase::Backward ? b.backward : b.recompute;
    }

    PhaseTime phase_of(const VirtualStage& v, Phase phase) const
    {
        PhaseTime t;
        if (m_costs.layers.empty()) {
            t = scaled(pick(m_costs.layer, phase), v.layers);
        } else {
            for (int i = v.first_layer; i < v.first_layer + v.layers; ++i) {
                t += pick(m_costs.layer_at(i), phase);
            }
        }
        if (v.mtp_layers > 0) {
            t += scaled(pick(m_costs.mtp, phase), v.mtp_layers);
        }
        if (v.embedding) {
            t += pick(m_costs.embedding, phase);
        }
        if (v.loss) {
            t += pick(m_costs.head, phase);
        }
        return t;
    }

    // ZeRO-3 all-gather and reduce-scatter seconds of one layer's (or unit's) parameters on this GPU.
    double gather_s(double dense, double expert) const
    {
        return m_comm.collective_seconds(Collective::AllGather, dense * m_bytes.gather, m_groups.shard) +
               m_comm.collective_seconds(Collective::AllGather, expert * m_bytes.gather, m_groups.expert);
    }
    double scatter_s(double dense, double expert) const
    {
        return m_comm.collective_seconds(Collective::ReduceScatter, dense * m_bytes.gradient, m_groups.shard) +
               m_comm.collective_seconds(Collective::ReduceScatter, expert * m_bytes.gradient, m_groups.expert);
    }

    // One layer's ZeRO-3 traffic at the framework's fetch granularity (TrainingSpec::zero3_fetch). DeepSpeed
    // ZeRO-3 gathers each submodule with weights on its own (kZero3ModulesPerLayer all-gathers of a quarter
    // each: every one pays the collective's latency) and reduce-scatters gradients in buckets of
    // kReduceBucketElements (a layer's share of a bucket's collective).
    static constexpr double kZero3ModulesPerLayer = 4;   // fused QKV, output projection, FC1, FC2
    static constexpr double kReduceBucketElements = 5e8; // DeepSpeed reduce_bucket_size default
    double layer_gather_s(double dense, double expert) const
    {
        if (m_training.zero3_fetch != Zero3Fetch::Module) {
            return gather_s(dense, expert);
        }
        return kZero3ModulesPerLayer * gather_s(dense / kZero3ModulesPerLayer, expert / kZero3ModulesPerLayer);
    }
    double layer_scatter_s(double dense, double expert) const
    {
        const double share = (dense + expert) / kReduceBucketElements; // buckets per layer (a fraction: layers per bucket)
        if (m_training.zero3_fetch != Zero3Fetch::Module || share <= 0) {
            return scatter_s(dense, expert);
        }
        return share * scatter_s(dense / share, expert / share);
    }

    // Gradient traffic of `params` at the end of the iteration (zero 0-2), or of the last micro-batch
    // (zero 3: its reduce-scatter, then the replica all-reduce).
    double grad_reduce_s(const ParamShare& params, double fraction) const
    {
        const Plan& p = m_plan;
        const double dense = (params.dense + params.vocab) * m_bytes.gradient * fraction;
        const double expert = params.expert * m_bytes.gradient * fraction;
        if (p.zero_stage < 1) {
            return m_comm.collective_seconds(Collective::AllReduce, dense, m_groups.dense) +
                   m_comm.collective_seconds(Collective::AllReduce, expert, m_groups.expert);
        }
        return m_comm.collective_seconds(Collective::ReduceScatter, dense, m_groups.shard) +
               m_comm.collective_seconds(Collective::AllReduce, dense / m_shard.dense, m_groups.replica) +
               m_comm.collective_seconds(Collective::ReduceScatter, expert, m_groups.expert);
    }

    void fill_chunk_costs(const VirtualStage& v, ChunkCosts& ch) const
    {
        const Plan& p = m_plan;
        ch.forward = phase_of(v, Phase::Forward);
        ch.backward = phase_of(v, Phase::Backward);
        ch.recompute = phase_of(v, Phase::Recompute);
        for (PhaseTime* t : {&ch.forward, &ch.backward, &ch.recompute}) {
            const double exposed = m_unpaired_fraction * t->ep_hidden_s;
            t->ep_comm_s += exposed;
            t->ep_hidden_s -= exposed;
        }
        ch.layers = v.layers + v.mtp_layers;
        ch.params = virtual_stage_params(m_model, p, v);
        ch.trained = trainable_stage_params(m_model, m_training, p, v);
        ch.fsdp_forward_s = ch.fsdp_backward_gather_s = ch.fsdp_backward_scatter_s = 0;
        ch.fsdp_gather_traffic_s = ch.fsdp_scatter_traffic_s = 0;
        ch.dp_contention_forward_s = ch.dp_contention_backward_s = ch.dp_contention_bucketed_backward_s = 0;
        ch.buckets = 1;
        ch.bucket_s = 0;
        if (!m_out.reduce_grads) {
            return;
        }
        // Only trained parameters have gradients to reduce (a frozen base under LoRA: its adapters alone).
        const double grad_bytes = ch.trained.total() * m_bytes.gradient;
        const double bucket_bytes = p.grad_bucket_mb * 1024.0 * 1024.0;
        ch.buckets = std::clamp(static_cast<int>(std::ceil(grad_bytes / bucket_bytes)), 1, kMaxBucketsPerChunk);
        ch.bucket_s = grad_reduce_s(ch.trained, 1.0 / ch.buckets);
        if (p.zero_stage >= 3) {
            fill_fsdp(v, ch);
        }
        if (m_out.bucket_overlap && p.zero_stage < 3 && m_buckets_beside_compute) {
            // The buckets reduce beside the chunk's last backward: NCCL's SMs slow it.
            ch.dp_contention_bucketed_backward_s = overlap_contention_seconds(ch.buckets * ch.bucket_s, ch.backward.total_s(), m_nccl_sm_fraction);
        }
    }

    void fill_chunk(const VirtualStage& v, ChunkCosts& ch) const
    {
        fill_chunk_costs(v, ch);
        if (m_plan.offload_activations > 0) {
            add_activation_offload(v, ch);
        }
        ch.finish();
    }

    // Activation offload (host_offload.h): the chunk's offloaded share goes down during its forward and
    // comes back during its backward; what the compute does not hide is added to it.
    void add_activation_offload(const VirtualStage& v, ChunkCosts& ch) const
    {
        double stashed = v.mtp_layers > 0 ? v.mtp_layers * mtp_activation_bytes(m_model, m_training, m_plan) : 0.0;
        for (int i = v.first_layer; i < v.first_layer + v.layers; ++i) {
            stashed += layer_activation_bytes_at(m_model, m_training, m_plan, i);
        }
        const double bytes = m_plan.offload_activations * stashed;
        const HostLink link = host_link(m_links);
        ch.forward.compute_s += offload_copy_exposed_seconds(bytes, ch.forward.total_s(), link);
        ch.backward.compute_s += offload_copy_exposed_seconds(bytes, ch.backward.total_s(), link);
    }

    // Per-layer gathers prefetched one layer ahead, in forward (layer order) and backward (reverse). In the
    // backward a layer's window carries the gather of the layer after it (in backward order) and the
    // reduce-scatter of the layer before it: both cross the same links, so what the two outlast is exposed
    // (FSDP issues the reduce-scatter of layer i after its backward, the gather of layer i - 2 in the
    // pre-backward hook of layer i - 1: PyTorch FSDP's BACKWARD_PRE prefetch, FSDP2 and Megatron-FSDP alike).
    void fill_fsdp(const VirtualStage& v, ChunkCosts& ch) const
    {
        const Plan& p = m_plan;
        const double tp = p.tp;
        const double ep_etp = static_cast<double>(p.ep) * p.effective_etp();
        // The embedding / output layer / MTP units are gathered with the chunk's first layer: exposed.
        VirtualStage rest_units = v;
        rest_units.layers = 0;
        const ParamShare rest = virtual_stage_params(m_model, p, rest_units);
        std::vector<double> gather, scatter, backward;
        double gather_total = 0, scatter_total = 0, forward_exposed = 0;
        double previous_forward = -1;
        for (int i = v.first_layer; i < v.first_layer + v.layers; ++i) {
            const LayerParamSplit one = layer_param_split(m_model, i);
            const double d = one.dense / tp, e = one.expert / ep_etp;
            gather.push_back(layer_gather_s(d, e));
            // A frozen base (LoRA) reduce-scatters its adapters' gradients only.
            scatter.push_back(m_training.frozen_base() ? layer_scatter_s(lora_adapter_params(m_model, m_training, layer_kind(m_model, i)) / tp, 0.0)
                                                       : layer_scatter_s(d, e));
            backward.push_back(m_costs.layer_at(i).backward.total_s());
            gather_total += gather.back();
            scatter_total += scatter.back();
            // Forward: layer i's gather hides behind layer i-1's forward.
            forward_exposed += previous_forward < 0 ? gather.back() : std::max(0.0, gather.back() - previous_forward);
            previous_forward = m_costs.layer_at(i).forward.total_s();
        }
        // Backward, layers in reverse: the chunk's last layer starts it with nothing before it to hide its
        // gather; then layer j's backward hides the gather of j - 1 (and, shared, the scatter of j + 1).
        const int n = static_cast<int>(gather.size());
        double backward_exposed = n > 0 ? gather.back() : 0.0;
        double shared_exposed = backward_exposed;
        for (int j = n - 1; j >= 0; --j) {
            const double next_gather = j > 0 ? gather[static_cast<std::size_t>(j) - 1] : 0.0;
            const double previous_scatter = j + 1 < n ? scatter[static_cast<std::size_t>(j) + 1] : 0.0;
            backward_exposed += std::max(0.0, next_gather - backward[static_cast<std::size_t>(j)]);
            shared_exposed += std::max(0.0, next_gather + previous_scatter - backward[static_cast<std::size_t>(j)]);
        }
        // The remaining units (embedding, output layer, MTP modules, final norm) as one, fully exposed. FSDP2
        // keeps this root unit gathered from its forward to the end of the backward (memory_model.cpp counts it),
        // so its backward gather below is not issued there; the time model still charges it (a few milliseconds
        // per micro-batch, 0.2% of examples/llama3-8b-h100-fsdp.json): dropping it moved the refits of the
        // torchtitan rows more than it moved their physics (docs/validation.md, session 37).
        const double rest_g = gather_s(rest.dense + rest.vocab, rest.expert);
        gather_total += rest_g;
        scatter_total += m_training.frozen_base() ? 0.0 : scatter_s(rest.dense + rest.vocab, rest.expert);
        forward_exposed += rest_g;
        backward_exposed += rest_g;
        ch.fsdp_forward_s = forward_exposed;
        ch.fsdp_backward_gather_s = backward_exposed;
        // Reduce-scatters: what they add to the gathers' exposure on the shared links, and in total at least
        // what outlasts the whole backward (the chunk's last, bucketed backward leaves them to its buckets).
        ch.fsdp_backward_scatter_s = std::max(shared_exposed - (backward_exposed - rest_g), std::max(0.0, scatter_total - ch.backward.total_s()));
        ch.fsdp_gather_traffic_s = gather_total;
        ch.fsdp_scatter_traffic_s = scatter_total;
        // NCCL's SMs slow the compute the hidden traffic runs beside.
        ch.dp_contention_forward_s = overlap_contention_seconds(gather_total - forward_exposed, ch.forward.total_s(), m_nccl_sm_fraction);
        ch.dp_contention_backward_s = overlap_contention_seconds(gather_total - backward_exposed + scatter_total - ch.fsdp_backward_scatter_s,
                                                                 ch.backward.total_s(), m_nccl_sm_fraction);
        ch.dp_contention_bucketed_backward_s = ch.dp_contention_backward_s; // the last micro-batch's scatters, as buckets
    }

    void fill_stage_dp(int s, StageCosts& st) const
    {
        const Plan& p = m_plan;
        // The optimizer steps and the distributed optimizer gathers what is trained (a frozen base never changes).
        const ParamShare& params = st.trained;
        const double sharded = (params.dense + params.vocab) / m_shard.dense + params.expert / m_shard.expert;
        const double held = p.zero_stage >= 1 ? sharded : params.total();
        // Optimizer offload: the step runs on the CPU, its transfers over the host link (host_offload.h).
        st.optimizer_s = p.offload_optimizer ? offloaded_optimizer_seconds(held, m_bytes, host_link(m_links)) : m_timer.adam_seconds(held);
        st.param_gather_s = 0;
        st.first_forward_dp_s = 0;
        if ((p.zero_stage == 1 || p.zero_stage == 2) && m_out.reduce_grads) {
            // Decoder weights at their gather width (FP8 with fp8_param_gather), the vocabulary in bf16.
            const double gather = m_comm.collective_seconds(Collective::AllGather,
                                                            params.dense * m_bytes.layer_gather + params.vocab * m_bytes.weight, m_groups.shard) +
                                  m_comm.collective_seconds(Collective::AllGather, params.expert * m_bytes.layer_gather, m_groups.expert);
            if (p.overlap_param_gather) {
                // Bucket by bucket behind the next iteration's first forward on this stage (first chunk).
                const ChunkCosts& first = m_out.at(s, first_chunk(s));
                const double forward = first.forward.total_s();
                st.first_forward_dp_s = std::max(gather / std::max(1, first.buckets), gather - forward);
                st.first_forward_dp_s += overlap_contention_seconds(gather - st.first_forward_dp_s, forward, m_nccl_sm_fraction);
            } else {
                st.param_gather_s = gather;
            }
        }
    }

    // The chunk a stage runs first (its first forward: chunk 0 in every schedule).
    static int first_chunk(int) { return 0; }

    // Share of stage s's passes that run without a partner micro-batch under moe_overlap (unpaired_passes,
    // pipeline_schedule.h): the dispatch and combine they hid are exposed, spread over the stage's passes
    // (the stage's busy time is exact; where in the schedule they fall is not). DualPipe's own pairing is
    // its closed-form bubble (DeepSeek-V3 report Sec. 3.2.1) and keeps every pass paired here.
    double unpaired_fraction(int s) const
    {
        const Plan& p = m_plan;
        if (!p.moe_overlap || p.schedule == Schedule::DualPipe) {
            return 0;
        }
        const int m = m_out.micro_batches, v = m_out.chunks;
        return static_cast<double>(unpaired_passes(p.schedule, p.pp, m, v, s, m_training.pipeline_runtime)) / (static_cast<double>(m) * v);
    }

    const ModelSpec& m_model;
    const TrainingSpec& m_training;
    const Plan& m_plan;
    const LayerCosts& m_costs;
    IterationCosts& m_out;
    OperatorTimer m_timer;
    ParamBytes m_bytes;
    ShardDegrees m_shard;
    CommModel m_comm;
    DataParallelGroups m_groups;
    LinkSpec m_links;
    long long m_pp_stride = 1;
    double m_nccl_sm_fraction = 0; // of the GPU's SMs an overlapped data-parallel collective takes
    // Megatron-LM with overlap_grad_reduce (align_grad_reduce, its default): in a pipeline without virtual stages
    // only the first stage reduces its buckets during its last backward; the others launch theirs after it, in
    // the drain bubble, beside no compute of their own (megatron/core/pipeline_parallel/schedules.py, the 1F1B
    // cooldown: "Other pipeline stages do grad reduction during pipeline bubble"). Set per stage by build().
    bool m_buckets_beside_compute = true; // for the stage being filled
    double m_unpaired_fraction = 0;       // for the stage being filled: unpaired_fraction()
};

TaskComm comm_of(const PhaseTime& t, double dp_s)
{
    TaskComm c;
    c.tp_s = t.tp_comm_s;
    c.ep_s = t.ep_comm_s;
    c.cp_s = t.cp_comm_s;
    c.dp_s = dp_s;
    return c;
}

} // namespace

void ChunkCosts::finish()
{
    // Compute slowed by overlapped data-parallel traffic counts as that traffic's exposed part.
    forward_total_s = forward.total_s() + fsdp_forward_s + dp_contention_forward_s;
    forward_parts = comm_of(forward, fsdp_forward_s + dp_contention_forward_s);
    recompute_total_s = recompute.total_s();
    recompute_parts = comm_of(recompute, 0.0);
    for (const int bucketed : {0, 1}) {
        const double dp =
            fsdp_backward_gather_s + (bucketed != 0 ? dp_contention_bucketed_backward_s : fsdp_backward_scatter_s + dp_contention_backward_s);
        backward_total_s[bucketed] = backward.total_s() + dp;
        backward_parts[bucketed] = comm_of(backward, dp);
    }
}

void build_iteration_costs(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan,
                           const LayerCosts& costs, IterationCosts& out)
{
    Builder(model, training, cluster, plan, costs, out).build();
    out.closed_form_bubble_saving_s = 0;
    out.closed_form_min_makespan_s = 0;
    if (plan.schedule == Schedule::DualPipe && out.stages > 1) {
        // The slowest stage sets both bubbles (its forward and backward, recompute included).
        const auto backward_s = [&out](int s) { return out.at(s, 0).backward_total_s[0] + out.at(s, 0).recompute.total_s(); };
        double f = 0, b = 0;
        for (int s = 0; s < out.stages; ++s) {
            f = std::max(f, out.at(s, 0).forward_total_s);
            b = std::max(b, backward_s(s));
            const int mirror = out.stages - 1 - s;
            const double pair_s = out.at(s, 0).forward_total_s + backward_s(s) + out.at(mirror, 0).forward_total_s + backward_s(mirror);
            out.closed_form_min_makespan_s = std::max(out.closed_form_min_makespan_s, out.micro_batches * pair_s / 2);
        }
        out.closed_form_bubble_saving_s = dualpipe_bubble_saving_s(out.stages, f, b);
    }
}

} // namespace vtrain
