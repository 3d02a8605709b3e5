// SPDX-License-Identifier: MIT
// vtrain calibrate: the fit of a modeled profile's free parameters to measured runs, as named steps (see
// calibrate() at the end). The parameters and their bounds are calibration_parameters.cpp; the optimizers,
// minimize.cpp.
#include "vtrain/calibration.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <tuple>

#include "util/parallel.h"
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "validation/validation_detail.h"
#include "vtrain/json_fields.h"
#include "vtrain/uncertainty.h"

namespace vtrain {
namespace {

// Rows the fit uses: mapped, on the calibrated GPU, with a time or throughput metric.
struct FitRow {
    const RunRow* row = nullptr;
    MappedRun run;
    std::vector<RunCandidate> centre;        // the middle candidate(s) of the row's range
    std::vector<std::size_t> centre_indices; // their indices among the run's candidates
    int subset = 0;                          // index into the subset names
    int fold = 0;
};

std::uint64_t fnv1a(const std::string& s)
{
    std::uint64_t h = 1469598103934665603ULL;
    for (const unsigned char c : s) {
        h = (h ^ c) * 1099511628211ULL;
    }
    return h;
}

double to_unit(const CalibrationParameter& p, double v)
{
    v = std::clamp(v, p.low, p.high);
    if (p.log_scale) {
        return (std::log(v) - std::log(p.low)) / (std::log(p.high) - std::log(p.low));
    }
    return (v - p.low) / (p.high - p.low);
}

double from_unit(const CalibrationParameter& p, double u)
{
    u = std::clamp(u, 0.0, 1.0);
    if (p.log_scale) {
        return std::exp(std::log(p.low) + u * (std::log(p.high) - std::log(p.low)));
    }
    return p.low + u * (p.high - p.low);
}

nlohmann::json stats_to_json(const SubsetStats& s)
{
    auto r3 = [](double v) { return std::round(v * 1000) / 1000; };
    return {
        {"used", s.used}, {"mape_pct", r3(s.mape_pct)}, {"median_pct", r3(s.median_pct)}, {"max_pct", r3(s.max_pct)}, {"bias_pct", r3(s.bias_pct)}};
}

class Evaluator {
public:
    Evaluator(const HardwareSpec& hw, const std::vector<FitRow>& rows, int threads) : m_hw(hw), m_rows(rows), m_arena(threads) {}

    // Signed percentage errors of the given rows (indices into the fit rows) with a parameter set.
    std::vector<double> errors(const ParameterSet& ps, const std::vector<std::size_t>& which)
    {
        const GpuProfile profile = build_profile(m_hw, ps);
        std::vector<double> out(which.size(), 0.0);
        parallel::execute(m_arena, [&] {
            parallel::parallel_for(std::size_t{0}, which.size(), [&](std::size_t i) {
                const FitRow& r = m_rows[which[i]];
                double sum = 0;
                bool ok = true;
                for (const RunCandidate& c : r.centre) {
                    std::string reason;
                    const auto predicted = predict_candidate(r.run, c, profile, reason);
                    ok = ok && predicted.has_value();
                    sum += predicted.value_or(0);
                }
                const double predicted = sum / static_cast<double>(r.centre.size());
                out[i] = ok ? (predicted - r.run.measured) / r.run.measured * 100.0 : 1e6;
            });
        });
        return out;
    }

    double objective(const ParameterSet& ps, const std::vector<std::size_t>& which, const std::vector<std::string>& names, CalibrationLoss loss)
    {
        const auto e = errors(ps, which);
        std::vector<std::string> subsets;
        std::vector<double> logs;
        subsets.reserve(which.size());
        logs.reserve(which.size());
        for (std::size_t i = 0; i < which.size(); ++i) {
            subsets.push_back(names[m_rows[which[i]].subset]);
            logs.push_back(std::log(std::max(1e-6, 1 + e[i] / 100)));
        }
        ++m_evaluations;
        return calibration_objective(subsets, logs, loss);
    }

