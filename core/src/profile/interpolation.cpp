// SPDX-License-Identifier: MIT
#include "profile/interpolation.h"

#include <algorithm>
#include <cmath>

namespace vtrain {
namespace {

// Where x falls on one axis: the lower cell index, the weight of the upper point, and the factor by
// which time scales beyond the top of the grid.
struct AxisPosition {
    std::size_t lower = 0;
    double weight = 0;
    double beyond_scale = 1;
};

AxisPosition locate(std::span<const double> grid, double x)
{
    AxisPosition pos;
    const std::size_t n = grid.size();
    if (n == 1 || x <= grid.front()) {
        return pos;
    }
    if (x >= grid.back()) {
        pos.lower = n - 2;
        pos.weight = 1;
        pos.beyond_scale = x / grid.back();
        return pos;
    }
    const auto upper = std::upper_bound(grid.begin(), grid.end(), x);
    pos.lower = static_cast<std::size_t>(upper - grid.begin()) - 1;
    const double lo = std::log(grid[pos.lower]);
    const double hi = std::log(grid[pos.lower + 1]);
    pos.weight = (std::log(x) - lo) / (hi - lo);
    return pos;
}

double lerp_log(double a, double b, double w)
{
    if (w <= 0) {
        return a;
    }
    if (w >= 1) {
        return b;
    }
    return std::exp(std::log(a) * (1 - w) + std::log(b) * w);
}

} // namespace

double interpolate_1d(std::span<const double> grid, std::span<const double> values, double x)
{
    if (grid.empty() || values.size() != grid.size()) {
        return 0;
    }
    const AxisPosition p = locate(grid, x);
    if (grid.size() == 1) {
        return values[0] * p.beyond_scale;
    }
    return lerp_log(values[p.lower], values[p.lower + 1], p.weight) * p.beyond_scale;
}

double interpolate_3d(std::span<const double> gx, std::span<const double> gy, std::span<const double> gz, std::span<const double> values, double x,
                      double y, double z)
{
    const std::size_t ny = gy.size();
    const std::size_t nz = gz.size();
    if (gx.empty() || gy.empty() || gz.empty() || values.size() != gx.size() * ny * nz) {
        return 0;
    }
    const AxisPosition px = locate(gx, x);
    const AxisPosition py = locate(gy, y);
    const AxisPosition pz = locate(gz, z);
    auto at = [&](std::size_t i, std::size_t j, std::size_t k) {
        i = std::min(i, gx.size() - 1);
        j = std::min(j, ny - 1);
        k = std::min(k, nz - 1);
        return values[(i * ny + j) * nz + k];
    };
    auto along_z = [&](std::size_t i, std::size_t j) { return lerp_log(at(i, j, pz.lower), at(i, j, pz.lower + 1), pz.weight); };
    auto along_y = [&](std::size_t i) { return lerp_log(along_z(i, py.lower), along_z(i, py.lower + 1), py.weight); };
    const double inside = lerp_log(along_y(px.lower), along_y(px.lower + 1), px.weight);
    return inside * px.beyond_scale * py.beyond_scale * pz.beyond_scale;
}

} // namespace vtrain
