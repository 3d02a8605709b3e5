// SPDX-License-Identifier: MIT
#include "views/check_list.h"

#include <QCheckBox>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace vtrain::ui {

CheckList::CheckList(const QString& name, int columns, QWidget* parent) : QWidget(parent), m_name(name), m_columns(columns)
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

void CheckList::setItems(const QStringList& labels, const QVariantList& values, const QStringList& groups)
{
    const QVariantList previously = checkedValues();
    for (QCheckBox* box : m_boxes) {
        m_grid->removeWidget(box);
        delete box;
    }
    for (QLabel* header : m_headers) {
        m_grid->removeWidget(header);
        delete header;
    }
    m_boxes.clear();
    m_headers.clear();
    m_marked.clear();
    m_values = values;
    m_groups = groups.size() == values.size() ? groups : QStringList();
    // New boxes join the end of the window's focus chain; Tab must reach them here, in form order: after
    // the last tab stop before this list (setTabOrder ignores widgets without focus, such as this one).
    QWidget* previous = previousInFocusChain();
    while (previous && previous != this && (!(previous->focusPolicy() & Qt::TabFocus) || isAncestorOf(previous))) {
        previous = previous->previousInFocusChain();
    }
    if (previous == this) {
        previous = nullptr;
    }
    int row = 0;
    int column = 0;
    for (int i = 0; i < static_cast<int>(values.size()); ++i) {
        if (!m_groups.isEmpty() && (i == 0 || m_groups[i] != m_groups[i - 1])) {
            if (column > 0) {
                ++row;
            }
            auto* header = new QLabel(QStringLiteral("<b>%1</b>").arg(m_groups[i].toHtmlEscaped()), this);
            header->setObjectName(m_name + QStringLiteral(".group"));
            m_grid->addWidget(header, row++, 0, 1, m_columns);
            m_headers.push_back(header);
            column = 0;
        }
        auto* box = new QCheckBox(labels.value(i), this);
        box->setChecked(previously.contains(values[i]));
        connect(box, &QCheckBox::clicked, this, &CheckList::edited);
        m_grid->addWidget(box, row, column);
        if (++column == m_columns) {
            column = 0;
            ++row;
        }
        m_boxes.push_back(box);
        if (previous) {
            QWidget::setTabOrder(previous, box);
        }
        previous = box;
    }
}

QStringList CheckList::groupTitles() const
{
    QStringList titles;
    for (const QString& g : m_groups) {
        if (titles.isEmpty() || titles.back() != g) {
            titles << g;
        }
    }
    return titles;
}

QString CheckList::groupOf(const QVariant& value) const
{
    const auto i = m_values.indexOf(value);
    return i >= 0 && i < m_groups.size() ? m_groups[i] : QString();
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
