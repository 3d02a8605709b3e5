// SPDX-License-Identifier: MIT
// How layers compose into stages and an iteration: pipeline layouts (hand-computed uneven splits, the
// DeepSeek-V3 and Megatron documentation layouts), plan rules for folding, sharding and overlap, ZeRO-3
// gather/scatter volumes and memory per rank in closed form, FP8 memory per parameter for each recipe,
// and data-parallel groups under context parallelism.
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "iteration/iteration_costs.h"
#include "iteration/pipeline_schedule.h"
#include "iteration/task_graph_simulation.h"
#include "model/layer_comm.h"
#include "model/model_math.h"
#include "model/nccl_tuning.h"
#include "test_support.h"
#include "vtrain/comm_model.h"
#include "vtrain/memory_model.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/plan_check.h"

using namespace vtrain;

namespace {

// Llama 3.1 405B (arXiv 2407.21783 Table 3).
ModelSpec llama405b()
{
    ModelSpec m = test::gpt(126, 16384, 128, 8192, 128256);
    m.kv_heads = 8;
    m.ffn_hidden = 53248;
    m.activation = FfnActivation::SwiGlu;
    m.normalization = Normalization::RmsNorm;
    m.tied_embeddings = false;
    return m;
}

ModelSpec llama8b()
{
    ModelSpec m = test::gpt(32, 4096, 32, 8192, 128256);
    m.kv_heads = 8;
    m.ffn_hidden = 14336;
    m.activation = FfnActivation::SwiGlu;
    m.tied_embeddings = false;
    return m;
}

TrainingSpec training(int global_batch, Precision precision = Precision::Bf16)
{
    TrainingSpec t;
    t.global_batch = global_batch;
    t.tokens = 1e12;
    t.precision = precision;
    return t;
}

// A scenario on `gpus` GPUs of `profile` in nodes of 8.
Scenario on_nodes_of_8(const ModelSpec& m, const TrainingSpec& t, const GpuProfile& profile, int gpus)
{
    Scenario s;
    s.model = m;
    s.training = t;
    s.cluster.gpu = profile.id;
    s.cluster.num_gpus = gpus;
    s.cluster.gpus_per_node = 8;
    return s;
}

std::optional<RejectReason> reason(const ModelSpec& m, const Plan& p, int gpus)
{
    const auto r = check_plan(m, training(1024), p, gpus);
    return r ? std::optional<RejectReason>(r->reason) : std::nullopt;
}

// One intra-node collective of `bytes` over n GPUs from the link figures (comm_model.h's ring model).
double intra_node_closed_form(const LinkSpec& l, Collective kind, double bytes, int n)
{
    const int steps = kind == Collective::AllReduce ? 2 * (n - 1) : n - 1;
    const double factor = (kind == Collective::AllReduce ? 2.0 : 1.0) * (n - 1) / n;
    return (l.nvlink_base_latency_us + steps * l.nvlink_step_latency_us) * 1e-6 + bytes * factor / (l.nvlink_bus_gbytes_per_s * 1e9);
}

// A GPU of known links for closed forms: 100 SMs, NVLink 200 GB/s (latency 20 + 2 us per step), 8 x 200 Gb/s
// NICs at full efficiency (25 GB/s per GPU), 8 GPUs per node.
GpuProfile known_links_profile()
{
    HardwareSpec hw = test::test_hardware("test-links", "Test links");
    hw.links.nvlink_bus_gbytes_per_s = 200;
    hw.links.nvlink_base_latency_us = 20;
    hw.links.nvlink_step_latency_us = 2;
    hw.links.nic_gbit_per_s = 200;
    hw.links.inter_node_base_latency_us = 10;
    hw.links.inter_node_latency_us = 5;
    return make_modeled_profile(hw, ModelParameters{});
}

// Qwen3-235B-A22B (arXiv 2505.09388; Megatron-Bridge's Qwen3 provider): 94 layers, GQA 64/4 heads of 128,
// QK-norm, 128 experts top-8 of width 1,536, vocabulary 151,936, untied.
ModelSpec qwen3_235b()
{
    ModelSpec m = test::gpt(94, 4096, 64, 4096, 151936);
    m.kv_heads = 4;
    m.head_dim_override = 128;
    m.ffn_hidden = 12288;
    m.activation = FfnActivation::SwiGlu;
    m.normalization = Normalization::RmsNorm;
    m.tied_embeddings = false;
    m.qk_norm = true;
    m.moe.experts = 128;
    m.moe.top_k = 8;
    m.moe.expert_ffn_hidden = 1536;
    return m;
}

} // namespace

