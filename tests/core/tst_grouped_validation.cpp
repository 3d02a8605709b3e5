// SPDX-License-Identifier: MIT
// Grouped validation (issue 28): the group of a row under each grouping, which (group, fit) pairs are
// refitted, that a held-out row is predicted by exactly the fit that did not see its group, that a profile
// with too few rows left keeps its prior, and that a row no fit used keeps the shipped profile's prediction.
// Synthetic rows only (no ../shared).
#include <QtTest>

#include <cmath>

#include "test_support.h"
#include "vtrain/calibration.h"
#include "vtrain/grouped_validation.h"

using namespace vtrain;

namespace {

HardwareSpec a100_like()
{
    HardwareSpec hw;
    hw.id = "a100-sxm4-80gb"; // what rows with gpu_type "A100-SXM4-80GB" map to
    hw.name = "Synthetic A100";
    hw.memory_gib = 80;
    hw.memory_reserve_gib = 3;
    hw.memory_bandwidth_gbytes_per_s = 2039;
    hw.peak_tflops = {{"bf16", 312}, {"fp16", 312}};
    hw.sm_count = 108;
    hw.links.gpus_per_node = 8;
    hw.links.nvlink_bus_gbytes_per_s = 230;
    hw.links.nvlink_base_latency_us = 30;
    hw.links.nvlink_step_latency_us = 3.5;
    hw.links.nics_per_node = 8;
    hw.links.nic_gbit_per_s = 200;
    hw.links.nic_efficiency = 0.9;
    return hw;
}

ParameterSet with_gemm_efficiency(double e)
{
    ParameterSet p;
    p.model.gemm_max_efficiency = e;
    return p;
}

// Eight GPU-bound rows of `source` (subset = source) whose measured time is the model's with `truth`.
std::vector<RunRow> rows_of(const std::string& source, const ParameterSet& truth, std::size_t first_index)
{
    const GpuProfile profile = build_profile(a100_like(), truth);
    const int hidden[] = {2048, 3072, 4096, 5120, 6144, 4096, 8192, 2560};
    nlohmann::json rows = nlohmann::json::array();
    for (int i = 0; i < 8; ++i) {
        rows.push_back({{"id", source + "_" + std::to_string(i)},
                        {"subset", source},
                        {"source_id", source},
                        {"primary_metric", "iteration_time_s"},
                        {"arch_family", "gpt_dense_mha"},
                        {"num_layers", 16},
                        {"hidden_size", hidden[i]},
                        {"num_attention_heads", hidden[i] / 128},
                        {"seq_length", 2048},
                        {"vocab_size", 51200},
                        {"gpu_type", "A100-SXM4-80GB"},
                        {"num_gpus", 8},
                        {"gpus_per_node", 8},
                        {"tp", 2},
                        {"pp", 1},
                        {"dp", 4},
                        {"micro_batch_size", 4},
                        {"global_batch_size", 64},
                        {"activation_recompute", "none"},
                        {"sequence_parallel", false},
                        {"precision", "bf16"},
                        {"software", "Megatron-LM (2022)"},
                        {"iteration_time_s", 1.0},
                        {"trust", "high"}});
    }
    auto parsed = runs_from_json(rows);
    if (!parsed.ok()) {
        qFatal("%s", parsed.first_error().c_str());
    }
    for (RunRow& r : parsed.value()) {
        const RowMapping m = map_run(r);
        if (!m.run) {
            qFatal("%s", m.skipped_reason.c_str());
        }
        std::string reason;
        r.iteration_time_s = *predict_run(*m.run, profile, reason);
        r.index += first_index;
    }
    return std::move(parsed).value();
}

CalibrationOptions gemm_fit()
{
    CalibrationOptions o;
    o.gpu = "a100-sxm4-80gb";
    o.parameters = {"gemm_max_efficiency"};
    o.folds = 0;
    o.max_evaluations = 80;
    o.threads = 2;
    return o;
}

// A profile calibrated on `rows` (its calibration block records the fit, as a shipped profile's does).
GpuProfile calibrated_on(const std::vector<RunRow>& rows)
{
    const auto fit = calibrate(rows, build_profile(a100_like(), ParameterSet{}), gemm_fit());
    if (!fit.ok()) {
        qFatal("%s", fit.first_error().c_str());
    }
    GpuProfile p = build_profile(a100_like(), fit->fitted);
    p.calibration = fit->calibration_block;
    return p;
}

const RowResult& result_of(const ValidationReport& report, const std::string& id)
{
    for (const RowResult& r : report.rows) {
        if (r.id == id && !r.memory) {
            return r;
        }
    }
    qFatal("no row %s", id.c_str());
    return report.rows.front();
}

} // namespace

