// SPDX-License-Identifier: MIT
#pragma once
// Every piece of text a chart paints, with its box: the chart as drawn, not as its layout means it to be
// (tick labels, axis labels, title, legend entries, notes). A paint device whose engine draws nothing
// and records each text item's box in the painter's logical coordinates.
#include <climits>
#include <vector>

#include <QPaintDevice>
#include <QPaintEngine>
#include <QPainter>
#include <QPainterPath>
#include <QTextItem>

namespace vtrain::ui::test {

struct TextBox {
    QString text;
    QRectF box;
};

class TextRecordingEngine : public QPaintEngine {
public:
    TextRecordingEngine() : QPaintEngine(QPaintEngine::AllFeatures) {}
    bool begin(QPaintDevice*) override { return true; }
    bool end() override { return true; }
    void updateState(const QPaintEngineState&) override {}
    void drawPixmap(const QRectF&, const QPixmap&, const QRectF&) override {}
    void drawPolygon(const QPointF*, int, PolygonDrawMode) override {}
    void drawPath(const QPainterPath&) override {}
    void drawTextItem(const QPointF& p, const QTextItem& item) override
    {
        const QRectF local(p.x(), p.y() - item.ascent(), item.width(), item.ascent() + item.descent());
        boxes.push_back({item.text(), painter()->combinedTransform().mapRect(local)});
    }
    Type type() const override { return QPaintEngine::User; }

    std::vector<TextBox> boxes;
};

// `size` logical pixels at `dpr` device pixels each, fonts at `dpi` (the screen's, as the exports use).
class TextRecordingDevice : public QPaintDevice {
public:
    TextRecordingDevice(QSize size, double dpr, int dpi) : m_size(size), m_dpr(dpr), m_dpi(dpi) {}
    QPaintEngine* paintEngine() const override { return &m_engine; }
    const std::vector<TextBox>& boxes() const { return m_engine.boxes; }

protected:
    int metric(PaintDeviceMetric m) const override
    {
        switch (m) {
        case PdmWidth: return m_size.width();
        case PdmHeight: return m_size.height();
        case PdmWidthMM: return qRound(m_size.width() * 25.4 / m_dpi);
        case PdmHeightMM: return qRound(m_size.height() * 25.4 / m_dpi);
        case PdmNumColors: return INT_MAX;
        case PdmDepth: return 32;
        case PdmDpiX:
        case PdmDpiY:
        case PdmPhysicalDpiX:
        case PdmPhysicalDpiY: return m_dpi;
        case PdmDevicePixelRatio: return qRound(m_dpr);
        case PdmDevicePixelRatioScaled: return qRound(m_dpr * devicePixelRatioFScale());
        }
        return 0;
    }

private:
    QSize m_size;
    double m_dpr;
    int m_dpi;
    mutable TextRecordingEngine m_engine;
};

// The first two boxes that overlap or come closer than `gap` pixels, as text for a failure message;
// empty when every box keeps apart.
inline QString firstCollision(const std::vector<TextBox>& boxes, double gap = 1.0)
{
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        for (std::size_t j = i + 1; j < boxes.size(); ++j) {
            const QRectF a = boxes[i].box.adjusted(-gap / 2, -gap / 2, gap / 2, gap / 2);
            const QRectF b = boxes[j].box.adjusted(-gap / 2, -gap / 2, gap / 2, gap / 2);
            if (a.intersects(b)) {
                auto show = [](const TextBox& t) {
                    return QStringLiteral("\"%1\" at %2,%3 %4x%5")
                        .arg(t.text)
                        .arg(t.box.x(), 0, 'f', 1)
                        .arg(t.box.y(), 0, 'f', 1)
                        .arg(t.box.width(), 0, 'f', 1)
                        .arg(t.box.height(), 0, 'f', 1);
                };
                return show(boxes[i]) + QStringLiteral(" and ") + show(boxes[j]);
            }
        }
    }
    return {};
}

} // namespace vtrain::ui::test
