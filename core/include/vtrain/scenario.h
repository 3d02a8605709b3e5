// SPDX-License-Identifier: MIT
#pragma once
// The plain value types a scenario file describes: model, cluster, training budget and a parallel plan.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vtrain {

enum class FfnActivation { Gelu, SwiGlu, SquaredRelu, Relu };
enum class Normalization { LayerNorm, RmsNorm };
enum class AttentionKernel { Flash, Unfused };
// How expert-parallel tokens travel (Megatron-Core --moe-token-dispatcher-type): AllToAll sends one row per
// (token, selected expert) over NCCL; Flex (DeepEP / HybridEP kernels, and DeepSeek-V3's own) sends a token
// once per destination NVLink domain over the network and forwards it there over NVLink (DeepSeek-V3 report
// Sec. 3.2.2; Megatron-LM deepseek-v3-gb200-optimization Sec. 2.2.1, 2.5).
enum class MoeDispatcher { AllToAll, Flex };
// The GEMM precision of a run. Fp8 and Nvfp4 keep weights' master copy, attention core, norms, router and
// (per recipe) the first/last layers in BF16; model FLOPs do not depend on it.
enum class Precision { Bf16, Fp16, Fp32, Fp8, Nvfp4 };
// How FP8 scales are chosen (Transformer Engine recipes): per-tensor delayed (amax history), per-tensor
// current, 128x128/1x128 blockwise (DeepSeek-V3), and MXFP8 (32-element blocks, Blackwell).
enum class Fp8Recipe { Delayed, Current, Blockwise, Mxfp8 };
enum class Schedule { GPipe, OneFOneB, Interleaved, DualPipe }; // DualPipe: DeepSeek-V3 Sec. 3.2.1
enum class Recompute { None, Selective, Full };
// Attention of a transformer layer: multi-head or grouped-query (kv_heads says which), or DeepSeek's
// multi-head latent attention (MlaSpec).
enum class AttentionKind { Mha, Gqa, Mla };
// Context parallelism: ring attention (KV blocks passed point-to-point, overlapped with the previous
// block's attention) or the all-to-all head split (Ulysses).
enum class ContextParallelKind { Ring, AllToAll };
// CUDA graphs (Megatron-Core --cuda-graph-impl / --cuda-graph-scope): None launches every kernel from
// the host; Scoped captures modules per layer (Transformer Engine graphs of attn, moe_router,
// moe_preprocess, mlp); FullIteration captures the whole forward and backward (--cuda-graph-impl local
// --cuda-graph-scope full_iteration, with static MoE shapes). See cuda_graphs.h for what each removes.
enum class CudaGraphs { None, Scoped, FullIteration };
// TrainingSpec::cuda_graph_scope bits: the modules a Scoped setting captures (--cuda-graph-scope names).
enum CudaGraphScope : unsigned {
    kGraphAttn = 1u,
    kGraphMlp = 2u,
    kGraphMoeRouter = 4u,
    kGraphMoePreprocess = 8u,
    kGraphMamba = 16u, // a hybrid model's Mamba layer (norm, mixer, residual): Megatron-Core's "mamba" scope
    // The whole MoE layer -- norm, router, dispatch, experts, combine -- as Megatron-Core's "moe" scope (and the
    // "full" layer scope of its local per-layer graphs) capture it. Capture needs static expert shapes (token
    // dropping padded to capacity), so the tokens-per-expert sync is gone, as under FullIteration.
    kGraphMoe = 32u,
};
// What an iteration trains (issue 29). Pretrain and Sft update every weight and cost the same per token (Sft
// differs in its data: samples packed into a sequence, or padded, TrainingSpec::sequence_packing); Lora
// freezes the base model and trains low-rank adapters on the linear layers TrainingSpec::lora_targets names
// (Hu et al. 2021, arXiv 2106.09685; Megatron-Bridge PEFT, src/megatron/bridge/peft/lora.py): the frozen
// weights get no weight-gradient GEMM, no gradient buffer, no optimizer state and no data-parallel reduction.
enum class TrainingMode { Pretrain, Sft, Lora };
// TrainingSpec::lora_targets bits: the linear layers of an attention + dense-FFN block an adapter wraps
// (Megatron-Bridge's target_modules names linear_qkv, linear_proj, linear_fc1, linear_fc2).
enum LoraTarget : unsigned {
    kLoraQkv = 1u,
    kLoraProj = 2u,
    kLoraFc1 = 4u,
    kLoraFc2 = 8u,
};
// Megatron-Bridge's LoRA default: every linear layer (LoRA.target_modules default_factory).
constexpr unsigned kLoraAllLinear = kLoraQkv | kLoraProj | kLoraFc1 | kLoraFc2;
// Megatron-Bridge's guide for dropless MoE: "attn moe_router moe_preprocess" (docs/training/cuda-graphs.md,
// Quick Decision); for dense models only attn applies of these.
constexpr unsigned kDefaultGraphScope = kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess;

