// SPDX-License-Identifier: MIT
// CI guard on prediction fidelity: validates the shipped profiles on the public set
// (../shared/validation/public_runs.json, outside the repository) and fails when a subset's MAPE rises
// above its target. Skipped when the data is absent.
//
// Three subsets miss their target with the current model (docs/validation.md says why); for them the
// test guards the error reached instead (plus a little room), so that it cannot silently get worse, and
// warns. Lower a ceiling (or drop it) when the model improves.
#include <QtTest>

#include <filesystem>
#include <map>

#include "test_support.h"
#include "vtrain/validation.h"

using namespace vtrain;

namespace {

// Subsets whose target is not met yet: the MAPE (percent) they must not exceed.
const std::map<std::string, double>& known_misses()
{
    static const std::map<std::string, double> ceilings{{"vtrain_multi_node", 7.6}, {"vtrain_single_node", 7.3}, {"mtnlg", 23.0}};
    return ceilings;
}

} // namespace

class TestValidationPublic : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (!std::filesystem::exists(VTRAIN_VALIDATION_FILE)) {
            QSKIP("public validation set not found at " VTRAIN_VALIDATION_FILE " (it lives outside the repository)");
        }
    }

    void subsets_meet_their_mape_targets()
    {
        const auto rows = load_runs(VTRAIN_VALIDATION_FILE);
        QVERIFY2(rows.ok(), rows.first_error().c_str());
        std::map<std::string, GpuProfile> profiles;
        for (const char* id : {"a100-sxm4-80gb", "a100-sxm4-40gb", "h100-sxm5-80gb", "h200-sxm-141gb"}) {
            profiles.emplace(id, test::shipped_profile(id));
        }
        const ValidationReport report = validate_runs(*rows, profiles);

        // No row may disappear: every row is either predicted or skipped with a reason.
        std::size_t time_rows = 0;
        for (const auto& r : report.rows) {
            if (!r.memory) {
                ++time_rows;
                QVERIFY2(r.error_pct.has_value() != !r.skipped_reason.empty(), r.id.c_str());
            }
        }
        QCOMPARE(time_rows, rows->size());

        for (const auto& [subset, target] : public_set_targets()) {
            const auto it = report.subsets.find(subset);
            QVERIFY2(it != report.subsets.end(), subset.c_str());
            const SubsetStats& s = it->second;
            QVERIFY2(s.used > 0, subset.c_str());
            const std::string line = subset + ": MAPE " + std::to_string(s.mape_pct) + "% over " + std::to_string(s.used) + " rows, target " +
                                     std::to_string(target) + "%";
            qInfo("%s", line.c_str());
            const auto miss = known_misses().find(subset);
            if (miss != known_misses().end() && s.mape_pct > target) {
                QWARN(("known miss, guarded at " + std::to_string(miss->second) + "%: " + line).c_str());
                QVERIFY2(s.mape_pct <= miss->second, line.c_str());
            } else {
                QVERIFY2(s.mape_pct <= target, line.c_str());
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestValidationPublic)
#include "tst_validation_public.moc"
