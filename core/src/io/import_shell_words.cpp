// SPDX-License-Identifier: MIT
#include "io/import_shell_words.h"

#include <cctype>
#include <optional>

namespace vtrain::import_detail {
namespace {

bool name_start(char c)
{
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool name_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Integer arithmetic of $(( ... )): + - * / % and parentheses over numbers and variables.
class Arithmetic {
public:
    Arithmetic(const std::string& text, const std::map<std::string, std::vector<std::string>>& vars) : m_s(text), m_vars(vars) {}
    std::optional<long long> evaluate()
    {
        const auto v = sum(0);
        skip();
        if (!v || m_pos != m_s.size()) {
            return std::nullopt;
        }
        return v;
    }

private:
    void skip()
    {
        while (m_pos < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_pos])) != 0) {
            ++m_pos;
        }
    }
    std::optional<long long> atom(int depth)
    {
        skip();
        if (depth > 32 || m_pos >= m_s.size()) {
            return std::nullopt;
        }
        const char c = m_s[m_pos];
        if (c == '(') {
            ++m_pos;
            const auto v = sum(depth + 1);
            skip();
            if (!v || m_pos >= m_s.size() || m_s[m_pos] != ')') {
                return std::nullopt;
            }
            ++m_pos;
            return v;
        }
        if (c == '-' || c == '+') {
            ++m_pos;
            const auto v = atom(depth + 1);
            return v ? std::optional<long long>(c == '-' ? -*v : *v) : std::nullopt;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
            long long v = 0;
            while (m_pos < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_pos])) != 0) {
                if (v > 1'000'000'000'000LL) {
                    return std::nullopt;
                }
                v = v * 10 + (m_s[m_pos++] - '0');
            }
            return v;
        }
        if (c == '$') {
            ++m_pos;
        }
        if (m_pos < m_s.size() && m_s[m_pos] == '{') {
            ++m_pos;
        }
        const std::size_t start = m_pos;
        while (m_pos < m_s.size() && name_char(m_s[m_pos])) {
            ++m_pos;
        }
        const std::string name = m_s.substr(start, m_pos - start);
        if (m_pos < m_s.size() && m_s[m_pos] == '}') {
            ++m_pos;
        }
        const auto it = m_vars.find(name);
        if (name.empty() || it == m_vars.end() || it->second.size() != 1) {
            return std::nullopt;
        }
        Arithmetic inner(it->second.front(), m_vars);
        if (depth > 8) {
            return std::nullopt;
        }
        inner.m_depth = m_depth + 1;
        return inner.m_depth > 8 ? std::nullopt : inner.evaluate();
    }
    std::optional<long long> product(int depth)
    {
        auto v = atom(depth);
        for (;;) {
            skip();
            if (!v || m_pos >= m_s.size() || (m_s[m_pos] != '*' && m_s[m_pos] != '/' && m_s[m_pos] != '%')) {
                return v;
            }
            const char op = m_s[m_pos++];
            const auto r = atom(depth);
            if (!r || ((op == '/' || op == '%') && *r == 0)) {
                return std::nullopt;
            }
            if (op == '*') {
                if (*v != 0 && (*r > 1'000'000'000'000LL / (*v < 0 ? -*v : *v))) {
                    return std::nullopt;
                }
                v = *v * *r;
            } else {
                v = op == '/' ? *v / *r : *v % *r;
            }
        }
    }
    std::optional<long long> sum(int depth)
    {
        auto v = product(depth);
        for (;;) {
            skip();
            if (!v || m_pos >= m_s.size() || (m_s[m_pos] != '+' && m_s[m_pos] != '-')) {
                return v;
            }
            const char op = m_s[m_pos++];
            const auto r = product(depth);
            if (!r) {
                return std::nullopt;
            }
            v = op == '+' ? *v + *r : *v - *r;
        }
    }

    const std::string& m_s;
    const std::map<std::string, std::vector<std::string>>& m_vars;
    std::size_t m_pos = 0;
    int m_depth = 0;
};

