// SPDX-License-Identifier: MIT
// A sweep split into shards and merged back (explorer_shard.h) equals the single-process sweep: counts,
// examples, front, top-k lists and rows, for any number of shards, empty shards included; partial
// results survive encoding bit for bit (explorer_wire.h).
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"
#include "vtrain/explorer.h"
#include "vtrain/explorer_io.h"
#include "vtrain/explorer_shard.h"
#include "vtrain/explorer_space.h"
#include "vtrain/explorer_wire.h"

using namespace vtrain;

namespace {

// A 12-layer GPT on several GPU counts and two GPU types: thousands of plans, most reject reasons, a front of
// at least three plans.
Scenario sweep_scenario()
{
    Scenario s;
    s.model = test::gpt(12, 5120, 40, 2048, 50304); // ~4B parameters: big enough that some plans run out of memory
    s.cluster.gpu = "a100-sxm4-80gb";
    s.cluster.num_gpus = 16;
    s.cluster.gpus_per_node = 8;
    s.cluster.price_per_gpu_hour = 4.10;
    s.training.global_batch = 96;
    s.training.tokens = 1e9;
    SearchSpace q;
    q.num_gpus = {8, 12, 16, 24, 48}; // 48: a third point on the front with the session 9 H100 fit
    q.gpu = {"a100-sxm4-80gb", "h100-sxm5-80gb"};
    q.tp = {1, 2, 4, 8, 16};
    s.search = q;
    return s;
}

const std::map<std::string, GpuProfile>& profiles()
{
    static const std::map<std::string, GpuProfile> p{{"a100-sxm4-80gb", test::shipped_profile("a100-sxm4-80gb")},
                                                     {"h100-sxm5-80gb", test::shipped_profile("h100-sxm5-80gb")}};
    return p;
}

struct Run {
    ExploreResult result;
    std::vector<std::string> csv; // the sink's rows, in the order it saw them
};

Run run(const Scenario& s, const ExploreOptions& options)
{
    Run out;
    RunControl control;
    auto r = explore(s, profiles(), options, control, [&](const PlanRow& row) { out.csv.push_back(plan_row_to_csv(row)); });
    if (!r.ok()) {
        qFatal("%s", r.first_error().c_str());
    }
    out.result = std::move(r).value();
    return out;
}

// Everything but the timing.
std::string summary(const ExploreResult& r)
{
    nlohmann::json j = explore_result_to_json(r);
    j.erase("elapsed_s");
    return j.dump(1);
}

std::vector<std::string> csv_rows(const std::vector<PlanRow>& rows)
{
    std::vector<std::string> out;
    for (const auto& r : rows) {
        out.push_back(plan_row_to_csv(r));
    }
    return out;
}

PlanRow row(std::uint64_t index, double days, double cost, double mfu)
{
    PlanRow r;
    r.index = index;
    r.gpu = std::string("test-gpu");
    r.num_gpus = 8;
    r.training_days = days;
    r.cost_usd = cost;
    r.mfu = mfu;
    return r;
}

std::uint64_t index_of(const std::string& csv_line)
{
    return std::stoull(csv_line.substr(0, csv_line.find(',')));
}

// Evaluates each shard on its own, sends its result through the wire format, merges (the parts in
// reverse order: the merge must not depend on it). The sinks' rows are put back in index order.
Run sharded(const Scenario& s, ExploreOptions options, const ExploreSplit& split)
{
    Run out;
    std::vector<ExploreResult> parts;
    for (int shard = split.shards - 1; shard >= 0; --shard) {
        Run part = run(s, options_for_shard(options, split, shard));
        if (part.result.total != split.plans(shard)) {
            qFatal("shard total %llu != %llu", static_cast<unsigned long long>(part.result.total),
                   static_cast<unsigned long long>(split.plans(shard)));
        }
        for (std::size_t i = 1; i < part.csv.size(); ++i) {
            if (index_of(part.csv[i - 1]) >= index_of(part.csv[i])) {
                qFatal("a shard's rows are not in enumeration order");
            }
        }
        auto decoded = decode_explore_result(encode_explore_result(part.result));
        if (!decoded.ok()) {
            qFatal("%s", decoded.first_error().c_str());
        }
        parts.push_back(std::move(decoded).value());
        out.csv.insert(out.csv.end(), part.csv.begin(), part.csv.end());
    }
    std::sort(out.csv.begin(), out.csv.end(), [](const std::string& a, const std::string& b) { return index_of(a) < index_of(b); });
    out.result = merge_explore_results(parts, options.top_k);
    return out;
}

} // namespace

