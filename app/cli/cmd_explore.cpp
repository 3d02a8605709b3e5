// SPDX-License-Identifier: MIT
// vtrain explore: sweep a scenario's plan space, print the summary, the (time, cost) Pareto front and
// the best plans; stream every feasible row to CSV.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "explore_command.h"
#include "explore_csv.h"
#ifdef VTRAIN_WITH_MPI
#include "mpi/mpi_explore.h"
#endif
#include "vtrain/explorer.h"
#include "vtrain/explorer_io.h"
#include "vtrain/json_fields.h"
#include "vtrain/scenario_json.h"
#include "vtrain/simulator.h"
#include "vtrain/uncertainty.h"

namespace vtrain::cli {

#ifdef VTRAIN_WITH_MPI
#define VTRAIN_EXPLORE_MPI_HELP                                                                                                                      \
    "\nUnder mpirun or srun (this build has MPI), the sweep is split over the ranks by estimated work (a pruned\n"                                   \
    "sweep without --csv: the ranks also take work from each other as they go) and merged exactly: the front,\n"                                     \
    "the top-K lists and the CSV equal a single process's. Rank 0 prints and writes --csv/--json; --threads\n"                                       \
    "is per rank. A rank that fails ends the whole run with a non-zero status (see docs/mpi.md).\n"                                                  \
    "  --csv-parts DIR          instead of --csv: each rank writes DIR/plans-RANK.csv, rank 0 then writes\n"                                         \
    "                           DIR/manifest.json (rows, bytes, checksum per part) once all parts are written\n"                                     \
    "  mpirun -n 64 vtrain explore big-study.json --csv plans.csv\n"
#else
#define VTRAIN_EXPLORE_MPI_HELP ""
#endif

const char* const kExploreHelp = R"(usage: vtrain explore SCENARIO.json [--csv PLANS.csv] [--json SUMMARY.json] [--threads N] [--top K]
                      [--prune bound|none] [--allow-tp-across-nodes]

Enumerates every plan of the scenario's "search" block (tp, cp, pp, ep, etp, micro_batch, schedule,
virtual_stages, recompute, sequence_parallel, zero_stage, precision, tp_overlap, moe_overlap,
overlap_grad_reduce, rank_order, offload_optimizer, offload_activations, num_gpus, gpu; dp follows from
the GPU count; a pp x v that does not divide the layers is tried with a few standard layouts: embedding
and loss counted as layers, lighter end stages, DeepSeek-V3's light last stage), rejects each illegal one with its reason, bounds out the plans that
provably cannot reach the front or a top-K list, simulates the rest in parallel and prints: how many
plans were enumerated, simulated, bounded out and rejected (by reason, with an example), the Pareto front
of (training time, cost), and the top K plans by training time, by cost and by MFU. When the scenario
also has a "plan", it is placed against the front. Lists the search leaves out take their defaults
(see docs/case-studies.md).

options:
  --csv FILE               write every feasible plan, one row each, in enumeration order
  --json FILE              write the summary, the front and the top-K lists as JSON
  --threads N              worker threads (default: all cores); results do not depend on it
  --top K                  plans shown per objective (default 10)
  --prune bound|none       bound: skip plans whose lower bounds on time and cost (and upper bound on MFU)
                           cannot reach the front or a top-K list -- the front and the lists are the
                           same as without it (default, except with --csv); none: simulate every
                           feasible plan (brute force, for checking; the default with --csv, which then
                           holds every feasible plan; --csv with --prune bound holds the simulated ones)
  --allow-tp-across-nodes  let tensor parallelism span nodes (default: tp stays within a node)

A search of more than 10^12 plans, 2^32 plan groups or 4,194,304 pipeline shapes (pp x virtual stages)
is refused with its size. Ctrl-C stops the sweep within half a second and prints what was evaluated so
far, marked CANCELLED (exit status 130); a second Ctrl-C ends at once.
exit status: 0 on success, 2 on bad input (the message names the field and why), 130 when cancelled.

example:
  vtrain explore examples/mt-nlg-530b.json --csv plans.csv --threads 2
)" VTRAIN_EXPLORE_MPI_HELP;

