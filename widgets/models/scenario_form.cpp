// SPDX-License-Identifier: MIT
#include "models/scenario_form.h"

#include <algorithm>

#include <QCoreApplication>

#include "models/format.h"
#include "models/scenario_fields.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"

namespace vtrain::ui::form {
namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("vtrain::ui::form", text);
}

// `member` returns a reference to the int the field edits (a lambda, since the members are nested).
template <typename Get>
TextField requiredInt(const char* name, Group group, const QString& label, const QString& tip, Get member, long long min, long long max,
                      const QString& placeholder = {})
{
    return {QLatin1String(name),
            group,
            label,
            placeholder,
            tip,
            [member](const Scenario& s) {
                Scenario copy = s;
                return QString::number(member(copy));
            },
            [member, min, max](const QString& text, Scenario& s) {
                const auto parsed = fields::parseInt(text, min, max);
                if (parsed.ok()) {
                    member(s) = *parsed.value;
                }
                return parsed.error;
            }};
}

// Empty means "use the default" (stored as 0).
template <typename Get>
TextField optionalInt(const char* name, Group group, const QString& label, const QString& tip, Get member, long long min, long long max,
                      const QString& placeholder)
{
    return {QLatin1String(name),
            group,
            label,
            placeholder,
            tip,
            [member](const Scenario& s) {
                Scenario copy = s;
                const int v = member(copy);
                return v > 0 ? QString::number(v) : QString();
            },
            [member, min, max](const QString& text, Scenario& s) {
                const auto parsed = fields::parseOptionalInt(text, min, max);
                if (parsed.ok()) {
                    member(s) = *parsed.value;
                }
                return parsed.error;
            }};
}

