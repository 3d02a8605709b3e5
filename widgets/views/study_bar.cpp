// SPDX-License-Identifier: MIT
#include "views/study_bar.h"

#include <QGridLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

#include "models/format.h"

namespace vtrain::ui {
namespace {

QToolButton* button(const QString& name, const QString& text, const QString& icon, const QString& tip, QWidget* parent)
{
    auto* b = new QToolButton(parent);
    b->setObjectName(name);
    b->setText(text);
    b->setIcon(QIcon(icon));
    b->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    b->setToolTip(tip);
    return b;
}

} // namespace

StudyBar::StudyBar(const QString& stepName, QWidget* parent) : QWidget(parent), m_stepName(stepName)
{
    m_run = button(QStringLiteral("studyRunButton"), tr("Run"), QStringLiteral(":/icons/run.svg"), tr("Run the study with these inputs"), this);
    m_cancel = button(QStringLiteral("studyCancelButton"), tr("Cancel"), QStringLiteral(":/icons/cancel.svg"),
                      tr("Stop the study; what is done so far stays"), this);
    m_cancel->setEnabled(false);
    m_export = button(QStringLiteral("studyExportButton"), tr("Export…"), QStringLiteral(":/icons/export.svg"),
                      tr("Save the chart as PNG, SVG or PDF"), this);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("studyProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("studyStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* layout = new QGridLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_run, 0, 0);
    layout->addWidget(m_cancel, 0, 1);
    layout->addWidget(m_export, 0, 2);
    layout->setColumnStretch(3, 1);
    layout->addWidget(m_progress, 1, 0, 1, 4);
    layout->addWidget(m_status, 2, 0, 1, 4);

    connect(m_run, &QToolButton::clicked, this, &StudyBar::runRequested);
    connect(m_export, &QToolButton::clicked, this, &StudyBar::exportRequested);
}

void StudyBar::setRunner(StudyRunner* runner)
{
    m_runner = runner;
    connect(m_cancel, &QToolButton::clicked, runner, &StudyRunner::cancel);
    connect(runner, &StudyRunner::progressChanged, this, &StudyBar::onProgress);
    connect(runner, &StudyRunner::stateChanged, this, &StudyBar::onState);
    onState(runner->state());
}

void StudyBar::setStatus(const QString& text)
{
    m_status->setText(text);
}

QString StudyBar::statusText() const
{
    return m_status->text();
}

void StudyBar::onProgress(const StudyProgress& p)
{
    if (!m_runner || !m_runner->isRunning()) {
        return;
    }
    m_progress->setValue(static_cast<int>(1000 * p.fraction()));
    QString text =
        p.steps_total > 0
            ? tr("%1 of %2 %3").arg(formatCount(static_cast<double>(p.steps_done)), formatCount(static_cast<double>(p.steps_total)), m_stepName)
            : tr("Starting…");
    if (p.plans_total > 0 && p.steps_done < p.steps_total) {
        text += tr(" · %1 of %2 plans of the current one")
                    .arg(formatCount(static_cast<double>(p.plans_done)), formatCount(static_cast<double>(p.plans_total)));
    }
    if (m_runner->state() == StudyRunner::State::Cancelling) {
        text += tr(" · cancelling…");
    }
    m_status->setText(text);
}

void StudyBar::onState(StudyRunner::State state)
{
    const bool running = state == StudyRunner::State::Running || state == StudyRunner::State::Cancelling;
    m_run->setText(running ? tr("Restart") : tr("Run"));
    m_cancel->setEnabled(state == StudyRunner::State::Running);
    if (state == StudyRunner::State::Finished) {
        m_progress->setValue(1000);
    }
}

} // namespace vtrain::ui
