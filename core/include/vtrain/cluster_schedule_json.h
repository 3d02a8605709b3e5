// SPDX-License-Identifier: MIT
#pragma once
// Job lists as JSON, and the cluster study's results as JSON.
//
// A job list: {"jobs": [ {job}, ... ]}. Each job:
//   "name"            string, optional (default "job-<index>")
//   "model"           a catalog id ("gpt-1.3b", "gpt-2.7b", "gpt-6.7b", "gpt-13b", "gpt-18.4b", "gpt-39.1b")
//                     or a model object as in a scenario file (layers, hidden, heads, seq_len, vocab, ...)
//   "global_batch"    sequences per iteration; optional for catalog models (their batch), else required
//   "tokens"          training tokens, > 0
//   "arrival_h"       hours from the start, >= 0
//   "deadline_h"      absolute hours from the start, > arrival_h
//   "requested_gpus"  optional: the fixed policy's allocation (default: derived by the simulator)
// Every error names the job and the field, e.g. "jobs[3].deadline_h: must be later than arrival_h (5)".
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/cluster_schedule.h"
#include "vtrain/diagnostic.h"

namespace vtrain {

Expected<std::vector<ClusterJob>> jobs_from_json(const nlohmann::json& json);
Expected<std::vector<ClusterJob>> jobs_from_text(const std::string& text);
Expected<std::vector<ClusterJob>> load_jobs(const std::filesystem::path& path);

// Catalog models are written as objects (the list stands alone).
nlohmann::json jobs_to_json(const std::vector<ClusterJob>& jobs);

nlohmann::json policy_result_to_json(const PolicyResult& result, const std::vector<ClusterJob>& jobs);
// Everything: the cluster, the jobs, the curves and each policy's metrics and per-job segments (the Gantt).
nlohmann::json schedule_study_to_json(const ScheduleStudy& study);

} // namespace vtrain
