// SPDX-License-Identifier: MIT
#include "models/plan_filter_model.h"

#include <QRegularExpression>

#include "models/plan_dimensions.h"
#include "models/plan_table_model.h"

namespace vtrain::ui {
namespace {

double fieldValue(const PlanRow& r, const QString& key, bool& known)
{
    known = true;
    const Plan& p = r.plan;
    if (key == u"tp")
        return p.tp;
    if (key == u"pp")
        return p.pp;
    if (key == u"dp")
        return p.dp;
    if (key == u"mb")
        return p.micro_batch;
    if (key == u"vs")
        return p.virtual_stages;
    if (key == u"zero")
        return p.zero_stage;
    if (key == u"gpus")
        return r.num_gpus;
    if (key == u"days")
        return r.training_days;
    if (key == u"cost")
        return r.cost_usd;
    if (key == u"mfu")
        return r.mfu * 100.0; // percent, as the table shows it
    if (key == u"bubble")
        return r.bubble_fraction * 100.0;
    if (key == u"mem")
        return r.peak_memory_gib;
    known = false;
    return 0;
}

} // namespace

PlanFilterModel::PlanFilterModel(QObject* parent) : QSortFilterProxyModel(parent)
{
    setDynamicSortFilter(true);
}

void PlanFilterModel::sort(int column, Qt::SortOrder order)
{
    if (m_plans) {
        m_plans->sort(column, order);
    }
}

void PlanFilterModel::setPlanModel(PlanTableModel* model)
{
    m_plans = model;
    setSourceModel(model);
}

PlanFilterModel::Predicate PlanFilterModel::parseTerm(const QString& term, QString& error)
{
    static const QRegularExpression comparison(QStringLiteral("^([a-z]+)\\s*(<=|>=|!=|=|<|>)\\s*(.+)$"));
    const QRegularExpressionMatch m = comparison.match(term.toLower());
    if (!m.hasMatch()) {
        const QString word = term.toLower();
        return [word](const PlanRow& r) { return planSummary(r.plan).toLower().contains(word) || QString::fromStdString(r.gpu).contains(word); };
    }
    const QString key = m.captured(1);
    const QString op = m.captured(2);
    const QString text = m.captured(3);
    if (key == u"gpu") {
        return [text, negate = op == u"!="](const PlanRow& r) { return QString::fromStdString(r.gpu).contains(text) != negate; };
    }
    PlanRow probe;
    bool known = false;
    fieldValue(probe, key, known);
    if (!known) {
        error = tr("unknown field \"%1\" (use tp, pp, dp, mb, vs, zero, gpus, gpu, days, cost, mfu, bubble, mem)").arg(key);
        return {};
    }
    bool isNumber = false;
    const double value = text.toDouble(&isNumber);
    if (!isNumber) {
        error = tr("\"%1\" is not a number").arg(text);
        return {};
    }
    return [key, op, value](const PlanRow& r) {
        bool ok = false;
        const double v = fieldValue(r, key, ok);
        if (op == u"<=")
            return v <= value;
        if (op == u">=")
            return v >= value;
        if (op == u"<")
            return v < value;
        if (op == u">")
            return v > value;
        if (op == u"!=")
            return v != value;
        return v == value;
    };
}

QString PlanFilterModel::setFilterText(const QString& text)
{
    std::vector<Predicate> terms;
    // "tp = 8" with spaces is one term: glue comparison operators to their neighbours first.
    QString glued = text.trimmed();
    glued.replace(QRegularExpression(QStringLiteral("\\s*(<=|>=|!=|=|<|>)\\s*")), QStringLiteral("\\1"));
    for (const QString& term : glued.split(QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts)) {
        QString error;
        Predicate p = parseTerm(term, error);
        if (!p) {
            return error;
        }
        terms.push_back(std::move(p));
    }
    m_text = text;
    m_terms = std::move(terms);
    invalidateRowsFilter();
    Q_EMIT criteriaChanged();
    return {};
}

void PlanFilterModel::setFrontOnly(bool frontOnly)
{
    if (m_frontOnly == frontOnly) {
        return;
    }
    m_frontOnly = frontOnly;
    invalidateRowsFilter();
    Q_EMIT criteriaChanged();
}

bool PlanFilterModel::isActive() const
{
    return m_frontOnly || !m_terms.empty();
}

bool PlanFilterModel::acceptsPlan(const PlanRow& row) const
{
    if (m_frontOnly && !row.on_front) {
        return false;
    }
    for (const Predicate& p : m_terms) {
        if (!p(row)) {
            return false;
        }
    }
    return true;
}

bool PlanFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    if (!m_plans || sourceParent.isValid()) {
        return true;
    }
    return acceptsPlan(m_plans->planRow(m_plans->idAt(sourceRow)));
}

} // namespace vtrain::ui