namespace {

std::atomic<bool>* g_cancel = nullptr;

extern "C" void on_interrupt(int)
{
    if (g_cancel != nullptr && !g_cancel->load()) {
        g_cancel->store(true); // lock-free: safe in a signal handler
        return;
    }
    // A second Ctrl-C (or one with no sweep to stop) ends the process at once, as without the handler.
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
}

std::string grouped(std::uint64_t v)
{
    const std::string digits = std::to_string(v);
    std::string out;
    out.reserve(digits.size() + digits.size() / 3);
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) {
            out.push_back(',');
        }
        out.push_back(digits[i]);
    }
    return out;
}

std::string fixed(double v, int decimals)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
    return buffer;
}

std::string money(double usd)
{
    std::string out(1, '$');
    out += usd >= 1e6 ? fixed(usd / 1e6, 2) + 'M' : grouped(static_cast<std::uint64_t>(usd + 0.5));
    return out;
}

std::optional<int> whole_number(const std::string& text, int min)
{
    try {
        std::size_t used = 0;
        const long long v = std::stoll(text, &used);
        if (used != text.size() || v < min || v > 1'000'000) {
            return std::nullopt;
        }
        return static_cast<int>(v);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

void print_rows(std::ostream& out, const std::vector<PlanRow>& rows)
{
    char line[320];
    std::snprintf(line, sizeof line, "  %-52s %6s %-16s %9s %15s %10s %6s %6s %7s %7s %9s\n", "plan", "GPUs", "GPU", "iter (s)", "band (s)",
                  "tokens/s", "MFU", "bubble", "mem GiB", "days", "cost");
    out << line;
    for (const auto& r : rows) {
        char band[40] = "-";
        if (r.iteration_time_high_s > r.iteration_time_low_s) {
            // "!": the wide default band of an uncalibrated profile (see the bands by GPU type).
            std::snprintf(band, sizeof band, "%.2f-%.2f%s", r.iteration_time_low_s, r.iteration_time_high_s, r.band_calibrated ? "" : "!");
        }
        std::snprintf(line, sizeof line, "  %-52s %6d %-16s %9.3f %15s %10.0f %5.1f%% %5.1f%% %7.1f %7.1f %9s%s\n", plan_row_label(r).c_str(),
                      r.num_gpus, r.gpu.c_str(), r.iteration_time_s, band, r.tokens_per_s, 100 * r.mfu, 100 * r.bubble_fraction, r.peak_memory_gib,
                      r.training_days, money(r.cost_usd).c_str(), r.on_front ? " *" : "");
        out << line;
    }
}

void print_summary(std::ostream& out, const Scenario& scenario, const ExploreResult& result, const std::string& workers)
{
    const double rate = result.elapsed_s > 0 ? result.evaluated / result.elapsed_s : 0;
    out << json_fields::printable(scenario.model.name) << ": " << grouped(result.total) << " plans enumerated, " << grouped(result.evaluated)
        << " evaluated in " << fixed(result.elapsed_s, 2) << " s on " << workers << " (" << grouped(static_cast<std::uint64_t>(rate)) << " plans/s)"
        << (result.cancelled ? "  -- CANCELLED" : "") << "\n";
    std::uint64_t rejected = 0;
    for (const auto n : result.rejected) {
        rejected += n;
    }
    out << "  feasible (simulated, fits in memory)  " << grouped(result.feasible) << "\n";
    out << "  bounded out (cannot reach the front)  " << grouped(result.bounded) << "\n";
    out << "  rejected                              " << grouped(rejected) << "\n";
    for (std::size_t i = 0; i < result.rejected.size(); ++i) {
        if (result.rejected[i] == 0) {
            continue;
        }
        char line[96];
        std::snprintf(line, sizeof line, "    %-34s %10s", to_string(static_cast<RejectReason>(i)), grouped(result.rejected[i]).c_str());
        out << line << "   e.g. " << result.example[i].to_string() << "\n";
    }
}

// Per GPU type of the sweep: whether its band is calibrated on measured runs or the uncalibrated default.
void print_bands(std::ostream& out, const std::map<std::string, GpuProfile>& profiles)
{
    out << "\nUncertainty band by GPU type (\"!\" in the band column: the uncalibrated default)\n";
    const PredictionBand fallback = default_uncalibrated_band();
    bool any_default = false;
    for (const auto& [id, profile] : profiles) {
        const PredictionBand band = prediction_band(profile).value_or(fallback);
        char line[128];
        std::snprintf(line, sizeof line, "  %-18s %-28s %-16s ", id.c_str(), band.calibrated ? "calibrated" : "UNCALIBRATED (default band)",
                      band_label(band).c_str());
        const bool is_default = !band.calibrated && band.source == fallback.source;
        any_default = any_default || is_default;
        out << line << (is_default ? "*" : band.source) << "\n";
    }
    if (any_default) {
        out << "  * " << fallback.source << "\n";
    }
}

nlohmann::json bands_to_json(const std::map<std::string, GpuProfile>& profiles)
{
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [id, profile] : profiles) {
        const PredictionBand band = prediction_band(profile).value_or(default_uncalibrated_band());
        j[id] = {{"calibrated", band.calibrated}, {"low", band.low}, {"high", band.high}, {"coverage", band.coverage}, {"source", band.source}};
    }
    return j;
}

// Where the scenario's own plan sits: its time and cost, and the front plans that cost less.
void print_baseline(std::ostream& out, const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const ExploreResult& result)
{
    if (!scenario.plan) {
        return;
    }
    const auto profile = profiles.find(scenario.cluster.gpu);
    if (profile == profiles.end()) {
        return;
    }
    SimulationOptions options;
    options.timeline = false;
    const auto sim = simulate(scenario, *scenario.plan, profile->second, options);
    PlanRow own;
    own.plan = *scenario.plan;
    own.precision = scenario.training.precision;
    out << "\nScenario plan " << plan_row_label(own) << " on " << scenario.cluster.num_gpus << " " << scenario.cluster.gpu << ": ";
    if (!sim.ok()) {
        out << "not simulated (" << sim.first_error() << ")\n";
        return;
    }
    out << fixed(sim->training_days, 1) << " days, " << money(sim->cost_usd) << (sim->fits_memory ? "" : " (does not fit in memory)") << "\n";
    int cheaper = 0;
    for (const auto& r : result.front) {
        if (r.cost_usd < sim->cost_usd) {
            if (cheaper++ == 0) {
                out << "  front plans that cost less (time and cost relative to it):\n";
            }
            char line[256];
            std::snprintf(line, sizeof line, "    %-52s %6d GPUs  %7.1f days (%+6.1f%%)  %9s (%+6.1f%%)\n", plan_row_label(r).c_str(), r.num_gpus,
                          r.training_days, 100 * (r.training_days / sim->training_days - 1), money(r.cost_usd).c_str(),
                          100 * (r.cost_usd / sim->cost_usd - 1));
            out << line;
        }
    }
    const bool dominated = std::any_of(result.front.begin(), result.front.end(), [&](const PlanRow& r) {
        return r.training_days <= sim->training_days && r.cost_usd <= sim->cost_usd &&
               (r.training_days < sim->training_days || r.cost_usd < sim->cost_usd);
    });
    out << "  " << (dominated ? "dominated: a front plan is at least as fast and as cheap" : "not dominated by the front") << "\n";
}

// Draws "[#####.....]  45%  12,345 / 27,000 plans" on stderr until stopped.
class ProgressBar {
public:
    explicit ProgressBar(const RunControl& control) : m_control(control), m_start(std::chrono::steady_clock::now()), m_thread([this] { loop(); }) {}
    ~ProgressBar()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        m_thread.join();
        std::fprintf(stderr, "\r%*s\r", 96, "");
    }

private:
    void loop()
    {
        std::unique_lock lock(m_mutex);
        while (!m_wake.wait_for(lock, std::chrono::milliseconds(200), [this] { return m_stop; })) {
            const auto total = m_control.total.load();
            const auto done = m_control.done.load();
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
            if (total == 0) {
                // Reading the search lists and laying out their pipeline shapes comes first (seconds at most).
                if (seconds >= 0.4) {
                    std::fprintf(stderr, "\rpreparing the plan space ...  %.0f s", seconds);
                    std::fflush(stderr);
                }
                continue;
            }
            const int width = 30;
            const int filled = static_cast<int>(width * static_cast<double>(done) / total);
            std::fprintf(stderr, "\r[%s%s] %3d%%  %s / %s plans  %.0f s", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                         std::string(static_cast<std::size_t>(width - filled), '.').c_str(), static_cast<int>(100.0 * done / total),
                         grouped(done).c_str(), grouped(total).c_str(), seconds);
            std::fflush(stderr);
        }
    }

    const RunControl& m_control;
    std::chrono::steady_clock::time_point m_start;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stop = false;
    std::thread m_thread;
};

} // namespace

