// SPDX-License-Identifier: MIT
#pragma once
// Every QSettings key in one place (scattered ad-hoc keys drift apart). QSettings holds UI state only;
// scenarios are JSON files.

namespace vtrain::ui::settings_keys {

inline constexpr auto kOrganization = "vtrain";
inline constexpr auto kApplication = "vtrain-explorer";

inline constexpr auto kMainWindowGeometry = "MainWindow/Geometry";
inline constexpr auto kMainWindowState = "MainWindow/State";
// Bump when docks or toolbars change so an old saved layout is ignored instead of half-applied.
inline constexpr int kMainWindowStateVersion = 2;

inline constexpr auto kRecentFiles = "Files/Recent";
inline constexpr int kMaxRecentFiles = 8;
inline constexpr auto kLastDirectory = "Files/LastDirectory";

inline constexpr auto kColorDimension = "Pareto/ColorBy";
inline constexpr auto kLogAxes = "Pareto/LogAxes";
inline constexpr auto kAutoRun = "Sweep/AutoRun";
// "large" (spaces over kPruneAbovePlans), "always" or "never" (Sweep > Prune; prune_policy.h).
inline constexpr auto kPrune = "Sweep/Prune";
// "system", "light" or "dark" (View > Theme).
inline constexpr auto kTheme = "View/Theme";
// The Compare tab's plans (A pinned, B selected) as scenario JSON with their plan, re-simulated at start.
inline constexpr auto kComparePinned = "Compare/Pinned";
inline constexpr auto kCompareCurrent = "Compare/Current";
// The session behind the autosave: the scenario's file, whether the autosave holds edits not saved in it
// (a crash), and the scenario as last opened or saved (what Discard on quit goes back to).
inline constexpr auto kSessionFile = "Session/File";
inline constexpr auto kSessionModified = "Session/Modified";
inline constexpr auto kSessionClean = "Session/Clean";
// The case-study tabs' inputs as typed (a map of field texts), saved on every edit.
inline constexpr auto kOptimalModelInputs = "OptimalModel/Inputs";
inline constexpr auto kSharedClusterInputs = "SharedCluster/Inputs";

inline constexpr auto kExportWidth = "Export/Width";
inline constexpr auto kExportHeight = "Export/Height";
inline constexpr auto kExportScale = "Export/Scale";

} // namespace vtrain::ui::settings_keys
