// SPDX-License-Identifier: MIT
#include "vtrain/pipeline_layout.h"
#include "vtrain/json_fields.h"

#include <algorithm>
#include <cctype>

namespace vtrain {
namespace {

constexpr std::size_t kMaxExpanded = kMaxPipelineLayoutSymbols; // symbols after expanding repeats: refuse absurd strings

std::string str(long long v)
{
    return std::to_string(v);
}

// Expands repeats into a flat string of E, t, m, L and '|'. `pos` advances; stops at ')' or the end.
class Expander {
public:
    explicit Expander(const std::string& text) : m_text(text) {}

    std::optional<std::string> expand(std::string& out)
    {
        // Bounds first: the expander recurses once per '(' (a string of 30,000 of them overflowed the
        // stack), and the JSON reader's depth bound does not look inside strings.
        if (m_text.size() > kMaxPipelineLayoutSymbols) {
            return "is " + str(static_cast<long long>(m_text.size())) + " characters long, more than " +
                   str(static_cast<long long>(kMaxPipelineLayoutSymbols)) + " (the most symbols a layout may expand to)";
        }
        int depth = 0;
        for (std::size_t i = 0; i < m_text.size(); ++i) {
            depth += m_text[i] == '(' ? 1 : m_text[i] == ')' ? -1 : 0;
            if (depth > kMaxPipelineLayoutDepth) {
                return "nests parentheses more than " + str(kMaxPipelineLayoutDepth) + " deep (at character " + str(static_cast<long long>(i) + 1) +
                       ")";
            }
        }
        std::size_t pos = 0;
        if (auto error = sequence(pos, out, 0)) {
            return error;
        }
        if (pos != m_text.size()) {
            return "unmatched ')' at character " + str(static_cast<long long>(pos) + 1);
        }
        return std::nullopt;
    }

private:
    std::optional<std::string> sequence(std::size_t& pos, std::string& out, int depth)
    {
        while (pos < m_text.size()) {
            const char c = m_text[pos];
            if (c == ')') {
                if (depth == 0) {
                    return "unmatched ')' at character " + str(static_cast<long long>(pos) + 1);
                }
                return std::nullopt;
            }
            if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
                ++pos;
                continue;
            }
            std::string item;
            if (c == '(') {
                const std::size_t open = pos++;
                if (auto error = sequence(pos, item, depth + 1)) {
                    return error;
                }
                if (pos >= m_text.size()) {
                    return "'(' at character " + str(static_cast<long long>(open) + 1) + " is not closed";
                }
                ++pos; // ')'
            } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
                item = c;
                ++pos;
            } else {
                // The symbol as text that stays on one line (a newline or ESC as its code).
                return "unknown symbol '" + json_fields::bounded(std::string(1, c), 8) + "' at character " + str(static_cast<long long>(pos) + 1) +
                       " (use E, t, m, L, '|', '*n' and parentheses)";
            }
            long long repeat = 1;
            if (pos < m_text.size() && m_text[pos] == '*') {
                ++pos;
                const std::size_t digits = pos;
                repeat = 0;
                while (pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[pos])) && repeat < 1'000'000) {
                    repeat = repeat * 10 + (m_text[pos++] - '0');
                }
                if (pos == digits) {
                    return "'*' at character " + str(static_cast<long long>(digits)) + " needs a count";
                }
            }
            if (static_cast<double>(item.size()) * static_cast<double>(repeat) + static_cast<double>(out.size()) > kMaxExpanded) {
                return "expands to more than " + str(static_cast<long long>(kMaxExpanded)) + " symbols";
            }
            for (long long i = 0; i < repeat; ++i) {
                out += item;
            }
        }
        return std::nullopt;
    }

    const std::string& m_text;
};

} // namespace

int PipelineLayout::stage_layers(int stage) const
{
    int n = 0;
    for (int c = 0; c < chunks; ++c) {
        n += at(stage, c).layers;
    }
    return n;
}

int PipelineLayout::stage_mtp_layers(int stage) const
{
    int n = 0;
    for (int c = 0; c < chunks; ++c) {
        n += at(stage, c).mtp_layers;
    }
    return n;
}

std::string balanced_pipeline_layout(int layers, int mtp_layers, int pp, int virtual_stages)
{
    const long long n = static_cast<long long>(pp) * virtual_stages;
    if (n < 2 || layers < 1 || layers % n == 0) {
        return {};
    }
    const int counted = (layers + 2) % n == 0 ? 2 : (layers + 1) % n == 0 ? 1 : 0; // E and L, or L alone
    if (counted == 0) {
        return {};
    }
    const long long each = (layers + counted) / n;
    auto run = [](long long k) { return k == 0 ? std::string() : k == 1 ? std::string("t") : "t*" + str(k); };
    std::string s = "E" + run(counted == 2 ? each - 1 : each) + "|";
    if (n > 2) {
        s += "(" + run(each) + "|)*" + str(n - 2);
    }
    s += run(each - 1);
    if (mtp_layers > 0) {
        s += mtp_layers == 1 ? std::string("m") : "m*" + str(mtp_layers);
    }
    return s + "L";
}

