// SPDX-License-Identifier: MIT
// Physical floors (physical_floors.h): per GPU of each pipeline stage, the FLOPs it must execute, the HBM
// bytes it must move and the bytes that must cross each of its links in one iteration, each at its
// datasheet rate. Nothing here reads the simulator's cost model (operator tables, efficiencies, overlap,
// its communication model): only the model's FLOP and parameter counts (model_math.h, the published
// conventions) and the plan's layout and rank order. Where the physics leaves a choice the smaller count
// is taken, so every floor holds for any implementation:
//   * causal attention executes half of the full-matrix convention's core FLOPs (FlashAttention skips the
//     masked blocks: Dao 2023, arXiv 2307.08691, Sec. 3.1); token drop executes at most capacity_factor of
//     the routed rows;
//   * an all-reduce inside an NVLink domain moves min(1, 2(n-1)/n) x the buffer per GPU and direction: a
//     ring moves 2(n-1)/n (Patarasuk & Yuan 2009, bandwidth-optimal all-reduce; nccl-tests
//     doc/PERFORMANCE.md bus bandwidth), and NVLink SHARP reduces in the switch so that each GPU sends its
//     buffer once and receives the result once (NVIDIA NVLink SHARP / NCCL NVLS algorithm, NCCL 2.17
//     release notes); reduce-scatter and all-gather move (n-1)/n either way (what a GPU owns must leave,
//     what it lacks must arrive);
//   * across NVLink domains a group with at most k members per domain makes each domain receive an
//     all-reduce's whole buffer once (S / k per member: with in-network reduction, IB SHARP, nothing less
//     suffices), and send (reduce-scatter) or receive (all-gather) the (1/k - 1/n) share per member it does
//     not own; an all-to-all sends (n - k) / n of every rank's buffer out of the domain; a domain's bytes
//     may leave through any of its NICs, so the network floor is the mean over the cluster's GPUs (the
//     busiest stage's where every domain holds one stage only);
//   * ranks follow the plan's rank order (Megatron-Core's RankGenerator, megatron/core/parallel_state.py);
//     a group counts as inside one domain only when every group of its dimension is, and as spanning
//     domains only when every one does (more members than fit in a domain): otherwise it adds to neither;
//   * expert routing is uniform (vendor benchmarks force balance): a token's top_k picks reach
//     (D - 1)(1 - (1 - 1/D)^k) other domains in expectation at least (picks with replacement reach fewer
//     domains than distinct experts do), the most a deduplicating dispatcher (DeepEP, HybridEP) can save;
//   * HBM: weights read once per forward, backward (and recompute) pass of every micro-batch; each
//     sub-layer's input and output once per pass plus the saved input in the backward; the dispatched
//     expert rows; logits written, read and their gradient written once (6 bytes each, Transformer
//     Engine's fused cross-entropy); Adam's master weights and moments read and written once and the
//     gradient read once. Low-precision recipes count their 1-byte (FP8) or half-byte (FP4) operands. An
//     on-chip cache (tens of MB) can hold the weights of a very small stage across micro-batches; this
//     floor counts them from HBM as the brief of issue 28 defines it.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "model/model_math.h"
#include "vtrain/physical_floors.h"

