// SPDX-License-Identifier: MIT
// Physical floors (physical_floors.h) and plausibility flags (plausibility.h): closed-form checks of each
// floor term on small plans, then the property every prediction must have -- no predicted iteration is
// faster than its binding floor -- on 100,000 random plans (random dense, GQA, MoE, MLA, Mamba-hybrid and
// windowed models; every schedule, precision, ZeRO stage, CP, EP/ETP, rank order and offload; shipped
// profiles of every vendor) through the explorer's fast path, a sample of them through simulate(), and
// every row of the validation sets (../shared/validation, skipped when absent).
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include "iteration/fast_simulation.h"
#include "iteration/task_graph_simulation.h"
#include "model/model_math.h"
#include "model/model_support.h"
#include "test_support.h"
#include "validation_data.h"
#include "vtrain/physical_floors.h"
#include "vtrain/plan_check.h"
#include "vtrain/plausibility.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"
#include "vtrain/simulator.h"
#include "vtrain/validation.h"

using namespace vtrain;

namespace {

template <typename T>
T pick(std::mt19937_64& rng, std::initializer_list<T> values)
{
    return *(values.begin() + static_cast<std::ptrdiff_t>(rng() % values.size()));
}

bool chance(std::mt19937_64& rng, int one_in)
{
    return rng() % static_cast<unsigned>(one_in) == 0;
}

struct Case {
    Scenario scenario;
    Plan plan;
};

const std::vector<std::string>& gpu_ids()
{
    static const std::vector<std::string> ids{"a100-sxm4-80gb", "h100-sxm5-80gb", "h100-hbm2e-96gb", "h800-sxm5-80gb",
                                              "b200-sxm-180gb", "gb200-nvl72",    "mi300x",          "h200-sxm-141gb"};
    return ids;
}

const std::map<std::string, GpuProfile>& profiles()
{
    static const std::map<std::string, GpuProfile> all = [] {
        std::map<std::string, GpuProfile> m;
        for (const auto& id : gpu_ids()) {
            m.emplace(id, test::shipped_profile(id));
        }
        return m;
    }();
    return all;
}

ModelSpec random_model(std::mt19937_64& rng)
{
    const int heads = pick(rng, {8, 16, 32});
    ModelSpec m = test::gpt(pick(rng, {2, 4, 6, 8, 12, 16, 24}), heads * pick(rng, {64, 128}), heads, pick(rng, {512, 1024, 2048, 4096}),
                            pick(rng, {32000, 50304, 128256}));
    const int kind = static_cast<int>(rng() % 6); // 0 GPT, 1 Llama-like, 2 MoE, 3 MLA + MoE, 4 Mamba hybrid, 5 windowed
    if (kind >= 1) {
        m.activation = FfnActivation::SwiGlu;
        m.normalization = Normalization::RmsNorm;
        m.kv_heads = std::max(1, heads / pick(rng, {1, 2, 4, 8}));
        m.ffn_hidden = m.hidden * 8 / 3 / 64 * 64;
        m.tied_embeddings = chance(rng, 3);
        m.qk_norm = chance(rng, 4);
    }
    if (kind == 2 || kind == 3 || (kind == 4 && chance(rng, 2))) {
        m.moe.experts = pick(rng, {4, 8, 16, 32, 64});
        m.moe.top_k = std::min(m.moe.experts, pick(rng, {1, 2, 4, 8}));
        m.moe.expert_ffn_hidden = pick(rng, {m.hidden / 2, m.hidden});
        m.moe.shared_experts = pick(rng, {0, 0, 1});
        m.moe.first_dense_layers = kind == 4 ? 0 : pick(rng, {0, 0, 1});
        m.moe.layer_freq = kind == 4 ? 1 : pick(rng, {1, 1, 2});
        m.moe.dropless = !chance(rng, 3);
        if (!m.moe.dropless) {
            m.moe.capacity_factor = pick(rng, {0.5, 1.0, 1.25});
            m.moe.pad_to_capacity = chance(rng, 2);
        }
        m.moe.load_imbalance = pick(rng, {1.0, 1.0, 1.3});
        if (chance(rng, 6)) {
            m.moe.latent_size = m.hidden / 2;
        }
    }
    if (kind == 3) {
        m.attention = AttentionKind::Mla;
        m.mla.q_lora_rank = pick(rng, {0, m.hidden / 2});
        m.mla.kv_lora_rank = pick(rng, {128, 256});
        m.mla.qk_head_dim = pick(rng, {64, 128});
        m.mla.qk_rope_head_dim = pick(rng, {32, 64});
        m.mla.v_head_dim = pick(rng, {64, 128});
        m.kv_heads = 0;
        m.mtp_layers = pick(rng, {0, 0, 1});
    }
    if (kind == 4) {
        // A hybrid stack: Mamba-2 mixers, attention, dense and MoE FFNs, one letter per layer.
        const std::string letters = m.moe.enabled() ? "M*-E" : "M*-";
        std::string pattern;
        for (int i = 0; i < m.layers; ++i) {
            pattern += letters[rng() % letters.size()];
        }
        m.layer_pattern = pattern;
        m.mamba.groups = pick(rng, {1, 8});
    }
    if (kind == 5) {
        m.sliding_window = pick(rng, {128, 256});
        m.full_attention_every = pick(rng, {0, 2});
    }
    return m;
}

Precision random_precision(std::mt19937_64& rng, const GpuProfile& profile)
{
    for (;;) {
        const Precision p =
            pick(rng, {Precision::Bf16, Precision::Bf16, Precision::Fp16, Precision::Fp32, Precision::Fp8, Precision::Fp8, Precision::Nvfp4});
        if (p == Precision::Fp8 && profile.peak_flops("fp8") <= 0) {
            continue;
        }
        if (p == Precision::Nvfp4 && profile.peak_flops("fp4") <= 0) {
            continue;
        }
        return p;
    }
}

RankOrder order(const char* text)
{
    return *parse_rank_order(text);
}

// A random legal plan of a random model on a random shipped GPU (rejection-sampled with check_plan and
// the simulator's model support), after tst_explorer_fast_sim's generator.
Case random_case(std::mt19937_64& rng)
{
    for (;;) {
        Case c;
        Scenario& s = c.scenario;
        s.model = random_model(rng);
        s.cluster.gpu = gpu_ids()[rng() % gpu_ids().size()];
        const GpuProfile& profile = profiles().at(s.cluster.gpu);
        TrainingSpec& t = s.training;
        t.global_batch = pick(rng, {8, 16, 32, 64, 128, 256, 512});
        t.tokens = 1e9;
        t.precision = random_precision(rng, profile);
        t.fp8_recipe = pick(rng, {Fp8Recipe::Delayed, Fp8Recipe::Current, Fp8Recipe::Blockwise, Fp8Recipe::Mxfp8});
        t.attention = chance(rng, 3) ? AttentionKernel::Unfused : AttentionKernel::Flash;
        t.bf16_gradients = chance(rng, 3);
        t.bf16_optimizer_moments = chance(rng, 5);
        t.moe_dispatcher = chance(rng, 2) ? MoeDispatcher::Flex : MoeDispatcher::AllToAll;
        t.per_op_sac = chance(rng, 8);
        t.te_cross_entropy = chance(rng, 2);
        t.overlap_p2p = chance(rng, 3);
        t.cuda_graphs = pick(rng, {CudaGraphs::None, CudaGraphs::None, CudaGraphs::Scoped, CudaGraphs::FullIteration});
        t.fp8_param_gather = t.precision == Precision::Fp8 && chance(rng, 2);
        t.bf16_edge_layers = t.precision == Precision::Fp8 || t.precision == Precision::Nvfp4 ? pick(rng, {0, 0, 1}) : 0;
        t.grad_accumulation_bytes = pick(rng, {0.0, 0.0, 6.0, 10.0});
        Plan& p = c.plan;
        p.tp = pick(rng, {1, 2, 4, 8});
        p.pp = pick(rng, {1, 2, 3, 4, 8});
        p.dp = pick(rng, {1, 2, 3, 4, 8, 16});
        p.micro_batch = pick(rng, {1, 2, 4});
        p.schedule = pick(rng, {Schedule::GPipe, Schedule::OneFOneB, Schedule::OneFOneB, Schedule::Interleaved, Schedule::DualPipe});
        p.virtual_stages = p.schedule == Schedule::Interleaved ? pick(rng, {2, 3, 4}) : 1;
        p.recompute = pick(rng, {Recompute::None, Recompute::Selective, Recompute::Full});
        p.recompute_modules = chance(rng, 3) ? static_cast<unsigned>(rng() % 16) : 0u;
        p.sequence_parallel = p.tp > 1 && !chance(rng, 3);
        p.zero_stage = pick(rng, {0, 1, 2, 3});
        if (p.zero_stage >= 1 && chance(rng, 4)) {
            p.shard_group = pick(rng, {1, 2, 4});
        }
        p.overlap_param_gather = (p.zero_stage == 1 || p.zero_stage == 2) && chance(rng, 2);
        p.grad_bucket_mb = pick(rng, {1.0, 40.0, 1000.0});
        p.overlap_grad_reduce = !chance(rng, 4);
        p.cp = pick(rng, {1, 1, 2, 4});
        p.cp_kind = chance(rng, 2) ? ContextParallelKind::Ring : ContextParallelKind::AllToAll;
        if (s.model.moe.enabled()) {
            p.ep = pick(rng, {1, 2, 4, 8});
            p.etp = pick(rng, {0, 0, 1, 2});
            p.moe_overlap = p.ep > 1 && chance(rng, 3);
        }
        p.tp_overlap = p.sequence_parallel && chance(rng, 3);
        p.rank_order = pick(rng, {order("tp-cp-ep-dp-pp"), order("tp-cp-ep-dp-pp"), order("tp-cp-ep-pp-dp"), order("tp-dp-cp-ep-pp")});
        p.offload_optimizer = chance(rng, 5);
        p.offload_activations = chance(rng, 5) ? pick(rng, {0.25, 0.5, 1.0}) : 0.0;
        s.cluster.num_gpus = p.num_gpus();
        s.cluster.gpus_per_node = pick(rng, {0, 0, 1, 2, 4, 8});
        if (chance(rng, 6)) {
            s.cluster.links.nic_gbit_per_s = pick(rng, {25.0, 100.0, 800.0});
        }
        if (chance(rng, 8)) {
            s.cluster.links.nvlink_bus_gbytes_per_s = pick(rng, {50.0, 900.0});
        }
        if (check_plan(s.model, t, p, s.cluster.num_gpus) || not_modeled_reason(s.model, t, p) || rank_order_problem(s.model, p)) {
            continue;
        }
        return c;
    }
}

std::string describe(const Case& c, const PhysicalFloors& f, double predicted)
{
    return "plan " + plan_to_json(c.plan).dump() + " model " + scenario_to_json(c.scenario)["model"].dump() + " gpu " + c.scenario.cluster.gpu +
           " precision " + to_string(c.scenario.training.precision) + " batch " + std::to_string(c.scenario.training.global_batch) + " node " +
           std::to_string(c.scenario.cluster.gpus_per_node) + ": predicted " + std::to_string(predicted) + " s below the " + to_string(f.binding) +
           " floor " + std::to_string(f.binding_s()) + " s (" + to_string(f.largest_term(f.binding)) + ")";
}

// Predictions below their floor, by the fast path (and simulate() for every `sample`-th plan).
struct Sweep {
    int plans = 0, sampled = 0, moe = 0, mla = 0, mamba = 0, cp = 0, ep = 0, offload = 0;
    std::array<int, kFloorResources> binding{};
    std::vector<std::string> below;
    // Known simulator limitation, counted apart: data-parallel traffic overlapped with the backward is
    // modeled on its own stream, so it shares nothing with the backward's tensor/expert/context collectives
    // when both cross the same NICs; on a plan whose NICs are its bottleneck the prediction can then fall
    // under the network floor. simulate() flags such a prediction (below_floor).
    std::vector<std::string> nic_contention;
};

bool data_parallel_overlap_on_the_network(const PhysicalFloors& f, const Plan& plan)
{
    const FloorTerm t = f.largest_term(FloorResource::Network);
    const bool dp_term = t == FloorTerm::GradientReduceScatter || t == FloorTerm::GradientAllReduce || t == FloorTerm::ParamAllGather;
    return f.binding == FloorResource::Network && dp_term && (plan.overlap_grad_reduce || plan.overlap_param_gather || plan.zero_stage >= 3);
}

void check_case(const Case& c, FastSimScratch& scratch, Sweep& out, bool sample)
{
    const Scenario& s = c.scenario;
    const GpuProfile& profile = profiles().at(s.cluster.gpu);
    const ResolvedCluster cluster = resolve_cluster(s.cluster, profile);
    const LayerCosts costs = plan_layer_costs(s.model, s.training, cluster, c.plan);
    FastSimResult fast;
    std::vector<StageBreakdown> stages;
    double predicted = 0;
    if (fast_simulate(s.model, s.training, cluster, c.plan, costs, scratch, fast, stages)) {
        predicted = fast.iteration_time_s;
    } else {
        SimulationWorkspace ws;
        SimulationOptions options;
        options.timeline = false;
        options.cached_costs = &costs;
        predicted = simulate_checked(s.model, s.training, cluster, c.plan, options, ws).iteration_time_s;
    }
    const PhysicalFloors f = physical_floors(s.model, s.training, s.cluster, c.plan, profile);
    ++out.plans;
    ++out.binding[static_cast<std::size_t>(f.binding)];
    out.moe += s.model.moe.enabled() ? 1 : 0;
    out.mla += s.model.attention == AttentionKind::Mla ? 1 : 0;
    out.mamba += s.model.layer_pattern.empty() ? 0 : 1;
    out.cp += c.plan.cp > 1 ? 1 : 0;
    out.ep += c.plan.ep > 1 ? 1 : 0;
    out.offload += c.plan.offload_optimizer || c.plan.offload_activations > 0 ? 1 : 0;
    if (!(f.binding_s() > 0)) {
        out.below.push_back("no floor: " + describe(c, f, predicted));
    } else if (predicted < f.binding_s() * (1 - 1e-9)) {
        (data_parallel_overlap_on_the_network(f, c.plan) ? out.nic_contention : out.below).push_back(describe(c, f, predicted));
    }
    if (sample) {
        ++out.sampled;
        SimulationOptions options;
        options.timeline = false;
        const auto r = simulate(s, c.plan, profile, options);
        if (!r.ok()) {
            out.below.push_back("simulate refused " + plan_to_json(c.plan).dump() + ": " + r.first_error());
        } else if ((r->plausibility & kBelowFloor) != 0 || std::abs(r->floors.binding_s() / f.binding_s() - 1) > 1e-12 ||
                   std::abs(r->iteration_time_s / predicted - 1) > 1e-9) {
            out.below.push_back("simulate(): " + describe(c, r->floors, r->iteration_time_s));
        }
    }
}

GpuProfile fixed_profile()
{
    // Round figures: 100 TFLOP/s BF16, 1 TB/s HBM, NVLink 100 GB/s per direction (bidirectional 200 in the
    // datasheet block), 8 x 100 Gb/s NICs per node of 8, PCIe 10 GB/s.
    GpuProfile g = test::free_network_profile();
    g.id = "test-gpu";
    g.peak_tflops = {{"bf16", 100}, {"fp16", 100}, {"fp8", 200}};
    g.memory_bandwidth_gbytes_per_s = 1000;
    g.links.gpus_per_node = 8;
    g.links.nvlink_domain_gpus = 0;
    g.links.nics_per_node = 8;
    g.links.nic_gbit_per_s = 100;
    g.links.host_link_gbytes_per_s = 10;
    g.source_details = {{"figures", {{"datasheet", {{"scale_up", {{"gbytes_per_s_bidirectional", 200}}}}}}}};
    return g;
}

double term(const PhysicalFloors& f, FloorTerm t, FloorResource r)
{
    return f.term_s[static_cast<std::size_t>(t)][static_cast<std::size_t>(r)];
}

} // namespace

