// SPDX-License-Identifier: MIT
#include "vtrain/rank_layout.h"

#include <algorithm>

#include "vtrain/json_fields.h"
#include "vtrain/memory_model.h"

namespace vtrain {
namespace {

constexpr const char* kNames[] = {"tp", "cp", "ep", "dp", "pp"};

// Members of a group (spans by increasing stride) inside one block of `block` consecutive ranks: the
// inner dimension fills the block first; the next one counts only once the inner one fits whole.
int members_per_block(RankSpan inner, RankSpan outer, int block)
{
    int count = 1;
    for (const RankSpan& s : {inner, outer}) {
        if (s.size <= 1) {
            continue;
        }
        if (s.stride >= block) {
            break;
        }
        const int k = static_cast<int>(std::min<long long>(s.size, std::max<long long>(1, block / s.stride)));
        count *= k;
        if (k < s.size) {
            break;
        }
    }
    return count;
}

long long stride_of(const RankOrder& order, ParallelDim dim, const long long (&sizes)[5])
{
    long long stride = 1;
    for (const ParallelDim d : order.dims) {
        if (d == dim) {
            return stride;
        }
        stride *= sizes[static_cast<int>(d)];
    }
    return stride;
}

} // namespace

std::string to_string(const RankOrder& order)
{
    std::string s;
    for (const ParallelDim d : order.dims) {
        if (!s.empty()) {
            s += '-';
        }
        s += kNames[static_cast<int>(d)];
    }
    return s;
}

std::optional<RankOrder> parse_rank_order(const std::string& text, std::string* why)
{
    auto fail = [why](std::string reason) -> std::optional<RankOrder> {
        if (why != nullptr) {
            *why = std::move(reason);
        }
        return std::nullopt;
    };
    RankOrder order;
    bool seen[5] = {};
    std::size_t pos = 0;
    for (int i = 0; i < 5; ++i) {
        const std::size_t end = std::min(text.find('-', pos), text.size());
        const std::string name = text.substr(pos, end - pos);
        const auto* it = std::find_if(std::begin(kNames), std::end(kNames), [&](const char* n) { return name == n; });
        if (it == std::end(kNames)) {
            return fail("\"" + json_fields::bounded(name, 40) +
                        "\" is not one of tp, cp, ep, dp, pp (write all five joined by '-', e.g. \"tp-cp-ep-dp-pp\")");
        }
        const int d = static_cast<int>(it - std::begin(kNames));
        if (seen[d]) {
            return fail("names " + name + " twice");
        }
        seen[d] = true;
        order.dims[static_cast<std::size_t>(i)] = static_cast<ParallelDim>(d);
        if (end >= text.size() && i < 4) {
            return fail("names " + std::to_string(i + 1) + " of the five dimensions tp, cp, ep, dp, pp");
        }
        pos = end + 1;
    }
    if (pos <= text.size()) {
        return fail("has more than the five dimensions tp, cp, ep, dp, pp");
    }
    if (order.dims[0] != ParallelDim::Tp) {
        return fail("must start with tp: tensor parallelism takes the fastest link (every Megatron-Core order starts with it)");
    }
    return order;
}

RankStrides rank_strides(const Plan& p)
{
    const long long dense[5] = {p.tp, p.cp, 1, p.dp, p.pp};
    const int etp = p.effective_etp();
    const long long expert[5] = {etp, 1, p.ep, expert_data_parallel(p), p.pp};
    const RankOrder& o = p.rank_order;
    RankStrides s;
    s.tp = stride_of(o, ParallelDim::Tp, dense);
    s.cp = stride_of(o, ParallelDim::Cp, dense);
    s.dp = stride_of(o, ParallelDim::Dp, dense);
    s.pp = stride_of(o, ParallelDim::Pp, dense);
    s.etp = stride_of(o, ParallelDim::Tp, expert);
    s.ep = stride_of(o, ParallelDim::Ep, expert);
    s.edp = stride_of(o, ParallelDim::Dp, expert);
    s.expert_pp = stride_of(o, ParallelDim::Pp, expert);
    return s;
}

GroupPlacement place_spans(RankSpan inner, RankSpan outer, const LinkSpec& links)
{
    if (inner.size <= 1) {
        return place_group(outer.size, static_cast<int>(std::min<long long>(outer.stride, 1 << 30)), links);
    }
    if (outer.size <= 1 || outer.stride == inner.stride * inner.size) {
        return place_group(inner.size * std::max(1, outer.size), static_cast<int>(std::min<long long>(inner.stride, 1 << 30)), links);
    }
    GroupPlacement g;
    g.size = inner.size * outer.size;
    g.members_per_node = members_per_block(inner, outer, nvlink_domain_size(links));
    g.nodes = (g.size + g.members_per_node - 1) / g.members_per_node;
    const int per_host = members_per_block(inner, outer, std::max(1, links.gpus_per_node));
    g.hosts = (g.size + per_host - 1) / per_host;
    return g;
}

PlanGroups place_plan_groups(const Plan& p, const LinkSpec& links)
{
    const RankStrides s = rank_strides(p);
    auto one = [&links](int size, long long stride) { return place_spans({1, 1}, {size, stride}, links); };
    PlanGroups g;
    g.tp = one(p.tp, s.tp);
    g.cp = one(p.cp, s.cp);
    const int etp = p.effective_etp();
    g.ep = one(p.ep, s.ep);
    g.etp = one(etp, s.etp);
    // Megatron's data-parallel group with context parallelism ("dp-cp"): both dimensions, inner first.
    RankSpan inner{p.cp, s.cp}, outer{p.dp, s.dp};
    if (inner.stride > outer.stride) {
        std::swap(inner, outer);
    }
    g.dense_dp = place_spans(inner, outer, links);
    // ZeRO shards over the first `shard.dense` ranks of that group (inner dimension first), and
    // replicates across the rest (hybrid shard).
    const ShardDegrees shard = shard_degrees(p);
    const int k = shard.dense;
    if (k <= inner.size) {
        g.shard = one(k, inner.stride);
        g.replica = place_spans({inner.size / std::max(1, k), inner.stride * k}, outer, links);
    } else {
        const int outer_share = k / std::max(1, inner.size);
        g.shard = place_spans(inner, {outer_share, outer.stride}, links);
        g.replica = one(outer.size / std::max(1, outer_share), outer.stride * outer_share);
    }
    g.expert_dp = one(p.zero_stage >= 1 ? shard.expert : expert_data_parallel(p), s.edp);
    g.pp_stride = s.pp;
    return g;
}

long long domain_of_stage(int stage, long long pp_stride, const LinkSpec& links)
{
    return static_cast<long long>(stage) * pp_stride / nvlink_domain_size(links);
}

std::optional<std::string> rank_order_problem(const ModelSpec& model, const Plan& p)
{
    if (!model.moe.enabled() || p.pp < 2) {
        return std::nullopt;
    }
    const RankStrides s = rank_strides(p);
    if (s.pp != s.expert_pp) {
        return "rank order " + to_string(p.rank_order) + " gives pipeline neighbours a rank stride of " + std::to_string(s.pp) +
               " in dense layers but " + std::to_string(s.expert_pp) + " in expert layers (etp x ep = " + std::to_string(p.effective_etp() * p.ep) +
               "); Megatron-Core needs one pipeline group for both";
    }
    return std::nullopt;
}

} // namespace vtrain
