// SPDX-License-Identifier: MIT
#include "text_report.h"

#include <cstdio>
#include <string>

#include "vtrain/json_fields.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"
#include "vtrain/simulator.h"
#include "vtrain/uncertainty.h"

namespace vtrain::cli {
namespace {

std::string fmt(const char* format, double v)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, v);
    return buffer;
}

std::string money(double usd)
{
    if (usd >= 1e6) {
        return fmt("$%.2fM", usd / 1e6);
    }
    if (usd >= 1e3) {
        return fmt("$%.1fk", usd / 1e3);
    }
    return fmt("$%.2f", usd);
}

std::string duration(double seconds)
{
    if (seconds >= 1) {
        return fmt("%.3f s", seconds);
    }
    return fmt("%.2f ms", seconds * 1e3);
}

// Plan::recompute_modules as the scenario file names them ("layernorm, mla_up_proj, moe_act").
std::string recompute_modules_text(unsigned modules)
{
    std::string out;
    for (const std::string& name : recompute_module_names(modules)) {
        out += (out.empty() ? "" : ", ") + name;
    }
    return out;
}

std::string percent(double part, double whole)
{
    return whole > 0 ? fmt("%5.1f%%", 100.0 * part / whole) : "  -";
}

} // namespace

void print_report(std::ostream& out, const Scenario& s, const GpuProfile& profile, const SimulationResult& r)
{
    const Plan& p = r.plan;
    // User text (the scenario's and the profile's names) with its control characters shown, not obeyed.
    out << json_fields::printable(s.model.name) << " on " << r.num_gpus << " x " << json_fields::printable(profile.name) << " (profile "
        << json_fields::printable(profile.id) << ", " << profile_provenance(profile)
        << (r.band_coverage > 0 && !r.band_calibrated ? ": UNCALIBRATED, default band" : "") << ")\n";
    out << "plan: t=" << p.tp << " p=" << p.pp << " d=" << p.dp << ", micro-batch " << p.micro_batch << " x " << r.micro_batches << " per replica, "
        << to_string(p.schedule);
    if (p.schedule == Schedule::Interleaved) {
        out << " (" << p.virtual_stages << " virtual stages)";
    }
    out << ", recompute " << to_string(p.recompute) << (p.sequence_parallel ? ", sequence parallel" : "")
        << (p.zero_stage > 0 ? ", ZeRO-" + std::to_string(p.zero_stage) : std::string{}) << "\n";
    // Where the groups sit and what leaves the GPU: both change the time, so the report says them.
    out << "ranks: order " << to_string(p.rank_order) << (p.rank_order == RankOrder{} ? " (Megatron-Core's default)" : "");
    if (p.cp > 1) {
        out << ", cp=" << p.cp;
    }
    if (p.ep > 1 || s.model.moe.experts > 0) { // expert groups only say something for a model with experts
        out << ", ep=" << p.ep << " etp=" << p.effective_etp();
    }
    out << ", data-parallel overlap " << (p.overlap_grad_reduce ? "on" : "off") << "\n";
    out << "offload: optimizer " << (p.offload_optimizer ? "on host (step on the CPU)" : "on GPU") << ", activations "
        << (p.offload_activations > 0 ? fmt("%.0f%% on host", 100 * p.offload_activations) : std::string("on GPU")) << "; recompute modules "
        << (recompute_modules_text(p.recompute_modules).empty() ? "none" : recompute_modules_text(p.recompute_modules)) << "\n";
    // CUDA graphs change the host terms (cuda_graphs.h), so the report names the setting.
    out << "cuda graphs: " << to_string(s.training.cuda_graphs);
    if (s.training.cuda_graphs == CudaGraphs::Scoped) {
        out << " (";
        const char* sep = "";
        for (const std::string& name : cuda_graph_scope_names(s.training.cuda_graph_scope)) {
            out << sep << name;
            sep = ", ";
        }
        out << ")";
    }
    out << "\n";
    // Fine-tuning changes what the backward computes and what has optimizer state (model/fine_tuning.h).
    if (s.training.mode != TrainingMode::Pretrain) {
        const TrainingSpec& t = s.training;
        out << "training mode: " << to_string(t.mode);
        if (t.mode == TrainingMode::Lora) {
            out << " (frozen base; adapters of rank " << t.lora_rank << " on";
            for (const std::string& name : lora_target_names(t.lora_targets)) {
                out << " " << name;
            }
            out << ")";
        }
        out << ", " << (t.sequence_packing ? "packed" : "padded") << " samples";
        if (t.sample_tokens > 0) {
            out << " of " << t.sample_tokens << " tokens";
        }
        out << "\n";
    }
    out << "\n";

    out << "iteration time     " << duration(r.iteration_time_s);
    if (r.band_coverage > 0 && r.iteration_time_s > 0) {
        PredictionBand band;
        band.low = r.iteration_time_low_s / r.iteration_time_s;
        band.high = r.iteration_time_high_s / r.iteration_time_s;
        out << " (" << band_label(band) << ", " << fmt("%.0f%%", 100 * r.band_coverage)
            << (r.band_calibrated ? " band " : " UNCALIBRATED default band ") << duration(r.iteration_time_low_s) << " to "
            << duration(r.iteration_time_high_s) << ", from " << r.band_source << ")";
    } else {
        out << " (no uncertainty band: profile " << profile.id << " has not been validated against measured runs)";
    }
    out << "\n";
    if (r.host_heavy_s > 0 && r.iteration_time_s > 0) {
        // Beside the band: the band is the error of plans like the calibration's; this is what the plan's
        // time does if its framework's CPU cost per operator differs from the profile's by the prior's width.
        out << "host CPU terms     " << duration(r.host_light_s) << " to " << duration(r.host_heavy_s)
            << " with the framework's CPU time per operator " << fmt("÷/x %g", kHostTermPriorWidth)
            << (host_bound(r) ? " (host-bound work: the prediction rests on a software term no datasheet gives)" : "") << "\n";
    }
    out << "throughput         " << fmt("%.0f", r.tokens_per_s) << " tokens/s"
        << (r.tokens_useful_only ? " (useful tokens: padded samples of " + std::to_string(s.training.sample_tokens) + " tokens)" : std::string())
        << "\n";
    out << "per GPU            " << fmt("%.1f", r.model_tflops_per_gpu) << " TFLOP/s model, " << fmt("%.1f", r.hardware_tflops_per_gpu)
        << " TFLOP/s hardware\n";
    out << "MFU                " << fmt("%.1f%%", 100 * r.mfu) << "\n";
    out << "pipeline bubble    " << fmt("%.1f%%", 100 * r.bubble_fraction) << " of the iteration (mean over stages)\n";
    out << "memory             " << fmt("%.1f", r.peak_memory_gib) << " GiB peak of " << fmt("%.1f", r.usable_memory_gib) << " GiB usable"
        << (r.fits_memory ? "" : "  ** DOES NOT FIT **") << "\n";
    if (r.iterations > 0) {
        out << "training           " << fmt("%.3g", s.training.tokens) << " tokens = " << fmt("%.0f", r.iterations) << " iterations, "
            << fmt("%.1f", r.training_days) << " days, " << money(r.cost_usd) << " at " << fmt("$%.2f", r.price_per_gpu_hour) << "/GPU-hour\n";
    } else {
        out << "training           (no \"training.tokens\": time and cost not computed)\n";
    }

    const StageBreakdown& b = r.breakdown;
    const double T = r.iteration_time_s;
    out << "\nwhere the time goes (mean over stages)\n";
    out << "  compute                 " << duration(b.compute_s) << "  " << percent(b.compute_s, T) << "\n";
    out << "  tensor-parallel comm    " << duration(b.tp_comm_s) << "  " << percent(b.tp_comm_s, T) << "\n";
    // Expert and context-parallel exchanges only where the plan has them (their exposed shares).
    if (b.ep_comm_s > 0) {
        out << "  expert all-to-all       " << duration(b.ep_comm_s) << "  " << percent(b.ep_comm_s, T) << "\n";
    }
    if (b.cp_comm_s > 0) {
        out << "  context-parallel comm   " << duration(b.cp_comm_s) << "  " << percent(b.cp_comm_s, T) << "\n";
    }
    out << "  pipeline sends          " << duration(b.pp_comm_s) << "  " << percent(b.pp_comm_s, T) << "\n";
    out << "  data-parallel (exposed) " << duration(b.dp_comm_exposed_s) << "  " << percent(b.dp_comm_exposed_s, T) << "\n";
    out << "  optimizer step          " << duration(b.optimizer_s) << "  " << percent(b.optimizer_s, T) << "\n";
    out << "  bubble (idle)           " << duration(b.bubble_s) << "  " << percent(b.bubble_s, T) << "\n";

    // Lower bounds from first principles (physical_floors.h): no run of this plan can beat any of them.
    if (r.floors.binding_s() > 0) {
        out << "\nphysical floors (per GPU, datasheet rates; no iteration can be faster)\n";
        const char* names[] = {"compute", "HBM", r.floor_hardware.scale_up_name.c_str(), "network", "host link"};
        for (std::size_t i = 0; i < kFloorResources; ++i) {
            const auto res = static_cast<FloorResource>(i);
            char label[32];
            std::snprintf(label, sizeof label, "  %-22s", names[i]);
            out << label << duration(r.floors.seconds[i]) << "  " << percent(r.floors.seconds[i], T) << "  "
                << floor_resource_label(res, r.floor_hardware) << "\n";
        }
        out << "  " << floor_summary(r.floors, r.floor_hardware, T) << "\n";
    }
    out << "plausibility       " << (r.plausibility == 0 ? std::string("no flags") : "FLAGGED") << "\n";
    for (const std::string& reason : r.plausibility_reasons) {
        out << "  " << reason << "\n";
    }

    out << "\nstage  layers   weights+grads+optim   activations   total GiB   busy\n";
    const std::size_t n = r.stages.size();
    for (std::size_t i = 0; i < n; ++i) {
        // Long pipelines: show the first three, the last two, and elide the middle.
        if (n > 8 && i == 3) {
            out << "  ...  (" << n - 5 << " more stages like the ones around them)\n";
            i = n - 3;
            continue;
        }
        const StageResult& st = r.stages[i];
        constexpr double gib = 1024.0 * 1024 * 1024;
        const double state = (st.memory.weights_bytes + st.memory.gradients_bytes + st.memory.optimizer_bytes) / gib;
        const double act = (st.memory.activations_bytes + st.memory.working_bytes) / gib;
        out << fmt("%5.0f", static_cast<double>(i)) << fmt("%8.0f", st.layers) << fmt("%22.1f", state) << fmt("%14.1f", act)
            << fmt("%12.1f", st.peak_memory_gib) << "  " << percent(T - st.breakdown.bubble_s, T) << "\n";
    }
}

} // namespace vtrain::cli
