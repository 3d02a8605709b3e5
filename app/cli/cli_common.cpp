// SPDX-License-Identifier: MIT
#include "cli_common.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <streambuf>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

std::vector<std::filesystem::path>& noted_inputs()
{
    static std::vector<std::filesystem::path> inputs;
    return inputs;
}

// std::cout through C's stdout (so that it stays in order with printf), keeping errno of the first call
// that failed: the reason a full disk gives is otherwise lost by the time the stream is flushed at exit.
class StdoutBuffer final : public std::streambuf {
public:
    int error() const { return m_error; }

protected:
    int_type overflow(int_type c) override
    {
        if (traits_type::eq_int_type(c, traits_type::eof())) {
            return traits_type::not_eof(c);
        }
        errno = 0;
        if (std::fputc(traits_type::to_char_type(c), stdout) == EOF) {
            failed();
            return traits_type::eof();
        }
        return c;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override
    {
        errno = 0;
        const std::size_t written = std::fwrite(s, 1, static_cast<std::size_t>(n), stdout);
        if (written != static_cast<std::size_t>(n)) {
            failed();
        }
        return static_cast<std::streamsize>(written);
    }
    int sync() override
    {
        errno = 0;
        if (std::fflush(stdout) != 0) {
            failed();
            return -1;
        }
        return 0;
    }

private:
    void failed()
    {
        if (m_error == 0) {
            m_error = errno != 0 ? errno : EIO;
        }
    }
    int m_error = 0;
};

StdoutBuffer* g_stdout_buffer = nullptr;
} // namespace

// A file descriptor as a stream buffer (64 KiB), keeping errno of the first write that failed.
struct OutputFile::FileBuffer final : public std::streambuf {
    explicit FileBuffer(int descriptor) : fd(descriptor), buffer(std::size_t{1} << 16) { setp(buffer.data(), buffer.data() + buffer.size()); }

    int fd;
    int error = 0;
    std::vector<char> buffer;

    bool write_all(const char* data, std::size_t n)
    {
        while (n > 0 && error == 0) {
            const ssize_t w = ::write(fd, data, n);
            if (w < 0) {
                if (errno == EINTR) {
                    continue;
                }
                error = errno;
                return false;
            }
            data += w;
            n -= static_cast<std::size_t>(w);
        }
        return error == 0;
    }
    bool drain()
    {
        const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
        setp(buffer.data(), buffer.data() + buffer.size());
        return write_all(buffer.data(), n);
    }

protected:
    int_type overflow(int_type c) override
    {
        if (!drain()) {
            return traits_type::eof();
        }
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override
    {
        if (n >= static_cast<std::streamsize>(buffer.size())) { // large pieces go straight out
            if (!drain() || !write_all(s, static_cast<std::size_t>(n))) {
                return 0;
            }
            return n;
        }
        return std::streambuf::xsputn(s, n);
    }
    int sync() override { return drain() ? 0 : -1; }
};

void note_input(const std::filesystem::path& path)
{
    noted_inputs().push_back(path);
}

bool check_output(const std::filesystem::path& path, std::string& error, bool allow_standard_output)
{
    const auto fail = [&](const std::string& reason) {
        error = "cannot write " + json_fields::bounded(path.string(), 300) + ": " + reason;
        return false;
    };
    if (path == "-") {
        return allow_standard_output || fail("\"-\" (standard output) is not an output of this option; name a file");
    }
    // Only a regular file (or nothing) is replaced: rename() would put a file in place of a device node,
    // and a directory cannot take a file's place. stat() follows a symbolic link to what it names.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return true; // nothing there yet (or no folder: creating the output says so)
    }
    if (S_ISDIR(st.st_mode)) {
        return fail("it is a directory");
    }
    if (!S_ISREG(st.st_mode)) {
        const char* what = S_ISCHR(st.st_mode)    ? "a character device"
                           : S_ISBLK(st.st_mode)  ? "a block device"
                           : S_ISFIFO(st.st_mode) ? "a pipe"
                                                  : "a socket";
        return fail(std::string("it is ") + what +
                    ", not a regular file (only files are written; \"-\" is standard output where a command allows it)");
    }
    for (const auto& input : noted_inputs()) {
        std::error_code ec;
        if (std::filesystem::equivalent(path, input, ec)) {
            return fail("it is an input of this command (" + json_fields::bounded(input.string(), 300) + "); write to another file");
        }
    }
    return true;
}