class TestPhysicalFloors : public QObject {
    Q_OBJECT
private slots:
    // The datasheet figures: line rates, not the calibrated bus bandwidth or NIC efficiency.
    void hardware_is_the_datasheet()
    {
        const GpuProfile h100 = test::shipped_profile("h100-sxm5-80gb");
        ClusterSpec cluster;
        cluster.gpu = h100.id;
        cluster.num_gpus = 16;
        const FloorHardware hw = floor_hardware(cluster, h100, Precision::Bf16);
        QCOMPARE(hw.peak_flops, 989.4e12);
        QCOMPARE(hw.hbm_bytes_per_s, 3350e9);
        QCOMPARE(hw.nvlink_bytes_per_s, 450e9);                  // 900 GB/s bidirectional, not the fitted bus figure
        QCOMPARE(hw.nic_bytes_per_s_per_gpu, 8 * 400e9 / 8 / 8); // 8 x 400 Gb/s per 8 GPUs at line rate
        QCOMPARE(floor_hardware(cluster, h100, Precision::Fp8).peak_flops, 1978.9e12);
        QCOMPARE(floor_hardware(cluster, h100, Precision::Fp32).peak_dtype, std::string("tf32"));
        // Without a datasheet block (the A100 spec profiles): the bus bandwidth over the default bus efficiency.
        const GpuProfile a100 = test::shipped_profile("a100-sxm4-80gb");
        QCOMPARE(floor_hardware(cluster, a100, Precision::Fp8).peak_flops, 312e12); // no FP8 on A100: BF16's rate
        QVERIFY(std::abs(floor_hardware(cluster, a100, Precision::Bf16).nvlink_bytes_per_s - a100.links.nvlink_bus_gbytes_per_s * 1e9 / 0.8) < 1);
        // A stated NVLink rate above the datasheet's describes other hardware: the line rate follows it.
        cluster.links.nvlink_bus_gbytes_per_s = 900;
        QCOMPARE(floor_hardware(cluster, h100, Precision::Bf16).nvlink_bytes_per_s, 900e9);
        const GpuProfile gb200 = test::shipped_profile("gb200-nvl72");
        cluster.links = {};
        const FloorHardware g = floor_hardware(cluster, gb200, Precision::Nvfp4);
        QCOMPARE(g.peak_flops, 10000e12);
        QCOMPARE(g.nvlink_domain_gpus, 72);
        QCOMPARE(g.gpus_per_node, 4);
        QCOMPARE(g.host_link_bytes_per_s, 225e9);
    }

