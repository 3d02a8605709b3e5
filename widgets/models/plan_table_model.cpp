// SPDX-License-Identifier: MIT
#include "models/plan_table_model.h"

#include <algorithm>

#include <QBrush>
#include <QColor>
#include <QFont>

#include "models/format.h"
#include "models/plan_dimensions.h"
#include "vtrain/plausibility.h"

namespace vtrain::ui {

PlanTableModel::PlanTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int PlanTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int PlanTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PlanTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) {
        return {};
    }
    static const char* const titles[ColumnCount] = {"★",  "Days", "Days band", "Cost",      "GPU",       "GPUs", "TP",     "PP",
                                                    "DP", "MB",   "Schedule",  "VS",        "Recompute", "SP",   "ZeRO",   "CP",
                                                    "EP", "ETP",  "Precision", "Iteration", "Tokens/s",  "MFU",  "Bubble", "Peak mem"};
    static const char* const tips[ColumnCount] = {
        "On the (training time, cost) Pareto front",
        "Training time in days",
        "Training days within which the real run falls for 80% of the GPU profile's validation runs; \"*\": the GPU's profile is not "
        "calibrated, so the band is an assumed prior, not a measured error; \"no band\": the profile has none",
        "Training cost in dollars",
        "GPU type",
        "Number of GPUs",
        "Tensor-parallel width",
        "Pipeline stages",
        "Data-parallel replicas",
        "Micro-batch size (sequences)",
        "Pipeline schedule",
        "Virtual stages per pipeline rank (interleaved)",
        "Activation recomputation",
        "Sequence parallelism",
        "Optimizer sharding (ZeRO stage)",
        "Context-parallel width (sequence split)",
        "Expert-parallel width (MoE)",
        "Tensor-parallel width inside an expert",
        "GEMM number format",
        "One iteration",
        "Training throughput",
        "Model FLOPs utilisation",
        "Idle fraction of an iteration",
        "Largest stage's peak memory"};
    if (role == Qt::DisplayRole) {
        return tr(titles[section]);
    }
    if (role == Qt::ToolTipRole) {
        return tr(tips[section]);
    }
    return {};
}

void PlanTableModel::setBandNotes(std::map<std::string, QString> notes)
{
    m_bandNotes = std::move(notes);
    if (!m_rows.empty()) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    }
}

QString PlanTableModel::bandNote(const std::string& gpu) const
{
    const auto it = m_bandNotes.find(gpu);
    return it == m_bandNotes.end() ? QString() : it->second;
}

QString PlanTableModel::describe(int id) const
{
    const PlanRow& row = planRow(id);
    return planDescription(row, bandNote(row.gpu));
}

QVariant PlanTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const PlanRow& row = m_rows[static_cast<std::size_t>(idAt(index.row()))];
    switch (role) {
    case Qt::DisplayRole: return displayData(row, index.column());
    case SortRole: return sortData(row, index.column());
    case OnFrontRole: return row.on_front;
    case PlanIndexRole: return QVariant::fromValue<qulonglong>(row.index);
    case Qt::ToolTipRole:
        if (index.column() == DaysBandColumn && trainingDaysBand(row).isEmpty()) {
            return tr("No band: the %1 profile was not validated against measured runs, so there is no measured error to "
                      "draw a band from (see docs/validation.md).")
                .arg(QString::fromStdString(row.gpu));
        }
        if (index.column() == DaysBandColumn) {
            if (const QString note = bandNote(row.gpu); !note.isEmpty()) {
                return tr("%1 days*\n* %2: %3").arg(trainingDaysBand(row), QString::fromStdString(row.gpu), note);
            }
        }
        if (index.column() == MfuColumn && row.plausibility != 0) {
            QString reasons;
            for (const std::string& r :
                 plausibility_reasons(row.plausibility, row.gpu, row.precision, row.mfu, row.iteration_time_s, row.floor_s, row.floor_resource)) {
                reasons += QStringLiteral("⚠ ") + QString::fromStdString(r) + QLatin1Char('\n');
            }
            return QString(reasons + QLatin1Char('\n') + planDescription(row, bandNote(row.gpu)));
        }
        return planDescription(row, bandNote(row.gpu));
    case Qt::TextAlignmentRole:
        return index.column() == GpuColumn || index.column() == ScheduleColumn || index.column() == RecomputeColumn
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole:
        if (row.on_front) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::ForegroundRole:
        if (index.column() == FrontColumn && row.on_front) {
            return QBrush(QColor(0xd6, 0x27, 0x28));
        }
        if (index.column() == MfuColumn && row.plausibility != 0) {
            return QBrush(QColor(0xd6, 0x27, 0x28)); // a plausibility flag (plausibility.h)
        }
        if (index.column() == DaysBandColumn && (trainingDaysBand(row).isEmpty() || !bandNote(row.gpu).isEmpty())) {
            return QBrush(QColor(0x88, 0x88, 0x88)); // no band, or only a prior
        }
        return {};
    default: return {};
    }
}

