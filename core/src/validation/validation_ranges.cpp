// SPDX-License-Identifier: MIT
// Settings a row leaves open become a range, not a guess (issue 13). Where a row does not state a setting
// that changes the answer and neither the row nor a documented framework default fixes it, the row is
// predicted for every plausible value, and the centre of those predictions is scored (the rule for the
// centre is in validate_runs.cpp, predict_range). The plausible values:
//   micro-batch           1, 2, 4 and 8 where they divide the sequences per data-parallel replica
//                         (the micro-batches of published Megatron/DeepSpeed runs of these sizes)
//   recompute             none, selective, full (Megatron-Core's three modes; memory decides which run);
//                         none and full for software without selective recompute (DeepSpeed, Megatron 2021)
//   sequence parallelism  off and on, where tp > 1 and the framework has it
//   expert TP (ETP)       1 and tp (Megatron's default ETP = tp; the vendor recipes use 1)
//   virtual stages        every v > 1 that divides the layers per pipeline stage
//   overlap flags         off and on (parameter all-gather, TP communication, expert all-to-all)
//   activation offload    0, 1/4, 1/2, 3/4 of the layers, where the framework's FSDP recipes offload
//   precision             bf16, fp16, fp8, nvfp4: those the GPU profile has a dense rate for (issue 29)
//   LoRA target modules   qkv only, every linear layer (LoRA rows that name none)
// Values a plan cannot take (an interleaving the batch does not allow, ...) are dropped when predicted.
// Where the framework documents the value its recipes use (SoftwareSettings::recipe_*, e.g. Megatron-
// Bridge's performance recipes: no recompute, sequence parallelism, overlapped parameter gather and TP
// communication), that value is marked preferred: each candidate counts the settings it takes away from
// the recipe (RunCandidate::departures), and the centre is taken among the fitting runs with the fewest,
// so the recipe's own run is scored where it fits in memory and the others still bound the range.
#include <algorithm>
#include <functional>

#include "validation/validation_detail.h"
#include "vtrain/plan_check.h"

namespace vtrain::validation_detail {
namespace {

std::string join(const std::vector<std::string>& parts, const char* sep)
{
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        out += (i ? sep : "") + parts[i];
    }
    return out;
}

// One open setting: its name, the values' labels and how each value is applied.
struct Axis {
    std::string name;
    std::vector<std::string> labels;
    std::vector<std::function<void(Scenario&, Plan&)>> apply;
    int preferred = -1; // the value the framework's recipes document (an index into labels); -1 none
};

// The label's index of a documented value, -1 when it is not documented or not among the labels.
int preferred_index(const Axis& a, const std::optional<std::string>& documented)
{
    if (!documented) {
        return -1;
    }
    const auto it = std::find(a.labels.begin(), a.labels.end(), *documented);
    return it == a.labels.end() ? -1 : static_cast<int>(it - a.labels.begin());
}

std::optional<std::string> on_off(const std::optional<bool>& v)
{
    return v ? std::optional<std::string>(*v ? "on" : "off") : std::nullopt;
}

} // namespace