    // One stage, tensor parallelism inside the node: compute, HBM and NVLink terms in closed form.
    void closed_forms_tensor_parallel()
    {
        const GpuProfile gpu = fixed_profile();
        Scenario s;
        s.model = test::gpt(4, 1024, 16, 1024, 32000);
        s.training.global_batch = 8;
        s.cluster.gpu = gpu.id;
        s.cluster.num_gpus = 8;
        Plan p;
        p.tp = 8;
        const PhysicalFloors f = physical_floors(s.model, s.training, s.cluster, p, gpu);
        const double h = 1024, seq = 1024, vocab = 32000, layers = 4, tokens = 8 * seq;
        // FLOPs: per token and layer 2 x 12 h^2 (GEMMs) + 2 s h (causal half of 4 s h), output layer 2 h V; x3.
        const double flops = 3 * tokens * (layers * (24 * h * h + 2 * seq * h) + 2 * h * vocab);
        QVERIFY(std::abs(term(f, FloorTerm::ModelFlops, FloorResource::Compute) / (flops / 8 / 100e12) - 1) < 1e-12);
        QCOMPARE(term(f, FloorTerm::RecomputeFlops, FloorResource::Compute), 0.0);
        // Tensor parallelism: 2 sub-layers x 8 micro-batches x 2 passes, each an all-reduce of the [s, h]
        // activation in bf16 inside the node: min(1, 2 x 7/8) = 1 buffer per GPU and direction at 100 GB/s.
        const double buffer = seq * h * 2;
        QVERIFY(std::abs(term(f, FloorTerm::TensorParallel, FloorResource::NvLink) / (layers * 2 * 8 * 2 * buffer / 100e9) - 1) < 1e-12);
        QCOMPARE(f.of(FloorResource::Network), 0.0);
        // HBM: optimizer state (12 B read and written, a 4-byte gradient read) of this GPU's parameters.
        const double params = (layers * layer_params(s.model) + embedding_params(s.model) + output_params(s.model)) / 8;
        const double layer_share = layers * layer_params(s.model) / 8; // what the per-layer sums carry (norm excluded)
        QVERIFY(term(f, FloorTerm::OptimizerState, FloorResource::Hbm) <= params * 28 / 1e12 * (1 + 1e-12));
        QVERIFY(term(f, FloorTerm::OptimizerState, FloorResource::Hbm) >= layer_share * 28 / 1e12);
        // Weights: the layers' share read in forward and backward of 8 micro-batches, plus the output matrix.
        QVERIFY(std::abs(term(f, FloorTerm::Weights, FloorResource::Hbm) / (8 * 2 * (layer_share + h * vocab / 8) * 2 / 1e12) - 1) < 1e-12);
        // Activations: 8 sub-layers x 5 passes of [s, h] bf16, plus 6 bytes per logit of this rank's vocabulary.
        QVERIFY(std::abs(term(f, FloorTerm::Activations, FloorResource::Hbm) / (8 * (8 * 5 * seq * h * 2 + 6 * seq * vocab / 8) / 1e12) - 1) < 1e-12);
        QCOMPARE(f.binding, FloorResource::Compute);
        // With sequence parallelism: an all-gather and a reduce-scatter, 7/8 of the buffer each.
        p.sequence_parallel = true;
        const PhysicalFloors sp = physical_floors(s.model, s.training, s.cluster, p, gpu);
        QVERIFY(std::abs(term(sp, FloorTerm::TensorParallel, FloorResource::NvLink) / (layers * 2 * 8 * 2 * 2 * 7.0 / 8 * buffer / 100e9) - 1) <
                1e-12);
        // Full recompute: a fourth forward's FLOPs and a third pass over the weights.
        p.recompute = Recompute::Full;
        const PhysicalFloors full = physical_floors(s.model, s.training, s.cluster, p, gpu);
        QVERIFY(std::abs(term(full, FloorTerm::RecomputeFlops, FloorResource::Compute) / (tokens * layers * (24 * h * h + 2 * seq * h) / 8 / 100e12) -
                         1) < 1e-12);
    }

