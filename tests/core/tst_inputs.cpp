// SPDX-License-Identifier: MIT
// Bad input gets a diagnostic that names the field and the reason; good input round-trips.
#include <QtTest>

#include "test_support.h"
#include "vtrain/plan_check.h"
#include "vtrain/scenario_json.h"

using namespace vtrain;

namespace {

const char* kGood = R"({
  "model": {"name": "m", "layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048, "vocab": 50257},
  "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 16},
  "training": {"global_batch": 64, "tokens": 1e9},
  "plan": {"tp": 2, "pp": 2, "dp": 4, "micro_batch": 2}
})";

nlohmann::json good()
{
    return nlohmann::json::parse(kGood);
}

// The first diagnostic's field for a scenario that must be refused.
QString refused_field(const nlohmann::json& j)
{
    const auto r = scenario_from_json(j);
    return r.ok() ? QStringLiteral("<accepted>") : QString::fromStdString(r.errors().front().field);
}

} // namespace

class TestInputs : public QObject {
    Q_OBJECT
private slots:
    void good_scenario_parses_and_round_trips()
    {
        const auto s = scenario_from_json(good());
        QVERIFY2(s.ok(), s.first_error().c_str());
        QCOMPARE(s->plan->dp, 4);
        QCOMPARE(s->training.tokens, 1e9);
        const auto again = scenario_from_json(scenario_to_json(*s));
        QVERIFY(again.ok());
        QVERIFY(*again->plan == *s->plan);
        QCOMPARE(again->model.layers, 24);
    }

    // A file's name and description are its author's words: kept through a read and a write (the GUI's
    // save), not written when absent, and refused by name when they are not text.
    void name_and_description_survive_a_round_trip()
    {
        nlohmann::json j = good();
        const auto plain = scenario_from_json(j);
        QVERIFY(plain.ok());
        QVERIFY(plain->description.empty());
        QVERIFY(!scenario_to_json(*plain).contains("description"));
        QVERIFY(!scenario_to_json(*plain).contains("name"));
        j["name"] = "baseline";
        j["description"] = "Our 2,048-GPU reservation, quoted at $2.10 per GPU-hour.";
        const auto s = scenario_from_json(j);
        QVERIFY2(s.ok(), s.first_error().c_str());
        const nlohmann::json written = scenario_to_json(*s);
        QCOMPARE(written["name"].get<std::string>(), std::string("baseline"));
        QCOMPARE(written["description"].get<std::string>(), j["description"].get<std::string>());
        const auto again = scenario_from_json(written);
        QVERIFY(again.ok());
        QCOMPARE(again->description, s->description);
        QCOMPARE(again->name, s->name);
        j["description"] = 42;
        QCOMPARE(refused_field(j), QStringLiteral("description"));
        j["description"] = "ok";
        j["name"] = nlohmann::json::array();
        QCOMPARE(refused_field(j), QStringLiteral("name"));
    }

    void cp_ring_pytorch_round_trips()
    {
        auto s = scenario_from_json(good());
        QVERIFY(s.ok());
        QVERIFY(!s->training.cp_ring_pytorch); // default: Transformer Engine's ring
        Scenario sc = *s;
        sc.training.cp_ring_pytorch = true;
        const auto again = scenario_from_json(scenario_to_json(sc));
        QVERIFY2(again.ok(), again.first_error().c_str());
        QVERIFY(again->training.cp_ring_pytorch);
        sc.training.loss_bytes_per_logit = 12;
        const auto third = scenario_from_json(scenario_to_json(sc));
        QVERIFY2(third.ok(), third.first_error().c_str());
        QCOMPARE(third->training.loss_bytes_per_logit, 12.0);
        QVERIFY(!third->training.loss_parallel); // default: the output layer as Megatron's
        sc.training.loss_parallel = true;
        const auto fourth = scenario_from_json(scenario_to_json(sc));
        QVERIFY2(fourth.ok(), fourth.first_error().c_str());
        QVERIFY(fourth->training.loss_parallel);
        QVERIFY(fourth->training.pipeline_runtime == PipelineRuntime::Megatron); // default: Megatron-Core's schedules
        QVERIFY(!scenario_to_json(sc)["training"].contains("pipeline_runtime"));
        sc.training.pipeline_runtime = PipelineRuntime::PyTorch;
        QCOMPARE(scenario_to_json(sc)["training"]["pipeline_runtime"].get<std::string>(), std::string("pytorch"));
        const auto fifth = scenario_from_json(scenario_to_json(sc));
        QVERIFY2(fifth.ok(), fifth.first_error().c_str());
        QVERIFY(fifth->training.pipeline_runtime == PipelineRuntime::PyTorch);
    }

