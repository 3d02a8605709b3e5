// SPDX-License-Identifier: MIT
// Plans as framework launch flags.
//
// Megatron-LM flag names follow megatron/training/arguments.py on NVIDIA/Megatron-LM main as of late 2025
// (commit 000c4ac, Megatron-Core 0.14/0.15 era): --attention-backend, --ddp-bucket-size (elements),
// --num-layers-per-virtual-pipeline-stage, --recompute-granularity/-method/-num-layers, --train-samples.
// DeepSpeed keys follow docs/_pages/config-json.md ("DeepSpeed Configuration JSON"): reduce_bucket_size
// counts elements; train_batch_size = micro-batch x gradient_accumulation_steps x data-parallel GPUs.
// Megatron-DeepSpeed flags (--zero-stage, --no-pipeline-parallel, --deepspeed-activation-checkpointing,
// --use-flash-attn-v2, --deepspeed_config) follow microsoft/Megatron-DeepSpeed megatron/arguments.py.
#include "vtrain/launch_config.h"

#include <cmath>
#include <optional>

#include "vtrain/plan_check.h"

namespace vtrain {
namespace {

std::string str(long long v) { return std::to_string(v); }

std::string join_lines(const std::string& head, const std::vector<std::string>& lines)
{
    std::string text = head;
    for (const std::string& line : lines) {
        text += " \\\n    " + line;
    }
    return text + '\n';
}

// How the plan's GPUs sit on nodes; launchers start the same number of processes on every node.
struct NodeLayout {
    int nodes = 1;
    int processes_per_node = 1;
};

NodeLayout node_layout(int num_gpus, int gpus_per_node, std::vector<std::string>& warnings)
{
    if (num_gpus <= gpus_per_node) {
        return {1, num_gpus};
    }
    if (num_gpus % gpus_per_node != 0) {
        warnings.push_back(str(num_gpus) + " GPUs do not fill whole nodes of " + str(gpus_per_node) +
                           ": launchers start the same number of processes on every node, so adjust the node count by hand");
    }
    return {(num_gpus + gpus_per_node - 1) / gpus_per_node, gpus_per_node};
}

// Shared refusals: the plan must pass the core's checks, and the node size must be known.
std::optional<Diagnostic> refuse(const Scenario& scenario, const Plan& plan, int gpus_per_node)
{
    if (gpus_per_node < 1) {
        return Diagnostic{"cluster.gpus_per_node", "must be known (>= 1) to write a launch line"};
    }
    if (const auto rejection = check_plan(scenario.model, scenario.training, plan, scenario.cluster.num_gpus)) {
        return rejection->diagnostic;
    }
    return std::nullopt;
}

// Flags that describe the model, identical in Megatron-LM and Megatron-DeepSpeed.
void add_model_arguments(const ModelSpec& m, std::vector<std::string>& args)
{
    args.push_back("--num-layers " + str(m.layers));
    args.push_back("--hidden-size " + str(m.hidden));
    args.push_back("--ffn-hidden-size " + str(m.effective_ffn_hidden()));
    args.push_back("--num-attention-heads " + str(m.heads));
    if (m.effective_kv_heads() != m.heads) {
        args.emplace_back("--group-query-attention");
        args.push_back("--num-query-groups " + str(m.effective_kv_heads()));
    }
    if (m.activation == FfnActivation::SwiGlu) {
        args.emplace_back("--swiglu");
    }
    if (!m.tied_embeddings) {
        args.emplace_back("--untie-embeddings-and-output-weights");
    }
    args.push_back("--seq-length " + str(m.seq_len));
    args.push_back("--max-position-embeddings " + str(m.seq_len));
}

void add_batch_arguments(const Scenario& s, const Plan& p, std::vector<std::string>& args, std::vector<std::string>& warnings)
{
    args.push_back("--micro-batch-size " + str(p.micro_batch));
    args.push_back("--global-batch-size " + str(s.training.global_batch));
    if (s.training.tokens > 0) {
        // Megatron counts training length in sequences; round up so the run sees every token budgeted.
        const auto samples = static_cast<long long>(std::ceil(s.training.tokens / s.model.seq_len));
        args.push_back("--train-samples " + str(samples));
    } else {
        warnings.emplace_back("training.tokens is not given: set --train-samples (or --train-iters) yourself");
    }
    if (s.training.precision == Precision::Bf16) {
        args.emplace_back("--bf16");
    } else if (s.training.precision == Precision::Fp16) {
        args.emplace_back("--fp16");
    }
}

void add_recompute_arguments(Recompute recompute, std::vector<std::string>& args)
{
    if (recompute == Recompute::Selective) {
        args.emplace_back("--recompute-granularity selective");
    } else if (recompute == Recompute::Full) {
        // Every layer recomputed from its input: Megatron's "uniform" method over 1-layer units.
        args.emplace_back("--recompute-granularity full");
        args.emplace_back("--recompute-method uniform");
        args.emplace_back("--recompute-num-layers 1");
    }
}

std::string vocabulary_warning(const ModelSpec& m)
{
    return "the vocabulary comes from the tokenizer (--tokenizer-type with --vocab-file/--merge-file or --tokenizer-model), "
           "padded to a multiple of --make-vocab-size-divisible-by (128) x tp; the plan was simulated with " +
           str(m.vocab) + " entries";
}

const char* kStillToSet = "still to set: --data-path (or --mock-data), the optimizer and schedule (--lr, --min-lr, "
                          "--lr-decay-style, --lr-warmup-samples, --lr-decay-samples, --weight-decay, --clip-grad), "
                          "--save/--load with --save-interval";

std::string environment_prefix(const Plan& p)
{
    // Tensor and sequence parallelism overlap their collectives with GEMMs only with one CUDA connection
    // (Megatron-LM refuses to start without it before Blackwell).
    return p.tp > 1 ? "CUDA_DEVICE_MAX_CONNECTIONS=1 " : "";
}

} // namespace

long long grad_bucket_elements(const Plan& plan, Precision precision)
{
    const double bytes_per_gradient = precision == Precision::Fp16 ? 2.0 : 4.0;
    return std::llround(plan.grad_bucket_mb * 1024.0 * 1024.0 / bytes_per_gradient);
}

std::string MegatronLaunch::command_text() const { return join_lines(launch_command, arguments); }

std::string DeepSpeedLaunch::command_text() const { return join_lines(launch_command, arguments); }

Expected<MegatronLaunch> megatron_launch(const Scenario& s, const Plan& p, int gpus_per_node)
{
    if (const auto refusal = refuse(s, p, gpus_per_node)) {
        return *refusal;
    }
    MegatronLaunch out;
    auto& args = out.arguments;
    auto& warnings = out.warnings;
    const NodeLayout layout = node_layout(s.cluster.num_gpus, gpus_per_node, warnings);
    out.launch_command = environment_prefix(p) + "torchrun --nproc_per_node " + str(layout.processes_per_node) + " --nnodes " +
                         str(layout.nodes);
    if (layout.nodes > 1) {
        out.launch_command += " --node_rank $NODE_RANK --master_addr $MASTER_ADDR --master_port 6000";
        warnings.push_back("run the torchrun line on each of the " + str(layout.nodes) +
                           " nodes with NODE_RANK = 0.." + str(layout.nodes - 1) + " and MASTER_ADDR = the first node's address");
    }
    out.launch_command += " pretrain_gpt.py";

    add_model_arguments(s.model, args);
    args.push_back(std::string("--attention-backend ") + (s.training.attention == AttentionKernel::Flash ? "flash" : "unfused"));
    // Data parallelism is implied: Megatron-LM sets d = world size / (t x p).
    args.push_back("--tensor-model-parallel-size " + str(p.tp));
    args.push_back("--pipeline-model-parallel-size " + str(p.pp));
    if (p.schedule == Schedule::Interleaved) {
        args.push_back("--num-layers-per-virtual-pipeline-stage " + str(s.model.layers / (p.pp * p.virtual_stages)));
    }
    if (p.sequence_parallel) {
        args.emplace_back("--sequence-parallel");
    }
    add_batch_arguments(s, p, args, warnings);
    add_recompute_arguments(p.recompute, args);
    if (p.zero_stage >= 1) {
        args.emplace_back("--use-distributed-optimizer");
    }
    if (p.overlap_grad_reduce && p.dp > 1) {
        args.emplace_back("--overlap-grad-reduce");
        args.push_back("--ddp-bucket-size " + str(grad_bucket_elements(p, s.training.precision)));
    }

    if (p.schedule == Schedule::GPipe && p.pp > 1) {
        warnings.emplace_back("Megatron-LM has no GPipe schedule: it runs pipeline plans with 1F1B, which keeps fewer "
                              "micro-batches' activations in flight than the simulated GPipe");
    }
    if (p.zero_stage >= 2) {
        warnings.emplace_back("ZeRO-2 (sharded gradients) has no Megatron-LM flag: --use-distributed-optimizer shards the "
                              "optimizer states only (ZeRO-1) and keeps a full gradient buffer per GPU, so memory per GPU "
                              "exceeds the simulation; Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy "
                              "optim_grads) is the nearest equivalent");
    }
    if (s.model.activation == FfnActivation::SwiGlu) {
        warnings.emplace_back("position embeddings and normalization are not part of the plan: Megatron-LM defaults to "
                              "learned absolute positions and LayerNorm (Llama-style models add --position-embedding-type "
                              "rope --normalization RMSNorm --disable-bias-linear)");
    }
    warnings.push_back(vocabulary_warning(s.model));
    warnings.emplace_back(kStillToSet);
    return out;
}

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
        warnings.push_back("write `hostfile` with the " + str(layout.nodes) + " nodes, one line each: <host> slots=" +
                           str(layout.processes_per_node));
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
    warnings.push_back(vocabulary_warning(s.model));
    warnings.emplace_back(std::string(kStillToSet) + "; in ds_config.json: optimizer, scheduler, gradient_clipping");
    return out;
}

} // namespace vtrain
