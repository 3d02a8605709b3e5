// SPDX-License-Identifier: MIT
// The communication model against hand-computed cases.
#include <QtTest>

#include "model/nccl_tuning.h"
#include "vtrain/comm_model.h"
#include "vtrain/rank_layout.h"

using namespace vtrain;

namespace {

CommModel a100_like()
{
    CommModel c;
    c.links.gpus_per_node = 8;
    c.links.nvlink_bus_gbytes_per_s = 200; // 200 GB/s bus bandwidth
    c.links.nvlink_base_latency_us = 20;
    c.links.nvlink_step_latency_us = 2;
    c.links.nics_per_node = 8;
    c.links.nic_gbit_per_s = 200; // 25 GB/s per NIC
    c.links.nic_efficiency = 0.8; // 20 GB/s per NIC
    c.links.inter_node_base_latency_us = 10;
    c.links.inter_node_latency_us = 5;
    return c;
}

// The same links as an HGX host (8 GPUs per host and per NVLink domain) and as an NVL72 rack (4 GPUs per
// host, 72 per domain, one NIC per GPU in both).
LinkSpec hgx_links()
{
    LinkSpec l = a100_like().links;
    l.nvlink_domain_gpus = 0;
    return l;
}

LinkSpec nvl72_links()
{
    LinkSpec l = hgx_links();
    l.gpus_per_node = 4;
    l.nics_per_node = 4;
    l.nvlink_domain_gpus = 72;
    return l;
}

} // namespace

class TestCommModel : public QObject {
    Q_OBJECT
private slots:
    void placement_follows_rank_layout()
    {
        // Tensor groups (stride 1) of 8 fit a node; 16 span two.
        QCOMPARE(place_group(8, 1, 8).nodes, 1);
        QCOMPARE(place_group(16, 1, 8).nodes, 2);
        QCOMPARE(place_group(16, 1, 8).members_per_node, 8);
        // Data-parallel groups with t = 8 have one member per node; with t = 2, four.
        QCOMPARE(place_group(12, 8, 8).members_per_node, 1);
        QCOMPARE(place_group(12, 8, 8).nodes, 12);
        QCOMPARE(place_group(16, 2, 8).members_per_node, 4);
        QCOMPARE(place_group(16, 2, 8).nodes, 4);
        QCOMPARE(place_group(1, 8, 8).nodes, 1);
    }

    void placement_separates_hosts_from_nvlink_domains()
    {
        const LinkSpec hgx = hgx_links();
        const LinkSpec nvl = nvl72_links();
        QCOMPARE(nvlink_domain_size(hgx), 8);
        QCOMPARE(nvlink_domain_size(nvl), 72);
        // TP 8 (stride 1): one domain either way; on NVL72 it spans two hosts.
        QCOMPARE(place_group(8, 1, hgx).nodes, 1);
        QCOMPARE(place_group(8, 1, nvl).nodes, 1);
        QCOMPARE(place_group(8, 1, nvl).hosts, 2);
        // TP 16: two HGX domains, one NVL72 domain.
        QCOMPARE(place_group(16, 1, hgx).nodes, 2);
        QCOMPARE(place_group(16, 1, nvl).nodes, 1);
        // EP 64 with ETP 1 (stride 1, Megatron's expert ranks innermost): 8 HGX hosts; 1 NVL72 domain of 16 hosts.
        QCOMPARE(place_group(64, 1, hgx).nodes, 8);
        QCOMPARE(place_group(64, 1, hgx).members_per_node, 8);
        QCOMPARE(place_group(64, 1, nvl).nodes, 1);
        QCOMPARE(place_group(64, 1, nvl).hosts, 16);
        // CP 4 after TP 8 (stride 8): one member per HGX domain; all four in one NVL72 domain (72 / 8 = 9 fit).
        QCOMPARE(place_group(4, 8, hgx).nodes, 4);
        QCOMPARE(place_group(4, 8, nvl).nodes, 1);
        // DP 18 after TP 8: 9 per NVL72 domain, 2 domains.
        QCOMPARE(place_group(18, 8, nvl).members_per_node, 9);
        QCOMPARE(place_group(18, 8, nvl).nodes, 2);
        QCOMPARE(place_group(18, 8, nvl).hosts, 18);
        // EP 144 spans two racks.
        QCOMPARE(place_group(144, 1, nvl).nodes, 2);
        // The host-only overload is the HGX case.
        QCOMPARE(place_group(64, 1, 8).nodes, place_group(64, 1, hgx).nodes);
        QVERIFY(same_nvlink_domain(0, 71, nvl) && !same_nvlink_domain(71, 72, nvl));
        QVERIFY(same_nvlink_domain(0, 7, hgx) && !same_nvlink_domain(7, 8, hgx));
    }