class Splitter {
public:
    explicit Splitter(const std::string& text) : m_s(text) {}

    ShellWords run()
    {
        bool command_start = true;
        while (m_pos < m_s.size() && m_out.error.empty()) {
            const char c = m_s[m_pos];
            if (c == ' ' || c == '\t' || c == '\r') {
                ++m_pos;
                continue;
            }
            if (c == '\\' && m_pos + 1 < m_s.size() && m_s[m_pos + 1] == '\n') {
                m_pos += 2;
                ++m_line;
                continue;
            }
            if (c == '\n' || c == ';' || c == '&' || c == '|') {
                m_line += c == '\n' ? 1 : 0;
                ++m_pos;
                command_start = true;
                continue;
            }
            if (c == '#') {
                skip_comment();
                continue;
            }
            if (c == '(' || c == ')' || c == '{' || c == '}') {
                ++m_pos;
                continue;
            }
            read_command_word(command_start);
        }
        m_out.variables = m_vars;
        return std::move(m_out);
    }

private:
    void skip_comment()
    {
        while (m_pos < m_s.size() && m_s[m_pos] != '\n') {
            ++m_pos;
        }
    }

    bool budget(std::size_t more)
    {
        m_chars += more;
        if (m_chars > kMaxShellChars || m_out.words.size() >= kMaxShellWords) {
            if (m_out.error.empty()) {
                m_out.error = "expands to more than " + std::to_string(kMaxShellWords) + " words or " + std::to_string(kMaxShellChars >> 20) +
                              " MiB of text (variables expanding into themselves?)";
            }
            return false;
        }
        return true;
    }

    // A word as fields (unquoted expansions split it), with the first unresolved reference.
    struct Word {
        std::vector<std::string> fields{std::string()};
        bool any = false; // something was read (an empty "" is a word)
        std::string unresolved;
        bool assignment_candidate = true; // only literal NAME= so far
        bool expanded_array = false;
    };

