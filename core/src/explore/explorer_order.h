// SPDX-License-Identifier: MIT
#pragma once
// Internal to the explorer: the orders of its top-k lists and the on_front marks, shared by the sweep
// (sweep.cpp) and the merge of shards (explorer_shard.cpp) so both rank rows identically.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "vtrain/explorer.h"

namespace vtrain::detail {

// Strict total orders: equal objectives go by enumeration index.
inline bool faster(const PlanRow& a, const PlanRow& b)
{
    return a.training_days != b.training_days ? a.training_days < b.training_days : a.index < b.index;
}
inline bool cheaper(const PlanRow& a, const PlanRow& b)
{
    return a.cost_usd != b.cost_usd ? a.cost_usd < b.cost_usd : a.index < b.index;
}
inline bool higher_mfu(const PlanRow& a, const PlanRow& b)
{
    return a.mfu != b.mfu ? a.mfu > b.mfu : a.index < b.index;
}

// Keeps the k best of `kept` and `more` by `better`.
template <typename Better>
void merge_top(std::vector<PlanRow>& kept, const std::vector<PlanRow>& more, std::size_t k, Better better)
{
    if (k == 0 || more.empty()) {
        return;
    }
    // Only rows that beat the current k-th can enter; most chunks bring none.
    for (const PlanRow& r : more) {
        if (kept.size() < k || better(r, kept.back())) {
            kept.insert(std::upper_bound(kept.begin(), kept.end(), r, better), r);
            if (kept.size() > k) {
                kept.pop_back();
            }
        }
    }
}

// Sets on_front on each row whose index is on `front`.
inline void mark_front(std::vector<PlanRow>& rows, const std::vector<PlanRow>& front)
{
    std::vector<std::uint64_t> indices;
    indices.reserve(front.size());
    for (const auto& r : front) {
        indices.push_back(r.index);
    }
    std::sort(indices.begin(), indices.end());
    for (auto& r : rows) {
        r.on_front = std::binary_search(indices.begin(), indices.end(), r.index);
    }
}

} // namespace vtrain::detail
