// SPDX-License-Identifier: MIT
#pragma once
// A line edit with its error shown right below it: the reason a value is refused appears at the field,
// as it is typed, before anything runs.
#include <QWidget>

class QLabel;
class QLineEdit;

namespace vtrain::ui {

class FieldRow : public QWidget {
    Q_OBJECT
public:
    // `name` is the scenario path ("model.layers"); it becomes the line edit's objectName.
    FieldRow(const QString& name, const QString& placeholder, const QString& toolTip, QWidget* parent = nullptr);

    QString text() const;
    void setText(const QString& text);
    QLineEdit* lineEdit() const { return m_edit; }
    QString name() const { return m_name; }

    void setError(const QString& error);
    QString error() const { return m_error; }
    bool hasError() const { return !m_error.isEmpty(); }

Q_SIGNALS:
    void edited();    // every keystroke: the editor checks the value as it is typed
    void committed(); // Enter or leaving the field: the value counts (a sweep may start, an undo step is made)

private:
    QString m_name;
    QString m_toolTip; // the field's help, shown again once the error is gone
    QString m_error;
    QLineEdit* m_edit = nullptr;
    QLabel* m_errorLabel = nullptr;
};

} // namespace vtrain::ui