    void append(Word& w, const std::string& text)
    {
        if (budget(text.size())) {
            w.fields.back() += text;
        }
        w.any = true;
    }
    // Appends an expansion: quoted ones stay in the current field; unquoted ones split on blanks.
    void append_expansion(Word& w, const std::vector<std::string>& values, bool quoted)
    {
        w.assignment_candidate = false;
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (i > 0) {
                w.fields.emplace_back();
            }
            if (quoted) {
                append(w, values[i]);
                continue;
            }
            const std::string& v = values[i];
            std::size_t j = 0;
            bool started = !w.fields.back().empty();
            while (j < v.size()) {
                if (v[j] == ' ' || v[j] == '\t' || v[j] == '\n') {
                    while (j < v.size() && (v[j] == ' ' || v[j] == '\t' || v[j] == '\n')) {
                        ++j;
                    }
                    if (started && j < v.size()) {
                        w.fields.emplace_back();
                    }
                    continue;
                }
                const std::size_t k = v.find_first_of(" \t\n", j);
                append(w, v.substr(j, k == std::string::npos ? std::string::npos : k - j));
                started = true;
                j = k == std::string::npos ? v.size() : k;
            }
            w.any = true;
        }
    }

    // The matching close of an opening at m_pos - 1 ("${", "$(", "$(("), nesting counted; npos if none.
    std::size_t matching(char open, char close, std::size_t from) const
    {
        int depth = 1;
        for (std::size_t i = from; i < m_s.size(); ++i) {
            if (m_s[i] == '\\') {
                ++i;
                continue;
            }
            if (m_s[i] == open) {
                ++depth;
            } else if (m_s[i] == close && --depth == 0) {
                return i;
            }
        }
        return std::string::npos;
    }

    // Expands text (a default value, a quoted piece) into one string; unresolved references kept literal.
    std::string expand_text(const std::string& text, std::string& unresolved, int depth)
    {
        Splitter inner(text);
        inner.m_vars = m_vars;
        inner.m_depth = depth;
        Word w;
        inner.m_pos = 0;
        while (inner.m_pos < text.size()) {
            const char c = text[inner.m_pos];
            if (c == '$') {
                inner.read_dollar(w, true);
            } else {
                inner.append(w, std::string(1, c));
                ++inner.m_pos;
            }
        }
        if (unresolved.empty()) {
            unresolved = w.unresolved;
        }
        m_chars += inner.m_chars;
        std::string out;
        for (const std::string& f : w.fields) {
            out += f;
        }
        return out;
    }

    void mark_unresolved(Word& w, const std::string& what)
    {
        if (w.unresolved.empty()) {
            w.unresolved = what.size() > 60 ? what.substr(0, 60) + "..." : what;
        }
    }

    // At a '$': appends its expansion to `w`.
    void read_dollar(Word& w, bool quoted)
    {
        const std::size_t start = m_pos;
        ++m_pos;
        if (m_pos >= m_s.size()) {
            append(w, "$");
            return;
        }
        const char c = m_s[m_pos];
        if (c == '(' && m_pos + 1 < m_s.size() && m_s[m_pos + 1] == '(') {
            const std::size_t end = m_s.find("))", m_pos + 2);
            if (end == std::string::npos) {
                m_pos = m_s.size();
                mark_unresolved(w, "$((");
                return;
            }
            const std::string expr = m_s.substr(m_pos + 2, end - m_pos - 2);
            m_pos = end + 2;
            if (const auto v = Arithmetic(expr, m_vars).evaluate()) {
                append_expansion(w, {std::to_string(*v)}, quoted);
            } else {
                mark_unresolved(w, m_s.substr(start, m_pos - start));
                append(w, m_s.substr(start, m_pos - start));
            }
            return;
        }
        if (c == '(') {
            const std::size_t end = matching('(', ')', m_pos + 1);
            m_pos = end == std::string::npos ? m_s.size() : end + 1;
            mark_unresolved(w, m_s.substr(start, m_pos - start));
            append(w, m_s.substr(start, m_pos - start));
            return;
        }
        if (c == '{') {
            const std::size_t end = matching('{', '}', m_pos + 1);
            if (end == std::string::npos) {
                m_pos = m_s.size();
                mark_unresolved(w, "${");
                return;
            }
            const std::string inside = m_s.substr(m_pos + 1, end - m_pos - 1);
            m_pos = end + 1;
            expand_braced(w, inside, m_s.substr(start, m_pos - start), quoted);
            return;
        }
        if (name_start(c)) {
            std::size_t e = m_pos;
            while (e < m_s.size() && name_char(m_s[e])) {
                ++e;
            }
            const std::string name = m_s.substr(m_pos, e - m_pos);
            m_pos = e;
            expand_name(w, name, "$" + name, quoted);
            return;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '@' || c == '*' || c == '#' || c == '?' || c == '!' || c == '$') {
            ++m_pos;
            mark_unresolved(w, m_s.substr(start, 2));
            append(w, m_s.substr(start, 2));
            return;
        }
        append(w, "$");
    }

    void expand_name(Word& w, const std::string& name, const std::string& literal, bool quoted)
    {
        const auto it = m_vars.find(name);
        if (it == m_vars.end()) {
            mark_unresolved(w, literal);
            append(w, literal);
            return;
        }
        // $ARR is the array's first element, as in bash.
        append_expansion(w, {it->second.empty() ? std::string() : it->second.front()}, quoted);
    }

    void expand_braced(Word& w, const std::string& inside, const std::string& literal, bool quoted)
    {
        std::size_t e = 0;
        while (e < inside.size() && name_char(inside[e])) {
            ++e;
        }
        const std::string name = inside.substr(0, e);
        const std::string rest = inside.substr(e);
        if (name.empty() || !name_start(name[0])) {
            mark_unresolved(w, literal);
            append(w, literal);
            return;
        }
        const auto it = m_vars.find(name);
        if (rest.empty()) {
            expand_name(w, name, literal, quoted);
            return;
        }
        if (rest == "[@]" || rest == "[*]") {
            if (it == m_vars.end()) {
                mark_unresolved(w, literal);
                append(w, literal);
                return;
            }
            m_out.arrays_expanded = true;
            w.expanded_array = true;
            append_expansion(w, it->second, quoted);
            return;
        }
        for (const char* op : {":-", "-", ":=", "="}) {
            const std::string o = op;
            if (rest.rfind(o, 0) == 0) {
                const bool unset_or_empty = it == m_vars.end() || (o[0] == ':' && (it->second.empty() || it->second.front().empty()));
                if (!unset_or_empty) {
                    expand_name(w, name, literal, quoted);
                    return;
                }
                if (m_depth > 16) {
                    mark_unresolved(w, literal);
                    return;
                }
                std::string unresolved;
                const std::string value = expand_text(rest.substr(o.size()), unresolved, m_depth + 1);
                if (!unresolved.empty()) {
                    mark_unresolved(w, unresolved);
                }
                if (o.back() == '=') {
                    m_vars[name] = {value};
                }
                append_expansion(w, {value}, quoted);
                return;
            }
        }
        mark_unresolved(w, literal);
        append(w, literal);
    }

    // Reads one word at m_pos (up to an unquoted blank or separator).
    Word read_word(bool stop_at_paren)
    {
        Word w;
        while (m_pos < m_s.size() && m_out.error.empty()) {
            const char c = m_s[m_pos];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|') {
                break;
            }
            if (stop_at_paren && (c == ')' || c == '(')) {
                break;
            }
            if (c == '\\') {
                if (m_pos + 1 < m_s.size() && m_s[m_pos + 1] == '\n') {
                    m_pos += 2;
                    ++m_line;
                    break; // a continuation ends the word
                }
                if (m_pos + 1 < m_s.size()) {
                    append(w, std::string(1, m_s[m_pos + 1]));
                }
                m_pos += 2;
                continue;
            }
            if (c == '\'') {
                const std::size_t end = m_s.find('\'', m_pos + 1);
                const std::size_t stop = end == std::string::npos ? m_s.size() : end;
                append(w, m_s.substr(m_pos + 1, stop - m_pos - 1));
                count_lines(m_pos, stop);
                m_pos = stop + 1;
                w.assignment_candidate = w.assignment_candidate && w.fields.back().find('=') != std::string::npos;
                continue;
            }
            if (c == '"') {
                ++m_pos;
                w.any = true;
                while (m_pos < m_s.size() && m_s[m_pos] != '"') {
                    const char q = m_s[m_pos];
                    if (q == '\\' && m_pos + 1 < m_s.size() &&
                        (m_s[m_pos + 1] == '"' || m_s[m_pos + 1] == '\\' || m_s[m_pos + 1] == '$' || m_s[m_pos + 1] == '`' ||
                         m_s[m_pos + 1] == '\n')) {
                        if (m_s[m_pos + 1] != '\n') {
                            append(w, std::string(1, m_s[m_pos + 1]));
                        } else {
                            ++m_line;
                        }
                        m_pos += 2;
                    } else if (q == '$') {
                        read_dollar(w, true);
                    } else if (q == '`') {
                        read_backtick(w);
                    } else {
                        m_line += q == '\n' ? 1 : 0;
                        append(w, std::string(1, q));
                        ++m_pos;
                    }
                }
                ++m_pos;
                continue;
            }
            if (c == '$') {
                read_dollar(w, false);
                continue;
            }
            if (c == '`') {
                read_backtick(w);
                continue;
            }
            if (c == '=' && w.assignment_candidate && w.fields.size() == 1 && !w.fields.back().empty()) {
                append(w, "=");
                ++m_pos;
                if (valid_name(w.fields.back().substr(0, w.fields.back().size() - 1)) && m_pos < m_s.size() && m_s[m_pos] == '(') {
                    w.fields.back() += "(";
                    ++m_pos;
                    break; // an array assignment: its words follow
                }
                continue;
            }
            if (!name_char(c)) {
                w.assignment_candidate = w.assignment_candidate && w.fields.back().find('=') != std::string::npos;
            }
            append(w, std::string(1, c));
            ++m_pos;
        }
        return w;
    }

    void read_backtick(Word& w)
    {
        const std::size_t end = m_s.find('`', m_pos + 1);
        const std::size_t stop = end == std::string::npos ? m_s.size() : end + 1;
        mark_unresolved(w, m_s.substr(m_pos, std::min<std::size_t>(stop - m_pos, 40)));
        append(w, m_s.substr(m_pos, stop - m_pos));
        count_lines(m_pos, stop);
        m_pos = stop;
    }

    void count_lines(std::size_t from, std::size_t to)
    {
        for (std::size_t i = from; i < to && i < m_s.size(); ++i) {
            m_line += m_s[i] == '\n' ? 1 : 0;
        }
    }

    static bool valid_name(const std::string& s)
    {
        if (s.empty() || !name_start(s[0])) {
            return false;
        }
        for (const char c : s) {
            if (!name_char(c)) {
                return false;
            }
        }
        return true;
    }

    void push(const std::string& text, std::size_t line, bool assignment, bool command_start, const std::string& unresolved)
    {
        if (!budget(0)) {
            return;
        }
        m_out.words.push_back({text, line, assignment, command_start, unresolved});
    }

    void read_command_word(bool& command_start)
    {
        const std::size_t line = m_line;
        Word w = read_word(false);
        if (!w.any && w.fields.size() == 1 && w.fields.front().empty()) {
            ++m_pos; // nothing readable here (a stray quote end): move on
            return;
        }
        const std::string& first = w.fields.front();
        const std::size_t eq = first.find('=');
        const bool is_assignment = command_start && w.fields.size() == 1 && eq != std::string::npos && valid_name(first.substr(0, eq));
        if (is_assignment && first.size() == eq + 2 && first.back() == '(') {
            read_array(first.substr(0, eq), line);
            return;
        }
        if (is_assignment) {
            m_vars[first.substr(0, eq)] = {first.substr(eq + 1)};
            push(first, line, true, true, w.unresolved);
            return; // the next word may be another assignment or the command
        }
        if (command_start && (first == "export" || first == "local" || first == "declare" || first == "readonly" || first == "env") &&
            w.fields.size() == 1) {
            return;
        }
        for (const std::string& f : w.fields) {
            if (!f.empty() || w.fields.size() == 1) {
                push(f, line, false, command_start, w.unresolved);
                command_start = false;
            }
        }
        command_start = false;
    }

    void read_array(const std::string& name, std::size_t line)
    {
        std::vector<std::string> elements;
        while (m_pos < m_s.size() && m_out.error.empty()) {
            const char c = m_s[m_pos];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                m_line += c == '\n' ? 1 : 0;
                ++m_pos;
                continue;
            }
            if (c == '\\' && m_pos + 1 < m_s.size() && m_s[m_pos + 1] == '\n') {
                m_pos += 2;
                ++m_line;
                continue;
            }
            if (c == '#') {
                skip_comment();
                continue;
            }
            if (c == ')') {
                ++m_pos;
                break;
            }
            const std::size_t before = m_pos;
            Word w = read_word(true);
            if (m_pos == before) {
                ++m_pos; // a separator inside the parentheses
                continue;
            }
            for (const std::string& f : w.fields) {
                if (!f.empty() && budget(f.size())) {
                    elements.push_back(f);
                    m_out.array_elements.push_back(f);
                }
            }
        }
        m_vars[name] = std::move(elements);
        (void)line;
    }

    const std::string m_s;
    std::size_t m_pos = 0;
    std::size_t m_line = 1;
    std::size_t m_chars = 0;
    int m_depth = 0;
    std::map<std::string, std::vector<std::string>> m_vars;
    ShellWords m_out;
};

} // namespace

ShellWords split_shell_words(const std::string& text)
{
    return Splitter(text).run();
}

} // namespace vtrain::import_detail
