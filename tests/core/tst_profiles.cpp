// SPDX-License-Identifier: MIT
// Shipped profiles load, say where they come from, stay in sync with their specs, and interpolate sanely.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <set>

#include "iteration/plan_costs.h"
#include "profile/interpolation.h"
#include "profile/operator_timer.h"
#include "test_support.h"
#include "vtrain/calibration.h"
#include "vtrain/hardware_spec_json.h"
#include "vtrain/json_fields.h"
#include "vtrain/modeled_profile.h"
#include "vtrain/profile_json.h"
#include "vtrain/scenario_json.h"
#include "vtrain/simulator.h"
#include "vtrain/uncertainty.h"

using namespace vtrain;

namespace {

const std::string kProfiles = std::string(VTRAIN_SOURCE_DIR) + "/profiles/";

// Every profile the project ships; the validation data names GPUs by these ids.
const char* const kShipped[] = {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb", "h100-hbm2e-96gb", "h800-sxm5-80gb",
                                "h200-sxm-141gb", "b200-sxm-180gb", "b300",           "gb200-nvl72",     "gb300-nvl72",
                                "mi300x",         "mi325x",         "mi355x",         "h100-measured",   "v100-sxm3-32gb"};

nlohmann::json read(const std::string& path)
{
    const auto j = json_fields::read_json_file(path);
    return j.ok() ? *j : nlohmann::json{};
}

// The datasheet or spec a shipped modeled profile is built from.
std::string source_file(const std::string& id)
{
    const std::string sheet = kProfiles + "datasheets/" + id + ".json";
    return std::filesystem::exists(sheet) ? sheet : kProfiles + "specs/" + id + ".json";
}

std::string all_errors(const Diagnostics& diags)
{
    std::string all;
    for (const auto& d : diags) {
        all += d.to_string() + "\n";
    }
    return all;
}

} // namespace

