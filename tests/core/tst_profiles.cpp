// SPDX-License-Identifier: MIT
// Shipped profiles load, say where they come from, stay in sync with their specs, and interpolate sanely.
#include <QtTest>

#include <fstream>

#include "test_support.h"
#include "vtrain/interpolation.h"
#include "vtrain/modeled_profile.h"
#include "vtrain/operator_timer.h"
#include "vtrain/profile_json.h"

using namespace vtrain;

class TestProfiles : public QObject {
    Q_OBJECT
private slots:
    void shipped_profiles_load_data()
    {
        QTest::addColumn<QString>("id");
        for (const char* id : {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb"}) {
            QTest::newRow(id) << QString::fromLatin1(id);
        }
    }
    void shipped_profiles_load()
    {
        QFETCH(QString, id);
        const std::string path = std::string(VTRAIN_SOURCE_DIR) + "/profiles/" + id.toStdString() + ".json";
        const auto p = load_profile(path);
        QVERIFY2(p.ok(), p.first_error().c_str());
        QCOMPARE(QString::fromStdString(p->id), id);
        QVERIFY(p->source == "measured" || p->source == "modeled");
        if (p->source == "modeled") {
            QVERIFY(p->source_details.contains("method"));
        } else {
            QVERIFY(p->source_details.contains("gpu"));
        }
        QVERIFY(p->price_usd_per_gpu_hour > 0);
        QVERIFY(!p->price_source.empty());
    }

    void modeled_profiles_match_their_specs_data() { shipped_profiles_load_data(); }
    void modeled_profiles_match_their_specs()
    {
        QFETCH(QString, id);
        const std::string dir = std::string(VTRAIN_SOURCE_DIR) + "/profiles/";
        const auto shipped = load_profile(dir + id.toStdString() + ".json");
        QVERIFY(shipped.ok());
        if (shipped->source != "modeled") {
            QSKIP("measured profile: no spec to regenerate it from");
        }
        std::ifstream in(dir + "specs/" + id.toStdString() + ".json");
        const auto spec = nlohmann::json::parse(in);
        const auto hw = hardware_spec_from_json(spec);
        const auto params = model_parameters_from_json(spec.value("model_parameters", nlohmann::json::object()));
        QVERIFY(hw.ok() && params.ok());
        GpuProfile regenerated = make_modeled_profile(*hw, *params);
        if (spec.contains("calibration")) {
            regenerated.calibration = spec["calibration"];
        }
        // Through JSON both ways, so rounding is the same; "vtrain make-profile" rebuilds a stale profile.
        QVERIFY2(profile_to_json(regenerated) == profile_to_json(*shipped), "profile differs from its spec: run vtrain make-profile");
    }

    void loader_reads_the_measurement_tools_output()
    {
        // Produced by `profiles/measure/measure_gpu.py --dry-run` (CPU dry-run mode of the GPU profiler).
        const auto p = load_profile(std::string(VTRAIN_TEST_DATA_DIR) + "/dry_run_profile.json");
        QVERIFY2(p.ok(), p.first_error().c_str());
        QCOMPARE(QString::fromStdString(p->source), QStringLiteral("modeled")); // a dry run is no measurement
        QVERIFY(p->source_details.value("method", std::string{}).find("dry-run") != std::string::npos);
        QVERIFY(!p->gemm.empty());
        const GemmTable& g = p->gemm.begin()->second;
        QCOMPARE(g.seconds.size(), g.m.size() * g.n.size() * g.k.size());
        QVERIFY(!p->flash_attention.empty());
        for (const auto& kind : memory_bound_kinds()) {
            QVERIFY2(!p->memory_bound.at(kind).empty(), kind.c_str());
        }
        QVERIFY(!p->adam.empty());
        // The simulator can use it.
        const OperatorTimer t(*p, Precision::Bf16);
        QVERIFY(t.gemm_seconds(256, 256, 256) > 0);
        QVERIFY(t.flash_forward_seconds(4, 128, 64) > 0);
    }

    void profile_round_trips_through_json()
    {
        const GpuProfile p = test::shipped_profile("h100-sxm5-80gb");
        QVERIFY(!p.gemm.empty());
        const auto again = profile_from_json(profile_to_json(p));
        QVERIFY2(again.ok(), again.first_error().c_str());
        QVERIFY(profile_to_json(*again) == profile_to_json(p));
    }

    void loader_names_bad_fields()
    {
        nlohmann::json j = profile_to_json(test::shipped_profile("h100-sxm5-80gb"));
        j["gemm"]["bf16"]["m"] = {64, 32};
        j["source"] = "guessed";
        j["links"].erase("nvlink_bus_gbytes_per_s");
        const auto r = profile_from_json(j);
        QVERIFY(!r.ok());
        std::string all;
        for (const auto& d : r.errors()) {
            all += d.to_string() + "\n";
        }
        QVERIFY2(all.find("source: must be") != std::string::npos, all.c_str());
        QVERIFY2(all.find("gemm.bf16.m: must be strictly increasing") != std::string::npos, all.c_str());
        QVERIFY2(all.find("links.nvlink_bus_gbytes_per_s: is missing") != std::string::npos, all.c_str());
    }

    void interpolation_is_exact_on_the_grid_and_log_linear_between()
    {
        const std::vector<double> grid{1, 4, 16};
        const std::vector<double> values{1, 4, 16};
        QCOMPARE(interpolate_1d(grid, values, 4), 4.0);
        QCOMPARE(interpolate_1d(grid, values, 2), 2.0);   // halfway in log space on a power law
        QCOMPARE(interpolate_1d(grid, values, 32), 32.0); // linear in size above the grid
        QCOMPARE(interpolate_1d(grid, values, 0.5), 1.0); // latency floor below it
    }

    void gemm_time_grows_with_work_and_shows_wave_quantisation()
    {
        const GpuProfile p = test::shipped_profile("a100-sxm4-80gb");
        QVERIFY(!p.gemm.empty());
        const OperatorTimer t(p, Precision::Bf16);
        QVERIFY(t.gemm_seconds(8192, 8192, 8192) > t.gemm_seconds(4096, 8192, 8192));
        QVERIFY(t.gemm_seconds(4096, 8192, 8192) > t.gemm_seconds(4096, 4096, 8192));
        // Large GEMMs run near the efficiency ceiling, below peak.
        const double flops = 2.0 * 8192 * 8192 * 8192;
        const double achieved = flops / t.gemm_seconds(8192, 8192, 8192);
        QVERIFY(achieved < 312e12 && achieved > 200e12);

        HardwareSpec hw;
        hw.sm_count = 108;
        hw.memory_bandwidth_gbytes_per_s = 2039;
        const ModelParameters mp;
        // 108 tiles of 128x256 fill one wave; 109 need a second wave that is almost empty.
        const double full = modeled_gemm_seconds(hw, mp, 312e12, 128 * 12, 256 * 9, 8192, 2);
        const double spill = modeled_gemm_seconds(hw, mp, 312e12, 128 * 12 + 128, 256 * 9, 8192, 2);
        QVERIFY(spill > 1.05 * full);
    }
};

QTEST_APPLESS_MAIN(TestProfiles)
#include "tst_profiles.moc"
