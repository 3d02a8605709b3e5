// SPDX-License-Identifier: MIT
#include "models/workload.h"

#include <QCoreApplication>

#include "models/format.h"
#include "vtrain/scenario_json.h"

namespace vtrain::ui {

bool sameWorkload(const Scenario& a, const Scenario& b)
{
    return a.training.tokens == b.training.tokens && scenario_to_json(a).at("model") == scenario_to_json(b).at("model");
}

QString workloadName(const Scenario& s)
{
    return QCoreApplication::translate("vtrain::ui", "%1 on %2 tokens").arg(elidedName(s.model.name, 40), formatTokens(s.training.tokens));
}

QString workloadDifference(const Scenario& a, const Scenario& b)
{
    if (sameWorkload(a, b)) {
        return {};
    }
    const bool sameModel = scenario_to_json(a).at("model") == scenario_to_json(b).at("model");
    return QCoreApplication::translate("vtrain::ui", "A trains %1, B trains %2: %3, so the differences below are not the plans' alone.")
        .arg(workloadName(a), workloadName(b),
             sameModel ? QCoreApplication::translate("vtrain::ui", "different token budgets")
                       : QCoreApplication::translate("vtrain::ui", "different models"));
}

} // namespace vtrain::ui