OutputFile::OutputFile() = default;

OutputFile::~OutputFile()
{
    if (m_open && !m_standard_output) {
        ::close(m_buffer->fd);
        ::unlink(m_part.c_str());
    }
}

bool OutputFile::open(const std::filesystem::path& path, std::string& error, bool allow_standard_output)
{
    const std::string name = json_fields::bounded(path.string(), 300);
    const auto fail = [&](const std::string& reason) {
        error = "cannot write " + name + ": " + reason;
        return false;
    };
    if (!check_output(path, error, allow_standard_output)) {
        return false;
    }
    if (path == "-") {
        m_standard_output = true;
        m_open = true;
        return true;
    }
    // Exclusively, never through a link: PATH.part, or a unique name beside it when that exists.
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    m_part = path.string() + ".part";
    int fd = ::open(m_part.c_str(), flags, 0666);
    for (unsigned attempt = 0; fd < 0 && errno == EEXIST && attempt < 100; ++attempt) {
        const auto noise = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                           (static_cast<unsigned long long>(::getpid()) << 20) ^ (attempt * 0x9E3779B97F4A7C15ULL);
        char suffix[32];
        std::snprintf(suffix, sizeof suffix, ".%06llx.part", noise & 0xFFFFFFULL);
        m_part = path.string() + suffix;
        fd = ::open(m_part.c_str(), flags, 0666);
    }
    if (fd < 0) {
        return fail(os_reason(errno));
    }
    m_path = path;
    m_buffer = std::make_unique<FileBuffer>(fd);
    m_stream = std::make_unique<std::ostream>(m_buffer.get());
    m_open = true;
    return true;
}

std::ostream& OutputFile::stream()
{
    return m_standard_output ? std::cout : *m_stream;
}

bool OutputFile::commit(std::string& error)
{
    if (!m_open) {
        error = "cannot write: the output was not opened";
        return false;
    }
    if (m_standard_output) {
        m_open = false;
        return flush_standard_output(error);
    }
    const std::string name = json_fields::bounded(m_path.string(), 300);
    m_stream->flush();
    int reason = m_buffer->error;
    if (reason == 0 && !*m_stream) {
        reason = EIO;
    }
    if (::close(m_buffer->fd) != 0 && reason == 0) {
        reason = errno; // a full disk or quota may show only here (NFS)
    }
    m_open = false;
    if (reason == 0 && std::rename(m_part.c_str(), m_path.c_str()) != 0) {
        reason = errno;
    }
    if (reason != 0) {
        ::unlink(m_part.c_str());
        error = "cannot write " + name + ": " + os_reason(reason);
        return false;
    }
    return true;
}

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
    note_input(path);
    if (profile_file) {
        note_input(*profile_file);
    }
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
    OutputFile out;
    if (!out.open(path, error)) {
        return false;
    }
    out.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
    return out.commit(error);
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
    std::cerr << "vtrain: " << json_fields::bounded(error, kMaxMessageChars) << '\n';
    return kExitFailure;
}

void watch_standard_output()
{
    // Never destroyed: std::cout is flushed by the library after static destructors run, and a
    // destroyed buffer there is a use after free (ASan: SEGV in ios_base::Init::~Init at exit).
    static StdoutBuffer* const buffer = new StdoutBuffer;
    g_stdout_buffer = buffer;
    std::cout.rdbuf(buffer);
}

bool flush_standard_output(std::string& error)
{
    errno = 0;
    std::cout.flush();
    const bool stream_ok = static_cast<bool>(std::cout);
    const bool file_ok = std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
    const int flush_errno = errno;
    if (stream_ok && file_ok) {
        return true;
    }
    const int first = g_stdout_buffer != nullptr ? g_stdout_buffer->error() : 0;
    error = "cannot write standard output: " + os_reason(first != 0 ? first : flush_errno);
    return false;
}

} // namespace vtrain::cli
