// SPDX-License-Identifier: MIT
#include "views/check_list.h"

#include <QCheckBox>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace vtrain::ui {

CheckList::CheckList(const QString& name, int columns, QWidget* parent)
    : QWidget(parent)
    , m_name(name)
    , m_columns(columns)
{
    setObjectName(name);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(1);
    m_grid = new QGridLayout;
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setHorizontalSpacing(8);
    m_grid->setVerticalSpacing(2);
    layout->addLayout(m_grid);
    m_errorLabel = new QLabel(this);
    m_errorLabel->setObjectName(name + QStringLiteral(".error"));
    m_errorLabel->setStyleSheet(QStringLiteral("color: #c62828;"));
    m_errorLabel->setWordWrap(true);
    m_errorLabel->setVisible(false);
    layout->addWidget(m_errorLabel);
}

void CheckList::setItems(const QStringList& labels, const QVariantList& values)
{
    const QVariantList previously = checkedValues();
    for (QCheckBox* box : m_boxes) {
        m_grid->removeWidget(box);
        delete box;
    }
    m_boxes.clear();
    m_marked.clear();
    m_values = values;
    // New boxes join the end of the window's focus chain; Tab must reach them here, in form order: after
    // the last tab stop before this list (setTabOrder ignores widgets without focus, such as this one).
    QWidget* previous = previousInFocusChain();
    while (previous && previous != this && (!(previous->focusPolicy() & Qt::TabFocus) || isAncestorOf(previous))) {
        previous = previous->previousInFocusChain();
    }
    if (previous == this) {
        previous = nullptr;
    }
    for (int i = 0; i < static_cast<int>(values.size()); ++i) {
        auto* box = new QCheckBox(labels.value(i), this);
        box->setChecked(previously.contains(values[i]));
        connect(box, &QCheckBox::clicked, this, &CheckList::edited);
        m_grid->addWidget(box, i / m_columns, i % m_columns);
        m_boxes.push_back(box);
        if (previous) {
            QWidget::setTabOrder(previous, box);
        }
        previous = box;
    }
}

void CheckList::setMarked(const QVariantList& values, const QString& reason)
{
    m_marked.clear();
    for (int i = 0; i < static_cast<int>(m_boxes.size()); ++i) {
        const bool marked = values.contains(m_values[i]);
        if (marked) {
            m_marked << m_values[i];
        }
        m_boxes[i]->setStyleSheet(marked ? QStringLiteral("QCheckBox { color: #c62828; text-decoration: line-through; }") : QString());
        m_boxes[i]->setToolTip(marked ? m_boxes[i]->text() + QStringLiteral(": ") + reason : QString());
    }
}

QVariantList CheckList::markedValues() const
{
    return m_marked;
}

QCheckBox* CheckList::box(const QVariant& value) const
{
    const auto i = m_values.indexOf(value);
    return i >= 0 ? m_boxes.value(i) : nullptr;
}

void CheckList::setChecked(const QVariantList& values)
{
    for (int i = 0; i < static_cast<int>(m_boxes.size()); ++i) {
        m_boxes[i]->setChecked(values.contains(m_values[i]));
    }
}

void CheckList::setAllChecked(bool checked)
{
    for (QCheckBox* box : m_boxes) {
        box->setChecked(checked);
    }
}

QVariantList CheckList::checkedValues() const
{
    QVariantList out;
    for (int i = 0; i < static_cast<int>(m_boxes.size()); ++i) {
        if (m_boxes[i]->isChecked()) {
            out << m_values[i];
        }
    }
    return out;
}

void CheckList::setError(const QString& error)
{
    m_error = error;
    m_errorLabel->setText(error);
    m_errorLabel->setVisible(!error.isEmpty());
}

} // namespace vtrain::ui
