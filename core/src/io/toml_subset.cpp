// SPDX-License-Identifier: MIT
// Follows the TOML v1.0.0 specification (toml.io/en/v1.0.0) for the parts listed in toml_subset.h.
#include "io/toml_subset.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <vector>

#include "vtrain/json_fields.h"

namespace vtrain::import_detail {
namespace {

using nlohmann::json;

class TomlParser {
public:
    explicit TomlParser(const std::string& text) : m_s(text) {}

    Expected<json> parse()
    {
        json root = json::object();
        json* table = &root;
        std::string table_path;
        while (m_pos < m_s.size() && m_error.empty()) {
            skip_blank();
            if (m_pos >= m_s.size()) {
                break;
            }
            const char c = m_s[m_pos];
            if (c == '\n') {
                ++m_pos;
                ++m_line;
                continue;
            }
            if (c == '#') {
                skip_comment();
                continue;
            }
            if (c == '[') {
                table = header(root, table_path);
            } else {
                key_value(*table, table_path);
            }
            if (!m_error.empty()) {
                break;
            }
            end_of_line();
        }
        if (!m_error.empty()) {
            return Diagnostic{"line " + std::to_string(m_line), m_error};
        }
        return root;
    }

private:
    void fail(const std::string& why)
    {
        if (m_error.empty()) {
            m_error = json_fields::printable(why); // a quoted key may hold a newline or DEL: shown, never passed on
        }
    }
    void skip_blank()
    {
        while (m_pos < m_s.size() && (m_s[m_pos] == ' ' || m_s[m_pos] == '\t' || m_s[m_pos] == '\r')) {
            ++m_pos;
        }
    }
    void skip_comment()
    {
        while (m_pos < m_s.size() && m_s[m_pos] != '\n') {
            const unsigned char c = static_cast<unsigned char>(m_s[m_pos]);
            if (c < 0x20 && c != '\t') {
                fail("a control character in a comment");
                return;
            }
            ++m_pos;
        }
    }
    // After a key/value pair or a header: only blanks and a comment before the newline.
    void end_of_line()
    {
        skip_blank();
        if (m_pos < m_s.size() && m_s[m_pos] == '#') {
            skip_comment();
        }
        if (m_pos < m_s.size() && m_s[m_pos] != '\n') {
            fail("expected the end of the line, found '" + shown(m_s[m_pos]) + "'");
        }
    }
    static std::string shown(char c)
    {
        const unsigned char u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7f ? "?" : std::string(1, c);
    }
    bool counted()
    {
        if (++m_values > kMaxTomlValues) {
            fail("has more than " + std::to_string(kMaxTomlValues) + " values");
            return false;
        }
        return true;
    }

    // A key: bare (A-Za-z0-9_-), "basic" or 'literal', parts joined by dots.
    std::vector<std::string> key()
    {
        std::vector<std::string> parts;
        for (;;) {
            skip_blank();
            if (m_pos >= m_s.size()) {
                fail("expected a key");
                return {};
            }
            std::string part;
            const char c = m_s[m_pos];
            if (c == '"' || c == '\'') {
                const auto s = string_value();
                if (!s) {
                    return {};
                }
                part = *s;
            } else {
                while (m_pos < m_s.size() && (std::isalnum(static_cast<unsigned char>(m_s[m_pos])) != 0 || m_s[m_pos] == '_' || m_s[m_pos] == '-')) {
                    part.push_back(m_s[m_pos++]);
                }
                if (part.empty()) {
                    fail("expected a key, found '" + shown(c) + "'");
                    return {};
                }
            }
            if (part.size() > kMaxTomlKeyChars) {
                fail("a key is longer than " + std::to_string(kMaxTomlKeyChars) + " characters");
                return {};
            }
            parts.push_back(std::move(part));
            if (parts.size() > static_cast<std::size_t>(kMaxTomlDepth)) {
                fail("a dotted key has more than " + std::to_string(kMaxTomlDepth) + " parts");
                return {};
            }
            skip_blank();
            if (m_pos < m_s.size() && m_s[m_pos] == '.') {
                ++m_pos;
                continue;
            }
            return parts;
        }
    }

    // A dotted key for a message: at most about 80 characters however many parts it has.
    static std::string joined(const std::vector<std::string>& parts)
    {
        std::string out;
        for (const std::string& p : parts) {
            if (!out.empty()) {
                out += '.';
            }
            out += p.size() > 40 ? p.substr(0, 40) + "..." : p;
            if (out.size() > 80) {
                return out.substr(0, 80) + "...";
            }
        }
        return out;
    }

