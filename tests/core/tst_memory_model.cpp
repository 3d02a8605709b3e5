// SPDX-License-Identifier: MIT
// The memory model against Korthikanti et al. 2022, Table 2 and Sec. 4, and the schedules' in-flight counts.
#include <QtTest>

#include "iteration/pipeline_schedule.h"
#include "iteration/plan_costs.h"
#include "model/model_math.h"
#include "test_support.h"
#include "vtrain/memory_model.h"
#include "vtrain/simulator.h"

using namespace vtrain;

namespace {
// ZeRO-3 over `dp` ranks and `pp` stages, 64 sequences per iteration (the FSDP cases below).
TrainingSpec sharded_training()
{
    TrainingSpec tr;
    tr.global_batch = 64;
    return tr;
}
Plan sharded_plan(int pp, int dp)
{
    Plan p;
    p.pp = pp;
    p.dp = dp;
    p.zero_stage = 3;
    return p;
}

// The loss tests' setting: an 8-layer GPT with a 64,000-entry vocabulary over pp 2 x dp 4, tensor parallel
// with sequence parallelism; the last stage holds the loss.
ModelSpec loss_model()
{
    return test::gpt(8, 4096, 32, 4096, 64000);
}
Plan loss_plan(int tp)
{
    Plan p = sharded_plan(2, 4);
    p.tp = tp;
    p.sequence_parallel = true;
    return p;
}
} // namespace

class TestMemoryModel : public QObject {
    Q_OBJECT
private slots:
    void activations_match_korthikanti_table2_data()
    {
        QTest::addColumn<int>("recompute");
        QTest::addColumn<bool>("sp");
        QTest::addColumn<double>("per_sbh"); // bytes per s*b*h element, closed form
        const double a = 64, s = 2048, h = 6144, t = 8;
        QTest::newRow("none, tp") << int(Recompute::None) << false << 10 + 24 / t + 5 * a * s / (h * t);
        QTest::newRow("none, tp+sp") << int(Recompute::None) << true << (34 + 5 * a * s / h) / t;
        QTest::newRow("selective, tp") << int(Recompute::Selective) << false << 10 + 24 / t;
        QTest::newRow("selective, tp+sp") << int(Recompute::Selective) << true << 34 / t;
        QTest::newRow("full, tp") << int(Recompute::Full) << false << 2.0;
        QTest::newRow("full, tp+sp") << int(Recompute::Full) << true << 2 / t;
    }
    void activations_match_korthikanti_table2()
    {
        QFETCH(int, recompute);
        QFETCH(bool, sp);
        QFETCH(double, per_sbh);
        const ModelSpec m = test::gpt(48, 6144, 64);
        TrainingSpec tr;
        tr.global_batch = 4;
        tr.attention = AttentionKernel::Unfused;
        const double sbh = 2048.0 * 4 * 6144;
        QCOMPARE(layer_activation_bytes(m, tr, 4, 8, sp, static_cast<Recompute>(recompute)), per_sbh * sbh);
    }

    void flash_attention_stores_no_scores()
    {
        const ModelSpec m = test::gpt(48, 6144, 64);
        TrainingSpec tr;
        tr.attention = AttentionKernel::Flash;
        const double sbh = 2048.0 * 1 * 6144;
        QCOMPARE(layer_activation_bytes(m, tr, 1, 8, true, Recompute::None), 34.0 / 8 * sbh);
    }

    void model_states_take_18_bytes_per_parameter_and_shard_with_zero()
    {
        const ModelSpec m = test::gpt(96, 12288, 96);
        TrainingSpec tr;
        tr.global_batch = 1536;
        Plan p;
        p.tp = 8;
        p.pp = 16;
        p.dp = 8;
        const auto params = stage_params(m, 8, 16);
        const auto plain = plan_memory(m, tr, p);
        const double states = plain[1].weights_bytes + plain[1].gradients_bytes + plain[1].optimizer_bytes;
        QCOMPARE(states, 18 * params[1]); // 2 (bf16 weights) + 4 (fp32 grads) + 12 (Adam)
        p.zero_stage = 1;
        const auto zero1 = plan_memory(m, tr, p);
        QCOMPARE(zero1[1].optimizer_bytes, 12 * params[1] / 8);
        QCOMPARE(zero1[1].gradients_bytes, plain[1].gradients_bytes);
        p.zero_stage = 2;
        QCOMPARE(plan_memory(m, tr, p)[1].gradients_bytes, 4 * params[1] / 8);
    }

