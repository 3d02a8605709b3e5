// SPDX-License-Identifier: MIT
#pragma once
// Where the tests find the published validation sets (they live outside the repository, in
// ../shared/validation, or where VTRAIN_VALIDATION_DIR says), and the shipped profiles their rows name.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "test_support.h"
#include "vtrain/validation.h"

namespace vtrain::test {

inline std::filesystem::path validation_data_dir()
{
    if (const char* dir = std::getenv("VTRAIN_VALIDATION_DIR")) {
        return dir;
    }
    return std::filesystem::path(VTRAIN_VALIDATION_FILE).parent_path();
}

// Every profile the rows name that the repository ships; rows of other GPUs are skipped ("no profile").
inline std::map<std::string, GpuProfile> shipped_profiles_for(const std::vector<RunRow>& rows)
{
    std::map<std::string, GpuProfile> profiles;
    for (const RunRow& r : rows) {
        const RowMapping m = map_run(r);
        if (m.run && profiles.count(m.run->profile_id) == 0) {
            GpuProfile p = shipped_profile(m.run->profile_id);
            if (!p.id.empty()) {
                profiles.emplace(m.run->profile_id, std::move(p));
            }
        }
    }
    return profiles;
}

} // namespace vtrain::test