    void tp_all_reduce_in_a_72_gpu_domain_stays_on_nvlink()
    {
        CommModel hgx = a100_like();
        hgx.links = hgx_links();
        CommModel nvl = a100_like();
        nvl.links = nvl72_links();
        const double bytes = 1.6e9;
        // NVL72: one ring of 16 on NVLink: 20 + 30 x 2 us; 1.6e9 x 2 x 15/16 bus bytes at 200 GB/s.
        const double in_domain = 80e-6 + 1.6e9 * 2 * 15 / 16 / 200e9;
        QCOMPARE(nvl.collective_seconds(Collective::AllReduce, bytes, place_group(16, 1, nvl.links)), in_domain);
        // HGX: reduce-scatter over 8, all-reduce of 1/8 across 2 hosts at 20 GB/s per GPU, all-gather over 8 (wire
        // time); NCCL's Simple ring latency over 16 ranks (30 steps, 2 of them between hosts, x 1.4; tuning.cc).
        const double rs = 1.6e9 * 7 / 8 / 200e9;
        const double across = 2e8 * 2 * 1 / 2 / 20e9 + (8.4 + 28 * 3.4 + 2 * 14.0) * 1.4e-6;
        QVERIFY(std::abs(hgx.collective_seconds(Collective::AllReduce, bytes, place_group(16, 1, hgx.links)) - (rs + across + rs)) < 1e-12);
        QVERIFY(rs + across + rs > in_domain);
    }

    void ep_all_to_all_in_a_72_gpu_domain_vs_8_gpu_hosts()
    {
        CommModel hgx = a100_like();
        hgx.links = hgx_links();
        CommModel nvl = a100_like();
        nvl.links = nvl72_links();
        const double bytes = 6.4e8; // one rank's dispatch buffer, 64 chunks of 1e7 bytes
        // NVL72: all 64 peers on NVLink: latency 20 + 63 x 2 us, 63 chunks at 200 GB/s.
        const double nvl_time = 146e-6 + 63 * 1e7 / 200e9;
        QCOMPARE(nvl.collective_seconds(Collective::AllToAll, bytes, place_group(64, 1, nvl.links)), nvl_time);
        // HGX: 7 chunks on NVLink and 56 through the GPU's 20 GB/s NIC share at once; the network sets the time.
        const double hgx_time = (10e-6 + 7 * 5e-6) + std::max(7 * 1e7 / 200e9, 56 * 1e7 / 20e9);
        QCOMPARE(hgx.collective_seconds(Collective::AllToAll, bytes, place_group(64, 1, hgx.links)), hgx_time);
        QVERIFY(hgx_time > 5 * nvl_time); // 28 ms vs 3.3 ms
        // Two racks: 72 local chunks of 144 stay on NVLink, 72 cross the network.
        const double two_racks = (10e-6 + 5e-6) + std::max(71 * 1e7 / 200e9, 72 * 1e7 / 20e9);
        QCOMPARE(nvl.collective_seconds(Collective::AllToAll, 1.44e9, place_group(144, 1, nvl.links)), two_racks);
        QCOMPARE(algorithm_factor(Collective::AllToAll, 64), 63.0 / 64);
    }

    void algorithm_factors()
    {
        QCOMPARE(algorithm_factor(Collective::AllReduce, 8), 2.0 * 7 / 8);
        QCOMPARE(algorithm_factor(Collective::AllGather, 4), 3.0 / 4);
        QCOMPARE(algorithm_factor(Collective::ReduceScatter, 1), 0.0);
    }

    void intra_node_ring_all_reduce()
    {
        const CommModel c = a100_like();
        const double bytes = 1e9;
        // latency 20 + 14 x 2 = 48 us; bus bytes 1e9 x 2 x 7/8 = 1.75e9 at 200 GB/s = 8.75 ms.
        const double expected = 48e-6 + 1.75e9 / 200e9;
        QCOMPARE(c.collective_seconds(Collective::AllReduce, bytes, place_group(8, 1, 8)), expected);
        QCOMPARE(c.collective_seconds(Collective::AllReduce, bytes, place_group(1, 1, 8)), 0.0);
    }

