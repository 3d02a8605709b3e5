// SPDX-License-Identifier: MIT
#pragma once
// The Megatron-LM flags `vtrain import` knows (megatron/training/arguments.py, Megatron-Core 0.14/0.15, late
// 2025): each one's arity, and the value flags that have no bearing on time, memory or cost.
#include <map>
#include <set>
#include <string>

#include "io/import_flags.h"

namespace vtrain::import_detail {

const std::map<std::string, FlagArity>& megatron_arity();

// Value flags that have no bearing on time, memory or cost (optimizer, schedule, data, checkpoints, logging).
const std::set<std::string>& megatron_no_bearing();

} // namespace vtrain::import_detail
