// SPDX-License-Identifier: MIT
#pragma once
// Why plans were rejected: one row per reason with its count and one example message (what a user needs
// to widen or narrow the search). A pruned sweep's bounded-out plans come first, on a row of their own:
// they are legal but provably off the front, so they are not in the table either.
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
    std::uint64_t totalRejected() const; // the bounded-out row is not a rejection: not counted here
    std::uint64_t bounded() const { return m_bounded; }

private:
    struct Entry {
        RejectReason reason; // RejectReason::Count: the bounded-out row
        std::uint64_t count;
        QString example;
    };
    std::vector<Entry> m_entries;
    std::uint64_t m_bounded = 0;
};

} // namespace vtrain::ui
