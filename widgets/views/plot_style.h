// SPDX-License-Identifier: MIT
#pragma once
// Shared look of the charts: fonts sized to stay readable when an export lands on a slide, task-kind
// colours of the timeline, and palette-aware axis colours (re-applied on QEvent::PaletteChange). Category
// colours are keyed to values in category_palette.h.
#include <QColor>
#include <QFont>
#include <QPalette>

#include "vtrain/simulation_result.h"

class QCustomPlot;

namespace vtrain::ui::plot_style {

QFont titleFont();
QFont labelFont();
QFont tickFont();

QColor taskColor(TaskKind kind);
QString taskShortName(TaskKind kind); // "F", "B", "R", ...
QString taskName(TaskKind kind);      // "forward", "backward", ...
QColor bubbleColor();
QColor tensorCommColor();
QColor expertCommColor();  // expert all-to-all (dispatch/combine)
QColor contextCommColor(); // context-parallel exchange

void applyPalette(QCustomPlot* plot, const QPalette& palette);

} // namespace vtrain::ui::plot_style