namespace {
std::string thread_count(int threads)
{
    return std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}
} // namespace

int prepare_explore(const std::vector<std::string>& argv, const std::vector<std::string>& extra_value_options, ExploreRequest& request)
{
    std::string error;
    std::vector<std::string> with_value{"--csv", "--json", "--threads", "--top", "--prune"};
    with_value.insert(with_value.end(), extra_value_options.begin(), extra_value_options.end());
    auto args = parse_args(argv, with_value, {"--allow-tp-across-nodes"}, error);
    if (!args) {
        return report_bad_input(error);
    }
    if (args->positional.size() != 1) {
        return report_bad_input("explore takes one scenario file (see vtrain explore --help)");
    }
    ExploreOptions& options = request.options;
    options.top_k = 10;
    options.allow_tp_across_nodes = args->flag("--allow-tp-across-nodes");
    if (const auto bad = whole_option(*args, "--threads", 1, static_cast<int>(kMaxThreads), options.threads); !bad.empty()) {
        return report_bad_input(bad);
    }
    if (const auto k = args->value("--top")) {
        const auto n = whole_number(*k, 0);
        if (!n) {
            return report_bad_input("--top: \"" + *k + "\" is not a whole number >= 0");
        }
        options.top_k = static_cast<std::size_t>(*n);
    }

    // Pruning by default; a CSV promises every feasible plan, so with --csv only when asked for.
    options.prune = !args->value("--csv").has_value() && !args->value("--csv-parts").has_value();
    if (const auto p = args->value("--prune")) {
        if (*p != "bound" && *p != "none") {
            return report_bad_input("--prune: \"" + *p + "\" is not \"bound\" or \"none\"");
        }
        options.prune = *p == "bound";
    }

    request.path = args->positional[0];
    note_input(request.path);
    // The outputs are checked before the sweep (an input, a device or a folder is refused at once).
    for (const char* option : {"--json", "--csv"}) {
        if (const auto file = args->value(option)) {
            if (!check_output(*file, error)) {
                return report_write_failure(std::string(option) + ": " + error);
            }
        }
    }
    auto loaded = load_scenario(request.path);
    if (!loaded.ok()) {
        return report_bad_file(request.path, loaded.errors());
    }
    request.scenario = std::move(loaded).value();
    const Scenario& scenario = request.scenario;
    std::vector<std::string> ids{scenario.cluster.gpu};
    if (scenario.search) {
        ids.insert(ids.end(), scenario.search->gpu.begin(), scenario.search->gpu.end());
    }
    const ProfileLibrary library = profile_library();
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (request.profiles.count(ids[i]) != 0) {
            continue;
        }
        auto profile = library.load(ids[i]);
        if (!profile.ok()) {
            return report_bad_input(Diagnostics{{i == 0 ? "cluster.gpu" : "search.gpu", profile.errors().front().message}});
        }
        request.profiles.emplace(ids[i], std::move(profile).value());
    }
    request.args = std::move(*args);
    return kExitOk;
}

