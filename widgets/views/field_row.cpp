// SPDX-License-Identifier: MIT
#include "views/field_row.h"

#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

namespace vtrain::ui {

FieldRow::FieldRow(const QString& name, const QString& placeholder, const QString& toolTip, QWidget* parent)
    : QWidget(parent), m_name(name), m_toolTip(toolTip)
{
    m_edit = new QLineEdit(this);
    m_edit->setObjectName(name);
    m_edit->setPlaceholderText(placeholder);
    m_edit->setToolTip(toolTip);
    m_edit->setClearButtonEnabled(false);
    m_errorLabel = new QLabel(this);
    m_errorLabel->setObjectName(name + QStringLiteral(".error"));
    m_errorLabel->setWordWrap(true);
    m_errorLabel->setStyleSheet(QStringLiteral("color: #c62828;"));
    m_errorLabel->setVisible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(1);
    layout->addWidget(m_edit);
    layout->addWidget(m_errorLabel);
    connect(m_edit, &QLineEdit::textEdited, this, &FieldRow::edited);
    // Partial input ("2240-4" on the way to "2240-4480:280") is checked but never swept.
    connect(m_edit, &QLineEdit::editingFinished, this, &FieldRow::committed);
}

QString FieldRow::text() const
{
    return m_edit->text();
}

void FieldRow::setText(const QString& text)
{
    m_edit->setText(text);
}

void FieldRow::setError(const QString& error)
{
    if (error == m_error) {
        return;
    }
    m_error = error;
    m_errorLabel->setText(error);
    m_errorLabel->setVisible(!error.isEmpty());
    // A red frame marks the field even when the message is scrolled away.
    m_edit->setStyleSheet(error.isEmpty() ? QString() : QStringLiteral("QLineEdit { border: 1px solid #c62828; border-radius: 2px; }"));
    m_edit->setToolTip(error.isEmpty() ? m_toolTip : error);
}

} // namespace vtrain::ui
