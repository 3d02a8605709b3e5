// SPDX-License-Identifier: MIT
#pragma once
// The `vtrain` subcommands; each takes its arguments after the subcommand name and returns the exit status.
#include <string>
#include <vector>

namespace vtrain::cli {

struct Command {
    const char* name;
    const char* summary;
    const char* help; // usage, options and an example
    int (*run)(const std::vector<std::string>& args);
};

int run_simulate(const std::vector<std::string>& args);
int run_explore(const std::vector<std::string>& args);
int run_timeline(const std::vector<std::string>& args);
int run_profiles(const std::vector<std::string>& args);
int run_make_profile(const std::vector<std::string>& args);
int run_validate(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);
int run_optimal_model(const std::vector<std::string>& args);
int run_schedule(const std::vector<std::string>& args);
int run_launch(const std::vector<std::string>& args);
int run_import(const std::vector<std::string>& args);

extern const char* const kSimulateHelp;
extern const char* const kExploreHelp;
extern const char* const kTimelineHelp;
extern const char* const kProfilesHelp;
extern const char* const kMakeProfileHelp;
extern const char* const kValidateHelp;
extern const char* const kCalibrateHelp;
extern const char* const kOptimalModelHelp;
extern const char* const kScheduleHelp;
extern const char* const kLaunchHelp;
extern const char* const kImportHelp;

} // namespace vtrain::cli
