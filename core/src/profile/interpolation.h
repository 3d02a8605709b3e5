// SPDX-License-Identifier: MIT
#pragma once
// Log-space interpolation over rectilinear grids. Inside a grid, log(time) is multilinear in log(size);
// above the grid, time scales linearly with size along that axis; below it, the boundary value holds
// (small operators are latency-bound, they do not get faster).
#include <span>

namespace vtrain {

double interpolate_1d(std::span<const double> grid, std::span<const double> values, double x);

// values are laid out with the last axis fastest: index = (i * |y| + j) * |z| + k.
double interpolate_3d(std::span<const double> gx, std::span<const double> gy, std::span<const double> gz, std::span<const double> values, double x,
                      double y, double z);

} // namespace vtrain
