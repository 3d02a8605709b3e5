// SPDX-License-Identifier: MIT
#include "help.h"

#include <QCoreApplication>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtGlobal>

namespace vtrain::ui::help {
namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("vtrain::ui::help", text);
}

} // namespace

QList<Shortcut> shortcuts()
{
    return {
        {QStringLiteral("Ctrl+O"), tr("Open a scenario"), tr("File")},
        {QStringLiteral("Ctrl+S"), tr("Save the scenario"), tr("File")},
        {QStringLiteral("Ctrl+Z"), tr("Undo a scenario edit"), tr("Edit")},
        {QStringLiteral("Ctrl+Shift+Z / Ctrl+Y"), tr("Redo"), tr("Edit")},
        {QStringLiteral("F5"), tr("Run the sweep"), tr("Sweep")},
        {QStringLiteral("Esc"), tr("Cancel the sweep"), tr("Sweep")},
        {QStringLiteral("Enter / Tab"), tr("Commit a typed value (a sweep re-runs when \"Re-run on edit\" is on)"), tr("Scenario")},
        {QStringLiteral("W / S"), tr("Zoom in / out"), tr("Timeline")},
        {QStringLiteral("A / D"), tr("Pan left / right"), tr("Timeline")},
        {QStringLiteral("F"), tr("Fit the selected task, or the time selection, or the whole iteration"), tr("Timeline")},
        {QStringLiteral("0"), tr("Show the whole iteration"), tr("Timeline")},
        {QStringLiteral("Ctrl+F"), tr("Search tasks (B12, stage 3, DP reduce)"), tr("Timeline")},
        {QStringLiteral("F3 / Shift+F3"), tr("Next / previous search match"), tr("Timeline")},
        {QStringLiteral("Shift+drag"), tr("Select a time range (its duration is shown)"), tr("Timeline")},
        {QStringLiteral("Click"), tr("Select a task: its details show beside the timeline"), tr("Timeline")},
        {QStringLiteral("Wheel / drag"), tr("Zoom about the cursor / pan"), tr("Timeline, charts")},
        {QStringLiteral("Double-click"), tr("Back to the whole picture (the Pareto chart: to its front, or to every plan with Show all plans)"),
         tr("Timeline, charts")},
        {QStringLiteral("F1"), tr("This list"), tr("Help")},
    };
}

QString shortcutsHtml()
{
    QString html = QStringLiteral("<table cellspacing='0' cellpadding='3'>");
    QString where;
    for (const Shortcut& s : shortcuts()) {
        if (s.where != where) {
            where = s.where;
            html += QStringLiteral("<tr><td colspan='2'><b>%1</b></td></tr>").arg(where.toHtmlEscaped());
        }
        html += QStringLiteral("<tr><td><tt>%1</tt></td><td>%2</td></tr>").arg(s.keys.toHtmlEscaped(), s.action.toHtmlEscaped());
    }
    return html + QStringLiteral("</table>");
}

QUrl documentationUrl()
{
    const QString appDir = QCoreApplication::applicationDirPath();
    QStringList candidates{QDir(appDir).absoluteFilePath(QStringLiteral("../share/doc/vtrain/README.md"))};
#ifdef VTRAIN_SOURCE_DIR
    candidates << QStringLiteral(VTRAIN_SOURCE_DIR "/README.md");
#endif
    for (const QString& path : candidates) {
        if (QFileInfo::exists(path)) {
            return QUrl::fromLocalFile(QFileInfo(path).canonicalFilePath());
        }
    }
    return QUrl::fromLocalFile(QDir(appDir).absoluteFilePath(QStringLiteral("../share/doc/vtrain")));
}

QString aboutHtml()
{
    return tr("<b>vtrain-explorer %1</b> (Qt %2)<p>Simulate, explore and cost parallelization plans for training large language "
              "models: every plan of a search space on the Pareto front of training time and cost, with the pipeline timeline and "
              "memory of any plan.</p><p>Documentation: <a href='%3'>%4</a></p>")
        .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion()), documentationUrl().toString(),
             documentationUrl().toDisplayString(QUrl::PreferLocalFile).toHtmlEscaped());
}

void showShortcuts(QWidget* parent)
{
    auto* dialog = new QDialog(parent);
    dialog->setObjectName(QStringLiteral("shortcutsDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Keyboard shortcuts"));
    auto* label = new QLabel(shortcutsHtml(), dialog);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(label);
    layout->addWidget(buttons);
    dialog->open();
}

QWidget* openDocumentation(QWidget* parent, const UrlOpener& open)
{
    const QUrl url = documentationUrl();
    if (open ? open(url) : QDesktopServices::openUrl(url)) {
        return nullptr;
    }
    // No viewer answered (QDesktopServices says so only by returning false): show it here, never nothing.
    auto* dialog = new QDialog(parent);
    dialog->setObjectName(QStringLiteral("documentationDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Documentation"));
    const QString path = url.toDisplayString(QUrl::PreferLocalFile);
    auto* where = new QLabel(tr("No program is registered to open %1; it is shown here.").arg(path.toHtmlEscaped()), dialog);
    where->setObjectName(QStringLiteral("documentationPath"));
    where->setWordWrap(true);
    where->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* text = new QTextBrowser(dialog);
    text->setObjectName(QStringLiteral("documentationText"));
    text->setOpenExternalLinks(false);
    if (QFileInfo(url.toLocalFile()).isFile()) {
        text->setSource(url, QTextDocument::MarkdownResource);
    } else {
        text->setPlainText(tr("The documentation is not installed here. Read it at %1.").arg(path));
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(where);
    layout->addWidget(text, 1);
    layout->addWidget(buttons);
    dialog->resize(760, 560);
    dialog->open();
    return dialog;
}

} // namespace vtrain::ui::help
