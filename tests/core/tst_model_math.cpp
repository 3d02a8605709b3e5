// SPDX-License-Identifier: MIT
// Parameter and FLOP counts against Megatron's published closed forms.
#include <QtTest>

#include "model/model_math.h"
#include "test_support.h"

using namespace vtrain;

class TestModelMath : public QObject {
    Q_OBJECT
private slots:
    void params_match_megatron_formula_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("hidden");
        QTest::addColumn<int>("heads");
        QTest::addColumn<double>("billions");
        // Narayanan et al. SC'21 Table 1 (rounded parameter counts).
        QTest::newRow("gpt3-175b") << 96 << 12288 << 96 << 175.0;
        QTest::newRow("mt-nlg-530b") << 105 << 20480 << 128 << 530.0;
        QTest::newRow("1t") << 128 << 25600 << 160 << 1008.0;
        QTest::newRow("18b") << 40 << 6144 << 48 << 18.4;
    }
    void params_match_megatron_formula()
    {
        QFETCH(int, layers);
        QFETCH(int, hidden);
        QFETCH(int, heads);
        QFETCH(double, billions);
        const ModelSpec m = test::gpt(layers, hidden, heads);
        const double l = layers, h = hidden, V = m.vocab, s = m.seq_len;
        // SC'21 Eq. 2: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)).
        const double megatron = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
        QCOMPARE(total_params(m), megatron + 2 * h); // + the final LayerNorm, which Eq. 2 leaves out
        QVERIFY(std::abs(total_params(m) / 1e9 - billions) / billions < 0.02);
    }

    void model_flops_match_korthikanti_eq7()
    {
        const ModelSpec m = test::gpt(48, 6144, 64); // 22B
        const double B = 4, L = 48, s = 2048, h = 6144, v = 51200;
        const double expected = 72 * B * L * s * h * h * (1 + s / (6 * h) + v / (12 * h * L));
        QCOMPARE(model_flops_per_iteration(m, 4), expected);
    }

    void full_recompute_flops_match_sc21_eq3()
    {
        const ModelSpec m = test::gpt(96, 12288, 96);
        const double B = 1536, l = 96, s = 2048, h = 12288, V = 51200;
        const double eq3 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
        QCOMPARE(hardware_flops_per_iteration(m, 1536, Recompute::Full), eq3);
        QCOMPARE(hardware_flops_per_iteration(m, 1536, Recompute::None), model_flops_per_iteration(m, 1536));
    }

    void selective_recompute_adds_the_attention_core_forward()
    {
        const ModelSpec m = test::gpt(24, 2048, 16);
        const double B = 8, L = 24, s = 2048, h = 2048;
        const double extra = hardware_flops_per_iteration(m, 8, Recompute::Selective) - model_flops_per_iteration(m, 8);
        QCOMPARE(extra, 4 * B * L * s * s * h);
    }

    void gqa_and_swiglu_count_their_matrices()
    {
        ModelSpec m = test::gpt(80, 8192, 64, 8192, 128256);
        m.kv_heads = 8;
        m.ffn_hidden = 28672;
        m.activation = FfnActivation::SwiGlu;
        m.normalization = Normalization::RmsNorm;
        m.tied_embeddings = false;
        // Llama-3-70B: 70.6B parameters (Meta's model card rounds to 70B).
        QVERIFY(std::abs(total_params(m) / 1e9 - 70.55) < 0.1);
        const double h = 8192, kv = 8 * 128, f = 28672;
        QCOMPARE(layer_params(m), h * (h + 2 * kv) + h * h + 3 * h * f + 2 * h);
    }

    // --- today's shapes: hand-computed decompositions and the published totals ----------------------

    void deepseek_v3_is_671b_total_37b_active()
    {
        const ModelSpec m = test::deepseek_v3();
        const double h = 7168, heads = 128, V = 129280;
        // MLA (config_671B.json): q down/up, kv down (+ rope key), kv up, output; norms on the two latents.
        const double mla = h * 1536 + 1536 * heads * 192 + h * 576 + 512 * heads * 256 + heads * 128 * h + 1536 + 512 + h;
        const double expert = 3 * h * 2048;
        const double dense_ffn = 3 * h * 18432 + h;
        const double moe_common = h * 256 + expert + h; // router, shared expert, pre-norm
        QCOMPARE(layer_param_split(m, 0).dense, mla + dense_ffn);
        QCOMPARE(layer_param_split(m, 0).expert, 0.0);
        QCOMPARE(layer_param_split(m, 3).dense, mla + moe_common);
        QCOMPARE(layer_param_split(m, 3).expert, 256 * expert);
        const double total = 61 * mla + 3 * dense_ffn + 58 * (moe_common + 256 * expert) + 2 * V * h + h;
        QCOMPARE(total_params(m), total);
        const double active = 61 * mla + 3 * dense_ffn + 58 * (moe_common + 8 * expert) + 2 * V * h + h;
        QCOMPARE(active_params(m), active);
        // Published (arXiv 2412.19437 abstract, Sec. 4.2): 671B total, 37B activated per token; README_WEIGHTS
        // counts 36.7B. Our 37.55B counts embedding and head like the README.
        QVERIFY(std::abs(total_params(m) / 1e9 - 671) < 0.5);
        QVERIFY(std::abs(active_params(m) / 1e9 - 37) / 37 < 0.03);
        // MTP module: 11.5B unique parameters (README_WEIGHTS); ours adds the norms and 2h x h projection.
        QCOMPARE(mtp_module_params(m), mla + moe_common + 256 * expert + 2 * h * h + 3 * h);
        QVERIFY(std::abs(mtp_module_params(m) / 1e9 - 11.5) / 11.5 < 0.02);
    }

    void qwen3_235b_a22b()
    {
        ModelSpec m = test::gpt(94, 4096, 64, 4096, 151936);
        m.kv_heads = 4;
        m.head_dim_override = 128;
        m.activation = FfnActivation::SwiGlu;
        m.normalization = Normalization::RmsNorm;
        m.tied_embeddings = false;
        m.qk_norm = true;
        m.attention = AttentionKind::Gqa;
        m.moe.experts = 128;
        m.moe.top_k = 8;
        m.moe.expert_ffn_hidden = 1536;
        const double h = 4096, q = 64 * 128, kv = 4 * 128;
        const double attention = h * (q + 2 * kv) + q * h + 2 * 128 + h;
        const double expert = 3 * h * 1536;
        const double layer_total = attention + h * 128 + h + 128 * expert;
        QCOMPARE(layer_params(m, 7), layer_total);
        QCOMPARE(total_params(m), 94 * layer_total + 2 * 151936 * h + h);
        // Qwen3 technical report (arXiv 2505.09388, Table 2): 235B total, 22B activated.
        QVERIFY(std::abs(total_params(m) / 1e9 - 235) / 235 < 0.01);
        QVERIFY(std::abs(active_params(m) / 1e9 - 22) / 22 < 0.02);
    }

    void mixtral_8x22b()
    {
        ModelSpec m = test::gpt(56, 6144, 48, 4096, 32768);
        m.kv_heads = 8;
        m.ffn_hidden = 16384;
        m.activation = FfnActivation::SwiGlu;
        m.normalization = Normalization::RmsNorm;
        m.tied_embeddings = false;
        m.moe.experts = 8;
        m.moe.top_k = 2;
        const double h = 6144, kv = 8 * 128, f = 16384;
        const double layer_active = h * (h + 2 * kv) + h * h + 2 * h + h * 8 + 2 * 3 * h * f;
        QCOMPARE(active_params(m), 56 * layer_active + 2 * 32768 * h + h);
        // Mistral AI's announcement: 141B parameters, 39B active.
        QVERIFY(std::abs(total_params(m) / 1e9 - 141) / 141 < 0.01);
        QVERIFY(std::abs(active_params(m) / 1e9 - 39) / 39 < 0.01);
    }

    void moe_flops_count_active_experts_only()
    {
        const ModelSpec m = test::deepseek_v3();
        const double h = 7168, s = 4096;
        const double mla_matrix = h * 1536 + 1536 * 128 * 192 + h * 576 + 512 * 128 * 256 + 128 * 128 * h;
        const double core = 2 * s * 128 * (192 + 128);
        const double moe = h * 256 + 9 * 3 * h * 2048; // router, shared + top-8 routed
        QCOMPARE(layer_forward_flops_per_token(m, 10), 2 * (mla_matrix + moe) + core);
        QCOMPARE(layer_forward_flops_per_token(m, 1), 2 * (mla_matrix + 3 * h * 18432) + core);
        const double mtp = 2 * 2 * h * h + 2 * (mla_matrix + moe) + core + 2 * h * 129280;
        QCOMPARE(mtp_forward_flops_per_token(m), mtp);
        const double per_token = 3 * layer_forward_flops_per_token(m, 1) + 58 * layer_forward_flops_per_token(m, 10) + 2 * h * 129280 + mtp;
        QCOMPARE(model_flops_per_iteration(m, 2), 3 * 2 * s * per_token);
        // About 6 x active parameters per token plus attention: 2.6e11 training FLOPs a token (the note's
        // Megatron-formula figure for s = 4096 with MTP, modern-training.md Sec. 2.3, counts causal halves).
        QVERIFY(model_flops_per_iteration(m, 1) / s > 6 * 37e9);
    }

    // LatentMoE by hand: hidden 64, latent 16, 4 experts of width 32 (squared ReLU: up and down), top-2,
    // one MHA layer of 4 heads, RMSNorm. Attention 64 x (64 + 128) + 64 x 64 = 16,384 plus its norm (64);
    // MoE norm 64, router 64 x 4 = 256, projections 2 x 64 x 16 = 2,048 (dense), experts 4 x 2 x 16 x 32.
    void latent_moe_counts_by_hand()
    {
        ModelSpec m = test::gpt(1, 64, 4, 128, 256);
        m.activation = FfnActivation::SquaredRelu;
        m.normalization = Normalization::RmsNorm;
        m.tied_embeddings = false;
        m.moe.experts = 4;
        m.moe.top_k = 2;
        m.moe.expert_ffn_hidden = 32;
        m.moe.latent_size = 16;
        const LayerParamSplit split = layer_param_split(m, 0);
        QCOMPARE(split.dense, 64.0 + 16384 + 64 + 256 + 2048);
        QCOMPARE(split.expert, 4.0 * 2 * 16 * 32);
        const double active_matrix = 16384 + 256 + 2048 + 2 * (2 * 16 * 32);
        QCOMPARE(layer_forward_flops_per_token(m, 0) - attention_core_forward_flops_per_token(m, 0), 2 * active_matrix);
        // Without the latent the experts read and write the full 64: 4 x 2 x 64 x 32, no projections.
        m.moe.latent_size = 0;
        QCOMPARE(layer_param_split(m, 0).expert, 4.0 * 2 * 64 * 32);
        QCOMPARE(layer_param_split(m, 0).dense, 64.0 + 16384 + 64 + 256);
    }

    // Nemotron 3 Super "120B-A12B" (Megatron-Bridge Nemotron3SuperProvider: 88 layers, 40 MoE of 512
    // experts top-22, latent 1024). By hand: 40 x 512 x 2 x 1024 x 2688 = 112.7B routed; the rest (Mamba-2,
    // attention, shared experts, projections, embeddings, MTP excluded) brings it near 120B, and 22 routed
    // experts per token (40 x 22 x 2 x 1024 x 2688 = 4.8B) plus the dense part near 12B active.
    void nemotron_3_super_is_120b_total_12b_active()
    {
        ModelSpec m = test::gpt(88, 4096, 32, 8192, 131072);
        m.layer_pattern = "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME";
        m.kv_heads = 2;
        m.attention = AttentionKind::Gqa;
        m.activation = FfnActivation::SquaredRelu;
        m.normalization = Normalization::RmsNorm;
        m.tied_embeddings = false;
        m.mamba.heads = 128;
        m.moe.experts = 512;
        m.moe.top_k = 22;
        m.moe.expert_ffn_hidden = 2688;
        m.moe.shared_experts = 1;
        m.moe.shared_expert_ffn_hidden = 5376;
        m.moe.latent_size = 1024;
        double routed = 0;
        for (int i = 0; i < m.layers; ++i) {
            routed += layer_param_split(m, i).expert;
        }
        QCOMPARE(routed, 40.0 * 512 * 2 * 1024 * 2688);
        QVERIFY2(std::abs(total_params(m) / 1e9 - 120) < 4, qPrintable(QString::number(total_params(m) / 1e9)));
        QVERIFY2(std::abs(active_params(m) / 1e9 - 12) < 1.5, qPrintable(QString::number(active_params(m) / 1e9)));
    }

    void sliding_window_attends_to_the_window()
    {
        ModelSpec m = test::gpt(4, 2048, 16, 8192);
        m.sliding_window = 1024;
        m.full_attention_every = 2;
        const double s = 8192, w = 1024, h = 2048;
        QCOMPARE(attention_core_forward_flops_per_token(m, 0), 4 * h * (2 * w - w * w / s));
        QCOMPARE(attention_core_forward_flops_per_token(m, 1), 4 * h * s); // every 2nd layer is full
        QVERIFY(layer_kind(m, 2).windowed && !layer_kind(m, 3).windowed);
        m.sliding_window = 100000; // a window longer than the sequence is full attention
        QCOMPARE(attention_core_forward_flops_per_token(m, 0), 4 * h * s);
    }

    void hybrid_pattern_counts_each_letter()
    {
        ModelSpec m = test::gpt(4, 4096, 32, 8192, 131072);
        m.activation = FfnActivation::SquaredRelu;
        m.normalization = Normalization::RmsNorm;
        m.ffn_hidden = 21504;
        m.kv_heads = 8;
        m.tied_embeddings = false;
        m.layer_pattern = "M-*-";
        const double h = 4096, f = 21504;
        // Mamba-2 (Nemotron-H 8B: 128 heads of 64, state 128, 8 groups, conv 4).
        const double inner = 128 * 64, bc = 2 * 8 * 128;
        const double mamba = h * (2 * inner + bc + 128) + inner * h + (inner + bc) * 5 + 3 * 128 + inner + h;
        QCOMPARE(layer_params(m, 0), mamba);
        QCOMPARE(layer_params(m, 1), 2 * h * f + h);
        QCOMPARE(layer_params(m, 2), h * (h + 2 * 1024) + h * h + h);
        QCOMPARE(layer_kind(m, 1).mixer, MixerKind::None);
        const double ssd = 2 * (inner + bc) * 4 + 2 * 128 * 128 * 8 + 2 * 128 * 64 * 128 + 4 * 128 * 64 * 128;
        QCOMPARE(layer_forward_flops_per_token(m, 0), 2 * (h * (2 * inner + bc + 128) + inner * h) + ssd);
        QCOMPARE(layer_forward_flops_per_token(m, 3), 2 * 2 * h * f);
    }
};

QTEST_APPLESS_MAIN(TestModelMath)
#include "tst_model_math.moc"
