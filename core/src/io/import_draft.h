// SPDX-License-Identifier: MIT
#pragma once
// What an importer reader builds (internal to core/src/io/import*.cpp): the scenario as JSON under
// construction, which key of the file each scenario field came from (so that the scenario reader's and
// the plan check's refusals name the file's own key), the notes, and the values outside a scenario (the
// launcher's world size). Numbers stay JSON values until the scenario reader range-checks them.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/import.h"

namespace vtrain::import_detail {

// How many unknown keys are named one by one before the rest are counted.
constexpr std::size_t kMaxNamedKeys = 40;
// Longest key or value quoted in a note or a diagnostic.
constexpr std::size_t kQuoteChars = 60;

struct Draft {
    nlohmann::json model = nlohmann::json::object();
    nlohmann::json training = nlohmann::json::object();
    nlohmann::json cluster = nlohmann::json::object();
    nlohmann::json plan = nlohmann::json::object(); // empty: the file gives no parallel plan
    std::string name;                               // the scenario's name (the model's, or the file's)
    std::map<std::string, std::string> source;      // "model.layers" -> "num_hidden_layers"

    Diagnostics errors;
    Diagnostics notes;
    std::vector<std::string> defaults; // chosen for the user: "training.tokens: ..."
    std::vector<std::string> ignored;  // keys with no bearing on the simulation
    std::vector<std::string> unknown;  // keys no reader knows (named in one note per key, bounded)
    std::size_t unknown_count = 0;

    // Launcher figures a plan needs (torchrun --nproc_per_node x --nnodes, or the product of degrees).
    std::optional<long long> world_size;
    std::string world_size_key;
    std::optional<long long> gpus_per_node;
    // --num-distributed-optimizer-instances / ddp.num_distributed_optimizer_instances: shard_group follows
    // once dp is known.
    std::optional<long long> optimizer_instances;
    std::string optimizer_instances_key;
    // --ddp-bucket-size in elements: MiB follow once the precision is known.
    std::optional<double> bucket_elements;
    std::string bucket_key;
    // --cpu-offloading-num-layers: the share follows once the layers per chunk are known.
    std::optional<long long> offload_layers;
    std::string offload_key;
    // Interleaving given as layers per virtual stage (--num-layers-per-virtual-pipeline-stage).
    std::optional<long long> layers_per_virtual_stage;
    std::string layers_per_virtual_stage_key;
    // A training length in iterations or samples: tokens follow once batch and sequence are known.
    std::optional<double> train_iters;
    std::optional<double> train_samples;
    std::string train_length_key;
    // A per-replica batch without a global one (torchtitan's local_batch_size): global = local x dp.
    std::optional<long long> local_batch;
    bool overlap_p2p_default = false; // Megatron-style overlap of interleaved sends unless switched off

    // Sets `field` ("model.moe.experts", "plan.tp") to `value`, remembering `key` as its source.
    void set(const std::string& field, nlohmann::json value, const std::string& key);
    bool has(const std::string& field) const;
    const nlohmann::json* get(const std::string& field) const;
    void erase(const std::string& field);
    void note(const std::string& key, const std::string& text);
    void error(const std::string& key, const std::string& text);
    void default_chosen(const std::string& text) { defaults.push_back(text); }
    void ignore(const std::string& key);
    void unknown_key(const std::string& key);
};

// A key or value as it may be quoted in one line: control characters shown as '?', at most `max` characters.
std::string clipped(std::string_view text, std::size_t max = kQuoteChars);

// A number as a config writes it ("8", "-3", "1e-5", "0x10", "1_000" with underscores when `underscores`).
// Integers that fit 64 bits stay integers; a value beyond a double (1e309), inf or nan is refused with the
// reason in `why`.
std::optional<nlohmann::json> parse_number(std::string_view text, std::string& why, bool underscores = false);
// true/false in the spellings configs use (true, True, TRUE, 1, yes, on ...).
std::optional<bool> parse_bool(std::string_view text);
// A whole number in [min, max] from a JSON value (ints, and floats with a whole value).
std::optional<long long> whole(const nlohmann::json& value, long long min, long long max);

// Evaluates a Python list expression of 0s and 1s as Megatron's --moe-layer-freq takes it:
// "([0]*3+[1]*58)", "[1,0]*12", "[0]+([1]+[0])*10"; at most `max_length` entries.
std::optional<std::vector<int>> eval_layer_list(std::string_view text, std::size_t max_length, std::string& why);

// The known models: shapes from the public Hugging Face config.json of each (docs/import.md lists them),
// looked up by a torchtitan (name, flavor) or a Megatron-Bridge recipe name.
struct KnownModel {
    const char* id;          // "llama3-8b"
    const char* config_json; // a Hugging Face config.json with the model's shape
};
const std::vector<KnownModel>& known_models();
const KnownModel* known_model_for_torchtitan(const std::string& name, const std::string& flavor);
const KnownModel* known_model_for_recipe(const std::string& recipe);

} // namespace vtrain::import_detail