QVariant PlanTableModel::displayData(const PlanRow& r, int column) const
{
    const Plan& p = r.plan;
    switch (column) {
    case FrontColumn: return r.on_front ? QStringLiteral("★") : QString();
    case GpuColumn: return QString::fromStdString(r.gpu);
    case GpusColumn: return r.num_gpus;
    case TpColumn: return p.tp;
    case PpColumn: return p.pp;
    case DpColumn: return p.dp;
    case MicroBatchColumn: return p.micro_batch;
    case ScheduleColumn: return scheduleName(p.schedule);
    case VirtualStagesColumn: return p.virtual_stages;
    case RecomputeColumn: return recomputeName(p.recompute);
    case SequenceParallelColumn: return p.sequence_parallel ? tr("yes") : tr("no");
    case ZeroColumn: return p.zero_stage;
    case CpColumn: return p.cp;
    case EpColumn: return p.ep;
    case EtpColumn: return p.effective_etp();
    case PrecisionColumn: return QString::fromLatin1(to_string(r.precision)).toUpper();
    case DaysColumn: return QString::number(r.training_days, 'f', 2);
    case DaysBandColumn: {
        const QString band = trainingDaysBand(r);
        return band.isEmpty() ? tr("no band") : bandNote(r.gpu).isEmpty() ? band : band + QStringLiteral("*");
    }
    case CostColumn: return formatDollarsExact(r.cost_usd); // "$2.8M" twenty rows in a row hid the order
    case IterationColumn: return formatSeconds(r.iteration_time_s);
    case TokensColumn: return formatCount(r.tokens_per_s);
    case MfuColumn: return r.plausibility != 0 ? formatPercent(r.mfu) + QStringLiteral(" ⚠") : formatPercent(r.mfu); // flagged: hover for why
    case BubbleColumn: return formatPercent(r.bubble_fraction);
    case MemoryColumn: return formatGiB(r.peak_memory_gib);
    default: return {};
    }
}

namespace {

// The number a column sorts by (all but the GPU name, which sorts as text).
double sortNumber(const PlanRow& r, int column)
{
    const Plan& p = r.plan;
    switch (column) {
    case PlanTableModel::FrontColumn: return r.on_front ? 1 : 0;
    case PlanTableModel::GpusColumn: return r.num_gpus;
    case PlanTableModel::TpColumn: return p.tp;
    case PlanTableModel::PpColumn: return p.pp;
    case PlanTableModel::DpColumn: return p.dp;
    case PlanTableModel::MicroBatchColumn: return p.micro_batch;
    case PlanTableModel::ScheduleColumn: return static_cast<int>(p.schedule);
    case PlanTableModel::VirtualStagesColumn: return p.virtual_stages;
    case PlanTableModel::RecomputeColumn: return static_cast<int>(p.recompute);
    case PlanTableModel::SequenceParallelColumn: return p.sequence_parallel ? 1 : 0;
    case PlanTableModel::ZeroColumn: return p.zero_stage;
    case PlanTableModel::CpColumn: return p.cp;
    case PlanTableModel::EpColumn: return p.ep;
    case PlanTableModel::EtpColumn: return p.effective_etp();
    case PlanTableModel::PrecisionColumn: return static_cast<int>(r.precision);
    case PlanTableModel::DaysColumn: return r.training_days;
    case PlanTableModel::DaysBandColumn: return trainingDaysHigh(r);
    case PlanTableModel::CostColumn: return r.cost_usd;
    case PlanTableModel::IterationColumn: return r.iteration_time_s;
    case PlanTableModel::TokensColumn: return r.tokens_per_s;
    case PlanTableModel::MfuColumn: return r.mfu;
    case PlanTableModel::BubbleColumn: return r.bubble_fraction;
    case PlanTableModel::MemoryColumn: return r.peak_memory_gib;
    default: return 0;
    }
}

} // namespace

QVariant PlanTableModel::sortData(const PlanRow& r, int column) const
{
    if (column == GpuColumn) {
        return QString::fromStdString(r.gpu);
    }
    return sortNumber(r, column);
}

void PlanTableModel::clear()
{
    if (m_rows.empty() && m_frontRows.empty()) {
        return;
    }
    beginResetModel();
    m_rows.clear();
    m_rows.shrink_to_fit();
    m_order.clear();
    m_rowOf.clear();
    m_frontRows.clear();
    m_sortedByIndex = true;
    endResetModel();
    Q_EMIT frontChanged();
}

