// SPDX-License-Identifier: MIT
#pragma once
// The plan space a scenario's "search" block describes, with a stable index for every plan.
//
// Order (outermost first): GPU type, GPU count, tp, cp, pp, ep, etp, micro-batch -- a "group" -- then,
// inside a group, its variants: schedule (interleaved once per virtual-stage count), recompute, sequence
// parallelism, ZeRO stage, precision, TP overlap, MoE overlap, DP overlap, rank order, optimizer offload,
// activation offload. dp = GPU count / (tp x cp x pp); a
// tp x cp x pp that does not divide the GPU count is in the space and rejected (gpu count mismatch), so
// that every combination of the lists is accounted for.
//
// The space is never materialised: a plan's index is a mixed-radix number over the axes, so memory does
// not grow with the lists (search lists of 1,000 values each for tp, pp and virtual stages are 10^11
// plans and a few kilobytes). Only two axes have a length that depends on another: the schedule choices
// depend on pp (default virtual stages) and the sequence-parallel values on tp (default list); group
// sizes are therefore a(tp) x b(pp) x c, and group offsets follow from prefix sums over the tp and pp
// lists alone.
//
// Defaults for lists the search leaves out (or when there is no "search" block):
//   gpu          cluster.gpu                 num_gpus    cluster.num_gpus
//   tp           powers of two up to the largest host, or its NVLink domain capped at 8 where the domain
//                spans hosts (GB200 NVL72); up to 64 with allow_tp_across_nodes
//   pp           every divisor of model.layers and every power of two up to it (default_pipeline_depths)
//   micro_batch  1, 2, 4, 8, 16
//   schedule     gpipe, 1f1b, interleaved
//   virtual_stages (interleaved only) every v >= 2 with pp x v dividing the layers; none for pp = 1
//   recompute    none, selective, full
//   sequence_parallel  false, and true when tp > 1
//   zero_stage   0, 1, 2
//   tp, pp, micro_batch and zero_stage also hold the scenario plan's own value where the list above does
//   not (ZeRO-3 for an FSDP plan, 16 stages over 126 layers): the plan a scenario states is in its space.
//   cp, ep, etp, precision, tp_overlap, moe_overlap, overlap_grad_reduce, rank_order, offload_optimizer,
//                offload_activations: the scenario plan's value (else 1, 1, 0 = tp, training.precision,
//                false, false, true, "tp-cp-ep-dp-pp", false, 0) -- one value each
// Layers that pp x v does not divide: each of the standard layouts (standard_pipeline_layouts(): the one
// that counts the embedding and the loss as a layer each, as Megatron-Bridge splits Qwen3's 94 layers;
// the most even split with lighter end stages; DeepSeek-V3's shape) is a schedule choice of its own,
// written into the plan's pipeline_layout; a pp x v with more virtual stages than layers is rejected as
// before. A scenario plan with first/last stage layer counts keeps them (only the balanced layout is
// tried where it fits). For such a pp the default virtual stages are the v >= 2 whose balanced layout fits.
// Pairing rules, also for explicit lists: virtual_stages only pairs with the interleaved schedule
// (gpipe and 1f1b always have v = 1). Explicit lists are crossed in full: an explicit
// "sequence_parallel": [true] with tp = 1 is in the space and rejected with its reason.
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/scenario.h"