void expand_candidates(MappedRun& run, const OpenSettings& open, const SoftwareSettings& sw)
{
    const Plan& base = run.plan;
    const TrainingSpec& t = run.scenario.training;
    const ModelSpec& m = run.scenario.model;
    std::vector<Axis> axes;

    if (open.micro_batch) {
        Axis a{"micro_batch_size", {}, {}};
        const int per_replica = base.dp > 0 && t.global_batch % base.dp == 0 ? t.global_batch / base.dp : 0;
        for (const int mb : {1, 2, 4, 8}) {
            if (per_replica > 0 && per_replica % mb == 0) {
                a.labels.push_back(std::to_string(mb));
                a.apply.push_back([mb](Scenario&, Plan& p) { p.micro_batch = mb; });
            }
        }
        if (a.labels.size() > 1) {
            run.open_settings.push_back("micro_batch_size not given: {" + join(a.labels, ", ") + "} (powers of two up to 8 dividing the " +
                                        std::to_string(per_replica) + " sequences per replica)");
            axes.push_back(std::move(a));
        }
    }
    if (open.recompute) {
        Axis a{"recompute", {}, {}};
        for (const Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full}) {
            if (rc == Recompute::Selective && !sw.has_selective_recompute) {
                continue;
            }
            a.labels.push_back(to_string(rc));
            // Megatron-Core's selective recompute redoes the modules the recipe lists (--recompute-modules);
            // a list that names modules replaces the default core_attn, so the attention core is not redone.
            const unsigned modules = rc == Recompute::Selective ? sw.recipe_recompute_modules : 0u;
            a.apply.push_back([rc, modules](Scenario&, Plan& p) {
                p.recompute = modules != 0 ? Recompute::None : rc;
                p.recompute_modules |= modules;
            });
        }
        a.preferred = preferred_index(a, sw.recipe_recompute ? std::optional<std::string>(to_string(*sw.recipe_recompute)) : std::nullopt);
        run.open_settings.push_back("activation_recompute not given: {" + join(a.labels, ", ") + "} (the runs that fit in memory" +
                                    (sw.has_selective_recompute ? "" : "; the software recomputes whole layers only") + ")");
        axes.push_back(std::move(a));
    }
    if (open.sequence_parallel && base.tp > 1) {
        Axis a{"sequence_parallel", {"off", "on"}, {}};
        for (const bool sp : {false, true}) {
            a.apply.push_back([sp](Scenario&, Plan& p) { p.sequence_parallel = sp; });
        }
        a.preferred = preferred_index(a, on_off(sw.recipe_sequence_parallel));
        run.open_settings.push_back("sequence_parallel not given: {off, on}");
        axes.push_back(std::move(a));
    }
    if (open.etp && base.tp > 1) {
        Axis a{"etp", {"1", std::to_string(base.tp)}, {}};
        for (const int etp : {1, base.tp}) {
            a.apply.push_back([etp](Scenario&, Plan& p) { p.etp = etp; });
        }
        run.open_settings.push_back("expert_tensor_parallel not given: {1, " + std::to_string(base.tp) + "}");
        axes.push_back(std::move(a));
    }
    if (open.virtual_stages && base.pp > 1) {
        Axis a{"virtual_stages", {}, {}};
        const int per_stage = m.layers % base.pp == 0 ? m.layers / base.pp : 0;
        for (int v = 2; v <= per_stage; ++v) {
            if (per_stage % v == 0) {
                a.labels.push_back(std::to_string(v));
                a.apply.push_back([v](Scenario&, Plan& p) {
                    p.schedule = Schedule::Interleaved;
                    p.virtual_stages = v;
                });
            }
        }
        if (!a.labels.empty()) {
            run.open_settings.push_back("virtual_pipeline_stages not given: {" + join(a.labels, ", ") + "} (every v > 1 dividing the " +
                                        std::to_string(per_stage) + " layers per stage)");
            axes.push_back(std::move(a));
        }
    }
    auto flag_axis = [&](bool is_open, const char* name, bool Plan::*field, const std::optional<bool>& documented) {
        if (!is_open) {
            return;
        }
        Axis a{name, {"off", "on"}, {}};
        for (const bool on : {false, true}) {
            a.apply.push_back([field, on](Scenario&, Plan& p) { p.*field = on; });
        }
        a.preferred = preferred_index(a, on_off(documented));
        run.open_settings.push_back(std::string(name) + " not given: {off, on}");
        axes.push_back(std::move(a));
    };
    flag_axis(open.overlap_param_gather, "overlap_param_gather", &Plan::overlap_param_gather, sw.recipe_overlap_param_gather);
    flag_axis(open.tp_overlap && base.tp > 1, "tp_overlap", &Plan::tp_overlap, sw.recipe_tp_overlap);
    flag_axis(open.moe_overlap && base.ep > 1, "moe_overlap", &Plan::moe_overlap, sw.recipe_moe_overlap);
    if (open.cuda_graphs) {
        // No documented value: the release's preset version was not read (validation_sources.cpp).
        Axis a{"cuda_graphs", {"none", "scoped"}, {}};
        for (const CudaGraphs g : {CudaGraphs::None, CudaGraphs::Scoped}) {
            a.apply.push_back([g](Scenario& s, Plan&) { s.training.cuda_graphs = g; });
        }
        run.open_settings.push_back("cuda_graphs not given: {none, scoped (attn, moe_router, moe_preprocess)}");
        axes.push_back(std::move(a));
    }
    if (open.activation_offload) {
        // No preferred share: the recipes' cpu_offloading_num_layers differs by GPU and precision, so every
        // share that fits with the recipe's recompute stays a candidate.
        Axis a{"activation_offload", {"0", "0.25", "0.5", "0.75"}, {}};
        for (const double f : {0.0, 0.25, 0.5, 0.75}) {
            a.apply.push_back([f](Scenario&, Plan& p) { p.offload_activations = f; });
        }
        run.open_settings.push_back("activation offload not given: {0, 0.25, 0.5, 0.75} of the layers (Megatron-FSDP recipes offload instead "
                                    "of recomputing)");
        axes.push_back(std::move(a));
    }
    if (open.lora_targets) {
        // LoRA's target modules when the row names none: Megatron-Bridge's LoRA default, every linear layer
        // (peft/lora.py), or the query-key-value projection alone, which its performance recipes set
        // (scripts/performance/configs/llama/llama3_llm_finetune.py: cfg.peft.target_modules = ["linear_qkv"]).
        Axis a{"lora_targets", {"qkv", "qkv, proj, fc1, fc2"}, {}};
        for (const unsigned targets : {static_cast<unsigned>(kLoraQkv), kLoraAllLinear}) {
            a.apply.push_back([targets](Scenario& s, Plan&) { s.training.lora_targets = targets; });
        }
        a.preferred = open.lora_targets_preferred_qkv ? 0 : -1;
        run.open_settings.push_back("LoRA target modules not given: {qkv, qkv + proj + fc1 + fc2}");
        axes.push_back(std::move(a));
    }
    if (open.precision) {
        // No precision stated: every training precision, the software's default first; a candidate whose precision
        // the GPU has no dense rate for is dropped when predicted (predict_candidate), so the range is over what
        // the GPU supports (V100: fp16; A100: bf16, fp16; Hopper: + fp8; Blackwell: + nvfp4). The default is the
        // documented value where the framework documents one.
        Axis a{"precision", {}, {}};
        std::vector<Precision> values{sw.precision};
        for (const Precision p : {Precision::Bf16, Precision::Fp16, Precision::Fp8, Precision::Nvfp4}) {
            if (p != sw.precision) {
                values.push_back(p);
            }
        }
        for (const Precision p : values) {
            a.labels.emplace_back(to_string(p));
            a.apply.push_back([p, &sw](Scenario& s, Plan&) { apply_precision(s.training, p, sw, PrecisionChoice{}); });
        }
        a.preferred = sw.framework != Framework::Unknown ? 0 : -1;
        run.open_settings.push_back("precision not stated: {" + join(a.labels, ", ") + "} (those the GPU has a dense rate for)");
        axes.push_back(std::move(a));
    }
    // Each open line says which value the recipe documents.
    for (std::size_t k = 0, line = run.open_settings.size() - axes.size(); k < axes.size(); ++k, ++line) {
        if (axes[k].preferred >= 0 && line < run.open_settings.size()) {
            run.open_settings[line] += "; the recipe's value: " + axes[k].labels[static_cast<std::size_t>(axes[k].preferred)];
        }
    }

    // An open expert all-to-all overlap is not tried where Megatron-Core refuses it (moe_overlap_refusal:
    // a pipeline without virtual stages); its "off" twin stays a candidate.
    const bool overlap_open = open.moe_overlap && base.ep > 1 && sw.framework == Framework::MegatronCore;
    auto megatron_refuses = [overlap_open](const Plan& p) { return overlap_open && !moe_overlap_refusal(p).empty(); };
    bool refused_any = false;

    // The product of the open settings, the first value of each first.
    run.candidates.clear();
    std::vector<std::size_t> index(axes.size(), 0);
    while (true) {
        RunCandidate c{run.scenario, run.plan, {}, 0};
        std::vector<std::string> label;
        for (std::size_t k = 0; k < axes.size(); ++k) {
            axes[k].apply[index[k]](c.scenario, c.plan);
            label.push_back(axes[k].name + " " + axes[k].labels[index[k]]);
            c.departures += axes[k].preferred >= 0 && static_cast<std::size_t>(axes[k].preferred) != index[k] ? 1 : 0;
        }
        c.label = join(label, ", ");
        if (megatron_refuses(c.plan)) {
            refused_any = true;
        } else {
            run.candidates.push_back(std::move(c));
        }
        std::size_t k = 0;
        while (k < axes.size() && ++index[k] == axes[k].labels.size()) {
            index[k] = 0;
            ++k;
        }
        if (k == axes.size()) {
            break;
        }
    }
    run.scenario = run.candidates.front().scenario;
    run.plan = run.candidates.front().plan;
    for (const auto& line : run.open_settings) {
        run.notes.push_back("range: " + line);
    }
    if (refused_any) {
        run.notes.push_back("range: moe_overlap on only with virtual stages or without a pipeline (Megatron-Core's combined 1F1B step)");
    }
}

