// SPDX-License-Identifier: MIT
// Scenario reading of today's model shapes and precisions: defaults, round trips and each refusal's field.
#include <QtTest>

#include "model/model_math.h"
#include "vtrain/scenario_json.h"

using namespace vtrain;

namespace {

// DeepSeek-V3's model block as a scenario gives it (examples/deepseek-v3-671b-h800.json).
nlohmann::json dsv3()
{
    return nlohmann::json::parse(R"({
      "model": {"name": "DeepSeek-V3", "layers": 61, "hidden": 7168, "heads": 128, "ffn_hidden": 18432, "seq_len": 4096,
                "vocab": 129280, "activation": "swiglu", "tied_embeddings": false, "attention": "mla",
                "mla": {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128},
                "moe": {"experts": 256, "top_k": 8, "expert_ffn_hidden": 2048, "shared_experts": 1, "first_dense_layers": 3},
                "mtp_layers": 1},
      "cluster": {"gpu": "h100-sxm5-80gb", "num_gpus": 2048},
      "training": {"global_batch": 15360, "precision": "fp8", "fp8_recipe": "blockwise"}
    })");
}

QString refused_field(const nlohmann::json& j)
{
    const auto r = scenario_from_json(j);
    return r.ok() ? QStringLiteral("<accepted>") : QString::fromStdString(r.errors().front().field);
}

} // namespace

class TestModelShapesInput : public QObject {
    Q_OBJECT
private slots:
    void deepseek_v3_reads_and_round_trips()
    {
        const auto s = scenario_from_json(dsv3());
        QVERIFY2(s.ok(), s.first_error().c_str());
        const ModelSpec& m = s->model;
        QCOMPARE(m.attention, AttentionKind::Mla);
        QCOMPARE(m.normalization, Normalization::RmsNorm); // the default for non-GELU models
        QCOMPARE(m.moe.experts, 256);
        QVERIFY(m.moe.dropless);
        QCOMPARE(m.moe.load_imbalance, 1.0);
        QCOMPARE(s->training.precision, Precision::Fp8);
        QCOMPARE(s->training.fp8_recipe, Fp8Recipe::Blockwise);
        QVERIFY(std::abs(total_params(m) / 1e9 - 671) < 0.5);
        const auto again = scenario_from_json(scenario_to_json(*s));
        QVERIFY2(again.ok(), again.first_error().c_str());
        QCOMPARE(total_params(again->model), total_params(m));
        QCOMPARE(active_params(again->model), active_params(m));
        QCOMPARE(scenario_to_json(*again), scenario_to_json(*s));
    }