const char* to_string(FfnActivation value);
const char* to_string(Normalization value);
const char* to_string(AttentionKernel value);
const char* to_string(MoeDispatcher value);
const char* to_string(Precision value);
const char* to_string(Fp8Recipe value);
const char* to_string(Schedule value);
const char* to_string(Recompute value);
const char* to_string(AttentionKind value);
const char* to_string(ContextParallelKind value);
const char* to_string(CudaGraphs value);
const char* to_string(TrainingMode value);

// Multi-head latent attention (DeepSeek-V2/V3, arXiv 2412.19437 Sec. 2.1.1). Defaults are DeepSeek-V3's.
struct MlaSpec {
    int q_lora_rank = 1536;    // 0 = queries are not compressed (DeepSeek-V2-Lite)
    int kv_lora_rank = 512;    // compressed KV width d_c
    int qk_head_dim = 128;     // the non-positional part of a query/key head
    int qk_rope_head_dim = 64; // the decoupled rotary part (one shared key head)
    int v_head_dim = 128;
};

// Mixture-of-experts FFN (Megatron-Core's --num-experts ... flags). experts == 0: every FFN is dense.
struct MoeSpec {
    int experts = 0;                  // routed experts per MoE layer
    int top_k = 1;                    // experts each token is routed to
    int expert_ffn_hidden = 0;        // one expert's FFN width; 0 = the model's ffn_hidden
    int shared_experts = 0;           // always-active experts
    int shared_expert_ffn_hidden = 0; // total width of the shared experts; 0 = shared_experts x expert_ffn_hidden
    int first_dense_layers = 0;       // leading layers with a dense FFN (DeepSeek-V3: 3)
    int layer_freq = 1;               // every layer_freq-th layer (after the dense ones) is MoE
    bool dropless = true;             // no token dropping; otherwise capacity_factor bounds tokens per expert
    double capacity_factor = 0;       // tokens per expert <= capacity_factor x tokens x top_k / experts
    // Token dropping with every expert's input padded to its capacity (Megatron-Core's
    // --moe-pad-expert-input-to-capacity): static shapes, so the dispatcher needs no device-to-host sync of
    // the tokens per expert and the host is not held back before the routed experts.
    bool pad_to_capacity = false;
    double load_imbalance = 1.0; // busiest expert's tokens / mean (1.0 = balanced, as vendor benchmarks force)
    int latent_size = 0;         // LatentMoE: routed experts work in this width between h->l and l->h projections; 0 = none
    bool enabled() const { return experts > 0; }
    int expert_input_width(int hidden) const { return latent_size > 0 ? latent_size : hidden; } // what experts read and dispatch moves
};

