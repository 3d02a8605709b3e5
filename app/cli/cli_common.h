// SPDX-License-Identifier: MIT
#pragma once
// Shared plumbing of the `vtrain` subcommands: argument reading, loading scenarios and profiles, and
// reporting bad input as one clear line with exit status 2.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/profile_json.h"
#include "vtrain/scenario.h"

namespace vtrain::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

struct Args {
    std::vector<std::string> positional;
    std::vector<std::pair<std::string, std::string>> options; // --name value, or --flag ""

    bool flag(const std::string& name) const;
    std::optional<std::string> value(const std::string& name) const;
};

// Splits argv; `with_value` lists the options that take a value. Unknown options are errors.
std::optional<Args> parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& with_value,
                               const std::vector<std::string>& flags, std::string& error);

int report_bad_input(const Diagnostics& diagnostics);
int report_bad_input(const std::string& message);
// The same, with each diagnostic's field prefixed by the file it came from.
int report_bad_file(const std::string& path, const Diagnostics& diagnostics);

// The value of -o / --output, if given.
std::optional<std::string> output_option(const Args& args);

ProfileLibrary profile_library();

struct LoadedScenario {
    Scenario scenario;
    GpuProfile profile;
};

// Loads a scenario and its GPU profile (`--profile FILE` replaces the library lookup).
std::optional<LoadedScenario> load_scenario_and_profile(const std::string& path, const std::optional<std::string>& profile_file,
                                                        int& exit_code);

bool write_text_file(const std::filesystem::path& path, const std::string& text, std::string& error);

void set_executable_path(const char* argv0);

} // namespace vtrain::cli
