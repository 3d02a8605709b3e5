// SPDX-License-Identifier: MIT
#include "models/pareto_frame.h"

#include <algorithm>
#include <cmath>

namespace vtrain::ui {
namespace {

constexpr double kMargin = 0.06; // of the span on each side: points at the edge stay whole

// [lo, hi] widened by the margin; linear ranges stop at zero, logarithmic ones stay positive.
void widen(double& lo, double& hi, bool log)
{
    if (log) {
        lo = std::max(lo, 1e-9);
        hi = std::max(hi, lo);
        const double factor = hi > lo ? std::pow(hi / lo, kMargin) : 1.15;
        lo /= factor;
        hi *= factor;
        return;
    }
    const double pad = hi > lo ? (hi - lo) * kMargin : std::max(std::abs(hi) * 0.05, 1e-9);
    lo = std::max(0.0, lo - pad);
    hi += pad;
}

} // namespace

PlotRange frameAll(const std::vector<PlotPoint>& points, bool log)
{
    if (points.empty()) {
        return {};
    }
    PlotRange r{points.front().days, points.front().days, points.front().cost, points.front().cost};
    for (const PlotPoint& p : points) {
        r.x0 = std::min(r.x0, p.days);
        r.x1 = std::max(r.x1, p.days);
        r.y0 = std::min(r.y0, p.cost);
        r.y1 = std::max(r.y1, p.cost);
    }
    widen(r.x0, r.x1, log);
    widen(r.y0, r.y1, log);
    return r;
}

PlotRange frameFront(const std::vector<PlotPoint>& points, bool log)
{
    if (points.empty()) {
        return {};
    }
    // The front's two ends: the fastest plan (cheapest among equally fast) and the cheapest (fastest among
    // equally cheap). Every front plan lies between them; no plan is faster or cheaper.
    PlotPoint fastest = points.front();
    PlotPoint cheapest = points.front();
    double maxDays = 0;
    double maxCost = 0;
    for (const PlotPoint& p : points) {
        if (p.days < fastest.days || (p.days == fastest.days && p.cost < fastest.cost)) {
            fastest = p;
        }
        if (p.cost < cheapest.cost || (p.cost == cheapest.cost && p.days < cheapest.days)) {
            cheapest = p;
        }
        maxDays = std::max(maxDays, p.days);
        maxCost = std::max(maxCost, p.cost);
    }
    PlotRange r;
    r.x0 = fastest.days;
    r.x1 = std::max(cheapest.days, std::min(maxDays, fastest.days * kTimeReach));
    r.y0 = cheapest.cost;
    r.y1 = std::max(fastest.cost, std::min(maxCost, cheapest.cost * kCostReach));
    widen(r.x0, r.x1, log);
    widen(r.y0, r.y1, log);
    return r;
}

} // namespace vtrain::ui