    // Data parallelism across nodes: the share of the gradients that must enter each node, at the NICs' line rate.
    void closed_forms_data_parallel_across_nodes()
    {
        const GpuProfile gpu = fixed_profile();
        Scenario s;
        s.model = test::gpt(4, 1024, 16, 1024, 32000);
        s.training.global_batch = 16;
        s.cluster.gpu = gpu.id;
        s.cluster.num_gpus = 32;
        Plan p;
        p.tp = 8;
        p.dp = 4; // tp fills a node: each data-parallel group has one member per node
        const PhysicalFloors f = physical_floors(s.model, s.training, s.cluster, p, gpu);
        const double grads = (4 * layer_params(s.model) + embedding_params(s.model)) / 8 * 4; // fp32 main gradients
        const double nic = 8 * 100e9 / 8 / 8;                                                 // per GPU
        // ZeRO 0: each node needs the whole reduced buffer of its groups: S per member (k = 1).
        QVERIFY(std::abs(term(f, FloorTerm::GradientAllReduce, FloorResource::Network) / (grads / nic) - 1) < 1e-12);
        QCOMPARE(term(f, FloorTerm::GradientAllReduce, FloorResource::NvLink), 0.0);
        // ZeRO 1: reduce-scatter (1 - 1/4) of the gradients and all-gather (1 - 1/4) of the bf16 weights.
        p.zero_stage = 1;
        const PhysicalFloors z = physical_floors(s.model, s.training, s.cluster, p, gpu);
        QVERIFY(std::abs(term(z, FloorTerm::GradientReduceScatter, FloorResource::Network) / (0.75 * grads / nic) - 1) < 1e-12);
        QVERIFY(std::abs(term(z, FloorTerm::ParamAllGather, FloorResource::Network) / (0.75 * grads / 2 / nic) - 1) < 1e-12);
        // Data-parallel innermost (tp-dp-...): the group of 4 fits in a node: NVLink, (n-1)/n = 3/4 each way.
        p.zero_stage = 0;
        p.rank_order = *parse_rank_order("tp-dp-cp-ep-pp");
        p.tp = 2;
        p.dp = 4;
        s.cluster.num_gpus = 8;
        const PhysicalFloors inside = physical_floors(s.model, s.training, s.cluster, p, gpu);
        const double grads2 = (4 * layer_params(s.model) + embedding_params(s.model)) / 2 * 4;
        QVERIFY(std::abs(term(inside, FloorTerm::GradientAllReduce, FloorResource::NvLink) / (grads2 / 100e9) - 1) < 1e-12);
        QCOMPARE(inside.of(FloorResource::Network), 0.0);
    }

