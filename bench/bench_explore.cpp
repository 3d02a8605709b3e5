// SPDX-License-Identifier: MIT
// bench_explore: plans per second of the design-space explorer on two sweeps, on 1 and on 2 threads,
// and the peak resident memory of the process.
//   (a) MT-NLG 530B on A100-80GB: examples/mt-nlg-530b.json with its "search" block -- GPU counts 2,240
//       to 4,480 in steps of 280 (= 8 x 35, so the paper's t=8, p=35 layout fits every count), tp 1-16,
//       micro-batch 1, 2, 4, every other axis at its default (pp: divisors of 105 layers; all schedules,
//       virtual stages, recompute, sequence parallelism, ZeRO 0/1).
//   (b) GPT-3 175B on 1,024 H100-80GB: examples/gpt3-175b.json with cluster.gpu = h100-sxm5-80gb and
//       the default search (tp 1-8, pp: divisors of 96, micro-batch 1-16, every variant).
// Each figure is the median of 5 sweeps; CPU seconds (all threads) are printed beside wall time because
// on a shared machine wall time also measures the other processes. "plans/s" counts every enumerated plan (rejected ones included: each is checked);
// "simulated/s" counts the feasible plans, each simulated in full.
//   (d) GPT-3 13B on 64 A100-80GB: bench/gpt3-13b-a100-64.json (issue 17's space), every plan simulated
//       (--prune none) and with pruning by lower bounds (same front and top-k; fewer simulations).
//   (a) and (b) are also run with pruning. "simulated/s" counts the feasible plans simulated per wall second;
//   with pruning, "feasible covered/s" counts the feasible plans of the brute-force sweep per wall second.
//   (c) with --large: a streaming check of bounded memory -- GPT-3 175B on H100 on every multiple of 8
//       GPUs from 8 to 8,192 with the default search (13.8 million plans), rows to a counting sink.
//   (e) Qwen3-235B-A22B on 256 GB200 NVL72: examples/qwen3-235b-a22b-gb200.json with its search block
//       (tp, pp, virtual stages, ep, etp, micro-batch, schedule, recompute, MoE overlap): issue 14's MoE rate.
//   (f) Llama 3.1 405B on 16,384 H100: examples/llama3.1-405b-h100.json with a search over tp 1-8, pp
//       (the default: divisors of 126 and powers of two, 16 among them), cp 1-8, precision bf16/fp8, zero_stage 1-3 (FSDP), micro-batch 1-2, TP
//       overlap: issue 15's long-context/precision/FSDP rate.
//   usage: bench_explore [--exact] [--large] [--only LETTERS]   (--exact: the task-graph simulation for
//   every plan; --only: just the sweeps named, e.g. --only d)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench_common.h"
#include "vtrain/explorer.h"
#include "vtrain/explorer_io.h"

namespace {

using namespace vtrain;

constexpr int kRepeats = 5; // each figure is the median of this many sweeps

ExploreResult g_last; // the last sweep's 1-thread result (its feasible count feeds the pruned sweep)

void sweep(const char* label, const Scenario& scenario, bool exact, bool prune = false, std::uint64_t brute_force_feasible = 0)
{
    std::map<std::string, GpuProfile> profiles;
    profiles.emplace(scenario.cluster.gpu, bench::load_gpu(scenario.cluster.gpu));
    std::printf("\n%s\n", label);
    ExploreResult reference;
    for (const int threads : {1, 2}) {
        ExploreOptions options;
        options.threads = threads;
        options.exact_simulation = exact;
        options.prune = prune;
        std::vector<double> elapsed;
        std::vector<double> cpu;
        ExploreResult r;
        for (int i = 0; i < kRepeats; ++i) {
            RunControl control;
            const double cpu_before = bench::cpu_seconds();
            auto result = explore(scenario, profiles, options, control);
            cpu.push_back(bench::cpu_seconds() - cpu_before);
            if (!result.ok()) {
                std::fprintf(stderr, "%s\n", result.first_error().c_str());
                std::exit(1);
            }
            elapsed.push_back(result->elapsed_s);
            r = std::move(result).value();
        }
        std::sort(elapsed.begin(), elapsed.end());
        std::sort(cpu.begin(), cpu.end());
        r.elapsed_s = elapsed[elapsed.size() / 2];
        const double cpu_s = cpu[cpu.size() / 2];
        std::printf("  %d thread%s  %llu plans (%llu simulated, %llu bounded out) in %.3f s wall, %.3f s CPU  ->  %8.0f plans/s  %7.0f simulated/s"
                    "  (%8.0f plans per CPU-second)   front %zu   peak RSS %.0f MiB\n",
                    threads, threads == 1 ? " " : "s", static_cast<unsigned long long>(r.total), static_cast<unsigned long long>(r.feasible),
                    static_cast<unsigned long long>(r.bounded), r.elapsed_s, cpu_s, r.total / r.elapsed_s, r.feasible / r.elapsed_s, r.total / cpu_s,
                    r.front.size(), bench::peak_rss_mib());
        if (prune && brute_force_feasible > 0) {
            std::printf("             %8.0f feasible covered/s (the %llu feasible plans of the brute-force sweep, exactly ranked)\n",
                        brute_force_feasible / r.elapsed_s, static_cast<unsigned long long>(brute_force_feasible));
        }
        if (threads == 1) {
            reference = r;
            g_last = r;
        } else if (explore_result_to_json(reference)["front"] != explore_result_to_json(r)["front"]) {
            std::printf("  !! the front differs between 1 and 2 threads\n");
        }
    }
    std::printf("  rejected:");
    for (std::size_t i = 0; i < reference.rejected.size(); ++i) {
        if (reference.rejected[i] > 0) {
            std::printf(" %s %llu;", to_string(static_cast<RejectReason>(i)), static_cast<unsigned long long>(reference.rejected[i]));
        }
    }
    std::printf("\n  fastest: %s on %d GPUs, %.1f days, $%.2fM\n", plan_label(reference.fastest.front().plan).c_str(),
                reference.fastest.front().num_gpus, reference.fastest.front().training_days, reference.fastest.front().cost_usd / 1e6);
}

} // namespace

