// SPDX-License-Identifier: MIT
// Pins the held-out-by-source figures (issue 28 item 1): every row of both public files predicted by the
// calibration refitted without the row's source (validate_grouped, as `vtrain validate FILE --cv source`),
// each subset's MAPE held at or below its pin and no row off by 2x beyond the pinned count, so a change that
// makes predictions worse on sources no fit saw fails. The pins are session 36's figures (docs/validation.md)
// plus 0.2 points for the refits' floating-point order; lower them when the model improves. Skipped when the
// data is absent (it lives outside the repository). The wall time of each run is printed, not asserted
// (scripts/grouped-validation.sh reports it too).
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "validation_data.h"
#include "vtrain/grouped_validation.h"

using namespace vtrain;

namespace {

struct HeldOutPin {
    double mape_pct = 0;
    int off_by_2x = 0;
};

const std::map<std::string, HeldOutPin>& modern_pins()
{
    static const std::map<std::string, HeldOutPin> pins{
        {"deepseek_v3", {10.8, 0}},                  // session 45: H800 takes H100's software terms (11.50 -> 10.66)
        {"mcore_dsv3_gb200_optimization", {7.4, 0}}, // session 44: its ladder's CUDA graphs mapped
        {"megatron_bridge_dense_b200", {5.2, 0}},
        {"megatron_bridge_dense_gb200", {8.1, 0}}, // session 45: GB200's FP8 prior from cuBLASLt 8192^3 (13.35 -> 8.01)
        {"megatron_bridge_dense_h100", {5.3, 0}},
        {"megatron_bridge_moe_b200", {21.4, 0}}, // session 43: the CPU time per operator's prior from TE's measurement
        // Session 40: the 26.06.01 GPT-OSS row its source footnotes as a regression is not scored. Session 44: the two
        // 25.09 token-drop Qwen3-235B rows run NeMo's per-layer graphs of whole layers (-55% -> within 2x; docs/validation.md).
        {"megatron_bridge_moe_gb200", {19.4, 0}},
        {"megatron_bridge_moe_h100", {18.0, 0}},
        {"torchtitan_asynctp_h100", {21.9, 0}},
        {"torchtitan_docs_2024", {9.7, 0}},
        {"torchtitan_h100", {26.9, 0}},
        // Peak memory is not fitted, so held out = in sample (session 37: 7.21%; session 38, loss_parallel: 5.87%;
        // session 40, eager PyTorch's saved fp32 norm inputs and silu output: 5.73%; PyTorch's interleaved warm-up:
        // 5.22%; session 45, PyTorch ring attention's backward buffers: 4.23%).
        {"torchtitan_h100:memory", {4.3, 0}},
    };
    return pins;
}

const std::map<std::string, HeldOutPin>& old_set_pins()
{
    // vtrain_single_node: the other sources' large models do not identify the small models' host overhead,
    // so without its own rows the fit keeps it near its documented prior (36 us x/÷ 3 per operator since
    // session 45, the x86 DGX hosts' Megatron module call; 20 us before) against the 67 us the stack shows:
    // predictions 25% too fast (30% at 20 us, 414 rows off by 2x). Its pin records that so that it cannot grow.
    static const std::map<std::string, HeldOutPin> pins{
        {"korthikanti_per_layer", {2.0, 0}}, {"korthikanti_recompute", {1.9, 0}}, {"mtnlg", {12.7, 0}},
        {"sc21_weak_scaling", {4.3, 0}},     {"vtrain_multi_node", {8.1, 1}},     {"vtrain_single_node", {25.4, 41}},
    };
    return pins;
}

// The honest range (issue 28 item 5): the share of held-out rows whose measured value lies inside it may not
// fall below `in_range_pin`, and it may not be bought by widening: the median width (high / low) of the
// ranges may not grow beyond `width_pin`.
struct RangePin {
    double in_range_share = 0;
    double median_width = 0;
};

void check_held_out(const std::string& file, const std::map<std::string, HeldOutPin>& pins, double overall_pin, RangePin range_pin)
{
    const auto path = test::validation_data_dir() / file;
    if (!std::filesystem::exists(path)) {
        QSKIP((file + " not found at " + path.string() + " (it lives outside the repository)").c_str());
    }
    const auto rows = load_runs(path);
    QVERIFY2(rows.ok(), rows.first_error().c_str());
    GroupedValidationOptions grouped;
    grouped.by = CvGrouping::Source;
    const GroupedValidationReport held = validate_grouped(*rows, test::shipped_profiles_for(*rows), ValidationOptions{}, grouped);
    qInfo("%s held out by source: %zu refits, %.0f s wall", file.c_str(), held.fits.size(), held.seconds);
    QVERIFY(!held.fits.empty());
    for (const auto& [subset, pin] : pins) {
        const auto it = held.report.subsets.find(subset);
        QVERIFY2(it != held.report.subsets.end(), subset.c_str());
        const SubsetStats& s = it->second;
        const std::string line = subset + ": " + std::to_string(s.used) + " rows, held-out MAPE " + std::to_string(s.mape_pct) + "%, " +
                                 std::to_string(s.off_by_2x) + " off by 2x";
        qInfo("%s", line.c_str());
        QVERIFY2(s.used > 0, line.c_str());
        QVERIFY2(s.mape_pct <= pin.mape_pct, ("held-out MAPE above its pin " + std::to_string(pin.mape_pct) + "%: " + line).c_str());
        QVERIFY2(s.off_by_2x <= pin.off_by_2x, ("more rows off by 2x than the pin " + std::to_string(pin.off_by_2x) + ": " + line).c_str());
    }
    qInfo("all scored rows: held-out MAPE %.2f%% (pin %.1f%%)", held.report.overall.mape_pct, overall_pin);
    QVERIFY(held.report.overall.mape_pct <= overall_pin);
    int with_range = 0, inside = 0;
    std::vector<double> widths;
    for (const RowResult& r : held.report.rows) {
        if (r.in_range && r.range_low && r.range_high && *r.range_low > 0 && r.unscored_reason.empty()) {
            ++with_range;
            inside += *r.in_range ? 1 : 0;
            widths.push_back(*r.range_high / *r.range_low);
        }
    }
    QVERIFY(with_range > 0);
    std::sort(widths.begin(), widths.end());
    const double share = static_cast<double>(inside) / with_range;
    const double median_width = widths[widths.size() / 2];
    qInfo("in range: %d of %d rows (%.1f%%, pin %.0f%%); median range width x%.3f (pin x%.2f)", inside, with_range, 100 * share,
          100 * range_pin.in_range_share, median_width, range_pin.median_width);
    QVERIFY2(share >= range_pin.in_range_share, "fewer held-out rows inside their range than pinned");
    QVERIFY2(median_width <= range_pin.median_width, "the ranges widened beyond their pinned median width");
}

} // namespace

