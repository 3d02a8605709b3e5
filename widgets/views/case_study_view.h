// SPDX-License-Identifier: MIT
#pragma once
// What the case-study tabs (OptimalModelView, ClusterScheduleView) share: the GPU type picker, refused
// input shown at its field and in the status line, the StudyBar (Run / Cancel / Export and the study's
// progress), the inputs saved on every edit and restored, a study scheduled shortly after every valid
// edit, the study run when the tab is first shown, and the chart's export. A subclass builds its inputs
// and shows its result; it supplies the study of the current inputs (study()) and the chart.
#include <functional>
#include <string>

#include <QHash>
#include <QVariantMap>
#include <QWidget>

#include "views/export.h"
#include "vtrain/diagnostic.h"

class QComboBox;
class QCustomPlot;
class QFormLayout;
class QLabel;
class QTableWidgetItem;

namespace vtrain::ui {

class FieldRow;
class ProfileCatalog;
class StudyBar;
class StudyRunner;

class CaseStudyView : public QWidget {
    Q_OBJECT
public:
    // Starts a study of the current inputs now (false when an input is refused).
    bool run();
    void cancel();
    // The inputs of the last session (QSettings), if any; they are saved on every edit.
    void restoreInputs();
    // Re-run on every valid edit (on by default).
    void setAutoRun(bool on) { m_autoRun = on; }

    virtual QCustomPlot* customPlot() const = 0;
    // The error shown at a field, by the core's field name; "" = none.
    QString fieldError(const QString& field) const;
    QString statusText() const;

    bool exportImage(const QString& path, const ExportSize& size, QString* error);
    // Asks for a file and size, then exports (the Export button, the main window's menu).
    void exportDialog();

protected:
    // What tells one case study from the other to the shared parts.
    struct Names {
        QString stepName;        // the study's steps in the progress text ("models")
        const char* settingsKey; // where the inputs are saved
        QString chartTitle;      // the exported chart's title
        QString chartName;       // the chart, as the export dialog names it
        QString fileName;        // the export dialog's suggested file
    };
    // How a study of valid inputs starts: now, or kDebounceMs after unless another edit comes first.
    enum class Start { Now, Debounced };
    static constexpr int kDebounceMs = 500; // typing "3360" is one study, not four
    // Starts the study of the inputs it was made for; false when it could not start (errors shown).
    using Study = std::function<bool(Start start)>;

    // `catalog` must outlive the view.
    CaseStudyView(ProfileCatalog* catalog, const Names& names, QWidget* parent);

    // The study of the current inputs; an empty function (and the fields marked) when some input is refused.
    virtual Study study() = 0;
    // The inputs other than the GPU type, to save and to restore.
    virtual QVariantMap savedInputs() const = 0;
    virtual void loadInputs(const QVariantMap& saved) = 0;

    void showEvent(QShowEvent* event) override;

    // The inputs' form on `panel`, its first row the GPU type picker: a combo box named `gpuName` and its error
    // label `gpuName`.error. The subclass adds its rows, then calls finishInputs().
    QFormLayout* buildForm(QWidget* panel, const QString& gpuName);
    // Lays `panel` out: `intro`, the form, the StudyBar and a label for the result's text (named `resultName`,
    // it takes the rest of the height), which it returns.
    QLabel* finishInputs(QWidget* panel, const QString& intro, QFormLayout* form, const QString& resultName);
    QString gpuId() const;
    void selectGpu(const QString& gpu); // when it is in the catalog
    // The FieldRows by the core's field names, and the inputs' names in the status line by field name.
    void setFields(const QHash<QString, FieldRow*>& fields, const QHash<QString, QString>& labels);
    // The runner the StudyBar shows and whose refusals are shown at the fields (before buildForm()).
    void setRunner(StudyRunner* runner);
    // The constructor's last step, after finishInputs(): shows `hint` and from now on saves the inputs on every edit.
    void finishSetup(const QString& hint);
    // Sets inputs without a study per field, then takes them as one edit.
    void editInputs(const std::function<void()>& set);
    // Saves the inputs and starts a study of them shortly (when auto-run is on and the tab was shown).
    void onEdited();
    void saveInputs() const;
    void clearErrors();
    void showErrors(const Diagnostics& errors);
    // A result is shown: `status` says how it ended, and is shown again once a refused input is fixed.
    void showFinished(const QString& status);

    // The reason a text is refused, e.g. "\"30x\" is not a number".
    static std::string notA(const QString& text, const QString& what);
    // A read-only cell of a result table.
    static QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter);

    ProfileCatalog* catalog() const { return m_catalog; }
    const QHash<QString, FieldRow*>& fields() const { return m_fields; }
    bool isLoading() const { return m_loading; }

private:
    ProfileCatalog* m_catalog;
    Names m_names;
    StudyRunner* m_runner = nullptr;
    StudyBar* m_bar = nullptr;
    QComboBox* m_gpu = nullptr;
    QLabel* m_gpuError = nullptr;
    QHash<QString, FieldRow*> m_fields;
    QHash<QString, QString> m_labels;
    QString m_resultStatus; // empty until a result is shown
    bool m_autoRun = true;
    bool m_loading = false; // inputs being set programmatically: no auto-run per field
    bool m_shown = false;
    bool m_saving = false; // off while the constructor sets defaults: they must not overwrite the saved inputs
};

} // namespace vtrain::ui
