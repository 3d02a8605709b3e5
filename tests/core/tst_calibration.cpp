// SPDX-License-Identifier: MIT
// Calibration: the optimizer, recovering known parameters from synthetic runs, cross-validation, and the
// uncertainty band that the fit leaves in the profile.
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "test_support.h"
#include "vtrain/calibration.h"
#include "vtrain/scenario_json.h"
#include "vtrain/simulator.h"
#include "vtrain/uncertainty.h"
#include "vtrain/validation.h"

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

// Synthetic measurements: rows whose "measured" time is what the model predicts with `truth`.
std::vector<RunRow> synthetic_runs(const ParameterSet& truth)
{
    const GpuProfile profile = build_profile(a100_like(), truth);
    struct Shape {
        int layers, hidden, heads, tp, micro_batch;
    };
    // Small models and micro-batches are host-bound, large ones GPU-bound: both parameters show.
    const Shape shapes[] = {{12, 512, 8, 1, 1},   {12, 768, 12, 1, 1},  {24, 1024, 16, 2, 1}, {16, 1024, 16, 1, 2},
                            {24, 4096, 32, 2, 4}, {32, 4096, 32, 4, 8}, {24, 6144, 48, 8, 4}, {16, 5120, 40, 4, 2}};
    nlohmann::json rows = nlohmann::json::array();
    int i = 0;
    for (const Shape& s : shapes) {
        nlohmann::json r = {{"id", "synthetic_" + std::to_string(i++)},
                            {"subset", "synthetic"},
                            {"primary_metric", "iteration_time_s"},
                            {"arch_family", "gpt_dense_mha"},
                            {"num_layers", s.layers},
                            {"hidden_size", s.hidden},
                            {"num_attention_heads", s.heads},
                            {"seq_length", 1024},
                            {"vocab_size", 51200},
                            {"gpu_type", "A100-SXM4-80GB"},
                            {"num_gpus", 8},
                            {"gpus_per_node", 8},
                            {"tp", s.tp},
                            {"pp", 1},
                            {"dp", 8 / s.tp},
                            {"micro_batch_size", s.micro_batch},
                            {"global_batch_size", 8 / s.tp * s.micro_batch * 4},
                            {"activation_recompute", "none"},
                            {"sequence_parallel", false},
                            {"precision", "bf16"},
                            {"software", "Megatron-LM (2022)"},
                            {"iteration_time_s", 1.0},
                            {"trust", "high"}};
        rows.push_back(r);
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
    }
    return std::move(parsed).value();
}

// The parameters the fitting tests recover: BF16 GEMM efficiency and host overhead.
ParameterSet known_truth()
{
    ParameterSet truth;
    truth.model.gemm_max_efficiency = 0.7;
    truth.model.host_overhead_us = 40;
    return truth;
}

// A profile away from known_truth(): GEMM efficiency 0.88 and the given host overhead, where a fit starts.
ParameterSet away_from_truth(double host_overhead_us)
{
    ParameterSet start = known_truth();
    start.model.gemm_max_efficiency = 0.88;
    start.model.host_overhead_us = host_overhead_us;
    return start;
}

// A fit of those two parameters on the A100 rows, on 2 threads.
CalibrationOptions fit_gemm_and_host(int max_evaluations)
{
    CalibrationOptions options;
    options.gpu = "a100-sxm4-80gb";
    options.parameters = {"gemm_max_efficiency", "host_overhead_us"};
    options.max_evaluations = max_evaluations;
    options.threads = 2;
    return options;
}

} // namespace

class TestCalibration : public QObject {
    Q_OBJECT
private slots:
    void nelder_mead_finds_a_bounded_minimum()
    {
        const auto f = [](const std::vector<double>& x) { return std::pow(x[0] - 0.3, 2) + 2 * std::pow(x[1] - 0.7, 2); };
        const MinimizeResult r = nelder_mead(f, {0.9, 0.1}, 400);
        QVERIFY(std::abs(r.x[0] - 0.3) < 1e-3);
        QVERIFY(std::abs(r.x[1] - 0.7) < 1e-3);
        QVERIFY(r.evaluations <= 400);
        // A minimum outside the cube ends on its face.
        const auto g = [](const std::vector<double>& x) { return std::pow(x[0] - 1.5, 2); };
        QVERIFY(std::abs(nelder_mead(g, {0.2}, 200).x[0] - 1.0) < 1e-6);
    }

