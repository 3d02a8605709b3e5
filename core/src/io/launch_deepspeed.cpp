// SPDX-License-Identifier: MIT
// Plans as a Megatron-DeepSpeed launch line and its DeepSpeed config.
// DeepSpeed keys follow docs/_pages/config-json.md ("DeepSpeed Configuration JSON"): reduce_bucket_size
// counts elements; train_batch_size = micro-batch x gradient_accumulation_steps x data-parallel GPUs.
// Megatron-DeepSpeed flags (--zero-stage, --no-pipeline-parallel, --deepspeed-activation-checkpointing,
// --use-flash-attn-v2, --deepspeed_config) follow microsoft/Megatron-DeepSpeed megatron/arguments.py.
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

std::string DeepSpeedLaunch::command_text() const
{
    return join_lines(launch_command, arguments);
}

// Rank order: Megatron-LM's only choice besides its default "tp-cp-ep-dp-pp" is --use-tp-pp-dp-mapping
// ("tp-cp-ep-pp-dp", arguments.py); other orders exist in parallel_state.initialize_model_parallel(order=)
// but have no flag. Offload: --optimizer-cpu-offload with --optimizer-offload-fraction (HybridDeviceOptimizer),
// and Transformer Engine's activation offload, --cpu-offloading with --cpu-offloading-num-layers (whole
// layers, per model chunk), which Megatron refuses with pipeline parallelism or recomputation
// (TransformerConfig.__post_init__).