class TestIterationModel : public QObject {
    Q_OBJECT
private slots:
    void uneven_first_and_last_stages_hand_computed()
    {
        // 126 layers over 16 stages, one layer fewer on the first and last (Llama 3, Sec. 3.3.2): 7, 14 x 8, 7.
        const ModelSpec m = llama405b();
        Plan p;
        p.tp = 8;
        p.pp = 16;
        p.dp = 128;
        p.sequence_parallel = true;
        p.first_stage_layers = 7;
        p.last_stage_layers = 7;
        QVERIFY(!check_plan(m, training(2048), p, 16384));
        PipelineLayout layout;
        QVERIFY(!resolve_pipeline_layout(m, p, layout));
        QCOMPARE(layout.stage_layers(0), 7);
        QCOMPARE(layout.stage_layers(15), 7);
        for (int s = 1; s < 15; ++s) {
            QCOMPARE(layout.stage_layers(s), 8);
            QCOMPARE(layout.at(s, 0).first_layer, 7 + 8 * (s - 1));
        }
        QCOMPARE(layout.at(15, 0).first_layer, 119);
        QVERIFY(layout.at(0, 0).embedding && layout.at(15, 0).loss);

        // Parameters per GPU by hand: a layer is h(h + 2 x 8 x 128) + h^2 + 3 h f + 2h = 3,187,703,808,
        // over tp = 8 -> 398,462,976; the vocabulary table 128,256 x 16,384 / 8 = 262,668,288.
        QCOMPARE(layer_params(m), 3187703808.0);
        const auto profile = test::shipped_profile("h100-sxm5-80gb");
        Scenario s = on_nodes_of_8(m, training(2048), profile, 16384);
        SimulationOptions options;
        options.timeline = false;
        const auto r = simulate(s, p, profile, options);
        QVERIFY2(r.ok(), r.first_error().c_str());
        QCOMPARE(r->stages[0].layers, 7);
        QCOMPARE(r->stages[7].layers, 8);
        QCOMPARE(r->stages[0].params, 7 * 398462976.0 + 262668288.0);
        QCOMPARE(r->stages[7].params, 8 * 398462976.0);
        QCOMPARE(r->stages[15].params, 7 * 398462976.0 + 262668288.0 + 2 * 16384.0);
        QVERIFY(r->stages[0].embedding && !r->stages[0].loss && r->stages[15].loss);
        // Activations of the uneven stages: 1F1B keeps pp - s micro-batches in flight on stage s (16 per replica).
        const double layer_bytes = layer_activation_bytes_at(m, s.training, p, 0);
        QCOMPARE(r->stages[1].memory.activations_bytes, layer_bytes * 8 * 15);
        QCOMPARE(r->stages[15].memory.activations_bytes, layer_bytes * 7 * 1);
        // A middle stage works longest: 8 layers against 7 plus the embedding or the output layer.
        QVERIFY(r->stages[7].breakdown.compute_s > r->stages[0].breakdown.compute_s);
    }

    void deepseek_v3_and_megatron_layouts()
    {
        ModelSpec m = test::gpt(61, 7168, 128, 4096, 129280);
        m.mtp_layers = 1;
        // DeepSeek-V3 on 8 pipeline ranks x 4 virtual stages (MLM-GB200 Sec. 1; MZ deepseek-v3 readme).
        Plan p;
        p.pp = 8;
        p.schedule = Schedule::Interleaved;
        p.virtual_stages = 4;
        p.pipeline_layout = "Et|(tt|)*30mL";
        PipelineLayout layout;
        const auto error = resolve_pipeline_layout(m, p, layout);
        QVERIFY2(!error, error ? error->c_str() : "");
        QCOMPARE(layout.at(0, 0).layers, 1);
        QVERIFY(layout.at(0, 0).embedding);
        QCOMPARE(layout.at(1, 0).first_layer, 1);
        QCOMPARE(layout.at(1, 0).layers, 2);
        // Virtual stage 31 = rank 7, chunk 3: the MTP module and the loss, no decoder layer.
        QCOMPARE(layout.at(7, 3).layers, 0);
        QCOMPARE(layout.at(7, 3).mtp_layers, 1);
        QVERIFY(layout.at(7, 3).loss);
        QCOMPARE(layout.stage_layers(0), 1 + 2 + 2 + 2); // virtual stages 0, 8, 16, 24
        QCOMPARE(layout.stage_layers(7), 2 + 2 + 2 + 0); // 7, 15, 23, 31
        int total = 0;
        for (int s = 0; s < 8; ++s) {
            total += layout.stage_layers(s);
        }
        QCOMPARE(total, 61);

        // Megatron's documented example for PP16 VPP2 (docs/user-guide/features/pipeline_parallel_layout.md).
        p.pp = 16;
        p.virtual_stages = 2;
        p.pipeline_layout = "Et*3|(tt|)*29,m|L";
        QVERIFY(!resolve_pipeline_layout(m, p, layout));
        QCOMPARE(layout.at(0, 0).layers, 3);
        QCOMPARE(layout.at(14, 1).mtp_layers, 1); // virtual stage 30
        QCOMPARE(layout.at(14, 1).layers, 0);
        QVERIFY(layout.at(15, 1).loss);
        QCOMPARE(layout.at(15, 1).layers, 0);
        QCOMPARE(layout.at(13, 1).first_layer, 3 + 2 * 28);
    }