std::optional<std::string> pipeline_split(const ModelSpec& m, Plan& p, Notes& notes)
{
    const int chunks = p.pp * std::max(1, p.virtual_stages);
    if (p.pp == 1 || m.layers % chunks == 0) {
        return std::nullopt;
    }
    std::vector<int> per_chunk(chunks, 0);
    std::string rule;
    if ((m.layers + 2) % chunks == 0) {
        // Megatron-Core's account_for_embedding/loss_in_pipeline_split (set by the Megatron-Bridge recipes
        // for such shapes, e.g. Llama 3.1 405B) and torchtitan's first/last-stage-less-layers: the embedding
        // and the loss each take one layer's place.
        const int n = (m.layers + 2) / chunks;
        std::fill(per_chunk.begin(), per_chunk.end(), n);
        per_chunk.front() -= 1;
        per_chunk.back() -= 1;
        rule = "embedding and loss each count as one layer";
    } else {
        // Megatron-Bridge's DeepSeek layouts: chunks filled front to back with ceil(layers / chunks) layers,
        // the last one short.
        const int n = (m.layers + chunks - 1) / chunks;
        int left = m.layers;
        for (int& c : per_chunk) {
            c = std::min(n, left);
            left -= c;
        }
        rule = "chunks of " + std::to_string(n) + " layers filled front to back";
    }
    std::string layout;
    for (int i = 0; i < chunks; ++i) {
        if (i > 0) {
            layout += '|';
        }
        if (i == 0) {
            layout += 'E';
        }
        layout += std::string(per_chunk[i], 't');
        if (i == chunks - 1) {
            layout += std::string(std::max(0, m.mtp_layers), 'm'); // MTP modules sit before the loss (Megatron-Core)
            layout += 'L';
        }
    }
    p.pipeline_layout = layout;
    notes.push_back(std::to_string(m.layers) + " layers do not divide into " + std::to_string(chunks) + " pipeline chunks: layout " + layout + " (" +
                    rule + ")");
    return std::nullopt;
}

} // namespace vtrain::validation_detail
