// SPDX-License-Identifier: MIT
// Costs of one layer for today's shapes: MoE dispatch volumes against their closed forms, context-parallel
// ring traffic, FP8 speed, load imbalance, sliding windows, overlap flags, DeepSeek-V3's layer mix.
#include <QtTest>

#include "model/cuda_graphs.h"
#include "model/layer_builder.h"
#include "model/layer_comm.h"
#include "model/model_math.h"
#include "model/nccl_tuning.h"
#include "profile/operator_timer.h"
#include "test_support.h"
#include "vtrain/layer_costs.h"
#include "vtrain/memory_model.h"
#include "vtrain/plan_check.h"
#include "vtrain/scenario_json.h"

using namespace vtrain;

namespace {

// An H800-like part: 8 GPUs per NVLink node at 160 GB/s, one 400 Gb/s NIC per GPU (DeepSeek-V3 Sec. 3.2.2).
GpuProfile network_profile(double fp8_tflops = 0)
{
    HardwareSpec hw;
    hw.id = "test-gpu";
    hw.name = "Test GPU";
    hw.memory_gib = 80;
    hw.memory_bandwidth_gbytes_per_s = 3350;
    hw.peak_tflops = {{"bf16", 989}};
    if (fp8_tflops > 0) {
        hw.peak_tflops["fp8"] = fp8_tflops;
    }
    hw.sm_count = 132;
    hw.links.gpus_per_node = 8;
    hw.links.nvlink_bus_gbytes_per_s = 160;
    hw.links.nvlink_base_latency_us = 10;
    hw.links.nvlink_step_latency_us = 1;
    hw.links.nics_per_node = 8;
    hw.links.nic_gbit_per_s = 400;
    hw.links.nic_efficiency = 1;
    hw.links.inter_node_latency_us = 5;
    hw.links.inter_node_base_latency_us = 20;
    return make_modeled_profile(hw, ModelParameters{});
}

struct Setup {
    ModelSpec model;
    TrainingSpec training;
    GpuProfile profile;
    CommModel comm;
    LayerCostInput in;

    explicit Setup(const ModelSpec& m, double fp8_tflops = 0) : model(m), profile(network_profile(fp8_tflops))
    {
        comm.links = profile.links;
        in.model = &model;
        in.training = &training;
        in.profile = &profile;
        in.comm = &comm;
    }
    LayerCosts run() { return compute_layer_costs(in); }
};

double forward_s(const BlockCost& b)
{
    return b.forward.total_s();
}

// One MoE layer: hidden 4096, 4096 tokens, SwiGLU experts: 64 of width 1024, top-8.
ModelSpec moe_layer()
{
    ModelSpec m = test::gpt(1, 4096, 32, 4096);
    m.activation = FfnActivation::SwiGlu;
    m.moe.experts = 64;
    m.moe.top_k = 8;
    m.moe.expert_ffn_hidden = 1024;
    return m;
}

// EP8 inside one 8-GPU node: 8 local experts per rank for moe_layer().
void expert_parallel_8(Setup& s)
{
    s.in.ep = 8;
    s.in.ep_group = place_group(8, 1, 8);
}

// A Llama-3-8B-shaped layer: h 4096, 32 heads, 8 KV heads, SwiGLU FFN 14336, 8K tokens.
ModelSpec llama_layer(int seq = 8192)
{
    ModelSpec m = test::gpt(1, 4096, 32, seq, 128256);
    m.kv_heads = 8;
    m.ffn_hidden = 14336;
    m.activation = FfnActivation::SwiGlu;
    m.normalization = Normalization::RmsNorm;
    return m;
}

// Nemotron 3 Nano's Mamba-2 mixer (64 heads x 64, state 128, 8 groups) in a two-layer "M*" stack, 8K tokens.
ModelSpec nano_mamba_layers()
{
    ModelSpec m = test::gpt(2, 2688, 32, 8192, 131072);
    m.kv_heads = 2;
    m.layer_pattern = "M*";
    m.mamba.heads = 64;
    return m;
}

// The chunked scan's GEMMs of that mixer over 2 x 8192 tokens in 128-token chunks (Megatron-Core's
// chunk_size): C B^T inside a chunk, the chunk states B^T X, and the forward's four GEMMs together.
struct NanoScanGemms {
    double cb = 0, states = 0, forward = 0;
};
NanoScanGemms nano_scan_gemms(const GpuProfile& profile)
{
    const OperatorTimer t(profile, Precision::Bf16);
    const double chunks = 2 * 8192 / 128.0;
    NanoScanGemms g;
    g.cb = t.batched_gemm_seconds(chunks * 8, 128, 128, 128);
    g.states = t.batched_gemm_seconds(chunks * 64, 128, 64, 128);
    const double gemm = t.batched_gemm_seconds(chunks * 64, 128, 64, 128); // (scores) x X and C h: same shape
    g.forward = g.cb + gemm + g.states + gemm;
    return g;
}

double op_seconds(const LayerCosts& c, const std::string& name, Phase phase)
{
    double s = 0;
    for (const auto& op : c.layer_operators) {
        if (op.name == name && op.phase == phase) {
            s += op.seconds;
        }
    }
    return s;
}

bool close(double a, double b)
{
    return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

} // namespace

class TestLayerCosts : public QObject {
    Q_OBJECT
private slots:
    void dispatch_volume_is_tokens_topk_hidden()
    {
        // DeepSeek-V3 at s = 4096, b = 1, no TP/CP, EP64 (modern-training.md Sec. 1.3): 32,768 rows of 7168
        // BF16 elements; 462 MB leave the rank.
        QCOMPARE(moe_dispatch_bytes(4096, 8, 7168, 2), 4096.0 * 8 * 7168 * 2);
        QCOMPARE(moe_off_rank_bytes(4096, 8, 7168, 2, 64), 4096.0 * 8 * 7168 * 2 * 63 / 64);
        QVERIFY(std::abs(moe_off_rank_bytes(4096, 8, 7168, 2, 64) / 1e6 - 462) < 1);
        QCOMPARE(moe_off_rank_bytes(4096, 8, 7168, 2, 1), 0.0);
    }

    void all_to_all_time_matches_its_closed_form()
    {
        const GpuProfile p = network_profile();
        CommModel c;
        c.links = p.links;
        const double bytes = 469762048; // 4096 x 8 x 7168 x 2
        // Inside one node: (n-1)/n of the buffer over NVLink after a latency per peer.
        const double intra = (10 + 7 * 1) * 1e-6 + bytes * 7 / 8 / 160e9;
        QCOMPARE(all_to_all_seconds(c, bytes, place_group(8, 1, 8)), intra);
        // EP64 over 8 nodes: 56/64 of the buffer leaves the node through one 50 GB/s NIC per GPU, 7/64
        // stays on NVLink; the network sets the time.
        const double inter = (20 + 7 * 5) * 1e-6 + bytes * 56 / 64 / 50e9;
        QCOMPARE(all_to_all_seconds(c, bytes, place_group(64, 1, 8)), inter);
        QCOMPARE(all_to_all_seconds(c, bytes, place_group(1, 1, 8)), 0.0);
    }

    void expert_all_to_all_runs_nvlink_at_its_efficiency()
    {
        const GpuProfile p = network_profile();
        CommModel c;
        c.links = p.links;
        const double bytes = 469762048; // 4096 x 8 x 7168 x 2
        // Inside one node the NVLink tier runs at 0.65 x 160 GB/s: 7/8 of the buffer after the latencies.
        const double intra = (10 + 7 * 1) * 1e-6 + bytes * 7 / 8 / (0.65 * 160e9);
        QCOMPARE(expert_all_to_all_seconds(c, bytes, place_group(8, 1, 8), 0.65), intra);
        QCOMPARE(expert_all_to_all_seconds(c, bytes, place_group(8, 1, 8), 1.0), all_to_all_seconds(c, bytes, place_group(8, 1, 8)));
        // Across 8 nodes the NIC share still sets the time: 56/64 through 50 GB/s (7/64 over NVLink at
        // 104 GB/s is shorter).
        const double inter = (20 + 7 * 5) * 1e-6 + bytes * 56 / 64 / 50e9;
        QCOMPARE(expert_all_to_all_seconds(c, bytes, place_group(64, 1, 8), 0.65), inter);
    }