    void layouts_that_do_not_fit_are_refused_with_the_reason()
    {
        ModelSpec m = test::gpt(61, 7168, 128, 4096, 129280);
        m.mtp_layers = 1;
        Plan p;
        p.pp = 8;
        p.dp = 2;
        p.schedule = Schedule::Interleaved;
        p.virtual_stages = 4;
        std::vector<VirtualStage> stages;
        QVERIFY(parse_pipeline_layout("Et|(tt|", stages)->find("not closed") != std::string::npos);
        QVERIFY(parse_pipeline_layout("Et|tx", stages)->find("unknown symbol 'x'") != std::string::npos);
        QVERIFY(parse_pipeline_layout("Et*|t", stages)->find("needs a count") != std::string::npos);
        PipelineLayout layout;
        p.pipeline_layout = "Et|(tt|)*30L"; // no 'm' for the MTP module
        QVERIFY(resolve_pipeline_layout(m, p, layout)->find("'m'") != std::string::npos);
        p.pipeline_layout = "Et|(tt|)*29mL"; // 31 stages for 32 virtual stages, 59 layers
        QVERIFY(resolve_pipeline_layout(m, p, layout)->find("has 31 stages") != std::string::npos);
        p.pipeline_layout = "Et|(tt|)*29tm|L"; // 'm' in rank 6's chunk 3 is fine, but 60 't' is not 61
        QVERIFY(resolve_pipeline_layout(m, p, layout)->find("60 't'") != std::string::npos);
        const auto r = check_plan(m, training(1024), p, 16);
        QVERIFY(r);
        QCOMPARE(int(r->reason), int(RejectReason::PipelineLayoutInvalid));
        QCOMPARE(QString::fromStdString(r->diagnostic.field), QStringLiteral("plan.pipeline_layout"));

        // First/last counts whose remainder does not split over the middle stages.
        const ModelSpec big = llama405b();
        Plan u;
        u.tp = 8;
        u.pp = 16;
        u.dp = 8;
        u.first_stage_layers = 6;
        u.last_stage_layers = 7;
        QCOMPARE(int(*reason(big, u, 1024)), int(RejectReason::PipelineLayoutInvalid));
    }

    void folding_sharding_and_overlap_rules()
    {
        ModelSpec m = llama8b();
        Plan p;
        p.dp = 8;
        QVERIFY(!reason(m, p, 8));
        p.cp = 2;
        QCOMPARE(int(*reason(m, p, 8)), int(RejectReason::GpuCountMismatch)); // tp x cp x pp x dp = 16
        QVERIFY(check_plan(m, training(1024), p, 8)->diagnostic.message.find("tp x cp x pp x dp") != std::string::npos);
        p.dp = 4;
        QVERIFY(!reason(m, p, 8));
        p.cp = 3; // 8,192 tokens do not split into 2 x cp = 6 chunks
        p.dp = 1;
        QCOMPARE(int(*reason(m, p, 3)), int(RejectReason::ContextParallelInvalid));
        p.cp = 1;
        p.dp = 8;
        p.ep = 2;
        QCOMPARE(int(*reason(m, p, 8)), int(RejectReason::ExpertParallelInvalid)); // a dense model
        p.ep = 1;
        p.zero_stage = 3;
        p.shard_group = 3;
        QCOMPARE(int(*reason(m, p, 8)), int(RejectReason::ShardingInvalid));
        p.shard_group = 4;
        QVERIFY(!reason(m, p, 8));
        p.overlap_param_gather = true; // harmless with FSDP: its gathers are prefetched anyway
        QVERIFY(!reason(m, p, 8));
        p.overlap_param_gather = false;
        p.tp_overlap = true;
        QCOMPARE(int(*reason(m, p, 8)), int(RejectReason::OverlapInvalid));

        // Mixture of experts: experts % ep, and ep x etp must divide a stage's tp x cp x dp GPUs.
        ModelSpec moe = llama8b();
        moe.moe.experts = 16;
        moe.moe.top_k = 2;
        Plan e;
        e.dp = 8;
        e.ep = 3;
        QCOMPARE(int(*reason(moe, e, 8)), int(RejectReason::ExpertParallelInvalid));
        e.ep = 16;
        QVERIFY(check_plan(moe, training(1024), e, 8)->diagnostic.message.find("does not divide the 8 GPUs") != std::string::npos);
        e.ep = 8;
        QVERIFY(!reason(moe, e, 8));
        QCOMPARE(expert_data_parallel(e), 1);
        e.tp = 2;
        e.dp = 4;
        e.etp = 1;
        e.sequence_parallel = true;
        QCOMPARE(expert_data_parallel(e), 1); // 2 x 1 x 4 / (8 x 1)
        e.ep = 4;
        QCOMPARE(expert_data_parallel(e), 2);
    }