    int evaluations() const { return m_evaluations; }

private:
    const HardwareSpec& m_hw;
    const std::vector<FitRow>& m_rows;
    tbb::task_arena m_arena;
    int m_evaluations = 0;
};

} // namespace

namespace {

bool is_throughput(ValidationMetric m)
{
    return m == ValidationMetric::TokensPerSecPerGpu || m == ValidationMetric::TflopsPerGpu || m == ValidationMetric::MfuPct ||
           m == ValidationMetric::HfuPct;
}

// A row's error as the iteration time's: a throughput over-predicted by e means a time of 1 / (1 + e).
// The band multiplies predicted times, so it is built from these.
double time_error_pct(ValidationMetric m, double e)
{
    return is_throughput(m) ? 100.0 / (1 + e / 100) - 100 : e;
}

// The precisions whose rows identify a per-precision GEMM efficiency (empty: not a per-precision one).
std::vector<std::string> precisions_of_parameter(const std::string& name)
{
    if (name == "gemm_max_efficiency") {
        return {"bf16", "fp16"};
    }
    if (name == "gemm_max_efficiency_fp8") {
        return {"fp8"};
    }
    if (name == "gemm_max_efficiency_fp4") {
        return {"nvfp4"};
    }
    return {};
}

std::map<std::string, SubsetStats> stats_by(const std::map<std::string, std::vector<double>>& errors)
{
    std::map<std::string, SubsetStats> out;
    for (const auto& [key, e] : errors) {
        out[key] = error_statistics(e);
    }
    return out;
}

nlohmann::json stats_map_to_json(const std::map<std::string, SubsetStats>& stats)
{
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [key, st] : stats) {
        j[key] = stats_to_json(st);
    }
    return j;
}

// --- the steps of calibrate() -------------------------------------------------------------------------

// Step 1. The rows of this GPU (and of the chosen subsets, trust and precision) that the starting profile
// predicts, each with the centre of its range; the others are listed in `skipped`.
struct FitRows {
    std::vector<std::string> subset_names;
    std::vector<FitRow> rows;
};

FitRows select_fit_rows(const std::vector<RunRow>& rows, const GpuProfile& start_profile, const CalibrationOptions& options,
                        std::vector<std::string>& skipped)
{
    FitRows out;
    for (const RunRow& r : rows) {
        if (!options.subsets.empty() && std::find(options.subsets.begin(), options.subsets.end(), r.subset) == options.subsets.end()) {
            continue;
        }
        const int trust = !r.trust ? 0 : *r.trust == "high" ? 2 : *r.trust == "medium" ? 1 : 0;
        const int needed = options.min_trust == "high" ? 2 : options.min_trust == "medium" ? 1 : 0;
        if (trust < needed) {
            continue;
        }
        RowMapping m = map_run(r);
        if (!m.run) {
            // Counted only for rows of this GPU (the mapping stopped before choosing the profile).
            validation_detail::Notes ignored;
            if (r.gpu_type && validation_detail::gpu_profile_id(r, ignored) == options.gpu) {
                skipped.push_back(r.id + ": " + m.skipped_reason);
            }
            continue;
        }
        if (m.run->profile_id != options.gpu) {
            continue;
        }
        if (!options.precision.empty() && options.precision != to_string(m.run->scenario.training.precision)) {
            continue;
        }
        if (m.run->metric == ValidationMetric::PeakMemory || m.run->metric == ValidationMetric::OutOfMemory) {
            continue;
        }
        if (!m.run->unscored_reason.empty()) { // a documented software regression is not what the profile should learn
            skipped.push_back(r.id + ": not fitted, " + m.run->unscored_reason);
            continue;
        }
        std::string reason;
        const auto range = predict_range(*m.run, start_profile, reason);
        if (!range) {
            skipped.push_back(r.id + ": " + reason);
            continue;
        }
        std::vector<RunCandidate> centre;
        for (const std::size_t k : range->central_indices) {
            centre.push_back(m.run->candidates.empty() ? RunCandidate{m.run->scenario, m.run->plan, {}, 0} : m.run->candidates[k]);
        }
        auto it = std::find(out.subset_names.begin(), out.subset_names.end(), r.subset);
        if (it == out.subset_names.end()) {
            out.subset_names.push_back(r.subset);
            it = out.subset_names.end() - 1;
        }
        out.rows.push_back({&r, std::move(*m.run), std::move(centre), range->central_indices, static_cast<int>(it - out.subset_names.begin()), 0});
    }
    return out;
}

// Step 2. Folds: inside each subset, rows ordered by a hash of their id, dealt round-robin (random folds);
// or one fold per source (leave-one-source-out: rows of one source share model, release, cluster and recipe,
// so a random fold still sees a held-out row's siblings; the source as `validate --cv source` groups it). Returns the
// number of folds and, by source, their names.
int assign_folds(std::vector<FitRow>& fit, std::size_t subsets, int folds, bool by_source, std::vector<std::string>& fold_sources)
{
    if (by_source) {
        for (FitRow& r : fit) {
            const std::string source = validation_detail::source_group_of(*r.row);
            auto it = std::find(fold_sources.begin(), fold_sources.end(), source);
            if (it == fold_sources.end()) {
                fold_sources.push_back(source);
                it = fold_sources.end() - 1;
            }
            r.fold = static_cast<int>(it - fold_sources.begin());
        }
        return static_cast<int>(fold_sources.size());
    }
    for (std::size_t s = 0; s < subsets; ++s) {
        std::vector<std::size_t> members;
        for (std::size_t i = 0; i < fit.size(); ++i) {
            if (fit[i].subset == static_cast<int>(s)) {
                members.push_back(i);
            }
        }
        std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) { return fnv1a(fit[a].row->id) < fnv1a(fit[b].row->id); });
        for (std::size_t k = 0; k < members.size(); ++k) {
            fit[members[k]].fold = static_cast<int>(k % folds);
        }
    }
    return folds;
}

