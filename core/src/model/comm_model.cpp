// SPDX-License-Identifier: MIT
#include "vtrain/comm_model.h"

#include <algorithm>
#include <cmath>

#include "model/nccl_tuning.h"
#include "profile/interpolation.h"

namespace vtrain {

namespace {

// Members of a `size`-rank group with rank stride `stride` that fall into one block of `block` consecutive ranks.
int members_per_block(int size, int stride, int block)
{
    return stride >= block ? 1 : std::min(size, std::max(1, block / std::max(1, stride)));
}

// NCCL's choice for a collective over domains (nccl_tuning.h), given its wire time.
NcclChoice multi_domain_choice(Collective kind, double bytes, double wire_s, const GroupPlacement& g)
{
    const NcclCollective c = kind == Collective::AllReduce       ? NcclCollective::AllReduce
                             : kind == Collective::ReduceScatter ? NcclCollective::ReduceScatter
                                                                 : NcclCollective::AllGather;
    const double bus_bytes = bytes * algorithm_factor(kind, g.size);
    return nccl_best(c, wire_s, bus_bytes, g.size, g.nodes);
}

} // namespace

GroupPlacement place_group(int size, int stride, const LinkSpec& links)
{
    GroupPlacement g;
    g.size = std::max(1, size);
    if (g.size == 1) {
        return g;
    }
    g.members_per_node = members_per_block(g.size, stride, nvlink_domain_size(links));
    g.nodes = (g.size + g.members_per_node - 1) / g.members_per_node;
    const int per_host = members_per_block(g.size, stride, std::max(1, links.gpus_per_node));
    g.hosts = (g.size + per_host - 1) / per_host;
    return g;
}

GroupPlacement place_group(int size, int stride, int gpus_per_node)
{
    LinkSpec links;
    links.gpus_per_node = gpus_per_node;
    links.nvlink_domain_gpus = 0;
    return place_group(size, stride, links);
}

bool same_nvlink_domain(long long rank_a, long long rank_b, const LinkSpec& links)
{
    const long long domain = nvlink_domain_size(links);
    return rank_a / domain == rank_b / domain;
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
    // A ring takes n - 1 steps per phase (all-reduce: two phases); all-to-all sends to its n - 1 peers.
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
        return ring; // all-to-all: every rank sends (nodes - 1) / nodes of its buffer through its NIC share
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
    if (kind == Collective::AllToAll) {
        // Each rank sends bytes / size to every peer at once: (k - 1) chunks over NVLink to the peers in its
        // domain, (size - k) chunks through its share of its host's NICs; the slower of the two sets the time.
        const double chunk = bytes / g.size;
        const double nvlink = (k - 1) * chunk / nvlink_bytes_per_s();
        const double network = (g.size - k) * chunk / inter_node_bytes_per_s_per_gpu();
        const double latency = (links.inter_node_base_latency_us + (g.nodes - 1) * links.inter_node_latency_us) * 1e-6;
        return latency + std::max(nvlink, network);
    }
    // The wire time: each of the k local members carries 1/k of the buffer across the network, after
    // (reduce-scatter, all-reduce) and before (all-gather, all-reduce) its share crosses the NVLink domain.
    // The latency is NCCL's for the whole group (nccl_tuning.h): a ring steps through every rank, so its
    // hops grow with the group, not with the domains alone; NCCL picks the algorithm and protocol.
    CommModel wire = *this;
    wire.links.nvlink_base_latency_us = wire.links.nvlink_step_latency_us = 0;
    wire.links.inter_node_base_latency_us = wire.links.inter_node_latency_us = 0;
    wire.measured_all_reduce = nullptr;
    const double across = wire.inter_node_seconds(kind, bytes / k, g.nodes);
    double wire_s = across;
    if (k > 1) {
        switch (kind) {
        case Collective::AllReduce:
            wire_s = wire.intra_node_seconds(Collective::ReduceScatter, bytes, k) + across + wire.intra_node_seconds(Collective::AllGather, bytes, k);
            break;
        case Collective::ReduceScatter: wire_s = wire.intra_node_seconds(Collective::ReduceScatter, bytes, k) + across; break;
        case Collective::AllGather: wire_s = across + wire.intra_node_seconds(Collective::AllGather, bytes, k); break;
        case Collective::AllToAll: break; // handled above
        }
    }
    return multi_domain_choice(kind, bytes, wire_s, g).seconds;
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
