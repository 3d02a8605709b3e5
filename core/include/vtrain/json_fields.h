// SPDX-License-Identifier: MIT
#pragma once
// Strict field readers for JSON input: each records a Diagnostic naming the field when a value is
// missing, of the wrong type or outside its range, and never throws.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"

namespace vtrain::json_fields {

class Reader {
public:
    Reader(const nlohmann::json& object, std::string path, Diagnostics& diagnostics);

    bool is_object() const { return m_object.is_object(); }
    bool has(const char* key) const;
    std::string field(const char* key) const;
    Reader child(const char* key) const; // an absent or non-object child reports and reads as empty

    int required_int(const char* key, long long min, long long max);
    std::optional<int> optional_int(const char* key, long long min, long long max);
    double required_number(const char* key, double min, double max);
    std::optional<double> optional_number(const char* key, double min, double max);
    std::string required_string(const char* key);
    std::optional<std::string> optional_string(const char* key);
    std::optional<bool> optional_bool(const char* key);
    // A strictly increasing list of positive numbers (a table grid); minimum size 1.
    std::vector<double> grid(const char* key);
    // A list of positive finite numbers of the given size (a table's latencies).
    std::vector<double> positive_values(const char* key, std::size_t expected_size);
    // Keys present in the object that are not in `known` are reported as unknown (typos).
    void reject_unknown(const std::vector<std::string>& known);

    void error(const std::string& key, const std::string& message) const;
    const nlohmann::json& json() const { return m_object; }
    const std::string& path() const { return m_path; }

private:
    const nlohmann::json* lookup(const char* key) const;

    const nlohmann::json& m_object;
    std::string m_path;
    Diagnostics& m_diagnostics;
};

// The deepest nesting of arrays and objects the reader accepts. Every input of vTrain nests at most 5
// levels; the bound keeps recursive consumers (dump(), copies, comparisons) far from the stack limit.
constexpr std::size_t kMaxJsonDepth = 256;

// Parses JSON text. Every refusal names the place: "not valid JSON at line L, column C: <reason>
// (in <field>)" for syntax errors and numbers beyond a double (1e309), "too deeply nested at line L,
// column C: ..." above kMaxJsonDepth. The diagnostic's field is empty: the caller knows which file or
// text it was.
Expected<nlohmann::json> parse_json_text(const std::string& text);

// A short, bounded rendering of a value for an error message: at most about `max_chars` characters
// however large or deep the value is ("[1, 2, 3, ... (1000000 items)]").
std::string excerpt(const nlohmann::json& value, std::size_t max_chars = 60);

// ASCII `text` in lower case (keys and names compare case-insensitively).
std::string lowercase(std::string text);

// `text` cut to at most `max_chars` bytes (plus "..."), never inside a UTF-8 character, with control
// characters rendered visibly (printable()): for names and keys quoted in messages.
std::string bounded(const std::string& text, std::size_t max_chars = 80);

// `text` with every control character rendered visibly, so that a message quoting user text stays one
// line and cannot drive a terminal: newline, carriage return and tab as \n, \r, \t, the other C0
// controls, DEL and the C1 controls (U+0080-U+009F) as \xNN (ESC as \x1b), and bytes that are not UTF-8
// as \xNN. Everything else (printable ASCII and UTF-8 text) is kept as it is.
std::string printable(std::string_view text);

// The length of the UTF-8 character at `text[i]` (1 for ASCII, 2 to 4), or 0 when the bytes there are not
// one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, or cut short).
std::size_t utf8_char_length(std::string_view text, std::size_t i);
// Whether the whole text is well-formed UTF-8.
bool valid_utf8(std::string_view text);

// Why `id` cannot be a GPU profile id, which names a file in a profile folder and is never a path: empty,
// longer than 128 characters, a character other than letters, digits, '.', '-', '_' and '+' (no '/',
// no space, no control character), or a leading '.' or '-' (no "..", no hidden file, no option).
// nullopt for a valid id ("h100-sxm5-80gb").
std::optional<std::string> id_problem(const std::string& id);

// The path ("rows[3].mfu") of the first number in `value` that is inf or NaN, which JSON cannot carry
// (nlohmann would write null); nullopt when every number is finite. Every JSON output is checked.
std::optional<std::string> first_non_finite(const nlohmann::json& value);

// A JSON whole number within [min, max] (ints, and floats with a whole value like 4.0); nullopt for
// anything else. Range-checked on the 64-bit value before narrowing, so 4294967297 never reads as 1.
std::optional<int> whole_number_in_range(const nlohmann::json& value, int min, int max);

// The largest input file any reader accepts (scenario, profile, runs file, job list, datasheet, spec,
// launch plan): 32 MiB, about 60 times the largest shipped profile. Larger files, and devices that never
// end (/dev/zero), are refused before they are read whole.
constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{32} << 20;

// Reads a whole input file of at most `max_bytes`. Errors name the path: "cannot be opened", "is a
// directory, not a file", "is larger than 32 MiB (... bytes): not an input vTrain reads".
Expected<std::string> read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes = kMaxInputBytes);

// Reads and parses a file; errors name the path ("cannot be opened", "is not valid JSON at line ...").
Expected<nlohmann::json> read_json_file(const std::filesystem::path& path);

} // namespace vtrain::json_fields
