// SPDX-License-Identifier: MIT
#pragma once
// Where a plan's communication groups sit for its rank order (Plan::rank_order): the stride of every
// parallel dimension, and each group placed on hosts and NVLink domains. One place for it, so that the
// layer costs (tp, cp, ep, etp), the data-parallel traffic and the pipeline sends agree.
#include <optional>
#include <string>

#include "vtrain/comm_model.h"
#include "vtrain/scenario.h"

namespace vtrain {

// "tp-cp-ep-dp-pp" and the like.
std::string to_string(const RankOrder& order);
// Parses an order: the five names tp, cp, ep, dp, pp, each once, joined by '-'; tp first (tensor
// parallelism needs the fastest link, and every Megatron order starts with it). Megatron-Core numbers
// dense layers with ep = 1 and expert layers with cp = 1 (two RankGenerators), so ep and dp need not be
// neighbours ("tp-cp-ep-pp-dp" separates them). `why` gets the reason when not.
std::optional<RankOrder> parse_rank_order(const std::string& text, std::string* why = nullptr);

// Ranks between neighbours of each dimension, dense layers (tp, cp, dp, pp) and expert layers (etp,
// ep, edp, expert_pp; cp = 1 there), as Megatron-Core's two RankGenerators number them.
struct RankStrides {
    long long tp = 1, cp = 1, dp = 1, pp = 1;
    long long etp = 1, ep = 1, edp = 1, expert_pp = 1;
};
RankStrides rank_strides(const Plan& plan);

// One dimension of a group: `size` ranks `stride` apart.
struct RankSpan {
    int size = 1;
    long long stride = 1;
};
// A group over two dimensions (inner: the smaller stride): all size_a x size_b ranks. Contiguous spans
// (outer stride = inner stride x inner size) are one arithmetic run and placed as place_group() does.
GroupPlacement place_spans(RankSpan inner, RankSpan outer, const LinkSpec& links);

// Every group a plan communicates over.
struct PlanGroups {
    GroupPlacement tp, cp, ep, etp; // layer collectives
    GroupPlacement dense_dp;        // dp x cp: the gradient all-reduce (zero 0)
    GroupPlacement shard, replica;  // zero >= 1: the shard group (dp x cp, or shard_group) and across shard groups
    GroupPlacement expert_dp;       // expert data-parallel (its shard with zero >= 1)
    long long pp_stride = 1;        // ranks between consecutive pipeline stages
};
PlanGroups place_plan_groups(const Plan& plan, const LinkSpec& links);

// The NVLink domain of stage `stage`'s first rank: pipeline sends between stages in different domains
// use the network.
long long domain_of_stage(int stage, long long pp_stride, const LinkSpec& links);

// Why the plan's rank order cannot be built, or nothing: with a mixture-of-experts model the pipeline
// groups of dense and expert layers must coincide (Megatron-Core asserts it), so the ranks inside a
// stage ahead of pp must number the same in both (tp x cp = etp x ep when pp sits before dp).
std::optional<std::string> rank_order_problem(const ModelSpec& model, const Plan& plan);

} // namespace vtrain