    void fsdp_gather_and_scatter_volumes_in_closed_form()
    {
        // Llama 3 8B on one node of 8 H100, ZeRO-3: per layer an all-gather of its bf16 parameters over 8
        // GPUs in forward and again in backward, and a reduce-scatter of its fp32 gradients.
        const ModelSpec m = llama8b();
        const auto profile = test::shipped_profile("h100-sxm5-80gb");
        ClusterSpec c;
        c.gpu = profile.id;
        c.num_gpus = 8;
        c.gpus_per_node = 8;
        const ResolvedCluster cluster = resolve_cluster(c, profile);
        Plan p;
        p.dp = 8;
        p.micro_batch = 2;
        p.recompute = Recompute::Full;
        p.zero_stage = 3;
        const TrainingSpec t = training(16);
        QVERIFY(!check_plan(m, t, p, 8));
        const LayerCosts costs = plan_layer_costs(m, t, cluster, p);
        IterationCosts ic;
        build_iteration_costs(m, t, cluster, p, costs, ic);
        const ChunkCosts& ch = ic.at(0, 0);
        const LinkSpec& l = cluster.links;
        const double layer = layer_params(m);
        const double rest = embedding_params(m) + output_params(m) + 2.0 * m.hidden; // embedding, output, final norm
        const double gather =
            32 * intra_node_closed_form(l, Collective::AllGather, layer * 2, 8) + intra_node_closed_form(l, Collective::AllGather, rest * 2, 8);
        const double scatter = 32 * intra_node_closed_form(l, Collective::ReduceScatter, layer * 4, 8) +
                               intra_node_closed_form(l, Collective::ReduceScatter, rest * 4, 8);
        QVERIFY(std::abs(ch.fsdp_gather_traffic_s / gather - 1) < 1e-9);
        QVERIFY(std::abs(ch.fsdp_scatter_traffic_s / scatter - 1) < 1e-9);
        // Prefetch: a layer's gather (~0.8 ms) hides behind the previous layer's compute, so only the first
        // layer's and the embedding/output unit's show.
        const double first =
            intra_node_closed_form(l, Collective::AllGather, layer * 2, 8) + intra_node_closed_form(l, Collective::AllGather, rest * 2, 8);
        QVERIFY(std::abs(ch.fsdp_forward_s / first - 1) < 1e-9);
        QVERIFY(std::abs(ch.fsdp_backward_gather_s / first - 1) < 1e-9);
        QCOMPARE(ch.fsdp_backward_scatter_s, 0.0); // reduce-scatters hide behind the backward
        // The optimizer updates an eighth of the parameters; nothing is gathered after it.
        QCOMPARE(ic.stage[0].param_gather_s, 0.0);

        // Memory per rank: 2 + 4 + 12 bytes per parameter over 8 shards, plus two gathered layers and the
        // gathered embedding and output layer (bf16), and one layer's unsharded fp32 gradients.
        const double P = layer * 32 + rest;
        const auto mem = plan_memory(m, t, p);
        QCOMPARE(mem[0].weights_bytes, 2 * P / 8 + 2 * layer * 2 + 2 * (embedding_params(m) + output_params(m)));
        QCOMPARE(mem[0].gradients_bytes, 4 * P / 8 + layer * 4);
        QCOMPARE(mem[0].optimizer_bytes, 12 * P / 8);
        // Hybrid shard over groups of 4: state over 4 shards, gradients all-reduced across the 2 replicas.
        p.shard_group = 4;
        const auto hybrid = plan_memory(m, t, p);
        QCOMPARE(hybrid[0].optimizer_bytes, 12 * P / 4);
        build_iteration_costs(m, t, cluster, p, costs, ic);
        QVERIFY(ic.at(0, 0).fsdp_gather_traffic_s < gather); // a 4-GPU gather moves 3/4 instead of 7/8

        // The whole iteration: timeline shows the gathers and scatters on the data-parallel lane.
        Scenario s;
        s.model = m;
        s.training = t;
        s.cluster = c;
        p.shard_group = 0;
        const auto r = simulate(s, p, profile);
        QVERIFY(r.ok());
        int gathers = 0, scatters = 0;
        for (const auto& task : r->timeline) {
            gathers += task.kind == TaskKind::FsdpGather ? 1 : 0;
            scatters += task.kind == TaskKind::FsdpReduceScatter ? 1 : 0;
            if (task.kind == TaskKind::FsdpGather) {
                QCOMPARE(int(task.lane), int(Lane::DataParallel));
            }
        }
        QCOMPARE(gathers, 2); // one forward and one backward of the single micro-batch
        QCOMPARE(scatters, 1);
        QVERIFY(r->breakdown.dp_comm_exposed_s >= 2 * first);
    }

