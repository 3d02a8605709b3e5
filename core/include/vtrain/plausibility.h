// SPDX-License-Identifier: MIT
#pragma once
// Plausibility flags on a prediction: an implied MFU above the best any published run of that GPU and
// precision reached, an iteration far slower than its physical floors allow, or (a bug) faster than them.
// The table of published MFU is core/src/iteration/published_mfu.cpp, each entry with its source.
#include <optional>
#include <string>
#include <vector>

#include "vtrain/physical_floors.h"
#include "vtrain/scenario.h"

namespace vtrain {

enum PlausibilityFlag : unsigned {
    kMfuAbovePublished = 1u, // MFU above the best published run of the GPU (its chip) and precision
    kFarAboveFloor = 2u,     // predicted time more than kFarAboveFloorFactor x the binding floor
    kBelowFloor = 4u,        // predicted time below the binding floor: a simulator bug
};
// A prediction this many times its binding floor is far below the ceiling the floors allow (the floors
// ignore latency, kernel efficiency and host overhead, which rarely cost a training step 10x).
constexpr double kFarAboveFloorFactor = 10.0;

// The best MFU a published training run reached on one chip at one precision, in this tool's convention
// (model FLOPs of docs/model-flops.md over the precision's dense datasheet peak), with its source.
struct PublishedMfu {
    const char* chip;      // "A100", "H100/H800", "B200/GB200"
    const char* precision; // "bf16" (fp16 too), "fp8", "nvfp4"
    double mfu = 0;
    const char* source;
};
// The entry for a GPU profile id and precision, or nothing when no published run covers them.
std::optional<PublishedMfu> best_published_mfu(const std::string& gpu, Precision precision);
// Every entry (for documentation and tests).
const std::vector<PublishedMfu>& published_mfu_table();

// The flags of one prediction: its MFU, its iteration time and its binding floor.
unsigned plausibility_flags(const std::string& gpu, Precision precision, double mfu, double iteration_s, double binding_floor_s);
// The same with the table entry looked up once (the explorer's rows): `best_mfu` < 0 when there is none.
unsigned plausibility_flags(double best_mfu, double mfu, double iteration_s, double binding_floor_s);
// One reason per flag set, without commas (they go into CSV cells as they are): "MFU 52.3% is above the
// best published H100/H800 BF16 run (39.0%: ...)", "the iteration is 14x its binding floor (compute)".
std::vector<std::string> plausibility_reasons(unsigned flags, const std::string& gpu, Precision precision, double mfu, double iteration_s,
                                              double binding_floor_s, FloorResource binding);
// Short names of the flags set: "mfu_above_published", "far_above_floor", "below_floor".
std::vector<std::string> plausibility_codes(unsigned flags);

} // namespace vtrain