std::string pipeline_layout_from_stage_layers(const std::vector<int>& layers, int mtp_layers)
{
    const std::size_t n = layers.size();
    std::string s;
    if (n == 0) {
        return s;
    }
    auto run = [&s](int k) {
        if (k > 0) {
            s += 't';
        }
        if (k > 1) {
            s += '*';
            s += std::to_string(k);
        }
    };
    s += 'E';
    run(layers[0]);
    // The stages between the first and the last, equal neighbours written as one repeat.
    for (std::size_t i = 1; i + 1 < n;) {
        std::size_t j = i;
        while (j + 2 < n && layers[j + 1] == layers[i]) {
            ++j;
        }
        s += '|';
        if (j > i) {
            s += '(';
            run(layers[i]);
            s += "|)*";
            s += std::to_string(j - i);
        }
        run(layers[i]);
        i = j + 1;
    }
    if (n > 1) {
        s += '|';
        run(layers[n - 1]);
    }
    if (mtp_layers > 0) {
        s += 'm';
    }
    if (mtp_layers > 1) {
        s += '*';
        s += std::to_string(mtp_layers);
    }
    s += 'L';
    return s;
}

namespace {

// pipeline_layout_from_stage_layers() for counts given as runs (count, stages), in time that does not
// grow with the stages: the explorer lays out every pp x v of a search (up to tens of thousands of stages each).
std::string pipeline_layout_from_runs(const std::vector<std::pair<int, long long>>& given, int mtp_layers)
{
    // Runs without empty ones, equal neighbours joined.
    auto normalised = [](const std::vector<std::pair<int, long long>>& in) {
        std::vector<std::pair<int, long long>> out;
        for (const auto& [count, stages] : in) {
            if (stages <= 0) {
                continue;
            }
            if (!out.empty() && out.back().first == count) {
                out.back().second += stages;
            } else {
                out.emplace_back(count, stages);
            }
        }
        return out;
    };
    std::vector<std::pair<int, long long>> runs = normalised(given);
    std::string s;
    if (runs.empty()) {
        return s;
    }
    auto run = [&s](int k) {
        if (k > 0) {
            s += 't';
        }
        if (k > 1) {
            s += '*';
            s += std::to_string(k);
        }
    };
    long long n = 0;
    for (const auto& r : runs) {
        n += r.second;
    }
    const int first = runs.front().first, last = runs.back().first;
    s += 'E';
    run(first);
    // The stages between the first and the last, each run of equal ones written as one repeat.
    --runs.front().second;
    --runs.back().second;
    if (n > 1) {
        for (const auto& [count, stages] : normalised(runs)) {
            s += '|';
            if (stages > 1) {
                s += '(';
                run(count);
                s += "|)*";
                s += std::to_string(stages - 1);
            }
            run(count);
        }
        s += '|';
        run(last);
    }
    if (mtp_layers > 0) {
        s += 'm';
    }
    if (mtp_layers > 1) {
        s += '*';
        s += std::to_string(mtp_layers);
    }
    s += 'L';
    return s;
}

} // namespace

std::vector<std::string> standard_pipeline_layouts(int layers, int mtp_layers, int pp, int virtual_stages)
{
    const long long n = static_cast<long long>(pp) * virtual_stages;
    std::vector<std::string> out;
    if (n < 2 || layers < 1 || layers % n == 0 || n > layers) {
        return out;
    }
    auto add = [&out](std::string s) {
        if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) {
            out.push_back(std::move(s));
        }
    };
    add(balanced_pipeline_layout(layers, mtp_layers, pp, virtual_stages));
    const int each = static_cast<int>((layers + n - 1) / n); // the heavier stages' count
    // As even as it gets, the stages one layer lighter taken from the ends inwards (last, first, second
    // to last, ...): the ends also hold the embedding, the output layer and the MTP modules. So the first
    // lighter / 2 stages and the last (lighter + 1) / 2 are lighter.
    const long long lighter = each * n - layers;
    const long long lighter_first = lighter / 2, lighter_last = lighter - lighter_first;
    if (each > 1 || lighter == 0) { // no empty stage
        add(pipeline_layout_from_runs({{each - 1, lighter_first}, {each, n - lighter}, {each - 1, lighter_last}}, mtp_layers));
    }
    // DeepSeek-V3's shape (arXiv 2412.19437 Sec. 3.2, its PP16 layout Et*4|(t*4|)*14t*1mL): the heavier
    // count on every stage but the last, which takes what is left with the MTP modules and the loss.
    const long long rest = layers - static_cast<long long>(each) * (n - 1);
    if (rest >= 1) {
        add(pipeline_layout_from_runs({{each, n - 1}, {static_cast<int>(rest), 1}}, mtp_layers));
    }
    return out;
}

