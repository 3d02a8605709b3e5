// SPDX-License-Identifier: MIT
#include "readers.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>

#include <sys/resource.h>

#include "vtrain/cluster_schedule_json.h"
#include "vtrain/import.h"
#include "vtrain/json_fields.h"
#include "vtrain/launch_bridge.h"
#include "vtrain/launch_config.h"
#include "vtrain/launch_plan_json.h"
#include "vtrain/profile_json.h"
#include "vtrain/scenario_json.h"
#include "vtrain/validation.h"

namespace vtrain::fuzz {
namespace {

constexpr std::size_t kMaxMappedRows = 64; // rows of one input mapped (a large corpus file stays quick)

[[noreturn]] void violated(InputKind kind, const std::string& what)
{
    std::fprintf(stderr, "fuzz contract violated by the %s reader: %s\n", name_of(kind), json_fields::bounded(what, 2000).c_str());
    std::abort();
}

// The scenario a launch plan file is applied to (examples/gpt-1.3b.json's shape).
const Scenario& base_scenario()
{
    static const Scenario scenario = [] {
        auto s = scenario_from_text(R"({"model": {"name": "gpt-1.3b", "layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048, "vocab": 50257},
            "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8}, "training": {"global_batch": 64, "tokens": 1e9},
            "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1}})");
        if (!s.ok()) {
            std::fprintf(stderr, "the fuzz harness's base scenario is refused: %s\n", s.first_error().c_str());
            std::abort();
        }
        return s.value();
    }();
    return scenario;
}

template <typename T>
Outcome outcome_of(InputKind kind, const Expected<T>& result)
{
    if (result.ok()) {
        return {true, {}};
    }
    if (result.errors().empty()) {
        violated(kind, "refused without a diagnostic");
    }
    for (const Diagnostic& d : result.errors()) {
        const std::string line = d.to_string();
        if (d.message.empty() || line.size() > kMaxDiagnosticChars) {
            violated(kind, "diagnostic empty or longer than " + std::to_string(kMaxDiagnosticChars) + " characters: " + line);
        }
        // User text is quoted with its control characters rendered (\n, \x1b): one line, no terminal escapes.
        for (const char c : line) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
                violated(kind, "diagnostic holds a raw control character: " + json_fields::printable(line));
            }
        }
    }
    return {false, result.errors().front().to_string()};
}

ImportFormat format_of(InputKind kind)
{
    switch (kind) {
    case InputKind::HfConfig: return ImportFormat::HfConfig;
    case InputKind::MegatronArgs: return ImportFormat::MegatronArgs;
    case InputKind::TorchtitanToml: return ImportFormat::TorchtitanToml;
    case InputKind::BridgeOverrides: return ImportFormat::BridgeOverrides;
    default: return ImportFormat::Auto;
    }
}

// The writer of the framework a format comes from: its text, or nothing when the writer refuses the plan
// (torchtitan's TOML takes dense models only, for one).
std::optional<std::string> written_by_framework(InputKind kind, const Scenario& s)
{
    const int node = s.cluster.gpus_per_node > 0 ? s.cluster.gpus_per_node : 8;
    if (kind == InputKind::MegatronArgs) {
        const auto launch = megatron_launch(s, *s.plan, node);
        return launch.ok() ? std::optional<std::string>(launch->command_text()) : std::nullopt;
    }
    if (kind == InputKind::BridgeOverrides) {
        const auto launch = megatron_bridge_launch(s, *s.plan, node);
        return launch.ok() ? std::optional<std::string>(launch->command_text()) : std::nullopt;
    }
    if (kind == InputKind::TorchtitanToml) {
        const auto launch = torchtitan_launch(s, *s.plan, node);
        return launch.ok() ? std::optional<std::string>(launch->toml) : std::nullopt;
    }
    return std::nullopt;
}

