// SPDX-License-Identifier: MIT
#pragma once
// Run / Cancel and the sweep's progress: plans done of total, rate and time left, or how it ended.
#include <QWidget>

#include "models/sweep_runner.h"

class QLabel;
class QProgressBar;
class QToolButton;
class QCheckBox;

namespace vtrain::ui {

class SweepBar : public QWidget {
    Q_OBJECT
public:
    explicit SweepBar(QWidget* parent = nullptr);

    void setRunner(SweepRunner* runner);
    void setRunEnabled(bool enabled); // false while the scenario has refused entries
    bool autoRun() const;
    void setAutoRun(bool on);
    QString statusText() const;
    QProgressBar* progressBar() const { return m_progress; }

Q_SIGNALS:
    void runRequested();
    void cancelRequested();
    void autoRunChanged(bool on);

private:
    void onProgress(const SweepProgress& progress);
    void onState(SweepRunner::State state);
    void onFinished(std::shared_ptr<const ExploreResult> result);

    SweepRunner* m_runner = nullptr;
    QToolButton* m_run = nullptr;
    QToolButton* m_cancel = nullptr;
    QCheckBox* m_auto = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    bool m_runEnabled = true;
};

} // namespace vtrain::ui