class TestProfiles : public QObject {
    Q_OBJECT
private slots:
    void shipped_profiles_load_data()
    {
        QTest::addColumn<QString>("id");
        for (const char* id : kShipped) {
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
        // Dense peaks per precision and a GEMM table for each, HBM, links; every figure group cited.
        QVERIFY(p->peak_flops("bf16") > 0 || p->peak_flops("fp16") > 0);
        for (const auto& [dtype, tflops] : p->peak_tflops) {
            if (dtype == "bf16" || dtype == "fp8" || dtype == "fp4") {
                QVERIFY2(p->gemm.count(dtype) == 1, dtype.c_str());
            }
        }
        QVERIFY(p->memory_gib > p->memory_reserve_gib && p->memory_bandwidth_gbytes_per_s > 0);
        QVERIFY(p->links.nvlink_bus_gbytes_per_s > 0 && p->links.nics_per_node > 0 && p->links.nic_gbit_per_s > 0);
        QVERIFY(nvlink_domain_size(p->links) % p->links.gpus_per_node == 0);
        QVERIFY(p->source_details.contains("figures") && !p->source_details["figures"].empty());
        const bool before_hopper = id.startsWith(QStringLiteral("a100")) || id.startsWith(QStringLiteral("v100"));
        if (id.startsWith(QStringLiteral("v100"))) {
            QVERIFY(p->peak_flops("fp16") > 0 && p->peak_flops("bf16") == 0); // Volta: fp16 tensor cores, no bf16
        }
        if (!before_hopper) {
            QVERIFY(!p->vendor.empty());
            QVERIFY(p->peak_flops("fp8") > p->peak_flops("bf16")); // every part after Ampere has FP8
            // A modeled profile cites each datasheet figure group; a measured one describes its measurements instead.
            for (const char* key : {"dense_tflops", "memory", "compute_units", "node", "scale_up", "model_parameters"}) {
                QVERIFY2(p->source != "modeled" || p->source_details["figures"].contains(key), key);
            }
        }
        // An uncalibrated profile still reports a band, marked as the wide default. A calibrated band comes
        // from leave-one-source-out folds, where a part left without rows of its own predicts with its prior:
        // it may lie wholly above the prediction (the model is too fast on a new source), but stays within
        // the default's reach.
        const auto band = prediction_band(*p);
        QVERIFY(band.has_value() && band->low < band->high && band->high > 1);
        QVERIFY(band->low >= default_uncalibrated_band().low && band->high <= default_uncalibrated_band().high);
        QCOMPARE(band->calibrated, profile_provenance(*p) == "calibrated");
        // A modeled profile runs under some framework: a zero CPU time per operator or per micro-batch would
        // predict a host-bound plan as free of its host (scripts/transfer-fits.py gives the uncalibrated parts
        // their nearest calibrated stack's terms). The measured profile's kernels already include the gaps.
        if (p->source == "modeled") {
            QVERIFY2(p->host_overhead_us >= 10 && p->host_overhead_us <= 300, id.toUtf8().constData());
            QVERIFY2(p->microbatch_overhead_us >= 100, id.toUtf8().constData());
            QVERIFY2(p->links.nic_efficiency < 0.9, id.toUtf8().constData()); // NCCL inside training, not nccl-tests alone
        }
    }

    void every_profile_file_is_a_shipped_profile()
    {
        // A profile added to profiles/ without a test row, or a row without a file, fails here.
        std::set<std::string> files;
        for (const auto& entry : std::filesystem::directory_iterator(kProfiles)) {
            if (entry.path().extension() == ".json") {
                files.insert(entry.path().stem().string());
            }
        }
        const std::set<std::string> expected(std::begin(kShipped), std::end(kShipped));
        QCOMPARE(files, expected);
    }

    void datasheet_figures_reach_the_profiles()
    {
        // NVL72 racks: 72 GPUs in one NVLink domain, 4 per host; HGX: the host is the domain.
        const GpuProfile gb200 = test::shipped_profile("gb200-nvl72");
        QCOMPARE(gb200.links.gpus_per_node, 4);
        QCOMPARE(nvlink_domain_size(gb200.links), 72);
        // 900 GB/s per direction x bus efficiency: the datasheet prior (calibrate may fit the profile's own
        // value on the public GB200 runs, within 0.5-1.06x of the per-direction rate).
        QCOMPARE(prior_parameters_of(gb200).nvlink_bus_gbytes_per_s, 1800 / 2 * 0.8);
        QVERIFY(gb200.links.nvlink_bus_gbytes_per_s >= 0.5 * 900 && gb200.links.nvlink_bus_gbytes_per_s <= 1.06 * 900);
        QCOMPARE(gb200.peak_flops("fp4"), 10000e12);
        QCOMPARE(gb200.peak_flops("nvfp4"), 10000e12); // block-scaled formats read the plain format's peak
        QCOMPARE(gb200.peak_flops("mxfp8"), 5000e12);
        const GpuProfile h800 = test::shipped_profile("h800-sxm5-80gb");
        QCOMPARE(h800.links.nvlink_bus_gbytes_per_s, 160.0); // DeepSeek-V3 §3.2.2: "NVLink offers a bandwidth of 160 GB/s"
        QCOMPARE(nvlink_domain_size(h800.links), 8);
        const GpuProfile mi355x = test::shipped_profile("mi355x");
        QCOMPARE(QString::fromStdString(mi355x.vendor), QStringLiteral("AMD"));
        QCOMPARE(nvlink_domain_size(mi355x.links), 8);
        QCOMPARE(mi355x.memory_gib, 288.0);
        // FP8 and FP4 GEMMs are faster than BF16 on a large shape, by less than the peak ratio.
        const GpuProfile b300 = test::shipped_profile("b300");
        const OperatorTimer bf16(b300, Precision::Bf16);
        const GemmTable& fp8 = b300.gemm.at("fp8");
        const GemmTable& bf = b300.gemm.at("bf16");
        const std::size_t last = bf.seconds.size() - 1;
        QVERIFY(fp8.seconds[last] < bf.seconds[last] && fp8.seconds[last] > bf.seconds[last] / 2);
        QVERIFY(b300.gemm.at("fp4").seconds[last] < fp8.seconds[last]);
        QVERIFY(bf16.gemm_seconds(8192, 8192, 8192) > 0);
    }

    void modeled_profiles_match_their_specs_data() { shipped_profiles_load_data(); }
    void modeled_profiles_match_their_specs()
    {
        QFETCH(QString, id);
        const auto shipped = load_profile(kProfiles + id.toStdString() + ".json");
        QVERIFY(shipped.ok());
        if (shipped->source != "modeled") {
            QSKIP("measured profile: no spec to regenerate it from");
        }
        // Built by the code `vtrain make-profile` runs (scripts/regenerate-profiles.sh rebuilds a stale profile).
        const auto regenerated = build_profile_from_spec(read(source_file(id.toStdString())));
        QVERIFY2(regenerated.ok(), regenerated.ok() ? "" : all_errors(regenerated.errors()).c_str());
        // Through JSON both ways, so rounding is the same.
        QVERIFY2(profile_to_json(*regenerated) == profile_to_json(*shipped), "profile differs from its source: run scripts/regenerate-profiles.sh");
    }

    void datasheet_round_trips_through_make_profile()
    {
        const nlohmann::json sheet = read(kProfiles + "datasheets/b300.json");
        QVERIFY(is_datasheet(sheet));
        const auto built = build_profile_from_spec(sheet);
        QVERIFY2(built.ok(), built.ok() ? "" : all_errors(built.errors()).c_str());
        const auto loaded = profile_from_json(profile_to_json(*built));
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : all_errors(loaded.errors()).c_str());
        QVERIFY(profile_to_json(*loaded) == profile_to_json(*built));
        const GpuProfile& p = *loaded;
        // Figures as printed, and the derived ones by the documented rules.
        QCOMPARE(QString::fromStdString(p.id), QStringLiteral("b300"));
        QCOMPARE(QString::fromStdString(p.source), QStringLiteral("modeled"));
        QCOMPARE(p.memory_gib, sheet["memory_gib"].get<double>());
        QCOMPARE(p.memory_bandwidth_gbytes_per_s, sheet["memory_bandwidth_tbytes_per_s"].get<double>() * 1000);
        QCOMPARE(p.sm_count, sheet["compute_units"].get<int>());
        QCOMPARE(p.peak_tflops.at("fp4"), sheet["dense_tflops"]["fp4"].get<double>());
        QCOMPARE(p.links.gpus_per_node, sheet["node"]["gpus"].get<int>());
        QCOMPARE(p.links.nic_gbit_per_s, 800.0);
        // B300's sheet carries the NVLink bus rate transferred from the B200 fit; without it, the documented rule.
        QCOMPARE(p.links.nvlink_bus_gbytes_per_s, sheet["links"]["nvlink_bus_gbytes_per_s"].get<double>());
        nlohmann::json derived = sheet;
        derived.erase("links");
        const auto plain = build_profile_from_spec(derived);
        QVERIFY(plain.ok());
        QCOMPARE(plain->links.nvlink_bus_gbytes_per_s, sheet["scale_up"]["gbytes_per_s_bidirectional"].get<double>() / 2 * 0.8);
        QCOMPARE(p.price_usd_per_gpu_hour, sheet["price_usd_per_gpu_hour"].get<double>());
        QVERIFY(p.source_details["figures"]["datasheet"]["dense_tflops"] == sheet["dense_tflops"]);
        QVERIFY(p.gemm.count("bf16") && p.gemm.count("fp8") && p.gemm.count("fp4"));
        // Measured link figures (as vtrain calibrate --spec writes them) replace the derived ones.
        nlohmann::json fitted = sheet;
        fitted["links"] = {{"nvlink_bus_gbytes_per_s", 650.0}, {"nic_efficiency", 0.8}};
        fitted["default_band"] = {{"low", 0.8}, {"high", 1.3}, {"coverage", 0.8}, {"source", "a test"}};
        const auto refit = build_profile_from_spec(fitted);
        QVERIFY(refit.ok());
        QCOMPARE(refit->links.nvlink_bus_gbytes_per_s, 650.0);
        QCOMPARE(refit->links.nic_efficiency, 0.8);
        const auto band = prediction_band(*refit);
        QVERIFY(band && !band->calibrated && band->low == 0.8 && band->high == 1.3);
    }

