// SPDX-License-Identifier: MIT
#pragma once
// The plan table (sortable, filterable, front rows starred and bold) and, on a second tab, the rejected
// plans' counts by reason with an example message each.
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace vtrain::ui {

class PlanFilterModel;
class PlanTableModel;
class RejectModel;

class PlansPanel : public QWidget {
    Q_OBJECT
public:
    PlansPanel(PlanTableModel* plans, RejectModel* rejects, QWidget* parent = nullptr);

    // Selects a plan by id (PlanTableModel::planRow) and scrolls to it (no rowSelected signal); -1 clears.
    void selectRow(int row);
    int selectedRow() const;
    QTableView* tableView() const { return m_table; }
    QTableView* rejectView() const { return m_rejects; }
    PlanFilterModel* filterModel() const { return m_filter; }
    void setFilterText(const QString& text);
    // A note above the table when the rows belong to other inputs than the editor's; empty hides it.
    void setStaleNote(const QString& note);
    QString staleNote() const;
    QSize sizeHint() const override { return {600, 400}; }
    // Width that shows the first four columns (front mark, days, band, cost) whole, scroll bar and frame
    // included: the dock's default width is at least this.
    int objectiveColumnsWidth() const;

Q_SIGNALS:
    void rowSelected(int id); // a user picked a plan in the table

private:
    void updateCounts();

    PlanTableModel* m_plans;
    RejectModel* m_rejectModel;
    PlanFilterModel* m_filter = nullptr;
    QSortFilterProxyModel* m_rejectSort = nullptr;
    QLineEdit* m_filterEdit = nullptr;
    QLabel* m_filterError = nullptr;
    QLabel* m_staleNote = nullptr;
    QCheckBox* m_frontOnly = nullptr;
    QTableView* m_table = nullptr;
    QTableView* m_rejects = nullptr;
    QTabWidget* m_tabs = nullptr;
    bool m_selecting = false;
};

} // namespace vtrain::ui
