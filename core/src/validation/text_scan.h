// SPDX-License-Identifier: MIT
#pragma once
// Small hand-written scanners for the free text of a runs file (software, interconnect, notes, recompute
// lists). They replace std::regex, whose matcher recurses once per character and overflowed the stack on
// a 50,000-character field (issue 32): each scanner reads its text once, left to right, with no recursion
// and no allocation beyond its result, at any length. Each one matches exactly what the std::regex it
// replaces matched (named above it; ECMAScript, icase where it says so), which tst_hostile_input checks
// against std::regex on short random texts.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace vtrain::validation_detail::scan {

inline bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

// ECMAScript's \s and \w.
inline bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

inline bool is_word(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

inline char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// `word` (lower case) at text[i], case-insensitively.
inline bool at_icase(std::string_view text, std::size_t i, std::string_view word)
{
    if (i > text.size() || text.size() - i < word.size()) {
        return false;
    }
    for (std::size_t k = 0; k < word.size(); ++k) {
        if (lower(text[i + k]) != word[k]) {
            return false;
        }
    }
    return true;
}

inline std::size_t skip_spaces(std::string_view text, std::size_t i)
{
    while (i < text.size() && is_space(text[i])) {
        ++i;
    }
    return i;
}

inline std::size_t digits_end(std::string_view text, std::size_t i)
{
    while (i < text.size() && is_digit(text[i])) {
        ++i;
    }
    return i;
}

// The digit runs of `text` in order: calls `try_run(begin, end)` for each until it returns true.
template <typename F>
bool each_digit_run(std::string_view text, F try_run)
{
    for (std::size_t i = 0; i < text.size();) {
        if (!is_digit(text[i])) {
            ++i;
            continue;
        }
        const std::size_t end = digits_end(text, i);
        if (try_run(i, end)) {
            return true;
        }
        i = end;
    }
    return false;
}

// `word` occurs with a word boundary (\b) on both sides: "\bword\b".
inline bool has_word(std::string_view text, std::string_view word)
{
    for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
        const bool before = at == 0 || !is_word(text[at - 1]);
        const std::size_t end = at + word.size();
        const bool after = end == text.size() || !is_word(text[end]);
        if (before && after) {
            return true;
        }
    }
    return false;
}

// std::regex_replace(text, std::regex(open + "[^" + close + "]*" + close), replacement): every span from
// `open` to the next `close` (the first such span, then the next after it, ...) replaced.
inline std::string replace_spans(std::string_view text, char open, char close, std::string_view replacement)
{
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t start = text.find(open, i);
        const std::size_t end = start == std::string_view::npos ? std::string_view::npos : text.find(close, start + 1);
        if (end == std::string_view::npos) {
            break;
        }
        out.append(text.substr(i, start - i));
        out.append(replacement);
        i = end + 1;
    }
    out.append(text.substr(i));
    return out;
}

// R"(nemo\s+(\d{2})\.(\d{2})(?:\.(\d{2}))?)" icase: the NeMo container as yymmpp (pp 0 when absent).
inline std::optional<int> nemo_version(std::string_view text)
{
    auto two = [&](std::size_t i) { return i + 2 <= text.size() && is_digit(text[i]) && is_digit(text[i + 1]); };
    auto value = [&](std::size_t i) { return (text[i] - '0') * 10 + (text[i + 1] - '0'); };
    for (std::size_t i = 0; i + 4 <= text.size(); ++i) {
        if (!at_icase(text, i, "nemo") || i + 4 >= text.size() || !is_space(text[i + 4])) {
            continue;
        }
        const std::size_t y = skip_spaces(text, i + 4);
        if (!two(y) || y + 2 >= text.size() || text[y + 2] != '.' || !two(y + 3)) {
            continue;
        }
        const std::size_t p = y + 5;
        const int patch = p < text.size() && text[p] == '.' && two(p + 1) ? value(p + 1) : 0;
        return value(y) * 10000 + value(y + 3) * 100 + patch;
    }
    return std::nullopt;
}

// "(20[0-9][0-9])": the first year of this century named.
inline std::optional<int> first_year(std::string_view text)
{
    for (std::size_t i = 0; i + 4 <= text.size(); ++i) {
        if (text[i] == '2' && text[i + 1] == '0' && is_digit(text[i + 2]) && is_digit(text[i + 3])) {
            return 2000 + (text[i + 2] - '0') * 10 + (text[i + 3] - '0');
        }
    }
    return std::nullopt;
}