    void multi_start_leaves_a_local_minimum_that_one_start_keeps()
    {
        // Two basins: a shallow one (0.3) around the start, a deeper one (0) around (0.8, 0.8).
        const auto f = [](const std::vector<double>& x) {
            const double near = std::pow(x[0] - 0.15, 2) + std::pow(x[1] - 0.15, 2) + 0.3;
            const double far = 0.5 * (std::pow(x[0] - 0.8, 2) + std::pow(x[1] - 0.8, 2));
            return std::min(near, far);
        };
        const MinimizeResult one = nelder_mead(f, {0.1, 0.1}, 400);
        QVERIFY(std::abs(one.value - 0.3) < 1e-6); // Nelder-Mead is local
        QCOMPARE(multi_start_minimize(f, {0.1, 0.1}, 400, 1).value, one.value);
        const MinimizeResult many = multi_start_minimize(f, {0.1, 0.1}, 400, 4);
        QVERIFY(many.value < 1e-6);
        QVERIFY(std::abs(many.x[0] - 0.8) < 1e-2 && std::abs(many.x[1] - 0.8) < 1e-2);
        QVERIFY(many.evaluations <= 400);
        // Where one basin holds everything, the extra starts change nothing but the cost.
        const auto bowl = [](const std::vector<double>& x) { return std::pow(x[0] - 0.3, 2) + std::pow(x[1] - 0.7, 2); };
        const MinimizeResult b = multi_start_minimize(bowl, {0.9, 0.1}, 400, 4);
        QVERIFY(std::abs(b.x[0] - 0.3) < 1e-3 && std::abs(b.x[1] - 0.7) < 1e-3);
    }

    void objective_weighs_every_subset_the_same()
    {
        // Subset a: 3 rows with log error 0.1; subset b: 1 row with 0.3.
        const std::vector<std::string> subsets{"a", "a", "a", "b"};
        const std::vector<double> logs{0.1, -0.1, 0.1, 0.3};
        QVERIFY(std::abs(calibration_objective(subsets, logs) - (0.01 + 0.09) / 2) < 1e-12);
        QVERIFY(std::abs(calibration_objective(subsets, logs, CalibrationLoss::AbsoluteLog) - (0.1 + 0.3) / 2) < 1e-12);
    }

    void parameters_round_trip_and_stay_in_physical_ranges()
    {
        for (const auto& p : calibration_parameters()) {
            QVERIFY(p.low < p.high);
            if (p.name.find("efficiency") != std::string::npos) {
                QVERIFY2(p.low > 0 && p.high <= 1, p.name.c_str());
            }
            if (p.unit == "us") {
                QVERIFY2(p.low >= 0 && p.high <= 1e5, p.name.c_str());
            }
            ParameterSet s;
            s.set(p.name, 0.5 * (p.low + p.high));
            QCOMPARE(s.get(p.name), 0.5 * (p.low + p.high));
        }
        const GpuProfile profile = build_profile(a100_like(), ParameterSet{});
        const ParameterSet back = parameters_of(profile);
        QCOMPARE(back.model.gemm_max_efficiency, ModelParameters{}.gemm_max_efficiency);
        QCOMPARE(hardware_spec_of(profile).memory_bandwidth_gbytes_per_s, 2039.0);
    }

    void calibrate_recovers_known_parameters()
    {
        const ParameterSet truth = known_truth();
        const std::vector<RunRow> rows = synthetic_runs(truth);

        const GpuProfile start_profile = build_profile(a100_like(), away_from_truth(10));

        CalibrationOptions options = fit_gemm_and_host(160);
        options.folds = 2;
        const auto result = calibrate(rows, start_profile, options);
        QVERIFY2(result.ok(), result.first_error().c_str());
        QVERIFY2(std::abs(result->fitted.model.gemm_max_efficiency - 0.7) < 0.01, std::to_string(result->fitted.model.gemm_max_efficiency).c_str());
        QVERIFY2(std::abs(result->fitted.model.host_overhead_us - 40) < 1.0, std::to_string(result->fitted.model.host_overhead_us).c_str());
        QVERIFY(result->objective_fitted < 1e-4);
        QVERIFY(result->objective_start > result->objective_fitted);
        QCOMPARE(result->in_sample.at("synthetic").used, 8);
        QVERIFY(result->in_sample.at("synthetic").mape_pct < 1.0);
        // Every row was predicted by the fold that did not see it.
        QCOMPARE(result->cross_validated.at("synthetic").used, 8);
        QVERIFY(result->cross_validated.at("synthetic").mape_pct < 3.0);

        const nlohmann::json& c = result->calibration_block;
        QCOMPARE(c["rows_used"]["synthetic"].get<int>(), 8);
        QVERIFY(c.contains("objective"));
        QVERIFY(c["parameters"].contains("gemm_max_efficiency"));
        QCOMPARE(c["cross_validated_error"]["folds"].get<int>(), 2);
        QVERIFY(c.contains("band"));
        QVERIFY(c["band"]["low"].get<double>() <= c["band"]["high"].get<double>());
        QVERIFY(std::abs(c["band"]["low"].get<double>() - 1) < 0.05 && std::abs(c["band"]["high"].get<double>() - 1) < 0.05);
    }

