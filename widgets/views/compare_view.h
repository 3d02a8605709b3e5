// SPDX-License-Identifier: MIT
#pragma once
// Two plans side by side: A (pinned) and B (the current selection). A summary of where an iteration's
// seconds go and the memory peak, then the same stage by stage, with B's difference to A.
#include <memory>

#include <QWidget>

class QLabel;
class QPushButton;
class QTableWidget;

namespace vtrain {
struct SimulationResult;
}

namespace vtrain::ui {

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);

    void setCurrent(std::shared_ptr<const SimulationResult> result); // B
    void setPinned(std::shared_ptr<const SimulationResult> result);  // A
    std::shared_ptr<const SimulationResult> pinned() const { return m_a; }
    std::shared_ptr<const SimulationResult> current() const { return m_b; }
    int stageRowCount() const;

public Q_SLOTS:
    void pinCurrent();
    void swap();

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
};

} // namespace vtrain::ui
