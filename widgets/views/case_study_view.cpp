// SPDX-License-Identifier: MIT
#include "views/case_study_view.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QSettings>
#include <QTableWidgetItem>
#include <QToolButton>
#include <QVBoxLayout>

#include "models/profile_catalog.h"
#include "views/export_dialog.h"
#include "views/field_row.h"
#include "views/study_bar.h"

namespace vtrain::ui {

CaseStudyView::CaseStudyView(ProfileCatalog* catalog, const Names& names, QWidget* parent) : QWidget(parent), m_catalog(catalog), m_names(names) {}

QFormLayout* CaseStudyView::buildForm(QWidget* panel, const QString& gpuName)
{
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_gpu = new QComboBox(panel);
    m_gpu->setObjectName(gpuName);
    m_gpu->addItems(m_catalog->ids());
    const int a100 = m_gpu->findText(QStringLiteral("a100-sxm4-80gb"));
    m_gpu->setCurrentIndex(a100 >= 0 ? a100 : 0);
    m_gpuError = new QLabel(panel);
    m_gpuError->setObjectName(gpuName + QStringLiteral(".error"));
    m_gpuError->setStyleSheet(QStringLiteral("color: #c62828;"));
    m_gpuError->setWordWrap(true);
    m_gpuError->setVisible(false);
    auto* gpuBox = new QVBoxLayout;
    gpuBox->setSpacing(1);
    gpuBox->addWidget(m_gpu);
    gpuBox->addWidget(m_gpuError);
    form->addRow(tr("GPU type"), gpuBox);
    connect(m_gpu, &QComboBox::currentIndexChanged, this, &CaseStudyView::onEdited);
    return form;
}

QLabel* CaseStudyView::finishInputs(QWidget* panel, const QString& intro, QFormLayout* form, const QString& resultName)
{
    m_bar = new StudyBar(m_names.stepName, panel);
    m_bar->setRunner(m_runner);
    connect(m_bar, &StudyBar::runRequested, this, &CaseStudyView::run);
    connect(m_bar, &StudyBar::exportRequested, this, &CaseStudyView::exportDialog);
    auto* result = new QLabel(panel);
    result->setObjectName(resultName);
    result->setWordWrap(true);
    result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    result->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    auto* introLabel = new QLabel(intro, panel);
    introLabel->setWordWrap(true);
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(introLabel);
    layout->addLayout(form);
    layout->addWidget(m_bar);
    layout->addWidget(result, 1);
    return result;
}

QString CaseStudyView::gpuId() const
{
    return m_gpu->currentText();
}

void CaseStudyView::selectGpu(const QString& gpu)
{
    if (const int i = m_gpu->findText(gpu); i >= 0) {
        m_gpu->setCurrentIndex(i);
    }
}

void CaseStudyView::setFields(const QHash<QString, FieldRow*>& fields, const QHash<QString, QString>& labels)
{
    m_fields = fields;
    m_labels = labels;
    m_labels.insert(QStringLiteral("gpu"), tr("GPU type"));
}

void CaseStudyView::setRunner(StudyRunner* runner)
{
    m_runner = runner;
    connect(runner, &StudyRunner::failed, this, [this](std::uint64_t, const Diagnostics& errors) { showErrors(errors); });
}

void CaseStudyView::finishSetup(const QString& hint)
{
    m_bar->setStatus(hint);
    m_bar->exportButton()->setEnabled(false); // nothing to export before the first result
    m_saving = true;
}

void CaseStudyView::editInputs(const std::function<void()>& set)
{
    m_loading = true;
    set();
    m_loading = false;
    onEdited();
}

void CaseStudyView::restoreInputs()
{
    const QVariantMap saved = QSettings().value(QLatin1String(m_names.settingsKey)).toMap();
    if (saved.isEmpty()) {
        return;
    }
    editInputs([&] {
        selectGpu(saved.value(QStringLiteral("gpu")).toString());
        loadInputs(saved);
    });
}

void CaseStudyView::saveInputs() const
{
    if (!m_saving) {
        return;
    }
    QVariantMap saved = savedInputs();
    saved.insert(QStringLiteral("gpu"), m_gpu->currentText());
    QSettings().setValue(QLatin1String(m_names.settingsKey), saved);
}

bool CaseStudyView::run()
{
    m_runner->cancelScheduled();
    const Study start = study();
    return start && start(Start::Now);
}

void CaseStudyView::cancel()
{
    m_runner->cancel();
}

void CaseStudyView::onEdited()
{
    if (m_loading) {
        return;
    }
    saveInputs();
    const Study start = study();
    if (!start) {
        m_runner->cancelScheduled(); // the pending start was for inputs that are gone
        return;
    }
    m_bar->setStatus(m_resultStatus.isEmpty() ? tr("Ready to run.") : m_resultStatus); // any refusal shown before is fixed
    if (m_autoRun && m_shown) {
        start(Start::Debounced);
    }
}

void CaseStudyView::clearErrors()
{
    for (FieldRow* row : m_fields) {
        row->setError({});
    }
    m_gpuError->clear();
    m_gpuError->setVisible(false);
}

void CaseStudyView::showErrors(const Diagnostics& errors)
{
    QStringList lines;
    for (const Diagnostic& d : errors) {
        const QString field = QString::fromStdString(d.field);
        const QString message = QString::fromStdString(d.message);
        if (FieldRow* row = m_fields.value(field); row && row->error().isEmpty()) {
            row->setError(message);
        } else if (field == u"gpu") {
            m_gpuError->setText(message);
            m_gpuError->setVisible(true);
        }
        const QString label = m_labels.value(field, field);
        lines << (label.isEmpty() ? message : label + QStringLiteral(": ") + message);
    }
    const QString text = lines.join(QLatin1Char('\n')).toHtmlEscaped().replace(u'\n', QStringLiteral("<br>"));
    m_bar->setStatus(QStringLiteral("<span style='color:#c62828'>%1</span>").arg(text));
}

void CaseStudyView::showFinished(const QString& status)
{
    m_resultStatus = status;
    m_bar->exportButton()->setEnabled(true);
    m_bar->setStatus(m_resultStatus);
}

std::string CaseStudyView::notA(const QString& text, const QString& what)
{
    return QStringLiteral("\"%1\" is not %2").arg(text, what).toStdString();
}

QTableWidgetItem* CaseStudyView::cell(const QString& text, Qt::Alignment align)
{
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align);
    item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    return item;
}

QString CaseStudyView::fieldError(const QString& field) const
{
    if (field == u"gpu") {
        return m_gpuError->text();
    }
    const FieldRow* row = m_fields.value(field);
    return row ? row->error() : QString();
}

QString CaseStudyView::statusText() const
{
    return m_bar->statusText();
}

bool CaseStudyView::exportImage(const QString& path, const ExportSize& size, QString* error)
{
    return exportPlot(customPlot(), path, size, m_names.chartTitle, error);
}

void CaseStudyView::exportDialog()
{
    if (const auto path = ExportDialog::exportChart(this, customPlot(), m_names.chartName, m_names.fileName, m_names.chartTitle)) {
        m_bar->setStatus(tr("Wrote %1").arg(path->toHtmlEscaped()));
    }
}

void CaseStudyView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    // The study runs when the tab is first looked at, not at start-up (it would compete with the sweep).
    if (!m_shown) {
        m_shown = true;
        if (m_autoRun && m_resultStatus.isEmpty() && !m_runner->isRunning()) {
            run();
        }
    }
}

} // namespace vtrain::ui
