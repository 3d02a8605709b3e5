// SPDX-License-Identifier: MIT
#pragma once
// `vtrain-explorer --screenshot DIR` (hidden): runs the start scenario's sweep, lets the window select
// the balanced front plan, then writes DIR/main-window.png (the whole window), DIR/timeline.png (the
// timeline panel zoomed into the pipeline's fill), DIR/export-pareto.png (the Pareto chart exported
// as for a slide), DIR/export-timeline.png, DIR/memory.png and DIR/compare.png (the balanced plan pinned
// against the fastest), then DIR/optimal-model.png and DIR/shared-cluster.png (the case-study tabs, each
// after its study ran), and quits. Meant for Xvfb, to keep the docs' pictures those of the real program.
#include <QObject>
#include <QString>

namespace vtrain::ui {

class MainWindow;

class ScreenshotSession : public QObject {
    Q_OBJECT
public:
    ScreenshotSession(MainWindow* window, QString directory, QObject* parent = nullptr);

Q_SIGNALS:
    void done(int exitCode);

private:
    void capture();
    void captureCompare();
    void captureCaseStudies();
    void captureOptimalModel();
    void captureCluster();
    bool save(const QString& name, bool ok);

    MainWindow* m_window;
    QString m_dir;
    bool m_captured = false;
    bool m_comparing = false;
    bool m_failed = false;
};

} // namespace vtrain::ui