bool PlanTableModel::lessThan(int a, int b) const
{
    const PlanRow& x = m_rows[static_cast<std::size_t>(a)];
    const PlanRow& y = m_rows[static_cast<std::size_t>(b)];
    int c = 0;
    if (m_sortColumn == GpuColumn) {
        c = x.gpu.compare(y.gpu);
    } else {
        const double u = sortNumber(x, m_sortColumn);
        const double v = sortNumber(y, m_sortColumn);
        c = u < v ? -1 : (v < u ? 1 : 0);
    }
    if (c == 0) {
        return a < b; // ties keep arrival order, in both directions
    }
    return m_sortOrder == Qt::AscendingOrder ? c < 0 : c > 0;
}

void PlanTableModel::reorder(const std::function<void(std::vector<int>&)>& change)
{
    Q_EMIT layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    std::vector<int> ids;
    ids.reserve(static_cast<std::size_t>(before.size()));
    for (const QModelIndex& i : before) {
        ids.push_back(idAt(i.row()));
    }
    change(m_order);
    for (std::size_t r = 0; r < m_order.size(); ++r) {
        m_rowOf[static_cast<std::size_t>(m_order[r])] = static_cast<int>(r);
    }
    QModelIndexList after;
    after.reserve(before.size());
    for (qsizetype i = 0; i < before.size(); ++i) {
        after.push_back(index(modelRowOf(ids[static_cast<std::size_t>(i)]), before[i].column()));
    }
    changePersistentIndexList(before, after);
    Q_EMIT layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

void PlanTableModel::sort(int column, Qt::SortOrder order)
{
    m_sortColumn = column >= 0 && column < ColumnCount ? column : -1;
    m_sortOrder = order;
    if (m_rows.empty()) {
        return;
    }
    reorder([this](std::vector<int>& o) {
        if (m_sortColumn < 0) {
            std::sort(o.begin(), o.end()); // arrival order
        } else {
            std::stable_sort(o.begin(), o.end(), [this](int a, int b) { return lessThan(a, b); });
        }
    });
}

void PlanTableModel::appendRows(const std::vector<PlanRow>& rows)
{
    if (rows.empty()) {
        return;
    }
    const int first = static_cast<int>(m_rows.size());
    const int last = first + static_cast<int>(rows.size()) - 1;
    // Appended at the end first (one insert), then merged into the sort order (one layout change).
    beginInsertRows({}, first, last);
    for (const PlanRow& r : rows) {
        if (!m_rows.empty() && r.index < m_rows.back().index) {
            m_sortedByIndex = false;
        }
        m_rowOf.push_back(static_cast<int>(m_rows.size()));
        m_order.push_back(static_cast<int>(m_rows.size()));
        m_rows.push_back(r);
        m_rows.back().on_front = false; // the front is only known at the end of the sweep
    }
    endInsertRows();
    if (m_sortColumn >= 0) {
        reorder([this, first](std::vector<int>& o) {
            const auto cmp = [this](int a, int b) { return lessThan(a, b); };
            std::stable_sort(o.begin() + first, o.end(), cmp);
            std::inplace_merge(o.begin(), o.begin() + first, o.end(), cmp);
        });
    }
}

int PlanTableModel::rowOfPlan(std::uint64_t planIndex) const
{
    if (m_sortedByIndex) {
        const auto it = std::lower_bound(m_rows.begin(), m_rows.end(), planIndex, [](const PlanRow& r, std::uint64_t i) { return r.index < i; });
        return it != m_rows.end() && it->index == planIndex ? static_cast<int>(it - m_rows.begin()) : -1;
    }
    const auto it = std::find_if(m_rows.begin(), m_rows.end(), [&](const PlanRow& r) { return r.index == planIndex; });
    return it != m_rows.end() ? static_cast<int>(it - m_rows.begin()) : -1;
}

int PlanTableModel::setFront(const std::vector<std::uint64_t>& planIndices)
{
    std::vector<int> changed = m_frontRows;
    for (int row : m_frontRows) {
        m_rows[static_cast<std::size_t>(row)].on_front = false;
    }
    m_frontRows.clear();
    for (std::uint64_t planIndex : planIndices) {
        const int row = rowOfPlan(planIndex);
        if (row >= 0) {
            m_rows[static_cast<std::size_t>(row)].on_front = true;
            m_frontRows.push_back(row);
            changed.push_back(row);
        }
    }
    std::sort(m_frontRows.begin(), m_frontRows.end(), [&](int a, int b) {
        const PlanRow& ra = m_rows[static_cast<std::size_t>(a)];
        const PlanRow& rb = m_rows[static_cast<std::size_t>(b)];
        return ra.training_days != rb.training_days ? ra.training_days < rb.training_days : ra.cost_usd > rb.cost_usd;
    });
    // Only the rows whose mark changed (bold font and star span every column).
    for (int id : changed) {
        const int row = modelRowOf(id);
        Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
    }
    if (m_sortColumn == FrontColumn) {
        sort(m_sortColumn, m_sortOrder);
    }
    Q_EMIT frontChanged();
    return static_cast<int>(m_frontRows.size());
}

} // namespace vtrain::ui
