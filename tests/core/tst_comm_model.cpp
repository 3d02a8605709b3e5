// SPDX-License-Identifier: MIT
// The communication model against hand-computed cases.
#include <QtTest>

#include "vtrain/comm_model.h"

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
        // HGX: reduce-scatter over 8, all-reduce of 1/8 across 2 hosts at 20 GB/s per GPU, all-gather over 8.
        const double rs = 20e-6 + 7 * 2e-6 + 1.6e9 * 7 / 8 / 200e9;
        const double across = 10e-6 + 2 * 5e-6 + 2e8 * 2 * 1 / 2 / 20e9; // ring == tree for 2 hosts
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
        const double bandwidth = bytes * 2.0 * 11 / 12 / 20e9;
        const double ring = 10e-6 + 2 * 11 * 5e-6 + bandwidth;
        const double tree = 10e-6 + 2 * 4 * 5e-6 + bandwidth; // ceil(log2 12) = 4
        QCOMPARE(c.collective_seconds(Collective::AllReduce, bytes, place_group(n, 8, 8)), std::min(ring, tree));
        QCOMPARE(c.inter_node_seconds(Collective::ReduceScatter, bytes, n), 10e-6 + 11 * 5e-6 + bytes * 11.0 / 12 / 20e9);
    }

    void hierarchical_all_reduce_splits_the_buffer_over_local_members()
    {
        const CommModel c = a100_like();
        const double bytes = 8e8;
        const GroupPlacement g = place_group(16, 2, 8); // 4 per node, 4 nodes
        const double expected = c.intra_node_seconds(Collective::ReduceScatter, bytes, 4) +
                                c.inter_node_seconds(Collective::AllReduce, bytes / 4, 4) +
                                c.intra_node_seconds(Collective::AllGather, bytes, 4);
        QCOMPARE(c.collective_seconds(Collective::AllReduce, bytes, g), expected);
        // Spreading the same group one member per node is slower: the whole buffer crosses the network.
        QVERIFY(c.collective_seconds(Collective::AllReduce, bytes, place_group(16, 8, 8)) > expected);
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
};

QTEST_APPLESS_MAIN(TestCommModel)
#include "tst_comm_model.moc"
