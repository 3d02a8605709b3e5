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
int run_timeline(const std::vector<std::string>& args);
int run_profiles(const std::vector<std::string>& args);
int run_make_profile(const std::vector<std::string>& args);

extern const char* const kSimulateHelp;
extern const char* const kTimelineHelp;
extern const char* const kProfilesHelp;
extern const char* const kMakeProfileHelp;

} // namespace vtrain::cli