    // With a budget too small to get from the prior to the optimum, a refit from the previous fit (recorded in
    // the starting profile's calibration block) ends lower and is kept; without --from-previous it is not tried.
    void a_previous_fit_is_kept_where_it_ends_lower()
    {
        const ParameterSet truth = known_truth();
        const std::vector<RunRow> rows = synthetic_runs(truth);
        GpuProfile start_profile = build_profile(a100_like(), away_from_truth(2));
        start_profile.calibration = {{"parameters", truth.to_json()}};

        CalibrationOptions options = fit_gemm_and_host(8);
        options.folds = 0;
        const auto plain = calibrate(rows, start_profile, options);
        QVERIFY2(plain.ok(), plain.first_error().c_str());
        QVERIFY(!plain->kept_previous);
        QVERIFY(plain->objective_fitted > 1e-3); // 8 evaluations do not reach the optimum from the prior
        options.from_previous = true;
        const auto warm = calibrate(rows, start_profile, options);
        QVERIFY2(warm.ok(), warm.first_error().c_str());
        QVERIFY(warm->kept_previous);
        QVERIFY(warm->objective_fitted < 1e-6);
        QVERIFY(std::abs(warm->fitted.model.gemm_max_efficiency - 0.7) < 1e-3);
        QVERIFY(warm->calibration_block["method"].get<std::string>().find("previous fit") != std::string::npos);
    }

    // A row whose micro-batch and recompute are unstated is fitted at its range's centre; the centre is
    // re-ranked under the fitted profile, so that each in-sample error is the one validate gives with the
    // calibrated profile (the centre validate picks, not the one the starting profile picked).
    void in_sample_errors_are_validates_with_the_fitted_profile()
    {
        const ParameterSet truth = known_truth();
        std::vector<RunRow> rows = synthetic_runs(truth);
        for (RunRow& r : rows) {
            r.micro_batch_size.reset();     // a range over the micro-batches that divide the batch
            r.activation_recompute.reset(); // and over none / selective / full
        }
        const CalibrationOptions options = fit_gemm_and_host(120);
        const auto result = calibrate(rows, build_profile(a100_like(), away_from_truth(2)), options);
        QVERIFY2(result.ok(), result.first_error().c_str());
        qInfo("%d refits, %d centres moved before the last", result->centre_refreshes, result->centres_moved);
        QCOMPARE(result->centres_moved, 0);
        const GpuProfile fitted = build_profile(a100_like(), result->fitted);
        QCOMPARE(result->rows.size(), rows.size());
        for (const RunRow& r : rows) {
            const RowMapping m = map_run(r);
            QVERIFY(m.run.has_value());
            QVERIFY(!m.run->candidates.empty());
            std::string reason;
            const auto range = predict_range(*m.run, fitted, reason);
            QVERIFY2(range.has_value(), reason.c_str());
            const auto row = std::find_if(result->rows.begin(), result->rows.end(), [&](const CalibrationRow& c) { return c.id == r.id; });
            QVERIFY(row != result->rows.end());
            const double validate_error = (range->central - m.run->measured) / m.run->measured * 100.0;
            QVERIFY2(
                std::abs(row->in_sample_error_pct - validate_error) < 1e-6,
                (r.id + ": in sample " + std::to_string(row->in_sample_error_pct) + "%, validate " + std::to_string(validate_error) + "%").c_str());
        }
    }

