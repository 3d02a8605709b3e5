// SPDX-License-Identifier: MIT
// The design-space explorer: enumeration and its rules, rejection reasons, counts, the Pareto front
// against a brute-force check, determinism across thread counts, cancellation.
#include <QtTest>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include <sys/resource.h>

#include "explore/plan_bounds.h"
#include "model/model_support.h"
#include "test_support.h"
#include "vtrain/explorer.h"
#include "vtrain/explorer_io.h"
#include "vtrain/explorer_space.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/plan_check.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"
#include "vtrain/simulator.h"
#include "vtrain/uncertainty.h"

using namespace vtrain;

namespace {

// A 12-layer GPT (GPT-2-small shaped) on 16 GPUs in nodes of 8: small enough to sweep in well under a second.
Scenario small_scenario()
{
    Scenario s;
    s.model = test::gpt(12, 768, 12, 1024, 50304);
    s.cluster.gpu = "a100-sxm4-80gb";
    s.cluster.num_gpus = 16;
    s.cluster.gpus_per_node = 8;
    s.cluster.price_per_gpu_hour = 4.10;
    s.training.global_batch = 64;
    s.training.tokens = 1e9;
    return s;
}

const std::map<std::string, GpuProfile>& profiles()
{
    static const std::map<std::string, GpuProfile> p{{"a100-sxm4-80gb", test::shipped_profile("a100-sxm4-80gb")},
                                                     {"h100-sxm5-80gb", test::shipped_profile("h100-sxm5-80gb")}};
    return p;
}

ExploreResult run(const Scenario& s, ExploreOptions options = {}, const RowSink& sink = {})
{
    RunControl control;
    auto r = explore(s, profiles(), options, control, sink);
    if (!r.ok()) {
        qFatal("%s", r.first_error().c_str());
    }
    return std::move(r).value();
}

std::uint64_t rejected_total(const ExploreResult& r)
{
    std::uint64_t n = 0;
    for (const auto v : r.rejected) {
        n += v;
    }
    return n;
}

std::size_t reason(RejectReason r)
{
    return static_cast<std::size_t>(r);
}

// A space of exactly one plan: every list given with one value.
Scenario single_plan(const Plan& p, int num_gpus = 16)
{
    Scenario s = small_scenario();
    SearchSpace q;
    q.tp = {p.tp};
    q.pp = {p.pp};
    q.micro_batch = {p.micro_batch};
    q.schedule = {p.schedule};
    q.virtual_stages = {p.virtual_stages};
    q.recompute = {p.recompute};
    q.sequence_parallel = {p.sequence_parallel};
    q.zero_stage = {p.zero_stage};
    q.num_gpus = {num_gpus};
    s.search = q;
    return s;
}

Plan plan(int tp, int pp, int micro_batch, Schedule schedule = Schedule::OneFOneB, int v = 1)
{
    Plan p;
    p.tp = tp;
    p.pp = pp;
    p.micro_batch = micro_batch;
    p.schedule = schedule;
    p.virtual_stages = v;
    return p;
}

// Independent brute-force dominance: `a` dominates `b` when no worse in both objectives and better in
// one, or identical in both with a lower index.
bool dominates(const PlanRow& a, const PlanRow& b)
{
    if (a.training_days > b.training_days || a.cost_usd > b.cost_usd) {
        return false;
    }
    if (a.training_days < b.training_days || a.cost_usd < b.cost_usd) {
        return true;
    }
    return a.index < b.index;
}

// Peak resident memory of this process so far, in MiB (Linux reports ru_maxrss in KiB).
double peak_rss_mib()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

} // namespace

class TestExplorer : public QObject {
    Q_OBJECT
private slots:
    void default_space_has_the_documented_size()
    {
        const Scenario s = small_scenario();
        const auto space = make_plan_space(s, profiles(), false);
        QVERIFY(space.ok());
        QCOMPARE(space->tp, (std::vector<int>{1, 2, 4, 8}));
        // The divisors of the 12 layers and the power of two 8, laid out unevenly.
        QCOMPARE(space->pp, (std::vector<int>{1, 2, 3, 4, 6, 8, 12}));
        QCOMPARE(space->micro_batch, (std::vector<int>{1, 2, 4, 8, 16}));
        // Per (tp, pp): schedules = gpipe + 1f1b (once per standard layout where pp does not divide 12) + one
        // interleaved per v >= 2 with pp x v | 12 (none for pp = 1 or 8; at pp = 1 gpipe and 1f1b are the same
        // plan, listed once); x 3 recompute x (1 or 2 sequence-parallel values) x 3 ZeRO stages (0, 1, 2).
        const std::map<int, int> interleaved{{1, 0}, {2, 3}, {3, 2}, {4, 1}, {6, 1}, {8, 0}, {12, 0}}; // v in {2,3,6}, {2,4}, {3}, {2}, {}
        const auto uneven_layouts = static_cast<int>(standard_pipeline_layouts(12, 0, 8, 1).size());
        QVERIFY(uneven_layouts >= 1);
        std::uint64_t expected = 0;
        for (const int tp : space->tp) {
            for (const int pp : space->pp) {
                const int layouts = 12 % pp == 0 ? 1 : uneven_layouts;
                expected += static_cast<std::uint64_t>((pp == 1 ? 1 : 2) * layouts + interleaved.at(pp)) * 3 * (tp > 1 ? 2 : 1) * 3 *
                            space->micro_batch.size();
            }
        }
        QCOMPARE(space->size(), expected);
    }

    void default_tp_reaches_8_inside_an_nvl72_domain()
    {
        // GB200 NVL72: hosts (trays) of 4 GPUs in a 72-GPU NVLink domain; the default tp list still tries 8.
        Scenario s = small_scenario();
        s.cluster.gpu = "gb200-nvl72";
        s.cluster.gpus_per_node = 0;
        std::map<std::string, GpuProfile> nvl72{{"gb200-nvl72", test::shipped_profile("gb200-nvl72")}};
        QCOMPARE(nvl72.at("gb200-nvl72").links.gpus_per_node, 4);
        const auto space = make_plan_space(s, nvl72, false);
        QVERIFY(space.ok());
        QCOMPARE(space->tp, (std::vector<int>{1, 2, 4, 8}));
        // A scenario that says its domain is the host keeps tp at the host size.
        s.cluster.nvlink_domain_gpus = 4;
        const auto host_only = make_plan_space(s, nvl72, false);
        QVERIFY(host_only.ok());
        QCOMPARE(host_only->tp, (std::vector<int>{1, 2, 4}));
    }

