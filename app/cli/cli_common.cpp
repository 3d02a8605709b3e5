// SPDX-License-Identifier: MIT
#include "cli_common.h"

#include <algorithm>
#include <fstream>
#include <iostream>

#include "vtrain/scenario_json.h"

namespace vtrain::cli {
namespace {
std::filesystem::path g_executable_dir;
}

void set_executable_path(const char* argv0)
{
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) {
        self = std::filesystem::absolute(argv0, ec);
    }
    g_executable_dir = self.parent_path();
}

bool Args::flag(const std::string& name) const
{
    return std::any_of(options.begin(), options.end(), [&](const auto& o) { return o.first == name; });
}

std::optional<std::string> Args::value(const std::string& name) const
{
    for (const auto& [key, v] : options) {
        if (key == name) {
            return v;
        }
    }
    return std::nullopt;
}

std::optional<Args> parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& with_value,
                               const std::vector<std::string>& flags, std::string& error)
{
    Args args;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.size() > 1 && a[0] == '-') {
            std::string name = a;
            std::string inline_value;
            bool has_inline = false;
            if (const auto eq = a.find('='); eq != std::string::npos) {
                name = a.substr(0, eq);
                inline_value = a.substr(eq + 1);
                has_inline = true;
            }
            if (std::find(with_value.begin(), with_value.end(), name) != with_value.end()) {
                if (has_inline) {
                    args.options.emplace_back(name, inline_value);
                } else if (i + 1 < argv.size()) {
                    args.options.emplace_back(name, argv[++i]);
                } else {
                    error = "option " + name + " needs a value";
                    return std::nullopt;
                }
            } else if (std::find(flags.begin(), flags.end(), name) != flags.end() && !has_inline) {
                args.options.emplace_back(name, "");
            } else {
                error = "unknown option " + a;
                return std::nullopt;
            }
        } else {
            args.positional.push_back(a);
        }
    }
    return args;
}

int report_bad_input(const Diagnostics& diagnostics)
{
    for (const auto& d : diagnostics) {
        std::cerr << "vtrain: " << d.to_string() << '\n';
    }
    return kExitBadInput;
}

int report_bad_input(const std::string& message)
{
    std::cerr << "vtrain: " << message << '\n';
    return kExitBadInput;
}

int report_bad_file(const std::string& path, const Diagnostics& diagnostics)
{
    Diagnostics prefixed;
    for (const auto& d : diagnostics) {
        // A file that cannot be opened already names itself.
        prefixed.push_back({d.field.empty() || d.field == path ? path : path + ": " + d.field, d.message});
    }
    return report_bad_input(prefixed);
}

std::optional<std::string> output_option(const Args& args)
{
    return args.value("-o") ? args.value("-o") : args.value("--output");
}

ProfileLibrary profile_library()
{
    return ProfileLibrary::default_library(g_executable_dir);
}

std::optional<LoadedScenario> load_scenario_and_profile(const std::string& path, const std::optional<std::string>& profile_file,
                                                        int& exit_code)
{
    auto scenario = load_scenario(path);
    if (!scenario.ok()) {
        exit_code = report_bad_file(path, scenario.errors());
        return std::nullopt;
    }
    auto profile = profile_file ? load_profile(*profile_file) : profile_library().load(scenario->cluster.gpu);
    if (!profile.ok()) {
        exit_code = report_bad_input(profile.errors());
        return std::nullopt;
    }
    return LoadedScenario{std::move(scenario).value(), std::move(profile).value()};
}

bool write_text_file(const std::filesystem::path& path, const std::string& text, std::string& error)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) {
        error = "cannot write " + path.string();
        return false;
    }
    out << text;
    out.close();
    if (!out) {
        error = "writing " + path.string() + " failed";
        return false;
    }
    return true;
}

} // namespace vtrain::cli
