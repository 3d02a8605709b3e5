// SPDX-License-Identifier: MIT
#pragma once
// Image export of the charts and the timeline to PNG, SVG and PDF at a chosen size and resolution, the
// format picked from the file's suffix. Errors come back as text for an "Export Failed" message.
#include <functional>
#include <optional>

#include <QSize>
#include <QString>

class QCustomPlot;
class QPaintDevice;
class QPainter;

namespace vtrain::ui {

enum class ImageFormat { Png, Svg, Pdf };

struct ExportSize {
    int width = 1600; // logical pixels (points in a PDF)
    int height = 900;
    double scale = 2.0; // PNG only: device pixels per logical pixel (2 = crisp on a slide or retina screen)
};

std::optional<ImageFormat> imageFormatForPath(const QString& path);
// Big exports are drawn on a smaller canvas and magnified by this factor (>= 1), so their text stays
// readable on a slide.
double legibilityScale(const ExportSize& size);
// Appends the suffix of `filter` ("PNG image (*.png)") when `path` has none.
QString withImageSuffix(const QString& path, const QString& filter);
QString imageFileFilters();

bool exportPlot(QCustomPlot* plot, const QString& path, const ExportSize& size, const QString& title, QString* error);
// Paints `plot` as exportPlot() lays it out and magnifies it for `size` onto `device` (logical size
// size.width x size.height, device pixel ratio size.scale): what an export shows, for checks of it.
void paintPlotAsExported(QCustomPlot* plot, QPaintDevice* device, const ExportSize& size);

// For widgets that paint themselves (the timeline): `paint` draws into a painter of the given logical size.
using PaintFunction = std::function<void(QPainter& painter, const QSize& size)>;
// `maxScale` caps the legibility magnification (a tall timeline needs its pixels for rows, not big text).
bool exportPainted(const PaintFunction& paint, const QString& path, const ExportSize& size, const QString& title, QString* error,
                   double maxScale = 4.0);

} // namespace vtrain::ui
