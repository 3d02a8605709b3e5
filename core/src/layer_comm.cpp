// SPDX-License-Identifier: MIT
#include "vtrain/layer_comm.h"

#include <algorithm>

namespace vtrain {

double all_to_all_seconds(const CommModel& comm, double bytes_per_rank, const GroupPlacement& g)
{
    if (g.size <= 1 || bytes_per_rank <= 0) {
        return 0;
    }
    const double n = g.size;
    const double local = std::min(g.members_per_node, g.size);
    const double intra_bytes = bytes_per_rank * (local - 1) / n;
    const double inter_bytes = bytes_per_rank * (n - local) / n;
    const LinkSpec& l = comm.links;
    double intra = 0;
    if (intra_bytes > 0) {
        intra = (l.nvlink_base_latency_us + l.nvlink_step_latency_us) * 1e-6 + intra_bytes / comm.nvlink_bytes_per_s();
    }
    double inter = 0;
    if (inter_bytes > 0) {
        inter = (l.inter_node_base_latency_us + l.inter_node_latency_us) * 1e-6 + inter_bytes / comm.inter_node_bytes_per_s_per_gpu();
    }
    return std::max(intra, inter);
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

double cp_ring_exposed_seconds(const CommModel& comm, double step_bytes, int steps, double attention_s, int cp,
                               const GroupPlacement& group)
{
    if (steps <= 0 || cp <= 1) {
        return 0;
    }
    // A ring advances in lock step, so its slowest hop (across nodes when the group spans them) sets the pace.
    const double transfer = comm.p2p_seconds(step_bytes, group.nodes > 1);
    const double block = attention_s / cp;
    return steps * std::max(0.0, transfer - block);
}

} // namespace vtrain
