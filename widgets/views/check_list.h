// SPDX-License-Identifier: MIT
#pragma once
// A checkable list of candidate values (tp 1 2 4 8 ..., schedules, GPU types) laid out in a grid, with
// an error line when nothing is checked.
#include <QVariant>
#include <QWidget>

class QCheckBox;
class QGridLayout;
class QLabel;

namespace vtrain::ui {

class CheckList : public QWidget {
    Q_OBJECT
public:
    CheckList(const QString& name, int columns, QWidget* parent = nullptr);

    // Replaces the candidates; values that were checked before stay checked. With `groups` (one title per
    // item, items of a group next to each other) each group starts on its own row under its title.
    void setItems(const QStringList& labels, const QVariantList& values, const QStringList& groups = {});
    // The group titles shown, in order (empty without groups), and the title a value is shown under.
    QStringList groupTitles() const;
    QString groupOf(const QVariant& value) const;
    void setChecked(const QVariantList& values);
    void setAllChecked(bool checked);
    // Marks these values' boxes (red, with `reason` as tooltip) as chosen but not usable; clears the rest.
    void setMarked(const QVariantList& values, const QString& reason);
    QVariantList markedValues() const;
    QCheckBox* box(const QVariant& value) const;
    QVariantList checkedValues() const;
    QVariantList values() const { return m_values; }
    int count() const { return static_cast<int>(m_values.size()); }
    QString name() const { return m_name; }

    void setError(const QString& error);
    QString error() const { return m_error; }

Q_SIGNALS:
    void edited();

private:
    QString m_name;
    int m_columns;
    QVariantList m_values;
    QList<QCheckBox*> m_boxes;
    QStringList m_groups; // per item
    QList<QLabel*> m_headers;
    QVariantList m_marked;
    QGridLayout* m_grid = nullptr;
    QLabel* m_errorLabel = nullptr;
    QString m_error;
};

} // namespace vtrain::ui