    void indices_are_stable_and_complete()
    {
        Scenario s = small_scenario();
        s.search = SearchSpace{};
        s.search->num_gpus = {8, 16};
        s.search->gpu = {"a100-sxm4-80gb", "h100-sxm5-80gb"};
        const auto space = make_plan_space(s, profiles(), false);
        QVERIFY(space.ok());
        // The same plans as nested loops in the documented order, one index each (the variant digits:
        // schedule choice, recompute, sequence parallelism, ZeRO stage).
        std::uint64_t index = 0;
        std::uint64_t group = 0;
        for (int gi = 0; gi < 2; ++gi) {
            for (const int n : {8, 16}) {
                for (const int tp : space->tp) {
                    for (std::size_t pi = 0; pi < space->pp.size(); ++pi) {
                        const int pp = space->pp[pi];
                        std::vector<std::pair<Schedule, int>> choices{{Schedule::GPipe, 1}, {Schedule::OneFOneB, 1}};
                        if (pp == 1) {
                            choices.erase(choices.begin()); // no pipeline: gpipe is 1f1b
                        }
                        for (int v = 2; pp >= 2 && v <= 12 / pp; ++v) {
                            if (12 % (pp * v) == 0) {
                                choices.emplace_back(Schedule::Interleaved, v);
                            }
                        }
                        const std::vector<bool> sps = tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false};
                        for (const int mb : space->micro_batch) {
                            QCOMPARE(space->group_first(group), index);
                            const PlanGroup g = space->group(group++);
                            QCOMPARE(g.first_index, index);
                            for (const auto& [schedule, v] : choices) {
                                for (const Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full}) {
                                    for (const bool sp : sps) {
                                        for (const int zero : {0, 1, 2}) {
                                            const auto e = space->at(index);
                                            QCOMPARE(space->group_of(index), group - 1);
                                            QCOMPARE(e.gpu, gi);
                                            QCOMPARE(e.num_gpus, n);
                                            QCOMPARE(e.plan.tp, tp);
                                            QCOMPARE(e.plan.pp, pp);
                                            QCOMPARE(e.plan.micro_batch, mb);
                                            QCOMPARE(e.plan.schedule, schedule);
                                            QCOMPARE(e.plan.virtual_stages, v);
                                            QCOMPARE(e.plan.recompute, rc);
                                            QCOMPARE(e.plan.sequence_parallel, sp);
                                            QCOMPARE(e.plan.zero_stage, zero);
                                            QCOMPARE(e.plan.dp, n % (tp * pp) == 0 ? n / (tp * pp) : 0);
                                            ++index;
                                        }
                                    }
                                }
                            }
                            QCOMPARE(index - g.first_index, g.size);
                        }
                    }
                }
            }
        }
        QCOMPARE(group, space->groups());
        QCOMPARE(space->group_first(group), space->size());
        QCOMPARE(index, space->size());
    }

    void pairing_rules()
    {
        const Scenario s = small_scenario();
        const auto space = make_plan_space(s, profiles(), false);
        for (std::uint64_t i = 0; i < space->size(); ++i) {
            const Plan p = space->at(i).plan;
            QVERIFY(p.schedule == Schedule::Interleaved ? p.virtual_stages >= 2 : p.virtual_stages == 1);
            QVERIFY(!p.sequence_parallel || p.tp > 1); // tp = 1 has no sequence-parallel variants by default
        }
        // tp = 2 has both.
        QCOMPARE(space->sequence_parallel_choices(0), 1);
        QCOMPARE(space->sequence_parallel_choices(1), 2);
        // With across-node tensor parallelism the default tp list goes to 64.
        const auto wide = make_plan_space(s, profiles(), true);
        QCOMPARE(wide->tp.back(), 64);
    }

    // Issue 19: lists of 1,000 values each for tp, pp and virtual stages once took gigabytes (the space
    // was materialised) and ended in bad_alloc. The space is an index now: it builds in bounded memory,
    // any plan decodes from its index, and a sweep reports progress and stops on cancel at once.
    void a_huge_list_space_is_lazy_and_cancellable()
    {
        Scenario s = small_scenario();
        s.search = SearchSpace{};
        for (int v = 1; v <= 1000; ++v) {
            s.search->tp.push_back(v);
            s.search->pp.push_back(v);
            s.search->virtual_stages.push_back(v);
        }
        const double rss_before = peak_rss_mib();
        const auto space = make_plan_space(s, profiles(), false);
        QVERIFY(space.ok());
        // (gpipe + 1f1b + 1,000 interleaved, less gpipe at pp = 1) x 3 recompute x 3 ZeRO x (1 + 2 x 999
        // sequence-parallel values over tp) x 1,000 pp x 5 micro-batches -- with a schedule choice more for each further standard
        // layout of the few pp x v <= 12 that do not divide the 12 layers.
        std::uint64_t extra_layouts = 0;
        for (int pp = 1; pp <= 12; ++pp) {
            for (int v = 1; pp * v <= 12; ++v) {
                const std::uint64_t n = standard_pipeline_layouts(12, 0, pp, v).size();
                extra_layouts += (n > 1 ? n - 1 : 0) * (v == 1 ? (pp == 1 ? 2 : 3) : 1); // v = 1: gpipe (not at pp = 1), 1f1b, interleaved
            }
        }
        QVERIFY(extra_layouts > 0);
        QCOMPARE(space->size(), (std::uint64_t{1002} * 1000 - 1 + extra_layouts) * 3 * 3 * (1 + 2 * 999) * 5);
        QCOMPARE(space->groups(), std::uint64_t{1000} * 1000 * 5);
        for (const std::uint64_t i : {std::uint64_t{0}, space->size() / 3, space->size() - 1}) {
            const PlanGroup g = space->group(space->group_of(i));
            QVERIFY(g.first_index <= i && i < g.first_index + g.size);
            QCOMPARE(space->at(i).plan, g.plan(g.variant(i - g.first_index)));
        }
        RunControl control;
        ExploreOptions options;
        options.threads = 2;
        std::thread stopper([&control] {
            while (control.done.load() == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            control.cancel = true;
        });
        const auto start = std::chrono::steady_clock::now();
        const auto r = explore(s, profiles(), options, control);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        stopper.join();
        QVERIFY(r.ok());
        QCOMPARE(r->total, space->size());
        QVERIFY(r->cancelled);
        QVERIFY(r->evaluated > 0 && r->evaluated < r->total);
        QCOMPARE(control.done.load(), r->evaluated);
        QVERIFY2(seconds < 30, qPrintable(QString::number(seconds)));
        QVERIFY2(peak_rss_mib() - rss_before < 256, qPrintable(QString("%1 MiB more").arg(peak_rss_mib() - rss_before)));
    }

    // Today's axes: cp, ep, etp, precision, ZeRO 0-3 and the overlap flags are crossed like the others;
    // plans using a feature the simulator does not model yet are rejected with model_support.h's text.
    void new_axes_are_crossed_and_unmodeled_plans_rejected()
    {
        Scenario s = small_scenario();
        s.search = SearchSpace{};
        s.search->tp = {2};
        s.search->pp = {2};
        s.search->micro_batch = {1};
        s.search->schedule = {Schedule::OneFOneB};
        s.search->recompute = {Recompute::None};
        s.search->sequence_parallel = {false};
        s.search->zero_stage = {1, 3};
        s.search->cp = {1, 2};
        s.search->ep = {1};
        s.search->etp = {0};
        s.search->precision = {Precision::Bf16, Precision::Fp8};
        s.search->tp_overlap = {false, true};
        s.search->moe_overlap = {false};
        const auto space = make_plan_space(s, profiles(), false);
        QVERIFY(space.ok());
        QCOMPARE(space->size(), std::uint64_t{2 * 2 * 2 * 2});
        std::set<std::string> seen;
        for (std::uint64_t i = 0; i < space->size(); ++i) {
            const auto e = space->at(i);
            QCOMPARE(e.plan.dp, 16 / (2 * e.plan.cp * 2));
            seen.insert(std::to_string(e.plan.cp) + to_string(e.precision) + std::to_string(e.plan.zero_stage) + (e.plan.tp_overlap ? "o" : ""));
        }
        QCOMPARE(seen.size(), std::size_t{16});
        ExploreOptions options;
        options.keep_all_rows = true;
        const ExploreResult r = run(s, options);
        QCOMPARE(r.feasible + rejected_total(r), r.total);
        for (const PlanRow& row : r.rows) {
            TrainingSpec t = s.training;
            t.precision = row.precision;
            QVERIFY(!not_modeled_reason(s.model, t, row.plan));
        }
        // Exactly the plans the rules accept and model_support.h refuses are rejected as not modeled.
        std::uint64_t unmodeled = 0;
        for (std::uint64_t i = 0; i < space->size(); ++i) {
            const auto e = space->at(i);
            TrainingSpec t = s.training;
            t.precision = e.precision;
            unmodeled += !check_plan(s.model, t, e.plan, 16) && not_modeled_reason(s.model, t, e.plan) ? 1 : 0;
        }
        QCOMPARE(r.rejected[reason(RejectReason::NotModeled)], unmodeled);
        if (unmodeled > 0) {
            QVERIFY(r.example[reason(RejectReason::NotModeled)].message.find("not modeled") != std::string::npos);
        }

        // The search block reads and writes the new lists; ZeRO stages are range-checked before narrowing.
        nlohmann::json j = scenario_to_json(s);
        QCOMPARE(j["search"]["precision"], nlohmann::json({"bf16", "fp8"}));
        QCOMPARE(j["search"]["cp"], nlohmann::json({1, 2}));
        const auto back = scenario_from_json(j);
        QVERIFY2(back.ok(), back.ok() ? "" : back.first_error().c_str());
        QCOMPARE(back->search->cp, s.search->cp);
        QCOMPARE(back->search->precision, s.search->precision);
        QCOMPARE(back->search->tp_overlap, s.search->tp_overlap);
        QCOMPARE(back->search->zero_stage, s.search->zero_stage);
        j["search"]["zero_stage"] = {4294967297LL};
        QVERIFY(!scenario_from_json(j).ok());
        j["search"]["zero_stage"] = {0};
        j["search"]["precision"] = {"fp32"};
        QVERIFY(!scenario_from_json(j).ok());
    }

    // Issue 17: pruning by lower bounds returns the same front and top-k lists as simulating every plan,
    // on the shipped examples with search blocks and on default searches of others; every feasible plan's
    // simulated time is at least its bound; and the counts partition the space.
    void pruning_keeps_the_front_and_the_top_lists_data()
    {
        QTest::addColumn<QString>("example");
        QTest::addColumn<bool>("default_search");
        QTest::newRow("mt-nlg-530b") << "mt-nlg-530b.json" << false;
        QTest::newRow("llama3-70b-b200-fp8") << "llama3-70b-b200-fp8.json" << false;
        QTest::newRow("gpt3-175b, default search") << "gpt3-175b.json" << true;
        QTest::newRow("gpt-1.3b, default search, 4 GPU counts") << "gpt-1.3b.json" << true;
        QTest::newRow("llama3-70b-h100, default search") << "llama3-70b-h100.json" << true;
        QTest::newRow("qwen3-235b-a22b-gb200 (balanced layouts)") << "qwen3-235b-a22b-gb200.json" << false;
        // Issue 17's DeepSeek-V3 space (MoE, MLA, MTP, uneven stages, two GPU types, ep, etp, cp, vp,
        // precision, overlaps), sub-sampled so that simulating every plan stays quick.
        QTest::newRow("deepseek-v3 space, sub-sampled") << "../bench/deepseek-v3-space.json" << false;
        // The example's own search block: its plan states a layout, so pp 4, 8 and 16 run the standard layouts.
        QTest::newRow("deepseek-v3 example (standard layouts), sub-sampled") << "deepseek-v3-671b-h800.json" << false;
    }
    void pruning_keeps_the_front_and_the_top_lists()
    {
        QFETCH(QString, example);
        QFETCH(bool, default_search);
        auto loaded = load_scenario(std::string(VTRAIN_SOURCE_DIR) + "/examples/" + example.toStdString());
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.first_error().c_str());
        Scenario s = std::move(loaded).value();
        if (default_search) {
            s.search = SearchSpace{};
            if (example.startsWith("gpt-1.3b")) {
                s.search->num_gpus = {8, 16, 32, 64};
            }
        }
        if (example.contains("deepseek")) {
            SearchSpace& q = *s.search;
            q.gpu = {"h800-sxm5-80gb", "h200-sxm-141gb"};
            q.num_gpus = {1024, 2048};
            q.tp = {1, 2};
            q.cp = {1, 2};
            q.pp = example.contains("h800") ? std::vector<int>{4, 8, 16} : std::vector<int>{4, 16};
            q.ep = {16, 64};
            q.etp = {1};
            q.micro_batch = {1, 2};
            q.virtual_stages = {2};
            q.recompute = {Recompute::None, Recompute::Full};
            q.zero_stage = {1, 2};
        }
        if (!(s.training.tokens > 0)) {
            s.training.tokens = 1e11;
        }
        std::map<std::string, GpuProfile> gpus{{s.cluster.gpu, test::shipped_profile(s.cluster.gpu)}};
        for (const std::string& id : s.search->gpu) {
            gpus.emplace(id, test::shipped_profile(id));
        }
        ExploreOptions options;
        options.threads = 2;
        options.top_k = 10;
        options.keep_all_rows = true;
        RunControl control;
        const auto all = explore(s, gpus, options, control);
        QVERIFY(all.ok());
        options.keep_all_rows = false;
        options.prune = true;
        const auto pruned = explore(s, gpus, options, control);
        QVERIFY(pruned.ok());
        QCOMPARE(all->bounded, std::uint64_t{0});
        QCOMPARE(pruned->feasible + pruned->bounded + rejected_total(*pruned), pruned->total);
        QCOMPARE(pruned->total, all->total);
        auto same = [](const std::vector<PlanRow>& a, const std::vector<PlanRow>& b) {
            std::string x, y;
            for (const auto& r : a) {
                x += plan_row_to_csv(r) + "\n";
            }
            for (const auto& r : b) {
                y += plan_row_to_csv(r) + "\n";
            }
            return x == y;
        };
        QVERIFY(same(all->front, pruned->front));
        QVERIFY(same(all->fastest, pruned->fastest));
        QVERIFY(same(all->cheapest, pruned->cheapest));
        QVERIFY(same(all->best_mfu, pruned->best_mfu));
        qInfo("%s: %llu plans, %llu feasible without pruning; with it %llu simulated, %llu bounded out", qPrintable(example),
              static_cast<unsigned long long>(all->total), static_cast<unsigned long long>(all->feasible),
              static_cast<unsigned long long>(pruned->feasible), static_cast<unsigned long long>(pruned->bounded));
        if (all->feasible > 100) {
            QVERIFY(pruned->bounded > 0);
        }
        // The bound holds on every feasible plan.
        for (const PlanRow& row : all->rows) {
            const ResolvedCluster cluster = resolve_cluster(cluster_for_gpu(s, row.gpu, 0), gpus.at(row.gpu));
            TrainingSpec t = s.training;
            t.precision = row.precision;
            const double bound = iteration_time_lower_bound_s(s.model, t, cluster, row.plan);
            QVERIFY2(bound > 0 && bound <= row.iteration_time_s,
                     qPrintable(QString::fromStdString(plan_row_label(row)) +
                                QString(": bound %1 s, simulated %2 s").arg(bound).arg(row.iteration_time_s)));
        }
    }

    void pruned_results_do_not_depend_on_thread_count()
    {
        Scenario s = small_scenario();
        s.search = SearchSpace{};
        s.search->num_gpus = {8, 16, 24};
        s.search->gpu = {"a100-sxm4-80gb", "h100-sxm5-80gb"};
        auto sweep = [&](int threads, std::string& csv) {
            ExploreOptions options;
            options.threads = threads;
            options.prune = true;
            options.top_k = 5;
            ExploreResult r = run(s, options, [&csv](const PlanRow& row) { csv += plan_row_to_csv(row) + "\n"; });
            nlohmann::json j = explore_result_to_json(r);
            j.erase("elapsed_s");
            return j.dump();
        };
        std::string csv1, csv2, csv4;
        const std::string one = sweep(1, csv1);
        QCOMPARE(sweep(2, csv2), one);
        QCOMPARE(sweep(4, csv4), one);
        QCOMPARE(csv1, csv2);
        QCOMPARE(csv1, csv4);
        QVERIFY(nlohmann::json::parse(one)["bounded"].get<std::uint64_t>() > 0);
    }

    void rejection_reasons_data()
    {
        QTest::addColumn<int>("expected");
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("micro_batch");
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("virtual_stages");
        QTest::addColumn<bool>("sequence_parallel");
        QTest::addColumn<int>("num_gpus");
        QTest::addColumn<QString>("field");
        const int f = static_cast<int>(Schedule::OneFOneB);
        const int il = static_cast<int>(Schedule::Interleaved);
        QTest::newRow("tp x pp does not divide GPUs") << int(RejectReason::GpuCountMismatch) << 1 << 3 << 1 << f << 1 << false << 16 << "plan";
        QTest::newRow("tp does not divide heads") << int(RejectReason::TpNotDividingHeads) << 8 << 1 << 1 << f << 1 << false << 16 << "plan.tp";
        // More stages than the 12 layers: no standard layout either.
        QTest::newRow("pp does not divide layers") << int(RejectReason::PpNotDividingLayers) << 1 << 16 << 1 << f << 1 << false << 16 << "plan.pp";
        QTest::newRow("batch not divisible") << int(RejectReason::BatchNotDivisible) << 1 << 1 << 8 << f << 1 << false << 16 << "plan.micro_batch";
        QTest::newRow("interleaved, pp = 1") << int(RejectReason::InterleavedNeedsPipeline) << 1 << 1 << 1 << il << 2 << false << 16
                                             << "plan.virtual_stages";
        QTest::newRow("interleaved, micro-batches % pp")
            << int(RejectReason::InterleavedNeedsPipeline) << 1 << 2 << 8 << il << 2 << false << 16 << "plan.micro_batch";
        QTest::newRow("virtual stages do not divide layers")
            << int(RejectReason::PpNotDividingLayers) << 1 << 2 << 1 << il << 7 << false << 16 << "plan.virtual_stages";
        QTest::newRow("sequence parallel with tp = 1")
            << int(RejectReason::SequenceParallelNeedsTp) << 1 << 1 << 1 << f << 1 << true << 16 << "plan.sequence_parallel";
        QTest::newRow("tp wider than a node") << int(RejectReason::TpSpansNodes) << 4 << 1 << 1 << f << 1 << false << 16 << "plan.tp";
    }
    void rejection_reasons()
    {
        QFETCH(int, expected);
        QFETCH(int, tp);
        QFETCH(int, pp);
        QFETCH(int, micro_batch);
        QFETCH(int, schedule);
        QFETCH(int, virtual_stages);
        QFETCH(bool, sequence_parallel);
        QFETCH(int, num_gpus);
        QFETCH(QString, field);
        Plan p = plan(tp, pp, micro_batch, static_cast<Schedule>(schedule), virtual_stages);
        p.sequence_parallel = sequence_parallel;
        Scenario s = single_plan(p, num_gpus);
        if (expected == int(RejectReason::TpSpansNodes)) {
            s.cluster.gpus_per_node = 2;
        }
        const ExploreResult r = run(s);
        QCOMPARE(r.total, std::uint64_t{1});
        QCOMPARE(r.feasible, std::uint64_t{0});
        QCOMPARE(r.rejected[expected], std::uint64_t{1});
        QCOMPARE(QString::fromStdString(r.example[expected].field), field);
        QVERIFY(!r.example[expected].message.empty());
        if (expected == int(RejectReason::TpSpansNodes)) {
            ExploreOptions relaxed;
            relaxed.allow_tp_across_nodes = true;
            QCOMPARE(run(s, relaxed).feasible, std::uint64_t{1}); // relaxing the rule is an option
        }
    }

    void out_of_memory_names_the_stage()
    {
        Scenario s = single_plan(plan(1, 1, 1), 16);
        s.model = test::gpt(12, 8192, 64, 1024, 50304); // ~10B parameters unsharded: 160 GB of weights and Adam states
        const ExploreResult r = run(s);
        QCOMPARE(r.rejected[reason(RejectReason::OutOfMemory)], std::uint64_t{1});
        QVERIFY(r.example[reason(RejectReason::OutOfMemory)].message.find("stage 0 needs") != std::string::npos);
    }

    void counts_add_up_and_rows_match_the_simulator()
    {
        const Scenario s = small_scenario();
        ExploreOptions options;
        options.keep_all_rows = true;
        options.threads = 2;
        RunControl control;
        const auto result = explore(s, profiles(), options, control);
        QVERIFY(result.ok());
        const ExploreResult& r = *result;
        QVERIFY(!r.cancelled);
        QCOMPARE(r.evaluated, r.total);
        QCOMPARE(r.feasible + rejected_total(r), r.total);
        QCOMPARE(control.done.load(), r.total);
        QCOMPARE(control.total.load(), r.total);
        QCOMPARE(r.rows.size(), static_cast<std::size_t>(r.feasible));
        QVERIFY(r.feasible > 100);
        for (std::size_t i = 0; i < r.rejected.size(); ++i) {
            QCOMPARE(r.rejected[i] > 0, !r.example[i].message.empty()); // one example per reason seen, none otherwise
        }

        // Every index is feasible exactly when the simulator, asked directly, accepts the plan and it fits.
        const auto space = make_plan_space(s, profiles(), false);
        const GpuProfile& a100 = profiles().at("a100-sxm4-80gb");
        std::size_t next_row = 0;
        for (std::uint64_t i = 0; i < r.total; ++i) {
            const auto e = space->at(i);
            SimulationOptions so;
            so.timeline = false;
            const auto sim = e.plan.dp > 0 && e.plan.tp <= 8 ? simulate(s, e.plan, a100, so) : Expected<SimulationResult>(Diagnostic{"", "rejected"});
            const bool feasible = sim.ok() && sim->fits_memory;
            const bool listed = next_row < r.rows.size() && r.rows[next_row].index == i;
            QCOMPARE(listed, feasible);
            if (!listed) {
                continue;
            }
            const PlanRow& row = r.rows[next_row++];
            QCOMPARE(row.plan, e.plan);
            QCOMPARE(row.num_gpus, 16);
            QCOMPARE(row.gpu, std::string("a100-sxm4-80gb"));
            QVERIFY(std::abs(row.iteration_time_s / sim->iteration_time_s - 1) < 1e-9);
            QVERIFY(std::abs(row.bubble_fraction - sim->bubble_fraction) < 1e-9);
            QVERIFY(std::abs(row.mfu / sim->mfu - 1) < 1e-9);
            QVERIFY(std::abs(row.peak_memory_gib / sim->peak_memory_gib - 1) < 1e-12);
            QVERIFY(std::abs(row.cost_usd - row.training_days * 24 * 16 * 4.10) < 1e-6 * row.cost_usd);
        }
        QCOMPARE(next_row, r.rows.size());
    }

    void front_is_exact_on_the_sweep()
    {
        ExploreOptions options;
        options.keep_all_rows = true;
        const ExploreResult r = run(small_scenario(), options);
        QVERIFY(!r.front.empty());
        std::set<std::uint64_t> on_front;
        for (const auto& f : r.front) {
            on_front.insert(f.index);
            QVERIFY(f.on_front);
        }
        for (const auto& row : r.rows) {
            const bool dominated = std::any_of(r.rows.begin(), r.rows.end(), [&](const PlanRow& o) { return dominates(o, row); });
            QCOMPARE(on_front.count(row.index) == 1, !dominated);
            QCOMPARE(row.on_front, !dominated);
        }
        // Top-k lists are sorted and hold the best k.
        QCOMPARE(r.fastest.size(), std::size_t{20});
        auto by_time = r.rows;
        std::sort(by_time.begin(), by_time.end(), [](const PlanRow& a, const PlanRow& b) {
            return a.training_days != b.training_days ? a.training_days < b.training_days : a.index < b.index;
        });
        for (std::size_t i = 0; i < r.fastest.size(); ++i) {
            QCOMPARE(r.fastest[i].index, by_time[i].index);
        }
        QVERIFY(std::is_sorted(r.cheapest.begin(), r.cheapest.end(), [](const PlanRow& a, const PlanRow& b) { return a.cost_usd < b.cost_usd; }));
        QVERIFY(std::is_sorted(r.best_mfu.begin(), r.best_mfu.end(), [](const PlanRow& a, const PlanRow& b) { return a.mfu > b.mfu; }));
    }

    void pareto_matches_brute_force_on_random_sets()
    {
        std::mt19937_64 rng(12345);
        for (int trial = 0; trial < 300; ++trial) {
            const int n = static_cast<int>(rng() % 200);
            const int levels = 1 + static_cast<int>(rng() % 30); // few levels: many ties
            std::vector<PlanRow> rows(static_cast<std::size_t>(n));
            for (int i = 0; i < n; ++i) {
                rows[i].index = static_cast<std::uint64_t>(i) * 3 + 1; // unique; the shuffle below breaks input order
                rows[i].training_days = static_cast<double>(rng() % levels);
                rows[i].cost_usd = static_cast<double>(rng() % levels) * 1000;
            }
            std::shuffle(rows.begin(), rows.end(), rng);
            const auto front = pareto_front(rows);
            std::set<std::uint64_t> expected;
            for (const auto& r : rows) {
                if (std::none_of(rows.begin(), rows.end(), [&](const PlanRow& o) { return dominates(o, r); })) {
                    expected.insert(r.index);
                }
            }
            std::set<std::uint64_t> got;
            for (const auto& f : front) {
                got.insert(f.index);
                QVERIFY(f.on_front);
            }
            QCOMPARE(got, expected);
            QCOMPARE(front.size(), got.size());
            for (std::size_t i = 1; i < front.size(); ++i) {
                QVERIFY(front[i - 1].training_days < front[i].training_days); // by increasing time, strictly
                QVERIFY(front[i - 1].cost_usd > front[i].cost_usd);
            }
        }
    }

    void results_do_not_depend_on_thread_count()
    {
        Scenario s = small_scenario();
        s.search = SearchSpace{};
        s.search->num_gpus = {8, 16, 24};
        s.search->gpu = {"a100-sxm4-80gb", "h100-sxm5-80gb"};
        auto sweep = [&](int threads, std::string& csv) {
            ExploreOptions options;
            options.threads = threads;
            options.keep_all_rows = true;
            return run(s, options, [&csv](const PlanRow& row) { csv += plan_row_to_csv(row) + "\n"; });
        };
        std::string csv1, csv2, csv4;
        const ExploreResult one = sweep(1, csv1);
        const ExploreResult two = sweep(2, csv2);
        sweep(4, csv4); // more threads than cores: chunks finish in a different order still
        QVERIFY(!csv1.empty());
        QCOMPARE(csv1, csv2);
        QCOMPARE(csv1, csv4);
        QCOMPARE(one.total, two.total);
        QCOMPARE(one.feasible, two.feasible);
        QCOMPARE(one.rejected, two.rejected);
        for (std::size_t i = 0; i < one.example.size(); ++i) {
            QCOMPARE(one.example[i].to_string(), two.example[i].to_string());
        }
        auto dump = [](const ExploreResult& r) { return explore_result_to_json(r).dump(); };
        nlohmann::json a = explore_result_to_json(one), b = explore_result_to_json(two);
        a.erase("elapsed_s");
        b.erase("elapsed_s");
        QCOMPARE(a.dump(), b.dump());
        QVERIFY(!dump(one).empty());
        QCOMPARE(one.rows.size(), two.rows.size());
        // Both GPU types and all GPU counts appear; the scenario's price applies to its own GPU only.
        std::set<std::string> gpus;
        std::set<int> counts;
        for (const auto& row : one.rows) {
            gpus.insert(row.gpu);
            counts.insert(row.num_gpus);
            const double price = row.gpu == "a100-sxm4-80gb" ? 4.10 : profiles().at(row.gpu).price_usd_per_gpu_hour;
            QVERIFY(std::abs(row.cost_usd / (row.training_days * 24 * row.num_gpus * price) - 1) < 1e-9);
        }
        QCOMPARE(gpus.size(), std::size_t{2});
        QCOMPARE(counts, (std::set<int>{8, 16, 24}));
    }

    // cluster.gpu_prices prices the search's other GPU types (the GUI shows and edits one price per type):
    // every row of such a type costs its listed price, the cluster's own GPU keeps price_per_gpu_hour, and
    // the field survives a round trip through JSON; listing the cluster's own GPU there is refused.
    void other_gpu_types_cost_their_listed_price()
    {
        Scenario s = small_scenario();
        s.search = SearchSpace{};
        s.search->num_gpus = {8, 16};
        s.search->gpu = {"a100-sxm4-80gb", "h100-sxm5-80gb"};
        s.cluster.gpu_prices = {{"h100-sxm5-80gb", 2.75}};
        const auto copy = scenario_from_json(scenario_to_json(s));
        QVERIFY2(copy.ok(), copy.ok() ? "" : copy.first_error().c_str());
        QCOMPARE(copy.value().cluster.gpu_prices, s.cluster.gpu_prices);
        ExploreOptions options;
        options.keep_all_rows = true;
        const ExploreResult r = run(copy.value(), options);
        std::set<std::string> gpus;
        for (const auto& row : r.rows) {
            gpus.insert(row.gpu);
            const double price = row.gpu == "h100-sxm5-80gb" ? 2.75 : 4.10;
            QVERIFY(std::abs(row.cost_usd / (row.training_days * 24 * row.num_gpus * price) - 1) < 1e-9);
        }
        QCOMPARE(gpus.size(), std::size_t{2});
        nlohmann::json own = scenario_to_json(s);
        own["cluster"]["gpu_prices"] = {{"a100-sxm4-80gb", 3.0}};
        const auto refused = scenario_from_json(own);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.first_error().find("cluster.gpu_prices") != std::string::npos, refused.first_error().c_str());
        // A key that is no profile id (a path, control characters, 10,000 characters) is refused in a short line.
        for (const std::string& key : {std::string("../h100"), std::string("h100\n\x1b[2J"), std::string(10'000, 'x')}) {
            nlohmann::json odd = scenario_to_json(s);
            odd["cluster"]["gpu_prices"] = {{key, 3.0}};
            const auto bad = scenario_from_json(odd);
            QVERIFY(!bad.ok());
            const std::string message = bad.first_error();
            QVERIFY2(message.find("not a GPU profile id") != std::string::npos, message.c_str());
            QVERIFY2(message.size() < 400 && message.find('\x1b') == std::string::npos && message.find('\n') == std::string::npos, message.c_str());
        }
    }

    void fast_path_matches_the_task_graph_over_a_sweep()
    {
        Scenario s = small_scenario();
        s.search = SearchSpace{};
        s.search->num_gpus = {8, 16};
        auto sweep = [&](bool exact) {
            std::string csv;
            ExploreOptions options;
            options.exact_simulation = exact;
            const ExploreResult r = run(s, options, [&csv](const PlanRow& row) { csv += plan_row_to_csv(row) + "\n"; });
            return csv;
        };
        const std::string fast = sweep(false);
        QVERIFY(!fast.empty());
        QCOMPARE(fast, sweep(true));
    }

    void cancellation_keeps_counts_consistent()
    {
        Scenario s = small_scenario();
        s.search = SearchSpace{};
        s.search->num_gpus = {8, 16, 32};
        RunControl control;
        std::uint64_t seen = 0;
        ExploreOptions options;
        options.threads = 2;
        const auto result = explore(s, profiles(), options, control, [&](const PlanRow&) {
            if (++seen == 50) {
                control.cancel = true;
            }
        });
        QVERIFY(result.ok());
        QVERIFY(result->cancelled);
        QVERIFY(result->evaluated < result->total);
        QCOMPARE(result->feasible + rejected_total(*result), result->evaluated);
        QCOMPARE(control.done.load(), result->evaluated);
        QVERIFY(result->feasible >= 50);
        QCOMPARE(seen, result->feasible);
        for (const auto& f : result->front) {
            QVERIFY(f.index < result->total);
        }

        RunControl before;
        before.cancel = true; // cancelled before it starts: nothing evaluated, still a valid result
        const auto none = explore(s, profiles(), options, before);
        QVERIFY(none.ok());
        QVERIFY(none->cancelled);
        QCOMPARE(none->evaluated, std::uint64_t{0});
        QVERIFY(none->front.empty());
    }

    void bad_input_names_the_field()
    {
        Scenario s = small_scenario();
        s.search = SearchSpace{};
        s.search->gpu = {"no-such-gpu"};
        RunControl control;
        auto r = explore(s, profiles(), {}, control);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.errors().front().field), QString("search.gpu"));

        Scenario t = small_scenario();
        t.training.tokens = 0;
        r = explore(t, profiles(), {}, control);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.errors().front().field), QString("training.tokens"));
    }

    void csv_row_has_every_column()
    {
        ExploreOptions options;
        options.top_k = 1;
        const ExploreResult r = run(small_scenario(), options);
        QCOMPARE(r.fastest.size(), std::size_t{1});
        const std::string header = plan_row_csv_header();
        const std::string line = plan_row_to_csv(r.fastest.front());
        QCOMPARE(std::count(line.begin(), line.end(), ','), std::count(header.begin(), header.end(), ','));
    }

    // Every row carries its GPU profile's uncertainty band: the calibrated A100 profile has one, the
    // modeled H100 profile has none (the band collapses onto the prediction).
    void rows_carry_the_profiles_band()
    {
        ExploreOptions options;
        options.keep_all_rows = true;
        const ExploreResult r = run(small_scenario(), options);
        QVERIFY(!r.rows.empty());
        for (const PlanRow& row : r.rows) {
            const auto band = prediction_band(profiles().at(row.gpu));
            const double low = band ? band->low : 1.0;
            const double high = band ? band->high : 1.0;
            QCOMPARE(row.iteration_time_low_s, row.iteration_time_s * low);
            QCOMPARE(row.iteration_time_high_s, row.iteration_time_s * high);
            QVERIFY(row.iteration_time_low_s <= row.iteration_time_s && row.iteration_time_s <= row.iteration_time_high_s);
        }
        QVERIFY(prediction_band(profiles().at("a100-sxm4-80gb")).has_value());
    }

    // Issue 17: layouts for layer counts pp x v does not divide, counting the embedding and the loss as a
    // layer each (Megatron-Bridge's Qwen3-235B-A22B recipe writes "Et*3|(t*4|)*22t*3L" for pp 8 x v 3).
    void balanced_layouts_count_embedding_and_loss()
    {
        QCOMPARE(balanced_pipeline_layout(94, 0, 8, 3), std::string("Et*3|(t*4|)*22t*3L"));
        QCOMPARE(balanced_pipeline_layout(94, 0, 4, 1), std::string("Et*23|(t*24|)*2t*23L"));
        QCOMPARE(balanced_pipeline_layout(95, 0, 8, 1), std::string("Et*12|(t*12|)*6t*11L")); // 95 + 1 = 96: the loss counts
        QCOMPARE(balanced_pipeline_layout(61, 1, 7, 1), std::string("Et*8|(t*9|)*5t*8mL"));   // MTP rides in the last stage
        QCOMPARE(balanced_pipeline_layout(96, 0, 8, 1), std::string());                       // even split: no layout needed
        QCOMPARE(balanced_pipeline_layout(93, 0, 8, 1), std::string());                       // neither 94 nor 95 splits over 8
        QCOMPARE(balanced_pipeline_layout(4, 0, 2, 3), std::string("E|(t|)*4L"));             // 6 stages of one: E and L alone
        // Every layout it writes resolves to the model's layers.
        for (const auto& [layers, pp, v] : {std::tuple{94, 8, 3}, {94, 4, 1}, {95, 8, 1}, {4, 2, 3}, {126, 16, 1}}) {
            ModelSpec m = test::gpt(layers, 1024, 16);
            Plan p;
            p.pp = pp;
            p.schedule = v > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
            p.virtual_stages = v;
            p.pipeline_layout = balanced_pipeline_layout(layers, 0, pp, v);
            PipelineLayout out;
            QVERIFY2(!resolve_pipeline_layout(m, p, out), p.pipeline_layout.c_str());
        }
    }

    // Issue 17: a pp x v that does not divide the layers is tried with a few standard layouts (issue 15),
    // each of which holds the model; DeepSeek-V3's published PP16 shape is one of them.
    void standard_layouts_hold_the_model()
    {
        auto stage_layers = [](const ModelSpec& m, const Plan& p) {
            PipelineLayout out;
            std::vector<int> counts;
            if (resolve_pipeline_layout(m, p, out)) {
                return counts;
            }
            for (const VirtualStage& v : out.virtual_stages) {
                counts.push_back(v.layers);
            }
            return counts;
        };
        ModelSpec ds = test::gpt(61, 1024, 16);
        ds.mtp_layers = 1;
        Plan p16;
        p16.pp = 16;
        const auto pp16 = standard_pipeline_layouts(61, 1, 16, 1);
        std::vector<int> published(15, 4);
        published.push_back(1);
        bool has_published = false;
        for (const std::string& layout : pp16) {
            p16.pipeline_layout = layout;
            has_published = has_published || stage_layers(ds, p16) == published;
        }
        QVERIFY(has_published);
        // Most even, lighter ends: 61 over 16 is 13 stages of 4 and 3 of 3 (last, first, second to last).
        p16.pipeline_layout = pp16.front();
        std::vector<int> even(16, 4);
        even[15] = even[0] = even[14] = 3;
        QCOMPARE(stage_layers(ds, p16), even);
        QCOMPARE(pipeline_layout_from_stage_layers({4, 4, 4, 1}, 1), std::string("Et*4|(t*4|)*1t*4|tmL"));
        QCOMPARE(pipeline_layout_from_stage_layers({3, 2}, 0), std::string("Et*3|t*2L"));
        QVERIFY(standard_pipeline_layouts(96, 0, 8, 1).empty());                                         // even split: nothing to add
        QVERIFY(standard_pipeline_layouts(12, 0, 16, 1).empty());                                        // more stages than layers
        QCOMPARE(standard_pipeline_layouts(94, 0, 8, 3).front(), balanced_pipeline_layout(94, 0, 8, 3)); // Megatron-Bridge's first
        for (const auto& [layers, mtp, pp, v] :
             {std::tuple{61, 1, 16, 1}, {61, 1, 8, 1}, {61, 1, 4, 3}, {61, 1, 32, 1}, {94, 0, 8, 3}, {95, 0, 4, 2}, {13, 0, 2, 3}}) {
            ModelSpec m = test::gpt(layers, 1024, 16);
            m.mtp_layers = mtp;
            Plan p;
            p.pp = pp;
            p.schedule = v > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
            p.virtual_stages = v;
            const auto all = standard_pipeline_layouts(layers, mtp, pp, v);
            QVERIFY(!all.empty());
            for (const std::string& layout : all) {
                p.pipeline_layout = layout;
                PipelineLayout out;
                const auto error = resolve_pipeline_layout(m, p, out);
                QVERIFY2(!error, (layout + ": " + error.value_or("")).c_str());
                for (const VirtualStage& vs : out.virtual_stages) {
                    QVERIFY2(vs.layers >= 1, layout.c_str()); // no empty stage
                }
            }
        }
    }

    // A scenario's own plan is in its default space. Llama 3.1 405B's long-context example (126 layers on
    // 16 stages, 7 on the first and last) has no search block: pp 16 is no divisor of 126, so the default
    // pp list (the divisors) left it out and `vtrain explore` rejected all 17,010 plans while its own plan
    // ran. The default now holds the powers of two and the plan's own depth as well.
    void the_scenarios_own_plan_is_in_its_default_space()
    {
        auto loaded = load_scenario(std::string(VTRAIN_SOURCE_DIR) + "/examples/llama3.1-405b-h100-128k.json");
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.first_error().c_str());
        const Scenario s = std::move(loaded).value();
        QVERIFY(!s.search);
        QCOMPARE(s.plan->pp, 16);
        // The divisors of 126 and the powers of two up to it (16 among them).
        const std::vector<int> expected{1, 2, 3, 4, 6, 7, 8, 9, 14, 16, 18, 21, 32, 42, 63, 64, 126};
        QCOMPARE(default_pipeline_depths(s), expected);
        Scenario other = s;
        other.plan->pp = 14;
        QCOMPARE(default_pipeline_depths(other), expected); // nothing added twice
        other.plan->pp = 5;                                 // neither a divisor nor a power of two: the plan's own depth joins
        std::vector<int> with_five = expected;
        with_five.insert(with_five.begin() + 4, 5);
        QCOMPARE(default_pipeline_depths(other), with_five);
        other.plan.reset();
        QCOMPARE(default_pipeline_depths(other), expected);

        std::map<std::string, GpuProfile> gpus{{s.cluster.gpu, test::shipped_profile(s.cluster.gpu)}};
        ExploreOptions options;
        options.threads = 2;
        options.keep_all_rows = true;
        RunControl control;
        const auto r = explore(s, gpus, options, control);
        QVERIFY2(r.ok(), r.ok() ? "" : r.first_error().c_str());
        QVERIFY(r->feasible > 0);
        QVERIFY(!r->front.empty());
        const Plan& own = *s.plan;
        const auto row = std::find_if(r->rows.begin(), r->rows.end(), [&](const PlanRow& x) {
            const Plan& p = x.plan;
            return p.tp == own.tp && p.cp == own.cp && p.pp == own.pp && p.dp == own.dp && p.micro_batch == own.micro_batch &&
                   p.schedule == own.schedule && p.recompute == own.recompute && p.sequence_parallel == own.sequence_parallel &&
                   p.zero_stage == own.zero_stage;
        });
        QVERIFY2(row != r->rows.end(), "the scenario's own plan is not among the feasible rows");
        const auto simulated = simulate(s, own, gpus.at(s.cluster.gpu));
        QVERIFY2(simulated.ok(), simulated.ok() ? "" : simulated.first_error().c_str());
        QVERIFY2(std::abs(row->iteration_time_s / simulated->iteration_time_s - 1) < 1e-9,
                 qPrintable(QString::number(row->iteration_time_s) + " vs " + QString::number(simulated->iteration_time_s)));

        // The 8K example states its layout as a string, which does not carry over: every default depth and
        // virtual-stage count that does not divide the 126 layers is tried with the standard layouts, and
        // none is enumerated only to be rejected for it (v = 8 on 16 stages once was: 128 > 126).
        auto short_context = load_scenario(std::string(VTRAIN_SOURCE_DIR) + "/examples/llama3.1-405b-h100.json");
        QVERIFY(short_context.ok());
        QVERIFY(!short_context->plan->pipeline_layout.empty());
        options.keep_all_rows = false;
        options.prune = true;
        const auto swept = explore(*short_context, gpus, options, control);
        QVERIFY(swept.ok());
        QCOMPARE(swept->rejected[reason(RejectReason::PpNotDividingLayers)], std::uint64_t{0});
        QVERIFY(std::any_of(swept->front.begin(), swept->front.end(), [](const PlanRow& x) { return x.plan.pp == 16; }));

        // The other default lists too: the FSDP example's ZeRO-3, an odd micro-batch, a tp of 6.
        auto fsdp_file = load_scenario(std::string(VTRAIN_SOURCE_DIR) + "/examples/llama3-8b-h100-fsdp.json");
        QVERIFY(fsdp_file.ok());
        Scenario* fsdp = &fsdp_file.value();
        QCOMPARE(fsdp->plan->zero_stage, 3);
        fsdp->plan->micro_batch = 3;
        fsdp->plan->tp = 6;
        const std::map<std::string, GpuProfile> h100{{fsdp->cluster.gpu, test::shipped_profile(fsdp->cluster.gpu)}};
        const auto space = make_plan_space(*fsdp, h100, false);
        QVERIFY(space.ok());
        QCOMPARE(space->zero_stage, (std::vector<int>{0, 1, 2, 3}));
        QCOMPARE(space->micro_batch, (std::vector<int>{1, 2, 3, 4, 8, 16}));
        QCOMPARE(space->tp, (std::vector<int>{1, 2, 4, 6, 8}));
        fsdp->plan.reset();
        QCOMPARE(make_plan_space(*fsdp, h100, false)->zero_stage, (std::vector<int>{0, 1, 2}));
    }

    // `vtrain explore examples/qwen3-235b-a22b-gb200.json` rejected all 10,800 plans ("pp does not divide
    // the 94 layers"); with the balanced layouts it finds feasible plans, each reporting its layout.
    void qwen3_explores_with_balanced_layouts()
    {
        auto loaded = load_scenario(std::string(VTRAIN_SOURCE_DIR) + "/examples/qwen3-235b-a22b-gb200.json");
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.first_error().c_str());
        const Scenario s = std::move(loaded).value();
        std::map<std::string, GpuProfile> gpus{{s.cluster.gpu, test::shipped_profile(s.cluster.gpu)}};
        ExploreOptions options;
        options.threads = 2;
        options.top_k = 5;
        options.prune = true;
        RunControl control;
        const auto r = explore(s, gpus, options, control);
        QVERIFY2(r.ok(), r.ok() ? "" : r.first_error().c_str());
        // 10,800 combinations of the lists, each pp x v that does not divide 94 once per standard layout.
        const auto space = make_plan_space(s, gpus, false);
        QVERIFY(space.ok());
        QCOMPARE(r->total, space->size());
        QVERIFY(r->total > std::uint64_t{10800});
        QVERIFY(r->feasible > 0);
        QVERIFY(!r->front.empty());
        bool any_layout = false;
        for (const auto* list : {&r->front, &r->fastest, &r->cheapest}) {
            for (const PlanRow& row : *list) {
                const int n = row.plan.pp * plan_chunks(row.plan);
                const auto standard = standard_pipeline_layouts(94, 0, row.plan.pp, plan_chunks(row.plan));
                if (94 % n == 0) {
                    QCOMPARE(row.plan.pipeline_layout, std::string());
                } else {
                    QVERIFY(std::find(standard.begin(), standard.end(), row.plan.pipeline_layout) != standard.end());
                }
                any_layout = any_layout || !row.plan.pipeline_layout.empty();
                QVERIFY(plan_row_to_csv(row).find(row.plan.pipeline_layout) != std::string::npos);
            }
        }
        QVERIFY(any_layout); // no pp of 4, 8, 16 divides 94: every plan runs a balanced layout
        qInfo("qwen3: %llu plans, %llu feasible, %llu bounded; fastest %s", static_cast<unsigned long long>(r->total),
              static_cast<unsigned long long>(r->feasible), static_cast<unsigned long long>(r->bounded), plan_row_label(r->fastest.front()).c_str());
    }

    // Issue 17's missing axes: data-parallel overlap, rank order and host offload are searched like the
    // others, their lists read and written, each combination in the space once.
    void overlap_rank_order_and_offload_are_search_axes()
    {
        Scenario s = small_scenario();
        s.search = SearchSpace{};
        s.search->tp = {2};
        s.search->pp = {2};
        s.search->micro_batch = {1};
        s.search->schedule = {Schedule::OneFOneB};
        s.search->recompute = {Recompute::None};
        s.search->sequence_parallel = {false};
        s.search->zero_stage = {1};
        s.search->overlap_grad_reduce = {true, false};
        s.search->rank_order = {RankOrder{}, *parse_rank_order("tp-cp-ep-pp-dp")};
        s.search->offload_optimizer = {false, true};
        s.search->offload_activations = {0.0, 0.5};
        const auto space = make_plan_space(s, profiles(), false);
        QVERIFY(space.ok());
        QCOMPARE(space->size(), std::uint64_t{16});
        std::set<std::string> seen;
        for (std::uint64_t i = 0; i < space->size(); ++i) {
            const Plan p = space->at(i).plan;
            seen.insert(std::to_string(p.overlap_grad_reduce) + to_string(p.rank_order) + std::to_string(p.offload_optimizer) +
                        std::to_string(p.offload_activations));
        }
        QCOMPARE(seen.size(), std::size_t{16});

        ExploreOptions options;
        options.keep_all_rows = true;
        const ExploreResult r = run(s, options);
        QCOMPARE(r.feasible, std::uint64_t{16});
        // Offload lowers memory and adds time; the same plan otherwise.
        auto find = [&r](bool ogr, bool pp_dp, bool opt, double act) -> const PlanRow* {
            for (const PlanRow& row : r.rows) {
                if (row.plan.overlap_grad_reduce == ogr && (row.plan.rank_order != RankOrder{}) == pp_dp && row.plan.offload_optimizer == opt &&
                    row.plan.offload_activations == act) {
                    return &row;
                }
            }
            return nullptr;
        };
        const PlanRow* base = find(true, false, false, 0);
        const PlanRow* opt = find(true, false, true, 0);
        const PlanRow* act = find(true, false, false, 0.5);
        const PlanRow* no_overlap = find(false, false, false, 0);
        QVERIFY(base && opt && act && no_overlap);
        QVERIFY(opt->peak_memory_gib < base->peak_memory_gib);
        QVERIFY(opt->iteration_time_s > base->iteration_time_s);
        // The first stage holds two micro-batches' activations in 1F1B: half of them go to the host, the one
        // being computed stays (the last stage, with one set and the logits, is the peak either way).
        const double act_bytes = plan_memory(s.model, s.training, act->plan).front().activations_bytes;
        const double base_bytes = plan_memory(s.model, s.training, base->plan).front().activations_bytes;
        QVERIFY(act_bytes < base_bytes && act_bytes > 0.5 * base_bytes);
        QVERIFY(act->iteration_time_s >= base->iteration_time_s);
        QVERIFY(no_overlap->iteration_time_s >= base->iteration_time_s);
        // 16 GPUs as tp 2 x pp 2 x dp 4 on 8-GPU hosts: pp-dp puts both stages in one host (NVLink sends)
        // and spreads data parallelism over both hosts; the simulated time differs.
        const PlanRow* pp_dp = find(true, true, false, 0);
        QVERIFY(pp_dp && pp_dp->iteration_time_s != base->iteration_time_s);

        const nlohmann::json j = scenario_to_json(s);
        QCOMPARE(j["search"]["rank_order"], nlohmann::json({"tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp"}));
        const auto back = scenario_from_json(j);
        QVERIFY2(back.ok(), back.ok() ? "" : back.first_error().c_str());
        QCOMPARE(back->search->rank_order, s.search->rank_order);
        QCOMPARE(back->search->overlap_grad_reduce, s.search->overlap_grad_reduce);
        QCOMPARE(back->search->offload_optimizer, s.search->offload_optimizer);
        QCOMPARE(back->search->offload_activations, s.search->offload_activations);
        nlohmann::json bad = j;
        bad["search"]["rank_order"] = {"pp-tp-cp-ep-dp"};
        QVERIFY(!scenario_from_json(bad).ok());
        bad = j;
        bad["search"]["offload_activations"] = {1.5};
        QVERIFY(!scenario_from_json(bad).ok());
        // A plan's rank order reads with a reason when wrong, and round-trips when right.
        nlohmann::json plan = j;
        plan["plan"] = {{"tp", 2}, {"pp", 2}, {"dp", 4}, {"micro_batch", 1}, {"rank_order", "dp-tp-cp-ep-pp"}};
        auto wrong = scenario_from_json(plan);
        QVERIFY(!wrong.ok());
        QVERIFY(wrong.first_error().find("rank_order") != std::string::npos);
        plan["plan"]["rank_order"] = "tp-cp-ep-pp-dp";
        plan["plan"]["offload_optimizer"] = true;
        plan["plan"]["offload_activations"] = 0.25;
        const auto right = scenario_from_json(plan);
        QVERIFY2(right.ok(), right.ok() ? "" : right.first_error().c_str());
        QCOMPARE(to_string(right->plan->rank_order), std::string("tp-cp-ep-pp-dp"));
        QCOMPARE(plan_to_json(*right->plan)["offload_activations"].get<double>(), 0.25);
    }
};

QTEST_APPLESS_MAIN(TestExplorer)
#include "tst_explorer.moc"
