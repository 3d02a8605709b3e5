// SPDX-License-Identifier: MIT
#pragma once
// Which part of the time-cost plane the Pareto chart shows. By default the front and its neighbourhood:
// from the fastest plan to kTimeReach x its time (or the cheapest plan, if slower) and from the cheapest
// plan to kCostReach x its cost (or the fastest plan's, if dearer). The whole cloud can reach 100x the
// fastest time and pushed the front into a corner (DeepSeek-V3: a dot at the origin of 0-5,500 days).
#include <vector>

namespace vtrain::ui {

struct PlotPoint {
    double days = 0;
    double cost = 0;
};

struct PlotRange {
    double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
    bool contains(const PlotPoint& p) const { return p.days >= x0 && p.days <= x1 && p.cost >= y0 && p.cost <= y1; }
};

inline constexpr double kTimeReach = 2.0; // the framed view reaches this many times the fastest time
inline constexpr double kCostReach = 1.5; // ... and this many times the cheapest cost

// The front and its neighbourhood, with a margin; `log` for logarithmic axes (margins as factors, never
// reaching zero). Empty `points`: the unit square.
PlotRange frameFront(const std::vector<PlotPoint>& points, bool log);
// Every point, with a margin.
PlotRange frameAll(const std::vector<PlotPoint>& points, bool log);

} // namespace vtrain::ui
