// SPDX-License-Identifier: MIT
#pragma once
// Communication inside one layer beyond tensor parallelism: the expert-parallel token dispatch/combine
// (all-to-all) and context parallelism's KV exchange (ring) or head-split all-to-all (Ulysses). Closed
// forms of the volumes live here so tests can check them (derivations: shared/research/modern-training.md
// Sec. 1.3 and Sec. 4, from Megatron-Core's token_dispatcher.py and Transformer Engine's context_parallel.py).
#include "vtrain/comm_model.h"

namespace vtrain {

// All-to-all where every rank sends `bytes_per_rank` in total, an equal share to each of the group's
// ranks (its own share stays local). Peers in the rank's NVLink domain are reached over NVLink, the rest
// over the node's NICs; both tiers run at once, so the slower one sets the time (nccl-tests' definition:
// t = S (n-1)/n / busbw on one tier). CommModel's Collective::AllToAll.
double all_to_all_seconds(const CommModel& comm, double bytes_per_rank, const GroupPlacement& group);

// Bytes one rank puts into the expert dispatch (or combine) buffer per MoE layer per micro-batch: one row of
// `hidden` elements per (token, selected expert) pair, as Megatron's alltoall dispatcher sends them
// (DeepEP-style deduplication per destination rank is not modeled: it is an upper bound).
double moe_dispatch_bytes(double tokens, int top_k, double hidden, double bytes_per_element);
// Of those, the bytes that leave the rank under uniform routing: (ep - 1) / ep of them.
double moe_off_rank_bytes(double tokens, int top_k, double hidden, double bytes_per_element, int ep);

// Ring attention (Transformer Engine's p2p context parallelism): each rank holds s/cp tokens (two load-
// balanced chunks of a causal sequence) and passes its KV block around the ring, cp - 1 steps per pass.
struct CpRingTraffic {
    double forward_step_bytes = 0;  // one KV block: 2 x tokens_local x kv_width x bytes
    double backward_step_bytes = 0; // KV block and its gradient travel together: twice that
    int steps = 0;                  // cp - 1 per pass
};
CpRingTraffic cp_ring_traffic(double tokens_local, double kv_width, double bytes_per_element, int cp);

// Seconds of a ring pass that are not hidden: each step's transfer overlaps the attention of the block
// already held, so (cp - 1) x max(0, transfer - block compute) is exposed.
double cp_ring_exposed_seconds(const CommModel& comm, double step_bytes, int steps, double attention_s, int cp,
                               const GroupPlacement& group);

} // namespace vtrain