int report_explore(const ExploreRequest& request, const ExploreResult& result, const std::string& workers, const nlohmann::json& json_extra)
{
    const Scenario& scenario = request.scenario;
    std::ostream& out = std::cout;
    print_summary(out, scenario, result, workers);
    print_bands(out, request.profiles);
    out << "\nPareto front of (training time, cost): " << result.front.size() << " plan" << (result.front.size() == 1 ? "" : "s")
        << (result.cancelled ? " (of the plans evaluated before the cancel)" : "") << "\n";
    print_rows(out, result.front);
    if (request.options.top_k > 0 && result.feasible > 0) {
        out << "\nFastest " << result.fastest.size() << " (* = on the front)\n";
        print_rows(out, result.fastest);
        out << "\nCheapest " << result.cheapest.size() << "\n";
        print_rows(out, result.cheapest);
        out << "\nHighest MFU " << result.best_mfu.size() << "\n";
        print_rows(out, result.best_mfu);
    }
    print_baseline(out, scenario, request.profiles, result);
    out.flush();

    if (const auto file = request.args.value("--json")) {
        nlohmann::json j = explore_result_to_json(result);
        j["scenario"] = request.path;
        j["model"] = scenario.model.name;
        j["threads"] = result.threads;
        j["gpu_bands"] = bands_to_json(request.profiles);
        for (const auto& [key, value] : json_extra.items()) {
            j[key] = value;
        }
        std::string error;
        if (!write_text_file(*file, output_json(j, 2) + "\n", error)) {
            return report_write_failure(error);
        }
    }
    return kExitOk;
}