    // Issue 29 item 1, communication-bound strong scaling: one micro-batch per replica, so the distributed
    // optimizer's gradient reduce-scatter rides one short backward and its all-gather follows the step.
    void exposed_data_parallel_time_in_closed_form()
    {
        const GpuProfile profile = known_links_profile();
        Scenario sc = on_nodes_of_8(test::gpt(12, 2048, 16, 2048, 51200), training(16), profile, 16);
        Plan p;
        p.dp = 16; // two nodes of 8
        p.zero_stage = 1;
        p.overlap_grad_reduce = true;
        p.overlap_param_gather = false;
        QVERIFY(!check_plan(sc.model, sc.training, p, 16));
        const ResolvedCluster cluster = resolve_cluster(sc.cluster, profile);
        const LayerCosts costs = plan_layer_costs(sc.model, sc.training, cluster, p);
        IterationCosts ic;
        build_iteration_costs(sc.model, sc.training, cluster, p, costs, ic);
        QCOMPARE(ic.micro_batches, 1);
        const ChunkCosts& ch = ic.at(0, 0);
        // Buckets of 40 MiB of fp32 gradients, at most 32 per chunk.
        const double grad_bytes = ch.params.total() * 4;
        const int buckets = std::clamp(static_cast<int>(std::ceil(grad_bytes / (40.0 * 1024 * 1024))), 1, 32);
        QCOMPARE(ch.buckets, buckets);
        // One bucket's reduce-scatter over 16 ranks in 2 domains: 7/8 of it over NVLink (200 GB/s), an eighth of
        // it half across the network (25 GB/s per GPU); NCCL's ring latency over 16 ranks: 14 NVLink hops
        // (3.4 us) and 1 network hop (14 us) after 8.4 us, Simple at this size.
        const double bucket = grad_bytes / buckets;
        const double wire = bucket * 7 / 8 / 200e9 + bucket / 8 / 2 / 25e9;
        const double latency = (8.4 + 14 * 3.4 + 1 * 14.0) * 1e-6;
        QCOMPARE(nccl_best(NcclCollective::ReduceScatter, wire, bucket * 15 / 16, 16, 2).protocol, NcclProtocol::Simple);
        QCOMPARE(ch.bucket_s, latency + wire);
        // The buckets run beside the chunk's last backward on 24 of the 100 SMs: it ends 0.24 x their time later.
        const double contention = 0.24 * std::min(buckets * ch.bucket_s, ch.backward.total_s() / 0.76);
        QCOMPARE(ch.backward_total_s[1], ch.backward.total_s() + contention);
        QVERIFY(ch.bucket_s < ch.backward_total_s[1] / buckets); // each bucket is done before the next is ready
        // The parameter all-gather (bf16) after the step, not overlapped.
        const double params = ch.params.total() * 2;
        const double gather_wire = params * 7 / 8 / 200e9 + params / 8 / 2 / 25e9;
        const double gather = nccl_best(NcclCollective::AllGather, gather_wire, params * 15 / 16, 16, 2).seconds;
        QCOMPARE(ic.stage[0].param_gather_s, gather);
        // Exposed: the last bucket (the others hide in the backward), the contention and the gather.
        SimulationOptions options;
        options.timeline = false;
        const auto r = simulate(sc, p, profile, options);
        QVERIFY(r.ok());
        const double exposed = ch.bucket_s + contention + gather;
        QVERIFY2(std::abs(r->breakdown.dp_comm_exposed_s / exposed - 1) < 1e-9,
                 qPrintable(QString("%1 vs %2").arg(r->breakdown.dp_comm_exposed_s).arg(exposed)));
    }

