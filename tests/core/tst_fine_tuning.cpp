// SPDX-License-Identifier: MIT
// Fine-tuning modes (issue 29, model/fine_tuning.h) against closed forms: LoRA's backward GEMMs are the data
// gradients alone plus the adapters' four GEMMs, a frozen base has no optimizer state, gradient buffer or
// data-parallel reduction, packed samples shorten the attention, padded ones count their useful tokens; the
// scenario fields read and write, what the model lacks is refused, and the launch flags say what each
// framework can express.
#include <QtTest>

#include "iteration/iteration_costs.h"
#include "iteration/plan_costs.h"
#include "model/fine_tuning.h"
#include "model/model_math.h"
#include "profile/operator_timer.h"
#include "test_support.h"
#include "vtrain/launch_config.h"
#include "vtrain/layer_costs.h"
#include "vtrain/memory_model.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/plan_check.h"
#include "vtrain/scenario_json.h"
#include "vtrain/simulator.h"

using namespace vtrain;

namespace {
// The eight-GPU test cluster of these tests (designated fields: the others keep their defaults).
ClusterSpec test_cluster()
{
    ClusterSpec c;
    c.gpu = "test-gpu";
    c.num_gpus = 8;
    return c;
}

// A Llama-shaped layer (SwiGLU, GQA) small enough to cost quickly.
ModelSpec llama_like()
{
    ModelSpec m = test::gpt(4, 2048, 16, 2048, 32000);
    m.kv_heads = 4;
    m.ffn_hidden = 5632;
    m.activation = FfnActivation::SwiGlu;
    m.normalization = Normalization::RmsNorm;
    m.tied_embeddings = false;
    return m;
}

TrainingSpec lora(unsigned targets, int rank = 16)
{
    TrainingSpec t;
    t.global_batch = 8;
    t.mode = TrainingMode::Lora;
    t.lora_rank = rank;
    t.lora_targets = targets;
    return t;
}

struct Layer {
    ModelSpec model;
    TrainingSpec training;
    GpuProfile profile = test::free_network_profile();
    CommModel comm;
    LayerCostInput in;
    Layer(const ModelSpec& m, const TrainingSpec& t, int tp = 1) : model(m), training(t)
    {
        comm.links = profile.links;
        in.model = &model;
        in.training = &training;
        in.profile = &profile;
        in.comm = &comm;
        in.tp = tp;
        in.tp_group = place_group(tp, 1, 8);
    }
    LayerCosts run() const { return compute_layer_costs(in); }
};

// The seconds of the operator `name` in `phase` of the listed layer (0 when absent).
double op_seconds(const LayerCosts& c, const std::string& name, Phase phase)
{
    double s = 0;
    for (const OperatorTime& op : c.layer_operators) {
        if (op.name == name && op.phase == phase) {
            s += op.seconds;
        }
    }
    return s;
}

bool close(double a, double b, double rel = 1e-12)
{
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)) + 1e-18;
}

} // namespace