// Mamba-2 mixer dimensions for hybrid stacks (Megatron's --mamba-* flags; defaults are Nemotron-H's).
struct MambaSpec {
    int state_dim = 128;
    int head_dim = 64;
    int heads = 0; // 0 = 2 x hidden / head_dim (expand 2)
    int groups = 8;
    int conv_kernel = 4;
};

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
    Normalization normalization = Normalization::LayerNorm;
    bool tied_embeddings = true; // output layer shares the input embedding (GPT, Megatron default)

    // Today's shapes (all optional; the defaults describe a GPT-style dense decoder).
    AttentionKind attention = AttentionKind::Mha; // Gqa when kv_heads < heads; Mla uses `mla`
    MlaSpec mla;
    int head_dim_override = 0;    // "head_dim" (kv_channels) where it is not hidden / heads; 0 = hidden / heads
    int sliding_window = 0;       // tokens a windowed layer attends to; 0 = every layer attends to all
    int full_attention_every = 0; // with a window: every n-th layer attends to all (GPT-OSS: 2); 0 = none does
    bool qk_norm = false;         // norms on queries and keys (Qwen3)
    bool qkv_bias = false;        // biases on the QKV projection (Qwen2, GPT-OSS)
    int mtp_layers = 0;           // multi-token-prediction modules after the last layer (DeepSeek-V3: 1)
    MoeSpec moe;
    // Hybrid stacks, one letter per layer as Megatron's hybrid_override_pattern: 'M' Mamba-2 mixer,
    // '*' attention, '-' dense FFN, 'E' MoE FFN; each letter is a layer with its own residual, so the
    // pattern's length equals `layers`. Empty = every layer is attention + FFN (MoE per `moe`).
    std::string layer_pattern;
    MambaSpec mamba;
    bool linear_bias = false; // biases on every linear layer, the routed experts' too (Megatron add_bias_linear; GPT-OSS)
    double glu_clamp = 0;     // gated activation's inputs clamped to +-this (Megatron activation_func_clamp_value; GPT-OSS 7); 0 = none

    int effective_kv_heads() const { return kv_heads > 0 ? kv_heads : heads; }
    int effective_ffn_hidden() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
    int head_dim() const { return head_dim_override > 0 ? head_dim_override : heads > 0 ? hidden / heads : 0; }
};

// Network figures that override the GPU profile's defaults; unset fields keep the profile's value.
struct LinkOverrides {
    std::optional<double> nvlink_bus_gbytes_per_s;
    std::optional<double> nic_gbit_per_s;
    std::optional<int> nics_per_node;
    std::optional<double> inter_node_latency_us;
};

struct ClusterSpec {
    std::string gpu; // profile id, e.g. "a100-sxm4-80gb"
    int num_gpus = 0;
    int gpus_per_node = 0;                    // 0 = the profile's node size (GPUs per host, for NICs)
    int nvlink_domain_gpus = 0;               // GPUs sharing one NVLink/xGMI fabric (8 HGX, 72 NVL72); 0 = the profile's
    std::optional<double> price_per_gpu_hour; // USD; unset = the profile's default price
    // USD per GPU-hour of the search's other GPU types (search.gpu), by profile id; a type not listed
    // costs its profile's price. The cluster's own GPU is priced by price_per_gpu_hour.
    std::map<std::string, double> gpu_prices;
    LinkOverrides links;
};

// ZeRO-3 / FSDP: how the framework fetches a layer's sharded parameters (and reduces its gradients).
//   Layer (default): one all-gather per transformer layer and pass, one reduce-scatter per layer: PyTorch FSDP1
//     wrapping each block (one flat parameter), FSDP2's fully_shard per block, Megatron-FSDP's TransformerLayer unit.
//   Module: DeepSpeed ZeRO-3: one all-gather per submodule with weights (a GPT layer's fused QKV, output projection,
//     FC1 and FC2: 4), gradients reduce-scattered in reduce_bucket_size buckets of 5e8 elements (DeepSpeed
//     deepspeed/runtime/zero/config.py @ 03dc2b9: reduce_bucket_size 5e8, stage3_prefetch_bucket_size 5e7).
enum class Zero3Fetch { Layer, Module };

