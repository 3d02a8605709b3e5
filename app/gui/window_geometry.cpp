// SPDX-License-Identifier: MIT
#include "window_geometry.h"

#include <algorithm>

namespace vtrain::ui {

QRect freshWindowFrame(const QRect& available)
{
    const QSize size(std::min(kPreferredWindowSize.width(), static_cast<int>(available.width() * kScreenShare)),
                     std::min(kPreferredWindowSize.height(), static_cast<int>(available.height() * kScreenShare)));
    QRect frame(QPoint(0, 0), size);
    frame.moveCenter(available.center());
    return frame;
}

QRect clampedWindowFrame(const QRect& frame, const QRect& available)
{
    if (frame.width() > available.width() || frame.height() > available.height()) {
        return freshWindowFrame(available);
    }
    QRect r = frame;
    r.moveLeft(std::clamp(r.left(), available.left(), available.right() - r.width() + 1));
    r.moveTop(std::clamp(r.top(), available.top(), available.bottom() - r.height() + 1));
    return r;
}

} // namespace vtrain::ui
