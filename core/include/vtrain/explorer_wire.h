// SPDX-License-Identifier: MIT
#pragma once
// A (partial) ExploreResult as bytes, to send a shard's result to the process that merges them
// (explorer_shard.h). Versioned, little-endian, every field of every row; doubles travel as their bit
// patterns, so a decoded row ranks, prints and compares exactly as the original.
#include <string>
#include <string_view>
#include <vector>

#include "vtrain/diagnostic.h"
#include "vtrain/explorer.h"

namespace vtrain {

std::string encode_explore_result(const ExploreResult& result);

// Errors name the byte offset: truncated input, a wrong magic number or version, an out-of-range enum.
Expected<ExploreResult> decode_explore_result(std::string_view bytes);

// A shard's report for ExploreOptions::rebalance: its open groups with their work, and its settled work.
struct GroupWorkReport {
    std::vector<GroupWork> open;
    double settled = 0;
};
std::string encode_group_work(const GroupWorkReport& report);
Expected<GroupWorkReport> decode_group_work(std::string_view bytes);

} // namespace vtrain
