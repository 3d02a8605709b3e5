// SPDX-License-Identifier: MIT
#pragma once
// The two halves of `vtrain explore` around the sweep, shared by the single-process command
// (cmd_explore.cpp) and the MPI one (mpi/mpi_explore.cpp): reading the request, reporting the result.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "vtrain/explorer.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/scenario.h"

namespace vtrain::cli {

struct ExploreRequest {
    Args args;
    std::string path; // the scenario file
    Scenario scenario;
    std::map<std::string, GpuProfile> profiles; // every GPU the search names
    ExploreOptions options;
};

// Reads the command line (the explore options plus `extra_value_options`), the scenario and its GPU
// profiles. kExitOk, or the exit status after reporting the error on stderr.
int prepare_explore(const std::vector<std::string>& argv, const std::vector<std::string>& extra_value_options, ExploreRequest& request);

// Prints the summary ("evaluated in ... on `workers`"), the front, the top lists and the scenario's plan
// against the front; writes --json with `json_extra`'s keys added. kExitOk, or kExitFailure when the
// JSON cannot be written.
int report_explore(const ExploreRequest& request, const ExploreResult& result, const std::string& workers, const nlohmann::json& json_extra);

} // namespace vtrain::cli