class TestGroupedValidation : public QObject {
    Q_OBJECT
private slots:
    void groups_of_a_row()
    {
        RunRow r;
        r.id = "x";
        QCOMPARE(cv_group_of(r, CvGrouping::Source), std::string("unstated"));
        r.source_id = "megatron_bridge_perf_summary";
        r.arch_family = "llama_rmsnorm_swiglu_rope_gqa";
        QCOMPARE(cv_group_of(r, CvGrouping::Source), std::string("megatron_bridge_perf_summary"));
        QCOMPARE(cv_group_of(r, CvGrouping::Family), std::string("llama_rmsnorm_swiglu_rope_gqa"));
        QCOMPARE(cv_group_of(r, CvGrouping::Release), std::string("unstated"));
        r.software = "Megatron-Bridge (Megatron-Core, Transformer Engine) in NeMo 26.04.01 container";
        QCOMPARE(cv_group_of(r, CvGrouping::Release), std::string("NeMo 26.04.01"));
        r.software = "torchtitan 9dec370 (2024/12/26), torch 1963fc8 (2024/12/23); FSDP2; torch.compile";
        QCOMPARE(cv_group_of(r, CvGrouping::Release), std::string("torchtitan 9dec370"));
        r.software = "Megatron-Core + Transformer Engine (late 2025); dispatcher DeepEP; step: CUDA Graphs";
        QCOMPARE(cv_group_of(r, CvGrouping::Release), std::string("Megatron-Core + Transformer Engine (late 2025)"));
        const RunRow a100 = rows_of("s", ParameterSet{}, 0).front();
        QCOMPARE(cv_group_of(a100, CvGrouping::Gpu), std::string("a100-sxm4-80gb"));
        QVERIFY(cv_grouping_from_string("family") == CvGrouping::Family);
        QVERIFY(!cv_grouping_from_string("random"));
    }

    // Two sources measured on different "clusters" (GEMM efficiency 0.70 and 0.55): a row of one is
    // predicted by the fit on the other alone, so its held-out error is what that fit makes of it.
    void a_held_out_row_is_predicted_by_the_fit_without_its_group()
    {
        std::vector<RunRow> rows = rows_of("a", with_gemm_efficiency(0.70), 0);
        const std::vector<RunRow> b = rows_of("b", with_gemm_efficiency(0.55), 8);
        rows.insert(rows.end(), b.begin(), b.end());
        const std::map<std::string, GpuProfile> profiles{{"a100-sxm4-80gb", calibrated_on(rows)}};

        GroupedValidationOptions grouped;
        grouped.by = CvGrouping::Source;
        grouped.max_evaluations = gemm_fit().max_evaluations;
        grouped.starts = gemm_fit().starts; // the refit below is the same fit: same evaluations, same starts
        grouped.min_fit_rows = 5;
        grouped.threads = 2;
        const GroupedValidationReport held = validate_grouped(rows, profiles, {}, grouped);
        QCOMPARE(held.fits.size(), std::size_t{2});
        for (const HeldOutFit& f : held.fits) {
            QVERIFY(!f.prior);
            QCOMPARE(f.train_rows, 8);
        }

        // The fit on b alone predicts a's rows (and the other way round): the same numbers.
        const std::vector<RunRow> only_b(rows.begin() + 8, rows.end());
        const GpuProfile fitted_on_b = build_profile(a100_like(), calibrate(only_b, build_profile(a100_like(), {}), gemm_fit())->fitted);
        const ValidationReport by_b = validate_runs(rows, std::map<std::string, GpuProfile>{{"a100-sxm4-80gb", fitted_on_b}});
        const ValidationReport in_sample = validate_runs(rows, profiles);
        for (int i = 0; i < 8; ++i) {
            const std::string id = "a_" + std::to_string(i);
            const RowResult& h = result_of(held.report, id);
            QVERIFY(h.error_pct.has_value());
            QVERIFY2(std::abs(*h.error_pct - *result_of(by_b, id).error_pct) < 1e-9, id.c_str());
            // a's rows ran faster than b's fit predicts: held out they are predicted slow, by more than in sample.
            QVERIFY(*h.error_pct > 10);
            QVERIFY(*h.error_pct > std::abs(*result_of(in_sample, id).error_pct));
        }
        QCOMPARE(held.group_of_row.at("b_3"), std::string("b"));
        const nlohmann::json j = grouped_validation_to_json(held, CvGrouping::Source);
        QCOMPARE(j["cv"]["fits"].size(), std::size_t{2});
        QCOMPARE(j["rows"][0]["cv_group"].get<std::string>(), std::string("a"));
        QCOMPARE(j["overall"]["used"].get<int>(), 16);
    }

