// SPDX-License-Identifier: MIT
#include "io/import_draft.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace vtrain::import_detail {
namespace {

// The JSON object a dotted field ("model.moe.experts") lives in, and its last part.
nlohmann::json* section_of(Draft& d, const std::string& field)
{
    const std::string head = field.substr(0, field.find('.'));
    if (head == "model") {
        return &d.model;
    }
    if (head == "training") {
        return &d.training;
    }
    if (head == "cluster") {
        return &d.cluster;
    }
    if (head == "plan") {
        return &d.plan;
    }
    return nullptr;
}

std::vector<std::string> parts_of(const std::string& field)
{
    std::vector<std::string> parts;
    std::size_t start = field.find('.');
    while (start != std::string::npos) {
        const std::size_t next = field.find('.', start + 1);
        parts.push_back(field.substr(start + 1, next == std::string::npos ? std::string::npos : next - start - 1));
        start = next;
    }
    return parts;
}

} // namespace

void Draft::set(const std::string& field, nlohmann::json value, const std::string& key)
{
    nlohmann::json* at = section_of(*this, field);
    const auto parts = parts_of(field);
    if (at == nullptr || parts.empty()) {
        return;
    }
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        nlohmann::json& child = (*at)[parts[i]];
        if (!child.is_object()) {
            child = nlohmann::json::object();
        }
        at = &child;
    }
    (*at)[parts.back()] = std::move(value);
    source[field] = key;
}

const nlohmann::json* Draft::get(const std::string& field) const
{
    const nlohmann::json* at = section_of(const_cast<Draft&>(*this), field);
    if (at == nullptr) {
        return nullptr;
    }
    for (const std::string& part : parts_of(field)) {
        if (!at->is_object() || !at->contains(part)) {
            return nullptr;
        }
        at = &(*at)[part];
    }
    return at;
}

bool Draft::has(const std::string& field) const
{
    return get(field) != nullptr;
}

void Draft::erase(const std::string& field)
{
    nlohmann::json* at = section_of(*this, field);
    const auto parts = parts_of(field);
    if (at == nullptr || parts.empty()) {
        return;
    }
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        if (!at->is_object() || !at->contains(parts[i])) {
            return;
        }
        at = &(*at)[parts[i]];
    }
    if (at->is_object()) {
        at->erase(parts.back());
    }
    source.erase(field);
}

void Draft::note(const std::string& key, const std::string& text)
{
    notes.push_back({clipped(key), text});
}

void Draft::error(const std::string& key, const std::string& text)
{
    errors.push_back({clipped(key), text});
}

void Draft::ignore(const std::string& key)
{
    if (ignored.size() < kMaxNamedKeys) {
        ignored.push_back(clipped(key));
    } else if (ignored.size() == kMaxNamedKeys) {
        ignored.emplace_back("...");
    }
}

void Draft::unknown_key(const std::string& key)
{
    ++unknown_count;
    if (unknown.size() < kMaxNamedKeys) {
        unknown.push_back(clipped(key));
    }
}

std::string clipped(std::string_view text, std::size_t max)
{
    std::string out;
    out.reserve(std::min(text.size(), max) + 3);
    for (std::size_t i = 0; i < text.size() && i < max; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        out.push_back(c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c));
    }
    if (text.size() > max) {
        out += "...";
    }
    return out;
}

std::optional<nlohmann::json> parse_number(std::string_view text, std::string& why, bool underscores)
{
    std::string s;
    s.reserve(text.size());
    for (const char c : text) {
        if (c == '_' && underscores) {
            continue;
        }
        s.push_back(c);
    }
    if (s.empty() || s.size() > 400) {
        why = s.empty() ? "is empty, not a number" : "is not a number";
        return std::nullopt;
    }
    const char* begin = s.c_str();
    char* end = nullptr;
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const bool has_float_chars = !hex && s.find_first_of(".eEnN") != std::string::npos;
    if (!has_float_chars) {
        errno = 0;
        const long long v = std::strtoll(begin, &end, hex ? 16 : 10);
        if (end == begin + s.size() && errno == 0) {
            return nlohmann::json(v);
        }
        if (end == begin + s.size() && errno == ERANGE) {
            // Too large for 64 bits: keep the size as a double so that the range check names it.
            const double d = std::strtod(begin, nullptr);
            if (std::isfinite(d)) {
                return nlohmann::json(d);
            }
        }
    }
    const std::string lower = [&] {
        std::string l;
        for (const char c : s) {
            l.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
        }
        return l;
    }();
    if (lower.find("inf") != std::string::npos || lower.find("nan") != std::string::npos) {
        why = "\"" + clipped(text) + "\" is not a finite number";
        return std::nullopt;
    }
    errno = 0;
    const double d = std::strtod(begin, &end);
    if (end != begin + s.size()) {
        why = "\"" + clipped(text) + "\" is not a number";
        return std::nullopt;
    }
    if (!std::isfinite(d) || errno == ERANGE) {
        if (std::isfinite(d) && std::fabs(d) < 1) {
            return nlohmann::json(0.0); // underflow: as good as zero
        }
        why = "\"" + clipped(text) + "\" is beyond any finite number";
        return std::nullopt;
    }
    return nlohmann::json(d);
}

std::optional<bool> parse_bool(std::string_view text)
{
    std::string l;
    for (const char c : text.substr(0, 8)) {
        l.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
    }
    if (text.size() > 8) {
        return std::nullopt;
    }
    if (l == "true" || l == "1" || l == "yes" || l == "on") {
        return true;
    }
    if (l == "false" || l == "0" || l == "no" || l == "off") {
        return false;
    }
    return std::nullopt;
}

