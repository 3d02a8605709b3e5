// SPDX-License-Identifier: MIT
#include "screenshot.h"

#include <cstdio>

#include <QDir>
#include <QPixmap>
#include <QTimer>

#include "details_panel.h"
#include "main_window.h"
#include "models/plan_detail_runner.h"
#include "models/plan_table_model.h"
#include "models/sweep_runner.h"
#include "views/cluster_schedule_view.h"
#include "views/compare_view.h"
#include "views/export.h"
#include "views/optimal_model_view.h"
#include "views/theme.h"
#include "views/timeline_view.h"

#include <QTabWidget>

namespace vtrain::ui {

ScreenshotSession::ScreenshotSession(MainWindow* window, QString directory, QObject* parent)
    : QObject(parent), m_window(window), m_dir(std::move(directory))
{
    QDir().mkpath(m_dir);
    // The sweep finishes, the window selects a plan, its simulation arrives: then give the views a moment
    // to paint (queued replots) and capture.
    connect(window->detailRunner(), &PlanDetailRunner::resultReady, this, [this] {
        if (!m_captured) {
            m_captured = true;
            QTimer::singleShot(800, this, &ScreenshotSession::capture);
        } else if (m_comparing) {
            m_comparing = false;
            QTimer::singleShot(300, this, &ScreenshotSession::captureCompare);
        }
    });
    connect(window->detailRunner(), &PlanDetailRunner::failed, this, [this](std::uint64_t, const QString& message) {
        std::fprintf(stderr, "screenshot: the selected plan's simulation failed: %s\n", qPrintable(message));
        Q_EMIT done(1);
    });
    connect(window->sweepRunner(), &SweepRunner::failed, this, [this](std::uint64_t, const QString& message) {
        std::fprintf(stderr, "screenshot: the sweep failed: %s\n", qPrintable(message));
        Q_EMIT done(1);
    });
    connect(window->sweepRunner(), &SweepRunner::finished, this, [this](std::uint64_t, std::shared_ptr<const ExploreResult> result) {
        if (result->feasible == 0) {
            std::fprintf(stderr, "screenshot: the sweep found no feasible plan\n");
            Q_EMIT done(1);
        }
    });
    QTimer::singleShot(300'000, this, [this] {
        if (!m_captured) {
            std::fprintf(stderr, "screenshot: no plan was selected within 5 minutes\n");
            Q_EMIT done(1);
        }
    });
}

bool ScreenshotSession::save(const QString& name, bool ok)
{
    std::fprintf(ok ? stdout : stderr, "%s %s\n", ok ? "wrote" : "could not write", qPrintable(QDir(m_dir).filePath(name)));
    m_failed = m_failed || !ok;
    return ok;
}

void ScreenshotSession::capture()
{
    const QString dir = m_dir;
    save(QStringLiteral("main-window.png"), m_window->grab().save(QDir(dir).filePath(QStringLiteral("main-window.png"))));

    // The timeline as a user looks at it: zoomed into the start of the iteration, where the pipeline
    // fills and the bubbles are.
    TimelineView* timeline = m_window->details()->timeline();
    if (timeline->data().end_s > 0) {
        // End of the warm-up forwards, the fill bubble and the first backward passes.
        timeline->zoomTo(timeline->data().end_s * 0.04, timeline->data().end_s * 0.24);
    }
    QString error;
    save(QStringLiteral("timeline.png"), m_window->details()->grab().save(QDir(dir).filePath(QStringLiteral("timeline.png"))));
    save(QStringLiteral("export-timeline.png"),
         m_window->exportTimeline(QDir(dir).filePath(QStringLiteral("export-timeline.png")), ExportSize{1600, 900, 1.0}, &error));
    m_window->details()->tabs()->setCurrentIndex(1);
    save(QStringLiteral("memory.png"), m_window->details()->grab().save(QDir(dir).filePath(QStringLiteral("memory.png"))));
    m_window->details()->tabs()->setCurrentIndex(0);
    const bool paretoOk = m_window->exportPareto(QDir(dir).filePath(QStringLiteral("export-pareto.png")), ExportSize{1600, 900, 1.0}, &error);
    save(QStringLiteral("export-pareto.png"), paretoOk);
    if (!error.isEmpty()) {
        std::fprintf(stderr, "screenshot: %s\n", qPrintable(error));
    }
    // Last, the comparison: pin this plan, select the fastest (or cheapest) front plan, capture when it is simulated.
    m_window->details()->compare()->pinCurrent();
    const std::vector<int>& front = m_window->planModel()->frontRows();
    const int other = front.empty() ? -1 : (front.front() == m_window->selectedRow() ? front.back() : front.front());
    if (other < 0 || other == m_window->selectedRow()) {
        captureCaseStudies();
        return;
    }
    m_comparing = true;
    m_window->selectPlan(other);
}

void ScreenshotSession::captureCompare()
{
    // The tab's layout (and its scroll bars) settle on the next turns of the event loop: grab after them,
    // not the half-laid-out page.
    m_window->details()->tabs()->setCurrentIndex(2);
    QTimer::singleShot(300, this, [this] {
        save(QStringLiteral("compare.png"), m_window->details()->grab().save(QDir(m_dir).filePath(QStringLiteral("compare.png"))));
        captureCaseStudies();
    });
}

void ScreenshotSession::captureCaseStudies()
{
    // Each case-study tab with the paper's setting: show it, run its study, capture the window once it is done.
    OptimalModelView* view = m_window->optimalModelView();
    connect(view->runner(), &StudyRunner::failed, this, [this](std::uint64_t, const Diagnostics& errors) {
        std::fprintf(stderr, "screenshot: a case study failed: %s\n", errors.empty() ? "" : errors.front().to_string().c_str());
        Q_EMIT done(1);
    });
    connect(
        view->runner(), &OptimalModelRunner::finished, this, [this] { QTimer::singleShot(500, this, &ScreenshotSession::captureOptimalModel); },
        Qt::SingleShotConnection);
    m_window->tabs()->setCurrentWidget(view);
    view->run();
}

void ScreenshotSession::captureOptimalModel()
{
    save(QStringLiteral("optimal-model.png"), m_window->grab().save(QDir(m_dir).filePath(QStringLiteral("optimal-model.png"))));
    ClusterScheduleView* view = m_window->clusterScheduleView();
    connect(view->runner(), &StudyRunner::failed, this, [this](std::uint64_t, const Diagnostics& errors) {
        std::fprintf(stderr, "screenshot: a case study failed: %s\n", errors.empty() ? "" : errors.front().to_string().c_str());
        Q_EMIT done(1);
    });
    connect(
        view->runner(), &ScheduleRunner::finished, this, [this] { QTimer::singleShot(500, this, &ScreenshotSession::captureCluster); },
        Qt::SingleShotConnection);
    m_window->tabs()->setCurrentWidget(view);
    view->run();
}

void ScreenshotSession::captureCluster()
{
    save(QStringLiteral("shared-cluster.png"), m_window->grab().save(QDir(m_dir).filePath(QStringLiteral("shared-cluster.png"))));
    m_window->tabs()->setCurrentIndex(0);
    // Last, the main window in the dark theme (View > Theme > Dark), then back.
    const theme::Theme before = theme::current();
    m_window->setTheme(theme::Theme::Dark, false);
    QTimer::singleShot(600, this, [this, before] {
        save(QStringLiteral("main-window-dark.png"), m_window->grab().save(QDir(m_dir).filePath(QStringLiteral("main-window-dark.png"))));
        m_window->setTheme(before, false);
        Q_EMIT done(m_failed ? 1 : 0);
    });
}

} // namespace vtrain::ui
