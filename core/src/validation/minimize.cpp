// SPDX-License-Identifier: MIT
// The calibration's objective and its bounded optimizers: Nelder-Mead on the unit cube, and several starts
// (the prior and Halton points) sharing one budget.
#include <algorithm>
#include <cmath>
#include <map>

#include "vtrain/calibration.h"

namespace vtrain {

double calibration_objective(const std::vector<std::string>& subsets, const std::vector<double>& log_errors, CalibrationLoss loss)
{
    std::map<std::string, std::pair<double, int>> by_subset;
    for (std::size_t i = 0; i < subsets.size() && i < log_errors.size(); ++i) {
        auto& [sum, n] = by_subset[subsets[i]];
        sum += loss == CalibrationLoss::SquaredLog ? log_errors[i] * log_errors[i] : std::abs(log_errors[i]);
        ++n;
    }
    if (by_subset.empty()) {
        return 0;
    }
    double total = 0;
    for (const auto& [name, s] : by_subset) {
        total += s.first / s.second;
    }
    return total / static_cast<double>(by_subset.size());
}

double prior_penalty(const CalibrationParameter& p, double value, double prior)
{
    if (!(p.prior_width > 0)) {
        return 0;
    }
    // A prior outside the range (a datasheet's 0 us overhead) is taken at the nearest bound.
    prior = std::clamp(prior, p.low, p.high);
    double z = 0;
    if (p.log_scale) {
        if (!(p.prior_width > 1) || !(value > 0)) {
            return 0;
        }
        z = std::log(value / prior) / std::log(p.prior_width);
    } else {
        z = (value - prior) / p.prior_width;
    }
    return 0.5 * z * z;
}

MinimizeResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0, int max_evaluations,
                           double initial_step)
{
    const std::size_t n = x0.size();
    MinimizeResult result;
    auto clamp = [](std::vector<double> x) {
        for (double& v : x) {
            v = std::clamp(v, 0.0, 1.0);
        }
        return x;
    };
    auto eval = [&](const std::vector<double>& x) {
        ++result.evaluations;
        return f(x);
    };
    x0 = clamp(x0);
    if (n == 0) {
        result.x = x0;
        result.value = eval(x0);
        return result;
    }
    double step = initial_step;
    std::vector<double> best_x = x0;
    double best_f = eval(x0);
    for (int restart = 0; restart < 3 && result.evaluations < max_evaluations; ++restart) {
        std::vector<std::vector<double>> simplex{best_x};
        std::vector<double> values{best_f};
        for (std::size_t i = 0; i < n; ++i) {
            std::vector<double> x = best_x;
            x[i] += x[i] + step <= 1.0 ? step : -step;
            x = clamp(x);
            simplex.push_back(x);
            values.push_back(eval(x));
        }
        while (result.evaluations < max_evaluations) {
            std::vector<std::size_t> order(n + 1);
            std::iota(order.begin(), order.end(), 0);
            std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
            const std::size_t best = order.front(), worst = order.back(), second = order[n - 1];
            double size = 0;
            for (std::size_t i = 0; i <= n; ++i) {
                for (std::size_t d = 0; d < n; ++d) {
                    size = std::max(size, std::abs(simplex[i][d] - simplex[best][d]));
                }
            }
            if (size < 1e-4 || values[worst] - values[best] < 1e-10 * (1 + std::abs(values[best]))) {
                break;
            }
            std::vector<double> centroid(n, 0.0);
            for (std::size_t i = 0; i <= n; ++i) {
                if (i != worst) {
                    for (std::size_t d = 0; d < n; ++d) {
                        centroid[d] += simplex[i][d] / n;
                    }
                }
            }
            auto along = [&](double t) {
                std::vector<double> x(n);
                for (std::size_t d = 0; d < n; ++d) {
                    x[d] = centroid[d] + t * (simplex[worst][d] - centroid[d]);
                }
                return clamp(x);
            };
            const auto xr = along(-1.0);
            const double fr = eval(xr);
            if (fr < values[best]) {
                const auto xe = along(-2.0);
                const double fe = eval(xe);
                if (fe < fr) {
                    simplex[worst] = xe;
                    values[worst] = fe;
                } else {
                    simplex[worst] = xr;
                    values[worst] = fr;
                }
            } else if (fr < values[second]) {
                simplex[worst] = xr;
                values[worst] = fr;
            } else {
                const bool outside = fr < values[worst];
                const auto xc = along(outside ? -0.5 : 0.5);
                const double fc = eval(xc);
                if (fc < std::min(fr, values[worst])) {
                    simplex[worst] = xc;
                    values[worst] = fc;
                } else {
                    for (std::size_t i = 0; i <= n; ++i) {
                        if (i == best) {
                            continue;
                        }
                        for (std::size_t d = 0; d < n; ++d) {
                            simplex[i][d] = simplex[best][d] + 0.5 * (simplex[i][d] - simplex[best][d]);
                        }
                        values[i] = eval(simplex[i]);
                    }
                }
            }
        }
        for (std::size_t i = 0; i <= n; ++i) {
            if (values[i] < best_f) {
                best_f = values[i];
                best_x = simplex[i];
            }
        }
        step *= 0.3; // restart around the best point with a smaller simplex
    }
    result.x = best_x;
    result.value = best_f;
    return result;
}

namespace {
// The radical inverse of i in a prime base: coordinate d of the i-th Halton point uses the d-th prime.
double radical_inverse(int i, int base)
{
    double value = 0, scale = 1.0 / base;
    for (; i > 0; i /= base, scale /= base) {
        value += (i % base) * scale;
    }
    return value;
}
} // namespace

MinimizeResult multi_start_minimize(const std::function<double(const std::vector<double>&)>& f, const std::vector<double>& x0, int max_evaluations,
                                    int starts)
{
    if (starts <= 1 || x0.empty()) {
        return nelder_mead(f, x0, max_evaluations);
    }
    static constexpr int kPrimes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97};
    // nelder_mead checks its budget once per step, which takes up to n + 2 evaluations: each run is given
    // that much less, so that the total stays within max_evaluations.
    const int margin = static_cast<int>(x0.size()) + 2;
    // Each start gets an equal share (at least one step); the polish of the best gets one share more.
    const int share = std::max(margin, max_evaluations / (starts + 1));
    MinimizeResult best;
    int used = 0;
    for (int s = 0; s < starts && (s == 0 || used + 2 * margin < max_evaluations); ++s) {
        std::vector<double> x = x0;
        if (s > 0) {
            for (std::size_t d = 0; d < x.size(); ++d) {
                x[d] = radical_inverse(s, kPrimes[d % std::size(kPrimes)]);
            }
        }
        const MinimizeResult r = nelder_mead(f, x, std::max(1, std::min(share, max_evaluations - used) - margin));
        used += r.evaluations;
        if (s == 0 || r.value < best.value) {
            best.x = r.x;
            best.value = r.value;
        }
    }
    if (used + 2 * margin < max_evaluations) {
        const MinimizeResult polished = nelder_mead(f, best.x, max_evaluations - used - margin, 0.05);
        used += polished.evaluations;
        if (polished.value <= best.value) {
            best.x = polished.x;
            best.value = polished.value;
        }
    }
    best.evaluations = used;
    return best;
}

} // namespace vtrain
