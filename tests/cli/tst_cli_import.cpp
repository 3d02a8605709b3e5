// SPDX-License-Identifier: MIT
// `vtrain import` as a user drives it (issue 31): a config.json becomes a scenario that simulate and explore
// run at once (the README's two lines), the defaults and notes are said on standard error, each format's
// plan comes back out of `vtrain launch` with the flags it went in with (megatron-bridge included), and a
// bad file gets one line naming the key with exit status 2.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
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
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
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

QJsonObject read_json(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
}

int lines(const QString& text)
{
    return static_cast<int>(text.count(QLatin1Char('\n')));
}

// The "--flag value" pairs of a printed launch command, by flag.
QMap<QString, QString> flags(const QString& command)
{
    QMap<QString, QString> out;
    QString current;
    const QStringList words =
        QString(command).replace(QStringLiteral("\\\n"), QStringLiteral(" ")).split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
    for (const QString& w : words) {
        if (w.startsWith(QStringLiteral("--"))) {
            current = w;
            out[current] = QString();
        } else if (!current.isEmpty()) {
            out[current] += (out[current].isEmpty() ? QString() : QStringLiteral(" ")) + w;
        }
    }
    return out;
}

} // namespace

class TestCliImport : public QObject {
    Q_OBJECT
private slots:
    // The README's two lines: a config.json to a front.
    void a_config_json_simulates_and_explores_at_once()
    {
        QTemporaryDir dir;
        const QString scenario = dir.filePath(QStringLiteral("l8.json"));
        const Run r = vtrain({QStringLiteral("import"), QStringLiteral("examples/import/llama3-8b-config.json"), QStringLiteral("--gpu"),
                              QStringLiteral("h100-sxm5-80gb"), QStringLiteral("--gpus"), QStringLiteral("64"), QStringLiteral("-o"), scenario});
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.out.isEmpty());
        for (const char* said : {"read examples/import/llama3-8b-config.json as a Hugging Face config.json", "assumed: training.global_batch: 512",
                                 "assumed: training.tokens: 1.61e+11", "assumed: training.precision: bf16", "assumed: plan: tp ",
                                 "ignored (no bearing on time, memory or cost): ", "rope_theta"}) {
            QVERIFY2(r.err.contains(QLatin1String(said)), qPrintable(r.err));
        }
        const QJsonObject s = read_json(scenario);
        QCOMPARE(s[QStringLiteral("model")][QStringLiteral("layers")].toInt(), 32);
        QCOMPARE(s[QStringLiteral("cluster")][QStringLiteral("num_gpus")].toInt(), 64);
        QCOMPARE(s[QStringLiteral("cluster")][QStringLiteral("gpu")].toString(), QStringLiteral("h100-sxm5-80gb"));

