// SPDX-License-Identifier: MIT
#include "vtrain/json_fields.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>

namespace vtrain::json_fields {
namespace {

const nlohmann::json& empty_object()
{
    static const nlohmann::json empty = nlohmann::json::object();
    return empty;
}

std::string type_name(const nlohmann::json& value)
{
    return std::string(value.type_name());
}

std::string format_number(double v)
{
    std::ostringstream out;
    out << v;
    return out.str();
}

// Writes a bounded rendering of `value` into `out`, stopping once `budget` characters are used.
void write_excerpt(const nlohmann::json& value, std::string& out, std::size_t budget, int depth)
{
    if (out.size() >= budget) {
        return;
    }
    if (value.is_string()) {
        const std::string& s = value.get_ref<const std::string&>();
        const std::size_t room = budget - out.size();
        nlohmann::json cut = s.size() > room ? s.substr(0, room) : s;
        // A cut inside a UTF-8 sequence must not make dump() throw: replace invalid bytes.
        out += cut.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        if (s.size() > room) {
            out += "...";
        }
        return;
    }
    if (!value.is_structured()) {
        out += value.dump();
        return;
    }
    const bool is_array = value.is_array();
    out += is_array ? '[' : '{';
    if (depth >= 4 && !value.empty()) {
        out += "...";
    } else {
        std::size_t written = 0;
        for (auto it = value.begin(); it != value.end(); ++it) {
            if (out.size() >= budget) {
                out += "... (" + std::to_string(value.size()) + (is_array ? " items)" : " fields)");
                break;
            }
            if (written++ > 0) {
                out += ", ";
            }
            if (!is_array) {
                write_excerpt(nlohmann::json(it.key()), out, budget, depth + 1);
                out += ": ";
            }
            write_excerpt(*it, out, budget, depth + 1);
        }
    }
    out += is_array ? ']' : '}';
}

std::string line_and_column(const std::string& text, std::size_t offset)
{
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// The offset of the bracket that opens nesting level `level` (1 = the outermost); the text before it
// was accepted by the parser, so strings are well formed.
std::size_t offset_of_depth(const std::string& text, std::size_t level)
{
    std::size_t depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth == level) {
                return i;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return text.size();
}

// Builds the document from SAX events so the depth can be bounded before it is reached, and so a
// refused number (1e309) comes with its position and the field it was for.
class DomBuilder final : public nlohmann::json_sax<nlohmann::json> {
public:
    DomBuilder(nlohmann::json& root, const std::string& text) : m_root(root), m_text(text) {}

    bool null() override { return add(nullptr); }
    bool boolean(bool v) override { return add(v); }
    bool number_integer(number_integer_t v) override { return add(v); }
    bool number_unsigned(number_unsigned_t v) override { return add(v); }
    bool number_float(number_float_t v, const string_t&) override { return add(v); }
    bool string(string_t& v) override { return add(std::move(v)); }
    bool binary(binary_t&) override { return fail(0, "binary values are not JSON"); }
    bool start_object(std::size_t) override { return open(nlohmann::json::object()); }
    bool key(string_t& k) override
    {
        m_keys.back() = std::move(k);
        return true;
    }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(nlohmann::json::array()); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& e) override
    {
        // position counts the characters read, the offending one included.
        m_error_field = current_field();
        std::string reason;
        std::size_t offset = position > 0 ? position - 1 : 0; // the character that did not fit
        if (e.id == 406) {
            // The number's token was read whole: point at its start.
            offset = position >= last_token.size() ? position - last_token.size() : 0;
            // (appended, not "literal" + string: avoids a GCC 12 -Wrestrict false positive)
            reason = "the number ";
            reason += excerpt(nlohmann::json(last_token), 40);
            reason += " is too large for a double";
        } else if (offset < m_text.size() && position <= m_text.size()) {
            reason = "unexpected ";
            reason += excerpt(nlohmann::json(std::string(1, m_text[offset])), 10);
        } else {
            reason = "unexpected end of input";
        }
        return fail(offset, reason);
    }

    bool failed() const { return m_failed; }
    bool too_deep() const { return m_too_deep; }
    std::size_t error_offset() const { return m_error_offset; }
    const std::string& reason() const { return m_reason; }
    const std::string& error_field() const { return m_error_field; }

private:
    bool fail(std::size_t offset, std::string reason)
    {
        m_failed = true;
        m_error_offset = offset;
        m_reason = std::move(reason);
        return false;
    }

    nlohmann::json* place(nlohmann::json&& value)
    {
        if (m_stack.empty()) {
            m_root = std::move(value);
            return &m_root;
        }
        nlohmann::json& top = *m_stack.back();
        if (top.is_array()) {
            top.push_back(std::move(value));
            return &top.back();
        }
        nlohmann::json& slot = top[m_keys.back()];
        slot = std::move(value);
        return &slot;
    }

    bool add(nlohmann::json&& value)
    {
        place(std::move(value));
        return true;
    }

    bool open(nlohmann::json&& container)
    {
        if (m_stack.size() >= kMaxJsonDepth) {
            m_too_deep = true;
            return false;
        }
        m_stack.push_back(place(std::move(container)));
        m_keys.emplace_back();
        return true;
    }

    bool close()
    {
        m_stack.pop_back();
        m_keys.pop_back();
        return true;
    }

    // "model.layers" or "search.tp[3]": where the parser was when it refused the input.
    std::string current_field() const
    {
        std::string field;
        for (std::size_t i = 0; i < m_stack.size(); ++i) {
            if (m_stack[i]->is_array()) {
                // An open child is already the array's last item; the top array's next item is new.
                const std::size_t size = m_stack[i]->size();
                field += '[';
                field += std::to_string(i + 1 < m_stack.size() && size > 0 ? size - 1 : size);
                field += ']';
            } else if (!m_keys[i].empty()) {
                if (!field.empty()) {
                    field += '.';
                }
                field += bounded(m_keys[i]);
            }
        }
        return field.size() > 80 ? field.substr(0, 80) + "..." : field;
    }

    nlohmann::json& m_root;
    const std::string& m_text;
    std::vector<nlohmann::json*> m_stack;
    std::vector<std::string> m_keys; // the current key of each open object (unused for arrays)
    bool m_failed = false;
    bool m_too_deep = false;
    std::size_t m_error_offset = 0;
    std::string m_reason;
    std::string m_error_field;
};

} // namespace

Reader::Reader(const nlohmann::json& object, std::string path, Diagnostics& diagnostics)
    : m_object(object), m_path(std::move(path)), m_diagnostics(diagnostics)
{
}

bool Reader::has(const char* key) const
{
    return lookup(key) != nullptr;
}

std::string Reader::field(const char* key) const
{
    // A key can be any string of the input (an unknown field): quote at most a short excerpt of it.
    const std::string name = bounded(key);
    return m_path.empty() ? name : m_path + "." + name;
}

const nlohmann::json* Reader::lookup(const char* key) const
{
    if (!m_object.is_object()) {
        return nullptr;
    }
    const auto it = m_object.find(key);
    if (it == m_object.end() || it->is_null()) {
        return nullptr;
    }
    return &*it;
}

void Reader::error(const std::string& key, const std::string& message) const
{
    // The message may quote user text: its control characters are shown, never passed on (printable()
    // leaves text without them as it is, and text it rendered once as it is).
    m_diagnostics.push_back({key.empty() ? m_path : field(key.c_str()), printable(message)});
}

Reader Reader::child(const char* key) const
{
    const nlohmann::json* value = lookup(key);
    if (value == nullptr) {
        error(key, "is missing (an object is required)");
        return Reader(empty_object(), field(key), m_diagnostics);
    }
    if (!value->is_object()) {
        error(key, "must be an object, not " + type_name(*value));
        return Reader(empty_object(), field(key), m_diagnostics);
    }
    return Reader(*value, field(key), m_diagnostics);
}

std::optional<int> Reader::optional_int(const char* key, long long min, long long max)
{
    const nlohmann::json* value = lookup(key);
    if (value == nullptr) {
        return std::nullopt;
    }
    // An int field never holds more than an int: the bounds are clamped before any narrowing.
    min = std::clamp<long long>(min, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
    max = std::clamp<long long>(max, min, std::numeric_limits<int>::max());
    if (value->is_number_float()) {
        const double d = value->get<double>();
        if (!std::isfinite(d) || d != std::floor(d)) {
            error(key, "must be a whole number, not " + excerpt(*value));
            return std::nullopt;
        }
    } else if (!value->is_number_integer()) {
        error(key, "must be a whole number, not " + type_name(*value) + " " + excerpt(*value));
        return std::nullopt;
    }
    const auto v = whole_number_in_range(*value, static_cast<int>(min), static_cast<int>(max));
    if (!v) {
        error(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", not " + excerpt(*value));
    }
    return v;
}

int Reader::required_int(const char* key, long long min, long long max)
{
    if (lookup(key) == nullptr) {
        error(key, "is missing (a whole number is required)");
        return 0;
    }
    return optional_int(key, min, max).value_or(0);
}

std::optional<double> Reader::optional_number(const char* key, double min, double max)
{
    const nlohmann::json* value = lookup(key);
    if (value == nullptr) {
        return std::nullopt;
    }
    if (!value->is_number()) {
        error(key, "must be a number, not " + type_name(*value) + " " + excerpt(*value));
        return std::nullopt;
    }
    const double v = value->get<double>();
    if (!std::isfinite(v) || v < min || v > max) {
        error(key, "must be between " + format_number(min) + " and " + format_number(max) + ", not " + excerpt(*value));
        return std::nullopt;
    }
    return v;
}

double Reader::required_number(const char* key, double min, double max)
{
    if (lookup(key) == nullptr) {
        error(key, "is missing (a number is required)");
        return 0;
    }
    return optional_number(key, min, max).value_or(0);
}

std::optional<std::string> Reader::optional_string(const char* key)
{
    const nlohmann::json* value = lookup(key);
    if (value == nullptr) {
        return std::nullopt;
    }
    if (!value->is_string()) {
        error(key, "must be a string, not " + type_name(*value) + " " + excerpt(*value));
        return std::nullopt;
    }
    return value->get<std::string>();
}

std::string Reader::required_string(const char* key)
{
    if (lookup(key) == nullptr) {
        error(key, "is missing (a string is required)");
        return {};
    }
    auto s = optional_string(key).value_or(std::string{});
    if (s.empty() && lookup(key)->is_string()) {
        error(key, "must not be empty");
    }
    return s;
}

std::optional<bool> Reader::optional_bool(const char* key)
{
    const nlohmann::json* value = lookup(key);
    if (value == nullptr) {
        return std::nullopt;
    }
    if (!value->is_boolean()) {
        error(key, "must be true or false, not " + excerpt(*value));
        return std::nullopt;
    }
    return value->get<bool>();
}

std::vector<double> Reader::grid(const char* key)
{
    const nlohmann::json* value = lookup(key);
    if (value == nullptr || !value->is_array() || value->empty()) {
        error(key, "must be a non-empty list of increasing positive numbers");
        return {};
    }
    std::vector<double> out;
    out.reserve(value->size());
    for (const auto& item : *value) {
        if (!item.is_number() || !std::isfinite(item.get<double>()) || item.get<double>() <= 0) {
            error(key, "holds " + excerpt(item) + "; grid points must be positive numbers");
            return {};
        }
        const double v = item.get<double>();
        if (!out.empty() && v <= out.back()) {
            error(key, "must be strictly increasing (" + format_number(v) + " follows " + format_number(out.back()) + ")");
            return {};
        }
        out.push_back(v);
    }
    return out;
}

std::vector<double> Reader::positive_values(const char* key, std::size_t expected_size)
{
    const nlohmann::json* value = lookup(key);
    if (value == nullptr || !value->is_array()) {
        error(key, "must be a list of " + std::to_string(expected_size) + " positive numbers");
        return {};
    }
    if (value->size() != expected_size) {
        error(key, "has " + std::to_string(value->size()) + " values; the grid needs " + std::to_string(expected_size));
        return {};
    }
    std::vector<double> out;
    out.reserve(value->size());
    for (std::size_t i = 0; i < value->size(); ++i) {
        const auto& item = (*value)[i];
        if (!item.is_number() || !std::isfinite(item.get<double>()) || item.get<double>() <= 0) {
            error(key, "value " + std::to_string(i) + " is " + excerpt(item) + "; latencies must be positive and finite");
            return {};
        }
        out.push_back(item.get<double>());
    }
    return out;
}

void Reader::reject_unknown(const std::vector<std::string>& known)
{
    if (!m_object.is_object()) {
        return;
    }
    for (const auto& [key, value] : m_object.items()) {
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            error(key, "is not a known field (misspelt?)");
        }
    }
}

Expected<nlohmann::json> parse_json_text(const std::string& text)
{
    nlohmann::json root;
    DomBuilder builder(root, text);
    bool complete = false;
    try {
        complete = nlohmann::json::sax_parse(text, &builder);
    } catch (const nlohmann::json::exception&) {
        // The SAX parser reports through parse_error(); nothing else should throw, but a library
        // message must never reach the user.
        return Diagnostic{"", "not valid JSON"};
    }
    if (builder.too_deep()) {
        const std::size_t offset = offset_of_depth(text, kMaxJsonDepth + 1);
        return Diagnostic{"", "too deeply nested at " + line_and_column(text, offset) + ": JSON input may nest at most " +
                                  std::to_string(kMaxJsonDepth) + " arrays and objects"};
    }
    if (builder.failed() || !complete) {
        std::string message = "not valid JSON at " + line_and_column(text, builder.error_offset());
        if (!builder.reason().empty()) {
            message += ": " + builder.reason();
        }
        if (!builder.error_field().empty()) {
            message += " (in " + builder.error_field() + ")";
        }
        return Diagnostic{"", printable(message)}; // the parser's token may be a raw DEL or control byte
    }
    return root;
}

std::string excerpt(const nlohmann::json& value, std::size_t max_chars)
{
    std::string out;
    write_excerpt(value, out, max_chars, 0);
    // The budget is checked between items; room for the closing "... (N items)]" is allowed past it.
    if (out.size() > max_chars + 40) {
        out.resize(max_chars);
        out += "...";
    }
    // JSON's dump leaves DEL (and C1 controls) raw in keys and strings: every message shows them escaped.
    return printable(out);
}

std::string lowercase(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return text;
}

std::size_t utf8_char_length(std::string_view text, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) {
        return 1;
    }
    std::size_t n = 0;
    unsigned char low = 0x80, high = 0xBF; // the second byte's range
    if (lead >= 0xC2 && lead <= 0xDF) {
        n = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        n = 3;
        low = lead == 0xE0 ? 0xA0 : 0x80;
        high = lead == 0xED ? 0x9F : 0xBF;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        n = 4;
        low = lead == 0xF0 ? 0x90 : 0x80;
        high = lead == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    if (i + n > text.size() || byte(i + 1) < low || byte(i + 1) > high) {
        return 0;
    }
    for (std::size_t k = 2; k < n; ++k) {
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) {
            return 0;
        }
    }
    return n;
}

