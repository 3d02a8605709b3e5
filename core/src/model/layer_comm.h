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

// The expert dispatch/combine: all_to_all_seconds with the NVLink tier at `nvlink_efficiency` of its bus
// bandwidth (GpuProfile::expert_all_to_all_efficiency: token all-to-all kernels reach well below the
// bandwidth of the large collectives the bus figure describes). The network tier keeps the NIC figures
// (DeepEP's internode kernels run at the NIC's line rate: ~50 GB/s on 400 Gb/s CX7, DeepEP docs/legacy.md).
// `network_bytes` >= 0 replaces what crosses the network (a deduplicating dispatcher sends less than the
// (size - k) / size share of the buffer: see moe_remote_domains_per_token).
double expert_all_to_all_seconds(const CommModel& comm, double bytes_per_rank, const GroupPlacement& group, double nvlink_efficiency,
                                 double network_bytes = -1);

// Expected number of other NVLink domains a token's top_k experts fall in, when `experts` are spread evenly
// over `domains` domains and routing is uniform: (D - 1) x (1 - C(E - E/D, k) / C(E, k)). A deduplicating
// dispatcher (MoeDispatcher::Flex) sends each token that many times over the network instead of
// top_k x (D - 1) / D. DeepSeek-V3, E = 256, k = 8 over 8 nodes: 4.63 (not 7); Qwen3-30B-A3B, E = 128,
// k = 8 over 2 nodes: 0.996 (not 4). Group-limited routing (DeepSeek's <= 4 nodes) lowers it further.
double moe_remote_domains_per_token(int experts, int top_k, int domains);

// Bytes one rank sends across the network per expert dispatch (or combine) of one MoE layer, routing uniform:
// the all-to-all dispatcher sends every (token, expert) row whose expert sits in another NVLink domain,
// (size - k) / size of its buffer (k = the group's members in the rank's domain); a deduplicating (flex:
// DeepEP, HybridEP) dispatcher sends a token once per remote domain its top_k experts use
// (moe_remote_domains_per_token), and NVLink forwards it. `row_bytes`: one token's row (hidden x bytes).
double moe_network_bytes_per_rank(double tokens, int top_k, int experts, double row_bytes, const GroupPlacement& ep_group, bool flex);

// Bytes one rank puts into the expert dispatch (or combine) buffer per MoE layer per micro-batch: one row of
// `hidden` elements per (token, selected expert) pair, as Megatron's alltoall dispatcher sends them
// (DeepEP-style deduplication: see moe_remote_domains_per_token).
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
double cp_ring_exposed_seconds(const CommModel& comm, double step_bytes, int steps, double attention_s, int cp, const GroupPlacement& group);

// PyTorch's ring attention (torch.distributed.tensor.experimental.context_parallel, the version torchtitan
// ran in 2024-25) merges each step outside the attention kernel, as separate fp32 element-wise ops: the
// memory traffic of those ops per ring step, per rank and layer. `q_elements` = local tokens x query width,
// `kv_elements` = local tokens x (K + V) width as exchanged. Averaged over the two step kinds of its
// causal load balancing (a full merge for steps with i <= rank, a half merge plus a re-concatenation of
// the whole accumulator for the others).
struct CpRingMergeTraffic {
    double forward_bytes = 0;  // output/LSE rescale and accumulate, and packing K and V for the exchange
    double backward_bytes = 0; // dQ and dK/dV accumulated in fp32, the fp32 dK/dV and K/V send buffers packed
};
CpRingMergeTraffic cp_ring_pytorch_merge_traffic(double q_elements, double kv_elements);

} // namespace vtrain