std::vector<TextField> buildTextFields()
{
    std::vector<TextField> f;
    f.push_back({QStringLiteral("model.name"), Group::Model, tr("Name"), tr("e.g. GPT-3 175B"), tr("A label for charts and files"),
                 [](const Scenario& s) { return QString::fromStdString(s.model.name); },
                 [](const QString& text, Scenario& s) {
                     const QString name = text.trimmed();
                     s.model.name = name.toStdString();
                     return name.isEmpty() ? tr("is required") : QString();
                 }});
    f.push_back(requiredInt(
        "model.layers", Group::Model, tr("Layers"), tr("Transformer layers"), [](Scenario& s) -> int& { return s.model.layers; }, 1, 100000));
    f.push_back(requiredInt(
        "model.hidden", Group::Model, tr("Hidden size"), tr("Model width (d_model)"), [](Scenario& s) -> int& { return s.model.hidden; }, 1,
        1 << 20));
    f.push_back(requiredInt(
        "model.heads", Group::Model, tr("Attention heads"), tr("Must divide the hidden size"), [](Scenario& s) -> int& { return s.model.heads; }, 1,
        1 << 16));
    f.push_back(optionalInt(
        "model.kv_heads", Group::Model, tr("Key/value heads"), tr("Grouped-query attention: key/value heads; empty = multi-head attention"),
        [](Scenario& s) -> int& { return s.model.kv_heads; }, 1, 1 << 16, tr("= attention heads")));
    f.push_back(optionalInt(
        "model.ffn_hidden", Group::Model, tr("FFN width"), tr("Feed-forward hidden size; empty = 4 × hidden"),
        [](Scenario& s) -> int& { return s.model.ffn_hidden; }, 1, 1 << 24, tr("= 4 × hidden")));
    f.push_back(requiredInt(
        "model.seq_len", Group::Model, tr("Sequence length"), tr("Tokens per sequence"), [](Scenario& s) -> int& { return s.model.seq_len; }, 1,
        1 << 24));
    f.push_back(requiredInt(
        "model.vocab", Group::Model, tr("Vocabulary"), tr("Vocabulary size"), [](Scenario& s) -> int& { return s.model.vocab; }, 1, 1 << 26));

    // Multi-head latent attention (DeepSeek-V2/V3): used only with the attention kind "MLA" below.
    f.push_back(requiredInt(
        "model.mla.q_lora_rank", Group::Model, tr("MLA query rank"),
        tr("Multi-head latent attention: compressed query width (0 = queries not compressed); used with MLA only"),
        [](Scenario& s) -> int& { return s.model.mla.q_lora_rank; }, 0, 1 << 20));
    f.push_back(requiredInt(
        "model.mla.kv_lora_rank", Group::Model, tr("MLA key/value rank"),
        tr("Multi-head latent attention: compressed key/value width d_c (DeepSeek-V3: 512); used with MLA only"),
        [](Scenario& s) -> int& { return s.model.mla.kv_lora_rank; }, 1, 1 << 20));
    f.push_back(requiredInt(
        "model.mla.qk_rope_head_dim", Group::Model, tr("MLA rotary head width"),
        tr("Multi-head latent attention: the decoupled rotary part of a query/key head (DeepSeek-V3: 64); used with MLA only"),
        [](Scenario& s) -> int& { return s.model.mla.qk_rope_head_dim; }, 0, 1 << 16));

    // Mixture of experts: an empty expert count is a dense model, and the other fields are then unused.
    f.push_back(optionalInt(
        "model.moe.experts", Group::Experts, tr("Routed experts"), tr("Routed experts per MoE layer; empty = a dense model"),
        [](Scenario& s) -> int& { return s.model.moe.experts; }, 2, 1 << 20, tr("dense (no experts)")));
    f.push_back(requiredInt(
        "model.moe.top_k", Group::Experts, tr("Experts per token (top-k)"), tr("Routed experts each token goes to"),
        [](Scenario& s) -> int& { return s.model.moe.top_k; }, 1, 1 << 20));
    f.push_back(optionalInt(
        "model.moe.expert_ffn_hidden", Group::Experts, tr("Expert FFN width"), tr("One expert's feed-forward width; empty = the FFN width"),
        [](Scenario& s) -> int& { return s.model.moe.expert_ffn_hidden; }, 1, 1 << 24, tr("= FFN width")));
    f.push_back(optionalInt(
        "model.moe.shared_experts", Group::Experts, tr("Shared experts"), tr("Always-active experts (DeepSeek-V3: 1)"),
        [](Scenario& s) -> int& { return s.model.moe.shared_experts; }, 0, 1 << 10, tr("none")));
    f.push_back(optionalInt(
        "model.moe.first_dense_layers", Group::Experts, tr("First dense layers"), tr("Leading layers with a dense FFN (DeepSeek-V3: 3)"),
        [](Scenario& s) -> int& { return s.model.moe.first_dense_layers; }, 0, 100000, tr("none")));
    f.push_back(optionalInt(
        "model.moe.latent_size", Group::Experts, tr("Latent width"),
        tr("LatentMoE: routed experts work in this width between a down- and an up-projection, and dispatch moves it; "
           "empty = the hidden size (no latent)"),
        [](Scenario& s) -> int& { return s.model.moe.latent_size; }, 1, 1 << 24, tr("none")));
    f.push_back({QStringLiteral("model.moe.load_imbalance"), Group::Experts, tr("Load imbalance"), tr("= 1.0 (balanced)"),
                 tr("Busiest expert's tokens / the mean: its GPU sets the pace (1.0 = perfectly balanced routing)"),
                 [](const Scenario& s) { return s.model.moe.load_imbalance != 1.0 ? QString::number(s.model.moe.load_imbalance) : QString(); },
                 [](const QString& text, Scenario& s) {
                     const auto parsed = fields::parseOptionalPositive(text, 1e6);
                     if (!parsed.ok()) {
                         return parsed.error;
                     }
                     if (parsed.value && *parsed.value < 1.0) {
                         return tr("must be at least 1 (the busiest expert gets at least the mean)");
                     }
                     s.model.moe.load_imbalance = parsed.value.value_or(1.0);
                     return QString();
                 }});
    // Token dropping: a capacity factor makes routing drop what exceeds it; empty = dropless.
    f.push_back({QStringLiteral("model.moe.capacity_factor"), Group::Experts, tr("Capacity factor"), tr("dropless"),
                 tr("Token dropping: an expert takes at most this x its balanced share of tokens (Megatron-Core "
                    "--moe-expert-capacity-factor); empty = dropless routing"),
                 [](const Scenario& s) { return s.model.moe.dropless ? QString() : QString::number(s.model.moe.capacity_factor); },
                 [](const QString& text, Scenario& s) {
                     const auto parsed = fields::parseOptionalPositive(text, 1e4);
                     if (!parsed.ok()) {
                         return parsed.error;
                     }
                     s.model.moe.dropless = !parsed.value.has_value();
                     s.model.moe.capacity_factor = parsed.value.value_or(0.0);
                     return QString();
                 }});

    // The GPU count is one value or a list: the cluster's size is one of them (the first unless it already
    // is one), the search gets them all.
    f.push_back({QStringLiteral("cluster.num_gpus"), Group::Cluster, tr("GPU count"), tr("3360, or 1024, 2048, or 2240-4480:280"),
                 tr("One count, a list, or a range from-to:step"),
                 [](const Scenario& s) {
                     return fields::formatGpuCounts(s.search && !s.search->num_gpus.empty() ? s.search->num_gpus
                                                                                            : std::vector<int>{s.cluster.num_gpus});
                 },
                 [](const QString& text, Scenario& s) {
                     const auto parsed = fields::parseGpuCounts(text);
                     if (parsed.ok()) {
                         // The cluster keeps its size while the list holds it (a file's plan is sized for it);
                         // otherwise the first count.
                         const auto& counts = *parsed.value;
                         if (std::find(counts.begin(), counts.end(), s.cluster.num_gpus) == counts.end()) {
                             s.cluster.num_gpus = counts.front();
                         }
                         if (!s.search) {
                             s.search = SearchSpace{};
                         }
                         s.search->num_gpus = *parsed.value;
                     }
                     return parsed.error;
                 }});
    f.push_back(optionalInt(
        "cluster.gpus_per_node", Group::Cluster, tr("GPUs per node"), tr("GPUs sharing NVLink; empty = the GPU profile's node size"),
        [](Scenario& s) -> int& { return s.cluster.gpus_per_node; }, 1, 1024, tr("= the profile's node size")));
    // Prices are per GPU type: views/gpu_price_fields.h (cluster.price_per_gpu_hour and cluster.gpu_prices).
    f.push_back({QStringLiteral("training.tokens"), Group::Cluster, tr("Training tokens"), tr("e.g. 270B, 15T or 2.7e11"),
                 tr("Tokens to train on: sets the number of iterations, hence days and dollars"),
                 [](const Scenario& s) { return s.training.tokens > 0 ? formatTokens(s.training.tokens) : QString(); },
                 [](const QString& text, Scenario& s) {
                     const auto parsed = fields::parseTokens(text);
                     if (parsed.ok()) {
                         s.training.tokens = *parsed.value;
                     }
                     return parsed.error;
                 }});
    f.push_back(requiredInt(
        "training.global_batch", Group::Cluster, tr("Global batch"), tr("Sequences per iteration"),
        [](Scenario& s) -> int& { return s.training.global_batch; }, 1, 1'000'000'000));
    f.push_back(requiredInt(
        "training.lora_rank", Group::Cluster, tr("LoRA rank"),
        tr("Adapter rank r (Megatron-Bridge peft.dim, default 32); used with training mode LoRA only"),
        [](Scenario& s) -> int& { return s.training.lora_rank; }, 1, 65536));
    // The scenario's plan: only a plan that is there is edited (the group is hidden without one).
    f.push_back({QStringLiteral("plan.offload_activations"), Group::Plan, tr("Activations offloaded"), tr("none"),
                 tr("Share (0-1) of the stashed activations kept in host memory between forward and backward"),
                 [](const Scenario& s) {
                     const double v = s.plan ? s.plan->offload_activations : 0;
                     return v > 0 ? QString::number(v) : QString();
                 },
                 [](const QString& text, Scenario& s) {
                     const auto parsed = fields::parseOptionalPositive(text, 1e6);
                     if (!parsed.ok()) {
                         return parsed.error;
                     }
                     if (parsed.value && *parsed.value > 1.0) {
                         return tr("is a share: at most 1 (every stashed activation)");
                     }
                     if (s.plan) {
                         s.plan->offload_activations = parsed.value.value_or(0);
                     }
                     return QString();
                 }});
    return f;
}

// A yes/no part of the plan (no plan: false, and nothing is written).
ChoiceField planFlag(const char* name, const QString& label, const QString& tip, bool Plan::*member)
{
    return {QLatin1String(name),
            Group::Plan,
            label,
            tip,
            {},
            {},
            [member](const Scenario& s) { return QVariant(s.plan ? (*s.plan).*member : false); },
            [member](const QVariant& v, Scenario& s) {
                if (s.plan) {
                    (*s.plan).*member = v.toBool();
                }
            }};
}

// A TrainingSpec flag as a check box (the cluster and budget group holds the training settings).
ChoiceField trainingFlag(const char* name, const QString& label, const QString& tip, bool TrainingSpec::*member)
{
    return {QLatin1String(name),
            Group::Cluster,
            label,
            tip,
            {},
            {},
            [member](const Scenario& s) { return QVariant(s.training.*member); },
            [member](const QVariant& v, Scenario& s) { s.training.*member = v.toBool(); }};
}

// `bits` with `bit` set or cleared (a check box over one bit of a flag word).
unsigned withBit(unsigned bits, unsigned bit, bool on)
{
    return on ? (bits | bit) : (bits & ~bit);
}

// One of Plan::recompute_modules' bits as a check box.
ChoiceField recomputeModule(const char* name, const QString& label, const QString& tip, unsigned bit)
{
    return {QLatin1String(name),
            Group::Plan,
            label,
            tip,
            {},
            {},
            [bit](const Scenario& s) { return QVariant(s.plan && (s.plan->recompute_modules & bit) != 0); },
            [bit](const QVariant& v, Scenario& s) {
                if (s.plan) {
                    s.plan->recompute_modules = withBit(s.plan->recompute_modules, bit, v.toBool());
                }
            }};
}

// One of TrainingSpec::cuda_graph_scope's bits as a check box (used with "per module (scoped)" graphs).
ChoiceField graphScope(const char* name, const QString& label, const QString& tip, unsigned bit)
{
    return {QLatin1String(name),
            Group::Cluster,
            label,
            tip,
            {},
            {},
            [bit](const Scenario& s) { return QVariant((s.training.cuda_graph_scope & bit) != 0); },
            [bit](const QVariant& v, Scenario& s) { s.training.cuda_graph_scope = withBit(s.training.cuda_graph_scope, bit, v.toBool()); }};
}

std::vector<ChoiceField> buildChoiceFields()
{
    std::vector<ChoiceField> f;
    f.push_back(
        {QStringLiteral("model.activation"),
         Group::Model,
         tr("FFN activation"),
         tr("Feed-forward activation"),
         {QStringLiteral("GELU"), QStringLiteral("SwiGLU")},
         {QStringLiteral("gelu"), QStringLiteral("swiglu")},
         [](const Scenario& s) { return QVariant(QString::fromLatin1(to_string(s.model.activation))); },
         [](const QVariant& v, Scenario& s) { s.model.activation = v.toString() == u"swiglu" ? FfnActivation::SwiGlu : FfnActivation::Gelu; }});
    f.push_back({QStringLiteral("model.tied_embeddings"),
                 Group::Model,
                 tr("Tied input/output embedding"),
                 tr("The input embedding and the output layer share one weight matrix"),
                 {},
                 {},
                 [](const Scenario& s) { return QVariant(s.model.tied_embeddings); },
                 [](const QVariant& v, Scenario& s) { s.model.tied_embeddings = v.toBool(); }});
    // MHA or GQA follows from the key/value heads, so one choice covers both and never contradicts them.
    f.push_back({QStringLiteral("model.attention"),
                 Group::Model,
                 tr("Attention"),
                 tr("Multi-head / grouped-query attention (by the key/value heads) or DeepSeek's multi-head latent attention"),
                 {tr("MHA / GQA"), tr("MLA (latent)")},
                 {QStringLiteral("auto"), QStringLiteral("mla")},
                 [](const Scenario& s) { return QVariant(s.model.attention == AttentionKind::Mla ? QStringLiteral("mla") : QStringLiteral("auto")); },
                 [](const QVariant& v, Scenario& s) {
                     if (v.toString() == u"mla") {
                         s.model.attention = AttentionKind::Mla;
                     } else {
                         const int kv = s.model.kv_heads;
                         s.model.attention = kv > 0 && kv < s.model.heads ? AttentionKind::Gqa : AttentionKind::Mha;
                     }
                 }});
    f.push_back({QStringLiteral("model.linear_bias"),
                 Group::Model,
                 tr("Linear-layer biases"),
                 tr("Biases in the linear layers, experts included (GPT-OSS; Megatron-Core add_bias_linear): their adds and "
                    "gradient reductions are costed"),
                 {},
                 {},
                 [](const Scenario& s) { return QVariant(s.model.linear_bias); },
                 [](const QVariant& v, Scenario& s) { s.model.linear_bias = v.toBool(); }});
    f.push_back({QStringLiteral("model.moe.pad_to_capacity"),
                 Group::Experts,
                 tr("Pad experts to capacity"),
                 tr("With a capacity factor: every expert's input padded to its capacity (--moe-pad-expert-input-to-capacity, "
                    "Megatron-Bridge's token-drop default): static shapes, so the routed experts do not wait for the host"),
                 {},
                 {},
                 [](const Scenario& s) { return QVariant(s.model.moe.pad_to_capacity); },
                 // Used with a capacity factor only (as the MLA ranks with MLA): dropless routing has nothing to pad to.
                 [](const QVariant& v, Scenario& s) { s.model.moe.pad_to_capacity = v.toBool() && !s.model.moe.dropless; }});
    f.push_back(
        {QStringLiteral("training.precision"),
         Group::Cluster,
         tr("Precision"),
         tr("GEMM number format; FP8 and NVFP4 keep master weights, attention and norms in BF16"),
         {QStringLiteral("BF16"), QStringLiteral("FP16"), QStringLiteral("FP32"), QStringLiteral("FP8"), QStringLiteral("NVFP4")},
         {QStringLiteral("bf16"), QStringLiteral("fp16"), QStringLiteral("fp32"), QStringLiteral("fp8"), QStringLiteral("nvfp4")},
         [](const Scenario& s) { return QVariant(QString::fromLatin1(to_string(s.training.precision))); },
         [](const QVariant& v, Scenario& s) { s.training.precision = precision_from_string(v.toString().toStdString()).value_or(Precision::Bf16); }});
    // Fine-tuning changes what the backward computes and what has optimizer state (core/src/model/fine_tuning.h).
    f.push_back({QStringLiteral("training.mode"),
                 Group::Cluster,
                 tr("Training mode"),
                 tr("Pretraining; supervised fine-tuning (every weight trained, packed samples); or LoRA: a frozen base with "
                    "rank-r adapters on every linear layer (no weight gradients, optimizer state or gradient reduction for the base)"),
                 {tr("pretraining"), tr("SFT (full fine-tuning)"), tr("LoRA (frozen base)")},
                 {QStringLiteral("pretrain"), QStringLiteral("sft"), QStringLiteral("lora")},
                 [](const Scenario& s) { return QVariant(QString::fromLatin1(to_string(s.training.mode))); },
                 [](const QVariant& v, Scenario& s) {
                     s.training.mode = training_mode_from_string(v.toString().toStdString()).value_or(TrainingMode::Pretrain);
                 }});
    f.push_back({QStringLiteral("training.fp8_recipe"),
                 Group::Cluster,
                 tr("FP8 scaling"),
                 tr("How FP8 scales are chosen (Transformer Engine recipes); used with FP8 only"),
                 {tr("delayed (per tensor)"), tr("current (per tensor)"), tr("blockwise (DeepSeek-V3)"), QStringLiteral("MXFP8")},
                 {QStringLiteral("delayed"), QStringLiteral("current"), QStringLiteral("blockwise"), QStringLiteral("mxfp8")},
                 [](const Scenario& s) { return QVariant(QString::fromLatin1(to_string(s.training.fp8_recipe))); },
                 [](const QVariant& v, Scenario& s) {
                     s.training.fp8_recipe = fp8_recipe_from_string(v.toString().toStdString()).value_or(Fp8Recipe::Delayed);
                 }});
    f.push_back({QStringLiteral("training.attention"),
                 Group::Cluster,
                 tr("Attention kernel"),
                 tr("Fused (FlashAttention) or unfused attention"),
                 {tr("fused (flash)"), tr("unfused")},
                 {QStringLiteral("flash"), QStringLiteral("unfused")},
                 [](const Scenario& s) { return QVariant(QString::fromLatin1(to_string(s.training.attention))); },
                 [](const QVariant& v, Scenario& s) {
                     s.training.attention = v.toString() == u"unfused" ? AttentionKernel::Unfused : AttentionKernel::Flash;
                 }});
    // CUDA graphs change how much of a step the host's kernel launches cost (core/src/model/cuda_graphs.cpp).
    f.push_back({QStringLiteral("training.cuda_graphs"),
                 Group::Cluster,
                 tr("CUDA graphs"),
                 tr("Kernel launches: none (each launched by the host, Megatron-LM's default), per-module graphs (attention, "
                    "MoE router and preprocessing: Megatron-Core --cuda-graph-impl transformer_engine) or one graph per "
                    "iteration (--cuda-graph-scope full_iteration)"),
                 {tr("none"), tr("per module (scoped)"), tr("full iteration")},
                 {QStringLiteral("none"), QStringLiteral("scoped"), QStringLiteral("full_iteration")},
                 [](const Scenario& s) { return QVariant(QString::fromLatin1(to_string(s.training.cuda_graphs))); },
                 [](const QVariant& v, Scenario& s) {
                     s.training.cuda_graphs = cuda_graphs_from_string(v.toString().toStdString()).value_or(CudaGraphs::None);
                 }});
    // The modules a per-module graph captures (Megatron-Core --cuda-graph-scope); a layer captured whole costs
    // no host time per operator (core/src/model/compute_layer_costs.cpp).
    f.push_back(graphScope("training.cuda_graph_scope.attn", tr("Graph: attention"),
                           tr("Per-module graphs capture the attention sub-layer (--cuda-graph-scope attn)"), kGraphAttn));
    f.push_back(graphScope("training.cuda_graph_scope.mlp", tr("Graph: dense MLP"),
                           tr("Per-module graphs capture a dense FFN (--cuda-graph-scope mlp)"), kGraphMlp));
    f.push_back(graphScope("training.cuda_graph_scope.moe", tr("Graph: whole MoE layer"),
                           tr("Per-module graphs capture the whole MoE layer, dispatch and experts included (--cuda-graph-scope moe); "
                              "needs token dropping padded to capacity (static shapes)"),
                           kGraphMoe));
    f.push_back(graphScope("training.cuda_graph_scope.moe_router", tr("Graph: MoE router"),
                           tr("Per-module graphs capture the pre-MLP norm and the router (--cuda-graph-scope moe_router)"), kGraphMoeRouter));
    f.push_back(graphScope("training.cuda_graph_scope.moe_preprocess", tr("Graph: MoE preprocess"),
                           tr("Per-module graphs capture the dispatch preprocessing before the tokens-per-expert sync "
                              "(--cuda-graph-scope moe_preprocess)"),
                           kGraphMoePreprocess));
    f.push_back(graphScope("training.cuda_graph_scope.mamba", tr("Graph: Mamba layer"),
                           tr("Per-module graphs capture a hybrid model's Mamba layer (--cuda-graph-scope mamba)"), kGraphMamba));
    f.push_back(trainingFlag("training.te_cross_entropy", tr("Fused loss (TE cross-entropy)"),
                             tr("Transformer Engine's fused cross-entropy on the 16-bit logits (Megatron-LM "
                                "--cross-entropy-fusion-impl te) instead of the unfused fp32 loss"),
                             &TrainingSpec::te_cross_entropy));
    f.push_back(trainingFlag("training.loss_parallel", tr("Loss parallel (torchtitan TP)"),
                             tr("With TP: torchtitan's output layer saves its all-gathered full-sequence input and the loss is "
                                "PyTorch's loss_parallel over vocabulary shards (16 bytes per logit at its backward); peak memory only"),
                             &TrainingSpec::loss_parallel));
    f.push_back(trainingFlag("training.overlap_p2p", tr("Overlapped pipeline sends"),
                             tr("Interleaved schedules post their pipeline sends asynchronously (Megatron-LM's default, "
                                "overlap_p2p_comm); off: a send holds the sender's next chunk"),
                             &TrainingSpec::overlap_p2p));
    // Whose schedules order the pipeline: they differ in an interleaved schedule with as many micro-batches as ranks.
    f.push_back({QStringLiteral("training.pipeline_runtime"),
                 Group::Cluster,
                 tr("Pipeline runtime"),
                 tr("Megatron-Core's schedules, or PyTorch's (torch.distributed.pipelining, as torchtitan runs them). With as "
                    "many micro-batches as pipeline ranks, Megatron-Core's interleaved schedule runs every forward first; "
                    "PyTorch's keeps its 1F1B warm-up, so its last ranks hold fewer activations"),
                 {tr("Megatron-Core"), tr("PyTorch (torchtitan)")},
                 {QString::fromLatin1(to_string(PipelineRuntime::Megatron)), QString::fromLatin1(to_string(PipelineRuntime::PyTorch))},
                 [](const Scenario& s) { return QVariant(QString::fromLatin1(to_string(s.training.pipeline_runtime))); },
                 [](const QVariant& v, Scenario& s) {
                     s.training.pipeline_runtime = pipeline_runtime_from_string(v.toString().toStdString()).value_or(PipelineRuntime::Megatron);
                 }});
    f.push_back({QStringLiteral("plan.schedule"),
                 Group::Plan,
                 tr("Schedule"),
                 tr("Pipeline schedule of the plan; DualPipe is DeepSeek-V3's bidirectional pipeline (arXiv 2412.19437 Sec. 3.2.1)"),
                 {QStringLiteral("GPipe"), QStringLiteral("1F1B"), tr("interleaved"), QStringLiteral("DualPipe")},
                 {QStringLiteral("gpipe"), QStringLiteral("1f1b"), QStringLiteral("interleaved"), QStringLiteral("dualpipe")},
                 [](const Scenario& s) { return QVariant(QString::fromLatin1(to_string(s.plan ? s.plan->schedule : Schedule::OneFOneB))); },
                 [](const QVariant& v, Scenario& s) {
                     if (s.plan) {
                         s.plan->schedule = schedule_from_string(v.toString().toStdString()).value_or(Schedule::OneFOneB);
                         if (s.plan->schedule == Schedule::Interleaved && s.plan->virtual_stages < 2) {
                             s.plan->virtual_stages = 2; // what a file naming the interleaved schedule gets by default
                         } else if (s.plan->schedule != Schedule::Interleaved) {
                             s.plan->virtual_stages = 1;
                         }
                     }
                 }});
    QStringList orderLabels;
    QVariantList orderValues;
    for (const QString& order : rankOrderChoices()) {
        orderLabels << order;
        orderValues << order;
    }
    f.push_back({QStringLiteral("plan.rank_order"), Group::Plan, tr("Rank order"),
                 tr("Which parallel dimension gets adjacent ranks (innermost first, Megatron-Core's order string): tp-cp-ep-dp-pp is "
                    "Megatron's default, tp-cp-ep-pp-dp keeps a pipeline inside a node"),
                 orderLabels, orderValues,
                 [](const Scenario& s) { return QVariant(QString::fromStdString(to_string(s.plan ? s.plan->rank_order : RankOrder{}))); },
                 [](const QVariant& v, Scenario& s) {
                     if (s.plan) {
                         s.plan->rank_order = parse_rank_order(v.toString().toStdString()).value_or(RankOrder{});
                     }
                 }});
    f.push_back(planFlag("plan.overlap_grad_reduce", tr("Overlap DP gradient reduce"),
                         tr("Data-parallel gradient buckets reduce during the backward pass (Megatron --overlap-grad-reduce)"),
                         &Plan::overlap_grad_reduce));
    f.push_back(planFlag("plan.offload_optimizer", tr("Offload optimizer to host"),
                         tr("FP32 master weights and optimizer states in host memory, the step on the CPU"), &Plan::offload_optimizer));
    f.push_back(recomputeModule("plan.recompute_modules.layernorm", tr("Recompute norms"),
                                tr("Every norm's output recomputed in the backward (Megatron --recompute-modules layernorm)"), kRecomputeLayernorm));
    f.push_back(recomputeModule("plan.recompute_modules.mla_up_proj", tr("Recompute MLA up-proj."),
                                tr("MLA's per-head Q, K, V recomputed from the latents (--recompute-modules mla_up_proj)"), kRecomputeMlaUpProj));
    f.push_back(recomputeModule("plan.recompute_modules.moe_act", tr("Recompute expert act."),
                                tr("The experts' activation output recomputed from its kept input (--recompute-modules moe_act)"), kRecomputeMoeAct));
    f.push_back(recomputeModule("plan.recompute_modules.moe", tr("Recompute MoE layer"),
                                tr("The whole MoE layer (router, dispatch, experts, combine, shared experts) run again before its "
                                   "backward; only its input kept (--recompute-modules moe)"),
                                kRecomputeMoe));
    return f;
}

} // namespace

QStringList rankOrderChoices()
{
    // Megatron-Core's default and its --use-tp-pp-dp-mapping order (megatron/core/parallel_state.py), then
    // the context- and expert-parallel groups spread over nodes instead of data parallelism.
    return {QStringLiteral("tp-cp-ep-dp-pp"), QStringLiteral("tp-cp-ep-pp-dp"), QStringLiteral("tp-dp-cp-ep-pp"), QStringLiteral("tp-pp-cp-ep-dp")};
}

const std::vector<TextField>& textFields()
{
    static const std::vector<TextField> fields = buildTextFields();
    return fields;
}

const std::vector<ChoiceField>& choiceFields()
{
    static const std::vector<ChoiceField> fields = buildChoiceFields();
    return fields;
}

} // namespace vtrain::ui::form
