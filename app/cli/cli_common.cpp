// SPDX-License-Identifier: MIT
#include "cli_common.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include <stdexcept>

#include "vtrain/json_fields.h"
#include "vtrain/scenario_json.h"

namespace vtrain::cli {
namespace {
std::filesystem::path g_executable_dir;
bool g_list_all_errors = false;
// A last guard: whatever a message quotes, one line of it stays readable.
constexpr std::size_t kMaxMessageChars = 1000;

std::string format_bound(double v)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", v);
    return buffer;
}

std::string os_reason(int error_number)
{
    return error_number != 0 ? std::strerror(error_number) : "unknown error";
}
} // namespace

void set_list_all_errors(bool all)
{
    g_list_all_errors = all;
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
                               const std::vector<std::string>& flags, std::string& error, const std::vector<std::string>& repeatable)
{
    const auto listed = [](const std::vector<std::string>& list, const std::string& name) {
        return std::find(list.begin(), list.end(), name) != list.end();
    };
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
            const bool takes_value = listed(with_value, name);
            if (!takes_value && !(listed(flags, name) && !has_inline)) {
                error = "unknown option " + (a.size() > 80 ? a.substr(0, 80) + "..." : a);
                return std::nullopt;
            }
            // One rule for every subcommand: an option given twice is refused, never silently resolved.
            const std::string canonical = name == "-o" ? "--output" : name;
            if (!listed(repeatable, name) && args.flag(canonical)) {
                error = "option " + name + " is given more than once (give it once)";
                return std::nullopt;
            }
            if (takes_value) {
                if (has_inline) {
                    args.options.emplace_back(canonical, inline_value);
                } else if (i + 1 < argv.size()) {
                    args.options.emplace_back(canonical, argv[++i]);
                } else {
                    error = "option " + name + " needs a value";
                    return std::nullopt;
                }
            } else {
                args.options.emplace_back(canonical, "");
            }
        } else {
            args.positional.push_back(a);
        }
    }
    return args;
}

namespace {
std::string shown(const std::string& text)
{
    return "\"" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "\"";
}
} // namespace

std::string whole_option(const Args& args, const std::string& name, long long min, long long max, long long& out)
{
    const auto text = args.value(name);
    if (!text) {
        return {};
    }
    const std::string range = "is not a whole number from " + std::to_string(min) + " to " + std::to_string(max);
    try {
        std::size_t used = 0;
        const long long v = std::stoll(*text, &used);
        if (used != text->size() || v < min || v > max) {
            return name + ": " + shown(*text) + " " + range;
        }
        out = v;
        return {};
    } catch (const std::exception&) {
        return name + ": " + shown(*text) + " " + range;
    }
}

std::string whole_option(const Args& args, const std::string& name, int min, int max, int& out)
{
    long long v = out;
    std::string error = whole_option(args, name, static_cast<long long>(min), static_cast<long long>(max), v);
    if (error.empty()) {
        out = static_cast<int>(v);
    }
    return error;
}

std::string number_option(const Args& args, const std::string& name, double min, double max, double& out)
{
    const auto text = args.value(name);
    if (!text) {
        return {};
    }
    try {
        std::size_t used = 0;
        const double v = std::stod(*text, &used);
        if (used == text->size() && std::isfinite(v) && v >= min && v <= max) {
            out = v;
            return {};
        }
    } catch (const std::exception&) {
        // out of range (1e999) or not a number: the message below
    }
    return name + ": " + shown(*text) + " is not a number from " + format_bound(min) + " to " + format_bound(max);
}

int report_bad_input(const Diagnostics& diagnostics)
{
    if (diagnostics.empty()) {
        std::cerr << "vtrain: bad input\n";
    } else if (g_list_all_errors || diagnostics.size() == 1) {
        for (const auto& d : diagnostics) {
            std::cerr << "vtrain: " << json_fields::bounded(d.to_string(), kMaxMessageChars) << '\n';
        }
    } else {
        const std::size_t more = diagnostics.size() - 1;
        std::cerr << "vtrain: " << json_fields::bounded(diagnostics.front().to_string(), kMaxMessageChars) << " (and " << more
                  << " more; --all-errors to list " << (more == 1 ? "it" : "them") << ")\n";
    }
    return kExitBadInput;
}

int report_bad_input(const std::string& message)
{
    std::cerr << "vtrain: " << json_fields::bounded(message, kMaxMessageChars) << '\n';
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

std::optional<LoadedScenario> load_scenario_and_profile(const std::string& path, const std::optional<std::string>& profile_file, int& exit_code)
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
    const std::filesystem::path part = path.string() + ".part";
    std::FILE* out = std::fopen(part.c_str(), "wb");
    if (out == nullptr) {
        error = "cannot write " + path.string() + ": " + os_reason(errno);
        return false;
    }
    errno = 0;
    const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size() && std::fflush(out) == 0;
    const int write_errno = errno;
    const bool closed = std::fclose(out) == 0;
    const int close_errno = errno;
    if (!written || !closed) {
        std::remove(part.c_str());
        error = "cannot write " + path.string() + ": " + os_reason(!written ? write_errno : close_errno);
        return false;
    }
    if (std::rename(part.c_str(), path.c_str()) != 0) {
        error = "cannot write " + path.string() + ": " + os_reason(errno);
        std::remove(part.c_str());
        return false;
    }
    return true;
}

std::string output_json(const nlohmann::json& document, int indent)
{
    if (const auto bad = json_fields::first_non_finite(document)) {
        throw std::runtime_error((bad->empty() ? std::string("the output") : bad->substr(bad->front() == '.' ? 1 : 0)) +
                                 " is not a finite number; nothing was written");
    }
    return document.dump(indent);
}

int report_write_failure(const std::string& error)
{
    std::cerr << "vtrain: " << error << '\n';
    return kExitFailure;
}

bool flush_standard_output(std::string& error)
{
    errno = 0;
    std::cout.flush();
    const bool stream_ok = static_cast<bool>(std::cout);
    const bool file_ok = std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
    if (stream_ok && file_ok) {
        return true;
    }
    error = "cannot write standard output: " + os_reason(errno);
    return false;
}

} // namespace vtrain::cli