class TestValidationHeldOut : public QObject {
    Q_OBJECT
private slots:
    // Range pins: session 39's figures, 95.4% inside at a median width of x2.23 (modern) and 93.9% at x1.68
    // (old), since the ranges span the host CPU terms' prior; before, 91.9% at x2.01 and 54.1% at x1.47. Session 43:
    // the CPU priors from Transformer Engine's measurement make more held-out rows host-bound, so more ranges span
    // the x/÷ 3 width of those terms: x2.34 at 96.9% inside. Session 45: the A100 CPU prior 20 -> 36 us puts the
    // held-out single-node rows' range at [12, 108] us per operator instead of [6.7, 60]; its upper end now lies
    // past the stack's 67 us, so the host-bound rows' ranges widen (old set x1.68 -> x2.56) at the same share
    // inside (93.9% -> 93.6%), while their centre moves from 30% to 25% too fast. The shipped ranges (the fit's
    // 67 us x/÷ 3) do not change.
    void modern_set_held_out_by_source_holds_its_pins() { check_held_out("modern_runs.json", modern_pins(), 16.3, {0.94, 2.35}); }
    void old_set_held_out_by_source_holds_its_pins() { check_held_out("public_runs.json", old_set_pins(), 23.8, {0.93, 2.57}); }
};

QTEST_APPLESS_MAIN(TestValidationHeldOut)
#include "tst_validation_held_out.moc"
