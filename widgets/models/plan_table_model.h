// SPDX-License-Identifier: MIT
#pragma once
// One row per feasible plan of the current sweep. Plans arrive in batches while the sweep runs (append
// only) and the Pareto front is marked when it is known. Each plan has a stable id (its arrival position)
// that the plot, the selection and planRow() use; the table's display order is separate and sorted here,
// natively: QSortFilterProxyModel would re-map its whole table for every streamed row (O(n) each), this
// merges a sorted batch in one layout change. PlanFilterModel only filters.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <QAbstractTableModel>

#include "vtrain/explorer.h"

namespace vtrain::ui {

class PlanTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        FrontColumn,
        DaysColumn,     // the two objectives first: what a user reads a row for
        DaysBandColumn, // where the real training time falls, from the profile's validation error
        CostColumn,
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
        CpColumn, // context, expert and expert-tensor parallelism, and the GEMM precision
        EpColumn,
        EtpColumn,
        PrecisionColumn,
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

    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
    int sortColumn() const { return m_sortColumn; }
    Qt::SortOrder sortOrder() const { return m_sortOrder; }

    void clear();
    void appendRows(const std::vector<PlanRow>& rows);
    // GPU types whose band is not a measured error (an uncalibrated, modeled profile's default prior), with
    // the note that says so: their Days band reads "… *" and the tooltips quote the note.
    void setBandNotes(std::map<std::string, QString> notes);
    QString bandNote(const std::string& gpu) const;
    // A plan's tooltip (chart and table): planDescription() with its GPU's band note.
    QString describe(int id) const;
    // Marks exactly these plans (by PlanRow::index) as the front; returns how many were found.
    int setFront(const std::vector<std::uint64_t>& planIndices);

    // Plans by id (arrival order).
    const std::vector<PlanRow>& rows() const { return m_rows; }
    const PlanRow& planRow(int id) const { return m_rows[static_cast<std::size_t>(id)]; }
    // The id of a plan index (PlanRow::index), or -1.
    int rowOfPlan(std::uint64_t planIndex) const;
    // Ids of the front, by increasing training time.
    const std::vector<int>& frontRows() const { return m_frontRows; }
    // Display row <-> id.
    int idAt(int modelRow) const { return m_order[static_cast<std::size_t>(modelRow)]; }
    int modelRowOf(int id) const { return m_rowOf[static_cast<std::size_t>(id)]; }

Q_SIGNALS:
    void frontChanged();

private:
    QVariant displayData(const PlanRow& row, int column) const;
    QVariant sortData(const PlanRow& row, int column) const;

    bool lessThan(int a, int b) const;                                  // ids, in the current sort
    void reorder(const std::function<void(std::vector<int>&)>& change); // one layout change, persistent indexes kept

    std::vector<PlanRow> m_rows;
    std::vector<int> m_order; // display row -> id
    std::vector<int> m_rowOf; // id -> display row
    std::vector<int> m_frontRows;
    std::map<std::string, QString> m_bandNotes;
    int m_sortColumn = -1;
    Qt::SortOrder m_sortOrder = Qt::AscendingOrder;
    bool m_sortedByIndex = true; // rows arrive in enumeration order; lookups bisect while that holds
};

} // namespace vtrain::ui