    void flex_dispatch_crosses_the_network_once_per_domain()
    {
        // 1 - C(E - E/D, k) / C(E, k) per other domain: DeepSeek-V3 (256 experts, top-8) over 8 nodes reaches
        // 4.633 other nodes per token (an alltoall dispatcher sends 7 of its 8 rows off the node); Qwen3-30B-A3B
        // (128, top-8) over 2 nodes 0.9969 (against 4); top-1 sends (D - 1) / D.
        QVERIFY(std::abs(moe_remote_domains_per_token(256, 8, 8) - 4.63282) < 1e-4);
        QVERIFY(std::abs(moe_remote_domains_per_token(128, 8, 2) - 0.996904) < 1e-5);
        QCOMPARE(moe_remote_domains_per_token(64, 1, 8), 7.0 / 8);
        QCOMPARE(moe_remote_domains_per_token(256, 8, 1), 0.0);

        const GpuProfile p = network_profile();
        CommModel c;
        c.links = p.links;
        const double bytes = 4096.0 * 8 * 7168 * 2;
        const double network = 4096.0 * moe_remote_domains_per_token(256, 8, 8) * 7168 * 2;
        const double expected = (20 + 7 * 5) * 1e-6 + std::max(7 * bytes / 64 / (0.65 * 160e9), network / 50e9);
        QVERIFY(std::abs(expert_all_to_all_seconds(c, bytes, place_group(64, 1, 8), 0.65, network) - expected) < 1e-12);

        // In a layer: DeepSeek-V3, EP64 over 8 nodes; the flex dispatcher sends less and skips the global permute.
        ModelSpec m = test::deepseek_v3();
        m.layers = 4;
        Setup s(m);
        s.in.ep = 64;
        s.in.ep_group = place_group(64, 1, 8);
        // The flex dispatcher's network share runs at DeepEP's measured 43 of 50 GB/s: give NCCL's all-to-all the
        // same rate so the two differ by the bytes they send.
        s.comm.links.nic_efficiency = 43.0 / 50.0;
        const BlockCost all_to_all = s.run().layers[3];
        s.training.moe_dispatcher = MoeDispatcher::Flex;
        const LayerCosts flex = s.run();
        QVERIFY(flex.layers[3].forward.ep_comm_s < 0.7 * all_to_all.forward.ep_comm_s);
        for (const auto& op : flex.layer_operators) {
            QVERIFY(op.name != "moe permute" && op.name != "moe unpermute");
        }
    }

    void moe_dispatcher_is_read_written_and_checked()
    {
        auto scenario = [](const std::string& dispatcher) {
            return scenario_from_text(R"({"model": {"layers": 2, "hidden": 1024, "heads": 8, "seq_len": 1024, "vocab": 32000},
                "cluster": {"gpu": "h100-sxm5-80gb", "num_gpus": 8},
                "training": {"global_batch": 8, "moe_dispatcher": ")" +
                                      dispatcher + R"("},
                "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1}})");
        };
        const auto flex = scenario("flex");
        QVERIFY(flex.ok());
        QVERIFY(flex->training.moe_dispatcher == MoeDispatcher::Flex);
        QCOMPARE(scenario_to_json(*flex)["training"]["moe_dispatcher"].get<std::string>(), std::string("flex"));
        const auto plain = scenario("alltoall");
        QVERIFY(plain.ok());
        QVERIFY(!scenario_to_json(*plain)["training"].contains("moe_dispatcher")); // the default is not written
        const auto bad = scenario("deepep");
        QVERIFY(!bad.ok());
        QVERIFY(QString::fromStdString(bad.errors().front().to_string()).contains("moe_dispatcher"));
    }

    void routed_experts_sort_by_local_expert_and_wait_for_the_host()
    {
        // One MoE layer: 64 experts of width 1024, top-8, hidden 4096, 4096 tokens, EP8 in one node: 8 local
        // experts, so the received rows are sorted by expert and back.
        const ModelSpec m = moe_layer();
        Setup s(m);
        expert_parallel_8(s);
        auto forward_op = [](const LayerCosts& costs, const char* name) {
            double sum = 0;
            for (const auto& op : costs.layer_operators) {
                if (op.phase == Phase::Forward && op.name == name) {
                    sum += op.seconds;
                }
            }
            return sum;
        };
        s.profile.moe_host_op_us = 0;
        const LayerCosts gpu_bound = s.run();
        const OperatorTimer hp(s.profile, Precision::Bf16);
        // 4096 tokens x 8 copies x 4096 x 2 bytes received, one gather pass each way.
        const double received = 4096.0 * 8 * 4096 * 2;
        QCOMPARE(forward_op(gpu_bound, "moe sort by local expert"), hp.memory_bound_seconds("embedding", received, false));
        QCOMPARE(forward_op(gpu_bound, "moe unsort"), hp.memory_bound_seconds("embedding", received, false));
        QCOMPARE(forward_op(gpu_bound, "host-bound wait (routed experts after the tokens-per-expert sync)"), 0.0);
        // The router's 31 fused element-wise kernels each stream the [4096, 64] FP32 scores.
        QCOMPARE(forward_op(gpu_bound, "moe router kernels (scores, top-k, aux loss)"),
                 31 * hp.memory_bound_seconds("softmax", 4096.0 * 64 * 4, false));

        // A slow host: 1 ms per operator. BF16 forward: 8 section operators + 2 per local expert = 24 ms,
        // against the GPU time of the section (permute through unpermute).
        s.profile.moe_host_op_us = 1000;
        const LayerCosts host_bound = s.run();
        double section = 0;
        bool inside = false;
        for (const auto& op : host_bound.layer_operators) {
            if (op.phase != Phase::Forward) {
                continue;
            }
            inside = inside || op.name == "moe permute";
            if (inside && op.name.rfind("host-bound", 0) != 0) {
                section += op.seconds;
            }
            if (op.name == "moe unpermute") {
                break;
            }
        }
        QVERIFY(section > 0);
        const double wait = forward_op(host_bound, "host-bound wait (routed experts after the tokens-per-expert sync)");
        QVERIFY(std::abs(wait - (24e-3 - section)) < 1e-9);
        QVERIFY(host_bound.layer.forward.total_s() > gpu_bound.layer.forward.total_s());

        // Token dropping: capacity 1.0 on balanced routing keeps the same rows. Without padding the
        // dispatcher still syncs (the output size is dynamic), so the wait stays; padded to capacity the
        // shapes are static, there is no sync and no wait (Megatron-Core drop_and_pad).
        s.model.moe.dropless = false;
        s.model.moe.capacity_factor = 1.0;
        QVERIFY(std::abs(forward_op(s.run(), "host-bound wait (routed experts after the tokens-per-expert sync)") - wait) < 1e-12);
        s.model.moe.pad_to_capacity = true;
        const LayerCosts padded = s.run();
        QCOMPARE(forward_op(padded, "host-bound wait (routed experts after the tokens-per-expert sync)"), 0.0);
        QCOMPARE(padded.layer.forward.total_s(), gpu_bound.layer.forward.total_s());
        s.model.moe = m.moe;

        // One expert per rank (EP64 would need 8 nodes; experts = ep here): no sort, fewer host operators.
        s.in.ep = 64;
        s.in.ep_group = place_group(64, 1, 8);
        s.profile.moe_host_op_us = 0;
        QCOMPARE(forward_op(s.run(), "moe sort by local expert"), 0.0);
    }

    void cuda_graphs_remove_the_host_terms_they_capture()
    {
        // host_terms(): a profile with a 20 us launch floor, 50 us per framework operator and 30 us per
        // routed-expert operator keeps them without graphs and with scoped ones; a full-iteration graph leaves
        // only its 0.5 us gap between kernels and no host time.
        GpuProfile p = network_profile();
        p.kernel_launch_overhead_us = 20;
        p.host_overhead_us = 50;
        p.moe_host_op_us = 30;
        for (const CudaGraphs g : {CudaGraphs::None, CudaGraphs::Scoped}) {
            const HostTerms t = host_terms(p, g);
            QVERIFY(close(t.kernel_floor_s, 20e-6));
            QVERIFY(close(t.host_op_s, 50e-6));
            QVERIFY(close(t.moe_host_op_s, 30e-6));
        }
        const HostTerms full = host_terms(p, CudaGraphs::FullIteration);
        QVERIFY(close(full.kernel_floor_s, 0.5e-6));
        QCOMPARE(full.host_op_s, 0.0);
        QCOMPARE(full.moe_host_op_s, 0.0);
        p.kernel_launch_overhead_us = 0.2; // a floor below the graph's gap stays as it is
        QVERIFY(close(host_terms(p, CudaGraphs::FullIteration).kernel_floor_s, 0.2e-6));

        // In a layer: the router's 31 kernels each stream the [4096, 64] FP32 scores (1 MiB, a few us on this
        // part), so under a 200 us launch floor each takes 200 us; a moe_router graph replays them at
        // max(table time, 0.5 us); attention stays launched (not in this scope).
        Setup s(moe_layer());
        expert_parallel_8(s);
        s.profile.kernel_launch_overhead_us = 200;
        s.profile.moe_host_op_us = 0;
        const LayerCosts launched = s.run();
        QVERIFY(close(op_seconds(launched, "moe router kernels (scores, top-k, aux loss)", Phase::Forward), 31 * 200e-6));
        s.training.cuda_graphs = CudaGraphs::Scoped;
        s.training.cuda_graph_scope = kGraphMoeRouter;
        const LayerCosts scoped = s.run();
        const OperatorTimer graphed(s.profile, Precision::Bf16, 0.5e-6);
        QVERIFY(close(op_seconds(scoped, "moe router kernels (scores, top-k, aux loss)", Phase::Forward),
                      31 * graphed.memory_bound_seconds("softmax", 4096.0 * 64 * 4, false)));
        QVERIFY(close(op_seconds(scoped, "layernorm 1", Phase::Forward), op_seconds(launched, "layernorm 1", Phase::Forward)));
        // With attn in the scope the attention's norm is replayed too.
        s.training.cuda_graph_scope = kGraphAttn | kGraphMoeRouter;
        QVERIFY(op_seconds(s.run(), "layernorm 1", Phase::Forward) < op_seconds(launched, "layernorm 1", Phase::Forward));
        // A full-iteration graph floors every kernel at the gap: the layer is faster than either.
        s.training.cuda_graphs = CudaGraphs::FullIteration;
        QVERIFY(s.run().layer.forward.total_s() < scoped.layer.forward.total_s());
    }