    // Issue 13/16: bounds are physical ranges with a reason; a fit that needs more ends on one and says so.
    void bounds_are_physical_and_a_fit_against_one_is_flagged()
    {
        for (const auto& p : calibration_parameters()) {
            QVERIFY2(!p.why.empty(), p.name.c_str());
        }
        // The NVLink range follows the part's datasheet rate: 0.5x to 1.06x of 450 GB/s per direction on H100.
        const GpuProfile h100 = test::shipped_profile("h100-sxm5-80gb");
        for (const auto& p : calibration_parameters_for(h100)) {
            if (p.name == "nvlink_bus_gbytes_per_s") {
                QCOMPARE(p.low, 225.0);
                QCOMPARE(p.high, 1.06 * 450);
            }
            if (p.name == "gemm_max_efficiency_fp8") {
                QVERIFY(p.high <= 0.8); // DeepGEMM's best is 72% of the FP8 peak
            }
        }
        // Runs made with an impossible 97% GEMM efficiency: the fit stops at the 0.9 ceiling and flags it.
        ParameterSet truth;
        truth.model.gemm_max_efficiency = 0.97;
        const std::vector<RunRow> rows = synthetic_runs(truth);
        CalibrationOptions options;
        options.gpu = "a100-sxm4-80gb";
        options.parameters = {"gemm_max_efficiency"};
        options.folds = 0;
        options.max_evaluations = 60;
        options.threads = 2;
        const auto result = calibrate(rows, build_profile(a100_like(), ParameterSet{}), options);
        QVERIFY2(result.ok(), result.first_error().c_str());
        QVERIFY(std::abs(result->fitted.model.gemm_max_efficiency - 0.9) < 1e-3);
        QCOMPARE(result->at_bound, std::vector<std::string>{"gemm_max_efficiency (high)"});
        QCOMPARE(result->calibration_block["at_bound"].size(), std::size_t{1});
    }

    // A calibrated profile is refitted from the prior it recorded, so that reruns are reproducible;
    // a precision's GEMM efficiency is not fitted without enough rows of that precision.
    void refit_starts_from_the_prior_and_per_precision_needs_rows()
    {
        ParameterSet truth;
        truth.model.gemm_max_efficiency = 0.7;
        const std::vector<RunRow> rows = synthetic_runs(truth);
        ParameterSet prior;
        prior.model.gemm_max_efficiency = 0.8;
        ParameterSet earlier_fit = prior;
        earlier_fit.model.gemm_max_efficiency = 0.6;
        GpuProfile calibrated = build_profile(a100_like(), earlier_fit);
        calibrated.calibration = {{"start_parameters", prior.to_json()}};
        QCOMPARE(prior_parameters_of(calibrated).model.gemm_max_efficiency, 0.8);
        QCOMPARE(prior_parameters_of(build_profile(a100_like(), earlier_fit)).model.gemm_max_efficiency, 0.6);
        // A MoE term absent from the recorded prior had its default there (JSON omits defaults), not the fit's value.
        GpuProfile moe_fit = calibrated;
        moe_fit.moe_host_op_us = 55;
        QCOMPARE(prior_parameters_of(moe_fit).model.moe_host_op_us, ModelParameters{}.moe_host_op_us);

        CalibrationOptions options;
        options.gpu = "a100-sxm4-80gb";
        options.parameters = {"gemm_max_efficiency", "gemm_max_efficiency_fp8"};
        options.folds = 2;
        options.max_evaluations = 60;
        options.threads = 2;
        const auto result = calibrate(rows, calibrated, options);
        QVERIFY2(result.ok(), result.first_error().c_str());
        QCOMPARE(result->start.model.gemm_max_efficiency, 0.8);
        QCOMPARE(result->calibration_block["start_parameters"]["gemm_max_efficiency"].get<double>(), 0.8);
        // The synthetic rows are all BF16: the FP8 efficiency stays at the prior, with the reason.
        QCOMPARE(result->fitted_names, std::vector<std::string>{"gemm_max_efficiency"});
        QCOMPARE(result->kept_for_lack_of_rows.size(), std::size_t{1});
        QVERIFY(result->kept_for_lack_of_rows.front().find("gemm_max_efficiency_fp8: 0 fp8 rows") == 0);
        // Before, in sample and held out, by subset and by precision; one entry per fold.
        QCOMPARE(result->start_error.at("synthetic").used, 8);
        QVERIFY(result->start_error.at("all").mape_pct > result->in_sample.at("all").mape_pct);
        QCOMPARE(result->cross_validated_by_precision.at("bf16").used, 8);
        QCOMPARE(result->folds.size(), std::size_t{2});
        int held_out = 0;
        for (const auto& f : result->folds) {
            held_out += f.held_out.at("all").used;
            QCOMPARE(f.train_rows + f.test_rows, 8);
        }
        QCOMPARE(held_out, 8);
        QCOMPARE(result->calibration_block["cross_validated_error"]["fold_results"].size(), std::size_t{2});
    }

