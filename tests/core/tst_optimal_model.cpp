// SPDX-License-Identifier: MIT
// The compute-optimal model study: the shape family, the naive answer by hand, the per-plan global batch,
// request errors, a small study's invariants, and the paper's setting (3,360 A100s x 30 days).
#include <QtTest>

#include <cmath>

#include "model/model_math.h"
#include "test_support.h"
#include "vtrain/optimal_model.h"

using namespace vtrain;

namespace {

OptimalModelRequest request(int gpus, double days)
{
    OptimalModelRequest r;
    r.gpu = "a100-sxm4-80gb";
    r.num_gpus = gpus;
    r.budget_days = days;
    r.threads = 2;
    return r;
}

bool has_field(const Diagnostics& d, const std::string& field)
{
    for (const auto& e : d) {
        if (e.field == field) {
            return true;
        }
    }
    return false;
}

} // namespace

class TestOptimalModel : public QObject {
    Q_OBJECT
private slots:
    void megatron_family_has_the_papers_shapes()
    {
        const auto family = model_family(ShapeFamily::Megatron, 2048, 51200);
        QCOMPARE(family.size(), std::size_t{10});
        bool has_76b = false;
        bool has_146b = false;
        for (std::size_t i = 0; i < family.size(); ++i) {
            const ModelSpec& m = family[i];
            QCOMPARE(m.head_dim(), 128);
            QVERIFY(i == 0 || total_params(family[i - 1]) < total_params(m));
            // The paper's answers: 76.04B (60 x 10240) and 145.61B (80 x 12288) parameters.
            has_76b = has_76b || (m.layers == 60 && m.hidden == 10240 && std::abs(total_params(m) / 1e9 - 76.05) < 0.05);
            has_146b = has_146b || (m.layers == 80 && m.hidden == 12288 && std::abs(total_params(m) / 1e9 - 145.61) < 0.05);
        }
        QVERIFY(has_76b);
        QVERIFY(has_146b);
        const auto grid = model_family(ShapeFamily::Grid, 2048, 51200);
        QCOMPARE(grid.size(), std::size_t{31});
        for (const auto& m : grid) {
            QCOMPARE(m.layers % 4, 0);
            const double aspect = double(m.hidden) / m.layers;
            QVERIFY2(aspect > 80 && aspect < 210, m.name.c_str());
        }
    }

    void global_batch_is_rounded_to_dp()
    {
        QCOMPARE(rounded_global_batch(1536, 70), 1540);   // 22 x 70
        QCOMPARE(rounded_global_batch(1536, 42), 1554);   // 37 x 42
        QCOMPARE(rounded_global_batch(1536, 3360), 3360); // at least one sequence per replica
        QCOMPARE(rounded_global_batch(1536, 512), 1536);
    }

    // Naive days = 72 L h^2 (1 + s/6h + V/12hL) x tokens / (GPUs x peak x utilisation) (Megatron's model
    // FLOPs without recompute), worked out independently of the library's layer formulas.
    void naive_days_by_hand()
    {
        const GpuProfile profile = test::shipped_profile("a100-sxm4-80gb");
        OptimalModelRequest r = request(3360, 30);
        const ModelSpec m = model_family(ShapeFamily::Megatron, 2048, 51200)[6]; // 80 x 12288
        QCOMPARE(m.layers, 80);
        const double L = 80, h = 12288, s = 2048, V = 51200;
        const double per_token = 72 * L * h * h * (1 + s / (6 * h) + V / (12 * h * L));
        const double tokens = 20 * total_params(m);
        const double days = per_token * tokens / (3360 * 312e12) / 86400;
        QVERIFY(std::abs(training_model_flops(m, tokens) / (per_token * tokens) - 1) < 1e-12);
        StudyControl control;
        control.sweep.cancel = true; // only the naive part is needed
        const std::map<std::string, GpuProfile> profiles{{profile.id, profile}};
        const OptimalCandidate c = evaluate_candidate(m, r, profiles, control);
        QVERIFY(std::abs(c.naive_days / days - 1) < 1e-12);
        QVERIFY(c.naive_days > 28 && c.naive_days < 30); // the paper's naive answer fits in 30 days
        QVERIFY(c.naive_within_budget);
        QVERIFY(!c.simulated);
        r.naive_utilization = 0.5;
        QVERIFY(std::abs(evaluate_candidate(m, r, profiles, control).naive_days / (2 * days) - 1) < 1e-12);
    }

