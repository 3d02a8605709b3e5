// SPDX-License-Identifier: MIT
// Grouped validation: which rows each shipped fit used, which (group, fit) pairs therefore need a refit
// without the group, the refits (in parallel), and the held-out predictions through validate_runs().
#include "vtrain/grouped_validation.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>

#include "util/parallel.h"
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "validation/validation_detail.h"
#include "vtrain/json_fields.h"

namespace vtrain {
namespace {

const char* const kUnstated = "unstated";

// The profile id a calibrated profile's fit was made on (calibration.gpu), or "" when it was never fitted.
std::string fit_gpu_of(const GpuProfile& p)
{
    const nlohmann::json& c = p.calibration;
    if (!c.is_object() || !c.contains("parameters") || !c["parameters"].is_object() || !c.contains("gpu") || !c["gpu"].is_string()) {
        return "";
    }
    return c["gpu"].get<std::string>();
}

// The subsets whose rows the fit used (calibration.rows_used).
std::set<std::string> fitted_subsets(const GpuProfile& p)
{
    std::set<std::string> out;
    if (p.calibration.is_object() && p.calibration.contains("rows_used") && p.calibration["rows_used"].is_object()) {
        for (const auto& [subset, n] : p.calibration["rows_used"].items()) {
            out.insert(subset);
        }
    }
    return out;
}

// The options the profile's calibration records: its parameters, objective, precision and trust filters.
CalibrationOptions refit_options(const GpuProfile& fit, const GroupedValidationOptions& grouped)
{
    const nlohmann::json& c = fit.calibration;
    CalibrationOptions o;
    o.gpu = fit_gpu_of(fit);
    for (const auto& [name, value] : c["parameters"].items()) {
        o.parameters.push_back(name);
    }
    const std::string objective = c.contains("objective") && c["objective"].is_string() ? c["objective"].get<std::string>() : "";
    o.loss = objective.find("absolute") != std::string::npos ? CalibrationLoss::AbsoluteLog : CalibrationLoss::SquaredLog;
    if (c.contains("precision") && c["precision"].is_string()) {
        o.precision = c["precision"].get<std::string>();
    }
    if (c.contains("min_trust") && c["min_trust"].is_string()) {
        o.min_trust = c["min_trust"].get<std::string>();
    }
    if (c.contains("prior_weight") && c["prior_weight"].is_number()) {
        o.prior_weight = c["prior_weight"].get<double>();
    }
    // The subsets the shipped fit used (a refit is the same fit less the group's rows, never a wider one).
    const std::set<std::string> subsets = fitted_subsets(fit);
    o.subsets.assign(subsets.begin(), subsets.end());
    o.folds = 0;
    o.max_evaluations = grouped.max_evaluations;
    o.starts = grouped.starts;
    o.threads = grouped.threads;
    return o;
}

// `profile`'s prior with the fit's values of `fitted` (a fit made on another part of the same family keeps
// this part's hardware and its other parameters). It keeps the shipped profile's band: the band a user gets,
// whose coverage `validate --cv` reports (RowResult::in_range).
GpuProfile held_out_profile(const GpuProfile& profile, const ParameterSet* fitted, const std::vector<std::string>& names)
{
    ParameterSet ps = prior_parameters_of(profile);
    if (fitted != nullptr) {
        for (const std::string& name : names) {
            ps.set(name, fitted->get(name));
        }
    }
    GpuProfile p = build_profile(hardware_spec_of(profile), ps);
    p.id = profile.id;
    if (profile.calibration.is_object() && profile.calibration.contains("band")) {
        p.calibration = {{"band", profile.calibration["band"]}};
    }
    p.default_band = profile.default_band;
    return p;
}

// The software release a row names: the NeMo container, the torchtitan commit, else the software up to
// its first ';' (a release or a dated stack, "Megatron-LM (2022)").
std::string release_of(const RunRow& r)
{
    if (!r.software || r.software->empty()) {
        return kUnstated;
    }
    const std::string& s = *r.software;
    const auto word_after = [&s](std::size_t at) {
        std::size_t end = at;
        while (end < s.size() && s[end] != ' ' && s[end] != ',' && s[end] != ';' && s[end] != ')') {
            ++end;
        }
        return s.substr(at, end - at);
    };
    if (const auto nemo = s.find("NeMo "); nemo != std::string::npos) {
        return "NeMo " + word_after(nemo + 5);
    }
    if (const auto tt = s.find("torchtitan ");
        tt != std::string::npos && tt + 11 < s.size() && std::isxdigit(static_cast<unsigned char>(s[tt + 11]))) {
        return "torchtitan " + word_after(tt + 11);
    }
    return json_fields::bounded(s.substr(0, s.find(';')), 120);
}

} // namespace

const char* to_string(CvGrouping by)
{
    switch (by) {
    case CvGrouping::Source: return "source";
    case CvGrouping::Gpu: return "gpu";
    case CvGrouping::Family: return "family";
    case CvGrouping::Release: return "release";
    }
    return "source";
}

std::optional<CvGrouping> cv_grouping_from_string(const std::string& text)
{
    for (const CvGrouping by : {CvGrouping::Source, CvGrouping::Gpu, CvGrouping::Family, CvGrouping::Release}) {
        if (text == to_string(by)) {
            return by;
        }
    }
    return std::nullopt;
}

std::string cv_group_of(const RunRow& row, CvGrouping by)
{
    switch (by) {
    case CvGrouping::Source: return validation_detail::source_group_of(row);
    case CvGrouping::Family: return row.arch_family && !row.arch_family->empty() ? *row.arch_family : kUnstated;
    case CvGrouping::Release: return release_of(row);
    case CvGrouping::Gpu: {
        const RowMapping m = map_run(row);
        if (m.run) {
            return m.run->profile_id;
        }
        return row.gpu_type && !row.gpu_type->empty() ? json_fields::lowercase(*row.gpu_type) : kUnstated;
    }
    }
    return kUnstated;
}

GroupedValidationReport validate_grouped(const std::vector<RunRow>& rows, const std::map<std::string, GpuProfile>& profiles,
                                         const ValidationOptions& options, const GroupedValidationOptions& grouped)
{
    const auto started = std::chrono::steady_clock::now();
    GroupedValidationReport out;
    const int threads = grouped.threads > 0 ? grouped.threads : tbb::info::default_concurrency();
    tbb::task_arena arena(threads);

    // Each row's group and the profile it maps to.
    std::vector<std::string> group(rows.size()), profile_id(rows.size());
    parallel::execute(arena, [&] {
        parallel::parallel_for(std::size_t{0}, rows.size(), [&](std::size_t i) {
            group[i] = cv_group_of(rows[i], grouped.by);
            const RowMapping m = map_run(rows[i]);
            profile_id[i] = m.run ? m.run->profile_id : "";
        });
    });
    std::map<std::size_t, std::size_t> position; // RunRow::index -> position in `rows`
    for (std::size_t i = 0; i < rows.size(); ++i) {
        out.group_of_row[rows[i].id] = group[i];
        position[rows[i].index] = i;
    }

    // The (group, fit) pairs to refit: a group that holds rows the shipped fit used.
    struct Need {
        std::string group, fit;
        int train_rows = 0;
    };
    std::vector<Need> needs;
    for (const auto& [id, profile] : profiles) {
        if (fit_gpu_of(profile) != id) {
            continue; // not a fit of its own (derived from another profile's fit, or never fitted)
        }
        const std::set<std::string> subsets = fitted_subsets(profile);
        std::map<std::string, int> rows_of_group;
        int fitted_rows = 0;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (profile_id[i] == id && subsets.count(rows[i].subset) != 0) {
                ++rows_of_group[group[i]];
                ++fitted_rows;
            }
        }
        for (const auto& [g, n] : rows_of_group) {
            needs.push_back({g, id, fitted_rows - n});
        }
    }

