// SPDX-License-Identifier: MIT
#pragma once
// Two plans side by side: A (pinned) and B (the current selection). A summary of where an iteration's
// seconds go and the memory peak, then the same stage by stage, with B's difference to A in absolute
// terms and in percent; and both timelines stacked on one time axis.
#include <memory>

#include <QWidget>

class QLabel;
class QPushButton;
class QTabWidget;
class QTableWidget;

namespace vtrain {
struct SimulationResult;
}

namespace vtrain::ui {

class TimelineView;

// "+1.20 s (+6.1 %)": B minus A with the change relative to A; "—" when A is zero.
QString deltaText(double a, double b, QString (*format)(double));

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);

    void setCurrent(std::shared_ptr<const SimulationResult> result); // B
    void setPinned(std::shared_ptr<const SimulationResult> result);  // A
    std::shared_ptr<const SimulationResult> pinned() const { return m_a; }
    std::shared_ptr<const SimulationResult> current() const { return m_b; }
    int stageRowCount() const;
    // A banner over the comparison when A and B train different workloads (workload.h); empty hides it.
    void setWorkloadNote(const QString& note);
    QString workloadNote() const;

    // A and B on one time axis, A above B: zooming or panning one moves the other.
    TimelineView* timelineA() const { return m_timelineA; }
    TimelineView* timelineB() const { return m_timelineB; }
    QTableWidget* summaryTable() const { return m_summary; }

public Q_SLOTS:
    void pinCurrent();
    void swap();

Q_SIGNALS:
    void pinnedChanged(std::shared_ptr<const vtrain::SimulationResult> a);
    void currentChanged(std::shared_ptr<const vtrain::SimulationResult> b);

private:
    void refresh();
    void fillSummary();
    void fillStages();

    std::shared_ptr<const SimulationResult> m_a;
    std::shared_ptr<const SimulationResult> m_b;
    QLabel* m_labelA = nullptr;
    QLabel* m_labelB = nullptr;
    QPushButton* m_pin = nullptr;
    QPushButton* m_swap = nullptr;
    QTableWidget* m_summary = nullptr;
    QTableWidget* m_stages = nullptr;
    TimelineView* m_timelineA = nullptr;
    TimelineView* m_timelineB = nullptr;
    QTabWidget* m_pages = nullptr; // Numbers, Timelines on one axis
    QLabel* m_workloadNote = nullptr;
    bool m_syncing = false;
};

} // namespace vtrain::ui