    // Pipeline sends, context parallelism, the expert all-to-all and the host link.
    // DualPipe: a device runs half the micro-batches through stage d and half through stage pp - 1 - d, so its
    // compute floor is the mean of the pair's; with the LM head on the last stage, 1F1B's busiest device is
    // that stage alone.
    void dualpipe_compute_floor_is_the_pair_mean()
    {
        const GpuProfile gpu = fixed_profile();
        Scenario s;
        s.model = test::gpt(4, 1024, 16, 1024, 128000); // the head outweighs a layer
        s.training.global_batch = 8;
        s.cluster.gpu = gpu.id;
        s.cluster.num_gpus = 4;
        Plan p;
        p.pp = 4;
        p.micro_batch = 1;
        const PhysicalFloors one_f_one_b = physical_floors(s.model, s.training, s.cluster, p, gpu);
        p.schedule = Schedule::DualPipe;
        const PhysicalFloors dualpipe = physical_floors(s.model, s.training, s.cluster, p, gpu);
        // Per stage (one layer each), model FLOPs: 3 x the forward's; the last stage adds the head.
        const double h = 1024, seq = 1024, tokens = 8 * seq;
        const double layer = 3 * tokens * (24 * h * h + 2 * seq * h); // as closed_forms_tensor_parallel
        const double head = 3 * tokens * 2 * h * 128000;
        const double peak = 100e12; // fixed_profile()
        QVERIFY(std::abs(term(one_f_one_b, FloorTerm::ModelFlops, FloorResource::Compute) / ((layer + head) / peak) - 1) < 1e-9);
        QVERIFY(std::abs(term(dualpipe, FloorTerm::ModelFlops, FloorResource::Compute) / ((2 * layer + head) / 2 / peak) - 1) < 1e-9);
    }