class TestExplorerShard : public QObject {
    Q_OBJECT

private slots:
    void the_scenario_is_not_trivial()
    {
        ExploreOptions options;
        const ExploreResult r = run(sweep_scenario(), options).result;
        QVERIFY2(r.total > 2000, qPrintable(QString::number(r.total)));
        QVERIFY(r.feasible > 100);
        int reasons = 0;
        for (const auto n : r.rejected) {
            reasons += n > 0 ? 1 : 0;
        }
        QVERIFY2(reasons >= 5, qPrintable(QString::fromStdString(explore_result_to_json(r)["rejected"].dump())));
        QVERIFY(r.front.size() >= 3);
    }

    void shards_cover_the_space_in_order()
    {
        const Scenario s = sweep_scenario();
        auto space = make_plan_space(s, profiles(), false);
        QVERIFY(space.ok());
        const std::vector<double> costs = estimate_group_costs(s, profiles(), *space, false);
        QCOMPARE(costs.size(), space->groups());
        const double max_group = *std::max_element(costs.begin(), costs.end());
        double total = 0;
        for (const double c : costs) {
            QVERIFY(c > 0);
            total += c;
        }
        for (int k = 1; k <= 7; ++k) {
            for (const int blocks_per_shard : {1, kBlocksPerShard}) {
                const ExploreSplit split = split_plan_space(*space, costs, k, blocks_per_shard);
                QCOMPARE(split.shards, k);
                QCOMPARE(split.blocks.front().groups.begin, std::size_t{0});
                QCOMPARE(split.blocks.back().groups.end, space->groups());
                QCOMPARE(split.blocks.back().plan_end, space->size());
                std::uint64_t plans = 0;
                for (std::size_t i = 0; i < split.blocks.size(); ++i) {
                    const ShardBlock& b = split.blocks[i];
                    QVERIFY(b.groups.begin < b.groups.end);
                    QCOMPARE(b.plan_begin, space->group_first(b.groups.begin));
                    if (i > 0) {
                        QCOMPARE(b.groups.begin, split.blocks[i - 1].groups.end);
                    }
                }
                for (int shard = 0; shard < k; ++shard) {
                    plans += split.plans(shard);
                    // Balanced to within one group per block of an equal share.
                    QVERIFY2(split.estimated_cost(shard) <= total / k + blocks_per_shard * max_group + 1e-9,
                             qPrintable(QString::number(split.estimated_cost(shard))));
                }
                QCOMPARE(plans, space->size());
            }
        }
    }

    void merged_shards_equal_one_process_data()
    {
        QTest::addColumn<int>("shards");
        QTest::addColumn<int>("blocks");
        QTest::addColumn<int>("threads");
        for (int k = 1; k <= 5; ++k) {
            QTest::newRow(qPrintable(QString("%1 shards").arg(k))) << k << kBlocksPerShard << 1;
            QTest::newRow(qPrintable(QString("%1 contiguous shards").arg(k))) << k << 1 << 1;
        }
        QTest::newRow("3 shards, 2 threads") << 3 << kBlocksPerShard << 2;
    }
    void merged_shards_equal_one_process()
    {
        QFETCH(int, shards);
        QFETCH(int, blocks);
        QFETCH(int, threads);
        const Scenario s = sweep_scenario();
        ExploreOptions options;
        options.top_k = 7;
        options.keep_all_rows = true;
        options.threads = threads;
        const Run single = run(s, options);
        auto plan = plan_explore_split(s, profiles(), options, shards, blocks);
        QVERIFY(plan.ok());
        QCOMPARE(plan->shards, shards);
        const Run merged = sharded(s, options, *plan);
        QCOMPARE(summary(merged.result), summary(single.result));
        QCOMPARE(csv_rows(merged.result.rows), csv_rows(single.result.rows));
        QCOMPARE(merged.csv, single.csv); // shard sinks concatenated in shard order = the one sink
        QCOMPARE(merged.result.cancelled, false);
    }