class TestFineTuning : public QObject {
    Q_OBJECT

private slots:
    void lora_backward_is_data_gradients_plus_adapters()
    {
        const ModelSpec m = llama_like();
        TrainingSpec pre;
        pre.global_batch = 8;
        const LayerCosts full = Layer(m, pre).run();
        const LayerCosts frozen = Layer(m, lora(kLoraQkv)).run();
        const GpuProfile profile = test::free_network_profile();
        const OperatorTimer g(profile, Precision::Bf16);
        const double tokens = m.seq_len; // micro-batch 1, tp 1
        const double h = m.hidden, qkv = m.hidden + 2.0 * m.effective_kv_heads() * m.head_dim(), f = m.effective_ffn_hidden();
        // Frozen base: the backward of each GEMM is its data gradient dX = dY W^T only.
        QVERIFY(close(op_seconds(frozen, "qkv projection", Phase::Backward), g.gemm_seconds(tokens, h, qkv)));
        QVERIFY(close(op_seconds(frozen, "ffn down", Phase::Backward), g.gemm_seconds(tokens, f, h)));
        // ... where pretraining adds the weight gradient dW = X^T dY.
        QVERIFY(close(op_seconds(full, "qkv projection", Phase::Backward), g.gemm_seconds(tokens, h, qkv) + g.gemm_seconds(h, qkv, tokens)));
        // The forward is the same GEMM either way.
        QVERIFY(close(op_seconds(frozen, "qkv projection", Phase::Forward), op_seconds(full, "qkv projection", Phase::Forward)));
        // The adapter on qkv, rank 16: x A then (x A) B forward; dB, d(xA), dA, dx backward.
        const double r = 16;
        QVERIFY(
            close(op_seconds(frozen, "lora adapter (x A, then B)", Phase::Forward), g.gemm_seconds(tokens, r, h) + g.gemm_seconds(tokens, qkv, r)));
        QVERIFY(close(op_seconds(frozen, "lora adapter gradients (dB, d(xA), dA, dx)", Phase::Backward),
                      g.gemm_seconds(r, qkv, tokens) + g.gemm_seconds(tokens, r, qkv) + g.gemm_seconds(r, h, tokens) + g.gemm_seconds(tokens, h, r)));
        // Only the targeted layer carries one: qkv here, so proj/fc1/fc2 have none (one adapter in the layer).
        int adapters = 0;
        for (const OperatorTime& op : frozen.layer_operators) {
            adapters += op.name == "lora adapter (x A, then B)" ? 1 : 0;
        }
        QCOMPARE(adapters, 1);
        // Every targeted linear layer: four adapters.
        adapters = 0;
        for (const OperatorTime& op : Layer(m, lora(kLoraAllLinear)).run().layer_operators) {
            adapters += op.name == "lora adapter (x A, then B)" ? 1 : 0;
        }
        QCOMPARE(adapters, 4);
        // The frozen embedding has no backward (no scatter-add into a table gradient).
        QCOMPARE(frozen.embedding.backward.compute_s, 0.0);
        QVERIFY(full.embedding.backward.compute_s > 0);
    }

    void lora_adapters_add_their_tensor_parallel_collectives()
    {
        const ModelSpec m = llama_like();
        // tp 2 without sequence parallelism: the column-parallel qkv adapter all-gathers [tokens, r] forward and
        // all-reduces its input gradient [tokens, h] and its low-rank gradient [tokens, r] backward.
        Layer layer(m, lora(kLoraQkv), 2);
        const LayerCosts c = layer.run();
        const double tokens = m.seq_len, e = 2;
        const double fwd = layer.comm.collective_seconds(Collective::AllGather, tokens * 16 * e, layer.in.tp_group);
        const double bwd = layer.comm.collective_seconds(Collective::AllReduce, tokens * 16 * e, layer.in.tp_group) +
                           layer.comm.collective_seconds(Collective::AllReduce, tokens * m.hidden * e, layer.in.tp_group);
        QVERIFY(close(op_seconds(c, "lora tp collectives", Phase::Forward), fwd));
        QVERIFY(close(op_seconds(c, "lora tp collectives", Phase::Backward), bwd));
    }

