// SPDX-License-Identifier: MIT
#include "vtrain/comm_model.h"

#include <algorithm>
#include <cmath>

#include "vtrain/interpolation.h"

namespace vtrain {

GroupPlacement place_group(int size, int stride, int gpus_per_node)
{
    GroupPlacement g;
    g.size = std::max(1, size);
    if (g.size == 1) {
        return g;
    }
    const int per_node = stride >= gpus_per_node ? 1 : std::max(1, gpus_per_node / std::max(1, stride));
    g.members_per_node = std::min(g.size, per_node);
    g.nodes = (g.size + g.members_per_node - 1) / g.members_per_node;
    return g;
}

double algorithm_factor(Collective kind, int n)
{
    if (n <= 1) {
        return 0;
    }
    const double share = static_cast<double>(n - 1) / n;
    return kind == Collective::AllReduce ? 2 * share : share;
}

double CommModel::inter_node_bytes_per_s_per_gpu() const
{
    const double node_bytes_per_s = links.nics_per_node * links.nic_gbit_per_s * 1e9 / 8 * links.nic_efficiency;
    return node_bytes_per_s / std::max(1, links.gpus_per_node);
}

double CommModel::intra_node_seconds(Collective kind, double bytes, int n) const
{
    if (n <= 1 || bytes <= 0) {
        return 0;
    }
    if (kind == Collective::AllReduce && measured_all_reduce != nullptr) {
        for (const auto& t : *measured_all_reduce) {
            if (t.gpus == n) {
                return interpolate_1d(t.bytes, t.seconds, bytes);
            }
        }
    }
    const int steps = kind == Collective::AllReduce ? 2 * (n - 1) : n - 1;
    const double latency = (links.nvlink_base_latency_us + steps * links.nvlink_step_latency_us) * 1e-6;
    return latency + bytes * algorithm_factor(kind, n) / nvlink_bytes_per_s();
}

double CommModel::inter_node_seconds(Collective kind, double bytes, int nodes) const
{
    if (nodes <= 1 || bytes <= 0) {
        return 0;
    }
    const double bandwidth = bytes * algorithm_factor(kind, nodes) / inter_node_bytes_per_s_per_gpu();
    const double base = links.inter_node_base_latency_us * 1e-6;
    const double step = links.inter_node_latency_us * 1e-6;
    const int ring_steps = kind == Collective::AllReduce ? 2 * (nodes - 1) : nodes - 1;
    const double ring = base + ring_steps * step + bandwidth;
    if (kind != Collective::AllReduce) {
        return ring;
    }
    // NCCL's double binary tree: logarithmic latency, about the same bandwidth term for large messages.
    const double tree = base + 2 * std::ceil(std::log2(nodes)) * step + bandwidth;
    return std::min(ring, tree);
}

double CommModel::collective_seconds(Collective kind, double bytes, const GroupPlacement& g) const
{
    if (g.size <= 1 || bytes <= 0) {
        return 0;
    }
    if (g.nodes <= 1) {
        return intra_node_seconds(kind, bytes, g.size);
    }
    const int k = g.members_per_node;
    // Each of the k local members carries 1/k of the buffer across the network.
    const double across = inter_node_seconds(kind, bytes / k, g.nodes);
    if (k <= 1) {
        return across;
    }
    switch (kind) {
    case Collective::AllReduce:
        return intra_node_seconds(Collective::ReduceScatter, bytes, k) + across + intra_node_seconds(Collective::AllGather, bytes, k);
    case Collective::ReduceScatter:
        return intra_node_seconds(Collective::ReduceScatter, bytes, k) + across;
    case Collective::AllGather:
        return across + intra_node_seconds(Collective::AllGather, bytes, k);
    }
    return across;
}

double CommModel::p2p_seconds(double bytes, bool crosses_nodes) const
{
    if (bytes <= 0) {
        return 0;
    }
    if (crosses_nodes) {
        return (links.inter_node_base_latency_us + links.inter_node_latency_us) * 1e-6 + bytes / inter_node_bytes_per_s_per_gpu();
    }
    return (links.nvlink_base_latency_us + links.nvlink_step_latency_us) * 1e-6 + bytes / nvlink_bytes_per_s();
}

} // namespace vtrain