    void nodes_share_their_nics()
    {
        const CommModel c = a100_like();
        // 8 NICs x 20 GB/s shared by 8 GPUs: 20 GB/s each.
        QCOMPARE(c.inter_node_bytes_per_s_per_gpu(), 20e9);
        CommModel four_nics = c;
        four_nics.links.nics_per_node = 4;
        QCOMPARE(four_nics.inter_node_bytes_per_s_per_gpu(), 10e9);
    }

    void one_member_per_node_uses_the_network_alone()
    {
        const CommModel c = a100_like();
        const double bytes = 1e9;
        const int n = 12;
        // 1 GB is bandwidth-bound: NCCL's ring with Simple, 2 x 11 steps all between domains (tuning.cc:
        // min(steps, 2 x domains) network hops at 14 us, base 8.4 us, x 1.4 for a multi-node Simple ring).
        const double bandwidth = bytes * 2.0 * 11 / 12 / 20e9;
        const double ring = (8.4 + 22 * 14.0) * 1.4 * 1e-6 + bandwidth;
        QCOMPARE(c.collective_seconds(Collective::AllReduce, bytes, place_group(n, 8, 8)), ring);
        // The single-tier building block keeps the link latencies.
        QCOMPARE(c.inter_node_seconds(Collective::ReduceScatter, bytes, n), 10e-6 + 11 * 5e-6 + bytes * 11.0 / 12 / 20e9);
    }

    void hierarchical_all_reduce_splits_the_buffer_over_local_members()
    {
        const CommModel c = a100_like();
        const double bytes = 8e8;
        const GroupPlacement g = place_group(16, 2, 8); // 4 per node, 4 nodes
        // Wire: reduce-scatter inside the domain, all-reduce of a quarter across, all-gather inside; latency:
        // NCCL's ring over all 16 ranks (2 x 15 steps, 2 x 3 of them between domains), Simple, x 1.4.
        const double wire = bytes * 3.0 / 4 / 200e9 + bytes / 4 * 2.0 * 3 / 4 / 20e9 + bytes * 3.0 / 4 / 200e9;
        const double expected = (8.4 + 24 * 3.4 + 6 * 14.0) * 1.4 * 1e-6 + wire;
        QCOMPARE(c.collective_seconds(Collective::AllReduce, bytes, g), expected);
        // Spreading the same group one member per node is slower: the whole buffer crosses the network.
        QVERIFY(c.collective_seconds(Collective::AllReduce, bytes, place_group(16, 8, 8)) > expected);
    }

    // Issue 29: a collective over domains pays NCCL's latency for every hop of its ring (tuning.cc @
    // b6475625), so it grows with the ranks; NCCL picks LL for small messages and Simple for large ones.
    void nccl_ring_latency_counts_every_rank()
    {
        // 1,024 ranks in 128 domains of 8: 1,023 ring steps, 127 of them between domains; an intra-domain hop of a
        // multi-node ring costs at least the network post (1 us, x3 for Simple).
        QCOMPARE(nccl_latency_seconds(NcclCollective::AllGather, NcclAlgorithm::Ring, NcclProtocol::Simple, 1024, 128),
                 (8.4 + 896 * 3.4 + 127 * 14.0) * 1e-6);
        QCOMPARE(nccl_latency_seconds(NcclCollective::ReduceScatter, NcclAlgorithm::Ring, NcclProtocol::LL, 1024, 128),
                 (6.6 + 896 * 1.0 + 127 * 2.7) * 1e-6);
        QCOMPARE(nccl_latency_seconds(NcclCollective::AllGather, NcclAlgorithm::Ring, NcclProtocol::LL128, 1024, 128),
                 (14.0 + 896 * 1.9 + 127 * 4.0) * 1e-6);
        // All-reduce: 2(n - 1) steps, 2(domains - 1) of them across; the tree pays log2(domains) network hops.
        QCOMPARE(nccl_latency_seconds(NcclCollective::AllReduce, NcclAlgorithm::Ring, NcclProtocol::Simple, 16, 2),
                 (8.4 + 28 * 3.4 + 2 * 14.0) * 1.4 * 1e-6);
        QCOMPARE(nccl_latency_seconds(NcclCollective::AllReduce, NcclAlgorithm::Tree, NcclProtocol::LL, 1024, 128),
                 (6.8 + 2 * (7 * 0.6 + 7 * 5.0)) * 1e-6);
        // Wire time by protocol: LL at a quarter of the bandwidth but at most 20.4 GB/s of bus bytes, LL128 at 92%.
        QCOMPARE(nccl_wire_seconds(NcclAlgorithm::Ring, NcclProtocol::LL, 1e-3, 1e6), 4e-3);
        QCOMPARE(nccl_wire_seconds(NcclAlgorithm::Ring, NcclProtocol::LL, 1e-6, 1e6), 1e6 / 20.4e9);
        QCOMPARE(nccl_wire_seconds(NcclAlgorithm::Ring, NcclProtocol::LL128, 1e-3, 1e6), 1e-3 / 0.92);
    }

