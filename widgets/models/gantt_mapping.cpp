// SPDX-License-Identifier: MIT
#include "models/gantt_mapping.h"

#include <algorithm>

namespace vtrain::ui {

void GanttMapping::setViewport(double x0, double width)
{
    m_x0 = x0;
    m_width = std::max(1.0, width);
}

void GanttMapping::setExtent(double t0, double t1)
{
    m_extent0 = t0;
    m_extent1 = std::max(t1, t0 + kMinSpan);
    clamp();
}

void GanttMapping::setWindow(double t0, double t1)
{
    m_t0 = t0;
    m_t1 = std::max(t1, t0 + kMinSpan);
    clamp();
}

void GanttMapping::zoomAt(double factor, double x)
{
    if (factor <= 0) {
        return;
    }
    const double anchor = mapXToTime(x);
    const double newSpan = std::max(kMinSpan, span() / factor);
    const double fraction = (x - m_x0) / m_width;
    m_t0 = anchor - fraction * newSpan;
    m_t1 = m_t0 + newSpan;
    clamp();
}

void GanttMapping::panPixels(double dx)
{
    const double dt = dx * secondsPerPixel();
    m_t0 -= dt;
    m_t1 -= dt;
    clamp();
}

void GanttMapping::clamp()
{
    const double extent = m_extent1 - m_extent0;
    const double margin = 0.02 * extent;
    const double lo = m_extent0 - margin;
    const double hi = m_extent1 + margin;
    double s = std::clamp(span(), kMinSpan, hi - lo);
    double t0 = std::clamp(m_t0, lo, hi - s);
    m_t0 = t0;
    m_t1 = t0 + s;
}

} // namespace vtrain::ui
