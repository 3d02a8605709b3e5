// SPDX-License-Identifier: MIT
#pragma once
// The explorer's CSV as `vtrain explore` writes it: rows spool without their on_front column while the
// sweep runs (the front is only known at the end), then each line gets it while being copied out.
// Shared by the single-process command and the MPI one, so both write the same bytes.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli_common.h"
#include "vtrain/explorer.h"

namespace vtrain::cli {

// The front's enumeration indices, to mark CSV lines.
class FrontIndex {
public:
    explicit FrontIndex(const std::vector<PlanRow>& front);
    explicit FrontIndex(std::vector<std::uint64_t> indices);
    bool contains(std::uint64_t index) const;
    const std::vector<std::uint64_t>& indices() const { return m_indices; }

private:
    std::vector<std::uint64_t> m_indices; // sorted
};

// A row's CSV line without the on_front column, with its newline.
std::string csv_spool_line(const PlanRow& row);

// Appends `lines` (whole spooled lines, each ending in '\n') to `out` with their on_front column.
void append_marked_lines(std::string_view lines, const FrontIndex& front, std::string& out);

// Rows stream during the sweep to a spool, an unnamed file in PATH's folder (O_TMPFILE, or a unique
// name removed at once: nothing to find or to plant there); finish() writes PATH with the header and
// on_front column (bounded memory for any number of rows) through an OutputFile (PATH.part, renamed).
class CsvWriter {
public:
    explicit CsvWriter(std::filesystem::path path);
    ~CsvWriter();
    CsvWriter(const CsvWriter&) = delete;
    CsvWriter& operator=(const CsvWriter&) = delete;
    // Checks and creates the output and the spool before the sweep; false with `error` ("cannot write
    // PATH: <the OS's reason>").
    bool open(std::string& error);
    // A row holding inf or NaN is not written; finish() then fails naming the first such row.
    void write(const PlanRow& row);
    bool finish(const std::vector<PlanRow>& front, std::string& error);

private:
    std::filesystem::path m_path;
    OutputFile m_out;
    std::FILE* m_spool = nullptr;
    int m_spool_error = 0; // errno of the first spool write that failed
    std::optional<std::uint64_t> m_non_finite_row;
};

} // namespace vtrain::cli
