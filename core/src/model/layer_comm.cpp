// SPDX-License-Identifier: MIT
#include "model/layer_comm.h"

#include <algorithm>

namespace vtrain {

double all_to_all_seconds(const CommModel& comm, double bytes_per_rank, const GroupPlacement& g)
{
    // One all-to-all model for the whole simulator: CommModel's (NVLink-domain peers and the NIC share in
    // parallel, the slower tier sets the time).
    return comm.collective_seconds(Collective::AllToAll, bytes_per_rank, g);
}

double expert_all_to_all_seconds(const CommModel& comm, double bytes_per_rank, const GroupPlacement& g, double nvlink_efficiency,
                                 double network_bytes)
{
    if (g.size <= 1 || bytes_per_rank <= 0) {
        return 0;
    }
    CommModel expert = comm;
    expert.links.nvlink_bus_gbytes_per_s *= std::clamp(nvlink_efficiency, 0.01, 1.0);
    if (network_bytes < 0 || g.nodes <= 1) {
        return expert.collective_seconds(Collective::AllToAll, bytes_per_rank, g);
    }
    // As CommModel's all-to-all, with the network tier carrying `network_bytes` instead of (size - k) chunks.
    const int k = g.members_per_node;
    const double chunk = bytes_per_rank / g.size;
    const double nvlink = (k - 1) * chunk / expert.nvlink_bytes_per_s();
    const double network = network_bytes / expert.inter_node_bytes_per_s_per_gpu();
    const double latency = (expert.links.inter_node_base_latency_us + (g.nodes - 1) * expert.links.inter_node_latency_us) * 1e-6;
    return latency + std::max(nvlink, network);
}

double moe_remote_domains_per_token(int experts, int top_k, int domains)
{
    if (domains <= 1 || experts <= 0 || top_k <= 0) {
        return 0;
    }
    // P(no selected expert in a given domain) = C(E - E/D, k) / C(E, k) = prod_i (E - E/D - i) / (E - i).
    const double e = experts;
    const double outside = e - e / domains;
    double miss = 1;
    for (int i = 0; i < top_k && miss > 0; ++i) {
        miss *= std::max(0.0, outside - i) / (e - i);
    }
    return (domains - 1) * (1 - miss);
}

double moe_network_bytes_per_rank(double tokens, int top_k, int experts, double row_bytes, const GroupPlacement& g, bool flex)
{
    if (g.size <= 1 || g.nodes <= 1 || tokens <= 0) {
        return 0;
    }
    if (flex) {
        return tokens * moe_remote_domains_per_token(experts, top_k, g.nodes) * row_bytes;
    }
    return tokens * top_k * row_bytes * (g.size - g.members_per_node) / g.size;
}

double moe_dispatch_bytes(double tokens, int top_k, double hidden, double bytes_per_element)
{
    return tokens * top_k * hidden * bytes_per_element;
}

double moe_off_rank_bytes(double tokens, int top_k, double hidden, double bytes_per_element, int ep)
{
    if (ep <= 1) {
        return 0;
    }
    return moe_dispatch_bytes(tokens, top_k, hidden, bytes_per_element) * (ep - 1) / ep;
}

CpRingTraffic cp_ring_traffic(double tokens_local, double kv_width, double bytes_per_element, int cp)
{
    CpRingTraffic t;
    if (cp <= 1) {
        return t;
    }
    t.forward_step_bytes = 2 * tokens_local * kv_width * bytes_per_element;
    t.backward_step_bytes = 2 * t.forward_step_bytes;
    t.steps = cp - 1;
    return t;
}

double cp_ring_exposed_seconds(const CommModel& comm, double step_bytes, int steps, double attention_s, int cp, const GroupPlacement& group)
{
    if (steps <= 0 || cp <= 1) {
        return 0;
    }
    // A ring advances in lock step, so its slowest hop (across nodes when the group spans them) sets the pace.
    const double transfer = comm.p2p_seconds(step_bytes, group.nodes > 1);
    const double block = attention_s / cp;
    return steps * std::max(0.0, transfer - block);
}

CpRingMergeTraffic cp_ring_pytorch_merge_traffic(double q_elements, double kv_elements)
{
    // Bytes per element, from torch/distributed/tensor/experimental/_attention.py (late 2024:
    // _SDPAMerger with convert_to_f32 = True, _partial_update, _templated_ring_attention_backward):
    // Forward, full merge: block_out.to(fp32) 2 + 4; out - block_out 4 + 4 + 4; sigmoid(dlse) * (...)
    // 4 + 4; out - (...) 4 + 4 + 4 = 38. Partial merge: the same on half the rows (19) and torch.cat of the
    // chunked accumulator, 4 + 4 over all rows = 27. Mean of the two: 32.5.
    constexpr double kForwardMerge = (38.0 + 27.0) / 2;
    // torch.cat([key.flatten(), value.flatten()]) before every exchange: bf16 read + write.
    constexpr double kKvPack = 2 + 2;
    // Backward: grad += grad_ in fp32 (4 + 2 + 4 = 10) on the full tensor, or on half of it plus the
    // re-concatenation (5 + 8 = 13), for dQ and for dK/dV (one kind each per step): mean 11.5; dK/dV are
    // then packed into one fp32 send buffer (4 + 4) and K/V into a bf16 one (4).
    constexpr double kGradAccumulate = (10.0 + 13.0) / 2;
    constexpr double kDkvPack = 4 + 4;
    CpRingMergeTraffic t;
    t.forward_bytes = q_elements * kForwardMerge + kv_elements * kKvPack;
    t.backward_bytes = q_elements * kGradAccumulate + kv_elements * (kGradAccumulate + kDkvPack + kKvPack);
    return t;
}

} // namespace vtrain
