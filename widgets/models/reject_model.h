// SPDX-License-Identifier: MIT
#pragma once
// Why plans were rejected: one row per reason with its count and one example message (what a user needs
// to widen or narrow the search).
#include <QAbstractTableModel>

#include "vtrain/explorer.h"

namespace vtrain::ui {

class RejectModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ReasonColumn, CountColumn, ExampleColumn, ColumnCount };
    enum Roles { SortRole = Qt::UserRole };

    explicit RejectModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setResult(const ExploreResult& result); // reasons with a zero count are left out
    void clear();
    std::uint64_t totalRejected() const;

private:
    struct Entry {
        RejectReason reason;
        std::uint64_t count;
        QString example;
    };
    std::vector<Entry> m_entries;
};

} // namespace vtrain::ui