    // Issue 29 item 2: ZeRO-3 over 1,024 GPUs (128 nodes of 8) at micro-batch 1. Every layer's gather pays NCCL's
    // ring latency over all 1,024 ranks; DeepSpeed's per-submodule fetch pays it four times; in the backward a
    // layer's window carries a gather and a reduce-scatter over the same links.
    void fsdp_at_scale_pays_the_ring_latency_per_fetch()
    {
        const GpuProfile profile = known_links_profile();
        Scenario sc = on_nodes_of_8(test::gpt(24, 2048, 16, 2048, 51200), training(1024), profile, 1024);
        Plan p;
        p.dp = 1024;
        p.zero_stage = 3;
        QVERIFY(!check_plan(sc.model, sc.training, p, 1024));
        const ResolvedCluster cluster = resolve_cluster(sc.cluster, profile);
        const LayerCosts costs = plan_layer_costs(sc.model, sc.training, cluster, p);
        IterationCosts ic;
        build_iteration_costs(sc.model, sc.training, cluster, p, costs, ic);
        const ChunkCosts& layerwise = ic.at(0, 0);
        auto over_1024 = [](NcclCollective kind, double bytes) {
            const double wire = bytes * 7 / 8 / 200e9 + bytes / 8 * 127 / 128 / 25e9;
            return nccl_best(kind, wire, bytes * 1023 / 1024, 1024, 128).seconds;
        };
        const double layer = layer_params(sc.model);
        const double g = over_1024(NcclCollective::AllGather, layer * 2);
        const double sct = over_1024(NcclCollective::ReduceScatter, layer * 4);
        QVERIFY(g > nccl_latency_seconds(NcclCollective::AllGather, NcclAlgorithm::Ring, NcclProtocol::LL, 1024, 128)); // > 1.2 ms of hops
        const double rest = embedding_params(sc.model) + 2.0 * sc.model.hidden;                                         // tied embedding, final norm
        const double rest_g = over_1024(NcclCollective::AllGather, rest * 2);
        const double fwd = costs.layer.forward.total_s();
        const double bwd = costs.layer.backward.total_s();
        QVERIFY(std::abs(layerwise.fsdp_gather_traffic_s / (24 * g + rest_g) - 1) < 1e-9);
        // Forward: the first gather and the embedding's show, each later one what outlasts the layer before it.
        QVERIFY(std::abs(layerwise.fsdp_forward_s / (g + 23 * std::max(0.0, g - fwd) + rest_g) - 1) < 1e-9);
        // Backward: 22 windows carry a gather and a scatter, one (the chunk's first layer) a gather alone, one (its
        // last) a scatter alone; the scatters add what the shared windows outlast beyond the gathers alone.
        const double shared = 22 * std::max(0.0, g + sct - bwd) + std::max(0.0, g - bwd) + std::max(0.0, sct - bwd);
        const double gathers_alone = 23 * std::max(0.0, g - bwd);
        const double scatter_total = 24 * sct + over_1024(NcclCollective::ReduceScatter, rest * 4);
        QVERIFY(std::abs(layerwise.fsdp_backward_scatter_s -
                         std::max(shared - gathers_alone, std::max(0.0, scatter_total - layerwise.backward.total_s()))) < 1e-12);
        // DeepSpeed ZeRO-3: four gathers of a quarter layer, each with the ring's latency.
        sc.training.zero3_fetch = Zero3Fetch::Module;
        build_iteration_costs(sc.model, sc.training, cluster, p, costs, ic);
        const double g4 = 4 * over_1024(NcclCollective::AllGather, layer * 2 / 4);
        QVERIFY(std::abs(ic.at(0, 0).fsdp_gather_traffic_s / (24 * g4 + rest_g) - 1) < 1e-9);
        QVERIFY(g4 > g + 2 * nccl_latency_seconds(NcclCollective::AllGather, NcclAlgorithm::Ring, NcclProtocol::LL, 1024, 128));
        // And the whole iteration is slower than the per-layer fetch, which is slower than compute alone.
        SimulationOptions options;
        options.timeline = false;
        const auto module = simulate(sc, p, profile, options);
        sc.training.zero3_fetch = Zero3Fetch::Layer;
        const auto per_layer = simulate(sc, p, profile, options);
        QVERIFY(module.ok() && per_layer.ok());
        QVERIFY(module->iteration_time_s > per_layer->iteration_time_s);
        QVERIFY(per_layer->breakdown.dp_comm_exposed_s > 0.25 * per_layer->iteration_time_s);
    }

    // Issue 29 item 3: Qwen3-235B-A22B on 256 H100 (8 x 400 Gb/s per node), t2 p8 vp4 ep32 etp1, micro-batch 1,
    // global batch 2,048, as Megatron-Bridge's H100 preset runs it (QWEN3_235B_A22B H100 V1: alltoall dispatcher,
    // moe_a2a_overlap True). The expert group spans 4 nodes; the all-to-all bytes that cross the network in
    // closed form, and the iteration must not be mostly exposed all-to-all.
    void qwen3_235b_experts_across_nodes_in_closed_form()
    {
        const GroupPlacement ep = place_group(32, 1, 8); // etp 1: the 32 expert ranks are consecutive
        QCOMPARE(ep.nodes, 4);
        QCOMPARE(ep.members_per_node, 8);
        // Per rank and dispatch: 4,096 / tp = 2,048 tokens x 8 rows of 4,096 bf16; 24 of 32 destinations are remote.
        QCOMPARE(moe_network_bytes_per_rank(2048, 8, 128, 4096 * 2, ep, false), 2048.0 * 8 * 8192 * 24 / 32); // 100,663,296
        // DeepEP/HybridEP send a token once per remote node its experts use: 3 x (1 - C(96, 8) / C(128, 8)) = 2.71.
        double miss = 1;
        for (int i = 0; i < 8; ++i) {
            miss *= (96.0 - i) / (128.0 - i);
        }
        QCOMPARE(moe_network_bytes_per_rank(2048, 8, 128, 8192, ep, true), 2048 * 3 * (1 - miss) * 8192);

        const ModelSpec m = qwen3_235b();
        const GpuProfile profile = test::shipped_profile("h100-sxm5-80gb");
        Scenario sc;
        sc.model = m;
        sc.training = training(2048, Precision::Fp8);
        sc.training.fp8_recipe = Fp8Recipe::Current;
        sc.cluster.gpu = profile.id;
        sc.cluster.num_gpus = 256;
        sc.cluster.gpus_per_node = 8;
        sc.cluster.links.nics_per_node = 8;
        sc.cluster.links.nic_gbit_per_s = 400; // "InfiniBand 8x50 GB/s per node"
        Plan p;
        p.tp = 2;
        p.pp = 8;
        p.dp = 16;
        p.ep = 32;
        p.etp = 1;
        p.sequence_parallel = true;
        p.schedule = Schedule::Interleaved;
        p.virtual_stages = 4;
        p.pipeline_layout = "Et*2|(t*3|)*30t*2L"; // 94 layers + embedding + loss over 32 chunks
        p.zero_stage = 1;
        p.overlap_param_gather = true;
        const ResolvedCluster cluster = resolve_cluster(sc.cluster, profile);
        QVERIFY2(!check_plan(m, sc.training, p, 256), "plan refused");
        // One MoE layer's forward dispatch + combine, not overlapped: each waits for its network part,
        // 100.7 MB at the GPU's NIC share, or its NVLink part, whichever is longer, after the network latency.
        const LayerCosts plain = plan_layer_costs(m, sc.training, cluster, p);
        const LinkSpec& l = cluster.links;
        const double nic = l.nics_per_node * l.nic_gbit_per_s * 1e9 / 8 * l.nic_efficiency / l.gpus_per_node;
        const double buffer = 2048.0 * 8 * 8192;
        const double nvlink = 7 * buffer / 32 / (l.nvlink_bus_gbytes_per_s * 1e9 * profile.expert_all_to_all_efficiency);
        const double one = (l.inter_node_base_latency_us + 3 * l.inter_node_latency_us) * 1e-6 + std::max(nvlink, buffer * 24 / 32 / nic);
        QVERIFY2(std::abs(plain.layer_at(10).forward.ep_comm_s / (2 * one) - 1) < 1e-9,
                 qPrintable(QString("%1 vs %2").arg(plain.layer_at(10).forward.ep_comm_s).arg(2 * one)));
        // The preset's plan: exposed all-to-all is not most of the iteration.
        p.moe_overlap = true;
        SimulationOptions options;
        options.timeline = false;
        const auto r = simulate(sc, p, profile, options);
        QVERIFY(r.ok());
        qInfo("qwen3-235b h100 256: %.2f s per iteration, %.1f%% exposed expert all-to-all, %.0f tokens/s/GPU", r->iteration_time_s,
              100 * r->breakdown.ep_comm_s / r->iteration_time_s, 2048.0 * 4096 / r->iteration_time_s / 256);
        QVERIFY(r->breakdown.ep_comm_s < 0.5 * r->iteration_time_s);
    }

