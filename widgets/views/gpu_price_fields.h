// SPDX-License-Identifier: MIT
#pragma once
// One price per GPU type the sweep uses: the one its costs use, and where it comes from. The GPU list
// once showed each profile's list price ("$5.12/h" for the A100) while costs used the scenario's 4.10, and
// an added B200 was costed at its list price with nothing saying so. One row per checked GPU type: the
// cluster's GPU edits cluster.price_per_gpu_hour, the others cluster.gpu_prices; an empty field costs the
// profile's list price, which its placeholder and the row's source label say.
#include <map>
#include <vector>

#include <QHash>
#include <QString>
#include <QWidget>

#include "vtrain/scenario.h"

class QGridLayout;
class QLabel;

namespace vtrain::ui {

class FieldRow;

class GpuPriceFields : public QWidget {
    Q_OBJECT
public:
    explicit GpuPriceFields(QWidget* parent = nullptr);

    void setListPrices(QHash<QString, double> prices); // the profiles' list prices, USD per GPU-hour
    // Rows for `gpus` (the cluster's GPU first); a row that exists keeps its typed text, a new one takes
    // its value from `source`. `reload` overwrites every row from `source` (a scenario was loaded).
    void setGpus(const std::vector<std::string>& gpus, const Scenario& source, bool reload);
    // Writes the typed prices into `s` (cluster.price_per_gpu_hour, cluster.gpu_prices); false when one
    // is refused (the reason is shown at its field).
    bool read(Scenario& s);

    // The rows, for the editor's field lookups: "cluster.price_per_gpu_hour" and "cluster.gpu_prices.<id>".
    std::map<QString, FieldRow*> fields() const;
    // What a GPU type's row says its price is and where it comes from: "$4.10 · scenario", "$6.03 · list price".
    QString shownPrice(const QString& gpu) const;

Q_SIGNALS:
    void edited();
    void committed();
    void rowsChanged(); // rows came or went: the editor re-reads fields()

private:
    struct Row {
        QString gpu;
        QLabel* name = nullptr;
        FieldRow* field = nullptr;
        QLabel* source = nullptr;
    };
    void updateSource(Row& row);

    QHash<QString, double> m_listPrices;
    std::vector<Row> m_rows;
    QGridLayout* m_grid = nullptr;
};

} // namespace vtrain::ui