std::string precision_of(const FitRow& r)
{
    return to_string(r.run.scenario.training.precision);
}

// Step 3. Which parameters to fit: the requested ones (or every one fitted by default), of those the ones
// some row is sensitive to, and a precision's GEMM efficiency only with enough rows of that precision.
// `bounded` outlives the pointers returned.
Expected<std::vector<const CalibrationParameter*>> parameters_to_fit(const std::vector<CalibrationParameter>& bounded,
                                                                     const CalibrationOptions& options, Evaluator& evaluator,
                                                                     const std::vector<FitRow>& fit, const ParameterSet& start,
                                                                     const std::vector<double>& base_errors, CalibrationResult& result)
{
    auto bounded_parameter = [&](const std::string& name) -> const CalibrationParameter* {
        for (const auto& p : bounded) {
            if (p.name == name) {
                return &p;
            }
        }
        return nullptr;
    };
    std::vector<const CalibrationParameter*> candidates;
    for (const auto& name : options.parameters) {
        const auto* p = bounded_parameter(name);
        if (p == nullptr) {
            return Diagnostic{"--params", "unknown parameter \"" + json_fields::bounded(name) + "\""};
        }
        candidates.push_back(p);
    }
    if (options.parameters.empty()) {
        for (const auto& p : bounded) {
            if (p.fitted_by_default) {
                candidates.push_back(&p);
            }
        }
    }
    std::vector<std::size_t> all(fit.size());
    std::iota(all.begin(), all.end(), 0);
    std::vector<const CalibrationParameter*> params;
    for (const auto* p : candidates) {
        const auto precisions = precisions_of_parameter(p->name);
        if (!precisions.empty()) {
            std::size_t rows_of = 0;
            for (const FitRow& r : fit) {
                rows_of += std::find(precisions.begin(), precisions.end(), precision_of(r)) != precisions.end() ? 1 : 0;
            }
            if (rows_of < static_cast<std::size_t>(std::max(1, options.min_rows_per_precision))) {
                if (rows_of > 0 || !options.parameters.empty()) {
                    result.kept_for_lack_of_rows.push_back(p->name + ": " + std::to_string(rows_of) + " " + precisions.front() +
                                                           " rows (fewer than " + std::to_string(options.min_rows_per_precision) +
                                                           "), kept at the prior");
                }
                continue;
            }
        }
        // Sensitive when a row's prediction moves at either end of the range (a host overhead of 0 only
        // shows once it exceeds the GPU time, far from the start).
        bool sensitive = false;
        for (const double u : {0.0, 1.0}) {
            ParameterSet probe = start;
            probe.set(p->name, from_unit(*p, u));
            const auto e = evaluator.errors(probe, all);
            for (std::size_t i = 0; i < e.size() && !sensitive; ++i) {
                sensitive = std::abs(e[i] - base_errors[i]) > 1e-6;
            }
            if (sensitive) {
                break;
            }
        }
        if (sensitive) {
            params.push_back(p);
        }
    }
    return params;
}