    // Issue 17: with pruning, the split keeps every group of one cost-key unit (GPU type, tp, cp, ep, etp,
    // micro-batch) on one shard, covers the space in order, and the merged shards give the single
    // process's front and top-k lists and the same total.
    void pruned_shards_keep_units_whole_and_merge_exactly()
    {
        const Scenario s = sweep_scenario();
        auto space = make_plan_space(s, profiles(), false);
        QVERIFY(space.ok());
        ExploreOptions options;
        options.top_k = 7;
        options.prune = true;
        options.threads = 1;
        const Run single = run(s, options);
        QVERIFY(single.result.bounded > 0);
        for (const int shards : {1, 3, 5, 16}) {
            auto split = plan_explore_split(s, profiles(), options, shards);
            QVERIFY(split.ok());
            QCOMPARE(split->shards, shards);
            QCOMPARE(split->blocks.front().groups.begin, std::size_t{0});
            QCOMPARE(split->blocks.back().groups.end, space->groups());
            std::map<std::vector<int>, int> owner;
            std::uint64_t plans = 0;
            for (std::size_t i = 0; i < split->blocks.size(); ++i) {
                const ShardBlock& b = split->blocks[i];
                QVERIFY(b.groups.begin < b.groups.end);
                QVERIFY(b.shard >= 0 && b.shard < shards);
                if (i > 0) {
                    QCOMPARE(b.groups.begin, split->blocks[i - 1].groups.end);
                }
                for (std::size_t g = b.groups.begin; g < b.groups.end; ++g) {
                    const PlanGroup group = space->group(g);
                    const auto [it, inserted] =
                        owner.emplace(std::vector<int>{group.gpu, group.tp, group.cp, group.ep, group.etp, group.micro_batch}, b.shard);
                    QCOMPARE(it->second, b.shard);
                }
            }
            for (int shard = 0; shard < shards; ++shard) {
                plans += split->plans(shard);
                if (shards <= 5) {
                    QVERIFY(split->plans(shard) > 0); // enough units for each
                }
            }
            QCOMPARE(plans, space->size());
            const Run merged = sharded(s, options, *split);
            QCOMPARE(merged.result.total, single.result.total);
            QCOMPARE(merged.result.evaluated, single.result.evaluated);
            QCOMPARE(csv_rows(merged.result.front), csv_rows(single.result.front));
            QCOMPARE(csv_rows(merged.result.fastest), csv_rows(single.result.fastest));
            QCOMPARE(csv_rows(merged.result.cheapest), csv_rows(single.result.cheapest));
            QCOMPARE(csv_rows(merged.result.best_mfu), csv_rows(single.result.best_mfu));
        }
    }

