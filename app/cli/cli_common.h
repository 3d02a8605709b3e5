// SPDX-License-Identifier: MIT
#pragma once
// Shared plumbing of the `vtrain` subcommands: argument reading, loading scenarios and profiles, and
// reporting bad input as one clear line with exit status 2, and writing outputs so that a failure (a
// full disk, a missing folder) is reported with the OS's reason and exit status 1.
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/profile_json.h"
#include "vtrain/scenario.h"

namespace vtrain::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1; // an output could not be written (or an internal error)
constexpr int kExitBadInput = 2;

// The most worker threads any subcommand accepts (--threads): far above any machine's cores, far below
// what would exhaust the process's thread or stack limits.
constexpr long long kMaxThreads = 1024;

struct Args {
    std::vector<std::string> positional;
    std::vector<std::pair<std::string, std::string>> options; // --name value, or --flag ""

    bool flag(const std::string& name) const;
    std::optional<std::string> value(const std::string& name) const;
};

// Splits argv; `with_value` lists the options that take a value. Unknown options are errors, and so is
// an option given twice ("-o" and "--output" are one option) unless it is listed in `repeatable`.
std::optional<Args> parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& with_value,
                               const std::vector<std::string>& flags, std::string& error, const std::vector<std::string>& repeatable = {});

// Range-checked numeric options. Absent: `out` is left as it is and "" comes back; present and valid:
// `out` is set; otherwise the message ("--price: \"1e308\" is not a number from 0.01 to 10000").
std::string whole_option(const Args& args, const std::string& name, long long min, long long max, long long& out);
std::string whole_option(const Args& args, const std::string& name, int min, int max, int& out);
std::string number_option(const Args& args, const std::string& name, double min, double max, double& out);

// Bad input is printed as one line: the first problem and "(and N more; --all-errors to list them)".
// `vtrain --all-errors COMMAND ...` (or the flag anywhere after COMMAND) lists every problem instead.
void set_list_all_errors(bool all);
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
std::optional<LoadedScenario> load_scenario_and_profile(const std::string& path, const std::optional<std::string>& profile_file, int& exit_code);

// A file the command reads, named on its command line (scenario, --profile, --plan, runs file, ...): no
// output of the command may replace it (OutputFile refuses to).
void note_input(const std::filesystem::path& path);

// The checks OutputFile::open() makes before it creates anything (PATH is not an input, not a directory,
// device, pipe or socket; "-" only where allowed): for outputs written after a long computation.
bool check_output(const std::filesystem::path& path, std::string& error, bool allow_standard_output = false);

// One output of a command, written safely. open() refuses a PATH that is one of the command's inputs
// (note_input) or an existing directory, device, pipe or socket (only regular files are replaced), then
// creates PATH.part exclusively (O_CREAT | O_EXCL | O_NOFOLLOW: a planted file or symbolic link there is
// never followed or truncated; when PATH.part exists, a unique PATH.XXXXXX.part instead). commit()
// renames it to PATH once everything is written; an output never committed is removed. "-" is standard
// output where the command allows it. Every failure is "cannot write PATH: <the OS's reason>" (errno
// at the failing call: a full disk says "No space left on device").
class OutputFile {
public:
    OutputFile();
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    bool open(const std::filesystem::path& path, std::string& error, bool allow_standard_output = false);
    std::ostream& stream();
    bool commit(std::string& error);
    bool is_standard_output() const { return m_standard_output; }

private:
    struct FileBuffer;
    std::unique_ptr<FileBuffer> m_buffer;
    std::unique_ptr<std::ostream> m_stream;
    std::filesystem::path m_path, m_part;
    bool m_standard_output = false;
    bool m_open = false;
};

// Writes PATH through an OutputFile (PATH.part, then renamed; see there), so a failed write never leaves a
// half file under the final name. Missing parent folders are not created. On failure `error` holds the
// path and the OS's reason.
bool write_text_file(const std::filesystem::path& path, const std::string& text, std::string& error);
// Prints an output failure (from write_text_file or standard output) and returns kExitFailure.
int report_write_failure(const std::string& error);
// The text of a JSON output. A document holding inf or NaN is a bug, never written: it throws, and the
// command ends with "internal error: <field> is not a finite number" (exit status 1).
std::string output_json(const nlohmann::json& document, int indent = 2);
// Routes std::cout through a buffer that keeps the OS's reason of the first failed write (main() calls it
// first), so that a failure seen only at the end still has its reason.
void watch_standard_output();
// Flushes standard output; false (with the OS's reason in `error`) when it could not be written, e.g.
// a full disk or `> /dev/full` ("No space left on device").
bool flush_standard_output(std::string& error);

void set_executable_path(const char* argv0);

} // namespace vtrain::cli
