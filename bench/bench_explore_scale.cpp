// SPDX-License-Identifier: MIT
// bench_explore_scale: issue 17's DeepSeek-V3-sized space (bench/deepseek-v3-space.json, ~1.3 x 10^8
// plans over 3 GPU types, 8 GPU counts, tp, cp, pp, ep, etp, micro-batch, schedule and virtual stages,
// recompute, ZeRO, precision, TP and MoE overlap), exact front with pruning by lower bounds.
//   (1) One process on 2 threads: plans enumerated, simulated, bounded out and rejected, wall and CPU
//       seconds, with the machine's load average (wall time on a shared machine also measures the others).
//   (2) The sweep split into 4, 16 and 64 shards as `vtrain explore` splits it over MPI ranks, the shards
//       run side by side in this process on one thread each, sharing their seeds' rows once as the ranks
//       do (ExploreOptions::share_seed) -- with --rebalance, also their open groups' work, which is dealt
//       again (ExploreOptions::rebalance; better balance, but more work in all: see docs/mpi.md): per shard, the CPU seconds of its thread (unlike
//       wall time, not stretched by other processes); balance = fastest / slowest shard (as the MPI run prints it) and mean / slowest (the parallel
//       efficiency the slowest shard allows). The merged result must equal the single-process one (front and top-k lists); the program says so or
//       exits 1.
//   By default the shards steal work from each other as `vtrain explore` does over MPI ranks
//   (ExploreOptions::next_work, WorkQueue); --static sweeps the fixed split only.
//   usage: bench_explore_scale [SCENARIO.json] [--shards 4,16,64] [--no-single] [--verbose] [--static | --rebalance]
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "vtrain/explorer.h"
#include "vtrain/explorer_io.h"
#include "vtrain/explorer_shard.h"

namespace {

using namespace vtrain;

double clock_seconds(clockid_t clock)
{
    timespec t{};
    clock_gettime(clock, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
double process_cpu_seconds()
{
    return clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}
double thread_cpu_seconds()
{
    return clock_seconds(CLOCK_THREAD_CPUTIME_ID);
}

std::string load_average()
{
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return a + " " + b + " " + c;
}

std::uint64_t rejected_total(const ExploreResult& r)
{
    return std::accumulate(r.rejected.begin(), r.rejected.end(), std::uint64_t{0});
}

std::string rows_csv(const std::vector<PlanRow>& rows)
{
    std::string out;
    for (const PlanRow& r : rows) {
        out += plan_row_to_csv(r) + "\n";
    }
    return out;
}

bool same_answer(const ExploreResult& a, const ExploreResult& b)
{
    return rows_csv(a.front) == rows_csv(b.front) && rows_csv(a.fastest) == rows_csv(b.fastest) && rows_csv(a.cheapest) == rows_csv(b.cheapest) &&
           rows_csv(a.best_mfu) == rows_csv(b.best_mfu) && a.total == b.total && a.evaluated == b.evaluated;
}

ExploreResult sweep(const Scenario& s, const std::map<std::string, GpuProfile>& profiles, const ExploreOptions& options)
{
    RunControl control;
    auto r = explore(s, profiles, options, control);
    if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.first_error().c_str());
        std::exit(1);
    }
    return std::move(r).value();
}

void print_counts(const ExploreResult& r)
{
    std::printf("  %llu plans enumerated: %llu simulated (feasible), %llu bounded out, %llu rejected; front %zu plans\n",
                static_cast<unsigned long long>(r.total), static_cast<unsigned long long>(r.feasible), static_cast<unsigned long long>(r.bounded),
                static_cast<unsigned long long>(rejected_total(r)), r.front.size());
}

// Work stealing hands an item to whichever shard asks first. MPI ranks on cores of their own ask in
// the order of their progress; 64 threads on this machine's few cores progress as the OS schedules
// them, so a shard would take items by its luck with the scheduler rather than by the work it has
// done. The shards therefore take turns by CPU clock: a shard asks for its next item only once no
// unfinished shard has used less CPU time (each clock as of that shard's last request) -- what ranks
// on equal dedicated cores do in wall time.
class Turns {
public:
    explicit Turns(int shards)
        : m_clock(static_cast<std::size_t>(shards), 0.0), m_done(static_cast<std::size_t>(shards), false),
          m_waiting(static_cast<std::size_t>(shards), false), m_wake(static_cast<std::size_t>(shards))
    {
    }

