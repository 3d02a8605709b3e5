// SPDX-License-Identifier: MIT
// The vtrain command line as a user drives it: reports, JSON, traces, and exit status 2 with one clear
// line for bad input.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

namespace {

struct Run {
    int exit_code = -1;
    QString out;
    QString err;
};

Run vtrain(const QStringList& args)
{
    QProcess p;
    p.setWorkingDirectory(QStringLiteral(VTRAIN_SOURCE_DIR));
    p.start(QStringLiteral(VTRAIN_CLI), args);
    p.waitForFinished(60000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

Run vtrain_to_file(const QStringList& args, const QString& stdout_file)
{
    QProcess p;
    p.setWorkingDirectory(QStringLiteral(VTRAIN_SOURCE_DIR));
    p.setStandardOutputFile(stdout_file);
    p.start(QStringLiteral(VTRAIN_CLI), args);
    p.waitForFinished(60000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, {}, QString::fromUtf8(p.readAllStandardError())};
}

int lines(const QString& text)
{
    return static_cast<int>(text.count(QLatin1Char('\n')));
}

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& text)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        qFatal("cannot write %s", qPrintable(path));
    }
    f.write(text);
    return path;
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void simulate_prints_a_report()
    {
        const Run r = vtrain({QStringLiteral("simulate"), QStringLiteral("examples/mt-nlg-530b.json")});
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.out.contains(QStringLiteral("iteration time")));
        QVERIFY(r.out.contains(QStringLiteral("MFU")));
        QVERIFY(r.out.contains(QStringLiteral("t=8 p=35 d=12")));
    }

    void simulate_json_has_the_contract_fields()
    {
        const Run r = vtrain({QStringLiteral("simulate"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--json")});
        QCOMPARE(r.exit_code, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        for (const char* key : {"iteration_time_s", "tokens_per_s", "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "bubble_fraction",
                                "peak_memory_gib", "fits_memory", "training_days", "cost_usd", "breakdown"}) {
            QVERIFY2(o.contains(QLatin1String(key)), key);
        }
        QVERIFY(o.value(QStringLiteral("iteration_time_s")).toDouble() > 0);
    }

    void timeline_writes_a_chrome_trace()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("t.json"));
        const Run r = vtrain({QStringLiteral("timeline"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("-o"), out});
        QCOMPARE(r.exit_code, 0);
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        QVERIFY(o.value(QStringLiteral("traceEvents")).toArray().size() > 10);
    }

    void profiles_lists_sources()
    {
        const Run r = vtrain({QStringLiteral("profiles")});
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.out.contains(QStringLiteral("a100-sxm4-80gb")));
        QVERIFY(r.out.contains(QStringLiteral("modeled")) || r.out.contains(QStringLiteral("measured")));
    }

    // Every output that uses a band says whether it is calibrated or the uncalibrated default (issue 16).
    void simulate_says_whether_the_band_is_calibrated()
    {
        QTemporaryDir dir;
        const QString mi300x = write(dir, QStringLiteral("mi300x.json"), R"({
            "model": {"name": "GPT 1.3B", "layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048, "vocab": 50257},
            "cluster": {"gpu": "mi300x", "num_gpus": 8},
            "training": {"global_batch": 512, "tokens": 26e9},
            "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 8}})");
        const Run text = vtrain({QStringLiteral("simulate"), mi300x});
        QCOMPARE(text.exit_code, 0);
        QVERIFY2(text.out.contains(QStringLiteral("UNCALIBRATED default band")), qPrintable(text.out));
        const Run json = vtrain({QStringLiteral("simulate"), mi300x, QStringLiteral("--json")});
        const QJsonObject band = QJsonDocument::fromJson(json.out.toUtf8()).object().value(QStringLiteral("iteration_time_band")).toObject();
        QCOMPARE(band.value(QStringLiteral("calibrated")).toBool(true), false);
        // The A100 profile is calibrated on vTrain's runs.
        const Run a100 = vtrain({QStringLiteral("simulate"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--json")});
        const QJsonObject a100_band = QJsonDocument::fromJson(a100.out.toUtf8()).object().value(QStringLiteral("iteration_time_band")).toObject();
        QCOMPARE(a100_band.value(QStringLiteral("calibrated")).toBool(false), true);
        const Run a100_text = vtrain({QStringLiteral("simulate"), QStringLiteral("examples/gpt-1.3b.json")});
        QVERIFY(!a100_text.out.contains(QStringLiteral("UNCALIBRATED")));
        QVERIFY(a100_text.out.contains(QStringLiteral("calibrated")));
    }

    void explore_says_per_gpu_type_whether_the_band_is_calibrated()
    {
        QTemporaryDir dir;
        const QString scenario = write(dir, QStringLiteral("two-gpus.json"), R"({
            "model": {"name": "GPT 1.3B", "layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048, "vocab": 50257},
            "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8},
            "training": {"global_batch": 64, "tokens": 1e9},
            "search": {"tp": [1, 2], "pp": [1], "micro_batch": [1, 2], "num_gpus": [8], "gpu": ["a100-sxm4-80gb", "mi300x"]}})");
        const QString csv = dir.filePath(QStringLiteral("plans.csv"));
        const QString json = dir.filePath(QStringLiteral("summary.json"));
        const Run r = vtrain({QStringLiteral("explore"), scenario, QStringLiteral("--csv"), csv, QStringLiteral("--json"), json,
                              QStringLiteral("--threads"), QStringLiteral("1")});
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.out.contains(QRegularExpression(QStringLiteral("mi300x +UNCALIBRATED \\(default band\\)"))), qPrintable(r.out));
        QVERIFY2(r.out.contains(QRegularExpression(QStringLiteral("a100-sxm4-80gb +calibrated"))), qPrintable(r.out));
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject bands = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("gpu_bands")).toObject();
        QCOMPARE(bands.value(QStringLiteral("mi300x")).toObject().value(QStringLiteral("calibrated")).toBool(true), false);
        QCOMPARE(bands.value(QStringLiteral("a100-sxm4-80gb")).toObject().value(QStringLiteral("calibrated")).toBool(false), true);
        // Every CSV row says it too, in the "band" column.
        QFile c(csv);
        QVERIFY(c.open(QIODevice::ReadOnly));
        const QStringList rows = QString::fromUtf8(c.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        const QStringList header = rows.front().split(QLatin1Char(','));
        const qsizetype band = header.indexOf(QStringLiteral("band"));
        const qsizetype gpu = header.indexOf(QStringLiteral("gpu"));
        QVERIFY(band > 0 && gpu > 0);
        int seen_mi300x = 0, seen_a100 = 0;
        for (qsizetype i = 1; i < rows.size(); ++i) {
            const QStringList cells = rows[i].split(QLatin1Char(','));
            const bool is_mi300x = cells[gpu] == QStringLiteral("mi300x");
            QCOMPARE(cells[band], is_mi300x ? QStringLiteral("uncalibrated") : QStringLiteral("calibrated"));
            (is_mi300x ? seen_mi300x : seen_a100) += 1;
        }
        QVERIFY(seen_mi300x > 0 && seen_a100 > 0);
    }

    // calibrate on a few rows: per-precision parameters need enough rows of their precision, the fold
    // results and the prior are written into the profile, and the report shows errors before and after.
    void calibrate_writes_folds_prior_and_per_precision_errors()
    {
        QTemporaryDir dir;
        QByteArray rows = "[";
        const char* precisions[] = {"bf16", "bf16", "bf16", "fp8", "fp8", "bf16"};
        for (int i = 0; i < 6; ++i) {
            rows += QStringLiteral(R"(%1{"id": "row_%2", "subset": "%3", "primary_metric": "tokens_per_sec_per_gpu",
                "arch_family": "llama_dense_gqa", "num_layers": %4, "hidden_size": 2048, "num_attention_heads": 16,
                "num_query_groups": 8, "ffn_hidden_size": 8192, "seq_length": 4096, "vocab_size": 32000, "gpu_type": "h100-sxm5-80gb",
                "num_gpus": 8, "gpus_per_node": 8, "tp": 1, "pp": 1, "dp": 8, "cp": 1, "micro_batch_size": 1, "global_batch_size": 64,
                "activation_recompute": "none", "sequence_parallel": false, "precision": "%5", "software": "Megatron-Core",
                "tokens_per_sec_per_gpu": %6, "trust": "high"})")
                        .arg(i == 0 ? "" : ",")
                        .arg(i)
                        .arg(i % 2 == 0 ? "even" : "odd")
                        .arg(8 + 4 * (i % 3))
                        .arg(QLatin1String(precisions[i]))
                        .arg(20000 - 1500 * (i % 3))
                        .toUtf8();
        }
        rows += "]";
        const QString runs = write(dir, QStringLiteral("runs.json"), rows);
        const QString out = dir.filePath(QStringLiteral("h100.json"));
        const Run r = vtrain({QStringLiteral("calibrate"), runs, QStringLiteral("--gpu"), QStringLiteral("h100-sxm5-80gb"),
                              QStringLiteral("--params"), QStringLiteral("gemm_max_efficiency,gemm_max_efficiency_fp8,host_overhead_us"),
                              QStringLiteral("--folds"), QStringLiteral("2"), QStringLiteral("--max-evals"), QStringLiteral("15"),
                              QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("-o"), out});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
        QVERIFY2(r.out.contains(QStringLiteral("gemm_max_efficiency_fp8: 2 fp8 rows (fewer than 3), kept at the prior")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("MAPE before")) && r.out.contains(QStringLiteral("by precision:")));
        QVERIFY(r.out.contains(QStringLiteral("fold 2:")));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject c = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("calibration")).toObject();
        QVERIFY(c.value(QStringLiteral("start_parameters")).toObject().contains(QStringLiteral("gemm_max_efficiency_fp8")));
        QVERIFY(!c.value(QStringLiteral("parameters")).toObject().contains(QStringLiteral("gemm_max_efficiency_fp8")));
        const QJsonObject cv = c.value(QStringLiteral("cross_validated_error")).toObject();
        QCOMPARE(cv.value(QStringLiteral("fold_results")).toArray().size(), 2);
        QVERIFY(cv.value(QStringLiteral("by_precision")).toObject().contains(QStringLiteral("fp8")));
        QVERIFY(c.value(QStringLiteral("start_error")).toObject().value(QStringLiteral("by_subset")).toObject().contains(QStringLiteral("even")));
        QCOMPARE(c.value(QStringLiteral("bounds")).toObject().value(QStringLiteral("gemm_max_efficiency")).toArray().at(1).toDouble(), 0.9);
        QVERIFY(c.value(QStringLiteral("bounds_why"))
                    .toObject()
                    .value(QStringLiteral("gemm_max_efficiency"))
                    .toString()
                    .contains(QStringLiteral("SC'21")));
    }

    void bad_input_exits_2_naming_the_field_data()
    {
        QTest::addColumn<QByteArray>("scenario");
        QTest::addColumn<QString>("expected");
        const QByteArray model = R"("model": {"layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048, "vocab": 50257})";
        const QByteArray training = R"("training": {"global_batch": 64})";
        QTest::newRow("malformed") << QByteArray("{\"model\": {") << "not valid JSON at line 1";
        QTest::newRow("missing field") << ("{" + model + R"(, "cluster": {"num_gpus": 8}, )" + training +
                                           R"(, "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1}})")
                                       << "cluster.gpu: is missing";
        QTest::newRow("mistyped") << ("{" + model + R"(, "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": "eight"}, )" + training +
                                      R"(, "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1}})")
                                  << "cluster.num_gpus: must be a whole number";
        QTest::newRow("tp vs heads") << ("{" + model + R"(, "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 6}, )" + training +
                                         R"(, "plan": {"tp": 3, "pp": 1, "dp": 2, "micro_batch": 1}})")
                                     << "plan.tp: tp = 3 does not divide the 16 attention heads";
        QTest::newRow("gpu count") << ("{" + model + R"(, "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 16}, )" + training +
                                       R"(, "plan": {"tp": 2, "pp": 2, "dp": 2, "micro_batch": 1}})")
                                   << "but the cluster has 16 GPUs";
        QTest::newRow("batch") << ("{" + model + R"(, "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8}, )" + training +
                                   R"(, "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 3}})")
                               << "plan.micro_batch: global batch 64 is not a multiple";
        QTest::newRow("unknown gpu") << ("{" + model + R"(, "cluster": {"gpu": "no-such-gpu", "num_gpus": 8}, )" + training +
                                         R"(, "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1}})")
                                     << "cluster.gpu: unknown GPU \"no-such-gpu\"";
        QTest::newRow("absurd") << ("{" + model + R"(, "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8}, "training": {"global_batch": -64})" +
                                    R"(, "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1}})")
                                << "training.global_batch: must be between 1";
        QTest::newRow("no plan") << ("{" + model + R"(, "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8}, )" + training + "}")
                                 << "plan: is missing";
    }
    void bad_input_exits_2_naming_the_field()
    {
        QFETCH(QByteArray, scenario);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path = write(dir, QStringLiteral("s.json"), scenario);
        const Run r = vtrain({QStringLiteral("simulate"), path});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    void usage_errors_exit_2()
    {
        QCOMPARE(vtrain({QStringLiteral("simulate")}).exit_code, 2);
        QCOMPARE(vtrain({QStringLiteral("frobnicate")}).exit_code, 2);
        QCOMPARE(vtrain({QStringLiteral("simulate"), QStringLiteral("--bogus"), QStringLiteral("x.json")}).exit_code, 2);
        QCOMPARE(vtrain({QStringLiteral("simulate"), QStringLiteral("/nonexistent/s.json")}).exit_code, 2);
    }

    // Rank order, data-parallel overlap, offload and recompute modules are in the text and in the JSON,
    // defaults included (MT-NLG), and DeepSeek-V3's recompute modules and expert parallelism show.
    void simulate_reports_rank_order_and_offload()
    {
        Run r = vtrain({QStringLiteral("simulate"), QStringLiteral("examples/mt-nlg-530b.json")});
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.out.contains(QStringLiteral("ranks: order tp-cp-ep-dp-pp (Megatron-Core's default), data-parallel overlap on")),
                 qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("offload: optimizer on GPU, activations on GPU; recompute modules none")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("cuda graphs: none")), qPrintable(r.out));
        r = vtrain({QStringLiteral("simulate"), QStringLiteral("examples/deepseek-v3-671b-h800.json")});
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.out.contains(QStringLiteral("(Megatron-Core's default), ep=64 etp=1, data-parallel")), qPrintable(r.out));
        // A dense model's report names its context parallelism only (no expert groups to speak of).
        Run longContext = vtrain({QStringLiteral("simulate"), QStringLiteral("examples/llama3.1-405b-h100-128k.json")});
        QCOMPARE(longContext.exit_code, 0);
        QVERIFY2(longContext.out.contains(QStringLiteral("(Megatron-Core's default), cp=16, data-parallel")), qPrintable(longContext.out));
        QVERIFY2(!longContext.out.contains(QStringLiteral("etp=")), qPrintable(longContext.out));
        QVERIFY2(r.out.contains(QStringLiteral("recompute modules layernorm, mla_up_proj, moe_act")), qPrintable(r.out));
        // The time breakdown names the expert all-to-all (an MoE plan's exposed dispatch/combine); the dense
        // MT-NLG report above has no such line.
        QVERIFY2(r.out.contains(QStringLiteral("  expert all-to-all ")), qPrintable(r.out));

        // A plan with a rank order and both offloads (written to a temporary copy of the small example).
        QTemporaryDir dir;
        QFile example(QStringLiteral(VTRAIN_SOURCE_DIR "/examples/gpt-1.3b.json"));
        QVERIFY(example.open(QIODevice::ReadOnly));
        QJsonObject scenario = QJsonDocument::fromJson(example.readAll()).object();
        QJsonObject plan = scenario.value(QStringLiteral("plan")).toObject();
        plan[QStringLiteral("rank_order")] = QStringLiteral("tp-cp-ep-pp-dp");
        plan[QStringLiteral("offload_optimizer")] = true;
        plan[QStringLiteral("offload_activations")] = 0.25;
        plan[QStringLiteral("overlap_grad_reduce")] = false;
        scenario[QStringLiteral("plan")] = plan;
        const QString path = write(dir, QStringLiteral("offload.json"), QJsonDocument(scenario).toJson());
        r = vtrain({QStringLiteral("simulate"), path});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("ranks: order tp-cp-ep-pp-dp, data-parallel overlap off")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("offload: optimizer on host (step on the CPU), activations 25% on host")), qPrintable(r.out));
        // CUDA graphs: the scoped modules are named in the report.
        QJsonObject training = scenario.value(QStringLiteral("training")).toObject();
        training[QStringLiteral("cuda_graphs")] = QStringLiteral("scoped");
        training[QStringLiteral("cuda_graph_scope")] = QJsonArray{QStringLiteral("attn"), QStringLiteral("mlp")};
        scenario[QStringLiteral("training")] = training;
        const Run graphs = vtrain({QStringLiteral("simulate"), write(dir, QStringLiteral("graphs.json"), QJsonDocument(scenario).toJson())});
        QVERIFY2(graphs.exit_code == 0, qPrintable(graphs.err));
        QVERIFY2(graphs.out.contains(QStringLiteral("cuda graphs: scoped (attn, mlp)")), qPrintable(graphs.out));
        const Run json = vtrain({QStringLiteral("simulate"), path, QStringLiteral("--json")});
        QCOMPARE(json.exit_code, 0);
        const QJsonObject p = QJsonDocument::fromJson(json.out.toUtf8()).object().value(QStringLiteral("plan")).toObject();
        QCOMPARE(p.value(QStringLiteral("rank_order")).toString(), QStringLiteral("tp-cp-ep-pp-dp"));
        QCOMPARE(p.value(QStringLiteral("offload_optimizer")).toBool(), true);
        QCOMPARE(p.value(QStringLiteral("offload_activations")).toDouble(), 0.25);
        QCOMPARE(p.value(QStringLiteral("overlap_grad_reduce")).toBool(), false);
        // Defaults are written too, and DeepSeek-V3's modules by name.
        const QJsonObject d =
            QJsonDocument::fromJson(
                vtrain({QStringLiteral("simulate"), QStringLiteral("examples/deepseek-v3-671b-h800.json"), QStringLiteral("--json")}).out.toUtf8())
                .object()
                .value(QStringLiteral("plan"))
                .toObject();
        QCOMPARE(d.value(QStringLiteral("rank_order")).toString(), QStringLiteral("tp-cp-ep-dp-pp"));
        QCOMPARE(d.value(QStringLiteral("offload_optimizer")).toBool(true), false);
        QCOMPARE(d.value(QStringLiteral("offload_activations")).toDouble(-1), 0.0);
        QCOMPARE(d.value(QStringLiteral("recompute_modules")).toArray().size(), 3);
    }

    // DeepSeek-V3 as trained: the plan's recompute modules and layout reach the Megatron-LM command.
    void launch_writes_deepseek_v3_recompute_modules()
    {
        const Run r = vtrain({QStringLiteral("launch"), QStringLiteral("examples/deepseek-v3-671b-h800.json"), QStringLiteral("--framework"),
                              QStringLiteral("megatron")});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("--recompute-granularity selective")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("--recompute-modules layernorm mla_up_proj moe_act")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("--pipeline-model-parallel-layout \"Et*4|(t*4|)*14t*1mL\"")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("--expert-model-parallel-size 64")), qPrintable(r.out));
    }

    void launch_prints_megatron_flags()
    {
        const Run r = vtrain({QStringLiteral("launch"), QStringLiteral("examples/gpt3-175b.json")});
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.out.contains(QStringLiteral("torchrun --nproc_per_node 8 --nnodes 128")));
        QVERIFY(r.out.contains(QStringLiteral("--tensor-model-parallel-size 8")));
        QVERIFY(r.out.contains(QStringLiteral("--pipeline-model-parallel-size 16")));
        QVERIFY(r.out.contains(QStringLiteral("--num-layers-per-virtual-pipeline-stage 3")));
        QVERIFY(r.out.contains(QStringLiteral("--recompute-granularity full")));
        QVERIFY(r.err.contains(QStringLiteral("warning: ")));
    }

    void launch_writes_a_deepspeed_config()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("ds_config.json"));
        const Run r = vtrain({QStringLiteral("launch"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--framework"),
                              QStringLiteral("deepspeed"), QStringLiteral("-o"), out});
        QCOMPARE(r.exit_code, 0);
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(o.value(QStringLiteral("train_batch_size")).toInt(), 512);
        QCOMPARE(o.value(QStringLiteral("train_micro_batch_size_per_gpu")).toInt(), 8);
        QCOMPARE(o.value(QStringLiteral("gradient_accumulation_steps")).toInt(), 8); // 512 / (8 x 8)
        QVERIFY(r.err.contains(QStringLiteral("deepspeed --num_gpus 8 pretrain_gpt.py")));
    }

    void launch_writes_a_torchtitan_toml()
    {
        // Llama 3 8B FSDP on 8 H100: one node, everything sharded over the 8 data-parallel ranks.
        const Run r = vtrain({QStringLiteral("launch"), QStringLiteral("examples/llama3-8b-h100-fsdp.json"), QStringLiteral("--framework"),
                              QStringLiteral("torchtitan")});
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.out.contains(QStringLiteral("[parallelism]")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("data_parallel_shard_degree = 8")));
        QVERIFY(r.out.contains(QStringLiteral("tensor_parallel_degree = 1")));
        QVERIFY(r.err.contains(QStringLiteral("note: launch torchtitan")));
        // A mixture-of-experts model is refused with the reason.
        const Run moe = vtrain({QStringLiteral("launch"), QStringLiteral("examples/deepseek-v3-671b-h800.json"), QStringLiteral("--framework"),
                                QStringLiteral("torchtitan")});
        QCOMPARE(moe.exit_code, 2);
        QVERIFY(moe.err.contains(QStringLiteral("dense")));
    }

    void launch_takes_a_plan_file()
    {
        QTemporaryDir dir;
        const QString row = write(dir, QStringLiteral("row.json"),
                                  R"({"gpu": "a100-sxm4-80gb", "num_gpus": 512, "plan": {"tp": 8, "pp": 8, "dp": 8, "micro_batch": 1,
                                      "schedule": "1f1b", "recompute": "selective", "zero_stage": 1}, "mfu": 0.4})");
        const Run r = vtrain({QStringLiteral("launch"), QStringLiteral("examples/gpt3-175b.json"), QStringLiteral("--plan"), row});
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.out.contains(QStringLiteral("--nnodes 64")));
        QVERIFY(r.out.contains(QStringLiteral("--pipeline-model-parallel-size 8")));
        QVERIFY(!r.out.contains(QStringLiteral("--num-layers-per-virtual-pipeline-stage")));
        QVERIFY(r.out.contains(QStringLiteral("--use-distributed-optimizer")));
        const QString block = write(dir, QStringLiteral("plan.json"), R"({"tp": 4, "pp": 16, "dp": 16, "micro_batch": 2})");
        const Run b = vtrain({QStringLiteral("launch"), QStringLiteral("examples/gpt3-175b.json"), QStringLiteral("--plan"), block});
        QCOMPARE(b.exit_code, 0);
        QVERIFY(b.out.contains(QStringLiteral("--tensor-model-parallel-size 4")));
    }

    void launch_refuses_bad_input()
    {
        QTemporaryDir dir;
        const QString scenario = QStringLiteral("examples/gpt3-175b.json");
        const Run framework = vtrain({QStringLiteral("launch"), scenario, QStringLiteral("--framework"), QStringLiteral("jax")});
        QCOMPARE(framework.exit_code, 2);
        QVERIFY2(framework.err.contains(QStringLiteral("--framework")), qPrintable(framework.err));
        QVERIFY(framework.out.isEmpty());

        const QString malformed = write(dir, QStringLiteral("bad.json"), "{\"tp\": ");
        const Run bad = vtrain({QStringLiteral("launch"), scenario, QStringLiteral("--plan"), malformed});
        QCOMPARE(bad.exit_code, 2);
        QVERIFY2(bad.err.contains(malformed), qPrintable(bad.err));
        QVERIFY(bad.out.isEmpty());

        const QString missing = write(dir, QStringLiteral("missing.json"), R"({"pp": 16, "dp": 8, "micro_batch": 1})");
        const Run field = vtrain({QStringLiteral("launch"), scenario, QStringLiteral("--plan"), missing});
        QCOMPARE(field.exit_code, 2);
        QVERIFY2(field.err.contains(QStringLiteral("plan.tp: is missing")), qPrintable(field.err));

        const QString impossible = write(dir, QStringLiteral("impossible.json"), R"({"tp": 8, "pp": 16, "dp": 8, "micro_batch": 1,
                                             "schedule": "interleaved", "virtual_stages": 5})");
        const Run refused = vtrain({QStringLiteral("launch"), scenario, QStringLiteral("--plan"), impossible});
        QCOMPARE(refused.exit_code, 2);
        QVERIFY2(refused.err.contains(QStringLiteral("plan.virtual_stages")), qPrintable(refused.err));
        QCOMPARE(vtrain({QStringLiteral("launch"), scenario, QStringLiteral("--plan"), dir.filePath(QStringLiteral("none.json"))}).exit_code, 2);
    }

    // Issue 19: every numeric option has a range; the option is named; one line.
    void absurd_option_values_are_refused_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("option");
        const QStringList om{QStringLiteral("optimal-model"),
                             QStringLiteral("--gpu"),
                             QStringLiteral("a100-sxm4-80gb"),
                             QStringLiteral("--gpus"),
                             QStringLiteral("64"),
                             QStringLiteral("--days"),
                             QStringLiteral("30")};
        const QStringList sc{QStringLiteral("schedule"), QStringLiteral("--gpu"), QStringLiteral("a100-sxm4-80gb"),
                             QStringLiteral("--gpus"),   QStringLiteral("64"),    QStringLiteral("--jobs"),
                             QStringLiteral("2")};
        QTest::newRow("price 1e308") << (om + QStringList{QStringLiteral("--price"), QStringLiteral("1e308")}) << "--price";
        QTest::newRow("dollars inf") << (om + QStringList{QStringLiteral("--dollars"), QStringLiteral("inf")}) << "--dollars";
        QTest::newRow("tokens nan") << (om + QStringList{QStringLiteral("--tokens-per-param"), QStringLiteral("nan")}) << "--tokens-per-param";
        QTest::newRow("om threads") << (om + QStringList{QStringLiteral("--threads"), QStringLiteral("100000")}) << "--threads";
        QTest::newRow("restart 1e308") << (sc + QStringList{QStringLiteral("--restart-overhead-s"), QStringLiteral("1e308")})
                                       << "--restart-overhead-s";
        QTest::newRow("window 1e308") << (sc + QStringList{QStringLiteral("--window-hours"), QStringLiteral("1e308")}) << "--window-hours";
        QTest::newRow("seed 1e999") << (sc + QStringList{QStringLiteral("--seed"), QStringLiteral("1e999")}) << "--seed";
        QTest::newRow("schedule threads") << (sc + QStringList{QStringLiteral("--threads"), QStringLiteral("100000")}) << "--threads";
        QTest::newRow("explore threads") << QStringList{QStringLiteral("explore"), QStringLiteral("examples/gpt-1.3b.json"),
                                                        QStringLiteral("--threads"), QStringLiteral("100000")}
                                         << "--threads";
        QTest::newRow("repeated option") << (om + QStringList{QStringLiteral("--days"), QStringLiteral("nan")}) << "--days is given more than once";
        QTest::newRow("repeated -o") << QStringList{QStringLiteral("launch"),   QStringLiteral("examples/gpt-1.3b.json"),
                                                    QStringLiteral("-o"),       QStringLiteral("a"),
                                                    QStringLiteral("--output"), QStringLiteral("b")}
                                     << "--output is given more than once";
        QTest::newRow("repeated flag") << QStringList{QStringLiteral("simulate"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--json"),
                                                      QStringLiteral("--json")}
                                       << "--json is given more than once";
    }
    void absurd_option_values_are_refused()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, option);
        const Run r = vtrain(args);
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.startsWith(QStringLiteral("vtrain: ") + option) || r.err.contains(QStringLiteral("option ") + option), qPrintable(r.err));
        QCOMPARE(lines(r.err), 1);
        QVERIFY(r.out.isEmpty());
    }

    void one_line_per_rejection_unless_all_errors()
    {
        QTemporaryDir dir;
        const QString path = write(dir, QStringLiteral("s.json"), R"({"model": 1})");
        const Run one = vtrain({QStringLiteral("simulate"), path});
        QCOMPARE(one.exit_code, 2);
        QCOMPARE(lines(one.err), 1);
        QVERIFY2(QRegularExpression(QStringLiteral("\\(and \\d+ more; --all-errors to list them\\)\n$")).match(one.err).hasMatch(),
                 qPrintable(one.err));
        const Run all = vtrain({QStringLiteral("simulate"), path, QStringLiteral("--all-errors")});
        QCOMPARE(all.exit_code, 2);
        QVERIFY2(lines(all.err) > 2, qPrintable(all.err));
        QVERIFY(!all.err.contains(QStringLiteral("--all-errors")));
    }

    void json_errors_name_line_column_and_field()
    {
        QTemporaryDir dir;
        const QString overflow = write(dir, QStringLiteral("o.json"), "{\n  \"model\": {\"layers\": 1e309}\n}\n");
        const Run r = vtrain({QStringLiteral("simulate"), overflow});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("line 2, column 23")) && r.err.contains(QStringLiteral("(in model.layers)")), qPrintable(r.err));
        QVERIFY(!r.err.contains(QStringLiteral("json.exception")));
        const QString deep = write(dir, QStringLiteral("d.json"), QByteArray(100000, '[') + QByteArray(100000, ']'));
        for (const QString& command : {QStringLiteral("simulate"), QStringLiteral("explore"), QStringLiteral("launch"), QStringLiteral("timeline")}) {
            const Run d = vtrain({command, deep, QStringLiteral("-o"), dir.filePath(QStringLiteral("t.json"))});
            QVERIFY2(d.exit_code == 2, qPrintable(command + QStringLiteral(": ") + d.err));
            QVERIFY2(d.err.contains(QStringLiteral("too deeply nested at line 1, column 257")) || d.err.contains(QStringLiteral("unknown option")),
                     qPrintable(d.err));
        }
        const Run d = vtrain({QStringLiteral("simulate"), deep});
        QVERIFY2(d.err.contains(QStringLiteral("too deeply nested at line 1, column 257")), qPrintable(d.err));
        QCOMPARE(lines(d.err), 1);
    }

    void output_failures_give_the_os_reason_and_exit_1()
    {
        const Run full = vtrain_to_file({QStringLiteral("simulate"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--json")},
                                        QStringLiteral("/dev/full"));
        QCOMPARE(full.exit_code, 1);
        QVERIFY2(full.err.contains(QStringLiteral("cannot write standard output: No space left on device")), qPrintable(full.err));
        QTemporaryDir dir;
        const QString nowhere = dir.filePath(QStringLiteral("no/such/folder/out.json"));
        const QList<QStringList> writers{{QStringLiteral("launch"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("-o"), nowhere},
                                         {QStringLiteral("timeline"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("-o"), nowhere},
                                         {QStringLiteral("explore"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--json"), nowhere},
                                         {QStringLiteral("explore"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--csv"), nowhere}};
        for (const QStringList& args : writers) {
            const Run r = vtrain(args);
            QVERIFY2(r.exit_code == 1, qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") + r.err));
            QVERIFY2(r.err.contains(QStringLiteral("No such file or directory")), qPrintable(r.err));
            QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("no")))); // parents are not created
        }
    }

    void timeline_refuses_a_huge_trace_unless_forced()
    {
        QTemporaryDir dir;
        // 10,000 layers over one stage with tp = 8: millions of per-layer collective events.
        const QString path =
            write(dir, QStringLiteral("huge.json"), R"({"model": {"layers": 10000, "hidden": 1024, "heads": 8, "seq_len": 256, "vocab": 1000},
            "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8}, "training": {"global_batch": 512},
            "plan": {"tp": 8, "pp": 1, "dp": 1, "micro_batch": 1}})");
        const QString out = dir.filePath(QStringLiteral("t.json"));
        const Run r = vtrain({QStringLiteral("timeline"), path, QStringLiteral("-o"), out});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(QStringLiteral(" MB (more than the 1000 MB bound; --force writes it anyway)")), qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(out));
    }

    void every_command_has_help_with_an_example()
    {
        // The commands as `vtrain --help` lists them (two-space indent, name, summary), so a new one is covered too.
        const Run usage = vtrain({QStringLiteral("--help")});
        QCOMPARE(usage.exit_code, 0);
        const QString listed = usage.out.section(QStringLiteral("commands:\n"), 1).section(QStringLiteral("\n\n"), 0, 0);
        const QStringList lines = listed.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY2(lines.size() >= 9, qPrintable(usage.out));
        for (const QString& line : lines) {
            const QString cmd = line.trimmed().section(QLatin1Char(' '), 0, 0);
            const Run r = vtrain({cmd, QStringLiteral("--help")});
            QCOMPARE(r.exit_code, 0);
            QVERIFY2(r.out.contains(QStringLiteral("\nexample")), qPrintable(cmd));
        }
        const QString version = vtrain({QStringLiteral("--version")}).out;
        QVERIFY2(QRegularExpression(QStringLiteral("^vtrain \\d+\\.\\d+\\.\\d+ \\(built .+, (release|debug)\\)\n$")).match(version).hasMatch(),
                 qPrintable(version));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
