// SPDX-License-Identifier: MIT
#include "views/export.h"

#include <algorithm>

#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
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
    explicit FullSampling(QCustomPlot* plot)
        : m_plot(plot)
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
    const FullSampling full(plot);
    // Lay the chart out on a smaller logical canvas and magnify it: text, markers and lines grow with
    // the picture, so a big export stays readable on a slide instead of showing tiny print.
    const int w = qRound(size.width / legibilityScale(size));
    const double f = static_cast<double>(size.width) / w; // exact, so the PNG is exactly the chosen width
    const int h = qRound(size.height / f);
    bool ok = false;
    switch (*format) {
    case ImageFormat::Png: {
        // Drawn here rather than with savePng: its rounding can lose a pixel row of the chosen size.
        QImage image(qRound(size.width * size.scale), qRound(size.height * size.scale), QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white); // toPainter() then paints the plot's own background over it
        const int dotsPerMeter = qRound(96 * size.scale / 0.0254);
        image.setDotsPerMeterX(dotsPerMeter);
        image.setDotsPerMeterY(dotsPerMeter);
        {
            QCPPainter painter(&image);
            painter.setMode(QCPPainter::pmNonCosmetic); // pens scale with the picture
            painter.scale(image.width() / static_cast<double>(w), image.height() / static_cast<double>(h));
            plot->toPainter(&painter, w, h);
        }
        image.setText(QStringLiteral("Title"), title);
        ok = image.save(path, "PNG");
        break;
    }
    case ImageFormat::Pdf: ok = plot->savePdf(path, w, h, QCP::epNoCosmetic, QStringLiteral("vtrain-explorer"), title); break;
    case ImageFormat::Svg: {
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(QSize(size.width, size.height));
        generator.setViewBox(QRect(0, 0, w, h));
        generator.setTitle(title);
        generator.setDescription(QStringLiteral("vtrain-explorer"));
        QCPPainter painter;
        ok = painter.begin(&generator);
        if (ok) {
            plot->toPainter(&painter, w, h);
            ok = painter.end();
        }
        break;
    }
    }
    return ok || fail(error, QObject::tr("Could not write \"%1\".").arg(path));
}

bool exportPainted(const PaintFunction& paint, const QString& path, const ExportSize& size, const QString& title, QString* error,
                   double maxScale)
{
    if (!checkSize(size, error)) {
        return false;
    }
    const auto format = imageFormatForPath(path);
    if (!format) {
        return fail(error, QObject::tr("Unknown image type \"%1\": use .png, .svg or .pdf.").arg(QFileInfo(path).suffix()));
    }
    const double f = std::clamp(legibilityScale(size), 1.0, std::max(1.0, maxScale));
    const QSize logical(qRound(size.width / f), qRound(size.height / f));
    switch (*format) {
    case ImageFormat::Png: {
        QImage image(qRound(size.width * size.scale), qRound(size.height * size.scale), QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(f * size.scale);
        image.fill(Qt::white);
        {
            QPainter painter(&image);
            painter.setRenderHint(QPainter::Antialiasing, false);
            painter.setRenderHint(QPainter::TextAntialiasing, true);
            paint(painter, logical);
        }
        image.setText(QStringLiteral("Title"), title);
        if (!image.save(path, "PNG")) {
            return fail(error, QObject::tr("Could not write \"%1\".").arg(path));
        }
        return true;
    }
    case ImageFormat::Svg: {
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(QSize(size.width, size.height));
        generator.setViewBox(QRect(QPoint(0, 0), logical));
        generator.setTitle(title);
        generator.setDescription(QStringLiteral("vtrain-explorer"));
        QPainter painter;
        if (!painter.begin(&generator)) {
            return fail(error, QObject::tr("Could not write \"%1\".").arg(path));
        }
        paint(painter, logical);
        return painter.end() || fail(error, QObject::tr("Could not write \"%1\".").arg(path));
    }
    case ImageFormat::Pdf: {
        QPdfWriter writer(path);
        writer.setTitle(title);
        writer.setCreator(QStringLiteral("vtrain-explorer"));
        writer.setResolution(72); // one logical pixel = one point (vector output: the viewer scales it)
        writer.setPageSize(QPageSize(QSizeF(logical), QPageSize::Point, QString(), QPageSize::ExactMatch));
        writer.setPageMargins(QMarginsF(0, 0, 0, 0));
        QPainter painter;
        if (!painter.begin(&writer)) {
            return fail(error, QObject::tr("Could not write \"%1\".").arg(path));
        }
        paint(painter, logical);
        return painter.end() || fail(error, QObject::tr("Could not write \"%1\".").arg(path));
    }
    }
    return false;
}

} // namespace vtrain::ui
