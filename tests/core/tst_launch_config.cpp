// SPDX-License-Identifier: MIT
// Plans as launch flags: the exact Megatron-LM arguments for an MT-NLG-like plan, layers per virtual
// stage, recompute and ZeRO mappings, DeepSpeed's batch arithmetic and keys, and refused plans.
#include <algorithm>

#include <QtTest>

#include "test_support.h"
#include "vtrain/launch_bridge.h"
#include "vtrain/launch_config.h"
#include "vtrain/plan_check.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"

using namespace vtrain;

namespace {

// MT-NLG 530B on 3,360 GPUs with the interleaved schedule. The published global batch of 1920 gives
// 160 micro-batches per replica, not a multiple of p = 35 as interleaving needs; 1680 gives 140.
Scenario mtnlg_like()
{
    Scenario s;
    s.model = test::gpt(105, 20480, 128, 2048, 51200);
    s.cluster.gpu = "a100-sxm4-80gb";
    s.cluster.num_gpus = 3360;
    s.cluster.gpus_per_node = 8;
    s.training.global_batch = 1680;
    s.training.tokens = 270e9;
    s.training.precision = Precision::Bf16;
    s.training.attention = AttentionKernel::Unfused;
    Plan p;
    p.tp = 8;
    p.pp = 35;
    p.dp = 12;
    p.micro_batch = 1;
    p.schedule = Schedule::Interleaved;
    p.virtual_stages = 3;
    p.recompute = Recompute::Selective;
    p.sequence_parallel = true;
    p.zero_stage = 1;
    p.grad_bucket_mb = 40;
    p.overlap_grad_reduce = true;
    s.plan = p;
    return s;
}

// GPT 1.3B on one 8-GPU node, data parallel.
Scenario small()
{
    Scenario s;
    s.model = test::gpt(24, 2048, 16, 2048, 50257);
    s.cluster.gpu = "a100-sxm4-80gb";
    s.cluster.num_gpus = 8;
    s.training.global_batch = 512;
    s.training.tokens = 1e9;
    Plan p;
    p.dp = 8;
    p.micro_batch = 4;
    s.plan = p;
    return s;
}

bool has(const std::vector<std::string>& list, const std::string& item)
{
    return std::find(list.begin(), list.end(), item) != list.end();
}

bool mentions(const std::vector<std::string>& warnings, const std::string& text)
{
    return std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// The value of "--flag value" in an argument list, or "" when the flag is absent.
std::string value_of(const std::vector<std::string>& args, const std::string& flag)
{
    for (const std::string& a : args) {
        if (a.rfind(flag + ' ', 0) == 0) {
            return a.substr(flag.size() + 1);
        }
    }
    return {};
}

} // namespace

class TestLaunchConfig : public QObject {
    Q_OBJECT
private slots:
    void megatron_flags_for_an_mtnlg_like_plan_are_exact()
    {
        const Scenario s = mtnlg_like();
        const auto launch = megatron_launch(s, *s.plan, 8);
        QVERIFY2(launch.ok(), launch.first_error().c_str());
        const std::vector<std::string> expected{
            "--num-layers 105",
            "--hidden-size 20480",
            "--ffn-hidden-size 81920",
            "--num-attention-heads 128",
            "--seq-length 2048",
            "--max-position-embeddings 2048",
            "--attention-backend unfused",
            "--tensor-model-parallel-size 8",
            "--pipeline-model-parallel-size 35",
            "--num-layers-per-virtual-pipeline-stage 1", // 105 / (35 x 3)
            "--sequence-parallel",
            "--micro-batch-size 1",
            "--global-batch-size 1680",
            "--train-samples 131835938", // 270e9 / 2048 = 131,835,937.5, rounded up
            "--bf16",
            "--recompute-granularity selective",
            "--no-overlap-p2p-communication",
            "--use-distributed-optimizer",
            "--overlap-grad-reduce",
            "--ddp-bucket-size 10485760", // 40 MiB of fp32 gradients
        };
        QCOMPARE(launch->arguments, expected);
        QCOMPARE(launch->launch_command, std::string("CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 --nnodes 420 --node_rank $NODE_RANK "
                                                     "--master_addr $MASTER_ADDR --master_port 6000 pretrain_gpt.py"));
        QVERIFY(mentions(launch->warnings, "--data-path"));
        QVERIFY(mentions(launch->warnings, "tokenizer"));
        QVERIFY(!mentions(launch->warnings, "ZeRO-2"));
        const std::string text = launch->command_text();
        QVERIFY(text.rfind(launch->launch_command + " \\\n    --num-layers 105 \\\n", 0) == 0);
    }

