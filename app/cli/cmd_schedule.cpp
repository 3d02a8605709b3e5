// SPDX-License-Identifier: MIT
// vtrain schedule: one shared cluster receiving training jobs over time, under three policies.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli_common.h"
#include "cmd_study_progress.h"
#include "commands.h"
#include "vtrain/cluster_schedule.h"
#include "vtrain/cluster_schedule_curves.h"
#include "vtrain/cluster_schedule_json.h"
#include "vtrain/cluster_schedule_workload.h"

namespace vtrain::cli {

const char* const kScheduleHelp = R"(usage: vtrain schedule --gpu ID --gpus N [--jobs N] [--seed S] [--jobs-file FILE]
                       [--policy all|vtrain|fixed|elasticflow] [--window-hours H] [--restart-overhead-s S]
                       [--write-jobs FILE] [--threads N] [--json]

vTrain's multi-tenant cluster study: a discrete-event simulation of one cluster of N GPUs receiving
training jobs (a model, a token budget, an arrival and a deadline). Each distinct model's throughput
curve -- its fastest plan at every power-of-two GPU count up to N -- comes from the explorer, once.
Policies (all re-planned at every arrival and finish; see docs/case-studies.md):
  vtrain       simulator-informed: per job, allocation and plan from its simulated throughput curve
  fixed        the job's requested GPU count and best plan there; first come first served, backfilling
  elasticflow  elastic like vtrain, but assumes throughput grows linearly with GPUs and scales only dp
Printed per policy: deadline satisfaction ratio, average job completion time (JCT), makespan, GPU
utilisation (allocated GPU-hours over the makespan) and cluster MFU.

Jobs come from --jobs-file (a JSON job list, see examples/jobs-small.json) or from the seeded generator
(--jobs, --seed, --window-hours: preset models 1.3B..39.1B, arrivals uniform over the window, durations
4..48 h on the requested GPUs at the simulated best plan there, deadlines 0.8..2x that duration after
arrival; the header prints the offered load, requested GPU-hours over the window's).

options:
  --gpu ID                 GPU profile (see vtrain profiles)
  --gpus N                 GPUs in the cluster
  --jobs N                 generated jobs (default 64)
  --seed S                 generator seed (default 1)
  --window-hours H         generated arrivals spread over [0, H] hours (default 80)
  --jobs-file FILE         read the jobs from FILE instead of generating them
  --policy NAME            all (default), vtrain, fixed or elasticflow
  --restart-overhead-s S   pause when a job's allocation changes (default 60)
  --write-jobs FILE        also write the job list used (generated or read) as JSON
  --threads N              explorer threads (default: all cores; at most 1024)
  --json                   print the whole study as JSON (curves, metrics, per-job Gantt segments)
Ranges (outside them the option is refused): --gpus 1..1000000, --jobs 1..100000, --window-hours
0..87600, --restart-overhead-s 0..86400.

Progress goes to stderr when it is a terminal; Ctrl-C stops, prints what is done, marked CANCELLED
(exit status 130). exit status: 0 on success, 2 on bad input (the message names the option or the
job and field, e.g. "jobs[3].deadline_h: ...").

example:
  vtrain schedule --gpus 1024 --gpu a100-sxm4-80gb --jobs 64 --seed 1
)";

namespace {

std::string fixed(double v, int decimals)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
    return buffer;
}

struct Options {
    ScheduleRequest request;
    WorkloadOptions workload;
    std::optional<std::string> jobs_file;
    std::optional<std::string> write_jobs;
    double load = 0;                   // offered load of a generated workload
    std::uint64_t generator_plans = 0; // plans explored for the generator's curves (the study reuses them)
    double generator_s = 0;
};

std::string read_options(const Args& args, Options& o)
{
    ScheduleRequest& r = o.request;
    r.gpu = args.value("--gpu").value_or("");
    if (r.gpu.empty()) {
        return "--gpu: a GPU profile id is required (see vtrain profiles)";
    }
    const auto gpus = args.value("--gpus");
    if (!gpus) {
        return "--gpus: the cluster's number of GPUs is required";
    }
    long long seed = static_cast<long long>(o.workload.seed);
    for (const auto& e : {whole_option(args, "--gpus", 1, 1'000'000, r.num_gpus), whole_option(args, "--jobs", 1, 100'000, o.workload.jobs),
                          whole_option(args, "--seed", 0LL, 9'000'000'000'000'000'000LL, seed),
                          whole_option(args, "--threads", 1, static_cast<int>(kMaxThreads), r.threads),
                          number_option(args, "--window-hours", 0, 87'600, o.workload.window_hours),       // up to 10 years
                          number_option(args, "--restart-overhead-s", 0, 86'400, r.restart_overhead_s)}) { // up to a day
        if (!e.empty()) {
            return e;
        }
    }
    o.workload.seed = static_cast<std::uint64_t>(seed);
    if (const auto p = args.value("--policy"); p && *p != "all") {
        const auto policy = schedule_policy_from_string(*p);
        if (!policy) {
            return "--policy: \"" + *p + "\" is not all, vtrain, fixed or elasticflow";
        }
        r.policies = {*policy};
    }
    o.jobs_file = args.value("--jobs-file");
    if (o.jobs_file && (args.value("--jobs") || args.value("--seed") || args.value("--window-hours"))) {
        return "--jobs-file: cannot be combined with --jobs, --seed or --window-hours (those generate jobs)";
    }
    o.write_jobs = args.value("--write-jobs");
    return {};
}

void print_results(std::ostream& out, const ScheduleStudy& study, const Options& o)
{
    const ScheduleRequest& r = study.request;
    out << "Cluster: " << r.num_gpus << " x " << r.gpu << "; " << r.jobs.size() << " jobs";
    if (o.jobs_file) {
        out << " from " << *o.jobs_file;
    } else {
        out << " (seed " << o.workload.seed << ", arrivals over " << fixed(o.workload.window_hours, 0) << " h, offered load " << fixed(o.load, 2)
            << ")";
    }
    out << "; " << study.curves.size() << " throughput curves (" << study.plans_enumerated + o.generator_plans << " plans) in "
        << fixed(study.curves_elapsed_s + o.generator_s, 1) << " s; restart overhead " << fixed(r.restart_overhead_s, 0) << " s\n\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-12s %17s %12s %13s %9s %12s %9s\n", "policy", "deadlines met", "avg JCT (h)", "makespan (h)", "GPU util",
                  "cluster MFU", "restarts");
    out << line;
    for (const auto& p : study.results) {
        const int met = static_cast<int>(std::lround(p.deadline_satisfaction * r.jobs.size()));
        const std::string deadlines =
            std::to_string(met) + "/" + std::to_string(r.jobs.size()) + " (" + fixed(100 * p.deadline_satisfaction, 1) + "%)";
        std::snprintf(line, sizeof line, "  %-12s %17s %12.1f %13.1f %8.1f%% %11.1f%% %9d\n", to_string(p.policy), deadlines.c_str(), p.average_jct_h,
                      p.makespan_h, 100 * p.gpu_utilization, 100 * p.cluster_mfu, p.restarts);
        out << line;
        if (p.cancelled) {
            out << "      CANCELLED during this policy: metrics cover the jobs finished before the cancel\n";
        } else if (p.unschedulable > 0 || p.completed < static_cast<int>(r.jobs.size())) {
            out << "      " << p.completed << " completed, " << p.unschedulable << " could not run (no plan fits on the GPU counts it may use)\n";
        }
    }
    const PolicyResult* ours = nullptr;
    const PolicyResult* elastic = nullptr;
    for (const auto& p : study.results) {
        ours = p.policy == SchedulePolicy::SimulatorInformed ? &p : ours;
        elastic = p.policy == SchedulePolicy::ElasticFlow ? &p : elastic;
    }
    if (ours != nullptr && elastic != nullptr && elastic->deadline_satisfaction > 0 && elastic->average_jct_h > 0 && elastic->makespan_h > 0) {
        out << "\nvtrain vs elasticflow: deadline satisfaction " << fixed(ours->deadline_satisfaction / elastic->deadline_satisfaction, 2)
            << "x, average JCT " << fixed(100 * (ours->average_jct_h / elastic->average_jct_h - 1), 1) << "%, makespan "
            << fixed(100 * (ours->makespan_h / elastic->makespan_h - 1), 1) << "%\n";
    }
    out << "Done in " << fixed(study.elapsed_s + o.generator_s, 1) << " s"
        << (study.cancelled ? "  -- CANCELLED (partial: policies after the cancel were not run)" : "") << "\n";
}

} // namespace

int run_schedule(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(
        argv,
        {"--gpu", "--gpus", "--jobs", "--seed", "--jobs-file", "--policy", "--window-hours", "--restart-overhead-s", "--write-jobs", "--threads"},
        {"--json"}, error);
    if (!args) {
        return report_bad_input(error);
    }
    if (!args->positional.empty()) {
        return report_bad_input("schedule takes no positional arguments (\"" + args->positional[0] + "\"; see vtrain schedule --help)");
    }
    Options o;
    error = read_options(*args, o);
    if (!error.empty()) {
        return report_bad_input(error);
    }
    auto profile = profile_library().load(o.request.gpu);
    if (!profile.ok()) {
        return report_bad_input(Diagnostics{{"--gpu", profile.errors().front().message}});
    }
    if (o.jobs_file) {
        note_input(*o.jobs_file);
    }
    if (o.write_jobs && !check_output(*o.write_jobs, error)) {
        return report_write_failure("--write-jobs: " + error);
    }
    if (o.jobs_file) {
        auto jobs = load_jobs(*o.jobs_file);
        if (!jobs.ok()) {
            return report_bad_file(*o.jobs_file, jobs.errors());
        }
        o.request.jobs = std::move(jobs).value();
    }
    StudyControl control;
    CurveCache cache; // the generator's curves are the study's
    Expected<ScheduleStudy> study = Diagnostic{"", "not run"};
    {
        CancelOnInterrupt interrupt(control);
        StudyProgressBar bar(control, "curves");
        if (!o.jobs_file) {
            o.workload.cluster_gpus = o.request.num_gpus;
            o.workload.peak_tflops_per_gpu = profile->peak_flops("bf16") / 1e12;
            const Diagnostics bad = check_workload_options(o.workload);
            if (!bad.empty()) {
                return report_bad_input(bad);
            }
            const auto start = std::chrono::steady_clock::now();
            o.request.jobs = generate_simulated_workload(o.workload, profile.value(), o.request.gpus_per_node, o.request.threads, control, cache,
                                                         o.generator_plans);
            o.generator_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
        if (o.write_jobs && !write_text_file(*o.write_jobs, output_json(jobs_to_json(o.request.jobs), 2) + "\n", error)) {
            return report_write_failure("--write-jobs: " + error);
        }
        if (!control.cancelled()) {
            study = run_schedule_study(o.request, profile.value(), control, &cache);
        }
    }
    if (control.cancelled() && !study.ok()) {
        std::cerr << "vtrain: CANCELLED while building the throughput curves of the generated jobs\n";
        return 130;
    }
    if (!study.ok()) {
        Diagnostics named;
        for (const auto& d : study.errors()) {
            const bool job_field = d.field.rfind("jobs", 0) == 0;
            // A generated job is wrong because of the options that generated it: say so.
            const std::string generated = "generated jobs (--jobs, --seed, --window-hours): ";
            named.push_back(
                {job_field && o.jobs_file ? *o.jobs_file + ": " + d.field : (job_field ? generated + d.field : "--" + d.field), d.message});
        }
        return report_bad_input(named);
    }
    if (!o.jobs_file) {
        o.load = study_offered_load(*study, o.workload.window_hours);
    }
    if (args->flag("--json")) {
        std::cout << output_json(schedule_study_to_json(*study), 2) << "\n";
    } else {
        print_results(std::cout, *study, o);
    }
    return study->cancelled ? 130 : kExitOk;
}

} // namespace vtrain::cli
