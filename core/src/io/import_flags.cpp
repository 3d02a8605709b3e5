// SPDX-License-Identifier: MIT
#include "io/import_flags.h"

#include <algorithm>
#include <cctype>

namespace vtrain::import_detail {
namespace {

bool is_flag(const std::string& word)
{
    return word.size() > 2 && word[0] == '-' && word[1] == '-' && word[2] != '-';
}

// A Hydra-style override (section.key=value, key=value): never the value of an unknown flag.
bool is_override(const std::string& word)
{
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0 || word[0] == '-') {
        return false;
    }
    for (std::size_t i = 0; i < eq; ++i) {
        const char c = word[i];
        if (!(std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '+' || c == '~')) {
            return false;
        }
    }
    return true;
}

// "text", clipped for a message (built by appending: GCC 12's -Wrestrict misfires on "literal" + string).
std::string in_quotes(const std::string& text)
{
    std::string out(1, '"');
    out += clipped(text);
    out += '"';
    return out;
}

bool is_script(const std::string& word)
{
    return word.size() > 3 && word.compare(word.size() - 3, 3, ".py") == 0;
}

} // namespace

const std::map<std::string, FlagArity>& launcher_flags()
{
    static const std::map<std::string, FlagArity> flags = [] {
        std::map<std::string, FlagArity> m;
        for (const char* v : {"--nproc_per_node",
                              "--nproc-per-node",
                              "--nnodes",
                              "--node_rank",
                              "--node-rank",
                              "--master_addr",
                              "--master-addr",
                              "--master_port",
                              "--master-port",
                              "--rdzv_backend",
                              "--rdzv-backend",
                              "--rdzv_endpoint",
                              "--rdzv-endpoint",
                              "--rdzv_id",
                              "--rdzv-id",
                              "--rdzv_conf",
                              "--rdzv-conf",
                              "--max_restarts",
                              "--max-restarts",
                              "--monitor_interval",
                              "--monitor-interval",
                              "--start_method",
                              "--start-method",
                              "--role",
                              "--log_dir",
                              "--log-dir",
                              "--redirects",
                              "--tee",
                              "--local_addr",
                              "--local-addr",
                              "--num_gpus",
                              "--num_nodes",
                              "--hostfile",
                              "--include",
                              "--exclude",
                              "--launcher",
                              "--local-ranks-filter",
                              "--local_ranks_filter"}) {
            m[v] = FlagArity::Value;
        }
        for (const char* s : {"--standalone", "--no_python", "--no-python", "--run_path", "--run-path", "--use_env", "--use-env", "--module"}) {
            m[s] = FlagArity::Switch;
        }
        return m;
    }();
    return flags;
}

Flags::Flags(const ShellWords& words, const std::map<std::string, FlagArity>& arity)
{
    std::vector<const ShellWord*> tokens;
    for (const ShellWord& w : words.words) {
        if (w.assignment) {
            m_others.push_back(w);
        } else {
            tokens.push_back(&w);
        }
    }
    // Arrays the text defines but never expands (a file of GPT_ARGS=( ... ) blocks): their words count.
    std::vector<ShellWord> from_arrays;
    if (!words.arrays_expanded) {
        for (const std::string& e : words.array_elements) {
            from_arrays.push_back({e, 0, false, false, {}});
        }
        for (const ShellWord& w : from_arrays) {
            tokens.push_back(&w);
        }
    }
    const auto arity_of = [&](const std::string& name) -> std::optional<FlagArity> {
        if (const auto it = arity.find(name); it != arity.end()) {
            return it->second;
        }
        if (const auto it = launcher_flags().find(name); it != launcher_flags().end()) {
            return it->second;
        }
        return std::nullopt;
    };
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const ShellWord& t = *tokens[i];
        if (!is_flag(t.text)) {
            m_others.push_back(t);
            continue;
        }
        const std::size_t eq = t.text.find('=');
        const std::string name = t.text.substr(0, eq);
        if (m_flags.count(name) == 0) {
            m_order.push_back(name);
        }
        Flag& f = m_flags[name];
        f.name = name;
        ++f.count;
        f.values.clear();
        f.unresolved = t.unresolved;
        if (eq != std::string::npos) {
            f.values.push_back(t.text.substr(eq + 1));
            continue;
        }
        const auto a = arity_of(name);
        if (a == FlagArity::Switch) {
            continue;
        }
        while (i + 1 < tokens.size()) {
            const ShellWord& next = *tokens[i + 1];
            if (is_flag(next.text) || (!a && (is_override(next.text) || is_script(next.text)))) {
                break;
            }
            f.values.push_back(next.text);
            if (f.unresolved.empty()) {
                f.unresolved = next.unresolved;
            }
            ++i;
            if (a == FlagArity::Value) {
                break;
            }
        }
    }
}

