// SPDX-License-Identifier: MIT
#include "views/gpu_price_fields.h"

#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>

#include "models/format.h"
#include "models/scenario_fields.h"
#include "views/field_row.h"

namespace vtrain::ui {

GpuPriceFields::GpuPriceFields(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("gpuPrices"));
    m_grid = new QGridLayout(this);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setHorizontalSpacing(6);
    m_grid->setVerticalSpacing(2);
    m_grid->setColumnStretch(1, 1);
}

void GpuPriceFields::setListPrices(QHash<QString, double> prices)
{
    m_listPrices = std::move(prices);
    for (Row& row : m_rows) {
        updateSource(row);
    }
}

void GpuPriceFields::setGpus(const std::vector<std::string>& gpus, const Scenario& source, bool reload)
{
    // A price belongs to its GPU type, wherever the type sits in the list.
    auto valueIn = [&source](const QString& gpu) -> QString {
        if (gpu.toStdString() == source.cluster.gpu) {
            return source.cluster.price_per_gpu_hour ? QString::number(*source.cluster.price_per_gpu_hour) : QString();
        }
        const auto it = source.cluster.gpu_prices.find(gpu.toStdString());
        return it != source.cluster.gpu_prices.end() ? QString::number(it->second) : QString();
    };
    QStringList wanted;
    for (const std::string& g : gpus) {
        wanted << QString::fromStdString(g);
    }
    QStringList have;
    for (const Row& r : m_rows) {
        have << r.gpu;
    }
    if (wanted == have && !reload) {
        return; // typing in a field must not rebuild it under the cursor
    }
    std::map<QString, QString> typed; // rows that stay keep their text
    for (const Row& r : m_rows) {
        typed[r.gpu] = r.field->text();
        for (QWidget* w : {static_cast<QWidget*>(r.name), static_cast<QWidget*>(r.field), static_cast<QWidget*>(r.source)}) {
            m_grid->removeWidget(w);
            w->hide();
            w->deleteLater(); // a signal of it may be on the stack (a commit that checked a GPU type)
        }
    }
    m_rows.clear();
    for (int i = 0; i < wanted.size(); ++i) {
        Row row;
        row.gpu = wanted[i];
        const bool first = i == 0;
        const QString name = first ? QStringLiteral("cluster.price_per_gpu_hour") : QStringLiteral("cluster.gpu_prices.") + row.gpu;
        row.name = new QLabel(row.gpu, this);
        row.field = new FieldRow(name, QString(),
                                 first ? tr("US dollars per GPU-hour of the cluster's GPU; empty = its profile's list price")
                                       : tr("US dollars per GPU-hour of this GPU type in the sweep; empty = its profile's list price"),
                                 this);
        row.field->lineEdit()->setMinimumWidth(60);
        row.source = new QLabel(this);
        row.source->setObjectName(name + QStringLiteral(".source"));
        const auto kept = typed.find(row.gpu);
        row.field->setText(!reload && kept != typed.end() ? kept->second : valueIn(row.gpu));
        m_grid->addWidget(row.name, i, 0, Qt::AlignTop);
        m_grid->addWidget(row.field, i, 1);
        m_grid->addWidget(row.source, i, 2, Qt::AlignTop);
        connect(row.field, &FieldRow::edited, this, [this, gpu = row.gpu] {
            for (Row& r : m_rows) {
                if (r.gpu == gpu) {
                    updateSource(r);
                }
            }
            Q_EMIT edited();
        });
        connect(row.field, &FieldRow::committed, this, &GpuPriceFields::committed);
        m_rows.push_back(row);
        updateSource(m_rows.back());
    }
    Q_EMIT rowsChanged();
}

void GpuPriceFields::updateSource(Row& row)
{
    const double list = m_listPrices.value(row.gpu, 0);
    row.field->lineEdit()->setPlaceholderText(list > 0 ? tr("= %1 list").arg(formatDollars(list)) : tr("= the profile's price"));
    const bool own = !row.field->text().trimmed().isEmpty();
    row.source->setText(own ? tr("scenario") : tr("list price"));
    row.source->setToolTip(own ? tr("The scenario's price: costs of %1 use it").arg(row.gpu)
                               : tr("The %1 profile's list price: costs use it until you type another").arg(row.gpu));
}

bool GpuPriceFields::read(Scenario& s)
{
    bool ok = true;
    s.cluster.gpu_prices.clear();
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        Row& row = m_rows[i];
        const auto parsed = fields::parseOptionalPositive(row.field->text(), 1000);
        row.field->setError(parsed.error);
        ok = ok && parsed.error.isEmpty();
        if (i == 0) {
            s.cluster.price_per_gpu_hour = parsed.value;
        } else if (parsed.value) {
            s.cluster.gpu_prices[row.gpu.toStdString()] = *parsed.value;
        }
        updateSource(row);
    }
    return ok;
}

std::map<QString, FieldRow*> GpuPriceFields::fields() const
{
    std::map<QString, FieldRow*> out;
    for (const Row& r : m_rows) {
        out[r.field->name()] = r.field;
    }
    return out;
}

QString GpuPriceFields::shownPrice(const QString& gpu) const
{
    for (const Row& r : m_rows) {
        if (r.gpu == gpu) {
            const QString typed = r.field->text().trimmed();
            const double value = typed.isEmpty() ? m_listPrices.value(gpu, 0) : typed.toDouble();
            return QStringLiteral("%1 · %2").arg(formatDollars(value), r.source->text());
        }
    }
    return {};
}

} // namespace vtrain::ui
