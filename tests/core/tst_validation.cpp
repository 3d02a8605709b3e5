// SPDX-License-Identifier: MIT
// Validation against published runs: strict RUNS.json parsing, the mapping of rows to scenarios (with
// the defaults written into the notes), the FLOP conventions of the sources, error statistics and the
// --json shape. Rows are written here by hand; the public set is only used by tst_validation_public.
#include <QtTest>

#include <cmath>

#include "test_support.h"
#include "vtrain/validation.h"

using namespace vtrain;

namespace {

// A row with every field of the public set's format, null where a source leaves it open.
nlohmann::json base_row(const std::string& id)
{
    return {{"id", id},
            {"source_id", "test_source"},
            {"source_ref", "Table 1"},
            {"source_url", "https://example.org"},
            {"transcribed_via", "by hand"},
            {"trust", "high"},
            {"subset", "test"},
            {"model_name", "GPT test"},
            {"arch_family", "gpt_dense_mha"},
            {"num_layers", 24},
            {"hidden_size", 2048},
            {"num_attention_heads", 16},
            {"num_query_groups", nullptr},
            {"ffn_hidden_size", nullptr},
            {"seq_length", 2048},
            {"vocab_size", nullptr},
            {"params_b_reported", nullptr},
            {"gpu_type", "A100-SXM4-80GB"},
            {"gpu_memory_gb", 80},
            {"num_gpus", 16},
            {"gpus_per_node", 8},
            {"intra_node_interconnect", nullptr},
            {"inter_node_interconnect", nullptr},
            {"system_name", nullptr},
            {"tp", 2},
            {"pp", 2},
            {"dp", 4},
            {"cp", 1},
            {"ep", 1},
            {"model_parallel_size", 4},
            {"virtual_pipeline_stages", nullptr},
            {"pipeline_schedule", "1F1B"},
            {"sequence_parallel", nullptr},
            {"zero_stage", nullptr},
            {"distributed_optimizer", nullptr},
            {"fsdp", nullptr},
            {"micro_batch_size", 2},
            {"global_batch_size", 64},
            {"grad_accum_steps", nullptr},
            {"precision", nullptr},
            {"activation_recompute", "full"},
            {"software", "Megatron-LM (2022)"},
            {"iteration_time_s", 1.5},
            {"tflops_per_gpu", nullptr},
            {"tflops_kind", nullptr},
            {"pct_of_peak", nullptr},
            {"mfu_pct", nullptr},
            {"hfu_pct", nullptr},
            {"aggregate_pflops", nullptr},
            {"tokens_per_sec_per_gpu", nullptr},
            {"tokens_per_sec_total", nullptr},
            {"samples_per_sec", nullptr},
            {"peak_memory_gb_per_gpu", nullptr},
            {"observed_oom", nullptr},
            {"layer_forward_ms", nullptr},
            {"layer_backward_ms", nullptr},
            {"layer_total_ms", nullptr},
            {"training_days_reported", nullptr},
            {"primary_metric", "iteration_time_s"},
            {"flops_definition", nullptr},
            {"peak_tflops_reference", 312},
            {"derived", nlohmann::json::object()},
            {"notes", nlohmann::json::array()}};
}

RunRow parse_one(const nlohmann::json& row)
{
    const auto rows = runs_from_json(nlohmann::json::array({row}));
    if (!rows.ok()) {
        qFatal("%s", rows.first_error().c_str());
    }
    return rows->front();
}

MappedRun map_one(const nlohmann::json& row)
{
    const RowMapping m = map_run(parse_one(row));
    if (!m.run) {
        qFatal("row skipped: %s", m.skipped_reason.c_str());
    }
    return *m.run;
}

bool has_note(const MappedRun& run, const char* text)
{
    for (const auto& n : run.notes) {
        if (n.find(text) != std::string::npos) {
            return true;
        }
    }
    return false;
}

std::string first_error(const nlohmann::json& runs)
{
    const auto r = runs_from_json(runs);
    return r.ok() ? std::string{} : r.first_error();
}

} // namespace

