// SPDX-License-Identifier: MIT
// DualPipe (DeepSeek-V3 technical report, arXiv 2412.19437, Sec. 3.2.1 and Table 2): micro-batches are fed
// from both ends of the pipeline at once, so device d holds stage d of one direction and stage
// pp - 1 - d of the other (two copies of the parameters), and the forward of one micro-batch overlaps the
// backward of another, hiding the expert all-to-all and the pipeline sends. Table 2 gives per device:
//   1F1B      bubble (PP - 1)(F + B)               parameters 1x  activations PP
//   DualPipe  bubble (PP/2 - 1)(F&B + B - 3W)      parameters 2x  activations PP + 1
// with F, B the forward and (full) backward of one chunk, W its weight-gradient part and F&B a forward and
// a backward chunk run together. The per-device work is the same as 1F1B's (every micro-batch's forward and
// backward of one stage's layers), so the task graph runs it in 1F1B order and the iteration takes the
// difference between the two bubbles in closed form (IterationCosts::closed_form_bubble_saving_s).
#include <algorithm>

#include "iteration/pipeline_schedule.h"

namespace vtrain {

int dualpipe_peak_in_flight(int stages, int micro_batches)
{
    return std::max(1, std::min(stages + 1, micro_batches));
}

double dualpipe_bubble_s(int stages, double forward_s, double backward_s)
{
    // W: the weight-gradient GEMMs have the same FLOPs as the input-gradient ones (Qi et al., Zero Bubble
    // Pipeline Parallelism, arXiv 2401.10241, Sec. 2), so half the backward. F&B: the layer costs already
    // hide the expert all-to-all where the plan overlaps it, so the pair costs F + B of compute.
    const double w = backward_s / 2;
    const double f_and_b = forward_s + backward_s;
    return std::max(0.0, (stages / 2.0 - 1) * (f_and_b + backward_s - 3 * w));
}

double dualpipe_bubble_saving_s(int stages, double forward_s, double backward_s)
{
    const double one_f_one_b = (stages - 1) * (forward_s + backward_s);
    return std::clamp(one_f_one_b - dualpipe_bubble_s(stages, forward_s, backward_s), 0.0, one_f_one_b);
}

} // namespace vtrain
