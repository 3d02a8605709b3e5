// SPDX-License-Identifier: MIT
// Hostile input (issue 19): deep nesting, huge values, numbers beyond a double, integers beyond an int
// and absurd names get one short diagnostic with line, column and field; traces stream with bounded memory.
#include <QtTest>

#include <sstream>

#include "test_support.h"
#include "vtrain/cluster_schedule_json.h"
#include "vtrain/json_fields.h"
#include "vtrain/launch_plan_json.h"
#include "vtrain/result_json.h"
#include "vtrain/scenario_json.h"
#include "vtrain/simulator.h"

using namespace vtrain;

namespace {

const char* kScenario = R"({
  "model": {"name": "m", "layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048, "vocab": 50257},
  "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 16},
  "training": {"global_batch": 64, "tokens": 1e9},
  "plan": {"tp": 2, "pp": 2, "dp": 4, "micro_batch": 2}
})";

std::string nested(std::size_t depth)
{
    return std::string(depth, '[') + std::string(depth, ']');
}

QString first_error(const std::string& text)
{
    const auto r = scenario_from_text(text);
    return r.ok() ? QStringLiteral("<accepted>") : QString::fromStdString(r.first_error());
}

} // namespace

class TestHostileInput : public QObject {
    Q_OBJECT
private slots:
    void nesting_is_bounded_with_line_and_column()
    {
        QVERIFY(json_fields::parse_json_text(nested(json_fields::kMaxJsonDepth)).ok());
        const auto deep = json_fields::parse_json_text(nested(json_fields::kMaxJsonDepth + 1));
        QVERIFY(!deep.ok());
        QCOMPARE(QString::fromStdString(deep.first_error()), QStringLiteral("too deeply nested at line 1, column 257: JSON input may nest at most "
                                                                            "256 arrays and objects"));
        // 100,000 levels crashed every reader (SIGSEGV in a recursive dump()); now one line.
        const auto huge = json_fields::parse_json_text("{\"model\": " + nested(100'000) + "}");
        QVERIFY(!huge.ok());
        QVERIFY2(huge.first_error().find("line 1, column 266") != std::string::npos, huge.first_error().c_str());
        QVERIFY(first_error("{\n \"a\": " + std::string(5000, '[')).startsWith(QStringLiteral("too deeply nested at line 2, column")));
    }

    void number_overflow_names_line_column_and_field()
    {
        const QString e = first_error("{\n  \"model\": {\"layers\": 1e309}\n}");
        QVERIFY2(
            e.startsWith(QStringLiteral("not valid JSON at line 2, column 23: the number \"1e309\" is too large for a double (in model.layers)")),
            qPrintable(e));
        QVERIFY(!e.contains(QStringLiteral("json.exception")));
        const QString list = first_error(R"({"search": {"tp": [1, 2, -1e999]}})");
        QVERIFY2(list.contains(QStringLiteral("(in search.tp[2])")), qPrintable(list));
        const QString syntax = first_error("{\n  \"model\": {\n    \"layers\": 24,,\n");
        QVERIFY2(syntax.startsWith(QStringLiteral("not valid JSON at line 3, column 18: unexpected \",\" (in model.layers)")), qPrintable(syntax));
        QVERIFY(!syntax.contains(QStringLiteral("syntax error while parsing")));
    }

    void a_huge_value_is_quoted_as_a_short_excerpt()
    {
        nlohmann::json j = nlohmann::json::parse(kScenario);
        j["model"]["layers"] = nlohmann::json(std::vector<int>(1'000'000, 7));
        const auto r = scenario_from_json(j);
        QVERIFY(!r.ok());
        // One million items produced a 6.9 MB error line.
        QVERIFY2(r.first_error().size() < 200, r.first_error().c_str());
        QVERIFY2(r.first_error().find("model.layers: must be a whole number, not array [7, 7,") == 0, r.first_error().c_str());
        QVERIFY(r.first_error().find("(1000000 items)") != std::string::npos);
        QCOMPARE(json_fields::excerpt(nlohmann::json(std::string(10'000, 'x'))).size(), std::size_t{65});
        QCOMPARE(json_fields::excerpt(nlohmann::json::parse(R"({"a": [1, 2]})")), std::string(R"({"a": [1, 2]})"));
        // An unknown key as long as a file is cut too.
        nlohmann::json key = nlohmann::json::parse(kScenario);
        key[std::string(50'000, 'k')] = 1;
        QVERIFY(scenario_from_json(key).first_error().size() < 200);
    }

    void integers_are_range_checked_before_narrowing()
    {
        nlohmann::json j = nlohmann::json::parse(kScenario);
        j.erase("plan");
        j["search"] = {{"zero_stage", {4294967297LL}}};
        auto r = scenario_from_json(j);
        QVERIFY2(!r.ok(), "zero_stage 4294967297 read as ZeRO-1");
        QCOMPARE(QString::fromStdString(r.errors().front().field), QStringLiteral("search.zero_stage"));
        j["search"] = {{"tp", {18446744073709551615ULL}}};
        QVERIFY(!scenario_from_json(j).ok());
        j["search"] = {{"pp", {-4294967295LL}}};
        QVERIFY(!scenario_from_json(j).ok());
        QCOMPARE(json_fields::whole_number_in_range(nlohmann::json(4294967297LL), 0, 2), std::optional<int>());
        QCOMPARE(json_fields::whole_number_in_range(nlohmann::json(4.0), 0, 8), std::optional<int>(4));
        QCOMPARE(json_fields::whole_number_in_range(nlohmann::json(4.5), 0, 8), std::optional<int>());
        nlohmann::json layers = nlohmann::json::parse(kScenario);
        layers["model"]["layers"] = 4294967297LL;
        QCOMPARE(QString::fromStdString(scenario_from_json(layers).errors().front().field), QStringLiteral("model.layers"));
        const auto plan = scenario_with_plan_file(*scenario_from_text(kScenario), {{"tp", 4294967298LL}, {"pp", 2}, {"dp", 4}, {"micro_batch", 2}});
        QVERIFY(!plan.ok());
        QCOMPARE(QString::fromStdString(plan.errors().front().field), QStringLiteral("plan.tp"));
    }

    void a_model_name_is_at_most_256_characters()
    {
        nlohmann::json j = nlohmann::json::parse(kScenario);
        j["model"]["name"] = std::string(kMaxModelNameChars, 'n');
        QVERIFY(scenario_from_json(j).ok());
        j["model"]["name"] = std::string(50'000'000, 'n'); // became the GUI's window title
        const auto r = scenario_from_json(j);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.first_error()), QStringLiteral("model.name: is 50000000 characters long; at most 256 are allowed"));
    }

    void a_job_list_quotes_excerpts()
    {
        nlohmann::json list = nlohmann::json::object();
        list["jobs"] = nlohmann::json::array({nlohmann::json(std::vector<int>(100'000, 1))});
        const auto jobs = jobs_from_json(list);
        QVERIFY(!jobs.ok());
        QVERIFY2(jobs.first_error().size() < 200, jobs.first_error().c_str());
    }

    void non_finite_numbers_are_found_in_outputs()
    {
        nlohmann::json j = {{"rows", {{{"mfu", 0.5}}, {{"mfu", std::nan("")}}}}};
        QCOMPARE(json_fields::first_non_finite(j), std::optional<std::string>(".rows[1].mfu"));
        j["rows"][1]["mfu"] = 0.4;
        QCOMPARE(json_fields::first_non_finite(j), std::optional<std::string>());
        QVERIFY(json_fields::first_non_finite(nlohmann::json(HUGE_VAL)).has_value());
    }

    void the_streamed_trace_equals_the_document()
    {
        const auto scenario = scenario_from_text(kScenario);
        QVERIFY(scenario.ok());
        const auto result = simulate(*scenario, *scenario->plan, test::shipped_profile("a100-sxm4-80gb"));
        QVERIFY2(result.ok(), result.first_error().c_str());
        std::ostringstream streamed;
        write_chrome_trace(streamed, *result);
        const nlohmann::json document = timeline_to_chrome_trace(*result);
        QCOMPARE(streamed.str(), document.dump());
        QCOMPARE(chrome_trace_event_count(*result), static_cast<std::uint64_t>(document["traceEvents"].size()));
        // The size estimate is within 30% of the real size (it decides whether a trace is refused).
        const double ratio = static_cast<double>(chrome_trace_estimated_bytes(*result)) / static_cast<double>(streamed.str().size());
        QVERIFY2(ratio > 0.7 && ratio < 1.3, qPrintable(QString::number(ratio)));
    }
};

QTEST_APPLESS_MAIN(TestHostileInput)
#include "tst_hostile_input.moc"
