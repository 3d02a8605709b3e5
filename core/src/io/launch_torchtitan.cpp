// SPDX-License-Identifier: MIT
// Plans as a torchtitan TOML job config and its launch line.
// torchtitan keys follow pytorch/torchtitan's JobConfig (2025): [parallelism] data_parallel_replicate_degree/
// _shard_degree, tensor/pipeline/context/expert_parallel_degree, enable_async_tensor_parallel,
// pipeline_parallel_schedule, fsdp_reshard_after_forward; [float8].
#include "vtrain/launch_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string_view>

#include "io/launch_detail.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/plan_check.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"

namespace vtrain {

using namespace launch_detail;

std::string TorchtitanLaunch::command_text() const
{
    return launch_command + '\n';
}

Expected<TorchtitanLaunch> torchtitan_launch(const Scenario& s, const Plan& p, int gpus_per_node)
{
    if (const auto refusal = refuse(s, p, gpus_per_node)) {
        return *refusal;
    }
    if (s.model.moe.enabled() || s.model.attention == AttentionKind::Mla || !s.model.layer_pattern.empty()) {
        return Diagnostic{"model", "torchtitan's TOML is written for dense Llama-style models only"};
    }
    TorchtitanLaunch out;
    auto& w = out.warnings;
    if (p.rank_order != RankOrder{} || p.offload_optimizer || p.offload_activations > 0) {
        w.emplace_back("torchtitan has no setting for the plan's rank order or host offload: they are not written");
    }
    if (p.recompute_modules != 0) {
        w.push_back("recompute_modules (" + recompute_modules_flag_value(p.recompute_modules) +
                    ") have no torchtitan setting ([activation_checkpoint] recomputes whole layers or its own op list): not written");
    }
    if (s.training.mode == TrainingMode::Lora) {
        // pytorch/torchtitan issue #2515 (open, 2026-03): LoRA as a model converter is proposed (PR #2484), not released.
        w.emplace_back("torchtitan has no released LoRA (pytorch/torchtitan#2515, a LoRA model converter in review): the job config "
                       "trains every weight, not the simulated adapters");
    } else if (s.training.mode == TrainingMode::Sft) {
        w.emplace_back("torchtitan's trainer reads pretraining text ([training] dataset): an SFT dataset (packed or padded samples) "
                       "is yours to register");
    }
    const NodeLayout layout = node_layout(s.cluster.num_gpus, gpus_per_node, w);
    out.launch_command = "torchrun --nproc_per_node " + str(layout.processes_per_node) + " --nnodes " + str(layout.nodes);
    if (layout.nodes > 1) {
        out.launch_command += " --node_rank $NODE_RANK --master_addr $MASTER_ADDR --master_port 29500";
    }
    out.launch_command += " -m torchtitan.train --job.config_file vtrain.toml";

    // FSDP2 shards over data_parallel_shard_degree and replicates over data_parallel_replicate_degree, and
    // torchtitan's world is replicate x shard x cp x tp x pp; CP ranks join the shard mesh for weights
    // (dp_shard_cp), as in Megatron, so the plan's shard_group (counted in dp x cp ranks) is shard x cp.
    const int shard_ranks = p.zero_stage >= 1 ? (p.shard_group > 0 ? p.shard_group : p.dp * p.cp) : p.cp;
    const int shard = std::max(1, shard_ranks / p.cp);
    const int replicate = std::max(1, p.dp / shard);
    if (shard_ranks % p.cp != 0) {
        w.push_back("shard_group " + str(p.shard_group) + " is not a multiple of cp = " + str(p.cp) +
                    ": torchtitan shards over whole context-parallel groups (data_parallel_shard_degree x cp)");
    }
    std::string t;
    // The names are user text: escaped, they stay inside this one comment line.
    t += "# torchtitan job config written by vtrain launch for " + toml_escaped(s.model.name) + " on " + str(s.cluster.num_gpus) + " x " +
         toml_escaped(s.cluster.gpu) + "\n";
    t += "[model]\nname = \"llama3\"\nflavor = \"custom\"  # set the flavor whose dims match the scenario\n";
    if (s.training.precision == Precision::Fp8) {
        t += "converters = [\"float8\"]\n";
    }
    t += "\n[training]\nlocal_batch_size = " + str(p.micro_batch) + "\nglobal_batch_size = " + str(s.training.global_batch) +
         "\nseq_len = " + str(s.model.seq_len) + "\n";
    if (s.training.tokens > 0) {
        const double per_step = static_cast<double>(s.training.global_batch) * s.model.seq_len;
        t += "steps = " + str(static_cast<long long>(std::ceil(s.training.tokens / per_step))) + "\n";
    }
    t += "mixed_precision_param = \"" + std::string(s.training.precision == Precision::Fp32 ? "float32" : "bfloat16") +
         "\"\nmixed_precision_reduce = \"float32\"\n";
    t += "\n[parallelism]\ndata_parallel_replicate_degree = " + str(replicate) + "\ndata_parallel_shard_degree = " + str(shard) +
         "\ntensor_parallel_degree = " + str(p.tp) + "\ncontext_parallel_degree = " + str(p.cp) + "\npipeline_parallel_degree = " + str(p.pp) + "\n";
    if (p.pp > 1) {
        const char* schedule = p.schedule == Schedule::GPipe                                          ? "GPipe"
                               : p.schedule == Schedule::OneFOneB || p.schedule == Schedule::DualPipe ? "1F1B"
                                                                                                      : "Interleaved1F1B";
        t += "pipeline_parallel_schedule = \"" + std::string(schedule) + "\"\npipeline_parallel_microbatch_size = " + str(p.micro_batch) + "\n";
        if (p.schedule == Schedule::Interleaved && s.training.pipeline_runtime == PipelineRuntime::Megatron) {
            w.emplace_back("simulated with Megatron-Core's interleaved warm-up; torchtitan runs PyTorch's ScheduleInterleaved1F1B, "
                           "whose last ranks hold fewer activations when micro-batches equal pipeline ranks: simulate with "
                           "training.pipeline_runtime \"pytorch\" for this launch");
        }
        if (p.schedule == Schedule::Interleaved || p.first_stage_layers > 0 || p.last_stage_layers > 0 || !p.pipeline_layout.empty()) {
            w.emplace_back("torchtitan splits layers over pipeline stages by its own rule (pipeline_parallel_layers_per_stage): "
                           "check it matches the simulated stages");
        }
    }
    // ZeRO-2 keeps gathered parameters after forward; ZeRO-3 reshards them (FSDP2 reshard_after_forward).
    if (p.zero_stage >= 1) {
        t += std::string("fsdp_reshard_after_forward = \"") + (p.zero_stage >= 3 ? "always" : "never") + "\"\n";
        if (p.zero_stage == 1) {
            w.emplace_back("torchtitan has no ZeRO-1: FSDP2 shards gradients too (written as ZeRO-2, reshard_after_forward = never)");
        }
    }
    if (p.tp_overlap) {
        t += "enable_async_tensor_parallel = true\n";
    }
    t += "\n[activation_checkpoint]\nmode = \"" + std::string(to_string(p.recompute)) + "\"\n";
    t += "\n[compile]\nenable = " + std::string(p.tp_overlap ? "true" : "false") + "\n";
    if (p.tp_overlap) {
        w.emplace_back("async tensor parallelism needs torch.compile: [compile] enable = true is set");
    }
    if (s.training.precision == Precision::Fp8) {
        // FSDP2 gathers FP8 weights for per-tensor (tensorwise) scaling; rowwise recipes gather bf16.
        const bool tensorwise = s.training.fp8_recipe == Fp8Recipe::Delayed || s.training.fp8_recipe == Fp8Recipe::Current;
        t += "\n[float8]\nrecipe_name = \"" + std::string(tensorwise ? "tensorwise" : "rowwise") + "\"\n";
        t += std::string("enable_fsdp_float8_all_gather = ") + (tensorwise && p.zero_stage >= 1 ? "true" : "false") + "\n";
        t += std::string("precompute_float8_dynamic_scale_for_fsdp = ") + (tensorwise && p.zero_stage >= 1 ? "true" : "false") + "\n";
        if (s.training.fp8_recipe == Fp8Recipe::Delayed || s.training.fp8_recipe == Fp8Recipe::Blockwise ||
            s.training.fp8_recipe == Fp8Recipe::Mxfp8) {
            w.push_back(std::string("torchtitan's float8 (torchao) has no ") + to_string(s.training.fp8_recipe) +
                        " recipe: written as the nearest (tensorwise or rowwise; MXFP8 is a separate mx converter on Blackwell)");
        }
    } else if (s.training.precision == Precision::Nvfp4 || s.training.precision == Precision::Fp16) {
        w.push_back(std::string(to_string(s.training.precision)) + " training is not written: torchtitan runs it through other converters");
    }
    out.toml = std::move(t);
    if (p.cp > 1 && p.cp_kind == ContextParallelKind::AllToAll) {
        w.emplace_back("torchtitan's context parallelism rotates KV by all-gather or all-to-all per its experimental config, "
                       "not a Ulysses head split");
    }
    w.emplace_back("the key names follow torchtitan's JobConfig of 2025; older and newer releases rename some of them");
    w.emplace_back("still to set: [model] flavor and tokenizer, [training] dataset, [optimizer], [lr_scheduler], [checkpoint]");
    return out;
}

} // namespace vtrain
