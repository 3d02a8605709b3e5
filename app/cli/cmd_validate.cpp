// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "cli_common.h"
#include "commands.h"
#include "vtrain/grouped_validation.h"
#include "vtrain/json_fields.h"
#include "vtrain/plausibility.h"
#include "vtrain/scenario_json.h"
#include "vtrain/uncertainty.h"
#include "vtrain/validation.h"

namespace vtrain::cli {

const char* const kValidateHelp = R"(usage: vtrain validate RUNS.json [--subset NAME] [--json] [--rows] [--profile-dir DIR] [--svg PLOT.svg]
                       [--cv source|gpu|family|release [--cv-evals N] [--cv-starts K]]

Predicts every row of RUNS.json (published or your own measurements, in the format of
../shared/validation/README.md) and compares it with the row's measured quantity: iteration time where
the row has one, otherwise tokens/s per GPU, TFLOP/s per GPU, MFU or HFU under a FLOP convention the tool
reproduces, or one layer's forward + backward time. Both formats load (public_runs.json's 63 keys and
modern_runs.json's 86). Settings a row leaves open (micro-batch, recompute, sequence parallelism, ETP,
virtual stages, overlap flags) become a range: every plausible value is predicted and the centre (the
median of the runs that fit in memory) is scored. Prints, per subset, the rows (n) and those modeled,
the mean absolute percentage error (MAPE), the median and worst absolute error, the signed bias and the
target; then the coverage (rows modeled / rows in the file) and the skip reasons with their counts.
Rows that report peak memory or an out-of-memory outcome are also compared with the memory model
(subset "NAME:memory").

options:
  --subset NAME      only the rows of this subset
  --json             print {"rows": [...], "subsets": {...}, "coverage": {...}}
                     (error_pct = (predicted - measured) / measured x 100)
  --rows             also print every row: measured, predicted (centre), the range min..max over the open
                     settings (and how many were predicted), error, the skip reason and the defaults it used
  --profile-dir DIR  look GPU profiles up in DIR first (e.g. a calibrated profile)
  --svg FILE         write a log-log predicted-vs-measured scatter plot, one colour per subset
  --scenarios DIR    also write each modeled row as a scenario file DIR/ID.json (for vtrain simulate), with
                     the settings of the centre of its range
  --threads N        worker threads, 1..1024 (default: all cores)
  --cv GROUP         grouped validation: every row predicted with the calibration refitted without the
                     row's group (source: its source_id; gpu: the GPU profile it maps to; family: its model
                     family; release: its software release), so no fit saw the row or its siblings. A
                     profile left with fewer than 10 rows keeps its datasheet prior. Same tables and --json
                     (each row's "predicted" is its held-out prediction, "cv_group" its group; "cv" lists
                     the refits). The refits run in parallel; the time is printed.
  --cv-evals N       objective evaluations per refit (default 600, as the shipped fits)
  --cv-starts K      Nelder-Mead starts per refit: the prior and K - 1 points spread over the parameter
                     ranges, the best one polished (default 4; 1 = from the prior alone)

exit status: 0 on success, 2 on bad input (the message names the row and the field).

example:
  vtrain validate ../shared/validation/public_runs.json
  vtrain validate ../shared/validation/public_runs.json --subset vtrain_multi_node --json
  vtrain validate ../shared/validation/modern_runs.json --rows --subset megatron_bridge_moe_gb200
  vtrain validate ../shared/validation/modern_runs.json --cv source
)";

namespace {

std::string fmt(const char* format, double v)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, v);
    return buffer;
}

std::string pad(std::string s, std::size_t width)
{
    if (s.size() < width) {
        s.append(width - s.size(), ' ');
    }
    return s;
}

std::string rpad(const std::string& s, std::size_t width)
{
    return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
}

// Text as XML character data or an attribute value: markup characters as entities, and the control
// characters XML 1.0 does not allow (all but tab, newline and carriage return; a row id is user text)
// rendered visibly, as is anything that is not UTF-8.
std::string xml_escape(const std::string& s)
{
    std::string out;
    for (const char c : json_fields::printable(s)) {
        switch (c) {
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '&': out += "&amp;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += c;
        }
    }
    return out;
}

// A row id as a file name in --scenarios DIR: the id itself when it is one (letters, digits, '.', '-',
// '_', '+', not starting with '.', at most 200 characters, as every row of the public sets), else
// nothing: an id like "../x" or "a/b" must not name a file outside DIR.
std::optional<std::string> file_name_of_id(const std::string& id)
{
    if (id.empty() || id.size() > 200 || id.front() == '.') {
        return std::nullopt;
    }
    for (const char c : id) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' || c == '+';
        if (!ok) {
            return std::nullopt;
        }
    }
    return id + ".json";
}

