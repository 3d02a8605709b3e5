// SPDX-License-Identifier: MIT
#include "views/export_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>

#include <qcustomplot.h>

#include "models/settings_keys.h"

namespace vtrain::ui {

ExportDialog::ExportDialog(const QString& what, const QString& suggestedPath, const QSize& currentSize, QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Export %1").arg(what));
    const QSettings settings;
    m_path = new QLineEdit(suggestedPath, this);
    m_path->setObjectName(QStringLiteral("exportPath"));
    // Room for a real path: a folder and a file name, not the last 20 characters of it.
    m_path->setMinimumWidth(m_path->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 56);
    auto* browse = new QPushButton(tr("Browse…"), this);
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);

    m_preset = new QComboBox(this);
    m_preset->addItem(tr("Slide 16:9 (1600 × 900)"), QSize(1600, 900));
    m_preset->addItem(tr("Slide 4:3 (1200 × 900)"), QSize(1200, 900));
    m_preset->addItem(tr("Wide (1920 × 800)"), QSize(1920, 800));
    m_preset->addItem(tr("As on screen (%1 × %2)").arg(currentSize.width()).arg(currentSize.height()), currentSize);
    m_preset->addItem(tr("Custom"), QSize());
    m_width = new QSpinBox(this);
    m_height = new QSpinBox(this);
    for (QSpinBox* s : {m_width, m_height}) {
        s->setRange(16, 20000);
        s->setSuffix(tr(" px"));
    }
    m_width->setValue(settings.value(QLatin1String(settings_keys::kExportWidth), 1600).toInt());
    m_height->setValue(settings.value(QLatin1String(settings_keys::kExportHeight), 900).toInt());
    m_scale = new QComboBox(this);
    m_scale->setObjectName(QStringLiteral("exportScale"));
    for (double s : {1.0, 2.0, 3.0, 4.0}) {
        m_scale->addItem(tr("%1× (%2 dpi)").arg(s).arg(qRound(96 * s)), s);
    }
    m_scale->setCurrentIndex(std::max(0, m_scale->findData(settings.value(QLatin1String(settings_keys::kExportScale), 2.0).toDouble())));
    m_preset->setCurrentIndex(m_preset->count() - 1);
    for (int i = 0; i < m_preset->count() - 1; ++i) {
        if (m_preset->itemData(i).toSize() == QSize(m_width->value(), m_height->value())) {
            m_preset->setCurrentIndex(i);
        }
    }

    auto* form = new QFormLayout(this);
    form->addRow(tr("File"), pathRow);
    form->addRow(tr("Size"), m_preset);
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(m_width);
    sizeRow->addWidget(new QLabel(QStringLiteral("×"), this));
    sizeRow->addWidget(m_height);
    form->addRow(QString(), sizeRow);
    form->addRow(tr("PNG resolution"), m_scale);
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("exportNote"));
    m_note->setWordWrap(true);
    form->addRow(QString(), m_note);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    form->addRow(buttons);

    connect(browse, &QPushButton::clicked, this, &ExportDialog::browse);
    connect(m_path, &QLineEdit::textChanged, this, &ExportDialog::updateFormatHints);
    connect(m_width, &QSpinBox::valueChanged, this, &ExportDialog::updateFormatHints);
    connect(m_height, &QSpinBox::valueChanged, this, &ExportDialog::updateFormatHints);
    connect(m_scale, &QComboBox::currentIndexChanged, this, &ExportDialog::updateFormatHints);
    connect(m_preset, &QComboBox::activated, this, [this](int index) {
        const QSize s = m_preset->itemData(index).toSize();
        if (s.isValid()) {
            m_width->setValue(s.width());
            m_height->setValue(s.height());
        }
    });
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        const QString path = m_path->text().trimmed();
        if (!imageFormatForPath(path)) {
            QMessageBox::warning(this, tr("Export"), tr("Choose a file ending in .png, .svg or .pdf."));
            return;
        }
        remember();
        accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    updateFormatHints();
}

void ExportDialog::updateFormatHints()
{
    // The resolution scale only adds pixels to a PNG; SVG and PDF are vectors of the chosen size.
    const auto format = imageFormatForPath(m_path->text().trimmed());
    const bool png = !format || *format == ImageFormat::Png;
    m_scale->setEnabled(png);
    const int w = m_width->value();
    const int h = m_height->value();
    if (!format) {
        m_note->setText(tr("The file's ending picks the format: .png, .svg or .pdf."));
    } else if (png) {
        const double s = m_scale->currentData().toDouble();
        m_note->setText(tr("PNG of %1 × %2 pixels (%3 × %4 at %5×).").arg(qRound(w * s)).arg(qRound(h * s)).arg(w).arg(h).arg(s));
    } else {
        m_note->setText(tr("%1 page of %2 × %3 px (%4 × %5 in, %6 × %7 pt); the PNG resolution does not apply.")
                            .arg(*format == ImageFormat::Svg ? QStringLiteral("SVG") : QStringLiteral("PDF"))
                            .arg(w)
                            .arg(h)
                            .arg(w / 96.0, 0, 'f', 2)
                            .arg(h / 96.0, 0, 'f', 2)
                            .arg(w * 0.75, 0, 'f', 0)
                            .arg(h * 0.75, 0, 'f', 0));
    }
}

void ExportDialog::browse()
{
    QString filter;
    const QString path = QFileDialog::getSaveFileName(this, windowTitle(), m_path->text(), imageFileFilters(), &filter);
    if (!path.isEmpty()) {
        m_path->setText(withImageSuffix(path, filter));
    }
}

void ExportDialog::remember() const
{
    QSettings settings;
    settings.setValue(QLatin1String(settings_keys::kExportWidth), m_width->value());
    settings.setValue(QLatin1String(settings_keys::kExportHeight), m_height->value());
    settings.setValue(QLatin1String(settings_keys::kExportScale), m_scale->currentData().toDouble());
}

ImageExportRequest ExportDialog::request() const
{
    return {m_path->text().trimmed(), ExportSize{m_width->value(), m_height->value(), m_scale->currentData().toDouble()}};
}

std::optional<ImageExportRequest> ExportDialog::ask(QWidget* parent, const QString& what, const QString& suggestedPath, const QSize& currentSize)
{
    ExportDialog dialog(what, suggestedPath, currentSize, parent);
    if (dialog.exec() != QDialog::Accepted) {
        return std::nullopt;
    }
    return dialog.request();
}

std::optional<QString> ExportDialog::exportChart(QWidget* parent, QCustomPlot* plot, const QString& what, const QString& fileName,
                                                 const QString& title)
{
    QString dir = QSettings().value(QLatin1String(settings_keys::kLastDirectory)).toString();
    if (dir.isEmpty()) {
        dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    }
    const auto request = ask(parent, what, dir + QLatin1Char('/') + fileName, plot->size());
    if (!request) {
        return std::nullopt;
    }
    QSettings().setValue(QLatin1String(settings_keys::kLastDirectory), QFileInfo(request->path).absolutePath());
    QString error;
    if (!exportPlot(plot, request->path, request->size, title, &error)) {
        QMessageBox::warning(parent, tr("Export Failed"), error);
        return std::nullopt;
    }
    return request->path;
}

} // namespace vtrain::ui