    // [a.b] or [[a.b]]: the table that following pairs go into.
    json* header(json& root, std::string& path)
    {
        const bool array = m_pos + 1 < m_s.size() && m_s[m_pos + 1] == '[';
        m_pos += array ? 2 : 1;
        const auto parts = key();
        if (parts.empty()) {
            return &root;
        }
        skip_blank();
        if (m_s.compare(m_pos, array ? 2 : 1, array ? "]]" : "]") != 0) {
            fail(std::string("expected '") + (array ? "]]" : "]") + "' after the table name");
            return &root;
        }
        m_pos += array ? 2 : 1;
        path = joined(parts);
        json* at = &root;
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const bool last = i + 1 == parts.size();
            json& child = (*at)[parts[i]];
            if (last && array) {
                if (child.is_null()) {
                    child = json::array();
                }
                if (!child.is_array()) {
                    fail("[[" + path + "]] names a key that is not an array of tables");
                    return &root;
                }
                child.push_back(json::object());
                return &child.back();
            }
            if (child.is_null()) {
                child = json::object();
            } else if (child.is_array() && !child.empty() && child.back().is_object()) {
                at = &child.back();
                continue;
            } else if (!child.is_object()) {
                fail("[" + path + "] names a key already given a value");
                return &root;
            }
            if (last) {
                const std::string full = "/" + path;
                if (m_defined.count(full) != 0) {
                    fail("table [" + path + "] is defined twice");
                    return &root;
                }
                m_defined.insert(full);
            }
            at = &child;
        }
        return at;
    }

    void key_value(json& table, const std::string& table_path)
    {
        const auto parts = key();
        if (parts.empty()) {
            return;
        }
        skip_blank();
        if (m_pos >= m_s.size() || m_s[m_pos] != '=') {
            fail("expected '=' after the key " + joined(parts));
            return;
        }
        ++m_pos;
        skip_blank();
        json value = parse_value(0);
        if (!m_error.empty()) {
            return;
        }
        json* at = &table;
        for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
            json& child = (*at)[parts[i]];
            if (child.is_null()) {
                child = json::object();
            } else if (!child.is_object()) {
                fail("the key " + joined(parts) + " extends a value that is not a table");
                return;
            }
            at = &child;
        }
        if (at->contains(parts.back())) {
            fail("the key " + joined(parts) + " is defined twice" + (table_path.empty() ? "" : " in [" + table_path + "]"));
            return;
        }
        (*at)[parts.back()] = std::move(value);
    }

    json parse_value(int depth)
    {
        if (depth > kMaxTomlDepth) {
            fail("values are nested deeper than " + std::to_string(kMaxTomlDepth) + " levels");
            return nullptr;
        }
        if (!counted() || m_pos >= m_s.size()) {
            fail("expected a value");
            return nullptr;
        }
        const char c = m_s[m_pos];
        if (c == '"' || c == '\'') {
            const auto s = string_value();
            return s ? json(*s) : json(nullptr);
        }
        if (c == '[') {
            return array(depth);
        }
        if (c == '{') {
            return inline_table(depth);
        }
        if (m_s.compare(m_pos, 4, "true") == 0 && !bare_char(m_pos + 4)) {
            m_pos += 4;
            return true;
        }
        if (m_s.compare(m_pos, 5, "false") == 0 && !bare_char(m_pos + 5)) {
            m_pos += 5;
            return false;
        }
        return number_or_date();
    }

    bool bare_char(std::size_t i) const { return i < m_s.size() && (std::isalnum(static_cast<unsigned char>(m_s[i])) != 0 || m_s[i] == '_'); }

