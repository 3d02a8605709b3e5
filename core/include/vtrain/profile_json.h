// SPDX-License-Identifier: MIT
#pragma once
// Reading and writing GPU profile files (format: docs/profile-format.md).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"

namespace vtrain {

Expected<GpuProfile> profile_from_json(const nlohmann::json& json);
Expected<GpuProfile> load_profile(const std::filesystem::path& path);
nlohmann::json profile_to_json(const GpuProfile& profile);

// Shipped and user profiles, looked up by id in a list of folders (first match wins).
struct ProfileLibrary {
    std::vector<std::filesystem::path> folders;

    // The default search path: $VTRAIN_PROFILE_PATH entries, ~/.local/share/vtrain/profiles,
    // the source tree's profiles/ (when run from a build tree) and the installed data folder.
    static ProfileLibrary default_library(const std::filesystem::path& executable_dir = {});

    std::vector<std::filesystem::path> profile_files() const;
    Expected<GpuProfile> load(const std::string& id) const;
    std::vector<std::string> ids() const;
};

} // namespace vtrain