    void ssd_scan_time_factor_defaults_to_one_and_round_trips()
    {
        // Absent: 1 (the batched-GEMM tables as they are), and left out of the written file.
        const auto plain = scenario_from_json(good());
        QVERIFY2(plain.ok(), plain.first_error().c_str());
        QCOMPARE(plain->training.ssd_scan_time_factor, 1.0);
        QVERIFY(!scenario_to_json(*plain)["training"].contains("ssd_scan_time_factor"));
        nlohmann::json j = good();
        j["training"]["ssd_scan_time_factor"] = 4;
        const auto slow = scenario_from_json(j);
        QVERIFY2(slow.ok(), slow.first_error().c_str());
        QCOMPARE(slow->training.ssd_scan_time_factor, 4.0);
        const auto again = scenario_from_json(scenario_to_json(*slow));
        QVERIFY(again.ok());
        QCOMPARE(again->training.ssd_scan_time_factor, 4.0);
    }

    void malformed_json_names_line_and_column()
    {
        const auto r = scenario_from_text("{\n  \"model\": {\n    \"layers\": 24,,\n");
        QVERIFY(!r.ok());
        QVERIFY2(r.first_error().find("line 3") != std::string::npos, r.first_error().c_str());
    }

    void bad_fields_data()
    {
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("value"); // JSON text, or "<remove>"
        QTest::addColumn<QString>("field");
        QTest::newRow("missing layers") << "/model/layers"
                                        << "<remove>"
                                        << "model.layers";
        QTest::newRow("layers as string") << "/model/layers"
                                          << "\"24\""
                                          << "model.layers";
        QTest::newRow("negative layers") << "/model/layers"
                                         << "-5"
                                         << "model.layers";
        QTest::newRow("fractional heads") << "/model/heads"
                                          << "16.5"
                                          << "model.heads";
        QTest::newRow("heads not dividing hidden") << "/model/heads"
                                                   << "17"
                                                   << "model.heads";
        QTest::newRow("absurd gpu count") << "/cluster/num_gpus"
                                          << "1e12"
                                          << "cluster.num_gpus";
        QTest::newRow("missing gpu") << "/cluster/gpu"
                                     << "<remove>"
                                     << "cluster.gpu";
        QTest::newRow("empty gpu") << "/cluster/gpu"
                                   << "\"\""
                                   << "cluster.gpu";
        QTest::newRow("negative price") << "/cluster/price_per_gpu_hour"
                                        << "-1"
                                        << "cluster.price_per_gpu_hour";
        QTest::newRow("missing global batch") << "/training/global_batch"
                                              << "<remove>"
                                              << "training.global_batch";
        QTest::newRow("bad precision") << "/training/precision"
                                       << "\"fp8x\""
                                       << "training.precision";
        QTest::newRow("zero ssd scan factor") << "/training/ssd_scan_time_factor"
                                              << "0"
                                              << "training.ssd_scan_time_factor";
        QTest::newRow("ssd scan factor as text") << "/training/ssd_scan_time_factor"
                                                 << "\"4\""
                                                 << "training.ssd_scan_time_factor";
        QTest::newRow("infinite tokens") << "/training/tokens"
                                         << "1e400"
                                         << "";
        QTest::newRow("bad schedule") << "/plan/schedule"
                                      << "\"zigzag\""
                                      << "plan.schedule";
        QTest::newRow("zero stage 4") << "/plan/zero_stage"
                                      << "4"
                                      << "plan.zero_stage";
        QTest::newRow("misspelt field") << "/plan/micro_bach"
                                        << "2"
                                        << "plan.micro_bach";
        QTest::newRow("model not an object") << "/model"
                                             << "[1, 2]"
                                             << "model";
        QTest::newRow("search tp not a list") << "/search"
                                              << "{\"tp\": 4}"
                                              << "search.tp";
        QTest::newRow("loss bytes per logit negative") << "/training/loss_bytes_per_logit"
                                                       << "-1"
                                                       << "training.loss_bytes_per_logit";
        QTest::newRow("cp ring pytorch not a bool") << "/training/cp_ring_pytorch"
                                                    << "\"yes\""
                                                    << "training.cp_ring_pytorch";
        QTest::newRow("loss parallel not a bool") << "/training/loss_parallel"
                                                  << "1"
                                                  << "training.loss_parallel";
        QTest::newRow("pipeline runtime unknown") << "/training/pipeline_runtime"
                                                  << "\"deepspeed\""
                                                  << "training.pipeline_runtime";
        QTest::newRow("pipeline runtime not a string") << "/training/pipeline_runtime"
                                                       << "2"
                                                       << "training.pipeline_runtime";
    }
    void bad_fields()
    {
        QFETCH(QString, pointer);
        QFETCH(QString, value);
        QFETCH(QString, field);
        nlohmann::json j = good();
        const nlohmann::json::json_pointer ptr(pointer.toStdString());
        if (value == QStringLiteral("<remove>")) {
            j[ptr.parent_pointer()].erase(ptr.back());
        } else {
            const auto v = nlohmann::json::parse(value.toStdString(), nullptr, false);
            if (v.is_discarded()) {
                // Not representable as a JSON value (1e400): the parser itself must refuse the document.
                std::string text = j.dump();
                text.insert(text.size() - 1, ",\"x\":" + value.toStdString());
                QVERIFY(!scenario_from_text(text).ok());
                return;
            }
            j[ptr] = v;
        }
        QCOMPARE(refused_field(j), field);
    }