    void nccl_picks_the_protocol_by_message_size()
    {
        const CommModel c = a100_like();
        const GroupPlacement g = place_group(1024, 1, 8); // 128 domains of 8
        QCOMPARE(g.nodes, 128);
        // 1 KB: latency-bound, LL: its latency plus the bus bytes at LL's 20.4 GB/s cap.
        const double small = 1e3;
        const double ll = (6.6 + 896 * 1.0 + 127 * 2.7) * 1e-6 + small * 1023 / 1024 / 20.4e9;
        QCOMPARE(c.collective_seconds(Collective::AllGather, small, g), ll);
        // 4 GB: bandwidth-bound, Simple: wire (an eighth across the network, the whole inside) plus its latency.
        const double large = 4e9;
        const double wire = large / 8 * 127 / 128 / 20e9 + large * 7 / 8 / 200e9;
        const double simple = (8.4 + 896 * 3.4 + 127 * 14.0) * 1e-6 + wire;
        QCOMPARE(c.collective_seconds(Collective::AllGather, large, g), simple);
        const NcclChoice choice = nccl_best(NcclCollective::AllGather, wire, large * 1023 / 1024, 1024, 128);
        QCOMPARE(choice.protocol, NcclProtocol::Simple);
        QCOMPARE(nccl_best(NcclCollective::AllGather, 1e-8, small, 1024, 128).protocol, NcclProtocol::LL);
    }

    void gather_latency_grows_with_the_ranks()
    {
        // A small gather (1 KB per rank) over 64 and over 1,024 ranks, 8 per domain: LL both times, and the
        // difference is the ring's extra hops (960 intra-domain at 1 us, 120 network at 2.7 us), not bytes.
        const CommModel c = a100_like();
        const double t64 = c.collective_seconds(Collective::AllGather, 64e3, place_group(64, 1, 8));
        const double t1024 = c.collective_seconds(Collective::AllGather, 1024e3, place_group(1024, 1, 8));
        QCOMPARE(t64, (6.6 + 56 * 1.0 + 7 * 2.7) * 1e-6 + 64e3 * 63 / 64 / 20.4e9);
        QCOMPARE(t1024, (6.6 + 896 * 1.0 + 127 * 2.7) * 1e-6 + 1024e3 * 1023 / 1024 / 20.4e9);
        QVERIFY(t1024 > 10 * t64);
        // Inside one domain nothing changes: the link latencies of the profile.
        QCOMPARE(c.collective_seconds(Collective::AllGather, 1e6, place_group(8, 1, 8)), 20e-6 + 7 * 2e-6 + 1e6 * 7.0 / 8 / 200e9);
    }

    void point_to_point_picks_the_link()
    {
        const CommModel c = a100_like();
        QCOMPARE(c.p2p_seconds(2e8, false), 22e-6 + 2e8 / 200e9);
        QCOMPARE(c.p2p_seconds(2e8, true), 15e-6 + 2e8 / 20e9);
    }

    void measured_tables_replace_the_formula_inside_a_node()
    {
        CommModel c = a100_like();
        std::vector<CollectiveTable> measured{{8, {1e6, 1e9}, {1e-4, 9e-3}}};
        c.measured_all_reduce = &measured;
        QCOMPARE(c.intra_node_seconds(Collective::AllReduce, 1e9, 8), 9e-3);
        QCOMPARE(c.intra_node_seconds(Collective::AllReduce, 1e9, 4), a100_like().intra_node_seconds(Collective::AllReduce, 1e9, 4));
    }

