// SPDX-License-Identifier: MIT
// How layers compose into stages and an iteration: pipeline layouts (hand-computed uneven splits, the
// DeepSeek-V3 and Megatron documentation layouts), plan rules for folding, sharding and overlap, ZeRO-3
// gather/scatter volumes and memory per rank in closed form, FP8 memory per parameter for each recipe,
// and data-parallel groups under context parallelism.
#include <QtTest>

#include <cmath>

#include "iteration/iteration_costs.h"
#include "iteration/task_graph_simulation.h"
#include "model/model_math.h"
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
        Scenario s;
        s.model = m;
        s.training = training(2048);
        s.cluster.gpu = "h100-sxm5-80gb";
        s.cluster.num_gpus = 16384;
        s.cluster.gpus_per_node = 8;
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

        // Memory per rank: 2 + 4 + 12 bytes per parameter over 8 shards, plus two gathered layers (bf16)
        // and one layer's unsharded fp32 gradients.
        const double P = layer * 32 + rest;
        const auto mem = plan_memory(m, t, p);
        QCOMPARE(mem[0].weights_bytes, 2 * P / 8 + 2 * layer * 2);
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
        Scenario s;
        s.model = m;
        s.training = training(256);
        s.cluster.gpu = profile.id;
        s.cluster.num_gpus = 64;
        s.cluster.gpus_per_node = 8;
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
