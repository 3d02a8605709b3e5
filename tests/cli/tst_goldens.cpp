// SPDX-License-Identifier: MIT
// Golden outputs a clone can check (issue 27): what the built `vtrain` prints for every shipped scenario
// (examples/*.json but the job lists), against the copy pinned in tests/data/golden/:
//   <example>.simulate.json   `vtrain simulate EXAMPLE --json`, for a scenario with a "plan"
//   <example>.explore.json    `vtrain explore EXAMPLE --json FILE --threads 2`, for one without (simulate
//                             needs a plan; the explorer's summary, front and top lists are its prediction)
// compared value by value: numbers to 1e-12 relative, strings, booleans, integers, nulls and the shape
// (keys, array lengths) exactly. A change that moves a prediction fails here, and the message lists each
// field that moved with its pinned and its new value. Nothing here reads ../shared.
//
// Updating the goldens is a decision, not a chore: scripts/update-goldens.sh regenerates them from the built
// CLI (it runs this test with VTRAIN_UPDATE_GOLDENS=1, which writes each file instead of comparing), and the commit that changes tests/data/golden
// must say WHY the predictions moved (which change, which examples and fields, by about how much), so that `git log -p tests/data/golden` reads as
// the history of the model's predictions. Never update them only to make this test pass.
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kRelativeTolerance = 1e-12;
constexpr std::size_t kMaxListedFields = 60;

fs::path source_dir()
{
    return fs::path(VTRAIN_SOURCE_DIR);
}

fs::path golden_dir()
{
    return source_dir() / "tests" / "data" / "golden";
}

