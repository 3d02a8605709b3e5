// SPDX-License-Identifier: MIT
#pragma once
// Scenarios from the files teams already have (docs/import.md): a Hugging Face config.json, a
// Megatron-LM / Megatron-Core argument list (a shell command line or a file of arguments), a torchtitan
// TOML job file, and Megatron-Bridge recipe overrides (Hydra-style key=value). What the file gives is
// taken as given; every key that is unknown, or known but not simulated, comes back as a note saying what
// was assumed instead; what the file does not give (a config.json has no cluster, batch or plan) is chosen
// and said, so that the scenario simulates and explores as it is. Bad values come back as diagnostics that
// name the file's own key ("num_hidden_layers", "--tensor-model-parallel-size", "parallelism.tensor_parallel_degree").
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "vtrain/diagnostic.h"
#include "vtrain/scenario.h"

namespace vtrain {

enum class ImportFormat { Auto, HfConfig, MegatronArgs, TorchtitanToml, BridgeOverrides };

const char* to_string(ImportFormat format); // "auto", "hf", "megatron", "torchtitan", "bridge"
std::optional<ImportFormat> import_format_from_string(const std::string& name);
// A longer name for messages ("Hugging Face config.json", "Megatron-LM arguments", ...).
const char* describe(ImportFormat format);

// Files larger than this are refused before they are read (a config or a launch script is kilobytes).
constexpr std::size_t kMaxImportBytes = 16u << 20;

struct ImportOptions {
    ImportFormat format = ImportFormat::Auto; // Auto: detected from the content, the file name's extension as a hint
    std::string file_name;                    // for the detection hint and the model's name when the file has none
    std::string gpu;                          // cluster.gpu (files never name one); empty = h100-sxm5-80gb
    int num_gpus = 0;                         // GPUs; 0 = the file's world size, else 8 (or the plan's minimum)
    int gpus_per_node = 0;                    // node size for the starting plan's tensor parallelism; 0 = the file's, else 8
    double gpu_memory_gib = 0;                // usable memory per GPU for the starting plan's estimate; 0 = 75
    // The model when the file names one vtrain does not know (a torchtitan flavor, a Bridge recipe) or
    // gives none; the file's own model keys still apply on top of it.
    std::optional<ModelSpec> model;
};

struct ImportResult {
    Scenario scenario;
    ImportFormat format = ImportFormat::Auto; // the format it was read as
    bool plan_from_file = false;              // the file gave the parallel plan (else a starting plan was chosen)
    // One per key of the file that is unknown, or known but not simulated as written, or a value replaced:
    // field = the file's key, message = what was assumed instead.
    Diagnostics notes;
    // What the file did not give and the importer chose: "training.global_batch: 1024 sequences (...)".
    std::vector<std::string> defaults;
    // Keys the file gives that have no bearing on time, memory or cost (learning rate, paths, logging ...).
    std::vector<std::string> ignored;
};

// Which format `text` is in: by its content first (JSON object, TOML tables, --flags, key=value overrides),
// the extension of `file_name` deciding between equals. Auto when nothing fits.
ImportFormat detect_import_format(const std::string& text, const std::string& file_name = {});

Expected<ImportResult> import_scenario_text(const std::string& text, const ImportOptions& options = {});
// Reads the file (at most kMaxImportBytes) and imports it; options.file_name defaults to the path's name.
Expected<ImportResult> import_scenario_file(const std::filesystem::path& path, ImportOptions options = {});

} // namespace vtrain
