// SPDX-License-Identifier: MIT
#pragma once
// The selected plan in detail: its pipeline timeline, its memory per stage, and the comparison with a
// pinned plan, as tabs under one header that names the plan.
#include <memory>
#include <optional>

#include <QWidget>

#include "vtrain/scenario.h"

class QLabel;
class QLineEdit;
class QTabWidget;
class QToolButton;

namespace vtrain {
struct SimulationResult;
}

namespace vtrain::ui {

class CompareView;
class MemoryView;
class TimelineView;

class DetailsPanel : public QWidget {
    Q_OBJECT
public:
    explicit DetailsPanel(QWidget* parent = nullptr);

    // The selected plan; `asCompareB` false keeps Compare's B (a plan restored after a restart) as it is.
    void setResult(std::shared_ptr<const SimulationResult> result, bool asCompareB = true);
    void setBusy(const QString& message);           // "simulating …" while the worker runs
    void clear(const QString& message = QString()); // nothing selected; `message` says why
    // Another workload is shown: the plan, its search and task panel go (Compare's pinned A stays).
    void resetForNewScenario(const QString& message);
    bool hasPlan() const;
    // A banner when the shown plan belongs to other inputs than the editor's; empty hides it.
    void setStaleNote(const QString& note);
    QString staleNote() const;
    // The selected plan's scenario (plan, GPU, GPU count, node size) for "Launch flags…".
    void setLaunchScenario(const Scenario& scenario);
    void showLaunchFlags();

    TimelineView* timeline() const { return m_timeline; }
    MemoryView* memory() const { return m_memory; }
    CompareView* compare() const { return m_compare; }
    QTabWidget* tabs() const { return m_tabs; }
    QToolButton* launchButton() const { return m_launch; }
    QString headline() const;
    QLineEdit* searchBox() const { return m_search; }
    QString taskPanelText() const; // the side panel: the clicked task and the time selection
    QSize sizeHint() const override { return {900, 380}; }

private:
    void updateTaskPanel();

    QLabel* m_header = nullptr;
    QLabel* m_staleNote = nullptr;
    QLineEdit* m_search = nullptr;
    QLabel* m_matches = nullptr;
    QLabel* m_taskPanel = nullptr;
    QTabWidget* m_tabs = nullptr;
    TimelineView* m_timeline = nullptr;
    MemoryView* m_memory = nullptr;
    CompareView* m_compare = nullptr;
    QToolButton* m_launch = nullptr;
    std::optional<Scenario> m_launchScenario;
};

} // namespace vtrain::ui
