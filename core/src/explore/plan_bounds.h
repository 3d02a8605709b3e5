// SPDX-License-Identifier: MIT
#pragma once
// Lower bounds on a plan's iteration time, from its operator costs alone: what pruning compares with the
// rows found so far (explorer_evaluate.cpp), and what simulate() never reports less than.
#include "iteration/plan_costs.h"
#include "vtrain/layer_costs.h"
#include "vtrain/scenario.h"

namespace vtrain {

// The sums a plan's lower bound needs (seconds on the compute stream, per micro-batch): a few numbers
// per cost key, so that one table of them serves every plan of a sweep (pp, dp, the schedule and ZeRO
// do not change them) while the full layer costs are built only for plans that get simulated.
struct BoundTerms {
    double layer_work_s = 0;      // forward + recompute + backward of one layer (uniform layers)
    double layer_forward_s = 0;   // forward of one layer (uniform layers)
    double layer_backward_s = 0;  // backward of one layer (uniform layers)
    double all_layers_work_s = 0; // sum over every layer (any layout)
    double embedding_work_s = 0, head_work_s = 0;
    bool uniform_layers = true; // every layer costs the same (LayerCosts::layers empty)
};

// The bound terms of a plan's layer costs.
BoundTerms bound_terms(const ModelSpec& model, const LayerCosts& costs);

// A lower bound on the plan's iteration time that its simulation can never beat (see the .cpp).
double iteration_lower_bound_s(const ModelSpec& model, int global_batch, const BoundTerms& terms, const Plan& plan);

// The lower bound on a plan's iteration time that pruning uses: simulate() never reports less (tests
// check it on every feasible plan of the examples).
double iteration_time_lower_bound_s(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan);

} // namespace vtrain
