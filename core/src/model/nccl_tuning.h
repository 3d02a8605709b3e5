// SPDX-License-Identifier: MIT
#pragma once
// NCCL's own cost model for a collective whose ranks span more than one NVLink domain: for every
// (algorithm, protocol) pair it runs, time = latency + wire time at that protocol's bandwidth, and it
// launches the fastest (NVIDIA/nccl src/graph/tuning.cc @ b6475625, ncclTopoTuneModel and
// ncclTopoGetAlgoTime; the protocols and algorithms are described in Hu et al., "Demystifying NCCL: An
// In-depth Analysis of GPU Communication Protocols and Algorithms", arXiv 2507.04786, which reads NCCL
// 2.19.1). What this adds to a bandwidth-only model is the latency that grows with the ranks: a ring
// takes n - 1 steps (all-reduce: 2(n - 1)), each paying a per-hop latency, NVLink's inside a domain and
// the network's between domains, so a gather over 1,024 ranks pays ~900 NVLink hops and ~130 network
// hops whatever its size; the tree (all-reduce only) pays log2 of the domains instead. The low-latency
// protocols trade bandwidth for latency (LL: 8-byte flagged stores, a quarter of the bandwidth; LL128:
// 128-byte lines, ~92%), so small messages pick LL/LL128 and large ones Simple.
#include <string>

namespace vtrain {

// SMs an NCCL collective occupies while it runs beside compute: one CTA per channel, 16-32 of them
// (Megatron-LM docs/user-guide/features/megatron_fsdp.md @ 11ceb1d: SHARP "reduce[s] utilization of GPU
// streaming multi-processors (SM) from 16-32 to 1-6 ... [and] frees up GPU-hosted processors for
// overlapped compute (GEMM) kernels"); an H100 FSDP prefetch all-gather is seen launching 24 blocks
// beside a 132-block GEMM (NVIDIA developer forum, "Compute-Communication Overlap Causes Severe GEMM
// Performance Degradation because of Tail Effect", 2025). 24, the middle of the documented range.
constexpr double kNcclOverlapSms = 24;

// The collectives NCCL runs as rings or trees (all-to-all is grouped point-to-point: CommModel).
enum class NcclCollective { AllGather, ReduceScatter, AllReduce };
enum class NcclAlgorithm { Ring, Tree };
enum class NcclProtocol { LL, LL128, Simple };

// Latency of one collective over `ranks` ranks in `domains` NVLink domains (ranks / domains per domain),
// in seconds: tuning.cc's baseLat + (ring) (nsteps - nInterSteps) x intra-hop + nInterSteps x network-hop,
// or (tree) 2 x ((ranks per domain - 1) x intra-hop + floor(log2 domains) x network-hop).
double nccl_latency_seconds(NcclCollective kind, NcclAlgorithm algorithm, NcclProtocol protocol, int ranks, int domains);

// Wire time of a protocol given the Simple protocol's (`simple_wire_s`, the bandwidth-only time of the
// collective) and the bytes each rank puts on the bus (`bus_bytes`: (n-1)/n of the buffer for
// all-gather / reduce-scatter, twice that for all-reduce). LL runs at a quarter of the bus bandwidth
// (at most 20.4 GB/s across nodes), LL128 at 92%; the tree runs at 92% of the ring's bandwidth.
double nccl_wire_seconds(NcclAlgorithm algorithm, NcclProtocol protocol, double simple_wire_s, double bus_bytes);

struct NcclChoice {
    double seconds = 0;
    double latency_s = 0;
    NcclAlgorithm algorithm = NcclAlgorithm::Ring;
    NcclProtocol protocol = NcclProtocol::Simple;
};
// The fastest (algorithm, protocol) for an all-gather, reduce-scatter or all-reduce that spans domains:
// ring for every kind, tree too for all-reduce.
NcclChoice nccl_best(NcclCollective kind, double simple_wire_s, double bus_bytes, int ranks, int domains);

std::string to_string(NcclAlgorithm a);
std::string to_string(NcclProtocol p);

} // namespace vtrain