// R"((\d{1,6})\s*(Gb/s|Gbit/s|Gbps|GB/s)\)?\"?\s*per GPU)" icase: "400 Gb/s per GPU", "IB (50 GB/s) per
// GPU". The rate's digits and the unit as written.
struct RatePerGpu {
    std::string digits;
    std::string unit;
};
inline std::optional<RatePerGpu> rate_per_gpu(std::string_view text)
{
    std::optional<RatePerGpu> found;
    each_digit_run(text, [&](std::size_t begin, std::size_t end) {
        // \d{1,6} ends where the run ends (a unit never starts with a digit): its last six digits at most.
        const std::size_t first = end - begin > 6 ? end - 6 : begin;
        std::size_t i = skip_spaces(text, end);
        std::size_t unit_end = 0;
        for (const std::string_view unit : {"gb/s", "gbit/s", "gbps"}) {
            if (at_icase(text, i, unit)) {
                unit_end = i + unit.size();
                break;
            }
        }
        if (unit_end == 0) {
            return false;
        }
        std::size_t k = unit_end;
        k += k < text.size() && text[k] == ')' ? 1 : 0;
        k += k < text.size() && text[k] == '"' ? 1 : 0;
        k = skip_spaces(text, k);
        if (!at_icase(text, k, "per gpu")) {
            return false;
        }
        found = RatePerGpu{std::string(text.substr(first, end - first)), std::string(text.substr(i, unit_end - i))};
        return true;
    });
    return found;
}

// R"((\d{1,6})\s*x\D*?(\d{1,6})\s*G(b|bps|bit))" icase: "8x ConnectX-7 200 Gbps" as NIC count and rate.
struct NicsTimesRate {
    std::string count;
    std::string rate;
};
inline std::optional<NicsTimesRate> nics_times_rate(std::string_view text)
{
    std::optional<NicsTimesRate> found;
    each_digit_run(text, [&](std::size_t begin, std::size_t end) {
        const std::size_t first = end - begin > 6 ? end - 6 : begin;
        std::size_t i = skip_spaces(text, end);
        if (i >= text.size() || lower(text[i]) != 'x') {
            return false;
        }
        // \D*? stops at the first digit: the rate is the next digit run, of at most six digits.
        std::size_t r = i + 1;
        while (r < text.size() && !is_digit(text[r])) {
            ++r;
        }
        const std::size_t r_end = digits_end(text, r);
        if (r == r_end || r_end - r > 6) {
            return false;
        }
        const std::size_t g = skip_spaces(text, r_end);
        if (!at_icase(text, g, "gb")) {
            return false;
        }
        found = NicsTimesRate{std::string(text.substr(first, end - first)), std::string(text.substr(r, r_end - r))};
        return true;
    });
    return found;
}

// R"(^\s*(\d{1,6})\s*$)", then R"(\((\d{1,6})\))": an integer alone, or the first one in parentheses.
inline std::optional<int> lone_or_parenthesised_int(std::string_view text)
{
    const std::size_t b = skip_spaces(text, 0);
    const std::size_t e = digits_end(text, b);
    if (e > b && e - b <= 6 && skip_spaces(text, e) == text.size()) {
        return std::stoi(std::string(text.substr(b, e - b)));
    }
    for (std::size_t at = text.find('('); at != std::string_view::npos; at = text.find('(', at + 1)) {
        const std::size_t end = digits_end(text, at + 1);
        if (end > at + 1 && end - at - 1 <= 6 && end < text.size() && text[end] == ')') {
            return std::stoi(std::string(text.substr(at + 1, end - at - 1)));
        }
    }
    return std::nullopt;
}

// R"(score the final row \(([0-9]{1,9}(?:\.[0-9]{1,9})?)\))" icase: the number in the first such phrase.
inline std::optional<std::string> final_row_score(std::string_view text)
{
    constexpr std::string_view phrase = "score the final row (";
    for (std::size_t i = 0; i + phrase.size() <= text.size(); ++i) {
        if (!at_icase(text, i, phrase)) {
            continue;
        }
        const std::size_t b = i + phrase.size();
        const std::size_t e = digits_end(text, b);
        if (e == b || e - b > 9 || e >= text.size()) {
            continue;
        }
        if (text[e] == ')') {
            return std::string(text.substr(b, e - b));
        }
        if (text[e] != '.') {
            continue;
        }
        const std::size_t f = digits_end(text, e + 1);
        if (f > e + 1 && f - e - 1 <= 9 && f < text.size() && text[f] == ')') {
            return std::string(text.substr(b, f - b));
        }
    }
    return std::nullopt;
}

} // namespace vtrain::validation_detail::scan
