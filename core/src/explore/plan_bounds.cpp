// SPDX-License-Identifier: MIT
#include "explore/plan_bounds.h"

#include <algorithm>

namespace vtrain {
namespace {

// Lower bounds are sums taken in another order than the simulation's: shave them by far more than the
// rounding of either, so that a bound never exceeds the time it bounds.
constexpr double kBoundSlack = 1.0 - 1e-9;

double work_s(const BlockCost& b)
{
    return b.forward.total_s() + b.recompute.total_s() + b.backward.total_s();
}

} // namespace

BoundTerms bound_terms(const ModelSpec& model, const LayerCosts& costs)
{
    BoundTerms b;
    b.layer_work_s = work_s(costs.layer);
    b.layer_forward_s = costs.layer.forward.total_s();
    b.layer_backward_s = costs.layer.backward.total_s();
    for (int i = 0; i < model.layers; ++i) {
        b.all_layers_work_s += work_s(costs.layer_at(i));
    }
    b.embedding_work_s = work_s(costs.embedding);
    b.head_work_s = work_s(costs.head);
    b.uniform_layers = costs.layers.empty();
    return b;
}

// Every compute-stream task of a stage (forward, recompute, backward: kernels plus the communication
// they do not hide) runs one after another, so a stage's summed work W_s bounds the iteration from below.
// With uniform layers split evenly, more is forced. Stage s's first task is a forward that needs the
// forward of one model chunk on each of the s stages before it; its last compute task is a backward
// (every forward precedes its own backward), after which that micro-batch's gradient still has to pass
// back through at least s model chunks (one backward each, on the stages before it). Hence
//   T >= s x (chunk forward + chunk backward) + W_s      for every stage s,
// which is the (pp - 1) x (f + b) fill-and-drain of 1F1B for the last stage. Other layouts use the
// average stage: T >= micro-batches x (every layer + embedding + head) / pp. The optimizer step, the
// pipeline sends, the recompute in the drain and the exposed data-parallel traffic are left out: all add time.
double iteration_lower_bound_s(const ModelSpec& model, int global_batch, const BoundTerms& e, const Plan& plan)
{
    const double micro_batches = static_cast<double>(global_batch / (plan.dp * plan.micro_batch));
    // Even: every stage (and chunk) holds layers / (pp x v) uniform layers. A pp x v that does not divide
    // the layers has no even split, and takes the average bound whatever the plan states.
    const int chunks = plan.schedule == Schedule::Interleaved ? std::max(1, plan.virtual_stages) : 1;
    const bool even = e.uniform_layers && plan.first_stage_layers == 0 && plan.last_stage_layers == 0 && plan.pipeline_layout.empty() &&
                      model.layers % (plan.pp * chunks) == 0;
    double bound = 0;
    if (even) {
        const double stage_layers = static_cast<double>(model.layers) / plan.pp;
        const int v = plan.schedule == Schedule::Interleaved ? std::max(1, plan.virtual_stages) : 1;
        const double chunk_fill_drain = stage_layers / v * (e.layer_forward_s + e.layer_backward_s);
        const double first = micro_batches * (stage_layers * e.layer_work_s + e.embedding_work_s);
        const double last = (plan.pp - 1) * chunk_fill_drain + micro_batches * (stage_layers * e.layer_work_s + e.head_work_s);
        bound = plan.pp == 1 ? micro_batches * (model.layers * e.layer_work_s + e.embedding_work_s + e.head_work_s) : std::max(first, last);
    } else {
        bound = micro_batches * (e.all_layers_work_s + e.embedding_work_s + e.head_work_s) / plan.pp;
    }
    return bound * kBoundSlack;
}

double iteration_time_lower_bound_s(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan)
{
    return iteration_lower_bound_s(model, training.global_batch, bound_terms(model, plan_layer_costs(model, training, cluster, plan)), plan);
}

} // namespace vtrain