// Step 4. One fit of the chosen parameters on some rows, from the prior or from another set.
class Fitter {
public:
    Fitter(Evaluator& evaluator, const std::vector<const CalibrationParameter*>& params, const ParameterSet& prior,
           const std::vector<std::string>& subset_names, const CalibrationOptions& options, const CalibrationProgress& progress)
        : m_evaluator(evaluator), m_params(params), m_prior(prior), m_subset_names(subset_names), m_options(options), m_progress(progress)
    {
    }

    std::pair<ParameterSet, MinimizeResult> fit(const std::vector<std::size_t>& which, const std::string& stage,
                                                const ParameterSet* from = nullptr) const
    {
        std::vector<double> x0;
        for (const auto* p : m_params) {
            x0.push_back(to_unit(*p, (from != nullptr ? *from : m_prior).get(p->name)));
        }
        int count = 0;
        auto f = [&](const std::vector<double>& x) {
            const ParameterSet ps = at(x);
            const double v = m_evaluator.objective(ps, which, m_subset_names, m_options.loss) + penalty(ps);
            ++count;
            if (m_progress && count % 20 == 0) {
                m_progress(stage, count, v);
            }
            return v;
        };
        const MinimizeResult m = multi_start_minimize(f, x0, m_options.max_evaluations, m_options.starts);
        return std::pair{at(m.x), m};
    }

    const ParameterSet& prior() const { return m_prior; }

    // The MAP penalty of a parameter set against the prior (CalibrationOptions::prior_weight).
    double penalty(const ParameterSet& ps) const
    {
        if (!(m_options.prior_weight > 0)) {
            return 0;
        }
        double sum = 0;
        for (const auto* p : m_params) {
            sum += prior_penalty(*p, ps.get(p->name), m_prior.get(p->name));
        }
        return m_options.prior_weight * sum;
    }

private:
    // The prior with the fitted parameters at unit-cube point x.
    ParameterSet at(const std::vector<double>& x) const
    {
        ParameterSet ps = m_prior;
        for (std::size_t i = 0; i < m_params.size(); ++i) {
            ps.set(m_params[i]->name, from_unit(*m_params[i], x[i]));
        }
        return ps;
    }

    Evaluator& m_evaluator;
    const std::vector<const CalibrationParameter*>& m_params;
    const ParameterSet& m_prior;
    const std::vector<std::string>& m_subset_names;
    const CalibrationOptions& m_options;
    const CalibrationProgress& m_progress;
};

