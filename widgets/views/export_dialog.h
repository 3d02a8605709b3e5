// SPDX-License-Identifier: MIT
#pragma once
// Asks where and how big to export an image: file (PNG, SVG or PDF), size presets for slides, custom
// width and height, and the PNG resolution scale. The last choice is remembered.
#include <optional>

#include <QDialog>

#include "views/export.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace vtrain::ui {

struct ImageExportRequest {
    QString path;
    ExportSize size;
};

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    ExportDialog(const QString& what, const QString& suggestedPath, const QSize& currentSize, QWidget* parent = nullptr);

    ImageExportRequest request() const;
    static std::optional<ImageExportRequest> ask(QWidget* parent, const QString& what, const QString& suggestedPath, const QSize& currentSize);
    // The whole interaction for one chart: asks (starting in the last folder used), exports, remembers the
    // folder, and warns on failure. Returns the path written, or nothing when cancelled or failed.
    static std::optional<QString> exportChart(QWidget* parent, QCustomPlot* plot, const QString& what, const QString& fileName, const QString& title);

private:
    void browse();
    void remember() const;
    void updateFormatHints();

    QLineEdit* m_path = nullptr;
    QComboBox* m_preset = nullptr;
    QSpinBox* m_width = nullptr;
    QSpinBox* m_height = nullptr;
    QComboBox* m_scale = nullptr;
    QLabel* m_note = nullptr;
};

} // namespace vtrain::ui
