// SPDX-License-Identifier: MIT
#include "views/plot_style.h"

#include <qcustomplot.h>

namespace vtrain::ui::plot_style {

QFont titleFont()
{
    QFont f;
    f.setPointSizeF(f.pointSizeF() * 1.25);
    f.setBold(true);
    return f;
}

QFont labelFont()
{
    QFont f;
    f.setPointSizeF(f.pointSizeF() * 1.05);
    return f;
}

QFont tickFont()
{
    return QFont();
}

QColor taskColor(TaskKind kind)
{
    switch (kind) {
    case TaskKind::Forward: return QColor(0x4e, 0x79, 0xa7);
    case TaskKind::Backward: return QColor(0xf2, 0x8e, 0x2b);
    case TaskKind::Recompute: return QColor(0x9d, 0xc3, 0xe6);
    case TaskKind::SendForward: return QColor(0x59, 0xa1, 0x4f);
    case TaskKind::SendBackward: return QColor(0x8c, 0xd1, 0x7d);
    case TaskKind::GradReduce: return QColor(0xb0, 0x7a, 0xa1);
    case TaskKind::EmbeddingSync: return QColor(0xd4, 0xa6, 0xc8);
    case TaskKind::OptimizerStep: return QColor(0xe1, 0x57, 0x59);
    case TaskKind::ParamGather: return QColor(0x9c, 0x75, 0x5f);
    case TaskKind::FsdpGather: return QColor(0xbc, 0x95, 0x7f);
    case TaskKind::FsdpReduceScatter: return QColor(0x90, 0x6a, 0x86);
    }
    return Qt::gray;
}

QString taskShortName(TaskKind kind)
{
    switch (kind) {
    case TaskKind::Forward: return QStringLiteral("F");
    case TaskKind::Backward: return QStringLiteral("B");
    case TaskKind::Recompute: return QStringLiteral("R");
    case TaskKind::SendForward: return QStringLiteral("→");
    case TaskKind::SendBackward: return QStringLiteral("←");
    case TaskKind::GradReduce: return QStringLiteral("AR");
    case TaskKind::EmbeddingSync: return QStringLiteral("E");
    case TaskKind::OptimizerStep: return QStringLiteral("Opt");
    case TaskKind::ParamGather: return QStringLiteral("AG");
    case TaskKind::FsdpGather: return QStringLiteral("AG");
    case TaskKind::FsdpReduceScatter: return QStringLiteral("RS");
    }
    return {};
}

QString taskName(TaskKind kind)
{
    switch (kind) {
    case TaskKind::Forward: return QStringLiteral("forward");
    case TaskKind::Backward: return QStringLiteral("backward");
    case TaskKind::Recompute: return QStringLiteral("recompute");
    case TaskKind::SendForward: return QStringLiteral("send activations");
    case TaskKind::SendBackward: return QStringLiteral("send gradients");
    case TaskKind::GradReduce: return QStringLiteral("gradient reduce");
    case TaskKind::EmbeddingSync: return QStringLiteral("embedding sync");
    case TaskKind::OptimizerStep: return QStringLiteral("optimizer step");
    case TaskKind::ParamGather: return QStringLiteral("parameter gather");
    case TaskKind::FsdpGather: return QStringLiteral("FSDP parameter all-gather");
    case TaskKind::FsdpReduceScatter: return QStringLiteral("FSDP gradient reduce-scatter");
    }
    return {};
}

QColor tensorCommColor()
{
    return QColor(0x76, 0xb7, 0xb2);
}

// Distinct from the task colours and from TP comm's teal, readable on light and dark backgrounds.
QColor expertCommColor()
{
    return QColor(0x8a, 0x5c, 0xd6);
}

QColor contextCommColor()
{
    return QColor(0xd4, 0xb0, 0x3a);
}

QColor bubbleColor()
{
    return QColor(0xd6, 0x27, 0x28, 60);
}

void applyPalette(QCustomPlot* plot, const QPalette& palette)
{
    const QColor text = palette.color(QPalette::WindowText);
    const QColor base = palette.color(QPalette::Base);
    QColor grid = text;
    grid.setAlpha(40);
    plot->setBackground(base);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis, plot->xAxis2, plot->yAxis2}) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setLabelColor(text);
        axis->setTickLabelColor(text);
        axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    }
    // Legends follow the palette too (a white legend box with light text was unreadable in dark mode).
    plot->legend->setTextColor(text);
    if (plot->legend->brush().style() != Qt::NoBrush) {
        QColor box = base;
        box.setAlpha(220);
        plot->legend->setBrush(box);
    }
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
        if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i))) {
            title->setTextColor(text);
        }
    }
}

} // namespace vtrain::ui::plot_style
