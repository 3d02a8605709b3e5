// SPDX-License-Identifier: MIT
#pragma once
// The Help menu's content: every keyboard shortcut in one list (the menu's table and the tests read it),
// where the documentation is, and the About text with the version.
#include <functional>

#include <QList>
#include <QString>
#include <QUrl>

class QWidget;

namespace vtrain::ui::help {

struct Shortcut {
    QString keys;
    QString action;
    QString where;
};

QList<Shortcut> shortcuts();
QString shortcutsHtml();
// The installed README (share/doc/vtrain), else the source tree's, else the project's docs folder URL.
QUrl documentationUrl();
QString aboutHtml();

void showShortcuts(QWidget* parent);
// Help > Documentation: the README in the desktop's viewer through `open` (QDesktopServices::openUrl by
// default); where that fails (no browser registered), in a window of our own that shows it and its path.
// Returns that window, or nullptr when the desktop opened it.
using UrlOpener = std::function<bool(const QUrl&)>;
QWidget* openDocumentation(QWidget* parent, const UrlOpener& open = {});

} // namespace vtrain::ui::help