namespace vtrain {

struct PlanVariant {
    Schedule schedule = Schedule::OneFOneB;
    int virtual_stages = 1;
    Recompute recompute = Recompute::None;
    bool sequence_parallel = false;
    int zero_stage = 0;
    Precision precision = Precision::Bf16;
    bool tp_overlap = false;
    bool moe_overlap = false;
    int precision_index = 0; // into PlanSpace::precision
    bool overlap_grad_reduce = true;
    int rank_order_index = 0; // into PlanSpace::rank_order
    bool offload_optimizer = false;
    double offload_activations = 0;
    int layout_index = -1; // into PlanSpace::layouts (from the schedule choice); -1: the space's first layout for pp x v
};

struct PlanSpace;

// One group: everything but the variant fixed.
struct PlanGroup {
    int gpu = 0; // index into PlanSpace::gpus
    int num_gpus = 0;
    int tp = 1;
    int cp = 1;
    int pp = 1;
    int ep = 1;
    int etp = 0;
    int micro_batch = 1;
    int tp_index = 0; // indices into the axis lists
    int cp_index = 0;
    int pp_index = 0;
    int ep_index = 0;
    int etp_index = 0;
    int micro_batch_index = 0;
    std::uint64_t first_index = 0; // index of its first plan
    std::uint64_t size = 0;        // its plans (0 when no schedule choice pairs with its pp)
    const PlanSpace* space = nullptr;

    // Variant i < size, decoded from its mixed-radix digits.
    PlanVariant variant(std::uint64_t i) const;
    // The group's plan with the given variant (dp = 0 when tp x cp x pp does not divide the GPU count).
    Plan plan(const PlanVariant& v) const;
};

struct PlanSpace {
    Plan base; // the fields no search list sets (gradient buckets, cp_kind, ...) from the scenario's "plan"
    std::vector<std::string> gpus;
    std::vector<int> num_gpus, tp, cp, pp, ep, etp, micro_batch;
    std::vector<Schedule> schedules;
    std::vector<int> virtual_stages;         // explicit list (empty: the default per pp)
    std::vector<std::vector<int>> default_v; // per pp index, when virtual_stages is empty: v >= 2 with pp x v | layers
    std::vector<Recompute> recompute;
    std::vector<bool> sequence_parallel; // explicit list (empty: the default per tp)
    std::vector<int> zero_stage;
    std::vector<Precision> precision;
    std::vector<bool> tp_overlap, moe_overlap;
    std::vector<bool> overlap_grad_reduce, offload_optimizer;
    std::vector<RankOrder> rank_order;
    std::vector<double> offload_activations;
    int layers = 0; // the model's decoder layers and MTP modules, for layouts pp x v does not divide
    int mtp_layers = 0;
    // One schedule choice of a pp: the schedule, its virtual stages and the layout the layers take.
    struct ScheduleChoice {
        Schedule schedule = Schedule::OneFOneB;
        int virtual_stages = 1;
        int layout_index = 0; // into layouts
    };
    std::vector<std::vector<ScheduleChoice>> schedule_choice_list;       // per pp index, in variant order
    std::vector<std::string> layouts{std::string()};                     // distinct layout strings; 0: none (the plan's own fields)
    std::unordered_map<std::string, int> layout_ids{{std::string(), 0}}; // each string's index into layouts
    // The layouts a pp x v plan is tried with: {0} when the layers split evenly or the scenario plan
    // states first/last stage layer counts (then only the balanced layout, where it fits), else one per
    // standard_pipeline_layouts() entry. Indices into layouts.
    std::vector<int> layout_choices(int pp, int virtual_stages);
    int first_layout(int pp, int virtual_stages) const; // layout_choices()'s first, without adding

    std::uint64_t size() const { return m_size; }
    std::uint64_t groups() const { return m_groups; }
    PlanGroup group(std::uint64_t g) const;
    std::uint64_t group_first(std::uint64_t g) const;  // index of group g's first plan; group_first(groups()) == size()
    std::uint64_t group_of(std::uint64_t index) const; // the non-empty group holding plan `index` < size()

    // Lengths of the axes whose length depends on another.
    int schedule_choices(int pp_index) const;
    int sequence_parallel_choices(int tp_index) const;
    // The virtual-stage counts the interleaved schedule tries at pp index `pp_index` (empty when the
    // interleaved schedule is not searched).
    const std::vector<int>& virtual_stage_choices(int pp_index) const;