    // Megatron-Core's expert all-to-all overlap pairs a forward with another micro-batch's backward
    // (combined_1f1b.py): a stage's unpaired passes (unpaired_passes(): the first forward and the last
    // backward without a pipeline, warm-up + 1 of each in 1F1B) expose what the overlap hides elsewhere. Each
    // stage's exposed all-to-all in closed form: m passes' exposed part plus the unpaired share of the hidden.
    // And Megatron refuses the overlap with the whole layer recomputed.
    void expert_overlap_exposes_the_unpaired_passes()
    {
        ModelSpec m = qwen3_235b();
        m.layers = 8;
        const GpuProfile profile = test::shipped_profile("h100-sxm5-80gb");
        Scenario sc = on_nodes_of_8(m, training(64), profile, 32);
        for (const int pp : {1, 2}) {
            Plan p;
            p.pp = pp;
            p.dp = 32 / pp;
            p.ep = 16;
            p.etp = 1;
            p.zero_stage = 1;
            p.moe_overlap = true;
            p.recompute = Recompute::Selective;
            const int micro_batches = 64 / p.dp;
            QVERIFY2(!check_plan(m, sc.training, p, 32), "plan refused");
            const ResolvedCluster cluster = resolve_cluster(sc.cluster, profile);
            const LayerCosts costs = plan_layer_costs(m, sc.training, cluster, p);
            const double hidden = costs.layer_at(0).forward.ep_hidden_s + costs.layer_at(0).backward.ep_hidden_s;
            const double exposed = costs.layer_at(0).forward.ep_comm_s + costs.layer_at(0).backward.ep_comm_s;
            QVERIFY(hidden > 0);
            SimulationOptions options;
            options.timeline = false;
            const auto r = simulate(sc, p, profile, options);
            QVERIFY(r.ok());
            const int layers_per_stage = m.layers / pp;
            for (int s = 0; s < pp; ++s) {
                const int alone = pp == 1 ? 1 : pp - s; // warm-up p - s - 1, plus one
                QCOMPARE(unpaired_passes(p.schedule, pp, micro_batches, 1, s), alone);
                const double expected = layers_per_stage * (micro_batches * exposed + alone * hidden);
                const double got = r->stages[static_cast<std::size_t>(s)].breakdown.ep_comm_s;
                QVERIFY2(std::abs(got / expected - 1) < 1e-9, qPrintable(QString("pp %1 stage %2: %3 vs %4").arg(pp).arg(s).arg(got).arg(expected)));
            }
            p.recompute = Recompute::Full;
            const auto refused = check_plan(m, sc.training, p, 32);
            QVERIFY(refused && refused->reason == RejectReason::OverlapInvalid && refused->diagnostic.field == "plan.moe_overlap");
            p.recompute = Recompute::Selective;
            p.recompute_modules = kRecomputeMoe;
            QVERIFY(check_plan(m, sc.training, p, 32).has_value());
        }
    }

