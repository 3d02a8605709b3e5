// SPDX-License-Identifier: MIT
#pragma once
// Internal to the explorer: the relative costs a pruned sweep's rebalancing weighs (sweep.cpp
// estimates its groups' work in them, explorer_shard.cpp's rebalance_groups() deals the work), measured
// on the DeepSeek-V3 space (bench/bench_explore_scale.cpp): a simulation of a large MoE plan is about
// 0.16 ms, a pass over one plan's bound about 0.2 us, a group bounded out as a whole about 5 us, and the
// layer costs of a group's cost keys, which a shard that takes over a group must compute for its bounds and again
// for its simulations, about 2 ms.
namespace vtrain::shard_work {

constexpr double kPassPlan = 1.0;
constexpr double kSimulatePlan = 800.0;
constexpr double kSettledGroup = 25.0;
constexpr double kMoveGroup = 10000.0;

} // namespace vtrain::shard_work