// The runtime that orders a pipeline's passes. They differ where an interleaved schedule has exactly as many
// micro-batches as pipeline ranks: Megatron-Core then runs every forward first (schedules.py,
// forward_backward_pipelining_with_interleaving: num_microbatches == pipeline_parallel_size makes every
// micro-batch a warm-up one), while PyTorch's ScheduleInterleaved1F1B (torch.distributed.pipelining, as
// torchtitan runs it) keeps its general warm-up, (v - 1) x pp + 2 (pp - 1 - rank) forwards, and the last
// rank starts its backwards after pp of them. Peak activation memory and the timeline follow.
enum class PipelineRuntime { Megatron, PyTorch };
const char* to_string(PipelineRuntime value); // "megatron", "pytorch" (pipeline_runtime_from_string reads them)

struct TrainingSpec {
    int global_batch = 0; // sequences per iteration
    double tokens = 0;    // training tokens; 0 = not given (no time or cost)
    Precision precision = Precision::Bf16;
    Fp8Recipe fp8_recipe = Fp8Recipe::Delayed; // with precision fp8
    AttentionKernel attention = AttentionKernel::Flash;
    // Memory traffic per parameter per micro-batch to accumulate weight gradients across micro-batches:
    // 0 = fused into the weight-gradient GEMM (Megatron-LM since 2022, gradient_accumulation_fusion);
    // 10 = fp16 gradient added into an fp32 main_grad (Megatron-LM 2021: read 2 + 4, write 4 bytes);
    // 6 = fp16 .grad accumulated by autograd (DeepSpeed engines: read 2 + 2, write 2 bytes).
    double grad_accumulation_bytes = 0;
    bool bf16_optimizer_moments = false;  // Adam moments in BF16, master weights and gradients FP32 (DeepSeek-V3 Sec. 3.3.2)
    bool bf16_gradients = false;          // gradient buffers and their reduction in bf16 (Megatron grad_reduce_in_fp32 false), else fp32
    bool fp8_param_gather = false;        // fp8: weights held only as their FP8 copies (no bf16 copy) and all-gathered in FP8
    bool per_op_sac = false;              // selective recompute as torchtitan's per-op SAC: every second matmul of a layer and the elementwise ops
    bool tp_overlap_forward_only = false; // tp_overlap hides TP traffic in the forward passes only (PyTorch async TP)
    bool eager_elementwise = false;       // norms, RoPE and activation run as eager PyTorch op sequences (no torch.compile fusion)
    int bf16_edge_layers = 0;             // fp8/nvfp4: the first and the last this many transformer layers run in BF16
    MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll; // expert token dispatch ("alltoall" or "flex")
    bool fp8_axiswise_casts =
        false; // fp8: scales per row/column computed on the fly (torchao rowwise): every operand cast along both axes, weights every pass
    double attention_peak_fraction =
        0; // > 0: the fused attention kernel's best forward fraction of dense BF16 peak (a floor on its time); 0 = the profile's table
    bool cp_ring_pytorch =
        false; // cp ring as PyTorch's context_parallel: K/V repeated to the query heads, per-step fp32 merges as separate ops, dK/dV passed in fp32
    double loss_bytes_per_logit =
        0; // bytes per logit held at the loss's peak (logits, fp32 copies, gradient); 0 = 8 (fp32 logits and their gradient), 2 with te_cross_entropy
    bool loss_parallel =
        false; // "loss_parallel" (with tp > 1): torchtitan's output layer, ColwiseParallel on the all-gathered final-norm output (saved at full
               // sequence length) and PyTorch's loss_parallel cross-entropy over the vocabulary shards (4 bytes per logit more at its backward)
    CudaGraphs cuda_graphs = CudaGraphs::None; // "cuda_graphs": "none" (default, Megatron-LM's), "scoped" or "full_iteration"
    unsigned cuda_graph_scope =
        kDefaultGraphScope; // "cuda_graph_scope" (with "scoped"): CudaGraphScope bits, default attn, moe_router, moe_preprocess
    bool fused_grouped_mlp =
        false; // "fused_grouped_mlp": routed experts' activation fused into the grouped GEMMs (TE CuTeDSL, NVTE_CUTEDSL_FUSED_GROUPED_MLP)
    double ssd_scan_time_factor = 1; // Mamba-2 SSD chunked scan: its kernels' time over the batched-GEMM estimate (1 = as the profile's tables say)
    bool overlap_p2p = false; // "overlap_p2p": interleaved schedules post pipeline sends asynchronously (Megatron-Core overlap_p2p_comm): a send does
                              // not hold the sender's next chunk
    Zero3Fetch zero3_fetch = Zero3Fetch::Layer;                   // "zero3_fetch": "layer" (FSDP, Megatron-FSDP) or "module" (DeepSpeed ZeRO-3)
    PipelineRuntime pipeline_runtime = PipelineRuntime::Megatron; // "pipeline_runtime": "megatron" or "pytorch" (torchtitan)
    bool te_cross_entropy = false; // "te_cross_entropy": the loss as Transformer Engine's fused parallel cross-entropy (online softmax on the 16-bit
                                   // logits, gradient written in place): 6 bytes moved per logit, not the unfused fp32 passes, and
                                   // the 16-bit logits alone held at the loss's peak

