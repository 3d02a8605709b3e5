// SPDX-License-Identifier: MIT
// The vtrain command line under hostile input, round 2 (issue 32): nested brackets inside strings and
// unbounded text, runaway batch sizes and inputs, Ctrl-C on huge searches, safe writes (exclusive .part
// files, never over an input or a device, the OS's reason), user text escaped in generated files and
// rendered visibly in messages, and the minor fixes (ids, --threads, --profile, make-profile -o -, empty
// runs). Each test drives the real binary; nothing needs ../shared.
#include <QtTest>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <csignal>

namespace {

struct Run {
    int exit_code = -1;
    QString out;
    QString err;
    double seconds = 0;
};

Run vtrain(const QStringList& args, const QString& stdout_file = {})
{
    QProcess p;
    p.setWorkingDirectory(QStringLiteral(VTRAIN_SOURCE_DIR));
    if (!stdout_file.isEmpty()) {
        p.setStandardOutputFile(stdout_file);
    }
    QElapsedTimer timer;
    timer.start();
    p.start(QStringLiteral(VTRAIN_CLI), args);
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError()), static_cast<double>(timer.elapsed()) / 1000.0};
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

QByteArray read(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

QJsonObject example(const char* name)
{
    return QJsonDocument::fromJson(read(QStringLiteral(VTRAIN_SOURCE_DIR "/examples/") + QLatin1String(name))).object();
}

QByteArray json(const QJsonObject& o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

// The first row of the fuzz corpus's runs file (a public row), with changes.
QByteArray runs_file(const QJsonObject& changes)
{
    QJsonObject row =
        QJsonDocument::fromJson(read(QStringLiteral(VTRAIN_SOURCE_DIR "/fuzz/corpus/runs/public-rows.json"))).array().first().toObject();
    for (auto it = changes.begin(); it != changes.end(); ++it) {
        row[it.key()] = it.value();
    }
    return QJsonDocument(QJsonArray{row}).toJson(QJsonDocument::Compact);
}

bool one_line(const QString& err)
{
    return err.count(QLatin1Char('\n')) == 1 && err.endsWith(QLatin1Char('\n'));
}

} // namespace

class TestCliHostile : public QObject {
    Q_OBJECT
private slots:
    // Item 1: 30,000 nested '(' in plan.pipeline_layout killed simulate, explore, timeline, launch and
    // launch --plan with SIGSEGV; a 50,000-character recompute list killed validate and calibrate.
    void nesting_inside_strings_never_crashes_a_command()
    {
        QTemporaryDir dir;
        QJsonObject s = example("gpt-1.3b.json");
        QJsonObject plan = s[QStringLiteral("plan")].toObject();
        plan[QStringLiteral("pipeline_layout")] = QString(30'000, QLatin1Char('(')) + QStringLiteral("Et*24L") + QString(30'000, QLatin1Char(')'));
        s[QStringLiteral("plan")] = plan;
        const QString deep = write(dir, QStringLiteral("deep.json"), json(s));
        const QString plan_file = write(dir, QStringLiteral("plan.json"), json(plan));
        const QString out = dir.filePath(QStringLiteral("out"));
        const QList<QStringList> commands{{QStringLiteral("simulate"), deep},
                                          {QStringLiteral("explore"), deep},
                                          {QStringLiteral("timeline"), deep, QStringLiteral("-o"), out},
                                          {QStringLiteral("launch"), deep},
                                          {QStringLiteral("launch"), deep, QStringLiteral("--framework"), QStringLiteral("torchtitan")},
                                          {QStringLiteral("launch"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--plan"), plan_file}};
        for (const QStringList& args : commands) {
            const Run r = vtrain(args);
            QVERIFY2(r.exit_code == 2, qPrintable(args.join(QLatin1Char(' ')).left(80) + QStringLiteral(": ") + r.err));
            QVERIFY2(r.err.contains(QStringLiteral("nests parentheses more than 32 deep")) && one_line(r.err), qPrintable(r.err));
        }
        const QString runs = write(dir, QStringLiteral("runs.json"),
                                   runs_file({{QStringLiteral("activation_recompute"),
                                               QStringLiteral("selective: core_attn (") + QString(50'000, QLatin1Char('x')) + QStringLiteral(")")}}));
        const Run validate = vtrain({QStringLiteral("validate"), runs});
        QVERIFY2(validate.exit_code == 0, qPrintable(validate.err));
        const Run calibrate = vtrain({QStringLiteral("calibrate"), runs, QStringLiteral("--gpu"), QStringLiteral("a100-sxm4-80gb"),
                                      QStringLiteral("-o"), dir.filePath(QStringLiteral("cal.json")), QStringLiteral("--max-evals"),
                                      QStringLiteral("2"), QStringLiteral("--folds"), QStringLiteral("0")});
        QVERIFY2(calibrate.exit_code == 0 || calibrate.exit_code == 2, qPrintable(calibrate.err)); // not a crash
    }

    // Item 2: a billion micro-batches took gigabytes; now refused, or computed in closed form.
    void runaway_batch_sizes_are_refused_or_simulated_in_closed_form()
    {
        QTemporaryDir dir;
        QJsonObject s = example("gpt-1.3b.json");
        QJsonObject training = s[QStringLiteral("training")].toObject();
        QJsonObject plan = s[QStringLiteral("plan")].toObject();
        training[QStringLiteral("global_batch")] = 1'000'000'000;
        plan[QStringLiteral("micro_batch")] = 1;
        s[QStringLiteral("training")] = training;
        s[QStringLiteral("plan")] = plan;
        const QString billion = write(dir, QStringLiteral("billion.json"), json(s));
        const Run r = vtrain({QStringLiteral("simulate"), billion});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.startsWith(QStringLiteral("vtrain: ")) &&
                     r.err.contains(QStringLiteral("training.global_batch: global batch 1000000000 is")) && one_line(r.err),
                 qPrintable(r.err));
        QVERIFY2(r.seconds < 10, qPrintable(QString::number(r.seconds)));
        // 131,072 micro-batches on one stage: above the task graph's bound, simulated in closed form.
        training[QStringLiteral("global_batch")] = 131072 * 8;
        s[QStringLiteral("training")] = training;
        const QString long_one = write(dir, QStringLiteral("long.json"), json(s));
        const Run closed = vtrain({QStringLiteral("simulate"), long_one, QStringLiteral("--json")});
        QVERIFY2(closed.exit_code == 0, qPrintable(closed.err));
        QCOMPARE(QJsonDocument::fromJson(closed.out.toUtf8()).object()[QStringLiteral("task_count")].toInt(-1), 0);
        const Run timeline =
            vtrain({QStringLiteral("timeline"), long_one, QStringLiteral("-o"), dir.filePath(QStringLiteral("t.json")), QStringLiteral("--force")});
        QCOMPARE(timeline.exit_code, 2);
        QVERIFY2(timeline.err.contains(QStringLiteral("the timeline would hold 131072 forward passes")), qPrintable(timeline.err));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("t.json"))));
        // The explorer rejects such plans with the reason.
        const Run explore = vtrain({QStringLiteral("explore"), billion, QStringLiteral("--threads"), QStringLiteral("2")});
        QVERIFY2(explore.exit_code == 0, qPrintable(explore.err));
        QVERIFY2(explore.out.contains(QStringLiteral("too many micro-batches to simulate")), qPrintable(explore.out));
    }

    // Item 2: /dev/zero as any input was read to 4.2 GB.
    void endless_inputs_are_refused_before_they_are_read()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("out.json"));
        const QList<QStringList> commands{
            {QStringLiteral("simulate"), QStringLiteral("/dev/zero")},
            {QStringLiteral("simulate"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--profile"), QStringLiteral("/dev/zero")},
            {QStringLiteral("explore"), QStringLiteral("/dev/zero")},
            {QStringLiteral("validate"), QStringLiteral("/dev/zero")},
            {QStringLiteral("calibrate"), QStringLiteral("/dev/zero"), QStringLiteral("--gpu"), QStringLiteral("a100-sxm4-80gb"),
             QStringLiteral("-o"), out},
            {QStringLiteral("schedule"), QStringLiteral("--gpu"), QStringLiteral("a100-sxm4-80gb"), QStringLiteral("--gpus"), QStringLiteral("64"),
             QStringLiteral("--jobs-file"), QStringLiteral("/dev/zero")},
            {QStringLiteral("make-profile"), QStringLiteral("--from-datasheet"), QStringLiteral("/dev/zero"), QStringLiteral("-o"), out},
            {QStringLiteral("launch"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--plan"), QStringLiteral("/dev/zero")}};
        for (const QStringList& args : commands) {
            const Run r = vtrain(args);
            QVERIFY2(r.exit_code == 2 && r.err.contains(QStringLiteral("/dev/zero: holds more than the 32 MiB an input file may hold")),
                     qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") + r.err));
            QVERIFY2(r.seconds < 10, qPrintable(QString::number(r.seconds)));
        }
    }

    // Item 3: Ctrl-C stops a sweep of ~3.6 x 10^10 plans at once, with what was evaluated (exit status 130).
    void ctrl_c_stops_a_huge_sweep_within_half_a_second()
    {
        QTemporaryDir dir;
        QJsonObject s = example("gpt-1.3b.json");
        QJsonArray values;
        for (int v = 1; v <= 1000; ++v) {
            values.append(v);
        }
        // tp x pp x micro-batch: 10^9 groups whose plans are mostly evaluated (minutes), unlike virtual stages,
        // which the sweep rejects in bulk (that search ended by itself in 1.2-2.1 s, racing the 1.5 s wait below).
        s[QStringLiteral("search")] =
            QJsonObject{{QStringLiteral("tp"), values}, {QStringLiteral("pp"), values}, {QStringLiteral("micro_batch"), values}};
        const QString huge = write(dir, QStringLiteral("huge.json"), json(s));
        QProcess p;
        p.setWorkingDirectory(QStringLiteral(VTRAIN_SOURCE_DIR));
        p.start(QStringLiteral(VTRAIN_CLI), {QStringLiteral("explore"), huge, QStringLiteral("--threads"), QStringLiteral("2")});
        QVERIFY(p.waitForStarted());
        QTest::qWait(1500);
        QCOMPARE(p.state(), QProcess::Running);
        QElapsedTimer timer;
        timer.start();
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(10000));
        const double seconds = static_cast<double>(timer.elapsed()) / 1000.0;
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QCOMPARE(p.exitCode(), 130);
        QVERIFY2(out.contains(QStringLiteral("CANCELLED")), qPrintable(out.left(400)));
        QVERIFY2(seconds < 0.5, qPrintable(QString("ended %1 s after Ctrl-C").arg(seconds)));
        qInfo("ended %.3f s after Ctrl-C", seconds);
        // A search too large to enumerate is refused up front with its size.
        s[QStringLiteral("search")] = QJsonObject{{QStringLiteral("tp"), values},
                                                  {QStringLiteral("pp"), values},
                                                  {QStringLiteral("micro_batch"), values},
                                                  {QStringLiteral("num_gpus"), QJsonArray{8, 16, 32, 64, 128}}};
        const Run big = vtrain({QStringLiteral("explore"), write(dir, QStringLiteral("big.json"), json(s))});
        QCOMPARE(big.exit_code, 2);
        QVERIFY2(big.err.contains(QStringLiteral("search: the lists describe 5000000000 plan groups")) && one_line(big.err), qPrintable(big.err));
    }

    // Item 4: a planted FILE.part (a symbolic link) is never followed; an output never replaces an input,
    // a directory or a device; a full disk says so.
    void outputs_are_written_safely()
    {
        QTemporaryDir dir;
        const QString victim = write(dir, QStringLiteral("victim.txt"), "keep me\n");
        const QString spec = write(dir, QStringLiteral("spec.json"), read(QStringLiteral(VTRAIN_SOURCE_DIR "/profiles/specs/a100-sxm4-80gb.json")));
        const QString scenario = write(dir, QStringLiteral("s.json"), read(QStringLiteral(VTRAIN_SOURCE_DIR "/examples/gpt-1.3b.json")));
        const QString runs = write(dir, QStringLiteral("runs.json"), runs_file({}));
        // Each writer with its input second and the output option last.
        const QList<QStringList> writers{
            {QStringLiteral("launch"), scenario, QStringLiteral("-o")},
            {QStringLiteral("launch"), scenario, QStringLiteral("--framework"), QStringLiteral("torchtitan"), QStringLiteral("-o")},
            {QStringLiteral("timeline"), scenario, QStringLiteral("-o")},
            {QStringLiteral("make-profile"), spec, QStringLiteral("-o")},
            {QStringLiteral("explore"), scenario, QStringLiteral("--json")},
            {QStringLiteral("explore"), scenario, QStringLiteral("--csv")},
            {QStringLiteral("validate"), runs, QStringLiteral("--svg")}};
        int n = 0;
        for (const QStringList& args : writers) {
            const QString what = args.join(QLatin1Char(' '));
            // A symbolic link planted at FILE.part: written beside it, the link's target untouched.
            const QString output = dir.filePath(QStringLiteral("out%1").arg(++n));
            QVERIFY(QFile::link(victim, output + QStringLiteral(".part")));
            const Run ok = vtrain(args + QStringList{output});
            QVERIFY2(ok.exit_code == 0, qPrintable(what + QStringLiteral(": ") + ok.err));
            QCOMPARE(read(victim), QByteArray("keep me\n"));
            QVERIFY2(QFileInfo(output).isFile() && !QFileInfo(output).isSymLink() && QFileInfo(output).size() > 0, qPrintable(what));
            QVERIFY(QFileInfo(output + QStringLiteral(".part")).isSymLink()); // left as it was
            // The command's own input is never an output.
            const QString input = args[1];
            const QByteArray before = read(input);
            const Run same = vtrain(args + QStringList{input});
            QVERIFY2(same.exit_code == 1 && same.err.contains(QStringLiteral("it is an input of this command")) && one_line(same.err),
                     qPrintable(what + QStringLiteral(": ") + same.err));
            QCOMPARE(read(input), before);
            // Neither is a device node or a folder.
            const Run device = vtrain(args + QStringList{QStringLiteral("/dev/null")});
            QVERIFY2(device.exit_code == 1 && device.err.contains(QStringLiteral("it is a character device, not a regular file")),
                     qPrintable(what + QStringLiteral(": ") + device.err));
            const Run folder = vtrain(args + QStringList{dir.path()});
            QVERIFY2(folder.exit_code == 1 && folder.err.contains(QStringLiteral("it is a directory")),
                     qPrintable(what + QStringLiteral(": ") + folder.err));
        }
        QVERIFY(QFileInfo(QStringLiteral("/dev/null")).exists() && !QFileInfo(QStringLiteral("/dev/null")).isFile());
        const Run calibrate =
            vtrain({QStringLiteral("calibrate"), runs, QStringLiteral("--gpu"), QStringLiteral("a100-sxm4-80gb"), QStringLiteral("-o"), runs});
        QVERIFY2(calibrate.exit_code == 1 && calibrate.err.contains(QStringLiteral("it is an input of this command")), qPrintable(calibrate.err));
        // A full disk gives the OS's reason, for every writer to standard output.
        const QList<QStringList> to_stdout{{QStringLiteral("explore"), scenario},
                                           {QStringLiteral("launch"), scenario},
                                           {QStringLiteral("timeline"), scenario, QStringLiteral("-o"), QStringLiteral("-")},
                                           {QStringLiteral("make-profile"), spec, QStringLiteral("-o"), QStringLiteral("-")}};
        for (const QStringList& args : to_stdout) {
            const Run full = vtrain(args, QStringLiteral("/dev/full"));
            QVERIFY2(full.exit_code == 1 && full.err.contains(QStringLiteral("No space left on device")) &&
                         !full.err.contains(QStringLiteral("unknown")),
                     qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") + full.err));
        }
        // make-profile -o - writes the profile to standard output, not to a file named "-".
        const Run to_stdout_profile = vtrain({QStringLiteral("make-profile"), spec, QStringLiteral("-o"), QStringLiteral("-")});
        QCOMPARE(to_stdout_profile.exit_code, 0);
        QVERIFY(QJsonDocument::fromJson(to_stdout_profile.out.toUtf8()).object().contains(QStringLiteral("gemm")));
        QVERIFY(!QFileInfo::exists(QStringLiteral(VTRAIN_SOURCE_DIR "/-")));
        QVERIFY(QDir(dir.path()).entryList({QStringLiteral("*.part")}, QDir::Files | QDir::System).size() == n); // only the planted links
    }

    // Item 5: a newline in model.name added [job] and [checkpoint] tables to the torchtitan TOML; control
    // characters reached the terminal through error messages.
    void user_text_stays_inside_its_quotes()
    {
        QTemporaryDir dir;
        QJsonObject s = example("llama3-8b-h100-fsdp.json");
        QJsonObject model = s[QStringLiteral("model")].toObject();
        model[QStringLiteral("name")] = QStringLiteral("Llama\n[job]\ndump_folder = \"/etc/cron.d\"\n[checkpoint]\nenable = true\n\x1b]0;owned\x07");
        s[QStringLiteral("model")] = model;
        const Run toml = vtrain(
            {QStringLiteral("launch"), write(dir, QStringLiteral("s.json"), json(s)), QStringLiteral("--framework"), QStringLiteral("torchtitan")});
        QVERIFY2(toml.exit_code == 0, qPrintable(toml.err));
        for (const QString& line : toml.out.split(QLatin1Char('\n'))) {
            QVERIFY2(line != QStringLiteral("[job]") && line != QStringLiteral("[checkpoint]") && !line.startsWith(QStringLiteral("dump_folder")),
                     qPrintable(toml.out));
            QVERIFY(!line.contains(QChar(0x1b)) && !line.contains(QChar(0x07)));
        }
        QVERIFY(toml.out.startsWith(QStringLiteral("# torchtitan job config written by vtrain launch for Llama\\n[job]\\n")));
        // The same name in the text report and an error message: one line, the escape shown, not obeyed.
        model[QStringLiteral("activation")] = QStringLiteral("\x1b]0;owned\x07\nsecond line");
        s[QStringLiteral("model")] = model;
        const Run bad = vtrain({QStringLiteral("simulate"), write(dir, QStringLiteral("bad.json"), json(s))});
        QCOMPARE(bad.exit_code, 2);
        QVERIFY2(one_line(bad.err) && !bad.err.contains(QChar(0x1b)) && bad.err.contains(QStringLiteral("\\x1b]0;owned\\x07\\nsecond line")),
                 qPrintable(bad.err));
        const Run unknown = vtrain({QStringLiteral("\x1b[2Jcommand")});
        QVERIFY(!unknown.err.contains(QChar(0x1b)));
    }

    // Item 6.
    void ids_options_and_empty_runs_are_checked()
    {
        QTemporaryDir dir;
        // cluster.gpu is an id, never a path.
        QJsonObject s = example("gpt-1.3b.json");
        QJsonObject cluster = s[QStringLiteral("cluster")].toObject();
        cluster[QStringLiteral("gpu")] = QStringLiteral(VTRAIN_SOURCE_DIR "/profiles/a100-sxm4-80gb");
        s[QStringLiteral("cluster")] = cluster;
        const Run path = vtrain({QStringLiteral("simulate"), write(dir, QStringLiteral("path.json"), json(s))});
        QVERIFY2(path.exit_code == 2 && path.err.contains(QStringLiteral("cluster.gpu: ")) &&
                     path.err.contains(QStringLiteral("is not a GPU profile id")),
                 qPrintable(path.err));
        // --threads is 1..1024 everywhere, as the README says.
        const QString runs = write(dir, QStringLiteral("runs.json"), runs_file({}));
        const QStringList calibrate_args{QStringLiteral("--gpu"), QStringLiteral("a100-sxm4-80gb"), QStringLiteral("-o"),
                                         dir.filePath(QStringLiteral("o.json"))};
        for (const QStringList& args :
             {QStringList{QStringLiteral("validate"), runs}, QStringList{QStringLiteral("calibrate"), runs} + calibrate_args}) {
            const Run r = vtrain(args + QStringList{QStringLiteral("--threads"), QStringLiteral("4096")});
            QVERIFY2(r.exit_code == 2 && r.err.contains(QStringLiteral("--threads: \"4096\" is not a whole number from 1 to 1024")),
                     qPrintable(r.err));
        }
        // validate's refit options: each is range-checked and needs --cv.
        const Run starts = vtrain(
            {QStringLiteral("validate"), runs, QStringLiteral("--cv"), QStringLiteral("source"), QStringLiteral("--cv-starts"), QStringLiteral("0")});
        QVERIFY2(starts.exit_code == 2 && starts.err.contains(QStringLiteral("--cv-starts: \"0\" is not a whole number from 1 to 64")),
                 qPrintable(starts.err));
        const Run lone = vtrain({QStringLiteral("validate"), runs, QStringLiteral("--cv-starts"), QStringLiteral("2")});
        QVERIFY2(lone.exit_code == 2 && lone.err.contains(QStringLiteral("--cv-starts needs --cv")), qPrintable(lone.err));
        // launch --profile FILE is read, even where the scenario gives the node size.
        const Run profile = vtrain(
            {QStringLiteral("launch"), QStringLiteral("examples/gpt-1.3b.json"), QStringLiteral("--profile"), QStringLiteral("/nonexistent.json")});
        QVERIFY2(profile.exit_code == 2 && profile.err.contains(QStringLiteral("/nonexistent.json")), qPrintable(profile.err));
        // An empty runs list is bad input for both, in one line that starts with the message.
        const QString empty = write(dir, QStringLiteral("empty.json"), "[]");
        const Run validate = vtrain({QStringLiteral("validate"), empty});
        QVERIFY2(validate.exit_code == 2 && validate.err.contains(QStringLiteral("holds no rows")), qPrintable(validate.err));
        const Run calibrate = vtrain({QStringLiteral("calibrate"), empty, QStringLiteral("--gpu"), QStringLiteral("a100-sxm4-80gb"),
                                      QStringLiteral("-o"), dir.filePath(QStringLiteral("o.json"))});
        QVERIFY2(calibrate.exit_code == 2 && calibrate.err.startsWith(QStringLiteral("vtrain: ")) && one_line(calibrate.err),
                 qPrintable(calibrate.err));
    }
};

QTEST_GUILESS_MAIN(TestCliHostile)
#include "tst_cli_hostile.moc"
