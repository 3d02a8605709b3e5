// SPDX-License-Identifier: MIT
#pragma once
// Time <-> pixel arithmetic of the timeline as a plain value type (testable without a widget): a visible
// time window mapped onto a horizontal pixel span, with zoom about a pixel and pan by pixels, clamped to
// the data's extent.
namespace vtrain::ui {

class GanttMapping {
public:
    void setViewport(double x0, double width);
    // The data's extent: zoom and pan keep the window inside it (with a small margin).
    void setExtent(double t0, double t1);
    void setWindow(double t0, double t1);
    void reset() { setWindow(m_extent0, m_extent1); }

    double mapTimeToX(double t) const { return m_x0 + (t - m_t0) * m_width / span(); }
    double mapXToTime(double x) const { return m_t0 + (x - m_x0) * span() / m_width; }
    double secondsPerPixel() const { return span() / m_width; }

    // factor > 1 zooms in, keeping the time under pixel x in place.
    void zoomAt(double factor, double x);
    void panPixels(double dx);

    double windowStart() const { return m_t0; }
    double windowEnd() const { return m_t1; }
    double span() const { return m_t1 - m_t0; }
    double viewportX() const { return m_x0; }
    double viewportWidth() const { return m_width; }
    bool isZoomed() const { return m_t0 > m_extent0 || m_t1 < m_extent1; }

    static constexpr double kMinSpan = 1e-7; // 0.1 µs across the whole view

private:
    void clamp();

    double m_t0 = 0, m_t1 = 1;
    double m_extent0 = 0, m_extent1 = 1;
    double m_x0 = 0, m_width = 1;
};

} // namespace vtrain::ui
