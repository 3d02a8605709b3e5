// SPDX-License-Identifier: MIT
#include "vtrain/layer_comm.h"

#include <algorithm>

namespace vtrain {

double all_to_all_seconds(const CommModel& comm, double bytes_per_rank, const GroupPlacement& g)
{
    // One all-to-all model for the whole simulator: CommModel's (NVLink-domain peers and the NIC share in
    // parallel, the slower tier sets the time).
    return comm.collective_seconds(Collective::AllToAll, bytes_per_rank, g);
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