    void wait_for_turn(int shard, double cpu_s)
    {
        const std::size_t me = static_cast<std::size_t>(shard);
        std::unique_lock lock(m_mutex);
        m_clock[me] = cpu_s;
        m_waiting[me] = true;
        wake_eligible();
        m_wake[me].wait(lock, [&] { return eligible(me); });
        m_waiting[me] = false;
    }
    void finish(int shard)
    {
        const std::lock_guard lock(m_mutex);
        m_done[static_cast<std::size_t>(shard)] = true;
        wake_eligible();
    }

private:
    // No other unfinished shard has used less CPU time.
    bool eligible(std::size_t me) const
    {
        for (std::size_t s = 0; s < m_clock.size(); ++s) {
            if (s != me && !m_done[s] && m_clock[s] < m_clock[me]) {
                return false;
            }
        }
        return true;
    }
    // Only the waiting shards whose turn it is are woken (waking all 64 on every request costs more CPU
    // time than the sweep's work at 64 shards).
    void wake_eligible()
    {
        const double inf = std::numeric_limits<double>::infinity();
        double least = inf, second = inf;
        std::size_t at = m_clock.size();
        for (std::size_t s = 0; s < m_clock.size(); ++s) {
            if (m_done[s]) {
                continue;
            }
            if (m_clock[s] < least) {
                second = least;
                least = m_clock[s];
                at = s;
            } else if (m_clock[s] < second) {
                second = m_clock[s];
            }
        }
        for (std::size_t s = 0; s < m_clock.size(); ++s) {
            if (m_waiting[s] && m_clock[s] <= (s == at ? second : least)) {
                m_wake[s].notify_one();
            }
        }
    }

    std::mutex m_mutex;
    std::vector<double> m_clock;
    std::vector<bool> m_done, m_waiting;
    std::vector<std::condition_variable> m_wake;
};

} // namespace