    void bad_requests_name_the_field()
    {
        OptimalModelRequest r = request(0, 30);
        r.budget_days.reset();
        r.tokens_per_param = -1;
        r.naive_utilization = 1.5;
        const Diagnostics d = check_request(r);
        QVERIFY(has_field(d, "gpus"));
        QVERIFY(has_field(d, "days"));
        QVERIFY(has_field(d, "tokens_per_param"));
        QVERIFY(has_field(d, "naive_utilization"));
        StudyControl control;
        const auto result = find_optimal_model(r, test::shipped_profile("a100-sxm4-80gb"), control);
        QVERIFY(!result.ok());
        QVERIFY(check_request(request(8, 1)).empty());
    }

    // 64 GPUs and 2 days: every invariant of the answer, checkable without knowing the simulator's numbers.
    void small_study_is_consistent()
    {
        const GpuProfile profile = test::shipped_profile("a100-sxm4-80gb");
        OptimalModelRequest r = request(64, 2);
        StudyControl control;
        const auto result = find_optimal_model(r, profile, control);
        QVERIFY2(result.ok(), result.first_error().c_str());
        QCOMPARE(result->candidates.size(), std::size_t{10});
        QVERIFY(!result->cancelled);
        QVERIFY(result->naive_choice.has_value());
        QVERIFY(result->feasible_choice.has_value());
        // Real utilisation is below 100%, so the feasible model is never larger than the naive one.
        QVERIFY(*result->feasible_choice <= *result->naive_choice);
        for (std::size_t i = 0; i < result->candidates.size(); ++i) {
            const auto& c = result->candidates[i];
            QVERIFY(c.simulated);
            QVERIFY(std::abs(c.tokens / c.params - 20) < 1e-9);
            if (!c.has_plan) {
                QVERIFY(!c.note.empty());
                continue;
            }
            QCOMPARE(c.best.num_gpus, 64);
            QCOMPARE(c.best.plan.num_gpus(), 64);
            QCOMPARE(c.global_batch % c.best.plan.dp, 0);
            QVERIFY(c.best.mfu > 0 && c.best.mfu < 1);
            QVERIFY(c.best.training_days > c.naive_days); // MFU < 100%
            QCOMPARE(c.within_budget, c.best.training_days <= 2);
            if (c.within_budget) {
                QVERIFY(i <= *result->feasible_choice);
            }
        }
        const auto curve = budget_curve(*result, {0.5, 2, 30});
        QCOMPARE(curve.size(), std::size_t{3});
        QVERIFY(curve[1].feasible_params == result->candidates[*result->feasible_choice].params);
        for (std::size_t i = 0; i < curve.size(); ++i) {
            QVERIFY(curve[i].naive_params >= curve[i].feasible_params);
            QVERIFY(i == 0 || curve[i].feasible_params >= curve[i - 1].feasible_params);
        }
        const auto j = optimal_model_to_json(*result);
        QCOMPARE(j["candidates"].size(), std::size_t{10});
        QVERIFY(j["feasible_choice"].is_object());
    }

    // vTrain's case study: 3,360 A100s for 30 days. The paper: naive 145.61B, feasible 76.04B.
    void papers_setting()
    {
        const GpuProfile profile = test::shipped_profile("a100-sxm4-80gb");
        StudyControl control;
        const auto result = find_optimal_model(request(3360, 30), profile, control);
        QVERIFY2(result.ok(), result.first_error().c_str());
        QVERIFY(result->naive_choice && result->feasible_choice);
        const auto& naive = result->candidates[*result->naive_choice];
        const auto& feasible = result->candidates[*result->feasible_choice];
        QCOMPARE(naive.model.hidden, 12288);
        QCOMPARE(feasible.model.hidden, 10240);
        QVERIFY(naive.has_plan && naive.best.training_days > 30); // the naive answer does not fit in practice
        QCOMPARE(feasible.best.plan.num_gpus(), 3360);
    }

    void cancelled_before_start_returns_nothing_simulated()
    {
        StudyControl control;
        control.sweep.cancel = true;
        const auto result = find_optimal_model(request(64, 2), test::shipped_profile("a100-sxm4-80gb"), control);
        QVERIFY(result.ok());
        QVERIFY(result->cancelled);
        QVERIFY(!result->feasible_choice.has_value());
    }
};

QTEST_APPLESS_MAIN(TestOptimalModel)
#include "tst_optimal_model.moc"
