// SPDX-License-Identifier: MIT
#pragma once
// One undo step of the scenario: the whole scenario before and after a committed edit (a field, a check
// box, a preset, an opened file). Whole snapshots, not field diffs: a step then restores fields the
// editor does not show too, and a new scenario field needs nothing here.
#include <functional>

#include <QUndoCommand>

#include "vtrain/scenario.h"

namespace vtrain::ui {

class ScenarioStep : public QUndoCommand {
public:
    using Apply = std::function<void(const Scenario&)>;
    // `apply` puts a scenario into the window (editor, autosave, sweep); the first redo() is skipped,
    // since the edit is already on screen when the step is recorded.
    ScenarioStep(const QString& text, Scenario before, Scenario after, Apply apply);

    void undo() override;
    void redo() override;
    const Scenario& before() const { return m_before; }
    const Scenario& after() const { return m_after; }

private:
    Scenario m_before;
    Scenario m_after;
    Apply m_apply;
    bool m_done = true;
};

} // namespace vtrain::ui