Outcome read_import(InputKind kind, const std::string& text)
{
    ImportOptions options;
    options.format = format_of(kind);
    options.gpu = "h100-sxm5-80gb";
    const auto imported = import_scenario_text(text, options);
    if (!imported.ok()) {
        return outcome_of(kind, imported);
    }
    const Scenario& s = imported->scenario;
    const auto again = scenario_from_json(scenario_to_json(s));
    if (!again.ok()) {
        violated(kind, "an imported scenario does not read back: " + again.first_error());
    }
    for (const Diagnostic& n : imported->notes) {
        if (n.to_string().size() > kMaxDiagnosticChars) {
            violated(kind, "a note longer than " + std::to_string(kMaxDiagnosticChars) + " characters: " + n.to_string());
        }
    }
    // The plan written by its framework's launcher reads back into the same parallel layout.
    if (imported->plan_from_file && s.plan) {
        if (const auto written = written_by_framework(kind, s)) {
            ImportOptions back_options = options;
            back_options.num_gpus = s.cluster.num_gpus;
            back_options.model = s.model;
            const auto back = import_scenario_text(*written, back_options);
            if (!back.ok()) {
                violated(kind, "the launch writer's output is refused by the importer: " + back.first_error());
            }
            const Plan& a = *s.plan;
            const Plan& b = *back->scenario.plan;
            if (a.tp != b.tp || a.pp != b.pp || a.dp != b.dp || a.micro_batch != b.micro_batch || a.cp != b.cp) {
                violated(kind, "the launch writer's output imports into another plan: " + plan_to_json(b).dump() + " for " + plan_to_json(a).dump());
            }
        }
    }
    return {true, {}};
}

Outcome read_checked(InputKind kind, const std::string& text)
{
    if (format_of(kind) != ImportFormat::Auto) {
        return read_import(kind, text);
    }
    if (kind == InputKind::Scenario) {
        const auto s = scenario_from_text(text);
        if (s.ok() && !scenario_from_json(scenario_to_json(*s)).ok()) {
            violated(kind, "an accepted scenario does not read back: " + scenario_from_json(scenario_to_json(*s)).first_error());
        }
        return outcome_of(kind, s);
    }
    if (kind == InputKind::Jobs) {
        const auto jobs = jobs_from_text(text);
        if (jobs.ok() && !jobs_from_json(jobs_to_json(*jobs)).ok()) {
            violated(kind, "an accepted job list does not read back: " + jobs_from_json(jobs_to_json(*jobs)).first_error());
        }
        return outcome_of(kind, jobs);
    }
    const auto json = json_fields::parse_json_text(text);
    if (!json.ok()) {
        return outcome_of(kind, json);
    }
    switch (kind) {
    case InputKind::Profile: {
        const auto p = profile_from_json(*json);
        if (p.ok() && !profile_from_json(profile_to_json(*p)).ok()) {
            violated(kind, "an accepted profile does not read back: " + profile_from_json(profile_to_json(*p)).first_error());
        }
        return outcome_of(kind, p);
    }
    case InputKind::Runs: {
        // Rows read are also mapped to scenarios, as validate and calibrate do: the free-text fields
        // (activation_recompute, software, notes, interconnect) go through their scanners there.
        const auto rows = runs_from_json(*json);
        if (rows.ok()) {
            for (std::size_t i = 0; i < rows->size() && i < kMaxMappedRows; ++i) {
                const RowMapping mapping = map_run((*rows)[i]);
                (void)skip_reason_class(mapping.skipped_reason);
            }
        }
        return outcome_of(kind, rows);
    }
    case InputKind::LaunchPlan: return outcome_of(kind, scenario_with_plan_file(base_scenario(), *json));
    default: break;
    }
    return {};
}

} // namespace

void limit_stack()
{
    rlimit limit{};
    if (getrlimit(RLIMIT_STACK, &limit) == 0 && (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > kFuzzStackBytes)) {
        limit.rlim_cur = kFuzzStackBytes;
        setrlimit(RLIMIT_STACK, &limit);
    }
}

const std::vector<InputKind>& all_kinds()
{
    static const std::vector<InputKind> kinds{InputKind::Scenario,     InputKind::Profile,        InputKind::Runs,
                                              InputKind::Jobs,         InputKind::LaunchPlan,     InputKind::HfConfig,
                                              InputKind::MegatronArgs, InputKind::TorchtitanToml, InputKind::BridgeOverrides};
    return kinds;
}

const char* name_of(InputKind kind)
{
    switch (kind) {
    case InputKind::Scenario: return "scenario";
    case InputKind::Profile: return "profile";
    case InputKind::Runs: return "runs";
    case InputKind::Jobs: return "jobs";
    case InputKind::LaunchPlan: return "plan";
    case InputKind::HfConfig: return "hf";
    case InputKind::MegatronArgs: return "megatron";
    case InputKind::TorchtitanToml: return "torchtitan";
    case InputKind::BridgeOverrides: return "bridge";
    }
    return "?";
}

Outcome read_input(InputKind kind, std::string_view text)
{
    try {
        return read_checked(kind, std::string(text));
    } catch (const std::exception& e) {
        violated(kind, std::string("exception escaped: ") + e.what());
    } catch (...) {
        violated(kind, "unknown exception escaped");
    }
}

} // namespace vtrain::fuzz