    void layers_per_virtual_stage_is_layers_over_p_times_v_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("virtualStages");
        QTest::addColumn<int>("expected");
        QTest::newRow("96 / (16 x 2)") << 96 << 16 << 2 << 3;
        QTest::newRow("96 / (8 x 4)") << 96 << 8 << 4 << 3;
        QTest::newRow("96 / (4 x 3)") << 96 << 4 << 3 << 8;
        QTest::newRow("48 / (2 x 2)") << 48 << 2 << 2 << 12;
    }
    void layers_per_virtual_stage_is_layers_over_p_times_v()
    {
        QFETCH(int, layers);
        QFETCH(int, pp);
        QFETCH(int, virtualStages);
        QFETCH(int, expected);
        Scenario s;
        s.model = test::gpt(layers, 12288, 96);
        s.cluster.num_gpus = 8 * pp;
        s.training.global_batch = 96 * pp; // micro-batches per replica a multiple of p
        Plan p;
        p.tp = 8;
        p.pp = pp;
        p.schedule = Schedule::Interleaved;
        p.virtual_stages = virtualStages;
        const auto launch = megatron_launch(s, p, 8);
        QVERIFY2(launch.ok(), launch.first_error().c_str());
        QCOMPARE(value_of(launch->arguments, "--num-layers-per-virtual-pipeline-stage"), std::to_string(expected));

        p.schedule = Schedule::OneFOneB;
        p.virtual_stages = 1;
        const auto plain = megatron_launch(s, p, 8);
        QVERIFY(plain.ok());
        QVERIFY(value_of(plain->arguments, "--num-layers-per-virtual-pipeline-stage").empty());
    }

    void fused_loss_and_pipeline_send_overlap_map_to_megatron()
    {
        // MT-NLG's interleaved plan: Megatron-LM overlaps the sends by default, the simulated plan did not.
        Scenario s = mtnlg_like();
        Plan p = *s.plan;
        auto m = megatron_launch(s, p, 8);
        QVERIFY(m.ok());
        QVERIFY(has(m->arguments, "--no-overlap-p2p-communication"));
        QVERIFY(!has(m->arguments, "--cross-entropy-loss-fusion"));
        s.training.overlap_p2p = true;
        s.training.te_cross_entropy = true;
        m = megatron_launch(s, p, 8);
        QVERIFY(m.ok());
        QVERIFY(!has(m->arguments, "--no-overlap-p2p-communication"));
        QVERIFY(has(m->arguments, "--cross-entropy-loss-fusion"));
        QCOMPARE(value_of(m->arguments, "--cross-entropy-fusion-impl"), std::string("te"));
        // A plan simulated with PyTorch's interleaved warm-up says so when launched on Megatron-LM, and the
        // other way round on torchtitan.
        QVERIFY(!mentions(m->warnings, "pipeline_runtime"));
        s.training.pipeline_runtime = PipelineRuntime::PyTorch;
        m = megatron_launch(s, p, 8);
        QVERIFY(m.ok());
        QVERIFY(mentions(m->warnings, "PyTorch's interleaved warm-up"));
        const auto titan = torchtitan_launch(s, p, 8);
        QVERIFY2(titan.ok(), titan.first_error().c_str());
        QVERIFY(!mentions(titan->warnings, "Megatron-Core's interleaved warm-up"));
        s.training.pipeline_runtime = PipelineRuntime::Megatron;
        const auto titan_megatron = torchtitan_launch(s, p, 8);
        QVERIFY2(titan_megatron.ok(), titan_megatron.first_error().c_str());
        QVERIFY(mentions(titan_megatron->warnings, "Megatron-Core's interleaved warm-up"));
        // 1F1B has no overlapped sends to turn off.
        p.schedule = Schedule::OneFOneB;
        p.virtual_stages = 1;
        s.training.overlap_p2p = false;
        m = megatron_launch(s, p, 8);
        QVERIFY(m.ok());
        QVERIFY(!has(m->arguments, "--no-overlap-p2p-communication"));
    }

