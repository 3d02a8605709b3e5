// SPDX-License-Identifier: MIT
// CI guard on prediction fidelity: validates the shipped profiles on the public sets
// (../shared/validation/{public_runs,modern_runs}.json, outside the repository; VTRAIN_VALIDATION_DIR
// overrides the folder) and pins every subset's current figure, so that a change that makes predictions
// worse fails: a subset's MAPE may not rise above its pin and its modeled rows may not drop below the pin.
// When more rows become modeled than pinned (a feature landed), the MAPE is over different rows: the test
// warns that the pins are to be updated instead of failing. Skipped when the data is absent.
//
// Update the pins when the model improves (docs/validation.md shows the tables): lower a MAPE pin, raise a
// modeled-row pin. A subset that is not modeled at all yet is pinned at 0 modeled rows with no MAPE.
#include <QtTest>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "test_support.h"
#include "validation_data.h"
#include "vtrain/validation.h"

using namespace vtrain;

namespace {

struct Pin {
    int modeled = 0;      // rows predicted and scored, at least
    double mape_pct = -1; // MAPE at most (with a little room); < 0: not modeled yet
};

// public_runs.json, scored with the shipped A100 profiles. MT-NLG is scored at the centre of its
// micro-batch and recompute range (it was 21.4% with a micro-batch of 1 picked by default).
const std::map<std::string, Pin>& old_set_pins()
{
    static const std::map<std::string, Pin> pins{{"vtrain_single_node", {1440, 7.3}},  {"vtrain_multi_node", {109, 7.8}},
                                                 {"korthikanti_recompute", {12, 2.1}}, {"korthikanti_per_layer", {5, 1.0}},
                                                 {"sc21_weak_scaling", {10, 4.1}},     {"mtnlg", {3, 12.5}}};
    return pins;
}

// modern_runs.json (issue 13). Every subset of the file has a pin; rows become modeled as mixture of
// experts, MLA, FP8, FSDP, context parallelism and the Blackwell profiles land.
const std::map<std::string, Pin>& modern_set_pins()
{
    // Figures of session 9 with the H100, B200, GB200 and 96 GB H100 profiles calibrated on these rows
    // (scripts/calibrate-modern.sh, 600 evaluations per fit, range centres re-ranked under each fit; in-sample
    // figures, docs/validation.md gives the held-out ones). Session 9 lists the four Qwen3-30B rows measured
    // inside Megatron-Bridge's documented regression (issue #1998) without scoring or fitting them, and refitted
    // every profile with --from-previous (the shipped fit as a second start); torchtitan_docs_2024 6.7 -> 7.0 is
    // the 96 GB H100 refit (its objective went down, the three docs rows' MAPE up by 0.3). Session 35 (issue 29: NCCL's latency by ranks, NCCL's SMs
    // beside overlapped traffic, the flex dispatcher at DeepEP's rate, fine-tuning modes) moved the in-sample
    // figures under the unchanged shipped fit (dense B200 +1.0, MoE H100 +0.7 with one more row scored, the one
    // DSv3 GB200 row 0.0 -> 3.3, torchtitan docs +1.3; torchtitan H100 -0.7, DeepSeek-V3 -1.0) while every
    // held-out-by-source figure but that one row improved (docs/validation.md). Session 41 (Megatron's expert
    // all-to-all overlap exposed on unpaired passes and refused with full recompute; Transformer Engine's
    // cross-entropy holding the 16-bit logits alone; the overlap tried only where Megatron runs it) and its
    // refit: MoE H100 +1.3 (a Qwen3-30B row whose recipe plan the memory model had wrongly put out of memory,
    // +1.1; GPT-OSS on a one-chunk pipeline without the overlap), GB200 +0.3, B200 0.0. Session 42 (MXFP8's
    // block-scaled GEMMs; one CPU thread issues every operator of a layer) and its refit: MoE GB200 +0.84 (the
    // 25.09 token-drop rows, which take no sync, now host-bound under the refitted per-operator CPU time), every
    // other Bridge subset better; held out by release 11.24% -> 10.93% (docs/validation.md).
    static const std::map<std::string, Pin> pins{
        {"megatron_bridge_dense_h100", {13, 3.0}},
        {"megatron_bridge_dense_b200", {8, 2.3}},
        {"megatron_bridge_dense_gb200", {37, 4.4}}, // session 44: the refit after the 25.09 rows' whole-layer graphs
        {"megatron_bridge_moe_h100", {22, 5.9}},    // session 41: the Qwen3-30B recipe plan fits (TE cross-entropy)
        {"megatron_bridge_moe_b200", {26, 14.2}},   // session 44: +0.28 (Nemotron Nano's Mamba layers graphed whole)
        {"megatron_bridge_moe_gb200", {52, 9.2}},   // 26.06.01's footnoted GPT-OSS row unscored; session 44: 13.76 -> 9.89; session 45: 9.14
        {"mcore_dsv3_gb200_optimization", {1, 0.1}},
        {"deepseek_v3", {1, 10.8}}, // session 45: H800 takes H100's software terms
        {"torchtitan_h100", {18, 11.9}},
        {"torchtitan_asynctp_h100", {12, 10.6}},
        {"torchtitan_docs_2024", {6, 6.0}},
        {"megatron_core_moe_readme", {0, -1}},
        {"moe_parallel_folding", {0, -1}}};
    return pins;
}
constexpr int kModernRowsModeled = 201; // coverage pin: rows modeled of 222 (latent MoE and DualPipe: +15)
constexpr int kModernRowsUnscored = 5;  // of them, listed but not scored (documented regressions): no more may join silently

void check_file(const std::filesystem::path& path, const std::map<std::string, Pin>& pins, int coverage_pin, int unscored_pin = 0)
{
    const auto rows = load_runs(path);
    QVERIFY2(rows.ok(), rows.first_error().c_str());
    const ValidationReport report = validate_runs(*rows, test::shipped_profiles_for(*rows));

    // No row may disappear: every row is either predicted or skipped with a reason.
    std::size_t time_rows = 0;
    for (const auto& r : report.rows) {
        if (!r.memory) {
            ++time_rows;
            QVERIFY2(r.error_pct.has_value() != !r.skipped_reason.empty(), r.id.c_str());
        }
    }
    QCOMPARE(time_rows, rows->size());
    QCOMPARE(report.rows_in_file, static_cast<int>(rows->size()));
    qInfo("%s: coverage %d / %d rows modeled", path.filename().string().c_str(), report.rows_modeled, report.rows_in_file);
    QVERIFY2(report.rows_modeled >= coverage_pin, ("coverage fell below its pin of " + std::to_string(coverage_pin)).c_str());
    QVERIFY2(report.rows_unscored <= unscored_pin, ("more rows listed as unscored than the pin of " + std::to_string(unscored_pin)).c_str());

    for (const auto& [subset, pin] : pins) {
        const auto it = report.subsets.find(subset);
        QVERIFY2(it != report.subsets.end(), subset.c_str());
        const SubsetStats& s = it->second;
        const auto target = target_for_subset(subset);
        const std::string line = subset + ": " + std::to_string(s.used) + " of " + std::to_string(s.used + s.skipped) + " rows modeled, MAPE " +
                                 std::to_string(s.mape_pct) + "%" + (target ? ", target " + std::to_string(*target) + "%" : std::string());
        qInfo("%s", line.c_str());
        QVERIFY2(s.used >= pin.modeled, ("fewer rows modeled than pinned (" + std::to_string(pin.modeled) + "): " + line).c_str());
        if (s.used > pin.modeled) {
            // More rows are modeled than when the pin was set: the MAPE is over other rows now, so it is
            // reported, and the pins are to be updated (docs/validation.md).
            QWARN(("coverage grew past its pin (" + std::to_string(pin.modeled) + " rows): update the pins: " + line).c_str());
        } else if (pin.mape_pct >= 0) {
            QVERIFY2(s.mape_pct <= pin.mape_pct, ("MAPE above its pin " + std::to_string(pin.mape_pct) + "%: " + line).c_str());
        }
        if (target && s.used > 0 && s.mape_pct > *target) {
            QWARN(("target missed: " + line).c_str());
        }
    }
    for (const auto& [subset, stats] : report.subsets) {
        if (subset.find(":memory") == std::string::npos) {
            QVERIFY2(pins.count(subset) != 0, ("subset without a pin: " + subset).c_str());
        }
    }
}

} // namespace

class TestValidationPublic : public QObject {
    Q_OBJECT
private slots:
    void old_set_holds_its_pins()
    {
        const auto path = test::validation_data_dir() / "public_runs.json";
        if (!std::filesystem::exists(path)) {
            QSKIP(("public validation set not found at " + path.string() + " (it lives outside the repository)").c_str());
        }
        check_file(path, old_set_pins(), 1579);
    }

    void modern_set_holds_its_pins()
    {
        const auto path = test::validation_data_dir() / "modern_runs.json";
        if (!std::filesystem::exists(path)) {
            QSKIP(("modern validation set not found at " + path.string() + " (it lives outside the repository)").c_str());
        }
        check_file(path, modern_set_pins(), kModernRowsModeled, kModernRowsUnscored);
    }
};

QTEST_APPLESS_MAIN(TestValidationPublic)
#include "tst_validation_public.moc"
