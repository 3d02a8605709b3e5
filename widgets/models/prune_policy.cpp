// SPDX-License-Identifier: MIT
#include "models/prune_policy.h"

namespace vtrain::ui {

bool shouldPrune(PrunePolicy policy, std::uint64_t planCount)
{
    switch (policy) {
    case PrunePolicy::Always: return true;
    case PrunePolicy::Never: return false;
    case PrunePolicy::LargeSweeps: return planCount > kPruneAbovePlans;
    }
    return false;
}

QString toString(PrunePolicy policy)
{
    switch (policy) {
    case PrunePolicy::LargeSweeps: return QStringLiteral("large");
    case PrunePolicy::Always: return QStringLiteral("always");
    case PrunePolicy::Never: return QStringLiteral("never");
    }
    return {};
}

std::optional<PrunePolicy> prunePolicyFromString(const QString& text)
{
    for (PrunePolicy p : {PrunePolicy::LargeSweeps, PrunePolicy::Always, PrunePolicy::Never}) {
        if (text == toString(p)) {
            return p;
        }
    }
    return std::nullopt;
}

} // namespace vtrain::ui