bool valid_utf8(std::string_view text)
{
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8_char_length(text, i);
        if (n == 0) {
            return false;
        }
        i += n;
    }
    return true;
}

namespace {

std::string hex_escape(unsigned value, const char* prefix)
{
    static const char* const digits = "0123456789abcdef";
    std::string out(prefix);
    out += digits[(value >> 4) & 0xF];
    out += digits[value & 0xF];
    return out;
}

// The printable form of the character (or stray byte) at `text[i]`; `i` advances past it.
std::string printable_piece(std::string_view text, std::size_t& i)
{
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
        ++i;
        switch (c) {
        case '\n': return "\\n";
        case '\r': return "\\r";
        case '\t': return "\\t";
        default: return c < 0x20 || c == 0x7F ? hex_escape(c, "\\x") : std::string(1, static_cast<char>(c));
        }
    }
    const std::size_t n = utf8_char_length(text, i); // 2 to 4 here: ASCII was handled above
    if (n == 0) {
        ++i;
        return hex_escape(c, "\\x"); // not UTF-8: the byte itself
    }
    if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
        const auto code = static_cast<unsigned char>(text[i + 1]); // a C1 control, U+0080 to U+009F
        i += n;
        return hex_escape(code, "\\u00");
    }
    const std::string piece(text.substr(i, n));
    i += n;
    return piece;
}

} // namespace

