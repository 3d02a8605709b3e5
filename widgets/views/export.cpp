// SPDX-License-Identifier: MIT
#include "views/export.h"

#include <algorithm>

#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QScreen>
#include <QSvgGenerator>

#include <qcustomplot.h>

namespace vtrain::ui {
namespace {

bool fail(QString* error, const QString& message)
{
    if (error) {
        *error = message;
    }
    return false;
}

// Adaptive sampling thins dense graphs for the screen; an export should show every point.
class FullSampling {
public:
    explicit FullSampling(QCustomPlot* plot) : m_plot(plot)
    {
        for (int i = 0; i < plot->graphCount(); ++i) {
            m_states.push_back(plot->graph(i)->adaptiveSampling());
            plot->graph(i)->setAdaptiveSampling(false);
        }
    }
    ~FullSampling()
    {
        for (int i = 0; i < m_plot->graphCount() && i < static_cast<int>(m_states.size()); ++i) {
            m_plot->graph(i)->setAdaptiveSampling(m_states[static_cast<std::size_t>(i)]);
        }
    }

private:
    QCustomPlot* m_plot;
    std::vector<bool> m_states;
};

// Why `path` cannot be written, or empty: QImage::save and the SVG and PDF writers say only that they failed
// (a missing ~/Documents once gave "Could not write" and nothing more).
QString unwritableReason(const QString& path)
{
    const QFileInfo file(path);
    const QFileInfo folder(file.absolutePath());
    if (!folder.exists()) {
        return QObject::tr("the folder %1 does not exist").arg(folder.absoluteFilePath());
    }
    if (!folder.isDir()) {
        return QObject::tr("%1 is not a folder").arg(folder.absoluteFilePath());
    }
    if (!folder.isWritable()) {
        return QObject::tr("the folder %1 is not writable").arg(folder.absoluteFilePath());
    }
    if (file.exists() && !file.isWritable()) {
        return QObject::tr("the file is read-only");
    }
    return {};
}

bool checkPath(const QString& path, QString* error)
{
    const QString reason = unwritableReason(path);
    return reason.isEmpty() || fail(error, QObject::tr("Could not write \"%1\": %2.").arg(path, reason));
}

bool checkSize(const ExportSize& size, QString* error)
{
    if (size.width < 16 || size.height < 16 || size.width > 20000 || size.height > 20000) {
        return fail(error, QObject::tr("The size must be between 16 and 20000 pixels on each side."));
    }
    if (size.scale < 0.25 || size.scale > 8) {
        return fail(error, QObject::tr("The resolution scale must be between 0.25 and 8."));
    }
    return true;
}

// Layouts (QCustomPlot's, the timeline's) measure text with QFontMetrics(font), i.e. at the screen's
// logical dpi. Every export canvas must convert font points to pixels at that same dpi, or text comes out
// bigger or smaller than the room the layout made for it (the 2x PNG once clipped its own labels so).
int layoutDpi()
{
    const QScreen* screen = QGuiApplication::primaryScreen();
    return screen ? qRound(screen->logicalDotsPerInchY()) : 96;
}

void prepareExportPainter(QCPPainter& painter, double magnify, bool antialias)
{
    painter.setMode(QCPPainter::pmNonCosmetic); // pens scale with the picture
    painter.setRenderHint(QPainter::Antialiasing, antialias);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    painter.scale(magnify, magnify);
}

// A chart is laid out on a smaller logical canvas and magnified: text, markers and lines grow with the
// picture, so a big export stays readable on a slide instead of showing tiny print.
struct PlotCanvas {
    QSize layout;   // what QCustomPlot lays out
    double magnify; // so that the picture fills exactly the chosen width
};

PlotCanvas plotCanvas(const ExportSize& size)
{
    const double f = legibilityScale(size);
    const int w = qRound(size.width / f);
    const int h = qRound(size.height / f);
    return {QSize(w, h), static_cast<double>(size.width) / w};
}

// Draws `paint` (logical size `logical`, magnified by `magnify`) into the file's format. One path for
// every export: the same painter set-up, so PNG, SVG and PDF share one layout at every scale.
bool render(const std::function<void(QCPPainter&)>& paint, ImageFormat format, const QString& path, const ExportSize& size, const QString& title,
            double magnify, bool antialias)
{
    const int dpi = layoutDpi();
    auto prepare = [magnify, antialias](QCPPainter& painter) { prepareExportPainter(painter, magnify, antialias); };
    switch (format) {
    case ImageFormat::Png: {
        QImage image(qRound(size.width * size.scale), qRound(size.height * size.scale), QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(size.scale); // logical pixels = the chosen size; the scale only adds pixels
        const int layoutDotsPerMeter = qRound(dpi / 0.0254);
        image.setDotsPerMeterX(layoutDotsPerMeter);
        image.setDotsPerMeterY(layoutDotsPerMeter);
        image.fill(Qt::white);
        {
            QCPPainter painter(&image);
            prepare(painter);
            paint(painter);
        }
        // The file says how dense it is (96 dpi per 1x), written only after painting (see layoutDpi()).
        const int fileDotsPerMeter = qRound(96 * size.scale / 0.0254);
        image.setDotsPerMeterX(fileDotsPerMeter);
        image.setDotsPerMeterY(fileDotsPerMeter);
        image.setText(QStringLiteral("Title"), title);
        return image.save(path, "PNG");
    }
    case ImageFormat::Svg: {
        // width/height in CSS pixels (96 per inch): an SVG of the chosen size, whatever the painter's scale.
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setResolution(dpi);
        generator.setSize(QSize(qRound(size.width * dpi / 96.0), qRound(size.height * dpi / 96.0)));
        generator.setViewBox(QRect(0, 0, size.width, size.height));
        generator.setTitle(title);
        generator.setDescription(QStringLiteral("vtrain-explorer"));
        QCPPainter painter;
        if (!painter.begin(&generator)) {
            return false;
        }
        painter.setMode(QCPPainter::pmVectorized);
        painter.setMode(QCPPainter::pmNoCaching);
        prepare(painter);
        paint(painter);
        return painter.end();
    }
    case ImageFormat::Pdf: {
        // The page is the chosen size in CSS pixels (96 per inch): 1600 x 900 px = 1200 x 675 pt.
        QPdfWriter writer(path);
        writer.setTitle(title);
        writer.setCreator(QStringLiteral("vtrain-explorer"));
        writer.setResolution(dpi);
        writer.setPageSize(
            QPageSize(QSizeF(size.width * 72.0 / 96.0, size.height * 72.0 / 96.0), QPageSize::Point, QString(), QPageSize::ExactMatch));
        writer.setPageMargins(QMarginsF(0, 0, 0, 0));
        QCPPainter painter;
        if (!painter.begin(&writer)) {
            return false;
        }
        painter.setMode(QCPPainter::pmVectorized);
        painter.setMode(QCPPainter::pmNoCaching);
        prepare(painter);
        painter.scale(dpi / 96.0, dpi / 96.0); // device units are 1/dpi inch; one logical pixel is 1/96 inch
        paint(painter);
        return painter.end();
    }
    }
    return false;
}

} // namespace

double legibilityScale(const ExportSize& size)
{
    return std::clamp(std::min(size.width / 960.0, size.height / 560.0), 1.0, 4.0);
}

std::optional<ImageFormat> imageFormatForPath(const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == u"png") {
        return ImageFormat::Png;
    }
    if (suffix == u"svg") {
        return ImageFormat::Svg;
    }
    if (suffix == u"pdf") {
        return ImageFormat::Pdf;
    }
    return std::nullopt;
}

QString withImageSuffix(const QString& path, const QString& filter)
{
    if (path.isEmpty() || !QFileInfo(path).suffix().isEmpty()) {
        return path;
    }
    static const QRegularExpression suffix(QStringLiteral("\\*\\.(\\w+)"));
    const QRegularExpressionMatch m = suffix.match(filter);
    return path + QLatin1Char('.') + (m.hasMatch() ? m.captured(1) : QStringLiteral("png"));
}

QString imageFileFilters()
{
    return QObject::tr("PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf)");
}

bool exportPlot(QCustomPlot* plot, const QString& path, const ExportSize& size, const QString& title, QString* error)
{
    if (!checkSize(size, error)) {
        return false;
    }
    const auto format = imageFormatForPath(path);
    if (!format) {
        return fail(error, QObject::tr("Unknown image type \"%1\": use .png, .svg or .pdf.").arg(QFileInfo(path).suffix()));
    }
    if (!checkPath(path, error)) {
        return false;
    }
    const FullSampling full(plot);
    const PlotCanvas canvas = plotCanvas(size);
    const bool ok = render([&](QCPPainter& painter) { plot->toPainter(&painter, canvas.layout.width(), canvas.layout.height()); }, *format, path,
                           size, title, canvas.magnify, true);
    plot->replot(QCustomPlot::rpQueuedReplot); // toPainter() left the export's layout in place
    return ok || fail(error, QObject::tr("Could not write \"%1\": %2.").arg(path, QObject::tr("the image writer failed")));
}

void paintPlotAsExported(QCustomPlot* plot, QPaintDevice* device, const ExportSize& size)
{
    const FullSampling full(plot);
    const PlotCanvas canvas = plotCanvas(size);
    QCPPainter painter(device);
    prepareExportPainter(painter, canvas.magnify, true);
    plot->toPainter(&painter, canvas.layout.width(), canvas.layout.height());
    painter.end();
    plot->replot(QCustomPlot::rpQueuedReplot);
}

bool exportPainted(const PaintFunction& paint, const QString& path, const ExportSize& size, const QString& title, QString* error, double maxScale)
{
    if (!checkSize(size, error)) {
        return false;
    }
    const auto format = imageFormatForPath(path);
    if (!format) {
        return fail(error, QObject::tr("Unknown image type \"%1\": use .png, .svg or .pdf.").arg(QFileInfo(path).suffix()));
    }
    if (!checkPath(path, error)) {
        return false;
    }
    const double f = std::clamp(legibilityScale(size), 1.0, std::max(1.0, maxScale));
    const QSize logical(qRound(size.width / f), qRound(size.height / f));
    const bool ok = render([&](QCPPainter& painter) { paint(painter, logical); }, *format, path, size, title, f, false);
    return ok || fail(error, QObject::tr("Could not write \"%1\": %2.").arg(path, QObject::tr("the image writer failed")));
}

} // namespace vtrain::ui
