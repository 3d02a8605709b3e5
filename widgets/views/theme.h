// SPDX-License-Identifier: MIT
#pragma once
// Light or dark: follows the desktop's palette by default (View > Theme > System), or forces one. Views
// that draw their own colours re-read the palette on QEvent::PaletteChange.
#include <optional>

#include <QPalette>
#include <QString>

namespace vtrain::ui::theme {

enum class Theme { System, Light, Dark };

QString toString(Theme theme); // "system", "light", "dark"
std::optional<Theme> fromString(const QString& text);
// Call once the application exists, before any apply(): remembers the desktop's own palette.
void captureSystemPalette();
// True when the desktop's palette is dark (window colour darker than mid-grey).
bool systemIsDark();
void apply(Theme theme);
Theme current();
bool isDark(); // what is on screen now
QPalette darkPalette();
QPalette lightPalette();

} // namespace vtrain::ui::theme