    // The MAP penalty is z^2 / 2 with z in units of the documented prior width: a factor for log-scale
    // parameters, an absolute width otherwise; a prior outside the range counts from the nearest bound.
    void prior_penalty_is_half_z_squared()
    {
        const auto parameter = [](const std::string& name) {
            for (const auto& p : calibration_parameters()) {
                if (p.name == name) {
                    return p;
                }
            }
            qFatal("no parameter %s", name.c_str());
        };
        const CalibrationParameter host = parameter("host_overhead_us"); // log scale, x/÷ 3
        const CalibrationParameter nic = parameter("nic_efficiency");    // linear, +- 0.15
        QCOMPARE(host.prior_width, 3.0);
        QCOMPARE(nic.prior_width, 0.15);
        QVERIFY(std::abs(prior_penalty(host, 60, 20) - 0.5) < 1e-12);     // one width up: z = 1
        QVERIFY(std::abs(prior_penalty(host, 20.0 / 9, 20) - 2) < 1e-12); // two widths down: z = -2
        QVERIFY(std::abs(prior_penalty(nic, 0.65, 0.8) - 0.5) < 1e-12);
        QVERIFY(std::abs(prior_penalty(host, 3, 0) - 0.5) < 1e-12); // a 0 us prior counts from the 1 us bound
        QCOMPARE(prior_penalty(host, 20, 20), 0.0);
        CalibrationParameter no_width = host;
        no_width.prior_width = 0;
        QCOMPARE(prior_penalty(no_width, 60, 20), 0.0);
        // Every software term the calibration fits by default has a width and says where it comes from.
        for (const auto& p : calibration_parameters()) {
            if (p.fitted_by_default) {
                QVERIFY2(p.prior_width > 0 && !p.prior_why.empty(), p.name.c_str());
                QVERIFY2(!p.hardware, p.name.c_str());
            }
        }
    }

    // The prior pulls a fitted parameter from the rows' optimum towards it, the more the larger the weight;
    // the calibration block records the weight and the widths.
    void the_prior_weight_pulls_the_fit_towards_the_prior()
    {
        const std::vector<RunRow> rows = synthetic_runs(known_truth());           // GEMM efficiency 0.7
        const GpuProfile start = build_profile(a100_like(), away_from_truth(40)); // prior 0.88
        CalibrationOptions options = fit_gemm_and_host(160);
        options.parameters = {"gemm_max_efficiency"};
        options.folds = 0;
        double previous = 0;
        for (const double weight : {0.0, 0.01, 1.0}) {
            options.prior_weight = weight;
            const auto result = calibrate(rows, start, options);
            QVERIFY2(result.ok(), result.first_error().c_str());
            const double fitted = result->fitted.model.gemm_max_efficiency;
            if (weight == 0) {
                QVERIFY2(std::abs(fitted - 0.7) < 0.01, std::to_string(fitted).c_str());
                QVERIFY(!result->calibration_block.contains("prior_weight"));
            } else {
                QVERIFY2(fitted > previous + 1e-3 && fitted < 0.88, std::to_string(fitted).c_str());
                QCOMPARE(result->calibration_block["prior_weight"].get<double>(), weight);
                QCOMPARE(result->calibration_block["prior_widths"]["gemm_max_efficiency"].get<double>(), 0.1);
            }
            previous = fitted;
        }
    }