// Step 5. A row's range centre was chosen under the starting profile; under the fitted one another candidate
// can be the median (validate re-ranks with the shipped profile). Re-rank with the fit and refit from it until
// no centre moves (a bounded number of times: a row whose two middle candidates swap with each refit would
// never settle), so that the in-sample figures are the ones validate reports.
void refit_until_centres_settle(std::vector<FitRow>& fit, const HardwareSpec& hw, const Fitter& fitter, const std::vector<std::size_t>& all,
                                CalibrationResult& result)
{
    constexpr int kMaxCentreRefits = 4;
    for (int round = 0; round < kMaxCentreRefits; ++round) {
        const GpuProfile fitted_profile = build_profile(hw, result.fitted);
        result.centres_moved = 0;
        for (FitRow& r : fit) {
            std::string reason;
            const auto range = predict_range(r.run, fitted_profile, reason);
            if (!range || range->central_indices == r.centre_indices || r.run.candidates.empty()) {
                continue;
            }
            r.centre_indices = range->central_indices;
            r.centre.clear();
            for (const std::size_t k : r.centre_indices) {
                r.centre.push_back(r.run.candidates[k]);
            }
            ++result.centres_moved;
        }
        if (result.centres_moved == 0) {
            break;
        }
        const ParameterSet previous = result.fitted;
        const auto [refit, refit_min] = fitter.fit(all, "refit after " + std::to_string(result.centres_moved) + " range centres moved", &previous);
        result.fitted = refit;
        result.objective_fitted = refit_min.value;
        result.evaluations += refit_min.evaluations;
        ++result.centre_refreshes;
    }
}

// Step 6. Cross-validation: each fold refitted from the prior on the others (the prior itself where fewer
// than min_fit_rows rows are left, as grouped validation does); each row's held-out error.
std::vector<double> cross_validate(const std::vector<FitRow>& fit, const std::vector<std::string>& subset_names, int folds,
                                   const std::vector<std::string>& fold_sources, int min_fit_rows, Evaluator& evaluator, const Fitter& fitter,
                                   CalibrationResult& result)
{
    std::vector<double> cv(fit.size(), 0.0);
    for (int k = 0; k < folds; ++k) {
        std::vector<std::size_t> train, test;
        for (std::size_t i = 0; i < fit.size(); ++i) {
            (fit[i].fold == k ? test : train).push_back(i);
        }
        if (test.empty() || (train.empty() && fold_sources.empty())) {
            continue;
        }
        CalibrationFold f;
        const bool prior = !fold_sources.empty() && static_cast<int>(train.size()) < min_fit_rows;
        ParameterSet fold_fit = fitter.prior();
        MinimizeResult fold_min;
        if (!prior) {
            std::tie(fold_fit, fold_min) = fitter.fit(train, "cross-validation fold " + std::to_string(k + 1) + "/" + std::to_string(folds));
        }
        const auto e = evaluator.errors(fold_fit, test);
        f.prior = prior;
        f.source = static_cast<std::size_t>(k) < fold_sources.size() ? fold_sources[k] : std::string();
        f.fold = k;
        f.train_rows = static_cast<int>(train.size());
        f.test_rows = static_cast<int>(test.size());
        f.fitted = fold_fit;
        f.objective_train = fold_min.value;
        f.evaluations = fold_min.evaluations;
        std::map<std::string, std::vector<double>> held;
        for (std::size_t i = 0; i < test.size(); ++i) {
            cv[test[i]] = e[i];
            held[subset_names[fit[test[i]].subset]].push_back(e[i]);
            held["all"].push_back(e[i]);
        }
        f.held_out = stats_by(held);
        result.folds.push_back(std::move(f));
    }
    return cv;
}

// Step 7. Every row's error before, in sample and held out, and their statistics by subset and precision.
struct ErrorsBy {
    std::map<std::string, std::vector<double>> in_by_subset, in_by_precision;
    std::map<std::string, int> metrics_used;
};