    void frozen_weights_have_no_optimizer_state()
    {
        const ModelSpec m = llama_like();
        Plan p;
        PipelineLayout layout;
        QVERIFY(!resolve_pipeline_layout(m, p, layout));
        TrainingSpec pre;
        pre.global_batch = 8;
        const TrainingSpec t = lora(kLoraQkv | kLoraFc2, 8);
        const StageMemory full = stage_memory(m, pre, p, layout, {1}).front();
        const StageMemory frozen = stage_memory(m, t, p, layout, {1}).front();
        // Adapters: r x (in + out) each, on every layer: qkv h -> q + 2kv, fc2 f -> h.
        const double qkv = m.hidden + 2.0 * m.effective_kv_heads() * m.head_dim();
        const double adapters = m.layers * 8.0 * ((m.hidden + qkv) + (m.effective_ffn_hidden() + m.hidden));
        QCOMPARE(adapter_stage_params(m, t, p, layout.at(0, 0)), adapters);
        // Exactly the adapters' optimizer state (fp32 master + two Adam moments) and fp32 gradients remain ...
        QCOMPARE(frozen.optimizer_bytes, 12.0 * adapters);
        QCOMPARE(frozen.gradients_bytes, 4.0 * adapters);
        // ... the base weights stay, with the adapters' bf16 weights on top ...
        QCOMPARE(frozen.weights_bytes, full.weights_bytes + 2.0 * adapters);
        // ... and pretraining holds the state of every parameter.
        const double params = virtual_stage_params(m, p, layout.at(0, 0)).total();
        QCOMPARE(full.optimizer_bytes, 12.0 * params);
        // With the distributed optimizer over 8 replicas, the adapters' state is sharded exactly.
        Plan sharded = p;
        sharded.dp = 8;
        sharded.zero_stage = 1;
        TrainingSpec t8 = t;
        t8.global_batch = 64;
        QCOMPARE(stage_memory(m, t8, sharded, layout, {1}).front().optimizer_bytes, 12.0 * adapters / 8);
    }

    void frozen_weights_reduce_only_adapter_gradients()
    {
        const ModelSpec m = llama_like();
        Plan p;
        p.dp = 8;
        const GpuProfile profile = test::free_network_profile();
        const ResolvedCluster cluster = resolve_cluster(test_cluster(), profile);
        TrainingSpec t = lora(kLoraQkv);
        t.global_batch = 64;
        const LayerCosts costs = plan_layer_costs(m, t, cluster, p);
        IterationCosts out;
        build_iteration_costs(m, t, cluster, p, costs, out);
        PipelineLayout layout;
        QVERIFY(!resolve_pipeline_layout(m, p, layout));
        // The data-parallel stream carries the adapters' gradients only; the optimizer steps them only.
        QCOMPARE(out.chunk.front().trained.total(), adapter_stage_params(m, t, p, layout.at(0, 0)));
        QCOMPARE(out.chunk.front().trained.vocab, 0.0);
        QVERIFY(out.chunk.front().params.total() > 100 * out.chunk.front().trained.total());
        const OperatorTimer timer(profile, Precision::Bf16);
        QCOMPARE(out.stage.front().optimizer_s, timer.adam_seconds(out.chunk.front().trained.total()));
        // Tied embeddings of a frozen model need no gradient sync between the end stages.
        ModelSpec tied = m;
        tied.tied_embeddings = true;
        Plan pp2;
        pp2.pp = 2;
        pp2.dp = 4;
        IterationCosts two;
        build_iteration_costs(tied, t, resolve_cluster(test_cluster(), profile), pp2,
                              plan_layer_costs(tied, t, resolve_cluster(test_cluster(), profile), pp2), two);
        QVERIFY(!two.embedding_sync);
    }

    void model_flops_follow_the_mode()
    {
        const ModelSpec m = llama_like();
        TrainingSpec pre;
        pre.global_batch = 8;
        const double tokens = 8.0 * m.seq_len;
        QCOMPARE(mode_model_flops_per_iteration(m, pre), model_flops_per_iteration(m, 8));
        const TrainingSpec t = lora(kLoraAllLinear, 32);
        double core = 0;
        for (int i = 0; i < m.layers; ++i) {
            core += attention_core_forward_flops_per_token(m, i);
        }
        const double forward = layers_forward_flops_per_token(m) + output_forward_flops_per_token(m);
        const double adapters = m.layers * 2.0 * lora_adapter_params(m, t, layer_kind(m, 0));
        // Frozen GEMMs forward + data gradient (2x), the attention core in full (3x), adapters 3x.
        QVERIFY(close(mode_model_flops_per_iteration(m, t), tokens * (2 * (forward - core) + 3 * core + 3 * adapters)));
        // Packed samples of a quarter of the sequence: a quarter of the attention work.
        TrainingSpec sft = pre;
        sft.mode = TrainingMode::Sft;
        sft.sample_tokens = m.seq_len / 4;
        QVERIFY(close(mode_model_flops_per_iteration(m, sft), 3 * tokens * (forward - 0.75 * core)));
    }