    void make_profile_refuses_numbers_that_are_not_numbers()
    {
        const nlohmann::json sheet = read(kProfiles + "datasheets/b300.json");
        struct Case {
            const char* pointer;
            nlohmann::json value;
            const char* field;
        };
        const Case cases[] = {
            {"/scale_up/gbytes_per_s_bidirectional", "nan", "scale_up.gbytes_per_s_bidirectional: must be a number"},
            {"/scale_up/gbytes_per_s_bidirectional", 1e308, "scale_up.gbytes_per_s_bidirectional: must be between"},
            {"/dense_tflops/fp8", "inf", "dense_tflops.fp8: must be a number"},
            {"/dense_tflops/fp9", 10.0, "dense_tflops.fp9"},
            {"/memory_gib", -1.0, "memory_gib: must be between"},
            {"/node/nics", 4294967297LL, "node.nics: must be between"},
            {"/price_usd_per_gpu_hour", 1e308, "price_usd_per_gpu_hour: must be between"},
            {"/sources/memory", "nan", "sources.memory: must be a citation"},
            {"/model_parameters/gemm_max_efficiency_fp8", 7.0, "model_parameters.gemm_max_efficiency_fp8: must be between"},
            {"/calibration", nlohmann::json{{"band", {{"low", "nan"}, {"high", 1.2}}}}, "calibration.band.low"},
            {"/links/nvlink_bus_gbytes_per_s", "nan", "links.nvlink_bus_gbytes_per_s: must be a number"},
            {"/scale_up/domain_gpus", 12, "scale_up.domain_gpus: must be a multiple or a divisor"},
        };
        for (const Case& c : cases) {
            nlohmann::json bad = sheet;
            bad[nlohmann::json::json_pointer(c.pointer)] = c.value;
            const auto r = build_profile_from_spec(bad);
            QVERIFY2(!r.ok(), c.pointer);
            const std::string all = all_errors(r.errors());
            QVERIFY2(all.find(c.field) != std::string::npos, (std::string(c.pointer) + " -> " + all).c_str());
        }
        // The same checks hold for a spec (the derived form).
        nlohmann::json spec = read(kProfiles + "specs/a100-sxm4-80gb.json");
        spec["links"]["nvlink_bus_gbytes_per_s"] = "nan";
        const auto r = build_profile_from_spec(spec);
        QVERIFY(!r.ok());
        QVERIFY(all_errors(r.errors()).find("links.nvlink_bus_gbytes_per_s: must be a number") != std::string::npos);
    }