        const Run sim = vtrain({QStringLiteral("simulate"), scenario});
        QCOMPARE(sim.exit_code, 0);
        QVERIFY2(sim.out.contains(QStringLiteral("iteration time")) && sim.out.contains(QStringLiteral("64 x NVIDIA H100")), qPrintable(sim.out));
        const Run explore = vtrain({QStringLiteral("explore"), scenario, QStringLiteral("--threads"), QStringLiteral("2")});
        QCOMPARE(explore.exit_code, 0);
        QVERIFY2(explore.out.contains(QStringLiteral("Pareto front of (training time, cost)")), qPrintable(explore.out));
        QVERIFY(explore.out.contains(QStringLiteral("feasible")));
    }

    void an_moe_config_explores_expert_parallelism()
    {
        QTemporaryDir dir;
        const QString scenario = dir.filePath(QStringLiteral("q.json"));
        const Run r = vtrain({QStringLiteral("import"), QStringLiteral("examples/import/qwen3-30b-a3b-config.json"), QStringLiteral("--gpus"),
                              QStringLiteral("32"), QStringLiteral("-o"), scenario});
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.err.contains(QStringLiteral("assumed: search.ep: [1,2,4,8,16,32]")), qPrintable(r.err));
        QVERIFY(r.err.contains(QStringLiteral("assumed: cluster.gpu: h100-sxm5-80gb")));
        const Run sim = vtrain({QStringLiteral("simulate"), scenario, QStringLiteral("--json")});
        QCOMPARE(sim.exit_code, 0);
        QVERIFY(QJsonDocument::fromJson(sim.out.toUtf8()).object()[QStringLiteral("fits_memory")].toBool());
        const Run explore = vtrain({QStringLiteral("explore"), scenario, QStringLiteral("--threads"), QStringLiteral("2")});
        QCOMPARE(explore.exit_code, 0);
        QVERIFY2(explore.out.contains(QStringLiteral("Pareto front")), qPrintable(explore.out));
    }

    void without_output_the_scenario_goes_to_standard_output()
    {
        const Run r = vtrain(
            {QStringLiteral("import"), QStringLiteral("examples/import/mixtral-8x22b-config.json"), QStringLiteral("--gpus"), QStringLiteral("128")});
        QCOMPARE(r.exit_code, 0);
        const QJsonObject s = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(s[QStringLiteral("model")][QStringLiteral("moe")][QStringLiteral("experts")].toInt(), 8);
        QCOMPARE(s[QStringLiteral("plan")][QStringLiteral("tp")].toInt() * s[QStringLiteral("plan")][QStringLiteral("pp")].toInt() *
                     s[QStringLiteral("plan")][QStringLiteral("dp")].toInt(),
                 128);
    }

    // --- round trips through vtrain launch, one per format ------------------------------------------------

    void megatron_script_round_trips()
    {
        QTemporaryDir dir;
        const QString scenario = dir.filePath(QStringLiteral("m.json"));
        QCOMPARE(
            vtrain({QStringLiteral("import"), QStringLiteral("examples/import/llama3-8b-megatron.sh"), QStringLiteral("-o"), scenario}).exit_code, 0);
        const Run launch = vtrain({QStringLiteral("launch"), scenario});
        QCOMPARE(launch.exit_code, 0);
        const auto f = flags(launch.out);
        QCOMPARE(f.value(QStringLiteral("--tensor-model-parallel-size")), QStringLiteral("2"));
        QCOMPARE(f.value(QStringLiteral("--pipeline-model-parallel-size")), QStringLiteral("2"));
        QCOMPARE(f.value(QStringLiteral("--micro-batch-size")), QStringLiteral("1"));
        QCOMPARE(f.value(QStringLiteral("--global-batch-size")), QStringLiteral("512"));
        QCOMPARE(f.value(QStringLiteral("--recompute-granularity")), QStringLiteral("selective"));
        for (const char* on : {"--sequence-parallel", "--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather", "--bf16"}) {
            QVERIFY2(f.contains(QLatin1String(on)), on);
        }
        QVERIFY(!f.contains(QStringLiteral("--fp16")) && !f.contains(QStringLiteral("--fp8-format")));
        QVERIFY(launch.out.startsWith(QStringLiteral("CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 --nnodes 2 ")));
    }

    void torchtitan_toml_round_trips()
    {
        QTemporaryDir dir;
        const QString scenario = dir.filePath(QStringLiteral("t.json"));
        QCOMPARE(
            vtrain({QStringLiteral("import"), QStringLiteral("examples/import/llama3-8b-torchtitan.toml"), QStringLiteral("-o"), scenario}).exit_code,
            0);
        const Run launch = vtrain({QStringLiteral("launch"), scenario, QStringLiteral("--framework"), QStringLiteral("torchtitan")});
        QCOMPARE(launch.exit_code, 0);
        for (const char* line : {"data_parallel_replicate_degree = 1\n", "data_parallel_shard_degree = 32\n", "tensor_parallel_degree = 2\n",
                                 "pipeline_parallel_degree = 1\n", "fsdp_reshard_after_forward = \"always\"\n", "local_batch_size = 2\n",
                                 "global_batch_size = 256\n", "mixed_precision_param = \"bfloat16\"\n", "converters = [\"float8\"]\n",
                                 "recipe_name = \"tensorwise\"\n", "enable_fsdp_float8_all_gather = true\n", "mode = \"selective\"\n"}) {
            QVERIFY2(launch.out.contains(QLatin1String(line)), line);
        }
        // The TOML launch writes names flavor "custom": it imports back with the model from --model.
        const QString toml = write(dir, QStringLiteral("custom.toml"), launch.out.toUtf8());
        const Run refused = vtrain({QStringLiteral("import"), toml});
        QCOMPARE(refused.exit_code, 2);
        QVERIFY2(refused.err.contains(QStringLiteral(": model.flavor: ")) && refused.err.contains(QStringLiteral("--model")),
                 qPrintable(refused.err));
        const QString back = dir.filePath(QStringLiteral("back.json"));
        const Run again = vtrain({QStringLiteral("import"), toml, QStringLiteral("--model"), QStringLiteral("examples/import/llama3-8b-config.json"),
                                  QStringLiteral("-o"), back});
        QCOMPARE(again.exit_code, 0);
        QCOMPARE(read_json(back)[QStringLiteral("plan")], read_json(scenario)[QStringLiteral("plan")]);
    }

    void bridge_overrides_round_trip_through_megatron_bridge_output()
    {
        QTemporaryDir dir;
        const QString scenario = dir.filePath(QStringLiteral("b.json"));
        const Run r = vtrain({QStringLiteral("import"), QStringLiteral("examples/import/qwen3-30b-a3b-bridge.sh"), QStringLiteral("-o"), scenario});
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.err.contains(QStringLiteral("assumed: model: qwen3-30b-a3b's shape")), qPrintable(r.err));
        const Run launch = vtrain({QStringLiteral("launch"), scenario, QStringLiteral("--framework"), QStringLiteral("megatron-bridge")});
        QCOMPARE(launch.exit_code, 0);
        QVERIFY(launch.out.startsWith(QStringLiteral("torchrun --nproc-per-node 8 --nnodes 4 ")));
        for (const char* o : {"model.pipeline_model_parallel_size=2", "model.expert_model_parallel_size=8", "model.expert_tensor_parallel_size=1",
                              "train.global_batch_size=512", "train.train_iters=100000", "mixed_precision=bf16_with_fp8_current_scaling_mixed",
                              "ddp.use_distributed_optimizer=true", "\"model.recompute_modules=[core_attn,moe_act]\""}) {
            QVERIFY2(launch.out.contains(QLatin1String(o)), o);
        }
        QVERIFY(launch.err.contains(QStringLiteral("warning: still to set:")));

        // And back again: the written overrides import into the same plan.
        const QString again = write(dir, QStringLiteral("again.sh"), launch.out.toUtf8());
        const QString scenario2 = dir.filePath(QStringLiteral("b2.json"));
        const Run back = vtrain({QStringLiteral("import"), again, QStringLiteral("-o"), scenario2});
        QCOMPARE(back.exit_code, 0);
        QVERIFY2(!back.err.contains(QStringLiteral("note:")), qPrintable(back.err));
        QCOMPARE(read_json(scenario2)[QStringLiteral("plan")], read_json(scenario)[QStringLiteral("plan")]);
        QCOMPARE(read_json(scenario2)[QStringLiteral("training")], read_json(scenario)[QStringLiteral("training")]);
    }

    void an_args_file_without_a_world_size_takes_gpus()
    {
        QTemporaryDir dir;
        const QString scenario = dir.filePath(QStringLiteral("d.json"));
        const Run r = vtrain({QStringLiteral("import"), QStringLiteral("examples/import/deepseek-v3-megatron-args.txt"), QStringLiteral("--gpus"),
                              QStringLiteral("2048"), QStringLiteral("--gpu"), QStringLiteral("h800-sxm5-80gb"), QStringLiteral("-o"), scenario});
        QCOMPARE(r.exit_code, 0);
        const Run launch = vtrain({QStringLiteral("launch"), scenario});
        QCOMPARE(launch.exit_code, 0);
        const auto f = flags(launch.out);
        QCOMPARE(f.value(QStringLiteral("--expert-model-parallel-size")), QStringLiteral("64"));
        QCOMPARE(f.value(QStringLiteral("--pipeline-model-parallel-layout")), QStringLiteral("\"Et*4|(t*4|)*14t*1mL\""));
        QCOMPARE(f.value(QStringLiteral("--fp8-format")), QStringLiteral("e4m3"));
        QCOMPARE(f.value(QStringLiteral("--fp8-recipe")), QStringLiteral("blockwise"));
        QCOMPARE(f.value(QStringLiteral("--recompute-modules")), QStringLiteral("layernorm mla_up_proj moe_act"));
        QVERIFY(launch.out.contains(QStringLiteral("--nnodes 256")));
    }

    // --- bad files and options: one line, the key, exit status 2 -------------------------------------------

    void bad_files_get_one_line_naming_the_key()
    {
        QTemporaryDir dir;
        struct Case {
            const char* name;
            QByteArray text;
            const char* says;
        };
        const Case cases[] = {
            {"c.json", R"({"num_hidden_layers": 32, "hidden_size": "wide", "num_attention_heads": 32, "vocab_size": 1000})",
             ": hidden_size: must be"},
            {"c2.json", R"({"num_hidden_layers": 1e309})", "not valid JSON"},
            {"m.sh",
             "torchrun --nproc_per_node 6 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
             "--micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 3\n",
             ": --tensor-model-parallel-size: "},
            {"t.toml", "[model]\nname = \"llama3\"\nflavor = \"13B\"\n[parallelism]\ntensor_parallel_degree = 2\n", ": model.flavor: "},
            {"t2.toml", "[parallelism]\ntensor_parallel_degree = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
             ": line 2: values are nested deeper than 32 levels"},
            {"b.txt", "model.num_layers=32 model.hidden_size=4096 model.num_attention_heads=32 train.global_batch_size=lots\n",
             ": train.global_batch_size: must be a number"},
            {"x.txt", "just some notes\n", "is none of the formats vTrain imports"},
        };
        for (const Case& c : cases) {
            const QString path = write(dir, QLatin1String(c.name), c.text);
            const Run r = vtrain({QStringLiteral("import"), path});
            QVERIFY2(r.exit_code == 2, qPrintable(QLatin1String(c.name) + QStringLiteral(": ") + r.err));
            QVERIFY2(r.err.contains(QLatin1String(c.says)), qPrintable(r.err));
            QCOMPARE(lines(r.err), 1);
            QVERIFY(r.out.isEmpty());
        }
        const Run gpu = vtrain({QStringLiteral("import"), QStringLiteral("examples/import/llama3-8b-config.json"), QStringLiteral("--gpu"),
                                QStringLiteral("no-such-gpu")});
        QCOMPARE(gpu.exit_code, 2);
        QVERIFY2(gpu.err.startsWith(QStringLiteral("vtrain: --gpu: ")), qPrintable(gpu.err));
        const Run format = vtrain(
            {QStringLiteral("import"), QStringLiteral("examples/import/llama3-8b-config.json"), QStringLiteral("--format"), QStringLiteral("yaml")});
        QCOMPARE(format.exit_code, 2);
        QVERIFY(format.err.contains(QStringLiteral("--format")));
        const Run gpus = vtrain(
            {QStringLiteral("import"), QStringLiteral("examples/import/llama3-8b-config.json"), QStringLiteral("--gpus"), QStringLiteral("0")});
        QCOMPARE(gpus.exit_code, 2);
        const Run missing = vtrain({QStringLiteral("import"), dir.filePath(QStringLiteral("none.json"))});
        QCOMPARE(missing.exit_code, 2);
        QVERIFY(missing.err.contains(QStringLiteral("cannot be opened")));
        QCOMPARE(lines(missing.err), 1);
    }

    void unknown_keys_are_named_on_standard_error()
    {
        QTemporaryDir dir;
        const QString path =
            write(dir, QStringLiteral("c.json"),
                  R"({"num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8, "vocab_size": 32000, "intermediate_size": 1024,
                                       "hidden_act": "silu", "model_type": "llama", "my_custom_gate": true})");
        const Run r = vtrain({QStringLiteral("import"), path});
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.err.contains(QStringLiteral("note: my_custom_gate: is not a key vTrain knows: not read")), qPrintable(r.err));
    }

    void launch_refuses_an_unknown_framework_naming_megatron_bridge()
    {
        const Run r =
            vtrain({QStringLiteral("launch"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--framework"), QStringLiteral("nemo")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("\"megatron-bridge\"")), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCliImport)
#include "tst_cli_import.moc"
