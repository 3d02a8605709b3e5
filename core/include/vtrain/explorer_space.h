// SPDX-License-Identifier: MIT
#pragma once
// The plan space a scenario's "search" block describes, with a stable index for every plan.
//
// Order (outermost first): GPU type, GPU count, tp, pp, micro-batch -- a "group" -- then, inside a
// group, its variants: schedule (interleaved once per virtual-stage count), recompute, sequence
// parallelism, ZeRO stage. dp = GPU count / (tp x pp); a tp x pp that does not divide the GPU count is
// in the space and rejected (gpu count mismatch), so that every combination of the lists is accounted for.
//
// Defaults for lists the search leaves out (or when there is no "search" block):
//   gpu          cluster.gpu                 num_gpus    cluster.num_gpus
//   tp           powers of two up to the largest node size (up to 64 with allow_tp_across_nodes)
//   pp           every divisor of model.layers
//   micro_batch  1, 2, 4, 8, 16
//   schedule     gpipe, 1f1b, interleaved
//   virtual_stages (interleaved only) every v >= 2 with pp x v dividing the layers; none for pp = 1
//   recompute    none, selective, full
//   sequence_parallel  false, and true when tp > 1
//   zero_stage   0, 1
// Pairing rules, also for explicit lists: virtual_stages only pairs with the interleaved schedule
// (gpipe and 1f1b always have v = 1). Explicit lists are crossed in full: an explicit
// "sequence_parallel": [true] with tp = 1 is in the space and rejected with its reason.
#include <cstdint>
#include <map>
#include <string>
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
};

// One group: everything but the variant fixed.
struct PlanGroup {
    int gpu = 0;       // index into PlanSpace::gpus
    int num_gpus = 0;
    int tp = 1;
    int pp = 1;
    int micro_batch = 1;
    int tp_index = 0;  // indices into the axis lists
    int pp_index = 0;
    int micro_batch_index = 0;
    std::uint64_t first_index = 0; // index of its first plan
    const std::vector<PlanVariant>* variants = nullptr;
    const Plan* base = nullptr;    // the fields no search list sets (gradient buckets)

    // The group's plan with the given variant (dp = 0 when tp x pp does not divide the GPU count).
    Plan plan(const PlanVariant& v) const;
};

struct PlanSpace {
    Plan base; // grad_bucket_mb and overlap_grad_reduce from the scenario's "plan" when it has one
    std::vector<std::string> gpus;
    std::vector<int> num_gpus, tp, pp, micro_batch;
    std::vector<std::vector<PlanVariant>> variants; // per (tp index, pp index): [ti * pp.size() + pi]
    std::vector<std::uint64_t> group_start;         // prefix sums of group sizes; size groups() + 1

    std::uint64_t size() const { return group_start.empty() ? 0 : group_start.back(); }
    std::size_t groups() const { return group_start.empty() ? 0 : group_start.size() - 1; }
    PlanGroup group(std::size_t g) const;
    std::size_t group_of(std::uint64_t index) const;

    struct Entry {
        int gpu = 0;
        int num_gpus = 0;
        Plan plan;
    };
    Entry at(std::uint64_t index) const; // index < size()
};

// Builds the space. Errors name the field: a GPU without a profile, an empty list, no training tokens.
Expected<PlanSpace> make_plan_space(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles,
                                    bool allow_tp_across_nodes);

// The node size a GPU type runs with in this scenario (cluster.gpus_per_node, else the profile's).
int gpus_per_node_for(const Scenario& scenario, const GpuProfile& profile);

// The scenario's cluster as it applies to one GPU type of the search: cluster.gpu keeps the scenario's
// price and link overrides; other GPU types use their profile's price and links (an override written
// for one GPU does not describe another). gpus_per_node applies to every type.
ClusterSpec cluster_for_gpu(const Scenario& scenario, const std::string& gpu, int num_gpus);

// Every divisor of n, ascending: the default pp list, and the pipeline depths other searches try.
std::vector<int> divisors(int n);

} // namespace vtrain