// A log-log scatter of predicted against measured values (each row in its metric's own unit), with the
// y = x line and +-10% lines, one colour per subset.
std::string scatter_svg(const ValidationReport& report)
{
    const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
    std::vector<std::string> subsets;
    double lo = 1e300, hi = 0;
    for (const RowResult& r : report.rows) {
        if (!r.error_pct || r.memory || !r.measured || *r.measured <= 0 || *r.predicted <= 0) {
            continue;
        }
        if (std::find(subsets.begin(), subsets.end(), r.subset) == subsets.end()) {
            subsets.push_back(r.subset);
        }
        lo = std::min({lo, *r.measured, *r.predicted});
        hi = std::max({hi, *r.measured, *r.predicted});
    }
    // Large subsets first, so that the small ones stay visible on top.
    std::stable_sort(subsets.begin(), subsets.end(), [&](const std::string& a, const std::string& b) {
        const auto used = [&](const std::string& n) { return report.subsets.count(n) ? report.subsets.at(n).used : 0; };
        return used(a) > used(b);
    });
    const double W = 720, H = 640, left = 80, right = 230, top = 40, bottom = 70;
    const double pw = W - left - right, ph = H - top - bottom;
    if (subsets.empty()) {
        lo = 1;
        hi = 10;
    }
    const double l0 = std::floor(std::log10(lo)), l1 = std::ceil(std::log10(hi));
    auto x_of = [&](double v) { return left + (std::log10(v) - l0) / (l1 - l0) * pw; };
    auto y_of = [&](double v) { return top + ph - (std::log10(v) - l0) / (l1 - l0) * ph; };
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W << " " << H
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s << "<text x=\"" << left + pw / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">vTrain Explorer: predicted vs measured "
      << "(log-log, each row in its own unit)</text>\n";
    // Grid and ticks at powers of ten.
    for (double e = l0; e <= l1 + 1e-9; e += 1) {
        const double v = std::pow(10.0, e);
        s << "<line x1=\"" << x_of(v) << "\" y1=\"" << top << "\" x2=\"" << x_of(v) << "\" y2=\"" << top + ph << "\" stroke=\"#ddd\"/>\n";
        s << "<line x1=\"" << left << "\" y1=\"" << y_of(v) << "\" x2=\"" << left + pw << "\" y2=\"" << y_of(v) << "\" stroke=\"#ddd\"/>\n";
        std::ostringstream label;
        label << v;
        s << "<text x=\"" << x_of(v) << "\" y=\"" << top + ph + 18 << "\" text-anchor=\"middle\">" << label.str() << "</text>\n";
        s << "<text x=\"" << left - 6 << "\" y=\"" << y_of(v) + 4 << "\" text-anchor=\"end\">" << label.str() << "</text>\n";
    }
    s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph << "\" fill=\"none\" stroke=\"#333\"/>\n";
    const double a = std::pow(10.0, l0), b = std::pow(10.0, l1);
    s << "<line x1=\"" << x_of(a) << "\" y1=\"" << y_of(a) << "\" x2=\"" << x_of(b) << "\" y2=\"" << y_of(b) << "\" stroke=\"#333\"/>\n";
    for (const double f : {0.9, 1.1}) {
        s << "<line x1=\"" << x_of(a) << "\" y1=\"" << y_of(a * f) << "\" x2=\"" << x_of(b / f) << "\" y2=\"" << y_of(b)
          << "\" stroke=\"#999\" stroke-dasharray=\"4 4\"/>\n";
    }
    s << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 30 << "\" text-anchor=\"middle\">measured (s, TFLOP/s, %, ms)</text>\n";
    s << "<text transform=\"translate(22 " << top + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">predicted</text>\n";
    s << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 12 << "\" text-anchor=\"middle\" fill=\"#666\">solid: y = x; dashed: +-10%</text>\n";
    for (std::size_t k = 0; k < subsets.size(); ++k) {
        const char* colour = palette[k % std::size(palette)];
        for (const RowResult& r : report.rows) {
            if (r.subset != subsets[k] || !r.error_pct || r.memory) {
                continue;
            }
            s << "<circle cx=\"" << fmt("%.1f", x_of(*r.measured)) << "\" cy=\"" << fmt("%.1f", y_of(*r.predicted)) << "\" r=\"2.6\" fill=\""
              << colour << "\" fill-opacity=\"0.55\"><title>" << xml_escape(r.id) << "</title></circle>\n";
        }
        const auto it = report.subsets.find(subsets[k]);
        const double y = top + 10 + 20.0 * k;
        s << "<circle cx=\"" << left + pw + 20 << "\" cy=\"" << y << "\" r=\"5\" fill=\"" << colour << "\"/>\n";
        s << "<text x=\"" << left + pw + 30 << "\" y=\"" << y + 4 << "\">" << xml_escape(subsets[k])
          << (it != report.subsets.end() ? fmt(" (%.1f%%)", it->second.mape_pct) : std::string{}) << "</text>\n";
    }
    s << "<text x=\"" << left + pw + 20 << "\" y=\"" << top + 20 + 20.0 * subsets.size() << "\" fill=\"#666\">(MAPE per subset)</text>\n";
    s << "</svg>\n";
    return s.str();
}