    // ZeRO-3 without a pipeline: the sharded states, two gathered layers, and -- with per-layer fetches
    // (FSDP) -- the root unit (embedding and output layer) gathered in 16 bits for the whole iteration;
    // DeepSpeed's per-module fetches release it like every other module.
    void zero3_keeps_the_root_unit_gathered_under_fsdp()
    {
        const ModelSpec m = test::gpt(8, 4096, 32, 4096, 64000);
        TrainingSpec tr = sharded_training();
        const Plan p = sharded_plan(1, 8);
        const double vocab = 64000.0 * 4096 + 4096.0 * 4096; // tied token embedding and output, learned positions
        const auto fsdp = plan_memory(m, tr, p);
        tr.zero3_fetch = Zero3Fetch::Module;
        const auto deepspeed = plan_memory(m, tr, p);
        QCOMPARE(fsdp[0].weights_bytes - deepspeed[0].weights_bytes, 2 * vocab);
        // FP8 gathers the layers' weights in FP8; the root unit stays 16-bit.
        tr.precision = Precision::Fp8;
        const auto fp8_module = plan_memory(m, tr, p);
        tr.zero3_fetch = Zero3Fetch::Layer;
        QCOMPARE(plan_memory(m, tr, p)[0].weights_bytes - fp8_module[0].weights_bytes, 2 * vocab);
    }

    // torchtitan's per-op SAC keeps the block input and the outputs on its save list: wq, wv, w1, w2 (mm),
    // SDPA (output + fp32 LSE per head), and with TP the two reduce-scatters. Llama-3-8B layer, 2 x 8192.
    void per_op_sac_keeps_the_save_list()
    {
        ModelSpec m = test::gpt(32, 4096, 32, 8192, 128256);
        m.kv_heads = 8;
        m.ffn_hidden = 14336;
        m.activation = FfnActivation::SwiGlu;
        TrainingSpec tr;
        tr.global_batch = 16;
        tr.per_op_sac = true;
        Plan p;
        p.micro_batch = 2;
        p.recompute = Recompute::Selective;
        const double tokens = 2 * 8192;
        QCOMPARE(layer_activation_bytes_at(m, tr, p, 0), tokens * (2.0 * (4096 + 4096 + 1024 + 4096 + 14336 + 4096) + 4.0 * 32));
        // TP 2 with sequence parallelism: head and FFN widths halve, the block input and the reduce-scatter
        // outputs are sequence-sharded, the w2 mm output is the full-width partial sum.
        p.tp = 2;
        p.sequence_parallel = true;
        QCOMPARE(layer_activation_bytes_at(m, tr, p, 0), tokens * (2.0 * (2048 + 2048 + 512 + 2048 + 7168 + 4096 + 2 * 2048) + 4.0 * 16));
        // Without per-op SAC, selective recompute keeps Korthikanti's count.
        tr.per_op_sac = false;
        QVERIFY(layer_activation_bytes_at(m, tr, p, 0) > tokens * 2.0 * 30000);
    }

    // Eager PyTorch (no torch.compile): each RMSNorm also keeps its fp32 upcast (4 bytes per element more than
    // the fused kernel's saved input) and SwiGLU keeps silu's output (2 bytes per FFN element). Under per-op SAC
    // the stored save list is unchanged; the layer recomputed in its backward holds the difference.
    void eager_elementwise_keeps_fp32_norm_inputs_and_the_silu_output()
    {
        ModelSpec m = test::gpt(32, 4096, 32, 8192, 128256);
        m.kv_heads = 8;
        m.ffn_hidden = 14336;
        m.activation = FfnActivation::SwiGlu;
        m.normalization = Normalization::RmsNorm;
        TrainingSpec fused;
        fused.global_batch = 16;
        TrainingSpec eager = fused;
        eager.eager_elementwise = true;
        Plan p;
        p.micro_batch = 2;
        const double tokens = 2 * 8192;
        const double delta = tokens * (2 * 4.0 * 4096 + 2.0 * 14336);
        QCOMPARE(layer_activation_bytes_at(m, eager, p, 0) - layer_activation_bytes_at(m, fused, p, 0), delta);
        fused.per_op_sac = eager.per_op_sac = true;
        p.recompute = Recompute::Selective;
        QCOMPARE(layer_activation_bytes_at(m, eager, p, 0), layer_activation_bytes_at(m, fused, p, 0));
        QCOMPARE(plan_memory(m, eager, p)[0].working_bytes - plan_memory(m, fused, p)[0].working_bytes, delta);
        // A LayerNorm is one aten kernel in eager too: only SwiGLU's extra output remains.
        m.normalization = Normalization::LayerNorm;
        p.recompute = Recompute::None;
        QCOMPARE(layer_activation_bytes_at(m, eager, p, 0) - layer_activation_bytes_at(m, fused, p, 0), tokens * 2.0 * 14336);
    }

