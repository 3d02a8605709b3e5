// SPDX-License-Identifier: MIT
#include <fstream>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "vtrain/modeled_profile.h"
#include "vtrain/profile_json.h"

namespace vtrain::cli {

const char* const kMakeProfileHelp = R"(usage: vtrain make-profile SPEC.json -o PROFILE.json

Builds a modeled GPU profile ("source": "modeled") from a hardware spec: datasheet figures (peak
TFLOP/s, memory bandwidth and size, SM count, links, price) with their sources, and the model's free
parameters ("model_parameters": GEMM and attention efficiencies, memory efficiency, fixed costs). The
shipped profiles are built this way from profiles/specs/.

example:
  vtrain make-profile profiles/specs/a100-sxm4-80gb.json -o profiles/a100-sxm4-80gb.json
)";

int run_make_profile(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv, {"-o", "--output"}, {}, error);
    if (!args) {
        return report_bad_input(error);
    }
    const auto output = output_option(*args);
    if (args->positional.size() != 1 || !output) {
        return report_bad_input("make-profile takes one spec file and -o OUTPUT (see vtrain make-profile --help)");
    }
    std::ifstream in(args->positional[0]);
    if (!in) {
        return report_bad_input(args->positional[0] + ": cannot be opened");
    }
    const nlohmann::json spec = nlohmann::json::parse(in, nullptr, false);
    if (spec.is_discarded() || !spec.is_object()) {
        return report_bad_input(args->positional[0] + ": is not a JSON object");
    }
    const auto hardware = hardware_spec_from_json(spec);
    if (!hardware.ok()) {
        return report_bad_input(hardware.errors());
    }
    const auto parameters = model_parameters_from_json(spec.value("model_parameters", nlohmann::json::object()));
    if (!parameters.ok()) {
        return report_bad_input(parameters.errors());
    }
    GpuProfile profile = make_modeled_profile(*hardware, *parameters);
    if (spec.contains("calibration")) {
        profile.calibration = spec["calibration"];
    }
    if (!write_text_file(*output, output_json(profile_to_json(profile), -1) + "\n", error)) {
        std::cerr << "vtrain: " << error << '\n';
        return kExitFailure;
    }
    return kExitOk;
}

} // namespace vtrain::cli
