// SPDX-License-Identifier: MIT
// The sweep runner: a sweep completes off the UI thread and streams every feasible row; the latest job
// wins (a superseded sweep never delivers); cancelling stops a long sweep with a consistent result; and
// the UI thread keeps turning while a sweep of a million plans runs. The two other background runners
// (plan detail, case study) share its worker hand-off and are checked here too, so that scripts/tsan.sh
// runs all three under ThreadSanitizer.
#include <QElapsedTimer>
#include <QtTest>

#include "gui_test_support.h"
#include "models/optimal_model_runner.h"
#include "models/plan_detail_runner.h"
#include "models/profile_catalog.h"
#include "models/sweep_runner.h"

using namespace vtrain;
using namespace vtrain::ui;

Q_DECLARE_METATYPE(std::shared_ptr<const vtrain::ExploreResult>)
Q_DECLARE_METATYPE(std::shared_ptr<const vtrain::SimulationResult>)
Q_DECLARE_METATYPE(std::shared_ptr<const vtrain::OptimalModelResult>)

class TestSweepRunner : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private:
    std::map<std::string, GpuProfile> profilesFor(const Scenario& s)
    {
        QString error;
        auto profiles = m_catalog.profilesFor(s, error);
        if (profiles.empty()) {
            qWarning("profiles: %s", qPrintable(error));
        }
        return profiles;
    }
    ProfileCatalog m_catalog;