    void recompute_maps_to_megatron_and_deepspeed()
    {
        Scenario s = small();
        Plan p = *s.plan;

        p.recompute = Recompute::None;
        auto m = megatron_launch(s, p, 8);
        auto d = deepspeed_launch(s, p, 8);
        QVERIFY(m.ok() && d.ok());
        QVERIFY(value_of(m->arguments, "--recompute-granularity").empty());
        QVERIFY(!d->config.contains("activation_checkpointing"));

        p.recompute = Recompute::Selective;
        m = megatron_launch(s, p, 8);
        d = deepspeed_launch(s, p, 8);
        QCOMPARE(value_of(m->arguments, "--recompute-granularity"), std::string("selective"));
        QVERIFY(value_of(m->arguments, "--recompute-method").empty());
        QVERIFY(!d->config.contains("activation_checkpointing"));
        QCOMPARE(value_of(d->arguments, "--recompute-granularity"), std::string("selective"));
        QVERIFY(mentions(d->warnings, "selective recomputation has no ds_config key"));

        p.recompute = Recompute::Full;
        m = megatron_launch(s, p, 8);
        d = deepspeed_launch(s, p, 8);
        QCOMPARE(value_of(m->arguments, "--recompute-granularity"), std::string("full"));
        QCOMPARE(value_of(m->arguments, "--recompute-method"), std::string("uniform"));
        QCOMPARE(value_of(m->arguments, "--recompute-num-layers"), std::string("1"));
        QVERIFY(d->config.contains("activation_checkpointing"));
        QCOMPARE(d->config["activation_checkpointing"]["partition_activations"].get<bool>(), false);
        QVERIFY(has(d->arguments, "--deepspeed-activation-checkpointing"));
    }

    void zero_stages_map_to_megatron_and_deepspeed()
    {
        Scenario s = small();
        Plan p = *s.plan;
        for (int stage : {0, 1, 2}) {
            p.zero_stage = stage;
            const auto m = megatron_launch(s, p, 8);
            const auto d = deepspeed_launch(s, p, 8);
            QVERIFY(m.ok() && d.ok());
            QCOMPARE(has(m->arguments, "--use-distributed-optimizer"), stage >= 1);
            QCOMPARE(mentions(m->warnings, "ZeRO-2"), stage == 2);
            QCOMPARE(d->config["zero_optimization"]["stage"].get<int>(), stage);
            QCOMPARE(value_of(d->arguments, "--zero-stage"), std::to_string(stage));
            QCOMPARE(d->config["zero_optimization"].contains("reduce_bucket_size"), stage >= 1);
        }
        p.zero_stage = 1;
        p.grad_bucket_mb = 25;
        p.overlap_grad_reduce = false;
        const auto bf16 = deepspeed_launch(s, p, 8);
        QCOMPARE(bf16->config["zero_optimization"]["reduce_bucket_size"].get<long long>(), 25LL * 1024 * 1024 / 4);
        QCOMPARE(bf16->config["zero_optimization"]["overlap_comm"].get<bool>(), false);
        s.training.precision = Precision::Fp16;
        const auto fp16 = deepspeed_launch(s, p, 8);
        QCOMPARE(fp16->config["zero_optimization"]["reduce_bucket_size"].get<long long>(), 25LL * 1024 * 1024 / 2);
        QVERIFY(fp16->config.contains("fp16") && !fp16->config.contains("bf16"));
        QVERIFY(has(megatron_launch(s, p, 8)->arguments, "--fp16"));

        // ZeRO-2 with pipeline parallelism: DeepSpeed's pipeline engine refuses it.
        Scenario big = mtnlg_like();
        Plan pipelined = *big.plan;
        pipelined.zero_stage = 2;
        QVERIFY(mentions(deepspeed_launch(big, pipelined, 8)->warnings, "refuses ZeRO stage 2"));
    }

    void deepspeed_batch_arithmetic_and_keys()
    {
        const Scenario s = mtnlg_like();
        const auto d = deepspeed_launch(s, *s.plan, 8);
        QVERIFY2(d.ok(), d.first_error().c_str());
        const auto& c = d->config;
        QCOMPARE(c["train_batch_size"].get<int>(), 1680);
        QCOMPARE(c["train_micro_batch_size_per_gpu"].get<int>(), 1);
        QCOMPARE(c["gradient_accumulation_steps"].get<int>(), 1680 / (1 * 12));
        QCOMPARE(c["bf16"]["enabled"].get<bool>(), true);
        QCOMPARE(c["zero_optimization"]["stage"].get<int>(), 1);
        QCOMPARE(c["zero_optimization"]["reduce_bucket_size"].get<long long>(), 10485760LL);
        QCOMPARE(c["zero_optimization"]["overlap_comm"].get<bool>(), true);
        QCOMPARE(c.begin().key(), std::string("train_batch_size"));
        QVERIFY(has(d->arguments, "--tensor-model-parallel-size 8"));
        QVERIFY(has(d->arguments, "--pipeline-model-parallel-size 35"));
        QVERIFY(has(d->arguments, "--deepspeed_config ds_config.json"));
        QVERIFY(!has(d->arguments, "--no-pipeline-parallel"));
        QVERIFY(mentions(d->warnings, "PipelineModule"));
        QVERIFY(mentions(d->warnings, "interleaved schedule has no equivalent"));
        QCOMPARE(d->launch_command,
                 std::string("CUDA_DEVICE_MAX_CONNECTIONS=1 deepspeed --hostfile hostfile --num_nodes 420 --num_gpus 8 pretrain_gpt.py"));

        Scenario one = small();
        Plan p = *one.plan;
        p.micro_batch = 2;
        const auto single = deepspeed_launch(one, p, 8);
        QCOMPARE(single->config["gradient_accumulation_steps"].get<int>(), 512 / (2 * 8));
        QVERIFY(has(single->arguments, "--no-pipeline-parallel"));
        QCOMPARE(single->launch_command, std::string("deepspeed --num_gpus 8 pretrain_gpt.py"));
    }