    void hybrid_and_windowed_models_read()
    {
        auto j = dsv3();
        j["model"] = nlohmann::json::parse(R"({"layers": 4, "hidden": 4096, "heads": 32, "kv_heads": 8, "seq_len": 8192,
            "vocab": 131072, "ffn_hidden": 21504, "activation": "squared_relu", "layer_pattern": "M-*-",
            "mamba": {"state_dim": 128, "head_dim": 64, "groups": 8}, "sliding_window": 4096, "qk_norm": true, "qkv_bias": true,
            "head_dim": 128})");
        const auto s = scenario_from_json(j);
        QVERIFY2(s.ok(), s.first_error().c_str());
        QCOMPARE(s->model.activation, FfnActivation::SquaredRelu);
        QCOMPARE(s->model.attention, AttentionKind::Gqa);
        QCOMPARE(layer_kind(s->model, 0).mixer, MixerKind::Mamba);
        QVERIFY(layer_kind(s->model, 2).windowed);
        const auto again = scenario_from_json(scenario_to_json(*s));
        QVERIFY2(again.ok(), again.first_error().c_str());
        QCOMPARE(scenario_to_json(*again), scenario_to_json(*s));
    }

    void gpt_oss_biases_and_clamp_read_and_round_trip()
    {
        auto j = dsv3();
        j["model"] = nlohmann::json::parse(R"({"layers": 36, "hidden": 2880, "heads": 64, "kv_heads": 8, "head_dim": 64, "seq_len": 4096,
            "vocab": 201088, "ffn_hidden": 2880, "activation": "swiglu", "sliding_window": 128, "full_attention_every": 2,
            "qkv_bias": true, "linear_bias": true, "glu_clamp": 7, "moe": {"experts": 128, "top_k": 4, "dropless": true}})");
        const auto s = scenario_from_json(j);
        QVERIFY2(s.ok(), s.first_error().c_str());
        QVERIFY(s->model.linear_bias);
        QCOMPARE(s->model.glu_clamp, 7.0);
        const auto again = scenario_from_json(scenario_to_json(*s));
        QVERIFY2(again.ok(), again.first_error().c_str());
        QCOMPARE(scenario_to_json(*again), scenario_to_json(*s));
        // Defaults: no biases, no clamp, and neither is written back.
        j["model"].erase("linear_bias");
        j["model"].erase("glu_clamp");
        const auto plain = scenario_from_json(j);
        QVERIFY2(plain.ok(), plain.first_error().c_str());
        QVERIFY(!plain->model.linear_bias);
        QCOMPARE(plain->model.glu_clamp, 0.0);
        QVERIFY(!scenario_to_json(*plain)["model"].contains("glu_clamp"));
        // A clamp needs a gated activation.
        j["model"]["glu_clamp"] = 7;
        j["model"]["activation"] = "gelu";
        QCOMPARE(refused_field(j), QString("model.glu_clamp"));
    }

    void token_drop_padding_reads_round_trips_and_needs_a_capacity()
    {
        auto j = dsv3();
        j["model"]["moe"] = nlohmann::json::parse(R"({"experts": 256, "top_k": 8, "capacity_factor": 1.0, "pad_to_capacity": true})");
        const auto s = scenario_from_json(j);
        QVERIFY2(s.ok(), s.first_error().c_str());
        QVERIFY(!s->model.moe.dropless);
        QVERIFY(s->model.moe.pad_to_capacity);
        const auto again = scenario_from_json(scenario_to_json(*s));
        QVERIFY2(again.ok(), again.first_error().c_str());
        QVERIFY(again->model.moe.pad_to_capacity);
        QCOMPARE(scenario_to_json(*again), scenario_to_json(*s));
        // Not padded by default (Megatron-Core's default), and then not written.
        j["model"]["moe"].erase("pad_to_capacity");
        const auto plain = scenario_from_json(j);
        QVERIFY2(plain.ok(), plain.first_error().c_str());
        QVERIFY(!plain->model.moe.pad_to_capacity);
        QVERIFY(!scenario_to_json(*plain)["model"]["moe"].contains("pad_to_capacity"));
        // Dropless routing has no capacity to pad to.
        j["model"]["moe"] = nlohmann::json::parse(R"({"experts": 256, "top_k": 8, "pad_to_capacity": true})");
        QCOMPARE(refused_field(j), QString("model.moe.pad_to_capacity"));
    }

    void bad_shapes_are_refused_with_their_field_data()
    {
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("field");
        QTest::newRow("top_k above experts") << "/model/moe/top_k"
                                             << "300"
                                             << "model.moe.top_k";
        QTest::newRow("imbalance above experts/top_k") << "/model/moe/load_imbalance"
                                                       << "40"
                                                       << "model.moe.load_imbalance";
        QTest::newRow("imbalance below 1") << "/model/moe/load_imbalance"
                                           << "0.5"
                                           << "model.moe.load_imbalance";
        QTest::newRow("dropless with capacity") << "/model/moe"
                                                << R"({"experts": 256, "top_k": 8, "dropless": true, "capacity_factor": 1.25})"
                                                << "model.moe.capacity_factor";
        QTest::newRow("not dropless, no capacity") << "/model/moe/dropless"
                                                   << "false"
                                                   << "model.moe.dropless";
        QTest::newRow("first dense >= layers") << "/model/moe/first_dense_layers"
                                               << "61"
                                               << "model.moe.first_dense_layers";
        QTest::newRow("unknown moe field") << "/model/moe/expert"
                                           << "3"
                                           << "model.moe.expert";
        QTest::newRow("attention kind") << "/model/attention"
                                        << "\"sparse\""
                                        << "model.attention";
        QTest::newRow("kv_heads with mla") << "/model/kv_heads"
                                           << "8"
                                           << "model.kv_heads";
        QTest::newRow("mla rank") << "/model/mla/kv_lora_rank"
                                  << "0"
                                  << "model.mla.kv_lora_rank";
        QTest::newRow("activation") << "/model/activation"
                                    << "\"silu\""
                                    << "model.activation";
        QTest::newRow("normalization") << "/model/normalization"
                                       << "\"batchnorm\""
                                       << "model.normalization";
        QTest::newRow("pattern length") << "/model/layer_pattern"
                                        << "\"*E\""
                                        << "model.layer_pattern";
        QTest::newRow("window with mla") << "/model/sliding_window"
                                         << "128"
                                         << "model.sliding_window";
        QTest::newRow("full every without window") << "/model/full_attention_every"
                                                   << "2"
                                                   << "model.full_attention_every";
        QTest::newRow("mamba without pattern") << "/model/mamba"
                                               << "{}"
                                               << "model.mamba";
        QTest::newRow("negative clamp") << "/model/glu_clamp"
                                        << "-1"
                                        << "model.glu_clamp";
        QTest::newRow("linear_bias not a bool") << "/model/linear_bias"
                                                << "\"yes\""
                                                << "model.linear_bias";
        QTest::newRow("precision") << "/training/precision"
                                   << "\"fp6\""
                                   << "training.precision";
        QTest::newRow("fp8 recipe") << "/training/fp8_recipe"
                                    << "\"rowwise\""
                                    << "training.fp8_recipe";
    }
    void bad_shapes_are_refused_with_their_field()
    {
        QFETCH(QString, pointer);
        QFETCH(QString, value);
        QFETCH(QString, field);
        auto j = dsv3();
        j[nlohmann::json::json_pointer(pointer.toStdString())] = nlohmann::json::parse(value.toStdString());
        QCOMPARE(refused_field(j), field);
    }

    void pattern_letters_are_checked()
    {
        auto j = dsv3();
        j["model"].erase("moe");
        j["model"].erase("mla");
        j["model"]["attention"] = "gqa";
        j["model"]["kv_heads"] = 8;
        j["model"]["layers"] = 3;
        j["model"]["layer_pattern"] = "*X-";
        const auto r = scenario_from_json(j);
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(r.first_error()).contains("'X'"));
        j["model"]["layer_pattern"] = "*E-";
        QCOMPARE(refused_field(j), QStringLiteral("model.layer_pattern")); // MoE letter without a moe block
    }
};

QTEST_APPLESS_MAIN(TestModelShapesInput)
#include "tst_model_shapes_input.moc"