private Q_SLOTS:
    void initTestCase()
    {
        qRegisterMetaType<std::shared_ptr<const ExploreResult>>();
        qRegisterMetaType<std::shared_ptr<const SimulationResult>>();
        qRegisterMetaType<std::shared_ptr<const OptimalModelResult>>();
        QVERIFY2(!m_catalog.ids().isEmpty(), "no GPU profiles found (VTRAIN_PROFILE_PATH)");
    }

    void sweepCompletesAndStreamsRows()
    {
        SweepRunner runner;
        QSignalSpy finished(&runner, &SweepRunner::finished);
        std::size_t streamed = 0;
        connect(&runner, &SweepRunner::rowsArrived, this, [&](const std::vector<PlanRow>& rows) { streamed += rows.size(); });
        const Scenario s = test::smallScenario();
        const std::uint64_t job = runner.start(s, profilesFor(s));
        QCOMPARE(runner.state(), SweepRunner::State::Running);
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).value<std::uint64_t>(), job);
        const auto result = runner.lastResult();
        QVERIFY(result);
        QCOMPARE(result->total, std::uint64_t(16));
        QVERIFY(result->feasible > 0);
        QCOMPARE(streamed, std::size_t(result->feasible)); // every feasible row reached the UI thread
        QVERIFY(!result->front.empty());
        QCOMPARE(runner.state(), SweepRunner::State::Finished);
        QCOMPARE(runner.progress().done, result->total);
    }

    void latestJobWins()
    {
        SweepRunner runner;
        QSignalSpy finished(&runner, &SweepRunner::finished);
        std::vector<std::uint64_t> rowJobs;
        const Scenario big = test::bigScenario();
        const Scenario small = test::smallScenario();
        runner.start(big, profilesFor(big));
        const std::uint64_t second = runner.start(small, profilesFor(small));
        QVERIFY(finished.wait(60000));
        QTest::qWait(300); // a stale delivery would come now
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).value<std::uint64_t>(), second);
        QCOMPARE(runner.lastResult()->total, std::uint64_t(16)); // the small sweep's result, not the big one's
    }

    void cancelStopsALongSweep()
    {
        SweepRunner runner;
        runner.setThreads(1);
        QSignalSpy finished(&runner, &SweepRunner::finished);
        QSignalSpy progress(&runner, &SweepRunner::progressChanged);
        std::size_t streamed = 0;
        connect(&runner, &SweepRunner::rowsArrived, this, [&](const std::vector<PlanRow>& rows) { streamed += rows.size(); });
        const Scenario s = test::hugeScenario();
        runner.start(s, profilesFor(s));
        // Let it get going, then cancel; the UI thread's timers keep firing meanwhile (progress ticks).
        QTRY_VERIFY_WITH_TIMEOUT(runner.progress().done > 0, 20000);
        runner.cancel();
        QCOMPARE(runner.state(), SweepRunner::State::Cancelling);
        QVERIFY(finished.wait(30000));
        const auto result = runner.lastResult();
        QVERIFY(result->cancelled);
        QVERIFY(result->evaluated < result->total);
        QCOMPARE(streamed, std::size_t(result->feasible)); // what was found before the cancel is all delivered
        QCOMPARE(runner.state(), SweepRunner::State::Cancelled);
        QVERIFY(progress.count() >= 1);
    }

    void uiStaysResponsiveDuringAMillionPlans()
    {
        SweepRunner runner;
        const Scenario s = test::bigScenario();
        QSignalSpy finished(&runner, &SweepRunner::finished);
        runner.start(s, profilesFor(s));
        // Measure the event loop's latency with a 20 ms timer while the sweep runs.
        QElapsedTimer clock;
        clock.start();
        qint64 last = 0;
        qint64 worstGap = 0;
        int ticks = 0;
        QTimer timer;
        connect(&timer, &QTimer::timeout, this, [&] {
            const qint64 now = clock.elapsed();
            worstGap = std::max(worstGap, now - last);
            last = now;
            ++ticks;
        });
        timer.start(20);
        QVERIFY(finished.wait(120000));
        timer.stop();
        const auto result = runner.lastResult();
        QVERIFY(result->total > 1'000'000);
        qInfo("%llu plans in %.2f s; %d UI ticks, worst gap %lld ms", static_cast<unsigned long long>(result->total), result->elapsed_s, ticks,
              worstGap);
        QVERIFY2(worstGap < 500, qPrintable(QStringLiteral("UI blocked for %1 ms").arg(worstGap)));
    }

    void debouncedEditsStartOneSweep()
    {
        SweepRunner runner;
        QSignalSpy started(&runner, &SweepRunner::started);
        QSignalSpy finished(&runner, &SweepRunner::finished);
        const Scenario s = test::smallScenario();
        for (int i = 0; i < 5; ++i) {
            runner.schedule(s, profilesFor(s), 100); // five quick edits
        }
        QVERIFY(finished.wait(30000));
        QCOMPARE(started.count(), 1);
    }

    // #19 stress: edits arrive every 1-4 ms, half as immediate starts, half debounced, 300 in all. Each
    // edit sweeps its own GPU count, so every row names the job it came from: rows shown after a job
    // started are that job's only, every finished signal is the latest job's, the last edit's result is
    // what stays, and nothing crashes.
    void editsEveryFewMillisecondsLatestWins()
    {
        SweepRunner runner;
        constexpr int kEdits = 300;
        std::vector<Scenario> edits;
        for (int i = 0; i < kEdits; ++i) {
            Scenario s = test::wideScenario();
            s.search->num_gpus = {8 * (1 + i % 64)};
            edits.push_back(s);
        }
        const auto profiles = profilesFor(edits.front());
        int shownGpus = -1; // the GPU count of the job whose rows may show now
        int started = 0;
        int staleRows = 0;
        int staleFinishes = 0;
        std::uint64_t lastStarted = 0;
        std::vector<std::uint64_t> finishedJobs;
        connect(&runner, &SweepRunner::started, this, [&](std::uint64_t job, const Scenario& s) {
            ++started;
            lastStarted = job;
            shownGpus = s.search->num_gpus.front();
        });
        connect(&runner, &SweepRunner::rowsArrived, this, [&](const std::vector<PlanRow>& rows) {
            for (const PlanRow& r : rows) {
                staleRows += r.num_gpus != shownGpus ? 1 : 0;
            }
        });
        connect(&runner, &SweepRunner::finished, this, [&](std::uint64_t job, std::shared_ptr<const ExploreResult>) {
            finishedJobs.push_back(job);
            staleFinishes += job != lastStarted || job != runner.currentJob() ? 1 : 0;
        });
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < kEdits; ++i) {
            if (i % 2 == 0) {
                runner.start(edits[std::size_t(i)], profiles);
            } else {
                runner.schedule(edits[std::size_t(i)], profiles, 2);
            }
            QTest::qWait(1 + i % 4);
        }
        // The last edit was a debounced one: it starts, finishes, and is what stays.
        // (Wait for its start too: the sweep before it may finish before the debounce timer fires.)
        const int lastGpus = edits.back().search->num_gpus.front();
        QTRY_VERIFY_WITH_TIMEOUT(shownGpus == lastGpus && !runner.isRunning() && !finishedJobs.empty() && finishedJobs.back() == lastStarted, 120000);
        QCOMPARE(staleRows, 0);
        QCOMPARE(staleFinishes, 0);
        QVERIFY(started >= kEdits / 2);
        QCOMPARE(shownGpus, edits.back().search->num_gpus.front());
        const auto result = runner.lastResult();
        QVERIFY(result && !result->cancelled);
        for (const PlanRow& r : result->front) {
            QCOMPARE(r.num_gpus, shownGpus);
        }
        qInfo("%d edits in %lld ms: %d sweeps started, %d finished signals (latest job only)", kEdits, static_cast<long long>(clock.elapsed()),
              started, int(finishedJobs.size()));
    }

    // Three plan selections in a row: only the last one's timeline is delivered, and it is the one a
    // direct simulate() of that plan gives.
    void planDetailLatestRequestWins()
    {
        PlanDetailRunner runner;
        QSignalSpy ready(&runner, &PlanDetailRunner::resultReady);
        QSignalSpy failed(&runner, &PlanDetailRunner::failed);
        const Scenario s = test::smallScenario();
        const auto profiles = profilesFor(s);
        const auto profile = std::make_shared<const GpuProfile>(profiles.at(s.cluster.gpu));
        std::uint64_t last = 0;
        Plan plan = s.plan.value_or(Plan{});
        for (int micro : {1, 2, 4}) {
            plan.micro_batch = micro;
            last = runner.request(s, plan, s.cluster.gpu, s.cluster.num_gpus, profile);
        }
        QVERIFY(runner.isBusy());
        QTRY_VERIFY_WITH_TIMEOUT(!runner.isBusy(), 30000);
        QTest::qWait(200); // a stale delivery would come now
        QCOMPARE(failed.count(), 0);
        QCOMPARE(ready.count(), 1);
        QCOMPARE(ready.at(0).at(0).value<std::uint64_t>(), last);
        SimulationOptions options;
        options.timeline = true;
        const auto direct = simulate(s, plan, *profile, options);
        QVERIFY(direct.ok());
        QCOMPARE(runner.lastResult()->iteration_time_s, direct->iteration_time_s);
        QCOMPARE(runner.lastResult()->timeline.size(), direct->timeline.size());
    }

    // The case-study runner: a study superseded right after its start never delivers; the latest one
    // does, with its own request.
    void studyLatestJobWins()
    {
        OptimalModelRunner runner;
        runner.setThreads(1);
        QSignalSpy finished(&runner, &OptimalModelRunner::finished);
        const auto profile = std::make_shared<const GpuProfile>(profilesFor(test::smallScenario()).begin()->second);
        OptimalModelRequest first;
        first.gpu = profile->id;
        first.num_gpus = 1024;
        first.budget_days = 30;
        OptimalModelRequest second = first;
        second.num_gpus = 8;
        runner.start(first, profile);
        const std::uint64_t latest = runner.start(second, profile);
        QVERIFY(finished.wait(60000));
        QTest::qWait(200); // a stale delivery would come now
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).value<std::uint64_t>(), latest);
        QCOMPARE(runner.lastResult()->request.num_gpus, 8);
        QVERIFY(!runner.lastResult()->candidates.empty());
        QCOMPARE(runner.state(), StudyRunner::State::Finished);
    }
};

QTEST_MAIN(TestSweepRunner)
#include "tst_sweep_runner.moc"