namespace vtrain {

const char* to_string(FloorResource resource)
{
    switch (resource) {
    case FloorResource::Compute: return "compute";
    case FloorResource::Hbm: return "hbm";
    case FloorResource::NvLink: return "nvlink";
    case FloorResource::Network: return "network";
    case FloorResource::HostLink: return "host_link";
    }
    return "compute";
}

const char* to_string(FloorTerm term)
{
    switch (term) {
    case FloorTerm::ModelFlops: return "model FLOPs";
    case FloorTerm::RecomputeFlops: return "recomputed FLOPs";
    case FloorTerm::Weights: return "weight reads";
    case FloorTerm::Activations: return "activation traffic";
    case FloorTerm::OptimizerState: return "optimizer state";
    case FloorTerm::TensorParallel: return "tensor-parallel collectives";
    case FloorTerm::ContextParallel: return "context-parallel exchange";
    case FloorTerm::ExpertAllToAll: return "expert all-to-all";
    case FloorTerm::PipelineSends: return "pipeline sends";
    case FloorTerm::GradientAllReduce: return "gradient all-reduce";
    case FloorTerm::GradientReduceScatter: return "gradient reduce-scatter";
    case FloorTerm::ParamAllGather: return "parameter all-gather";
    case FloorTerm::EmbeddingSync: return "embedding gradient all-reduce";
    case FloorTerm::OptimizerOffload: return "optimizer offload";
    case FloorTerm::ActivationOffload: return "activation offload";
    case FloorTerm::Count: break;
    }
    return "";
}

FloorTerm PhysicalFloors::largest_term(FloorResource r) const
{
    const auto col = static_cast<std::size_t>(r);
    std::size_t best = 0;
    for (std::size_t t = 1; t < kFloorTerms; ++t) {
        if (term_s[t][col] > term_s[best][col]) {
            best = t;
        }
    }
    return static_cast<FloorTerm>(best);
}

namespace {

// Per-layer quantities, per token where they are FLOPs.
enum Field : std::size_t {
    kFwdFlops,      // forward FLOPs executed
    kRecFull,       // a full recompute's extra FLOPs (= forward)
    kRecSelective,  // the attention core's forward (Megatron's selective recompute)
    kRecMlaUp,      // MLA's up-projections ("mla_up_proj" module)
    kRecMoe,        // the MoE layer's forward ("moe" module)
    kDenseParams,   // split by tp
    kExpertParams,  // split by ep x etp
    kWideSublayers, // sub-layers over every token of the rank (mixers, dense FFNs)
    kMoeSublayers,  // MoE FFNs (their tokens split over tp)
    kTpSublayers,   // sub-layers entering and leaving a tensor-parallel region
    kAttention,     // attention mixers
    kFullAttention, // ... attending to the whole sequence (not windowed)
    kMoeLayers,
    kFields
};

double expert_share(const MoeSpec& moe)
{
    // Dropless routing executes every routed row; token drop at most capacity_factor of them.
    return moe.dropless ? 1.0 : std::clamp(moe.capacity_factor, 0.0, 1.0);
}

// Routed-expert matrix FLOPs one token executes forward at full capacity.
double routed_flops_per_token(const ModelSpec& m)
{
    const MoeSpec& e = m.moe;
    return 2.0 * e.top_k * ffn_matrices(m) * e.expert_input_width(m.hidden) * routed_expert_ffn_hidden(m);
}

double mla_up_flops_per_token(const ModelSpec& m)
{
    const MlaSpec& a = m.mla;
    const double heads = m.heads;
    const double q_up = a.q_lora_rank > 0 ? static_cast<double>(a.q_lora_rank) * heads * (a.qk_head_dim + a.qk_rope_head_dim) : 0.0;
    return 2.0 * (q_up + static_cast<double>(a.kv_lora_rank) * heads * (a.qk_head_dim + a.v_head_dim));
}

// The MoE layer's forward without the pre-norm: router, shared experts, latent projections, routed experts.
double moe_layer_flops_per_token(const ModelSpec& m)
{
    const MoeSpec& e = m.moe;
    const double h = m.hidden;
    const double dense =
        h * e.experts + ffn_matrices(m) * h * shared_expert_ffn_hidden_total(m) + (e.latent_size > 0 ? 2.0 * h * e.latent_size : 0.0);
    return 2.0 * dense + expert_share(e) * routed_flops_per_token(m);
}

double weight_bytes(Precision p)
{
    switch (p) {
    case Precision::Fp8: return 1.0;   // the FP8 copy the GEMMs read
    case Precision::Nvfp4: return 0.5; // 4-bit elements (scales not counted)
    case Precision::Fp32: return 4.0;
    case Precision::Bf16:
    case Precision::Fp16: break;
    }
    return 2.0;
}

// Element bytes of activations and of what the collectives move: the GEMMs' operands under low precision.
double activation_bytes(Precision p)
{
    return weight_bytes(p);
}

double high_precision_bytes(Precision p)
{
    return p == Precision::Fp32 ? 4.0 : 2.0;
}

// Main gradients as the plan keeps and reduces them (TrainingSpec::bf16_gradients; fp16 training keeps fp16).
double gradient_bytes(const TrainingSpec& t)
{
    if (t.precision == Precision::Fp16 || (t.bf16_gradients && t.precision != Precision::Fp32)) {
        return 2.0;
    }
    return 4.0;
}

// Adam's state per parameter read and written by the step: fp32 master weights and both moments (BF16
// moments with bf16_optimizer_moments); fp32 training updates the fp32 weights and moments in place.
double optimizer_state_bytes(const TrainingSpec& t)
{
    const double moments = t.bf16_optimizer_moments ? 4.0 : 8.0;
    return 4.0 + moments;
}

enum class Kind { AllReduce, ReduceScatter, AllGather, AllToAll };

struct Span {
    int size = 1;
    long long stride = 1;
};

// A communication group: its size, whether every group of its kind lies inside one NVLink domain,
// and at most how many of its members share a domain.
struct Group {
    int n = 1;
    bool contained = true;
    int k_up = 1;                           // members per domain, at most
    bool spans() const { return n > k_up; } // more members than a domain can hold: every group spans domains
};

int members_per_domain_up(Span s, int domain)
{
    if (s.size <= 1) {
        return 1;
    }
    if (s.stride >= domain || s.stride < 1) {
        return 1;
    }
    // Points `stride` apart: any `domain` consecutive ranks hold at most ceil(domain / stride) of them.
    return static_cast<int>(std::min<long long>(s.size, (domain + s.stride - 1) / s.stride));
}

bool fits_aligned(long long extent, int domain)
{
    // Groups tile blocks of `extent` consecutive ranks (mixed-radix numbering); the blocks line up with
    // domains when their size divides the domain's.
    return extent <= domain && domain % extent == 0;
}

Group make_group(Span inner, Span outer, int domain, int num_gpus)
{
    if (inner.stride > outer.stride) {
        std::swap(inner, outer);
    }
    if (inner.size <= 1) {
        inner = outer;
        outer = Span{};
    }
    Group g;
    g.n = inner.size * std::max(1, outer.size);
    if (g.n <= 1) {
        return g;
    }
    const bool one_span = outer.size <= 1;
    const bool adjacent = !one_span && outer.stride == inner.stride * inner.size;
    const long long extent = one_span ? static_cast<long long>(inner.size) * inner.stride : static_cast<long long>(outer.size) * outer.stride;
    g.contained = num_gpus <= domain || fits_aligned(extent, domain);
    if (one_span) {
        g.k_up = members_per_domain_up(inner, domain);
    } else if (adjacent) {
        g.k_up = members_per_domain_up(Span{g.n, inner.stride}, domain);
    } else {
        g.k_up = std::min(g.n, members_per_domain_up(inner, domain) * members_per_domain_up(outer, domain));
    }
    if (g.contained) {
        g.k_up = g.n;
    }
    return g;
}

Group make_group(Span s, int domain, int num_gpus)
{
    return make_group(s, Span{}, domain, num_gpus);
}

// Bytes per GPU and direction over NVLink (group inside a domain) and over the NICs (group across domains).
struct Traffic {
    double nvlink = 0;
    double network = 0;
};

Traffic collective(Kind kind, double bytes, const Group& g)
{
    Traffic t;
    if (g.n <= 1 || bytes <= 0) {
        return t;
    }
    const double n = g.n;
    if (g.contained) {
        switch (kind) {
        case Kind::AllReduce: t.nvlink = std::min(1.0, 2 * (n - 1) / n) * bytes; break;
        case Kind::ReduceScatter:
        case Kind::AllGather:
        case Kind::AllToAll: t.nvlink = (n - 1) / n * bytes; break;
        }
    } else if (g.spans()) {
        const double k = g.k_up;
        switch (kind) {
        case Kind::AllReduce: t.network = bytes / k; break;
        case Kind::ReduceScatter:
        case Kind::AllGather: t.network = (1 / k - 1 / n) * bytes; break;
        case Kind::AllToAll: t.network = (n - k) / n * bytes; break;
        }
    }
    return t;
}

// Expected distinct destinations (of `others` + 1 equally likely ones, the own one included) other than
// the own one that k uniform picks with replacement reach: a lower bound for picks of distinct experts.
double other_destinations(double destinations, int top_k)
{
    if (destinations <= 1) {
        return 0;
    }
    return (destinations - 1) * (1 - std::pow(1 - 1 / destinations, top_k));
}

// Ranks between neighbours of each dimension for the given sizes, in the plan's rank order.
std::array<long long, 5> strides(const RankOrder& order, const std::array<int, 5>& size_of)
{
    std::array<long long, 5> out{};
    long long stride = 1;
    for (const ParallelDim d : order.dims) {
        out[static_cast<std::size_t>(d)] = stride;
        stride *= std::max(1, size_of[static_cast<std::size_t>(d)]);
    }
    return out;
}

constexpr std::size_t idx(ParallelDim d)
{
    return static_cast<std::size_t>(d);
}

// What one stage's GPU accumulates, per resource and term, in seconds.
struct StageFloors {
    std::array<std::array<double, kFloorResources>, kFloorTerms> s{};
    void add(FloorTerm term, FloorResource r, double seconds) { s[static_cast<std::size_t>(term)][static_cast<std::size_t>(r)] += seconds; }
    double total(FloorResource r) const
    {
        double sum = 0;
        for (const auto& row : s) {
            sum += row[static_cast<std::size_t>(r)];
        }
        return sum;
    }
};

} // namespace

struct FloorModel::Sums {
    std::array<double, kFields> v{};
};

FloorModel::FloorModel(const ModelSpec& model, const TrainingSpec& training) : m_model(model), m_training(training)
{
    const ModelSpec& m = m_model;
    const int n = std::max(0, m.layers);
    m_prefix.assign(static_cast<std::size_t>(n + 1) * kFields, 0.0);
    const bool sac = training.per_op_sac;
    for (int i = 0; i < n; ++i) {
        const LayerKind k = layer_kind(m, i);
        std::array<double, kFields> f{};
        const double core = attention_core_forward_flops_per_token(m, i); // full-matrix convention
        f[kFwdFlops] = layer_forward_flops_per_token(m, i) - 0.5 * core;
        if (k.ffn == FfnKind::Moe) {
            f[kFwdFlops] -= (1 - expert_share(m.moe)) * routed_flops_per_token(m);
        }
        f[kRecFull] = f[kFwdFlops];
        // torchtitan's per-op SAC saves the attention output and redoes some GEMMs: counted as nothing.
        f[kRecSelective] = sac ? 0.0 : 0.5 * core;
        f[kRecMlaUp] = k.mixer == MixerKind::Attention && m.attention == AttentionKind::Mla ? mla_up_flops_per_token(m) : 0.0;
        f[kRecMoe] = k.ffn == FfnKind::Moe ? moe_layer_flops_per_token(m) : 0.0;
        const LayerParamSplit p = layer_param_split(m, i);
        f[kDenseParams] = p.dense;
        f[kExpertParams] = p.expert;
        f[kWideSublayers] = (k.mixer != MixerKind::None ? 1 : 0) + (k.ffn == FfnKind::Dense ? 1 : 0);
        f[kMoeSublayers] = k.ffn == FfnKind::Moe ? 1 : 0;
        // Shared experts are a tensor-parallel FFN beside the routed ones (Megatron-Core SharedExpertMLP).
        const bool shared = k.ffn == FfnKind::Moe && shared_expert_ffn_hidden_total(m) > 0;
        f[kTpSublayers] = (k.mixer != MixerKind::None ? 1 : 0) + (k.ffn == FfnKind::Dense || shared ? 1 : 0);
        f[kAttention] = k.mixer == MixerKind::Attention ? 1 : 0;
        f[kFullAttention] = k.mixer == MixerKind::Attention && attention_keys_per_query(m, k.windowed) >= m.seq_len ? 1 : 0;
        f[kMoeLayers] = k.ffn == FfnKind::Moe ? 1 : 0;
        for (std::size_t j = 0; j < kFields; ++j) {
            m_prefix[static_cast<std::size_t>(i + 1) * kFields + j] = m_prefix[static_cast<std::size_t>(i) * kFields + j] + f[j];
        }
    }
}

void FloorModel::add_range(Sums& out, int first, int n) const
{
    const int layers = std::max(0, m_model.layers);
    const int a = std::clamp(first, 0, layers), b = std::clamp(first + n, 0, layers);
    for (std::size_t j = 0; j < kFields; ++j) {
        out.v[j] += m_prefix[static_cast<std::size_t>(b) * kFields + j] - m_prefix[static_cast<std::size_t>(a) * kFields + j];
    }
}

PhysicalFloors FloorModel::floors(const Plan& p, const PipelineLayout& layout, const FloorHardware& hw) const
{
    const ModelSpec& m = m_model;
    const TrainingSpec& t = m_training;
    PhysicalFloors out;
    if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.cp < 1 || p.micro_batch < 1 || t.global_batch < 1 || m.seq_len < 1 || hw.peak_flops <= 0) {
        return out;
    }
    const int domain = std::max(1, hw.nvlink_domain_gpus);
    const int num_gpus = p.num_gpus();
    const Precision prec = t.precision;
    const bool full = p.recompute == Recompute::Full;
    const bool moe_rc = !full && (p.recompute_modules & kRecomputeMoe) != 0;
    const double tp = p.tp, cp = p.cp, dp = p.dp;
    const int etp_i = p.effective_etp();
    const double ep = std::max(1, p.ep), etp = std::max(1, etp_i);
    const double edp = std::max(1.0, tp * cp * dp / (ep * etp));
    const double gpus_per_stage = tp * cp * dp;
    const double micro_batches = static_cast<double>(t.global_batch) / (dp * p.micro_batch);
    const double tokens = static_cast<double>(t.global_batch) * m.seq_len;    // per iteration, all replicas
    const double t_loc = static_cast<double>(p.micro_batch) * m.seq_len / cp; // one GPU's tokens per micro-batch
    const double t_moe = t_loc / tp;                                          // ... entering a MoE layer (split over tp)
    const double h = m.hidden, vocab = m.vocab;
    const double w_b = weight_bytes(prec), a_b = activation_bytes(prec), hp_b = high_precision_bytes(prec);
    const double g_b = gradient_bytes(t);
    const MoeSpec& moe = m.moe;
    const double k_moe = moe.enabled() ? moe.top_k : 0;
    const double share = moe.enabled() ? expert_share(moe) : 0;
    const double io = moe.enabled() ? moe.expert_input_width(m.hidden) : 0;
    const double rows_own = t_moe * k_moe * share; // routed rows this GPU's tokens make per MoE layer