    void closed_forms_pipeline_context_experts_offload()
    {
        const GpuProfile gpu = fixed_profile();
        Scenario s;
        s.model = test::gpt(8, 1024, 16, 4096, 32000);
        s.training.global_batch = 8;
        s.cluster.gpu = gpu.id;
        // Pipeline of 2 stages of 8 GPUs (pp outermost): every send crosses nodes.
        Plan p;
        p.tp = 8;
        p.pp = 2;
        s.cluster.num_gpus = 16;
        const PhysicalFloors pp = physical_floors(s.model, s.training, s.cluster, p, gpu);
        const double message = 4096.0 * 1024 * 2 / 8; // [s, h] bf16 split over 8 tensor-parallel ranks
        // One boundary, 8 micro-batches, forward and backward: per GPU (mean of two stages) 2 x 8 x 1/2 messages.
        QVERIFY(std::abs(term(pp, FloorTerm::PipelineSends, FloorResource::Network) / (message * 8 / (100e9 / 8)) - 1) < 1e-12);
        // Context parallelism (ring) of 4 inside a node: a rank receives at least half of each of the other
        // 3 ranks' K/V blocks per pass (forward; backward returns dK/dV): 2 passes x 8 layers x 8 micro-batches.
        Plan c;
        c.cp = 4;
        c.tp = 2;
        s.cluster.num_gpus = 8;
        const PhysicalFloors cp = physical_floors(s.model, s.training, s.cluster, c, gpu);
        const double kv_width = 2.0 * 1024 / 2; // K and V of this rank's 8 heads of 64
        const double half_block = 4096.0 / 4 / 2 * kv_width * 2;
        QVERIFY(std::abs(term(cp, FloorTerm::ContextParallel, FloorResource::NvLink) / (2 * 8 * 8 * 3 * half_block / 100e9) - 1) < 1e-12);
        // Experts: 8 experts top-2 over ep = 8 in one node with the all-to-all dispatcher: 7/8 of each rank's
        // rows leave it, 4 times per layer and micro-batch.
        s.model.moe.experts = 8;
        s.model.moe.top_k = 2;
        Plan e;
        e.dp = 8;
        e.ep = 8;
        const PhysicalFloors ep = physical_floors(s.model, s.training, s.cluster, e, gpu);
        const double rows = 4096.0 * 2 * 1024 * 2; // tokens x top_k x h x bf16
        QVERIFY(std::abs(term(ep, FloorTerm::ExpertAllToAll, FloorResource::NvLink) / (1 * 8 * 4 * 7.0 / 8 * rows / 100e9) - 1) < 1e-12);
        // A deduplicating dispatcher sends a token once per other GPU its picks reach: 7 x (1 - (7/8)^2) copies.
        s.training.moe_dispatcher = MoeDispatcher::Flex;
        const PhysicalFloors flex = physical_floors(s.model, s.training, s.cluster, e, gpu);
        QVERIFY(
            std::abs(term(flex, FloorTerm::ExpertAllToAll, FloorResource::NvLink) / (8 * 4 * 7 * (1 - 0.875 * 0.875) * 4096.0 * 1024 * 2 / 100e9) -
                     1) < 1e-12);
        // Offloaded optimizer: fp32 gradients down (the larger direction) at 10 GB/s.
        s.model.moe = {};
        s.training.moe_dispatcher = MoeDispatcher::AllToAll;
        Plan o;
        o.dp = 8;
        o.offload_optimizer = true;
        const PhysicalFloors off = physical_floors(s.model, s.training, s.cluster, o, gpu);
        const double params = 8 * layer_params(s.model) + embedding_params(s.model);
        QVERIFY(term(off, FloorTerm::OptimizerOffload, FloorResource::HostLink) <= params * 4 / 10e9 * (1 + 1e-12));
        QVERIFY(term(off, FloorTerm::OptimizerOffload, FloorResource::HostLink) >= 8 * layer_params(s.model) * 4 / 10e9);
        // ... and the states stay out of HBM: only the gradients read and the weights written remain.
        Plan on_gpu = o;
        on_gpu.offload_optimizer = false;
        const PhysicalFloors kept = physical_floors(s.model, s.training, s.cluster, on_gpu, gpu);
        QVERIFY(std::abs(term(off, FloorTerm::OptimizerState, FloorResource::Hbm) / term(kept, FloorTerm::OptimizerState, FloorResource::Hbm) -
                         (4.0 + 2.0) / (2 * 12.0 + 4.0)) < 1e-12);
    }

