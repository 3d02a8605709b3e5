// SPDX-License-Identifier: MIT
#include "vtrain/json_fields.h"

#include <algorithm>
#include <cmath>
#include <fstream>
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
    return m_path.empty() ? std::string(key) : m_path + "." + key;
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
    m_diagnostics.push_back({key.empty() ? m_path : field(key.c_str()), message});
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
    if (value->is_number_float()) {
        const double d = value->get<double>();
        if (!std::isfinite(d) || d != std::floor(d)) {
            error(key, "must be a whole number, not " + value->dump());
            return std::nullopt;
        }
    } else if (!value->is_number_integer()) {
        error(key, "must be a whole number, not " + type_name(*value) + " " + value->dump());
        return std::nullopt;
    }
    const double v = value->get<double>();
    if (v < static_cast<double>(min) || v > static_cast<double>(max)) {
        error(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", not " + value->dump());
        return std::nullopt;
    }
    return static_cast<int>(v);
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
        error(key, "must be a number, not " + type_name(*value) + " " + value->dump());
        return std::nullopt;
    }
    const double v = value->get<double>();
    if (!std::isfinite(v) || v < min || v > max) {
        error(key, "must be between " + format_number(min) + " and " + format_number(max) + ", not " + value->dump());
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
        error(key, "must be a string, not " + type_name(*value) + " " + value->dump());
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
        error(key, "must be true or false, not " + value->dump());
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
            error(key, "holds " + item.dump() + "; grid points must be positive numbers");
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
            error(key, "value " + std::to_string(i) + " is " + item.dump() + "; latencies must be positive and finite");
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
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is 1-based; report a line and column the user can find.
        std::size_t line = 1;
        std::size_t column = 1;
        for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        return Diagnostic{"", "not valid JSON at line " + std::to_string(line) + ", column " + std::to_string(column)};
    } catch (const nlohmann::json::exception& e) {
        return Diagnostic{"", std::string("not valid JSON: ") + e.what()};
    }
}

Expected<nlohmann::json> read_json_file(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Diagnostic{path.string(), "cannot be opened"};
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    auto json = parse_json_text(buffer.str());
    if (!json.ok()) {
        return Diagnostic{path.string(), "is " + json.errors().front().message};
    }
    return json;
}

} // namespace vtrain::json_fields