std::optional<long long> whole(const nlohmann::json& value, long long min, long long max)
{
    if (value.is_number_integer()) {
        if (value.is_number_unsigned()) {
            const auto u = value.get<unsigned long long>();
            if (u > static_cast<unsigned long long>(std::numeric_limits<long long>::max())) {
                return std::nullopt;
            }
        }
        const auto v = value.get<long long>();
        return v >= min && v <= max ? std::optional<long long>(v) : std::nullopt;
    }
    if (value.is_number_float()) {
        const double v = value.get<double>();
        if (std::isfinite(v) && std::floor(v) == v && v >= static_cast<double>(min) && v <= static_cast<double>(max)) {
            return static_cast<long long>(v);
        }
    }
    return std::nullopt;
}

namespace {

// A recursive-descent evaluator for sums and products of 0/1 lists: expr = term ('+' term)*;
// term = atom ('*' int)*; atom = '[' ints ']' | '(' expr ')' | int (a lone int is a count, not a list).
class ListExpression {
public:
    ListExpression(std::string_view text, std::size_t max_length) : m_text(text), m_max(max_length) {}

    std::optional<std::vector<int>> parse(std::string& why)
    {
        auto v = expr(0);
        skip_spaces();
        if (v && m_pos != m_text.size()) {
            fail("unexpected \"" + clipped(m_text.substr(m_pos, 10)) + "\"");
        }
        if (!m_why.empty()) {
            why = m_why;
            return std::nullopt;
        }
        return v;
    }

private:
    void skip_spaces()
    {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t')) {
            ++m_pos;
        }
    }
    void fail(const std::string& why)
    {
        if (m_why.empty()) {
            m_why = why;
        }
    }
    std::optional<long long> integer()
    {
        skip_spaces();
        const std::size_t start = m_pos;
        while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9' && m_pos - start < 9) {
            ++m_pos;
        }
        if (m_pos == start) {
            fail("expected a number at \"" + clipped(m_text.substr(m_pos, 10)) + "\"");
            return std::nullopt;
        }
        return std::stoll(std::string(m_text.substr(start, m_pos - start)));
    }
    std::optional<std::vector<int>> atom(int depth)
    {
        skip_spaces();
        if (depth > 32) {
            fail("is nested too deeply");
            return std::nullopt;
        }
        if (m_pos < m_text.size() && m_text[m_pos] == '(') {
            ++m_pos;
            auto v = expr(depth + 1);
            skip_spaces();
            if (!v || m_pos >= m_text.size() || m_text[m_pos] != ')') {
                fail("has an unclosed '('");
                return std::nullopt;
            }
            ++m_pos;
            return v;
        }
        if (m_pos < m_text.size() && m_text[m_pos] == '[') {
            ++m_pos;
            std::vector<int> items;
            skip_spaces();
            while (m_pos < m_text.size() && m_text[m_pos] != ']') {
                const auto n = integer();
                if (!n) {
                    return std::nullopt;
                }
                if (*n > 1) {
                    fail("lists 0 (dense) and 1 (MoE) only, not " + std::to_string(*n));
                    return std::nullopt;
                }
                items.push_back(static_cast<int>(*n));
                if (items.size() > m_max) {
                    fail("is longer than " + std::to_string(m_max) + " entries");
                    return std::nullopt;
                }
                skip_spaces();
                if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                    ++m_pos;
                    skip_spaces();
                }
            }
            if (m_pos >= m_text.size()) {
                fail("has an unclosed '['");
                return std::nullopt;
            }
            ++m_pos;
            return items;
        }
        fail("expected '[' or '(' at \"" + clipped(m_text.substr(m_pos, 10)) + "\"");
        return std::nullopt;
    }
    std::optional<std::vector<int>> term(int depth)
    {
        auto v = atom(depth);
        while (v) {
            skip_spaces();
            if (m_pos >= m_text.size() || m_text[m_pos] != '*') {
                break;
            }
            ++m_pos;
            const auto n = integer();
            if (!n) {
                return std::nullopt;
            }
            if (v->size() * static_cast<std::size_t>(*n) > m_max) {
                fail("is longer than " + std::to_string(m_max) + " entries");
                return std::nullopt;
            }
            if (v->empty()) {
                continue;
            }
            std::vector<int> repeated;
            repeated.reserve(v->size() * static_cast<std::size_t>(*n));
            for (long long i = 0; i < *n; ++i) {
                repeated.insert(repeated.end(), v->begin(), v->end());
            }
            v = std::move(repeated);
        }
        return v;
    }
    std::optional<std::vector<int>> expr(int depth)
    {
        auto v = term(depth);
        while (v) {
            skip_spaces();
            if (m_pos >= m_text.size() || m_text[m_pos] != '+') {
                break;
            }
            ++m_pos;
            auto rhs = term(depth);
            if (!rhs) {
                return std::nullopt;
            }
            if (v->size() + rhs->size() > m_max) {
                fail("is longer than " + std::to_string(m_max) + " entries");
                return std::nullopt;
            }
            v->insert(v->end(), rhs->begin(), rhs->end());
        }
        return v;
    }

    std::string_view m_text;
    std::size_t m_max;
    std::size_t m_pos = 0;
    std::string m_why;
};

} // namespace

std::optional<std::vector<int>> eval_layer_list(std::string_view text, std::size_t max_length, std::string& why)
{
    if (text.size() > 100000) {
        why = "is longer than 100000 characters";
        return std::nullopt;
    }
    return ListExpression(text, max_length).parse(why);
}

} // namespace vtrain::import_detail