void print_table(std::ostream& out, const ValidationReport& report)
{
    out << pad("subset", 32) << rpad("n", 6) << rpad("modeled", 9) << rpad("MAPE", 9) << rpad("median", 9) << rpad("max", 9) << rpad("bias", 9)
        << rpad("<=10%", 7) << rpad("2x", 5) << rpad("in range", 10) << rpad("target", 11) << "\n";
    const auto line = [&out](const std::string& name, const SubsetStats& s, int rows, const std::string& target) {
        const bool any = s.used > 0;
        out << pad(name, 32) << rpad(std::to_string(rows), 6) << rpad(std::to_string(s.used), 9) << rpad(any ? fmt("%.2f%%", s.mape_pct) : "-", 9)
            << rpad(any ? fmt("%.2f%%", s.median_pct) : "-", 9) << rpad(any ? fmt("%.2f%%", s.max_pct) : "-", 9)
            << rpad(any ? fmt("%+.2f%%", s.bias_pct) : "-", 9) << rpad(any ? fmt("%.0f%%", 100.0 * s.within_10pct / s.used) : "-", 7)
            << rpad(any ? std::to_string(s.off_by_2x) : "-", 5) << rpad(s.range_rows > 0 ? fmt("%.0f%%", 100.0 * s.in_range / s.range_rows) : "-", 10)
            << rpad(target, 11) << "\n";
    };
    for (const auto& [name, s] : report.subsets) {
        const auto t = target_for_subset(name);
        std::string target = "-";
        if (t) {
            target = fmt("%.0f%%", *t) + (s.used > 0 && s.mape_pct <= *t ? " ok" : " MISS");
        }
        line(name, s, s.used + s.skipped + s.unscored, target);
    }
    line("all scored rows (memory apart)", report.overall, report.overall.used, "-");
    out << "in range: the measured value inside the row's open-settings range widened by its profile's 80% band\n";
    const double share = report.rows_in_file > 0 ? 100.0 * report.rows_modeled / report.rows_in_file : 0.0;
    out << "\ncoverage: " << report.rows_modeled << " / " << report.rows_in_file << " rows modeled (" << fmt("%.1f%%", share) << ")";
    if (report.rows_unscored > 0) {
        out << ", " << report.rows_unscored << " of them not scored";
    }
    out << "\n";
    // Predictions a published run or the physics make implausible (plausibility.h); --rows lists them.
    out << "plausibility: " << report.rows_flagged << " of " << report.rows_modeled << " modeled rows flagged";
    if (report.rows_flagged > 0) {
        int mfu = 0, far = 0, below = 0;
        for (const RowResult& r : report.rows) {
            if (r.memory || !r.error_pct) {
                continue;
            }
            mfu += (r.plausibility_flags & kMfuAbovePublished) != 0 ? 1 : 0;
            far += (r.plausibility_flags & kFarAboveFloor) != 0 ? 1 : 0;
            below += (r.plausibility_flags & kBelowFloor) != 0 ? 1 : 0;
        }
        out << " (" << mfu << " MFU above the best published run, " << far << " over " << fmt("%.0f", kFarAboveFloorFactor)
            << "x their binding floor, " << below << " below their floor)";
    }
    out << "\n";
    if (report.rows_unscored > 0) {
        // Listed with their errors, so that leaving them out of the MAPE is visible.
        out << "not scored (measured inside a software regression its maintainers document; predicted, not fitted):\n";
        for (const RowResult& r : report.rows) {
            if (!r.memory && r.error_pct && !r.unscored_reason.empty()) {
                out << "      " << pad(r.id, 46) << rpad(fmt("%+.1f%%", *r.error_pct), 9) << "  " << r.unscored_reason << "\n";
            }
        }
    }
    if (!report.skip_reasons.empty()) {
        std::vector<std::pair<int, std::string>> reasons;
        for (const auto& [reason, n] : report.skip_reasons) {
            reasons.emplace_back(n, reason);
        }
        std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        out << "skip reasons:\n";
        for (const auto& [n, reason] : reasons) {
            out << rpad(std::to_string(n), 6) << "  " << reason << "\n";
        }
    }
}