    // FSDP under a pipeline: every layer of the stage stays gathered (bf16) and its unsharded gradients
    // accumulate until the last micro-batch in the reduce dtype (fp32: FSDP2 upcasts them,
    // FSDPParam.to_accumulated_grad_if_needed); with bf16 gradients they stay bf16. The loss holds what the
    // training states per logit.
    void fsdp_under_pipeline_keeps_the_stage_gathered()
    {
        const ModelSpec m = test::gpt(8, 4096, 32, 4096, 64000);
        TrainingSpec tr = sharded_training();
        const Plan p = sharded_plan(2, 4);
        const auto params = stage_params(m, 1, 2);
        const auto mem = plan_memory(m, tr, p);
        QCOMPARE(mem[1].weights_bytes, params[1] * 2 / 4 + params[1] * 2);
        QCOMPARE(mem[1].gradients_bytes, params[1] * 4 / 4 + params[1] * 4);
        QCOMPARE(mem[1].optimizer_bytes, params[1] * 12 / 4);
        TrainingSpec bf16_reduce = tr;
        bf16_reduce.bf16_gradients = true;
        QCOMPARE(plan_memory(m, bf16_reduce, p)[1].gradients_bytes, params[1] * 2 / 4 + params[1] * 2);
        tr.loss_bytes_per_logit = 12;
        const auto twelve = plan_memory(m, tr, p);
        QCOMPARE(twelve[1].working_bytes - mem[1].working_bytes, 4.0 * 4096 * 64000);
        QCOMPARE(twelve[0].working_bytes, mem[0].working_bytes); // the first stage has no loss
    }

    // torchtitan's output layer under TP (loss_parallel): the last stage also holds the all-gathered bf16
    // final-norm output of the micro-batch (tokens x hidden x 2 bytes) and 4 more bytes per local logit;
    // without TP, or on another stage, nothing changes.
    void loss_parallel_holds_the_gathered_output_input_and_four_more_bytes_per_logit()
    {
        const ModelSpec m = loss_model();
        TrainingSpec tr = sharded_training();
        tr.loss_bytes_per_logit = 12;
        Plan p = loss_plan(4);
        const auto plain = plan_memory(m, tr, p);
        TrainingSpec lp = tr;
        lp.loss_parallel = true;
        const auto with = plan_memory(m, lp, p);
        const double tokens = 4096.0 * p.micro_batch;
        QCOMPARE(with[1].working_bytes - plain[1].working_bytes, tokens * 4096 * 2 + 4.0 * tokens * 64000 / 4);
        QCOMPARE(with[0].working_bytes, plain[0].working_bytes);
        QCOMPARE(with[1].activations_bytes, plain[1].activations_bytes);
        p.tp = 1;
        p.sequence_parallel = false;
        QCOMPARE(plan_memory(m, lp, p)[1].working_bytes, plan_memory(m, tr, p)[1].working_bytes);
    }

    // PyTorch's ring attention (cp_ring_pytorch) adds its backward working set to every stage's: the
    // all-gathered, head-repeated K/V of all cp ranks in bf16, fp32 dQ/dK/dV accumulators and the fp32 dK/dV
    // sent and received. By hand for 32 heads of 128 over tp 2 (q width 2048, K+V width 4096), 4,096 / cp
    // tokens per micro-batch: tokens x (cp x 4096 x 2 + 4 x 6144 + 8 x 4096). Transformer Engine's ring
    // (the default) and cp 1 hold none of it; activations are untouched.
    void torch_ring_attention_holds_gathered_kv_and_fp32_gradients()
    {
        const ModelSpec m = loss_model();
        TrainingSpec tr = sharded_training();
        Plan p = loss_plan(2);
        TrainingSpec torch_ring = tr;
        torch_ring.cp_ring_pytorch = true;
        for (int cp : {2, 4}) {
            p.cp = cp;
            p.dp = 4 / cp;
            const auto base = plan_memory(m, tr, p);
            const auto with = plan_memory(m, torch_ring, p);
            const double tokens = 4096.0 * p.micro_batch / cp;
            const double by_hand = tokens * (cp * 4096 * 2 + 4.0 * (2048 + 4096) + 2 * 4.0 * 4096);
            for (int s = 0; s < 2; ++s) {
                QCOMPARE(with[s].working_bytes - base[s].working_bytes, by_hand);
                QCOMPARE(with[s].activations_bytes, base[s].activations_bytes);
            }
        }
        p.cp = 1;
        p.dp = 4;
        QCOMPARE(plan_memory(m, torch_ring, p)[0].working_bytes, plan_memory(m, tr, p)[0].working_bytes);
    }