int run_explore(const std::vector<std::string>& argv)
{
#ifdef VTRAIN_WITH_MPI
    if (mpi::launched_by_mpi()) {
        return mpi::run_explore_mpi(argv);
    }
#endif
    ExploreRequest request;
    if (const int status = prepare_explore(argv, {}, request); status != kExitOk) {
        return status;
    }
    const ExploreOptions& options = request.options;

    std::optional<CsvWriter> csv;
    if (const auto file = request.args.value("--csv")) {
        csv.emplace(*file);
        std::string error;
        if (!csv->open(error)) {
            return report_write_failure("--csv: " + error);
        }
    }
    RowSink sink;
    if (csv) {
        sink = [&csv](const PlanRow& row) { csv->write(row); };
    }

    RunControl control;
    g_cancel = &control.cancel;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    struct sigaction previous {};
    sigaction(SIGINT, &action, &previous);

    Expected<ExploreResult> result = Diagnostic{"", "not run"};
    {
        std::optional<ProgressBar> bar;
        if (isatty(STDERR_FILENO) != 0) {
            bar.emplace(control);
        }
        result = explore(request.scenario, request.profiles, options, control, sink);
    }
    sigaction(SIGINT, &previous, nullptr);
    g_cancel = nullptr;
    if (!result.ok()) {
        return report_bad_input(result.errors());
    }

    // The report first (as the user waits for it), then the CSV, then the JSON.
    const int report_status = report_explore(request, *result, thread_count(result->threads), nlohmann::json::object());
    int status = result->cancelled ? 130 : kExitOk;
    std::string error;
    if (csv && !csv->finish(result->front, error)) {
        report_write_failure(error);
        status = status == kExitOk ? kExitFailure : status;
    }
    return status == kExitOk ? report_status : status;
}

} // namespace vtrain::cli
