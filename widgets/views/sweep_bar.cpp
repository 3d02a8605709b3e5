// SPDX-License-Identifier: MIT
#include "views/sweep_bar.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

#include "models/format.h"

namespace vtrain::ui {

SweepBar::SweepBar(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("sweepBar"));
    m_run = new QToolButton(this);
    m_run->setObjectName(QStringLiteral("runButton"));
    m_run->setText(tr("Run"));
    m_run->setIcon(QIcon(QStringLiteral(":/icons/run.svg")));
    m_run->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_run->setToolTip(tr("Explore every plan of the scenario (F5)"));
    m_cancel = new QToolButton(this);
    m_cancel->setObjectName(QStringLiteral("cancelButton"));
    m_cancel->setText(tr("Cancel"));
    m_cancel->setIcon(QIcon(QStringLiteral(":/icons/cancel.svg")));
    m_cancel->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_cancel->setToolTip(tr("Stop the sweep; the plans found so far stay (Esc)"));
    m_cancel->setEnabled(false);
    m_auto = new QCheckBox(tr("Re-run on edit"), this);
    m_auto->setObjectName(QStringLiteral("autoRun"));
    m_auto->setChecked(true);
    m_auto->setToolTip(tr("Start a new sweep shortly after each valid edit"));
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("sweepProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    m_progress->setMinimumWidth(160);
    m_progress->setMaximumWidth(260);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("sweepStatus"));
    m_status->setMinimumWidth(260);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 0, 4, 0);
    layout->addWidget(m_run);
    layout->addWidget(m_cancel);
    layout->addWidget(m_auto);
    layout->addSpacing(8);
    layout->addWidget(m_progress);
    layout->addWidget(m_status, 1);

    connect(m_run, &QToolButton::clicked, this, &SweepBar::runRequested);
    connect(m_cancel, &QToolButton::clicked, this, &SweepBar::cancelRequested);
    connect(m_auto, &QCheckBox::toggled, this, &SweepBar::autoRunChanged);
}

void SweepBar::setRunner(SweepRunner* runner)
{
    m_runner = runner;
    connect(runner, &SweepRunner::progressChanged, this, &SweepBar::onProgress);
    connect(runner, &SweepRunner::stateChanged, this, &SweepBar::onState);
    connect(runner, &SweepRunner::finished, this, [this](std::uint64_t, std::shared_ptr<const ExploreResult> r) { onFinished(r); });
    connect(runner, &SweepRunner::failed, this, [this](std::uint64_t, const QString& message) {
        m_status->setText(tr("<span style='color:#c62828'>The sweep cannot run: %1</span>").arg(message.toHtmlEscaped()));
    });
    onState(runner->state());
}

void SweepBar::setRunEnabled(bool enabled)
{
    m_runEnabled = enabled;
    if (m_runner) {
        onState(m_runner->state());
    }
}

bool SweepBar::autoRun() const
{
    return m_auto->isChecked();
}

void SweepBar::setAutoRun(bool on)
{
    m_auto->setChecked(on);
}

QString SweepBar::statusText() const
{
    return m_status->text();
}

void SweepBar::onProgress(const SweepProgress& p)
{
    if (!m_runner || !m_runner->isRunning()) {
        return;
    }
    if (p.done == 0) {
        // Before its first plan a sweep lays out its space and, pruned, simulates its most promising groups
        // first (seconds for 10^8 plans): a busy bar, not "0 of 130,056,192" on an empty one.
        m_progress->setRange(0, 0);
        QString text = p.total > 0 ? tr("Preparing %1 plans…").arg(formatCount(static_cast<double>(p.total))) : tr("Preparing the plan space…");
        if (p.elapsed_s >= 1) {
            text += tr(" · %1").arg(formatDuration(p.elapsed_s));
        }
        if (m_runner->state() == SweepRunner::State::Cancelling) {
            text += tr(" · cancelling…");
        }
        m_status->setText(text);
        return;
    }
    m_progress->setRange(0, 1000);
    m_progress->setValue(p.total > 0 ? static_cast<int>(1000.0 * static_cast<double>(p.done) / static_cast<double>(p.total)) : 0);
    QString text = tr("%1 of %2 plans").arg(formatCount(static_cast<double>(p.done)), formatCount(static_cast<double>(p.total)));
    if (p.plans_per_s > 0) {
        text += tr(" · %1/s").arg(formatCount(p.plans_per_s));
    }
    if (p.seconds_left >= 0) {
        text += tr(" · %1 left").arg(formatDuration(p.seconds_left));
    }
    if (m_runner->state() == SweepRunner::State::Cancelling) {
        text += tr(" · cancelling…");
    }
    m_status->setText(text);
}

void SweepBar::onState(SweepRunner::State state)
{
    const bool running = state == SweepRunner::State::Running || state == SweepRunner::State::Cancelling;
    m_run->setEnabled(m_runEnabled);
    m_run->setText(running ? tr("Restart") : tr("Run"));
    m_cancel->setEnabled(state == SweepRunner::State::Running);
    if (!running) {
        m_progress->setRange(0, 1000); // a failed or cancelled sweep leaves no busy bar behind
    }
    if (!m_runEnabled && !running) {
        m_status->setText(tr("Fix the refused entries in the scenario to run a sweep."));
    }
}

void SweepBar::onFinished(std::shared_ptr<const ExploreResult> r)
{
    m_progress->setRange(0, 1000); // out of the busy state
    m_progress->setValue(r->cancelled ? m_progress->value() : 1000);
    std::uint64_t rejected = 0;
    for (std::uint64_t n : r->rejected) {
        rejected += n;
    }
    // Bounded-out plans (a pruned sweep) are legal but provably off the front: counted beside the rejected.
    const QString bounded = r->bounded > 0 ? tr(", %1 bounded out").arg(formatCount(static_cast<double>(r->bounded))) : QString();
    const QString counts = tr("%1 feasible%2, %3 rejected of %4 plans in %5")
                               .arg(formatCount(static_cast<double>(r->feasible)), bounded, formatCount(static_cast<double>(rejected)),
                                    formatCount(static_cast<double>(r->total)), formatSeconds(r->elapsed_s));
    m_status->setText(r->cancelled ? tr("Cancelled after %1 of %2 plans: %3 feasible%4, %5 rejected so far")
                                         .arg(formatCount(static_cast<double>(r->evaluated)), formatCount(static_cast<double>(r->total)),
                                              formatCount(static_cast<double>(r->feasible)), bounded, formatCount(static_cast<double>(rejected)))
                                   : counts);
    m_status->setToolTip(r->bounded > 0 ? tr("This sweep was pruned: %1 legal plans were not simulated because a lower bound on their "
                                             "time and cost shows they cannot reach the Pareto front. The chart and table show the "
                                             "simulated plans; the front is the same as without pruning. Sweep > Prune changes this.")
                                              .arg(formatCount(static_cast<double>(r->bounded)))
                                        : QString());
}

} // namespace vtrain::ui
