// SPDX-License-Identifier: MIT
#pragma once
// Shared setup of the GUI tests: isolated settings and app data (QStandardPaths test mode), the
// resources, and small scenarios that sweep in a fraction of a second.
#include <cerrno> // program_invocation_short_name (glibc)

#include <QCoreApplication>
#include <QStandardPaths>

#include "models/presets.h"
#include "models/resources.h"
#include "vtrain/scenario.h"

namespace vtrain::ui::test {

// Call from a test class's static initMain() (before the application object exists).
inline void initTestEnvironment()
{
    QStandardPaths::setTestModeEnabled(true); // ~/.qttest: never touch the user's settings or autosave
    QCoreApplication::setOrganizationName(QStringLiteral("vtrain-tests"));
    // One settings file and autosave per test program (and scale): ctest runs them in parallel, and a
    // shared file lets one test's restored state leak into another's.
    QString name = QStringLiteral("vtrain-explorer-tests-") + QString::fromLocal8Bit(program_invocation_short_name);
    if (const QByteArray scale = qgetenv("QT_SCALE_FACTOR"); !scale.isEmpty()) {
        name += QStringLiteral("-scale-") + QString::fromLatin1(scale);
    }
    QCoreApplication::setApplicationName(name);
}

// GPT 350M on 8 or 16 A100s, 16 plans: tp {1, 2} x pp {1, 2} x micro-batch {1, 2} x GPUs {8, 16}.
inline Scenario smallScenario()
{
    initResources();
    Scenario s = presetScenario(QStringLiteral("small-gpt-350m")).value();
    SearchSpace q;
    q.tp = {1, 2};
    q.pp = {1, 2};
    q.micro_batch = {1, 2};
    q.schedule = {Schedule::OneFOneB};
    q.recompute = {Recompute::None};
    q.sequence_parallel = {false};
    q.zero_stage = {0};
    q.num_gpus = {8, 16};
    q.gpu = {"a100-sxm4-80gb"};
    s.search = q;
    return s;
}

// The MT-NLG 530B default widened to 256 GPU counts: about a million plans, so a sweep runs long
// enough to be cancelled midway.
inline Scenario bigScenario()
{
    Scenario s = defaultScenario();
    SearchSpace q = s.search.value_or(SearchSpace{});
    q.num_gpus.clear();
    for (int i = 0; i < 256; ++i) {
        q.num_gpus.push_back(2240 + 280 * i);
    }
    s.search = q;
    return s;
}

// bigScenario() over all four GPU types: several million plans, so a cancel always lands mid-sweep.
inline Scenario hugeScenario()
{
    Scenario s = bigScenario();
    s.search->gpu = {"a100-sxm4-80gb", "a100-sxm4-40gb", "h100-sxm5-80gb", "h200-sxm-141gb"};
    return s;
}

// GPT 350M over 4 GPU types and 6 cluster sizes: about 230,000 plans of which about 100,000 fit, so
// rows stream into table and plot for a while.
inline Scenario wideScenario()
{
    Scenario s = smallScenario();
    s.training.global_batch = 512;
    SearchSpace q;
    q.tp = {1, 2, 4, 8};
    q.micro_batch = {1, 2, 4, 8, 16};
    q.num_gpus = {8, 16, 32, 64, 128, 256};
    q.gpu = {"a100-sxm4-80gb", "a100-sxm4-40gb", "h100-sxm5-80gb", "h200-sxm-141gb"};
    q.zero_stage = {0, 1, 2};
    s.search = q;
    return s;
}

} // namespace vtrain::ui::test
