// SPDX-License-Identifier: MIT
#pragma once
// The plain value types a scenario file describes: model, cluster, training budget and a parallel plan.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vtrain {

enum class FfnActivation { Gelu, SwiGlu };
enum class AttentionKernel { Flash, Unfused };
enum class Precision { Bf16, Fp16, Fp32 };
enum class Schedule { GPipe, OneFOneB, Interleaved };
enum class Recompute { None, Selective, Full };

const char* to_string(FfnActivation value);
const char* to_string(AttentionKernel value);
const char* to_string(Precision value);
const char* to_string(Schedule value);
const char* to_string(Recompute value);

// A model name is a label (window titles, tables, file names): longer ones are refused by the reader.
constexpr std::size_t kMaxModelNameChars = 256;

struct ModelSpec {
    std::string name = "model";
    int layers = 0;
    int hidden = 0;
    int heads = 0;
    int kv_heads = 0;   // 0 = same as heads (multi-head attention)
    int ffn_hidden = 0; // 0 = 4 x hidden
    int seq_len = 0;
    int vocab = 0;
    FfnActivation activation = FfnActivation::Gelu;
    bool tied_embeddings = true; // output layer shares the input embedding (GPT, Megatron default)

    int effective_kv_heads() const { return kv_heads > 0 ? kv_heads : heads; }
    int effective_ffn_hidden() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
    int head_dim() const { return heads > 0 ? hidden / heads : 0; }
};

// Network figures that override the GPU profile's defaults; unset fields keep the profile's value.
struct LinkOverrides {
    std::optional<double> nvlink_bus_gbytes_per_s;
    std::optional<double> nic_gbit_per_s;
    std::optional<int> nics_per_node;
    std::optional<double> inter_node_latency_us;
};

struct ClusterSpec {
    std::string gpu;                  // profile id, e.g. "a100-sxm4-80gb"
    int num_gpus = 0;
    int gpus_per_node = 0;            // 0 = the profile's node size
    std::optional<double> price_per_gpu_hour; // USD; unset = the profile's default price
    LinkOverrides links;
};

struct TrainingSpec {
    int global_batch = 0;             // sequences per iteration
    double tokens = 0;                // training tokens; 0 = not given (no time or cost)
    Precision precision = Precision::Bf16;
    AttentionKernel attention = AttentionKernel::Flash;
    // Memory traffic per parameter per micro-batch to accumulate weight gradients across micro-batches:
    // 0 = fused into the weight-gradient GEMM (Megatron-LM since 2022, gradient_accumulation_fusion);
    // 10 = fp16 gradient added into an fp32 main_grad (Megatron-LM 2021: read 2 + 4, write 4 bytes);
    // 6 = fp16 .grad accumulated by autograd (DeepSpeed engines: read 2 + 2, write 2 bytes).
    double grad_accumulation_bytes = 0;
};

struct Plan {
    int tp = 1;
    int pp = 1;
    int dp = 1;
    int micro_batch = 1;
    Schedule schedule = Schedule::OneFOneB;
    int virtual_stages = 1;           // model chunks per pipeline rank (interleaved only)
    Recompute recompute = Recompute::None;
    bool sequence_parallel = false;
    int zero_stage = 0;               // 0 none, 1 optimizer states sharded, 2 + gradients sharded
    double grad_bucket_mb = 40;       // data-parallel gradient bucket size in MiB
    bool overlap_grad_reduce = true;  // buckets reduce during the backward pass

    int num_gpus() const { return tp * pp * dp; }
    bool operator==(const Plan&) const = default;
};

// Ranges for the design-space explorer; empty lists mean "everything legal".
struct SearchSpace {
    std::vector<int> tp;
    std::vector<int> pp;
    std::vector<int> micro_batch;
    std::vector<Schedule> schedule;
    std::vector<int> virtual_stages;
    std::vector<Recompute> recompute;
    std::vector<bool> sequence_parallel;
    std::vector<int> zero_stage;
    std::vector<int> num_gpus;
    std::vector<std::string> gpu;
};

struct Scenario {
    ModelSpec model;
    ClusterSpec cluster;
    TrainingSpec training;
    std::optional<Plan> plan;
    std::optional<SearchSpace> search;
};

} // namespace vtrain
