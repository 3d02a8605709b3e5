// SPDX-License-Identifier: MIT
// Every seed of the fuzz corpus (examples/, examples/import/, profiles/, tests/data/, fuzz/corpus/) and every crasher ever
// found (fuzz/crashers/) goes through every reader: none may crash or let an exception escape
// (read_input aborts on a broken contract), each refusal comes with a short diagnostic, the seeds meant
// for a reader are accepted by it, and each crasher is refused by the reader it was found for (crashers/
// any/ by every reader; a crasher named ok-* is valid input and only must not crash).
#include <QtTest>

#include <QDir>
#include <QDirIterator>
#include <QFile>

#include "readers.h"
#include "writers.h"

using namespace vtrain::fuzz;

namespace {

QString source(const char* relative)
{
    return QStringLiteral(VTRAIN_SOURCE_DIR "/") + QLatin1String(relative);
}

QStringList json_files(const QString& folder, bool recursive = false)
{
    QStringList files;
    QDirIterator it(folder, {QStringLiteral("*")}, QDir::Files, recursive ? QDirIterator::Subdirectories : QDirIterator::NoIteratorFlags);
    while (it.hasNext()) {
        files << it.next();
    }
    files.sort();
    return files;
}

std::string contents(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        qFatal("cannot read %s", qPrintable(path));
    }
    const QByteArray bytes = f.readAll();
    return std::string(bytes.constData(), static_cast<std::size_t>(bytes.size()));
}

// Which reader a seed is meant for (it must accept it); nullopt: none in particular.
std::optional<InputKind> meant_for(const QString& path)
{
    const QString name = QFileInfo(path).fileName();
    const QString folder = QFileInfo(path).dir().dirName();
    if (folder == QLatin1String("profiles") || name == QLatin1String("dry_run_profile.json")) {
        return InputKind::Profile;
    }
    if (folder == QLatin1String("examples")) {
        return name.startsWith(QLatin1String("jobs-")) ? InputKind::Jobs : InputKind::Scenario;
    }
    if (folder == QLatin1String("import")) { // examples/import: the importers' examples, by name
        if (name.endsWith(QLatin1String("-config.json"))) {
            return InputKind::HfConfig;
        }
        if (name.endsWith(QLatin1String(".toml"))) {
            return InputKind::TorchtitanToml;
        }
        return name.contains(QLatin1String("-bridge")) ? InputKind::BridgeOverrides : InputKind::MegatronArgs;
    }
    for (const InputKind kind : all_kinds()) {
        if (folder == QLatin1String(name_of(kind))) {
            return kind;
        }
    }
    return std::nullopt;
}

} // namespace

class TestFuzzReplay : public QObject {
    Q_OBJECT
private slots:
    void seeds_are_read_by_every_reader()
    {
        QStringList seeds = json_files(source("examples")) + json_files(source("examples/import")) + json_files(source("profiles")) +
                            json_files(source("tests/data")) + json_files(source("fuzz/corpus"), true);
        QVERIFY2(seeds.size() >= 12, qPrintable(QString::number(seeds.size())));
        for (const QString& path : seeds) {
            const std::string text = contents(path);
            for (const InputKind kind : all_kinds()) {
                const Outcome o = read_input(kind, text);
                QVERIFY2(o.accepted || !o.diagnostic.empty(), qPrintable(path));
                if (meant_for(path) == kind) {
                    QVERIFY2(o.accepted, qPrintable(path + QStringLiteral(": ") + QString::fromStdString(o.diagnostic)));
                }
            }
        }
    }

    // The writers' target (fuzz_writers): its corpus and crashers, and every reader seed as hostile strings.
    void writers_keep_hostile_strings_inside_their_quotes()
    {
        QStringList inputs = json_files(source("fuzz/corpus/writers")) + json_files(source("fuzz/crashers/writers")) + json_files(source("examples"));
        QVERIFY2(json_files(source("fuzz/crashers/writers")).size() >= 3, "fuzz/crashers/writers/ holds the hostile names of issue 32");
        for (const QString& path : inputs) {
            check_writers(contents(path)); // aborts on a broken contract
        }
        // The parsers the contract relies on, on known text.
        QCOMPARE(toml_basic_string_value("a\\nb\\u001B\\\"").value_or("?"), std::string("a\nb\x1b\""));
        QVERIFY(!toml_basic_string_value("a\"b"));
        QVERIFY(!toml_basic_string_value("a\nb"));
        QCOMPARE(shell_words("a 'b c' \"d\\$e\" \\\n f").value_or(std::vector<std::string>{}), (std::vector<std::string>{"a", "b c", "d$e", "f"}));
        QVERIFY(!shell_words("$(rm -rf /)"));
        QVERIFY(!shell_words("\"`id`\""));
    }

    void crashers_are_refused_with_a_diagnostic()
    {
        const QStringList crashers = json_files(source("fuzz/crashers"), true);
        QVERIFY2(crashers.size() >= 8, qPrintable(QString::number(crashers.size())));
        for (const QString& path : crashers) {
            if (QFileInfo(path).dir().dirName() == QLatin1String("writers")) {
                continue; // not reader input: writers_keep_hostile_strings_inside_their_quotes()
            }
            const std::string text = contents(path);
            const std::optional<InputKind> found_for = meant_for(path); // crashers/any/ go to every reader
            for (const InputKind kind : all_kinds()) {
                const Outcome o = read_input(kind, text);
                // "ok-" crashers are valid input that once crashed a reader.
                const bool valid = QFileInfo(path).fileName().startsWith(QLatin1String("ok-"));
                if (!valid && (!found_for || *found_for == kind)) {
                    QVERIFY2(!o.accepted, qPrintable(path + QStringLiteral(" accepted by ") + QLatin1String(name_of(kind))));
                }
                QVERIFY2(o.accepted || (!o.diagnostic.empty() && o.diagnostic.size() <= kMaxDiagnosticChars), qPrintable(path));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestFuzzReplay)
#include "tst_fuzz_replay.moc"