void print_rows(std::ostream& out, const ValidationReport& report)
{
    out << "\n"
        << pad("id", 52) << pad("metric", 24) << rpad("measured", 11) << rpad("predicted", 11) << rpad("range", 27) << rpad("error", 9) << "\n";
    for (const RowResult& r : report.rows) {
        std::string range = "-";
        if (r.predicted_low && r.predicted_high && r.candidates > 1) {
            range = " " + fmt("%.4g", *r.predicted_low) + ".." + fmt("%.4g", *r.predicted_high) + " (" + std::to_string(r.candidates) + ")";
        }
        out << pad(r.id, 52) << pad(r.metric, 24) << rpad(r.measured ? fmt("%.4g", *r.measured) : "-", 11)
            << rpad(r.predicted ? fmt("%.4g", *r.predicted) : "-", 11) << rpad(range, 27)
            << rpad(r.error_pct ? fmt("%+.1f%%", *r.error_pct) : "skip", 9) << (r.in_range ? (*r.in_range ? "  in range" : "  OUT of range") : "")
            << (r.unscored_reason.empty() ? "" : "  not scored") << "\n";
        if (!r.skipped_reason.empty()) {
            out << "      skipped: " << r.skipped_reason << "\n";
        }
        if (r.host_low && r.host_high && r.predicted && *r.predicted > 0 && (*r.host_high - *r.host_low) > 0.01 * *r.predicted) {
            out << "      host CPU time per operator ÷/x " << fmt("%g", kHostTermPriorWidth) << ": " << fmt("%.4g", *r.host_low) << ".."
                << fmt("%.4g", *r.host_high) << "\n";
        }
        for (const auto& flag : r.plausibility) {
            out << "      FLAGGED: " << flag << "\n";
        }
        for (const auto& n : r.notes) {
            out << "      " << n << "\n";
        }
    }
}

} // namespace

// Loads the profiles the rows need (a profile missing from the library skips its rows with that reason).
std::map<std::string, GpuProfile> load_profiles_for_rows(const std::vector<RunRow>& rows, const std::optional<std::string>& profile_dir)
{
    ProfileLibrary library = profile_library();
    if (profile_dir) {
        library.folders.insert(library.folders.begin(), *profile_dir);
    }
    std::set<std::string> ids;
    for (const RunRow& r : rows) {
        const RowMapping m = map_run(r);
        if (m.run) {
            ids.insert(m.run->profile_id);
        }
    }
    std::map<std::string, GpuProfile> profiles;
    for (const auto& id : ids) {
        auto p = library.load(id);
        if (p.ok()) {
            profiles.emplace(id, std::move(p).value());
        }
    }
    return profiles;
}

