// SPDX-License-Identifier: MIT
#pragma once
// Run / Cancel / Export and a case study's progress (steps of the study and plans of the current step),
// then how it ended. The owning view writes the finished line (it knows the result's type).
#include <QWidget>

#include "models/study_runner.h"

class QLabel;
class QProgressBar;
class QToolButton;

namespace vtrain::ui {

class StudyBar : public QWidget {
    Q_OBJECT
public:
    // `stepName` counts the study's steps in the progress text ("models", "throughput curves").
    StudyBar(const QString& stepName, QWidget* parent = nullptr);

    void setRunner(StudyRunner* runner);
    void setStatus(const QString& text);
    QString statusText() const;
    QProgressBar* progressBar() const { return m_progress; }
    QToolButton* runButton() const { return m_run; }
    QToolButton* cancelButton() const { return m_cancel; }
    QToolButton* exportButton() const { return m_export; }

Q_SIGNALS:
    void runRequested();
    void exportRequested();

private:
    void onProgress(const StudyProgress& progress);
    void onState(StudyRunner::State state);

    QString m_stepName;
    StudyRunner* m_runner = nullptr;
    QToolButton* m_run = nullptr;
    QToolButton* m_cancel = nullptr;
    QToolButton* m_export = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
};

} // namespace vtrain::ui