    void train_samples_round_up_data()
    {
        QTest::addColumn<double>("tokens");
        QTest::addColumn<QString>("expected");
        QTest::newRow("exact") << 2048e6 << QStringLiteral("1000000");
        QTest::newRow("fraction") << 1e9 << QStringLiteral("488282"); // 488,281.25
        QTest::newRow("one token over") << 2048e6 + 1 << QStringLiteral("1000001");
        QTest::newRow("not given") << 0.0 << QString();
    }
    void train_samples_round_up()
    {
        QFETCH(double, tokens);
        QFETCH(QString, expected);
        Scenario s = small();
        s.training.tokens = tokens;
        const auto m = megatron_launch(s, *s.plan, 8);
        QVERIFY(m.ok());
        QCOMPARE(QString::fromStdString(value_of(m->arguments, "--train-samples")), expected);
        QCOMPARE(mentions(m->warnings, "training.tokens is not given"), tokens == 0);
    }

    void model_shape_flags()
    {
        Scenario s = small();
        s.model.kv_heads = 4;
        s.model.activation = FfnActivation::SwiGlu;
        s.model.ffn_hidden = 5504;
        s.model.tied_embeddings = false;
        s.training.attention = AttentionKernel::Flash;
        const auto m = megatron_launch(s, *s.plan, 8);
        QVERIFY(m.ok());
        QVERIFY(has(m->arguments, "--group-query-attention"));
        QCOMPARE(value_of(m->arguments, "--num-query-groups"), std::string("4"));
        QVERIFY(has(m->arguments, "--swiglu"));
        QCOMPARE(value_of(m->arguments, "--ffn-hidden-size"), std::string("5504"));
        QVERIFY(has(m->arguments, "--untie-embeddings-and-output-weights"));
        QCOMPARE(value_of(m->arguments, "--attention-backend"), std::string("flash"));
        QVERIFY(has(deepspeed_launch(s, *s.plan, 8)->arguments, "--use-flash-attn-v2"));
        // The layer options the scenario states: LayerNorm and linear biases are Megatron's defaults here...
        QVERIFY(!has(m->arguments, "--normalization RMSNorm"));
        QVERIFY(has(m->arguments, "--disable-bias-linear"));
        QVERIFY(!has(m->arguments, "--qk-layernorm"));
        QVERIFY(!has(m->arguments, "--add-qkv-bias"));
        QVERIFY(mentions(m->warnings, "--position-embedding-type rope"));
        // ...a Qwen3-style model asks for RMSNorm and QK norm, a Qwen2-style one for QKV biases only.
        s.model.normalization = Normalization::RmsNorm;
        s.model.qk_norm = true;
        const auto qwen3 = megatron_launch(s, *s.plan, 8);
        QVERIFY(has(qwen3->arguments, "--normalization RMSNorm"));
        QVERIFY(has(qwen3->arguments, "--qk-layernorm"));
        s.model.qk_norm = false;
        s.model.qkv_bias = true;
        QVERIFY(has(megatron_launch(s, *s.plan, 8)->arguments, "--add-qkv-bias"));
        s.model.linear_bias = true; // biases everywhere (GPT-OSS): Megatron's default, nothing to write
        const auto biased = megatron_launch(s, *s.plan, 8);
        QVERIFY(!has(biased->arguments, "--disable-bias-linear"));
        QVERIFY(!has(biased->arguments, "--add-qkv-bias"));
        // GPT-style (GELU) layers keep Megatron's defaults.
        QVERIFY(!has(megatron_launch(small(), *small().plan, 8)->arguments, "--disable-bias-linear"));
    }

    void schedule_and_node_layout()
    {
        Scenario s = small();
        s.cluster.num_gpus = 4;
        Plan p = *s.plan;
        p.dp = 2;
        p.pp = 2;
        p.micro_batch = 8;
        p.schedule = Schedule::GPipe;
        const auto m = megatron_launch(s, p, 8);
        QVERIFY2(m.ok(), m.first_error().c_str());
        QCOMPARE(m->launch_command, std::string("torchrun --nproc_per_node 4 --nnodes 1 pretrain_gpt.py"));
        QVERIFY(mentions(m->warnings, "no GPipe schedule"));
        QVERIFY(has(m->arguments, "--overlap-grad-reduce")); // d = 2 overlaps its buckets

        s.cluster.num_gpus = 12;
        s.training.global_batch = 480; // a multiple of d = 6
        p.dp = 6;
        p.micro_batch = 1;
        const auto ragged = megatron_launch(s, p, 8);
        QVERIFY(ragged.ok());
        QVERIFY(mentions(ragged->warnings, "do not fill whole nodes"));
    }