    void make_profile_refuses_deep_nesting_without_recursing()
    {
        // Deeper than a spec needs but within the JSON reader's own bound: make-profile's check refuses it.
        const int depth = 200;
        const std::string text = "{\"datasheet_version\": 1, \"calibration\": " + std::string(depth, '[') + std::string(depth, ']') + "}";
        const auto parsed = json_fields::parse_json_text(text);
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.first_error().c_str());
        const auto r = build_profile_from_spec(*parsed);
        QVERIFY(!r.ok());
        QVERIFY2(r.first_error().find("nests deeper than 32 levels") != std::string::npos, r.first_error().c_str());
        QVERIFY(!json_deeper_than(read(kProfiles + "datasheets/b300.json"), kMaxSpecDepth));
        // 100,000 levels built in memory (as a caller of the library could): a recursive copy or dump would
        // overflow the stack; the check walks it without recursion.
        nlohmann::json deep = nlohmann::json::array();
        for (int i = 0; i < 100000; ++i) {
            nlohmann::json outer = nlohmann::json::array();
            outer.push_back(std::move(deep));
            deep = std::move(outer);
        }
        nlohmann::json spec = read(kProfiles + "datasheets/b300.json");
        spec["default_band"] = std::move(deep);
        QVERIFY(json_deeper_than(spec, kMaxSpecDepth));
        const auto refused = build_profile_from_spec(spec);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.first_error().find("nests deeper than") != std::string::npos, refused.first_error().c_str());
    }

    void scenario_cluster_carries_the_nvlink_domain()
    {
        // A cluster may say how many GPUs share an NVLink domain; it overrides the profile's.
        const nlohmann::json j = {{"model", {{"name", "m"}, {"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"seq_len", 2048}, {"vocab", 51200}}},
                                  {"cluster", {{"gpu", "gb200-nvl72"}, {"num_gpus", 144}, {"nvlink_domain_gpus", 36}}},
                                  {"training", {{"global_batch", 144}}}};
        const auto s = scenario_from_json(j);
        QVERIFY2(s.ok(), s.ok() ? "" : all_errors(s.errors()).c_str());
        QCOMPARE(s->cluster.nvlink_domain_gpus, 36);
        QCOMPARE(scenario_to_json(*s)["cluster"]["nvlink_domain_gpus"].get<int>(), 36);
        const GpuProfile gb200 = test::shipped_profile("gb200-nvl72");
        QCOMPARE(nvlink_domain_size(resolve_cluster(s->cluster, gb200).links), 36);
        ClusterSpec plain = s->cluster;
        plain.nvlink_domain_gpus = 0;
        QCOMPARE(nvlink_domain_size(resolve_cluster(plain, gb200).links), 72);
        QCOMPARE(resolve_cluster(plain, gb200).links.gpus_per_node, 4);
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
        // An NVLink domain holds whole hosts (or a host whole domains).
        nlohmann::json odd = profile_to_json(test::shipped_profile("gb200-nvl72"));
        odd["links"]["nvlink_domain_gpus"] = 70;
        const auto o = profile_from_json(odd);
        QVERIFY(!o.ok());
        QVERIFY2(o.first_error().find("links.nvlink_domain_gpus: must be a multiple or a divisor") != std::string::npos, o.first_error().c_str());
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