std::optional<std::string> parse_pipeline_layout(const std::string& text, std::vector<VirtualStage>& out)
{
    out.clear();
    std::string flat;
    if (auto error = Expander(text).expand(flat)) {
        return error;
    }
    out.emplace_back();
    int layer = 0;
    for (const char c : flat) {
        VirtualStage& v = out.back();
        switch (c) {
        case '|':
            out.emplace_back();
            out.back().first_layer = layer;
            break;
        case 'E':
            if (v.embedding) {
                return "'E' appears twice in one stage";
            }
            v.embedding = true;
            break;
        case 'L':
            if (v.loss) {
                return "'L' appears twice in one stage";
            }
            v.loss = true;
            break;
        case 't':
            ++v.layers;
            ++layer;
            break;
        case 'm': ++v.mtp_layers; break;
        default: break;
        }
    }
    return std::nullopt;
}

std::optional<std::string> resolve_pipeline_layout(const ModelSpec& m, const Plan& p, PipelineLayout& out)
{
    const int v = plan_chunks(p);
    out.stages = p.pp;
    out.chunks = v;
    const std::size_t n = static_cast<std::size_t>(p.pp) * v;

    if (!p.pipeline_layout.empty()) {
        if (auto error = parse_pipeline_layout(p.pipeline_layout, out.virtual_stages)) {
            return error;
        }
        auto& vs = out.virtual_stages;
        if (vs.size() != n) {
            return "has " + str(static_cast<long long>(vs.size())) + " stages but pp x virtual stages = " + str(p.pp) + " x " + str(v) + " = " +
                   str(static_cast<long long>(n));
        }
        int layers = 0, mtp = 0, embeddings = 0, losses = 0, mtp_stages = 0;
        for (std::size_t i = 0; i < n; ++i) {
            layers += vs[i].layers;
            mtp += vs[i].mtp_layers;
            embeddings += vs[i].embedding ? 1 : 0;
            losses += vs[i].loss ? 1 : 0;
            if (vs[i].mtp_layers > 0) {
                ++mtp_stages;
                // Megatron: MTP after every decoder layer, in the last chunk of its rank.
                if (static_cast<int>(i) / p.pp != v - 1) {
                    return "'m' must be in the last virtual stage of a pipeline rank (it is in stage " + str(static_cast<long long>(i)) + ")";
                }
                for (std::size_t k = i + 1; k < n; ++k) {
                    if (vs[k].layers > 0) {
                        return std::string("'m' must come after every 't'");
                    }
                }
            }
        }
        if (layers != m.layers) {
            return "has " + str(layers) + " 't' but the model has " + str(m.layers) + " layers";
        }
        if (mtp != m.mtp_layers) {
            return "has " + str(mtp) + " 'm' but the model has " + str(m.mtp_layers) + " multi-token-prediction layers";
        }
        if (mtp_stages > 1) {
            return std::string("all 'm' must be in one stage");
        }
        if (embeddings != 1 || !vs.front().embedding) {
            return std::string("needs exactly one 'E', in the first stage");
        }
        if (losses != 1 || !vs.back().loss) {
            return std::string("needs exactly one 'L', in the last stage");
        }
        return std::nullopt;
    }

    out.virtual_stages.assign(n, VirtualStage{});
    auto& vs = out.virtual_stages;
    const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0;
    // Decoder layers per virtual stage of rank `s` (all chunks of a rank hold the same count).
    int first = m.layers / static_cast<int>(n) * v, middle = first, last = first;
    if (uneven) {
        if (p.pp < 2) {
            return std::string("first_stage_layers / last_stage_layers need pp >= 2");
        }
        const int fixed_stages = (p.first_stage_layers > 0 ? 1 : 0) + (p.last_stage_layers > 0 ? 1 : 0);
        const int rest = m.layers - p.first_stage_layers - p.last_stage_layers;
        const int middle_stages = p.pp - fixed_stages;
        if (rest < 0 || (middle_stages == 0 && rest != 0) || (middle_stages > 0 && rest % middle_stages != 0)) {
            return "the " + str(rest) + " layers left after the first (" + str(p.first_stage_layers) + ") and last (" + str(p.last_stage_layers) +
                   ") stages do not split evenly over the other " + str(middle_stages) + " stages";
        }
        middle = middle_stages > 0 ? rest / middle_stages : 0;
        first = p.first_stage_layers > 0 ? p.first_stage_layers : middle;
        last = p.last_stage_layers > 0 ? p.last_stage_layers : middle;
        if (first % v != 0 || last % v != 0 || middle % v != 0) {
            return "stages of " + str(first) + ", " + str(middle) + " and " + str(last) + " layers do not split into " + str(v) +
                   " virtual stages each";
        }
    } else if (m.layers % static_cast<int>(n) != 0) {
        return "pp x virtual stages = " + str(static_cast<long long>(n)) + " does not divide the " + str(m.layers) + " layers";
    }
    int layer = 0;
    for (int c = 0; c < v; ++c) {
        for (int s = 0; s < p.pp; ++s) {
            VirtualStage& x = vs[static_cast<std::size_t>(c) * p.pp + s];
            x.first_layer = layer;
            x.layers = (s == 0 ? first : s == p.pp - 1 ? last : middle) / v;
            layer += x.layers;
        }
    }
    vs.front().embedding = true;
    vs.back().loss = true;
    vs.back().mtp_layers = m.mtp_layers;
    return std::nullopt;
}

} // namespace vtrain