    // Transformer Engine's fused cross-entropy writes the gradient into the 16-bit logits
    // (triton/cross_entropy.py): the loss's peak holds 2 bytes per local logit instead of the 8 of fp32
    // logits and their gradient; a stated loss_bytes_per_logit still wins; other stages are unchanged.
    void te_cross_entropy_holds_the_16_bit_logits_alone()
    {
        const ModelSpec m = loss_model();
        TrainingSpec tr = sharded_training();
        const Plan p = loss_plan(2);
        const auto plain = plan_memory(m, tr, p);
        TrainingSpec te = tr;
        te.te_cross_entropy = true;
        const auto fused = plan_memory(m, te, p);
        const double logits = 4096.0 * p.micro_batch * 64000 / 2;
        QCOMPARE(plain[1].working_bytes - fused[1].working_bytes, (8.0 - 2.0) * logits);
        QCOMPARE(fused[0].working_bytes, plain[0].working_bytes);
        QCOMPARE(fused[1].activations_bytes, plain[1].activations_bytes);
        te.loss_bytes_per_logit = 12;
        tr.loss_bytes_per_logit = 12;
        QCOMPARE(plan_memory(m, te, p)[1].working_bytes, plan_memory(m, tr, p)[1].working_bytes);
    }

    // DeepSeek-V3 as trained (PP16 x EP64, ZeRO-1 over dp 128, FP8 blockwise): the expert parts of the
    // model states by hand, DualPipe's two parameter copies, and the report's memory savings.
    void deepseek_v3_expert_states_dualpipe_and_recompute_modules()
    {
        const ModelSpec m = test::deepseek_v3();
        TrainingSpec tr;
        tr.global_batch = 15360;
        tr.precision = Precision::Fp8;
        tr.fp8_recipe = Fp8Recipe::Blockwise;
        Plan p;
        p.pp = 16;
        p.dp = 128;
        p.ep = 64;
        p.zero_stage = 1;
        p.pipeline_layout = "Et*4|(t*4|)*14t*1mL";
        const auto one = plan_memory(m, tr, p);
        // Stage 3: four MoE layers, each 256 experts x 3 x 7168 x 2048 split over ep 64; the expert
        // data-parallel group is tp x dp / ep = 2, so Adam's 12 bytes are halved.
        const double expert_params = 4 * 256.0 * 3 * 7168 * 2048 / 64;
        QCOMPARE(one[3].expert_optimizer_bytes, expert_params * 12 / 2);
        QCOMPARE(one[3].expert_gradients_bytes, expert_params * 4);
        QCOMPARE(one[3].expert_weights_bytes, expert_params * (2 + 2 * (1 + 4.0 / (128 * 128))));
        QVERIFY(one[3].expert_weights_bytes < one[3].weights_bytes);

        // DualPipe: stage s also holds stage 15 - s (report Table 2: parameters 2x).
        Plan dual = p;
        dual.schedule = Schedule::DualPipe;
        const auto two = plan_memory(m, tr, dual);
        QCOMPARE(two[3].weights_bytes, one[3].weights_bytes + one[12].weights_bytes);
        QCOMPARE(two[3].optimizer_bytes, one[3].optimizer_bytes + one[12].optimizer_bytes);
        QCOMPARE(two[3].expert_gradients_bytes, 2 * one[3].expert_gradients_bytes);

        // BF16 Adam moments (Sec. 3.3.2): 4 + 2 + 2 bytes instead of 4 + 4 + 4.
        TrainingSpec bf16_moments = tr;
        bf16_moments.bf16_optimizer_moments = true;
        QCOMPARE(plan_memory(m, bf16_moments, p)[3].expert_optimizer_bytes, expert_params * 8 / 2);

        // moe_act: the SwiGLU output (1 FP8 byte x 2048) is not kept and its input (2 x 2048) is kept in FP8:
        // 8 routed rows x (2048 + 2048 x 2 x (2 - 1)) bytes less per token, over the micro-batch's 4096 tokens.
        Plan act = p;
        act.recompute_modules = kRecomputeMoeAct;
        const double saved = layer_activation_bytes_at(m, tr, p, 10) - layer_activation_bytes_at(m, tr, act, 10);
        QCOMPARE(saved, 4096.0 * 8 * (2048 + 2048 * 2));
        // mla_up_proj: per-head Q, K, V (2 bytes x 128 heads x (192 + 192 + 128)) and the latents' FP8 copies.
        Plan mla = p;
        mla.recompute_modules = kRecomputeMlaUpProj;
        const double saved_mla = layer_activation_bytes_at(m, tr, p, 10) - layer_activation_bytes_at(m, tr, mla, 10);
        QCOMPARE(saved_mla, 4096.0 * (2 * 128 * (192 + 192 + 128) + 1 * (1536 + 512)));
    }