    // Fine-tuning (issue 29; model/fine_tuning.h says what each costs).
    TrainingMode mode = TrainingMode::Pretrain; // "mode": "pretrain", "sft" or "lora"
    int lora_rank = 32;                         // "lora_rank": the adapters' inner width r (Megatron-Bridge LoRA.dim default 32)
    double lora_alpha = 32;                     // "lora_alpha": output scale alpha / r; no effect on time or memory
    unsigned lora_targets = kLoraAllLinear;     // "lora_targets": LoraTarget bits, the linear layers that carry an adapter
    // "sequence_packing" (sft, lora): several samples share one seq_len sequence (Megatron-Bridge packed
    // sequences: THD layout with cu_seqlens, attention within each sample); false: one sample per sequence,
    // padded to seq_len, so seq_len tokens are computed and only sample_tokens of them are useful.
    bool sequence_packing = true;
    // "sample_tokens" (sft, lora): mean tokens of one training sample; 0 = seq_len (samples fill the sequence).
    // Packed: attention covers sample_tokens keys per sequence instead of seq_len. Padded: tokens/s counts
    // these useful tokens, not the padded seq_len.
    int sample_tokens = 0;
    bool frozen_base() const { return mode == TrainingMode::Lora; }
};

// Where each parallel dimension's ranks sit: the order in which consecutive ranks step through the
// dimensions, innermost (adjacent ranks) first, as Megatron-Core's RankGenerator order string
// (megatron/core/parallel_state.py): "tp-cp-ep-dp-pp" is its default; --use-tp-pp-dp-mapping selects
// "tp-cp-ep-pp-dp", which keeps a pipeline inside a node and spreads data-parallel replicas over nodes.
// Expert layers use the same order with etp, ep and edp in place of tp, ep and dp (and cp = 1).
// Consecutive ranks fill a host and an NVLink domain first, so the inner dimensions get NVLink.
enum class ParallelDim : std::uint8_t { Tp, Cp, Ep, Dp, Pp };
struct RankOrder {
    std::array<ParallelDim, 5> dims{ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Dp, ParallelDim::Pp};
    bool operator==(const RankOrder&) const = default;
};
// Plan::recompute_modules bits: "layernorm" (every norm's output), "mla_up_proj" (MLA's per-head Q, K, V
// from the latents), "moe_act" (the experts' activation: its input is kept, its output recomputed), "moe"
// (the whole MoE layer: router, dispatch, experts, combine, shared experts). The attention core ("core_attn")
// is Recompute::Selective.
enum RecomputeModule : unsigned {
    kRecomputeLayernorm = 1u,
    kRecomputeMlaUpProj = 2u,
    kRecomputeMoeAct = 4u,
    kRecomputeMoe = 8u, // Megatron-Core MoELayer.moe_layer_recompute: its forward runs again before its backward
};