int run_validate(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv, {"--subset", "--profile-dir", "--svg", "--scenarios", "--threads", "--cv", "--cv-evals", "--cv-starts"},
                                 {"--json", "--rows"}, error);
    if (!args) {
        return report_bad_input(error);
    }
    if (args->positional.size() != 1) {
        return report_bad_input("validate takes one RUNS.json file (see vtrain validate --help)");
    }
    const std::string& path = args->positional[0];
    note_input(path);
    if (const auto svg = args->value("--svg"); svg && !check_output(*svg, error)) {
        return report_write_failure("--svg: " + error);
    }
    auto rows = load_runs(path);
    if (!rows.ok()) {
        return report_bad_file(path, rows.errors());
    }
    ValidationOptions options;
    options.subset = args->value("--subset").value_or("");
    if (!options.subset.empty() && std::none_of(rows->begin(), rows->end(), [&](const RunRow& r) { return r.subset == options.subset; })) {
        return report_bad_input("--subset " + options.subset + ": no row of " + path + " belongs to it");
    }
    const auto profiles = load_profiles_for_rows(*rows, args->value("--profile-dir"));
    ValidationOptions run_options = options;
    if (args->value("--threads")) {
        const std::string bad = whole_option(*args, "--threads", 1, static_cast<int>(kMaxThreads), run_options.threads);
        if (!bad.empty()) {
            return report_bad_input(bad);
        }
    }
    std::optional<CvGrouping> cv;
    GroupedValidationOptions grouped;
    if (const auto by = args->value("--cv")) {
        cv = cv_grouping_from_string(*by);
        if (!cv) {
            return report_bad_input("--cv: \"" + json_fields::bounded(*by, 40) + "\" is none of source, gpu, family, release");
        }
        grouped.by = *cv;
        grouped.threads = run_options.threads;
        for (const std::string& bad :
             {whole_option(*args, "--cv-evals", 1, 100'000, grouped.max_evaluations), whole_option(*args, "--cv-starts", 1, 64, grouped.starts)}) {
            if (!bad.empty()) {
                return report_bad_input(bad);
            }
        }
        grouped.progress = [](const std::string& line) { std::cerr << "cv: " << line << '\n'; };
    } else if (args->value("--cv-evals") || args->value("--cv-starts")) {
        return report_bad_input(std::string(args->value("--cv-evals") ? "--cv-evals" : "--cv-starts") + " needs --cv");
    }
    GroupedValidationReport held_out;
    if (cv) {
        held_out = validate_grouped(*rows, profiles, run_options, grouped);
    }
    const ValidationReport report = cv ? held_out.report : validate_runs(*rows, profiles, run_options);
    if (const auto svg = args->value("--svg")) {
        if (!write_text_file(*svg, scatter_svg(report), error)) {
            return report_write_failure(error);
        }
    }
    if (const auto dir = args->value("--scenarios")) {
        // The folder named is created; missing parents are not (the rule of every output).
        std::error_code ec;
        std::filesystem::create_directory(*dir, ec);
        if (ec) {
            return report_write_failure("--scenarios: cannot create " + *dir + ": " + ec.message());
        }
        for (const RunRow& r : *rows) {
            if (!options.subset.empty() && r.subset != options.subset) {
                continue;
            }
            const RowMapping m = map_run(r);
            if (!m.run) {
                continue;
            }
            const auto file_name = file_name_of_id(r.id);
            if (!file_name) {
                return report_bad_input("row \"" + json_fields::bounded(r.id) +
                                        "\".id: is not a file name (--scenarios writes DIR/ID.json; an id "
                                        "of letters, digits, '.', '-', '_' and '+', not starting with '.', is)");
            }
            // The candidate at the centre of the row's range (the first one when it cannot be predicted).
            Scenario scenario = m.run->scenario;
            scenario.plan = m.run->plan;
            std::string which;
            const auto profile = profiles.find(m.run->profile_id);
            std::string reason;
            if (profile != profiles.end() && m.run->candidates.size() > 1) {
                if (const auto range = predict_range(*m.run, profile->second, reason)) {
                    const RunCandidate& c = m.run->candidates[range->central_indices.front()];
                    scenario = c.scenario;
                    scenario.plan = c.plan;
                    which = " The settings the row leaves open are those of the centre of its range: " + c.label + ".";
                }
            }
            nlohmann::json j = scenario_to_json(scenario);
            std::string description = "Row " + r.id + " of " + path + " as vtrain validate models it." + which;
            for (const auto& n : m.run->notes) {
                description += " " + n + ".";
            }
            j["description"] = description;
            if (!write_text_file(std::filesystem::path(*dir) / *file_name, output_json(j, 2) + "\n", error)) {
                return report_write_failure(error);
            }
        }
    }
    if (args->flag("--json")) {
        std::cout << output_json(cv ? grouped_validation_to_json(held_out, *cv) : validation_to_json(report), 1) << '\n';
        return kExitOk;
    }
    if (cv) {
        int refits = 0, priors = 0;
        for (const HeldOutFit& f : held_out.fits) {
            (f.prior ? priors : refits) += 1;
        }
        std::cout << "held out by " << to_string(*cv) << ": every row predicted by a calibration that did not see its " << to_string(*cv) << " ("
                  << refits << " refits, " << priors << " profiles left at their datasheet prior; " << fmt("%.1f", held_out.seconds) << " s)\n\n";
    }
    print_table(std::cout, report);
    if (args->flag("--rows")) {
        print_rows(std::cout, report);
    }
    return kExitOk;
}

} // namespace vtrain::cli
