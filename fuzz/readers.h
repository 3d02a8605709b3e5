// SPDX-License-Identifier: MIT
#pragma once
// The input readers under fuzzing, behind one call each: the libFuzzer targets (fuzz_*.cpp) and the
// replay test (tests/fuzz/tst_fuzz_replay.cpp) feed them bytes and hold them to the same contract.
#include <string>
#include <string_view>
#include <vector>

namespace vtrain::fuzz {

// The importers (vtrain import): a Hugging Face config.json, Megatron-LM arguments, a torchtitan TOML and
// Megatron-Bridge overrides, each read as its own format (no detection).
enum class InputKind { Scenario, Profile, Runs, Jobs, LaunchPlan, HfConfig, MegatronArgs, TorchtitanToml, BridgeOverrides };

const std::vector<InputKind>& all_kinds();
// "scenario", "profile", "runs", "jobs", "plan", "hf", "megatron", "torchtitan", "bridge": the corpus folders
const char* name_of(InputKind kind);

struct Outcome {
    bool accepted = false;
    std::string diagnostic; // the first problem, when refused
};

// Reads `text` as the given input. The contract, checked here (a violation aborts, so libFuzzer reports
// it as a crash): no exception escapes; a refusal has at least one diagnostic, none of them empty or
// longer than kMaxDiagnosticChars (bad values are quoted as excerpts); an accepted input written back
// by the matching writer reads again (an imported scenario as a scenario file, and its plan through the
// framework's launch writer and the importer again, with the same tp, pp, dp and micro-batch).
Outcome read_input(InputKind kind, std::string_view text);

constexpr std::size_t kMaxDiagnosticChars = 600;

// The stack the fuzz targets run on: 1 MiB instead of the usual 8 (setrlimit at start-up, which bounds
// how far the main thread's stack may still grow). Recursion that grows with the input -- a '(' per
// level of a layout string, a std::regex frame per character -- then crashes within the 16 KiB inputs
// the fuzzer writes (an 8 MiB stack needed 30,000 '(' or 50,000 characters), while every reader's real
// needs (JSON nested 256 deep, written back by a recursive dump()) stay far below it.
constexpr std::size_t kFuzzStackBytes = std::size_t{1} << 20;
void limit_stack();

} // namespace vtrain::fuzz
