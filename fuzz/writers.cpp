// SPDX-License-Identifier: MIT
#include "writers.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "vtrain/json_fields.h"
#include "vtrain/launch_config.h"
#include "vtrain/scenario_json.h"

namespace vtrain::fuzz {
namespace {

[[noreturn]] void violated(const std::string& what)
{
    std::fprintf(stderr, "fuzz contract violated by a writer: %s\n", json_fields::printable(json_fields::bounded(what, 2000)).c_str());
    std::abort();
}

// examples/gpt-1.3b.json's shape: a dense model torchtitan's TOML is written for, on one node.
const Scenario& base_scenario()
{
    static const Scenario scenario = [] {
        auto s = scenario_from_text(R"({"model": {"name": "x", "layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048, "vocab": 50257},
            "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8, "gpus_per_node": 8}, "training": {"global_batch": 64, "tokens": 1e9},
            "plan": {"tp": 1, "pp": 2, "dp": 4, "micro_batch": 1}})");
        if (!s.ok()) {
            std::fprintf(stderr, "the writers harness's base scenario is refused: %s\n", s.first_error().c_str());
            std::abort();
        }
        return s.value();
    }();
    return scenario;
}

// A C0 control character or DEL: what a terminal or a line-based format takes as more than text.
bool has_control(std::string_view text)
{
    for (const char c : text) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
            return true;
        }
    }
    return false;
}

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = text.find('\n', start);
        lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
    return lines;
}

void append_utf8(std::string& out, unsigned long code)
{
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

void check_messages(const std::string& s)
{
    for (const std::string& shown : {json_fields::printable(s), json_fields::bounded(s, 80)}) {
        if (has_control(shown) || json_fields::printable(shown) != shown) {
            violated("printable()/bounded() left a control character or a byte that is not UTF-8: " + shown);
        }
    }
    if (json_fields::bounded(s, 80).size() > 83) {
        violated("bounded(80) is longer than 83 bytes");
    }
}

void check_toml(const std::string& name)
{
    Scenario hostile = base_scenario();
    hostile.model.name = name;
    const auto written = torchtitan_launch(hostile, *hostile.plan, 8);
    const auto reference = torchtitan_launch(base_scenario(), *base_scenario().plan, 8);
    if (!written.ok() || !reference.ok()) {
        violated("torchtitan_launch refused the base plan");
    }
    const std::vector<std::string> got = lines_of(written->toml), want = lines_of(reference->toml);
    if (got.size() != want.size()) {
        violated("the model name changed the TOML's line count: " + written->toml);
    }
    for (std::size_t i = 1; i < got.size(); ++i) {
        if (got[i] != want[i]) {
            violated("the model name changed the TOML outside its comment: " + got[i]);
        }
    }
    const std::string head = "# torchtitan job config written by vtrain launch for ", tail = " on 8 x a100-sxm4-80gb";
    const std::string& comment = got.front();
    if (comment.rfind(head, 0) != 0 || comment.size() < head.size() + tail.size() || comment.substr(comment.size() - tail.size()) != tail) {
        violated("the TOML's first line is not the comment: " + comment);
    }
    const std::string body = comment.substr(head.size(), comment.size() - head.size() - tail.size());
    const auto value = toml_basic_string_value(body);
    if (!value || has_control(comment)) {
        violated("the name in the TOML comment is not a TOML basic string's body: " + comment);
    }
    if (json_fields::valid_utf8(name) && *value != name) {
        violated("the name in the TOML comment reads back as another string: " + *value);
    }
}

void check_json(const std::string& name, const std::string& description)
{
    Scenario s = base_scenario();
    s.model.name = name;
    s.description = description;
    const nlohmann::json j = scenario_to_json(s);
    if (!json_fields::valid_utf8(name) || !json_fields::valid_utf8(description)) {
        // JSON text is UTF-8, as every reader's strings are; other bytes are written as U+FFFD, never a throw.
        (void)j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
    }
    const std::string compact = j.dump();
    for (const char c : compact) {
        if (static_cast<unsigned char>(c) < 0x20) {
            violated("scenario JSON holds a raw control character: " + compact);
        }
    }
    const std::string text = j.dump(2);
    const auto back = scenario_from_text(text);
    if (!back.ok()) {
        // Refused only for a reason of the name itself (empty, too long): never a syntax error.
        if (back.first_error().find("model.name") == std::string::npos) {
            violated("scenario JSON written with a hostile name does not read back: " + back.first_error());
        }
        return;
    }
    if (back->model.name != s.model.name || back->description != s.description) {
        violated("scenario JSON changed a string on the way back: " + back->model.name);
    }
}

void check_shell(const std::string& word)
{
    const std::string quoted = shell_quoted(word);
    const auto words = shell_words(quoted);
    if (!words || words->size() != 1 || words->front() != word) {
        violated("shell_quoted() does not read back as that one word: " + quoted);
    }
    // Megatron's command line, when the string is a layout the base model takes ("" is no layout).
    if (word.empty()) {
        return;
    }
    Scenario hostile = base_scenario();
    hostile.plan->pipeline_layout = word;
    const auto launch = megatron_launch(hostile, *hostile.plan, 8);
    if (!launch.ok()) {
        return;
    }
    const auto all = shell_words(launch->command_text());
    if (!all) {
        violated("Megatron's command line does not parse as plain shell words: " + launch->command_text());
    }
    bool found = false;
    for (std::size_t i = 0; i + 1 < all->size(); ++i) {
        found = found || ((*all)[i] == "--pipeline-model-parallel-layout" && (*all)[i + 1] == word);
    }
    if (!found) {
        violated("Megatron's command line does not carry the layout as one word: " + launch->command_text());
    }
}

} // namespace