    // Issue 17, MPI balance: the work items partition the groups, each cost-key unit's items are queued at
    // its owner, and the queue hands a shard its own items first, then the last item of the busiest queue.
    void work_items_partition_the_space_and_are_stolen_from_the_busiest()
    {
        const Scenario s = sweep_scenario();
        ExploreOptions options;
        options.prune = true;
        auto space = make_plan_space(s, profiles(), false);
        QVERIFY(space.ok());
        for (const int shards : {1, 3, 64}) {
            auto work = plan_explore_work(s, profiles(), options, shards);
            QVERIFY(work.ok());
            QCOMPARE(work->shards, shards);
            QCOMPARE(work->queues.size(), std::size_t(shards));
            std::vector<int> seen(space->groups(), 0);
            std::vector<int> queued(work->items.size(), 0);
            std::map<std::vector<int>, int> owner;
            for (int shard = 0; shard < shards; ++shard) {
                for (const std::size_t i : work->queues[static_cast<std::size_t>(shard)]) {
                    ++queued[i];
                    for (const GroupRange& r : work->items[i].groups) {
                        for (std::size_t g = r.begin; g < r.end; ++g) {
                            ++seen[g];
                            const PlanGroup group = space->group(g);
                            const auto [it, inserted] =
                                owner.emplace(std::vector<int>{group.gpu, group.tp, group.cp, group.ep, group.etp, group.micro_batch}, shard);
                            QCOMPARE(it->second, shard); // a unit's items all at one owner
                        }
                    }
                }
            }
            QVERIFY(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
            QVERIFY(std::all_of(queued.begin(), queued.end(), [](int n) { return n == 1; }));
        }
        auto work = plan_explore_work(s, profiles(), options, 3);
        QVERIFY(work.ok());
        WorkQueue queue(*work);
        const auto& q0 = work->queues[0];
        QCOMPARE(queue.next(0).value(), q0.front()); // its own, costliest unit first
        std::size_t taken = 1;
        for (; taken < q0.size(); ++taken) {
            QCOMPARE(queue.next(0).value(), q0[taken]);
        }
        QCOMPARE(queue.stolen(), std::uint64_t{0});
        // Shard 0 has run out: it takes the last item of a queue that still has work.
        const std::size_t stolen = queue.next(0).value();
        QCOMPARE(queue.stolen(), std::uint64_t{1});
        QVERIFY(stolen == work->queues[1].back() || stolen == work->queues[2].back());
        std::size_t left = 0;
        while (queue.next(1)) {
            ++left;
        }
        QCOMPARE(left + 1 + q0.size(), work->items.size()); // every item handed out once, then none
        QVERIFY(!queue.next(2));
    }

    // Issue 17: 64 shards side by side that steal work from each other (as MPI ranks do through rank 0)
    // give exactly the single process's front and top-k lists, and together sweep every plan once.
    void stealing_shards_merge_exactly_at_64()
    {
        const Scenario s = sweep_scenario();
        ExploreOptions options;
        options.top_k = 7;
        options.prune = true;
        options.threads = 1;
        const Run single = run(s, options);
        constexpr int kShards = 64;
        auto work = plan_explore_work(s, profiles(), options, kShards);
        QVERIFY(work.ok());
        WorkQueue queue(*work);
        std::mutex mutex;
        std::condition_variable all_in;
        int arrived = 0;
        std::vector<PlanRow> shared;
        ExploreOptions sharing = options;
        sharing.share_seed = [&](const std::vector<PlanRow>& mine) {
            std::unique_lock lock(mutex);
            shared.insert(shared.end(), mine.begin(), mine.end());
            if (++arrived == kShards) {
                all_in.notify_all();
            } else {
                all_in.wait(lock, [&] { return arrived == kShards; });
            }
            return shared;
        };
        std::vector<ExploreResult> parts(kShards);
        std::vector<std::thread> threads;
        for (int shard = 0; shard < kShards; ++shard) {
            threads.emplace_back([&, shard] {
                RunControl control;
                auto r = explore(s, profiles(), options_for_shard(sharing, *work, shard, [&queue, shard] { return queue.next(shard); }), control);
                if (r.ok()) {
                    parts[static_cast<std::size_t>(shard)] = std::move(r).value();
                }
            });
        }
        for (std::thread& t : threads) {
            t.join();
        }
        QVERIFY(!queue.next(0)); // drained
        const ExploreResult merged = merge_explore_results(parts, options.top_k);
        QCOMPARE(merged.total, single.result.total);
        QCOMPARE(merged.evaluated, merged.total);
        QVERIFY(!merged.cancelled);
        QCOMPARE(merged.feasible + merged.bounded + std::accumulate(merged.rejected.begin(), merged.rejected.end(), std::uint64_t{0}), merged.total);
        QCOMPARE(csv_rows(merged.front), csv_rows(single.result.front));
        QCOMPARE(csv_rows(merged.fastest), csv_rows(single.result.fastest));
        QCOMPARE(csv_rows(merged.cheapest), csv_rows(single.result.cheapest));
        QCOMPARE(csv_rows(merged.best_mfu), csv_rows(single.result.best_mfu));
        qInfo("64 stealing shards: %llu plans, %llu simulated, %llu bounded (one process: %llu simulated), %llu items stolen",
              static_cast<unsigned long long>(merged.total), static_cast<unsigned long long>(merged.feasible),
              static_cast<unsigned long long>(merged.bounded), static_cast<unsigned long long>(single.result.feasible),
              static_cast<unsigned long long>(queue.stolen()));
    }

    // ExploreOptions::rebalance's dealing: whatever the reports, the answer partitions the space's groups
    // (each once, in order), a group stays with its shard unless moved for load, and the report survives
    // the wire format.
    void rebalanced_groups_partition_the_space()
    {
        const Scenario s = sweep_scenario();
        ExploreOptions options;
        options.prune = true;
        auto space = make_plan_space(s, profiles(), false);
        QVERIFY(space.ok());
        for (const int shards : {1, 3, 7}) {
            auto split = plan_explore_split(s, profiles(), options, shards);
            QVERIFY(split.ok());
            std::vector<std::vector<GroupWork>> open(static_cast<std::size_t>(shards));
            std::vector<double> settled(static_cast<std::size_t>(shards), 0.0);
            // Shard 0 reports every group of its own as heavy: the others must take some.
            for (const GroupRange& r : split->ranges(0)) {
                for (std::size_t g = r.begin; g < r.end; ++g) {
                    open[0].push_back({g, 1e6});
                }
            }
            const GroupWorkReport report{open[0], 12.5};
            auto decoded = decode_group_work(encode_group_work(report));
            QVERIFY(decoded.ok());
            QCOMPARE(decoded->open.size(), report.open.size());
            QCOMPARE(decoded->settled, 12.5);
            QVERIFY(!decode_group_work("VTXW").ok());
            const auto answer = rebalance_groups(*split, open, settled);
            QCOMPARE(answer.size(), static_cast<std::size_t>(shards));
            std::vector<int> seen(space->groups(), 0);
            for (const auto& ranges : answer) {
                for (std::size_t i = 0; i < ranges.size(); ++i) {
                    QVERIFY(ranges[i].begin < ranges[i].end);
                    QVERIFY(i == 0 || ranges[i - 1].end < ranges[i].begin); // sorted, merged
                    for (std::size_t g = ranges[i].begin; g < ranges[i].end; ++g) {
                        ++seen[g];
                    }
                }
            }
            QVERIFY(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
            auto count = [](const std::vector<GroupRange>& ranges) {
                std::size_t n = 0;
                for (const GroupRange& r : ranges) {
                    n += r.end - r.begin;
                }
                return n;
            };
            if (shards > 1 && open[0].size() > static_cast<std::size_t>(shards)) {
                for (int shard = 1; shard < shards; ++shard) {
                    QVERIFY(count(answer[static_cast<std::size_t>(shard)]) > count(split->ranges(shard))); // took some of shard 0's
                }
            }
        }
    }

    // Shards that hold no group (all the work in a few groups), and more shards than groups.
    void empty_shards_change_nothing()
    {
        const Scenario s = sweep_scenario();
        auto space = make_plan_space(s, profiles(), false);
        QVERIFY(space.ok());
        ExploreOptions options;
        options.top_k = 5;
        options.keep_all_rows = true;
        const Run single = run(s, options);

        std::vector<double> lumpy(space->groups(), 0.0);
        lumpy[space->groups() / 3] = 1;
        lumpy[space->groups() - 1] = 1;
        for (const int blocks : {1, 2}) {
            const ExploreSplit split = split_plan_space(*space, lumpy, 8, blocks);
            int empty = 0;
            for (int shard = 0; shard < split.shards; ++shard) {
                empty += split.plans(shard) == 0 ? 1 : 0;
            }
            QVERIFY(empty >= 2);
            const Run merged = sharded(s, options, split);
            QCOMPARE(summary(merged.result), summary(single.result));
            QCOMPARE(merged.csv, single.csv);
        }

        const int many = static_cast<int>(space->groups()) + 3;
        const ExploreSplit split = split_plan_space(*space, estimate_group_costs(s, profiles(), *space, false), many, 1);
        int empty = 0;
        for (int shard = 0; shard < many; ++shard) {
            empty += split.plans(shard) == 0 ? 1 : 0;
        }
        QVERIFY(empty >= 3);
        QCOMPARE(summary(sharded(s, options, split).result), summary(single.result));
    }

    void an_empty_range_evaluates_nothing()
    {
        ExploreOptions options;
        options.group_ranges = {{40, 10}, {1u << 30, 1u << 31}};
        const ExploreResult r = run(sweep_scenario(), options).result;
        QCOMPARE(r.total, std::uint64_t{0});
        QCOMPARE(r.evaluated, std::uint64_t{0});
        QVERIFY(r.front.empty());
        QVERIFY(!r.cancelled);
    }

    void shard_count_must_be_positive()
    {
        auto plan = plan_explore_split(sweep_scenario(), profiles(), {}, 0);
        QVERIFY(!plan.ok());
        QCOMPARE(QString::fromStdString(plan.errors().front().field), QString("shards"));
    }

    // Equal objectives in different shards: the lower index wins, as in one process.
    void ties_go_to_the_lower_index()
    {
        ExploreResult a;
        a.total = a.evaluated = a.feasible = 2;
        a.front = {row(1, 5, 10, 0.5)};
        a.fastest = {row(1, 5, 10, 0.5), row(2, 5, 10, 0.5)};
        a.cheapest = a.fastest;
        a.best_mfu = a.fastest;
        a.example[0] = {"plan", "second"};
        a.example_index[0] = 9;
        a.rejected[0] = 1;
        ExploreResult b;
        b.total = b.evaluated = b.feasible = 1;
        b.front = {row(3, 5, 10, 0.5)};
        b.fastest = b.cheapest = b.best_mfu = b.front;
        b.example[0] = {"plan", "first"};
        b.example_index[0] = 4; // an earlier plan in a later part (blocks are dealt round-robin)
        b.rejected[0] = 2;
        const ExploreResult m = merge_explore_results({a, b}, 2);
        QCOMPARE(m.front.size(), std::size_t{1});
        QCOMPARE(m.front[0].index, std::uint64_t{1});
        QCOMPARE(m.fastest.size(), std::size_t{2});
        QCOMPARE(m.fastest[0].index, std::uint64_t{1});
        QCOMPARE(m.fastest[1].index, std::uint64_t{2});
        QVERIFY(m.fastest[0].on_front && !m.fastest[1].on_front);
        QCOMPARE(QString::fromStdString(m.example[0].message), QString("first"));
        QCOMPARE(m.example_index[0], std::uint64_t{4});
        QCOMPARE(m.rejected[0], std::uint64_t{3});
        QCOMPARE(m.total, std::uint64_t{3});
    }

    void the_wire_format_is_bit_exact()
    {
        ExploreResult r;
        r.total = 1ull << 40;
        r.evaluated = 7;
        r.feasible = 3;
        r.cancelled = true;
        r.elapsed_s = 1.0 / 3.0;
        r.threads = 12;
        r.rejected[2] = 99;
        r.example[2] = {"plan.tp", "tp = 3 does not divide \"heads\"\n"};
        r.example_index[2] = 77;
        PlanRow x = row(123456789012345ull, 0.1 + 0.2, -0.0, std::numeric_limits<double>::denorm_min());
        x.plan.tp = 8;
        x.plan.pp = 35;
        x.plan.dp = 12;
        x.plan.micro_batch = 2;
        x.plan.schedule = Schedule::Interleaved;
        x.plan.virtual_stages = 3;
        x.plan.recompute = Recompute::Selective;
        x.plan.sequence_parallel = true;
        x.plan.zero_stage = 2;
        x.plan.grad_bucket_mb = 25.5;
        x.plan.overlap_grad_reduce = false;
        x.gpu = "h100-sxm5-80gb";
        x.num_gpus = 3360;
        x.iteration_time_s = 31.341234567890123;
        x.iteration_time_low_s = std::nextafter(31.0, 0.0);
        x.iteration_time_high_s = std::numeric_limits<double>::infinity();
        x.tokens_per_s = std::numeric_limits<double>::quiet_NaN();
        x.bubble_fraction = 1e-300;
        x.peak_memory_gib = 77.0000000001;
        x.on_front = true;
        r.front = {x};
        r.fastest = {x, x};
        r.best_mfu = {x};
        r.rows = {x, x, x};

        const std::string bytes = encode_explore_result(r);
        auto back = decode_explore_result(bytes);
        QVERIFY2(back.ok(), back.first_error().c_str());
        QCOMPARE(encode_explore_result(*back), bytes); // every field, every bit
        const PlanRow& y = back->rows[2];
        QCOMPARE(y.plan, x.plan);
        QCOMPARE(y.index, x.index);
        QVERIFY(std::signbit(y.cost_usd));
        QVERIFY(std::isnan(y.tokens_per_s));
        QCOMPARE(y.iteration_time_low_s, x.iteration_time_low_s);
        QCOMPARE(y.mfu, x.mfu);
        QCOMPARE(plan_row_to_csv(y), plan_row_to_csv(x));
        QCOMPARE(back->example[2].message, r.example[2].message);
        QCOMPARE(back->example_index[2], std::uint64_t{77});
        QCOMPARE(back->cheapest.size(), std::size_t{0});

        // Every truncation is refused, never read past the end.
        for (std::size_t n = 0; n < bytes.size(); n += 1 + n / 64) {
            QVERIFY(!decode_explore_result(std::string_view(bytes).substr(0, n)).ok());
        }
        QVERIFY(!decode_explore_result(bytes + "x").ok());
        std::string wrong = bytes;
        wrong[0] = 'X';
        QVERIFY(decode_explore_result(wrong).first_error().find("magic") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestExplorerShard)
#include "tst_explorer_shard.moc"