    // Folds by source: each source is held out once; a source whose absence leaves too few rows to fit
    // predicts with the prior, and says so.
    void folds_by_source_hold_out_each_source()
    {
        std::vector<RunRow> rows = synthetic_runs(known_truth());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            rows[i].source_id = i < 6 ? "big" : "small";
        }
        const GpuProfile start = build_profile(a100_like(), away_from_truth(10));
        CalibrationOptions options = fit_gemm_and_host(120);
        options.folds_by_source = true;
        options.min_fit_rows = 3;
        const auto result = calibrate(rows, start, options);
        QVERIFY2(result.ok(), result.first_error().c_str());
        QCOMPARE(result->folds.size(), std::size_t{2});
        for (const auto& f : result->folds) {
            if (f.source == "big") {
                // 2 rows left to fit: fewer than 3, so the prior predicts the 6 held-out rows.
                QCOMPARE(f.train_rows, 2);
                QCOMPARE(f.test_rows, 6);
                QVERIFY(f.prior);
                QCOMPARE(f.fitted.model.gemm_max_efficiency, 0.88);
            } else {
                QCOMPARE(f.source, std::string("small"));
                QCOMPARE(f.train_rows, 6);
                QVERIFY(!f.prior);
            }
        }
        const nlohmann::json& cv = result->calibration_block["cross_validated_error"];
        QCOMPARE(cv["grouping"].get<std::string>(), std::string("source"));
        QCOMPARE(cv["fold_results"][0]["source"].get<std::string>(), std::string("big"));
        QVERIFY(result->calibration_block["band"]["source"].get<std::string>().find("leave-one-source-out") == 0);
    }

    // The honest range: a time range widens by the band as it is, a throughput range by its inverse.
    void band_widens_a_range_by_metric()
    {
        GpuProfile p = build_profile(a100_like(), ParameterSet{});
        p.calibration = {{"band", {{"low", 0.9}, {"high", 1.2}, {"coverage", 0.8}}}};
        const auto time = band_widened_range(ValidationMetric::IterationTime, 10, 12, p);
        QVERIFY(time.has_value());
        QVERIFY(std::abs(time->first - 9) < 1e-12 && std::abs(time->second - 14.4) < 1e-12);
        const auto tokens = band_widened_range(ValidationMetric::TokensPerSecPerGpu, 1200, 1800, p);
        QVERIFY(tokens.has_value());
        QVERIFY(std::abs(tokens->first - 1000) < 1e-9 && std::abs(tokens->second - 2000) < 1e-9);
        QVERIFY(!band_widened_range(ValidationMetric::PeakMemory, 50, 60, p).has_value());
    }

    void calibrate_refuses_a_gpu_without_rows()
    {
        const std::vector<RunRow> rows = synthetic_runs(ParameterSet{});
        CalibrationOptions options;
        options.gpu = "h100-sxm5-80gb";
        options.folds = 0;
        const auto result = calibrate(rows, build_profile(a100_like(), ParameterSet{}), options);
        QVERIFY(!result.ok());
        QVERIFY(result.first_error().find("--gpu") == 0);
        options.gpu = "a100-sxm4-80gb";
        options.parameters = {"no_such_parameter"};
        QVERIFY(!calibrate(rows, build_profile(a100_like(), ParameterSet{}), options).ok());
        // --precision keeps only the rows of that precision: the synthetic rows are bf16.
        options.parameters = {"gemm_max_efficiency"};
        options.precision = "fp8";
        const auto fp8 = calibrate(rows, build_profile(a100_like(), ParameterSet{}), options);
        QVERIFY(!fp8.ok());
        QVERIFY2(fp8.first_error().find("with precision fp8") != std::string::npos, fp8.first_error().c_str());
        options.precision = "bf16";
        options.max_evaluations = 20;
        const auto bf16 = calibrate(rows, build_profile(a100_like(), ParameterSet{}), options);
        QVERIFY2(bf16.ok(), bf16.first_error().c_str());
        QCOMPARE(bf16->rows.size(), rows.size());
        QCOMPARE(bf16->calibration_block["precision"].get<std::string>(), std::string("bf16"));
    }

    // --- uncertainty band ----------------------------------------------------------------------------
    void band_takes_the_error_quantiles()
    {
        // Errors -10..+10 in steps of 1: the 10th and 90th percentiles are -8 and +8.
        std::vector<double> errors;
        for (int e = -10; e <= 10; ++e) {
            errors.push_back(e);
        }
        const auto band = band_from_errors(errors, 0.8, "test");
        QVERIFY(band.has_value());
        QVERIFY(std::abs(band->low - 1 / 1.08) < 1e-12);  // over-predicted by 8%: measured = predicted / 1.08
        QVERIFY(std::abs(band->high - 1 / 0.92) < 1e-12); // under-predicted by 8%
        QCOMPARE(band->coverage, 0.8);
        QVERIFY(!band_from_errors({1.0}, 0.8, "one").has_value());
        // Equal weights give the same band; weights can make a subset count more.
        const auto weighted = band_from_errors(errors, std::vector<double>(errors.size(), 3.0), 0.8, "w");
        QVERIFY(std::abs(weighted->low - band->low) < 1e-9 && std::abs(weighted->high - band->high) < 1e-9);
        QCOMPARE(weighted_quantile({{1, 1}, {2, 1}, {3, 1}}, 0.5), 2.0);
        QVERIFY(weighted_quantile({{1, 1}, {2, 1}, {3, 10}}, 0.5) > 2.0);
    }

    void simulate_carries_the_profiles_band()
    {
        GpuProfile profile = test::free_network_profile();
        const auto band = band_from_errors({-10, -5, 0, 5, 10}, 0.8, "unit test runs");
        profile.calibration = {{"band", band_to_json(*band, {-10, -5, 0, 5, 10})}};
        QVERIFY(prediction_band(profile).has_value());
        Scenario s;
        s.model = test::gpt(4, 1024, 16);
        s.cluster.gpu = profile.id;
        s.cluster.num_gpus = 8;
        s.training.global_batch = 16;
        Plan plan;
        plan.dp = 8;
        plan.micro_batch = 2;
        const auto r = simulate(s, plan, profile, SimulationOptions{false, nullptr});
        QVERIFY(r.ok());
        QVERIFY(std::abs(r->iteration_time_low_s - band->low * r->iteration_time_s) < 1e-12);
        QVERIFY(std::abs(r->iteration_time_high_s - band->high * r->iteration_time_s) < 1e-12);
        QCOMPARE(r->band_coverage, 0.8);
        QCOMPARE(r->band_source, std::string("unit test runs"));
        // A profile without a calibration band: the wide default band, and its source says so.
        const auto plain = simulate(s, plan, test::free_network_profile(), SimulationOptions{false, nullptr});
        QVERIFY(plain->iteration_time_low_s == default_uncalibrated_band().low * plain->iteration_time_s);
        QVERIFY(plain->iteration_time_high_s == default_uncalibrated_band().high * plain->iteration_time_s);
        QVERIFY(plain->band_source.find("uncalibrated") != std::string::npos);
        QCOMPARE(band_label(PredictionBand{0.94, 1.06, 0.8, ""}), std::string("\xC2\xB1"
                                                                              "6.0%"));
        QCOMPARE(band_label(PredictionBand{0.96, 1.08, 0.8, ""}), std::string("-4.0%/+8.0%"));
    }

    // The default band of an uncalibrated part is wider on both sides than every band calibration
    // measured: an unfitted profile must never look surer than a fitted one (issue 16).
    void default_band_is_wider_than_every_calibrated_band()
    {
        const PredictionBand prior = default_uncalibrated_band();
        QVERIFY(!prior.calibrated);
        int calibrated = 0;
        for (const char* id : {"a100-sxm4-80gb", "a100-sxm4-40gb", "h100-sxm5-80gb", "b200-sxm-180gb", "gb200-nvl72"}) {
            const auto band = prediction_band(test::shipped_profile(id));
            QVERIFY2(band.has_value(), id);
            if (band->calibrated) {
                ++calibrated;
                QVERIFY2(prior.low < band->low && prior.high > band->high, id);
            }
        }
        QVERIFY(calibrated >= 2);
    }

    void shipped_a100_profiles_record_their_calibration()
    {
        for (const char* id : {"a100-sxm4-80gb", "a100-sxm4-40gb"}) {
            const GpuProfile p = test::shipped_profile(id);
            QVERIFY2(p.calibration.is_object() && p.calibration.contains("rows_used"), id);
            QVERIFY2(p.calibration.contains("objective") && p.calibration.contains("parameters"), id);
            QVERIFY2(p.calibration.contains("cross_validated_error"), id);
            const auto band = prediction_band(p);
            QVERIFY2(band.has_value() && band->low < 1 && band->high > 1, id);
        }
    }
};

QTEST_APPLESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