// The shipped scenarios the goldens cover, sorted by file name.
std::vector<fs::path> shipped_examples()
{
    std::vector<fs::path> out;
    for (const auto& entry : fs::directory_iterator(source_dir() / "examples")) {
        const std::string name = entry.path().filename().string();
        if (entry.path().extension() == ".json" && name.rfind("jobs-", 0) != 0) {
            out.push_back(entry.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string read_text(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

bool has_plan(const fs::path& example)
{
    const json j = json::parse(read_text(example), nullptr, false);
    return j.is_object() && j.contains("plan");
}

// The golden file of an example: simulate's output where the scenario has a plan, else explore's.
fs::path golden_of(const fs::path& example)
{
    const std::string stem = example.stem().string();
    return golden_dir() / (stem + (has_plan(example) ? ".simulate.json" : ".explore.json"));
}

std::string short_number(double v)
{
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
}

std::string excerpt(const json& j)
{
    std::string text = j.dump();
    return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

// Every difference between `want` (pinned) and `got` (now), as "path: pinned -> now" lines.
void differences(const json& want, const json& got, const std::string& path, std::vector<std::string>& out)
{
    const std::string where = path.empty() ? std::string("(top)") : path;
    if (want.is_number() && got.is_number() && (want.is_number_float() || got.is_number_float())) {
        const double a = want.get<double>(), b = got.get<double>();
        if (a == b || std::abs(a - b) <= kRelativeTolerance * std::max(std::abs(a), std::abs(b))) {
            return;
        }
        std::string line = where + ": " + short_number(a) + " -> " + short_number(b);
        if (a != 0) {
            std::ostringstream change;
            change.precision(3);
            change << " (" << std::showpos << (b / a - 1) * 100 << " %)";
            line += change.str();
        }
        out.push_back(line);
        return;
    }
    if (want.type() != got.type()) {
        out.push_back(where + ": " + excerpt(want) + " -> " + excerpt(got) + " (the kind of value changed)");
        return;
    }
    if (want.is_object()) {
        std::set<std::string> keys;
        for (const auto& [key, value] : want.items()) {
            keys.insert(key);
        }
        for (const auto& [key, value] : got.items()) {
            keys.insert(key);
        }
        for (const std::string& key : keys) {
            const std::string inner = path.empty() ? key : path + "." + key;
            if (!got.contains(key)) {
                out.push_back(inner + ": " + excerpt(want[key]) + " -> (gone)");
            } else if (!want.contains(key)) {
                out.push_back(inner + ": (new) -> " + excerpt(got[key]));
            } else {
                differences(want[key], got[key], inner, out);
            }
        }
        return;
    }
    if (want.is_array()) {
        if (want.size() != got.size()) {
            out.push_back(where + ": " + std::to_string(want.size()) + " entries -> " + std::to_string(got.size()));
        }
        for (std::size_t i = 0; i < std::min(want.size(), got.size()); ++i) {
            differences(want[i], got[i], path + "[" + std::to_string(i) + "]", out);
        }
        return;
    }
    if (want != got) {
        out.push_back(where + ": " + excerpt(want) + " -> " + excerpt(got));
    }
}

struct Run {
    int exit_code = -1;
    QByteArray out;
    QString err;
};

Run vtrain(const QStringList& args)
{
    QProcess p;
    p.setWorkingDirectory(QStringLiteral(VTRAIN_SOURCE_DIR));
    p.start(QStringLiteral(VTRAIN_CLI), args);
    p.waitForFinished(600000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), QString::fromUtf8(p.readAllStandardError())};
}

// What the CLI prints now for `example` (the golden's form), or an error message in `why`.
json current_output(const fs::path& example, const QTemporaryDir& scratch, QString& why)
{
    const QString file = QStringLiteral("examples/") + QString::fromStdString(example.filename().string());
    Run r;
    QByteArray text;
    if (has_plan(example)) {
        r = vtrain({QStringLiteral("simulate"), file, QStringLiteral("--json")});
        text = r.out;
    } else {
        const QString summary = scratch.filePath(QStringLiteral("summary.json"));
        r = vtrain({QStringLiteral("explore"), file, QStringLiteral("--json"), summary, QStringLiteral("--threads"), QStringLiteral("2")});
        QFile f(summary);
        if (f.open(QIODevice::ReadOnly)) {
            text = f.readAll();
        }
    }
    if (r.exit_code != 0) {
        why = QStringLiteral("vtrain exited with %1: %2").arg(r.exit_code).arg(r.err);
        return json();
    }
    json j = json::parse(text.toStdString(), nullptr, false);
    if (j.is_discarded()) {
        why = QStringLiteral("vtrain did not print JSON");
    } else if (j.is_object()) {
        j.erase("elapsed_s"); // explore's wall-clock time: the one field that is not a prediction
    }
    return j;
}

bool updating()
{
    return qEnvironmentVariableIntValue("VTRAIN_UPDATE_GOLDENS") == 1;
}

} // namespace

class TestGoldens : public QObject {
    Q_OBJECT
private slots:
    void every_example_has_a_golden_and_every_golden_an_example()
    {
        if (updating()) {
            std::error_code ignored;
            for (const auto& entry : fs::directory_iterator(golden_dir(), ignored)) {
                fs::remove(entry.path()); // stale files of removed examples go; output_matches_the_golden writes the rest
            }
            return;
        }
        std::set<std::string> expected;
        for (const fs::path& example : shipped_examples()) {
            const fs::path golden = golden_of(example);
            expected.insert(golden.filename().string());
            QVERIFY2(fs::exists(golden), qPrintable(QStringLiteral("%1 has no golden %2: run scripts/update-goldens.sh (and say why in the commit)")
                                                        .arg(QString::fromStdString(example.filename().string()))
                                                        .arg(QString::fromStdString(golden.string()))));
        }
        QVERIFY(expected.size() >= 11);
        for (const auto& entry : fs::directory_iterator(golden_dir())) {
            const std::string name = entry.path().filename().string();
            QVERIFY2(expected.count(name) == 1,
                     qPrintable(QStringLiteral("tests/data/golden/%1 belongs to no shipped example: remove it").arg(QString::fromStdString(name))));
        }
    }

    void output_matches_the_golden_data()
    {
        QTest::addColumn<QString>("example");
        for (const fs::path& example : shipped_examples()) {
            const QString name = QString::fromStdString(example.filename().string());
            QTest::newRow(qPrintable(name)) << name;
        }
    }

    void output_matches_the_golden()
    {
        QFETCH(QString, example);
        const fs::path path = source_dir() / "examples" / example.toStdString();
        const fs::path golden = golden_of(path);
        if (updating()) {
            QTemporaryDir scratch;
            QString why;
            const json now = current_output(path, scratch, why);
            QVERIFY2(why.isEmpty(), qPrintable(why));
            fs::create_directories(golden_dir());
            std::ofstream(golden, std::ios::binary) << now.dump(2) << '\n';
            qInfo("wrote %s", golden.string().c_str());
            return;
        }
        if (!fs::exists(golden)) {
            QSKIP("no golden (every_example_has_a_golden_and_every_golden_an_example fails for it)");
        }
        const json want = json::parse(read_text(golden), nullptr, false);
        QVERIFY2(!want.is_discarded(), "the golden is not JSON");
        QTemporaryDir scratch;
        QVERIFY(scratch.isValid());
        QString why;
        const json got = current_output(path, scratch, why);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        std::vector<std::string> moved;
        differences(want, got, "", moved);
        if (moved.empty()) {
            return;
        }
        std::string message = std::to_string(moved.size()) + " field(s) of " + golden.filename().string() +
                              " moved (pinned -> now). If the change is meant, run scripts/update-goldens.sh and say why in the commit:";
        for (std::size_t i = 0; i < std::min(moved.size(), kMaxListedFields); ++i) {
            message += "\n  " + moved[i];
        }
        if (moved.size() > kMaxListedFields) {
            message += "\n  ... and " + std::to_string(moved.size() - kMaxListedFields) + " more";
        }
        QFAIL(message.c_str());
    }

    // The comparison itself: a moved number, a changed string and a lost key are each reported; rounding far
    // below the tolerance is not.
    void the_comparison_reports_what_moved()
    {
        const json pinned = json::parse(R"({"t": 1.0, "name": "a", "parts": [1, 2.5], "gone": true, "tiny": 3.0})");
        const json now = json::parse(R"({"t": 1.001, "name": "b", "parts": [1, 2.5, 4], "new": 1, "tiny": 3.0000000000000004})");
        std::vector<std::string> moved;
        differences(pinned, now, "", moved);
        const std::vector<std::string> expected = {"gone: true -> (gone)", "name: \"a\" -> \"b\"", "new: (new) -> 1", "parts: 2 entries -> 3",
                                                   "t: 1 -> 1.0009999999999999 (+0.1 %)"};
        QCOMPARE(moved.size(), expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(QString::fromStdString(moved[i]), QString::fromStdString(expected[i]));
        }
    }
};

QTEST_GUILESS_MAIN(TestGoldens)
#include "tst_goldens.moc"
