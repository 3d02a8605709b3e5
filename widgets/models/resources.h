// SPDX-License-Identifier: MIT
#pragma once
// The compiled-in resources (icons, scenario presets) live in a static library; the linker drops them
// unless someone references them, which initResources() does. Call it once from main() and from tests.
namespace vtrain::ui {

void initResources();

} // namespace vtrain::ui