    void packed_samples_shorten_the_attention()
    {
        const ModelSpec m = llama_like();
        TrainingSpec pre;
        pre.global_batch = 8;
        TrainingSpec sft = pre;
        sft.mode = TrainingMode::Sft;
        sft.sample_tokens = 256; // 8 samples per 2048-token sequence
        const LayerCosts full = Layer(m, pre).run();
        const LayerCosts packed = Layer(m, sft).run();
        QVERIFY(close(op_seconds(packed, "attention core (flash)", Phase::Forward), op_seconds(full, "attention core (flash)", Phase::Forward) / 8));
        // Padded samples compute the whole sequence.
        sft.sequence_packing = false;
        const LayerCosts padded = Layer(m, sft).run();
        QVERIFY(close(op_seconds(padded, "attention core (flash)", Phase::Forward), op_seconds(full, "attention core (flash)", Phase::Forward)));
    }

    void padded_samples_count_their_useful_tokens()
    {
        Scenario s;
        s.model = llama_like();
        s.cluster.gpu = "test-gpu";
        s.cluster.num_gpus = 1;
        s.training.global_batch = 8;
        s.training.mode = TrainingMode::Sft;
        s.training.sequence_packing = false;
        s.training.sample_tokens = 500;
        Plan p;
        const auto r = simulate(s, p, test::free_network_profile());
        QVERIFY(r.ok());
        QVERIFY(r->tokens_useful_only);
        QVERIFY(close(r->tokens_per_s * r->iteration_time_s, 8.0 * 500));
        s.training.sequence_packing = true;
        const auto packed = simulate(s, p, test::free_network_profile());
        QVERIFY(packed.ok() && !packed->tokens_useful_only);
        QVERIFY(close(packed->tokens_per_s * packed->iteration_time_s, 8.0 * s.model.seq_len));
    }

    void lora_is_faster_than_pretraining_by_about_the_weight_gradients()
    {
        Scenario s;
        s.model = llama_like();
        s.cluster.gpu = "test-gpu";
        s.cluster.num_gpus = 8;
        s.training.global_batch = 64;
        Plan p;
        p.dp = 8;
        const auto pre = simulate(s, p, test::free_network_profile());
        s.training = lora(kLoraQkv);
        s.training.global_batch = 64;
        const auto frozen = simulate(s, p, test::free_network_profile());
        QVERIFY(pre.ok() && frozen.ok());
        // A third of the GEMM work goes: the step is faster, and not faster than forward + data gradient allow.
        QVERIFY(frozen->iteration_time_s < 0.85 * pre->iteration_time_s);
        QVERIFY(frozen->iteration_time_s > 0.55 * pre->iteration_time_s);
        QVERIFY(frozen->peak_memory_gib < pre->peak_memory_gib);
    }