    void too_few_rows_left_keep_the_datasheet_prior()
    {
        std::vector<RunRow> rows = rows_of("a", with_gemm_efficiency(0.70), 0);
        const std::vector<RunRow> b = rows_of("b", with_gemm_efficiency(0.55), 8);
        rows.insert(rows.end(), b.begin(), b.end());
        const std::map<std::string, GpuProfile> profiles{{"a100-sxm4-80gb", calibrated_on(rows)}};
        GroupedValidationOptions grouped;
        grouped.min_fit_rows = 9; // each source leaves 8
        grouped.threads = 2;
        const GroupedValidationReport held = validate_grouped(rows, profiles, {}, grouped);
        QCOMPARE(held.fits.size(), std::size_t{2});
        const ValidationReport prior =
            validate_runs(rows, std::map<std::string, GpuProfile>{{"a100-sxm4-80gb", build_profile(a100_like(), ParameterSet{})}});
        for (const HeldOutFit& f : held.fits) {
            QVERIFY(f.prior);
        }
        for (const char* id : {"a_0", "b_5"}) {
            QVERIFY(std::abs(*result_of(held.report, id).error_pct - *result_of(prior, id).error_pct) < 1e-9);
        }
    }

    // Rows of a source the shipped fit never used are out of sample already: no refit, the shipped profile.
    void rows_no_fit_used_keep_the_shipped_profile()
    {
        const std::vector<RunRow> a = rows_of("a", with_gemm_efficiency(0.70), 0);
        const GpuProfile shipped = calibrated_on(a);
        std::vector<RunRow> rows = a;
        const std::vector<RunRow> c = rows_of("c", with_gemm_efficiency(0.60), 8);
        rows.insert(rows.end(), c.begin(), c.end());
        const std::map<std::string, GpuProfile> profiles{{"a100-sxm4-80gb", shipped}};
        GroupedValidationOptions grouped;
        grouped.min_fit_rows = 1;
        grouped.threads = 2;
        const GroupedValidationReport held = validate_grouped(rows, profiles, {}, grouped);
        QCOMPARE(held.fits.size(), std::size_t{1}); // only a's rows were fitted: one refit, without a
        QCOMPARE(held.fits.front().group, std::string("a"));
        QVERIFY(held.fits.front().prior); // nothing of the fit's rows is left without a
        const ValidationReport plain = validate_runs(rows, profiles);
        QCOMPARE(*result_of(held.report, "c_2").error_pct, *result_of(plain, "c_2").error_pct);
    }
};

QTEST_GUILESS_MAIN(TestGroupedValidation)
#include "tst_grouped_validation.moc"
