// SPDX-License-Identifier: MIT
#include "vtrain/calibration.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>

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
        m_arena.execute([&] {
            tbb::parallel_for(std::size_t{0}, which.size(), [&](std::size_t i) {
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

const std::vector<CalibrationParameter>& calibration_parameters()
{
    // Every range is what the hardware and the software can physically do, so that a fit that hits a
    // bound says the cost model is off somewhere else rather than reporting an impossible efficiency.
    static const std::vector<CalibrationParameter> list{
        {"gemm_max_efficiency", 0.5, 0.9, false, "fraction of peak", true,
         "large BF16/FP16 GEMMs: at most 0.9 of the dense datasheet peak, which assumes the boost clock that GEMMs do not hold "
         "under the power limit (cuBLAS ~86% on A100, ~72% on H100 SXM: profiles/specs/a100-sxm4-80gb.json, "
         "profiles/datasheets/h100-sxm5-80gb.json); at least 0.5, since Megatron-LM itself reaches 52% of A100 peak end to end "
         "(163 of 312 TFLOP/s, Narayanan et al. SC'21 Table 1)"},
        {"gemm_max_efficiency_fp8", 0.4, 0.8, false, "fraction of the FP8 peak", true,
         "DeepGEMM's best dense FP8 GEMMs reach 1,426 of 1,979 TFLOP/s (72%) on H800 and Megatron's MXFP8 grouped GEMM 2,672 of "
         "5,000 (53%) on GB200 (shared/research/modern-training.md section 10.1): 0.8 leaves room for better kernels, 0.4 for "
         "smaller shapes and the quantisation around the GEMM"},
        {"gemm_max_efficiency_fp4", 0.3, 0.8, false, "fraction of the FP4 peak", true,
         "no public FP4 training-GEMM rate: at most the FP8 ceiling (the fixed per-tile work does not shrink with the element "
         "size), at least 0.3"},
        {"gemm_k_half", 1, 512, true, "elements", true,
         "GEMM main loops pipeline k-tiles of 32-128 elements, so half speed is reached within a few k-tiles"},
        {"gemm_fixed_us", 0.5, 20, true, "us", true, "prologue and epilogue of one GEMM kernel: microseconds, as a kernel launch"},
        {"flash_forward_efficiency", 0.25, 0.75, false, "fraction of peak", true,
         "FlashAttention-2 forward reaches 50-73% of A100 peak (Dao 2023, arXiv 2307.08691), FlashAttention-3 up to 75% of "
         "H100's (740 TFLOP/s FP16, Shah et al. 2024, arXiv 2407.08608)"},
        {"flash_backward_efficiency", 0.2, 0.65, false, "fraction of peak", true,
         "the backward pass runs below the forward's rate in both FlashAttention-2 and -3 (same papers)"},
        {"memory_efficiency", 0.6, 0.95, false, "fraction of bandwidth", true,
         "streaming kernels cannot beat the HBM datasheet rate; refresh and protocol overheads keep copies ~10% below it "
         "(0.85 fitted on 1,573 A100 runs, profiles/specs/a100-sxm4-80gb.json)"},
        {"memory_half_bytes", 1e4, 1e8, true, "bytes", true, "tensor size at which a streaming kernel reaches half its bandwidth: 10 KB to 100 MB"},
        {"memory_fixed_us", 0.5, 20, true, "us", true, "fixed cost of one memory-bound kernel: microseconds, as a kernel launch"},
        {"kernel_launch_overhead_us", 1, 30, true, "us", true,
         "host gap between kernels: a CUDA launch takes a few microseconds, eager frameworks add tens (15 us fitted on A100)"},
        {"host_overhead_us", 1, 200, true, "us", true, "framework CPU time per operator (PyTorch eager dispatch: tens of microseconds)"},
        {"moe_host_op_us", 1, 200, true, "us", true,
         "CPU time per operator of a MoE layer's routed-expert section after the tokens-per-expert sync, where no CUDA graph "
         "captures it: one framework call (a TE GEMM or quantize, a permute), as host_overhead_us"},
        {"microbatch_overhead_us", 1, 10000, true, "us", true, "per micro-batch on the first and last stage (data loading, loss): up to 10 ms"},
        {"nic_efficiency", 0.45, 0.98, false, "fraction of line rate", true,
         "nccl-tests reach 46-49 GB/s on a 400 Gb/s NIC (0.92-0.98, modern-training.md section 10 item 9); inside training NCCL "
         "runs up to ~30% slower than alone (vTrain, shared/research/vtrain-method.md), hence the floor"},
        {"nvlink_bus_gbytes_per_s", 50, 240, false, "GB/s", true,
         "nccl-tests reach ~230 GB/s all-reduce bus bandwidth on 8 A100 (vTrain's trace/a100 LUT); calibration_parameters_for "
         "scales this range to the part's NVLink rate"},
        {"nvlink_base_latency_us", 1, 500, true, "us", false, "collective start-up latency inside a node"},
        {"inter_node_base_latency_us", 1, 1000, true, "us", false, "collective start-up latency across nodes"},
    };
    return list;
}

std::vector<CalibrationParameter> calibration_parameters_for(const GpuProfile& profile)
{
    std::vector<CalibrationParameter> list = calibration_parameters();
    // The datasheet's NVLink rate, as make-profile --from-datasheet records it.
    double bidirectional = 0;
    if (profile.source_details.is_object()) {
        const nlohmann::json* j = &profile.source_details;
        for (const char* key : {"figures", "datasheet", "scale_up", "gbytes_per_s_bidirectional"}) {
            if (j->is_object() && j->contains(key)) {
                j = &(*j)[key];
            } else {
                j = nullptr;
                break;
            }
        }
        if (j != nullptr && j->is_number()) {
            bidirectional = j->get<double>();
        }
    }
    for (auto& p : list) {
        if (p.name != "nvlink_bus_gbytes_per_s") {
            continue;
        }
        if (bidirectional > 0) {
            const double per_direction = bidirectional / 2;
            p.low = 0.5 * per_direction;
            p.high = 1.06 * per_direction;
            p.why = "NCCL's all-reduce bus bandwidth is bounded by the per-direction NVLink rate (" +
                    std::to_string(static_cast<int>(per_direction)) +
                    " GB/s from the datasheet), exceeded only by in-switch reduction (NVLink SHARP: ~476 of 450 GB/s on DGX H100, 1.06x, "
                    "nccl-tests issues #267/#290); 0.5x is a floor well below the 0.8x that datasheet profiles assume";
        } else {
            // Spec profiles without a datasheet rate: the generic range, widened to the profile's own value.
            p.high = std::max(p.high, 1.1 * profile.links.nvlink_bus_gbytes_per_s);
        }
    }
    return list;
}

double ParameterSet::get(const std::string& name) const
{
    const ModelParameters& m = model;
    if (name == "gemm_max_efficiency")
        return m.gemm_max_efficiency;
    if (name == "gemm_max_efficiency_fp8")
        return m.gemm_max_efficiency_fp8;
    if (name == "gemm_max_efficiency_fp4")
        return m.gemm_max_efficiency_fp4;
    if (name == "gemm_k_half")
        return m.gemm_k_half;
    if (name == "gemm_fixed_us")
        return m.gemm_fixed_us;
    if (name == "flash_forward_efficiency")
        return m.flash_forward_efficiency;
    if (name == "flash_backward_efficiency")
        return m.flash_backward_efficiency;
    if (name == "memory_efficiency")
        return m.memory_efficiency;
    if (name == "memory_half_bytes")
        return m.memory_half_bytes;
    if (name == "memory_fixed_us")
        return m.memory_fixed_us;
    if (name == "kernel_launch_overhead_us")
        return m.kernel_launch_overhead_us;
    if (name == "host_overhead_us")
        return m.host_overhead_us;
    if (name == "moe_host_op_us")
        return m.moe_host_op_us;
    if (name == "microbatch_overhead_us")
        return m.microbatch_overhead_us;
    if (name == "nic_efficiency")
        return nic_efficiency;
    if (name == "nvlink_bus_gbytes_per_s")
        return nvlink_bus_gbytes_per_s;
    if (name == "nvlink_base_latency_us")
        return nvlink_base_latency_us;
    if (name == "inter_node_base_latency_us")
        return inter_node_base_latency_us;
    return 0;
}

void ParameterSet::set(const std::string& name, double v)
{
    ModelParameters& m = model;
    if (name == "gemm_max_efficiency")
        m.gemm_max_efficiency = v;
    else if (name == "gemm_max_efficiency_fp8")
        m.gemm_max_efficiency_fp8 = v;
    else if (name == "gemm_max_efficiency_fp4")
        m.gemm_max_efficiency_fp4 = v;
    else if (name == "gemm_k_half")
        m.gemm_k_half = v;
    else if (name == "gemm_fixed_us")
        m.gemm_fixed_us = v;
    else if (name == "flash_forward_efficiency")
        m.flash_forward_efficiency = v;
    else if (name == "flash_backward_efficiency")
        m.flash_backward_efficiency = v;
    else if (name == "memory_efficiency")
        m.memory_efficiency = v;
    else if (name == "memory_half_bytes")
        m.memory_half_bytes = v;
    else if (name == "memory_fixed_us")
        m.memory_fixed_us = v;
    else if (name == "kernel_launch_overhead_us")
        m.kernel_launch_overhead_us = v;
    else if (name == "host_overhead_us")
        m.host_overhead_us = v;
    else if (name == "moe_host_op_us")
        m.moe_host_op_us = v;
    else if (name == "microbatch_overhead_us")
        m.microbatch_overhead_us = v;
    else if (name == "nic_efficiency")
        nic_efficiency = v;
    else if (name == "nvlink_bus_gbytes_per_s")
        nvlink_bus_gbytes_per_s = v;
    else if (name == "nvlink_base_latency_us")
        nvlink_base_latency_us = v;
    else if (name == "inter_node_base_latency_us")
        inter_node_base_latency_us = v;
}

nlohmann::json ParameterSet::to_json() const
{
    nlohmann::json j = model_parameters_to_json(model);
    j["nic_efficiency"] = nic_efficiency;
    j["nvlink_bus_gbytes_per_s"] = nvlink_bus_gbytes_per_s;
    j["nvlink_base_latency_us"] = nvlink_base_latency_us;
    j["inter_node_base_latency_us"] = inter_node_base_latency_us;
    return j;
}

HardwareSpec hardware_spec_of(const GpuProfile& p)
{
    HardwareSpec hw;
    hw.id = p.id;
    hw.name = p.name;
    hw.vendor = p.vendor;
    hw.memory_gib = p.memory_gib;
    hw.memory_reserve_gib = p.memory_reserve_gib;
    hw.memory_bandwidth_gbytes_per_s = p.memory_bandwidth_gbytes_per_s;
    hw.peak_tflops = p.peak_tflops;
    hw.sm_count = p.sm_count;
    hw.price_usd_per_gpu_hour = p.price_usd_per_gpu_hour;
    hw.price_source = p.price_source;
    hw.links = p.links;
    if (p.source_details.is_object() && p.source_details.contains("figures")) {
        hw.figures_sources = p.source_details["figures"];
    }
    return hw;
}

ParameterSet parameters_of(const GpuProfile& p)
{
    ParameterSet ps;
    if (p.source_details.is_object() && p.source_details.contains("model_parameters")) {
        const auto parsed = model_parameters_from_json(p.source_details["model_parameters"]);
        if (parsed.ok()) {
            ps.model = *parsed;
        }
    }
    ps.model.kernel_launch_overhead_us = p.kernel_launch_overhead_us;
    ps.model.host_overhead_us = p.host_overhead_us;
    ps.model.moe_host_op_us = p.moe_host_op_us;
    ps.model.microbatch_overhead_us = p.microbatch_overhead_us;
    ps.nic_efficiency = p.links.nic_efficiency;
    ps.nvlink_bus_gbytes_per_s = p.links.nvlink_bus_gbytes_per_s;
    ps.nvlink_base_latency_us = p.links.nvlink_base_latency_us;
    ps.inter_node_base_latency_us = p.links.inter_node_base_latency_us;
    return ps;
}

ParameterSet parameters_from_json(const nlohmann::json& j, ParameterSet base)
{
    if (!j.is_object()) {
        return base;
    }
    for (const auto& p : calibration_parameters()) {
        const auto it = j.find(p.name);
        if (it != j.end() && it->is_number()) {
            base.set(p.name, it->get<double>());
        }
    }
    return base;
}

ParameterSet prior_parameters_of(const GpuProfile& p)
{
    const ParameterSet own = parameters_of(p);
    if (p.calibration.is_object()) {
        const auto it = p.calibration.find("start_parameters");
        if (it != p.calibration.end() && it->is_object()) {
            return parameters_from_json(*it, own);
        }
    }
    return own;
}

GpuProfile build_profile(const HardwareSpec& hardware, const ParameterSet& ps)
{
    HardwareSpec hw = hardware;
    hw.links.nic_efficiency = ps.nic_efficiency;
    hw.links.nvlink_bus_gbytes_per_s = ps.nvlink_bus_gbytes_per_s;
    hw.links.nvlink_base_latency_us = ps.nvlink_base_latency_us;
    hw.links.inter_node_base_latency_us = ps.inter_node_base_latency_us;
    return make_modeled_profile(hw, ps.model);
}

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

} // namespace

Expected<CalibrationResult> calibrate(const std::vector<RunRow>& rows, const GpuProfile& start, const CalibrationOptions& options,
                                      const CalibrationProgress& progress)
{
    CalibrationResult result;
    const HardwareSpec hw = hardware_spec_of(start);
    // A calibrated profile is refitted from the prior it recorded, so that "before" is the datasheet estimate.
    result.start = prior_parameters_of(start);
    const GpuProfile start_profile = build_profile(hw, result.start);

    // Rows of this GPU (and of the chosen subsets) that can be predicted with the starting profile.
    std::vector<std::string> subset_names;
    std::vector<FitRow> fit;
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
                result.skipped.push_back(r.id + ": " + m.skipped_reason);
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
            result.skipped.push_back(r.id + ": not fitted, " + m.run->unscored_reason);
            continue;
        }
        std::string reason;
        const auto range = predict_range(*m.run, start_profile, reason);
        if (!range) {
            result.skipped.push_back(r.id + ": " + reason);
            continue;
        }
        std::vector<RunCandidate> centre;
        for (const std::size_t k : range->central_indices) {
            centre.push_back(m.run->candidates.empty() ? RunCandidate{m.run->scenario, m.run->plan, {}, 0} : m.run->candidates[k]);
        }
        auto it = std::find(subset_names.begin(), subset_names.end(), r.subset);
        if (it == subset_names.end()) {
            subset_names.push_back(r.subset);
            it = subset_names.end() - 1;
        }
        fit.push_back({&r, std::move(*m.run), std::move(centre), range->central_indices, static_cast<int>(it - subset_names.begin()), 0});
    }
    if (fit.empty()) {
        return Diagnostic{"--gpu", "no modeled row of the data maps to GPU profile \"" + json_fields::bounded(options.gpu) + "\"" +
                                       (options.precision.empty() ? std::string() : " with precision " + options.precision) +
                                       " (and the chosen subsets); " + std::to_string(result.skipped.size()) + " rows skipped"};
    }
    auto precision_of = [&](std::size_t i) { return std::string(to_string(fit[i].run.scenario.training.precision)); };
    // Folds: inside each subset, rows ordered by a hash of their id, dealt round-robin.
    const int folds = options.folds >= 2 ? options.folds : 0;
    if (folds > 0) {
        for (std::size_t s = 0; s < subset_names.size(); ++s) {
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
    }

    // Which parameters to fit: the requested ones (or every one fitted by default), of those the ones some
    // row is sensitive to, and a precision's GEMM efficiency only with enough rows of that precision.
    const std::vector<CalibrationParameter> bounded = calibration_parameters_for(start);
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
    const int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
    Evaluator evaluator(hw, fit, threads);
    std::vector<std::size_t> all(fit.size());
    std::iota(all.begin(), all.end(), 0);
    const auto base_errors = evaluator.errors(result.start, all);
    std::vector<const CalibrationParameter*> params;
    for (const auto* p : candidates) {
        const auto precisions = precisions_of_parameter(p->name);
        if (!precisions.empty()) {
            std::size_t rows_of = 0;
            for (std::size_t i = 0; i < fit.size(); ++i) {
                rows_of += std::find(precisions.begin(), precisions.end(), precision_of(i)) != precisions.end() ? 1 : 0;
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
            ParameterSet probe = result.start;
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
    for (const auto* p : params) {
        result.fitted_names.push_back(p->name);
    }

    auto fit_on = [&](const std::vector<std::size_t>& which, const std::string& stage, const ParameterSet* from = nullptr) {
        std::vector<double> x0;
        for (const auto* p : params) {
            x0.push_back(to_unit(*p, (from != nullptr ? *from : result.start).get(p->name)));
        }
        int count = 0;
        auto f = [&](const std::vector<double>& x) {
            ParameterSet ps = result.start;
            for (std::size_t i = 0; i < params.size(); ++i) {
                ps.set(params[i]->name, from_unit(*params[i], x[i]));
            }
            const double v = evaluator.objective(ps, which, subset_names, options.loss);
            ++count;
            if (progress && count % 20 == 0) {
                progress(stage, count, v);
            }
            return v;
        };
        const MinimizeResult m = multi_start_minimize(f, x0, options.max_evaluations, options.starts);
        ParameterSet ps = result.start;
        for (std::size_t i = 0; i < params.size(); ++i) {
            ps.set(params[i]->name, from_unit(*params[i], m.x[i]));
        }
        return std::pair{ps, m};
    };

    result.objective_start = evaluator.objective(result.start, all, subset_names, options.loss);
    const auto [fitted, minimum] = fit_on(all, "fit on all rows");
    result.fitted = fitted;
    result.objective_fitted = minimum.value;
    result.evaluations = minimum.evaluations;
    if (options.from_previous && start.calibration.is_object() && start.calibration.contains("parameters")) {
        const ParameterSet previous = parameters_from_json(start.calibration["parameters"], result.start);
        const auto [again, again_min] = fit_on(all, "refit from the previous fit", &previous);
        result.evaluations += again_min.evaluations;
        if (again_min.value < result.objective_fitted) {
            result.fitted = again;
            result.objective_fitted = again_min.value;
            result.kept_previous = true;
        }
    }
    // A row's range centre was chosen under the starting profile; under the fitted one another candidate can
    // be the median (validate re-ranks with the shipped profile). Re-rank with the fit and refit from it until
    // no centre moves (a bounded number of times: a row whose two middle candidates swap with each refit
    // would never settle), so that the in-sample figures are the ones validate reports.
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
        const auto [refit, refit_min] = fit_on(all, "refit after " + std::to_string(result.centres_moved) + " range centres moved", &previous);
        result.fitted = refit;
        result.objective_fitted = refit_min.value;
        result.evaluations += refit_min.evaluations;
        ++result.centre_refreshes;
    }
    for (const auto* p : params) {
        const double u = to_unit(*p, result.fitted.get(p->name));
        if (u < 0.005 || u > 0.995) {
            result.at_bound.push_back(p->name + (u < 0.5 ? " (low)" : " (high)"));
        }
    }

    const auto in_sample = evaluator.errors(result.fitted, all);
    std::vector<double> cv(fit.size(), 0.0);
    for (int k = 0; k < folds; ++k) {
        std::vector<std::size_t> train, test;
        for (std::size_t i = 0; i < fit.size(); ++i) {
            (fit[i].fold == k ? test : train).push_back(i);
        }
        if (test.empty() || train.empty()) {
            continue;
        }
        const auto [fold_fit, fold_min] = fit_on(train, "cross-validation fold " + std::to_string(k + 1) + "/" + std::to_string(folds));
        const auto e = evaluator.errors(fold_fit, test);
        CalibrationFold f;
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

    std::map<std::string, std::vector<double>> start_by, in_by, cv_by, start_prec, in_prec, cv_prec;
    std::map<std::string, int> metrics_used;
    for (std::size_t i = 0; i < fit.size(); ++i) {
        const std::string& s = subset_names[fit[i].subset];
        const std::string precision = precision_of(i);
        result.rows.push_back({fit[i].row->id, s, precision, to_string(fit[i].run.metric), fit[i].run.measured, base_errors[i], in_sample[i], cv[i]});
        ++metrics_used[to_string(fit[i].run.metric)];
        for (const std::string& key : {s, std::string("all")}) {
            start_by[key].push_back(base_errors[i]);
            in_by[key].push_back(in_sample[i]);
            cv_by[key].push_back(cv[i]);
        }
        start_prec[precision].push_back(base_errors[i]);
        in_prec[precision].push_back(in_sample[i]);
        cv_prec[precision].push_back(cv[i]);
    }
    result.start_error = stats_by(start_by);
    result.in_sample = stats_by(in_by);
    result.start_by_precision = stats_by(start_prec);
    result.in_sample_by_precision = stats_by(in_prec);
    if (folds > 0) {
        result.cross_validated = stats_by(cv_by);
        result.cross_validated_by_precision = stats_by(cv_prec);
    }

    // The calibration block recorded in the profile.
    nlohmann::json& c = result.calibration_block;
    c["method"] = std::string("vtrain calibrate: Nelder-Mead on the unit cube of the bounded parameters (log scale for sizes and overheads)") +
                  (options.starts > 1 ? ", from the prior and " + std::to_string(options.starts - 1) + " Halton points, the best polished" : "") +
                  (result.kept_previous ? "; the fit on all rows refitted from the previous fit, which ended lower (folds from the prior)" : "");
    c["objective"] = options.loss == CalibrationLoss::SquaredLog
                         ? "mean over subsets of the mean squared log error ln(predicted / measured)^2 of each row's scored metric"
                         : "mean over subsets of the mean absolute log error |ln(predicted / measured)| of each row's scored metric";
    c["gpu"] = options.gpu;
    if (!options.precision.empty()) {
        c["precision"] = options.precision;
    }
    if (!options.min_trust.empty()) {
        c["min_trust"] = options.min_trust;
    }
    c["metrics"] = metrics_used;
    nlohmann::json used = nlohmann::json::object();
    for (const auto& [s, e] : in_by) {
        if (s != "all") {
            used[s] = e.size();
        }
    }
    c["rows_used"] = used;
    nlohmann::json used_precision = nlohmann::json::object();
    for (const auto& [p, e] : in_prec) {
        used_precision[p] = e.size();
    }
    c["rows_used_by_precision"] = used_precision;
    c["rows_skipped"] = result.skipped.size();
    nlohmann::json fitted_json = nlohmann::json::object();
    nlohmann::json bounds = nlohmann::json::object();
    nlohmann::json why = nlohmann::json::object();
    for (const auto* p : params) {
        fitted_json[p->name] = result.fitted.get(p->name);
        bounds[p->name] = {p->low, p->high};
        why[p->name] = p->why;
    }
    c["parameters"] = fitted_json;
    c["bounds"] = bounds;
    c["bounds_why"] = why;
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
            fold_results.push_back({{"fold", f.fold + 1},
                                    {"train_rows", f.train_rows},
                                    {"test_rows", f.test_rows},
                                    {"objective_train", f.objective_train},
                                    {"evaluations", f.evaluations},
                                    {"parameters", fitted_fold},
                                    {"held_out", stats_map_to_json(f.held_out)}});
        }
        c["cross_validated_error"] = {{"folds", folds},
                                      {"by_subset", stats_map_to_json(result.cross_validated)},
                                      {"by_precision", stats_map_to_json(result.cross_validated_by_precision)},
                                      {"fold_results", fold_results}};
        band_source = std::to_string(folds) + "-fold cross-validation on " + std::to_string(fit.size()) + " measured runs";
    }
    band_source += ", every subset weighted equally";
    if (const auto band = band_from_errors(band_errors, band_weights, 0.8, band_source)) {
        c["band"] = band_to_json(*band, band_errors, band_weights);
    }
    return result;
}

} // namespace vtrain
