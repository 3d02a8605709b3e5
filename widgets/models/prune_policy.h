// SPDX-License-Identifier: MIT
#pragma once
// When the explorer's sweep prunes (skips plans whose lower bounds cannot reach the Pareto front). A pruned
// sweep has the same front and top lists but simulates, and so draws and lists, fewer plans; below a few
// million plans an unpruned sweep takes seconds and the chart shows every feasible plan, so by default only
// larger spaces are pruned (Sweep > Prune chooses).
#include <cstdint>
#include <optional>

#include <QString>

namespace vtrain::ui {

enum class PrunePolicy { LargeSweeps, Always, Never };

// Spaces above this many plans are pruned under LargeSweeps: an unpruned sweep runs at roughly 0.5-1M
// plans/s on 2 cores (README, MT-NLG), so this is where a sweep starts to take more than a few seconds.
inline constexpr std::uint64_t kPruneAbovePlans = 2'000'000;

bool shouldPrune(PrunePolicy policy, std::uint64_t planCount);
QString toString(PrunePolicy policy); // "large", "always", "never" (settings)
std::optional<PrunePolicy> prunePolicyFromString(const QString& text);

} // namespace vtrain::ui
