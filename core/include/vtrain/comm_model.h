// SPDX-License-Identifier: MIT
#pragma once
// Communication time: latency + size / bandwidth per link tier. NVLink inside a node, InfiniBand
// between nodes; ring (and tree where it wins) algorithms; groups that span nodes run hierarchically
// (intra-node reduce-scatter, inter-node collective on 1/k of the data, intra-node all-gather), and the
// GPUs of a node share its NICs. Bandwidths here are *bus* bandwidths: the algorithm bandwidth of a
// collective is bus bandwidth divided by its algorithm factor (2(n-1)/n for all-reduce).
#include "vtrain/gpu_profile.h"

namespace vtrain {

enum class Collective { AllReduce, ReduceScatter, AllGather };

// Where a communication group's members sit. Ranks are laid out tensor innermost, then data, then
// pipeline, so a group with rank stride `stride` has min(size, gpus_per_node / stride) members per node.
struct GroupPlacement {
    int size = 1;
    int members_per_node = 1;
    int nodes = 1;
};

GroupPlacement place_group(int size, int stride, int gpus_per_node);

// Algorithm factor: how many times the buffer crosses each GPU's link (bus bytes / buffer bytes).
double algorithm_factor(Collective kind, int group_size);

struct CommModel {
    LinkSpec links;
    const std::vector<CollectiveTable>* measured_all_reduce = nullptr; // optional, intra-node

    // Bandwidth one GPU gets through its node's NICs when every GPU of the node communicates at once.
    double inter_node_bytes_per_s_per_gpu() const;
    double nvlink_bytes_per_s() const { return links.nvlink_bus_gbytes_per_s * 1e9; }

    // A collective over `bytes` (the full buffer: all-reduce input, all-gather output, reduce-scatter input).
    double collective_seconds(Collective kind, double bytes, const GroupPlacement& group) const;
    // One point-to-point transfer, inside a node or across nodes.
    double p2p_seconds(double bytes, bool crosses_nodes) const;

    // Single-tier building blocks (exposed for tests).
    double intra_node_seconds(Collective kind, double bytes, int n) const;
    double inter_node_seconds(Collective kind, double bytes, int nodes) const;
};

} // namespace vtrain