    void impossible_plans_give_a_diagnostic_with_the_field_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("virtualStages");
        QTest::addColumn<int>("gpusPerNode");
        QTest::addColumn<QString>("field");
        QTest::newRow("gpu count") << 8 << 11 << 3 << 8 << QStringLiteral("plan");
        QTest::newRow("tp vs heads") << 3 << 32 << 3 << 8 << QStringLiteral("plan.tp");                // 3 x 35 x 32 = 3360
        QTest::newRow("virtual stages") << 8 << 12 << 2 << 8 << QStringLiteral("plan.virtual_stages"); // 105 % 70
        QTest::newRow("node size") << 8 << 12 << 3 << 0 << QStringLiteral("cluster.gpus_per_node");
    }
    void impossible_plans_give_a_diagnostic_with_the_field()
    {
        QFETCH(int, tp);
        QFETCH(int, dp);
        QFETCH(int, virtualStages);
        QFETCH(int, gpusPerNode);
        QFETCH(QString, field);
        const Scenario s = mtnlg_like();
        Plan p = *s.plan;
        p.tp = tp;
        p.dp = dp;
        p.virtual_stages = virtualStages;
        const auto m = megatron_launch(s, p, gpusPerNode);
        const auto d = deepspeed_launch(s, p, gpusPerNode);
        QVERIFY(!m.ok() && !d.ok());
        QCOMPARE(QString::fromStdString(m.errors().front().field), field);
        QCOMPARE(QString::fromStdString(d.errors().front().field), field);
        QVERIFY(!m.errors().front().message.empty());
    }

    void todays_megatron_flags_for_long_context_fp8_fsdp_and_layouts()
    {
        // Llama 3.1 405B's long-context phase: CP16 with the ring, uneven first/last stages.
        Scenario s;
        s.model = test::gpt(126, 16384, 128, 131072, 128256);
        s.model.kv_heads = 8;
        s.model.ffn_hidden = 53248;
        s.model.activation = FfnActivation::SwiGlu;
        s.cluster.gpu = "h100-sxm5-80gb";
        s.cluster.num_gpus = 8192;
        s.training.global_batch = 128;
        s.training.tokens = 800e9;
        Plan p;
        p.tp = 8;
        p.cp = 16;
        p.pp = 16;
        p.dp = 4;
        p.sequence_parallel = true;
        p.zero_stage = 1;
        p.overlap_param_gather = true;
        p.tp_overlap = true;
        p.first_stage_layers = 7;
        p.last_stage_layers = 7;
        auto m = megatron_launch(s, p, 8);
        QVERIFY2(m.ok(), m.first_error().c_str());
        for (const char* flag :
             {"--context-parallel-size 16", "--cp-comm-type p2p", "--decoder-first-pipeline-num-layers 7", "--decoder-last-pipeline-num-layers 7",
              "--tp-comm-overlap", "--overlap-param-gather", "--use-distributed-optimizer", "--overlap-grad-reduce"}) {
            QVERIFY2(has(m->arguments, flag), flag);
        }
        QVERIFY(std::none_of(m->arguments.begin(), m->arguments.end(),
                             [](const std::string& a) { return a.rfind("--num-layers-per-virtual-pipeline-stage", 0) == 0; }));

        // FP8 recipes as Megatron names them, on top of --bf16.
        const std::pair<Fp8Recipe, const char*> recipes[] = {
            {Fp8Recipe::Delayed, "delayed"}, {Fp8Recipe::Current, "tensorwise"}, {Fp8Recipe::Blockwise, "blockwise"}, {Fp8Recipe::Mxfp8, "mxfp8"}};
        for (const auto& [recipe, name] : recipes) {
            s.training.precision = Precision::Fp8;
            s.training.fp8_recipe = recipe;
            m = megatron_launch(s, p, 8);
            QVERIFY(has(m->arguments, std::string("--fp8-recipe ") + name));
            QVERIFY(has(m->arguments, "--bf16"));
            QVERIFY(has(m->arguments, recipe == Fp8Recipe::Delayed ? "--fp8-format hybrid" : "--fp8-format e4m3"));
        }
        s.training.precision = Precision::Nvfp4;
        QVERIFY(has(megatron_launch(s, p, 8)->arguments, "--fp4-recipe nvfp4"));

        // An explicit layout replaces the per-stage counts and the virtual-stage flag.
        p.first_stage_layers = p.last_stage_layers = 0;
        p.schedule = Schedule::Interleaved;
        p.virtual_stages = 2;
        p.pipeline_layout = "Et*3|(tttt|)*30t*3L";
        m = megatron_launch(s, p, 8);
        QVERIFY2(m.ok(), m.first_error().c_str());
        QVERIFY(has(m->arguments, "--pipeline-model-parallel-layout \"Et*3|(tttt|)*30t*3L\""));

        // ZeRO-3 as Megatron-FSDP, hybrid-sharded over groups of 16 of the dp x cp = 64 ranks.
        p.pipeline_layout.clear();
        p.schedule = Schedule::OneFOneB;
        p.virtual_stages = 1;
        p.overlap_param_gather = false;
        p.first_stage_layers = p.last_stage_layers = 7;
        p.zero_stage = 3;
        p.shard_group = 16;
        m = megatron_launch(s, p, 8);
        QVERIFY2(m.ok(), m.first_error().c_str());
        QVERIFY(has(m->arguments, "--use-megatron-fsdp"));
        QVERIFY(has(m->arguments, "--data-parallel-sharding-strategy optim_grads_params"));
        QVERIFY(has(m->arguments, "--num-distributed-optimizer-instances 4"));
        QVERIFY(has(m->arguments, "--outer-dp-sharding-strategy optim"));
    }

    void moe_and_mla_flags()
    {
        Scenario s;
        s.model = test::gpt(61, 7168, 128, 4096, 129280);
        s.model.attention = AttentionKind::Mla;
        s.model.mtp_layers = 1;
        s.model.moe.experts = 256;
        s.model.moe.top_k = 8;
        s.model.moe.expert_ffn_hidden = 2048;
        s.model.moe.shared_experts = 1;
        s.model.moe.first_dense_layers = 3;
        s.model.ffn_hidden = 18432;
        s.cluster.gpu = "h100-sxm5-80gb";
        s.cluster.num_gpus = 2048;
        s.training.global_batch = 4096;
        Plan p;
        p.pp = 16;
        p.schedule = Schedule::Interleaved;
        p.virtual_stages = 2;
        p.pipeline_layout = "Et*3|(tt|)*29,m|L"; // Megatron's documented DeepSeek-V3 layout for PP16 VPP2
        p.dp = 128;
        p.ep = 64;
        p.etp = 1;
        p.moe_overlap = true;
        auto m = megatron_launch(s, p, 8);
        QVERIFY2(m.ok(), m.first_error().c_str());
        for (const char* flag :
             {"--num-experts 256", "--moe-router-topk 8", "--moe-ffn-hidden-size 2048", "--moe-shared-expert-intermediate-size 2048",
              "--moe-layer-freq \"([0]*3+[1]*58)\"", "--expert-model-parallel-size 64", "--expert-tensor-parallel-size 1",
              "--overlap-moe-expert-parallel-comm", "--multi-latent-attention", "--q-lora-rank 1536", "--kv-lora-rank 512", "--qk-head-dim 128",
              "--qk-pos-emb-head-dim 64", "--v-head-dim 128", "--mtp-num-layers 1"}) {
            QVERIFY2(has(m->arguments, flag), flag);
        }
        QVERIFY(!has(m->arguments, "--moe-expert-capacity-factor 1"));
        QVERIFY(!has(m->arguments, "--moe-pad-expert-input-to-capacity"));
        // The overlap pairs micro-batches in Megatron-Core's combined 1F1B step: interleaved or no pipeline only.
        QVERIFY(!mentions(m->warnings, "needs virtual pipeline stages"));
        Plan plain = p;
        plain.schedule = Schedule::OneFOneB;
        plain.virtual_stages = 1;
        plain.pipeline_layout = "Et*3|(t*4|)*14t*2mL"; // 61 layers + MTP over 16 stages
        const auto one_chunk = megatron_launch(s, plain, 8);
        QVERIFY2(one_chunk.ok(), one_chunk.first_error().c_str());
        QVERIFY(mentions(one_chunk->warnings, "needs virtual pipeline stages"));
        QCOMPARE(moe_overlap_refusal(p), std::string());
        QVERIFY(!moe_overlap_refusal(plain).empty());
        const auto bridge = megatron_bridge_launch(s, plain, 8);
        QVERIFY2(bridge.ok(), bridge.first_error().c_str());
        QVERIFY(mentions(bridge->warnings, "overlap_moe_expert_parallel_comm needs virtual pipeline stages"));
        plain.pp = 1;
        QCOMPARE(moe_overlap_refusal(plain), std::string()); // no pipeline: the combined step pairs micro-batches
        // Token dropping, then padded to capacity.
        s.model.moe.dropless = false;
        s.model.moe.capacity_factor = 1.0;
        auto dropping = megatron_launch(s, p, 8);
        QVERIFY2(dropping.ok(), dropping.first_error().c_str());
        QVERIFY(has(dropping->arguments, "--moe-expert-capacity-factor 1"));
        QVERIFY(!has(dropping->arguments, "--moe-pad-expert-input-to-capacity"));
        s.model.moe.pad_to_capacity = true;
        auto padded = megatron_launch(s, p, 8);
        QVERIFY2(padded.ok(), padded.first_error().c_str());
        QVERIFY(has(padded->arguments, "--moe-pad-expert-input-to-capacity"));
    }

    void torchtitan_toml_for_fsdp()
    {
        // Llama 3 8B, FSDP over 8 GPUs with async TP off and full checkpointing; FP8 tensorwise gathers FP8.
        Scenario s;
        s.model = test::gpt(32, 4096, 32, 8192, 128256);
        s.cluster.gpu = "h100-sxm5-80gb";
        s.cluster.num_gpus = 8;
        s.training.global_batch = 16;
        s.training.tokens = 1e9;
        Plan p;
        p.dp = 8;
        p.micro_batch = 2;
        p.recompute = Recompute::Full;
        p.zero_stage = 3;
        auto t = torchtitan_launch(s, p, 8);
        QVERIFY2(t.ok(), t.first_error().c_str());
        for (const char* line :
             {"data_parallel_shard_degree = 8", "data_parallel_replicate_degree = 1", "tensor_parallel_degree = 1", "local_batch_size = 2",
              "global_batch_size = 16", "seq_len = 8192", "mode = \"full\"", "fsdp_reshard_after_forward = \"always\"", "steps = 7630"}) {
            QVERIFY2(t->toml.find(line) != std::string::npos, line);
        }
        QVERIFY(t->launch_command.find("torchtitan.train") != std::string::npos);
        s.training.precision = Precision::Fp8;
        s.training.fp8_recipe = Fp8Recipe::Current;
        p.shard_group = 4;
        t = torchtitan_launch(s, p, 8);
        QVERIFY(t->toml.find("enable_fsdp_float8_all_gather = true") != std::string::npos);
        QVERIFY(t->toml.find("data_parallel_replicate_degree = 2") != std::string::npos);
        QVERIFY(t->toml.find("data_parallel_shard_degree = 4") != std::string::npos);
    }

    // Rank order: Megatron-LM's one flag for it, --use-tp-pp-dp-mapping (tp-cp-ep-pp-dp); other orders warn.
    // Offload: --optimizer-cpu-offload, TE's --cpu-offloading; DeepSpeed's offload_optimizer.
    void rank_order_and_offload_flags()
    {
        Scenario s = small();
        Plan p = *s.plan;
        auto m = megatron_launch(s, p, 8);
        QVERIFY(!has(m->arguments, "--use-tp-pp-dp-mapping"));
        QVERIFY(!mentions(m->warnings, "rank order"));
        p.rank_order = *parse_rank_order("tp-cp-ep-pp-dp");
        m = megatron_launch(s, p, 8);
        QVERIFY(has(m->arguments, "--use-tp-pp-dp-mapping"));
        p.rank_order = *parse_rank_order("tp-pp-cp-ep-dp");
        m = megatron_launch(s, p, 8);
        QVERIFY(!has(m->arguments, "--use-tp-pp-dp-mapping"));
        QVERIFY(mentions(m->warnings, "rank order tp-pp-cp-ep-dp has no Megatron-LM flag"));
        QVERIFY(mentions(deepspeed_launch(s, p, 8)->warnings, "rank order"));

        p.rank_order = RankOrder{};
        p.offload_optimizer = true;
        p.offload_activations = 0.5;
        p.zero_stage = 1;
        m = megatron_launch(s, p, 8);
        QVERIFY(has(m->arguments, "--optimizer-cpu-offload"));
        QVERIFY(has(m->arguments, "--optimizer-offload-fraction 1.0"));
        QVERIFY(has(m->arguments, "--cpu-offloading"));
        QCOMPARE(value_of(m->arguments, "--cpu-offloading-num-layers"), std::string("12")); // half of 24 layers
        QVERIFY(!mentions(m->warnings, "refuses --cpu-offloading"));                        // pp 1, no recomputation
        p.recompute = Recompute::Full;
        QVERIFY(mentions(megatron_launch(s, p, 8)->warnings, "refuses --cpu-offloading"));
        const auto d = deepspeed_launch(s, p, 8);
        QVERIFY(d.ok());
        QCOMPARE(d->config["zero_optimization"]["offload_optimizer"]["device"].get<std::string>(), std::string("cpu"));
        QVERIFY(mentions(d->warnings, "cpu_checkpointing"));
    }

    // CUDA graphs as Megatron-LM spells them (arguments.py): none writes nothing, scoped the TE modules,
    // full_iteration the local implementation with the full_iteration scope.
    void cuda_graph_flags()
    {
        Scenario s = small();
        const Plan p = *s.plan;
        QVERIFY(!mentions(megatron_launch(s, p, 8)->arguments, "--cuda-graph"));
        s.training.cuda_graphs = CudaGraphs::Scoped;
        s.training.cuda_graph_scope = kGraphAttn | kGraphMoeRouter;
        auto m = megatron_launch(s, p, 8);
        QVERIFY(has(m->arguments, "--cuda-graph-impl transformer_engine"));
        QVERIFY(has(m->arguments, "--cuda-graph-scope attn moe_router"));
        s.training.cuda_graphs = CudaGraphs::FullIteration;
        m = megatron_launch(s, p, 8);
        QVERIFY(has(m->arguments, "--cuda-graph-impl local"));
        QVERIFY(has(m->arguments, "--cuda-graph-scope full_iteration"));
    }

    // DeepSeek-V3 as trained (examples/deepseek-v3-671b-h800.json): its recompute_modules become Megatron-LM's
    // --recompute-granularity selective --recompute-modules (arguments.py; core_attn only when the plan also
    // recomputes attention), its layout --pipeline-model-parallel-layout, and DualPipe is named as not written.
    void deepseek_v3_recompute_modules_and_layout()
    {
        const auto loaded = load_scenario(VTRAIN_SOURCE_DIR "/examples/deepseek-v3-671b-h800.json");
        QVERIFY2(loaded.ok(), loaded.first_error().c_str());
        const Scenario& s = loaded.value();
        Plan p = *s.plan;
        auto m = megatron_launch(s, p, 8);
        QVERIFY2(m.ok(), m.first_error().c_str());
        QVERIFY(has(m->arguments, "--recompute-granularity selective"));
        QCOMPARE(value_of(m->arguments, "--recompute-modules"), std::string("layernorm mla_up_proj moe_act"));
        QCOMPARE(value_of(m->arguments, "--pipeline-model-parallel-layout"), std::string("\"Et*4|(t*4|)*14t*1mL\""));
        QVERIFY(!has(m->arguments, "--recompute-granularity full"));
        QVERIFY(mentions(m->warnings, "DualPipe"));
        // The text a user pastes carries them too.
        QVERIFY(m->command_text().find("--recompute-modules layernorm mla_up_proj moe_act") != std::string::npos);

        // With selective recomputation, core attention (Megatron's default module) joins the list.
        p.recompute = Recompute::Selective;
        m = megatron_launch(s, p, 8);
        QCOMPARE(value_of(m->arguments, "--recompute-modules"), std::string("core_attn layernorm mla_up_proj moe_act"));
        QCOMPARE(std::count(m->arguments.begin(), m->arguments.end(), std::string("--recompute-granularity selective")), 1L);
        // Full recomputation covers every module: no list, and the warning says why. Megatron-Core refuses it
        // beside the expert all-to-all overlap (transformer_config.py), and so does the launch.
        p.recompute = Recompute::Full;
        m = megatron_launch(s, p, 8);
        QVERIFY(!m.ok() && m.first_error().find("plan.moe_overlap") != std::string::npos);
        p.moe_overlap = false;
        m = megatron_launch(s, p, 8);
        QVERIFY(value_of(m->arguments, "--recompute-modules").empty());
        QVERIFY(has(m->arguments, "--recompute-granularity full"));
        QVERIFY(mentions(m->warnings, "recompute_modules (layernorm mla_up_proj moe_act) are not written"));
        // One module alone, no other recomputation.
        p.recompute = Recompute::None;
        p.recompute_modules = kRecomputeMoeAct;
        m = megatron_launch(s, p, 8);
        QCOMPARE(value_of(m->arguments, "--recompute-modules"), std::string("moe_act"));
        // No modules: no selective flag at all (the plan recomputes nothing).
        p.recompute_modules = 0;
        m = megatron_launch(s, p, 8);
        QVERIFY(value_of(m->arguments, "--recompute-granularity").empty());
        QVERIFY(value_of(m->arguments, "--recompute-modules").empty());
        // Megatron-DeepSpeed has no such flag: said, not silently dropped.
        p.recompute_modules = kRecomputeLayernorm;
        const auto d = deepspeed_launch(s, p, 8);
        QVERIFY2(d.ok(), d.first_error().c_str());
        QVERIFY(mentions(d->warnings, "recompute_modules (layernorm) have no Megatron-DeepSpeed flag"));
    }
};

QTEST_APPLESS_MAIN(TestLaunchConfig)
#include "tst_launch_config.moc"