std::optional<std::string> toml_basic_string_value(std::string_view body)
{
    std::string out;
    for (std::size_t i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (c == '"' || (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7F) {
            return std::nullopt;
        }
        if (c != '\\') {
            out += c;
            continue;
        }
        if (++i >= body.size()) {
            return std::nullopt;
        }
        switch (body[i]) {
        case 'b': out += '\b'; break;
        case 't': out += '\t'; break;
        case 'n': out += '\n'; break;
        case 'f': out += '\f'; break;
        case 'r': out += '\r'; break;
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'u':
        case 'U': {
            const std::size_t digits = body[i] == 'u' ? 4 : 8;
            if (i + digits >= body.size()) {
                return std::nullopt;
            }
            unsigned long code = 0;
            for (std::size_t k = 1; k <= digits; ++k) {
                const char h = body[i + k];
                const int v = h >= '0' && h <= '9' ? h - '0' : h >= 'A' && h <= 'F' ? h - 'A' + 10 : h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
                if (v < 0) {
                    return std::nullopt;
                }
                code = code * 16 + static_cast<unsigned long>(v);
            }
            if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
                return std::nullopt;
            }
            append_utf8(out, code);
            i += digits;
            break;
        }
        default: return std::nullopt;
        }
    }
    return out;
}

std::optional<std::vector<std::string>> shell_words(std::string_view text)
{
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    const std::string_view special = "$`;&|<>()*?[]{}~#!";
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) {
                words.push_back(word);
                word.clear();
                in_word = false;
            }
            continue;
        }
        if (c == '\\') {
            if (i + 1 >= text.size()) {
                return std::nullopt;
            }
            if (text[i + 1] == '\n') { // a continued line
                ++i;
                continue;
            }
            word += text[++i];
            in_word = true;
            continue;
        }
        if (c == '\'') {
            const std::size_t end = text.find('\'', i + 1);
            if (end == std::string_view::npos) {
                return std::nullopt;
            }
            word.append(text.substr(i + 1, end - i - 1));
            in_word = true;
            i = end;
            continue;
        }
        if (c == '"') {
            std::size_t k = i + 1;
            for (; k < text.size() && text[k] != '"'; ++k) {
                if (text[k] == '$' || text[k] == '`') {
                    return std::nullopt; // an expansion inside double quotes
                }
                if (text[k] == '\\' && k + 1 < text.size() && std::string_view("$`\"\\\n").find(text[k + 1]) != std::string_view::npos) {
                    if (text[k + 1] != '\n') {
                        word += text[k + 1];
                    }
                    ++k;
                    continue;
                }
                word += text[k];
            }
            if (k >= text.size()) {
                return std::nullopt;
            }
            in_word = true;
            i = k;
            continue;
        }
        if (special.find(c) != std::string_view::npos) {
            return std::nullopt;
        }
        word += c;
        in_word = true;
    }
    if (in_word) {
        words.push_back(word);
    }
    return words;
}

void check_writers(std::string_view data)
{
    std::vector<std::string> parts(3);
    std::size_t k = 0;
    for (const char c : data) {
        if (static_cast<unsigned char>(c) == 0xFF && k + 1 < parts.size()) {
            ++k;
        } else {
            parts[k] += c;
        }
    }
    try {
        for (const std::string& s : parts) {
            check_messages(s);
            check_shell(s);
        }
        check_toml(parts[0]);
        check_json(parts[0], parts[1]);
        if (!parts[2].empty()) {
            check_shell(parts[2]);
        }
    } catch (const std::exception& e) {
        violated(std::string("exception escaped: ") + e.what());
    }
}

} // namespace vtrain::fuzz
