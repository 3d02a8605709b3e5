// SPDX-License-Identifier: MIT
#pragma once
// Where the main window opens. A fresh start once opened at a fixed 1600x1000 whatever the screen (2400x1500
// device pixels at 150 %), and a layout saved on a big monitor came back larger than a laptop's screen.
#include <QRect>
#include <QSize>

namespace vtrain::ui {

inline constexpr double kScreenShare = 0.9;              // a fresh window takes at most this share of the screen
inline constexpr QSize kPreferredWindowSize{1600, 1000}; // ... and no more than this on a big one

// A fresh window's frame: the preferred size cut to kScreenShare of `available` (a screen's available
// geometry, logical pixels), centred on it.
QRect freshWindowFrame(const QRect& available);
// `frame` (a restored window's) moved and shrunk so that it lies inside `available`; a frame bigger than
// the screen gets the fresh size.
QRect clampedWindowFrame(const QRect& frame, const QRect& available);

} // namespace vtrain::ui
