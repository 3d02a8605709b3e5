// SPDX-License-Identifier: MIT
#include "models/settings_values.h"

#include <cmath>

#include <QSettings>
#include <QStringList>

namespace vtrain::ui::settings_values {

int intIn(const char* key, int fallback, int min, int max)
{
    bool ok = false;
    const qlonglong v = QSettings().value(QLatin1String(key)).toString().trimmed().toLongLong(&ok);
    return ok && v >= min && v <= max ? static_cast<int>(v) : fallback;
}

double numberIn(const char* key, double fallback, double min, double max)
{
    bool ok = false;
    const double v = QSettings().value(QLatin1String(key)).toString().trimmed().toDouble(&ok);
    return ok && std::isfinite(v) && v >= min && v <= max ? v : fallback;
}

bool flag(const char* key, bool fallback)
{
    const QString v = QSettings().value(QLatin1String(key)).toString().trimmed().toLower();
    if (v == u"true" || v == u"1") {
        return true;
    }
    if (v == u"false" || v == u"0") {
        return false;
    }
    return fallback;
}

QString oneOf(const char* key, const QString& fallback, const QStringList& choices)
{
    const QString v = QSettings().value(QLatin1String(key)).toString();
    return choices.contains(v) ? v : fallback;
}

} // namespace vtrain::ui::settings_values
