// SPDX-License-Identifier: MIT
#pragma once
// What a plan trains: the model and the token budget. Plans of two workloads can be compared, but their
// differences are then not the plans' alone (an MT-NLG plan pinned as A once showed -80 % against every
// DeepSeek-V3 plan with no word that it was another model).
#include <QString>

#include "vtrain/scenario.h"

namespace vtrain::ui {

bool sameWorkload(const Scenario& a, const Scenario& b);
// Empty for the same workload; else one sentence naming both ("A trains MT-NLG 530B on 270B tokens, B
// trains DeepSeek-V3 on 14.8T tokens: ...").
QString workloadDifference(const Scenario& a, const Scenario& b);
// "MT-NLG 530B on 270B tokens"
QString workloadName(const Scenario& s);

} // namespace vtrain::ui
