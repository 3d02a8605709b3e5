// SPDX-License-Identifier: MIT
#pragma once
// The cluster fields every case-study request shares (GPU type, count, node size), checked one way.
#include <string>

#include "vtrain/diagnostic.h"

namespace vtrain {

inline void check_cluster_fields(const std::string& gpu, int num_gpus, int gpus_per_node, Diagnostics& d)
{
    if (gpu.empty()) {
        d.push_back({"gpu", "is required (a GPU profile id, e.g. a100-sxm4-80gb)"});
    }
    if (num_gpus < 1 || num_gpus > 1'000'000) {
        d.push_back({"gpus", "must be a whole number from 1 to 1,000,000 (got " + std::to_string(num_gpus) + ")"});
    }
    if (gpus_per_node < 0) {
        d.push_back({"gpus_per_node", "must be >= 1 (0 = the profile's node size)"});
    }
}

} // namespace vtrain