Flag* Flags::take(const std::string& name)
{
    const auto it = m_flags.find(name);
    if (it == m_flags.end()) {
        return nullptr;
    }
    it->second.used = true;
    return &it->second;
}

const std::string* Flags::value(const std::string& name, Draft& d)
{
    Flag* f = take(name);
    if (f == nullptr) {
        return nullptr;
    }
    if (f->values.empty()) {
        d.error(name, "needs a value");
        return nullptr;
    }
    if (!f->unresolved.empty()) {
        d.error(name, in_quotes(f->values.front()) + " holds " + clipped(f->unresolved) +
                          ", which the file does not set: give the value (or set the variable in the file)");
        return nullptr;
    }
    return &f->values.front();
}

bool Flags::on(const std::string& name, Draft& d)
{
    Flag* f = take(name);
    if (f == nullptr) {
        return false;
    }
    if (!f->values.empty()) {
        if (const auto b = parse_bool(f->values.front()); b && f->values.size() == 1) {
            return *b; // "--flag=true" as some wrappers write it
        }
        d.error(name, "is a switch and takes no value, not " + in_quotes(f->values.front()));
        return false;
    }
    return true;
}

std::optional<nlohmann::json> Flags::number(const std::string& name, const std::string& field, Draft& d)
{
    const std::string* v = value(name, d);
    if (v == nullptr) {
        return std::nullopt;
    }
    std::string why;
    auto n = parse_number(*v, why);
    if (!n) {
        d.error(name, why);
        return std::nullopt;
    }
    if (!field.empty()) {
        d.set(field, *n, name);
    }
    return n;
}

std::vector<const Flag*> Flags::unused() const
{
    std::vector<const Flag*> out;
    for (const std::string& name : m_order) {
        const Flag& f = m_flags.at(name);
        if (!f.used) {
            out.push_back(&f);
        }
    }
    return out;
}

void Flags::note_repeats(Draft& d) const
{
    for (const std::string& name : m_order) {
        const Flag& f = m_flags.at(name);
        if (f.count > 1 && f.used) {
            d.note(name, "is given " + std::to_string(f.count) + " times: the last one counts, as in argparse");
        }
    }
}

void Flags::read_launcher(Draft& d)
{
    const auto count = [&](std::initializer_list<const char*> names, const char* what) -> std::optional<long long> {
        for (const char* name : names) {
            Flag* f = take(name);
            if (f == nullptr || f->values.empty()) {
                continue;
            }
            const std::string& v = f->values.front();
            if (!f->unresolved.empty()) {
                d.note(name, in_quotes(v) + " is not set in the file: the " + what + " is not known from it");
                return std::nullopt;
            }
            std::string text = v;
            if (const std::size_t colon = text.find(':'); colon != std::string::npos) {
                d.note(name, in_quotes(v) + " is an elastic range: its upper end is taken");
                text = text.substr(colon + 1);
            }
            std::string why;
            const auto n = parse_number(text, why);
            const auto w = n ? whole(*n, 1, 10'000'000) : std::nullopt;
            if (!w) {
                d.note(name, in_quotes(v) + " is not a count: the " + what + " is not known from it");
                return std::nullopt;
            }
            return w;
        }
        return std::nullopt;
    };
    const bool given = has("--nproc_per_node") || has("--nproc-per-node") || has("--num_gpus") || has("--nnodes") || has("--num_nodes");
    const auto per_node = count({"--nproc_per_node", "--nproc-per-node", "--num_gpus"}, "node size");
    const auto nodes = count({"--nnodes", "--num_nodes"}, "node count");
    if (given && per_node) {
        d.gpus_per_node = *per_node;
        d.world_size = *per_node * nodes.value_or(1);
        d.world_size_key = has("--num_gpus") ? "--num_gpus x --num_nodes" : "--nproc_per_node x --nnodes";
        if (has("--nnodes") && !nodes) {
            d.world_size.reset();
        }
    }
    for (const auto& [name, arity] : launcher_flags()) {
        if (Flag* f = take(name); f != nullptr && name != "--nproc_per_node" && name != "--nproc-per-node" && name != "--nnodes" &&
                                  name != "--num_gpus" && name != "--num_nodes") {
            d.ignore(name);
        }
        (void)arity;
    }
}

} // namespace vtrain::import_detail