    void summary_names_the_binding_resource()
    {
        const GpuProfile gpu = fixed_profile();
        Scenario s;
        s.model = test::gpt(4, 1024, 16, 1024, 32000);
        s.training.global_batch = 16;
        s.cluster.gpu = gpu.id;
        s.cluster.num_gpus = 32;
        s.cluster.links.nic_gbit_per_s = 1; // a slow network binds
        Plan p;
        p.tp = 8;
        p.dp = 4;
        p.zero_stage = 1;
        const PhysicalFloors f = physical_floors(s.model, s.training, s.cluster, p, gpu);
        QCOMPARE(f.binding, FloorResource::Network);
        QCOMPARE(f.largest_term(FloorResource::Network), FloorTerm::GradientReduceScatter);
        const std::string text = floor_summary(f, floor_hardware(s.cluster, gpu, Precision::Bf16), f.binding_s() / 0.71);
        QVERIFY2(text.rfind("network-bound: the gradient reduce-scatter over the NICs (8 x 1 Gb/s per node of 8 GPUs) is ", 0) == 0, text.c_str());
        QVERIFY2(text.find("71%") != std::string::npos, text.c_str());
    }

    void plausibility_flags_and_reasons()
    {
        // The table's H100 FP8 entry and a plan above it.
        const auto best = best_published_mfu("h100-sxm5-80gb", Precision::Fp8);
        QVERIFY(best.has_value());
        QVERIFY(best->mfu > 0.3 && best->mfu < 0.6);
        QCOMPARE(best_published_mfu("h800-sxm5-80gb", Precision::Fp8)->mfu, best->mfu); // one chip, one entry
        QVERIFY(!best_published_mfu("mi300x", Precision::Bf16));                        // no published run: no flag
        QVERIFY(!best_published_mfu("h100-sxm5-80gb", Precision::Fp32));
        QCOMPARE(plausibility_flags("h100-sxm5-80gb", Precision::Fp8, best->mfu + 0.01, 1.0, 0.5), unsigned(kMfuAbovePublished));
        QCOMPARE(plausibility_flags("h100-sxm5-80gb", Precision::Fp8, best->mfu - 0.01, 1.0, 0.5), 0u);
        QCOMPARE(plausibility_flags("mi300x", Precision::Bf16, 0.99, 11.0, 1.0), unsigned(kFarAboveFloor));
        QCOMPARE(plausibility_flags("mi300x", Precision::Bf16, 0.5, 0.9, 1.0), unsigned(kBelowFloor));
        const auto reasons =
            plausibility_reasons(kMfuAbovePublished | kFarAboveFloor, "h100-sxm5-80gb", Precision::Fp8, 0.6, 20, 1, FloorResource::Compute);
        QCOMPARE(reasons.size(), std::size_t(2));
        QVERIFY2(reasons[0].rfind("MFU 60.0% is above the best published H100/H800 FP8 run (", 0) == 0, reasons[0].c_str());
        QVERIFY2(reasons[1].find("20x its binding floor (compute") != std::string::npos, reasons[1].c_str());
        for (const auto& r : reasons) {
            QVERIFY(r.find(',') == std::string::npos); // CSV cells
        }
        QCOMPARE(plausibility_codes(kBelowFloor), std::vector<std::string>{"below_floor"});
        for (const PublishedMfu& e : published_mfu_table()) {
            QVERIFY(e.mfu > 0 && e.mfu < 1);
            QVERIFY(std::string(e.source).size() > 20);
        }
    }

