// SPDX-License-Identifier: MIT
// Plausibility flags (plausibility.h): each a comparison with a cited table or with the physical floors.
#include "vtrain/plausibility.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace vtrain {
namespace {

std::string number(const char* format, double v)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, v);
    return buffer;
}

std::string upper(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

// A source without commas (reasons land in CSV cells as they are).
std::string without_commas(std::string s)
{
    std::replace(s.begin(), s.end(), ',', ';');
    return s;
}

} // namespace

unsigned plausibility_flags(double best_mfu, double mfu, double iteration_s, double binding_floor_s)
{
    unsigned flags = 0;
    if (best_mfu >= 0 && mfu > best_mfu) {
        flags |= kMfuAbovePublished;
    }
    if (binding_floor_s > 0 && iteration_s > kFarAboveFloorFactor * binding_floor_s) {
        flags |= kFarAboveFloor;
    }
    // Below the floor by more than rounding: no hardware can do that.
    if (binding_floor_s > 0 && iteration_s < binding_floor_s * (1 - 1e-9)) {
        flags |= kBelowFloor;
    }
    return flags;
}

unsigned plausibility_flags(const std::string& gpu, Precision precision, double mfu, double iteration_s, double binding_floor_s)
{
    const auto best = best_published_mfu(gpu, precision);
    return plausibility_flags(best ? best->mfu : -1.0, mfu, iteration_s, binding_floor_s);
}

std::vector<std::string> plausibility_reasons(unsigned flags, const std::string& gpu, Precision precision, double mfu, double iteration_s,
                                              double binding_floor_s, FloorResource binding)
{
    std::vector<std::string> out;
    if ((flags & kMfuAbovePublished) != 0) {
        const auto best = best_published_mfu(gpu, precision);
        out.push_back("MFU " + number("%.1f%%", 100 * mfu) + " is above the best published " + (best ? best->chip : gpu.c_str()) + " " +
                      upper(best ? best->precision : to_string(precision)) + " run (" + number("%.1f%%", best ? 100 * best->mfu : 0.0) + ": " +
                      without_commas(best ? best->source : "") + ")");
    }
    if ((flags & kFarAboveFloor) != 0 && binding_floor_s > 0) {
        out.push_back("the iteration is " + number("%.0f", iteration_s / binding_floor_s) + "x its binding floor (" + to_string(binding) + " " +
                      number("%.3g", binding_floor_s) + " s): far below what the hardware allows");
    }
    if ((flags & kBelowFloor) != 0) {
        out.push_back("the iteration is below its physical floor (" + std::string(to_string(binding)) + " " + number("%.4g", binding_floor_s) +
                      " s > " + number("%.4g", iteration_s) + " s predicted): a simulator bug");
    }
    return out;
}

std::vector<std::string> plausibility_codes(unsigned flags)
{
    std::vector<std::string> out;
    if ((flags & kMfuAbovePublished) != 0) {
        out.emplace_back("mfu_above_published");
    }
    if ((flags & kFarAboveFloor) != 0) {
        out.emplace_back("far_above_floor");
    }
    if ((flags & kBelowFloor) != 0) {
        out.emplace_back("below_floor");
    }
    return out;
}

} // namespace vtrain
