// SPDX-License-Identifier: MIT
#include "scenario_history.h"

namespace vtrain::ui {

ScenarioStep::ScenarioStep(const QString& text, Scenario before, Scenario after, Apply apply)
    : QUndoCommand(text), m_before(std::move(before)), m_after(std::move(after)), m_apply(std::move(apply))
{
}

void ScenarioStep::undo()
{
    m_apply(m_before);
}

void ScenarioStep::redo()
{
    if (m_done) {
        m_done = false; // pushed after the edit happened
        return;
    }
    m_apply(m_after);
}

} // namespace vtrain::ui
