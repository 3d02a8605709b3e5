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