ErrorsBy summarise_errors(const std::vector<FitRow>& fit, const std::vector<std::string>& subset_names, const std::vector<double>& base_errors,
                          const std::vector<double>& in_sample, const std::vector<double>& cv, bool cross_validated, CalibrationResult& result)
{
    ErrorsBy out;
    std::map<std::string, std::vector<double>> start_by, cv_by, start_prec, cv_prec;
    for (std::size_t i = 0; i < fit.size(); ++i) {
        const std::string& s = subset_names[fit[i].subset];
        const std::string precision = precision_of(fit[i]);
        result.rows.push_back({fit[i].row->id, s, precision, to_string(fit[i].run.metric), fit[i].run.measured, base_errors[i], in_sample[i], cv[i]});
        ++out.metrics_used[to_string(fit[i].run.metric)];
        for (const std::string& key : {s, std::string("all")}) {
            start_by[key].push_back(base_errors[i]);
            out.in_by_subset[key].push_back(in_sample[i]);
            cv_by[key].push_back(cv[i]);
        }
        start_prec[precision].push_back(base_errors[i]);
        out.in_by_precision[precision].push_back(in_sample[i]);
        cv_prec[precision].push_back(cv[i]);
    }
    result.start_error = stats_by(start_by);
    result.in_sample = stats_by(out.in_by_subset);
    result.start_by_precision = stats_by(start_prec);
    result.in_sample_by_precision = stats_by(out.in_by_precision);
    if (cross_validated) {
        result.cross_validated = stats_by(cv_by);
        result.cross_validated_by_precision = stats_by(cv_prec);
    }
    return out;
}