int main(int argc, char** argv)
{
    bool exact = false;
    bool large = false;
    std::string only = "abdef";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::printf("usage: bench_explore [--exact] [--large] [--only LETTERS]\n"
                        "  plans per second of the explorer, median of 5 sweeps, on 1 and 2 threads:\n"
                        "  (a) MT-NLG 530B on A100  (b) GPT-3 175B on 1,024 H100  (d) GPT-3 13B on 64 A100 (issue 17's space)\n"
                        "  (e) Qwen3-235B-A22B on 256 GB200 (MoE axes)  (f) Llama 3.1 405B on 16,384 H100 (cp, precision, FSDP axes)\n"
                        "  (c) with --large: bounded memory on a 13.8 million-plan GPT-3 175B sweep\n"
                        "  --exact         the task-graph simulation for every plan (not the explorer's fast path)\n"
                        "  --only LETTERS  just the sweeps named, e.g. --only d (default abdef)\n");
            return 0;
        }
        if (std::strcmp(argv[i], "--exact") == 0) {
            exact = true;
        } else if (std::strcmp(argv[i], "--large") == 0) {
            large = true;
        } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else {
            std::fprintf(stderr, "bench_explore: unknown option %s (--help lists them)\n", argv[i]);
            return 2;
        }
    }
    auto wanted = [&only](char sweep) { return only.find(sweep) != std::string::npos; };
    std::printf("bench_explore (%s)\n", exact ? "task-graph simulation for every plan" : "explorer fast path");
    const Scenario mtnlg = bench::load_example("mt-nlg-530b.json");
    if (wanted('a')) {
        sweep("(a) MT-NLG 530B, A100-80GB, 2,240-4,480 GPUs (step 280)", mtnlg, exact);
        sweep("(a) same, --prune bound", mtnlg, exact, true, g_last.feasible);
    }

    Scenario gpt3 = bench::load_example("gpt3-175b.json");
    gpt3.cluster.gpu = "h100-sxm5-80gb";
    gpt3.search = SearchSpace{};
    if (wanted('b')) {
        sweep("(b) GPT-3 175B, 1,024 H100-80GB, default search", gpt3, exact);
        sweep("(b) same, --prune bound", gpt3, exact, true, g_last.feasible);
    }

    auto gpt3_13b = load_scenario(std::string(VTRAIN_SOURCE_DIR) + "/bench/gpt3-13b-a100-64.json");
    if (!gpt3_13b.ok()) {
        std::fprintf(stderr, "%s\n", gpt3_13b.first_error().c_str());
        return 1;
    }
    if (wanted('d')) {
        sweep("(d) GPT-3 13B, 64 A100-80GB, global batch 512 (bench/gpt3-13b-a100-64.json), every plan simulated", *gpt3_13b, exact);
        sweep("(d) same, --prune bound", *gpt3_13b, exact, true, g_last.feasible);
    }

    if (wanted('e')) {
        const Scenario qwen = bench::load_example("qwen3-235b-a22b-gb200.json");
        sweep("(e) Qwen3-235B-A22B, 256 GB200 NVL72, the example's search (tp, pp, vp, ep, etp, mb, schedule, recompute, MoE overlap)", qwen, exact);
        sweep("(e) same, --prune bound", qwen, exact, true, g_last.feasible);
    }

    if (wanted('f')) {
        Scenario llama = bench::load_example("llama3.1-405b-h100.json");
        SearchSpace s;
        s.tp = {1, 2, 4, 8};
        s.cp = {1, 2, 4, 8};
        s.precision = {Precision::Bf16, Precision::Fp8};
        s.zero_stage = {1, 2, 3};
        s.micro_batch = {1, 2};
        s.tp_overlap = {false, true};
        llama.search = s; // pp: the explorer's default (divisors of 126 and powers of two, with the standard layouts)
        sweep("(f) Llama 3.1 405B, 16,384 H100, tp x pp x cp x precision x zero_stage (FSDP) x mb x tp_overlap", llama, exact);
        sweep("(f) same, --prune bound", llama, exact, true, g_last.feasible);
    }

    if (large) {
        Scenario huge = gpt3;
        for (int n = 8; n <= 8192; n += 8) {
            huge.search->num_gpus.push_back(n);
        }
        std::map<std::string, GpuProfile> profiles{{huge.cluster.gpu, bench::load_gpu(huge.cluster.gpu)}};
        ExploreOptions options;
        options.threads = 2;
        RunControl control;
        std::uint64_t rows = 0;
        const auto r = explore(huge, profiles, options, control, [&rows](const PlanRow&) { ++rows; });
        std::printf("\n(c) GPT-3 175B, H100-80GB, 8-8,192 GPUs (every multiple of 8), default search, rows streamed\n");
        std::printf("  2 threads  %9llu plans (%llu feasible, %llu rows streamed) in %7.3f s  ->  %10.0f plans/s   front %zu   peak RSS %.0f MiB\n",
                    static_cast<unsigned long long>(r->total), static_cast<unsigned long long>(r->feasible), static_cast<unsigned long long>(rows),
                    r->elapsed_s, r->total / r->elapsed_s, r->front.size(), bench::peak_rss_mib());
    }
    return 0;
}