    struct Entry {
        int gpu = 0;
        int num_gpus = 0;
        Plan plan;
        Precision precision = Precision::Bf16;
    };
    Entry at(std::uint64_t index) const; // index < size()

    // Filled by make_plan_space(): prefix sums over the tp and pp lists and the strides they imply.
    std::vector<std::uint64_t> sp_prefix;    // size tp.size() + 1
    std::vector<std::uint64_t> sched_prefix; // size pp.size() + 1
    std::uint64_t variant_tail = 1;          // recompute x zero x precision x tp_overlap x moe_overlap x the four below
                                             // (overlap_grad_reduce, rank_order, offload_optimizer, offload_activations)
    std::uint64_t m_size = 0;
    std::uint64_t m_groups = 0;
};

// The largest space a sweep takes on, refused up front with its size: more plans, plan groups or pipeline
// shapes (pp x virtual-stage pairs, each laid out when the space is built) than a sweep enumerates in
// reasonable time. At the explorer's 10^6 to 10^7 plans per second per core, 10^12 plans is a day or more.
constexpr std::uint64_t kMaxSpacePlans = 1'000'000'000'000;
constexpr std::uint64_t kMaxSpaceGroups = std::uint64_t{1} << 32;
constexpr std::uint64_t kMaxPipelineShapes = std::uint64_t{1} << 22;

// Builds the space. Errors name the field: a GPU without a profile, an empty list, no training tokens,
// a space larger than the bounds above. `cancel`, when given and set, stops the building (the result is
// then a diagnostic "cancelled" and the caller knows why).
Expected<PlanSpace> make_plan_space(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, bool allow_tp_across_nodes,
                                    const std::atomic<bool>* cancel = nullptr);

// The node size a GPU type runs with in this scenario (cluster.gpus_per_node, else the profile's).
int gpus_per_node_for(const Scenario& scenario, const GpuProfile& profile);

// The scenario's cluster as it applies to one GPU type of the search: cluster.gpu keeps the scenario's
// price and link overrides; other GPU types use their cluster.gpu_prices entry, else their profile's
// price, and their profile's links (an override written for one GPU does not describe another).
// gpus_per_node applies to every type.
ClusterSpec cluster_for_gpu(const Scenario& scenario, const std::string& gpu, int num_gpus);

// The layouts the explorer tries for pp x v virtual stages that do not split the layers evenly: the
// balanced one alone where the plan states first/last stage layer counts (they say the same at any pp),
// else every standard layout (standard_pipeline_layouts). Empty when the layers split evenly or none fits.
std::vector<std::string> uneven_layouts(int layers, int mtp_layers, const Plan& base, int pp, int virtual_stages);

// The widest tp the default tp list tries for one GPU type: its host (cluster.gpus_per_node, else the
// profile's), or its NVLink domain (cluster.nvlink_domain_gpus, else the profile's) capped at 8 where the
// domain spans hosts (GB200 NVL72's trays of 4 in a 72-GPU domain: 8).
int default_tp_limit(const Scenario& scenario, const LinkSpec& profile_links);

// The default tp (powers of two up to tp_limit), micro-batch (1 to 16) and ZeRO (0, 1, 2) lists, each with
// the scenario plan's own value where the list lacks it. Ascending.
std::vector<int> default_tp_widths(const Scenario& scenario, int tp_limit);
std::vector<int> default_micro_batches(const Scenario& scenario);
std::vector<int> default_zero_stages(const Scenario& scenario);

// Every divisor of n, ascending: the pipeline depths other searches try.
std::vector<int> divisors(int n);

// The default pp list: every divisor of the model's layers, every power of two up to them (laid out
// unevenly where it does not divide: Llama 3.1 405B's 126 layers on 16 stages), and the scenario plan's own
// depth, so that the plan the scenario states is in its own space. Ascending.
std::vector<int> default_pipeline_depths(const Scenario& scenario);

} // namespace vtrain
