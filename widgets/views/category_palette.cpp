// SPDX-License-Identifier: MIT
#include "views/category_palette.h"

#include <array>
#include <bit>
#include <cmath>
#include <map>

namespace vtrain::ui::palette {
namespace {

// Tableau 10, then ten more that stay apart from it and readable on white and on the dark theme's base.
constexpr std::array<QRgb, kSize> kColors{
    0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac,
    0x7f3c8d, 0x11a579, 0xcf1c90, 0x008695, 0xbcbd22, 0x2f4b7c, 0xa6761d, 0x66a61e, 0xe6ab02, 0x6f4e37,
};

int wrap(long long index)
{
    return static_cast<int>(((index % kSize) + kSize) % kSize);
}

} // namespace

QColor entry(int index)
{
    return QColor::fromRgb(kColors[static_cast<std::size_t>(wrap(index))]);
}

int indexOfPowerOfTwo(int value)
{
    if (value > 0 && std::has_single_bit(static_cast<unsigned>(value))) {
        return std::countr_zero(static_cast<unsigned>(value));
    }
    return indexOfCount(value);
}

int indexOfCount(double value)
{
    if (!(value > 0) || !std::isfinite(value)) {
        return kSize - 1;
    }
    return wrap(std::llround(8.0 * std::log2(value)));
}

int indexOfGpu(const std::string& id)
{
    // The shipped profiles, spread so that the usual pairs (A100/H100, H100/H200, B200/GB200, NVIDIA/AMD)
    // get unlike colours; any other id gets a stable hash.
    static const std::map<std::string, int> known{
        {"a100-sxm4-80gb", 0},  {"a100-sxm4-40gb", 15}, {"h100-sxm5-80gb", 4}, {"h100-hbm2e-96gb", 11}, {"h200-sxm-141gb", 3},
        {"h800-sxm5-80gb", 14}, {"b200-sxm-180gb", 1},  {"b300", 16},          {"gb200-nvl72", 2},      {"gb300-nvl72", 12},
        {"mi300x", 6},          {"mi325x", 10},         {"mi355x", 7},
    };
    const auto it = known.find(id);
    return it != known.end() ? it->second : indexOfName(QString::fromStdString(id));
}

int indexOfName(const QString& name)
{
    std::uint32_t hash = 2166136261u;
    for (const char c : name.toUtf8()) {
        hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
    }
    return static_cast<int>(hash % kSize);
}

int indexOf(const PlanRow& row, ColorDimension dimension)
{
    switch (dimension) {
    case ColorDimension::TensorParallel: return indexOfPowerOfTwo(row.plan.tp);
    case ColorDimension::PipelineParallel: return indexOfCount(row.plan.pp);
    case ColorDimension::Schedule: return static_cast<int>(row.plan.schedule);
    case ColorDimension::Recompute: return static_cast<int>(row.plan.recompute);
    case ColorDimension::GpuCount: return indexOfCount(row.num_gpus);
    case ColorDimension::GpuType: return indexOfGpu(row.gpu);
    case ColorDimension::Precision: return static_cast<int>(row.precision);
    case ColorDimension::ContextParallel: return indexOfPowerOfTwo(row.plan.cp);
    case ColorDimension::ExpertParallel: return indexOfPowerOfTwo(row.plan.ep);
    case ColorDimension::RankOrder:
    case ColorDimension::Offload: return indexOfName(categoryOf(row, dimension));
    case ColorDimension::Count: break;
    }
    return 0;
}

QColor colorOf(const PlanRow& row, ColorDimension dimension)
{
    return entry(indexOf(row, dimension));
}

} // namespace vtrain::ui::palette