Expected<DeepSpeedLaunch> deepspeed_launch(const Scenario& s, const Plan& p, int gpus_per_node)
{
    if (const auto refusal = refuse(s, p, gpus_per_node)) {
        return *refusal;
    }
    DeepSpeedLaunch out;
    auto& args = out.arguments;
    auto& warnings = out.warnings;

    nlohmann::ordered_json& c = out.config;
    c["train_batch_size"] = s.training.global_batch;
    c["train_micro_batch_size_per_gpu"] = p.micro_batch;
    c["gradient_accumulation_steps"] = s.training.global_batch / (p.micro_batch * p.dp);
    if (s.training.precision == Precision::Bf16) {
        c["bf16"] = {{"enabled", true}};
    } else if (s.training.precision == Precision::Fp16) {
        c["fp16"] = {{"enabled", true}};
    }
    nlohmann::ordered_json zero = {{"stage", p.zero_stage}};
    if (p.zero_stage >= 1) {
        zero["reduce_bucket_size"] = grad_bucket_elements(p, s.training.precision);
        zero["overlap_comm"] = p.overlap_grad_reduce;
    }
    if (p.offload_optimizer) {
        // ZeRO-Offload: optimizer states and the step on the CPU (config-json.md "offload_optimizer").
        zero["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
    }
    c["zero_optimization"] = zero;
    if (p.recompute == Recompute::Full) {
        // Every layer checkpointed, activations kept whole on each GPU, on the GPU (as simulated).
        c["activation_checkpointing"] = {{"partition_activations", false},
                                         {"cpu_checkpointing", false},
                                         {"contiguous_memory_optimization", false},
                                         {"synchronize_checkpoint_boundary", false}};
    }

    const NodeLayout layout = node_layout(s.cluster.num_gpus, gpus_per_node, warnings);
    out.launch_command = environment_prefix(p) + "deepspeed";
    if (layout.nodes > 1) {
        out.launch_command += " --hostfile hostfile --num_nodes " + str(layout.nodes);
        warnings.push_back("write `hostfile` with the " + str(layout.nodes) +
                           " nodes, one line each: <host> slots=" + str(layout.processes_per_node));
        if (p.tp > 1) {
            warnings.emplace_back("the deepspeed launcher starts remote ranks over pdsh: put CUDA_DEVICE_MAX_CONNECTIONS=1 in "
                                  ".deepspeed_env so every node gets it");
        }
    }
    out.launch_command += " --num_gpus " + str(layout.processes_per_node) + " pretrain_gpt.py";

    // Megatron-DeepSpeed builds the tensor-parallel layers and, for p > 1, DeepSpeed's PipelineModule.
    add_model_arguments(s.model, args);
    if (s.training.attention == AttentionKernel::Flash) {
        args.emplace_back("--use-flash-attn-v2");
    }
    args.push_back("--tensor-model-parallel-size " + str(p.tp));
    args.push_back("--pipeline-model-parallel-size " + str(p.pp));
    if (p.pp == 1) {
        args.emplace_back("--no-pipeline-parallel");
    }
    if (p.sequence_parallel) {
        args.emplace_back("--sequence-parallel");
    }
    add_batch_arguments(s, p, args, warnings);
    add_recompute_arguments(p.recompute, args);
    if (p.recompute == Recompute::Full) {
        args.emplace_back("--deepspeed-activation-checkpointing");
    }
    args.push_back("--zero-stage " + str(p.zero_stage));
    args.emplace_back("--deepspeed");
    args.emplace_back("--deepspeed_config ds_config.json");

    if (p.tp > 1 || p.pp > 1) {
        warnings.emplace_back("tensor and pipeline parallelism of a GPT's layers come from the model code, not ds_config.json: "
                              "Megatron-DeepSpeed builds them from the arguments given (with p > 1 as a DeepSpeed "
                              "PipelineModule); a plain DeepSpeed script gets data parallelism and ZeRO only");
    }
    if (p.pp > 1 && p.schedule != Schedule::OneFOneB) {
        warnings.push_back(std::string("DeepSpeed's pipeline engine runs 1F1B with one model chunk per stage: the simulated ") +
                           to_string(p.schedule) + " schedule has no equivalent" +
                           (p.schedule == Schedule::Interleaved ? " (the bubble will be larger than simulated)" : ""));
    }
    if (p.pp > 1 && p.zero_stage >= 2) {
        warnings.emplace_back("DeepSpeed's pipeline engine refuses ZeRO stage 2 (gradient partitioning): use stage 1 with p > 1");
    }
    if (p.overlap_grad_reduce && p.dp > 1) {
        if (p.pp > 1) {
            warnings.emplace_back("DeepSpeed's pipeline engine reduces data-parallel gradients after the pipeline flush: "
                                  "the simulated overlap of gradient buckets with the backward pass will not happen");
        } else if (p.zero_stage == 0) {
            warnings.emplace_back("at ZeRO stage 0 DeepSpeed all-reduces gradients after the backward pass in its own buckets; "
                                  "reduce_bucket_size and overlap_comm take effect from stage 1");
        }
    }
    if (p.recompute == Recompute::Selective) {
        warnings.emplace_back("selective recomputation has no ds_config key: it is Megatron-DeepSpeed's "
                              "--recompute-granularity selective");
    }
    if (p.recompute_modules != 0) {
        warnings.push_back("recompute_modules (" + recompute_modules_flag_value(p.recompute_modules) +
                           ") have no Megatron-DeepSpeed flag or ds_config key: those parts stay in memory");
    }
    if (p.cp > 1) {
        warnings.emplace_back("context parallelism (cp = " + str(p.cp) +
                              ") has no Megatron-DeepSpeed flag: DeepSpeed-Ulysses "
                              "(--ds-sequence-parallel-size) is the nearest equivalent");
    }
    if (p.offload_optimizer && p.zero_stage < 1) {
        warnings.emplace_back("DeepSpeed offloads the optimizer only with ZeRO stage 1 or more: set zero_optimization.stage");
    }
    if (p.offload_activations > 0) {
        warnings.emplace_back("activation offload is DeepSpeed's activation_checkpointing.cpu_checkpointing, which moves "
                              "checkpoints of full recomputation only: the simulated share of each layer has no ds_config key");
    }
    if (p.rank_order != RankOrder{}) {
        warnings.push_back("rank order " + to_string(p.rank_order) + " has no DeepSpeed setting: ranks follow its own topology");
    }
    if (p.first_stage_layers > 0 || p.last_stage_layers > 0 || !p.pipeline_layout.empty()) {
        warnings.emplace_back("DeepSpeed's pipeline engine splits layers by its own partition method: the simulated uneven "
                              "stages need a custom partition");
    }
    if (s.training.precision == Precision::Fp8 || s.training.precision == Precision::Nvfp4) {
        warnings.emplace_back(std::string(to_string(s.training.precision)) +
                              " training has no ds_config key: it comes from Transformer Engine in the model code");
    }
    if (p.tp_overlap) {
        warnings.emplace_back("tensor-parallel overlap has no Megatron-DeepSpeed flag: the simulated overlap will not happen");
    }
    if (p.ep > 1) {
        warnings.emplace_back("expert parallelism is DeepSpeed-MoE's ep_size in the model code, not ds_config.json");
    }
    if (s.training.mode == TrainingMode::Lora) {
        warnings.emplace_back("LoRA has no ds_config key or Megatron-DeepSpeed flag: the config trains every weight, not the simulated "
                              "adapters");
    } else if (s.training.mode == TrainingMode::Sft) {
        warnings.emplace_back("supervised fine-tuning data (packed or padded samples) is the training script's: ds_config.json has no "
                              "key for it");
    }
    warnings.push_back(vocabulary_warning(s.model));
    warnings.emplace_back(std::string(kStillToSet) + "; in ds_config.json: optimizer, scheduler, gradient_clipping");
    return out;
}

} // namespace vtrain
