// SPDX-License-Identifier: MIT
#pragma once
// The selected plan as launch flags: a Megatron-LM tab (torchrun line and pretrain_gpt.py arguments) and
// a DeepSpeed tab (ds_config.json and the Megatron-DeepSpeed launch line), read-only text with Copy and
// Save… buttons and the warnings of what the framework cannot express.
#include <QDialog>

#include "vtrain/scenario.h"

class QPlainTextEdit;
class QTabWidget;

namespace vtrain::ui {

class LaunchDialog : public QDialog {
    Q_OBJECT
public:
    // `scenario` gives model, training and cluster (its GPU count the plan's); `gpusPerNode` the node size.
    LaunchDialog(const Scenario& scenario, const Plan& plan, int gpusPerNode, QWidget* parent = nullptr);

    QTabWidget* tabs() const { return m_tabs; }
    QString megatronText() const;
    QString deepSpeedConfigText() const;
    QString deepSpeedCommandText() const;

private:
    QWidget* textBlock(const QString& heading, const QString& text, const QString& saveName, const QString& objectName, bool enabled);
    QWidget* warningsLabel(const std::vector<std::string>& warnings);
    void save(const QString& text, const QString& suggestedName);

    QTabWidget* m_tabs = nullptr;
    QPlainTextEdit* m_megatron = nullptr;
    QPlainTextEdit* m_deepSpeedConfig = nullptr;
    QPlainTextEdit* m_deepSpeedCommand = nullptr;
};

} // namespace vtrain::ui
