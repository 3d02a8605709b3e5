// SPDX-License-Identifier: MIT
#pragma once
// Filtering of the plan table (sorting is forwarded to PlanTableModel). The filter is a list of terms that must all hold:
// comparisons on a field ("tp=8", "pp<=16", "days<30", "cost<2e7", "gpu=h100") or plain words matched
// against the plan's description ("1f1b", "interleaved", "selective").
#include <functional>
#include <vector>

#include <QSortFilterProxyModel>

#include "vtrain/explorer.h"

namespace vtrain::ui {

class PlanTableModel;

class PlanFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit PlanFilterModel(QObject* parent = nullptr);

    void setPlanModel(PlanTableModel* model);
    // Returns an empty string when the filter is understood, else why not (the filter is then not applied).
    QString setFilterText(const QString& text);
    QString filterText() const { return m_text; }
    void setFrontOnly(bool frontOnly);
    bool frontOnly() const { return m_frontOnly; }
    // The filter's verdict on one plan (the Pareto chart shows the same plans as the table).
    bool acceptsPlan(const PlanRow& row) const;
    bool isActive() const;

Q_SIGNALS:
    void criteriaChanged(); // the filter text or "front only" changed

public:
    // Sorting happens in PlanTableModel (fast merges while rows stream in); this proxy keeps its order.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    using Predicate = std::function<bool(const PlanRow&)>;
    static Predicate parseTerm(const QString& term, QString& error);

    PlanTableModel* m_plans = nullptr;
    QString m_text;
    std::vector<Predicate> m_terms;
    bool m_frontOnly = false;
};

} // namespace vtrain::ui
