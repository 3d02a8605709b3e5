// SPDX-License-Identifier: MIT
#include "explore_csv.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "vtrain/explorer_io.h"

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
    m_out << csv_spool_line(row);
}

CsvWriter::CsvWriter(std::filesystem::path path) : m_path(std::move(path)), m_part(m_path.string() + ".part"), m_out(m_part, std::ios::binary) {}

bool CsvWriter::finish(const std::vector<PlanRow>& front, std::string& error)
{
    m_out.close();
    if (m_non_finite_row) {
        std::filesystem::remove(m_part);
        error = "internal error: plan " + std::to_string(*m_non_finite_row) + " has a figure that is not a finite number; " + m_path.string() +
                " was not written";
        return false;
    }
    const FrontIndex on_front(front);
    std::ifstream in(m_part, std::ios::binary);
    std::ofstream out(m_path, std::ios::binary | std::ios::trunc);
    if (!in || !out) {
        error = "cannot write " + m_path.string() + ": " + std::strerror(errno);
        return false;
    }
    out << plan_row_csv_header() << '\n';
    std::string line;
    std::string marked;
    while (std::getline(in, line)) {
        marked.clear();
        line += '\n';
        append_marked_lines(line, on_front, marked);
        out << marked;
    }
    in.close();
    std::filesystem::remove(m_part);
    errno = 0;
    out.close(); // a full disk shows at the final flush
    if (!out) {
        error = "cannot write " + m_path.string() + ": " + (errno != 0 ? std::strerror(errno) : "write failed");
        return false;
    }
    return true;
}

} // namespace vtrain::cli
