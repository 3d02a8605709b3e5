// SPDX-License-Identifier: MIT
#pragma once
// Communication time: latency + size / bandwidth per link tier. NVLink (or xGMI) inside an NVLink domain,
// the network between domains; ring (and tree where it wins) algorithms; groups that span domains run
// hierarchically (reduce-scatter inside the domain, the network collective on 1/k of the data, all-gather
// inside the domain), and the GPUs of a host share its NICs. The latency of a collective that spans domains
// is NCCL's own model of it (model/nccl_tuning.h): per-hop latencies over the whole ring (or tree) and
// the protocol (LL, LL128, Simple) NCCL would pick for the message size; the link latencies of LinkSpec
// price collectives inside one domain, point-to-point sends and all-to-all. Bandwidths here are *bus* bandwidths: the
// algorithm bandwidth of a collective is bus bandwidth divided by its algorithm factor (2(n-1)/n for
// all-reduce; nccl-tests doc/PERFORMANCE.md).
//
// A host ("node", GPUs sharing NICs) and an NVLink domain are separate (LinkSpec): an HGX host is one 8-GPU
// domain; a GB200 NVL72 rack is one 72-GPU domain of 18 hosts with 4 GPUs each. The fast tier of a group
// is its domain, not its host.
#include "vtrain/gpu_profile.h"

namespace vtrain {

enum class Collective { AllReduce, ReduceScatter, AllGather, AllToAll };

// Where a communication group's members sit. Megatron-LM orders ranks tensor-parallel innermost, then
// context-parallel, then data-parallel (expert-parallel groups fold into tp x cp x dp, expert rank
// innermost), then pipeline-parallel (megatron/core/parallel_state.py, RankGenerator order "tp-cp-ep-dp-pp").
// So the rank stride of a group is the product of the sizes inside it: tp 1, cp tp, dp tp*cp, pp
// tp*cp*dp; an expert group with expert-tensor-parallel size etp has stride etp. Consecutive ranks fill a
// host and an NVLink domain first, so TP, then CP/EP, land inside a domain when they fit.
struct GroupPlacement {
    int size = 1;
    int members_per_node = 1; // members inside one NVLink domain (the fast tier); named for hosts before domains
    int nodes = 1;            // NVLink domains the group spans: more than one pays the network
    int hosts = 1;            // hosts the group spans (informational: hosts share NICs, see CommModel)
};

// A group of `size` ranks `stride` apart, placed on hosts of links.gpus_per_node GPUs and NVLink domains of
// nvlink_domain_size(links) GPUs (a domain holds whole hosts, or a host holds whole domains).
GroupPlacement place_group(int size, int stride, const LinkSpec& links);
// The same where the host is the NVLink domain (HGX/DGX: 8 GPUs per host and per domain).
GroupPlacement place_group(int size, int stride, int gpus_per_node);

// Whether ranks a and b share an NVLink domain.
bool same_nvlink_domain(long long rank_a, long long rank_b, const LinkSpec& links);

// Algorithm factor: how many times the buffer crosses each GPU's link (bus bytes / buffer bytes).
double algorithm_factor(Collective kind, int group_size);

struct CommModel {
    LinkSpec links;
    const std::vector<CollectiveTable>* measured_all_reduce = nullptr; // optional, inside one domain

    // Bandwidth one GPU gets through its host's NICs when every GPU of the host communicates at once.
    double inter_node_bytes_per_s_per_gpu() const;
    double nvlink_bytes_per_s() const { return links.nvlink_bus_gbytes_per_s * 1e9; }

    // A collective over `bytes` (the full buffer: all-reduce input, all-gather output, reduce-scatter input,
    // all-to-all: one rank's whole send buffer, its own chunk included, as nccl-tests counts it).
    double collective_seconds(Collective kind, double bytes, const GroupPlacement& group) const;
    // One point-to-point transfer, inside a domain or across domains.
    double p2p_seconds(double bytes, bool crosses_nodes) const;

    // Single-tier building blocks (exposed for tests): inside one domain, and between domains.
    double intra_node_seconds(Collective kind, double bytes, int n) const;
    double inter_node_seconds(Collective kind, double bytes, int nodes) const;
};

} // namespace vtrain