    void plan_rules_name_the_field_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("mb");
        QTest::addColumn<int>("reason");
        QTest::newRow("gpu count") << 2 << 2 << 2 << 2 << int(RejectReason::GpuCountMismatch); // checked against 16 below
        QTest::newRow("tp vs heads") << 32 << 1 << 1 << 2 << int(RejectReason::TpNotDividingHeads);
        QTest::newRow("pp vs layers") << 1 << 16 << 1 << 2 << int(RejectReason::PpNotDividingLayers);
        QTest::newRow("batch") << 2 << 2 << 4 << 3 << int(RejectReason::BatchNotDivisible);
    }
    void plan_rules_name_the_field()
    {
        QFETCH(int, tp);
        QFETCH(int, pp);
        QFETCH(int, dp);
        QFETCH(int, mb);
        QFETCH(int, reason);
        const auto s = scenario_from_json(good());
        QVERIFY(s.ok());
        Plan p = *s->plan;
        p.tp = tp;
        p.pp = pp;
        p.dp = dp;
        p.micro_batch = mb;
        ModelSpec m = s->model;
        m.layers = 24;
        const int gpus = reason == int(RejectReason::GpuCountMismatch) ? s->cluster.num_gpus : tp * pp * dp;
        const auto r = check_plan(m, s->training, p, gpus);
        QVERIFY(r.has_value());
        QCOMPARE(int(r->reason), reason);
        QVERIFY(r->diagnostic.field.rfind("plan", 0) == 0);
        QVERIFY(!r->diagnostic.message.empty());
    }

    void interleaving_rules()
    {
        ModelSpec m = test::gpt(24, 2048, 16);
        TrainingSpec t;
        t.global_batch = 12;
        Plan p;
        p.pp = 4;
        p.dp = 1;
        p.schedule = Schedule::Interleaved;
        p.virtual_stages = 2;
        // 12 micro-batches on 4 stages: allowed; 24 layers / (4 x 2) = 3 per chunk.
        QVERIFY(!check_plan(m, t, p, 4).has_value());
        t.global_batch = 6; // 6 % 4 != 0
        QCOMPARE(int(check_plan(m, t, p, 4)->reason), int(RejectReason::InterleavedNeedsPipeline));
        t.global_batch = 12;
        p.virtual_stages = 5; // 24 % 20 != 0
        QCOMPARE(int(check_plan(m, t, p, 4)->reason), int(RejectReason::PpNotDividingLayers));
        p.schedule = Schedule::OneFOneB;
        p.virtual_stages = 2;
        QCOMPARE(QString::fromStdString(check_plan(m, t, p, 4)->diagnostic.field), QStringLiteral("plan.virtual_stages"));
    }

    void unknown_gpu_lists_the_known_ones()
    {
        ProfileLibrary lib;
        lib.folders.emplace_back(std::string(VTRAIN_SOURCE_DIR) + "/profiles");
        const auto r = lib.load("a100-sxm9");
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.errors().front().field), QStringLiteral("cluster.gpu"));
        QVERIFY(r.first_error().find("a100-sxm4-80gb") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestInputs)
#include "tst_inputs.moc"