    void scenario_fields_read_write_and_refuse()
    {
        const std::string base = R"({"model": {"layers": 2, "hidden": 256, "heads": 4, "seq_len": 128, "vocab": 1000},
            "cluster": {"gpu": "test-gpu", "num_gpus": 1}, "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 1}, "training": {"global_batch": 4, )";
        auto parse = [&](const std::string& training) { return scenario_from_text(base + training + "}}"); };
        const auto l = parse(R"("mode": "lora", "lora_rank": 8, "lora_alpha": 16, "lora_targets": ["linear_qkv", "fc2"], "sequence_packing": false,
                              "sample_tokens": 100)");
        QVERIFY(l.ok());
        QVERIFY(l->training.mode == TrainingMode::Lora);
        QCOMPARE(l->training.lora_rank, 8);
        QCOMPARE(l->training.lora_targets, static_cast<unsigned>(kLoraQkv | kLoraFc2));
        QVERIFY(!l->training.sequence_packing);
        const nlohmann::json j = scenario_to_json(*l)["training"];
        QCOMPARE(j["mode"].get<std::string>(), std::string("lora"));
        QCOMPARE(j["lora_targets"], nlohmann::json({"qkv", "fc2"}));
        QCOMPARE(j["sample_tokens"].get<int>(), 100);
        const auto again = scenario_from_json(scenario_to_json(*l));
        QVERIFY(again.ok() && again->training.lora_targets == l->training.lora_targets && again->training.lora_alpha == 16);
        // Pretraining writes none of the fields (files stay as they were).
        const auto pre = parse(R"("precision": "bf16")");
        QVERIFY(pre.ok() && !scenario_to_json(*pre)["training"].contains("mode"));
        // Bad input: one line naming the field.
        for (const auto& [training, field] : {std::pair<std::string, QString>{R"("mode": "dpo")", "mode"},
                                              {R"("lora_rank": 8)", "lora_rank"},
                                              {R"("mode": "lora", "lora_targets": ["q_proj"])", "lora_targets"},
                                              {R"("mode": "lora", "lora_targets": [])", "lora_targets"},
                                              {R"("sample_tokens": 100)", "sample_tokens"}}) {
            const auto bad = parse(training);
            QVERIFY2(!bad.ok(), training.c_str());
            QVERIFY2(QString::fromStdString(bad.errors().front().to_string()).contains(field), training.c_str());
        }
    }

    void what_the_model_lacks_is_refused()
    {
        // LoRA on MLA projections or routed experts has no adapter path: the plan is refused with the reason.
        ModelSpec mla = test::deepseek_v3();
        mla.mtp_layers = 0;
        TrainingSpec t = lora(kLoraQkv);
        t.global_batch = 64;
        Plan p;
        p.dp = 64;
        p.ep = 64;
        const auto r = check_plan(mla, t, p, 64);
        QVERIFY(r && r->reason == RejectReason::NotModeled);
        QVERIFY(QString::fromStdString(r->diagnostic.to_string()).contains("latent attention"));
        ModelSpec moe = llama_like();
        moe.moe.experts = 8;
        moe.moe.top_k = 2;
        QVERIFY(fine_tuning_not_modeled(moe, lora(kLoraFc1)).has_value());
        QVERIFY(!fine_tuning_not_modeled(moe, lora(kLoraQkv)).has_value()); // attention adapters on an MoE model: modeled
        QVERIFY(!fine_tuning_not_modeled(llama_like(), lora(kLoraAllLinear)).has_value());
    }

    void launch_flags_say_what_each_framework_expresses()
    {
        Scenario s;
        s.model = llama_like();
        s.cluster.gpu = "test-gpu";
        s.cluster.num_gpus = 8;
        s.training = lora(kLoraQkv | kLoraProj, 16);
        s.training.global_batch = 64;
        Plan p;
        p.dp = 8;
        const auto mlm = megatron_launch(s, p, 8);
        QVERIFY(mlm.ok());
        bool bridge = false;
        for (const std::string& w : mlm->warnings) {
            bridge = bridge || (w.find("peft=lora peft.dim=16") != std::string::npos &&
                                w.find("peft.target_modules=[linear_qkv,linear_proj]") != std::string::npos);
        }
        QVERIFY(bridge);
        const auto titan = torchtitan_launch(s, p, 8);
        QVERIFY(titan.ok());
        bool refused = false;
        for (const std::string& w : titan->warnings) {
            refused = refused || w.find("no released LoRA") != std::string::npos;
        }
        QVERIFY(refused);
        s.training.mode = TrainingMode::Sft;
        const auto sft = megatron_launch(s, p, 8);
        QVERIFY(sft.ok());
        QVERIFY(std::find(sft->arguments.begin(), sft->arguments.end(), "--sft") != sft->arguments.end());
    }
};

QTEST_APPLESS_MAIN(TestFineTuning)
#include "tst_fine_tuning.moc"