    // Where the groups sit (dense layers: tp, cp, dp, pp; expert layers: etp, ep, edp, pp; cp = 1 there).
    const auto dense = strides(p.rank_order, {p.tp, p.cp, 1, p.dp, p.pp});
    const auto expert = strides(p.rank_order, {etp_i, 1, p.ep, static_cast<int>(edp), p.pp});
    const Group tp_group = make_group({p.tp, dense[idx(ParallelDim::Tp)]}, domain, num_gpus);
    const Group cp_group = make_group({p.cp, dense[idx(ParallelDim::Cp)]}, domain, num_gpus);
    const Group ep_group = make_group({p.ep, expert[idx(ParallelDim::Ep)]}, domain, num_gpus);
    const Group etp_group = make_group({etp_i, expert[idx(ParallelDim::Tp)]}, domain, num_gpus);
    const Group replicas = make_group({p.cp, dense[idx(ParallelDim::Cp)]}, {p.dp, dense[idx(ParallelDim::Dp)]}, domain, num_gpus);
    const Group expert_replicas = make_group({static_cast<int>(edp), expert[idx(ParallelDim::Dp)]}, domain, num_gpus);
    const long long pp_stride = dense[idx(ParallelDim::Pp)];
    const Group pp_group = make_group({p.pp, pp_stride}, domain, num_gpus);
    // The first and last stage (tied embeddings); with one stage they are one GPU.
    const Group edge_pair = p.pp > 1 ? make_group({2, static_cast<long long>(p.pp - 1) * pp_stride}, domain, num_gpus) : Group{};