std::string printable(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        out += printable_piece(text, i);
    }
    return out;
}

std::string bounded(const std::string& text, std::size_t max_chars)
{
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const std::string piece = printable_piece(text, i);
        if (out.size() + piece.size() > max_chars) {
            return out + "...";
        }
        out += piece;
    }
    return out;
}

std::optional<std::string> id_problem(const std::string& id)
{
    constexpr std::size_t kMaxIdChars = 128;
    if (id.empty()) {
        return std::string("is empty");
    }
    if (id.size() > kMaxIdChars) {
        return "is longer than " + std::to_string(kMaxIdChars) + " characters";
    }
    if (id.front() == '.' || id.front() == '-') {
        return std::string("starts with '") + id.front() + "'";
    }
    for (const char c : id) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' || c == '+';
        if (!ok) {
            return "holds " + (c == '/' || c == '\\' ? std::string("a path separator") : "the character " + bounded(std::string(1, c)));
        }
    }
    return std::nullopt;
}

std::optional<std::string> first_non_finite(const nlohmann::json& value)
{
    if (value.is_number_float()) {
        return std::isfinite(value.get<double>()) ? std::nullopt : std::optional<std::string>("");
    }
    if (value.is_array()) {
        for (std::size_t i = 0; i < value.size(); ++i) {
            if (auto inner = first_non_finite(value[i])) {
                return "[" + std::to_string(i) + "]" + *inner;
            }
        }
    } else if (value.is_object()) {
        for (auto it = value.begin(); it != value.end(); ++it) {
            if (auto inner = first_non_finite(*it)) {
                return "." + it.key() + *inner;
            }
        }
    }
    return std::nullopt;
}

