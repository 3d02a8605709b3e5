// SPDX-License-Identifier: MIT
#pragma once
// Memory of one GPU per pipeline stage as stacked bars (weights, gradients, optimizer states, activations,
// working buffers) against the usable capacity line: which stage runs out first, and of what. Where the
// core's breakdown has the routed experts' share of the model state (StageMemory::expert_*_bytes), expert
// weights and expert gradients + optimizer states are bars of their own (a MoE model's memory is mostly
// experts, sharded over ep x etp rather than tp x pp).
#include <memory>

#include <QWidget>

class QCustomPlot;
class QCPBars;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;

namespace vtrain {
struct SimulationResult;
}

namespace vtrain::ui {

class MemoryView : public QWidget {
    Q_OBJECT
public:
    explicit MemoryView(QWidget* parent = nullptr);

    void setResult(std::shared_ptr<const SimulationResult> result);
    void clear();
    QCustomPlot* customPlot() const { return m_plot; }
    int stageCount() const;
    // The tooltip of a stage's bar: each part in GiB and its share, the total against the capacity.
    QString describeStage(int stage) const;
    // The stage whose bar is under `pos` (customPlot() coordinates), or -1.
    int stageAt(const QPoint& pos) const;
    // Names of the stacked parts, bottom first.
    static QStringList partNames();

protected:
    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    std::vector<QCPBars*> m_parts;
    QCPItemStraightLine* m_capacity = nullptr;
    QCPItemText* m_capacityLabel = nullptr;
    std::shared_ptr<const SimulationResult> m_result;
};

} // namespace vtrain::ui