    void fp8_memory_per_parameter_for_each_recipe()
    {
        // Megatron's distributed optimizer (ZeRO-1) over d = 8: bf16 weights 2 + quantized row- and column-
        // wise copies + fp32 gradients 4 + (master 4 + Adam 8) / d (MLM dist_optimizer.md; TE recipes).
        struct Row {
            Precision precision;
            Fp8Recipe recipe;
            double low_precision;
        };
        const Row rows[] = {{Precision::Bf16, Fp8Recipe::Delayed, 0.0},         {Precision::Fp8, Fp8Recipe::Delayed, 2.0},
                            {Precision::Fp8, Fp8Recipe::Current, 2.0},          {Precision::Fp8, Fp8Recipe::Blockwise, 2.0 + 8.0 / 16384},
                            {Precision::Fp8, Fp8Recipe::Mxfp8, 2.0 + 2.0 / 32}, {Precision::Nvfp4, Fp8Recipe::Delayed, 1.0 + 2.0 / 16}};
        const ModelSpec m = llama8b();
        Plan p;
        p.dp = 8;
        p.zero_stage = 1;
        for (const Row& row : rows) {
            TrainingSpec t = training(16, row.precision);
            t.fp8_recipe = row.recipe;
            const ParamBytes b = param_bytes(t, p);
            QCOMPARE(b.low_precision, row.low_precision);
            QCOMPARE(b.weight + b.low_precision + b.gradient + b.optimizer / 8, 2 + row.low_precision + 4 + 12.0 / 8);
            const auto mem = plan_memory(m, t, p);
            const double decoder = layer_params(m) * 32 + 2.0 * m.hidden; // what the recipe quantizes
            const double vocab = embedding_params(m) + output_params(m);
            QVERIFY(std::abs(mem[0].weights_bytes / (2 * (decoder + vocab) + row.low_precision * decoder) - 1) < 1e-12);
        }
        // FSDP gathers per-tensor-scaled FP8 weights (1 byte); block-scaled recipes gather bf16.
        p.zero_stage = 3;
        TrainingSpec t = training(16, Precision::Fp8);
        t.fp8_recipe = Fp8Recipe::Current;
        QCOMPARE(param_bytes(t, p).gather, 1.0);
        t.fp8_recipe = Fp8Recipe::Mxfp8;
        QCOMPARE(param_bytes(t, p).gather, 2.0);
    }

    void dense_gradients_reduce_over_dp_times_cp()
    {
        const ModelSpec m = llama8b();
        const auto profile = test::shipped_profile("h100-sxm5-80gb");
        ClusterSpec c;
        c.gpu = profile.id;
        c.num_gpus = 16;
        c.gpus_per_node = 8;
        const ResolvedCluster cluster = resolve_cluster(c, profile);
        Plan p;
        p.tp = 2;
        p.cp = 2;
        p.dp = 4;
        p.sequence_parallel = true;
        const TrainingSpec t = training(64);
        QVERIFY(!check_plan(m, t, p, 16));
        const LayerCosts costs = plan_layer_costs(m, t, cluster, p);
        IterationCosts ic;
        build_iteration_costs(m, t, cluster, p, costs, ic);
        const ChunkCosts& ch = ic.at(0, 0);
        CommModel comm;
        comm.links = cluster.links;
        comm.measured_all_reduce = &profile.all_reduce;
        // The dp x cp = 8 ranks with stride tp = 2 span two nodes of 8.
        const GroupPlacement group = place_group(8, 2, 8);
        QCOMPARE(group.nodes, 2);
        const double bytes = ch.params.total() * 4 / ch.buckets;
        QCOMPARE(ch.bucket_s, comm.collective_seconds(Collective::AllReduce, bytes, group));
        // Sends carry 1/(tp x cp) of a micro-batch's activations.
        const double p2p = static_cast<double>(m.seq_len) * m.hidden * 2 / 4;
        p.pp = 2;
        p.dp = 2;
        build_iteration_costs(m, t, cluster, p, plan_layer_costs(m, t, cluster, p), ic);
        QCOMPARE(ic.stage[0].send_forward_s, comm.p2p_seconds(p2p, true)); // stage 1 starts on the second node
    }

    void overlapped_parameter_gather_leaves_the_iteration_end()
    {
        const ModelSpec m = llama8b();
        const auto profile = test::shipped_profile("h100-sxm5-80gb");
        Scenario s = on_nodes_of_8(m, training(256), profile, 64);
        Plan p;
        p.tp = 2;
        p.pp = 2;
        p.dp = 16;
        p.sequence_parallel = true;
        p.zero_stage = 1;
        SimulationOptions options;
        options.timeline = false;
        const auto plain = simulate(s, p, profile, options);
        p.overlap_param_gather = true;
        const auto hidden = simulate(s, p, profile, options);
        QVERIFY(plain.ok() && hidden.ok());
        QVERIFY(hidden->iteration_time_s < plain->iteration_time_s);
        QVERIFY(hidden->breakdown.dp_comm_exposed_s < plain->breakdown.dp_comm_exposed_s);
    }
};

QTEST_APPLESS_MAIN(TestIterationModel)
#include "tst_iteration_model.moc"
