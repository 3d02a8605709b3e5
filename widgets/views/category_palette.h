// SPDX-License-Identifier: MIT
#pragma once
// Colours keyed to values, not to the order categories happen to appear in: tp 8 is the same colour in
// every sweep, filtered or not, and B200 the same beside A100 as beside GB200, so two slides of one study
// agree. One fixed table of distinct colours; each dimension maps its values onto it by a rule that does
// not depend on which other values are present (powers of two by exponent, GPU types by a fixed table,
// counts by their position on a logarithmic scale, names by a stable hash).
#include <QColor>

#include "models/plan_dimensions.h"

namespace vtrain::ui::palette {

inline constexpr int kSize = 20;
QColor entry(int index); // index modulo kSize

// The palette index of a row's value in `dimension`, and its colour.
int indexOf(const PlanRow& row, ColorDimension dimension);
QColor colorOf(const PlanRow& row, ColorDimension dimension);

// The rules, exposed for the tests and the legend.
int indexOfPowerOfTwo(int value); // 1, 2, 4, 8 -> 0, 1, 2, 3; other values by indexOfCount()
int indexOfCount(double value);   // eighth-octave bins: values 9% or more apart differ
int indexOfGpu(const std::string& id);
int indexOfName(const QString& name); // FNV-1a: the same in every session and on every machine

} // namespace vtrain::ui::palette