    // The refits, in parallel (each fit's rows in parallel too, inside the same arena).
    out.fits.resize(needs.size());
    std::mutex progress_mutex;
    parallel::execute(arena, [&] {
        parallel::parallel_for(std::size_t{0}, needs.size(), [&](std::size_t k) {
            const Need& need = needs[k];
            const GpuProfile& fit = profiles.at(need.fit);
            HeldOutFit& f = out.fits[k];
            f.group = need.group;
            f.gpu = need.fit;
            f.train_rows = need.train_rows;
            f.parameters = prior_parameters_of(fit);
            f.prior = need.train_rows < grouped.min_fit_rows;
            if (!f.prior) {
                std::vector<RunRow> train;
                for (std::size_t i = 0; i < rows.size(); ++i) {
                    if (group[i] != need.group) {
                        train.push_back(rows[i]);
                    }
                }
                const auto result = calibrate(train, fit, refit_options(fit, grouped));
                if (result.ok()) {
                    f.parameters = result->fitted;
                    f.objective = result->objective_fitted;
                    f.train_rows = static_cast<int>(result->rows.size());
                    f.at_bound = result->at_bound;
                } else {
                    f.prior = true;
                }
            }
            if (grouped.progress) {
                const std::lock_guard<std::mutex> lock(progress_mutex);
                grouped.progress(need.fit + " without " + to_string(grouped.by) + " \"" + need.group + "\": " +
                                 (f.prior ? "datasheet prior (" + std::to_string(f.train_rows) + " rows left)"
                                          : "refitted on " + std::to_string(f.train_rows) + " rows"));
            }
        });
    });

    // Held-out profiles: every profile of each refitted fit, on its own hardware.
    std::map<std::pair<std::string, std::string>, GpuProfile> held_out; // (group, profile id)
    for (const HeldOutFit& f : out.fits) {
        const std::vector<std::string> names = refit_options(profiles.at(f.gpu), grouped).parameters;
        for (const auto& [id, profile] : profiles) {
            if (fit_gpu_of(profile) == f.gpu) {
                held_out.emplace(std::pair{f.group, id}, held_out_profile(profile, f.prior ? nullptr : &f.parameters, names));
            }
        }
    }
    const auto profile_for = [&](const RunRow& row, const std::string& id) -> const GpuProfile* {
        const auto at = position.find(row.index);
        if (at != position.end()) {
            const auto it = held_out.find({group[at->second], id});
            if (it != held_out.end()) {
                return &it->second;
            }
        }
        const auto it = profiles.find(id);
        return it == profiles.end() ? nullptr : &it->second;
    };
    out.report = validate_runs(rows, profile_for, options);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return out;
}

nlohmann::json grouped_validation_to_json(const GroupedValidationReport& report, CvGrouping by)
{
    nlohmann::json j = validation_to_json(report.report);
    nlohmann::json fits = nlohmann::json::array();
    for (const HeldOutFit& f : report.fits) {
        fits.push_back({{"group", f.group},
                        {"gpu", f.gpu},
                        {"train_rows", f.train_rows},
                        {"prior", f.prior},
                        {"objective", f.objective},
                        {"parameters", f.parameters.to_json()},
                        {"at_bound", f.at_bound}});
    }
    j["cv"] = {{"by", to_string(by)}, {"fits", fits}, {"seconds", report.seconds}};
    for (auto& row : j["rows"]) {
        if (row.contains("id") && row["id"].is_string()) {
            const auto it = report.group_of_row.find(row["id"].get<std::string>());
            if (it != report.group_of_row.end()) {
                row["cv_group"] = it->second;
            }
        }
    }
    return j;
}

} // namespace vtrain
