// SPDX-License-Identifier: MIT
#include "views/launch_dialog.h"

#include <QClipboard>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QSettings>
#include <QTabWidget>
#include <QVBoxLayout>

#include "models/settings_keys.h"
#include "vtrain/launch_config.h"

namespace vtrain::ui {

LaunchDialog::LaunchDialog(const Scenario& scenario, const Plan& plan, int gpusPerNode, QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Launch flags"));
    setObjectName(QStringLiteral("launchDialog"));
    m_tabs = new QTabWidget(this);

    const auto megatron = megatron_launch(scenario, plan, gpusPerNode);
    auto* megatronPage = new QWidget(this);
    auto* megatronLayout = new QVBoxLayout(megatronPage);
    if (megatron.ok()) {
        megatronLayout->addWidget(textBlock(tr("Megatron-LM: run on every node"), QString::fromStdString(megatron->command_text()),
                                            QStringLiteral("launch_megatron.sh"), QStringLiteral("megatronText"), true),
                                  1);
        megatronLayout->addWidget(warningsLabel(megatron->warnings));
    } else {
        megatronLayout->addWidget(textBlock(tr("This plan cannot be launched"), QString::fromStdString(megatron.first_error()), QString(),
                                            QStringLiteral("megatronText"), false),
                                  1);
    }
    m_tabs->addTab(megatronPage, tr("Megatron-LM"));

    const auto deepSpeed = deepspeed_launch(scenario, plan, gpusPerNode);
    auto* deepSpeedPage = new QWidget(this);
    auto* deepSpeedLayout = new QVBoxLayout(deepSpeedPage);
    if (deepSpeed.ok()) {
        deepSpeedLayout->addWidget(textBlock(tr("ds_config.json"), QString::fromStdString(deepSpeed->config.dump(2) + '\n'),
                                             QStringLiteral("ds_config.json"), QStringLiteral("deepSpeedConfigText"), true),
                                   2);
        deepSpeedLayout->addWidget(textBlock(tr("Launch with Megatron-DeepSpeed"), QString::fromStdString(deepSpeed->command_text()),
                                             QStringLiteral("launch_deepspeed.sh"), QStringLiteral("deepSpeedCommandText"), true),
                                   1);
        deepSpeedLayout->addWidget(warningsLabel(deepSpeed->warnings));
    } else {
        deepSpeedLayout->addWidget(textBlock(tr("This plan cannot be launched"), QString::fromStdString(deepSpeed.first_error()), QString(),
                                             QStringLiteral("deepSpeedConfigText"), false),
                                   1);
    }
    m_tabs->addTab(deepSpeedPage, tr("DeepSpeed"));

    m_megatron = findChild<QPlainTextEdit*>(QStringLiteral("megatronText"));
    m_deepSpeedConfig = findChild<QPlainTextEdit*>(QStringLiteral("deepSpeedConfigText"));
    m_deepSpeedCommand = findChild<QPlainTextEdit*>(QStringLiteral("deepSpeedCommandText"));

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_tabs, 1);
    layout->addWidget(buttons);
    resize(860, 720);
}

QString LaunchDialog::megatronText() const
{
    return m_megatron ? m_megatron->toPlainText() : QString();
}

QString LaunchDialog::deepSpeedConfigText() const
{
    return m_deepSpeedConfig ? m_deepSpeedConfig->toPlainText() : QString();
}

QString LaunchDialog::deepSpeedCommandText() const
{
    return m_deepSpeedCommand ? m_deepSpeedCommand->toPlainText() : QString();
}

QWidget* LaunchDialog::textBlock(const QString& heading, const QString& text, const QString& saveName, const QString& objectName, bool enabled)
{
    auto* block = new QWidget(this);
    auto* edit = new QPlainTextEdit(text, block);
    edit->setObjectName(objectName);
    edit->setReadOnly(true);
    edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto* copy = new QPushButton(tr("Copy"), block);
    copy->setObjectName(objectName + QStringLiteral("Copy"));
    auto* save = new QPushButton(tr("Save…"), block);
    copy->setEnabled(enabled);
    save->setEnabled(enabled);
    connect(copy, &QPushButton::clicked, this, [edit] { QGuiApplication::clipboard()->setText(edit->toPlainText()); });
    connect(save, &QPushButton::clicked, this, [this, edit, saveName] { this->save(edit->toPlainText(), saveName); });

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(heading.toHtmlEscaped()), block), 1);
    top->addWidget(copy);
    top->addWidget(save);
    auto* layout = new QVBoxLayout(block);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(edit, 1);
    return block;
}

QWidget* LaunchDialog::warningsLabel(const std::vector<std::string>& warnings)
{
    QStringList items;
    for (const std::string& w : warnings) {
        items << QStringLiteral("<li>%1</li>").arg(QString::fromStdString(w).toHtmlEscaped());
    }
    auto* label =
        new QLabel(tr("<b>Warnings</b> — what the framework cannot express, what you must still set:<ul>%1</ul>").arg(items.join(QString())), this);
    label->setObjectName(QStringLiteral("launchWarnings"));
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

void LaunchDialog::save(const QString& text, const QString& suggestedName)
{
    const QString dir = QSettings().value(QLatin1String(settings_keys::kLastDirectory), QDir::homePath()).toString();
    const QString path = QFileDialog::getSaveFileName(this, tr("Save %1").arg(suggestedName), QDir(dir).filePath(suggestedName));
    if (path.isEmpty()) {
        return;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.toUtf8()) < 0 || !file.commit()) {
        QMessageBox::warning(this, tr("Save"), tr("Cannot write %1: %2").arg(path, file.errorString()));
        return;
    }
    QSettings().setValue(QLatin1String(settings_keys::kLastDirectory), QFileInfo(path).absolutePath());
}

} // namespace vtrain::ui