// Step 8. The calibration block recorded in the profile: method, rows, parameters with their bounds and
// reasons, errors, folds, and the uncertainty band every prediction with the profile shows.
nlohmann::json calibration_block(const CalibrationResult& result, const CalibrationOptions& options, const std::vector<FitRow>& fit,
                                 const std::vector<const CalibrationParameter*>& params, const ErrorsBy& errors, int folds)
{
    nlohmann::json c;
    c["method"] = std::string("vtrain calibrate: Nelder-Mead on the unit cube of the bounded parameters (log scale for sizes and overheads)") +
                  (options.starts > 1 ? ", from the prior and " + std::to_string(options.starts - 1) + " Halton points, the best polished" : "") +
                  (result.kept_previous ? "; the fit on all rows refitted from the previous fit, which ended lower (folds from the prior)" : "");
    c["objective"] =
        std::string(options.loss == CalibrationLoss::SquaredLog
                        ? "mean over subsets of the mean squared log error ln(predicted / measured)^2 of each row's scored metric"
                        : "mean over subsets of the mean absolute log error |ln(predicted / measured)| of each row's scored metric") +
        (options.prior_weight > 0 ? ", plus prior_weight x the sum of z^2 / 2 over the fitted parameters (MAP penalty towards the prior)" : "");
    if (options.prior_weight > 0) {
        c["prior_weight"] = options.prior_weight;
    }
    c["gpu"] = options.gpu;
    if (!options.precision.empty()) {
        c["precision"] = options.precision;
    }
    if (!options.min_trust.empty()) {
        c["min_trust"] = options.min_trust;
    }
    c["metrics"] = errors.metrics_used;
    nlohmann::json used = nlohmann::json::object();
    for (const auto& [s, e] : errors.in_by_subset) {
        if (s != "all") {
            used[s] = e.size();
        }
    }
    c["rows_used"] = used;
    nlohmann::json used_precision = nlohmann::json::object();
    for (const auto& [p, e] : errors.in_by_precision) {
        used_precision[p] = e.size();
    }
    c["rows_used_by_precision"] = used_precision;
    c["rows_skipped"] = result.skipped.size();
    nlohmann::json fitted_json = nlohmann::json::object();
    nlohmann::json bounds = nlohmann::json::object();
    nlohmann::json why = nlohmann::json::object();
    nlohmann::json widths = nlohmann::json::object();
    nlohmann::json widths_why = nlohmann::json::object();
    for (const auto* p : params) {
        fitted_json[p->name] = result.fitted.get(p->name);
        bounds[p->name] = {p->low, p->high};
        why[p->name] = p->why;
        if (p->prior_width > 0) {
            widths[p->name] = p->prior_width;
            widths_why[p->name] = p->prior_why;
        }
    }
    c["parameters"] = fitted_json;
    c["bounds"] = bounds;
    c["bounds_why"] = why;
    if (options.prior_weight > 0) {
        c["prior_widths"] = widths;
        c["prior_widths_why"] = widths_why;
    }
    c["at_bound"] = result.at_bound;
    if (!result.kept_for_lack_of_rows.empty()) {
        c["kept_at_prior"] = result.kept_for_lack_of_rows;
    }
    c["start_parameters"] = result.start.to_json();
    c["objective_start"] = result.objective_start;
    c["objective_fitted"] = result.objective_fitted;
    c["evaluations"] = result.evaluations;
    c["start_error"] = {{"by_subset", stats_map_to_json(result.start_error)}, {"by_precision", stats_map_to_json(result.start_by_precision)}};
    c["in_sample_error"] = stats_map_to_json(result.in_sample);
    c["in_sample_error_by_precision"] = stats_map_to_json(result.in_sample_by_precision);
    // The band weighs every subset the same (1,440 single-node rows would otherwise decide it alone). It
    // multiplies predicted iteration times, so throughput errors enter as the time errors they imply.
    std::vector<double> band_errors, band_weights;
    std::map<std::string, int> per_subset;
    for (const auto& r : result.rows) {
        ++per_subset[r.subset];
    }
    for (std::size_t i = 0; i < result.rows.size(); ++i) {
        const auto& r = result.rows[i];
        band_errors.push_back(time_error_pct(fit[i].run.metric, folds > 0 ? r.cv_error_pct : r.in_sample_error_pct));
        band_weights.push_back(1.0 / per_subset[r.subset]);
    }
    std::string band_source = "in-sample error on " + std::to_string(fit.size()) + " measured runs";
    if (folds > 0) {
        nlohmann::json fold_results = nlohmann::json::array();
        for (const auto& f : result.folds) {
            nlohmann::json fitted_fold = nlohmann::json::object();
            for (const auto* p : params) {
                fitted_fold[p->name] = f.fitted.get(p->name);
            }
            nlohmann::json entry = {{"fold", f.fold + 1},
                                    {"train_rows", f.train_rows},
                                    {"test_rows", f.test_rows},
                                    {"objective_train", f.objective_train},
                                    {"evaluations", f.evaluations},
                                    {"parameters", fitted_fold},
                                    {"held_out", stats_map_to_json(f.held_out)}};
            if (options.folds_by_source) {
                entry["source"] = f.source;
                entry["prior"] = f.prior;
            }
            fold_results.push_back(entry);
        }
        c["cross_validated_error"] = {{"folds", folds},
                                      {"grouping", options.folds_by_source ? "source" : "random (by a hash of the row id inside each subset)"},
                                      {"by_subset", stats_map_to_json(result.cross_validated)},
                                      {"by_precision", stats_map_to_json(result.cross_validated_by_precision)},
                                      {"fold_results", fold_results}};
        band_source = options.folds_by_source
                          ? "leave-one-source-out cross-validation (" + std::to_string(folds) + " source" + (folds == 1 ? "" : "s") +
                                "; a source left with fewer than " + std::to_string(options.min_fit_rows) + " rows to fit keeps the prior) on " +
                                std::to_string(fit.size()) + " measured runs"
                          : std::to_string(folds) + "-fold cross-validation on " + std::to_string(fit.size()) + " measured runs";
    }
    band_source += ", every subset weighted equally";
    if (const auto band = band_from_errors(band_errors, band_weights, 0.8, band_source)) {
        c["band"] = band_to_json(*band, band_errors, band_weights);
    }
    return c;
}

} // namespace