int main(int argc, char** argv)
{
    std::string path = std::string(VTRAIN_SOURCE_DIR) + "/bench/deepseek-v3-space.json";
    std::vector<int> shard_counts{4, 16, 64};
    bool single = true;
    bool verbose = false;   // one line per shard
    bool rebalance = false; // the second exchange (ExploreOptions::rebalance): off, as in `vtrain explore`
    bool stealing = true;   // work stealing (ExploreWork, WorkQueue): on, as in `vtrain explore`
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::printf("usage: bench_explore_scale [SCENARIO.json] [--shards 4,16,64] [--no-single] [--verbose] [--static | --rebalance]\n"
                        "  SCENARIO.json  default: bench/deepseek-v3-space.json\n"
                        "  --shards LIST  shard counts to run side by side in this process (default 4,16,64)\n"
                        "  --no-single    skip the one-process reference (and the check against it)\n"
                        "  --verbose      one line per shard\n"
                        "  --static       no work stealing: each shard sweeps only its split_by_cost_keys() share\n"
                        "  --rebalance    static split plus the second exchange (rebalance_groups())\n");
            return 0;
        }
        if (std::strcmp(argv[i], "--shards") == 0 && i + 1 < argc) {
            shard_counts.clear();
            std::stringstream list(argv[++i]);
            for (std::string item; std::getline(list, item, ',');) {
                shard_counts.push_back(std::atoi(item.c_str()));
            }
        } else if (std::strcmp(argv[i], "--no-single") == 0) {
            single = false;
        } else if (std::strcmp(argv[i], "--verbose") == 0) {
            verbose = true;
        } else if (std::strcmp(argv[i], "--rebalance") == 0) {
            rebalance = true;
            stealing = false;
        } else if (std::strcmp(argv[i], "--static") == 0) {
            stealing = false;
        } else if (argv[i][0] == '-') {
            std::fprintf(stderr, "bench_explore_scale: unknown option %s (--help lists them)\n", argv[i]);
            return 2;
        } else {
            path = argv[i];
        }
    }
    auto loaded = load_scenario(path);
    if (!loaded.ok()) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), loaded.first_error().c_str());
        return 1;
    }
    const Scenario s = std::move(loaded).value();
    std::map<std::string, GpuProfile> profiles;
    for (const std::string& id : s.search && !s.search->gpu.empty() ? s.search->gpu : std::vector<std::string>{s.cluster.gpu}) {
        profiles.emplace(id, bench::load_gpu(id));
    }
    ExploreOptions options;
    options.prune = true;
    options.top_k = 20; // the CLI's default
    std::printf("%s\nhost: load average %s at the start\n", path.c_str(), load_average().c_str());

    ExploreResult reference;
    if (single) {
        options.threads = 2;
        const double cpu0 = process_cpu_seconds();
        reference = sweep(s, profiles, options);
        const double cpu = process_cpu_seconds() - cpu0;
        std::printf("\n(1) one process, 2 threads: %.2f s wall, %.2f s CPU (load average now %s)\n", reference.elapsed_s, cpu,
                    load_average().c_str());
        print_counts(reference);
    }

    options.threads = 1;
    for (const int n : shard_counts) {
        auto split = plan_explore_split(s, profiles, options, n);
        auto work = plan_explore_work(s, profiles, options, n);
        if (!split.ok() || !work.ok()) {
            std::fprintf(stderr, "%s\n", split.ok() ? work.first_error().c_str() : split.first_error().c_str());
            return 1;
        }
        WorkQueue queue(*work);
        Turns turns(n);
        // Every shard in a thread of its own (one TBB thread each: its arena runs on the calling thread),
        // meeting the others once, as MPI ranks do, to share the rows of their seeds.
        std::vector<ExploreResult> parts(static_cast<std::size_t>(n));
        std::vector<double> cpu(static_cast<std::size_t>(n), 0.0);
        std::mutex mutex;
        std::condition_variable all_in;
        int arrived = 0;
        std::vector<PlanRow> shared;
        ExploreOptions sharing = options;
        sharing.share_seed = [&](const std::vector<PlanRow>& mine) {
            std::unique_lock lock(mutex);
            shared.insert(shared.end(), mine.begin(), mine.end());
            if (++arrived == n) {
                all_in.notify_all();
            } else {
                all_in.wait(lock, [&] { return arrived == n; });
            }
            return shared;
        };
        std::vector<std::vector<GroupWork>> open(static_cast<std::size_t>(n));
        std::vector<double> settled(static_cast<std::size_t>(n), 0.0);
        int reports = 0;
        std::vector<std::vector<GroupRange>> answer;
        const double process_cpu0 = process_cpu_seconds();
        std::vector<std::thread> threads;
        for (int shard = 0; shard < n; ++shard) {
            threads.emplace_back([&, shard] {
                const double cpu0 = thread_cpu_seconds();
                // Stealing, a shard takes its next item in the order of the shards' CPU clocks (see Turns).
                ExploreOptions mine = stealing ? options_for_shard(sharing, *work, shard,
                                                                   [&queue, &turns, shard, cpu0] {
                                                                       turns.wait_for_turn(shard, thread_cpu_seconds() - cpu0);
                                                                       return queue.next(shard);
                                                                   })
                                               : options_for_shard(sharing, *split, shard);
                if (rebalance) {
                    // The second exchange: each shard's open groups, then every shard's groups from then on.
                    mine.rebalance = [&, shard](const std::vector<GroupWork>& groups, double rest) {
                        std::unique_lock lock(mutex);
                        open[static_cast<std::size_t>(shard)] = groups;
                        settled[static_cast<std::size_t>(shard)] = rest;
                        if (++reports == n) {
                            answer = rebalance_groups(*split, open, settled);
                            all_in.notify_all();
                        } else {
                            all_in.wait(lock, [&] { return reports == n; });
                        }
                        return answer[static_cast<std::size_t>(shard)];
                    };
                }
                parts[static_cast<std::size_t>(shard)] = sweep(s, profiles, mine);
                cpu[static_cast<std::size_t>(shard)] = thread_cpu_seconds() - cpu0;
                turns.finish(shard);
            });
        }
        for (std::thread& t : threads) {
            t.join();
        }
        const double process_cpu = process_cpu_seconds() - process_cpu0;
        if (rebalance && !answer.empty()) {
            std::uint64_t open_groups = 0, moved = 0;
            std::vector<int> owner;
            for (const ShardBlock& b : split->blocks) {
                owner.resize(std::max<std::size_t>(owner.size(), b.groups.end), -1);
                std::fill(owner.begin() + static_cast<std::ptrdiff_t>(b.groups.begin), owner.begin() + static_cast<std::ptrdiff_t>(b.groups.end),
                          b.shard);
            }
            for (int shard = 0; shard < n; ++shard) {
                open_groups += open[static_cast<std::size_t>(shard)].size();
                for (const GroupRange& r : answer[static_cast<std::size_t>(shard)]) {
                    for (std::size_t g = r.begin; g < r.end; ++g) {
                        moved += owner[g] != shard ? 1 : 0;
                    }
                }
            }
            std::printf("  rebalanced: %llu groups open after the seed exchange, %llu moved to another shard\n",
                        static_cast<unsigned long long>(open_groups), static_cast<unsigned long long>(moved));
        }
        if (stealing) {
            std::printf("  work stealing: %zu items (cost-key units x GPU counts), %llu taken from another shard's queue\n", work->items.size(),
                        static_cast<unsigned long long>(queue.stolen()));
        }
        if (verbose) {
            for (int shard = 0; shard < n; ++shard) {
                const ExploreResult& p = parts[static_cast<std::size_t>(shard)];
                std::printf("    shard %2d: %.3f s CPU, %llu plans, %llu simulated, %llu bounded, %llu rejected, estimate %.3g\n", shard,
                            cpu[static_cast<std::size_t>(shard)], static_cast<unsigned long long>(p.total),
                            static_cast<unsigned long long>(p.feasible), static_cast<unsigned long long>(p.bounded),
                            static_cast<unsigned long long>(rejected_total(p)), split->estimated_cost(shard));
            }
        }
        const ExploreResult merged = merge_explore_results(parts, options.top_k);
        const double slowest = *std::max_element(cpu.begin(), cpu.end());
        const double fastest = *std::min_element(cpu.begin(), cpu.end());
        const double total = std::accumulate(cpu.begin(), cpu.end(), 0.0);
        std::printf("\n(2) %d shards, 1 thread each: %.2f s CPU in all (the process: %.2f s), per shard %.3f-%.3f s: balance %.0f%% (fastest / "
                    "slowest), %.0f%% (mean / "
                    "slowest)\n",
                    n, total, process_cpu, fastest, slowest, 100 * fastest / slowest, 100 * total / n / slowest);
        print_counts(merged);
        if (single) {
            const bool same = same_answer(merged, reference);
            std::printf("  merged front and top-%zu lists %s the single process's\n", options.top_k, same ? "equal" : "DIFFER FROM");
            if (!same) {
                return 1;
            }
        }
        std::fflush(stdout);
    }
    return 0;
}
