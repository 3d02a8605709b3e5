// SPDX-License-Identifier: MIT
#pragma once
// One row per feasible plan of the current sweep. Rows arrive in batches while the sweep runs (append
// only, in enumeration order), the Pareto front is marked when it is known. Views sort and filter through
// PlanFilterModel; the plot and the selection refer to rows of this model (source rows).
#include <cstdint>
#include <vector>

#include <QAbstractTableModel>

#include "vtrain/explorer.h"

namespace vtrain::ui {

class PlanTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        FrontColumn,
        GpuColumn,
        GpusColumn,
        TpColumn,
        PpColumn,
        DpColumn,
        MicroBatchColumn,
        ScheduleColumn,
        VirtualStagesColumn,
        RecomputeColumn,
        SequenceParallelColumn,
        ZeroColumn,
        DaysColumn,
        CostColumn,
        IterationColumn,
        TokensColumn,
        MfuColumn,
        BubbleColumn,
        MemoryColumn,
        ColumnCount
    };
    enum Roles {
        SortRole = Qt::UserRole, // the raw number (or text) to sort by
        OnFrontRole,             // bool
        PlanIndexRole,           // PlanRow::index, as qulonglong
    };

    explicit PlanTableModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void clear();
    void appendRows(const std::vector<PlanRow>& rows);
    // Marks exactly these plans (by PlanRow::index) as the front; returns how many were found.
    int setFront(const std::vector<std::uint64_t>& planIndices);

    const std::vector<PlanRow>& rows() const { return m_rows; }
    const PlanRow& planRow(int row) const { return m_rows[static_cast<std::size_t>(row)]; }
    // The model row of a plan index, or -1.
    int rowOfPlan(std::uint64_t planIndex) const;
    // Model rows of the front, by increasing training time.
    const std::vector<int>& frontRows() const { return m_frontRows; }

Q_SIGNALS:
    void frontChanged();

private:
    QVariant displayData(const PlanRow& row, int column) const;
    QVariant sortData(const PlanRow& row, int column) const;

    std::vector<PlanRow> m_rows;
    std::vector<int> m_frontRows;
    bool m_sortedByIndex = true; // rows arrive in enumeration order; lookups bisect while that holds
};

} // namespace vtrain::ui
