// SPDX-License-Identifier: MIT
#pragma once
// Small builders shared by the core tests.
#include <string>

#include "vtrain/modeled_profile.h"
#include "vtrain/profile_json.h"
#include "vtrain/scenario.h"

namespace vtrain::test {

// The test GPU's hardware: 80 GiB (2 reserved), 2 TB/s, 300 TFLOP/s bf16, 100 SMs, 8 per node with 8 NICs
// at full efficiency; links and latencies are each test's own.
inline HardwareSpec test_hardware(const char* id, const char* name)
{
    HardwareSpec hw;
    hw.id = id;
    hw.name = name;
    hw.memory_gib = 80;
    hw.memory_reserve_gib = 2;
    hw.memory_bandwidth_gbytes_per_s = 2000;
    hw.peak_tflops = {{"bf16", 300}, {"tf32", 150}};
    hw.sm_count = 100;
    hw.links.gpus_per_node = 8;
    hw.links.nics_per_node = 8;
    hw.links.nic_efficiency = 1;
    return hw;
}

// A GPU with free communication (huge bandwidth, no latency): schedules can be checked in isolation.
inline GpuProfile free_network_profile()
{
    HardwareSpec hw = test_hardware("test-gpu", "Test GPU");
    hw.links.nvlink_bus_gbytes_per_s = 1e12;
    hw.links.nic_gbit_per_s = 1e12;
    return make_modeled_profile(hw, ModelParameters{});
}

inline GpuProfile shipped_profile(const std::string& id)
{
    ProfileLibrary lib;
    lib.folders.emplace_back(std::string(VTRAIN_SOURCE_DIR) + "/profiles");
    auto p = lib.load(id);
    return p.ok() ? p.value() : GpuProfile{};
}

inline ModelSpec gpt(int layers, int hidden, int heads, int seq = 2048, int vocab = 51200)
{
    ModelSpec m;
    m.name = "test";
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.seq_len = seq;
    m.vocab = vocab;
    return m;
}

// DeepSeek-V3 as configured in deepseek-ai/DeepSeek-V3 inference/configs/config_671B.json (arXiv 2412.19437
// Sec. 4.2): 61 layers, MLA, 3 dense layers then 58 MoE layers of 256 routed + 1 shared expert, top-8, MTP 1.
inline ModelSpec deepseek_v3()
{
    ModelSpec m = gpt(61, 7168, 128, 4096, 129280);
    m.name = "DeepSeek-V3";
    m.ffn_hidden = 18432;
    m.activation = FfnActivation::SwiGlu;
    m.normalization = Normalization::RmsNorm;
    m.tied_embeddings = false;
    m.attention = AttentionKind::Mla; // MlaSpec defaults are DeepSeek-V3's
    m.moe.experts = 256;
    m.moe.top_k = 8;
    m.moe.expert_ffn_hidden = 2048;
    m.moe.shared_experts = 1;
    m.moe.first_dense_layers = 3;
    m.mtp_layers = 1;
    return m;
}

} // namespace vtrain::test