std::optional<int> whole_number_in_range(const nlohmann::json& value, int min, int max)
{
    long long v = 0;
    if (value.is_number_unsigned()) {
        const auto u = value.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
            return std::nullopt;
        }
        v = static_cast<long long>(u);
    } else if (value.is_number_integer()) {
        v = value.get<std::int64_t>();
    } else if (value.is_number_float()) {
        const double d = value.get<double>();
        if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(min) || d > static_cast<double>(max)) {
            return std::nullopt;
        }
        v = static_cast<long long>(d);
    } else {
        return std::nullopt;
    }
    if (v < min || v > max) {
        return std::nullopt;
    }
    return static_cast<int>(v);
}

Expected<std::string> read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes)
{
    const std::string name = bounded(path.string(), 300);
    const auto mib = [](std::uintmax_t bytes) { return std::to_string(bytes >> 20) + " MiB"; };
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!ec && std::filesystem::is_directory(status)) {
        return Diagnostic{name, "is a directory, not a file"};
    }
    if (!ec && std::filesystem::is_regular_file(status)) {
        // The size first, so that a huge file is refused before any of it is read.
        const std::uintmax_t size = std::filesystem::file_size(path, ec);
        if (!ec && size > max_bytes) {
            return Diagnostic{name, "is " + std::to_string(size) + " bytes, more than the " + mib(max_bytes) + " an input file may hold"};
        }
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Diagnostic{name, "cannot be opened"};
    }
    // Read in pieces up to the bound: a device or pipe has no size (/dev/zero never ends).
    std::string text;
    std::vector<char> buffer(std::size_t{1} << 16);
    while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (text.size() + got > max_bytes) {
            return Diagnostic{name, "holds more than the " + mib(max_bytes) + " an input file may hold"};
        }
        text.append(buffer.data(), got);
    }
    if (in.bad()) {
        return Diagnostic{name, "cannot be read"};
    }
    return text;
}

Expected<nlohmann::json> read_json_file(const std::filesystem::path& path)
{
    const auto text = read_text_file(path);
    if (!text.ok()) {
        return text.errors();
    }
    auto json = parse_json_text(*text);
    if (!json.ok()) {
        return Diagnostic{path.string(), "is " + json.errors().front().message};
    }
    return json;
}

} // namespace vtrain::json_fields