    // Per-layer extras that do not sit in the prefix sums.
    const LayerParamSplit mtp_split = m.mtp_layers > 0 ? mtp_param_split(m) : LayerParamSplit{};
    double mtp_fwd = 0;
    if (m.mtp_layers > 0) {
        mtp_fwd = mtp_forward_flops_per_token(m) - 0.5 * attention_core_forward_flops_per_token(m);
        if (moe.enabled()) {
            mtp_fwd -= (1 - share) * routed_flops_per_token(m);
        }
    }
    const double out_fwd = output_forward_flops_per_token(m);
    const double chunks = std::max(1, layout.chunks);

    // Per resource: the busiest stage's GPU; the network's domains share their NICs, so there the mean
    // over the cluster's GPUs, unless every domain holds one stage only (pipeline outermost, stages of
    // whole domains). Kept as running figures: no allocation per plan (the explorer calls this per row).
    const bool stage_domains = p.rank_order.dims.back() == ParallelDim::Pp && (num_gpus / p.pp) % domain == 0;
    std::array<double, kFloorResources> busiest{};
    busiest.fill(-1);
    StageFloors network_mean;
    const int stages = std::min(p.pp, layout.stages);
    // DualPipe: device d runs half the micro-batches through stage d and half through stage pp - 1 - d
    // (DeepSeek-V3 report Sec. 3.2.1), so its compute is the mean of the pair's, not one stage's.
    const bool paired = p.schedule == Schedule::DualPipe && stages > 1;
    std::vector<std::array<double, kFloorTerms>> stage_compute(paired ? static_cast<std::size_t>(stages) : 0);
    for (int s = 0; s < stages; ++s) {
        StageFloors f;
        Sums sum;
        int mtp = 0, layers = 0;
        bool loss = false, embedding = false;
        for (int c = 0; c < layout.chunks; ++c) {
            const VirtualStage& v = layout.at(s, c);
            add_range(sum, v.first_layer, v.layers);
            layers += v.layers;
            mtp += v.mtp_layers;
            loss = loss || v.loss;
            embedding = embedding || v.embedding;
        }
        const auto& x = sum.v;

        // --- compute ------------------------------------------------------------------------------
        const double model_flops = tokens * 3 * (x[kFwdFlops] + mtp * mtp_fwd + (loss ? out_fwd : 0.0));
        double rec = full ? x[kRecFull] : 0.0;
        if (!full) {
            rec += p.recompute == Recompute::Selective ? x[kRecSelective] : 0.0;
            rec += (p.recompute_modules & kRecomputeMlaUpProj) != 0 ? x[kRecMlaUp] : 0.0;
            rec += moe_rc ? x[kRecMoe] : 0.0;
        }
        f.add(FloorTerm::ModelFlops, FloorResource::Compute, model_flops / gpus_per_stage / hw.peak_flops);
        f.add(FloorTerm::RecomputeFlops, FloorResource::Compute, tokens * rec / gpus_per_stage / hw.peak_flops);

        // --- HBM ----------------------------------------------------------------------------------
        const double local_dense = (x[kDenseParams] + mtp * mtp_split.dense) / tp;
        const double local_expert = (x[kExpertParams] + mtp * mtp_split.expert) / (ep * etp);
        const double vocab_local = ((embedding ? embedding_params(m) : 0.0) + (loss ? output_params(m) : 0.0)) / tp;
        // Experts a micro-batch leaves without tokens are not read: 1 - exp(-rows per expert) of them are hit.
        double hit = 0;
        if (moe.enabled() && moe.experts > 0) {
            const double rows_per_expert = ep * etp * rows_own / moe.experts;
            hit = 1 - std::exp(-rows_per_expert);
        }
        // Forward and backward read every weight; a full recompute reads the decoder layers' once more (not
        // the MTP modules' or the output layer's, which Megatron does not recompute).
        const double layer_weights = (x[kDenseParams] / tp + x[kExpertParams] / (ep * etp) * hit) * (2 + (full ? 1 : 0));
        const double other_weights = (mtp * (mtp_split.dense / tp + mtp_split.expert / (ep * etp) * hit) + (loss ? h * vocab / tp : 0.0)) * 2;
        f.add(FloorTerm::Weights, FloorResource::Hbm, micro_batches * (layer_weights + other_weights) * w_b / hw.hbm_bytes_per_s);
        const double passes_a = 5 + (full ? 2 : 0);
        const double passes_e = 5 + (full || moe_rc ? 2 : 0);
        double act = passes_a * (x[kWideSublayers] * t_loc + x[kMoeSublayers] * t_moe) * h * a_b;
        act += passes_e * x[kMoeLayers] * etp * rows_own * io * a_b; // the rows each GPU's experts take and give
        act += loss ? 6.0 * t_loc * vocab / tp : 0.0;
        f.add(FloorTerm::Activations, FloorResource::Hbm, micro_batches * act / hw.hbm_bytes_per_s);
        const double dense_shard = p.zero_stage >= 1 ? dp * cp : 1.0; // the most any ZeRO variant shards
        const double expert_shard = p.zero_stage >= 1 ? edp : 1.0;
        const double held = (local_dense + vocab_local) / dense_shard + local_expert / expert_shard;
        const double opt_bytes = p.offload_optimizer ? held * (g_b + hp_b) : held * (2 * optimizer_state_bytes(t) + g_b);
        f.add(FloorTerm::OptimizerState, FloorResource::Hbm, opt_bytes / hw.hbm_bytes_per_s);

        // --- links --------------------------------------------------------------------------------
        auto add_traffic = [&](FloorTerm term, const Traffic& tr, double times) {
            if (hw.nvlink_bytes_per_s > 0) {
                f.add(term, FloorResource::NvLink, times * tr.nvlink / hw.nvlink_bytes_per_s);
            }
            if (hw.nic_bytes_per_s_per_gpu > 0) {
                f.add(term, FloorResource::Network, times * tr.network / hw.nic_bytes_per_s_per_gpu);
            }
        };
        const double passes = 2 + (full ? 1 : 0);
        if (p.tp > 1) {
            const double bytes = t_loc * h * a_b;
            Traffic one;
            if (p.sequence_parallel) {
                const Traffic ag = collective(Kind::AllGather, bytes, tp_group), rs = collective(Kind::ReduceScatter, bytes, tp_group);
                one = {ag.nvlink + rs.nvlink, ag.network + rs.network};
            } else {
                one = collective(Kind::AllReduce, bytes, tp_group);
            }
            add_traffic(FloorTerm::TensorParallel, one, micro_batches * passes * x[kTpSublayers]);
        }
        if (p.cp > 1) {
            const double head_dim = m.head_dim();
            if (p.cp_kind == ContextParallelKind::Ring) {
                // K and V of this rank's heads (an MLA rank could rebuild them from the latent, whichever is less).
                double kv_width = 2.0 * m.effective_kv_heads() * head_dim / tp;
                if (m.attention == AttentionKind::Mla) {
                    const MlaSpec& a = m.mla;
                    kv_width =
                        std::min<double>(a.kv_lora_rank + a.qk_rope_head_dim, m.heads / tp * (a.qk_head_dim + a.qk_rope_head_dim + a.v_head_dim));
                }
                // Causal load balancing or not, a rank needs at least half of every other rank's block.
                const double half_block = t_loc / 2 * kv_width * a_b;
                Traffic one;
                if (cp_group.contained) {
                    one.nvlink = (cp - 1) * half_block;
                } else if (cp_group.spans()) {
                    one.network = (cp - cp_group.k_up) / cp_group.k_up * half_block;
                }
                add_traffic(FloorTerm::ContextParallel, one, micro_batches * passes * x[kFullAttention]);
            } else {
                double width = (2.0 * m.heads * head_dim + 2.0 * m.effective_kv_heads() * head_dim) / tp; // q, k, v and the output
                if (m.attention == AttentionKind::Mla) {
                    const MlaSpec& a = m.mla;
                    width = m.heads / tp * (2.0 * (a.qk_head_dim + a.qk_rope_head_dim) + 2.0 * a.v_head_dim);
                }
                add_traffic(FloorTerm::ContextParallel, collective(Kind::AllToAll, t_loc * width * a_b, cp_group),
                            micro_batches * passes * x[kAttention]);
            }
        }
        if (moe.enabled() && x[kMoeLayers] > 0) {
            const double passes_ep = 4 + (full || moe_rc ? 2 : 0); // dispatch and combine, forward and backward
            const double bytes = rows_own * io * a_b;
            Traffic one;
            if (p.ep > 1) {
                const bool flex = t.moe_dispatcher == MoeDispatcher::Flex;
                const double token_bytes = t_moe * share * io * a_b;
                if (ep_group.contained) {
                    one.nvlink = flex ? other_destinations(ep, moe.top_k) * token_bytes : (ep - 1) / ep * bytes;
                } else if (ep_group.spans()) {
                    const double domains = std::ceil(ep / ep_group.k_up);
                    one.network = flex ? other_destinations(domains, moe.top_k) * token_bytes : (ep - ep_group.k_up) / ep * bytes;
                }
            }
            add_traffic(FloorTerm::ExpertAllToAll, one, micro_batches * passes_ep * x[kMoeLayers]);
            if (etp_i > 1) {
                // Expert tensor parallelism gathers the ETP group's rows and reduce-scatters the outputs.
                const double gathered = etp * bytes;
                const Traffic ag = collective(Kind::AllGather, gathered, etp_group), rs = collective(Kind::ReduceScatter, gathered, etp_group);
                add_traffic(FloorTerm::ExpertAllToAll, {ag.nvlink + rs.nvlink, ag.network + rs.network},
                            micro_batches * passes_ep / 2 * x[kMoeLayers]);
            }
        }
        if (p.pp > 1) {
            // Activations forward and gradients backward across every boundary of the pp x v virtual stages
            // (Megatron splits each message over the tensor-parallel ranks): per GPU, averaged over stages.
            const double message = t_loc * h * a_b / tp;
            const double boundaries = p.pp * chunks - 1;
            Traffic one;
            if (pp_group.contained) {
                one.nvlink = message * boundaries / p.pp;
            } else if (pp_group.spans()) {
                const double domains = std::ceil(static_cast<double>(p.pp) / pp_group.k_up);
                const double crossing = std::min(boundaries, chunks * (domains - 1) + (chunks - 1));
                one.network = message * crossing / p.pp;
            }
            add_traffic(FloorTerm::PipelineSends, one, 2 * micro_batches);
        }
        // Data parallelism: once per iteration.
        const double dense_grads = (local_dense + vocab_local) * g_b;
        const double gather_b = prec == Precision::Fp8 || prec == Precision::Nvfp4 ? 1.0 : hp_b;
        const bool whole_shard = p.shard_group <= 0 || p.shard_group >= p.dp * p.cp;
        if (p.zero_stage < 1) {
            add_traffic(FloorTerm::GradientAllReduce, collective(Kind::AllReduce, dense_grads, replicas), 1);
            add_traffic(FloorTerm::GradientAllReduce, collective(Kind::AllReduce, local_expert * g_b, expert_replicas), 1);
        } else {
            // Hybrid sharding reduce-scatters inside a shard and all-reduces across: never less than a
            // reduce-scatter over all replicas.
            add_traffic(FloorTerm::GradientReduceScatter, collective(Kind::ReduceScatter, dense_grads, replicas), 1);
            add_traffic(FloorTerm::GradientReduceScatter, collective(Kind::ReduceScatter, local_expert * g_b, expert_replicas), 1);
            if (whole_shard) {
                add_traffic(FloorTerm::ParamAllGather, collective(Kind::AllGather, (local_dense + vocab_local) * gather_b, replicas), 1);
                add_traffic(FloorTerm::ParamAllGather, collective(Kind::AllGather, local_expert * gather_b, expert_replicas), 1);
            }
        }
        if (p.pp > 1 && m.tied_embeddings && (s == 0 || s == p.pp - 1)) {
            add_traffic(FloorTerm::EmbeddingSync, collective(Kind::AllReduce, vocab * h / tp * g_b, edge_pair), 1);
        }

        // --- host link ----------------------------------------------------------------------------
        if (p.offload_optimizer && hw.host_link_bytes_per_s > 0) {
            // Gradients down and updated weights up, each direction at its own rate.
            f.add(FloorTerm::OptimizerOffload, FloorResource::HostLink, held * std::max(g_b, hp_b) / hw.host_link_bytes_per_s);
        }
        if (p.offload_activations > 0 && hw.host_link_bytes_per_s > 0) {
            // At least each offloaded layer's input (what a full recompute keeps) goes down and comes back.
            const double stash = std::min(1.0, p.offload_activations) * layers * t_loc * h * a_b / (p.sequence_parallel ? tp : 1.0);
            f.add(FloorTerm::ActivationOffload, FloorResource::HostLink, micro_batches * stash / hw.host_link_bytes_per_s);
        }

        const auto compute = static_cast<std::size_t>(FloorResource::Compute);
        if (paired) {
            for (std::size_t term = 0; term < kFloorTerms; ++term) {
                stage_compute[static_cast<std::size_t>(s)][term] = f.s[term][compute];
            }
        }
        for (std::size_t r = 0; r < kFloorResources; ++r) {
            const double total = f.total(static_cast<FloorResource>(r));
            if (paired && r == compute) {
                continue;
            }
            if (total > busiest[r]) {
                busiest[r] = total;
                for (std::size_t term = 0; term < kFloorTerms; ++term) {
                    out.term_s[term][r] = f.s[term][r];
                }
            }
        }
        const auto net = static_cast<std::size_t>(FloorResource::Network);
        for (std::size_t term = 0; term < kFloorTerms; ++term) {
            network_mean.s[term][net] += f.s[term][net] / stages;
        }
    }
    if (paired) {
        const auto compute = static_cast<std::size_t>(FloorResource::Compute);
        for (int s = 0; s < stages; ++s) {
            const auto& a = stage_compute[static_cast<std::size_t>(s)];
            const auto& b = stage_compute[static_cast<std::size_t>(stages - 1 - s)];
            double total = 0;
            for (std::size_t term = 0; term < kFloorTerms; ++term) {
                total += (a[term] + b[term]) / 2;
            }
            if (total > busiest[compute]) {
                busiest[compute] = total;
                for (std::size_t term = 0; term < kFloorTerms; ++term) {
                    out.term_s[term][compute] = (a[term] + b[term]) / 2;
                }
            }
        }
    }
    if (!stage_domains) {
        const auto net = static_cast<std::size_t>(FloorResource::Network);
        for (std::size_t term = 0; term < kFloorTerms; ++term) {
            out.term_s[term][net] = network_mean.s[term][net];
        }
    }
    for (std::size_t r = 0; r < kFloorResources; ++r) {
        for (std::size_t term = 0; term < kFloorTerms; ++term) {
            out.seconds[r] += out.term_s[term][r];
        }
        if (out.seconds[r] > out.binding_s()) {
            out.binding = static_cast<FloorResource>(r);
        }
    }
    return out;
}

PhysicalFloors physical_floors(const ModelSpec& model, const TrainingSpec& training, const ClusterSpec& cluster, const Plan& plan,
                               const GpuProfile& profile)
{
    PipelineLayout layout;
    if (resolve_pipeline_layout(model, plan, layout)) {
        return {}; // a layout that does not fit: no floors (check_plan refuses such plans)
    }
    return FloorModel(model, training).floors(plan, layout, floor_hardware(cluster, profile, training.precision));
}

} // namespace vtrain
