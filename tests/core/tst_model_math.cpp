// SPDX-License-Identifier: MIT
// Parameter and FLOP counts against Megatron's published closed forms.
#include <QtTest>

#include "test_support.h"
#include "vtrain/model_math.h"

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
        m.tied_embeddings = false;
        // Llama-3-70B: 70.6B parameters (Meta's model card rounds to 70B).
        QVERIFY(std::abs(total_params(m) / 1e9 - 70.55) < 0.1);
        const double h = 8192, kv = 8 * 128, f = 28672;
        QCOMPARE(layer_params(m), h * (h + 2 * kv) + h * h + 3 * h * f + 2 * h);
    }
};

QTEST_APPLESS_MAIN(TestModelMath)
#include "tst_model_math.moc"