    // Rank orders: Megatron's default "tp-cp-ep-dp-pp" against --use-tp-pp-dp-mapping's "tp-cp-ep-pp-dp".
    void rank_orders_parse_and_print()
    {
        QCOMPARE(to_string(RankOrder{}), std::string("tp-cp-ep-dp-pp"));
        const auto pp_dp = parse_rank_order("tp-cp-ep-pp-dp");
        QVERIFY(pp_dp.has_value());
        QCOMPARE(to_string(*pp_dp), std::string("tp-cp-ep-pp-dp"));
        QVERIFY(parse_rank_order("tp-pp-cp-dp-ep").has_value());
        std::string why;
        QVERIFY(!parse_rank_order("cp-tp-ep-dp-pp", &why));
        QVERIFY(why.find("start with tp") != std::string::npos);
        QVERIFY(!parse_rank_order("tp-cp-ep-dp", &why));
        QVERIFY(!parse_rank_order("tp-cp-ep-dp-pp-pp", &why));
        QVERIFY(!parse_rank_order("tp-cp-ep-dp-dp", &why));
        QVERIFY(why.find("twice") != std::string::npos);
        QVERIFY(!parse_rank_order("tp-cp-xp-dp-pp", &why));
    }

    // 32 GPUs on 8-GPU HGX hosts, tp 2 x pp 2 x dp 8. Default order: dp stride 2 (4 members per host, 2
    // hosts), pp stride 16 (the stages sit on different hosts). pp-dp order: pp stride 2 (both stages in
    // one host), dp stride 4 (2 members per host, 4 hosts). Latencies off, so the all-reduce of B bytes is
    // its bandwidth terms: reduce-scatter and all-gather of B over k local members on NVLink, and B / k
    // all-reduced over n hosts through each GPU's NIC share: B/k x 2(n-1)/n bytes on the network.
    void rank_order_moves_data_parallel_traffic_on_8_gpu_hosts()
    {
        CommModel c = a100_like();
        c.links.nvlink_base_latency_us = c.links.nvlink_step_latency_us = 0;
        c.links.inter_node_base_latency_us = c.links.inter_node_latency_us = 0;
        Plan p;
        p.tp = 2;
        p.pp = 2;
        p.dp = 8;
        const double B = 1e9, nvlink = 200e9, nic = 20e9; // bytes/s: bus bandwidth, one GPU's NIC share
        // The link latencies are off; a group over hosts still pays NCCL's (Simple ring, tuning.cc): 2(r - 1)
        // steps over its r = k n ranks, 2(n - 1) of them between hosts at 14 us, the rest at 3.4 us, x 1.4.
        auto all_reduce = [&](double k, double n) {
            const double steps = 2 * (k * n - 1), across = 2 * (n - 1);
            return 2 * B * (k - 1) / k / nvlink + B / k * 2 * (n - 1) / n / nic + (8.4 + (steps - across) * 3.4 + across * 14.0) * 1.4e-6;
        };

        const PlanGroups dflt = place_plan_groups(p, c.links);
        QCOMPARE(dflt.dense_dp.members_per_node, 4);
        QCOMPARE(dflt.dense_dp.nodes, 2);
        QCOMPARE(dflt.pp_stride, 16LL);
        QVERIFY(domain_of_stage(0, dflt.pp_stride, c.links) != domain_of_stage(1, dflt.pp_stride, c.links));
        QVERIFY(qFuzzyCompare(c.collective_seconds(Collective::AllReduce, B, dflt.dense_dp), all_reduce(4, 2)));

        p.rank_order = *parse_rank_order("tp-cp-ep-pp-dp");
        const PlanGroups pp_dp = place_plan_groups(p, c.links);
        QCOMPARE(pp_dp.dense_dp.members_per_node, 2);
        QCOMPARE(pp_dp.dense_dp.nodes, 4);
        QCOMPARE(pp_dp.pp_stride, 2LL);
        QCOMPARE(domain_of_stage(0, pp_dp.pp_stride, c.links), domain_of_stage(1, pp_dp.pp_stride, c.links));
        QVERIFY(qFuzzyCompare(c.collective_seconds(Collective::AllReduce, B, pp_dp.dense_dp), all_reduce(2, 4)));
        // Network bytes per GPU: B/4 x 1 against B/2 x 1.5, three times as many.
        QVERIFY(c.collective_seconds(Collective::AllReduce, B, pp_dp.dense_dp) > c.collective_seconds(Collective::AllReduce, B, dflt.dense_dp));
        // Tensor groups are innermost in both.
        QCOMPARE(pp_dp.tp.nodes, 1);
        QCOMPARE(dflt.tp.nodes, 1);
    }

