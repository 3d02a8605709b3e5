// SPDX-License-Identifier: MIT
#include "models/reject_model.h"

#include "models/format.h"

namespace vtrain::ui {

RejectModel::RejectModel(QObject* parent) : QAbstractTableModel(parent) {}

int RejectModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int RejectModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RejectModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case ReasonColumn: return tr("Reason");
    case CountColumn: return tr("Plans");
    case ExampleColumn: return tr("Example");
    default: return {};
    }
}

QVariant RejectModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Entry& e = m_entries[static_cast<std::size_t>(index.row())];
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
        case ReasonColumn:
            return e.reason == RejectReason::Count ? tr("bounded out (cannot reach the front)") : QString::fromLatin1(to_string(e.reason));
        case CountColumn: return formatCount(static_cast<double>(e.count));
        case ExampleColumn: return e.example;
        default: return {};
        }
    }
    if (role == SortRole) {
        return index.column() == CountColumn ? QVariant::fromValue<qulonglong>(e.count) : data(index, Qt::DisplayRole);
    }
    if (role == Qt::TextAlignmentRole && index.column() == CountColumn) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

void RejectModel::setResult(const ExploreResult& result)
{
    beginResetModel();
    m_entries.clear();
    m_bounded = result.bounded;
    if (result.bounded > 0) {
        m_entries.push_back({RejectReason::Count, result.bounded,
                             tr("legal plans not simulated: a lower bound on their time and cost shows that simulated plans "
                                "beat them on both, so they cannot reach the front (pruning; Sweep > Prune)")});
    }
    for (std::size_t i = 0; i < result.rejected.size(); ++i) {
        if (result.rejected[i] > 0) {
            m_entries.push_back({static_cast<RejectReason>(i), result.rejected[i], QString::fromStdString(result.example[i].to_string())});
        }
    }
    endResetModel();
}

void RejectModel::clear()
{
    beginResetModel();
    m_entries.clear();
    m_bounded = 0;
    endResetModel();
}

std::uint64_t RejectModel::totalRejected() const
{
    std::uint64_t n = 0;
    for (const Entry& e : m_entries) {
        n += e.reason == RejectReason::Count ? 0 : e.count;
    }
    return n;
}

} // namespace vtrain::ui