    json number_or_date()
    {
        const std::size_t start = m_pos;
        while (m_pos < m_s.size()) {
            const char c = m_s[m_pos];
            const bool date_space = c == ' ' && m_pos > start && std::isdigit(static_cast<unsigned char>(m_s[m_pos - 1])) != 0 &&
                                    m_pos + 1 < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_pos + 1])) != 0 &&
                                    m_s.find('-', start) < m_pos;
            if (!(std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '+' || c == '-' || c == ':' || date_space)) {
                break;
            }
            ++m_pos;
        }
        const std::string t = m_s.substr(start, m_pos - start);
        if (t.empty()) {
            fail("expected a value, found '" + shown(m_pos < m_s.size() ? m_s[m_pos] : ' ') + "'");
            return nullptr;
        }
        if (t.size() > 200) {
            fail("a value is longer than 200 characters and not a string");
            return nullptr;
        }
        const std::string bare = t[0] == '+' || t[0] == '-' ? t.substr(1) : t;
        if (bare == "inf" || bare == "nan") {
            fail(t + " is not a finite number");
            return nullptr;
        }
        // Dates and times (1979-05-27, 07:32:00, 1979-05-27T07:32:00Z) stay strings.
        if (t.size() >= 8 && (t[2] == ':' || (t.size() >= 10 && t[4] == '-' && t[7] == '-'))) {
            return t;
        }
        std::string digits;
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (t[i] == '_') {
                const bool between = i > 0 && i + 1 < t.size() && std::isalnum(static_cast<unsigned char>(t[i - 1])) != 0 &&
                                     std::isalnum(static_cast<unsigned char>(t[i + 1])) != 0;
                if (!between) {
                    fail("\"" + t + "\": an underscore must sit between digits");
                    return nullptr;
                }
                continue;
            }
            digits.push_back(t[i]);
        }
        int base = 10;
        std::string body = digits;
        if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'o' || digits[1] == 'b')) {
            base = digits[1] == 'x' ? 16 : digits[1] == 'o' ? 8 : 2;
            body = digits.substr(2);
        }
        const bool is_float = base == 10 && digits.find_first_of(".eE") != std::string::npos;
        char* end = nullptr;
        errno = 0;
        if (!is_float) {
            const long long v = std::strtoll(body.c_str(), &end, base);
            if (end != body.c_str() + body.size() || body.empty() || body[0] == ' ') {
                fail("\"" + t + "\" is not a value (strings need quotes)");
                return nullptr;
            }
            if (errno == ERANGE) {
                fail(t + " is beyond a 64-bit integer");
                return nullptr;
            }
            return v;
        }
        const double v = std::strtod(digits.c_str(), &end);
        if (end != digits.c_str() + digits.size()) {
            fail("\"" + t + "\" is not a value (strings need quotes)");
            return nullptr;
        }
        if (!std::isfinite(v) || (errno == ERANGE && std::fabs(v) >= 1)) {
            fail(t + " is beyond any finite number");
            return nullptr;
        }
        return v;
    }

    // Skips blanks, newlines and comments inside arrays.
    void skip_array_space()
    {
        for (;;) {
            skip_blank();
            if (m_pos < m_s.size() && m_s[m_pos] == '\n') {
                ++m_pos;
                ++m_line;
                continue;
            }
            if (m_pos < m_s.size() && m_s[m_pos] == '#') {
                skip_comment();
                continue;
            }
            return;
        }
    }

    json array(int depth)
    {
        ++m_pos;
        json out = json::array();
        for (;;) {
            skip_array_space();
            if (!m_error.empty()) {
                return nullptr;
            }
            if (m_pos >= m_s.size()) {
                fail("an array is not closed with ']'");
                return nullptr;
            }
            if (m_s[m_pos] == ']') {
                ++m_pos;
                break;
            }
            out.push_back(parse_value(depth + 1));
            if (!m_error.empty()) {
                return nullptr;
            }
            skip_array_space();
            if (m_pos < m_s.size() && m_s[m_pos] == ',') {
                ++m_pos;
                continue;
            }
            if (m_pos < m_s.size() && m_s[m_pos] == ']') {
                ++m_pos;
                break;
            }
            fail("expected ',' or ']' in an array");
            return nullptr;
        }
        return out;
    }

    json inline_table(int depth)
    {
        ++m_pos;
        json out = json::object();
        skip_blank();
        if (m_pos < m_s.size() && m_s[m_pos] == '}') {
            ++m_pos;
            return out;
        }
        for (;;) {
            const auto parts = key();
            if (parts.empty()) {
                return nullptr;
            }
            skip_blank();
            if (m_pos >= m_s.size() || m_s[m_pos] != '=') {
                fail("expected '=' in an inline table");
                return nullptr;
            }
            ++m_pos;
            skip_blank();
            json value = parse_value(depth + 1);
            if (!m_error.empty()) {
                return nullptr;
            }
            json* at = &out;
            for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
                json& child = (*at)[parts[i]];
                if (child.is_null()) {
                    child = json::object();
                } else if (!child.is_object()) {
                    fail("the key " + joined(parts) + " extends a value that is not a table");
                    return nullptr;
                }
                at = &child;
            }
            if (at->contains(parts.back())) {
                fail("the key " + joined(parts) + " is defined twice in an inline table");
                return nullptr;
            }
            (*at)[parts.back()] = std::move(value);
            skip_blank();
            if (m_pos < m_s.size() && m_s[m_pos] == ',') {
                ++m_pos;
                continue;
            }
            if (m_pos < m_s.size() && m_s[m_pos] == '}') {
                ++m_pos;
                return out;
            }
            fail("expected ',' or '}' in an inline table (inline tables stay on one line)");
            return nullptr;
        }
    }

    // "basic" (escapes), 'literal', and their """ / ''' multi-line forms.
    std::optional<std::string> string_value()
    {
        const char quote = m_s[m_pos];
        const bool multi = m_s.compare(m_pos, 3, std::string(3, quote)) == 0;
        m_pos += multi ? 3 : 1;
        if (multi && m_pos < m_s.size() && m_s[m_pos] == '\n') {
            ++m_pos; // a newline right after the opening is trimmed
            ++m_line;
        } else if (multi && m_s.compare(m_pos, 2, "\r\n") == 0) {
            m_pos += 2;
            ++m_line;
        }
        std::string out;
        for (;;) {
            if (m_pos >= m_s.size()) {
                fail("a string is not closed");
                return std::nullopt;
            }
            const char c = m_s[m_pos];
            if (multi && m_s.compare(m_pos, 3, std::string(3, quote)) == 0) {
                m_pos += 3;
                // Up to two more quotes belong to the string ("""a""""" is a"").
                for (int extra = 0; extra < 2 && m_pos < m_s.size() && m_s[m_pos] == quote; ++extra) {
                    out.push_back(quote);
                    ++m_pos;
                }
                return out;
            }
            if (!multi && c == quote) {
                ++m_pos;
                return out;
            }
            if (c == '\n') {
                if (!multi) {
                    fail("a string is not closed on its line");
                    return std::nullopt;
                }
                ++m_line;
                out.push_back(c);
                ++m_pos;
                continue;
            }
            const unsigned char u = static_cast<unsigned char>(c);
            if ((u < 0x20 && c != '\t' && c != '\r') || u == 0x7f) {
                fail("a control character in a string");
                return std::nullopt;
            }
            if (c == '\\' && quote == '"') {
                if (!escape(out, multi)) {
                    return std::nullopt;
                }
                continue;
            }
            out.push_back(c);
            ++m_pos;
            if (out.size() > (1u << 20)) {
                fail("a string is longer than 1 MiB");
                return std::nullopt;
            }
        }
    }

    bool escape(std::string& out, bool multi)
    {
        ++m_pos;
        if (m_pos >= m_s.size()) {
            fail("a string ends in a backslash");
            return false;
        }
        const char e = m_s[m_pos++];
        switch (e) {
        case 'b': out.push_back('\b'); return true;
        case 't': out.push_back('\t'); return true;
        case 'n': out.push_back('\n'); return true;
        case 'f': out.push_back('\f'); return true;
        case 'r': out.push_back('\r'); return true;
        case '"': out.push_back('"'); return true;
        case '\\': out.push_back('\\'); return true;
        case 'u':
        case 'U': return unicode(out, e == 'u' ? 4 : 8);
        default: break;
        }
        if (multi && (e == ' ' || e == '\t' || e == '\n' || e == '\r')) {
            // A line-ending backslash trims the newline and the blanks after it.
            --m_pos;
            while (m_pos < m_s.size() && (m_s[m_pos] == ' ' || m_s[m_pos] == '\t' || m_s[m_pos] == '\r' || m_s[m_pos] == '\n')) {
                m_line += m_s[m_pos] == '\n' ? 1 : 0;
                ++m_pos;
            }
            return true;
        }
        fail(std::string("an unknown escape \\") + shown(e) + " in a string");
        return false;
    }

    bool unicode(std::string& out, int digits)
    {
        if (m_pos + static_cast<std::size_t>(digits) > m_s.size()) {
            fail("a \\u escape needs " + std::to_string(digits) + " hex digits");
            return false;
        }
        unsigned long code = 0;
        for (int i = 0; i < digits; ++i) {
            const char h = m_s[m_pos++];
            const int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            if (v < 0) {
                fail("a \\u escape needs hex digits");
                return false;
            }
            code = code * 16 + static_cast<unsigned long>(v);
        }
        if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
            fail("a \\u escape is not a Unicode scalar value");
            return false;
        }
        if (code < 0x80) {
            out.push_back(static_cast<char>(code));
        } else if (code < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (code >> 6)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
        } else if (code < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (code >> 12)));
            out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
        } else {
            out.push_back(static_cast<char>(0xF0 | (code >> 18)));
            out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
        }
        return true;
    }

    const std::string& m_s;
    std::size_t m_pos = 0;
    std::size_t m_line = 1;
    std::size_t m_values = 0;
    std::string m_error;
    std::set<std::string> m_defined;
};

} // namespace

Expected<nlohmann::json> parse_toml(const std::string& text)
{
    return TomlParser(text).parse();
}

} // namespace vtrain::import_detail