struct Plan {
    int tp = 1;
    int pp = 1;
    int dp = 1;
    int micro_batch = 1;
    Schedule schedule = Schedule::OneFOneB;
    int virtual_stages = 1; // model chunks per pipeline rank (interleaved only)
    Recompute recompute = Recompute::None;
    bool sequence_parallel = false;
    // 0 none, 1 optimizer states sharded (Megatron's distributed optimizer), 2 + gradients sharded,
    // 3 + parameters sharded (ZeRO-3 / FSDP full shard: per-layer all-gather in forward and backward).
    int zero_stage = 0;
    int shard_group = 0;               // zero_stage 3: shard inside groups of this many data-parallel ranks and
                                       // replicate across them (hybrid shard); 0 = the whole data-parallel group
    double grad_bucket_mb = 40;        // data-parallel gradient bucket size in MiB
    bool overlap_grad_reduce = true;   // buckets reduce during the backward pass
    bool overlap_param_gather = false; // distributed optimizer: parameter all-gather overlaps the next forward

    // Context, expert and expert-tensor parallelism (Megatron-Core "parallel folding", arXiv 2504.14960):
    // attention layers use tp x cp x dp, expert layers ep x etp x edp over the same GPUs of a stage, with
    // edp = tp x cp x dp / (ep x etp).
    int cp = 1;
    ContextParallelKind cp_kind = ContextParallelKind::Ring;
    int ep = 1;
    int etp = 0;              // 0 = the same as tp (Megatron's default)
    bool moe_overlap = false; // expert dispatch/combine overlapped with compute (DualPipe, batch-level overlap)
    bool tp_overlap = false;  // tensor-parallel traffic hidden behind GEMMs (userbuffers, async TP)

    // Uneven pipelines: layers of the first and last stage (Megatron's --decoder-first/last-pipeline-num-layers;
    // 0 = even split), or an explicit layout in Megatron's --pipeline-model-parallel-layout syntax
    // ("Et*3|(tt|)*29m|L": stages split by '|', E embedding, t layer, m MTP, L loss), which wins when set.
    int first_stage_layers = 0;
    int last_stage_layers = 0;
    std::string pipeline_layout;

    RankOrder rank_order;           // "rank_order": rank layout over nodes and domains (default Megatron's)
    bool offload_optimizer = false; // fp32 master weights and optimizer states in host memory, step on the CPU
    double offload_activations = 0; // share (0-1) of the stashed activations kept in host memory between forward and backward
    // Parts of a layer recomputed in the backward on top of `recompute` (Megatron-Core --recompute-modules
    // names; DeepSeek-V3 Sec. 3.2.3 and 3.3.2 recompute all three): RecomputeModule bits.
    unsigned recompute_modules = 0;

    int effective_etp() const { return etp > 0 ? etp : tp; }
    int num_gpus() const { return tp * cp * pp * dp; }
    bool operator==(const Plan&) const = default;
};

// The most values one search list may hold as read (repeated values included): far above any search,
// and a bound on the reader's memory and on the explorer's preparation of the space.
constexpr std::size_t kMaxSearchListValues = std::size_t{1} << 20;

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
    // Today's axes; empty = the scenario's plan value (or 1 / false) only, unless the explorer's defaults say more.
    std::vector<int> cp;
    std::vector<int> ep;
    std::vector<int> etp;
    std::vector<Precision> precision; // fp8 uses training.fp8_recipe
    std::vector<bool> tp_overlap;
    std::vector<bool> moe_overlap;
    std::vector<bool> overlap_grad_reduce;   // data-parallel overlap; empty = the plan's value
    std::vector<RankOrder> rank_order;       // empty = the plan's value
    std::vector<bool> offload_optimizer;     // empty = the plan's value
    std::vector<double> offload_activations; // empty = the plan's value
};

struct Scenario {
    // The file's own "name" and "description" (free text, not read by the simulator): kept so that a
    // scenario opened and saved again, in the GUI or by a tool, does not lose what its author wrote.
    std::string name;
    std::string description;
    ModelSpec model;
    ClusterSpec cluster;
    TrainingSpec training;
    std::optional<Plan> plan;
    std::optional<SearchSpace> search;
};

} // namespace vtrain
