// SPDX-License-Identifier: MIT
#include "explore_csv.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "vtrain/explorer_io.h"
#include "vtrain/json_fields.h"

namespace vtrain::cli {

FrontIndex::FrontIndex(const std::vector<PlanRow>& front)
{
    m_indices.reserve(front.size());
    for (const auto& r : front) {
        m_indices.push_back(r.index);
    }
    std::sort(m_indices.begin(), m_indices.end());
}

FrontIndex::FrontIndex(std::vector<std::uint64_t> indices) : m_indices(std::move(indices))
{
    std::sort(m_indices.begin(), m_indices.end());
}

bool FrontIndex::contains(std::uint64_t index) const
{
    return std::binary_search(m_indices.begin(), m_indices.end(), index);
}

std::string csv_spool_line(const PlanRow& row)
{
    std::string line = plan_row_to_csv(row);
    line.resize(line.rfind(',')); // on_front comes later
    line += '\n';
    return line;
}

void append_marked_lines(std::string_view lines, const FrontIndex& front, std::string& out)
{
    while (!lines.empty()) {
        const std::size_t end = lines.find('\n');
        const std::string_view line = lines.substr(0, end);
        std::uint64_t index = 0;
        for (const char c : line.substr(0, line.find(','))) {
            index = index * 10 + static_cast<std::uint64_t>(c - '0');
        }
        out.append(line);
        out += front.contains(index) ? ",true\n" : ",false\n";
        lines.remove_prefix(end == std::string_view::npos ? lines.size() : end + 1);
    }
}

void CsvWriter::write(const PlanRow& row)
{
    for (const double v : {row.iteration_time_s, row.iteration_time_low_s, row.iteration_time_high_s, row.tokens_per_s, row.mfu, row.bubble_fraction,
                           row.peak_memory_gib, row.training_days, row.cost_usd}) {
        if (!std::isfinite(v)) {
            m_non_finite_row = m_non_finite_row.value_or(row.index);
            return;
        }
    }
    const std::string line = csv_spool_line(row);
    if (m_spool != nullptr && m_spool_error == 0 && std::fwrite(line.data(), 1, line.size(), m_spool) != line.size()) {
        m_spool_error = errno != 0 ? errno : EIO;
    }
}

CsvWriter::CsvWriter(std::filesystem::path path) : m_path(std::move(path)) {}

CsvWriter::~CsvWriter()
{
    if (m_spool != nullptr) {
        std::fclose(m_spool);
    }
}

bool CsvWriter::open(std::string& error)
{
    if (!m_out.open(m_path, error)) {
        return false;
    }
    // The spool: a file without a name (or whose name is gone at once) beside the output.
    const std::filesystem::path dir = m_path.has_parent_path() ? m_path.parent_path() : std::filesystem::path(".");
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        std::string name = (dir / ".vtrain-spool-XXXXXX").string();
        fd = ::mkostemp(name.data(), O_CLOEXEC);
        if (fd >= 0) {
            ::unlink(name.c_str());
        }
    }
    if (fd >= 0) {
        m_spool = ::fdopen(fd, "w+b");
        if (m_spool == nullptr) {
            ::close(fd);
        }
    }
    if (m_spool == nullptr) {
        error = "cannot write " + json_fields::bounded(m_path.string(), 300) + ": " + std::strerror(errno);
        return false;
    }
    return true;
}

bool CsvWriter::finish(const std::vector<PlanRow>& front, std::string& error)
{
    const std::string name = json_fields::bounded(m_path.string(), 300);
    if (m_non_finite_row) {
        error =
            "internal error: plan " + std::to_string(*m_non_finite_row) + " has a figure that is not a finite number; " + name + " was not written";
        return false; // the output's .part is removed with it
    }
    errno = 0;
    if (m_spool_error == 0 && (std::fflush(m_spool) != 0 || std::fseek(m_spool, 0, SEEK_SET) != 0)) {
        m_spool_error = errno != 0 ? errno : EIO;
    }
    if (m_spool_error != 0) {
        error = "cannot write " + name + ": " + std::strerror(m_spool_error);
        return false;
    }
    const FrontIndex on_front(front);
    std::ostream& out = m_out.stream();
    out << plan_row_csv_header() << '\n';
    std::string marked;
    char* line = nullptr;
    std::size_t capacity = 0;
    ssize_t length = 0;
    while ((length = ::getline(&line, &capacity, m_spool)) > 0) {
        marked.clear();
        append_marked_lines(std::string_view(line, static_cast<std::size_t>(length)), on_front, marked);
        out << marked;
    }
    std::free(line);
    const bool read_failed = std::ferror(m_spool) != 0;
    std::fclose(m_spool);
    m_spool = nullptr;
    if (read_failed) {
        error = "cannot write " + name + ": the rows spooled during the sweep could not be read back";
        return false;
    }
    return m_out.commit(error);
}

} // namespace vtrain::cli