    void stage_parameters_add_up_to_the_model()
    {
        const ModelSpec m = test::gpt(105, 20480, 128);
        const auto params = stage_params(m, 1, 35);
        double sum = 0;
        for (double p : params) {
            sum += p;
        }
        // With pp > 1 the last stage keeps its own copy of the (tied) word embedding.
        QCOMPARE(sum, total_params(m) + double(m.vocab) * m.hidden);
    }

    // torchtitan's interleaved pipeline (PipelineRuntime::PyTorch) with as many micro-batches as ranks: the last
    // rank holds (v - 1) p + 1 = 9 of the 16 activation sets Megatron-Core's all-forwards-first warm-up leaves
    // on it; the first rank holds all 16 either way.
    void pytorch_interleaved_warmup_holds_fewer_sets_on_the_last_ranks()
    {
        const ModelSpec m = test::gpt(32, 4096, 32, 4096, 64000);
        TrainingSpec megatron;
        megatron.global_batch = 8;
        TrainingSpec pytorch = megatron;
        pytorch.pipeline_runtime = PipelineRuntime::PyTorch;
        Plan p;
        p.pp = 8;
        p.schedule = Schedule::Interleaved;
        p.virtual_stages = 2;
        p.recompute = Recompute::Full;
        const auto a = plan_memory(m, megatron, p);
        const auto b = plan_memory(m, pytorch, p);
        QCOMPARE(b[0].activations_bytes, a[0].activations_bytes);
        QCOMPARE(b[7].activations_bytes, a[7].activations_bytes * 9.0 / 16.0);
        QCOMPARE(b[7].weights_bytes, a[7].weights_bytes);
    }

    void in_flight_closed_form_matches_schedule_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("stages");
        QTest::addColumn<int>("micro_batches");
        QTest::addColumn<int>("chunks");
        QTest::newRow("gpipe") << int(Schedule::GPipe) << 4 << 8 << 1;
        QTest::newRow("1f1b") << int(Schedule::OneFOneB) << 4 << 8 << 1;
        QTest::newRow("1f1b few mb") << int(Schedule::OneFOneB) << 8 << 3 << 1;
        QTest::newRow("interleaved") << int(Schedule::Interleaved) << 4 << 8 << 2;
        QTest::newRow("interleaved m=p") << int(Schedule::Interleaved) << 4 << 4 << 3;
        QTest::newRow("interleaved long") << int(Schedule::Interleaved) << 8 << 64 << 5;
    }
    void in_flight_closed_form_matches_schedule()
    {
        QFETCH(int, schedule);
        QFETCH(int, stages);
        QFETCH(int, micro_batches);
        QFETCH(int, chunks);
        const auto kind = static_cast<Schedule>(schedule);
        const auto peaks = peak_in_flight_chunks(build_schedule(kind, stages, micro_batches, chunks));
        for (int s = 0; s < stages; ++s) {
            QCOMPARE(peak_in_flight_closed_form(kind, stages, micro_batches, chunks, s), int(peaks[s]));
        }
        if (kind == Schedule::OneFOneB) {
            QCOMPARE(int(peaks[0]), std::min(stages, micro_batches)); // 1F1B's point: at most p in flight
        }
    }

    void fits_memory_uses_capacity_minus_reserve()
    {
        Scenario sc;
        sc.model = test::gpt(105, 20480, 128);
        sc.cluster.gpu = "test-gpu";
        sc.cluster.num_gpus = 8;
        sc.training.global_batch = 8;
        Plan p;
        p.tp = 8;
        p.dp = 1;
        const GpuProfile profile = test::free_network_profile();
        const auto r = simulate(sc, p, profile, SimulationOptions{false, nullptr});
        QVERIFY(r.ok());
        QCOMPARE(r->usable_memory_gib, 78.0);
        QVERIFY(!r->fits_memory); // 530B parameters on 8 GPUs: about 1.2 TB of model states
    }
};

QTEST_APPLESS_MAIN(TestMemoryModel)
#include "tst_memory_model.moc"