    // 144 GPUs in two 72-GPU NVLink domains (4-GPU hosts), tp 4 x pp 2 x dp 18. Default order: the 18
    // data-parallel ranks (stride 4) fill one domain, all-reduce on NVLink alone; the two stages sit in
    // different domains. pp-dp order: both stages in one domain, dp stride 8 puts 9 ranks in each domain.
    void rank_order_in_72_gpu_domains()
    {
        CommModel c;
        c.links = nvl72_links();
        c.links.nvlink_base_latency_us = c.links.nvlink_step_latency_us = 0;
        c.links.inter_node_base_latency_us = c.links.inter_node_latency_us = 0;
        Plan p;
        p.tp = 4;
        p.pp = 2;
        p.dp = 18;
        const double B = 1e9, nvlink = 200e9, nic = 20e9;
        const PlanGroups dflt = place_plan_groups(p, c.links);
        QCOMPARE(dflt.dense_dp.nodes, 1);
        QCOMPARE(dflt.dense_dp.hosts, 18); // one member per 4-GPU host, all inside the domain
        QVERIFY(qFuzzyCompare(c.collective_seconds(Collective::AllReduce, B, dflt.dense_dp), 2 * B * 17.0 / 18 / nvlink));
        QCOMPARE(dflt.pp_stride, 72LL);
        QVERIFY(domain_of_stage(0, dflt.pp_stride, c.links) != domain_of_stage(1, dflt.pp_stride, c.links));

        p.rank_order = *parse_rank_order("tp-cp-ep-pp-dp");
        const PlanGroups pp_dp = place_plan_groups(p, c.links);
        QCOMPARE(pp_dp.dense_dp.members_per_node, 9);
        QCOMPARE(pp_dp.dense_dp.nodes, 2);
        const double k = 9, n = 2;
        // Two domains: NCCL's Simple ring latency over 18 ranks (34 steps, 2 between domains, x 1.4; tuning.cc).
        QVERIFY(qFuzzyCompare(c.collective_seconds(Collective::AllReduce, B, pp_dp.dense_dp),
                              2 * B * (k - 1) / k / nvlink + B / k * 2 * (n - 1) / n / nic + (8.4 + 32 * 3.4 + 2 * 14.0) * 1.4e-6));
        QCOMPARE(domain_of_stage(0, pp_dp.pp_stride, c.links), domain_of_stage(1, pp_dp.pp_stride, c.links));
    }

    // The default order places every group exactly as the single-stride place_group() did before rank
    // orders existed (tp 1, cp tp, dp x cp tp, shard and replica of a hybrid shard, experts).
    void default_order_matches_megatron_strides()
    {
        const LinkSpec links = hgx_links();
        Plan p;
        p.tp = 2;
        p.cp = 2;
        p.pp = 2;
        p.dp = 4;
        p.zero_stage = 1;
        p.shard_group = 4;
        const PlanGroups g = place_plan_groups(p, links);
        auto same = [](const GroupPlacement& a, const GroupPlacement& b) {
            return a.size == b.size && a.members_per_node == b.members_per_node && a.nodes == b.nodes && a.hosts == b.hosts;
        };
        QVERIFY(same(g.tp, place_group(2, 1, links)));
        QVERIFY(same(g.cp, place_group(2, 2, links)));
        QVERIFY(same(g.dense_dp, place_group(8, 2, links)));
        QVERIFY(same(g.shard, place_group(4, 2, links)));
        QVERIFY(same(g.replica, place_group(2, 8, links)));
        QCOMPARE(g.pp_stride, 16LL);
    }

    // Mixture-of-experts: dense and expert layers must share pipeline groups (Megatron-Core asserts it).
    void rank_order_keeps_one_pipeline_group_for_experts()
    {
        ModelSpec m;
        m.layers = 8;
        m.moe.experts = 8;
        Plan p;
        p.tp = 2;
        p.pp = 2;
        p.dp = 4;
        p.ep = 4;
        p.etp = 1;
        QVERIFY(!rank_order_problem(m, p)); // pp outermost: both strides are the stage size
        p.rank_order = *parse_rank_order("tp-cp-ep-pp-dp");
        QVERIFY(rank_order_problem(m, p).has_value()); // tp x cp = 2 but etp x ep = 4
        p.ep = 2;
        QVERIFY(!rank_order_problem(m, p)); // etp x ep = tp x cp = 2
    }
};

QTEST_APPLESS_MAIN(TestCommModel)
#include "tst_comm_model.moc"
