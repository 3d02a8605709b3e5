// SPDX-License-Identifier: MIT
#include "views/theme.h"

#include <QApplication>
#include <QPainter>
#include <QProxyStyle>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleOption>

namespace vtrain::ui::theme {
namespace {

std::optional<QPalette> g_system;
Theme g_current = Theme::System;

// Fusion outlines a check box or radio button in the window colour darkened, which on a dark window is
// all but invisible: an unchecked box could not be seen. On a dark palette this draws a light outline over
// it (WCAG's 3:1 for controls); on a light one it changes nothing.
class ContrastStyle : public QProxyStyle {
public:
    using QProxyStyle::QProxyStyle;

    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter, const QWidget* widget) const override
    {
        QProxyStyle::drawPrimitive(element, option, painter, widget);
        const bool indicator = element == PE_IndicatorCheckBox || element == PE_IndicatorRadioButton || element == PE_IndicatorItemViewItemCheck;
        if (!indicator || option->palette.color(QPalette::Window).lightness() >= 128) {
            return;
        }
        QColor outline = option->palette.color(QPalette::WindowText);
        outline.setAlpha(option->state & State_Enabled ? 200 : 110);
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing, true);
        painter->setPen(QPen(outline, 1));
        painter->setBrush(Qt::NoBrush);
        const QRectF r = QRectF(option->rect).adjusted(0.5, 0.5, -1.5, -1.5);
        if (element == PE_IndicatorRadioButton) {
            painter->drawEllipse(r);
        } else {
            painter->drawRoundedRect(r, 2, 2);
        }
        painter->restore();
    }
};

void installContrastStyle()
{
    if (!dynamic_cast<ContrastStyle*>(QApplication::style())) {
        QApplication::setStyle(new ContrastStyle(QApplication::style()->name()));
    }
}

} // namespace

QString toString(Theme theme)
{
    switch (theme) {
    case Theme::System: return QStringLiteral("system");
    case Theme::Light: return QStringLiteral("light");
    case Theme::Dark: return QStringLiteral("dark");
    }
    return QStringLiteral("system");
}

std::optional<Theme> fromString(const QString& text)
{
    const QString t = text.trimmed().toLower();
    if (t == u"system") {
        return Theme::System;
    }
    if (t == u"light") {
        return Theme::Light;
    }
    if (t == u"dark") {
        return Theme::Dark;
    }
    return std::nullopt;
}

void captureSystemPalette()
{
    if (!g_system) {
        g_system = QApplication::palette();
        installContrastStyle();
    }
}

bool systemIsDark()
{
    captureSystemPalette();
    return g_system->color(QPalette::Window).lightness() < 128;
}

QPalette lightPalette()
{
    QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"));
    QPalette p = fusion ? fusion->standardPalette() : QPalette(QColor(0xef, 0xef, 0xef));
    delete fusion;
    return p;
}

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x31);
    const QColor base(0x1e, 0x1f, 0x22);
    const QColor text(0xe6, 0xe6, 0xe6);
    const QColor disabled(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2c));
    p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3d, 0x42));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x37, 0x3c));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Light, QColor(0x4a, 0x4d, 0x53));
    p.setColor(QPalette::Midlight, QColor(0x3e, 0x41, 0x46));
    p.setColor(QPalette::Mid, QColor(0x2f, 0x31, 0x35));
    p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
    p.setColor(QPalette::Shadow, QColor(0x0c, 0x0c, 0x0d));
    p.setColor(QPalette::Highlight, QColor(0x3d, 0x7a, 0xd6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6c, 0xa8, 0xf0));
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
        p.setColor(QPalette::Disabled, role, disabled);
    }
    return p;
}

void apply(Theme theme)
{
    captureSystemPalette();
    installContrastStyle();
    g_current = theme;
    switch (theme) {
    case Theme::System: QApplication::setPalette(*g_system); break;
    case Theme::Light: QApplication::setPalette(lightPalette()); break;
    case Theme::Dark: QApplication::setPalette(darkPalette()); break;
    }
}

Theme current()
{
    return g_current;
}

bool isDark()
{
    return QApplication::palette().color(QPalette::Window).lightness() < 128;
}

} // namespace vtrain::ui::theme
