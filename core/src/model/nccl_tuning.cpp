// SPDX-License-Identifier: MIT
#include "model/nccl_tuning.h"

#include <algorithm>
#include <cmath>

namespace vtrain {
namespace {

// NVIDIA/nccl src/graph/tuning.cc @ b6475625 (NCCL 2.19-2.21), microseconds, indexed [protocol] in the
// order LL, LL128, Simple.
constexpr double kRingBaseUs[3] = {6.6, 14.0, 8.4};    // baseLat, Ring
constexpr double kTreeBaseUs[3] = {6.8, 14.0, 0.0};    // baseLat, Tree
constexpr double kRingNvlinkUs[3] = {0.6, 1.9, 3.4};   // hwLat[NVLINK], Ring
constexpr double kTreeNvlinkUs[3] = {0.6, 1.25, 28.0}; // hwLat[NVLINK], Tree
constexpr double kRingNetUs[3] = {2.7, 4.0, 14.0};     // hwLat[NET], Ring
constexpr double kTreeNetUs[3] = {5.0, 8.5, 28.0};     // hwLat[NET], Tree
// A multi-node ring's every hop launches a network post (getNetOverhead: 1 us on x86 Intel and ARM,
// 2 us on AMD; x3 for Simple): the intra-domain hop costs at least that.
constexpr double kNetOverheadUs = 1.0;
// Ring all-reduce with Simple across nodes: latency x 1.4 on sm80+ ("Plateau effect of ring",
// ncclTopoGetAlgoTime).
constexpr double kRingPlateau = 1.4;
// Bandwidth refinements of ncclTopoTuneModel: LL at a quarter of the bus bandwidth across nodes and at most
// llMaxBws (x86 Intel, more than two nodes) 20.4 GB/s; LL128 at 0.92 (120 of 128 bytes carry data); the
// tree at 0.92 of the bus bandwidth, LL on it at 1/3.8 and LL128 at 120/128 of that.
constexpr double kLlFraction = 0.25;
constexpr double kLlMaxBytesPerS = 20.4e9;
constexpr double kLl128Fraction = 0.92;
constexpr double kTreeFraction = 0.92;
constexpr double kTreeLlFraction = 1.0 / 3.8;
constexpr double kTreeLl128Fraction = 120.0 / 128.0;

int index_of(NcclProtocol p)
{
    return static_cast<int>(p);
}

int floor_log2(int v)
{
    int l = 0;
    while (v > 1) {
        v >>= 1;
        ++l;
    }
    return l;
}

} // namespace

double nccl_latency_seconds(NcclCollective kind, NcclAlgorithm algorithm, NcclProtocol protocol, int ranks, int domains)
{
    const int n = std::max(1, ranks);
    const int nodes = std::clamp(domains, 1, n);
    if (n <= 1) {
        return 0;
    }
    const int p = index_of(protocol);
    if (algorithm == NcclAlgorithm::Tree) {
        const int per_node = n / nodes;
        return (kTreeBaseUs[p] + 2 * ((per_node - 1) * kTreeNvlinkUs[p] + floor_log2(nodes) * kTreeNetUs[p])) * 1e-6;
    }
    const bool all_reduce = kind == NcclCollective::AllReduce;
    const int steps = all_reduce ? 2 * (n - 1) : n - 1;
    const int inter_steps = nodes <= 1 ? 0 : all_reduce ? 2 * (nodes - 1) : nodes - 1;
    double intra = kRingNvlinkUs[p];
    if (nodes > 1) {
        intra = std::max(intra, kNetOverheadUs * (protocol == NcclProtocol::Simple ? 3 : 1));
    }
    double us = kRingBaseUs[p] + std::max(0, steps - inter_steps) * intra + std::min(steps, inter_steps) * kRingNetUs[p];
    if (all_reduce && nodes > 1 && protocol == NcclProtocol::Simple) {
        us *= kRingPlateau;
    }
    return us * 1e-6;
}

double nccl_wire_seconds(NcclAlgorithm algorithm, NcclProtocol protocol, double simple_wire_s, double bus_bytes)
{
    double fraction = 1;
    if (algorithm == NcclAlgorithm::Tree) {
        fraction = kTreeFraction * (protocol == NcclProtocol::LL ? kTreeLlFraction : protocol == NcclProtocol::LL128 ? kTreeLl128Fraction : 1.0);
    } else {
        fraction = protocol == NcclProtocol::LL ? kLlFraction : protocol == NcclProtocol::LL128 ? kLl128Fraction : 1.0;
    }
    double wire = simple_wire_s / fraction;
    if (protocol == NcclProtocol::LL) {
        wire = std::max(wire, std::max(0.0, bus_bytes) / kLlMaxBytesPerS);
    }
    return wire;
}

NcclChoice nccl_best(NcclCollective kind, double simple_wire_s, double bus_bytes, int ranks, int domains)
{
    NcclChoice best;
    best.seconds = -1;
    for (const NcclAlgorithm a : {NcclAlgorithm::Ring, NcclAlgorithm::Tree}) {
        if (a == NcclAlgorithm::Tree && kind != NcclCollective::AllReduce) {
            continue; // tuning.cc: reduce-scatter and all-gather run rings (NVLS/CollNet need switch support)
        }
        for (const NcclProtocol p : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple}) {
            const double latency = nccl_latency_seconds(kind, a, p, ranks, domains);
            const double t = latency + nccl_wire_seconds(a, p, simple_wire_s, bus_bytes);
            if (best.seconds < 0 || t < best.seconds) {
                best = NcclChoice{t, latency, a, p};
            }
        }
    }
    return best;
}

std::string to_string(NcclAlgorithm a)
{
    return a == NcclAlgorithm::Tree ? "tree" : "ring";
}

std::string to_string(NcclProtocol p)
{
    return p == NcclProtocol::LL ? "LL" : p == NcclProtocol::LL128 ? "LL128" : "Simple";
}

} // namespace vtrain
