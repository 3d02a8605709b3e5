// SPDX-License-Identifier: MIT
#pragma once
// Physical floors of a training iteration: lower bounds on its time from first principles, one per
// resource a GPU has, computed without the simulator's cost model (no operator tables, no efficiencies,
// no overlap rules): the plan's FLOPs at the precision's dense datasheet peak; the HBM bytes it must move
// at the datasheet bandwidth; for every collective, the bytes that must cross each link class at its line
// rate (NVLink/xGMI inside an NVLink domain, the NICs between domains); and the host-offload copies over
// the host link. No iteration can be faster than any of them, so a prediction below its binding (largest)
// floor is a bug. Every term undercounts where the physics leaves a choice (in-switch reduction, the best
// rank placement, causal masking, balanced routing), so that the bounds hold for any implementation.
// core/src/iteration/physical_floors.cpp derives each term and cites its source.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vtrain/gpu_profile.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/scenario.h"

namespace vtrain {

enum class FloorResource : std::uint8_t { Compute, Hbm, NvLink, Network, HostLink };
constexpr std::size_t kFloorResources = 5;
const char* to_string(FloorResource resource); // "compute", "hbm", "nvlink", "network", "host_link"

// What a floor term stands for (each adds to one resource, or to two where the group may span domains).
enum class FloorTerm : std::uint8_t {
    ModelFlops,            // compute: the model's FLOPs (causal attention, routed experts top_k times)
    RecomputeFlops,        // compute: the forward work redone before the backward
    Weights,               // HBM: weights read in every forward, backward (and recompute) pass
    Activations,           // HBM: every sub-layer's input and output, expert rows, logits
    OptimizerState,        // HBM: master weights and moments read and written once, gradients read
    TensorParallel,        // tensor-parallel all-reduce / all-gather + reduce-scatter of each sub-layer
    ContextParallel,       // context-parallel KV exchange (ring) or head all-to-all
    ExpertAllToAll,        // expert dispatch and combine
    PipelineSends,         // activations and gradients between pipeline stages
    GradientAllReduce,     // data-parallel gradient all-reduce (ZeRO 0)
    GradientReduceScatter, // data-parallel gradient reduce-scatter (ZeRO 1-3)
    ParamAllGather,        // ZeRO 1-3 parameter all-gather
    EmbeddingSync,         // tied embedding gradients between the first and last stage
    OptimizerOffload,      // gradients to the host and weights back (offload_optimizer)
    ActivationOffload,     // stashed activations to the host and back (offload_activations)
    Count
};
constexpr std::size_t kFloorTerms = static_cast<std::size_t>(FloorTerm::Count);
const char* to_string(FloorTerm term); // "gradient reduce-scatter", "expert all-to-all", ...

// The datasheet figures the floors use, resolved once per (cluster, GPU, precision).
struct FloorHardware {
    std::string gpu;                    // profile id
    std::string peak_dtype;             // the peak's data type ("bf16", "fp8", "fp4", "tf32")
    double peak_flops = 0;              // dense, per GPU
    double hbm_bytes_per_s = 0;         // datasheet HBM bandwidth
    double nvlink_bytes_per_s = 0;      // scale-up line rate per direction per GPU
    std::string scale_up_name;          // "NVLink" or "xGMI"
    double nic_bytes_per_s_per_gpu = 0; // line rate of a host's NICs / its GPUs
    int nics_per_node = 0;
    double nic_gbit_per_s = 0;
    double host_link_bytes_per_s = 0; // GPU <-> host, per direction per GPU (PCIe, NVLink-C2C)
    int gpus_per_node = 8;            // GPUs per host (sharing its NICs)
    int nvlink_domain_gpus = 8;       // GPUs per NVLink domain
};

// The datasheet figures of `profile` with the cluster's overrides (a stated link rate replaces the
// datasheet's where it is higher: it describes other hardware).
FloorHardware floor_hardware(const ClusterSpec& cluster, const GpuProfile& profile, Precision precision);

struct PhysicalFloors {
    std::array<double, kFloorResources> seconds{};                         // per resource: the sum of its terms
    std::array<std::array<double, kFloorResources>, kFloorTerms> term_s{}; // per term and resource
    FloorResource binding = FloorResource::Compute;                        // the largest
    double binding_s() const { return seconds[static_cast<std::size_t>(binding)]; }
    double of(FloorResource r) const { return seconds[static_cast<std::size_t>(r)]; }
    // The term that contributes most to a resource's floor.
    FloorTerm largest_term(FloorResource r) const;
};

// What the floors need of a model and its training settings, summed over layers once (prefix sums over
// the decoder layers): cheap to evaluate for many plans of one scenario (the explorer's rows).
class FloorModel {
public:
    FloorModel(const ModelSpec& model, const TrainingSpec& training);
    // `layout`: the plan's pipeline layout (resolve_pipeline_layout()).
    PhysicalFloors floors(const Plan& plan, const PipelineLayout& layout, const FloorHardware& hw) const;

private:
    struct Sums; // per-layer quantities, summed over [first, first + n)
    void add_range(Sums& out, int first, int n) const;
    ModelSpec m_model;
    TrainingSpec m_training;
    std::vector<double> m_prefix; // kFields values per layer boundary
};

// The floors of one plan (the layout resolved here); the plan must be one check_plan() accepts.
PhysicalFloors physical_floors(const ModelSpec& model, const TrainingSpec& training, const ClusterSpec& cluster, const Plan& plan,
                               const GpuProfile& profile);

// "network-bound: the gradient reduce-scatter over the NICs (8 x 400 Gb/s per node) is 71% of the iteration"
// (the binding resource, its largest term and its share of `iteration_s`; the resource's whole floor in
// brackets when it has other terms).
std::string floor_summary(const PhysicalFloors& floors, const FloorHardware& hw, double iteration_s);
// "NVLink (450 GB/s per direction)", "the NICs (8 x 400 Gb/s per node)", "HBM (3.35 TB/s)", ...
std::string floor_resource_label(FloorResource resource, const FloorHardware& hw);

} // namespace vtrain