class TestValidation : public QObject {
    Q_OBJECT
private slots:
    // --- strict parsing ----------------------------------------------------------------------------
    void parses_a_complete_row()
    {
        const RunRow r = parse_one(base_row("a"));
        QCOMPARE(r.id, std::string("a"));
        QCOMPARE(*r.tp, 2);
        QCOMPARE(*r.iteration_time_s, 1.5);
        QVERIFY(!r.vocab_size);
        QCOMPARE(*r.trust, std::string("high"));
    }

    void bad_rows_name_the_row_and_the_field_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("tp as text") << "tp" << "\"8\"" << "row \"bad\".tp";
        QTest::newRow("fractional layers") << "num_layers" << "24.5" << "row \"bad\".num_layers";
        QTest::newRow("negative time") << "iteration_time_s" << "-1" << "row \"bad\".iteration_time_s";
        QTest::newRow("sp as number") << "sequence_parallel" << "1" << "row \"bad\".sequence_parallel";
        QTest::newRow("unknown trust") << "trust" << "\"very\"" << "row \"bad\".trust";
        QTest::newRow("notes not strings") << "notes" << "[1]" << "row \"bad\".notes";
        QTest::newRow("typo field") << "micro_batch" << "2" << "row \"bad\".micro_batch";
    }
    void bad_rows_name_the_row_and_the_field()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        nlohmann::json row = base_row("bad");
        row[field.toStdString()] = nlohmann::json::parse(value.toStdString());
        const std::string error = first_error(nlohmann::json::array({base_row("good"), row}));
        QVERIFY2(error.find(expected.toStdString()) == 0, error.c_str());
    }

    void rows_without_id_are_named_by_position()
    {
        nlohmann::json row = base_row("x");
        row.erase("id");
        const std::string error = first_error(nlohmann::json::array({base_row("a"), row}));
        QVERIFY2(error.find("row 1.id") == 0, error.c_str());
    }

    void duplicate_ids_and_non_lists_are_refused()
    {
        QVERIFY(first_error(nlohmann::json::array({base_row("a"), base_row("a")})).find("row \"a\".id") == 0);
        QVERIFY(!first_error(nlohmann::json::object()).empty());
        QVERIFY(first_error(nlohmann::json::array({42})).find("row 0") == 0);
    }

    // --- mapping -------------------------------------------------------------------------------------
    void vtrain_rows_get_the_documented_facts_and_stated_defaults()
    {
        nlohmann::json row = base_row("vtrain_like");
        row["source_id"] = "vtrain_multi";
        row["gpu_type"] = "A100 (memory variant not stated)";
        row["gpu_memory_gb"] = nullptr;
        row["software"] = "Megatron-DeepSpeed";
        const MappedRun run = map_one(row);
        QCOMPARE(run.profile_id, std::string("a100-sxm4-80gb"));
        QVERIFY(has_note(run, "A100 memory variant not stated"));
        // vTrain's cluster: 4 x 200 Gb/s per node.
        QCOMPARE(*run.scenario.cluster.links.nics_per_node, 4);
        QCOMPARE(*run.scenario.cluster.links.nic_gbit_per_s, 200.0);
        // Megatron-DeepSpeed: no DP overlap, unfused attention, fp16, autograd gradient accumulation.
        QVERIFY(!run.plan.overlap_grad_reduce);
        QCOMPARE(run.scenario.training.attention, AttentionKernel::Unfused);
        QCOMPARE(run.scenario.training.precision, Precision::Fp16);
        QCOMPARE(run.scenario.training.grad_accumulation_bytes, 6.0);
        // Vocabulary: GPT-2's 50257, padded by Megatron to a multiple of 128 x tp = 256.
        QCOMPARE(run.scenario.model.vocab, 50432);
        QVERIFY(has_note(run, "vocab_size not given: 50257"));
        QCOMPARE(run.scenario.model.effective_ffn_hidden(), 4 * 2048);
        QCOMPARE(run.plan.recompute, Recompute::Full);
        QCOMPARE(run.plan.schedule, Schedule::OneFOneB);
        QCOMPARE(run.metric, ValidationMetric::IterationTime);
        QCOMPARE(run.measured, 1.5);
    }

    void selene_rows_get_eight_nics_and_megatron_2021_accumulates_separately()
    {
        nlohmann::json row = base_row("sc21_like");
        row["system_name"] = "NVIDIA Selene (DGX A100 SuperPOD)";
        row["software"] = "Megatron-LM (2021, PTD-P)";
        const MappedRun run = map_one(row);
        QCOMPARE(*run.scenario.cluster.links.nics_per_node, 8);
        QCOMPARE(run.scenario.training.grad_accumulation_bytes, 10.0);
        QVERIFY(!run.plan.overlap_grad_reduce);
    }

    void open_settings_use_stated_defaults()
    {
        nlohmann::json row = base_row("open");
        row["pipeline_schedule"] = "interleaved 1F1B";
        row["micro_batch_size"] = nullptr;
        row["pp"] = 4;
        row["dp"] = 2;
        row["global_batch_size"] = 64; // 32 micro-batches per replica, a multiple of pp
        row["activation_recompute"] = nullptr;
        row["sequence_parallel"] = nullptr;
        const MappedRun run = map_one(row);
        QCOMPARE(run.plan.micro_batch, 1);
        QVERIFY(has_note(run, "micro_batch_size not given: 1"));
        // 24 layers / 4 stages = 6 per stage: the smallest interleaving that divides it is 2.
        QCOMPARE(run.plan.schedule, Schedule::Interleaved);
        QCOMPARE(run.plan.virtual_stages, 2);
        QVERIFY(has_note(run, "virtual_pipeline_stages not given: 2"));
        QCOMPARE(run.plan.recompute, Recompute::Full);
        QVERIFY(has_note(run, "activation_recompute not given"));
        QVERIFY(!run.plan.sequence_parallel);
        QVERIFY(has_note(run, "sequence_parallel not given"));
    }

    void sequence_parallel_and_selective_recompute_are_read_from_the_text()
    {
        nlohmann::json row = base_row("sp");
        row["activation_recompute"] = "selective (attention core) + sequence parallelism";
        row["sequence_parallel"] = nullptr;
        const MappedRun run = map_one(row);
        QCOMPARE(run.plan.recompute, Recompute::Selective);
        QVERIFY(run.plan.sequence_parallel);
    }

    void unmodelable_rows_are_skipped_with_a_reason_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("reason");
        QTest::newRow("context parallel") << "cp" << "2" << "context parallelism";
        QTest::newRow("expert parallel") << "ep" << "4" << "expert parallelism";
        QTest::newRow("architecture") << "arch_family" << "\"moe\"" << "arch_family";
        QTest::newRow("no gpu") << "gpu_type" << "null" << "gpu_type not given";
        QTest::newRow("unknown gpu") << "gpu_type" << "\"TPU v4\"" << "no GPU profile";
        QTest::newRow("no batch") << "global_batch_size" << "null" << "global_batch_size not given";
        QTest::newRow("bad plan") << "num_gpus" << "12" << "plan refused";
        QTest::newRow("no measurement") << "iteration_time_s" << "null" << "no measured quantity";
    }
    void unmodelable_rows_are_skipped_with_a_reason()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, reason);
        nlohmann::json row = base_row("skip");
        row[field.toStdString()] = nlohmann::json::parse(value.toStdString());
        const RowMapping m = map_run(parse_one(row));
        QVERIFY(!m.run);
        QVERIFY2(m.skipped_reason.find(reason.toStdString()) != std::string::npos, m.skipped_reason.c_str());
    }

    void gpu_types_map_to_profiles()
    {
        bool defaulted = false;
        QCOMPARE(profile_for_gpu_type("A100-SXM4-40GB", std::nullopt, defaulted), std::string("a100-sxm4-40gb"));
        QVERIFY(!defaulted);
        QCOMPARE(profile_for_gpu_type("A100", 40.0, defaulted), std::string("a100-sxm4-40gb"));
        QCOMPARE(profile_for_gpu_type("A100 (memory variant not stated)", std::nullopt, defaulted), std::string("a100-sxm4-80gb"));
        QVERIFY(defaulted);
        QCOMPARE(profile_for_gpu_type("H100 SXM5", std::nullopt, defaulted), std::string("h100-sxm5-80gb"));
        QCOMPARE(profile_for_gpu_type("MI250X", std::nullopt, defaulted), std::string());
    }

    // --- metrics and FLOP conventions ----------------------------------------------------------------
    void iteration_time_wins_over_throughput()
    {
        nlohmann::json row = base_row("both");
        row["tflops_per_gpu"] = 150;
        row["flops_definition"] = "Megatron SC'21 Eq.(3): F = 96*B*s*l*h^2*(...)";
        QCOMPARE(map_one(row).metric, ValidationMetric::IterationTime);
        row["iteration_time_s"] = nullptr;
        const MappedRun run = map_one(row);
        QCOMPARE(run.metric, ValidationMetric::TflopsPerGpu);
        QCOMPARE(run.convention, FlopConvention::Sc21Eq3);
        QCOMPARE(run.measured, 150.0);
        row["flops_definition"] = "our own";
        const RowMapping m = map_run(parse_one(row));
        QVERIFY(!m.run);
        QVERIFY(m.skipped_reason.find("FLOP convention") != std::string::npos);
    }

    void sc21_eq3_matches_the_published_inversion()
    {
        // SC'21 Table 1, GPT 1.7B: 137 TFLOP/s per GPU on 32 GPUs, B = 512, s = 2048, l = 24, h = 2304,
        // V = 51200; the README's derived iteration time is 3.528 s.
        const double F = sc21_eq3_flops(512, 2048, 24, 2304, 51200);
        const double hand = 96.0 * 512 * 2048 * 24 * 2304.0 * 2304 * (1 + 2048.0 / (6 * 2304) + 51200.0 / (16 * 24 * 2304));
        QCOMPARE(F, hand);
        QVERIFY(std::abs(F / (137e12 * 32) - 3.528) < 0.002);
    }

    void korthikanti_conventions_reproduce_table5()
    {
        // 22B, selective recompute + SP: 1.10 s on 8 GPUs, MFU 41.5%, HFU 43.7% (peak 312).
        const double B = 4, L = 48, s = 2048, h = 6144, v = 51200;
        const double model = korthikanti_model_flops(B, L, s, h, v);
        QCOMPARE(model, 72 * B * L * s * h * h * (1 + s / (6 * h) + v / (12 * h * L)));
        // (1.10 s is rounded to three digits: about +-0.2 points of MFU.)
        QVERIFY(std::abs(100 * model / (1.10 * 8 * 312e12) - 41.5) < 0.25);
        const double hardware = korthikanti_hardware_flops(B, L, s, h, v, Recompute::Selective);
        QCOMPARE(hardware, 72 * B * L * s * h * h * (1 + s / (3 * h) + v / (12 * h * L)));
        QVERIFY(std::abs(100 * hardware / (1.10 * 8 * 312e12) - 43.7) < 0.25);
        // 530B, selective + SP: 37.83 s on 280 GPUs, MFU 56.0%.
        const double m530 = korthikanti_model_flops(280, 105, 2048, 20480, 51200);
        QVERIFY(std::abs(100 * m530 / (37.83 * 280 * 312e12) - 56.0) < 0.1);
        // Full recompute counts a whole extra forward: SC'21 Eq. 3.
        QCOMPARE(korthikanti_hardware_flops(B, L, s, h, v, Recompute::Full), sc21_eq3_flops(B, s, L, h, v));
        QCOMPARE(korthikanti_hardware_flops(B, L, s, h, v, Recompute::None), model);
    }

    void mfu_rows_use_the_rows_peak_and_layer_rows_time_one_layer()
    {
        nlohmann::json row = base_row("mfu");
        row["iteration_time_s"] = nullptr;
        row["mfu_pct"] = 45.0;
        row["flops_definition"] = "Korthikanti App.A Eq.(7) model FLOPs = 72*B*L*s*h^2*(...)";
        const MappedRun run = map_one(row);
        QCOMPARE(run.metric, ValidationMetric::MfuPct);
        QCOMPARE(run.convention, FlopConvention::KorthikantiModel);
        QCOMPARE(run.peak_tflops, 312.0);

        const GpuProfile profile = test::shipped_profile("a100-sxm4-80gb");
        std::string reason;
        const auto mfu = predict_run(run, profile, reason);
        QVERIFY2(mfu.has_value(), reason.c_str());
        MappedRun as_time = run;
        as_time.metric = ValidationMetric::IterationTime;
        const double T = *predict_run(as_time, profile, reason);
        const double expected = 100 * korthikanti_model_flops(64, 24, 2048, 2048, run.scenario.model.vocab) / (T * 16 * 312e12);
        QVERIFY(std::abs(*mfu - expected) < 1e-9 * expected);

        nlohmann::json layer = base_row("layer");
        layer["iteration_time_s"] = nullptr;
        layer["layer_total_ms"] = 20.0;
        const MappedRun layer_run = map_one(layer);
        QCOMPARE(layer_run.metric, ValidationMetric::LayerTime);
        const auto ms = predict_run(layer_run, profile, reason);
        QVERIFY(ms && *ms > 0.1 && *ms < 1000);
    }

    // --- statistics and reports ---------------------------------------------------------------------
    void error_statistics_are_signed_and_absolute()
    {
        const SubsetStats s = error_statistics({10, -20, 5, -5}, 3);
        QCOMPARE(s.used, 4);
        QCOMPARE(s.skipped, 3);
        QCOMPARE(s.mape_pct, 10.0);
        QCOMPARE(s.median_pct, 7.5);
        QCOMPARE(s.max_pct, 20.0);
        QCOMPARE(s.bias_pct, -2.5);
        const SubsetStats odd = error_statistics({-3, 1, 2});
        QCOMPARE(odd.median_pct, 2.0);
        QCOMPARE(error_statistics({}).used, 0);
    }

    void validate_reports_every_row_and_the_exact_json_shape()
    {
        nlohmann::json good = base_row("good");
        nlohmann::json skipped = base_row("skipped");
        skipped["cp"] = 2;
        nlohmann::json memory = base_row("memory");
        memory["subset"] = "other";
        memory["peak_memory_gb_per_gpu"] = 30.0;
        memory["observed_oom"] = false;
        const auto rows = runs_from_json(nlohmann::json::array({good, skipped, memory}));
        QVERIFY(rows.ok());
        std::map<std::string, GpuProfile> profiles{{"a100-sxm4-80gb", test::shipped_profile("a100-sxm4-80gb")}};
        const ValidationReport report = validate_runs(*rows, profiles);
        QCOMPARE(report.rows.size(), std::size_t{5}); // 3 rows + a peak-memory and an OOM comparison
        QCOMPARE(report.subsets.at("test").used, 1);
        QCOMPARE(report.subsets.at("test").skipped, 1);
        QCOMPARE(report.subsets.at("other:memory").used, 2);

        const nlohmann::json j = validation_to_json(report);
        QCOMPARE(j.size(), std::size_t{2});
        for (const auto& row : j["rows"]) {
            QCOMPARE(row.size(), std::size_t{7});
            for (const char* key : {"id", "subset", "metric", "measured", "predicted", "error_pct", "skipped_reason"}) {
                QVERIFY2(row.contains(key), key);
            }
        }
        const auto& first = j["rows"][0];
        QCOMPARE(first["id"].get<std::string>(), std::string("good"));
        const double predicted = first["predicted"].get<double>();
        QCOMPARE(first["error_pct"].get<double>(), (predicted - 1.5) / 1.5 * 100);
        QVERIFY(first["skipped_reason"].is_null());
        const auto& second = j["rows"][1];
        QVERIFY(second["predicted"].is_null());
        QVERIFY(second["skipped_reason"].get<std::string>().find("context parallelism") != std::string::npos);
        for (const char* key : {"used", "skipped", "mape_pct", "median_pct", "max_pct", "bias_pct"}) {
            QVERIFY2(j["subsets"]["test"].contains(key), key);
        }
        // The OOM comparison: 0 = fits, the run fitted, so the error is 0.
        bool saw_oom = false;
        for (const auto& r : report.rows) {
            if (r.metric == "observed_oom") {
                saw_oom = true;
                QCOMPARE(*r.error_pct, 0.0);
            }
        }
        QVERIFY(saw_oom);
    }

    void a_subset_filter_and_a_missing_profile_are_honoured()
    {
        const auto rows = runs_from_json(nlohmann::json::array({base_row("a"), [] {
                                                                     auto r = base_row("b");
                                                                     r["subset"] = "other";
                                                                     return r;
                                                                 }()}));
        QVERIFY(rows.ok());
        ValidationOptions options;
        options.subset = "other";
        const ValidationReport report = validate_runs(*rows, {}, options);
        QCOMPARE(report.rows.size(), std::size_t{1});
        QVERIFY(report.rows[0].skipped_reason.find("not found") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestValidation)
#include "tst_validation.moc"