    // The property: no prediction below its floor, on 100,000 random plans (fast path; every 200th also
    // through simulate(), which must carry the same floors and no below-floor flag).
    void no_prediction_below_its_floor_on_random_plans()
    {
        std::mt19937_64 rng(28);
        FastSimScratch scratch;
        Sweep sweep;
        constexpr int kPlans = 100000;
        for (int i = 0; i < kPlans; ++i) {
            check_case(random_case(rng), scratch, sweep, i % 200 == 0);
        }
        qInfo("%d plans (%d MoE, %d MLA, %d Mamba hybrids, %d with cp, %d with ep, %d offloading), %d through simulate(); binding: compute %d, "
              "hbm %d, nvlink %d, network %d, host link %d; below their floor: %zu",
              sweep.plans, sweep.moe, sweep.mla, sweep.mamba, sweep.cp, sweep.ep, sweep.offload, sweep.sampled, sweep.binding[0], sweep.binding[1],
              sweep.binding[2], sweep.binding[3], sweep.binding[4], sweep.below.size());
        for (std::size_t i = 0; i < sweep.below.size() && i < 20; ++i) {
            qWarning("%s", sweep.below[i].c_str());
        }
        for (const std::string& known : sweep.nic_contention) {
            qWarning("known limitation (overlapped data-parallel traffic shares no NIC time with the backward's collectives): %s", known.c_str());
        }
        // The known class stays rare (NIC-bound plans only); more would mean it is no longer an edge case.
        QVERIFY2(sweep.nic_contention.size() <= static_cast<std::size_t>(kPlans / 10000), std::to_string(sweep.nic_contention.size()).c_str());
        QCOMPARE(sweep.plans, kPlans);
        QVERIFY(sweep.moe > kPlans / 5 && sweep.mla > kPlans / 20 && sweep.mamba > kPlans / 20 && sweep.cp > kPlans / 10 && sweep.ep > kPlans / 20);
        QVERIFY2(sweep.below.empty(), (std::to_string(sweep.below.size()) +
                                       " predictions below their floor; the first: " + (sweep.below.empty() ? "" : sweep.below.front()))
                                          .c_str());
    }

    // The same property on every row of the validation sets, every candidate setting of each.
    void no_validation_row_below_its_floor()
    {
        const auto dir = test::validation_data_dir();
        if (!std::filesystem::exists(dir / "modern_runs.json")) {
            QSKIP(("validation sets not found in " + dir.string() + " (they live outside the repository)").c_str());
        }
        int rows = 0, predicted = 0;
        std::vector<std::string> below;
        std::map<std::string, GpuProfile> cache;
        for (const char* file : {"public_runs.json", "modern_runs.json"}) {
            const auto runs = load_runs(dir / file);
            QVERIFY2(runs.ok(), runs.ok() ? "" : runs.first_error().c_str());
            for (const RunRow& row : *runs) {
                ++rows;
                const RowMapping mapping = map_run(row);
                if (!mapping.run) {
                    continue;
                }
                const MappedRun& run = *mapping.run;
                auto it = cache.find(run.profile_id);
                if (it == cache.end()) {
                    it = cache.emplace(run.profile_id, test::shipped_profile(run.profile_id)).first;
                }
                if (it->second.id.empty()) {
                    continue; // no shipped profile
                }
                const std::vector<RunCandidate> single{RunCandidate{run.scenario, run.plan, {}, 0}};
                for (const RunCandidate& c : run.candidates.empty() ? single : run.candidates) {
                    if (check_plan(c.scenario.model, c.scenario.training, c.plan, c.scenario.cluster.num_gpus) ||
                        not_modeled_reason(c.scenario.model, c.scenario.training, c.plan)) {
                        continue;
                    }
                    SimulationOptions options;
                    options.timeline = false;
                    const auto r = simulate(c.scenario, c.plan, it->second, options);
                    if (!r.ok()) {
                        continue;
                    }
                    ++predicted;
                    if ((r->plausibility & kBelowFloor) != 0 || !(r->floors.binding_s() > 0)) {
                        below.push_back(row.id + " (" + c.label + "): " + std::to_string(r->iteration_time_s) + " s below the " +
                                        to_string(r->floors.binding) + " floor " + std::to_string(r->floors.binding_s()) + " s");
                    }
                }
            }
        }
        qInfo("%d rows, %d predictions (every candidate setting); below their floor: %zu", rows, predicted, below.size());
        for (const auto& b : below) {
            qWarning("%s", b.c_str());
        }
        QVERIFY(predicted > 1500);
        QVERIFY2(below.empty(), below.empty() ? "" : below.front().c_str());
    }
};

QTEST_APPLESS_MAIN(TestPhysicalFloors)
#include "tst_physical_floors.moc"
