// SPDX-License-Identifier: MIT
// The (training time, cost) Pareto front: sort by time, then sweep keeping each row that is strictly
// cheaper than every faster-or-equal row before it. O(n log n) for the sort, O(n) for the sweep.
#include <algorithm>
#include <cmath>

#include "vtrain/explorer.h"

namespace vtrain {

std::vector<PlanRow> pareto_front(std::vector<PlanRow> rows)
{
    // Rows with a non-finite objective cannot be compared; they are never on the front.
    std::erase_if(rows, [](const PlanRow& r) { return !std::isfinite(r.training_days) || !std::isfinite(r.cost_usd); });
    std::sort(rows.begin(), rows.end(), [](const PlanRow& a, const PlanRow& b) {
        if (a.training_days != b.training_days) {
            return a.training_days < b.training_days;
        }
        if (a.cost_usd != b.cost_usd) {
            return a.cost_usd < b.cost_usd;
        }
        return a.index < b.index;
    });
    std::vector<PlanRow> front;
    for (auto& row : rows) {
        // Sorted by time, a row is dominated exactly when an earlier row costs as little or less: equal
        // time and cost counts as dominated by the earlier (lower-index) row.
        if (front.empty() || row.cost_usd < front.back().cost_usd) {
            row.on_front = true;
            front.push_back(std::move(row));
        }
    }
    return front;
}

} // namespace vtrain
