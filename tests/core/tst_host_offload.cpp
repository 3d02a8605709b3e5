// SPDX-License-Identifier: MIT
// Offload to host memory: the profiles' host figures, the transfer and CPU-step times against their
// closed forms, and the memory they free.
#include <QtTest>

#include "model/host_offload.h"
#include "test_support.h"
#include "vtrain/simulator.h"

using namespace vtrain;

class TestHostOffload : public QObject {
    Q_OBJECT
private slots:
    // Datasheet figures, one GPU's share: PCIe 5.0 x16 per H100; a GB200 superchip's NVLink-C2C (450 GB/s
    // per direction) and Grace's 512 GB/s of LPDDR5X shared by its two GPUs.
    void profiles_carry_their_host_link()
    {
        const GpuProfile h100 = test::shipped_profile("h100-sxm5-80gb");
        QCOMPARE(h100.links.host_link_gbytes_per_s, 64.0);
        QCOMPARE(h100.links.host_memory_gbytes_per_s, 614.4 / 8);
        const GpuProfile gb200 = test::shipped_profile("gb200-nvl72");
        QCOMPARE(gb200.links.host_link_gbytes_per_s, 225.0);
        QCOMPARE(gb200.links.host_memory_gbytes_per_s, 256.0);
        // A profile without them falls back to PCIe 4.0 x16 and DGX A100's host share.
        const HostLink fallback = host_link(LinkSpec{});
        QCOMPARE(fallback.link_bytes_per_s, 32e9);
        QCOMPARE(fallback.memory_bytes_per_s, 51.2e9);
    }

    // 1e9 parameters in bf16 with fp32 gradients and Adam on H100's PCIe: 4 GB down at 64 GB/s, the CPU
    // step streaming 2 x 12 + 4 = 28 GB at 76.8 GB/s, 2 GB up at 64 GB/s.
    void optimizer_step_on_the_cpu()
    {
        const HostLink link = host_link(test::shipped_profile("h100-sxm5-80gb").links);
        ParamBytes b; // bf16: weight 2, gradient 4, optimizer 12
        QCOMPARE(cpu_adam_bytes_per_param(b), 28.0);
        const double expected = 4e9 / 64e9 + 28e9 / 76.8e9 + 2e9 / 64e9;
        QVERIFY(qFuzzyCompare(offloaded_optimizer_seconds(1e9, b, link), expected));
        QCOMPARE(offloaded_optimizer_seconds(0, b, link), 0.0);
        // A copy hides behind compute up to its length.
        QCOMPARE(offload_copy_exposed_seconds(64e9, 2.0, link), 0.0);
        QVERIFY(qFuzzyCompare(offload_copy_exposed_seconds(64e9, 0.25, link), 0.75));
    }

    void memory_leaves_the_gpu()
    {
        StageMemory m;
        m.optimizer_bytes = 12e9;
        m.activations_bytes = 10e9;
        Plan p;
        p.offload_optimizer = true;
        p.offload_activations = 0.5;
        apply_host_offload(p, 0.5e9, m); // one micro-batch through one layer: 0.5 GB
        QCOMPARE(m.optimizer_bytes, 0.0);
        // Half the layers stay; the offloaded half keeps two layers' copy buffers (moving + prefetched).
        QCOMPARE(m.activations_bytes, 0.5 * 10e9 + 0.5 * 2 * 0.5e9);
        StageMemory all;
        all.activations_bytes = 10e9;
        p.offload_activations = 1;
        apply_host_offload(p, 0.5e9, all);
        QCOMPARE(all.activations_bytes, 1e9);
        // Never more than what was stashed (a stage holding less than two layers' worth).
        StageMemory small;
        small.activations_bytes = 0.6e9;
        apply_host_offload(p, 0.5e9, small);
        QCOMPARE(small.activations_bytes, 0.6e9);
    }

    // A whole plan: GPT 1.3B-shaped on 8 H100s, data parallel. The optimizer offload's step time is the
    // closed form on its parameters; the activation offload frees memory and never saves time.
    void simulated_plans_pay_for_offload()
    {
        const GpuProfile h100 = test::shipped_profile("h100-sxm5-80gb");
        Scenario s;
        s.cluster.gpu = h100.id;
        s.cluster.num_gpus = 8;
        s.model = test::gpt(24, 2048, 16);
        s.training.global_batch = 64;
        s.training.tokens = 1e9;
        Plan p;
        p.dp = 8;
        p.micro_batch = 2;
        SimulationOptions o;
        o.timeline = false;
        auto run = [&](const Plan& plan) {
            auto r = simulate(s, plan, h100, o);
            if (!r.ok()) {
                qFatal("%s", r.first_error().c_str());
            }
            return std::move(r).value();
        };
        const SimulationResult base = run(p);
        p.offload_optimizer = true;
        const SimulationResult opt = run(p);
        QVERIFY(opt.iteration_time_s > base.iteration_time_s);
        QVERIFY(opt.peak_memory_gib < base.peak_memory_gib);
        p.offload_optimizer = false;
        p.offload_activations = 1;
        const SimulationResult act = run(p);
        QVERIFY(act.iteration_time_s >= base.iteration_time_s);
        QVERIFY(act.peak_memory_gib < base.peak_memory_gib);
    }
};

QTEST_APPLESS_MAIN(TestHostOffload)
#include "tst_host_offload.moc"