// The steps in order: rows, folds, parameters, the fit on all rows (and from the previous fit), range
// centres re-ranked under the fit, parameters on a bound, cross-validation, error statistics, the block.
Expected<CalibrationResult> calibrate(const std::vector<RunRow>& rows, const GpuProfile& start, const CalibrationOptions& options,
                                      const CalibrationProgress& progress)
{
    CalibrationResult result;
    const HardwareSpec hw = hardware_spec_of(start);
    // A calibrated profile is refitted from the prior it recorded, so that "before" is the datasheet estimate.
    result.start = prior_parameters_of(start);
    const GpuProfile start_profile = build_profile(hw, result.start);

    FitRows selected = select_fit_rows(rows, start_profile, options, result.skipped);
    std::vector<FitRow>& fit = selected.rows;
    const std::vector<std::string>& subset_names = selected.subset_names;
    if (fit.empty()) {
        return Diagnostic{"--gpu", "no modeled row of the data maps to GPU profile \"" + json_fields::bounded(options.gpu) + "\"" +
                                       (options.precision.empty() ? std::string() : " with precision " + options.precision) +
                                       " (and the chosen subsets); " + std::to_string(result.skipped.size()) + " rows skipped"};
    }
    std::vector<std::string> fold_sources;
    int folds = options.folds >= 2 || options.folds_by_source ? options.folds : 0;
    if (folds > 0 || options.folds_by_source) {
        folds = assign_folds(fit, subset_names.size(), folds, options.folds_by_source, fold_sources);
    }

    const std::vector<CalibrationParameter> bounded = calibration_parameters_for(start);
    const int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
    Evaluator evaluator(hw, fit, threads);
    std::vector<std::size_t> all(fit.size());
    std::iota(all.begin(), all.end(), 0);
    const auto base_errors = evaluator.errors(result.start, all);
    const auto chosen = parameters_to_fit(bounded, options, evaluator, fit, result.start, base_errors, result);
    if (!chosen.ok()) {
        return chosen.errors();
    }
    const std::vector<const CalibrationParameter*>& params = *chosen;
    for (const auto* p : params) {
        result.fitted_names.push_back(p->name);
    }

    const Fitter fitter(evaluator, params, result.start, subset_names, options, progress);
    result.objective_start = evaluator.objective(result.start, all, subset_names, options.loss);
    const auto [fitted, minimum] = fitter.fit(all, "fit on all rows");
    result.fitted = fitted;
    result.objective_fitted = minimum.value;
    result.evaluations = minimum.evaluations;
    if (options.from_previous && start.calibration.is_object() && start.calibration.contains("parameters")) {
        const ParameterSet previous = parameters_from_json(start.calibration["parameters"], result.start);
        const auto [again, again_min] = fitter.fit(all, "refit from the previous fit", &previous);
        result.evaluations += again_min.evaluations;
        if (again_min.value < result.objective_fitted) {
            result.fitted = again;
            result.objective_fitted = again_min.value;
            result.kept_previous = true;
        }
    }
    refit_until_centres_settle(fit, hw, fitter, all, result);
    for (const auto* p : params) {
        const double u = to_unit(*p, result.fitted.get(p->name));
        if (u < 0.005 || u > 0.995) {
            result.at_bound.push_back(p->name + (u < 0.5 ? " (low)" : " (high)"));
        }
    }

    const auto in_sample = evaluator.errors(result.fitted, all);
    const std::vector<double> cv = cross_validate(fit, subset_names, folds, fold_sources, options.min_fit_rows, evaluator, fitter, result);
    const ErrorsBy errors = summarise_errors(fit, subset_names, base_errors, in_sample, cv, folds > 0, result);
    result.calibration_block = calibration_block(result, options, fit, params, errors, folds);
    return result;
}

} // namespace vtrain