    void a_whole_layer_graph_issues_no_host_operator()
    {
        // Megatron-Core's per-layer graphs of scope "full" (or TE graphs of attn and moe) capture the whole
        // layer: one replay per pass, so at 1 ms per framework operator and 2 ms per routed operator the
        // layer lasts its GPU time alone, as with no host cost at all. Capacity-padded token dropping keeps
        // the expert shapes static, as capture needs.
        Setup s(moe_layer());
        expert_parallel_8(s);
        s.model.moe.dropless = false;
        s.model.moe.capacity_factor = 1.0;
        s.model.moe.pad_to_capacity = true;
        s.profile.host_overhead_us = 1000;
        s.profile.moe_host_op_us = 2000;
        const LayerCosts launched = s.run();
        s.training.cuda_graphs = CudaGraphs::Scoped;
        s.training.cuda_graph_scope = kGraphAttn | kGraphMoe;
        const LayerCosts whole = s.run();
        s.profile.host_overhead_us = 0;
        s.profile.moe_host_op_us = 0;
        const LayerCosts no_host = s.run();
        QVERIFY(close(whole.layer.forward.total_s(), no_host.layer.forward.total_s()));
        QVERIFY(close(whole.layer.backward.total_s(), no_host.layer.backward.total_s()));
        QVERIFY(whole.layer.forward.total_s() < launched.layer.forward.total_s() / 5);
        // The routed section is timed at the graph's gap too (its kernels are in the graph).
        s.profile.kernel_launch_overhead_us = 200;
        const OperatorTimer graphed(s.profile, Precision::Bf16, 0.5e-6);
        QVERIFY(close(op_seconds(s.run(), "moe sort by local expert", Phase::Forward),
                      graphed.memory_bound_seconds("embedding", 4096.0 * 8 * 4096 * 2, false)));
        s.profile.kernel_launch_overhead_us = network_profile().kernel_launch_overhead_us;
        // A layer partly captured keeps the per-operator term (1 ms each, the routed section's term now 0): the
        // MoE without the attention, or the attention and the router without the experts.
        s.profile.host_overhead_us = 1000;
        for (const unsigned scope : {unsigned(kGraphMoe), unsigned(kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess)}) {
            s.training.cuda_graph_scope = scope;
            QVERIFY(s.run().layer.forward.total_s() > 2 * whole.layer.forward.total_s()); // 50 and 20 ms against 8 ms
        }

        // In a scenario the scope is named "moe", and needs the static shapes.
        const std::string base = R"({"model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 2048, "vocab": 32000,
            "activation": "swiglu", "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 512)";
        const std::string rest = R"(}}, "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8},
            "training": {"global_batch": 8, "cuda_graphs": "scoped", "cuda_graph_scope": ["attn", "moe"]}})";
        const auto padded = scenario_from_text(base + R"(, "capacity_factor": 1.0, "pad_to_capacity": true)" + rest);
        QVERIFY2(padded.ok(), padded.ok() ? "" : padded.first_error().c_str());
        QCOMPARE(padded->training.cuda_graph_scope, unsigned(kGraphAttn | kGraphMoe));
        QCOMPARE(scenario_from_json(scenario_to_json(*padded))->training.cuda_graph_scope, unsigned(kGraphAttn | kGraphMoe));
        const auto dropless = scenario_from_text(base + rest);
        QVERIFY(!dropless.ok());
        QVERIFY(dropless.first_error().find("training.cuda_graph_scope") != std::string::npos);
        QVERIFY(dropless.first_error().find("pad_to_capacity") != std::string::npos);
        // A plan built in memory (the GUI, the explorer) is refused the same way, naming the field.
        TrainingSpec graphs;
        graphs.global_batch = 8;
        graphs.cuda_graphs = CudaGraphs::Scoped;
        graphs.cuda_graph_scope = kGraphAttn | kGraphMoe;
        Plan plan;
        plan.dp = 8;
        const auto refused = check_plan(moe_layer(), graphs, plan, 8);
        QVERIFY(refused && refused->reason == RejectReason::CudaGraphInvalid && refused->diagnostic.field == "training.cuda_graph_scope");
        QVERIFY(!check_plan(s.model, graphs, plan, 8)); // capacity-padded: captured
    }

    void one_cpu_thread_issues_every_operator_of_a_layer()
    {
        // A phase lasts max(GPU time, operators x host_s + CPU seconds priced apart): three 1 us kernels, two
        // more operators the CPU issues (a kernel charged as three) and a 50 us section, at 10 us per
        // operator: 5 x 10 + 50 = 100 us. The GPU's wait is charged to compute and is not an operator.
        BlockCost block;
        layer_ops::BlockBuilder b(block, nullptr);
        for (int i = 0; i < 3; ++i) {
            b.compute(Phase::Forward, "kernel", 1e-6);
        }
        b.add_host_ops(Phase::Forward, 2);
        b.add_host_seconds(Phase::Forward, 50e-6);
        b.host_wait(Phase::Forward, "wait", 7e-6);
        QCOMPARE(b.host_ops(Phase::Forward), 5.0);
        b.apply_host_floor(10e-6);
        QVERIFY(close(block.forward.total_s(), 100e-6));
        QCOMPARE(block.backward.total_s(), 0.0);

        // In a layer: the router's 31 kernels are 31 operators the CPU issues, each way; a moe_router graph
        // launches them once. With every operator at 1 ms the layer is host-bound either way, so the graph
        // saves 30 ms in each pass (the graphed kernels' own GPU time being far below).
        Setup s(moe_layer());
        expert_parallel_8(s);
        s.profile.host_overhead_us = 1000;
        s.profile.moe_host_op_us = 0;
        const LayerCosts launched = s.run();
        s.training.cuda_graphs = CudaGraphs::Scoped;
        s.training.cuda_graph_scope = kGraphMoeRouter;
        const LayerCosts graphed = s.run();
        QVERIFY(close(launched.layer.forward.total_s() - graphed.layer.forward.total_s(), 30e-3));
        QVERIFY(close(launched.layer.backward.total_s() - graphed.layer.backward.total_s(), 30e-3));

        // The routed section's CPU time is the layer's too: at 1 ms per framework operator and 2 ms per routed
        // operator (8 + 2 per local expert in BF16: 24), one more millisecond per routed operator adds 24 ms.
        s.training.cuda_graphs = CudaGraphs::None;
        s.profile.moe_host_op_us = 2000;
        const double two = s.run().layer.forward.total_s();
        s.profile.moe_host_op_us = 3000;
        QVERIFY(close(s.run().layer.forward.total_s() - two, 24e-3));
        // ... and the rest of the layer's operators are not hidden behind it: the layer lasts its operators
        // outside the section at 1 ms (all of them, N, without the routed term; less the S the section adds to
        // the list between the router and its wait) plus the section's 24 x 3 ms.
        const LayerCosts host_bound = s.run();
        int first = -1, wait = -1, at = 0;
        for (const auto& op : host_bound.layer_operators) {
            if (op.phase == Phase::Forward) {
                if (op.name == "moe router kernels (scores, top-k, aux loss)") {
                    first = at;
                } else if (op.name == "host-bound wait (routed experts after the tokens-per-expert sync)") {
                    wait = at;
                }
                ++at;
            }
        }
        QVERIFY(first >= 0 && wait > first + 1);
        const double section_ops = wait - first - 1;
        s.profile.moe_host_op_us = 0;
        const double all_ops_s = s.run().layer.forward.total_s(); // N x 1 ms
        QVERIFY(close(host_bound.layer.forward.total_s(), all_ops_s - section_ops * 1e-3 + 72e-3));
    }

    void a_fused_grouped_mlp_drops_the_experts_activation_pass()
    {
        // The experts' SwiGLU pass (64 experts of 1024 over EP8: 8 local experts x 4096 rows x 2048 BF16
        // elements read) is gone when the grouped GEMMs compute it in their epilogue; nothing else changes.
        Setup s(moe_layer());
        expert_parallel_8(s);
        s.profile.moe_host_op_us = 0;
        const LayerCosts plain = s.run();
        const double swiglu = op_seconds(plain, "swiglu", Phase::Forward);
        QVERIFY(close(swiglu, OperatorTimer(s.profile, Precision::Bf16).memory_bound_seconds("swiglu", 8.0 * 4096 * 1024 * 2 * 2, false)));
        s.training.fused_grouped_mlp = true;
        const LayerCosts fused = s.run();
        QCOMPARE(op_seconds(fused, "swiglu", Phase::Forward), 0.0);
        QVERIFY(close(plain.layer.forward.total_s() - fused.layer.forward.total_s(), swiglu));
        const std::string text = R"({"model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 2048, "vocab": 32000},
            "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8}, "training": {"global_batch": 8, "fused_grouped_mlp": true}})";
        const auto read = scenario_from_text(text);
        QVERIFY(read.ok());
        QVERIFY(read->training.fused_grouped_mlp);
        QVERIFY(scenario_from_json(scenario_to_json(*read))->training.fused_grouped_mlp);
    }

    void te_cross_entropy_streams_the_16_bit_logits_three_times()
    {
        // Llama-3-8B's head over 8K tokens (vocab 128256, tp 1): 1.05e9 logits. Megatron's unfused loss streams
        // them as fp32 through the profile's cross_entropy kernel (9.5 passes forward, 3.5 backward); Transformer
        // Engine's fused kernel reads the bf16 logits once forward and reads and rewrites them once backward.
        Setup s(llama_layer());
        const LayerCosts unfused = s.run();
        s.training.te_cross_entropy = true;
        const LayerCosts fused = s.run();
        const OperatorTimer t(s.profile, Precision::Bf16);
        const double logits = 8192.0 * 128256;
        const double forward =
            t.memory_bound_seconds("cross_entropy", logits * 4, false) - t.memory_bound_seconds("residual_add", logits * 2 / 3, false);
        const double backward =
            t.memory_bound_seconds("cross_entropy", logits * 4, true) - t.memory_bound_seconds("residual_add", logits * 4 / 2, true);
        QVERIFY(forward > 0 && backward > 0);
        QVERIFY(std::abs(unfused.head.forward.total_s() - fused.head.forward.total_s() - forward) <= 1e-9);
        QVERIFY(std::abs(unfused.head.backward.total_s() - fused.head.backward.total_s() - backward) <= 1e-9);
        // Nothing but the head changes.
        QCOMPARE(fused.layer.forward.total_s(), unfused.layer.forward.total_s());
        const std::string text = R"({"model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 2048, "vocab": 32000},
            "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8}, "training": {"global_batch": 8, "te_cross_entropy": true}})";
        const auto read = scenario_from_text(text);
        QVERIFY(read.ok());
        QVERIFY(read->training.te_cross_entropy);
        QVERIFY(scenario_from_json(scenario_to_json(*read))->training.te_cross_entropy);
        QVERIFY(!scenario_from_text(std::string(text).replace(text.find("true}}"), 4, "3")).ok());
    }

    void cuda_graphs_are_read_written_and_checked()
    {
        const std::string base = R"({"model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 2048, "vocab": 32000},
            "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8}, "training": {"global_batch": 8)";
        const auto plain = scenario_from_text(base + "}}");
        QVERIFY(plain.ok());
        QCOMPARE(plain->training.cuda_graphs, CudaGraphs::None); // Megatron-LM's default: --cuda-graph-impl none
        QCOMPARE(plain->training.cuda_graph_scope, kDefaultGraphScope);
        QVERIFY(!scenario_to_json(*plain)["training"].contains("cuda_graphs"));
        const auto scoped = scenario_from_text(base + R"(, "cuda_graphs": "scoped", "cuda_graph_scope": ["attn", "mlp"]}})");
        QVERIFY(scoped.ok());
        QCOMPARE(scoped->training.cuda_graphs, CudaGraphs::Scoped);
        QCOMPARE(scoped->training.cuda_graph_scope, unsigned(kGraphAttn | kGraphMlp));
        const auto again = scenario_from_json(scenario_to_json(*scoped));
        QVERIFY(again.ok());
        QCOMPARE(again->training.cuda_graphs, CudaGraphs::Scoped);
        QCOMPARE(again->training.cuda_graph_scope, unsigned(kGraphAttn | kGraphMlp));
        const auto full = scenario_from_text(base + R"(, "cuda_graphs": "full_iteration"}})");
        QVERIFY(full.ok());
        QCOMPARE(scenario_from_json(scenario_to_json(*full))->training.cuda_graphs, CudaGraphs::FullIteration);
        const auto bad = scenario_from_text(base + R"(, "cuda_graphs": "always"}})");
        QVERIFY(!bad.ok());
        QVERIFY(bad.first_error().find("cuda_graphs") != std::string::npos);
        const auto bad_scope = scenario_from_text(base + R"(, "cuda_graphs": "scoped", "cuda_graph_scope": ["attention"]}})");
        QVERIFY(!bad_scope.ok());
        QVERIFY(bad_scope.first_error().find("cuda_graph_scope") != std::string::npos);
    }

    void a_mamba_graph_replays_the_mamba_layer()
    {
        // Megatron-Core's "mamba" CUDA-graph scope captures the Mamba layer: under a 200 us launch floor its
        // gated norm (8192 tokens x 4096 channels, a few us of traffic here) takes 200 us launched and its
        // table time at a 0.5 us gap when captured; a scope without "mamba" leaves it launched.
        Setup s(nano_mamba_layers());
        s.profile.kernel_launch_overhead_us = 200;
        const LayerCosts launched = s.run();
        QVERIFY(close(op_seconds(launched, "mamba gated norm", Phase::Forward), 200e-6));
        s.training.cuda_graphs = CudaGraphs::Scoped;
        s.training.cuda_graph_scope = kGraphAttn | kGraphMoeRouter;
        QVERIFY(close(op_seconds(s.run(), "mamba gated norm", Phase::Forward), 200e-6));
        s.training.cuda_graph_scope = kGraphMamba;
        const OperatorTimer graphed(s.profile, Precision::Bf16, 0.5e-6);
        QVERIFY(close(op_seconds(s.run(), "mamba gated norm", Phase::Forward), graphed.memory_bound_seconds("layernorm", 8192.0 * 4096 * 2, false)));
        // The scope's name is read and written.
        const std::string text = R"({"model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 2048, "vocab": 32000},
            "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8},
            "training": {"global_batch": 8, "cuda_graphs": "scoped", "cuda_graph_scope": ["mamba", "attn"]}})";
        const auto read = scenario_from_text(text);
        QVERIFY(read.ok());
        QCOMPARE(read->training.cuda_graph_scope, unsigned(kGraphMamba | kGraphAttn));
        QCOMPARE(scenario_from_json(scenario_to_json(*read))->training.cuda_graph_scope, unsigned(kGraphMamba | kGraphAttn));
    }

    void nvfp4_casts_stream_three_passes_per_tensor()
    {
        // Transformer Engine's NVFP4Quantizer (quantize_impl) reads each BF16 input and output gradient three
        // times (post-RHT amax, row-wise cast, fused RHT column-wise cast) and writes two 4-bit copies with an
        // E4M3 scale per 16: 7.125 bytes per element. The forward's casts of a Llama-8B-shaped layer (8192
        // tokens) are its four GEMMs' inputs: h, h (q width = h), h and the FFN width.
        Setup s(llama_layer());
        s.training.precision = Precision::Nvfp4;
        const LayerCosts c = s.run();
        const double inputs = 8192.0 * (4096 + 4096 + 4096 + 14336);
        const OperatorTimer t(s.profile, Precision::Nvfp4);
        QVERIFY(close(op_seconds(c, "low-precision quantize (casts, amax)", Phase::Forward),
                      t.memory_bound_seconds("residual_add", inputs * (2 + 2 + 2 + 2 * 0.5625) / 3, false)));
        // The backward casts the output gradients: qkv (4096 + 2 x 1024), output projection, gate+up, down.
        const double grads = 8192.0 * (6144 + 4096 + 2 * 14336 + 4096);
        QVERIFY(close(op_seconds(c, "low-precision quantize (casts, amax)", Phase::Backward),
                      t.memory_bound_seconds("residual_add", grads * 7.125 / 3, false)));
    }

    void the_moe_recompute_module_redoes_the_moe_layer()
    {
        // Megatron-Core's "moe" recompute module checkpoints MoELayer.forward (router, dispatch, experts,
        // combine, shared experts): those run again before the backward, the pre-MLP norm, the residual and
        // the attention do not (a full recompute redoes them too).
        ModelSpec m = moe_layer();
        m.moe.shared_experts = 1;
        m.moe.shared_expert_ffn_hidden = 2048;
        Setup s(m);
        expert_parallel_8(s);
        QCOMPARE(s.run().layer.recompute.total_s(), 0.0);
        s.in.recompute_modules = kRecomputeMoe;
        const LayerCosts moe = s.run();
        for (const char* inside : {"moe router", "ep dispatch (all-to-all)", "experts gate+up (grouped)", "swiglu", "experts down (grouped)",
                                   "ep combine (all-to-all)", "shared experts gate+up"}) {
            QVERIFY2(op_seconds(moe, inside, Phase::Recompute) > 0, inside);
            QVERIFY2(close(op_seconds(moe, inside, Phase::Recompute), op_seconds(moe, inside, Phase::Forward)), inside);
        }
        for (const char* outside : {"layernorm 2", "residual 2", "attention core (flash)", "qkv projection"}) {
            QCOMPARE(op_seconds(moe, outside, Phase::Recompute), 0.0);
        }
        s.in.recompute_modules = 0;
        s.in.recompute = Recompute::Full;
        QVERIFY(s.run().layer.recompute.total_s() > moe.layer.recompute.total_s());
        // The module's name is read and written.
        const std::string text = R"({"model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 2048, "vocab": 32000},
            "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 8}, "training": {"global_batch": 8},
            "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1, "recompute_modules": ["moe", "layernorm"]}})";
        const auto read = scenario_from_text(text);
        QVERIFY2(read.ok(), read.ok() ? "" : read.first_error().c_str());
        QCOMPARE(read->plan->recompute_modules, unsigned(kRecomputeMoe | kRecomputeLayernorm));
        QCOMPARE(scenario_from_json(scenario_to_json(*read))->plan->recompute_modules, unsigned(kRecomputeMoe | kRecomputeLayernorm));
    }

    void cp_ring_traffic_closed_form()
    {
        // Llama-3-70B-like: 8 KV heads of 128 on one TP rank, 8192 tokens over cp 4: 2048 tokens each.
        const CpRingTraffic r = cp_ring_traffic(2048, 8 * 128, 2, 4);
        QCOMPARE(r.forward_step_bytes, 2.0 * 2048 * 1024 * 2);
        QCOMPARE(r.backward_step_bytes, 2 * r.forward_step_bytes);
        QCOMPARE(r.steps, 3);
        const GpuProfile p = network_profile();
        CommModel c;
        c.links = p.links;
        const double transfer = c.p2p_seconds(r.forward_step_bytes, false);
        // Attention that outlasts the transfers hides them; short attention leaves the difference.
        QCOMPARE(cp_ring_exposed_seconds(c, r.forward_step_bytes, r.steps, 100 * transfer, 4, place_group(4, 1, 8)), 0.0);
        QCOMPARE(cp_ring_exposed_seconds(c, r.forward_step_bytes, r.steps, 0.0, 4, place_group(4, 1, 8)), 3 * transfer);
    }

    void cp_ring_pytorch_merge_traffic_closed_form()
    {
        // Per step: forward 32.5 bytes per query element (mean of the full merge, 38, and the half merge plus
        // re-concatenation, 27) + 4 per K/V element (packing); backward 11.5 per query element, 11.5 + 8 + 4
        // per K/V element. 8B layer, cp 4: 2048 tokens x 4096 query width, K/V repeated: 2 x 4096.
        const double q = 2048.0 * 4096, kv = 2048.0 * 8192;
        const CpRingMergeTraffic t = cp_ring_pytorch_merge_traffic(q, kv);
        QCOMPARE(t.forward_bytes, 32.5 * q + 4 * kv);
        QCOMPARE(t.backward_bytes, 11.5 * q + 23.5 * kv);
        QCOMPARE(cp_ring_pytorch_merge_traffic(0, 0).forward_bytes, 0.0);
    }

    void cp_ring_pytorch_charges_the_merges_per_step()
    {
        Setup s(llama_layer(32768));
        s.in.cp = 4;
        s.in.cp_group = place_group(4, 1, 8);
        const LayerCosts te = s.run();
        QCOMPARE(op_seconds(te, "cp ring merge (fp32 ops per step)", Phase::Forward), 0.0);
        s.training.cp_ring_pytorch = true;
        const LayerCosts torch = s.run();
        const OperatorTimer t(s.profile, Precision::Bf16);
        const double tokens = 32768.0 / 4;
        const CpRingMergeTraffic m = cp_ring_pytorch_merge_traffic(tokens * 4096, tokens * 8192);
        // Three ring steps, each a streaming pass over the traffic (input size = traffic / 3).
        QVERIFY(close(op_seconds(torch, "cp ring merge (fp32 ops per step)", Phase::Forward),
                      3 * t.memory_bound_seconds("residual_add", m.forward_bytes / 3, false)));
        QVERIFY(close(op_seconds(torch, "cp ring gradient accumulation (fp32 ops per step)", Phase::Backward),
                      3 * t.memory_bound_seconds("residual_add", m.backward_bytes / 3, false)));
        QVERIFY(torch.layer.backward.total_s() > te.layer.backward.total_s());
        // Without context parallelism nothing changes.
        s.in.cp = 1;
        s.in.cp_group = GroupPlacement{};
        QCOMPARE(op_seconds(s.run(), "cp ring merge (fp32 ops per step)", Phase::Forward), 0.0);
    }

    void context_parallelism_splits_the_layer_and_exposes_the_ring()
    {
        ModelSpec m = test::gpt(1, 8192, 64, 131072, 128256);
        m.kv_heads = 8;
        m.activation = FfnActivation::SwiGlu;
        m.ffn_hidden = 28672;
        Setup s(m);
        s.in.tp = 8;
        s.in.sequence_parallel = true;
        s.in.tp_group = place_group(8, 1, 8);
        const LayerCosts one = s.run();
        s.in.cp = 16;
        s.in.cp_group = place_group(16, 8, 8); // across 16 nodes
        const LayerCosts sixteen = s.run();
        QVERIFY(sixteen.layer.forward.compute_s < one.layer.forward.compute_s / 10);
        QCOMPARE(one.layer.forward.cp_comm_s, 0.0);
        // At 128K the attention block (quadratic) outlasts the KV transfer: the ring hides it.
        QCOMPARE(sixteen.layer.forward.cp_comm_s, 0.0);
        s.in.cp_kind = ContextParallelKind::AllToAll;
        QVERIFY(s.run().layer.forward.cp_comm_s > 0);
    }

    void fp8_gemms_are_faster_on_a_part_with_an_fp8_peak()
    {
        ModelSpec m = test::gpt(1, 8192, 64, 4096, 128256);
        m.activation = FfnActivation::SwiGlu;
        m.ffn_hidden = 28672;
        Setup s(m, 1979);
        const double bf16 = forward_s(s.run().layer);
        s.training.precision = Precision::Fp8;
        s.training.fp8_recipe = Fp8Recipe::Delayed;
        const LayerCosts fp8 = s.run();
        QVERIFY(forward_s(fp8.layer) < 0.8 * bf16);
        // Casts are charged, and current scaling (two reads) costs more than delayed scaling.
        bool has_cast = false;
        for (const auto& op : fp8.layer_operators) {
            has_cast = has_cast || QString::fromStdString(op.name).contains("quantize");
        }
        QVERIFY(has_cast);
        s.training.fp8_recipe = Fp8Recipe::Current;
        QVERIFY(forward_s(s.run().layer) > forward_s(fp8.layer));
        // Without an FP8 peak the GEMMs run at BF16 speed and the casts only add time.
        Setup a100(m);
        a100.training.precision = Precision::Fp8;
        QVERIFY(forward_s(a100.run().layer) >= bf16);
    }

    void moe_layer_grows_with_imbalance_and_overlap_hides_dispatch()
    {
        ModelSpec m = test::deepseek_v3();
        m.layers = 4;
        Setup s(m);
        s.in.ep = 64;
        s.in.ep_group = place_group(64, 1, 8);
        const LayerCosts balanced = s.run();
        QCOMPARE(balanced.layers.size(), std::size_t(4));
        const BlockCost& moe = balanced.layers[3];
        QVERIFY(moe.forward.ep_comm_s > 0);
        QCOMPARE(balanced.layers[0].forward.ep_comm_s, 0.0); // the dense layers
        s.model.moe.load_imbalance = 1.5;
        const BlockCost skewed = s.run().layers[3];
        QVERIFY(skewed.forward.compute_s > moe.forward.compute_s);
        QVERIFY(skewed.forward.ep_comm_s > moe.forward.ep_comm_s);
        s.model.moe.load_imbalance = 1.0;
        s.in.moe_overlap = true;
        const BlockCost overlapped = s.run().layers[3];
        QCOMPARE(overlapped.forward.ep_comm_s, std::max(0.0, moe.forward.ep_comm_s - moe.forward.compute_s));
        QCOMPARE(overlapped.forward.compute_s, moe.forward.compute_s);

        // The dispatch kernels hold SMs while they overlap the compute: the flex dispatcher's 20 (DeepSeek-V3 Sec.
        // 3.2.2), NCCL's all-to-all one CTA per channel as overlapped data-parallel traffic does (24). On 132 SMs
        // the phase takes max(m, c + f m), i.e. max(m - c, f m) of the comm m stays exposed; the rest is hidden.
        s.profile.sm_count = 132;
        double m_s = 0, c_s = 0;
        for (const auto& [dispatcher, sms] : {std::pair{MoeDispatcher::Flex, 20.0}, std::pair{MoeDispatcher::AllToAll, kNcclOverlapSms}}) {
            s.training.moe_dispatcher = dispatcher;
            s.in.moe_overlap = false;
            const BlockCost alone = s.run().layers[3];
            s.in.moe_overlap = true;
            const BlockCost beside = s.run().layers[3];
            m_s = alone.forward.ep_comm_s;
            c_s = alone.forward.compute_s;
            QVERIFY(m_s > 0 && c_s > 0);
            QVERIFY(qFuzzyCompare(beside.forward.ep_comm_s, std::max(m_s - c_s, sms / 132.0 * m_s)));
            QVERIFY(qFuzzyCompare(beside.forward.ep_hidden_s + beside.forward.ep_comm_s, m_s));
            QCOMPARE(beside.forward.compute_s, c_s);
        }
        s.profile.sm_count = 0; // unknown SM count: no contention charged
        QVERIFY(qFuzzyCompare(s.run().layers[3].forward.ep_comm_s + 1, std::max(0.0, m_s - c_s) + 1));
    }

    void small_experts_run_below_large_gemm_efficiency()
    {
        // Same routed FLOPs, finer experts: 8 experts of 8192 vs 64 of 1024 with 8x the top-k. Each fine
        // expert sees 8x fewer rows, so the grouped GEMMs are slower per FLOP.
        const ModelSpec fine = moe_layer();
        ModelSpec coarse = fine;
        coarse.moe.experts = 8;
        coarse.moe.top_k = 1;
        coarse.moe.expert_ffn_hidden = 8192;
        auto experts_s = [](const ModelSpec& m) {
            Setup s(m);
            double sum = 0;
            for (const auto& op : s.run().layer_operators) {
                if (op.phase == Phase::Forward && QString::fromStdString(op.name).contains("grouped")) {
                    sum += op.seconds;
                }
            }
            return sum;
        };
        QVERIFY(experts_s(fine) > experts_s(coarse));
    }

    void sliding_window_layers_are_cheaper_and_listed()
    {
        ModelSpec m = test::gpt(4, 2880, 64, 32768, 201088);
        m.head_dim_override = 64;
        m.kv_heads = 8;
        m.activation = FfnActivation::SwiGlu;
        m.sliding_window = 128;
        m.full_attention_every = 2;
        Setup s(m);
        const LayerCosts c = s.run();
        QCOMPARE(c.layers.size(), std::size_t(4));
        QVERIFY(forward_s(c.layers[0]) < 0.8 * forward_s(c.layers[1]));
        QCOMPARE(forward_s(c.layers[2]), forward_s(c.layers[0]));
    }

    void tp_overlap_hides_part_of_tensor_traffic()
    {
        ModelSpec m = test::gpt(1, 8192, 64, 4096);
        Setup s(m);
        s.in.tp = 8;
        s.in.sequence_parallel = true;
        s.in.tp_group = place_group(8, 1, 8);
        const LayerCosts off = s.run();
        s.in.tp_overlap = true;
        const LayerCosts on = s.run();
        QVERIFY(on.layer.forward.tp_comm_s < off.layer.forward.tp_comm_s);
        QVERIFY(on.layer.forward.tp_comm_s >= 0.25 * off.layer.forward.tp_comm_s - 1e-12);
        QCOMPARE(on.layer.forward.compute_s, off.layer.forward.compute_s);
    }

    void per_op_sac_redoes_every_second_matmul_and_the_elementwise_ops()
    {
        // torchtitan's per-op SAC: of wq, wk, wv, wo, w1, w3, w2 the 2nd, 4th and 6th (wk, wo, w3) are redone,
        // with both norms and the SwiGLU; Megatron's selective recompute (core_attn) redoes the flash forward.
        Setup s(llama_layer());
        s.in.recompute = Recompute::Selective;
        const LayerCosts megatron = s.run();
        QVERIFY(close(megatron.layer.recompute.compute_s, op_seconds(megatron, "attention core (flash)", Phase::Forward)));
        QVERIFY(megatron.layer.recompute.compute_s > 0);
        s.training.per_op_sac = true;
        const LayerCosts c = s.run();
        const OperatorTimer t(s.profile, Precision::Bf16);
        const double tokens = 8192, h = 4096;
        const double expected = t.gemm_seconds(tokens, 1024, h) + t.gemm_seconds(tokens, h, h) + t.gemm_seconds(tokens, 14336, h) +
                                2 * t.memory_bound_seconds("layernorm", tokens * h * 2, false) +
                                t.memory_bound_seconds("swiglu", tokens * 14336 * 2 * 2, false);
        QVERIFY(close(c.layer.recompute.compute_s, expected));
        QVERIFY(close(c.layer.forward.compute_s, Setup(llama_layer()).run().layer.forward.compute_s)); // forward unchanged
    }

    void eager_elementwise_streams_the_op_sequences()
    {
        // Eager RMSNorm streams 36 bytes per element (9x the fused 4), SwiGLU 10 instead of 6, RoPE 28 per
        // element of q and k (a streaming add moves 3 bytes per input byte).
        Setup fused(llama_layer());
        Setup eager(llama_layer());
        eager.training.eager_elementwise = true;
        const LayerCosts f = fused.run();
        const LayerCosts e = eager.run();
        const OperatorTimer t(fused.profile, Precision::Bf16);
        const double tokens = 8192, h = 4096;
        QVERIFY(close(op_seconds(e, "layernorm 1", Phase::Forward), t.memory_bound_seconds("layernorm", 9 * tokens * h * 2, false)));
        QVERIFY(close(op_seconds(e, "swiglu", Phase::Backward), t.memory_bound_seconds("swiglu", 10.0 / 6.0 * tokens * 14336 * 4, true)));
        QVERIFY(close(op_seconds(e, "rope (eager)", Phase::Forward), t.memory_bound_seconds("residual_add", tokens * (4096 + 1024) * 28 / 3, false)));
        QCOMPARE(op_seconds(f, "rope (eager)", Phase::Forward), 0.0);
        QVERIFY(e.layer.forward.compute_s > f.layer.forward.compute_s);
    }

    void torchao_rowwise_casts_every_operand_along_both_axes()
    {
        // torchao rowwise (axiswise scales): forward casts input and weight along K (2 + 1 bytes per element);
        // backward casts grad_output along N (3) and along M (2 + 2 + 1), input along M and weight along N (5
        // each); the CUTLASS rowwise GEMM takes 1.22x the FP8 table's time. GEMMs of the 8B layer, m = 8192:
        // qkv 6144 x 4096, output 4096 x 4096, gate+up 28672 x 4096, down 4096 x 14336 (n x k).
        Setup s(llama_layer(), 1979);
        s.training.precision = Precision::Fp8;
        s.training.fp8_recipe = Fp8Recipe::Blockwise;
        s.training.fp8_axiswise_casts = true;
        const LayerCosts c = s.run();
        const double m = 8192;
        const double nk[4][2] = {{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}};
        double fwd = 0, bwd = 0;
        for (const auto& g : nk) {
            fwd += (m * g[1] + g[0] * g[1]) * 3;
            bwd += m * g[0] * (3 + 5) + (m * g[1] + g[0] * g[1]) * 5;
        }
        const OperatorTimer f8(s.profile, Precision::Fp8);
        QVERIFY(
            close(op_seconds(c, "low-precision quantize (casts, amax)", Phase::Forward), f8.memory_bound_seconds("residual_add", fwd / 3, false)));
        QVERIFY(
            close(op_seconds(c, "low-precision quantize (casts, amax)", Phase::Backward), f8.memory_bound_seconds("residual_add", bwd / 3, false)));
        // torchao's rowwise auto-filter thresholds (out <= 1024 gains nothing): wk and wv (1024 wide each) run
        // at the BF16 rate, wq (4096) at the rowwise FP8 rate; wo (4096 x 4096) gains.
        const OperatorTimer bf16(s.profile, Precision::Bf16);
        QVERIFY(close(op_seconds(c, "qkv projection", Phase::Forward),
                      2.0 / 3 * 1.22 * f8.gemm_seconds(m, 6144, 4096) + 1.0 / 3 * bf16.gemm_seconds(m, 6144, 4096)));
        QVERIFY(close(op_seconds(c, "output projection", Phase::Forward), 1.22 * f8.gemm_seconds(m, 4096, 4096)));
        QVERIFY(rowwise_gains(4096, 4096));
        QVERIFY(!rowwise_gains(1024, 4096)); // out <= 1024
        QVERIFY(!rowwise_gains(4096, 2048)); // in <= 2048
        QVERIFY(!rowwise_gains(2048, 4096)); // in <= 4096 and out <= 2048
        QVERIFY(rowwise_gains(2049, 4096));
        // Without the flag the blockwise recipe casts only the input (forward) and grad_output (backward).
        s.training.fp8_axiswise_casts = false;
        QVERIFY(close(op_seconds(s.run(), "qkv projection", Phase::Forward), f8.gemm_seconds(m, 6144, 4096)));
    }

    void mxfp8_gemms_take_the_block_scaled_factor()
    {
        // MXFP8 runs every low-precision GEMM at 1.09x the FP8 table's time (kMxfp8GemmTimeFactor: torchao's
        // B200 tensorwise-vs-MXFP8 gap); per-tensor current scaling at 1x. The 8B layer's GEMMs, m = 8192
        // (n x k): qkv 6144 x 4096; the backward's dgrad and wgrad of the same GEMM.
        Setup s(llama_layer(), 1979);
        s.training.precision = Precision::Fp8;
        s.training.fp8_recipe = Fp8Recipe::Current;
        const OperatorTimer f8(s.profile, Precision::Fp8);
        const double m = 8192;
        const double qkv_fwd = f8.gemm_seconds(m, 6144, 4096);
        const double qkv_bwd = f8.gemm_seconds(m, 4096, 6144) + f8.gemm_seconds(4096, 6144, m);
        const LayerCosts current = s.run();
        QVERIFY(close(op_seconds(current, "qkv projection", Phase::Forward), qkv_fwd));
        QVERIFY(close(op_seconds(current, "qkv projection", Phase::Backward), qkv_bwd));
        s.training.fp8_recipe = Fp8Recipe::Mxfp8;
        const LayerCosts mx = s.run();
        QVERIFY(close(op_seconds(mx, "qkv projection", Phase::Forward), 1.09 * qkv_fwd));
        QVERIFY(close(op_seconds(mx, "qkv projection", Phase::Backward), 1.09 * qkv_bwd));
        // The grouped expert GEMMs too: 8 local experts of width 1024 over EP8 (2048-wide gate+up).
        Setup e(moe_layer(), 1979);
        expert_parallel_8(e);
        e.training.precision = Precision::Fp8;
        e.training.fp8_recipe = Fp8Recipe::Current;
        const double grouped = op_seconds(e.run(), "experts gate+up (grouped)", Phase::Forward);
        QVERIFY(grouped > 0);
        e.training.fp8_recipe = Fp8Recipe::Mxfp8;
        const LayerCosts emx = e.run();
        // MXFP8 pads each expert's rows to 32 instead of 16: the 4096 x 8 / 8 rows per expert are aligned either way.
        QVERIFY(close(op_seconds(emx, "experts gate+up (grouped)", Phase::Forward), 1.09 * grouped));
        // BF16 layers under the recipe (Megatron-Bridge's first and last) keep the BF16 rate.
        s.training.bf16_edge_layers = 1;
        QVERIFY(close(op_seconds(s.run(), "qkv projection", Phase::Forward), OperatorTimer(s.profile, Precision::Bf16).gemm_seconds(m, 6144, 4096)));
    }

    void attention_peak_fraction_floors_the_flash_time()
    {
        // FlashAttention-2 on H100: at best 35% of peak forward, and 63/73 of that backward (2.5x the FLOPs).
        // One 8K causal sequence of 32 heads of 128: forward 2 x 32 x 8192^2 x 128 FLOPs.
        Setup s(llama_layer());
        const LayerCosts table = s.run();
        s.training.attention_peak_fraction = 0.35;
        const LayerCosts fa2 = s.run();
        const double flops = 2.0 * 32 * 8192.0 * 8192.0 * 128;
        const double peak = s.profile.peak_flops("bf16");
        const double fwd = op_seconds(table, "attention core (flash)", Phase::Forward);
        const double bwd = op_seconds(table, "attention core (flash)", Phase::Backward);
        QVERIFY(close(op_seconds(fa2, "attention core (flash)", Phase::Forward), std::max(fwd, flops / (0.35 * peak))));
        QVERIFY(close(op_seconds(fa2, "attention core (flash)", Phase::Backward), std::max(bwd, 2.5 * flops / (0.35 * 63 / 73 * peak))));
        QVERIFY(op_seconds(fa2, "attention core (flash)", Phase::Forward) > fwd); // the test profile's table is faster than 35%
        // A fraction the table never reaches leaves it alone.
        s.training.attention_peak_fraction = 1.0;
        QVERIFY(close(op_seconds(s.run(), "attention core (flash)", Phase::Forward), fwd));
    }

    void flash_attention_grows_quadratically_past_the_table()
    {
        // The profile's table ends at some sequence s_max; at 2 s_max one rank's causal attention costs 4x.
        const double top = network_profile().flash_attention.seq.back();
        Setup at(llama_layer(static_cast<int>(top)));
        Setup twice(llama_layer(static_cast<int>(2 * top)));
        const double a = op_seconds(at.run(), "attention core (flash)", Phase::Forward);
        const double b = op_seconds(twice.run(), "attention core (flash)", Phase::Forward);
        QVERIFY(a > 0);
        QVERIFY(close(b, 4 * a));
    }

    void forward_only_tp_overlap_leaves_the_backward_exposed()
    {
        ModelSpec m = test::gpt(1, 8192, 64, 4096);
        Setup s(m);
        s.in.tp = 8;
        s.in.sequence_parallel = true;
        s.in.tp_group = place_group(8, 1, 8);
        const LayerCosts off = s.run();
        s.in.tp_overlap = true;
        s.training.tp_overlap_forward_only = true;
        const LayerCosts on = s.run();
        QVERIFY(on.layer.forward.tp_comm_s < off.layer.forward.tp_comm_s);
        QCOMPARE(on.layer.backward.tp_comm_s, off.layer.backward.tp_comm_s);
    }

    void bf16_edge_layers_run_at_bf16_speed()
    {
        // FP8 current scaling with the first and last layer in BF16 (Megatron-Bridge first_last_layers_bf16):
        // of 4 layers, 0 and 3 cost what a BF16 layer costs, 1 and 2 the FP8 layer.
        ModelSpec m = llama_layer();
        m.layers = 4;
        Setup fp8(m, 1979);
        fp8.training.precision = Precision::Fp8;
        fp8.training.fp8_recipe = Fp8Recipe::Current;
        const LayerCosts plain = fp8.run();
        QVERIFY(plain.layers.empty());
        fp8.training.bf16_edge_layers = 1;
        const LayerCosts edge = fp8.run();
        Setup bf16(m, 1979);
        const LayerCosts ref = bf16.run();
        QCOMPARE(edge.layers.size(), std::size_t{4});
        QVERIFY(close(forward_s(edge.layers[0]), forward_s(ref.layer)));
        QVERIFY(close(forward_s(edge.layers[3]), forward_s(ref.layer)));
        QVERIFY(close(forward_s(edge.layers[1]), forward_s(plain.layer)));
        QVERIFY(forward_s(edge.layers[1]) < forward_s(edge.layers[0]));
    }

    void bf16_edge_layers_keep_the_recompute_modules()
    {
        // --recompute-modules applies to every layer: the BF16 edge layers of an FP8 recipe redo their norms
        // as a BF16 layer with the same modules does (they were once costed without them).
        ModelSpec m = llama_layer();
        m.layers = 4;
        Setup fp8(m, 1979);
        fp8.training.precision = Precision::Fp8;
        fp8.training.fp8_recipe = Fp8Recipe::Current;
        fp8.training.bf16_edge_layers = 1;
        const LayerCosts without = fp8.run();
        fp8.in.recompute_modules = kRecomputeLayernorm;
        const LayerCosts with = fp8.run();
        Setup bf16(m, 1979);
        bf16.in.recompute_modules = kRecomputeLayernorm;
        const LayerCosts ref = bf16.run();
        QCOMPARE(with.layers.size(), std::size_t{4});
        QCOMPARE(without.layers[0].recompute.total_s(), 0.0);
        QVERIFY(with.layers[0].recompute.total_s() > 0);
        QVERIFY(close(with.layers[0].recompute.total_s(), ref.layer.recompute.total_s()));
        QVERIFY(close(with.layers[3].recompute.total_s(), ref.layer.recompute.total_s()));
    }

    void bf16_gradients_and_fp8_parameter_gather_bytes()
    {
        TrainingSpec t;
        t.precision = Precision::Fp8;
        t.fp8_recipe = Fp8Recipe::Current;
        const Plan plan;
        ParamBytes b = param_bytes(t, plan);
        QCOMPARE(b.gradient, 4.0);
        QCOMPARE(b.layer_weight, 2.0);
        QCOMPARE(b.layer_gather, 2.0);
        t.bf16_gradients = true;
        t.fp8_param_gather = true;
        b = param_bytes(t, plan);
        // bf16 main gradients; decoder weights only as their row- and column-wise FP8 copies (2 bytes), the
        // distributed optimizer gathering one byte per parameter.
        QCOMPARE(b.gradient, 2.0);
        QCOMPARE(b.layer_weight, 0.0);
        QCOMPARE(b.low_precision, 2.0);
        QCOMPARE(b.layer_gather, 1.0);
        QCOMPARE(b.weight, 2.0); // the vocabulary stays bf16
    }

    void mamba_and_mtp_blocks_are_costed()
    {
        ModelSpec m = test::gpt(4, 4096, 32, 8192, 131072);
        m.activation = FfnActivation::SquaredRelu;
        m.ffn_hidden = 21504;
        m.kv_heads = 8;
        m.layer_pattern = "M-*-";
        Setup s(m);
        const LayerCosts c = s.run();
        QCOMPARE(c.layers.size(), std::size_t(4));
        QVERIFY(forward_s(c.layers[0]) > 0);
        QCOMPARE(forward_s(c.layers[1]), forward_s(c.layers[3]));
        QCOMPARE(forward_s(c.mtp), 0.0);
        Setup d(test::deepseek_v3());
        const LayerCosts dsv3 = d.run();
        // The MTP module carries a MoE block plus its projection and own output head.
        QVERIFY(forward_s(dsv3.mtp) > forward_s(dsv3.layers[10]));
        QCOMPARE(dsv3.layers.size(), std::size_t(61));
    }

    void mamba_scan_backward_recomputes_states()
    {
        // Nemotron 3 Nano's Mamba-2 mixer (64 heads x 64, state 128, 8 groups) over 2 x 8192 tokens: the scan's
        // backward is twice its forward GEMMs plus C B^T and the chunk states again (ssd_combined.py).
        Setup s(nano_mamba_layers());
        s.in.micro_batch = 2;
        const LayerCosts c = s.run();
        const NanoScanGemms g = nano_scan_gemms(s.profile);
        double scan_f = -1, scan_b = -1;
        for (const OperatorTime& o : c.layer_operators) {
            if (o.name == "mamba ssd scan") {
                (o.phase == Phase::Forward ? scan_f : scan_b) = o.seconds;
            }
        }
        QVERIFY(scan_f > 0);
        QCOMPARE(scan_f, g.forward);
        QCOMPARE(scan_b, 2 * g.forward + g.cb + g.states);
    }

    void ssd_scan_time_factor_scales_the_scan_alone()
    {
        // The same Nano mixer with the scan's kernels 4x the batched-GEMM estimate: the forward scan is 4x the
        // four GEMMs, the backward 4x (2 x forward + C B^T + chunk states); the projections do not change.
        Setup s(nano_mamba_layers());
        s.in.micro_batch = 2;
        const LayerCosts table = s.run();
        s.training.ssd_scan_time_factor = 4;
        const LayerCosts slow = s.run();
        const NanoScanGemms g = nano_scan_gemms(s.profile);
        QVERIFY(close(op_seconds(slow, "mamba ssd scan", Phase::Forward), 4 * g.forward));
        QVERIFY(close(op_seconds(slow, "mamba ssd scan", Phase::Backward), 4 * (2 * g.forward + g.cb + g.states)));
        QVERIFY(close(op_seconds(slow, "mamba ssd scan", Phase::Forward), 4 * op_seconds(table, "mamba ssd scan", Phase::Forward)));
        for (const char* other : {"mamba in-projection", "mamba out-projection", "mamba conv1d"}) {
            QCOMPARE(op_seconds(slow, other, Phase::Forward), op_seconds(table, other, Phase::Forward));
        }
    }

    void per_layer_activations_match_korthikanti_for_gpt()
    {
        const ModelSpec m = test::gpt(4, 6144, 48);
        TrainingSpec t;
        for (const bool sp : {false, true}) {
            for (const Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
                Plan p;
                p.tp = 8;
                p.micro_batch = 2;
                p.sequence_parallel = sp;
                p.recompute = r;
                QCOMPARE(layer_activation_bytes_at(m, t, p, 1), layer_activation_bytes(m, t, 2, 8, sp, r));
            }
        }
        t.attention = AttentionKernel::Unfused;
        Plan p;
        p.tp = 4;
        QCOMPARE(layer_activation_bytes_at(m, t, p, 0), layer_activation_bytes(m, t, 1, 4, false, Recompute::None));
    }

    void unfused_softmax_falls_back_when_megatrons_kernel_cannot_run()
    {
        // vTrain's single-node shape: 16 heads, seq 1024. Megatron's fused softmax needs micro-batch x local
        // heads to be a multiple of 4 (batches per block at 1024 keys): t = 8 with micro-batch 1 leaves 2.
        const ModelSpec m = test::gpt(1, 1024, 16, 1024, 50304);
        Setup s(m);
        s.training.attention = AttentionKernel::Unfused;
        s.in.tp = 8;
        s.in.tp_group.size = 8;
        s.in.recompute = Recompute::Full;
        const auto count = [](const LayerCosts& c, Phase phase) {
            int n = 0;
            for (const auto& op : c.layer_operators) {
                n += op.phase == phase && op.seconds > 0 && op.name.rfind("host-bound", 0) != 0;
            }
            return n;
        };
        s.in.micro_batch = 2; // 2 x 2 = 4 score matrices: the fused kernel
        const LayerCosts fused = s.run();
        QVERIFY(op_seconds(fused, "softmax", Phase::Forward) > 0);
        QCOMPARE(op_seconds(fused, "softmax (fp32)", Phase::Forward), 0.0);
        s.in.micro_batch = 1; // 2 score matrices: PyTorch's fp32 path, five operators in every phase
        const LayerCosts fallback = s.run();
        QCOMPARE(op_seconds(fallback, "softmax", Phase::Forward), 0.0);
        for (const Phase phase : {Phase::Forward, Phase::Backward, Phase::Recompute}) {
            QVERIFY(op_seconds(fallback, "softmax (fp32)", phase) > 0);
            QVERIFY(op_seconds(fallback, "softmax fallback: cast to fp32", phase) > 0);
            QCOMPARE(count(fallback, phase), count(fused, phase) + 4);
        }
        // Keys past the kernel's 4096 never fuse; t = 4 at micro-batch 1 (4 matrices) does.
        s.in.tp = 4;
        s.in.tp_group.size = 4;
        QVERIFY(op_seconds(s.run(), "softmax", Phase::Forward) > 0);
        const ModelSpec longer = test::gpt(1, 1024, 16, 8192, 50304);
        Setup l(longer);
        l.training.attention = AttentionKernel::Unfused;
        QVERIFY(op_seconds(l.run(), "softmax (fp32)", Phase::Forward) > 0);
    }

    void moe_and_cp_activations()
    {
        const ModelSpec m = test::deepseek_v3();
        TrainingSpec t;
        Plan p;
        p.ep = 64;
        const double dense = layer_activation_bytes_at(m, t, p, 0);
        const double moe = layer_activation_bytes_at(m, t, p, 3);
        // Per token: 8 dispatched rows of 7168 (input, output) and 2048-wide intermediates (3 x 2048).
        const double s = 4096, h = 7168;
        const double rows = 8 * (2 * h + 2 * 2 * 2048 + 2 * 2048 + 2 * h);
        QVERIFY(moe > s * rows);
        QVERIFY(moe > dense);
        Plan skew = p;
        ModelSpec hot = m;
        hot.moe.load_imbalance = 2;
        QVERIFY(layer_activation_bytes_at(hot, t, skew, 3) > moe);
        Plan cp = p;
        cp.cp = 2;
        QCOMPARE(layer_activation_bytes_at(m, t, cp, 3), moe / 2);
        // MLA keeps its compressed latents: 1536 + 512 (x2, normed copies) + 64 rope elements per token.
        QVERIFY(mtp_activation_bytes(m, t, p) > moe);
        // The "moe" recompute module keeps only the MoE block's input: the MoE layer holds its attention half
        // plus the pre-MLP norm's input, the dropout mask and that input (2 + 1 + 2 bytes x h per token), i.e. the
        // dense layer (the same attention; norm input, fc1 input and mask 5 h, fc1 output 2 x 2 x 18432 and
        // activation output 2 x 18432 bytes per token) without its 6 x 18432 bytes of FFN intermediates.
        Plan rc = p;
        rc.recompute_modules = kRecomputeMoe;
        QVERIFY(close(layer_activation_bytes_at(m, t, rc, 3), dense - s * 6 * 18432));
        QCOMPARE(layer_activation_bytes_at(m, t, rc, 0), dense); // a dense layer has no MoE block
    }

    void gpt_oss_clamp_and_expert_bias_are_costed_from_their_code_paths()
    {
        // A GPT-OSS-120B-shaped MoE layer (h 2880, 128 experts of 2880, top-4) on one rank holding 2 experts
        // (EP64), micro-batch 4 x 4096 tokens: with balanced routing the rank's experts get 16,384 x 4 = 65,536
        // rows (32,768 each).
        ModelSpec m = test::gpt(1, 2880, 64, 4096, 201088);
        m.kv_heads = 8;
        m.head_dim_override = 64;
        m.ffn_hidden = 2880;
        m.activation = FfnActivation::SwiGlu;
        m.normalization = Normalization::RmsNorm;
        m.moe.experts = 128;
        m.moe.top_k = 4;
        m.moe.expert_ffn_hidden = 2880;
        m.moe.dropless = true;
        auto costs = [&](double clamp, bool bias, bool fused) {
            ModelSpec g = m;
            g.glu_clamp = clamp;
            g.linear_bias = bias;
            Setup s(g);
            s.training.fused_grouped_mlp = fused;
            s.in.micro_batch = 4;
            s.in.ep = 64;
            s.in.etp = 1;
            return s.run();
        };
        const LayerCosts plain = costs(0, false, false);
        const LayerCosts oss = costs(7, true, false);
        const GpuProfile profile = network_profile();
        const OperatorTimer t(profile, Precision::Bf16); // the timer keeps a reference: the profile must outlive it
        const double rows = 4096.0 * 4 * 4;              // tokens x top-k reaching this rank's 2 experts from the 64 ranks
        const double input = rows * 2 * 2880 * 2;        // the activation's [rows, 2F] BF16 input
        const double out = rows * 2880 * 2;              // the experts' [rows, h] BF16 output
        // Clamp: two torch.clamp halves (one pass) and the cat (one copy) forward, the masked gradient backward.
        QVERIFY(close(op_seconds(oss, "activation input clamp + cat (unfused)", Phase::Forward), 2 * t.memory_bound_seconds("gelu", input, false)));
        QVERIFY(close(op_seconds(oss, "activation input clamp (unfused)", Phase::Backward), t.memory_bound_seconds("gelu", input, true)));
        // Output bias: the add (2 read, 1 written), the broadcast product (written) and the cat forward;
        // dB and dprobs each a product and a reduction backward.
        const double copy = t.memory_bound_seconds("gelu", out, false);
        QVERIFY(close(op_seconds(oss, "experts output bias (per-expert add + cat)", Phase::Forward),
                      t.memory_bound_seconds("residual_add", out, false) + 1.5 * copy));
        QVERIFY(close(op_seconds(oss, "experts output bias gradients (dB, dprobs)", Phase::Backward), 3 * copy));
        QCOMPARE(op_seconds(plain, "experts output bias (per-expert add + cat)", Phase::Forward), 0.0);
        QVERIFY(forward_s(oss.layer) > forward_s(plain.layer));
        // A fused grouped MLP (TE CuTeDSL) replaces TEGroupedMLP's forward: neither extra remains.
        const LayerCosts fused = costs(7, true, true);
        QCOMPARE(op_seconds(fused, "activation input clamp + cat (unfused)", Phase::Forward), 0.0);
        QCOMPARE(op_seconds(fused, "experts output bias (per-expert add + cat)", Phase::Forward), 0.0);
    }
};

QTEST_APPLESS_MAIN(TestLayerCosts)
#include "tst_layer_costs.moc"
